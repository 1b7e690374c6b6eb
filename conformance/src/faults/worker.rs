//! Our side of a faulted operation: a process of its own (`conformance fault-worker SPEC`)
//! that opens the stack, runs one generated operation through the library as the generated
//! mode's executor does, and prints what it got (a [`WorkerOutcome`] as JSON), so that strace
//! can inject faults into our system calls exactly as into git's.

use std::path::{Path, PathBuf};

use reftable::refdb::{FilesRefs, RefDb};
use reftable::ObjectId;
use serde::{Deserialize, Serialize};

use crate::cases::ours;
use crate::err_class::ErrClass;
use crate::git::driver::committer_at;
use crate::ops::{CaseOptions, Op};
use crate::setup::pool::{Pool, PoolObjects};

/// What the worker is told.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerSpec {
    /// The stack directory (`.git/reftable` of the trial's repository).
    pub stack: PathBuf,
    /// What to do on it.
    pub work: Work,
    /// Its committer clock (the one git's process runs with).
    pub tick: u64,
    /// The case's options (auto-compaction as the faults mode sets it).
    pub opts: CaseOptions,
    /// The rules of the git's version (its profile).
    pub rules: crate::git::profile::GitRules,
    /// Whether our stack syncs what it writes.
    pub fsync: bool,
    /// The objects transactions are checked against, as hex: commits, (tag, peeled), tree,
    /// missing.
    pub pool: (Vec<String>, Vec<(String, String)>, String, String),
}

/// What the worker does on its stack.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Work {
    /// One generated operation, as the executor runs it.
    Op(Op),
    /// Import the refs and reflogs of a files repository's `.git` (our side of
    /// `git refs migrate --ref-format=reftable`) into the stack, which must be empty.
    Import(PathBuf),
}

/// What the worker printed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WorkerOutcome {
    /// The operation was done.
    pub ok: bool,
    /// The class of our refusal.
    pub class: Option<ErrClass>,
    /// Our refusal's text.
    pub message: String,
    /// What went wrong after the commit point (an auto-compaction's failure), when the
    /// operation was done anyway.
    pub warning: Option<String>,
}

/// The pool as the worker is told it.
pub fn pool_spec(p: &Pool) -> (Vec<String>, Vec<(String, String)>, String, String) {
    (
        p.commits.iter().map(ObjectId::to_string).collect(),
        p.tags
            .iter()
            .map(|(t, c)| (t.to_string(), c.to_string()))
            .collect(),
        p.tree.to_string(),
        p.missing.to_string(),
    )
}

fn pool_of(spec: &WorkerSpec) -> Result<Pool, String> {
    let id = |h: &String| ObjectId::from_hex(h).ok_or_else(|| format!("bad object id {h}"));
    let (commits, tags, tree, missing) = &spec.pool;
    Ok(Pool {
        commits: commits.iter().map(id).collect::<Result<_, _>>()?,
        tags: tags
            .iter()
            .map(|(t, c)| Ok((id(t)?, id(c)?)))
            .collect::<Result<_, String>>()?,
        tree: id(tree)?,
        missing: id(missing)?,
    })
}

/// Run the operation the spec file at `path` names; what happened goes to standard output.
/// The exit status is 0 when the operation was done, 1 when it was refused, 2 when the spec
/// could not be read.
pub fn run_worker(path: &Path) -> i32 {
    let spec: WorkerSpec = match std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fault-worker: {}: {e}", path.display());
            return 2;
        }
    };
    let outcome = match pool_of(&spec) {
        Ok(pool) => apply(&spec, &pool),
        Err(e) => {
            eprintln!("fault-worker: {e}");
            return 2;
        }
    };
    println!(
        "{}",
        serde_json::to_string(&outcome).expect("an outcome serializes")
    );
    i32::from(!outcome.ok)
}

fn apply(spec: &WorkerSpec, pool: &Pool) -> WorkerOutcome {
    let opts = ours::refdb_options(&spec.opts, spec.rules, spec.fsync);
    let mut db = match RefDb::open_or_create(&spec.stack, opts) {
        Ok(db) => db,
        Err(e) => {
            let r = ours::our_refusal(&e);
            return WorkerOutcome {
                ok: false,
                class: r.class,
                message: r.message,
                warning: None,
            };
        }
    };
    let r = match &spec.work {
        Work::Op(op) => ours::apply(&mut db, op, &committer_at(spec.tick), &PoolObjects(pool)),
        Work::Import(git_dir) => FilesRefs::read(git_dir, spec.opts.hash())
            .and_then(|files| db.import(&files, &PoolObjects(pool)))
            .map(|c| c.warning.map(|e| format!("{e:#}")))
            .map_err(|e| ours::our_refusal(&e)),
    };
    match r {
        Ok(warning) => WorkerOutcome {
            ok: true,
            warning,
            ..Default::default()
        },
        Err(r) => WorkerOutcome {
            ok: false,
            class: r.class,
            message: r.message,
            warning: None,
        },
    }
}
