//! The run mode's command line: `conformance run` (cases × gits, then the concurrent round;
//! `--concurrent` the concurrent mode alone), `conformance replay DIR` and `conformance
//! minimize DIR`.

use std::path::PathBuf;

use crate::budget::{Budget, Stop};
use crate::cases::case::{not_applicable, replay_concrete};
use crate::cases::casedir::CaseFile;
use crate::ci_output::result::TestResult;
use crate::concurrent::cli::{concurrent_only, rounds, Round, WriterArgs, ROUND_MARGIN};
use crate::concurrent::ConcurrentReport;
use crate::defects::registry::ExpectedSet;
use crate::mode::args::{default_jobs, env, load_registry, parse_shard, Outputs};
use crate::mode::report::{finish, pretty, ModeReport};
use crate::run::report::Report;
use crate::run::runner::{minimize_dir, run_within, RunConfig};
use crate::setup::env::Env;

/// `conformance run`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct RunArgs {
    /// Number of cases (per git) [default: 120, or no limit with --seconds].
    #[arg(long)]
    pub cases: Option<u64>,
    /// A time budget: cases are taken in order until it is used (the same seed gives the
    /// same cases; the budget only cuts the list), minimizing stops at its end; the report
    /// says how many cases ran. With it the concurrent round runs first. With --concurrent:
    /// rounds of seeds SEED, SEED+1, ... while the next one fits.
    #[arg(long)]
    pub seconds: Option<u64>,
    /// Stop at the first unexpected divergence (cases already running finish).
    #[arg(long)]
    pub fail_fast: bool,
    /// Operations per case.
    #[arg(long, default_value_t = 30)]
    pub ops: usize,
    /// Seed of the run (cases are derived from seed and index).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Parallel jobs (default: one more than the cores, as the gate waits on git a lot).
    #[arg(long, default_value_t = default_jobs())]
    pub jobs: usize,
    /// Run only shard K of N (1-based), e.g. 2/4.
    #[arg(long)]
    pub shard: Option<String>,
    /// A git binary to test; give it several times to run every case on each (default:
    /// REFTABLE_TEST_GIT, else git on PATH).
    #[arg(long)]
    pub git: Vec<PathBuf>,
    /// The known git defects (default: REFTABLE_EXPECTED_DIVERGENCES, else
    /// conformance/expected-divergences.json).
    #[arg(long)]
    pub expected: Option<PathBuf>,
    #[command(flatten)]
    pub outputs: Outputs,
    /// Where divergent cases are written.
    #[arg(long, default_value = "target/conformance/cases")]
    pub out: PathBuf,
    /// Do not minimize divergent cases.
    #[arg(long)]
    pub no_minimize: bool,
    /// Run only the concurrent mode (git and our writer processes on one repository at
    /// once, with compaction from both), at --concurrent-txns per writer; the same as
    /// `conformance concurrent`.
    #[arg(long)]
    pub concurrent: bool,
    /// Leave out the small concurrent round the default run ends with.
    #[arg(long, conflicts_with = "concurrent")]
    pub no_concurrent: bool,
    /// Fail (exit 1) when a variant of an operation that the git has was never drawn (see
    /// the report's variant table): the check that the generator still reaches them all.
    #[arg(long)]
    pub require_variants: bool,
    #[command(flatten)]
    pub writers: WriterArgs,
}

/// A run's report and whether its concurrent round was clean.
pub struct RunOutcome {
    /// The cases' report, each git's round in its section.
    pub report: Report,
    /// Whether the concurrent round (if one ran) was clean.
    pub concurrent_clean: bool,
    /// Whether a variant never drawn fails the run (`--require-variants`).
    pub require_variants: bool,
}

