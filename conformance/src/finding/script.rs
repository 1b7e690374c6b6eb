//! A case as a plain shell script that runs its operations with git alone: no cargo, no
//! harness, ready to attach to a report to git's mailing list.
//!
//! The script makes the same objects the gate's pool has (same contents, dates and identities,
//! so the same ids), replays every operation with the committer time the gate used, and
//! prints each command's exit status and git's refs after it.

use crate::finding::divergence::{Check, Divergence};
use crate::git::driver::{BASE_TIME, EMAIL, NAME, TZ};
use crate::ops::{CaseOptions, Expire, Op, Update, Value};
use crate::setup::pool::ObjectPool;

/// Quote `s` for `sh` (single quotes; newlines and non-ASCII pass through).
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The committer tick of a transaction with `message` and `create_reflog`: the position
/// (from 1) of the pair among those `keys` has seen, added when new. Every transaction with
/// one message runs at one time, so one `update-ref -m <message> --stdin` can take them all.
pub fn tick_of(keys: &mut Vec<(String, bool)>, message: &str, create_reflog: bool) -> u64 {
    let at = match keys
        .iter()
        .position(|(m, c)| m == message && *c == create_reflog)
    {
        Some(at) => at,
        None => {
            keys.push((message.to_string(), create_reflog));
            keys.len() - 1
        }
    };
    at as u64 + 1
}

/// The committer tick of each operation, as the gate counts them ([`tick_of`]); other
/// operations run at the tick of the last transaction (0 before any).
pub fn ticks(ops: &[Op]) -> Vec<u64> {
    let mut tick = 0;
    let mut keys = Vec::new();
    ops.iter()
        .map(|op| {
            if let Some((message, create_reflog)) = op.clocked() {
                tick = tick_of(&mut keys, message, create_reflog);
            }
            tick
        })
        .collect()
}

/// `git maintenance run --auto --task=pack-refs`, never detached (`maintenance.autoDetach`,
/// which gits before 2.47 do not read and do not need).
pub const MAINTENANCE_PACK_REFS: [&str; 6] = [
    "-c",
    "maintenance.autoDetach=false",
    "maintenance",
    "run",
    "--auto",
    "--task=pack-refs",
];

/// The git command line (without `git`) and standard input that run `op`: what the gate
/// runs and what reproducers and the migration mode replay. A worktree transaction runs in
/// `../wt`, where the reproducer's worktree is ([`git_only`]).
pub fn git_invocation(op: &Op) -> (Vec<String>, Option<String>) {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match op {
        Op::WorktreeTxn {
            updates,
            message,
            create_reflog,
        } => {
            let (args, lines) = update_ref_stdin(updates, message, *create_reflog);
            let stdin = format!("start\n{lines}prepare\ncommit\n");
            ([v(&["-C", "../wt"]), args].concat(), Some(stdin))
        }
        Op::BatchTxn {
            updates,
            message,
            create_reflog,
        } => {
            let (mut args, lines) = update_ref_stdin(updates, message, *create_reflog);
            args.push("--batch-updates".into());
            (args, Some(lines))
        }
        Op::Txn {
            updates,
            message,
            create_reflog,
        } => {
            let (args, lines) = update_ref_stdin(updates, message, *create_reflog);
            (args, Some(format!("start\n{lines}prepare\ncommit\n")))
        }
        Op::RefsCommand {
            updates,
            message,
            create_reflog,
        } => (
            refs_command_args(&updates[0], message, *create_reflog),
            None,
        ),
        Op::SymbolicRef {
            name,
            target,
            message,
        } => {
            let mut args = v(&["symbolic-ref"]);
            if !message.is_empty() {
                args.extend(["-m".to_string(), message.clone()]);
            }
            args.extend([name.clone(), target.clone()]);
            (args, None)
        }
        Op::Push { updates } => (push_args(updates), None),
        Op::Fetch { updates, .. } => (Op::fetch_args(updates), None),
        Op::Tag {
            updates,
            create_reflog,
            ..
        } => (Op::tag_args(updates, *create_reflog), None),
        Op::ReflogExpire {
            refname,
            expire,
            update_ref,
            unreachable,
        } => (
            reflog_expire_args(refname, expire, *update_ref, *unreachable),
            None,
        ),
        Op::ReflogDrop { refname } => (v(&["reflog", "drop", refname]), None),
        Op::ReflogDelete {
            refname,
            index,
            rewrite,
            update_ref,
        } => {
            let flags = [(*rewrite, "--rewrite"), (*update_ref, "--updateref")];
            let mut args = v(&["reflog", "delete"]);
            args.extend(
                flags
                    .iter()
                    .filter(|(on, _)| *on)
                    .map(|(_, f)| f.to_string()),
            );
            args.push(format!("{refname}@{{{index}}}"));
            (args, None)
        }
        Op::MaintenancePackRefs => (v(&MAINTENANCE_PACK_REFS), None),
        Op::PackRefs { auto } => {
            let mut args = v(&["pack-refs"]);
            if *auto {
                args.push("--auto".into());
            }
            (args, None)
        }
        Op::Branch {
            old,
            new,
            refs_rename: Some(message),
            ..
        } => {
            let mut args = v(&["refs", "rename"]);
            if !message.is_empty() {
                args.push(format!("--message={message}"));
            }
            args.push(format!("refs/heads/{old}"));
            args.push(format!("refs/heads/{new}"));
            (args, None)
        }
        Op::Branch {
            old,
            new,
            copy,
            force,
            ..
        } => (
            v(&["branch", Op::branch_flag(*copy, *force), old, new]),
            None,
        ),
        Op::Orphan { branch } => (v(&["checkout", "-q", "-l", "--orphan", branch]), None),
    }
}

