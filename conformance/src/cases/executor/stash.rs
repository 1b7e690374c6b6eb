//! `git stash` at the end of a case, on a copy of git's repository: two entries pushed onto
//! `refs/stash` (its reflog is the stash list), then dropped one by one. Dropping the newest
//! rewrites the reflog and moves `refs/stash` back to the older entry; dropping the last
//! one deletes `refs/stash` once its reflog is empty. The copy's `HEAD` is first pointed at
//! a branch of its own on a commit of the case's pool (an empty tree), so that every case
//! has a work tree to stash from. `refs/stash` itself is read back by our reader.

use crate::cases::executor::checks::ProbeError;
use crate::cases::executor::Executor;

/// The branch the probe checks out (outside every name the generator makes).
const BRANCH: &str = "refs/heads/gate-probe-stash";

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_stash(&self) -> Result<(), ProbeError> {
        let scratch = self.copy_of_git_repo()?;
        let dir = scratch.path();
        let commit = self.env.pool(self.hash).pool.commits[0].to_string();
        let git = |args: &[&str]| self.env.git.ok(dir, args, "");
        // The case may have left a HEAD git cannot repoint (a symref to itself).
        git(&["symbolic-ref", "HEAD", BRANCH]).map_err(ProbeError::Setup)?;
        git(&["update-ref", BRANCH, &commit]).map_err(ProbeError::Setup)?;
        for (content, message) in [("one", "first"), ("two", "second")] {
            std::fs::write(dir.join("probe.txt"), content).map_err(|e| e.to_string())?;
            git(&["add", "probe.txt"])?;
            git(&["stash", "push", "-q", "-m", message])?;
        }
        // Each entry with its commit: the older one's id, for what dropping the newest leaves.
        let list = || git(&["stash", "list", "--format=%gd %H %gs"]);
        let entry =
            |n: usize, id: &str, m: &str| format!("stash@{{{n}}} {id} On gate-probe-stash: {m}\n");
        // refs/stash as git left it, read back by our reader.
        let stash_ref = || -> Result<String, ProbeError> {
            let r = self.our_reader_of(dir)?.read_ref(b"refs/stash");
            let r = r.map_err(|e| format!("{e:#}"))?;
            Ok(r.and_then(|r| r.value_id().map(|id| id.to_string()))
                .unwrap_or_default())
        };
        let got = list()?;
        let ids: Vec<&str> = got.lines().filter_map(|l| l.split(' ').nth(1)).collect();
        let older = ids.get(1).copied().unwrap_or_default().to_string();
        let want = entry(0, ids.first().copied().unwrap_or_default(), "second")
            + &entry(1, &older, "first");
        if got != want || ids.len() != 2 {
            return Err(format!(
                "git stash list after two pushes: {got:?}, expected two entries, second and first"
            )
            .into());
        }
        git(&["stash", "drop", "-q"])?;
        let (got, at) = (list()?, stash_ref()?);
        if got != entry(0, &older, "first") || at != older {
            return Err(format!(
                "after dropping the newest stash: list {got:?}, refs/stash at {at:?}; expected the older entry {older:?} alone"
            ).into());
        }
        git(&["stash", "drop", "-q"])?;
        let (got, at) = (list()?, stash_ref()?);
        if !got.is_empty() || !at.is_empty() {
            return Err(format!(
                "after dropping the last stash: list {got:?}, refs/stash at {at:?}; expected neither"
            ).into());
        }
        Ok(())
    }
}
