//! `conformance impl`: another reftable implementation, through its adapter, put in each
//! role on the gate's generated cases and compared with git; the conformance matrix.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::ci_output::result::{TestResult, Verdict};
use crate::impls::case::{run_case, CaseRun, CaseSpec};
use crate::impls::check::Role;
use crate::impls::concurrent::{concurrent_round, RoundSpec};
use crate::impls::finding_dir::{replay, write_findings};
use crate::impls::minimize::minimize;
use crate::impls::process::Adapter;
use crate::impls::report::ImplReport;
use crate::impls::svg::matrix_svg;
use crate::impls::tally::Tally;
use crate::impls::which::{adapter_command, workspace};
use crate::lanes::take_in_turn;
use crate::mode::args::{default_jobs, Common};
use crate::mode::report::{finish, pretty, ModeReport};
use crate::setup::env::Env;

/// `conformance impl`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct ImplArgs {
    /// The implementation: ours, dulwich[=VERSION|PATH], libgit2=ADAPTER, cmd=COMMAND.
    #[arg(long = "impl", default_value = "ours")]
    pub implementation: String,
    /// The roles, comma-separated: reader, writer, interleaved, concurrent (one round per
    /// run), damaged (not by default: slower).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "reader,writer,interleaved,concurrent"
    )]
    pub roles: Vec<String>,
    /// Transactions per writer in the concurrent role's round.
    #[arg(long, default_value_t = 100)]
    pub concurrent_txns: u32,
    /// Where each distinct finding's directory (`finding.json`, `rerun.sh`) is written.
    #[arg(long, default_value = "target/conformance/cases")]
    pub out: PathBuf,
    /// Replay a finding's `finding.json` on the implementation `--impl` names: exit 1 while
    /// it shows, 0 once it does not.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Cases.
    #[arg(long, default_value_t = 120)]
    pub cases: u64,
    /// Operations per case.
    #[arg(long, default_value_t = 30)]
    pub ops: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Parallel jobs.
    #[arg(long, default_value_t = default_jobs())]
    pub jobs: usize,
    /// Seconds an adapter may take to answer one request before it is taken for hung.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Write the matrix as an SVG picture here.
    #[arg(long)]
    pub report_svg: Option<PathBuf>,
    /// Damaged copies of git's repository the damaged role reads at the end of each case.
    #[arg(long, default_value_t = 20)]
    pub damaged_trials: u64,
    /// Seconds to spend cutting down each distinct finding's operations (0: none).
    #[arg(long, default_value_t = 20)]
    pub minimize_seconds: u64,
    #[command(flatten)]
    pub common: Common,
}