/// `git push --atomic . +<new>:<ref>…`, `:<ref>` for a deletion.
fn push_args(updates: &[Update]) -> Vec<String> {
    let mut args: Vec<String> = ["push", "--atomic", "."].map(String::from).to_vec();
    args.extend(updates.iter().map(|u| match &u.new {
        Some(Value::Oid(h)) if !h.bytes().all(|b| b == b'0') => format!("+{h}:{}", u.refname),
        _ => format!(":{}", u.refname),
    }));
    args
}

/// `git reflog expire`'s `--expire=` argument for `expire`.
pub fn expire_arg(expire: &Expire) -> String {
    match expire {
        Expire::All => "--expire=all".to_string(),
        Expire::Before(t) => format!("--expire={t} +0000"),
        Expire::Never => "--expire=never".to_string(),
    }
}

/// `git reflog expire` of `refname` as the gate runs it: unreachable entries pruned
/// whatever their age (`now`) or never.
pub fn reflog_expire_args(
    refname: &str,
    expire: &Expire,
    update_ref: bool,
    unreachable: bool,
) -> Vec<String> {
    let exp = expire_arg(expire);
    let unreachable = if unreachable {
        "--expire-unreachable=now"
    } else {
        "--expire-unreachable=never"
    };
    let mut args: Vec<String> = ["reflog", "expire", &exp, unreachable]
        .map(String::from)
        .to_vec();
    if update_ref {
        args.push("--updateref".into());
    }
    args.push(refname.into());
    args
}

/// `update-ref [-m message] [--create-reflog] --stdin` and the command lines of `updates`.
fn update_ref_stdin(
    updates: &[Update],
    message: &str,
    create_reflog: bool,
) -> (Vec<String>, String) {
    let mut args = vec!["update-ref".to_string()];
    if !message.is_empty() {
        args.extend(["-m".to_string(), message.to_string()]);
    }
    if create_reflog {
        args.push("--create-reflog".into());
    }
    args.push("--stdin".into());
    (
        args,
        updates.iter().filter_map(|u| u.stdin_lines()).collect(),
    )
}

/// `git refs create|update|delete` of one update: a null new id deletes (with the old id
/// if given), a null old id creates, anything else updates (with the old id if given).
pub fn refs_command_args(u: &Update, message: &str, create_reflog: bool) -> Vec<String> {
    let oid = |v: &Option<Value>| match v {
        Some(Value::Oid(h)) => Some(h.clone()),
        _ => None,
    };
    let is_null = |h: &String| h.bytes().all(|b| b == b'0');
    let new = oid(&u.new).unwrap_or_default();
    let old = oid(&u.old);
    let (sub, values): (&str, Vec<String>) = if is_null(&new) {
        ("delete", old.into_iter().collect())
    } else if old.as_ref().is_some_and(is_null) {
        ("create", vec![new])
    } else {
        ("update", [Some(new), old].into_iter().flatten().collect())
    };
    let mut args = vec!["refs".to_string(), sub.to_string()];
    if !message.is_empty() {
        args.push(format!("--message={message}"));
    }
    if u.no_deref {
        args.push("--no-deref".into());
    }
    if create_reflog && sub != "delete" {
        args.push("--create-reflog".into());
    }
    args.push(u.refname.clone());
    args.extend(values);
    args
}

/// An argument as the scripts write it: quoted unless it is a plain word.
fn sh_arg(a: &str) -> String {
    let plain = !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=./@{}".contains(&b));
    if plain {
        a.to_string()
    } else {
        sh_quote(a)
    }
}

