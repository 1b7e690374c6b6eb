//! The migration mode's command line (`conformance migrate`): options into a
//! [`MigrateConfig`], the run, its summary and exit status.

use std::path::PathBuf;

use crate::budget::Budget;
use crate::ci_output::result::TestResult;
use crate::migrate::{run_migrate_within, MigrateConfig, MigrationReport};
use crate::mode::args::Common;
use crate::mode::report::{finish, pretty, ModeReport};

/// `conformance migrate`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct MigrateArgs {
    /// Cases [default: 40, or no limit with --seconds].
    #[arg(long)]
    pub cases: Option<u64>,
    /// Operations per case.
    #[arg(long, default_value_t = 30)]
    pub ops: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run only this case of the seed's list (as a failing case's rerun.sh does).
    #[arg(long, conflicts_with_all = ["cases", "seconds"])]
    pub case: Option<u64>,
    /// A time budget: cases are taken in order while one as long as the longest so far
    /// still ends within it; the report says how many ran.
    #[arg(long)]
    pub seconds: Option<u64>,
    /// Stop at the first case with an unexpected divergence.
    #[arg(long)]
    pub fail_fast: bool,
    /// Write a case with an unexpected divergence here (its repositories, the differences,
    /// rerun.sh); by default none is written.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

/// A migration run's report with what its CI results name.
pub struct MigrateRun {
    /// The report.
    pub report: MigrationReport,
    /// Seed and operations per case (each case's rerun command).
    pub seed_ops: (u64, usize),
}

/// `conformance migrate`: the exit status, or why the run could not be made.
pub fn main(a: &MigrateArgs) -> Result<i32, String> {
    let (known, e) = a.common.open()?;
    let budget = Budget::new(a.seconds, a.fail_fast);
    let default_cases = if budget.is_timed() { u64::MAX } else { 40 };
    let cfg = MigrateConfig {
        seed: a.seed,
        cases: a.cases.unwrap_or(default_cases),
        ops: a.ops,
        only: a.case,
        out: a.out.clone(),
    };
    let report = run_migrate_within(&e, &known, &cfg, &budget)?;
    let run = MigrateRun {
        report,
        seed_ops: (a.seed, a.ops),
    };
    finish(&run, &a.common.outputs, &known)
}

impl ModeReport for MigrateRun {
    fn suite(&self) -> String {
        "reftable-rs conformance migrate".into()
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
        let mut lines: Vec<String> = r.skipped.iter().map(|k| format!("skipped {k}")).collect();
        for d in &r.divergences {
            let known = d.finding.expected.as_ref();
            lines.push(format!(
                "{} {}{}: {}",
                d.case,
                d.finding.class,
                known.map(|e| format!(" (known: {e})")).unwrap_or_default(),
                d.finding.detail.lines().next().unwrap_or("")
            ));
        }
        lines.push(format!(
            "git {}: {} cases, {} operations replayed, {} migrations ({} refs, {} reflog entries, reflogs {}), {} tables byte-identical, {} refused by both, {} skipped; back to files {}/{} identical; {:.0} s; {} unexpected divergences, {} expected",
            r.version, r.cases, r.operations, r.migrations, r.refs, r.log_entries,
            if r.with_reflogs { "migrated" } else { "left out" },
            r.identical_tables, r.both_refused, r.skipped.len(), r.back_identical, r.back_compared, r.seconds, r.unexpected(), r.divergences.len() - r.unexpected()
        ));
        if let Some(why) = &r.stopped {
            lines.push(format!("{} cases ran; the run {why}", r.cases));
        }
        lines
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        let (seed, ops) = self.seed_ops;
        crate::migrate::ci_tests::ci_tests(&self.report, seed, ops)
    }

    fn failed(&self) -> bool {
        self.report.unexpected() > 0
    }
}
