//! `complexity`: the complexity report of the reftable crate, side by side with git.
//!
//! Runs every scenario of [`perf::scenarios`] at the given sizes on our library (counters
//! and wall time), the p1401 workloads with `suppress_deletions` (git 2.47's behaviour), and
//! the p1401 workloads on a git binary (wall time). Writes JSON / Markdown / SVG and, with
//! `--baseline`, exits 1 when any counter differs from the baseline's at any size.
//!
//! `--counters` compares git builds instead: every scenario of [`perf::git_counters`] on
//! each `--git` (repeat the flag) under `strace -f -c`, system calls per operation, with a
//! verdict for each later build against the first; exit 1 when one does worse.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use perf::git::{git_binary, Git};
use perf::report::{Report, Series};
use perf::scenarios::{sweep, Config, Scenario};

#[derive(Parser, Debug)]
#[command(about = "Complexity report: our counters and time vs git on tombstone workloads")]
struct Args {
    /// Comma-separated sizes (refs or tombstones).
    #[arg(long, value_delimiter = ',', default_value = "1000,2000,4000,8000")]
    sizes: Vec<usize>,
    /// git binary (default: $REFTABLE_TEST_GIT, else `git` on PATH); with `--counters`,
    /// repeat it to compare builds (the first is the baseline).
    #[arg(long, conflicts_with = "no_git")]
    git: Vec<PathBuf>,
    /// Compare git builds on system calls per operation (needs strace) instead of the
    /// tombstone report.
    #[arg(long)]
    counters: bool,
    /// With `--counters`: also count the instructions git executes (valgrind's callgrind,
    /// detected at start; about fifty times slower than the system-call count).
    #[arg(long, requires = "counters")]
    instructions: bool,
    /// With `--counters`: compare every `--git` with the first git of this JSON report (a
    /// committed baseline, measured at the same `--sizes`) instead of with the first `--git`.
    #[arg(long, requires = "counters")]
    counters_baseline: Option<PathBuf>,
    /// Do not run git.
    #[arg(long)]
    no_git: bool,
    /// Largest size run on git (git 2.47.3 needs ~45 s at 8,000).
    #[arg(long, default_value_t = 8000)]
    git_max_size: usize,
    /// Seconds one git process may run.
    #[arg(long, default_value_t = 300)]
    git_timeout: u64,
    /// Largest size run with `suppress_deletions` (its work is quadratic).
    #[arg(long, default_value_t = 8000)]
    suppress_max_size: usize,
    /// Largest size of the one-table-per-ref auto-compaction scenario (file-system bound).
    #[arg(long, default_value_t = 8000)]
    compaction_max_size: usize,
    /// Only these scenarios (comma-separated names); default all.
    #[arg(long, value_delimiter = ',')]
    scenarios: Vec<String>,
    /// Write the JSON report here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Write the log-log SVG plot here.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Plant a regression to check the gate: run the `ours` series with
    /// `suppress_deletions` on (labelled `ours`), skipping the separate suppress series.
    #[arg(long)]
    plant_regression: bool,
    /// Re-render Markdown / SVG (and JSON) from this JSON report instead of measuring.
    #[arg(long)]
    render: Option<PathBuf>,
    /// Compare every counter with this JSON report, exactly; exit 1 on any difference.
    #[arg(long)]
    baseline: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("complexity: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if args.counters {
        return counters(args);
    }
    let report = match &args.render {
        Some(p) => Report::from_json(&std::fs::read_to_string(p)?)?,
        None => measure(args)?,
    };
    for (path, text) in [
        (&args.json, report.to_json()),
        (&args.markdown, report.to_markdown()),
        (&args.svg, report.to_svg()),
    ] {
        if let Some(p) = path {
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(p, text)?;
        }
    }
    if args.json.is_none() && args.markdown.is_none() && args.svg.is_none() {
        print!("{}", report.to_markdown());
    }