/// The script for `ops` under `opts`. `title` and `divergences` go into its header.
pub fn git_only(
    title: &str,
    opts: &CaseOptions,
    ops: &[Op],
    pool: &ObjectPool,
    divergences: &[Divergence],
) -> String {
    let mut s = String::new();
    header(&mut s, title, opts, ops, divergences);
    setup(&mut s, opts);
    pool_objects(&mut s, pool);
    if opts.worktree {
        // The gate's linked worktree: detached at the first commit, id `wt`.
        s.push_str("\"$GIT\" worktree add -q --detach --no-checkout ../wt \"$c0\" || exit 2\n");
    }
    if ops.iter().any(|op| matches!(op, Op::Push { .. })) {
        // As the gate's repositories: no maintenance after a push.
        s.push_str("\"$GIT\" config receive.autogc false\n");
    }
    steps(&mut s, ops, opts.worktree);
    s.push_str(&verdict(divergences));
    s
}

/// The script's exit, from what the gate saw: 1 while git still crashes (a signal) or hangs
/// (past the timeout) where the gate saw it do so, 0 when it does not; 2 for the other
/// checks, whose judge is the gate's model (git alone cannot tell a wrong answer: compare
/// the steps printed with `diff.txt`, or run `rerun.sh`), and when the case cannot be set up.
fn verdict(divergences: &[Divergence]) -> String {
    let checks: Vec<Check> = divergences.iter().map(|d| d.check).collect();
    let mut s = String::from("\n");
    if checks.contains(&Check::GitCrashed) {
        s.push_str("if [ -n \"$crashed\" ]; then\n  echo \"DEFECT: git died of a signal at step $crashed\"\n  exit 1\nfi\n");
    }
    if checks.contains(&Check::Hang) {
        s.push_str("if [ -n \"$hung\" ]; then\n  echo \"DEFECT: git ran past the timeout or the bound on file sizes at step $hung\"\n  exit 1\nfi\n");
    }
    if checks
        .iter()
        .any(|c| !matches!(c, Check::GitCrashed | Check::Hang))
    {
        s.push_str("echo 'git alone cannot tell whether the answers above are wrong (the gate judges them by its model): compare them with diff.txt, or run rerun.sh'\nexit 2\n");
    } else {
        s.push_str("echo 'ok: git neither crashed nor hung'\nexit 0\n");
    }
    s
}

/// The script's header comment: what it does, what the gate saw, the case's options.
fn header(s: &mut String, title: &str, opts: &CaseOptions, ops: &[Op], divergences: &[Divergence]) {
    s.push_str("#!/bin/sh\n");
    s.push_str(&format!("# {title}\n"));
    s.push_str(
        "#\n# Runs the operations of a reftable-rs conformance case with git alone and prints\n",
    );
    s.push_str("# each command's exit status and the refs after it.\n");
    s.push_str("# Usage: sh reproduce.sh [GIT]   (default: git on PATH)\n");
    s.push_str("# Exit 1 while git crashes or hangs where the gate saw it, 0 when it does not, 2 when\n# the case cannot be set up or git alone cannot judge the answers (the gate's model does).\n");
    if !divergences.is_empty() {
        s.push_str("#\n# What the gate saw:\n");
        for d in divergences {
            let step = ops
                .get(d.step)
                .map(Op::summary)
                .unwrap_or_else(|| "end of case".into());
            s.push_str(&format!("#   step {}: {step}\n", d.step));
            for line in format!("{:?} ({}): {}", d.check, d.class, d.detail).lines() {
                s.push_str(&format!("#     {line}\n"));
            }
        }
    }
    s.push_str(&format!(
        "#\n# Options: {} object format, reftable.blockSize={}, reftable.restartInterval={}, reftable.indexObjects={}, core.logAllRefUpdates={}, auto-compaction {}.\n",
        opts.hash().name(),
        opts.block_size,
        opts.restart_interval,
        opts.index_objects,
        opts.log_refs.as_str(),
        if opts.auto_compaction { "on" } else { "off" }
    ));
}

