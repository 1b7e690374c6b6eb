//! `conformance`: the differential gate against real git.
//!
//! `cargo run --release -p conformance` runs the default gate; see `--help`.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use conformance::budget::{Budget, Stop};
use conformance::cases::case::run_concrete;
use conformance::cases::casedir::CaseFile;
use conformance::ci_output::result::TestResult;
use conformance::ci_output::sink::CiTargets;
use conformance::concurrent::{run_concurrent, ConcurrentConfig, ConcurrentReport};
use conformance::defects::registry::{self, ExpectedSet};
use conformance::defects::upstream::maintainers_section;
use conformance::git::driver::Git;
use conformance::migrate::{run_migrate_within, MigrateConfig};
use conformance::run::report::Report;
use conformance::run::runner::{minimize_dir, run_within, RunConfig};
use conformance::setup::env::Env;

mod ci_args;
mod faults_cli;

use ci_args::{write_ci, CiArgs};
use reftable_yardstick::cli as yardstick_cli;

#[derive(Parser)]
#[command(
    name = "conformance",
    about = "Differential conformance gate: reftable-rs against real git"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Number of cases (per git) [default: 120, or no limit with --seconds].
    #[arg(long)]
    cases: Option<u64>,
    /// A time budget: cases are taken in order until it is used (the same seed gives the
    /// same cases; the budget only cuts the list), minimizing stops at its end; the report
    /// says how many cases ran. With it the concurrent round runs first. With --concurrent:
    /// rounds of seeds SEED, SEED+1, ... while the next one fits.
    #[arg(long)]
    seconds: Option<u64>,
    /// Stop at the first unexpected divergence (cases already running finish).
    #[arg(long)]
    fail_fast: bool,
    #[command(flatten)]
    ci: CiArgs,
    /// Operations per case.
    #[arg(long, default_value_t = 30)]
    ops: usize,
    /// Seed of the run (cases are derived from seed and index).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Parallel jobs (default: one more than the cores, as the gate waits on git a lot).
    #[arg(long, default_value_t = default_jobs())]
    jobs: usize,
    /// Run only shard K of N (1-based), e.g. 2/4.
    #[arg(long)]
    shard: Option<String>,
    /// A git binary to test; give it several times to run every case on each (default:
    /// REFTABLE_TEST_GIT, else git on PATH).
    #[arg(long)]
    git: Vec<PathBuf>,
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
    /// Where divergent cases are written.
    #[arg(long, default_value = "target/conformance/cases")]
    out: PathBuf,
    /// Do not minimize divergent cases.
    #[arg(long)]
    no_minimize: bool,
    /// Run only the concurrent mode (git and our writer processes on one repository at
    /// once, with compaction from both), at --concurrent-txns per writer.
    #[arg(long)]
    concurrent: bool,
    /// Leave out the small concurrent round the default run ends with.
    #[arg(long, conflicts_with = "concurrent")]
    no_concurrent: bool,
    /// Transactions per writer in the concurrent mode (default: 500 with --concurrent, 100
    /// in the default run's round).
    #[arg(long)]
    concurrent_txns: Option<u32>,
    /// git writer processes in the concurrent mode.
    #[arg(long, default_value_t = 2)]
    git_writers: u32,
    /// Our writer processes in the concurrent mode.
    #[arg(long, default_value_t = 2)]
    our_writers: u32,
    /// Shared refs (besides main) the concurrent writers compare-and-swap.
    #[arg(long, default_value_t = 4)]
    shared_refs: u32,
    /// Maintenance (pack-refs, pack-refs --auto, reflog expire) after every this many
    /// transactions of each concurrent writer (0: none).
    #[arg(long, default_value_t = 25)]
    maintenance_every: u32,
}

