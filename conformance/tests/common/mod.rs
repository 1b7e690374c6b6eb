//! Shared by the gate tests: finding git (skipped loudly without one, fatal in CI).

use conformance::git::driver::Git;
use conformance::setup::env::Env;

/// The run environment, or `None` (`SKIPPED`, or a failure under `REFTABLE_REQUIRE_GIT=1`:
/// reftable-testkit's skip policy) when no reftable-capable git is around.
pub fn env() -> Option<Env> {
    let git = reftable_testkit::skip::or_skip(Git::find(None))?;
    Some(Env::new(git).expect("object pool"))
}
