//! The git processes a case keeps running: its `update-ref --stdin`s, and the committer
//! clock that lets one of them serve every transaction with its message (update-ref takes
//! its `-m` message and `--create-reflog` once, at start, so there is one process per
//! repository and (message, flag) pair, each running at the tick of its pair); and a
//! `cat-file --batch-check` per directory for lookups by name.

use std::path::{Path, PathBuf};

use crate::git::driver::{CatFile, Exit, Git, TxnResult, UpdateRef};

/// The `-m` message and `--create-reflog` flag an `update-ref --stdin` runs with.
type TxnKey = (String, bool);

/// The `update-ref` that only verifies, on git's repository (see
/// [`Executor::git_verify`](super::Executor::git_verify)).
pub(crate) const VERIFIER: usize = 2;

/// The `update-ref`s run in the case's linked worktree (see `worktree.rs`).
pub(crate) const WORKTREE: usize = 3;

/// The running `update-ref --stdin`s of a case and the (message, flag) pairs seen.
#[derive(Default)]
pub(crate) struct UpdateRefs {
    /// Running `update-ref --stdin`s: (0 git's repository / 1 the interleave repository /
    /// [`VERIFIER`], message and flag) → process. One per message: update-ref takes its message once.
    running: Vec<((usize, TxnKey), UpdateRef)>,
    /// The (message, flag) pairs seen, in order: the committer clock of a transaction is the
    /// position of its pair (so a process can serve every transaction with its message).
    keys: Vec<TxnKey>,
}

impl UpdateRefs {
    /// The committer tick of a transaction with `message` and `create_reflog` (see
    /// [`tick_of`](crate::finding::script::tick_of)).
    pub(crate) fn tick(&mut self, message: &str, create_reflog: bool) -> u64 {
        crate::finding::script::tick_of(&mut self.keys, message, create_reflog)
    }

    /// Run `lines` through the process of `which` (0 git's repository, 1 the interleave
    /// repository, [`VERIFIER`]) with this message and flag, started by `spawn` when there is none; committed, or only prepared
    /// and aborted when `verify_only`. A process that failed is dropped (git exits after a
    /// refusal).
    pub(crate) fn run(
        &mut self,
        which: usize,
        lines: &str,
        message: &str,
        create_reflog: bool,
        verify_only: bool,
        spawn: impl FnOnce() -> std::io::Result<UpdateRef>,
    ) -> TxnResult {
        let key = (which, (message.to_string(), create_reflog));
        let at = match self.running.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                match spawn() {
                    Ok(c) => self.running.push((key, c)),
                    Err(e) => return TxnResult::Failed(Exit::Code(-1), e.to_string()),
                }
                self.running.len() - 1
            }
        };
        let r = if verify_only {
            self.running[at].1.prepare_and_abort(lines)
        } else {
            self.running[at].1.transaction(lines)
        };
        if matches!(r, TxnResult::Failed(..)) {
            self.running.swap_remove(at);
        }
        r
    }
}

/// The running `cat-file --batch-check`s of a case, by directory.
#[derive(Default)]
pub(crate) struct CatFiles(Vec<(PathBuf, CatFile)>);

impl CatFiles {
    /// git's line for each of `names` in `dir`, through the process there (started at
    /// `tick` on first use, dropped when it fails).
    pub(crate) fn lookup(
        &mut self,
        git: &Git,
        dir: &Path,
        tick: u64,
        names: &[String],
    ) -> Result<Vec<String>, (Exit, String)> {
        let at = match self.0.iter().position(|(d, _)| d == dir) {
            Some(at) => at,
            None => {
                let c = CatFile::spawn(git, dir, tick)
                    .map_err(|e| (Exit::Code(-1), format!("cannot start cat-file: {e}")))?;
                self.0.push((dir.to_path_buf(), c));
                self.0.len() - 1
            }
        };
        let got = self.0[at].1.lookup(names);
        if got.is_err() {
            self.0.swap_remove(at);
        }
        got
    }
}