/// `conformance run`: the exit status, or why the run could not be made.
pub fn main(args: &RunArgs) -> Result<i32, String> {
    args.outputs.check()?;
    let budget = Budget::new(args.seconds, args.fail_fast);
    let say = args.outputs.ci.targets();
    let shard = parse_shard(args.shard.as_deref())?;
    let known = load_registry(args.expected.as_deref())?;
    let envs = run_envs(&args.git)?;
    announce_gits(&envs);
    if args.concurrent {
        let shape = (args.seed, args.out.as_path(), !args.no_minimize);
        let run = concurrent_only(&args.writers, &envs, &known, shape, &budget, &say)?;
        return finish(&run, &args.outputs, &known);
    }
    let default_cases = if budget.is_timed() { u64::MAX } else { 120 };
    let cfg = RunConfig {
        cases: args.cases.unwrap_or(default_cases),
        ops: args.ops,
        seed: args.seed,
        jobs: args.jobs,
        shard,
        out: args.out.clone(),
        minimize: !args.no_minimize,
    };
    let with_round = !args.no_concurrent && shard.0 == 1;
    let round = |deadline| Round {
        seed_txns: (args.seed, args.writers.concurrent_txns.unwrap_or(100)),
        out: &args.out,
        minimize: !args.no_minimize,
        deadline,
    };
    let run_round = |deadline| rounds(&args.writers, &envs, &known, &round(deadline), &say);
    // With a time budget the round comes first, so that the cases take what it leaves.
    let mut done = None;
    if with_round && budget.is_timed() {
        done = Some(run_round(budget.end_less(ROUND_MARGIN))?);
    }
    if done.as_ref().is_some_and(|(clean, _)| !clean) {
        budget.failed();
    }
    let mut report = run_within(&envs, &known, &cfg, &budget)?;
    if with_round && done.is_none() && budget.stop() != Some(Stop::FirstFailure) {
        done = Some(run_round(None)?);
    }
    let concurrent_clean = !matches!(done, Some((false, _)));
    let round_reports: Vec<ConcurrentReport> = done.map(|r| r.1).unwrap_or_default();
    for (g, c) in report.gits.iter_mut().zip(round_reports) {
        g.concurrent = Some(c);
    }
    let outcome = RunOutcome {
        report,
        concurrent_clean,
        require_variants: args.require_variants,
    };
    finish(&outcome, &args.outputs, &known)
}

impl ModeReport for RunOutcome {
    fn suite(&self) -> String {
        "reftable-rs conformance run".into()
    }

    fn json(&self) -> String {
        pretty(&self.report)
    }

    fn markdown(&self) -> String {
        self.report.markdown()
    }

    fn known_defects(&self) -> Vec<&str> {
        self.report.known_defects()
    }

    fn lines(&self) -> Vec<String> {
        run_lines(&self.report)
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        crate::run::ci_tests::ci_tests(&self.report)
    }

    fn failed(&self) -> bool {
        let r = &self.report;
        let undrawn = self.require_variants && r.gits.iter().any(|g| !never_drawn(g).is_empty());
        r.unexpected_divergences > 0 || r.stale_expected > 0 || !self.concurrent_clean || undrawn
    }
}

/// The variants a run should have drawn on git `g` that it did not.
fn never_drawn(g: &crate::run::report::GitSection) -> Vec<String> {
    g.profile
        .as_ref()
        .map(|p| crate::cases::variants::never_drawn(&p.features, &g.variants))
        .unwrap_or_default()
}

/// One env per `--git` (the default git when none is given).
pub(crate) fn run_envs(gits: &[PathBuf]) -> Result<Vec<Env>, String> {
    if gits.is_empty() {
        return Ok(vec![env(None)?]);
    }
    gits.iter().map(|g| env(Some(g))).collect()
}

/// Each git under test on stderr: binary, version, what the probe found and its surprises.
pub(crate) fn announce_gits(envs: &[Env]) {
    for (i, e) in envs.iter().enumerate() {
        let direct = if e.git.program() == e.git.bin() {
            String::new()
        } else {
            format!(
                ", run as {} with its environment",
                e.git.program().display()
            )
        };
        eprintln!(
            "git {i}: {}{direct} ({}): {}",
            e.git.bin().display(),
            e.git.version(),
            e.profile.summary()
        );
        for s in &e.profile.surprises {
            eprintln!("git {i}: probe surprise: {s}");
        }
    }
}

