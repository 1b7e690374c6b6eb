//! One operation under faults, on one side: the operation run once on a copy of the
//! repository without a fault (its trace gives the fault points, its result the state
//! "after"), then once per fault point on a fresh copy, each trial classified.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cases::ours::refdb_options;
use crate::faults::class::{classify, interrupted, Class, Reported};
use crate::faults::observe::{observe, Lookers, NEXT_REF};
use crate::faults::worker::{pool_spec, Work, WorkerOutcome, WorkerSpec};
use crate::finding::script::git_invocation;
use crate::git::driver::{committer_at, Exit};
use crate::ops::{CaseOptions, Op};
use crate::setup::env::Env;
use crate::setup::pool::PoolObjects;
use crate::snapshot::Snapshot;
use crate::stack_files::copy_dir;
use crate::syscalls::points::{fault_points, git_only, must_retry, parse_trace, FaultPoint};
use crate::syscalls::strace::{self, Traced, Tracing};
use reftable::refdb::{RefDb, RefUpdate};

/// Whose write is faulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// git's command.
    Git,
    /// Our library, in the worker process.
    Ours,
}

/// One faulted run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Trial {
    /// The fault.
    pub point: FaultPoint,
    /// What it came to.
    pub class: Class,
    /// What supports the class (the message, the difference).
    pub detail: String,
    /// The call strace failed, as its trace shows it (none: no call was reached).
    pub injected: Option<String>,
    /// Lock and temporary files left in the stack directory.
    pub left: Vec<String>,
    /// The known git defect it is, if it is one.
    pub known: Option<String>,
    /// Where it was written as a finding (the first of its kind not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding_dir: Option<String>,
}

impl Trial {
    /// A trial of `point` classified as `judged`, from its traced run `t` and the files
    /// it left; not yet matched against the registry or written as a finding.
    pub fn new(point: FaultPoint, judged: (Class, String), t: &Traced, left: Vec<String>) -> Trial {
        Trial {
            point,
            class: judged.0,
            detail: judged.1,
            injected: strace::injected_line(&t.trace),
            left,
            known: None,
            finding_dir: None,
        }
    }
}

/// One side of one operation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SideRun {
    /// Whose.
    pub side: Side,
    /// Whether the operation was done without a fault.
    pub unfaulted_done: bool,
    /// Fault points found in the unfaulted run's trace.
    pub points: usize,
    /// The trials run (fewer than the points when the budget ended first or the points were
    /// capped).
    pub trials: Vec<Trial>,
    /// Why the side could not be tried, if it could not.
    pub error: Option<String>,
}

/// An operation, the repository it starts from, and how each side runs it.
#[derive(Clone)]
pub struct OpUnderTest<'a> {
    /// The git and its object pool.
    pub env: &'a Env,
    /// The case's options.
    pub opts: CaseOptions,
    /// The operation.
    pub op: &'a Op,
    /// Its committer clock.
    pub tick: u64,
    /// The repository before it (never changed: every run works on a copy).
    pub pre: &'a Path,
    /// Where copies go.
    pub scratch: PathBuf,
    /// The binary with the `fault-worker` subcommand.
    pub worker_exe: &'a Path,
    /// Whether our stack syncs.
    pub fsync: bool,
    /// `-c NAME=VALUE` options for git's command (`core.fsync`).
    pub git_config: Vec<String>,
    /// At most this many fault points per side (spread over all of them).
    pub max_points: usize,
    /// Only the points that inject these errors (`SHORT`: a short write); all without.
    pub errnos: Option<Vec<String>>,
    /// No trial starts after this.
    pub deadline: Option<Instant>,
}

/// A writer that takes longer than this under strace is taken for hung.
const TRIAL_TIMEOUT: Duration = Duration::from_secs(30);

