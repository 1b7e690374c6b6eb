//! Ref updates in a quarantine environment, at the end of a case, on a copy of git's
//! repository: while a `pre-receive` hook runs, git sets `GIT_QUARANTINE_PATH` and no ref
//! may change. `update-ref` must then die saying so, and leave the stack as it was.

use crate::cases::executor::checks::ProbeError;
use crate::cases::executor::Executor;
use crate::git::driver::Exit;
use crate::stack_files::tables;

/// The ref the probe tries to write (outside every name the generator makes).
const PROBE_REF: &str = "refs/gate-probe/quarantined";

/// What git says (refs.c, every git from 2.13 on).
const REFUSAL: &str = "ref updates forbidden inside quarantine environment";

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_quarantine(&self) -> Result<(), ProbeError> {
        let scratch = self.copy_of_git_repo()?;
        let stack = scratch.path().join(".git/reftable");
        let commit = self.env.pool(self.hash).pool.commits[0].to_string();
        let before = tables(&stack);
        let mut c = self.env.git.command(scratch.path(), self.tick);
        c.env("GIT_QUARANTINE_PATH", scratch.path().join("quarantine"));
        let out = self
            .env
            .git
            .run_command(&mut c, &["update-ref", PROBE_REF, &commit], "");
        let said = out
            .stderr
            .lines()
            .any(|l| l.starts_with("fatal: ") && l.ends_with(REFUSAL));
        let unchanged = tables(&stack) == before;
        if !matches!(out.exit, Exit::Code(128)) || !said || !unchanged {
            return Err(format!(
                "update-ref in a quarantine environment: {:?}, {:?}, the stack {}",
                out.exit,
                out.stderr.trim(),
                if unchanged { "unchanged" } else { "changed" }
            )
            .into());
        }
        Ok(())
    }
}
