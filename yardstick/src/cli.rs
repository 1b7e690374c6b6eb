//! The command line of the yardsticks (`mutate-git`, `mutate-merge`, `coverage`): options
//! into the yardsticks' configurations, reports written, a summary printed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::build::default_build;
use crate::command::{builtin_mode, Cmd};
use crate::coverage::{run_coverage, CoverageConfig, COVERAGE_FILES, COVERAGE_VARS};
use crate::covreport::CoverageReport;
use crate::mutants::parse_shard;
use crate::mutate::{plan_only, run_mutate, MutateConfig};
use crate::report::{merge, report, MutationReport};
use crate::select::DEFAULT_FILES;

/// What both yardsticks take: the checkout, its build, the commands.
#[derive(clap::Args, Clone)]
pub struct Common {
    /// The git checkout, built once (a git developer's own tree). It is copied, never written.
    #[arg(long)]
    src: PathBuf,
    /// The build command, run in the copy (default: `make -jCORES` with the make variables
    /// the checkout's GIT-BUILD-OPTIONS and GIT-PREFIX record, then --make-vars).
    #[arg(long)]
    build: Option<String>,
    /// More make variables for the default build command (e.g. "DEVELOPER=1").
    #[arg(long, allow_hyphen_values = true)]
    make_vars: Option<String>,
    /// The program the build makes; the gate gets `bin-wrappers/PROGRAM` when there is one.
    #[arg(long, default_value = "git")]
    binary: String,
    /// Files (globs in the file name; `FILE:FUNCTION-GLOB` keeps some functions only),
    /// comma-separated.
    #[arg(long, value_delimiter = ',')]
    files: Vec<String>,
    /// The gate's own modes to run, comma-separated: run, migrate, concurrent, damaged,
    /// retries (the faults mode's EINTR and EAGAIN points).
    #[arg(long, value_delimiter = ',', default_value = "run")]
    modes: Vec<String>,
    /// A gate command instead of the modes (repeatable; `LABEL::` before it names it).
    /// Placeholders: {git} {base_git} {tree} {exe} {complexity} {scratch}.
    #[arg(long)]
    gate: Vec<String>,
    /// The user's test command, for the comparison column (repeatable, `LABEL::` names it).
    #[arg(long)]
    tests: Vec<String>,
    /// Time budget of a build, in seconds.
    #[arg(long, default_value_t = 3600)]
    build_timeout: u64,
    /// Write the JSON report here.
    #[arg(long)]
    report_json: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    report_md: Option<PathBuf>,
}

/// `mutate-git`'s own options.
#[derive(clap::Args, Clone)]
pub struct MutateArgs {
    #[command(flatten)]
    common: Common,
    /// The run's directory: plan, one result per mutant, logs, the copy (resumed when it
    /// exists).
    #[arg(long, default_value = "target/yardstick/mutate")]
    out: PathBuf,
    /// Where the copy of the checkout goes (default OUT/tree).
    #[arg(long)]
    work: Option<PathBuf>,
    /// Only functions matching these globs, comma-separated.
    #[arg(long, value_delimiter = ',')]
    functions: Vec<String>,
    /// Only the mutant with this id (as --list and the reports print it; repeatable): to run
    /// known mutants, say survivors, again.
    #[arg(long)]
    only: Vec<String>,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Mutants in the sample (0: every one).
    #[arg(long, default_value_t = 100)]
    sample: usize,
    /// Run only shard K of N of the sample (1-based), e.g. 2/4.
    #[arg(long)]
    shard: Option<String>,
    /// Also compare system calls per ref with the unmutated build (`complexity --counters`,
    /// needs strace and the perf crate's `complexity` binary beside this one) when the modes pass.
    #[arg(long)]
    counters: bool,
    /// The counters comparison command instead of the default (implies --counters).
    #[arg(long)]
    counters_cmd: Option<String>,
    /// Time budget of each command on a mutant, in seconds (default: three times its run on
    /// the unmutated build, at least 60).
    #[arg(long)]
    timeout: Option<u64>,
    /// Start no new mutant after this many seconds (the run resumes later).
    #[arg(long)]
    seconds: Option<u64>,
    /// Run at most this many mutants now (the run resumes later).
    #[arg(long)]
    max_mutants: Option<usize>,
    /// Print the shard's mutants and stop (nothing is built).
    #[arg(long)]
    list: bool,
    /// Run every gate and test command on each mutant, not only up to the first that fails:
    /// slower, but each command's kills are complete, so `mutate-merge --gate-labels` can
    /// score one gate command against another (say an older gate build against this one).
    #[arg(long)]
    every_command: bool,
}

