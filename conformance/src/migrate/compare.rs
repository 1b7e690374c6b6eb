//! git's migration against ours: the records of the two tables and the class of their
//! first difference, the one table of a migrated stack (ours, or the one git's dry run
//! left), the difference between two files layouts, and the refs git lists in a
//! repository (the same before and after a migration).

use std::collections::BTreeMap;
use std::path::Path;

use reftable::{LogRecord, RefRecord, Table};

use crate::setup::env::Env;

/// The refs and reflog entries of the table in `bytes`.
pub(crate) fn records(bytes: &[u8]) -> Result<(Vec<RefRecord>, Vec<LogRecord>), String> {
    let t = Table::from_bytes("t", bytes.to_vec()).map_err(|e| format!("{e:#}"))?;
    let refs = t
        .refs()
        .and_then(|it| it.collect::<reftable::Result<Vec<_>>>())
        .map_err(|e| format!("{e:#}"))?;
    let logs = t
        .logs()
        .and_then(|it| it.collect::<reftable::Result<Vec<_>>>())
        .map_err(|e| format!("{e:#}"))?;
    Ok((refs, logs))
}

/// What differs between git's table and ours, as a class (the signature of the registry's
/// migrate entries) and a detail.
pub(crate) fn classify_difference(git: &[u8], ours: &[u8]) -> (String, String) {
    let (Ok((gr, gl)), Ok((or, ol))) = (records(git), records(ours)) else {
        return ("table bytes".into(), "a table cannot be read back".into());
    };
    if gr != or {
        let first = gr
            .iter()
            .zip(&or)
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("git {a:?}, ours {b:?}"))
            .unwrap_or_else(|| format!("{} refs in git's, {} in ours", gr.len(), or.len()));
        return ("ref values".into(), first);
    }
    let key = |l: &LogRecord| (l.refname.clone(), l.update_index);
    if gl.iter().map(key).collect::<Vec<_>>() != ol.iter().map(key).collect::<Vec<_>>() {
        let shown = |ls: &[LogRecord]| -> Vec<(String, u64)> {
            ls.iter()
                .map(|l| {
                    (
                        String::from_utf8_lossy(&l.refname).into_owned(),
                        l.update_index,
                    )
                })
                .take(8)
                .collect()
        };
        let (g, o) = (shown(&gl), shown(&ol));
        return (
            "log update indexes".into(),
            format!("git {g:?}, ours {o:?}"),
        );
    }
    if let Some((a, b)) = gl.iter().zip(&ol).find(|(a, b)| a != b) {
        let (ua, ub) = (a.update(), b.update());
        let same_but_ids = match (ua, ub) {
            (Some(x), Some(y)) => x.message == y.message && x.new_id == y.new_id,
            _ => false,
        };
        let class = if same_but_ids {
            "log old ids or identity"
        } else {
            "log entries"
        };
        return (class.into(), format!("git {a:?}, ours {b:?}"));
    }
    ("table bytes".into(), "same records, different bytes".into())
}

/// The one table of the stack in `dir`.
pub(crate) fn only_table(dir: &Path) -> Result<Vec<u8>, String> {
    let list = std::fs::read_to_string(dir.join("tables.list"))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let names: Vec<&str> = list.lines().collect();
    if names.len() != 1 {
        return Err(format!("{} tables listed, not 1", names.len()));
    }
    std::fs::read(dir.join(names[0])).map_err(|e| e.to_string())
}

/// Every file and directory under `dir` (relative path, contents; `None` for a directory).
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
            if p.is_dir() {
                stack.push(p);
                out.insert(rel, None);
            } else {
                out.insert(rel, std::fs::read(&p).ok());
            }
        }
    }
    out
}

/// Where git's files layout and ours differ: a class (the signature of the registry's
/// migrate entries) and the first path.
pub(crate) fn tree_difference(git: &Path, ours: &Path) -> Option<(&'static str, String)> {
    let (g, o) = (tree(git), tree(ours));
    let paths: std::collections::BTreeSet<&String> = g.keys().chain(o.keys()).collect();
    let differs: Vec<&String> = paths
        .into_iter()
        .filter(|p| g.get(*p) != o.get(*p))
        .collect();
    let first = differs.first()?;
    let class = if first.as_str() == "packed-refs" {
        "files: packed-refs"
    } else if first.starts_with("logs") {
        "files: reflogs"
    } else {
        "files: loose refs and layout"
    };
    let show = |m: &BTreeMap<String, Option<Vec<u8>>>| match m.get(*first) {
        None => "absent".to_string(),
        Some(None) => "a directory".to_string(),
        Some(Some(b)) => String::from_utf8_lossy(&b[..b.len().min(400)]).into_owned(),
    };
    Some((
        class,
        format!("{first}: git {:?}, ours {:?}", show(&g), show(&o)),
    ))
}

/// The first file of the tree `dry` that `dir` does not hold with the same bytes (a
/// migration's real output against its dry run's).
pub(crate) fn first_not_written(dry: &Path, dir: &Path) -> Option<String> {
    tree(dry)
        .into_iter()
        .filter_map(|(rel, bytes)| bytes.map(|b| (rel, b)))
        .find(|(rel, b)| std::fs::read(dir.join(rel)).ok().as_ref() != Some(b))
        .map(|(rel, _)| rel)
}

/// The refs git shows in `repo`, for comparing before and after a migration.
pub(crate) fn git_refs(env: &Env, repo: &Path) -> String {
    let fmt = "--format=%(refname) %(objectname) %(symref)";
    let mut args = vec!["for-each-ref", fmt];
    if env.profile.features.include_root_refs {
        args.insert(1, "--include-root-refs");
    }
    env.git.run(repo, &args, "", 0).stdout
}

/// The one table of the stack git's dry run in `dry` wrote: in the directory its `stdout`
/// names, else in the `.git/ref_migration.*` it left.
pub(crate) fn dry_run_table(dry: &Path, stdout: &str) -> Result<Vec<u8>, String> {
    let tmp = stdout
        .split('\'')
        .nth(1)
        .map(|p| dry.join(p).join("reftable"))
        .filter(|p| p.exists())
        .or_else(|| {
            std::fs::read_dir(dry.join(".git"))
                .ok()?
                .flatten()
                .find(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("ref_migration.")
                })
                .map(|e| e.path().join("reftable"))
        });
    let Some(tmp) = tmp else {
        return Err(format!("no migrated stack found: {}", stdout.trim()));
    };
    only_table(&tmp)
}
