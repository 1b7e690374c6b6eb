//! Which sanitizers a git was built with (`make SANITIZE=address` or `SANITIZE=leak`), asked
//! of the running binary rather than of its build options, which do not say: a sanitizer's
//! runtime given `help=1` in its options variable lists its flags before git starts.
//!
//! Known git defects only a sanitizer shows ([`crate::defects::registry::Expected`]'s
//! `sanitizer`) are replayed on a git that has that sanitizer, and on no other.

use serde::{Deserialize, Serialize};

use crate::git::driver::Git;

/// A sanitizer git can be built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sanitizer {
    /// AddressSanitizer (`SANITIZE=address`): bad reads and writes; on Linux it also checks
    /// for leaks at exit unless `detect_leaks=0`.
    Address,
    /// LeakSanitizer (`SANITIZE=leak`, or within AddressSanitizer).
    Leak,
}

/// The sanitizers `git` runs with: from the banner each runtime prints for `help=1`. An
/// address-sanitizer build counts as a leak checker too unless the caller's `ASAN_OPTIONS`
/// turn leak detection off.
pub fn detect(git: &Git) -> Vec<Sanitizer> {
    let mut c = git.command(&std::env::temp_dir(), 0);
    for var in ["ASAN_OPTIONS", "LSAN_OPTIONS"] {
        c.env(var, "help=1");
    }
    let out = git.run_command(&mut c, &["version"], "");
    let said = |runtime: &str| {
        let banner = format!("Available flags for {runtime}");
        out.stderr.contains(&banner) || out.stdout.contains(&banner)
    };
    let leaks_off = std::env::var("ASAN_OPTIONS").is_ok_and(|o| o.contains("detect_leaks=0"));
    let mut found = Vec::new();
    if said("AddressSanitizer") {
        found.push(Sanitizer::Address);
    }
    if said("LeakSanitizer") || (said("AddressSanitizer") && !leaks_off) {
        found.push(Sanitizer::Leak);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The git on PATH (CI's) is an ordinary build.
    #[test]
    fn an_ordinary_git_has_no_sanitizer() {
        let git = Git::find(None).expect("git");
        assert_eq!(detect(&git), Vec::<Sanitizer>::new());
    }
}
