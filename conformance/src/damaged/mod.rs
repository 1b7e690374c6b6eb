//! The damaged-stack mode: stacks the gate wrote (git's side of generated cases), damaged by
//! [`damage`] and handed to git's readers and writers and to ours.
//!
//! What is recorded for git, per command: a crash (signal), a hang, a load error hidden
//! behind exit 0 and empty output, a file touched outside the repository, data printed from
//! a stack we reject. For us the same list (panics instead of signals) must stay empty, plus
//! two ways of answering wrongly in silence: we return data other than the undamaged stack's
//! where git either rejects the stack or still returns the undamaged answer. git's crashes
//! are told apart by signal and the first frames of a backtrace (`gdb -batch` when it is
//! installed), each distinct one minimized (edit by edit, table by table) and written as a
//! directory with the damaged repository and a git-only `reproduce.sh`.
//!
//! The files, bottom up: [`class`] (a finding's side and class), [`config`] (what to run), [`damage`] (edits as data) and [`sites`]
//! (where to damage), [`report`] (findings and the report), `outside` (the victim
//! directory watched), `base` (an undamaged starting point), `trial` (a damaged copy),
//! `sides` (git's and our commands on it), `observe` (what went wrong), `signature` (what
//! tells findings apart), `minimize`, `tally` (findings gathered), `base_build` (bases from
//! the gate's cases; [`damaged_copy`], one damaged copy for `conformance impl`), `worker` (trials taken in turn), `finding_dir` (findings written out),
//! [`ci_tests`] (the report as CI test results).

mod base;
mod base_build;
pub mod ci_tests;
pub mod class;
pub mod cli;
pub mod config;
pub mod damage;
mod finding_dir;
mod minimize;
mod observe;
mod outside;
pub mod report;
mod sides;
mod signature;
pub mod sites;
mod stale;
mod tally;
mod trial;
mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::defects::registry::ExpectedSet;
use crate::git::version::GitVersion;
use crate::setup::env::Env;

pub use base_build::damaged_copy;
pub use config::DamageConfig;
pub use report::{DamageReport, Finding};

use base_build::make_bases;
use finding_dir::write_findings;
use tally::Tally;
use worker::Workers;

/// Run the damaged-stack mode against the git of `env`.
/// Findings are matched against the `damaged` entries of `known`, whose reproducers are
/// replayed to tell stale entries.
pub fn run_damaged(
    env: &Env,
    known: &ExpectedSet,
    cfg: &DamageConfig,
) -> Result<DamageReport, String> {
    let start = Instant::now();
    let work = tempfile::Builder::new()
        .prefix("reftable-damaged-")
        .tempdir_in(crate::setup::env::scratch_base())
        .map_err(|e| e.to_string())?;
    let bases = make_bases(env, cfg, work.path())?;
    let workers = Workers {
        env,
        cfg,
        bases: &bases,
        work: work.path(),
        commands: AtomicU64::new(0),
        found: Mutex::new(Tally::default()),
        failed: AtomicBool::new(false),
    };
    let trials = workers.work(start);
    let Tally { findings, outcomes } = workers.found.into_inner().expect("lock");
    let mut report = DamageReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        seed: cfg.seed,
        bases: bases.len() as u64,
        trials,
        commands: workers.commands.load(Ordering::SeqCst),
        git_outcomes: outcomes,
        ..Default::default()
    };
    // (A run cut by its time budget says so by its count of trials, as it always has.)
    if workers.failed.load(Ordering::SeqCst) {
        report.stopped = Some("stopped at the first finding on our side (--fail-fast)".into());
    }
    let _ = std::fs::create_dir_all(&cfg.out);
    write_findings(env, cfg, &bases, findings, work.path(), &mut report);
    label_known(&mut report, known);
    report.stale_known = stale::stale(known, env);
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// Name the known git defect each of git's findings matches (the registry's `damaged`
/// entries in range of the git, by `class command`).
fn label_known(report: &mut DamageReport, known: &ExpectedSet) {
    let Some(v) = GitVersion::parse(&report.version) else {
        return;
    };
    for f in &mut report.git_findings {
        let hit = f
            .commands
            .iter()
            .find_map(|c| known.matching_damaged(&v, f.class.name(), c, &f.signature));
        f.known = hit.map(|e| e.id.clone());
    }
}
