//! One generated case with an implementation in each role: the case runs on git (and on
//! us, the model and the twin, as every case does: the gate's checks vouch for git's
//! state), and after each step every role's side does its part against git's state.

use std::time::Duration;

use crate::cases::case::{step_abstract, step_concrete};
use crate::cases::executor::Executor;
use crate::cases::generate::AOp;
use crate::impls::check::{ImplCheck, Role};
use crate::impls::damaged::check_damaged;
use crate::impls::end::check_end;
use crate::impls::process::Adapter;
use crate::impls::side::Side;
use crate::impls::tally::{ImplFinding, Tally};
use crate::ops::{CaseOptions, Op};
use crate::setup::env::Env;

/// How a case is run.
pub struct CaseSpec<'a> {
    /// The adapter's command line.
    pub argv: &'a [String],
    /// Each request's timeout.
    pub timeout: Duration,
    /// The roles.
    pub roles: &'a [Role],
    /// Seed, case index, operations per case.
    pub case: (u64, u64, usize),
    /// Damaged copies the damaged role reads at the end of the case.
    pub damaged_trials: u64,
}

/// What one case came to.
pub enum CaseRun {
    /// The tally of its roles.
    Ran(Tally),
    /// Not run, and why (a worktree case, an object format the adapter lacks, a gate
    /// divergence of our own).
    Skipped(String),
}

/// The operations a case runs: drawn from its seed as it goes, or given (a replay while
/// minimizing).
pub enum Source<'a> {
    /// Abstract operations resolved against the model as the case stands.
    Drawn(&'a [AOp]),
    /// Concrete operations.
    Given(&'a [Op]),
}

/// Run one generated case.
pub fn run_case(env: &Env, spec: &CaseSpec<'_>) -> Result<CaseRun, String> {
    let (seed, index, nops) = spec.case;
    let (opts, aops) = crate::cases::generate::generate(seed, index, nops);
    run_ops(env, spec, opts, Source::Drawn(&aops))
}

/// Run a case's operations with every role of `spec`.
pub fn run_ops(
    env: &Env,
    spec: &CaseSpec<'_>,
    opts: CaseOptions,
    ops: Source<'_>,
) -> Result<CaseRun, String> {
    if opts.worktree {
        return Ok(CaseRun::Skipped("a worktree case".into()));
    }
    let hash = format!("{:?}", opts.hash()).to_lowercase();
    let mut sides = Vec::new();
    for &role in spec.roles {
        let adapter = Adapter::start(spec.argv, spec.timeout)?;
        if !adapter.hello.hashes.contains(&hash) {
            return Ok(CaseRun::Skipped(format!("object format {hash}")));
        }
        let copy = matches!(role, Role::Writer | Role::Interleaved)
            .then(tempfile::TempDir::new)
            .transpose();
        let copy = copy.map_err(|e| e.to_string())?;
        sides.push(Side {
            role,
            adapter,
            copy,
            txns: 0,
            failed: None,
            failed_at: None,
        });
    }
    let mut tally = Tally::default();
    let hook = |exec: &mut Executor<'_>, op: Option<&Op>| {
        match op {
            None => start(exec, &mut sides, &mut tally),
            Some(op) => step(exec, op, &mut sides, &mut tally),
        }
        sides.iter().any(|s| s.failed.is_none())
    };
    let exec = match ops {
        Source::Drawn(aops) => step_abstract(env, opts, aops, hook)?,
        Source::Given(ops) => step_concrete(env, opts, ops, hook)?,
    };
    if exec.diverged() {
        return Ok(CaseRun::Skipped("the gate's own divergence".into()));
    }
    let (seed, index, _) = spec.case;
    let case = format!("seed{seed}-case{index}");
    for side in &mut sides {
        check_end(side, &exec, &mut tally);
        if side.role == Role::Damaged {
            check_damaged(side, &exec, (seed, index, spec.damaged_trials), &mut tally);
        } else if !matches!(side.failed, Some((ImplCheck::Answers, _))) {
            // A case the adapter answered through to the end (whatever it answered).
            tally.count(side.role, ImplCheck::Answers, true);
        }
        let at = side.failed_at.unwrap_or(exec.result.ops.len());
        if let Some((check, detail)) = side.failed.take() {
            let f = finding(&exec, (side.role, check, at), (&case, index), detail);
            tally.findings.push(f);
        }
    }
    Ok(CaseRun::Ran(tally))
}

/// Before the first step: each writing side copies git's repository; each side opens its own
/// (the damaged side waits for the case's end).
fn start(exec: &mut Executor<'_>, sides: &mut [Side], t: &mut Tally) {
    for s in sides.iter_mut().filter(|s| s.role != Role::Damaged) {
        if let Some(copy) = &s.copy {
            if let Err(e) = copy_repo(exec, copy.path()) {
                s.failed = Some((ImplCheck::Answers, format!("copying git's repository: {e}")));
                continue;
            }
        }
        s.open(exec, t);
    }
}

/// git's repository copied to `to`. A case without auto-compaction (which the gate asks of
/// git through its test variable) says so in the copy's configuration, where an
/// implementation looks.
fn copy_repo(exec: &Executor<'_>, to: &std::path::Path) -> Result<(), String> {
    crate::stack_files::copy_dir(exec.git_repo(), to, None)?;
    if exec.auto_compaction() {
        return Ok(());
    }
    let args = ["config", "reftable.autoCompaction", "false"];
    let o = exec.env_git().run(to, &args, "", 0);
    if !o.exit.success() {
        return Err(format!("git config: {}", o.stderr.trim()));
    }
    Ok(())
}

/// After a step that passed the gate's checks: each side that has not failed does its part
/// (the damaged side none: its work is at the case's end).
fn step(exec: &mut Executor<'_>, op: &Op, sides: &mut [Side], t: &mut Tally) {
    let git = match exec.git_snapshot() {
        Ok(s) => s,
        Err(_) => return,
    };
    let touched = op.touched_refs();
    for s in sides.iter_mut().filter(|s| s.failed.is_none()) {
        if s.role == Role::Damaged {
            continue;
        }
        if s.role == Role::Reader {
            if s.open(exec, t) {
                s.check_reads(&git, &touched, t);
            }
            continue;
        }
        if s.takes(op) {
            s.apply(exec, op, t);
        } else {
            s.git_applies(exec, op);
        }
        if s.failed.is_none() {
            s.check_state(exec, &git, t);
        }
        if s.failed.is_none() {
            s.check_bytes(exec, t);
        }
        if s.failed.is_none() && s.role == Role::Interleaved && s.open(exec, t) {
            s.check_reads(&git, &touched, t);
        }
    }
    for s in sides.iter_mut().filter(|s| s.failed.is_some()) {
        s.failed_at.get_or_insert(exec.result.ops.len());
    }
}

/// A side's first difference as a finding, with the operations up to it.
fn finding(
    exec: &Executor<'_>,
    (role, check, at): (Role, ImplCheck, usize),
    (case, index): (&str, u64),
    detail: String,
) -> ImplFinding {
    let ops = exec.result.ops[..at.min(exec.result.ops.len())].to_vec();
    ImplFinding {
        role,
        check,
        case: case.to_string(),
        index,
        step: at.saturating_sub(1),
        detail,
        ops,
        known: None,
    }
}
