//! One concurrent run: a fresh reftable repository, one process per writer (the
//! `conformance` binary re-run as `concurrent-worker`), started at once; while they run the
//! stack is sampled, in turn through git and through us; afterwards their outcomes are
//! collected, the checks run, and the counts go into a [`ConcurrentReport`].

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::concurrent::check::check;
use crate::concurrent::config::ConcurrentConfig;
use crate::concurrent::evidence::{git_refs, listed_refs, Evidence, Sample};
use crate::concurrent::report::ConcurrentReport;
use crate::concurrent::spec::{listed_max_index, refdb_options, Outcome, WorkerSpec, WriterKind};
use crate::ops::{CaseOptions, LogRefsOpt};
use crate::setup::env::{init_repo, Env};
use crate::snapshot::Snapshot;

/// Everything one run left behind, for the checks and for a finding directory.
pub(crate) struct RunOutput {
    /// The repository the writers shared.
    pub(crate) repo: tempfile::TempDir,
    /// What the writers reported, writer by writer.
    pub(crate) outcomes: Vec<Outcome>,
    /// The run's counts and findings.
    pub(crate) report: ConcurrentReport,
}

/// The case options the concurrent mode's repository has.
pub(crate) fn case_options() -> CaseOptions {
    CaseOptions {
        log_refs: LogRefsOpt::Always,
        auto_compaction: true,
        ..Default::default()
    }
}

