//! The smallest case that still shows a divergence of the same check: ddmin over the
//! case's operations, then over each transaction's updates; with a deadline (a run's time
//! budget), no case is run after it and what is left is the smallest found by then.

use std::time::Instant;

use crate::finding::divergence::Check;
use crate::finding::minimize::ddmin;
use crate::generated::case::run_concrete;
use crate::ops::{CaseOptions, Op};
use crate::setup::env::Env;

/// Whether `ops` still diverges on `check`; after `deadline`, not run and taken as no.
fn fails(
    env: &Env,
    opts: CaseOptions,
    ops: &[Op],
    check: Check,
    runs: &mut usize,
    deadline: Option<Instant>,
) -> bool {
    if crate::budget::past(deadline) {
        return false;
    }
    *runs += 1;
    run_concrete(env, opts, ops)
        .map(|r| r.divergences.iter().any(|d| d.check == check))
        .unwrap_or(false)
}

/// Minimize `ops` keeping a divergence on `check`. Returns the minimized operations and the
/// number of case runs it took.
pub fn minimize(env: &Env, opts: CaseOptions, ops: Vec<Op>, check: Check) -> (Vec<Op>, usize) {
    minimize_until(env, opts, ops, check, None)
}

/// [`minimize`], running no case after `deadline`.
pub fn minimize_until(
    env: &Env,
    opts: CaseOptions,
    ops: Vec<Op>,
    check: Check,
    deadline: Option<Instant>,
) -> (Vec<Op>, usize) {
    let mut runs = 0;
    let mut ops = ddmin(ops, &mut |c| {
        fails(env, opts, c, check, &mut runs, deadline)
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
            fails(env, opts, &trial, check, &mut runs, deadline)
        });
        ops[i] = Op::Txn {
            updates: small,
            message,
            create_reflog,
        };
    }
    (ops, runs)
}
