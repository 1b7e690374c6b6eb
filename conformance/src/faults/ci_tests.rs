//! A faults run as CI test results: one test per operation tried, failing on a defect of
//! ours or an unknown one of git's; git's known defects mark it as such (`TODO` in TAP,
//! `skipped` in JUnit).

use crate::ci_output::result::{TestResult, Verdict};
use crate::faults::migration::MigrationRun;
use crate::faults::report::{finding_line, migration_line, FaultsReport};
use crate::finding::script::sh_quote;

/// The test results of `r`.
pub fn ci_tests(r: &FaultsReport) -> Vec<TestResult> {
    let suite = format!("faults, git {}", r.version);
    let again = format!(
        "run again: conformance faults --git {} --seed {} --cases {}\n",
        sh_quote(&r.git),
        r.seed,
        r.cases
    );
    let mut out = Vec::new();
    for o in &r.ops {
        let trials: usize = o.sides.iter().map(|s| s.trials.len()).sum();
        let name = format!(
            "{} step {} {}: {trials} faulted runs",
            o.case, o.step, o.command
        );
        let mut text = String::new();
        let mut known = Vec::new();
        for s in &o.sides {
            if let Some(e) = &s.error {
                text.push_str(&format!("{:?} could not be tried: {e}\n", s.side));
            }
            for t in s.trials.iter().filter(|t| t.class.is_bad()) {
                match &t.known {
                    Some(k) => known.push(k.clone()),
                    None => text.push_str(&format!("{}\n", finding_line(o, s.side, t))),
                }
            }
        }
        let verdict = if !text.is_empty() {
            text.push_str(&format!("invocation: git {}\n{again}", o.invocation));
            Verdict::Fail
        } else if !known.is_empty() {
            known.dedup();
            Verdict::Known(format!("known git defect: {}", known.join(", ")))
        } else {
            Verdict::Pass
        };
        out.push(TestResult::new(&suite, &name, verdict, text));
    }
    for m in &r.migrations {
        out.push(migration_test(&suite, m, &again));
    }
    out
}

/// One test per migration tried: failing on git's unknown defects or a migration that
/// could not be tried.
fn migration_test(suite: &str, m: &MigrationRun, again: &str) -> TestResult {
    let runs: usize = m.sides().map(|s| s.trials.len()).sum();
    let name = format!("{} {}: {runs} faulted runs", m.case, m.command());
    let mut text = String::new();
    let mut known = Vec::new();
    for s in m.sides() {
        if let Some(e) = &s.error {
            text.push_str(&format!("{:?} could not be tried: {e}\n", s.side));
        }
        for t in s.trials.iter().filter(|t| t.class.is_bad()) {
            match &t.known {
                Some(k) => known.push(k.clone()),
                None => {
                    let line = migration_line(s.side, &m.case, &m.command(), t);
                    text.push_str(&format!("{line}\n"));
                }
            }
        }
    }
    let verdict = if !text.is_empty() {
        text.push_str(again);
        Verdict::Fail
    } else if !known.is_empty() {
        known.sort();
        known.dedup();
        Verdict::Known(format!("known git defect: {}", known.join(", ")))
    } else {
        Verdict::Pass
    };
    TestResult::new(suite, &name, verdict, text)
}
