//! What the coordinator, the writer processes and the checks of the concurrent mode agree
//! on: the ref names the writers use ([`names`]), who a writer is ([`WriterKind`]), what a
//! writer is told ([`WorkerSpec`]) and what it reports of each attempt ([`Outcome`]), and
//! how each of them opens and reads the shared stack.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reftable::refdb::{LogRefs, RefDbOptions};
use reftable::{ObjectId, StackOptions};
use serde::{Deserialize, Serialize};

use crate::ops::Update;

/// The refs the writers use.
pub mod names {
    /// Refs of one writer only.
    pub const OWN: usize = 4;
    /// Names in directory/file conflict with each other, created and deleted by everyone.
    pub const DF: [&str; 4] = [
        "refs/heads/df/a",
        "refs/heads/df/a/b",
        "refs/heads/df/c",
        "refs/heads/df/c/d/e",
    ];
    /// Updated without an old value by everyone; its reflog is expired by maintenance.
    pub const EXPIRY: &str = "refs/heads/expiry";

    /// Writer `id`'s journal: updated by each of its transactions, never deleted or expired.
    pub fn journal(id: u32) -> String {
        format!("refs/journal/w{id}")
    }

    /// Writer `id`'s own ref `k`.
    pub fn own(id: u32, k: usize) -> String {
        format!("refs/heads/w{id}/r{k}")
    }

    /// Whether `name` is one of writer `id`'s own refs.
    pub fn is_own(id: u32, name: &str) -> bool {
        name.starts_with(&format!("refs/heads/w{id}/"))
    }

    /// Shared ref `k`; 0 is `main`, the branch `HEAD` points at.
    pub fn shared(k: usize) -> String {
        if k == 0 {
            "refs/heads/main".into()
        } else {
            format!("refs/heads/shared/s{k}")
        }
    }

    /// A tag only transaction `i` of writer `id` creates.
    pub fn tag(id: u32, i: u32) -> String {
        format!("refs/tags/w{id}-t{i}")
    }

    /// The reflog message of transaction `i` of writer `id` (unique in a run).
    pub fn message(id: u32, i: u32) -> String {
        format!("concurrent w{id} t{i}")
    }
}

/// Who a writer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriterKind {
    /// git subprocesses.
    Git,
    /// Our `RefDb`.
    Ours,
    /// Another implementation, through its adapter (`adapters/PROTOCOL.md`).
    Impl,
}

impl WriterKind {
    /// Its place in the report's per-kind counts.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            WriterKind::Git => "git",
            WriterKind::Ours => "ours",
            WriterKind::Impl => "impl",
        }
    }
}

/// What one worker process is told to do.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerSpec {
    /// Writer number (unique in a run).
    pub id: u32,
    /// git or ours.
    pub kind: WriterKind,
    /// The run's seed.
    pub seed: u64,
    /// Transactions to attempt.
    pub txns: u32,
    /// Shared refs besides `main`.
    pub shared: u32,
    /// Maintenance after every this many transactions (0: none).
    pub maintenance_every: u32,
    /// The repository (its stack is `.git/reftable`).
    pub repo: PathBuf,
    /// The git binary.
    pub git: PathBuf,
    /// Commit ids (hex) the refs take.
    pub commits: Vec<String>,
    /// Where the outcomes go (JSON lines).
    pub outcomes: PathBuf,
    /// Workers start when this file exists.
    pub start: PathBuf,
    /// The adapter's command line (an implementation's writer).
    #[serde(default)]
    pub adapter: Vec<String>,
    /// The git version the adapter is told it is compared with.
    #[serde(default)]
    pub git_version: String,
}

/// One attempt of a writer: a transaction or a maintenance run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    /// Writer number.
    pub writer: u32,
    /// git or ours.
    pub kind: WriterKind,
    /// Transaction number; `None` for maintenance.
    pub txn: Option<u32>,
    /// `transaction`, `pack-refs`, `pack-refs --auto`, `reflog expire`.
    pub what: String,
    /// The reflog message (transactions).
    pub message: String,
    /// The updates (transactions).
    pub updates: Vec<Update>,
    /// The clock tick it ran at (committer time `BASE_TIME + 60·tick`).
    pub tick: u64,
    /// Highest update index in `tables.list` just before.
    pub before: u64,
    /// Highest update index in `tables.list` just after.
    pub after: u64,
    /// Acknowledged (exit 0, or `Ok`).
    pub accepted: bool,
    /// git's stderr or our error.
    pub error: String,
    /// The update index our transaction committed under.
    pub index: Option<u64>,
    /// What the refusal says (git's wording or our error, classified); `None` when accepted
    /// or when the wording is unknown.
    pub class: Option<crate::err_class::ErrClass>,
}

/// The highest update index `tables.list` in `stack` names (0 for an empty or unreadable
/// stack): table names start with `0x<min>-0x<max>`.
pub(crate) fn listed_max_index(stack: &Path) -> u64 {
    let Ok(list) = std::fs::read_to_string(stack.join("tables.list")) else {
        return 0;
    };
    list.lines()
        .filter_map(|l| {
            let max = l.split('-').nth(1)?;
            u64::from_str_radix(max.trim_start_matches("0x"), 16).ok()
        })
        .max()
        .unwrap_or(0)
}

/// Library options for the concurrent mode's stack (shared with the coordinator's reader).
pub(crate) fn refdb_options(auto_compaction: bool) -> RefDbOptions {
    RefDbOptions::default()
        .stack(
            StackOptions::default()
                .auto_compaction(auto_compaction)
                .lock_timeout(Some(Duration::from_secs(3)))
                .fsync(false),
        )
        .log_refs(LogRefs::Always)
}

/// A pool of only `commits` (the refs of the concurrent mode point at nothing else).
pub(crate) fn commit_pool(commits: &[ObjectId]) -> crate::setup::pool::Pool {
    crate::setup::pool::Pool {
        commits: commits.to_vec(),
        tags: Vec::new(),
        tree: commits[0],
        missing: ObjectId::null(commits[0].hash()),
    }
}
