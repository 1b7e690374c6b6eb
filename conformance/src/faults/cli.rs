//! The command line of the faults mode (`conformance faults`) and the options it shares with
//! the power-loss mode: which cases, which of their operations; the run, its summary and
//! exit status.

use std::path::PathBuf;

use crate::budget::Budget;
use crate::ci_output::result::TestResult;
use crate::faults::report::FaultsReport;
use crate::faults::trial::Side;
use crate::faults::{run_faults, FaultsConfig};
use crate::mode::args::Common;
use crate::mode::report::{finish, pretty, ModeReport};

/// What the faults and power-loss modes take: which cases, which operations of them.
#[derive(clap::Args, Clone, Debug)]
pub struct CaseArgs {
    /// Seed of the generated cases.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Cases [default: 3, or no limit with --seconds].
    #[arg(long)]
    pub cases: Option<u64>,
    /// A time budget: nothing starts after it; the report says how many cases ran.
    #[arg(long)]
    pub seconds: Option<u64>,
    /// Operations per generated case.
    #[arg(long, default_value_t = 20)]
    pub ops: usize,
    /// Operations of each case tried.
    #[arg(long, default_value_t = 4)]
    pub ops_per_case: usize,
    /// Cases run side by side (the faults mode; default: one per core).
    #[arg(long, default_value_t = std::thread::available_parallelism().map_or(1, |n| n.get()))]
    pub jobs: usize,
    #[command(flatten)]
    pub common: Common,
}

impl CaseArgs {
    /// The configuration these options make; our own binary is the fault worker.
    pub fn config(&self) -> Result<FaultsConfig, String> {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find my own binary for the fault worker: {e}"))?;
        let mut cfg = FaultsConfig::new(self.seed, exe);
        cfg.cases = self.cases.or(if self.seconds.is_some() {
            None
        } else {
            Some(3)
        });
        cfg.case_ops = self.ops;
        cfg.ops_per_case = self.ops_per_case;
        cfg.jobs = self.jobs.max(1);
        cfg.deadline = Budget::new(self.seconds, false).until(1.0);
        Ok(cfg)
    }
}

/// `conformance faults`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct FaultsArgs {
    #[command(flatten)]
    pub cases: CaseArgs,
    /// Stop after the first case with a defect that fails the run.
    #[arg(long)]
    pub fail_fast: bool,
    /// Where findings are written (the repository, its input and a git-only reproduce.sh
    /// with the strace injection; the first of each kind not in the registry).
    #[arg(long, default_value = "target/conformance/faults")]
    pub out: PathBuf,
    /// Fault points tried per side and operation at most (spread over all found).
    #[arg(long, default_value_t = 400)]
    pub max_points: usize,
    /// Only the fault points that inject these errors, comma-separated (ENOSPC, EIO,
    /// EINTR; SHORT for the short writes); every point without.
    #[arg(long, value_delimiter = ',')]
    pub errnos: Vec<String>,
    /// Our stack without fsync (as the generated mode runs it).
    #[arg(long)]
    pub no_fsync: bool,
    /// Leave out `git refs migrate` (each case's refs migrated to reftable and back under
    /// faults, git's side only).
    #[arg(long)]
    pub no_migrations: bool,
}

/// `conformance faults`: the exit status, or why the run could not be made.
pub fn main(a: &FaultsArgs) -> Result<i32, String> {
    let (known, env) = a.cases.common.open()?;
    let mut cfg = a.cases.config()?;
    cfg.max_points = a.max_points;
    cfg.errnos = (!a.errnos.is_empty()).then(|| a.errnos.clone());
    cfg.fsync = !a.no_fsync;
    cfg.migrations = !a.no_migrations;
    cfg.fail_fast = a.fail_fast;
    cfg.out = Some(a.out.clone());
    let r = run_faults(&env, &known, &cfg).map_err(|e| format!("faults: {e}"))?;
    finish(&r, &a.cases.common.outputs, &known)
}

impl ModeReport for FaultsReport {
    fn suite(&self) -> String {
        "reftable-rs conformance faults".into()
    }

    fn json(&self) -> String {
        pretty(self)
    }

    fn markdown(&self) -> String {
        FaultsReport::markdown(self)
    }

    fn known_defects(&self) -> Vec<&str> {
        FaultsReport::known_defects(self)
    }

    /// Each defect not known, then the counts per class on each side.
    fn lines(&self) -> Vec<String> {
        let mut lines = self.unexpected();
        let counts = |side| {
            (self.tally(side).iter())
                .map(|(c, n)| format!("{} {n}", c.name()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        lines.push(format!(
            "faults on git {}: {} cases, {} operations, {:.0} s{}\n  git: {} points, {} trials: {}\n  ours: {} points, {} trials: {}",
            self.version,
            self.cases,
            self.ops.len(),
            self.seconds,
            self.stop.as_ref().map_or(String::new(), |s| format!(" ({s})")),
            self.points(Side::Git),
            self.trials(Side::Git).count(),
            counts(Side::Git),
            self.points(Side::Ours),
            self.trials(Side::Ours).count(),
            counts(Side::Ours),
        ));
        lines
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        crate::faults::ci_tests::ci_tests(self)
    }

    fn failed(&self) -> bool {
        !self.clean()
    }
}