    if let Some(b) = &args.baseline {
        let base = Report::from_json(&std::fs::read_to_string(b)?)?;
        let differences = report.differences(&base);
        if differences.is_empty() {
            eprintln!("every counter equals the baseline {}", b.display());
        } else {
            eprintln!(
                "{} counters differ from the baseline {} (update it with ci/complexity.sh --update in the same commit if intended):",
                differences.len(),
                b.display()
            );
            for d in &differences {
                eprintln!("  {d}");
            }
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Run the scenarios (and git) and build the report.
fn measure(args: &Args) -> Result<Report, Box<dyn std::error::Error>> {
    let sizes = sizes(args)?;
    let scenarios = pick(&args.scenarios, &Scenario::ALL, Scenario::from_name)?;
    let mut report = Report {
        command: std::iter::once("complexity".to_string())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" "),
        ..Report::default()
    };
    report.notes.push(format!(
        "Machine: {} cores; timings are single runs on a shared machine (other builds were \
         running) and only indicative; counters are exact and deterministic.",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    ));
    report.notes.push(
        "Our p1401 runs go through `RefDb::transaction` (git's checks, one table per \
         transaction); \"ours\" runs auto-compaction after each transaction as git does; \
         the `/no-auto-compaction` variant keeps every table."
            .to_string(),
    );

    for &sc in &scenarios {
        let mut cfgs = vec![Config::OURS];
        if sc.is_p1401() {
            cfgs.push(Config::OURS.with_auto_compaction(false));
        }
        if sc != Scenario::AutoCompaction && !args.plant_regression {
            cfgs.push(Config::SUPPRESS_DELETIONS);
        }
        for cfg in cfgs {
            let max = if cfg.suppress_deletions {
                args.suppress_max_size
            } else if sc == Scenario::AutoCompaction {
                args.compaction_max_size
            } else {
                usize::MAX
            };
            let these: Vec<usize> = sizes.iter().copied().filter(|&n| n <= max).collect();
            if these.is_empty() {
                continue;
            }
            eprintln!(
                "{} / {}{}: {:?}",
                sc.name(),
                cfg.implementation(),
                if cfg.auto_compaction {
                    ""
                } else {
                    " (no auto-compaction)"
                },
                these
            );
            let run_cfg = Config {
                suppress_deletions: cfg.suppress_deletions || args.plant_regression,
                ..cfg
            };
            let points = sweep(sc, &these, run_cfg)?;
            report.results.push(Series::from_points(sc, cfg, &points));
        }
    }

    if !args.no_git {
        let git = Git::new(git_binary(args.git.first().map(PathBuf::as_path)))?;
        let mut git = git;
        git.timeout = std::time::Duration::from_secs(args.git_timeout);
        let version = git.version()?;
        eprintln!("git: {version}");
        report.git_version = Some(version);
        for sc in scenarios.iter().filter(|s| s.is_p1401()) {
            let these: Vec<usize> = sizes
                .iter()
                .copied()
                .filter(|&n| n <= args.git_max_size)
                .collect();
            let mut done = Vec::new();
            let mut secs = Vec::new();
            for n in these {
                eprintln!("{} / git: n={n}", sc.name());
                match perf::git::p1401(&git, n, *sc == Scenario::P1401Asymmetric) {
                    Ok(s) => {
                        eprintln!("  {s:.3} s");
                        done.push(n);
                        secs.push(s);
                    }
                    Err(e) => {
                        eprintln!("  stopped: {e}");
                        report
                            .notes
                            .push(format!("git {} stopped at n={n}: {e}", sc.name()));
                        break;
                    }
                }
            }
            report.results.push(Series::git(sc.name(), done, secs));
        }
    }

    Ok(report)
}

/// `--counters`: git builds side by side on system calls per operation.
fn counters(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    use perf::git_counters::{compare, markdown, measure_with, GitScenario};
    if !perf::syscalls::strace_works() {
        return Err(
            "--counters needs strace (apt-get install strace) and ptrace permission".into(),
        );
    }
    if args.instructions && !perf::instructions::callgrind_works() {
        return Err("--instructions needs valgrind (apt-get install valgrind)".into());
    }
    eprintln!(
        "counting system calls (strace){}",
        if args.instructions {
            " and instructions (callgrind)"
        } else {
            ""
        }
    );
    let sizes = sizes(args)?;
    let scenarios = pick(&args.scenarios, &GitScenario::ALL, GitScenario::from_name)?;
    let paths: Vec<PathBuf> = if args.git.is_empty() {
        vec![git_binary(None)]
    } else {
        args.git.clone()
    };
    let mut gits = Vec::new();
    for p in &paths {
        let mut g = Git::new(p.clone())?;
        g.timeout = std::time::Duration::from_secs(args.git_timeout);
        gits.push(g);
    }
    let baseline: Vec<perf::git_counters::GitSeries> = match &args.counters_baseline {
        Some(p) => {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p)?)?;
            serde_json::from_value(v["series"].clone())?
        }
        None => Vec::new(),
    };
    let mut series = Vec::new();
    let mut regressions = Vec::new();
    for sc in scenarios {
        let mut row = Vec::new();
        for g in &gits {
            eprintln!("{} on {}", sc.name(), g.path().display());
            row.push(measure_with(g, sc, &sizes, args.instructions)?);
        }
        if args.counters_baseline.is_some() {
            let base = baseline
                .iter()
                .find(|b| b.scenario == sc.name() && !b.path.is_empty());
            match base {
                Some(base) => {
                    if base.sizes != sizes {
                        return Err(format!(
                            "{}: the baseline was measured at sizes {:?}, this run at {:?}",
                            sc.name(),
                            base.sizes,
                            sizes
                        )
                        .into());
                    }
                    for b in &row {
                        regressions.extend(compare(base, b));
                    }
                }
                None => eprintln!("{}: not in the baseline, not compared", sc.name()),
            }
        } else {
            for b in &row[1..] {
                regressions.extend(compare(&row[0], b));
            }
        }
        series.extend(row);
        series.push(perf::git_counters::measure_ours(sc, &sizes)?);
    }
    let md = markdown(&series, &regressions);
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "series": series,
        "regressions": regressions,
    }))?;
    let svg = perf::git_counters::svg(&series);
    for (path, text) in [
        (&args.json, &json),
        (&args.markdown, &md),
        (&args.svg, &svg),
    ] {
        if let Some(p) = path {
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(p, text)?;
        }
    }
    if args.json.is_none() && args.markdown.is_none() {
        print!("{md}");
    }
    for r in &regressions {
        eprintln!("regression: {}: {}", r.scenario, r.detail);
    }
    Ok(if regressions.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--sizes` sorted, without repeats, all positive.
fn sizes(args: &Args) -> Result<Vec<usize>, Box<dyn std::error::Error>> {
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.is_empty() || sizes[0] == 0 {
        return Err("--sizes needs positive sizes".into());
    }
    Ok(sizes)
}

/// The scenarios `--scenarios` names (every one of `all` when it names none).
fn pick<S: Copy>(
    names: &[String],
    all: &[S],
    from_name: fn(&str) -> Option<S>,
) -> Result<Vec<S>, String> {
    if names.is_empty() {
        return Ok(all.to_vec());
    }
    names
        .iter()
        .map(|n| from_name(n).ok_or_else(|| format!("unknown scenario {n:?}")))
        .collect()
}
