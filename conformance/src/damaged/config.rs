//! What a damaged-stack run is asked to do ([`DamageConfig`]) and what every run holds
//! fixed: the commands run on each damaged stack and where the victim file outside the
//! repository sits.

use std::path::PathBuf;
use std::time::Duration;

/// What to run.
#[derive(Clone, Debug)]
pub struct DamageConfig {
    /// Seed (bases come from the gate's cases of this seed; damage from it too).
    pub seed: u64,
    /// Undamaged stacks to start from.
    pub bases: u64,
    /// Stop after this many damaged stacks ...
    pub trials: u64,
    /// ... or after this long, whichever comes first.
    pub budget: Duration,
    /// A git command that has not finished after this long is a hang.
    pub timeout: Duration,
    /// Parallel jobs.
    pub jobs: usize,
    /// Where findings are written.
    pub out: PathBuf,
    /// Backtraces of git's crashes with gdb (when installed).
    pub gdb: bool,
    /// Minimize each finding's damage before writing it (off: written as first seen, so the
    /// run ends soon after its budget).
    pub minimize: bool,
    /// Stop trying at the first finding on our side.
    pub fail_fast: bool,
}

/// The relative path, from a stack directory, of the file outside the repository that
/// `tables.list` damage points at (`trial/repo/.git/reftable` → `trial/outside/victim.ref`).
pub(crate) const OUTSIDE: &str = "../../../outside/victim.ref";

/// The commands run on each damaged stack, on git and on us.
pub(crate) const COMMANDS: [&str; 5] = [
    "for-each-ref",
    "show-ref",
    "reflog-show",
    "refs-verify",
    "pack-refs",
];
