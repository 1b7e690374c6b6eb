//! Concurrent mode: several writer processes on one reftable repository at once — git
//! (`update-ref --stdin` transactions, `pack-refs`, `pack-refs --auto`, `reflog expire`)
//! and our `RefDb`, each in a process of its own (the `conformance` binary re-run as a
//! hidden `concurrent-worker`) — doing generated transactions on refs of their own and on
//! shared refs (compare-and-swap with the old value read just before), while a reader
//! samples the stack through git and through us.
//!
//! Afterwards (`concurrent_check.rs`): every acknowledged transaction is in the stack under
//! one update index of its own and within the window it ran in; replaying the acknowledged
//! transactions in update-index order on the model accepts each one and ends in the state
//! git and we read; each refusal has a cause (a held lock, or a fault the model sees at some
//! moment while it ran) and left no trace; every sample equals the state after some prefix
//! of that order, never an older one than the sample before; no lock or temporary file is
//! left; git reads the final stack, and its reflogs, as we do.
//!
//! A finding is re-run with fewer transactions and writers while it reproduces, and written
//! with the interleaving (who committed what under which update index), each writer's
//! outcomes, the final stack and a command that runs the same configuration again.

mod check;
mod worker;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::concurrent::check::{check, git_refs, listed_refs, Evidence, Finding, Sample};
use crate::concurrent::worker::{listed_max_index, refdb_options};
use crate::defects::registry::ExpectedSet;
use crate::ops::{CaseOptions, LogRefsOpt, Update};
use crate::setup::env::{init_repo, Env};
use crate::snapshot::Snapshot;

/// The refs the writers use.
pub mod names {
    /// Refs of one writer only.
    pub const OWN: usize = 4;
    /// Names in directory/file conflict with each other, created and deleted by everyone.
    pub const DF: [&str; 4] = [
        "refs/heads/df/a",
        "refs/heads/df/a/b",
        "refs/heads/df/c",
        "refs/heads/df/c/d/e",
    ];
    /// Updated without an old value by everyone; its reflog is expired by maintenance.
    pub const EXPIRY: &str = "refs/heads/expiry";

    /// Writer `id`'s journal: updated by each of its transactions, never deleted or expired.
    pub fn journal(id: u32) -> String {
        format!("refs/journal/w{id}")
    }

    /// Writer `id`'s own ref `k`.
    pub fn own(id: u32, k: usize) -> String {
        format!("refs/heads/w{id}/r{k}")
    }

    /// Whether `name` is one of writer `id`'s own refs.
    pub fn is_own(id: u32, name: &str) -> bool {
        name.starts_with(&format!("refs/heads/w{id}/"))
    }

    /// Shared ref `k`; 0 is `main`, the branch `HEAD` points at.
    pub fn shared(k: usize) -> String {
        if k == 0 {
            "refs/heads/main".into()
        } else {
            format!("refs/heads/shared/s{k}")
        }
    }

    /// A tag only transaction `i` of writer `id` creates.
    pub fn tag(id: u32, i: u32) -> String {
        format!("refs/tags/w{id}-t{i}")
    }

    /// The reflog message of transaction `i` of writer `id` (unique in a run).
    pub fn message(id: u32, i: u32) -> String {
        format!("concurrent w{id} t{i}")
    }
}

/// Who a writer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriterKind {
    /// git subprocesses.
    Git,
    /// Our `RefDb`.
    Ours,
}

/// What one worker process is told to do.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerSpec {
    /// Writer number (unique in a run).
    pub id: u32,
    /// git or ours.
    pub kind: WriterKind,
    /// The run's seed.
    pub seed: u64,
    /// Transactions to attempt.
    pub txns: u32,
    /// Shared refs besides `main`.
    pub shared: u32,
    /// Maintenance after every this many transactions (0: none).
    pub maintenance_every: u32,
    /// The repository (its stack is `.git/reftable`).
    pub repo: PathBuf,
    /// The git binary.
    pub git: PathBuf,
    /// Commit ids (hex) the refs take.
    pub commits: Vec<String>,
    /// Where the outcomes go (JSON lines).
    pub outcomes: PathBuf,
    /// Workers start when this file exists.
    pub start: PathBuf,
}

