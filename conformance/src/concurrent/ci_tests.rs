//! A concurrent run as one CI test: it fails on a finding no known git defect explains,
//! with the findings, the smallest configuration that still showed the first one, and the
//! finding directory's `rerun.sh`.

use crate::ci_output::result::{TestResult, Verdict};
use crate::concurrent::report::ConcurrentReport;
use crate::finding::dir::RERUN;

/// The CI test of the concurrent run `r`, in the group `suite`.
pub fn ci_test(r: &ConcurrentReport, suite: &str) -> TestResult {
    let imp = match r.writers[2] {
        0 => String::new(),
        n => format!(" + {n} implementation"),
    };
    let name = format!(
        "concurrent seed {}: {} git + {} our{imp} writers x {} transactions",
        r.seed, r.writers[0], r.writers[1], r.txns_per_writer
    );
    let known: Vec<&str> = r
        .findings
        .iter()
        .filter_map(|f| f.expected.as_deref())
        .collect();
    let verdict = if r.unexpected() > 0 {
        Verdict::Fail
    } else if !known.is_empty() {
        Verdict::Known(format!("known git defect {}", known.join(", ")))
    } else {
        Verdict::Pass
    };
    let mut text = String::new();
    for f in &r.findings {
        let what = f
            .expected
            .as_ref()
            .map_or("finding".to_string(), |id| format!("known git defect {id}"));
        text.push_str(&format!("{what}: {}: {}\n", f.class, f.detail));
    }
    if let Some(m) = &r.minimized {
        text.push_str(&format!(
            "smallest configuration that still shows it: {m}\n"
        ));
    }
    if let Some(d) = &r.finding_dir {
        text.push_str(&format!("rerun: {d}/{RERUN}\n"));
    }
    if verdict == Verdict::Pass {
        text = r.line();
    }
    TestResult::new(suite, &name, verdict, text).timed(r.seconds)
}
