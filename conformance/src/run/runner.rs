//! A gate run: generated cases on every git under test, divergences written as case
//! directories and minimized, known git defects told apart, one report section per git.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::budget::Budget;

use crate::finding::divergence::Divergence;
use crate::lanes::take_in_turn;

use crate::cases::case::{run_concrete, run_generated_with_reach};
use crate::cases::outcome::CaseResult;

use crate::cases::casedir::{self, CaseFile};
use crate::defects::registry::{Expected, ExpectedSet};
use crate::ops::Op;
use crate::run::report::{
    add_comparisons, CaseSummary, DivergenceRecord, GitDefect, GitSection, Report,
};
use crate::setup::env::Env;

/// What to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Cases per git.
    pub cases: u64,
    /// Operations per case.
    pub ops: usize,
    /// Seed of the run.
    pub seed: u64,
    /// Parallel jobs.
    pub jobs: usize,
    /// Shard (k, n), 1-based.
    pub shard: (u64, u64),
    /// Where divergent cases go.
    pub out: PathBuf,
    /// Minimize divergent cases.
    pub minimize: bool,
}

/// A divergent case waiting for minimization.
struct Pending {
    git: usize,
    record: usize,
    /// Its entry in the report's case runs.
    case_run: usize,
    dir: PathBuf,
}

/// Run the gate on every env. Progress (and a first notice of each divergence) goes to
/// stderr on a terminal; the caller prints the report's divergence lines at the end.
pub fn run(envs: &[Env], known: &ExpectedSet, cfg: &RunConfig) -> Result<Report, String> {
    run_within(envs, known, cfg, &Budget::unlimited())
}

/// The share of a time budget the cases may start in once a divergence waits to be
/// minimized; minimizing takes the rest.
const CASE_SHARE: f64 = 0.85;

/// What a time budget keeps at its end, while nothing waits to be minimized, for the cases
/// still running (one takes up to about 3 s) and the reports.
const CASE_MARGIN: Duration = Duration::from_secs(3);

/// What a time budget keeps for writing the reports after minimizing.
const REPORT_MARGIN: Duration = Duration::from_millis(1500);

/// [`run`] within `budget`: cases are taken in order until the list ends, the budget is
/// nearly used (its case share once a divergence waits to be minimized), or (with
/// fail-fast) one diverges unexpectedly; minimizing stops at the budget's end. Without a
/// limit it is [`run`].
pub fn run_within(
    envs: &[Env],
    known: &ExpectedSet,
    cfg: &RunConfig,
    budget: &Budget,
) -> Result<Report, String> {
    let terminal = std::io::stderr().is_terminal();
    let report = new_report(envs, known, cfg);
    let list = CaseList::new(cfg, envs.len());
    let bar = progress_bar(list.len(), terminal);
    let shared = Mutex::new((report, Vec::<Pending>::new()));
    // Cases may start until the budget's end less a margin; once an unexpected divergence
    // waits to be minimized, only within the case share.
    let diverged = AtomicBool::new(false);
    // A case that cannot be set up (git cannot even make its repository) ends the run.
    let broken: Mutex<Option<String>> = Mutex::new(None);
    let halted = AtomicBool::new(false);
    let case_end = || {
        if cfg.minimize && diverged.load(Ordering::SeqCst) {
            budget.until(CASE_SHARE)
        } else {
            budget.end_less(CASE_MARGIN)
        }
    };
    let start = Instant::now();
    let cpu_start = crate::cpu::CpuTimes::now();
    let go = || !halted.load(Ordering::SeqCst) && budget.may_start(case_end());
    take_in_turn(cfg.jobs, go, |_, n| {
        let Some((index, g)) = list.get(n) else {
            return false;
        };
        let case = match run_case(envs, known, cfg, index, g) {
            Ok(case) => case,
            Err(e) => {
                broken.lock().expect("lock").get_or_insert(e);
                halted.store(true, Ordering::SeqCst);
                return false;
            }
        };
        if case.records.iter().any(|r| r.expected.is_none()) {
            diverged.store(true, Ordering::SeqCst);
            budget.failed();
        }
        let mut guard = shared.lock().expect("lock");
        let (r, pending) = &mut *guard;
        record_case(r, pending, &envs[g], known, &bar, case);
        true
    });
    bar.finish_and_clear();
    if let Some(e) = broken.into_inner().expect("lock") {
        return Err(e);
    }
    let (mut report, pending) = shared.into_inner().expect("lock");
    report.wall_seconds = start.elapsed().as_secs_f64();
    if let (Some(a), Some(b)) = (cpu_start, crate::cpu::CpuTimes::now()) {
        let spent = b.since(a);
        report.harness_cpu_seconds = Some(spent.own);
        report.child_cpu_seconds = Some(spent.children);
    }
    report.cases = report.gits.iter().map(|g| g.cases).max().unwrap_or(0);
    report.stopped = budget.stop_line();
    add_totals(&mut report, cfg.jobs);
    if cfg.minimize && !pending.is_empty() {
        minimize_pending(
            &mut report,
            envs,
            pending,
            known,
            budget.end_less(REPORT_MARGIN),
        );
    }
    Ok(report)
}

