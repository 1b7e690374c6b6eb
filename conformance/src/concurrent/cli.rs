//! The concurrent mode's command line (`conformance concurrent`, also `conformance run
//! --concurrent`) and the round the default run ends with: the writers' options, rounds on
//! every git, their lines, the report.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::budget::Budget;
use crate::ci_output::result::TestResult;
use crate::ci_output::sink::CiTargets;
use crate::concurrent::{ci_test, run_concurrent, ConcurrentConfig, ConcurrentReport};
use crate::defects::registry::ExpectedSet;
use crate::mode::plant::plant_from_env;
use crate::mode::report::{pretty, ModeReport};
use crate::setup::env::Env;

/// What a time budget keeps, at its end, for a concurrent round's findings and the reports.
pub const ROUND_MARGIN: Duration = Duration::from_secs(1);

/// The writers of a concurrent round.
#[derive(clap::Args, Clone, Debug)]
pub struct WriterArgs {
    /// Transactions per writer in the concurrent mode (default: 500 in `conformance
    /// concurrent` and `run --concurrent`, 100 in the default run's round).
    #[arg(long)]
    pub concurrent_txns: Option<u32>,
    /// git writer processes in the concurrent mode.
    #[arg(long, default_value_t = 2)]
    pub git_writers: u32,
    /// Our writer processes in the concurrent mode.
    #[arg(long, default_value_t = 2)]
    pub our_writers: u32,
    /// Another implementation's writers beside git's and ours: ours, dulwich[=VERSION|PATH],
    /// libgit2=ADAPTER, cmd=COMMAND (as `conformance impl --impl`).
    #[arg(long = "impl")]
    pub implementation: Option<String>,
    /// Writer processes of the implementation `--impl` names.
    #[arg(long, default_value_t = 2)]
    pub impl_writers: u32,
    /// Shared refs (besides main) the concurrent writers compare-and-swap.
    #[arg(long, default_value_t = 4)]
    pub shared_refs: u32,
    /// Maintenance (pack-refs, pack-refs --auto, reflog expire) after every this many
    /// transactions of each concurrent writer (0: none).
    #[arg(long, default_value_t = 25)]
    pub maintenance_every: u32,
}

/// One round's settings besides the writers: seed and transactions, where findings go,
/// whether they are minimized, when minimizing stops.
pub struct Round<'a> {
    /// Seed and transactions per writer.
    pub seed_txns: (u64, u32),
    /// Where a finding is written.
    pub out: &'a Path,
    /// Whether a finding is minimized.
    pub minimize: bool,
    /// Minimizing starts no run after this.
    pub deadline: Option<Instant>,
}

/// The concurrent round on every git; whether all were clean, and their reports. Lines go
/// to `say`.
pub fn rounds(
    w: &WriterArgs,
    envs: &[Env],
    known: &ExpectedSet,
    round: &Round<'_>,
    say: &CiTargets,
) -> Result<(bool, Vec<ConcurrentReport>), String> {
    plant_from_env()?;
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find my own binary for the concurrent writers: {e}"))?;
    let mut clean = true;
    let mut reports = Vec::new();
    for e in envs {
        let mut cfg = ConcurrentConfig::new(round.seed_txns.0, round.seed_txns.1, exe.clone());
        cfg.git_writers = w.git_writers;
        cfg.our_writers = w.our_writers;
        if let Some(name) = &w.implementation {
            let (_, argv) =
                crate::impls::which::adapter_command(name, &crate::impls::which::workspace())?;
            cfg.adapter = Some((argv, name.clone()));
            cfg.impl_writers = w.impl_writers;
        }
        cfg.shared = w.shared_refs;
        cfg.maintenance_every = w.maintenance_every;
        cfg.minimize = round.minimize;
        cfg.out = Some(round.out.to_path_buf());
        cfg.deadline = round.deadline;
        // REFTABLE_PLANT (test-hooks builds) goes to our writer processes only.
        cfg.plant = std::env::var("REFTABLE_PLANT").ok();
        let r = run_concurrent(e, known, &cfg)
            .map_err(|err| format!("concurrent mode on git {}: {err}", e.git.version()))?;
        say_round(&r, say);
        clean &= r.unexpected() == 0;
        reports.push(r);
    }
    Ok((clean, reports))
}

