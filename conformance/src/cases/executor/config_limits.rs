//! The limits git puts on its `reftable.*` settings, at the end of a case, on a copy of
//! git's repository: a write with a value past a limit is refused (`fatal: ...`, exit 128)
//! and leaves the stack as it was; a write with the value at the limit goes
//! through. Only gits that honour `reftable.*` (2.46+) have the limits. Which of the
//! values below a case tries turns with the case.

use crate::cases::executor::Executor;
use crate::git::driver::Exit;
use crate::stack_files::tables;

/// Settings past their limit, each with the same setting at its limit: (key, refused value,
/// allowed value). The limits are git's: a block of at most 16 MiB - 1, a restart interval
/// and a geometric factor that fit 16 and 8 bits, a lock timeout of -1 (wait for ever) or
/// more, and at most the largest 64-bit number (one more does not parse).
const LIMITS: [(&str, &str, &str); 5] = [
    ("reftable.blockSize", "16777216", "16777215"),
    ("reftable.restartInterval", "65536", "65535"),
    ("reftable.geometricFactor", "256", "255"),
    ("reftable.lockTimeout", "-2", "-1"),
    (
        "reftable.lockTimeout",
        "9223372036854775808",
        "9223372036854775807",
    ),
];

/// The ref the probe writes (outside every name the generator makes).
const PROBE_REF: &str = "refs/gate-probe/config";

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_config_limits(&self) -> Result<(), String> {
        if !self.env.profile.features.reftable_config {
            return Ok(());
        }
        let (key, refused, allowed) = LIMITS[self.txns as usize % LIMITS.len()];
        let scratch = self.copy_of_git_repo()?;
        let stack = scratch.path().join(".git/reftable");
        let commit = self.env.pool(self.hash).pool.commits[0].to_string();
        let write = |value: &str| {
            let setting = format!("{key}={value}");
            let args = ["-c", &setting, "update-ref", PROBE_REF, &commit];
            self.env.git.run(scratch.path(), &args, "", self.tick)
        };
        let before = tables(&stack);
        let out = write(refused);
        let fatal = out.stderr.lines().any(|l| l.starts_with("fatal: "));
        let unchanged = tables(&stack) == before;
        if !matches!(out.exit, Exit::Code(128)) || !fatal || !unchanged {
            return Err(format!(
                "update-ref with {key}={refused}: {:?}, {:?}, the stack {}",
                out.exit,
                out.stderr.trim(),
                if unchanged { "unchanged" } else { "changed" }
            ));
        }
        let out = write(allowed);
        if !out.exit.success() {
            return Err(format!(
                "update-ref with {key}={allowed}: {:?}, {:?}",
                out.exit,
                out.stderr.trim()
            ));
        }
        Ok(())
    }
}
