//! Shared by the gate tests: finding git (skipped loudly without one, fatal in CI).

use conformance::case::Env;
use conformance::git::Git;

/// The run environment, or `None` (with a notice) when no reftable-capable git is around and
/// `REFTABLE_REQUIRE_GIT` is not `1`.
pub fn env() -> Option<Env> {
    match Git::find(None) {
        Ok(git) => Some(Env::new(git).expect("object pool")),
        Err(e) if std::env::var("REFTABLE_REQUIRE_GIT").is_ok_and(|v| v == "1") => {
            panic!("{e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}