/// A round's findings, where they went, and its line.
fn say_round(r: &ConcurrentReport, out: &CiTargets) {
    for f in &r.findings {
        let known = f
            .expected
            .as_ref()
            .map_or(String::new(), |id| format!(" (known git defect {id})"));
        out.say(&format!(
            "concurrent finding on git {}{known}: {}: {}",
            r.version, f.class, f.detail
        ));
    }
    if let Some(m) = &r.minimized {
        out.say(&format!("  minimized: {m}"));
    }
    if let Some(d) = &r.finding_dir {
        out.say(&format!("  written to {d}"));
    }
    for why in &r.not_forced {
        out.say(&format!("  not forced on git {}: {why}", r.version));
    }
    out.say(&r.line());
}

/// The concurrent mode alone: its rounds' reports and how the budget ended them.
pub struct ConcurrentRun {
    /// Every round's report, per git.
    pub reports: Vec<ConcurrentReport>,
    /// Whether every round was clean.
    pub clean: bool,
    /// With a time budget, the line saying how many rounds ran and why they stopped.
    pub budget_line: Option<String>,
}

/// The concurrent mode alone on every git. With a time budget, rounds of seeds `seed`,
/// `seed + 1`, ... while the next one (taken to last as long as the one before) fits in it.
pub fn concurrent_only(
    w: &WriterArgs,
    envs: &[Env],
    known: &ExpectedSet,
    (seed, out, minimize): (u64, &Path, bool),
    budget: &Budget,
    say: &CiTargets,
) -> Result<ConcurrentRun, String> {
    let txns = w.concurrent_txns.unwrap_or(500);
    let mut run = ConcurrentRun {
        reports: Vec::new(),
        clean: true,
        budget_line: None,
    };
    for seed in seed.. {
        let t = Instant::now();
        let round = Round {
            seed_txns: (seed, txns),
            out,
            minimize,
            deadline: budget.end_less(ROUND_MARGIN),
        };
        let (ok, rs) = rounds(w, envs, known, &round, say)?;
        run.clean &= ok;
        run.reports.extend(rs);
        if !ok {
            budget.failed();
        }
        if !budget.is_timed() || !budget.may_start(budget.end_less(t.elapsed() + ROUND_MARGIN)) {
            break;
        }
    }
    if budget.is_timed() {
        let why = budget.stop_line().unwrap_or_default();
        run.budget_line = Some(format!("{} concurrent runs; {why}", run.reports.len()));
    }
    Ok(run)
}

impl ModeReport for ConcurrentRun {
    fn suite(&self) -> String {
        "reftable-rs conformance run --concurrent".into()
    }

    fn json(&self) -> String {
        pretty(&self.reports)
    }

    fn markdown(&self) -> String {
        self.reports
            .iter()
            .map(ConcurrentReport::markdown)
            .collect()
    }

    fn known_defects(&self) -> Vec<&str> {
        self.reports
            .iter()
            .flat_map(|r| r.known_defects())
            .collect()
    }

    fn lines(&self) -> Vec<String> {
        self.budget_line.iter().cloned().collect()
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        let suite = |r: &ConcurrentReport| format!("concurrent, git {}", r.version);
        self.reports.iter().map(|r| ci_test(r, &suite(r))).collect()
    }

    fn failed(&self) -> bool {
        !self.clean
    }
}

/// `conformance concurrent`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct ConcurrentArgs {
    /// Seed of the first round.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A time budget: rounds of seeds SEED, SEED+1, ... while the next one fits.
    #[arg(long)]
    pub seconds: Option<u64>,
    /// Stop after the first round with an unexpected finding.
    #[arg(long)]
    pub fail_fast: bool,
    /// Where findings are written.
    #[arg(long, default_value = "target/conformance/cases")]
    pub out: PathBuf,
    /// Do not minimize findings.
    #[arg(long)]
    pub no_minimize: bool,
    #[command(flatten)]
    pub writers: WriterArgs,
    #[command(flatten)]
    pub common: crate::mode::args::Common,
}

/// `conformance concurrent`: the exit status, or why the run could not be made.
pub fn main(a: &ConcurrentArgs) -> Result<i32, String> {
    let (known, env) = a.common.open()?;
    let budget = Budget::new(a.seconds, a.fail_fast);
    let say = a.common.outputs.ci.targets();
    let envs = [env];
    let shape = (a.seed, a.out.as_path(), !a.no_minimize);
    let run = concurrent_only(&a.writers, &envs, &known, shape, &budget, &say)?;
    crate::mode::report::finish(&run, &a.common.outputs, &known)
}