#[derive(clap::Args, Clone)]
struct DamagedArgs {
    /// Seed (of the bases and of the damage).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Undamaged stacks to start from (the git side of the gate's cases of the seed; every
    /// other one compacted by `git pack-refs`).
    #[arg(long, default_value_t = 8)]
    bases: u64,
    /// Damaged stacks to try at most.
    #[arg(long, default_value_t = 2000)]
    trials: u64,
    /// Stop trying after this many seconds.
    #[arg(long, default_value_t = 600)]
    seconds: u64,
    /// A command still running after this many seconds is a hang.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Parallel jobs.
    #[arg(long, default_value_t = default_jobs())]
    jobs: usize,
    /// The git binary (default: REFTABLE_TEST_GIT, else git on PATH).
    #[arg(long)]
    git: Option<PathBuf>,
    /// Where findings (damaged repository, reproduce.sh) are written.
    #[arg(long, default_value = "target/conformance/damaged")]
    out: PathBuf,
    /// Write the JSON report here.
    #[arg(long)]
    report_json: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    report_md: Option<PathBuf>,
    /// Do not take backtraces of git's crashes with gdb.
    #[arg(long)]
    no_gdb: bool,
    /// Fail unless git crashed at this many distinct sites: a check that the damage still
    /// reaches a git known to crash on damaged tables (2.47.3 does at more than ten).
    #[arg(long, default_value_t = 0)]
    min_git_crash_sites: usize,
    /// Stop trying at the first finding on our side (trials already running finish).
    #[arg(long)]
    fail_fast: bool,
    /// Write findings with the damage first seen, not minimized: minimizing comes after the
    /// --seconds budget, so this bounds the whole run by it.
    #[arg(long)]
    no_minimize: bool,
    #[command(flatten)]
    ci: CiArgs,
}

#[derive(clap::Args, Clone)]
struct MigrateArgs {
    /// Cases [default: 40, or no limit with --seconds].
    #[arg(long)]
    cases: Option<u64>,
    /// Operations per case.
    #[arg(long, default_value_t = 30)]
    ops: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run only this case of the seed's list (as a failing case's rerun.sh does).
    #[arg(long, conflicts_with_all = ["cases", "seconds"])]
    case: Option<u64>,
    /// A time budget: cases are taken in order while one as long as the longest so far
    /// still ends within it; the report says how many ran.
    #[arg(long)]
    seconds: Option<u64>,
    /// Stop at the first case with an unexpected divergence.
    #[arg(long)]
    fail_fast: bool,
    /// The git binary.
    #[arg(long)]
    git: Option<PathBuf>,
    /// Write a case with an unexpected divergence here (its repositories, the differences,
    /// rerun.sh); by default none is written.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    report_md: Option<PathBuf>,
    /// Write the JSON report here.
    #[arg(long)]
    report_json: Option<PathBuf>,
    #[command(flatten)]
    ci: CiArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run generated cases on git and on us.
    Run(RunArgs),
    /// Re-run a case directory (on the git recorded in it unless --git is given).
    Replay {
        /// The case directory.
        dir: PathBuf,
        /// The git binary.
        #[arg(long)]
        git: Option<PathBuf>,
    },
    /// Minimize a case directory into DIR-min.
    Minimize {
        /// The case directory.
        dir: PathBuf,
        /// The git binary.
        #[arg(long)]
        git: Option<PathBuf>,
    },
    /// Damage stacks the gate wrote and hand them to git and to us: git's crashes, hangs,
    /// hidden load errors and files touched outside the repository are reported (distinct
    /// crash sites by backtrace, each minimized with a reproducer); any such finding on our
    /// side fails the run.
    Damaged(DamagedArgs),
    /// Replay the gate's cases on files-backend repositories, migrate each to reftable with
    /// `git refs migrate` and with our import, and compare the tables byte for byte.
    Migrate(MigrateArgs),
    /// Write operations of generated cases on git and on us under injected system-call
    /// faults (strace), once per call of the write path: a reported failure must leave
    /// nothing changed, a success must be there, the stack must load and the next writer get
    /// through. Any defect of ours fails the run, git's unless the registry knows it.
    Faults(faults_cli::FaultsArgs),
    /// What a power loss during or after a write can leave: each write operation recorded
    /// (its file-system operations), every crash state built under the usual file-system
    /// model and read by us and by git; git per `core.fsync` setting (reported), ours with
    /// fsync on (must stay loadable, all-or-nothing and durable once acknowledged) and off.
    Powerloss(faults_cli::CaseArgs),
    /// Our side of one faulted operation (run by `faults` under strace).
    #[command(hide = true)]
    FaultWorker {
        /// The worker's spec (JSON).
        spec: PathBuf,
    },
    /// One writer process of the concurrent mode (run by `run --concurrent`).
    #[command(hide = true)]
    ConcurrentWorker {
        /// The worker's spec (JSON).
        spec: PathBuf,
    },
    /// Write the test in git's t/ style and a mailing-list message for a known git defect
    /// (its id in the registry) into --out; `all` for every defect that has a test.
    Upstream {
        /// The defect's id, or `all`.
        id: String,
        /// Where the files go.
        #[arg(long, default_value = "target/conformance/upstream")]
        out: PathBuf,
    },
    /// Mutants of a git checkout's reftable code (built in a copy, incrementally), each put
    /// through the gate's modes (and optionally the counters comparison and your tests):
    /// killed-by-gate, killed-by-counters, killed-by-tests, both, survived, timeout,
    /// unviable, equivalent. Resumable; --shard K/N and mutate-merge for CI matrices.
    MutateGit(yardstick_cli::MutateArgs),
    /// Merge the run directories of a sample's shards into one report.
    MutateMerge(yardstick_cli::MergeArgs),
    /// Line, branch and function coverage of a git checkout's reftable code reached by the
    /// gate's modes (and your tests), from a gcov build the tool makes in a copy.
    Coverage(yardstick_cli::CoverageArgs),
    /// Print what the git under test does (the probe the gate runs at start).
    Probe {
        /// The git binary.
        #[arg(long)]
        git: Option<PathBuf>,
    },
}

fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get() + 1)
}

fn env(git: Option<&Path>) -> Env {
    let git = Git::find(git).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    Env::new(git).unwrap_or_else(|e| {
        eprintln!("conformance: cannot probe git or prepare the object pool: {e}");
        std::process::exit(2);
    })
}

fn parse_shard(s: &Option<String>) -> (u64, u64) {
    let Some(s) = s else { return (1, 1) };
    let parsed = s
        .split_once('/')
        .and_then(|(k, n)| Some((k.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => (k, n),
        _ => {
            eprintln!("conformance: --shard wants K/N with 1 <= K <= N, got {s}");
            std::process::exit(2);
        }
    }
}

/// The concurrent round of a run, on every git, with `seed`; whether all of them were clean.
/// Lines go to `out`; minimizing a finding starts no run after `deadline`.
fn concurrent_rounds(
    args: &RunArgs,
    envs: &[Env],
    known: &ExpectedSet,
    round: (u64, u32),
    out: &CiTargets,
    deadline: Option<std::time::Instant>,
) -> (bool, Vec<ConcurrentReport>) {
    #[cfg(not(reftable_test_hooks))]
    plant_from_env();
    let exe = std::env::current_exe().unwrap_or_else(|e| {
        eprintln!("conformance: cannot find my own binary for the concurrent writers: {e}");
        std::process::exit(2);
    });
    let mut clean = true;
    let mut reports = Vec::new();
    for e in envs {
        let mut cfg = ConcurrentConfig::new(round.0, round.1, exe.clone());
        cfg.git_writers = args.git_writers;
        cfg.our_writers = args.our_writers;
        cfg.shared = args.shared_refs;
        cfg.maintenance_every = args.maintenance_every;
        cfg.minimize = !args.no_minimize;
        cfg.out = Some(args.out.clone());
        cfg.deadline = deadline;
        // REFTABLE_PLANT (test-hooks builds) goes to our writer processes only.
        cfg.plant = std::env::var("REFTABLE_PLANT").ok();
        match run_concurrent(e, known, &cfg) {
            Ok(r) => {
                say_concurrent(&r, out);
                clean &= r.unexpected() == 0;
                reports.push(r);
            }
            Err(err) => {
                eprintln!(
                    "conformance: concurrent mode on git {}: {err}",
                    e.git.version()
                );
                std::process::exit(2);
            }
        }
    }
    (clean, reports)
}

/// A concurrent run's findings, where they went, and its line.
fn say_concurrent(r: &ConcurrentReport, out: &CiTargets) {
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

/// What a time budget keeps, at its end, for a concurrent round's findings and the reports.
const ROUND_MARGIN: std::time::Duration = std::time::Duration::from_secs(1);

fn run_cmd(args: RunArgs) -> i32 {
    let budget = Budget::new(args.seconds, args.fail_fast);
    let out = args.ci.targets();
    let shard = parse_shard(&args.shard);
    let envs = run_envs(&args);
    let path = args.expected.clone().unwrap_or_else(registry::default_path);
    let known = ExpectedSet::load(&path).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    announce_gits(&envs);
    if args.concurrent {
        return concurrent_only(&args, &envs, &known, &budget, &out);
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
    let txns = args.concurrent_txns.unwrap_or(100);
    let round_deadline = budget.end_less(ROUND_MARGIN);
    // With a time budget the round comes first, so that the cases take what it leaves.
    let mut round = (with_round && budget.is_timed()).then(|| {
        concurrent_rounds(
            &args,
            &envs,
            &known,
            (args.seed, txns),
            &out,
            round_deadline,
        )
    });
    if round.as_ref().is_some_and(|(clean, _)| !clean) {
        budget.failed();
    }
    let mut r = run_within(&envs, &known, &cfg, &budget);
    if with_round && round.is_none() && budget.stop() != Some(Stop::FirstFailure) {
        round = Some(concurrent_rounds(
            &args,
            &envs,
            &known,
            (args.seed, txns),
            &out,
            None,
        ));
    }
    let concurrent_clean = !matches!(round, Some((false, _)));
    for (g, c) in r
        .gits
        .iter_mut()
        .zip(round.map(|r| r.1).unwrap_or_default())
    {
        g.concurrent = Some(c);
    }
    if let Some(p) = &args.report_json {
        let _ = std::fs::write(p, serde_json::to_string_pretty(&r).expect("json"));
    }
    if let Some(p) = &args.report_md {
        let md = r.markdown() + &maintainers_section(&known, r.known_defects());
        let _ = std::fs::write(p, md);
    }
    print_run(&r, &out);
    let tests = conformance::run::ci_tests::ci_tests(&r);
    write_ci(&out, "reftable-rs conformance run", &tests);
    i32::from(r.unexpected_divergences > 0 || r.stale_expected > 0 || !concurrent_clean)
}

/// Write the test results where the command line asked; a file that cannot be written ends
/// the run (exit 2).
/// One env per `--git` (the default git when none is given).
fn run_envs(args: &RunArgs) -> Vec<Env> {
    let gits: Vec<Option<&Path>> = if args.git.is_empty() {
        vec![None]
    } else {
        args.git.iter().map(|g| Some(g.as_path())).collect()
    };
    gits.into_iter().map(env).collect()
}

/// Each git under test on stderr: binary, version, what the probe found and its surprises.
fn announce_gits(envs: &[Env]) {
    for (i, e) in envs.iter().enumerate() {
        eprintln!(
            "git {i}: {} ({}): {}",
            e.git.bin().display(),
            e.git.version(),
            e.profile.summary()
        );
        for s in &e.profile.surprises {
            eprintln!("git {i}: probe surprise: {s}");
        }
    }
}

/// `run --concurrent`: the concurrent mode alone on every git, its reports written; the
/// exit status. With a time budget, rounds of seeds `seed`, `seed + 1`, ... while the next
/// one (taken to last as long as the one before) fits in it.
fn concurrent_only(
    args: &RunArgs,
    envs: &[Env],
    known: &ExpectedSet,
    budget: &Budget,
    out: &CiTargets,
) -> i32 {
    let txns = args.concurrent_txns.unwrap_or(500);
    let mut clean = true;
    let mut reports = Vec::new();
    for seed in args.seed.. {
        let t = std::time::Instant::now();
        let deadline = budget.end_less(ROUND_MARGIN);
        let (ok, rs) = concurrent_rounds(args, envs, known, (seed, txns), out, deadline);
        clean &= ok;
        reports.extend(rs);
        if !ok {
            budget.failed();
        }
        if !budget.is_timed() || !budget.may_start(budget.end_less(t.elapsed() + ROUND_MARGIN)) {
            break;
        }
    }
    if let Some(p) = &args.report_md {
        let mut md: String = reports.iter().map(ConcurrentReport::markdown).collect();
        md.push_str(&maintainers_section(
            known,
            reports.iter().flat_map(|r| r.known_defects()),
        ));
        let _ = std::fs::write(p, md);
    }
    if let Some(p) = &args.report_json {
        let _ = std::fs::write(p, serde_json::to_string_pretty(&reports).expect("json"));
    }
    if budget.is_timed() {
        let why = budget.stop_line().unwrap_or_default();
        out.say(&format!("{} concurrent runs; {why}", reports.len()));
    }
    let tests: Vec<TestResult> = reports
        .iter()
        .map(|r| conformance::concurrent::ci_test(r, &format!("concurrent, git {}", r.version)))
        .collect();
    write_ci(out, "reftable-rs conformance run --concurrent", &tests);
    i32::from(!clean)
}

/// A run's outcome on stdout: each unexpected divergence, per git its stale known
/// divergences and figures, the known git defects seen, the totals.
fn print_run(r: &Report, out: &CiTargets) {
    for d in r.divergences.iter().filter(|d| d.expected.is_none()) {
        out.say(&d.line());
    }
    for g in &r.gits {
        for s in &g.stale_expected {
            out.say(&format!("stale: {s}"));
        }
        let total: u64 = g.comparisons.values().sum();
        out.say(&format!(
            "git {} ({}), seed {}, shard {}: {} cases, {} operations, {} comparisons, {:.0} ops/s; {} unexpected divergences, {} expected (known git defects)",
            g.version, g.path, r.seed, r.shard, g.cases, g.operations, total,
            g.operations_per_second, g.unexpected_divergences, g.expected_divergences
        ));
        let kinds: Vec<String> = g
            .kinds
            .iter()
            .map(|(k, [n, ok])| format!("{k} {n}/{ok}"))
            .collect();
        out.say(&format!(
            "  operations run/accepted by git: {}",
            kinds.join(", ")
        ));
    }
    for d in &r.git_defects {
        out.say(&format!(
            "known git defect {} on git {} in {} cases",
            d.id, d.git, d.cases
        ));
    }
    out.say(&format!(
        "{:.1} s of cases ({:.0} ops/s), {:.1} s minimizing; {} unexpected divergences, {} stale known divergences",
        r.wall_seconds, r.operations_per_second, r.minimize_seconds, r.unexpected_divergences, r.stale_expected
    ));
    if let Some(line) = r.cpu_line() {
        out.say(&line);
    }
    if let Some(why) = &r.stopped {
        out.say(&format!("{} cases per git ran; the run {why}", r.cases));
    }
}

/// The git a case directory is replayed on: `--git`, else the one it recorded, else the
/// default.
fn case_env(file: &CaseFile, git: Option<PathBuf>) -> Env {
    let recorded = file.git.as_ref().map(PathBuf::from);
    let chosen = git.or(recorded.filter(|p| p.exists()));
    let e = env(chosen.as_deref());
    eprintln!(
        "replaying with git {} ({})",
        e.git.bin().display(),
        e.git.version()
    );
    e
}

fn replay(dir: &Path, git: Option<PathBuf>) -> i32 {
    let file = CaseFile::read(dir).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    let env = case_env(&file, git);
    if let Some(why) = conformance::cases::case::not_applicable(&env.profile, &file.ops) {
        eprintln!("conformance: cannot replay {}: {why}", dir.display());
        return 2;
    }
    let result = run_concrete(&env, file.options, &file.ops).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    for (i, op) in result.ops.iter().enumerate() {
        println!("{i:3}: {}", op.summary());
    }
    if result.divergences.is_empty() {
        println!("no divergence");
        return 0;
    }
    for d in &result.divergences {
        println!("step {}: {:?} ({})\n{}", d.step, d.check, d.class, d.detail);
    }
    1
}

fn damaged(a: DamagedArgs) -> i32 {
    let out = a.ci.targets();
    let e = env(a.git.as_deref());
    let gdb = !a.no_gdb
        && std::process::Command::new("gdb")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    eprintln!(
        "damaged: git {} ({}); backtraces: {}",
        e.git.version(),
        e.git.bin().display(),
        if gdb {
            "gdb"
        } else {
            "none (signal and command only)"
        }
    );
    let cfg = conformance::damaged::DamageConfig {
        seed: a.seed,
        bases: a.bases,
        trials: a.trials,
        budget: std::time::Duration::from_secs(a.seconds),
        timeout: std::time::Duration::from_secs(a.timeout),
        jobs: a.jobs,
        out: a.out.clone(),
        gdb,
        minimize: !a.no_minimize,
        fail_fast: a.fail_fast,
    };
    let r = conformance::damaged::run_damaged(&e, &cfg).unwrap_or_else(|err| {
        eprintln!("conformance: {err}");
        std::process::exit(2);
    });
    if let Some(p) = &a.report_json {
        let _ = std::fs::write(p, serde_json::to_string_pretty(&r).expect("json"));
    }
    if let Some(p) = &a.report_md {
        let md = r.markdown() + &default_maintainers_section(r.known_defects());
        let _ = std::fs::write(p, md);
    }
    let status = say_damaged(&r, a.min_git_crash_sites, &out);
    let tests = conformance::damaged::ci_tests::ci_tests(&r, a.min_git_crash_sites);
    write_ci(&out, "reftable-rs conformance damaged", &tests);
    status
}

/// A damaged-stack run's findings and figures on stdout; the exit status.
fn say_damaged(r: &conformance::damaged::DamageReport, min_sites: usize, out: &CiTargets) -> i32 {
    for f in r.ours_findings.iter().chain(&r.git_findings) {
        out.say(&format!(
            "{} {} on {}: {} (seen {}){}",
            f.side,
            f.class,
            f.command,
            f.signature,
            f.count,
            f.case_dir
                .as_ref()
                .map(|d| format!(" -> {d}"))
                .unwrap_or_default()
        ));
    }
    let crashes = r.git_findings.iter().filter(|f| f.class == "crash").count();
    out.say(&format!(
        "git {}: {} bases, {} damaged stacks, {} commands, {:.0} s; git: {} distinct findings ({crashes} crash sites); ours: {} findings",
        r.version, r.bases, r.trials, r.commands, r.seconds, r.git_findings.len(), r.ours_findings.len()
    ));
    if let Some(why) = &r.stopped {
        out.say(&format!("the run {why}"));
    }
    if crashes < min_sites {
        out.say(&format!(
            "git crashed at {crashes} distinct sites, fewer than --min-git-crash-sites {min_sites}: the damage no longer reaches what it used to"
        ));
        return 1;
    }
    for st in &r.stale_known {
        out.say(&format!("stale: {}", st.line));
    }
    // A sanitizer built into git reporting a leak or a bad access is a defect of git's no
    // reading of the damage excuses: it fails the run unless the registry knows it.
    let sanitized =
        |f: &&conformance::damaged::Finding| f.class == "sanitizer-report" && f.known.is_none();
    i32::from(
        !r.ours_findings.is_empty()
            || !r.stale_known.is_empty()
            || r.git_findings.iter().any(|f| sanitized(&f)),
    )
}

/// `conformance migrate`: the run, its reports, its lines, its test results; the exit status.
fn migrate(a: MigrateArgs) -> i32 {
    let budget = Budget::new(a.seconds, a.fail_fast);
    let out = a.ci.targets();
    let e = env(a.git.as_deref());
    let default_cases = if budget.is_timed() { u64::MAX } else { 40 };
    let cfg = MigrateConfig {
        seed: a.seed,
        cases: a.cases.unwrap_or(default_cases),
        ops: a.ops,
        only: a.case,
        out: a.out.clone(),
    };
    let r = run_migrate_within(&e, &cfg, &budget).unwrap_or_else(|err| {
        eprintln!("conformance: {err}");
        std::process::exit(2);
    });
    if let Some(p) = &a.report_md {
        let md = r.markdown() + &default_maintainers_section(r.known_defects());
        let _ = std::fs::write(p, md);
    }
    if let Some(p) = &a.report_json {
        let _ = std::fs::write(p, serde_json::to_string_pretty(&r).expect("json"));
    }
    for k in &r.skipped {
        out.say(&format!("skipped {k}"));
    }
    for d in &r.divergences {
        out.say(&format!(
            "{} {}{}: {}",
            d.case,
            d.finding.class,
            d.finding
                .expected
                .as_ref()
                .map(|e| format!(" (known: {e})"))
                .unwrap_or_default(),
            d.finding.detail.lines().next().unwrap_or("")
        ));
    }
    out.say(&format!(
        "git {}: {} cases, {} operations replayed, {} migrations ({} refs, {} reflog entries, reflogs {}), {} tables byte-identical, {} refused by both, {} skipped; back to files {}/{} identical; {:.0} s; {} unexpected divergences, {} expected",
        r.version, r.cases, r.operations, r.migrations, r.refs, r.log_entries,
        if r.with_reflogs { "migrated" } else { "left out" },
        r.identical_tables, r.both_refused, r.skipped.len(), r.back_identical, r.back_compared, r.seconds, r.unexpected(), r.divergences.len() - r.unexpected()
    ));
    if let Some(why) = &r.stopped {
        out.say(&format!("{} cases ran; the run {why}", r.cases));
    }
    let tests = conformance::migrate::ci_tests::ci_tests(&r, a.seed, a.ops);
    write_ci(&out, "reftable-rs conformance migrate", &tests);
    i32::from(r.unexpected() > 0)
}

fn probe(git: Option<PathBuf>) -> i32 {
    let e = env(git.as_deref());
    println!(
        "{}",
        serde_json::to_string_pretty(&e.profile).expect("json")
    );
    0
}

/// A test-hooks build plants the defect `REFTABLE_PLANT` names in a concurrent or fault
/// worker.
#[cfg(reftable_test_hooks)]
fn plant_from_env() {
    if let Ok(name) = std::env::var("REFTABLE_PLANT") {
        match reftable::test_hooks::Defect::from_name(&name) {
            Some(d) => reftable::test_hooks::plant(d),
            None => {
                eprintln!("conformance: no planted defect named {name}");
                std::process::exit(2);
            }
        }
    }
}

/// An ordinary build has no planted defects: asking for one is an error, not a clean run.
#[cfg(not(reftable_test_hooks))]
fn plant_from_env() {
    if std::env::var_os("REFTABLE_PLANT").is_some() {
        eprintln!("conformance: REFTABLE_PLANT needs a build with --cfg reftable_test_hooks");
        std::process::exit(2);
    }
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.cmd {
        None => match Cli::parse_from(["conformance", "run"]).cmd {
            Some(Cmd::Run(a)) => run_cmd(a),
            _ => unreachable!("run parses"),
        },
        Some(Cmd::Run(a)) => run_cmd(a),
        Some(Cmd::Replay { dir, git }) => replay(&dir, git),
        Some(Cmd::Minimize { dir, git }) => {
            let file = CaseFile::read(&dir).unwrap_or_else(|e| {
                eprintln!("conformance: {e}");
                std::process::exit(2);
            });
            let env = case_env(&file, git);
            let known = ExpectedSet::load(&registry::default_path()).unwrap_or_default();
            if minimize_dir(&env, &dir, &known, None).is_some() {
                0
            } else {
                2
            }
        }
        Some(Cmd::Damaged(a)) => damaged(a),
        Some(Cmd::Migrate(a)) => migrate(a),
        Some(Cmd::Probe { git }) => probe(git),
        Some(Cmd::Upstream { id, out }) => upstream(&id, &out),
        Some(Cmd::MutateGit(a)) => fatal_is_2(yardstick_cli::mutate_git(a)),
        Some(Cmd::MutateMerge(a)) => fatal_is_2(yardstick_cli::mutate_merge(a)),
        Some(Cmd::Coverage(a)) => fatal_is_2(yardstick_cli::coverage(a)),
        Some(Cmd::Faults(a)) => {
            let e = env(a.common.git.as_deref());
            faults_cli::faults(a, e)
        }
        Some(Cmd::Powerloss(a)) => {
            let e = env(a.git.as_deref());
            faults_cli::powerloss(a, e)
        }
        Some(Cmd::FaultWorker { spec }) => {
            plant_from_env();
            conformance::faults::worker::run_worker(&spec)
        }
        Some(Cmd::ConcurrentWorker { spec }) => {
            plant_from_env();
            conformance::concurrent::worker_main(&spec)
        }
    };
    std::process::exit(code);
}

/// An exit status, or the reason a command could not run: said, exit 2.
fn fatal_is_2(r: Result<i32, String>) -> i32 {
    r.unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        2
    })
}

/// The "for git's maintainers" section over the default registry (the one the damaged and
/// migrate modes match against).
fn default_maintainers_section<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    let known = ExpectedSet::load(&registry::default_path()).unwrap_or_default();
    maintainers_section(&known, ids)
}

/// `conformance upstream ID`: hand a known git defect over in git's own test style.
fn upstream(id: &str, out: &Path) -> i32 {
    let known = ExpectedSet::load(&registry::default_path()).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    let ids: Vec<String> = if id == "all" {
        known
            .entries()
            .filter(|e| !e.upstream.is_empty())
            .map(|e| e.id.clone())
            .collect()
    } else {
        vec![id.to_string()]
    };
    for id in ids {
        match conformance::defects::upstream::hand_over(&known, &id, out) {
            Ok(h) => println!("{}\n{}", h.test.display(), h.message.display()),
            Err(e) => {
                eprintln!("conformance: {e}");
                return 2;
            }
        }
    }
    0
}
