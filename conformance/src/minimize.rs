//! Delta debugging (ddmin) over a case's operations, then over each transaction's updates:
//! the smallest case that still shows a divergence of the same check.

use crate::case::{run_concrete, Check, Env};
use crate::ops::{CaseOptions, Op};

/// Whether `ops` still diverges on `check`.
fn fails(env: &Env, opts: CaseOptions, ops: &[Op], check: Check, runs: &mut usize) -> bool {
    *runs += 1;
    run_concrete(env, opts, ops)
        .map(|r| r.divergences.iter().any(|d| d.check == check))
        .unwrap_or(false)
}

/// ddmin over a list: returns a 1-minimal sublist for which `test` holds.
pub fn ddmin<T: Clone>(items: Vec<T>, test: &mut dyn FnMut(&[T]) -> bool) -> Vec<T> {
    let mut items = items;
    let mut n = 2usize;
    while items.len() >= 2 {
        let chunk = items.len().div_ceil(n);
        let mut reduced = false;
        // Try removing each chunk (testing the complement).
        let mut start = 0;
        while start < items.len() {
            let end = (start + chunk).min(items.len());
            let complement: Vec<T> = items[..start]
                .iter()
                .chain(&items[end..])
                .cloned()
                .collect();
            if !complement.is_empty() && test(&complement) {
                items = complement;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
            start = end;
        }
        if !reduced {
            if n >= items.len() {
                break;
            }
            n = (n * 2).min(items.len());
        }
    }
    items
}

/// Minimize `ops` keeping a divergence on `check`. Returns the minimized operations and the
/// number of case runs it took.
pub fn minimize(env: &Env, opts: CaseOptions, ops: Vec<Op>, check: Check) -> (Vec<Op>, usize) {
    let mut runs = 0;
    let mut ops = ddmin(ops, &mut |c| fails(env, opts, c, check, &mut runs));
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
            fails(env, opts, &trial, check, &mut runs)
        });
        ops[i] = Op::Txn {
            updates: small,
            message,
            create_reflog,
        };
    }
    (ops, runs)
}

#[cfg(test)]
mod tests {
    use super::ddmin;

    #[test]
    fn ddmin_finds_the_culprits() {
        let items: Vec<u32> = (0..40).collect();
        let mut calls = 0;
        let out = ddmin(items, &mut |c| {
            calls += 1;
            c.contains(&7) && c.contains(&31)
        });
        assert_eq!(out, vec![7, 31]);
        assert!(calls < 200, "{calls} calls");
    }
}
