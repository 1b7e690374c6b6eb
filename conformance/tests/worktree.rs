//! Worktree cases against real git: transactions in a linked worktree (`git -C <worktree>
//! update-ref --stdin` against `WorktreeRefDb`), with the worktree's stack, listing and
//! name lookups compared after every step, must show no unexpected divergence.

mod common;

use conformance::cases::case::{run_concrete, run_generated_with_reach};
use conformance::cases::generate::generate_with_reach;
use conformance::cases::outcome::CaseResult;
use conformance::defects::registry::{self, ExpectedSet};
use conformance::ops::{CaseOptions, Op, Update, Value};
use reftable::HashId;

const WORKTREE_KIND: &str = "update-ref transaction in a worktree";

fn assert_clean(r: &CaseResult, what: &str) {
    let known = ExpectedSet::load(&registry::default_path()).unwrap();
    let version = common::env().unwrap().profile.git_version();
    let unexpected: Vec<_> = r
        .divergences
        .iter()
        .filter(|d| known.matching(&version, d).is_none())
        .collect();
    assert!(
        unexpected.is_empty(),
        "{what} ({:?}) diverged: {unexpected:#?}\nops: {:#?}",
        r.options,
        r.ops.iter().map(|o| o.summary()).collect::<Vec<_>>()
    );
}

/// The generated worktree cases of seed 7 among its first cases run clean, and their
/// worktree transactions are applied by git often enough to matter.
#[test]
fn generated_worktree_cases_run_clean() {
    let Some(env) = common::env() else { return };
    let indexes: Vec<u64> = (0..40)
        .filter(|&i| generate_with_reach(7, i, 25).0.worktree)
        .take(5)
        .collect();
    assert!(indexes.len() >= 3, "too few worktree cases: {indexes:?}");
    let (mut ran, mut applied) = (0, 0);
    for index in indexes {
        let r = run_generated_with_reach(&env, 7, index, 25).unwrap();
        assert_clean(&r, &format!("case {index}"));
        let k = r.kinds.get(WORKTREE_KIND).copied().unwrap_or_default();
        ran += k[0];
        applied += k[1];
    }
    eprintln!("{ran} worktree transactions, {applied} applied by git");
    assert!(
        applied >= 5,
        "{ran} worktree transactions, {applied} applied"
    );
}

/// A hand-written case through every kind of name a worktree has: its `HEAD` detached, then
/// a symref to a shared branch and a commit through it (logged to the worktree's `HEAD`),
/// `refs/bisect/` and `refs/worktree/` refs with their D/F conflicts, shared refs written
/// from both worktrees, a worktree-only reflog; each compared with git after its step.
#[test]
fn worktree_name_kinds_run_clean() {
    let Some(env) = common::env() else { return };
    let c = env.pool(HashId::Sha1).pool.commits.clone();
    let id = |i: usize| Value::oid(&c[i]);
    let up = |name: &str, new: Option<Value>, old: Option<Value>| Update {
        refname: name.into(),
        new,
        old,
        no_deref: false,
    };
    let wt = |updates: Vec<Update>, message: &str| Op::WorktreeTxn {
        updates,
        message: message.into(),
        create_reflog: false,
    };
    let null = Value::null(HashId::Sha1);
    let ops = vec![
        Op::Txn {
            updates: vec![up("refs/heads/main", Some(id(0)), None)],
            message: "main".into(),
            create_reflog: false,
        },
        wt(
            vec![
                up("refs/bisect/bad", Some(id(1)), Some(null.clone())),
                up("refs/heads/wt", Some(id(1)), None),
            ],
            "both stacks",
        ),
        wt(
            vec![Update {
                no_deref: true,
                ..up("HEAD", Some(Value::Symref("refs/heads/wt".into())), None)
            }],
            "checkout wt",
        ),
        wt(vec![up("HEAD", Some(id(2)), Some(id(1)))], "commit in wt"),
        wt(vec![up("refs/bisect/bad/x", Some(id(0)), None)], "d/f own"),
        wt(vec![up("refs/worktree/a", Some(id(0)), None)], "own"),
        wt(
            vec![up("refs/worktree/a/b", Some(id(0)), None)],
            "d/f own 2",
        ),
        Op::Txn {
            updates: vec![up("refs/bisect/bad/x", Some(id(0)), None)],
            message: "main's own bisect".into(),
            create_reflog: false,
        },
        Op::Txn {
            updates: vec![up("refs/heads/wt", Some(id(3)), Some(id(2)))],
            message: "main moves wt".into(),
            create_reflog: false,
        },
        Op::WorktreeTxn {
            updates: vec![up("refs/worktree/logged", Some(id(1)), None)],
            message: "forced".into(),
            create_reflog: true,
        },
        wt(
            vec![up("refs/worktree/a", Some(null.clone()), None)],
            "delete",
        ),
        Op::PackRefs { auto: false },
    ];
    let opts = CaseOptions {
        worktree: true,
        ..Default::default()
    };
    let r = run_concrete(&env, opts, &ops).unwrap();
    assert_clean(&r, "hand-written worktree case");
    assert_eq!(r.ops.len(), ops.len());
    let k = r.kinds.get(WORKTREE_KIND).copied().unwrap_or_default();
    // Every worktree transaction but the two D/F conflicts goes through.
    assert_eq!(k, [8, 6], "{:?}", r.kinds);
}
