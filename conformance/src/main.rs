//! `conformance`: the differential gate against real git.
//!
//! `cargo run --release -p conformance` runs the default gate; see `--help`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::{Parser, Subcommand};
use conformance::case::{run_concrete, run_generated, Env};
use conformance::casedir::{self, CaseFile};
use conformance::expected;
use conformance::git::Git;
use conformance::report::Report;

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
    /// Number of cases.
    #[arg(long, default_value_t = 120)]
    cases: u64,
    /// Operations per case.
    #[arg(long, default_value_t = 30)]
    ops: usize,
    /// Seed of the run (cases are derived from seed and index).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Parallel jobs.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Run only shard K of N (1-based), e.g. 2/4.
    #[arg(long)]
    shard: Option<String>,
    /// The git binary (default: REFTABLE_TEST_GIT, else git on PATH).
    #[arg(long)]
    git: Option<PathBuf>,
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
}

#[derive(Subcommand)]
enum Cmd {
    /// Run generated cases on git and on us.
    Run(RunArgs),
    /// Re-run a case directory.
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
}

fn env(git: Option<&Path>) -> Env {
    let git = Git::find(git).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    Env::new(git).unwrap_or_else(|e| {
        eprintln!("conformance: cannot prepare the object pool: {e}");
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

fn run(args: RunArgs) -> i32 {
    let (k, n) = parse_shard(&args.shard);
    let env = env(args.git.as_deref());
    let known = expected::load().unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    let start = Instant::now();
    let indices: Vec<u64> = (0..args.cases).filter(|i| i % n == k - 1).collect();
    let bar = indicatif::ProgressBar::new(indices.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases {msg} [{elapsed}]")
            .expect("template"),
    );
    let next = AtomicU64::new(0);
    let report = Mutex::new(Report {
        git_version: env.git.version().to_string(),
        seed: args.seed,
        shard: format!("{k}/{n}"),
        ..Default::default()
    });
    std::thread::scope(|s| {
        for _ in 0..args.jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst) as usize;
                let Some(&index) = indices.get(i) else { break };
                let result = match run_generated(&env, args.seed, index, args.ops) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("conformance: case {index}: setup failed: {e}");
                        std::process::exit(2);
                    }
                };
                let mut unexpected = Vec::new();
                let mut expected_n = 0;
                for d in &result.divergences {
                    if expected::matching(&known, d).is_some() {
                        expected_n += 1;
                    } else {
                        unexpected.push(d.clone());
                    }
                }
                let mut dir_written = None;
                if !unexpected.is_empty() {
                    let dir = args.out.join(format!("seed{}-case{index}", args.seed));
                    let file = CaseFile {
                        seed: Some(args.seed),
                        index: Some(index),
                        options: result.options.expect("set"),
                        ops: result.ops.clone(),
                        divergences: result.divergences.clone(),
                        git_version: env.git.version().to_string(),
                    };
                    let _ = casedir::write(&dir, &file, &result, None);
                    if !args.no_minimize {
                        minimize_dir(&env, &dir);
                    }
                    dir_written = Some(dir.display().to_string());
                    bar.println(format!(
                        "case {index}: {:?} divergence at step {}: {} (see {})",
                        unexpected[0].check,
                        unexpected[0].step,
                        unexpected[0].detail.lines().next().unwrap_or(""),
                        dir.display()
                    ));
                }
                let mut r = report.lock().expect("lock");
                r.cases += 1;
                r.operations += result.ops.len() as u64;
                r.unexpected_divergences += unexpected.len() as u64;
                r.expected_divergences += expected_n;
                r.add_comparisons(&result.comparisons);
                r.divergent_cases.extend(dir_written);
                bar.set_message(format!("{} unexpected", r.unexpected_divergences));
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let mut r = report.into_inner().expect("lock");
    r.wall_seconds = start.elapsed().as_secs_f64();
    r.operations_per_second = r.operations as f64 / r.wall_seconds.max(1e-9);
    if let Some(p) = &args.report_json {
        let _ = std::fs::write(p, serde_json::to_string_pretty(&r).expect("json"));
    }
    if let Some(p) = &args.report_md {
        let _ = std::fs::write(p, r.markdown());
    }
    let total: u64 = r.comparisons.values().sum();
    println!(
        "git {}, seed {}, shard {}: {} cases, {} operations, {} comparisons in {:.1} s ({:.0} ops/s)",
        r.git_version, r.seed, r.shard, r.cases, r.operations, total, r.wall_seconds, r.operations_per_second
    );
    println!(
        "{} unexpected divergences, {} expected (known git defects)",
        r.unexpected_divergences, r.expected_divergences
    );
    i32::from(r.unexpected_divergences > 0)
}

fn replay(env: &Env, dir: &Path) -> i32 {
    let file = CaseFile::read(dir).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        std::process::exit(2);
    });
    let result = run_concrete(env, file.options, &file.ops).unwrap_or_else(|e| {
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

fn minimize_dir(env: &Env, dir: &Path) -> Option<PathBuf> {
    let file = CaseFile::read(dir).ok()?;
    let check = file.divergences.first()?.check;
    let (ops, runs) = conformance::minimize::minimize(env, file.options, file.ops.clone(), check);
    let result = run_concrete(env, file.options, &ops).ok()?;
    let mut out = dir.as_os_str().to_owned();
    out.push("-min");
    let out = PathBuf::from(out);
    let min = CaseFile {
        ops,
        divergences: result.divergences.clone(),
        ..file
    };
    casedir::write(&out, &min, &result, None).ok()?;
    eprintln!(
        "minimized {} to {} operations in {runs} runs: {}",
        dir.display(),
        min.ops.len(),
        out.display()
    );
    Some(out)
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.cmd {
        None => match Cli::parse_from(["conformance", "run"]).cmd {
            Some(Cmd::Run(a)) => run(a),
            _ => unreachable!("run parses"),
        },
        Some(Cmd::Run(a)) => run(a),
        Some(Cmd::Replay { dir, git }) => replay(&env(git.as_deref()), &dir),
        Some(Cmd::Minimize { dir, git }) => {
            if minimize_dir(&env(git.as_deref()), &dir).is_some() {
                0
            } else {
                2
            }
        }
    };
    std::process::exit(code);
}
