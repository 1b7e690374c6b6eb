//! The variants of the operations a run draws: each operation, as it is about to run on the
//! case's state, is labelled with what it exercises (which `update-ref` command with which
//! expectation on which kind of ref, which option of a reflog command on which kind of ref,
//! which branch command on which branch, which name form in a worktree), and each stack git
//! wrote by the update-index layout our verify was fed (`executor/verified.rs`). A run
//! counts the labels; [`every`] is the list a default run must draw at least once each, so
//! that a variant the generator stops drawing shows (`conformance run --require-variants`).
//!
//! The labels are read off the concrete operation and the model's state, not taken from the
//! generator: a variant counts as drawn only when it reached git.

use std::collections::BTreeMap;

use crate::git::profile::Features;
use crate::model::{MValue, Model};
use crate::ops::{Expire, Op, Update, Value};

/// Labels drawn, with how often.
pub type Drawn = BTreeMap<String, u64>;

/// What a ref holds before the operation.
const HOLDS: [&str; 4] = ["missing", "object", "symref", "dangling symref"];

/// The `update-ref --stdin` commands an update can be.
const COMMANDS: [&str; 8] = [
    "create",
    "update",
    "delete",
    "verify",
    "symref-create",
    "symref-update",
    "symref-delete",
    "symref-verify",
];

/// What an update expects of the ref's old value.
const EXPECTS: [&str; 4] = ["nothing", "no ref", "an object", "a symref target"];

/// A transaction whose updates log different messages (`fetch --atomic` of new and moved
/// refs).
const PER_UPDATE_MESSAGES: &str = "transaction: a message per update";

/// A name with a component ending in `.lock` (refused by git's name check).
const LOCK_COMPONENT: &str = "a name with a component ending in .lock";

/// Whether a component of `name` ends in `.lock`.
fn lock_component(name: &str) -> bool {
    name.split('/').any(|c| c.ends_with(".lock"))
}

/// The name forms a worktree transaction draws.
const WORKTREE_FORMS: [&str; 6] = [
    "HEAD",
    "a pseudoref",
    "refs/bisect/",
    "refs/worktree/",
    "refs/rewritten/",
    "a shared ref",
];

/// The kind of value `name` has in `model`.
fn holds(model: &Model, name: &str) -> &'static str {
    match model.refs.get(name) {
        None => HOLDS[0],
        Some(MValue::Oid(_)) => HOLDS[1],
        Some(MValue::Symref(_)) if model.resolve(name).is_some() => HOLDS[2],
        Some(MValue::Symref(_)) => HOLDS[3],
    }
}

/// The command and whether it is `option no-deref`'d, as update-ref is given `u`.
fn command(u: &Update) -> Option<(&'static str, bool)> {
    let lines = u.stdin_lines()?;
    let no_deref = lines.lines().any(|l| l == "option no-deref");
    let word = lines.lines().last()?.split(' ').next()?;
    COMMANDS
        .iter()
        .find(|c| **c == word)
        .map(|c| (*c, no_deref))
}

fn expects(u: &Update) -> &'static str {
    match &u.old {
        None => EXPECTS[0],
        Some(Value::Oid(h)) if h.bytes().all(|b| b == b'0') => EXPECTS[1],
        Some(Value::Oid(_)) => EXPECTS[2],
        Some(Value::Symref(_)) => EXPECTS[3],
    }
}

fn worktree_form(name: &str) -> &'static str {
    let under = |p: &str| name.starts_with(p) || name == p.trim_end_matches('/');
    if name == "HEAD" {
        WORKTREE_FORMS[0]
    } else if !name.starts_with("refs/") {
        WORKTREE_FORMS[1]
    } else if under("refs/bisect/") {
        WORKTREE_FORMS[2]
    } else if under("refs/worktree/") {
        WORKTREE_FORMS[3]
    } else if under("refs/rewritten/") {
        WORKTREE_FORMS[4]
    } else {
        WORKTREE_FORMS[5]
    }
}