/// One attempt of a writer: a transaction or a maintenance run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    /// Writer number.
    pub writer: u32,
    /// git or ours.
    pub kind: WriterKind,
    /// Transaction number; `None` for maintenance.
    pub txn: Option<u32>,
    /// `transaction`, `pack-refs`, `pack-refs --auto`, `reflog expire`.
    pub what: String,
    /// The reflog message (transactions).
    pub message: String,
    /// The updates (transactions).
    pub updates: Vec<Update>,
    /// The clock tick it ran at (committer time `BASE_TIME + 60·tick`).
    pub tick: u64,
    /// Highest update index in `tables.list` just before.
    pub before: u64,
    /// Highest update index in `tables.list` just after.
    pub after: u64,
    /// Acknowledged (exit 0, or `Ok`).
    pub accepted: bool,
    /// git's stderr or our error.
    pub error: String,
    /// The update index our transaction committed under.
    pub index: Option<u64>,
    /// What the refusal says (git's wording or our error, classified); `None` when accepted
    /// or when the wording is unknown.
    pub class: Option<crate::err_class::ErrClass>,
}

/// What to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConcurrentConfig {
    /// Seed.
    pub seed: u64,
    /// git writer processes.
    pub git_writers: u32,
    /// Our writer processes.
    pub our_writers: u32,
    /// Transactions per writer.
    pub txns: u32,
    /// Shared refs besides `main`.
    pub shared: u32,
    /// Maintenance (compaction, auto-compaction, reflog expiry) after every this many
    /// transactions of each writer (0: none).
    pub maintenance_every: u32,
    /// The binary that runs `concurrent-worker` (the `conformance` binary).
    pub worker_exe: PathBuf,
    /// A planted defect for our writers (`REFTABLE_PLANT`; test-hooks builds only).
    pub plant: Option<String>,
    /// Where findings go (`None`: not written).
    pub out: Option<PathBuf>,
    /// Re-run a finding with fewer writers and transactions while it reproduces.
    pub minimize: bool,
}

impl ConcurrentConfig {
    /// 2 git and 2 of our writers × `txns`, 4 shared refs, maintenance every 25.
    pub fn new(seed: u64, txns: u32, worker_exe: PathBuf) -> ConcurrentConfig {
        ConcurrentConfig {
            seed,
            git_writers: 2,
            our_writers: 2,
            txns,
            shared: 4,
            maintenance_every: 25,
            worker_exe,
            plant: None,
            out: None,
            minimize: true,
        }
    }

    /// The `conformance run --concurrent` command line that runs this configuration again.
    pub fn command_line(&self, git: &Path) -> String {
        format!(
            "conformance run --concurrent --git {} --seed {} --git-writers {} --our-writers {} --concurrent-txns {} --shared-refs {} --maintenance-every {}",
            crate::finding::script::sh_quote(&git.display().to_string()),
            self.seed,
            self.git_writers,
            self.our_writers,
            self.txns,
            self.shared,
            self.maintenance_every
        )
    }
}

/// The result of one concurrent run (and of its minimization).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ConcurrentReport {
    /// git under test.
    pub git: String,
    /// Its version.
    pub version: String,
    /// Seed.
    pub seed: u64,
    /// Writers: git, ours.
    pub writers: [u32; 2],
    /// Transactions attempted per writer.
    pub txns_per_writer: u32,
    /// Transactions attempted, acknowledged, refused: git writers, then ours.
    pub transactions: [[u64; 3]; 2],
    /// Refusals by cause (`lock`, `old_value`, `df_conflict`, …) per kind of writer.
    pub refusals: BTreeMap<String, u64>,
    /// Maintenance runs: git (attempted, succeeded), ours (attempted, succeeded).
    pub maintenance: [[u64; 2]; 2],
    /// Reader samples taken: through git, through us.
    pub samples: [u64; 2],
    /// Highest update index at the end.
    pub final_update_index: u64,
    /// Tables in the final stack.
    pub final_tables: usize,
    /// Wall seconds of the run (minimization excluded).
    pub seconds: f64,
    /// What went wrong (empty on a clean run).
    pub findings: Vec<Finding>,
    /// The smallest configuration that still showed the first finding.
    pub minimized: Option<String>,
    /// Where the finding was written.
    pub finding_dir: Option<String>,
}

