//! Running the commands on a trial, on both sides: git's command line for each command and
//! its run under a timeout; our library's answer to each command, on a thread of its own so
//! that a hang or a panic is seen.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reftable::refdb::RefDb;

use crate::git::driver::Exit;
use crate::setup::env::Env;
use crate::stack_files::copy_dir;

use super::base::{db_options, Answers, Base};
use super::config::COMMANDS;

/// git's arguments for `command` on `base` (the names it looks up come from the base).
pub(crate) fn git_args<'a>(base: &'a Base, command: &str) -> Vec<&'a str> {
    match command {
        "for-each-ref" => vec!["for-each-ref", "--format=%(refname) %(objectname)"],
        "show-ref" => {
            let mut a = vec!["show-ref", "--verify"];
            a.extend(base.names.iter().map(String::as_str));
            a
        }
        "reflog-show" => {
            let mut a = vec!["reflog", "show", "--format=%H %gs"];
            a.extend(base.reflog_name.as_deref());
            a
        }
        "refs-verify" => vec!["refs", "verify"],
        "pack-refs" => vec!["pack-refs", "--all"],
        _ => unreachable!("unknown command {command}"),
    }
}

/// Run `command` with git on `repo`, stopped after `timeout` (on a git without `refs
/// verify`, that command passes with no output).
pub(crate) fn run_git(
    env: &Env,
    base: &Base,
    repo: &Path,
    command: &str,
    timeout: Duration,
) -> crate::git::driver::Output {
    if command == "refs-verify" && !env.profile.features.refs_verify {
        return crate::git::driver::Output {
            exit: Exit::Code(0),
            stdout: String::new(),
            stderr: String::new(),
        };
    }
    let args = git_args(base, command);
    let mut c = env.git.command(repo, 0);
    env.git.run_command_within(&mut c, &args, "", timeout)
}

/// Our answer to each command on the stack in `dir`: the same data git prints, from our
/// library (for-each-ref: resolved refs under `refs/`; show-ref: point lookups; reflog:
/// entries; refs-verify: every ref and log record; pack-refs: compaction).
fn ours_one(command: &str, dir: &Path, base: &Base) -> Result<String, String> {
    let e = |e: reftable::Error| format!("{e:#}");
    let mut db = RefDb::open_or_create(dir, db_options(base.hash)).map_err(e)?;
    let mut out = String::new();
    match command {
        "for-each-ref" => {
            let mut names = Vec::new();
            let mut it = db.refs_with_prefix(b"refs/").map_err(e)?;
            while let Some(r) = it.next_record().map_err(e)? {
                names.push(r.refname.clone());
            }
            for n in names {
                if let Some(id) = db.resolve(&n).map_err(e)? {
                    out.push_str(&format!("{} {}\n", String::from_utf8_lossy(&n), id));
                }
            }
        }
        "show-ref" => {
            for n in &base.names {
                let id = db.resolve(n.as_bytes()).map_err(e)?;
                out.push_str(&format!("{n} {id:?}\n"));
            }
        }
        "reflog-show" => {
            if let Some(n) = &base.reflog_name {
                let mut it = db.reflog(n.as_bytes()).map_err(e)?;
                while let Some(l) = it.next_record().map_err(e)? {
                    out.push_str(&format!(
                        "{:?} {}\n",
                        l.value,
                        String::from_utf8_lossy(&l.refname)
                    ));
                }
            }
        }
        "refs-verify" => {
            let merged = db.stack().merged();
            let mut it = merged.refs().map_err(e)?;
            let mut n = 0u64;
            while it.next_record().map_err(e)?.is_some() {
                n += 1;
            }
            let mut it = merged.logs().map_err(e)?;
            while it.next_record().map_err(e)?.is_some() {
                n += 1;
            }
            out = format!("{n} records\n");
        }
        "pack-refs" => {
            db.pack_refs(false).map_err(e)?;
            // What the compacted stack holds.
            db.reload().map_err(e)?;
            let mut it = db.refs().map_err(e)?;
            while let Some(r) = it.next_record().map_err(e)? {
                out.push_str(&format!("{}\n", String::from_utf8_lossy(&r.refname)));
            }
        }
        _ => unreachable!(),
    }
    Ok(out)
}

/// Every command on our side (each on its own copy of the stack, since pack-refs writes).
pub(crate) fn run_ours(base: &Base, stack: &Path) -> Answers {
    let mut out = BTreeMap::new();
    for c in COMMANDS {
        let r = if c == "pack-refs" {
            let copy = stack.with_file_name("reftable-pack");
            let _ = copy_dir(stack, &copy, None);
            let r = ours_one(c, &copy, base);
            let _ = std::fs::remove_dir_all(&copy);
            r
        } else {
            ours_one(c, stack, base)
        };
        out.insert(c, r);
    }
    out
}

/// How our commands on a trial failed to give answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OursStopped {
    /// They ran past the timeout (the thread is left behind).
    Hang,
    /// They panicked, with the panic's message.
    Panic(String),
}

impl OursStopped {
    /// The observation's detail: `hang`, or `panic: MESSAGE`.
    pub(crate) fn detail(&self) -> String {
        match self {
            OursStopped::Hang => "hang".into(),
            OursStopped::Panic(p) => format!("panic: {p}"),
        }
    }
}

/// Our commands on another thread, so that a hang is seen (the thread is then left behind).
pub(crate) fn run_ours_bounded(
    base: &Base,
    stack: &Path,
    timeout: Duration,
) -> Result<Answers, OursStopped> {
    let (tx, rx) = std::sync::mpsc::channel();
    let stack = stack.to_path_buf();
    let names = base.names.clone();
    let reflog_name = base.reflog_name.clone();
    let hash = base.hash;
    std::thread::spawn(move || {
        let b = Base {
            repo: PathBuf::new(),
            names,
            reflog_name,
            hash,
            sites: Vec::new(),
            git_base: BTreeMap::new(),
            ours_base: BTreeMap::new(),
        };
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| run_ours(&b, &stack)));
        let _ = tx.send(r.map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into())
        }));
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(p)) => Err(OursStopped::Panic(p)),
        Err(_) => Err(OursStopped::Hang),
    }
}
