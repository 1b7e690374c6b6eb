//! Concurrent mode: several writer processes on one reftable repository at once — git
//! (`update-ref --stdin` transactions, `pack-refs`, `pack-refs --auto`, `reflog expire`)
//! and our `RefDb`, each in a process of its own (the `conformance` binary re-run as a
//! hidden `concurrent-worker`) — doing generated transactions on refs of their own and on
//! shared refs (compare-and-swap with the old value read just before), while a reader
//! samples the stack through git and through us.
//!
//! Afterwards (`check.rs`): every acknowledged transaction is in the stack under one update
//! index of its own and within the window it ran in; replaying the acknowledged
//! transactions in update-index order on the model accepts each one and ends in the state
//! git and we read; each refusal has a cause (a held lock, or a fault the model sees at some
//! moment while it ran) and left no trace; every sample equals the state after some prefix
//! of that order, never an older one than the sample before; no lock or temporary file is
//! left; git reads the final stack, and its reflogs, as we do.
//!
//! A finding is re-run with fewer transactions and writers while it reproduces
//! (`minimize.rs`), and written (`finding_dir.rs`) with the interleaving (who committed what
//! under which update index), each writer's outcomes, the final stack and a command that
//! runs the same configuration again.
//!
//! The files, from the bottom up: `spec.rs` (what the coordinator, the writers and the
//! checks share), `worker.rs` (one writer process), `finding.rs`, `fingerprint.rs`,
//! `evidence.rs` and `check.rs` (the checks), `config.rs` and `report.rs`, `coordinator.rs` (one
//! run), `minimize.rs`, `attribution.rs` (to known git defects) and `finding_dir.rs`,
//! `ci_tests.rs` (a run as a CI test result); this file holds the mode's two entry points.

mod attribution;
mod check;
mod ci_tests;
pub mod cli;
mod config;
mod coordinator;
mod evidence;
mod finding;
mod finding_dir;
mod fingerprint;
mod forced;
mod impl_writer;
mod minimize;
mod report;
mod spec;
mod worker;

use std::path::Path;

pub use ci_tests::ci_test;
pub use config::ConcurrentConfig;
pub use report::ConcurrentReport;

use crate::concurrent::attribution::attribute;
use crate::concurrent::coordinator::run_once;
use crate::concurrent::finding_dir::write_finding;
use crate::concurrent::minimize::minimize;
use crate::concurrent::spec::WorkerSpec;
use crate::defects::registry::ExpectedSet;
use crate::setup::env::Env;

/// The class of unexplained findings a minimization keeps: the most frequent one (the one a
/// smaller run most likely shows again; a consequence seen once, such as a writer that
/// failed on a table the defect dropped, rarely comes back), the first seen among equals.
fn class_to_minimize(findings: &[crate::finding::divergence::Finding]) -> Option<String> {
    let open: Vec<&str> = findings
        .iter()
        .filter(|f| f.expected.is_none())
        .map(|f| f.class.as_str())
        .collect();
    let count = |c: &str| open.iter().filter(|x| **x == c).count();
    let best = open.iter().copied().max_by_key(|c| count(c))?;
    // max_by_key keeps the last of equals: take the first seen with that count.
    let n = count(best);
    open.iter().find(|c| count(c) == n).map(|c| c.to_string())
}

/// Run `cfg` against the git of `env`; a finding no known git defect explains is minimized
/// (when asked) and written.
pub fn run_concurrent(
    env: &Env,
    known: &ExpectedSet,
    cfg: &ConcurrentConfig,
) -> Result<ConcurrentReport, String> {
    let mut report = random_round(env, known, cfg)?;
    let mut forced = forced::run_forced(env);
    attribute(env, known, &mut forced.findings);
    report.findings.extend(forced.findings);
    report.forced = forced.forced.iter().map(|s| s.to_string()).collect();
    report.not_forced = forced.not_forced;
    Ok(report)
}

/// The random round of [`run_concurrent`], its finding minimized and written (the
/// implementation roles' concurrent round too: forced orders are git's and ours alone).
pub fn random_round(
    env: &Env,
    known: &ExpectedSet,
    cfg: &ConcurrentConfig,
) -> Result<ConcurrentReport, String> {
    let mut first = run_once(env, cfg)?;
    attribute(env, known, &mut first.report.findings);
    let mut report = first.report.clone();
    let Some(class) = class_to_minimize(&report.findings) else {
        return Ok(report);
    };
    let (small, small_run) = if cfg.minimize {
        minimize(env, cfg, &class)
    } else {
        (cfg.clone(), None)
    };
    let mut small_run = small_run;
    if let Some(r) = small_run.as_mut() {
        attribute(env, known, &mut r.report.findings);
    }
    report.minimized = Some(small.command_line(env.git.bin()));
    if let Some(base) = &cfg.out {
        let run = small_run.as_ref().unwrap_or(&first);
        let dir = write_finding(env, base, &small, run)?;
        report.finding_dir = Some(dir.display().to_string());
    }
    Ok(report)
}

/// The hidden `concurrent-worker SPEC` command: run one writer.
pub fn worker_main(spec_path: &Path) -> i32 {
    let spec: WorkerSpec = match std::fs::read_to_string(spec_path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("concurrent-worker: {}: {e}", spec_path.display());
            return 2;
        }
    };
    match worker::work(&spec) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("concurrent-worker {}: {e}", spec.id);
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::divergence::Finding;

    fn f(class: &str, known: bool) -> Finding {
        Finding {
            class: class.into(),
            detail: String::new(),
            expected: known.then(|| "some-defect".into()),
        }
    }

    #[test]
    fn the_most_frequent_unexplained_class_is_minimized() {
        let findings = [
            f("writer failed", false),
            f("lost update", false),
            f("lost update", false),
            f("torn read", true),
            f("torn read", true),
            f("torn read", true),
        ];
        assert_eq!(class_to_minimize(&findings).as_deref(), Some("lost update"));
        let tie = [f("writer failed", false), f("lost update", false)];
        assert_eq!(class_to_minimize(&tie).as_deref(), Some("writer failed"));
        assert_eq!(class_to_minimize(&[f("torn read", true)]), None);
    }
}