impl ConcurrentReport {
    /// One line for the console.
    pub fn line(&self) -> String {
        let [g, o] = self.transactions;
        format!(
            "concurrent: git {} seed {}: {} git + {} our writers × {} transactions in {:.1} s; git {} acknowledged / {} refused, ours {} / {}; maintenance git {}/{}, ours {}/{}; {} + {} samples; {} tables, update index {}; {} unexpected findings, {} from known git defects",
            self.version,
            self.seed,
            self.writers[0],
            self.writers[1],
            self.txns_per_writer,
            self.seconds,
            g[1],
            g[2],
            o[1],
            o[2],
            self.maintenance[0][1],
            self.maintenance[0][0],
            self.maintenance[1][1],
            self.maintenance[1][0],
            self.samples[0],
            self.samples[1],
            self.final_tables,
            self.final_update_index,
            self.unexpected(),
            self.findings.len() - self.unexpected()
        )
    }

    /// A Markdown section.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "### Concurrent mode, git {}\n\n{}\n\n",
            self.version,
            self.line()
        );
        if !self.refusals.is_empty() {
            let r: Vec<String> = self
                .refusals
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            s.push_str(&format!("Refusals by cause: {}.\n\n", r.join(", ")));
        }
        for f in &self.findings {
            let known = f
                .expected
                .as_ref()
                .map_or(String::new(), |e| format!(" (known git defect `{e}`)"));
            s.push_str(&format!("- **{}**{known}: {}\n", f.class, f.detail));
        }
        if let Some(m) = &self.minimized {
            s.push_str(&format!("\nMinimized: `{m}`\n"));
        }
        if let Some(d) = &self.finding_dir {
            s.push_str(&format!("\nWritten to `{d}`\n"));
        }
        s
    }
}

/// Everything one run left behind, for the checks and for a finding directory.
struct RunOutput {
    repo: tempfile::TempDir,
    outcomes: Vec<Outcome>,
    report: ConcurrentReport,
}

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
    match reftable::refdb::RefDb::open(&stack, refdb_options(false)).and_then(|db| {
        let s = Snapshot::of_refdb(&db)?;
        Ok((s, db.stack().next_update_index().saturating_sub(1)))
    }) {
        Ok((s, index)) => Sample::of(false, listed_refs(&s), Some(index)),
        Err(e) => Sample::failed(false, format!("our reader: {e}")),
    }
}

/// Run one configuration once.
fn run_once(env: &Env, cfg: &ConcurrentConfig) -> Result<RunOutput, String> {
    let start = Instant::now();
    let repo = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    let opts = case_options();
    init_repo(env, repo.path(), "reftable", &opts)?;
    // git 2.47+ waits this long for a held tables.list.lock (older gits refuse at once).
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(repo.path().join(".git/config"))
        .and_then(|mut f| f.write_all(b"[reftable]\n\tlockTimeout = 3000\n"))
        .map_err(|e| format!("config: {e}"))?;
    let work = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    let start_file = work.path().join("start");
    let pool = &env.pool(opts.hash()).pool;
    let commits: Vec<String> = pool.commits.iter().map(|c| c.to_string()).collect();
    let mut specs = Vec::new();
    for i in 0..cfg.git_writers + cfg.our_writers {
        let kind = if i < cfg.git_writers {
            WriterKind::Git
        } else {
            WriterKind::Ours
        };
        specs.push(WorkerSpec {
            id: i,
            kind,
            seed: cfg.seed,
            txns: cfg.txns,
            shared: cfg.shared,
            maintenance_every: cfg.maintenance_every,
            repo: repo.path().to_path_buf(),
            git: env.git.bin().to_path_buf(),
            commits: commits.clone(),
            outcomes: work.path().join(format!("worker{i}.jsonl")),
            start: start_file.clone(),
        });
    }
    let mut children = Vec::new();
    for s in &specs {
        children.push(spawn_worker(cfg, s, work.path())?);
    }
    std::fs::write(&start_file, b"").map_err(|e| e.to_string())?;
    let mut samples = Vec::new();
    let limit = Instant::now() + Duration::from_secs(60 + 2 * u64::from(cfg.txns));
    let mut statuses: Vec<Option<std::process::ExitStatus>> = vec![None; children.len()];
    let mut through_git = true;
    while statuses.iter().any(Option::is_none) {
        for (c, st) in children.iter_mut().zip(statuses.iter_mut()) {
            if st.is_none() {
                *st = c.try_wait().map_err(|e| e.to_string())?;
            }
        }
        if Instant::now() > limit {
            for c in &mut children {
                let _ = c.kill();
            }
            return Err(format!(
                "concurrent run did not finish within {} s",
                60 + 2 * cfg.txns
            ));
        }
        samples.push(sample(env, repo.path(), through_git));
        through_git = !through_git;
        std::thread::sleep(Duration::from_millis(10));
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut outcomes = Vec::new();
    let mut worker_errors = Vec::new();
    for (s, st) in specs.iter().zip(&statuses) {
        let text = std::fs::read_to_string(&s.outcomes).unwrap_or_default();
        for line in text.lines() {
            outcomes
                .push(serde_json::from_str::<Outcome>(line).map_err(|e| format!("outcome: {e}"))?);
        }
        let st = st.expect("exited");
        if !st.success() {
            let err = std::fs::read_to_string(work.path().join(format!("worker{}.stderr", s.id)))
                .unwrap_or_default();
            worker_errors.push(format!(
                "writer {} ({:?}) {st}: {}",
                s.id,
                s.kind,
                err.trim()
            ));
        }
    }
    let stack = repo.path().join(".git/reftable");
    let evidence = Evidence::gather(env, repo.path(), &outcomes, samples, worker_errors);
    let findings = check(&evidence, &pool.commits);
    let mut report = ConcurrentReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        seed: cfg.seed,
        writers: [cfg.git_writers, cfg.our_writers],
        txns_per_writer: cfg.txns,
        seconds,
        findings,
        final_update_index: listed_max_index(&stack),
        final_tables: std::fs::read_to_string(stack.join("tables.list"))
            .map(|l| l.lines().count())
            .unwrap_or(0),
        ..Default::default()
    };
    for s in &evidence.samples {
        report.samples[usize::from(!s.through_git)] += 1;
    }
    for o in &outcomes {
        let k = usize::from(o.kind == WriterKind::Ours);
        if o.txn.is_some() {
            report.transactions[k][0] += 1;
            report.transactions[k][if o.accepted { 1 } else { 2 }] += 1;
            if !o.accepted {
                let cause = o.class.map_or("unclassified".to_string(), |c| {
                    format!("{c:?}").to_lowercase()
                });
                let who = if k == 0 { "git" } else { "ours" };
                *report.refusals.entry(format!("{who} {cause}")).or_default() += 1;
            }
        } else {
            report.maintenance[k][0] += 1;
            report.maintenance[k][1] += u64::from(o.accepted);
        }
    }
    Ok(RunOutput {
        repo,
        outcomes,
        report,
    })
}