impl OpUnderTest<'_> {
    /// The command that runs the operation on `repo` (and its standard input).
    fn command(&self, side: Side, repo: &Path, dir: &Path) -> Result<(Command, String), String> {
        match side {
            Side::Git => {
                let (args, stdin) = git_invocation(self.op);
                let mut c = self.env.git.command_auto(repo, self.tick, true);
                c.args(&self.git_config).args(args);
                Ok((c, stdin.unwrap_or_default()))
            }
            Side::Ours => {
                let spec = WorkerSpec {
                    stack: repo.join(".git/reftable"),
                    work: Work::Op(self.op.clone()),
                    tick: self.tick,
                    opts: self.opts,
                    rules: self.env.profile.rules,
                    fsync: self.fsync,
                    pool: pool_spec(&self.env.pool(self.opts.hash()).pool),
                };
                let path = dir.join("spec.json");
                let json = serde_json::to_vec(&spec).map_err(|e| e.to_string())?;
                std::fs::write(&path, json).map_err(|e| e.to_string())?;
                let mut c = Command::new(self.worker_exe);
                c.arg("fault-worker").arg(&path);
                c.env("PATH", std::env::var_os("PATH").unwrap_or_default());
                // A planted defect (test-hooks builds) goes to our worker.
                if let Some(p) = std::env::var_os("REFTABLE_PLANT") {
                    c.env("REFTABLE_PLANT", p);
                }
                c.current_dir(repo);
                Ok((c, String::new()))
            }
        }
    }

    /// Our reader's view of a stack.
    pub fn read(&self, stack: &Path) -> Result<Snapshot, String> {
        let o = refdb_options(&self.opts, self.env.profile.rules, false);
        Snapshot::of_stack_dir(stack, o).map_err(|e| format!("{e:#}"))
    }

    /// The next writer of `side` on `repo`: it creates [`NEXT_REF`]; its refusal, if any.
    fn next_write(&self, side: Side, repo: &Path) -> Option<String> {
        let pool = &self.env.pool(self.opts.hash()).pool;
        let commit = pool.commits[0];
        match side {
            Side::Git => {
                let args = ["update-ref", NEXT_REF, &commit.to_string()];
                let o = self.env.git.run(repo, &args, "", self.tick + 1);
                (!o.exit.success()).then(|| o.stderr.trim().to_string())
            }
            Side::Ours => {
                let o = refdb_options(&self.opts, self.env.profile.rules, false);
                let u = RefUpdate::update(NEXT_REF, commit, None);
                let c = committer_at(self.tick + 1);
                RefDb::open_or_create(repo.join(".git/reftable"), o)
                    .and_then(|mut db| db.transaction(&[u], &c, &PoolObjects(pool)))
                    .err()
                    .map(|e| format!("{e:#}"))
            }
        }
    }

    /// A fresh copy of the repository before the operation, in `dir/repo`.
    fn fresh(&self, name: &str) -> Result<(PathBuf, PathBuf), String> {
        let dir = self.scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let repo = dir.join("repo");
        copy_dir(self.pre, &repo, None)?;
        Ok((dir, repo))
    }

    /// Run the operation on a fresh copy (`scratch/name/repo`), traced as `how` says.
    pub fn traced(
        &self,
        side: Side,
        name: &str,
        how: Tracing<'_>,
    ) -> Result<(Traced, PathBuf), String> {
        let (dir, repo) = self.fresh(name)?;
        let (cmd, stdin) = self.command(side, &repo, &dir)?;
        let t = strace::run(&cmd, how, &stdin, &dir, TRIAL_TIMEOUT)?;
        Ok((t, repo))
    }

    /// The side's unfaulted run and its trials.
    pub fn run_side(&self, side: Side, before: &Snapshot) -> SideRun {
        let mut run = SideRun {
            side,
            unfaulted_done: false,
            points: 0,
            trials: Vec::new(),
            error: None,
        };
        if let Err(e) = self.trials(side, before, &mut run) {
            run.error = Some(e);
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
        run
    }

    fn trials(&self, side: Side, before: &Snapshot, run: &mut SideRun) -> Result<(), String> {
        let (base, repo) = self.traced(side, "unfaulted", Tracing::Faults(None))?;
        let unfaulted = reported(side, &base);
        run.unfaulted_done = matches!(unfaulted, Reported::Done(_));
        if let Reported::Crashed(how) = &unfaulted {
            return Err(format!("the unfaulted run crashed: {how}"));
        }
        let after = self.read(&repo.join(".git/reftable"))?;
        let calls = parse_trace(&base.trace);
        let mut all = fault_points(&calls, self.errnos.as_deref());
        all.retain(|p| side == Side::Git || !git_only(p));
        run.points = all.len();
        let read = |s: &Path| self.read(s);
        let next_write = |repo: &Path| self.next_write(side, repo);
        let look = Lookers {
            git: &self.env.git,
            refs_verify: self.env.profile.features.refs_verify,
            read: &read,
            next_write: &next_write,
        };
        for (i, p) in spread(&all, self.max_points).into_iter().enumerate() {
            if crate::budget::past(self.deadline) {
                break;
            }
            let (t, repo) = self.traced(side, &format!("trial-{i}"), Tracing::Faults(Some(&p)))?;
            let seen = observe(&look, &repo);
            let said = reported(side, &t);
            let mut judged = classify(&said, before, &after, &seen);
            if must_retry(&p) {
                judged = interrupted(judged, &unfaulted, &said);
            }
            run.trials
                .push(Trial::new(p.clone(), judged, &t, seen.left));
        }
        Ok(())
    }
}

/// What the writer of a traced run reported.
pub fn reported(side: Side, t: &Traced) -> Reported {
    match (&t.exit, side) {
        (Exit::Signal(s), _) => Reported::Crashed(format!("signal {s}: {}", t.stderr.trim())),
        (Exit::Timeout, _) => Reported::Crashed("hung (killed after the timeout)".into()),
        (Exit::Code(0), Side::Git) => {
            let said = t.stderr.trim();
            Reported::Done((!said.is_empty()).then(|| said.to_string()))
        }
        (Exit::Code(_), Side::Git) => Reported::Failed(t.stderr.trim().to_string()),
        (Exit::Code(c), Side::Ours) => match serde_json::from_str::<WorkerOutcome>(t.stdout.trim())
        {
            Ok(o) if o.ok => Reported::Done(o.warning),
            Ok(o) => Reported::Failed(o.message),
            Err(_) => {
                Reported::Crashed(format!("exit {c} without an outcome: {}", t.stderr.trim()))
            }
        },
    }
}

/// At most `max` of `all`, spread evenly (all of them when they fit).
pub(crate) fn spread(all: &[FaultPoint], max: usize) -> Vec<FaultPoint> {
    if all.len() <= max || max == 0 {
        return all.to_vec();
    }
    (0..max).map(|i| all[i * all.len() / max].clone()).collect()
}