/// Start the worker process for `spec`: its spec and stderr go to files in `dir`; a planted
/// defect goes to our writers only.
fn spawn_worker(cfg: &ConcurrentConfig, spec: &WorkerSpec, dir: &Path) -> Result<Child, String> {
    let spec_path = dir.join(format!("worker{}.json", spec.id));
    std::fs::write(&spec_path, serde_json::to_string(spec).expect("json"))
        .map_err(|e| e.to_string())?;
    let stderr = std::fs::File::create(dir.join(format!("worker{}.stderr", spec.id)))
        .map_err(|e| e.to_string())?;
    let mut c = Command::new(&cfg.worker_exe);
    c.arg("concurrent-worker")
        .arg(&spec_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    match (&cfg.plant, spec.kind) {
        (Some(p), WriterKind::Ours) => c.env("REFTABLE_PLANT", p),
        _ => c.env_remove("REFTABLE_PLANT"),
    };
    c.spawn()
        .map_err(|e| format!("{}: {e}", cfg.worker_exe.display()))
}

/// Take one sample through git (`for-each-ref`) or through us.
fn sample(env: &Env, repo: &Path, through_git: bool) -> Sample {
    if through_git {
        return match git_refs(env, repo) {
            Ok(refs) => Sample::of(true, refs, None),
            Err(e) => Sample::failed(true, format!("for-each-ref: {e}")),
        };
    }
    let stack = repo.join(".git/reftable");
    match reftable::refdb::RefDb::open_or_create(&stack, refdb_options(false)).and_then(|db| {
        let s = Snapshot::of_refdb(&db)?;
        Ok((s, db.stack().next_update_index().saturating_sub(1)))
    }) {
        Ok((s, index)) => Sample::of(false, listed_refs(&s), Some(index)),
        Err(e) => Sample::failed(false, format!("our reader: {e:#}")),
    }
}

/// A fresh reftable repository with `opts` for the writers, in which git waits for a held
/// `tables.list.lock` as our writers do.
fn new_repo(env: &Env, opts: &CaseOptions) -> Result<tempfile::TempDir, String> {
    let repo = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    init_repo(env, repo.path(), "reftable", opts)?;
    // git 2.47+ waits this long for a held tables.list.lock (older gits refuse at once).
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(repo.path().join(".git/config"))
        .and_then(|mut f| f.write_all(b"[reftable]\n\tlockTimeout = 3000\n"))
        .map_err(|e| format!("config: {e}"))?;
    Ok(repo)
}

/// What each writer of `cfg` is told: the git writers first, then ours, then the
/// implementation's; their outcomes go to `work`, and they start when `start_file` exists.
fn worker_specs(
    env: &Env,
    cfg: &ConcurrentConfig,
    repo: &Path,
    work: &Path,
    start_file: &Path,
    commits: &[String],
) -> Vec<WorkerSpec> {
    let mut specs = Vec::new();
    let (g, o) = (cfg.git_writers, cfg.git_writers + cfg.our_writers);
    let argv = cfg
        .adapter
        .as_ref()
        .map(|a| a.0.clone())
        .unwrap_or_default();
    for i in 0..o + cfg.impl_writers {
        let kind = match i {
            i if i < g => WriterKind::Git,
            i if i < o => WriterKind::Ours,
            _ => WriterKind::Impl,
        };
        specs.push(WorkerSpec {
            id: i,
            kind,
            seed: cfg.seed,
            txns: cfg.txns,
            shared: cfg.shared,
            maintenance_every: cfg.maintenance_every,
            repo: repo.to_path_buf(),
            git: env.git.bin().to_path_buf(),
            commits: commits.to_vec(),
            outcomes: work.join(format!("worker{i}.jsonl")),
            start: start_file.to_path_buf(),
            adapter: if kind == WriterKind::Impl {
                argv.clone()
            } else {
                Vec::new()
            },
            git_version: env.git.version().to_string(),
        });
    }
    specs
}

/// Sample the stack of `repo` (through git and through us in turn) until every child has
/// exited; the samples and each child's exit status. Past the time limit of `cfg` the
/// children are killed and the run fails.
fn sample_until_exit(
    env: &Env,
    cfg: &ConcurrentConfig,
    repo: &Path,
    children: &mut [Child],
) -> Result<(Vec<Sample>, Vec<Option<ExitStatus>>), String> {
    let mut samples = Vec::new();
    let limit = Instant::now() + Duration::from_secs(60 + 2 * u64::from(cfg.txns));
    let mut statuses: Vec<Option<ExitStatus>> = vec![None; children.len()];
    let mut through_git = true;
    while statuses.iter().any(Option::is_none) {
        for (c, st) in children.iter_mut().zip(statuses.iter_mut()) {
            if st.is_none() {
                *st = c.try_wait().map_err(|e| e.to_string())?;
            }
        }
        if Instant::now() > limit {
            for c in children.iter_mut() {
                let _ = c.kill();
            }
            return Err(format!(
                "concurrent run did not finish within {} s",
                60 + 2 * cfg.txns
            ));
        }
        samples.push(sample(env, repo, through_git));
        through_git = !through_git;
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok((samples, statuses))
}

/// The outcomes every writer wrote, writer by writer, and a line for each writer that
/// exited with a failure (with its stderr, from `work`).
fn collect_outcomes(
    specs: &[WorkerSpec],
    statuses: &[Option<ExitStatus>],
    work: &Path,
) -> Result<(Vec<Outcome>, Vec<String>), String> {
    let mut outcomes = Vec::new();
    let mut worker_errors = Vec::new();
    for (s, st) in specs.iter().zip(statuses) {
        let text = std::fs::read_to_string(&s.outcomes).unwrap_or_default();
        for line in text.lines() {
            outcomes
                .push(serde_json::from_str::<Outcome>(line).map_err(|e| format!("outcome: {e}"))?);
        }
        let st = st.expect("exited");
        if !st.success() {
            let err = std::fs::read_to_string(work.join(format!("worker{}.stderr", s.id)))
                .unwrap_or_default();
            worker_errors.push(format!(
                "writer {} ({:?}) {st}: {}",
                s.id,
                s.kind,
                err.trim()
            ));
        }
    }
    Ok((outcomes, worker_errors))
}

/// Count the samples and the attempts (by kind of writer; refusals by cause) into `report`.
fn tally(report: &mut ConcurrentReport, samples: &[Sample], outcomes: &[Outcome]) {
    for s in samples {
        report.samples[usize::from(!s.through_git)] += 1;
    }
    for o in outcomes {
        let k = o.kind.index();
        if o.txn.is_some() {
            report.transactions[k][0] += 1;
            report.transactions[k][if o.accepted { 1 } else { 2 }] += 1;
            if !o.accepted {
                let cause = o.class.map_or("unclassified".to_string(), |c| {
                    format!("{c:?}").to_lowercase()
                });
                let who = o.kind.name();
                *report.refusals.entry(format!("{who} {cause}")).or_default() += 1;
            }
        } else {
            report.maintenance[k][0] += 1;
            report.maintenance[k][1] += u64::from(o.accepted);
        }
    }
}

/// Run one configuration once.
pub(crate) fn run_once(env: &Env, cfg: &ConcurrentConfig) -> Result<RunOutput, String> {
    let start = Instant::now();
    let opts = case_options();
    let repo = new_repo(env, &opts)?;
    let work = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    let start_file = work.path().join("start");
    let pool = &env.pool(opts.hash()).pool;
    let commits: Vec<String> = pool.commits.iter().map(|c| c.to_string()).collect();
    let specs = worker_specs(env, cfg, repo.path(), work.path(), &start_file, &commits);
    let mut children = Vec::new();
    for s in &specs {
        children.push(spawn_worker(cfg, s, work.path())?);
    }
    std::fs::write(&start_file, b"").map_err(|e| e.to_string())?;
    let (samples, statuses) = sample_until_exit(env, cfg, repo.path(), &mut children)?;
    let seconds = start.elapsed().as_secs_f64();
    let (outcomes, worker_errors) = collect_outcomes(&specs, &statuses, work.path())?;
    let stack = repo.path().join(".git/reftable");
    let evidence = Evidence::gather(env, repo.path(), &outcomes, samples, worker_errors);
    let findings = check(&evidence, &pool.commits);
    let mut report = ConcurrentReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        seed: cfg.seed,
        writers: [cfg.git_writers, cfg.our_writers, cfg.impl_writers],
        txns_per_writer: cfg.txns,
        seconds,
        findings,
        final_update_index: listed_max_index(&stack),
        final_tables: std::fs::read_to_string(stack.join("tables.list"))
            .map(|l| l.lines().count())
            .unwrap_or(0),
        ..Default::default()
    };
    tally(&mut report, &evidence.samples, &outcomes);
    Ok(RunOutput {
        repo,
        outcomes,
        report,
    })
}