/// The run's list of (case index, git) in the order they are taken: the shard's case
/// indices, each on every git in turn; without end when `cases` is `u64::MAX` (a time
/// budget ends it).
struct CaseList {
    /// The shard's first case index.
    first: u64,
    /// The distance between its indices (the number of shards).
    step: u64,
    /// Case indices below this one.
    cases: u64,
    /// gits each case runs on.
    gits: usize,
}

impl CaseList {
    fn new(cfg: &RunConfig, gits: usize) -> CaseList {
        let (k, n) = cfg.shard;
        CaseList {
            first: k - 1,
            step: n,
            cases: cfg.cases,
            gits: gits.max(1),
        }
    }

    /// Item `i`, or `None` past the end.
    fn get(&self, i: u64) -> Option<(u64, usize)> {
        let gits = self.gits as u64;
        let index = self.first.checked_add((i / gits).checked_mul(self.step)?)?;
        (index < self.cases).then_some((index, (i % gits) as usize))
    }

    /// Items in the list (`u64::MAX` when it has no end).
    fn len(&self) -> u64 {
        if self.cases == u64::MAX {
            return u64::MAX;
        }
        let indices = self.cases.saturating_sub(self.first).div_ceil(self.step);
        indices.saturating_mul(self.gits as u64)
    }
}

/// The report before any case: the run's figures and an empty section per git (with the
/// known divergences in its range that are stale).
fn new_report(envs: &[Env], known: &ExpectedSet, cfg: &RunConfig) -> Report {
    let (k, n) = cfg.shard;
    let mut report = Report {
        git_version: envs
            .first()
            .map(|e| e.git.version().to_string())
            .unwrap_or_default(),
        seed: cfg.seed,
        shard: format!("{k}/{n}"),
        expected_file: known.path.display().to_string(),
        ..Default::default()
    };
    for env in envs {
        let p = &env.profile;
        let stale = crate::run::stale::stale(known, env, cfg.jobs);
        report.stale_expected += stale.len() as u64;
        report.gits.push(GitSection {
            path: env.git.bin().display().to_string(),
            version: p.version.clone(),
            build_options: p.build_options.clone(),
            commit: p.commit.clone(),
            profile: Some(p.clone()),
            stale_expected: stale,
            ..Default::default()
        });
    }
    report
}

