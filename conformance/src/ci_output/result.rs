//! One test result as CI systems count them: a name, the group it belongs to, how it ended
//! and the text a developer reads when it failed (the divergence, the minimized operations,
//! the command that runs it again).

/// How a test ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every comparison agreed.
    Pass,
    /// An unexpected divergence (or a known one that stopped reproducing): the run fails.
    Fail,
    /// It diverged, but only as a known git defect does (the reason names it): not a
    /// failure of the gate. TAP marks it `TODO`, JUnit `skipped`.
    Known(String),
    /// Not run (the reason says why).
    Skip(String),
}

/// One test: a case, a concurrent run, a migration case, a class of damaged trials.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// The group: a JUnit test suite (`conformance run, git 2.47.3`).
    pub suite: String,
    /// The test's name within its group (`seed1-case12`).
    pub name: String,
    /// How it ended.
    pub verdict: Verdict,
    /// Seconds it took (0 when not measured).
    pub seconds: f64,
    /// What a developer reads: for a failure the divergence, its minimized operations and
    /// the replay command; for others a short account (may be empty).
    pub text: String,
}

impl TestResult {
    /// A test of `suite` named `name` that ended as `verdict`, with `text`.
    pub fn new(suite: &str, name: &str, verdict: Verdict, text: String) -> TestResult {
        TestResult {
            suite: suite.to_string(),
            name: name.to_string(),
            verdict,
            seconds: 0.0,
            text,
        }
    }

    /// The same, taking `seconds`.
    pub fn timed(mut self, seconds: f64) -> TestResult {
        self.seconds = seconds;
        self
    }
}

/// Counts over a list: (tests, failures, known, skipped).
pub fn counts(tests: &[TestResult]) -> (usize, usize, usize, usize) {
    let n = |f: fn(&Verdict) -> bool| tests.iter().filter(|t| f(&t.verdict)).count();
    (
        tests.len(),
        n(|v| *v == Verdict::Fail),
        n(|v| matches!(v, Verdict::Known(_))),
        n(|v| matches!(v, Verdict::Skip(_))),
    )
}