/// Smaller configurations to try, in order, when `cfg` showed a finding.
fn smaller(cfg: &ConcurrentConfig) -> Vec<ConcurrentConfig> {
    let mut out = Vec::new();
    if cfg.txns > 10 {
        out.push(ConcurrentConfig {
            txns: (cfg.txns / 2).max(10),
            ..cfg.clone()
        });
    }
    if cfg.git_writers > 1 {
        out.push(ConcurrentConfig {
            git_writers: cfg.git_writers - 1,
            ..cfg.clone()
        });
    }
    if cfg.our_writers > 1 {
        out.push(ConcurrentConfig {
            our_writers: cfg.our_writers - 1,
            ..cfg.clone()
        });
    }
    if cfg.maintenance_every > 0 {
        out.push(ConcurrentConfig {
            maintenance_every: 0,
            ..cfg.clone()
        });
    }
    if cfg.shared > 0 {
        out.push(ConcurrentConfig {
            shared: 0,
            ..cfg.clone()
        });
    }
    out
}

/// How often a smaller configuration is run before it counts as not reproducing (the
/// interleaving is up to the scheduler).
const ATTEMPTS: usize = 4;

/// Shrink `cfg` while a run still shows a finding of `class`; the smallest run's output.
fn minimize(
    env: &Env,
    cfg: &ConcurrentConfig,
    class: &str,
) -> (ConcurrentConfig, Option<RunOutput>) {
    let mut best = cfg.clone();
    let mut best_run = None;
    'outer: loop {
        for c in smaller(&best) {
            for _ in 0..ATTEMPTS {
                let Ok(r) = run_once(env, &c) else { continue };
                if r.report.findings.iter().any(|f| f.class == class) {
                    best = c;
                    best_run = Some(r);
                    continue 'outer;
                }
            }
        }
        return (best, best_run);
    }
}

