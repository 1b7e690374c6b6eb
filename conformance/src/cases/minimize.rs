//! The smallest case that still shows the divergence wanted (of the same check and class, and no
//! known git defect): ddmin over the case's operations, then over each transaction's
//! updates; with a deadline (a run's time budget), no case is run after it and what is left
//! is the smallest found by then.

use std::time::Instant;

use crate::cases::case::run_concrete;
use crate::finding::divergence::Divergence;
use crate::finding::minimize::ddmin;
use crate::ops::{CaseOptions, Op};
use crate::setup::env::Env;

/// What a minimization keeps: the divergences that count as the one being minimized.
pub type Wanted<'a> = &'a dyn Fn(&Divergence) -> bool;

/// Whether `ops` still shows a divergence `wanted` takes; after `deadline`, not run and taken
/// as no.
fn fails(
    env: &Env,
    opts: CaseOptions,
    ops: &[Op],
    wanted: Wanted<'_>,
    runs: &mut usize,
    deadline: Option<Instant>,
) -> bool {
    if crate::budget::past(deadline) {
        return false;
    }
    *runs += 1;
    run_concrete(env, opts, ops)
        .map(|r| r.divergences.iter().any(wanted))
        .unwrap_or(false)
}

/// Minimize `ops` keeping a divergence `wanted` takes (a case stops at its first divergence,
/// so a candidate that shows another one first is no candidate), running no case after
/// `deadline`. Returns the minimized operations and the number of case runs it took.
pub fn minimize(
    env: &Env,
    opts: CaseOptions,
    ops: Vec<Op>,
    wanted: Wanted<'_>,
    deadline: Option<Instant>,
) -> (Vec<Op>, usize) {
    let mut runs = 0;
    let mut ops = ddmin(ops, &mut |c| {
        fails(env, opts, c, wanted, &mut runs, deadline)
    });
    // Then shrink each transaction's update list.
    for i in 0..ops.len() {
        let Op::Txn {
            updates,
            message,
            create_reflog,
        } = ops[i].clone()
        else {
            continue;
        };
        if updates.len() < 2 {
            continue;
        }
        let small = ddmin(updates, &mut |u| {
            let mut trial = ops.clone();
            trial[i] = Op::Txn {
                updates: u.to_vec(),
                message: message.clone(),
                create_reflog,
            };
            fails(env, opts, &trial, wanted, &mut runs, deadline)
        });
        ops[i] = Op::Txn {
            updates: small,
            message,
            create_reflog,
        };
    }
    (ops, runs)
}