/// `coverage`'s own options.
#[derive(clap::Args, Clone)]
pub struct CoverageArgs {
    #[command(flatten)]
    common: Common,
    /// Where runs, logs and (without --build-dir) the coverage build go.
    #[arg(long, default_value = "target/yardstick/coverage")]
    out: PathBuf,
    /// A coverage build to use, or to make there (default OUT/tree).
    #[arg(long)]
    build_dir: Option<PathBuf>,
    /// Time budget of each command, in seconds.
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
    /// Read back runs whose command is unchanged instead of running them again.
    #[arg(long)]
    reuse: bool,
    /// Functions listed per "lines only one side reaches" table.
    #[arg(long, default_value_t = 20)]
    top: usize,
}

/// The gate's commands: `--gate`, else the named modes.
fn gate_cmds(c: &Common) -> Result<Vec<Cmd>, String> {
    if !c.gate.is_empty() {
        return Ok(labelled(&c.gate, "gate"));
    }
    c.modes.iter().map(|m| builtin_mode(m)).collect()
}

fn tests_cmds(c: &Common) -> Vec<Cmd> {
    labelled(&c.tests, "tests")
}

/// Commands from the command line, labelled `what` (one) or `what 1`, `what 2`, ... (several)
/// unless they name themselves (`LABEL::`).
fn labelled(texts: &[String], what: &str) -> Vec<Cmd> {
    let label = |i: usize| match texts.len() {
        1 => what.to_string(),
        _ => format!("{what} {}", i + 1),
    };
    let each = texts.iter().enumerate();
    each.map(|(i, t)| Cmd::parse(t, label(i))).collect()
}

fn build_cmd(c: &Common, extra: &str) -> String {
    if let Some(b) = &c.build {
        return b.clone();
    }
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut vars: Vec<String> = c.make_vars.iter().map(String::clone).collect();
    if !extra.is_empty() {
        vars.push(extra.to_string());
    }
    default_build(&c.src, jobs, &vars)
}

/// `p` made absolute: commands run in the copy, not here.
fn abs(p: &Path) -> Result<PathBuf, String> {
    std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// The gate's binary (`{exe}`): this one when the yardstick runs inside `conformance`, else
/// the `conformance` beside the `yardstick` binary.
fn exe() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find my own binary: {e}"))?;
    if me.file_stem().is_some_and(|s| s == "conformance") {
        return Ok(me);
    }
    Ok(me.with_file_name("conformance"))
}

fn write_reports<T: serde::Serialize>(
    json: Option<&Path>,
    md: Option<&Path>,
    value: &T,
    text: &str,
) -> Result<(), String> {
    let write = |p: &Path, text: &str| {
        std::fs::write(p, text).map_err(|e| format!("cannot write the report {}: {e}", p.display()))
    };
    if let Some(p) = json {
        write(p, &serde_json::to_string_pretty(value).expect("json"))?;
    }
    if let Some(p) = md {
        write(p, text)?;
    }
    Ok(())
}

fn mutate_config(a: &MutateArgs) -> Result<MutateConfig, String> {
    let c = &a.common;
    let complexity = exe()?.with_file_name("complexity");
    let counters = match (&a.counters_cmd, a.counters) {
        (Some(t), _) => Some(Cmd::parse(t, "counters".into())),
        (None, true) => {
            if !complexity.is_file() {
                return Err(format!(
                    "--counters needs {} (cargo build --release -p perf --bin complexity)",
                    complexity.display()
                ));
            }
            Some(Cmd {
                label: "counters".into(),
                text: "{complexity} --counters --sizes 100,200,400 --git {base_git} --git {git} --markdown {scratch}/counters.md".into(),
            })
        }
        (None, false) => None,
    };
    Ok(MutateConfig {
        src: abs(&c.src)?,
        out: abs(&a.out)?,
        work: a.work.as_deref().map(abs).transpose()?,
        build: build_cmd(c, ""),
        binary: c.binary.clone(),
        files: if c.files.is_empty() {
            DEFAULT_FILES.map(String::from).to_vec()
        } else {
            c.files.clone()
        },
        functions: a.functions.clone(),
        only: a.only.clone(),
        seed: a.seed,
        sample: a.sample,
        shard: a.shard.as_deref().map_or(Ok((1, 1)), parse_shard)?,
        gate: gate_cmds(c)?,
        tests: tests_cmds(c),
        counters,
        timeout: a.timeout.map(Duration::from_secs),
        build_timeout: Duration::from_secs(c.build_timeout),
        budget: a.seconds.map(Duration::from_secs),
        max_mutants: a.max_mutants,
        every_command: a.every_command,
        exe: exe()?,
        complexity,
    })
}

