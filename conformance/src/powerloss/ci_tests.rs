//! A power-loss run as CI test results: one test per setting; ours with fsync on fails on a
//! bad state, the others report their counts (git's guarantees are informative).

use crate::ci_output::result::{TestResult, Verdict};
use crate::powerloss::PowerLossReport;

/// The test results of `r`.
pub fn ci_tests(r: &PowerLossReport) -> Vec<TestResult> {
    let suite = format!("powerloss, git {}", r.version);
    r.settings
        .iter()
        .map(|s| {
            let Some(setting) = &s.setting else {
                return TestResult::new(
                    &suite,
                    "?",
                    Verdict::Skip("no setting".into()),
                    String::new(),
                );
            };
            let name = format!(
                "{}: {} crash states of {} operations",
                setting.name, s.states, s.ops
            );
            let mut text: String = s
                .examples
                .iter()
                .chain(&s.errors)
                .map(|e| format!("{e}\n"))
                .collect();
            let bad = s.bad() > 0 || !s.errors.is_empty();
            let verdict = match (bad, setting.required) {
                (false, _) => Verdict::Pass,
                (true, true) => Verdict::Fail,
                (true, false) => {
                    text.push_str("reported, not required of this setting\n");
                    let known = if s.known.is_empty() {
                        String::new()
                    } else {
                        format!("; known git defect {}", s.known.join(", "))
                    };
                    Verdict::Known(format!(
                        "{} bad crash states, not required of this setting{known}",
                        s.bad()
                    ))
                }
            };
            TestResult::new(&suite, &name, verdict, text)
        })
        .collect()
}
