//! The command line of the faults and power-loss modes (`conformance faults`,
//! `conformance powerloss`; the hidden `fault-worker` our side runs in): options into a
//! [`FaultsConfig`], reports written, a summary printed, test results for CI.

use std::path::PathBuf;

use conformance::budget::Budget;
use conformance::ci_output::sink::CiTargets;
use conformance::defects::registry::{self, ExpectedSet};
use conformance::faults::report::FaultsReport;
use conformance::faults::trial::Side;
use conformance::faults::{run_faults, FaultsConfig};
use conformance::setup::env::Env;

/// `conformance faults`'s options.
#[derive(clap::Args, Clone)]
pub struct FaultsArgs {
    /// Seed of the generated cases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cases [default: 3, or no limit with --seconds].
    #[arg(long)]
    cases: Option<u64>,
    /// A time budget: no trial starts after it; the report says how many cases ran.
    #[arg(long)]
    seconds: Option<u64>,
    /// Stop after the first case with a defect that fails the run.
    #[arg(long)]
    fail_fast: bool,
    /// Operations per generated case.
    #[arg(long, default_value_t = 20)]
    ops: usize,
    /// Where findings are written (the repository, its input and a git-only reproduce.sh
    /// with the strace injection; the first of each kind not in the registry).
    #[arg(long, default_value = "target/conformance/faults")]
    out: PathBuf,
    /// Operations of each case run under faults.
    #[arg(long, default_value_t = 4)]
    ops_per_case: usize,
    /// Fault points tried per side and operation at most (spread over all found).
    #[arg(long, default_value_t = 400)]
    max_points: usize,
    /// Our stack without fsync (as the generated mode runs it).
    #[arg(long)]
    no_fsync: bool,
    /// The git binary (default: REFTABLE_TEST_GIT, else git on PATH).
    #[arg(long)]
    pub git: Option<PathBuf>,
    /// The known git defects (default: REFTABLE_EXPECTED_DIVERGENCES, else
    /// conformance/expected-divergences.json).
    #[arg(long)]
    expected: Option<PathBuf>,
    /// Write the JSON report here.
    #[arg(long)]
    report_json: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    report_md: Option<PathBuf>,
    #[command(flatten)]
    pub ci: crate::ci_args::CiArgs,
}

/// `conformance faults`: the run, its reports, its lines and test results; the exit status.
pub fn faults(a: FaultsArgs, env: Env) -> i32 {
    let out = a.ci.targets();
    let known_path = a.expected.clone().unwrap_or_else(registry::default_path);
    let known = ExpectedSet::load(&known_path).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    let exe = std::env::current_exe().unwrap_or_else(|e| {
        eprintln!("conformance: cannot find my own binary for the fault worker: {e}");
        std::process::exit(2);
    });
    let budget = Budget::new(a.seconds, false);
    let mut cfg = FaultsConfig::new(a.seed, exe);
    cfg.cases = a.cases.or(if a.seconds.is_some() { None } else { Some(3) });
    cfg.case_ops = a.ops;
    cfg.ops_per_case = a.ops_per_case;
    cfg.max_points = a.max_points;
    cfg.fsync = !a.no_fsync;
    cfg.deadline = budget.until(1.0);
    cfg.fail_fast = a.fail_fast;
    cfg.out = Some(a.out.clone());
    let r = run_faults(&env, &known, &cfg).unwrap_or_else(|e| {
        eprintln!("conformance: faults: {e}");
        std::process::exit(2);
    });
    if let Some(p) = &a.report_json {
        let _ = std::fs::write(p, serde_json::to_string_pretty(&r).expect("json"));
    }
    if let Some(p) = &a.report_md {
        let _ = std::fs::write(p, r.markdown());
    }
    say(&r, &out);
    let tests = conformance::faults::ci_tests::ci_tests(&r);
    crate::ci_args::write_ci(&out, "reftable-rs conformance faults", &tests);
    i32::from(!r.clean())
}

/// The summary: counts per class on each side, then each defect not known.
fn say(r: &FaultsReport, out: &CiTargets) {
    for line in r.unexpected() {
        out.say(&line);
    }
    let counts = |side| {
        r.tally(side)
            .iter()
            .map(|(c, n)| format!("{} {n}", c.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.say(&format!(
        "faults on git {}: {} cases, {} operations, {:.0} s{}\n  git: {} points, {} trials: {}\n  ours: {} points, {} trials: {}",
        r.version,
        r.cases,
        r.ops.len(),
        r.seconds,
        r.stop.as_ref().map_or(String::new(), |s| format!(" ({s})")),
        r.points(Side::Git),
        r.trials(Side::Git).count(),
        counts(Side::Git),
        r.points(Side::Ours),
        r.trials(Side::Ours).count(),
        counts(Side::Ours),
    ));
}

/// `conformance powerloss`'s options.
#[derive(clap::Args, Clone)]
pub struct PowerlossArgs {
    /// Seed of the generated cases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cases [default: 2, or no limit with --seconds].
    #[arg(long)]
    cases: Option<u64>,
    /// A time budget: no case starts after it.
    #[arg(long)]
    seconds: Option<u64>,
    /// Operations per generated case.
    #[arg(long, default_value_t = 20)]
    ops: usize,
    /// Operations of each case recorded and crashed.
    #[arg(long, default_value_t = 3)]
    ops_per_case: usize,
    /// The git binary (default: REFTABLE_TEST_GIT, else git on PATH).
    #[arg(long)]
    pub git: Option<PathBuf>,
    /// Write the JSON report here.
    #[arg(long)]
    report_json: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    report_md: Option<PathBuf>,
    #[command(flatten)]
    pub ci: crate::ci_args::CiArgs,
}

/// `conformance powerloss`: the run, its reports, its table and test results; the exit
/// status.
pub fn powerloss(a: PowerlossArgs, env: Env) -> i32 {
    let out = a.ci.targets();
    let exe = std::env::current_exe().unwrap_or_else(|e| {
        eprintln!("conformance: cannot find my own binary for the fault worker: {e}");
        std::process::exit(2);
    });
    let budget = Budget::new(a.seconds, false);
    let mut cfg = FaultsConfig::new(a.seed, exe);
    cfg.cases = a.cases.or(if a.seconds.is_some() { None } else { Some(2) });
    cfg.case_ops = a.ops;
    cfg.ops_per_case = a.ops_per_case;
    cfg.deadline = budget.until(1.0);
    let known = ExpectedSet::load(&registry::default_path()).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    let r = conformance::powerloss::run_powerloss(&env, &known, &cfg).unwrap_or_else(|e| {
        eprintln!("conformance: powerloss: {e}");
        std::process::exit(2);
    });
    if let Some(p) = &a.report_json {
        let _ = std::fs::write(p, serde_json::to_string_pretty(&r).expect("json"));
    }
    let md = r.markdown();
    if let Some(p) = &a.report_md {
        let _ = std::fs::write(p, &md);
    }
    out.say(md.trim_end());
    let tests = conformance::powerloss::ci_tests::ci_tests(&r);
    crate::ci_args::write_ci(&out, "reftable-rs conformance powerloss", &tests);
    i32::from(!r.clean())
}