/// The interleaving: every attempt in commit order (acknowledged transactions by update
/// index; refusals and maintenance by the window they ran in).
fn interleaving(outcomes: &[Outcome], indexes: &BTreeMap<String, u64>) -> String {
    let mut rows: Vec<(u64, u64, String)> = outcomes
        .iter()
        .map(|o| {
            let at = indexes.get(&o.message).copied();
            let key = at.unwrap_or(o.after);
            let what = if o.txn.is_some() {
                let ups: Vec<String> = o
                    .updates
                    .iter()
                    .map(|u| {
                        let v = |x: &Option<crate::ops::Value>| match x {
                            Some(crate::ops::Value::Oid(h)) => h[..8.min(h.len())].to_string(),
                            Some(crate::ops::Value::Symref(t)) => format!("->{t}"),
                            None => "-".into(),
                        };
                        format!("{} {}<-{}", u.refname, v(&u.new), v(&u.old))
                    })
                    .collect();
                format!(
                    "{} {:?} ({}): {}",
                    if o.accepted { "committed" } else { "refused" },
                    o.message,
                    at.map_or(format!("window {}..{}", o.before, o.after), |i| format!(
                        "index {i}"
                    )),
                    ups.join(", ")
                )
            } else {
                format!(
                    "{} {} (window {}..{})",
                    o.what,
                    if o.accepted { "ok" } else { "failed" },
                    o.before,
                    o.after
                )
            };
            let first_line = o.error.lines().next().unwrap_or("");
            let err = if o.accepted || first_line.is_empty() {
                String::new()
            } else {
                format!(" — {first_line}")
            };
            (
                key,
                u64::from(o.writer),
                format!("{key:6} writer {} {:?}: {what}{err}", o.writer, o.kind),
            )
        })
        .collect();
    rows.sort();
    rows.into_iter().map(|(_, _, s)| s + "\n").collect()
}

/// The run as one serial gate case: every acknowledged transaction (and every compaction
/// and expiry that succeeded) in commit order, to replay deterministically with every check
/// of the sequential gate (`conformance replay DIR/serial`).
fn serial_ops(outcomes: &[Outcome], indexes: &BTreeMap<String, u64>) -> Vec<crate::ops::Op> {
    use crate::ops::{Expire, Op};
    let mut rows: Vec<(u64, u64, u32, Op)> = outcomes
        .iter()
        .filter(|o| o.accepted)
        .map(|o| {
            let at = indexes
                .get(&o.message)
                .copied()
                .or(o.index)
                .unwrap_or(o.after);
            let op = match o.what.as_str() {
                "transaction" => Op::Txn {
                    updates: o.updates.clone(),
                    message: o.message.clone(),
                    create_reflog: false,
                },
                "pack-refs" => Op::PackRefs { auto: false },
                "pack-refs --auto" => Op::PackRefs { auto: true },
                _ => Op::ReflogExpire {
                    refname: names::EXPIRY.into(),
                    expire: Expire::All,
                },
            };
            // Maintenance goes after the transactions of its window.
            (at, u64::from(o.txn.is_none()), o.writer, op)
        })
        .collect();
    rows.sort_by_key(|(at, m, w, _)| (*at, *m, *w));
    rows.into_iter().map(|(_, _, _, op)| op).collect()
}

/// The case options the concurrent mode's repository has.
fn case_options() -> CaseOptions {
    CaseOptions {
        log_refs: LogRefsOpt::Always,
        auto_compaction: true,
        ..Default::default()
    }
}

