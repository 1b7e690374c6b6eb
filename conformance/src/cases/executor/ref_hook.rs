//! The reference-transaction hook, at the end of a case, on a copy of git's repository:
//! three `update-ref --stdin` transactions of refs outside every generated name (the first
//! two in one process, in `start`/`prepare`/`commit` mode), each
//! update with its old value given, so that what the hook must read is fixed by the
//! transaction alone: per state (`preparing` from 2.54 on, `prepared`, then `committed`
//! or `aborted`) one line `<old> <new> <name>` per update, the null id for a ref that did
//! not or will not exist.
//! The third is refused by the hook in its `prepared` state: git must then die, call the
//! hook once more as `aborted` with the same lines, and leave the refs as they were.
//! Lines are compared per state as sets (the order of updates is git's to choose). The refs
//! left are read back by our reader.

use std::collections::BTreeSet;
use std::path::Path;

use reftable::ObjectId;

use crate::cases::executor::checks::ProbeError;
use crate::cases::executor::Executor;
use crate::git::driver::Exit;
use crate::git::version::GitVersion;

/// The probe's refs (outside every name the generator makes).
const REFS: [&str; 3] = [
    "refs/gate-probe/hook-a",
    "refs/gate-probe/hook-b",
    "refs/gate-probe/hook-c",
];

/// The hook: appends its state and input to `log` (with the shell's builtins alone: no
/// process of its own); refuses `prepared` while `reject` exists.
fn hook_script(log: &Path, reject: &Path) -> String {
    format!(
        "#!/bin/sh\n{{ echo \"state $1\"; while IFS= read -r l; do printf '%s\\n' \"$l\"; done; }} >> '{}'\n\
         if test \"$1\" = prepared && test -e '{}'; then exit 1; fi\nexit 0\n",
        log.display(),
        reject.display()
    )
}

/// One transaction of the probe: its `update-ref --stdin` input and the hook lines it
/// must produce, as `(old, new, name)`.
struct Transaction {
    input: String,
    lines: Vec<(String, String, &'static str)>,
}

impl Transaction {
    /// The input of this transaction in `update-ref --stdin`'s transaction mode, committed.
    fn committed(&self) -> String {
        format!("start\n{}prepare\ncommit\n", self.input)
    }