/// The scratch directory, git's environment and clock, the `state` function, and the
/// repository with the case's options.
fn setup(s: &mut String, opts: &CaseOptions) {
    s.push_str("set -u\nGIT=${1:-git}\nscratch=$(mktemp -d)\ntrap 'rm -rf \"$scratch\"' EXIT\n");
    s.push_str("export HOME=\"$scratch\" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC\n");
    s.push_str(&format!(
        "export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com GIT_COMMITTER_NAME={} GIT_COMMITTER_EMAIL={}\n",
        sh_quote(NAME),
        EMAIL
    ));
    if !opts.auto_compaction {
        s.push_str("export GIT_TEST_REFTABLE_AUTOCOMPACTION=false\n");
    }
    s.push_str(&at_function());
    s.push_str("state() {\n  \"$GIT\" for-each-ref --include-root-refs --format='%(refname) %(objectname) %(*objectname) %(symref)' 2>/dev/null ||\n    \"$GIT\" for-each-ref --format='%(refname) %(objectname) %(*objectname) %(symref)'\n}\n");
    s.push_str("\"$GIT\" version || { echo \"cannot run $GIT\"; exit 2; }\n");
    // Each step's status: a signal (129 to 192) or the timeout (124) is remembered. As in
    // the gate, the files written are bounded (32,768 blocks: 16 MiB where the shell counts
    // 512 bytes): a git that writes without end dies of SIGXFSZ (153), which counts as
    // hung, not as crashed.
    s.push_str(
        "crashed= hung=\nif command -v timeout >/dev/null; then t=\"timeout 60\"; else t=; fi\nulimit -f 32768 2>/dev/null\n",
    );
    s.push_str(&format!(
        "\"$GIT\" init -q --ref-format=reftable --object-format={} -b main \"$scratch/repo\" && cd \"$scratch/repo\" || exit 2\n",
        opts.hash().name()
    ));
    for (k, v) in [
        ("reftable.blockSize", opts.block_size.to_string()),
        (
            "reftable.restartInterval",
            opts.restart_interval.to_string(),
        ),
        ("reftable.indexObjects", opts.index_objects.to_string()),
        ("core.logAllRefUpdates", opts.log_refs.as_str().to_string()),
    ] {
        s.push_str(&format!("\"$GIT\" config {k} {v} || exit 2\n"));
    }
}

/// The pool's objects, made as the gate makes them, each checked against the gate's id.
fn pool_objects(s: &mut String, pool: &ObjectPool) {
    s.push_str("at 0\ntree=$(\"$GIT\" mktree </dev/null)\n");
    let p = &pool.pool;
    for (i, c) in p.commits.iter().enumerate() {
        let parent = if i == 0 {
            String::new()
        } else {
            format!(" -p \"$c{}\"", i - 1)
        };
        s.push_str(&format!(
            "c{i}=$(printf 'commit {i}\\n' | \"$GIT\" commit-tree \"$tree\"{parent})\n"
        ));
        s.push_str(&format!(
            "[ \"$c{i}\" = {c} ] || echo \"warning: commit {i} is $c{i}, not the gate's {c}\"\n"
        ));
    }
    for (i, (t, target)) in p.tags.iter().enumerate() {
        let k = p.commits.iter().position(|c| c == target).unwrap_or(0);
        s.push_str(&format!(
            "t{i}=$(printf 'object %s\\ntype commit\\ntag tag{i}\\ntagger {NAME} <{EMAIL}> {BASE_TIME} {TZ}\\n\\nannotated {i}\\n' \"$c{k}\" | \"$GIT\" mktag)\n"
        ));
        s.push_str(&format!(
            "[ \"$t{i}\" = {t} ] || echo \"warning: tag {i} is $t{i}, not the gate's {t}\"\n"
        ));
    }
}

/// Every operation at its tick, with its exit status and the refs after it (in a worktree
/// case, as the main worktree and then as the linked worktree list them).
fn steps(s: &mut String, ops: &[Op], worktree: bool) {
    let ticks = ticks(ops);
    for (i, (op, tick)) in ops.iter().zip(ticks).enumerate() {
        s.push_str(&format!(
            "\necho '== step {i}: {}'\nat {tick}\n",
            op.summary().replace('\'', "")
        ));
        let (args, stdin) = git_invocation(op);
        let args: Vec<String> = args.iter().map(|a| sh_arg(a)).collect();
        s.push_str(&format!("$t \"$GIT\" {}", args.join(" ")));
        match stdin {
            Some(input) => s.push_str(&format!(" <<'REFTABLE_EOF'\n{input}REFTABLE_EOF\n")),
            None => s.push('\n'),
        }
        s.push_str(&format!("status=$?\necho \"exit $status\"\n[ $status -gt 128 ] && [ $status -lt 193 ] && [ $status -ne 153 ] && crashed=${{crashed:-{i}}}\n{{ [ $status -eq 124 ] || [ $status -eq 153 ]; }} && hung=${{hung:-{i}}}\nstate\n"));
        if worktree {
            s.push_str("echo '-- in the worktree:'\n(cd ../wt && state)\n");
        }
    }
}

