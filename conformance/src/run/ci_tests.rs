//! A generated run as CI test results: one per git for the known defects replayed at start
//! (it fails when one stopped reproducing), one per case and git (it fails on an unexpected
//! divergence; one that only shows known git defects is marked as such), and the concurrent
//! round's test per git. A failure's text carries each divergence, the minimized operations
//! and the case directory's `rerun.sh`.

use crate::ci_output::result::{TestResult, Verdict};
use crate::finding::dir::{REPRODUCE, RERUN};
use crate::run::report::{CaseSummary, DivergenceRecord, Report};

/// The test results of `r`, cases in the order of the seed's list (then by git).
pub fn ci_tests(r: &Report) -> Vec<TestResult> {
    let suites = suite_names(r);
    let mut out = Vec::new();
    for (g, sec) in r.gits.iter().enumerate() {
        let (verdict, text) = if sec.stale_expected.is_empty() {
            (Verdict::Pass, String::new())
        } else {
            (Verdict::Fail, sec.stale_expected.join("\n"))
        };
        let name = "known git defects in range still reproduce";
        out.push(TestResult::new(&suites[g], name, verdict, text));
    }
    let mut cases: Vec<&CaseSummary> = r.case_runs.iter().collect();
    cases.sort_by_key(|c| (c.index, c.git));
    for c in cases {
        out.push(case_test(r, c, &suites[c.git]));
    }
    for (g, sec) in r.gits.iter().enumerate() {
        if let Some(c) = &sec.concurrent {
            out.push(crate::concurrent::ci_test(c, &suites[g]));
        }
    }
    out
}

/// One group per git: `run, git VERSION` (with the git's place in the run when two share a
/// version).
fn suite_names(r: &Report) -> Vec<String> {
    r.gits
        .iter()
        .enumerate()
        .map(|(i, g)| {
            if r.gits.iter().filter(|x| x.version == g.version).count() > 1 {
                format!("run, git {i} {}", g.version)
            } else {
                format!("run, git {}", g.version)
            }
        })
        .collect()
}

/// The test of one case on one git.
fn case_test(r: &Report, c: &CaseSummary, suite: &str) -> TestResult {
    let name = format!("seed{}-case{}", r.seed, c.index);
    let divs: Vec<&DivergenceRecord> = c.divergences.iter().map(|&i| &r.divergences[i]).collect();
    let unexpected: Vec<&&DivergenceRecord> =
        divs.iter().filter(|d| d.expected.is_none()).collect();
    let mut known: Vec<&str> = divs.iter().filter_map(|d| d.expected.as_deref()).collect();
    known.dedup();
    let verdict = if !unexpected.is_empty() {
        Verdict::Fail
    } else if !known.is_empty() {
        Verdict::Known(format!("known git defect {}", known.join(", ")))
    } else {
        Verdict::Pass
    };
    let mut text = String::new();
    for d in unexpected
        .iter()
        .map(|d| **d)
        .chain(divs.iter().copied().filter(|d| d.expected.is_some()))
    {
        divergence_text(&mut text, d);
    }
    if verdict == Verdict::Fail {
        replay_text(&mut text, c, unexpected[0]);
    }
    TestResult::new(suite, &name, verdict, text).timed(c.seconds)
}

/// A divergence: its check and class at its step (the first line, a failure's message),
/// then what differs.
fn divergence_text(out: &mut String, d: &DivergenceRecord) {
    let what = d.expected.as_ref().map_or("divergence".to_string(), |id| {
        format!("known git defect {id}")
    });
    out.push_str(&format!(
        "{what}: check {} ({}) after operation {} on git {} ({})\n",
        d.check, d.class, d.step, d.git, d.git_path
    ));
    for line in d.detail.lines() {
        out.push_str(&format!("    {line}\n"));
    }
}

/// The minimized operations of `d` and the commands that replay the case.
fn replay_text(out: &mut String, c: &CaseSummary, d: &DivergenceRecord) {
    if d.minimized_ops.is_empty() {
        out.push_str(&format!(
            "not minimized ({} operations up to the divergence)\n",
            d.ops
        ));
    } else {
        out.push_str(&format!(
            "minimized to {} operations:\n",
            d.minimized_ops.len()
        ));
        for op in &d.minimized_ops {
            out.push_str(&format!("    {op}\n"));
        }
    }
    if let Some(dir) = c.min_dir.as_ref().or(c.dir.as_ref()) {
        out.push_str(&format!(
            "rerun through the gate: {dir}/{RERUN} [--git PATH]\n"
        ));
        out.push_str(&format!(
            "reproduce with git alone: {dir}/{REPRODUCE} [GIT]\n"
        ));
    }
    if let (Some(full), Some(_)) = (&c.dir, &c.min_dir) {
        out.push_str(&format!("the whole case: {full}/{RERUN}\n"));
    }
}
