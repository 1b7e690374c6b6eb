//! The options every mode takes for CI systems (`--tap`, `--junit`) and the writing of its
//! test results.

use std::path::PathBuf;

use conformance::ci_output::result::TestResult;
use conformance::ci_output::sink::{CiTargets, STDOUT};

/// Test results for CI systems, in every mode.
#[derive(clap::Args, Clone, Default)]
pub struct CiArgs {
    /// Write the test results as TAP (one test per case): `--tap` to stdout, where the run's
    /// summary lines then become TAP comments (for `prove --exec` and meson), `--tap=FILE`
    /// to a file.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = STDOUT
    )]
    pub tap: Option<PathBuf>,
    /// Write the test results as JUnit XML to FILE (GitLab's `reports:junit`, GitHub's
    /// test-report actions).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

impl CiArgs {
    pub fn targets(&self) -> CiTargets {
        CiTargets {
            tap: self.tap.clone(),
            junit: self.junit.clone(),
        }
    }
}

/// Write `tests` as TAP and JUnit where `out` asks for them; a failure to write ends the
/// process (exit status 2).
pub fn write_ci(out: &CiTargets, title: &str, tests: &[TestResult]) {
    if let Err(e) = out.write(title, tests) {
        eprintln!("conformance: cannot write the test results: {e}");
        std::process::exit(2);
    }
}