/// `conformance mutate-git`: the exit status, or why the run could not be made (exit 2).
pub fn mutate_git(a: MutateArgs) -> Result<i32, String> {
    let cfg = mutate_config(&a)?;
    if a.list {
        let plan = plan_only(&cfg)?;
        for m in &plan.mutants {
            println!("{}\t{}", m.id, m.function);
        }
        eprintln!(
            "{} mutants in shard {}/{} of a sample of {} from {} candidates",
            plan.mutants.len(),
            plan.shard.0,
            plan.shard.1,
            plan.sampled,
            plan.selection.candidates
        );
        return Ok(0);
    }
    let o = run_mutate(&cfg)?;
    let r = report(&[(o.plan.clone(), o.results.clone())])?;
    let md = r.markdown();
    write_reports(
        Some(&a.out.join("report.json")),
        Some(&a.out.join("report.md")),
        &r,
        &md,
    )?;
    write_reports(
        a.common.report_json.as_deref(),
        a.common.report_md.as_deref(),
        &r,
        &md,
    )?;
    print_mutation(&r);
    let left = o.plan.mutants.len() - o.results.len();
    println!(
        "{} mutants run now; {left} left in this shard{}",
        o.ran_now,
        if left > 0 {
            " (run again to resume)"
        } else {
            ""
        }
    );
    Ok(0)
}

fn print_mutation(r: &MutationReport) {
    let t = &r.total;
    let classes: Vec<String> = t.classes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!(
        "{} mutants ({}): {} viable; gate killed {}, tests killed {}, either {}; median {:.1} s per mutant",
        t.mutants, classes.join(", "), t.viable, t.gate_killed, t.tests_killed, t.either_killed, r.median_seconds
    );
}

/// `mutate-merge`'s options.
#[derive(clap::Args, Clone)]
pub struct MergeArgs {
    /// The shards' --out directories.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Write the JSON report here.
    #[arg(long)]
    report_json: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    report_md: Option<PathBuf>,
    /// Count only these gate commands as the gate (labels, comma-separated), the others
    /// left out of the classes: one gate build scored against another from one run made
    /// with `--every-command`.
    #[arg(long, value_delimiter = ',')]
    gate_labels: Vec<String>,
}

/// `conformance mutate-merge`: the exit status, or why the merge could not be made.
pub fn mutate_merge(a: MergeArgs) -> Result<i32, String> {
    let r = merge(&a.dirs, &a.gate_labels)?;
    write_reports(
        a.report_json.as_deref(),
        a.report_md.as_deref(),
        &r,
        &r.markdown(),
    )?;
    print_mutation(&r);
    Ok(0)
}

/// `conformance coverage`: the exit status, or why the measurement could not be made.
pub fn coverage(a: CoverageArgs) -> Result<i32, String> {
    let c = &a.common;
    let cfg = CoverageConfig {
        src: abs(&c.src)?,
        out: abs(&a.out)?,
        build_dir: a.build_dir.as_deref().map(abs).transpose()?,
        build: build_cmd(c, COVERAGE_VARS),
        binary: c.binary.clone(),
        files: if c.files.is_empty() {
            COVERAGE_FILES.map(String::from).to_vec()
        } else {
            c.files.clone()
        },
        gate: gate_cmds(c)?,
        tests: tests_cmds(c),
        timeout: Duration::from_secs(a.timeout),
        build_timeout: Duration::from_secs(c.build_timeout),
        reuse: a.reuse,
        exe: exe()?,
    };
    let (tree, runs) = run_coverage(&cfg)?;
    let r = CoverageReport::new(&tree.dir.display().to_string(), &runs, a.top);
    let md = r.markdown();
    write_reports(
        Some(&a.out.join("report.json")),
        Some(&a.out.join("report.md")),
        &r,
        &md,
    )?;
    write_reports(c.report_json.as_deref(), c.report_md.as_deref(), &r, &md)?;
    for s in r.runs.iter().chain(&r.groups) {
        let t = &s.total;
        println!(
            "{}: lines {}/{}, branches {}/{}, functions {}/{} ({:.0} s{})",
            s.label,
            t.lines_hit,
            t.lines,
            t.branches_hit,
            t.branches,
            t.functions_hit,
            t.functions,
            s.seconds,
            if s.exit.is_empty() {
                String::new()
            } else {
                format!(", exit {}", s.exit)
            }
        );
    }
    Ok(0)
}
