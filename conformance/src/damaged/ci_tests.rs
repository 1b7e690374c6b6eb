//! A damaged-stack run as CI test results. Our side: one test per command run on every
//! damaged stack (`for-each-ref`, `show-ref`, ...), failing on a finding of ours on it. git's
//! side: one test per distinct finding, marked as a git defect (`TODO` in TAP, `skipped` in
//! JUnit: the gate does not fail on git's crashes), one failing test per known defect that
//! no longer reproduces, and, when a minimum was asked for, one that git still crashes at
//! that many sites.

use crate::ci_output::result::{TestResult, Verdict};
use crate::damaged::class::Class;
use crate::damaged::config::COMMANDS;
use crate::damaged::damage::Edit;
use crate::damaged::report::{DamageReport, Finding};
use crate::finding::dir::REPRODUCE;
use crate::finding::script::sh_quote;

/// The test results of `r`; `min_crash_sites` as given to the run (0: no such test).
pub fn ci_tests(r: &DamageReport, min_crash_sites: usize) -> Vec<TestResult> {
    let suite = format!("damaged, git {}", r.version);
    let again = format!(
        "run again: conformance damaged --git {} --seed {} --bases {} --trials {}",
        sh_quote(&r.git),
        r.seed,
        r.bases,
        r.trials
    );
    let mut out = Vec::new();
    for c in COMMANDS {
        let name = format!("ours on {c}: {} damaged stacks", r.trials);
        let mine: Vec<&Finding> = r
            .ours_findings
            .iter()
            .filter(|f| f.command == c || f.commands.iter().any(|x| x == c))
            .collect();
        let (verdict, text) = if mine.is_empty() {
            (Verdict::Pass, String::new())
        } else {
            let mut t: String = mine.iter().map(|f| finding_text(f)).collect();
            t.push_str(&again);
            (Verdict::Fail, t)
        };
        out.push(TestResult::new(&suite, &name, verdict, text));
    }
    for f in &r.git_findings {
        let name = format!("git {} on {}: {}", f.class, f.command, f.signature);
        let verdict = match &f.known {
            Some(k) => Verdict::Known(format!("known git defect {k} (not a failure of the gate)")),
            // A sanitizer's report fails the run (see `say_damaged`).
            None if f.class == Class::SanitizerReport => Verdict::Fail,
            None => Verdict::Known("git defect found by damage (not a failure of the gate)".into()),
        };
        out.push(TestResult::new(&suite, &name, verdict, finding_text(f)));
    }
    for st in &r.stale_known {
        let name = format!("known git defect still there: {}", st.id);
        out.push(TestResult::new(
            &suite,
            &name,
            Verdict::Fail,
            format!("{}\n", st.line),
        ));
    }
    if min_crash_sites > 0 {
        let sites = r
            .git_findings
            .iter()
            .filter(|f| f.class == Class::Crash)
            .count();
        let name = format!("git crashes at {min_crash_sites} or more distinct sites");
        let verdict = if sites >= min_crash_sites {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        let text = format!("git crashed at {sites} distinct sites: the damage may no longer reach what it used to\n");
        out.push(TestResult::new(&suite, &name, verdict, text));
    }
    out
}

/// A finding: what, where, how often, the damage, and its reproducer.
fn finding_text(f: &Finding) -> String {
    let damage: Vec<String> = f.damage.edits.iter().map(Edit::summary).collect();
    let mut t = format!(
        "{} {} on {} (seen {} times; commands {}): {}\n    damage: {}\n",
        f.side,
        f.class,
        f.command,
        f.count,
        f.commands.join(", "),
        f.signature,
        damage.join("; ")
    );
    for line in f.detail.lines().take(20) {
        t.push_str(&format!("    {line}\n"));
    }
    if let Some(d) = &f.case_dir {
        t.push_str(&format!(
            "damaged repository: {d}/repo; git alone: {d}/{REPRODUCE} (GIT=/path/to/git)\n"
        ));
    }
    t
}
