//! One write operation under one durability setting: recorded once (its file-system
//! operations and their bytes), every crash state built from the recording, and each state
//! put in a repository and read by our reader and by git: the stack must load, and hold the
//! state before the operation, after it, or between two of its commits; a crash after the
//! writer reported success must keep the write.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::faults::class::Reported;
use crate::faults::trial::{reported, OpUnderTest, Side};
use crate::powerloss::crash::{complete, crash_states, Files};
use crate::powerloss::fsops::{parse, FsOp, EXTRA_SYSCALLS};
use crate::snapshot::Snapshot;
use crate::syscalls::strace::Tracing;

/// What a crash state came to, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateClass {
    /// Our reader or git cannot load the stack.
    Unloadable,
    /// Neither before, after, nor between two of the operation's commits.
    Neither,
    /// The writer had reported success, yet the write is not there.
    LostAcknowledged,
    /// As before the operation.
    Before,
    /// As after one of the operation's commits when it makes several.
    BetweenCommits,
    /// As after the operation.
    After,
}

impl StateClass {
    /// Every class, in report order.
    pub const ALL: [StateClass; 6] = [
        StateClass::Before,
        StateClass::BetweenCommits,
        StateClass::After,
        StateClass::Unloadable,
        StateClass::Neither,
        StateClass::LostAcknowledged,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            StateClass::Unloadable => "unloadable",
            StateClass::Neither => "neither",
            StateClass::LostAcknowledged => "lost-acknowledged",
            StateClass::Before => "before",
            StateClass::BetweenCommits => "between-commits",
            StateClass::After => "after",
        }
    }

    /// A state a durable writer must never leave.
    pub fn is_bad(self) -> bool {
        matches!(
            self,
            StateClass::Unloadable | StateClass::Neither | StateClass::LostAcknowledged
        )
    }
}

/// One operation's crash states under one setting.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpStates {
    /// File-system operations recorded.
    pub fs_ops: usize,
    /// Syncs among them (files and directory).
    pub syncs: usize,
    /// Distinct crash states.
    pub states: usize,
    /// States per class.
    pub classes: BTreeMap<StateClass, usize>,
    /// A description of the first bad states.
    pub examples: Vec<String>,
}

/// The stack directory's files, sorted by name, with their bytes.
fn files_of(stack: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(stack).map_err(|e| format!("{}: {e}", stack.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        let name = e.file_name().to_string_lossy().into_owned();
        out.push((name, std::fs::read(e.path()).map_err(|e| e.to_string())?));
    }
    out.sort();
    Ok(out)
}

/// Put `files` in the stack directory of the repository `repo` (replacing what is there).
fn put(repo: &Path, files: &Files) -> Result<(), String> {
    let stack = repo.join(".git/reftable");
    let _ = std::fs::remove_dir_all(&stack);
    std::fs::create_dir_all(&stack).map_err(|e| e.to_string())?;
    for (name, data) in files {
        std::fs::write(stack.join(name), data).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Record `t` on `side` and check every crash state of the recording.
pub fn check_op(t: &OpUnderTest<'_>, side: Side) -> Result<OpStates, String> {
    let before = files_of(&t.pre.join(".git/reftable"))?;
    let (traced, repo) = t.traced(side, "record", Tracing::Record(EXTRA_SYSCALLS))?;
    let acknowledged = matches!(reported(side, &traced), Reported::Done(_));
    let stack = repo.join(".git/reftable");
    let names: Vec<String> = before.iter().map(|(n, _)| n.clone()).collect();
    let ops = parse(&traced.trace, &stack.display().to_string(), &names)?;
    let s0 = t.read(&t.pre.join(".git/reftable"))?;
    let s1 = t.read(&stack)?;
    let check_repo = t.scratch.join("state/repo");
    crate::stack_files::copy_dir(t.pre, &check_repo, None)?;
    let mut between = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if matches!(op, FsOp::Rename { to, .. } if to == "tables.list") {
            put(&check_repo, &complete(&before, &ops[..=i]))?;
            between.push(t.read(&check_repo.join(".git/reftable"))?);
        }
    }
    let mut out = OpStates {
        fs_ops: ops.len(),
        syncs: ops
            .iter()
            .filter(|o| matches!(o, FsOp::Sync { .. } | FsOp::SyncDir))
            .count(),
        ..Default::default()
    };
    let states = crash_states(&before, &ops);
    out.states = states.len();
    for s in &states {
        put(&check_repo, &s.files)?;
        let after_exit = s.point == ops.len() && acknowledged;
        let class = classify(t, &check_repo, [&s0, &s1], &between, after_exit);
        *out.classes.entry(class).or_default() += 1;
        if class.is_bad() && out.examples.len() < 3 {
            let names: Vec<&String> = s.files.keys().collect();
            out.examples.push(format!(
                "{}: crash after {} of {} operations, {} directory changes kept, unsynced data {}: files {names:?}",
                class.name(),
                s.point,
                ops.len(),
                s.names_kept,
                if s.data.is_empty() { "none" } else { &s.data }
            ));
        }
    }
    Ok(out)
}

/// The class of the state in `repo`: `ends` the states before and after the operation,
/// `between` those after each of its commits; `after_exit` when the writer had reported
/// success before the crash.
fn classify(
    t: &OpUnderTest<'_>,
    repo: &Path,
    ends: [&Snapshot; 2],
    between: &[Snapshot],
    after_exit: bool,
) -> StateClass {
    let Ok(s) = t.read(&repo.join(".git/reftable")) else {
        return StateClass::Unloadable;
    };
    if !t.env.git.run(repo, &["for-each-ref"], "", 0).exit.success() {
        return StateClass::Unloadable;
    }
    if after_exit && s != *ends[1] {
        return StateClass::LostAcknowledged;
    }
    if s == *ends[1] {
        StateClass::After
    } else if s == *ends[0] {
        StateClass::Before
    } else if between.contains(&s) {
        StateClass::BetweenCommits
    } else {
        StateClass::Neither
    }
}
