//! The damaged mode's command line (`conformance damaged`): options into a
//! [`DamageConfig`], the run, its summary and exit status.

use std::path::PathBuf;

use crate::ci_output::result::TestResult;
use crate::damaged::class::Class;
use crate::damaged::report::Finding;
use crate::damaged::{run_damaged, DamageConfig, DamageReport};
use crate::mode::args::{default_jobs, Common};
use crate::mode::report::{finish, pretty, ModeReport};

/// `conformance damaged`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct DamagedArgs {
    /// Seed (of the bases and of the damage).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Undamaged stacks to start from (the git side of the gate's cases of the seed; every
    /// other one compacted by `git pack-refs`).
    #[arg(long, default_value_t = 8)]
    pub bases: u64,
    /// Damaged stacks to try at most.
    #[arg(long, default_value_t = 2000)]
    pub trials: u64,
    /// Stop trying after this many seconds [default: 600].
    #[arg(long)]
    pub seconds: Option<u64>,
    /// A command still running after this many seconds is a hang.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// Parallel jobs.
    #[arg(long, default_value_t = default_jobs())]
    pub jobs: usize,
    /// Where findings (damaged repository, reproduce.sh) are written.
    #[arg(long, default_value = "target/conformance/damaged")]
    pub out: PathBuf,
    /// Do not take backtraces of git's crashes with gdb.
    #[arg(long)]
    pub no_gdb: bool,
    /// Fail unless git crashed at this many distinct sites: a check that the damage still
    /// reaches a git known to crash on damaged tables (2.47.3 does at more than ten).
    #[arg(long, default_value_t = 0)]
    pub min_git_crash_sites: usize,
    /// Stop trying at the first finding on our side (trials already running finish).
    #[arg(long)]
    pub fail_fast: bool,
    /// Write findings with the damage first seen, not minimized: minimizing comes after the
    /// --seconds budget, so this bounds the whole run by it.
    #[arg(long)]
    pub no_minimize: bool,
    #[command(flatten)]
    pub common: Common,
}

/// A damaged-stack run's report and the crash sites it had to reach.
pub struct DamagedRun {
    /// The report.
    pub report: DamageReport,
    /// `--min-git-crash-sites`.
    pub min_sites: usize,
}

/// `conformance damaged`: the exit status, or why the run could not be made.
pub fn main(a: &DamagedArgs) -> Result<i32, String> {
    let (known, e) = a.common.open()?;
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
    let cfg = DamageConfig {
        seed: a.seed,
        bases: a.bases,
        trials: a.trials,
        budget: std::time::Duration::from_secs(a.seconds.unwrap_or(600)),
        timeout: std::time::Duration::from_secs(a.timeout),
        jobs: a.jobs,
        out: a.out.clone(),
        gdb,
        minimize: !a.no_minimize,
        fail_fast: a.fail_fast,
    };
    let report = run_damaged(&e, &known, &cfg)?;
    let run = DamagedRun {
        report,
        min_sites: a.min_git_crash_sites,
    };
    finish(&run, &a.common.outputs, &known)
}

impl DamagedRun {
    /// Distinct sites where git crashed.
    fn crash_sites(&self) -> usize {
        let crashes = self.report.git_findings.iter();
        crashes.filter(|f| f.class == Class::Crash).count()
    }

    /// Whether the damage reaches fewer crash sites than asked.
    fn too_few_sites(&self) -> bool {
        self.crash_sites() < self.min_sites
    }
}

impl ModeReport for DamagedRun {
    fn suite(&self) -> String {
        "reftable-rs conformance damaged".into()
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
        let r = &self.report;
        let mut lines: Vec<String> = (r.ours_findings.iter().chain(&r.git_findings))
            .map(finding_line)
            .collect();
        let crashes = self.crash_sites();
        lines.push(format!(
            "git {}: {} bases, {} damaged stacks, {} commands, {:.0} s; git: {} distinct findings ({crashes} crash sites); ours: {} findings",
            r.version, r.bases, r.trials, r.commands, r.seconds, r.git_findings.len(), r.ours_findings.len()
        ));
        if let Some(why) = &r.stopped {
            lines.push(format!("the run {why}"));
        }
        if self.too_few_sites() {
            lines.push(format!(
                "git crashed at {crashes} distinct sites, fewer than --min-git-crash-sites {}: the damage no longer reaches what it used to",
                self.min_sites
            ));
            return lines;
        }
        lines.extend(r.stale_known.iter().map(|st| format!("stale: {}", st.line)));
        lines
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        crate::damaged::ci_tests::ci_tests(&self.report, self.min_sites)
    }

    fn failed(&self) -> bool {
        let r = &self.report;
        // A sanitizer built into git reporting a leak or a bad access is a defect of git's no
        // reading of the damage excuses: it fails the run unless the registry knows it.
        let sanitized = |f: &Finding| f.class == Class::SanitizerReport && f.known.is_none();
        self.too_few_sites()
            || !r.ours_findings.is_empty()
            || !r.stale_known.is_empty()
            || r.git_findings.iter().any(sanitized)
    }
}

/// A finding's line: who, what, where, how often, where it was written.
fn finding_line(f: &Finding) -> String {
    let dir = f.case_dir.as_ref().map(|d| format!(" -> {d}"));
    format!(
        "{} {} on {}: {} (seen {}){}",
        f.side,
        f.class,
        f.command,
        f.signature,
        f.count,
        dir.unwrap_or_default()
    )
}