/// The script's `at TICK`: git's dates at that tick, as [`crate::git::driver::date_at`]
/// gives them to the gate's git (the zone east of UTC every third tick).
fn at_function() -> String {
    let east = crate::git::driver::tz_at(2).0;
    format!(
        "at() {{ tz={TZ}; [ $(( $1 % 3 )) -eq 2 ] && tz={east}; export GIT_AUTHOR_DATE=\"$(( {BASE_TIME} + 60 * $1 )) $tz\" GIT_COMMITTER_DATE=\"$(( {BASE_TIME} + 60 * $1 )) $tz\"; }}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reproducers' dates are the gate's, tick by tick.
    #[test]
    fn the_scripts_dates_are_the_gates() {
        for tick in 0..7u64 {
            let script = format!("{}at {tick}; echo \"$GIT_COMMITTER_DATE\"", at_function());
            let out = std::process::Command::new("sh")
                .args(["-c", &script])
                .output()
                .unwrap();
            let date = crate::git::driver::date_at(tick);
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), date);
        }
    }
    use crate::ops::{Update, Value};

    fn txn(msg: &str) -> Op {
        Op::Txn {
            updates: vec![Update {
                refname: "refs/heads/x".into(),
                new: Some(Value::Oid("1".repeat(40))),
                old: None,
                no_deref: false,
            }],
            message: msg.into(),
            create_reflog: false,
        }
    }

    #[test]
    fn ticks_follow_messages() {
        let ops = [
            txn("a"),
            txn("a"),
            Op::PackRefs { auto: false },
            txn("b"),
            txn("a"),
        ];
        assert_eq!(ticks(&ops), [1, 1, 1, 2, 1]);
    }

    /// A worktree case's script makes the gate's worktree and runs its transactions there.
    #[test]
    fn worktree_transactions_run_in_the_worktree() {
        let Op::Txn {
            updates, message, ..
        } = txn("m")
        else {
            unreachable!()
        };
        let op = Op::WorktreeTxn {
            updates,
            message,
            create_reflog: false,
        };
        let (args, stdin) = git_invocation(&op);
        assert_eq!(args[..4], ["-C", "../wt", "update-ref", "-m"]);
        assert!(stdin.unwrap().contains("refs/heads/x"));
        assert_eq!(ticks(&[txn("a"), op.clone(), txn("a")]), [1, 2, 1]);
        let opts = CaseOptions {
            worktree: true,
            ..Default::default()
        };
        let null = reftable::ObjectId::null(reftable::HashId::Sha1);
        let pool = ObjectPool {
            objects_dir: Default::default(),
            pool: crate::setup::pool::Pool {
                commits: vec![],
                tags: vec![],
                tree: null,
                missing: null,
            },
        };
        let script = git_only("t", &opts, &[op], &pool, &[]);
        assert!(script.contains("worktree add -q --detach --no-checkout ../wt \"$c0\""));
        assert!(script.contains("\"$GIT\" -C ../wt update-ref"));
        assert!(script.contains("(cd ../wt && state)"));
    }

    /// A case's script exits 1 while git crashes where the gate saw it, 0 when it does
    /// not, 2 when it cannot run or cannot judge.
    #[test]
    fn a_reproducer_exits_1_0_or_2() {
        let null = reftable::ObjectId::null(reftable::HashId::Sha1);
        let pool = ObjectPool {
            objects_dir: Default::default(),
            pool: crate::setup::pool::Pool {
                commits: vec![],
                tags: vec![],
                tree: null,
                missing: null,
            },
        };
        let seen = |check| Divergence {
            step: 0,
            check,
            class: "crash".into(),
            detail: String::new(),
        };
        let opts = CaseOptions::default();
        let crashed = git_only("t", &opts, &[txn("m")], &pool, &[seen(Check::GitCrashed)]);
        for exit in ["exit 1\n", "exit 0\n", "exit 2"] {
            assert!(crashed.contains(exit), "no {exit}\n{crashed}");
        }
        assert!(crashed.contains("crashed=${crashed:-0}"), "{crashed}");
        let syntax = std::process::Command::new("sh")
            .args(["-n", "-c", &crashed])
            .status();
        assert!(syntax.unwrap().success(), "not sh\n{crashed}");
        let judged = git_only("t", &opts, &[txn("m")], &pool, &[seen(Check::Twin)]);
        assert!(judged.ends_with("exit 2\n"), "{judged}");
        assert!(judged.contains("|| exit 2\n"), "{judged}");
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote("a\nb"), "'a\nb'");
    }
}
