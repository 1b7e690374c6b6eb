//! A migration run as CI test results: one test per case, failing on a difference no known
//! git defect explains, with the differences, the case's operations (the mode does not
//! minimize) and the commands that run the case again.

use crate::ci_output::result::{TestResult, Verdict};
use crate::finding::dir::RERUN;
use crate::finding::script::sh_quote;
use crate::migrate::report::{MigrationCase, MigrationReport};

/// The test results of `r`, whose cases were made with `ops` operations each.
pub fn ci_tests(r: &MigrationReport, seed: u64, ops: usize) -> Vec<TestResult> {
    let suite = format!("migrate, git {}", r.version);
    r.case_runs
        .iter()
        .map(|c| case_test(r, c, &suite, seed, ops))
        .collect()
}

/// The test of one case.
fn case_test(
    r: &MigrationReport,
    c: &MigrationCase,
    suite: &str,
    seed: u64,
    ops: usize,
) -> TestResult {
    let divs: Vec<_> = r.divergences.iter().filter(|d| d.case == c.case).collect();
    let skipped = r
        .skipped
        .iter()
        .find(|s| s.starts_with(&format!("{}:", c.case)));
    let mut known: Vec<&str> = divs
        .iter()
        .filter_map(|d| d.finding.expected.as_deref())
        .collect();
    known.dedup();
    let unexpected = divs.iter().any(|d| d.finding.expected.is_none());
    let verdict = match (unexpected, known.is_empty(), skipped) {
        (true, _, _) => Verdict::Fail,
        (false, false, _) => Verdict::Known(format!("known git defect {}", known.join(", "))),
        (false, true, Some(why)) => Verdict::Skip(why.clone()),
        (false, true, None) => Verdict::Pass,
    };
    let mut text = String::new();
    for d in divs
        .iter()
        .filter(|d| d.finding.expected.is_none())
        .chain(divs.iter().filter(|d| d.finding.expected.is_some()))
    {
        let what = d
            .finding
            .expected
            .as_ref()
            .map_or("divergence".to_string(), |id| {
                format!("known git defect {id}")
            });
        text.push_str(&format!(
            "{what}: {} in {} on git {}\n",
            d.finding.class, c.case, r.version
        ));
        for line in d.finding.detail.lines() {
            text.push_str(&format!("    {line}\n"));
        }
    }
    if verdict == Verdict::Fail {
        text.push_str(&format!(
            "operations of the case (not minimized: the migration mode replays whole cases), {}:\n",
            c.operations.len()
        ));
        for op in &c.operations {
            text.push_str(&format!("    {op}\n"));
        }
        if let Some(dir) = &c.dir {
            text.push_str(&format!(
                "rerun: {dir}/{RERUN} [--git PATH] (the repositories it made: {dir}/repos)\n"
            ));
        }
        text.push_str(&format!(
            "rerun through the gate: conformance migrate --git {} --seed {seed} --ops {ops} --case {}\n",
            sh_quote(&r.git),
            c.index
        ));
    }
    TestResult::new(suite, &c.case, verdict, text).timed(c.seconds)
}
