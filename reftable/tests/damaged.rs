//! Stacks that crash or hang git 2.47.3 (and, for the three whose index entry points at its
//! own block, git master too), found and minimized by the gate's damaged-stack mode
//! (`fixtures/damaged/*/stack`; `fixtures/damaged/reproduce.sh DIR` replays one on git). Every read of ours
//! ends, in bounded time, and each stack is reported corrupt by at least one of them.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use reftable::refdb::{RefDb, RefDbOptions};
use reftable::{HashId, StackOptions, WriteOptions};

fn stacks() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/damaged");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/damaged exists")
        .map(|e| e.unwrap().path().join("stack"))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// Every read the damaged mode makes of a stack: open, all refs, a lookup of each name,
/// every reflog; the errors met.
fn read_all(stack: &Path, hash: HashId) -> Vec<String> {
    let opts = RefDbOptions::default()
        .stack(StackOptions::default().write(WriteOptions::default().hash(hash)));
    let mut errors = Vec::new();
    let db = match RefDb::open(stack, opts) {
        Ok(db) => db,
        Err(e) => return vec![e.to_string()],
    };
    let mut names = Vec::new();
    match db.refs() {
        Ok(mut it) => loop {
            match it.next_record() {
                Ok(Some(r)) => names.push(r.refname.clone()),
                Ok(None) => break,
                Err(e) => {
                    errors.push(e.to_string());
                    break;
                }
            }
        },
        Err(e) => errors.push(e.to_string()),
    }
    for n in &names {
        if let Err(e) = db.resolve(n) {
            errors.push(e.to_string());
        }
    }
    match db.reflog_names() {
        Ok(logs) => {
            for n in logs {
                if let Err(e) = n.and_then(|n| {
                    db.reflog(&n)
                        .and_then(|it| it.collect::<reftable::Result<Vec<_>>>())
                }) {
                    errors.push(e.to_string());
                }
            }
        }
        Err(e) => errors.push(e.to_string()),
    }
    errors
}

#[test]
fn every_stack_that_breaks_git_reads_as_corrupt_here() {
    let all = stacks();
    assert!(all.len() >= 20, "only {} damaged stacks found", all.len());
    for stack in all {
        let format = std::fs::read_to_string(stack.with_file_name("object-format")).unwrap();
        let hash = if format.trim() == "sha256" {
            HashId::Sha256
        } else {
            HashId::Sha1
        };
        let (tx, rx) = mpsc::channel();
        let s = stack.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_all(&s, hash));
        });
        let errors = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{}: reads did not end (or panicked)", stack.display()));
        assert!(
            !errors.is_empty(),
            "{}: read without an error, yet git crashes on it",
            stack.display()
        );
    }
}
