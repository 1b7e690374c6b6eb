//! What the checks of a concurrent run look at ([`Evidence`]): the writers' outcomes, the
//! reader's samples taken while they ran ([`Sample`]), and the final stack as we and git
//! read it (refs, reflog records, reflogs through `git log -g`, stray files, `git refs
//! verify`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use reftable::{LogValue, MergedTable, Table};

use crate::concurrent::spec::{refdb_options, Outcome};
use crate::setup::env::Env;
use crate::snapshot::Snapshot;

/// What the reader saw at one moment: resolved refs under `refs/`.
pub(crate) struct Sample {
    /// Taken through git (`for-each-ref`), or through us.
    pub(crate) through_git: bool,
    /// The refs it shows, with their ids (hex).
    pub(crate) refs: BTreeMap<String, String>,
    /// The highest update index the stack had (our reader only).
    pub(crate) index: Option<u64>,
    /// Why the reader could not take it.
    pub(crate) error: Option<String>,
}

impl Sample {
    /// A sample that shows `refs` (and, through us, the stack's highest update index).
    pub(crate) fn of(
        through_git: bool,
        refs: BTreeMap<String, String>,
        index: Option<u64>,
    ) -> Sample {
        Sample {
            through_git,
            refs,
            index,
            error: None,
        }
    }

    /// A sample the reader could not take.
    pub(crate) fn failed(through_git: bool, error: String) -> Sample {
        Sample {
            through_git,
            refs: BTreeMap::new(),
            index: None,
            error: Some(error),
        }
    }
}

/// Everything the checks look at.
pub(crate) struct Evidence<'a> {
    /// What the writers reported of each attempt.
    pub(crate) outcomes: &'a [Outcome],
    /// What the reader saw while they ran, in order.
    pub(crate) samples: Vec<Sample>,
    /// Writers that exited with a failure, and what they printed.
    pub(crate) worker_errors: Vec<String>,
    /// The reflog update records of the final stack, as we read it.
    pub(crate) logs: FinalLogs,
    /// The final stack as we read it.
    pub(crate) ours: Result<Snapshot, String>,
    /// The final refs as `git for-each-ref` lists them.
    pub(crate) git_refs: Result<BTreeMap<String, String>, String>,
    /// `git log -g` of each reflog we read: messages, newest first.
    pub(crate) git_reflogs: BTreeMap<String, Result<Vec<String>, String>>,
    /// Files in the stack directory that `tables.list` does not name.
    pub(crate) leftovers: Vec<String>,
    /// `git refs verify` on the final stack, when git has it and it fails.
    pub(crate) verify: Option<String>,
}

/// A reflog message as text, without its final newline.
fn trim_nl(m: &[u8]) -> String {
    let s = String::from_utf8_lossy(m);
    s.strip_suffix('\n').unwrap_or(&s).to_string()
}

/// A reflog update record: (ref, update index, message).
pub(crate) type LogEntry = (String, u64, String);

/// The reflog update records of a final stack.
pub(crate) struct FinalLogs {
    /// The records of the stack; when it cannot be read, those of the tables it lists that
    /// still open: an acknowledged update in none of them is lost all the same, whichever
    /// table is missing.
    pub(crate) records: Vec<LogEntry>,
    /// Why the stack as listed cannot be read, when it cannot.
    pub(crate) unreadable: Option<String>,
}

impl FinalLogs {
    /// The records of the stack in `stack`.
    pub(crate) fn read(stack: &Path) -> FinalLogs {
        match log_records(stack) {
            Ok(records) => FinalLogs {
                records,
                unreadable: None,
            },
            Err(e) => FinalLogs {
                records: listed_log_records(stack).unwrap_or_default(),
                unreadable: Some(e),
            },
        }
    }
}

/// Every reflog update record of the stack in `stack`.
fn log_records(stack: &Path) -> Result<Vec<LogEntry>, String> {
    let db = reftable::refdb::RefDb::open_or_create(stack, refdb_options(false))
        .map_err(|e| format!("{e:#}"))?;
    records_of(db.stack().merged())
}

/// The reflog update records of the tables `tables.list` in `stack` names that open,
/// merged in the list's order (a stack our reader refuses: a listed table gone or broken).
fn listed_log_records(stack: &Path) -> Result<Vec<LogEntry>, String> {
    let list = std::fs::read_to_string(stack.join("tables.list")).map_err(|e| e.to_string())?;
    let tables: Vec<Table> = (list.lines())
        .filter_map(|name| Table::open(stack.join(name)).ok())
        .collect();
    let Some(hash) = tables.first().map(Table::hash) else {
        return Ok(Vec::new());
    };
    records_of(&MergedTable::new(tables, hash).map_err(|e| format!("{e:#}"))?)
}

/// Every reflog update record `merged` holds.
fn records_of(merged: &MergedTable) -> Result<Vec<LogEntry>, String> {
    let mut it = merged.logs().map_err(|e| format!("{e:#}"))?;
    let mut out = Vec::new();
    while let Some(l) = it.next_record().map_err(|e| format!("{e:#}"))? {
        if let LogValue::Update(u) = &l.value {
            if !l.is_existence_marker() {
                out.push((
                    String::from_utf8_lossy(&l.refname).into_owned(),
                    l.update_index,
                    trim_nl(&u.message),
                ));
            }
        }
    }
    Ok(out)
}

