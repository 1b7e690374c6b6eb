//! The one skip policy: a test that needs something the machine lacks (a reftable-capable
//! git, `mkfifo`) prints `SKIPPED: <why>` and passes, unless `REFTABLE_REQUIRE_GIT=1` (as in
//! CI, whose image has all of it), where it fails.

/// Whether missing prerequisites fail tests instead of skipping them.
pub fn required() -> bool {
    std::env::var("REFTABLE_REQUIRE_GIT").is_ok_and(|v| v == "1")
}

/// `Some(value)`, or skip (print `SKIPPED: <why>`) / fail (when [`required`]).
pub fn or_skip<T>(found: Result<T, String>) -> Option<T> {
    match found {
        Ok(v) => Some(v),
        Err(why) if required() => panic!("REFTABLE_REQUIRE_GIT=1 but {why}"),
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            None
        }
    }
}
