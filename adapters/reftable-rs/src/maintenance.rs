//! The optional verbs that are not reads or transactions: `compact`, `expire_reflog`,
//! `rename`, `copy`, `verify`.

use std::collections::HashSet;

use reftable::refdb::ObjectLookup;
use reftable::LogRecord;
use serde_json::{json, Value};

use crate::answer::Answer;
use crate::repo::Repo;
use crate::wire::{bool_field, parse_ident, str_field};

/// A library error as an answer.
fn fail(e: reftable::Error) -> Answer {
    Answer::from_error(&e)
}

/// `compact`: `git pack-refs` (`mode: "all"`) or the geometric auto-compaction (`"auto"`).
pub fn compact(repo: &mut Repo, req: &Value) -> Result<Answer, Answer> {
    let auto = match req.get("mode").and_then(Value::as_str).unwrap_or("all") {
        "all" => false,
        "auto" => true,
        other => return Err(Answer::unsupported(format!("compact mode '{other}'"))),
    };
    repo.db.pack_refs(auto).map_err(fail)?;
    repo.db.reload().map_err(fail)?;
    Ok(Answer::done_with(
        json!({ "tables": repo.db.stack().tables().len() }),
    ))
}

/// The update indexes of the entries at `positions` (0 = newest) of `name`'s reflog.
fn positions_to_indexes(
    repo: &Repo,
    name: &[u8],
    positions: &[u64],
) -> reftable::Result<HashSet<u64>> {
    let mut out = HashSet::new();
    for (pos, rec) in repo.db.reflog(name)?.enumerate() {
        let rec = rec?;
        if positions.contains(&(pos as u64)) {
            out.insert(rec.update_index);
        }
    }
    Ok(out)
}

/// `expire_reflog`: prune entries older than `expire` and those at the `drop` positions.
pub fn expire_reflog(
    repo: &mut Repo,
    req: &Value,
    objects: &dyn ObjectLookup,
) -> Result<Answer, Answer> {
    let name = str_field(req, "name")?.as_bytes();
    let expire = req.get("expire").and_then(Value::as_u64);
    let positions: Vec<u64> = match req.get("drop") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<_>>>())
            .ok_or_else(|| Answer::error("'drop' must be an array of integers"))?,
    };
    let (rewrite, updateref) = (bool_field(req, "rewrite")?, bool_field(req, "updateref")?);
    let dry_run = bool_field(req, "dry_run")?;
    if updateref && dry_run {
        return Err(Answer::unsupported(
            "expire_reflog with both updateref and dry_run",
        ));
    }
    if !repo.db.reflog_exists(name).map_err(fail)? {
        return Err(Answer::Refused {
            reason: "missing",
            detail: Some("no-reflog"),
            refname: Some(String::from_utf8_lossy(name).into_owned()),
            message: "reflog does not exist".into(),
        });
    }
    let dropped = positions_to_indexes(repo, name, &positions).map_err(fail)?;
    let mut prune = |l: &LogRecord| {
        dropped.contains(&l.update_index)
            || matches!((l.update(), expire), (Some(u), Some(t)) if u.committer.time < t)
    };
    let done = if updateref {
        repo.db
            .expire_reflog_update_ref(name, &mut prune, rewrite, objects)
    } else {
        repo.db.expire_reflog(name, &mut prune, rewrite, dry_run)
    }
    .map_err(fail)?;
    Ok(Answer::done_with(
        json!({ "pruned": done.pruned, "kept": done.kept }),
    ))
}

/// `rename` (`copy` with `copy` set): a ref with its reflog.
pub fn rename_or_copy(repo: &mut Repo, req: &Value, copy: bool) -> Result<Answer, Answer> {
    let old = str_field(req, "old")?.as_bytes();
    let new = str_field(req, "new")?.as_bytes();
    let message = req
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .as_bytes();
    let committer = parse_ident(req.get("committer"))?;
    if copy {
        repo.db.copy_ref(old, new, message, &committer)
    } else {
        repo.db.rename_ref(old, new, message, &committer)
    }
    .map_err(fail)?;
    Ok(Answer::done())
}

/// `verify`: the library's deep check of the stack (`reftable verify`).
pub fn verify(repo: &Repo) -> Result<Answer, Answer> {
    let report =
        reftable::fsck::check_stack(repo.gitdir.join("reftable"), Some(repo.hash)).map_err(fail)?;
    let problems: Vec<String> = report.findings().map(|f| f.to_string()).collect();
    Ok(Answer::done_with(json!({ "problems": problems })))
}
