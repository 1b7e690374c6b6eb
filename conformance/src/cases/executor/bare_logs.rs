//! Reflogs in a bare repository that leaves `core.logAllRefUpdates` unset, at the end of a
//! case, on a copy of git's repository made bare: git then logs an update only when the
//! ref already has a reflog (its default for bare repositories is `false`, where a
//! repository with a work tree defaults to `true`). One `update-ref --create-reflog`
//! creates a ref with a reflog; one transaction then creates a second ref and moves the
//! first: the second must have no reflog, the first two entries.

use crate::cases::executor::checks::ProbeError;
use crate::cases::executor::Executor;
use crate::git::driver::Exit;

/// The ref created with a reflog, and the one created without: a branch, which a
/// repository with a work tree would log (both outside every name the generator makes).
const LOGGED: &str = "refs/gate-probe/bare-logged";
const UNLOGGED: &str = "refs/heads/gate-probe/bare-unlogged";

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_bare_logs(&self) -> Result<(), ProbeError> {
        let scratch = self.copy_of_git_repo()?;
        let git_dir = scratch.path().join(".git");
        let git = |args: &[&str], stdin: &str| self.env.git.run(&git_dir, args, stdin, self.tick);
        let ok = |args: &[&str], stdin: &str| {
            let out = self.env.git.ok(&git_dir, args, stdin);
            out.map_err(|e| format!("in a bare copy: {e}"))
        };
        ok(&["config", "core.bare", "true"], "")?;
        // Exit 5: the case's repository did not set it either.
        let unset = git(&["config", "--unset-all", "core.logAllRefUpdates"], "");
        if !matches!(unset.exit, Exit::Code(0 | 5)) {
            return Err(format!("unsetting core.logAllRefUpdates: {:?}", unset.exit).into());
        }
        let pool = &self.env.pool(self.hash).pool;
        let (a, b) = (
            pool.commits[0].to_string(),
            pool.commits[1 % pool.commits.len()].to_string(),
        );
        ok(
            &[
                "update-ref",
                "--create-reflog",
                "-m",
                "bare probe",
                LOGGED,
                &a,
            ],
            "",
        )?;
        let txn = format!("create {UNLOGGED} {a}\nupdate {LOGGED} {b} {a}\n");
        ok(&["update-ref", "-m", "bare probe", "--stdin"], &txn)?;
        let unlogged = git(&["reflog", "exists", UNLOGGED], "").exit;
        let entries = ok(&["reflog", "show", "--format=%H %gs", LOGGED], "")?;
        let want = format!("{b} bare probe\n{a} bare probe\n");
        if unlogged != Exit::Code(1) || entries != want {
            return Err(format!(
                "bare, core.logAllRefUpdates unset: reflog exists {UNLOGGED}: {unlogged:?} \
                 (want 1), reflog of {LOGGED}: {entries:?} (want {want:?})"
            )
            .into());
        }
        Ok(())
    }
}