/// The labels of `op` about to run on `model` (the main repository's state).
pub fn of(op: &Op, model: &Model) -> Vec<String> {
    let mut out = vec![format!("command: {}", op.kind())];
    match op {
        Op::Txn { updates, .. }
        | Op::BatchTxn { updates, .. }
        | Op::RefsCommand { updates, .. }
        | Op::Push { updates }
        | Op::Fetch { updates, .. }
        | Op::Tag { updates, .. } => {
            for u in updates {
                out.extend(update_labels(u, model));
            }
            if updates.len() >= 10 {
                out.push("transaction: ten updates or more".into());
            }
            if let Op::Fetch { messages, .. } = op {
                if messages.iter().any(|m| m != &messages[0]) {
                    out.push(PER_UPDATE_MESSAGES.into());
                }
            }
        }
        Op::WorktreeTxn { updates, .. } => {
            for u in updates {
                out.push(format!("worktree: {}", worktree_form(&u.refname)));
            }
        }
        Op::ReflogExpire {
            refname,
            expire,
            update_ref,
            unreachable,
        } => {
            let on = holds(model, refname);
            let mut options = vec![match expire {
                Expire::All => "--expire=all",
                Expire::Before(_) => "--expire=<time>",
                Expire::Never => "--expire=never",
            }];
            if *unreachable {
                options.push("--expire-unreachable");
            }
            if *update_ref {
                options.push("--updateref");
            }
            for o in options {
                out.push(format!("reflog expire {o}: of {on}"));
            }
        }
        Op::ReflogDelete {
            refname,
            rewrite,
            update_ref,
            ..
        } => {
            let on = holds(model, refname);
            out.push(format!("reflog delete: of {on}"));
            if *rewrite {
                out.push(format!("reflog delete --rewrite: of {on}"));
            }
            if *update_ref {
                out.push(format!("reflog delete --updateref: of {on}"));
            }
        }
        Op::ReflogDrop { refname } => {
            out.push(format!("reflog drop: of {}", holds(model, refname)));
        }
        Op::Branch {
            old,
            new,
            copy,
            force,
            ..
        } => out.extend(branch_labels(model, old, new, *copy, *force, op.kind())),
        Op::Orphan { .. } => {
            let detached = matches!(model.refs.get("HEAD"), Some(MValue::Oid(_)));
            let from = if detached { "detached" } else { "on a branch" };
            out.push(format!("checkout -l --orphan: from {from}"));
        }
        Op::SymbolicRef { name, .. } => {
            let which = if name == "HEAD" {
                "HEAD"
            } else {
                "another ref"
            };
            out.push(format!("symbolic-ref: of {which}"));
        }
        Op::MaintenancePackRefs | Op::PackRefs { .. } => {}
    }
    out
}

fn update_labels(u: &Update, model: &Model) -> Vec<String> {
    let Some((cmd, no_deref)) = command(u) else {
        return Vec::new();
    };
    // `symref-delete` and `symref-verify` take no-deref always.
    let cmd = if no_deref && !matches!(cmd, "symref-delete" | "symref-verify") {
        format!("no-deref {cmd}")
    } else {
        cmd.to_string()
    };
    let mut out = vec![
        format!("update: {cmd}"),
        format!("update: {cmd} of {}", holds(model, &u.refname)),
        format!("update: expecting {}", expects(u)),
    ];
    let head = match model.refs.get("HEAD") {
        Some(MValue::Symref(t)) => Some(t.as_str()),
        _ => None,
    };
    if lock_component(&u.refname) {
        out.push(format!("update: {LOCK_COMPONENT}"));
    } else if u.refname.contains(".lock") {
        out.push("update: a name with .lock inside a component".into());
    }
    if u.refname == "HEAD" {
        out.push("update: of HEAD".into());
    } else if head == Some(u.refname.as_str()) {
        out.push("update: of HEAD's branch".into());
    }
    out
}