/// A run's outcome for stdout: each unexpected divergence, per git its stale known
/// divergences and figures, the known git defects seen, the totals.
fn run_lines(r: &Report) -> Vec<String> {
    let mut lines: Vec<String> = (r.divergences.iter())
        .filter(|d| d.expected.is_none())
        .map(|d| d.line())
        .collect();
    for g in &r.gits {
        lines.extend(g.stale_expected.iter().map(|s| format!("stale: {s}")));
        let total: u64 = g.comparisons.values().sum();
        lines.push(format!(
            "git {} ({}), seed {}, shard {}: {} cases, {} operations, {} comparisons, {:.0} ops/s; {} unexpected divergences, {} expected (known git defects)",
            g.version, g.path, r.seed, r.shard, g.cases, g.operations, total,
            g.operations_per_second, g.unexpected_divergences, g.expected_divergences
        ));
        let kinds: Vec<String> = (g.kinds.iter())
            .map(|(k, [n, ok])| format!("{k} {n}/{ok}"))
            .collect();
        lines.push(format!(
            "  operations run/accepted by git: {}",
            kinds.join(", ")
        ));
        let never = never_drawn(g);
        lines.push(format!(
            "  variants: {} drawn{}",
            g.variants.len(),
            if never.is_empty() {
                ", every one the generator should reach".to_string()
            } else {
                format!("; never drawn: {}", never.join("; "))
            }
        ));
    }
    for d in &r.git_defects {
        lines.push(format!(
            "known git defect {} on git {} in {} cases",
            d.id, d.git, d.cases
        ));
    }
    lines.push(format!(
        "{:.1} s of cases ({:.0} ops/s), {:.1} s minimizing; {} unexpected divergences, {} stale known divergences",
        r.wall_seconds, r.operations_per_second, r.minimize_seconds, r.unexpected_divergences, r.stale_expected
    ));
    lines.extend(r.cpu_line());
    if let Some(why) = &r.stopped {
        lines.push(format!("{} cases per git ran; the run {why}", r.cases));
    }
    lines
}

/// `conformance replay` and `conformance minimize`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct CaseDirArgs {
    /// The case directory.
    pub dir: PathBuf,
    /// The git binary (default: the one the case recorded, if it is still there).
    #[arg(long)]
    pub git: Option<PathBuf>,
    /// The known git defects (default: REFTABLE_EXPECTED_DIVERGENCES, else
    /// conformance/expected-divergences.json).
    #[arg(long)]
    pub expected: Option<PathBuf>,
}

/// The case file and the git it is replayed on: `--git`, else the one it recorded, else the
/// default.
fn case_env(a: &CaseDirArgs) -> Result<(CaseFile, Env), String> {
    let file = CaseFile::read(&a.dir)?;
    let recorded = file.git.as_ref().map(PathBuf::from);
    let chosen = a.git.clone().or(recorded.filter(|p| p.exists()));
    let e = env(chosen.as_deref())?;
    eprintln!(
        "replaying with git {} ({})",
        e.git.bin().display(),
        e.git.version()
    );
    Ok((file, e))
}

/// `conformance replay DIR`: 0 when the case no longer diverges, 1 when it does.
pub fn replay(a: &CaseDirArgs) -> Result<i32, String> {
    let (file, env) = case_env(a)?;
    if let Some(why) = not_applicable(&env.profile, &file.ops) {
        return Err(format!("cannot replay {}: {why}", a.dir.display()));
    }
    let result = replay_concrete(&env, file.options, &file.ops)?;
    for (i, op) in result.ops.iter().enumerate() {
        println!("{i:3}: {}", op.summary());
    }
    if result.divergences.is_empty() {
        println!("no divergence");
        return Ok(0);
    }
    for d in &result.divergences {
        println!("step {}: {:?} ({})\n{}", d.step, d.check, d.class, d.detail);
    }
    Ok(1)
}

/// `conformance minimize DIR`: the case minimized into `DIR-min`.
pub fn minimize(a: &CaseDirArgs) -> Result<i32, String> {
    let (_, env) = case_env(a)?;
    let known: ExpectedSet = load_registry(a.expected.as_deref())?;
    match minimize_dir(&env, &a.dir, &known, None) {
        Some(_) => Ok(0),
        None => Err(format!("{}: nothing to minimize", a.dir.display())),
    }
}
