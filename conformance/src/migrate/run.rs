//! The migration mode's run: the gate's cases of a seed, one after the other, each migrated
//! by git and by us (`CaseRun`) in a scratch directory, until the list ends, a time budget
//! is used or (with fail-fast) a case diverges unexpectedly.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::budget::Budget;
use crate::cases::case::run_generated;
use crate::defects::registry::{default_path, ExpectedSet};
use crate::migrate::case::CaseRun;
use crate::migrate::config::MigrateConfig;
use crate::migrate::finding_dir::write_case_dir;
use crate::migrate::report::{MigrationCase, MigrationReport};
use crate::ops::Op;
use crate::setup::env::Env;

/// Run the mode over `cases` cases of `seed` against the git of `env`; differences are
/// matched against the migrate entries of the registry at [`default_path`].
pub fn run_migrate(
    env: &Env,
    seed: u64,
    cases: u64,
    ops: usize,
) -> Result<MigrationReport, String> {
    let cfg = MigrateConfig {
        seed,
        cases,
        ops,
        ..Default::default()
    };
    let known = ExpectedSet::load(&default_path())?;
    run_migrate_within(env, &known, &cfg, &Budget::unlimited())
}

/// What a time budget keeps at its end besides the longest case so far.
const MARGIN: Duration = Duration::from_secs(1);

/// [`run_migrate`] with `cfg` and the registry `known`, within `budget`: a case starts only
/// when one as long as the longest so far still ends within the budget.
pub fn run_migrate_within(
    env: &Env,
    known: &ExpectedSet,
    cfg: &MigrateConfig,
    budget: &Budget,
) -> Result<MigrationReport, String> {
    let start = Instant::now();
    let version = env.profile.git_version();
    let mut report = MigrationReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        with_reflogs: env.profile.features.migrate_reflogs,
        ..Default::default()
    };
    if !env.profile.features.refs_migrate {
        return Err(format!(
            "git {} has no `git refs migrate` (2.46+)",
            env.git.version()
        ));
    }
    let scratch = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    // REFTABLE_MIGRATE_KEEP=DIR keeps every case's repositories there, for a look.
    let keep = std::env::var_os("REFTABLE_MIGRATE_KEEP").map(PathBuf::from);
    let scratch_path = keep.clone().unwrap_or_else(|| scratch.path().to_path_buf());
    let indices = cfg.only.map_or(0..cfg.cases, |i| i..i.saturating_add(1));
    let mut longest = Duration::ZERO;
    for index in indices {
        if !budget.may_start(budget.end_less(longest + MARGIN)) {
            break;
        }
        let t = Instant::now();
        let case = format!("seed{}-case{index}", cfg.seed);
        let result = run_generated(env, cfg.seed, index, cfg.ops)?;
        let opts = result.options.ok_or("a case without options")?;
        report.cases += 1;
        let first = report.divergences.len();
        let run = CaseRun::new(env, known, &version, case.clone(), &scratch_path);
        let went_through = run.migrate(opts, &result.ops, &mut report)?;
        let unexpected = report.divergences[first..]
            .iter()
            .any(|d| d.finding.expected.is_none());
        let mut dir = None;
        if unexpected {
            budget.failed();
            if let Some(out) = &cfg.out {
                dir = write_case_dir(env, cfg, index, out, &run.dir, &report.divergences[first..]);
            }
        }
        if went_through && keep.is_none() {
            let _ = std::fs::remove_dir_all(&run.dir);
        }
        longest = longest.max(t.elapsed());
        report.case_runs.push(MigrationCase {
            case,
            index,
            seconds: t.elapsed().as_secs_f64(),
            operations: result.ops.iter().map(Op::summary).collect(),
            dir,
        });
    }
    report.stopped = budget.stop_line();
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}