/// The update index of each message in the writers' journals.
pub(crate) fn journal_indexes(stack: &Path) -> BTreeMap<String, u64> {
    log_records(stack)
        .unwrap_or_default()
        .into_iter()
        .filter(|(r, _, _)| r.starts_with("refs/journal/"))
        .map(|(_, i, m)| (m, i))
        .collect()
}

impl<'a> Evidence<'a> {
    /// Read the final stack of `repo` through us and through git.
    pub(crate) fn gather(
        env: &Env,
        repo: &Path,
        outcomes: &'a [Outcome],
        samples: Vec<Sample>,
        worker_errors: Vec<String>,
    ) -> Evidence<'a> {
        let stack = repo.join(".git/reftable");
        let ours =
            Snapshot::of_stack_dir(&stack, refdb_options(false)).map_err(|e| format!("{e:#}"));
        let git_refs = git_refs(env, repo);
        let mut git_reflogs = BTreeMap::new();
        if let Ok(s) = &ours {
            // One `git log -g` for every reflog we read (a run of thousands of transactions
            // has hundreds of tags with a reflog each).
            let names: Vec<&String> = s.logs.keys().collect();
            let mut walked = crate::git::reflogs::log_g(&env.git, repo, &names, 0);
            for name in names {
                let r = match walked.remove(name) {
                    // `<name>@{n} <id> <message>`: the message is the rest after the id.
                    Some(lines) => Ok(lines
                        .iter()
                        .map(|l| l.splitn(3, ' ').nth(2).unwrap_or("").to_string())
                        .collect()),
                    None => Err("git log -g cannot walk it".to_string()),
                };
                git_reflogs.insert(name.clone(), r);
            }
        }
        let listed: BTreeSet<String> = std::fs::read_to_string(stack.join("tables.list"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        let mut leftovers: Vec<String> = std::fs::read_dir(&stack)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n != "tables.list" && !listed.contains(n))
                    .collect()
            })
            .unwrap_or_default();
        leftovers.sort();
        let verify = env.profile.features.refs_verify.then(|| {
            let out = env.git.run(repo, &["refs", "verify"], "", 0);
            (!out.exit.success()).then(|| format!("{:?}: {}", out.exit, out.stderr.trim()))
        });
        Evidence {
            outcomes,
            samples,
            worker_errors,
            logs: FinalLogs::read(&stack),
            ours,
            git_refs,
            git_reflogs,
            leftovers,
            verify: verify.flatten(),
        }
    }
}

/// `git for-each-ref` in `repo`: the refs under `refs/` git lists, with their ids.
pub(crate) fn git_refs(env: &Env, repo: &Path) -> Result<BTreeMap<String, String>, String> {
    let out = env.git.run(
        repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
        "",
        0,
    );
    if !out.exit.success() {
        return Err(format!("{:?}: {}", out.exit, out.stderr.trim()));
    }
    Ok(out
        .stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect())
}

/// What `for-each-ref` lists of a snapshot: its refs under `refs/` that point at objects
/// (the concurrent mode writes no symrefs there).
pub(crate) fn listed_refs(s: &Snapshot) -> BTreeMap<String, String> {
    s.refs
        .iter()
        .filter(|(n, _)| n.starts_with("refs/"))
        .filter_map(|(n, v)| match v {
            crate::snapshot::SValue::Oid(id, _) => Some((n.clone(), id.clone())),
            crate::snapshot::SValue::Symref(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reftable::{LogRecord, LogUpdate, ObjectId, Signature, Stack, StackOptions, TzOffset};

    fn add_logged(st: &mut Stack, name: &str, msg: &str) {
        let id = ObjectId::from_hex(&"1".repeat(40)).unwrap();
        st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            w.add_log(&LogRecord {
                refname: name.as_bytes().to_vec(),
                update_index: ui,
                value: LogValue::Update(LogUpdate {
                    old_id: ObjectId::null(id.hash()),
                    new_id: id,
                    committer: Signature::new("C", "c@example.com", 7, TzOffset::from_hhmm(0)),
                    message: format!("{msg}\n").into_bytes(),
                }),
            })
        })
        .unwrap();
    }

    #[test]
    fn a_stack_with_a_listed_table_gone_is_read_through_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let opts = StackOptions::default().auto_compaction(false);
        let mut st = Stack::open_or_create(dir.path(), opts).unwrap();
        for (name, msg) in [("refs/journal/a", "first"), ("refs/journal/b", "second")] {
            add_logged(&mut st, name, msg);
        }
        let read = FinalLogs::read(dir.path());
        assert_eq!(read.unreadable, None);
        assert_eq!(read.records.len(), 2);
        let list = std::fs::read_to_string(dir.path().join("tables.list")).unwrap();
        let first = list.lines().next().unwrap();
        std::fs::remove_file(dir.path().join(first)).unwrap();
        let read = FinalLogs::read(dir.path());
        assert!(read.unreadable.is_some());
        let second = ("refs/journal/b".to_string(), 2, "second".to_string());
        assert_eq!(read.records, vec![second]);
    }
}