/// A progress bar of `len` cases (`u64::MAX`: a count without end), drawn only on a
/// terminal.
fn progress_bar(len: u64, terminal: bool) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    if terminal {
        let template = if len == u64::MAX {
            "{pos} cases {msg} [{elapsed}]"
        } else {
            "{bar:40} {pos}/{len} cases {msg} [{elapsed}]"
        };
        bar.set_style(indicatif::ProgressStyle::with_template(template).expect("template"));
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

/// One case run on one git, before it goes into the report.
struct CaseRun {
    /// The case's index in the seed's list.
    index: u64,
    /// The git's index.
    g: usize,
    /// What the case found.
    result: CaseResult,
    /// Seconds the case took.
    secs: f64,
    /// Its divergences, each matched against the known git defects.
    records: Vec<DivergenceRecord>,
    /// The known git defects they match.
    defects: Vec<Expected>,
    /// The case directory, written when a divergence is unexpected.
    dir: Option<PathBuf>,
}

/// Run case `index` on git `g`: its divergences as records, known defects told apart, the
/// case directory written when one is unexpected; or why the case could not be set up.
fn run_case(
    envs: &[Env],
    known: &ExpectedSet,
    cfg: &RunConfig,
    index: u64,
    g: usize,
) -> Result<CaseRun, String> {
    let env = &envs[g];
    let t = Instant::now();
    let result = run_generated_with_reach(env, cfg.seed, index, cfg.ops)
        .map_err(|e| format!("git {}: case {index}: setup failed: {e}", env.git.version()))?;
    let secs = t.elapsed().as_secs_f64();
    let version = env.profile.git_version();
    let case = format!("seed{}-case{index}", cfg.seed);
    let mut records = Vec::new();
    let mut defects = Vec::new();
    for d in &result.divergences {
        let known_as = known.matching(&version, d);
        records.push(DivergenceRecord {
            case: case.clone(),
            git: env.git.version().to_string(),
            git_path: env.git.bin().display().to_string(),
            check: format!("{:?}", d.check).to_lowercase(),
            class: d.class.clone(),
            step: d.step,
            detail: d.detail.clone(),
            ops: result.ops.len(),
            expected: known_as.map(|e| e.id.clone()),
            ..Default::default()
        });
        if let Some(e) = known_as {
            defects.push(e.clone());
        }
    }
    let unexpected = records.iter().filter(|r| r.expected.is_none()).count();
    let mut dir = None;
    if unexpected > 0 {
        let d = case_dir(&cfg.out, &case, envs.len(), g, env);
        write_case(env, &d, cfg.seed, Some(index), &result);
        for r in records.iter_mut() {
            r.case_dir = d.display().to_string();
        }
        dir = Some(d);
    }
    Ok(CaseRun {
        index,
        g,
        result,
        secs,
        records,
        defects,
        dir,
    })
}

/// Add a case run to the report (its git's figures, the defects, the divergences, each
/// unexpected one noticed on the progress bar and queued for minimization).
fn record_case(
    r: &mut Report,
    pending: &mut Vec<Pending>,
    env: &Env,
    known: &ExpectedSet,
    bar: &indicatif::ProgressBar,
    case: CaseRun,
) {
    let CaseRun {
        index,
        g,
        result,
        secs,
        records,
        defects,
        dir,
    } = case;
    let unexpected = records.iter().filter(|r| r.expected.is_none()).count();
    let sec = &mut r.gits[g];
    sec.cases += 1;
    sec.operations += result.ops.len() as u64;
    sec.case_seconds += secs;
    sec.unchanged_skipped += result.unchanged;
    sec.git_turns_waited += result.git_turns_waited;
    for (check, c) in &result.check_costs {
        sec.check_costs.entry(check.clone()).or_default().add(*c);
    }
    for (probe, n) in &result.probes_skipped {
        *sec.probes_skipped.entry(probe.clone()).or_default() += n;
    }
    sec.twin_cases += u64::from(result.twin_followed);
    if let Some(why) = &result.twin_retired {
        let shape = crate::finding::shape::detail_shape(why);
        *sec.twin_retired.entry(shape).or_default() += 1;
    }
    for (label, n) in &result.variants {
        *sec.variants.entry(label.clone()).or_default() += n;
    }
    sec.unexpected_divergences += unexpected as u64;
    sec.expected_divergences += (records.len() - unexpected) as u64;
    add_comparisons(&mut sec.comparisons, &result.comparisons);
    for (k, [n, ok]) in &result.kinds {
        let e = sec.kinds.entry(k.clone()).or_default();
        e[0] += n;
        e[1] += ok;
    }
    for e in defects {
        add_defect(r, env, known, &e);
    }
    let case_run = r.case_runs.len();
    r.case_runs.push(CaseSummary {
        index,
        git: g,
        operations: result.ops.len(),
        seconds: secs,
        divergences: (r.divergences.len()..r.divergences.len() + records.len()).collect(),
        dir: dir.as_ref().map(|d| d.display().to_string()),
        min_dir: None,
    });
    for rec in records {
        if rec.expected.is_none() {
            // On a terminal, a first notice now; every line (minimized) is
            // printed at the end of the run.
            bar.println(rec.line());
            if let Some(d) = &dir {
                pending.push(Pending {
                    git: g,
                    record: r.divergences.len(),
                    case_run,
                    dir: d.clone(),
                });
            }
        }
        r.divergences.push(rec);
    }
    let total: u64 = r.gits.iter().map(|x| x.unexpected_divergences).sum();
    bar.set_message(format!("{total} unexpected"));
    bar.inc(1);
}

/// The run's totals over every git, and each git's speed over its share of the `jobs`.
fn add_totals(report: &mut Report, jobs: usize) {
    report.operations = report.gits.iter().map(|g| g.operations).sum();
    report.operations_per_second = report.operations as f64 / report.wall_seconds.max(1e-9);
    let jobs = jobs.max(1) as f64;
    for g in &mut report.gits {
        // This git's share of the jobs' time: its case seconds spread over the jobs.
        g.operations_per_second = g.operations as f64 * jobs / g.case_seconds.max(1e-9);
    }
    report.unexpected_divergences = report.gits.iter().map(|g| g.unexpected_divergences).sum();
    report.expected_divergences = report.gits.iter().map(|g| g.expected_divergences).sum();
}

/// Minimize the divergent cases waiting in `pending`, in order, and note the result in
/// their records, keeping divergences that are no known defect of `known`; none is begun,
/// and no case run, after `deadline`.
fn minimize_pending(
    report: &mut Report,
    envs: &[Env],
    pending: Vec<Pending>,
    known: &ExpectedSet,
    deadline: Option<Instant>,
) {
    let t = Instant::now();
    for p in pending {
        if crate::budget::past(deadline) {
            break;
        }
        if let Some((min_dir, ops)) = minimize_dir(&envs[p.git], &p.dir, known, deadline) {
            let r = &mut report.divergences[p.record];
            r.minimized_ops = ops.iter().map(Op::summary).collect();
            r.case_dir = format!("{} (minimized: {})", p.dir.display(), min_dir.display());
            report.case_runs[p.case_run].min_dir = Some(min_dir.display().to_string());
        }
    }
    report.minimize_seconds = t.elapsed().as_secs_f64();
}

fn case_dir(out: &Path, case: &str, gits: usize, g: usize, env: &Env) -> PathBuf {
    if gits == 1 {
        out.join(case)
    } else {
        let v: String = env
            .git
            .version()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        out.join(format!("{case}-git{g}-{v}"))
    }
}

/// Write the case directory of `result`.
pub fn write_case(env: &Env, dir: &Path, seed: u64, index: Option<u64>, result: &CaseResult) {
    let options = result.options.expect("set");
    let file = CaseFile {
        seed: Some(seed),
        index,
        options,
        ops: result.ops.clone(),
        divergences: result.divergences.clone(),
        git_version: env.git.version().to_string(),
        git: Some(env.git.bin().display().to_string()),
    };
    let _ = casedir::write(dir, &file, result, None, Some(env.pool(options.hash())));
}

fn add_defect(
    r: &mut Report,
    env: &Env,
    known: &ExpectedSet,
    e: &crate::defects::registry::Expected,
) {
    let git = env.git.version().to_string();
    if let Some(d) = r
        .git_defects
        .iter_mut()
        .find(|d| d.id == e.id && d.git == git)
    {
        d.cases += 1;
        return;
    }
    let reproducer = if e.reproducer.is_empty() {
        String::new()
    } else {
        std::fs::read_to_string(known.resolve(&e.reproducer)).unwrap_or_else(|err| {
            format!(
                "# cannot read {}: {err}\n",
                known.resolve(&e.reproducer).display()
            )
        })
    };
    r.git_defects.push(GitDefect {
        id: e.id.clone(),
        git,
        versions: e.versions.clone(),
        reason: e.reason.clone(),
        evidence: e.evidence.clone(),
        cases: 1,
        reproducer,
    });
}

/// Minimize the case in `dir` into `dir-min`, keeping a divergence of its first one's check
/// and class (an error mismatch must not shrink into another message git words differently)
/// that is no known git defect of `known` and running no case of the minimization after
/// `deadline` (what is written is then the smallest case found by that time); returns that
/// directory and the operations.
pub fn minimize_dir(
    env: &Env,
    dir: &Path,
    known: &ExpectedSet,
    deadline: Option<Instant>,
) -> Option<(PathBuf, Vec<Op>)> {
    let file = CaseFile::read(dir).ok()?;
    let first = file.divergences.first()?;
    let version = env.profile.git_version();
    let wanted = |d: &Divergence| {
        d.check == first.check && d.class == first.class && known.matching(&version, d).is_none()
    };
    let (ops, runs) =
        crate::cases::minimize::minimize(env, file.options, file.ops.clone(), &wanted, deadline);
    let result = run_concrete(env, file.options, &ops).ok()?;
    let mut out = dir.as_os_str().to_owned();
    out.push("-min");
    let out = PathBuf::from(out);
    let min = CaseFile {
        ops: ops.clone(),
        divergences: result.divergences.clone(),
        ..file
    };
    casedir::write(
        &out,
        &min,
        &result,
        None,
        Some(env.pool(min.options.hash())),
    )
    .ok()?;
    eprintln!(
        "minimized {} to {} operations in {runs} runs: {}",
        dir.display(),
        min.ops.len(),
        out.display()
    );
    Some((out, ops))
}