/// `conformance impl`: the exit status, or why the run could not be made.
pub fn main(a: &ImplArgs) -> Result<i32, String> {
    let (known, env) = a.common.open()?;
    let roles: Vec<Role> = a
        .roles
        .iter()
        .map(|r| Role::parse(r))
        .collect::<Result<_, _>>()?;
    let (label, argv) = adapter_command(&a.implementation, &workspace())?;
    // Once the implementation is installed (which may build it), the files the mode, its
    // gits and the adapter write are bounded, as in every mode that runs git.
    crate::git::runaway::bound_file_writes()?;
    let timeout = Duration::from_secs(a.timeout);
    if let Some(file) = &a.replay {
        return replay(&env, &argv, timeout, file);
    }
    let hello = Adapter::start(&argv, timeout)?.hello.clone();
    eprintln!(
        "impl: {label}: {} {} ({})",
        hello.implementation,
        hello.version,
        argv.join(" ")
    );
    let start = Instant::now();
    let per_case: Vec<Role> = roles
        .iter()
        .copied()
        .filter(|r| *r != Role::Concurrent)
        .collect();
    let spec = |index| CaseSpec {
        argv: &argv,
        timeout,
        roles: &per_case,
        case: (a.seed, index, a.ops),
        damaged_trials: a.damaged_trials,
    };
    let (mut tally, ran, skipped) = if per_case.is_empty() {
        Default::default()
    } else {
        run_cases(&env, a, &spec)?
    };
    if roles.contains(&Role::Concurrent) {
        let round = RoundSpec {
            argv: &argv,
            name: &a.implementation,
            seed: a.seed,
            txns: a.concurrent_txns,
            out: &a.out,
            minimize: Duration::from_secs(a.minimize_seconds),
        };
        tally.add(concurrent_round(&env, &known, &hello, &round));
    }
    let mut r = ImplReport::new(hello, argv.clone(), roles.clone(), tally);
    let budget = Duration::from_secs(a.minimize_seconds);
    if !budget.is_zero() {
        for d in r.findings.iter_mut().filter(|d| !d.first.ops.is_empty()) {
            d.first = minimize(&env, &spec(d.first.index), &d.first, budget);
        }
    }
    r.git = env.git.version().to_string();
    (r.seed, r.ops, r.cases, r.skipped) = (a.seed, a.ops, ran, skipped);
    r.seconds = start.elapsed().as_secs_f64();
    crate::impls::known::label(&mut r, &known);
    write_findings(&mut r, &a.implementation, &a.out)?;
    if let Some(p) = &a.report_svg {
        std::fs::write(p, matrix_svg(&r))
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    finish(&r, &a.common.outputs, &known)
}

/// The cases on `jobs` threads: their tallies summed, how many ran, the others by reason.
fn run_cases<'a>(
    env: &Env,
    a: &ImplArgs,
    spec: &(dyn Fn(u64) -> CaseSpec<'a> + Sync),
) -> Result<(Tally, u64, std::collections::BTreeMap<String, u64>), String> {
    let out = Mutex::new((Tally::default(), 0u64, std::collections::BTreeMap::new()));
    let broken: Mutex<Option<String>> = Mutex::new(None);
    let go = || broken.lock().expect("lock").is_none();
    take_in_turn(a.jobs, go, |_, i| {
        if i >= a.cases {
            return false;
        }
        let run = run_case(env, &spec(i));
        let mut o = out.lock().expect("lock");
        match run {
            Ok(CaseRun::Ran(t)) => {
                o.0.add(t);
                o.1 += 1;
            }
            Ok(CaseRun::Skipped(why)) => *o.2.entry(why).or_insert(0) += 1,
            Err(e) => {
                let mut b = broken.lock().expect("lock");
                b.get_or_insert(format!("case {i}: {e}"));
                return false;
            }
        }
        true
    });
    if let Some(e) = broken.into_inner().expect("lock") {
        return Err(e);
    }
    Ok(out.into_inner().expect("lock"))
}

impl ModeReport for ImplReport {
    fn suite(&self) -> String {
        format!("reftable-rs conformance impl {}", self.hello.implementation)
    }

    fn json(&self) -> String {
        pretty(self)
    }

    fn markdown(&self) -> String {
        ImplReport::markdown(self)
    }

    fn known_defects(&self) -> Vec<&str> {
        Vec::new()
    }

    fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = (self.findings.iter())
            .filter(|d| d.first.known.is_none())
            .map(|d| {
                format!(
                    "finding: {} ({} cases): {}",
                    d.signature, d.cases, d.first.detail
                )
            })
            .collect();
        let known = self.findings.len() - self.unexpected();
        let fails = self.matrix.iter().filter(|m| m.outcome() == "FAIL").count();
        lines.push(format!(
            "{} {} against git {}: {} cases, {} cells failing of {}, {} distinct findings ({} known); {:.0} s",
            self.hello.implementation, self.hello.version, self.git, self.cases, fails,
            self.matrix.len(), self.findings.len(), known, self.seconds
        ));
        lines
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        let suite = format!("impl {} {}", self.hello.implementation, self.hello.version);
        (self.matrix.iter())
            .map(|m| {
                let name = format!("{} {}", m.role.name(), m.check.name());
                let known = self.known_for(m.role, m.check);
                let verdict = match (m.outcome(), known) {
                    ("FAIL", Some(id)) => Verdict::Known(id),
                    ("FAIL", None) => Verdict::Fail,
                    ("pass", _) => Verdict::Pass,
                    (o, _) => Verdict::Skip(o.to_string()),
                };
                TestResult::new(&suite, &name, verdict, String::new())
            })
            .collect()
    }

    fn failed(&self) -> bool {
        self.unexpected() > 0
    }
}