fn branch_labels(
    model: &Model,
    old: &str,
    new: &str,
    copy: bool,
    force: bool,
    kind: &str,
) -> Vec<String> {
    let full = |n: &str| format!("refs/heads/{n}");
    let head = match model.refs.get("HEAD") {
        Some(MValue::Symref(t)) => Some(t.clone()),
        _ => None,
    };
    let which = if head.as_deref() == Some(full(old).as_str()) {
        "the checked-out branch"
    } else if model.refs.contains_key(&full(old)) {
        "another branch"
    } else {
        "a missing branch"
    };
    // The generator's invalid names: one with `..` in it, and ones with a component ending
    // in `.lock` (labelled as such too).
    let to = if new.contains("..") || lock_component(new) {
        "an invalid name"
    } else if new.starts_with(&format!("{old}/")) {
        "a name under it"
    } else if model.refs.contains_key(&full(new)) {
        "an existing branch"
    } else {
        "a new name"
    };
    let flag = match (copy, force) {
        (false, false) => "-m",
        (false, true) => "-M",
        (true, false) => "-c",
        (true, true) => "-C",
    };
    let flag = if kind == "refs rename" {
        "refs rename"
    } else {
        flag
    };
    let mut out = vec![
        format!("branch {flag}: of {which}"),
        format!("branch {flag}: to {to}"),
    ];
    if lock_component(new) {
        out.push(format!("branch {flag}: to {LOCK_COMPONENT}"));
    }
    out
}

/// Every label a default run must draw on a git with `features`: the commands it has, and
/// the variants the generator is meant to reach on them.
pub fn every(features: &Features) -> Vec<String> {
    let mut out = Vec::new();
    let mut kinds = vec![
        "update-ref transaction",
        "update-ref transaction in a worktree",
        "push --atomic",
        "fetch --atomic",
        "tag",
        "tag -d",
        "reflog expire",
        "reflog expire --expire-unreachable=now",
        "reflog delete",
        "maintenance pack-refs",
        "pack-refs",
        "pack-refs --auto",
        "checkout -l --orphan",
        "branch -m/-M",
        "branch -c/-C",
        "symbolic-ref",
    ];
    if features.batch_updates {
        kinds.push("update-ref --batch-updates");
    }
    if features.refs_writes {
        kinds.extend(["refs create/update/delete", "refs rename"]);
    }
    if features.reflog_drop {
        kinds.push("reflog drop");
    }
    out.extend(kinds.iter().map(|k| format!("command: {k}")));
    let commands = COMMANDS
        .iter()
        .filter(|c| features.symref_commands || !c.starts_with("symref-"));
    for c in commands.clone() {
        out.push(format!("update: {c}"));
    }
    for c in ["update", "create", "delete"] {
        out.push(format!("update: no-deref {c}"));
    }
    for c in ["create", "update", "delete", "verify"] {
        for h in HOLDS {
            out.push(format!("update: {c} of {h}"));
        }
    }
    for e in EXPECTS {
        if features.symref_commands || e != "a symref target" {
            out.push(format!("update: expecting {e}"));
        }
    }
    out.extend(["update: of HEAD".into(), "update: of HEAD's branch".into()]);
    out.push("transaction: ten updates or more".into());
    out.push(PER_UPDATE_MESSAGES.into());
    out.push(format!("update: {LOCK_COMPONENT}"));
    out.push("update: a name with .lock inside a component".into());
    for f in WORKTREE_FORMS {
        out.push(format!("worktree: {f}"));
    }
    for o in [
        "--expire=all",
        "--expire=<time>",
        "--expire=never",
        "--expire-unreachable",
        "--updateref",
    ] {
        for h in ["missing", "object", "symref"] {
            out.push(format!("reflog expire {o}: of {h}"));
        }
    }
    for o in ["", " --rewrite", " --updateref"] {
        for h in ["missing", "object", "symref"] {
            out.push(format!("reflog delete{o}: of {h}"));
        }
    }
    if features.reflog_drop {
        for h in ["missing", "object", "symref"] {
            out.push(format!("reflog drop: of {h}"));
        }
    }
    out.extend(branch_variants(features));
    // The layouts of update indexes git's stacks take, each fed to our verify
    // (`executor/verified.rs`); git leaves no gap between tables.
    for l in [
        "one table",
        "several tables",
        "a table of several update indexes",
        "tables with consecutive update indexes",
    ] {
        out.push(format!("verify: {l}"));
    }
    out.push("checkout -l --orphan: from on a branch".into());
    out.push("checkout -l --orphan: from detached".into());
    out.push("symbolic-ref: of HEAD".into());
    out.push("symbolic-ref: of another ref".into());
    out
}