    fn new(updates: &[(&str, &str, &'static str)], null: &str) -> Transaction {
        let mut input = String::new();
        let mut lines = Vec::new();
        for &(old, new, name) in updates {
            input += &match (old == null, new == null) {
                (true, _) => format!("create {name} {new}\n"),
                (_, true) => format!("delete {name} {old}\n"),
                _ => format!("update {name} {new} {old}\n"),
            };
            lines.push((old.to_string(), new.to_string(), name));
        }
        Transaction { input, lines }
    }

    /// The hook's log for this transaction: `preparing` (2.54+), `prepared`, then `end`,
    /// each with every line.
    fn expected(&self, preparing: bool, end: &str) -> Vec<(String, BTreeSet<String>)> {
        let set: BTreeSet<String> = self
            .lines
            .iter()
            .map(|(o, n, r)| format!("{o} {n} {r}"))
            .collect();
        let states = ["preparing", "prepared", end];
        let states = if preparing { &states[..] } else { &states[1..] };
        states
            .iter()
            .map(|s| (s.to_string(), set.clone()))
            .collect()
    }
}

/// The hook's log as (state, lines) per call.
fn parse_log(log: &str) -> Vec<(String, BTreeSet<String>)> {
    let mut calls: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in log.lines() {
        match (line.strip_prefix("state "), calls.last_mut()) {
            (Some(state), _) => calls.push((state.to_string(), BTreeSet::new())),
            (None, Some((_, lines))) => {
                lines.insert(line.to_string());
            }
            (None, None) => calls.push((String::new(), BTreeSet::from([line.to_string()]))),
        }
    }
    calls
}

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_ref_hook(&self) -> Result<(), ProbeError> {
        let scratch = self.copy_of_git_repo()?;
        let dir = scratch.path();
        let hooks = dir.join("probe-hooks");
        let (log, reject) = (dir.join("hook.log"), dir.join("hook.reject"));
        std::fs::create_dir_all(&hooks).map_err(|e| e.to_string())?;
        let hook = hooks.join("reference-transaction");
        reftable_testkit::exec_file::write_executable(&hook, &hook_script(&log, &reject))?;
        let pool = &self.env.pool(self.hash).pool;
        let [a, b, c] = [0, 1, 2].map(|i| pool.commits[i % pool.commits.len()].to_string());
        let null = ObjectId::null(self.hash).to_string();
        let (a, b, c, z) = (a.as_str(), b.as_str(), c.as_str(), null.as_str());
        let [ra, rb, rc] = REFS;
        let create = Transaction::new(&[(z, a, ra), (z, b, rb), (z, c, rc)], z);
        let change = Transaction::new(&[(a, b, ra), (b, z, rb), (c, a, rc)], z);
        let refused = Transaction::new(&[(b, c, ra)], z);
        let hooks_path = format!("core.hooksPath={}", hooks.display());
        let run = |input: &str| {
            let args = ["-c", &hooks_path, "update-ref", "--stdin"];
            self.env.git.run(dir, &args, input, self.tick)
        };
        let out = run(&(create.committed() + &change.committed()));
        if !out.exit.success() {
            return Err(format!(
                "update-ref --stdin with a reference-transaction hook: {:?}, {:?}",
                out.exit,
                out.stderr.trim()
            )
            .into());
        }
        std::fs::write(&reject, "").map_err(|e| e.to_string())?;
        let out = run(&refused.input);
        if !matches!(out.exit, Exit::Code(128)) {
            return Err(format!(
                "update-ref --stdin refused by the reference-transaction hook: {:?}, {:?}",
                out.exit,
                out.stderr.trim()
            )
            .into());
        }
        let got = parse_log(&std::fs::read_to_string(&log).unwrap_or_default());
        // git 2.54 added a state before `prepared`, before the refs are locked.
        let preparing = self.env.profile.git_version() >= GitVersion::parse("2.54").expect("2.54");
        let mut want = create.expected(preparing, "committed");
        want.extend(change.expected(preparing, "committed"));
        want.extend(refused.expected(preparing, "aborted"));
        if got != want {
            return Err(
                format!("the reference-transaction hook read {got:?}, expected {want:?}").into(),
            );
        }
        let db = self.our_reader_of(dir)?;
        let mut listed = String::new();
        for name in REFS {
            let r = db.read_ref(name.as_bytes()).map_err(|e| format!("{e:#}"))?;
            if let Some(id) = r.as_ref().and_then(|r| r.value_id()) {
                listed += &format!("{name} {id}\n");
            }
        }
        let expect = format!("{ra} {b}\n{rc} {a}\n");
        if listed != expect {
            return Err(format!(
                "after the hook refused an update, the probe's refs are {listed:?}, expected {expect:?}"
            ).into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Updates become `update-ref --stdin` commands by their old and new values, and the
    /// log parses into calls with their lines as sets.
    #[test]
    fn transactions_and_the_log() {
        let z = "000";
        let t = Transaction::new(&[(z, "a", "r1"), ("a", z, "r2"), ("a", "b", "r3")], z);
        assert_eq!(t.input, "create r1 a\ndelete r2 a\nupdate r3 b a\n");
        let log = "state prepared\n000 a r1\na 000 r2\na b r3\nstate committed\na b r3\n";
        let calls = parse_log(log);
        assert_eq!(calls[0], t.expected(false, "x")[0]);
        assert_eq!(calls[1].0, "committed");
        assert_eq!(calls[1].1.len(), 1);
        assert_ne!(calls, t.expected(false, "committed"));
        let states: Vec<String> = t
            .expected(true, "aborted")
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(states, ["preparing", "prepared", "aborted"]);
    }
}
