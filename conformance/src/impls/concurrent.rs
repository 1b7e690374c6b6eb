//! The concurrent role: one round of the concurrent mode per run, in which the
//! implementation's writer processes (through its adapter) run beside git's on one
//! repository, with the concurrent mode's accounting ([`crate::concurrent`]). Its findings
//! become the role's cells and findings: each class of the accounting is one check's.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::concurrent::{random_round, ConcurrentConfig};
use crate::defects::registry::ExpectedSet;
use crate::impls::check::{ImplCheck, Role};
use crate::impls::tally::{ImplFinding, Tally};
use crate::impls::wire::Hello;
use crate::setup::env::Env;

/// What the round runs: the adapter (its command line and `--impl` name), seed,
/// transactions per writer, where a finding is written, how long it may be minimized.
pub struct RoundSpec<'a> {
    /// The adapter's command line.
    pub argv: &'a [String],
    /// Its `--impl` name (for the command that runs the round again).
    pub name: &'a str,
    /// Seed.
    pub seed: u64,
    /// Transactions per writer.
    pub txns: u32,
    /// Where a finding's directory goes.
    pub out: &'a Path,
    /// Time to spend minimizing a finding (zero: none).
    pub minimize: Duration,
}

/// The checks of the role, each with the accounting's finding classes it stands for.
const CLASSES: [(ImplCheck, &[&str]); 5] = [
    (
        ImplCheck::Acknowledged,
        &[
            "lost update",
            "committed outside its window",
            "transaction split",
            "update index shared",
            "wrong update index",
            "phantom entry",
            "not serializable",
        ],
    ),
    (
        ImplCheck::Refusals,
        &[
            "refusal without cause",
            "refused transaction left a trace",
            "unclassified refusal",
        ],
    ),
    (
        ImplCheck::Samples,
        &["stale read", "torn read", "reader failed"],
    ),
    (
        ImplCheck::FinalStack,
        &[
            "final state differs",
            "reflog mismatch",
            "lock left behind",
            "stray file left behind",
            "git refs verify fails",
            "final stack unreadable",
        ],
    ),
    (ImplCheck::Answers, &[]),
];

/// The check a finding class of the accounting belongs to (crashes, hangs and failed
/// writers: the adapter's answers).
fn check_of(class: &str) -> ImplCheck {
    (CLASSES.iter())
        .find(|(_, classes)| classes.contains(&class))
        .map_or(ImplCheck::Answers, |(c, _)| *c)
}

/// Run the round: 2 git writers and 2 of the implementation's. An implementation that
/// writes no reflogs is not tried: the accounting places each transaction by its entry in
/// the writer's journal reflog.
pub fn concurrent_round(env: &Env, known: &ExpectedSet, hello: &Hello, r: &RoundSpec<'_>) -> Tally {
    let mut t = Tally::default();
    if !hello.claims("reflogs_written") {
        let why = "it writes no reflogs: the accounting places each transaction by its journal reflog entry";
        for (check, _) in CLASSES {
            t.not_tried(Role::Concurrent, check, why);
        }
        return t;
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            t.not_tried(Role::Concurrent, ImplCheck::Answers, &e.to_string());
            return t;
        }
    };
    let mut cfg = ConcurrentConfig::new(r.seed, r.txns, exe);
    (cfg.our_writers, cfg.impl_writers) = (0, 2);
    cfg.adapter = Some((r.argv.to_vec(), r.name.to_string()));
    cfg.out = Some(r.out.to_path_buf());
    cfg.minimize = !r.minimize.is_zero();
    cfg.deadline = Some(Instant::now() + r.minimize);
    let report = match random_round(env, known, &cfg) {
        Ok(report) => report,
        Err(e) => {
            let f = finding(
                ImplCheck::Answers,
                format!("the round did not run: {e}"),
                r.seed,
            );
            t.count(Role::Concurrent, ImplCheck::Answers, false);
            t.findings.push(f);
            return t;
        }
    };
    let rerun = (report.finding_dir.as_ref()).map_or(String::new(), |d| {
        format!(
            " (written to {d}; smallest: {})",
            report.minimized.as_deref().unwrap_or("-")
        )
    });
    for (check, _) in CLASSES {
        let mine: Vec<_> = (report.findings.iter())
            .filter(|f| check_of(&f.class) == check)
            .collect();
        t.count(Role::Concurrent, check, mine.is_empty());
        for f in mine {
            let mut found = finding(check, format!("{}: {}{rerun}", f.class, f.detail), r.seed);
            found.known = f.expected.clone();
            t.findings.push(found);
        }
    }
    t
}

/// A finding of the round (no case: the round has no operations to replay; its directory
/// holds the command that runs it again).
fn finding(check: ImplCheck, detail: String, seed: u64) -> ImplFinding {
    ImplFinding {
        role: Role::Concurrent,
        check,
        case: format!("concurrent-seed{seed}"),
        index: 0,
        step: 0,
        detail,
        ops: Vec::new(),
        known: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_has_its_check() {
        assert_eq!(check_of("lost update"), ImplCheck::Acknowledged);
        assert_eq!(check_of("unclassified refusal"), ImplCheck::Refusals);
        assert_eq!(check_of("torn read"), ImplCheck::Samples);
        assert_eq!(check_of("lock left behind"), ImplCheck::FinalStack);
        assert_eq!(check_of("implementation crashed"), ImplCheck::Answers);
    }
}