/// The variants of `branch -m/-M/-c/-C` and `git refs rename` that [`every`] asks for.
fn branch_variants(features: &Features) -> Vec<String> {
    let mut out = Vec::new();
    // The forced commands differ from the others only onto an existing branch. The model
    // cannot interleave two reflogs, so the generator overwrites only branches without one:
    // `-C` onto one is drawn on some seeds, not reliably at a run's size, and not required.
    out.push("branch -M: to an existing branch".into());
    for f in ["-M", "-C"] {
        out.push(format!("branch {f}: to a new name"));
    }
    let mut flags = vec!["-m", "-c"];
    if features.refs_writes {
        flags.push("refs rename");
    }
    for f in flags {
        for w in [
            "the checked-out branch",
            "another branch",
            "a missing branch",
        ] {
            out.push(format!("branch {f}: of {w}"));
        }
        for t in [
            "an invalid name",
            "a name under it",
            "an existing branch",
            "a new name",
        ] {
            out.push(format!("branch {f}: to {t}"));
        }
    }
    out.push(format!("branch -c: to {LOCK_COMPONENT}"));
    out
}

/// The labels of [`every`] that `drawn` lacks.
pub fn never_drawn(features: &Features, drawn: &Drawn) -> Vec<String> {
    every(features)
        .into_iter()
        .filter(|l| !drawn.contains_key(l))
        .collect()
}

