//! Running one case on an [`Executor`], generated from (seed, index) or from concrete
//! operations.

use crate::cases::executor::Executor;
use crate::cases::generate::{AOp, Resolver};
use crate::cases::outcome::CaseResult;
use crate::git::profile::Profile;
use crate::ops::{CaseOptions, Op};
use crate::setup::env::Env;

/// Run a generated case: options and abstract operations from (seed, index), resolved while
/// the case runs. Stops at the first divergent step.
pub fn run_generated(env: &Env, seed: u64, index: u64, nops: usize) -> Result<CaseResult, String> {
    let (opts, aops) = crate::cases::generate::generate(seed, index, nops);
    run_abstract(env, opts, &aops)
}

/// [`run_generated`] with the reach only `conformance run` has: some cases get a linked
/// worktree ([`generate_with_reach`](crate::cases::generate::generate_with_reach)).
pub fn run_generated_with_reach(
    env: &Env,
    seed: u64,
    index: u64,
    nops: usize,
) -> Result<CaseResult, String> {
    let (opts, aops) = crate::cases::generate::generate_with_reach(seed, index, nops);
    run_abstract(env, opts, &aops)
}

/// Run abstract operations under `opts`, each resolved against the model as the case
/// stands (a worktree transaction against the worktree's view).
pub fn run_abstract(env: &Env, opts: CaseOptions, aops: &[AOp]) -> Result<CaseResult, String> {
    let exec = step_abstract(env, opts, aops, |_, _| true)?;
    Ok(exec.finish())
}

/// Run abstract operations under `opts` as [`run_abstract`] does, handing the executor to
/// `hook` before the first step (with no operation) and once each step has run and passed
/// the gate's checks; `hook` says whether to go on. The executor is returned unfinished: no
/// end-of-case checks ran.
pub fn step_abstract<'e>(
    env: &'e Env,
    opts: CaseOptions,
    aops: &[AOp],
    mut hook: impl FnMut(&mut Executor<'e>, Option<&Op>) -> bool,
) -> Result<Executor<'e>, String> {
    let pool = env.pool(opts.hash()).pool.clone();
    let mut exec = Executor::new(env, opts)?;
    if !hook(&mut exec, None) {
        return Ok(exec);
    }
    let mut resolver = Resolver::new(pool, &env.profile.features, &exec.opts);
    for a in aops {
        let op = match a {
            AOp::WorktreeTxn(..) => match exec.worktree_model() {
                Some(m) => resolver.resolve(a, &m, &exec.null()),
                None => None,
            },
            _ => resolver.resolve(a, exec.model(), &exec.null()),
        };
        let Some(op) = op else {
            continue;
        };
        exec.step(op.clone());
        if exec.diverged() || !hook(&mut exec, Some(&op)) {
            break;
        }
    }
    Ok(exec)
}

/// Why `ops` cannot run on the git of `profile`, if they cannot: a git without `symref-*`
/// commands (2.45) cannot run transactions that use them, one without `--batch-updates`
/// (before 2.50) no batch.
pub fn not_applicable(profile: &Profile, ops: &[Op]) -> Option<String> {
    let batches = ops.iter().any(|op| matches!(op, Op::BatchTxn { .. }));
    if batches && !profile.features.batch_updates {
        return Some(format!(
            "the case uses update-ref --batch-updates, which git {} lacks (2.50+)",
            profile.version
        ));
    }
    let refs_writes = ops.iter().any(|op| {
        matches!(
            op,
            Op::RefsCommand { .. }
                | Op::Branch {
                    refs_rename: Some(_),
                    ..
                }
        )
    });
    if refs_writes && !profile.features.refs_writes {
        return Some(format!(
            "the case uses git refs create/update/delete/rename, which git {} lacks",
            profile.version
        ));
    }
    let uses_symref_commands = ops.iter().any(|op| match op {
        Op::Txn { updates, .. } | Op::WorktreeTxn { updates, .. } => updates
            .iter()
            .any(|u| u.stdin_lines().is_some_and(|l| l.contains("symref-"))),
        _ => false,
    });
    (uses_symref_commands && !profile.features.symref_commands).then(|| {
        format!(
            "the case uses symref-* commands, which git {} lacks (2.46+)",
            profile.version
        )
    })
}

/// Run concrete operations under `opts` as [`run_concrete`] does, handing the executor to
/// `hook` as [`step_abstract`] does.
pub fn step_concrete<'e>(
    env: &'e Env,
    opts: CaseOptions,
    ops: &[Op],
    mut hook: impl FnMut(&mut Executor<'e>, Option<&Op>) -> bool,
) -> Result<Executor<'e>, String> {
    let mut exec = Executor::new(env, opts)?;
    if !hook(&mut exec, None) {
        return Ok(exec);
    }
    for op in ops {
        exec.step(op.clone());
        if exec.diverged() || !hook(&mut exec, Some(op)) {
            break;
        }
    }
    Ok(exec)
}

/// Run concrete operations under `opts` (minimization), with the end-of-case checks a
/// generated case with these options gets.
pub fn run_concrete(env: &Env, opts: CaseOptions, ops: &[Op]) -> Result<CaseResult, String> {
    run_concrete_turns(env, opts, ops, false)
}

/// Replay a recorded case: [`run_concrete`] with every end-of-case check that takes turns
/// across cases, so that a case recorded when it took another turn (by an older build, or
/// before the turns were spaced differently) still shows what it showed then.
pub fn replay_concrete(env: &Env, opts: CaseOptions, ops: &[Op]) -> Result<CaseResult, String> {
    run_concrete_turns(env, opts, ops, true)
}

fn run_concrete_turns(
    env: &Env,
    opts: CaseOptions,
    ops: &[Op],
    every_turn: bool,
) -> Result<CaseResult, String> {
    let mut exec = Executor::with_turns(env, opts, every_turn)?;
    for op in ops {
        exec.step(op.clone());
        if exec.diverged() {
            break;
        }
    }
    Ok(exec.finish())
}
