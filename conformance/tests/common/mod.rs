//! Shared by the gate tests: finding git (skipped loudly without one, fatal in CI).

use conformance::git::driver::Git;
use conformance::setup::env::Env;

/// The run environment, or `None` (`SKIPPED`, or a failure under `REFTABLE_REQUIRE_GIT=1`:
/// reftable-testkit's skip policy) when no reftable-capable git is around.
pub fn env() -> Option<Env> {
    // As the commands that run cases: a git that writes without end (a known defect some
    // cases show) is stopped at the bound, not after the timeout with gigabytes written.
    conformance::git::runaway::bound_file_writes().expect("file-size bound");
    let git = reftable_testkit::skip::or_skip(Git::find(None))?;
    Some(Env::new(git).expect("object pool"))
}
