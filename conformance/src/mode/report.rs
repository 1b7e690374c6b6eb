//! The contract of a mode's report, and the one way every mode ends: the JSON and Markdown
//! reports written (the Markdown with the section for git's maintainers of the known
//! defects the run saw), the summary said on stdout, the CI test results written, the exit
//! status. A file that cannot be written is an error (exit 2), never a clean run.

use std::path::Path;

use crate::ci_output::result::TestResult;
use crate::defects::registry::ExpectedSet;
use crate::defects::upstream::maintainers_section;
use crate::mode::args::Outputs;

/// What every mode's report gives.
pub trait ModeReport {
    /// The CI test suite's title (`reftable-rs conformance damaged`).
    fn suite(&self) -> String;
    /// The JSON report.
    fn json(&self) -> String;
    /// The Markdown report, without the section for git's maintainers.
    fn markdown(&self) -> String;
    /// The ids of the known git defects the run saw.
    fn known_defects(&self) -> Vec<&str>;
    /// The summary said on stdout (as TAP comments when TAP goes there).
    fn lines(&self) -> Vec<String>;
    /// The run's test results for CI systems.
    fn ci_tests(&self) -> Vec<TestResult>;
    /// Whether the run found what fails it (exit 1).
    fn failed(&self) -> bool;
}

/// Write `r`'s reports where `out` asks, say its summary, write its test results; the exit
/// status (0 clean, 1 failed), or why a file could not be written.
pub fn finish(r: &dyn ModeReport, out: &Outputs, known: &ExpectedSet) -> Result<i32, String> {
    if let Some(p) = &out.report_json {
        write(p, &r.json())?;
    }
    if let Some(p) = &out.report_md {
        let ids = r.known_defects();
        let md = r.markdown() + &maintainers_section(known, ids);
        write(p, &md)?;
    }
    let targets = out.ci.targets();
    for line in r.lines() {
        targets.say(&line);
    }
    targets
        .write(&r.suite(), &r.ci_tests())
        .map_err(|e| format!("cannot write the test results: {e}"))?;
    Ok(i32::from(r.failed()))
}

/// Write a report file.
fn write(p: &Path, text: &str) -> Result<(), String> {
    std::fs::write(p, text).map_err(|e| format!("cannot write the report {}: {e}", p.display()))
}

/// A value as the pretty JSON every report is written in.
pub fn pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("a report serializes")
}
