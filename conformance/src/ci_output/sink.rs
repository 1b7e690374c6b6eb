//! Where a run's test results go: TAP to a file or to stdout (`--tap`, `--tap=FILE`), JUnit
//! XML to a file (`--junit FILE`). When TAP goes to stdout the run's own summary lines are
//! printed as TAP comments, so that `prove --exec` and meson's `protocol: 'tap'` read the
//! whole of stdout as one TAP stream.

use std::path::PathBuf;

use crate::ci_output::result::TestResult;
use crate::ci_output::{junit, tap};

/// The `-` that stands for stdout.
pub const STDOUT: &str = "-";

/// Where the test results of a run are written (nowhere by default).
#[derive(Clone, Debug, Default)]
pub struct CiTargets {
    /// The TAP file, or [`STDOUT`].
    pub tap: Option<PathBuf>,
    /// The JUnit XML file.
    pub junit: Option<PathBuf>,
}

impl CiTargets {
    /// Whether TAP goes to stdout.
    pub fn tap_on_stdout(&self) -> bool {
        self.tap.as_deref().is_some_and(|p| p.as_os_str() == STDOUT)
    }

    /// Whether any test results are asked for.
    pub fn wanted(&self) -> bool {
        self.tap.is_some() || self.junit.is_some()
    }

    /// Print a summary line (or several) on stdout: as is, or as TAP comments when TAP goes
    /// to stdout.
    pub fn say(&self, text: &str) {
        if self.tap_on_stdout() {
            for line in text.lines() {
                println!("# {line}");
            }
        } else {
            println!("{text}");
        }
    }

    /// Write `tests` as TAP and JUnit where asked, under the run's `title`.
    pub fn write(&self, title: &str, tests: &[TestResult]) -> Result<(), String> {
        if let Some(p) = &self.tap {
            let text = tap::render(title, tests);
            if self.tap_on_stdout() {
                print!("{text}");
            } else {
                std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))?;
            }
        }
        if let Some(p) = &self.junit {
            std::fs::write(p, junit::render(title, tests))
                .map_err(|e| format!("{}: {e}", p.display()))?;
        }
        Ok(())
    }
}
