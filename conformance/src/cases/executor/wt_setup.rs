//! The linked worktree of a worktree case, set up on both sides: git's from `git worktree
//! add --detach --no-checkout`, ours a common directory whose `reftable` is our stack and
//! `worktrees/wt/reftable` a copy of the stack git's command made (so both start the same),
//! opened as a `WorktreeRefDb`. Its steps and checks are in `worktree.rs`.

use std::path::{Path, PathBuf};

use reftable::refdb::WorktreeRefDb;

use crate::ops::CaseOptions;
use crate::setup::env::Env;

/// The worktree's id (the base name of its directory), in both repositories.
pub(crate) const WORKTREE_ID: &str = "wt";

/// The linked worktree of a case, on both sides.
pub(crate) struct WorktreeSide {
    /// Holds git's worktree, `<dir>/wt`.
    pub(crate) git_parent: tempfile::TempDir,
    /// Our common directory: `reftable` links to our stack, `worktrees/wt/reftable` is the
    /// worktree's.
    pub(crate) ours_common: tempfile::TempDir,
    /// Our worktree's ref store.
    pub(crate) db: WorktreeRefDb,
    /// Fingerprint of git's two stacks when the worktree's view was last checked.
    pub(crate) viewed: Option<u64>,
}

impl WorktreeSide {
    /// git's worktree directory.
    pub(crate) fn git_path(&self) -> PathBuf {
        self.git_parent.path().join(WORKTREE_ID)
    }

    pub(crate) fn ours_stack(&self) -> PathBuf {
        self.ours_common
            .path()
            .join("worktrees")
            .join(WORKTREE_ID)
            .join("reftable")
    }
}

/// `git worktree add --detach --no-checkout` in `repo` at the pool's first commit (before
/// our stacks are copied from git's, so that both start the same).
pub(crate) fn add_git_worktree(
    env: &Env,
    repo: &Path,
    opts: &CaseOptions,
) -> Result<tempfile::TempDir, String> {
    let parent = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    let at = env.pool(opts.hash()).pool.commits[0].to_string();
    let path = parent.path().join(WORKTREE_ID);
    let path = path.to_str().ok_or("worktree path is not UTF-8")?;
    let args = ["worktree", "add", "--detach", "--no-checkout", path, &at];
    let out = env.git.run(repo, &args, "", 0);
    if !out.exit.success() {
        return Err(format!("git worktree add: {:?}: {}", out.exit, out.stderr));
    }
    Ok(parent)
}

/// Our side of the worktree: a common directory whose `reftable` links to `ours_stack`
/// and a copy of the worktree stack git made in `repo`, opened as a `WorktreeRefDb`.
pub(crate) fn our_worktree(
    env: &Env,
    repo: &Path,
    ours_stack: &Path,
    git_parent: tempfile::TempDir,
    db_opts: reftable::refdb::RefDbOptions,
) -> Result<WorktreeSide, String> {
    let ours_common = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    std::os::unix::fs::symlink(ours_stack, ours_common.path().join("reftable"))
        .map_err(|e| e.to_string())?;
    let git_dir = ours_common.path().join("worktrees").join(WORKTREE_ID);
    let git_wt_stack = repo
        .join(".git/worktrees")
        .join(WORKTREE_ID)
        .join("reftable");
    crate::stack_files::copy_dir(&git_wt_stack, &git_dir.join("reftable"), None)?;
    let db =
        WorktreeRefDb::open(ours_common.path(), &git_dir, db_opts).map_err(|e| format!("{e:#}"))?;
    Ok(WorktreeSide {
        git_parent,
        ours_common,
        db,
        viewed: None,
    })
}
