//! The command line of the faults and power-loss modes (`conformance faults`,
//! `conformance powerloss`; the hidden `fault-worker` our side runs in): options into a
//! [`FaultsConfig`], reports written, a summary printed, test results for CI.

use std::path::PathBuf;

use conformance::budget::Budget;
use conformance::ci_output::sink::CiTargets;
use conformance::defects::registry::{self, ExpectedSet};
use conformance::defects::upstream::maintainers_section;
use conformance::faults::report::FaultsReport;
use conformance::faults::trial::Side;
use conformance::faults::{run_faults, FaultsConfig};
use conformance::setup::env::Env;

/// What both modes take: which cases, which operations of them, which git, where reports
/// go.
#[derive(clap::Args, Clone)]
pub struct CaseArgs {
    /// Seed of the generated cases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cases [default: 3, or no limit with --seconds].
    #[arg(long)]
    cases: Option<u64>,
    /// A time budget: nothing starts after it; the report says how many cases ran.
    #[arg(long)]
    seconds: Option<u64>,
    /// Operations per generated case.
    #[arg(long, default_value_t = 20)]
    ops: usize,
    /// Operations of each case tried.
    #[arg(long, default_value_t = 4)]
    ops_per_case: usize,
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

impl CaseArgs {
    /// The configuration these options make, and the registry they name; a failure to
    /// read it (or to find our own binary, the fault worker) ends the process.
    fn config(&self) -> (FaultsConfig, ExpectedSet) {
        let fail = |e: String| -> ! {
            eprintln!("conformance: {e}");
            std::process::exit(2);
        };
        let path = self.expected.clone().unwrap_or_else(registry::default_path);
        let known = ExpectedSet::load(&path).unwrap_or_else(|e| fail(e));
        let exe = std::env::current_exe().unwrap_or_else(|e| {
            fail(format!(
                "cannot find my own binary for the fault worker: {e}"
            ))
        });
        let mut cfg = FaultsConfig::new(self.seed, exe);
        cfg.cases = self.cases.or(if self.seconds.is_some() {
            None
        } else {
            Some(3)
        });
        cfg.case_ops = self.ops;
        cfg.ops_per_case = self.ops_per_case;
        cfg.deadline = Budget::new(self.seconds, false).until(1.0);
        (cfg, known)
    }

    /// Write the reports asked for.
    fn write_reports(&self, json: String, md: &str) {
        if let Some(p) = &self.report_json {
            let _ = std::fs::write(p, json);
        }
        if let Some(p) = &self.report_md {
            let _ = std::fs::write(p, md);
        }
    }
}

/// `conformance faults`'s options.
#[derive(clap::Args, Clone)]
pub struct FaultsArgs {
    #[command(flatten)]
    pub common: CaseArgs,
    /// Stop after the first case with a defect that fails the run.
    #[arg(long)]
    fail_fast: bool,
    /// Where findings are written (the repository, its input and a git-only reproduce.sh
    /// with the strace injection; the first of each kind not in the registry).
    #[arg(long, default_value = "target/conformance/faults")]
    out: PathBuf,
    /// Fault points tried per side and operation at most (spread over all found).
    #[arg(long, default_value_t = 400)]
    max_points: usize,
    /// Only the fault points that inject these errors, comma-separated (ENOSPC, EIO,
    /// EINTR; SHORT for the short writes); every point without.
    #[arg(long, value_delimiter = ',')]
    errnos: Vec<String>,
    /// Our stack without fsync (as the generated mode runs it).
    #[arg(long)]
    no_fsync: bool,
    /// Leave out `git refs migrate` (each case's refs migrated to reftable and back under
    /// faults, git's side only).
    #[arg(long)]
    no_migrations: bool,
}

/// `conformance faults`: the run, its reports, its lines and test results; the exit status.
pub fn faults(a: FaultsArgs, env: Env) -> i32 {
    let out = a.common.ci.targets();
    let (mut cfg, known) = a.common.config();
    cfg.max_points = a.max_points;
    cfg.errnos = (!a.errnos.is_empty()).then(|| a.errnos.clone());
    cfg.fsync = !a.no_fsync;
    cfg.migrations = !a.no_migrations;
    cfg.fail_fast = a.fail_fast;
    cfg.out = Some(a.out.clone());
    let r = run_faults(&env, &known, &cfg).unwrap_or_else(|e| {
        eprintln!("conformance: faults: {e}");
        std::process::exit(2);
    });
    let json = serde_json::to_string_pretty(&r).expect("json");
    let md = r.markdown() + &maintainers_section(&known, r.known_defects());
    a.common.write_reports(json, &md);
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

/// `conformance powerloss`: the run, its reports, its table and test results; the exit
/// status.
pub fn powerloss(a: CaseArgs, env: Env) -> i32 {
    let out = a.ci.targets();
    let (cfg, known) = a.config();
    let r = conformance::powerloss::run_powerloss(&env, &known, &cfg).unwrap_or_else(|e| {
        eprintln!("conformance: powerloss: {e}");
        std::process::exit(2);
    });
    let md = r.markdown() + &maintainers_section(&known, r.known_defects());
    a.write_reports(serde_json::to_string_pretty(&r).expect("json"), &md);
    out.say(md.trim_end());
    let tests = conformance::powerloss::ci_tests::ci_tests(&r);
    crate::ci_args::write_ci(&out, "reftable-rs conformance powerloss", &tests);
    i32::from(!r.clean())
}