/// What git does to refs that no generated operation drives yet (listed in the report, so
/// that a reader knows what the gate does not cover).
pub const NOT_DRIVEN: [&str; 9] = [
    "git update-ref <ref> <new> [<old>] (the argument form, not --stdin)",
    "git branch -d/-D",
    "git remote rename/remove (refs and reflogs moved under refs/remotes/)",
    "git replace, git notes (refs/replace/, refs/notes/ written by their commands)",
    "git reset, git commit, git merge (HEAD's branch and ORIG_HEAD moved by porcelain)",
    "git checkout -b, git switch -c (a new branch and HEAD in one command)",
    "git worktree add/remove/prune (a worktree's stack created and removed)",
    "git stash push/drop (refs/stash and its reflog; only an end-of-case probe)",
    "git gc --auto, git maintenance run --auto (compaction as the porcelain schedules it)",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::LogRefsOpt;
    use reftable::{HashId, ObjectId};

    const ID: &str = "1c2a7e431f340e344b233e7a96a11e55310b1471";

    fn model() -> Model {
        let mut m = Model::new(ObjectId::null(HashId::Sha1), LogRefsOpt::True, 4096);
        m.init("main");
        let id = ObjectId::from_hex(ID).unwrap();
        m.refs.insert("refs/heads/main".into(), MValue::Oid(id));
        m.refs
            .insert("refs/s".into(), MValue::Symref("refs/heads/main".into()));
        m.refs
            .insert("refs/d".into(), MValue::Symref("refs/heads/none".into()));
        m
    }

    fn txn(updates: Vec<Update>) -> Op {
        Op::Txn {
            updates,
            message: "m".into(),
            create_reflog: false,
        }
    }

    fn update(name: &str, new: Option<Value>, old: Option<Value>, no_deref: bool) -> Update {
        Update {
            refname: name.into(),
            new,
            old,
            no_deref,
        }
    }

    #[test]
    fn updates_are_labelled_by_command_expectation_and_what_the_ref_holds() {
        let m = model();
        let verify = update(
            "refs/s",
            None,
            Some(Value::Symref("refs/heads/main".into())),
            true,
        );
        let labels = of(&txn(vec![verify]), &m);
        for l in [
            "update: symref-verify",
            "update: symref-verify of symref",
            "update: expecting a symref target",
        ] {
            assert!(labels.contains(&l.to_string()), "{l}: {labels:?}");
        }
        let head = update("refs/heads/main", Some(Value::Oid(ID.into())), None, true);
        let labels = of(&txn(vec![head]), &m);
        for l in [
            "update: no-deref update of object",
            "update: expecting nothing",
            "update: of HEAD's branch",
        ] {
            assert!(labels.contains(&l.to_string()), "{l}: {labels:?}");
        }
        let dangling = update("refs/d", None, Some(Value::Oid("0".repeat(40))), false);
        let labels = of(&txn(vec![dangling]), &m);
        assert!(labels.contains(&"update: verify of dangling symref".to_string()));
        assert!(labels.contains(&"update: expecting no ref".to_string()));
    }

    #[test]
    fn reflog_commands_branches_and_worktree_names_are_labelled() {
        let m = model();
        let expire = Op::ReflogExpire {
            refname: "HEAD".into(),
            expire: Expire::Never,
            update_ref: true,
            unreachable: true,
        };
        let labels = of(&expire, &m);
        for l in [
            "reflog expire --expire=never: of symref",
            "reflog expire --expire-unreachable: of symref",
            "reflog expire --updateref: of symref",
        ] {
            assert!(labels.contains(&l.to_string()), "{l}: {labels:?}");
        }
        let branch = Op::Branch {
            old: "main".into(),
            new: "main/x".into(),
            copy: true,
            force: false,
            refs_rename: None,
        };
        let labels = of(&branch, &m);
        assert!(labels.contains(&"branch -c: of the checked-out branch".to_string()));
        assert!(labels.contains(&"branch -c: to a name under it".to_string()));
        let to_lock = Op::Branch {
            old: "main".into(),
            new: "bad.lock/name".into(),
            copy: false,
            force: false,
            refs_rename: None,
        };
        let labels = of(&to_lock, &m);
        assert!(labels.contains(&"branch -m: to an invalid name".to_string()));
        assert!(labels.contains(&format!("branch -m: to {LOCK_COMPONENT}")));
        let wt = Op::WorktreeTxn {
            updates: [
                "HEAD",
                "ORIG_HEAD",
                "refs/bisect/x",
                "refs/worktree",
                "refs/heads/a",
            ]
            .iter()
            .map(|n| update(n, Some(Value::Oid(ID.into())), None, false))
            .collect(),
            message: String::new(),
            create_reflog: false,
        };
        let labels = of(&wt, &m);
        for f in [
            "HEAD",
            "a pseudoref",
            "refs/bisect/",
            "refs/worktree/",
            "a shared ref",
        ] {
            assert!(
                labels.contains(&format!("worktree: {f}")),
                "{f}: {labels:?}"
            );
        }
    }

    #[test]
    fn a_fetch_of_new_and_moved_refs_is_a_message_per_update() {
        let m = model();
        let fetch = |whats: [&str; 2]| Op::Fetch {
            updates: ["refs/heads/new", "refs/heads/main"]
                .iter()
                .map(|n| update(n, Some(Value::Oid(ID.into())), None, false))
                .collect(),
            messages: whats
                .iter()
                .map(|w| format!("fetch --atomic .: {w}"))
                .collect(),
        };
        let mixed = of(&fetch(["storing ref", "fast-forward"]), &m);
        assert!(
            mixed.contains(&PER_UPDATE_MESSAGES.to_string()),
            "{mixed:?}"
        );
        let one = of(&fetch(["fast-forward", "fast-forward"]), &m);
        assert!(!one.contains(&PER_UPDATE_MESSAGES.to_string()), "{one:?}");
    }

    #[test]
    fn a_git_without_a_command_is_not_asked_for_its_variants() {
        let mut f = Features::default();
        let without = every(&f);
        assert!(!without.iter().any(|l| l.contains("symref-")));
        assert!(!without.iter().any(|l| l.contains("batch-updates")));
        f.symref_commands = true;
        f.batch_updates = true;
        let with = every(&f);
        assert!(with.contains(&"update: symref-verify".to_string()));
        assert!(with.contains(&"command: update-ref --batch-updates".to_string()));
    }
}