fn write_finding(
    env: &Env,
    base: &Path,
    cfg: &ConcurrentConfig,
    run: &RunOutput,
) -> Result<PathBuf, String> {
    let class = run
        .report
        .findings
        .iter()
        .find(|f| f.expected.is_none())
        .or(run.report.findings.first())
        .map_or("finding".to_string(), |f| f.class.replace(' ', "-"));
    let dir = base.join(format!("concurrent-seed{}-{class}", cfg.seed));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let w = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    w(
        "config.json",
        &serde_json::to_string_pretty(cfg).expect("json"),
    )?;
    let mut lines = String::new();
    for o in &run.outcomes {
        lines.push_str(&serde_json::to_string(o).expect("json"));
        lines.push('\n');
    }
    w("outcomes.jsonl", &lines)?;
    let indexes = crate::concurrent::check::journal_indexes(&run.repo.path().join(".git/reftable"));
    w("interleaving.txt", &interleaving(&run.outcomes, &indexes))?;
    let mut findings = String::new();
    for f in &run.report.findings {
        findings.push_str(&format!("{}: {}\n", f.class, f.detail));
    }
    // The same transactions one at a time, in the order they committed.
    let ops = serial_ops(&run.outcomes, &indexes);
    let serial = crate::generated::case::run_concrete(env, case_options(), &ops)?;
    findings.push_str(&if serial.divergences.is_empty() {
        format!(
            "\nserial replay of the {} committed operations in commit order (serial/): no divergence, so the finding needs the interleaving\n",
            ops.len()
        )
    } else {
        format!(
            "\nserial replay of the {} committed operations in commit order (serial/): {} divergences, first at step {}: {}\n",
            ops.len(),
            serial.divergences.len(),
            serial.divergences[0].step,
            serial.divergences[0].class
        )
    });
    let file = crate::generated::casedir::CaseFile {
        seed: Some(cfg.seed),
        index: None,
        options: case_options(),
        ops,
        divergences: serial.divergences.clone(),
        git_version: env.git.version().to_string(),
        git: Some(env.git.bin().display().to_string()),
    };
    crate::generated::casedir::write(
        &dir.join("serial"),
        &file,
        &serial,
        None,
        Some(env.pool(case_options().hash())),
    )
    .map_err(|e| format!("serial case: {e}"))?;
    w("findings.txt", &findings)?;
    w(
        "rerun.sh",
        &format!(
            "#!/bin/sh\n# Runs the configuration that showed the finding again (the interleaving is up to\n# the scheduler; interleaving.txt has the one that was seen, serial/ replays it in\n# commit order). CONFORMANCE: the conformance binary (a test-hooks build for a planted\n# defect).\nexec env {}\"${{CONFORMANCE:-conformance}}\" {}\n",
            cfg.plant
                .as_ref()
                .map_or(String::new(), |p| format!("REFTABLE_PLANT={p} ")),
            cfg.command_line(env.git.bin()).trim_start_matches("conformance ")
        ),
    )?;
    crate::stack_files::copy_dir(
        &run.repo.path().join(".git/reftable"),
        &dir.join("stack"),
        None,
    )?;
    Ok(dir)
}

/// Mark the findings a known git defect of this git explains: those its entry matches, and
/// in a run where it matched, those of the classes it implies.
fn attribute(env: &Env, known: &ExpectedSet, findings: &mut [Finding]) {
    let v = env.profile.git_version();
    let mut shown: Vec<&crate::defects::registry::Expected> = Vec::new();
    for f in findings.iter() {
        if let Some(e) = known.matching_concurrent(&v, &format!("{}: {}", f.class, f.detail)) {
            if shown.iter().all(|s| s.id != e.id) {
                shown.push(e);
            }
        }
    }
    for f in findings.iter_mut() {
        let direct = known.matching_concurrent(&v, &format!("{}: {}", f.class, f.detail));
        let implied = || shown.iter().copied().find(|e| e.implies.contains(&f.class));
        f.expected = direct.or_else(implied).map(|e| e.id.clone());
    }
}

impl ConcurrentReport {
    /// Findings no known git defect explains.
    pub fn unexpected(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.expected.is_none())
            .count()
    }
}

/// Run `cfg` against the git of `env`; a finding no known git defect explains is minimized
/// (when asked) and written.
pub fn run_concurrent(
    env: &Env,
    known: &ExpectedSet,
    cfg: &ConcurrentConfig,
) -> Result<ConcurrentReport, String> {
    let mut first = run_once(env, cfg)?;
    attribute(env, known, &mut first.report.findings);
    let mut report = first.report.clone();
    let Some(class) = report
        .findings
        .iter()
        .find(|f| f.expected.is_none())
        .map(|f| f.class.clone())
    else {
        return Ok(report);
    };
    let (small, small_run) = if cfg.minimize {
        minimize(env, cfg, &class)
    } else {
        (cfg.clone(), None)
    };
    let mut small_run = small_run;
    if let Some(r) = small_run.as_mut() {
        attribute(env, known, &mut r.report.findings);
    }
    report.minimized = Some(small.command_line(env.git.bin()));
    if let Some(base) = &cfg.out {
        let run = small_run.as_ref().unwrap_or(&first);
        let dir = write_finding(env, base, &small, run)?;
        report.finding_dir = Some(dir.display().to_string());
    }
    Ok(report)
}

/// The hidden `concurrent-worker SPEC` command: run one writer.
pub fn worker_main(spec_path: &Path) -> i32 {
    let spec: WorkerSpec = match std::fs::read_to_string(spec_path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("concurrent-worker: {}: {e}", spec_path.display());
            return 2;
        }
    };
    match crate::concurrent::worker::work(&spec) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("concurrent-worker {}: {e}", spec.id);
            1
        }
    }
}
