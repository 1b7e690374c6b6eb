//! One role's side of a case: the adapter, the repository it works on, and what each step
//! asks of it. The reader reads git's own repository; the writer and the interleaved role
//! work on a copy made before the first step, where the implementation applies the case's
//! transactions (all of them, or every other one) and git the rest, and the copy must stay
//! what git's repository is.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cases::executor::Executor;
use crate::finding::script::git_invocation;
use crate::git::driver::committer_at;
use crate::impls::check::{ImplCheck, Role};
use crate::impls::process::Adapter;
use crate::impls::read::{comparable, differences, done, read_all, AskError};
use crate::impls::tally::Tally;
use crate::impls::verdict::agree;
use crate::impls::wire::{transaction, Answer};
use crate::ops::Op;
use crate::snapshot::{SValue, Snapshot};

/// The checks a read is counted under.
const READ_CHECKS: [ImplCheck; 5] = [
    ImplCheck::RefValues,
    ImplCheck::Symrefs,
    ImplCheck::Peeled,
    ImplCheck::Reflogs,
    ImplCheck::ReflogNames,
];

/// A role's side of one case.
pub struct Side {
    /// The role.
    pub role: Role,
    /// Its adapter.
    pub adapter: Adapter,
    /// The copy it writes (writer, interleaved); none for the reader.
    pub copy: Option<tempfile::TempDir>,
    /// The case's transactions so far (the interleaved role takes the even ones).
    pub txns: u64,
    /// Its first difference from git: (check, detail); the side stops there.
    pub failed: Option<(ImplCheck, String)>,
    /// The number of operations run when it failed.
    pub failed_at: Option<usize>,
}

impl Side {
    /// The repository the side works on.
    pub fn repo(&self, exec: &Executor<'_>) -> PathBuf {
        match &self.copy {
            Some(d) => d.path().to_path_buf(),
            None => exec.git_repo().to_path_buf(),
        }
    }

    /// Note a difference (the first one stops the side).
    fn fail(&mut self, t: &mut Tally, check: ImplCheck, detail: String) {
        t.count(self.role, check, false);
        self.failed.get_or_insert((check, detail));
    }

    /// Open the side's repository; false (and a finding) when the adapter cannot.
    pub fn open(&mut self, exec: &Executor<'_>, t: &mut Tally) -> bool {
        let gitdir = self.repo(exec).join(".git");
        match self.adapter.open(&gitdir, exec.env_git().version()) {
            Ok(Answer::Done(_)) => true,
            other => {
                self.fail(t, ImplCheck::Answers, format!("open: {other:?}"));
                false
            }
        }
    }

    /// The implementation's reading of its repository against `git` (git's state), and each
    /// ref `touched` looked up by name.
    pub fn check_reads(&mut self, git: &Snapshot, touched: &[String], t: &mut Tally) {
        let want = comparable(git, &self.adapter);
        let got = match read_all(&mut self.adapter, &git.logs.keys().cloned().collect()) {
            Ok(s) => s,
            Err(e) => return self.ask_failed(t, "read", e),
        };
        let diffs = differences(&got, &want);
        let peeled = self.adapter.hello.claims("peeled");
        for check in READ_CHECKS {
            if check == ImplCheck::Peeled && !peeled {
                t.not_tried(self.role, check, "the adapter claims no peeled ids");
                continue;
            }
            match diffs.iter().find(|(c, _)| *c == check) {
                Some((_, d)) => self.fail(t, check, d.clone()),
                None => t.count(self.role, check, true),
            }
        }
        self.check_lookups(&want, touched, t);
    }

    /// Each of `names` looked up with `ref`.
    fn check_lookups(&mut self, want: &Snapshot, names: &[String], t: &mut Tally) {
        let peeled = self.adapter.hello.claims("peeled");
        for n in names {
            let got = match done(&mut self.adapter, &json!({"verb": "ref", "name": n})) {
                Ok(v) => v.get("ref").cloned().unwrap_or_default(),
                Err(e) => return self.ask_failed(t, "ref", e),
            };
            let got = ref_value(&got, peeled);
            let expected = want.refs.get(n);
            if got.as_ref() == expected {
                t.count(self.role, ImplCheck::Lookup, true);
            } else {
                let d = format!("ref {n}: {got:?}, git has {expected:?}");
                self.fail(t, ImplCheck::Lookup, d);
            }
        }
    }

    /// A request that did not come back `done`.
    fn ask_failed(&mut self, t: &mut Tally, verb: &str, e: AskError) {
        match e {
            AskError::Unsupported(m) => t.not_tried(self.role, ImplCheck::Answers, &m),
            AskError::Answered(m) => {
                self.fail(t, ImplCheck::Answers, format!("{verb}: error: {m}"))
            }
            AskError::Failed(f) => self.fail(t, ImplCheck::Answers, format!("{verb}: {f}")),
        }
    }

    /// Whether this step's operation is the implementation's to apply.
    pub fn takes(&mut self, op: &Op) -> bool {
        if !matches!(op, Op::Txn { .. }) {
            return false;
        }
        self.txns += 1;
        self.role == Role::Writer || self.txns % 2 == 1
    }

    /// The step's transaction through the adapter, its verdict set against git's. An
    /// unsupported transaction is applied by git instead.
    pub fn apply(&mut self, exec: &Executor<'_>, op: &Op, t: &mut Tally) {
        let Op::Txn {
            updates,
            message,
            create_reflog,
        } = op
        else {
            return;
        };
        let Some(git) = exec.last_git_verdict() else {
            return;
        };
        if unchecked_objects(git, &self.adapter) {
            let why = "git refused for an object the adapter does not check (no object_checks)";
            return t.not_tried(self.role, ImplCheck::Verdict, why);
        }
        let c = committer_at(exec.tick());
        let req = transaction(updates, message, *create_reflog, &c);
        let answer = match self.adapter.ask(&req) {
            Ok(a) => a,
            Err(f) => return self.fail(t, ImplCheck::Answers, format!("transaction: {f}")),
        };
        if let Answer::Unsupported(m) = &answer {
            t.not_tried(self.role, ImplCheck::Verdict, m);
            return self.git_applies(exec, op);
        }
        match agree(git, &answer, exec.last_model_faults()) {
            Ok(()) => t.count(self.role, ImplCheck::Verdict, true),
            Err(d) => self.fail(t, ImplCheck::Verdict, d),
        }
    }

    /// git runs the step's operation on the copy, as it did on its own repository.
    pub fn git_applies(&mut self, exec: &Executor<'_>, op: &Op) {
        let (args, stdin) = git_invocation(op);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let repo = self.repo(exec);
        let stdin = stdin.unwrap_or_default();
        let auto = exec.auto_compaction();
        exec.env_git()
            .run_auto(&repo, &argv, &stdin, exec.tick(), auto);
    }

    /// The copy's state, read by our reader, against git's repository's.
    pub fn check_state(&mut self, exec: &Executor<'_>, git: &Snapshot, t: &mut Tally) {
        let dir = self.repo(exec).join(".git/reftable");
        let ours = Snapshot::of_stack_dir(&dir, exec.refdb_options());
        let ours = match ours {
            Ok(s) => s,
            Err(e) => return self.fail(t, ImplCheck::State, format!("our reader: {e:#}")),
        };
        let bytes = self.adapter.hello.claims("byte_identical_tables");
        let (mut a, mut b) = (stored_view(&ours, bytes), stored_view(git, bytes));
        if !self.adapter.hello.claims("reflogs_written") {
            // Refs still compared: an implementation that writes no reflogs says so, and the
            // rest of what it writes is checked.
            a.logs.clear();
            b.logs.clear();
            let why = "the adapter claims no reflog writes (reflogs_written)";
            t.not_tried(self.role, ImplCheck::Reflogs, why);
        }
        let d = a.diff(&b, 4);
        if d.is_empty() {
            t.count(self.role, ImplCheck::State, true);
        } else {
            self.fail(t, ImplCheck::State, d.join("; "));
        }
    }

    /// The copy's tables against git's, byte for byte (for an implementation claiming it).
    pub fn check_bytes(&mut self, exec: &Executor<'_>, t: &mut Tally) {
        if !self.adapter.hello.claims("byte_identical_tables") {
            t.not_tried(
                self.role,
                ImplCheck::Bytes,
                "the adapter claims no byte-identical tables",
            );
            return;
        }
        let ours = crate::stack_files::tables(&self.repo(exec).join(".git/reftable"));
        let git = crate::stack_files::tables(&exec.git_repo().join(".git/reftable"));
        match crate::cases::executor::checks::first_difference(&ours, &git) {
            None => t.count(self.role, ImplCheck::Bytes, true),
            Some(d) => self.fail(t, ImplCheck::Bytes, d),
        }
    }
}

/// Whether git refused for a missing object or a non-commit on a branch, which an adapter
/// that does not claim `object_checks` is not asked to judge.
fn unchecked_objects(git: &Result<(), crate::cases::verdict::Refused>, a: &Adapter) -> bool {
    use crate::err_class::ErrClass;
    let class = git.as_ref().err().and_then(|r| r.class);
    let objects = matches!(class, Some(ErrClass::MissingObject | ErrClass::NonCommit));
    objects && !a.hello.claims("object_checks")
}

/// A `ref` object of the protocol as compared (`null`: none).
fn ref_value(r: &serde_json::Value, peeled: bool) -> Option<SValue> {
    if r.is_null() {
        return None;
    }
    if let Some(target) = r.get("symref").and_then(|v| v.as_str()) {
        return Some(SValue::Symref(target.to_string()));
    }
    let oid = r.get("oid").and_then(|v| v.as_str())?.to_string();
    let p = r.get("peeled").and_then(|v| v.as_str()).filter(|_| peeled);
    Some(SValue::Oid(oid, p.map(String::from)))
}

/// A state as written, for comparison: peeled ids only for an implementation that claims
/// git's bytes (others may leave them out; readers peel on their own).
fn stored_view(s: &Snapshot, bytes: bool) -> Snapshot {
    let mut s = s.clone();
    if !bytes {
        for v in s.refs.values_mut() {
            if let SValue::Oid(_, p) = v {
                *p = None;
            }
        }
    }
    s
}

/// The names of `s`'s reflogs.
pub fn log_names(s: &Snapshot) -> BTreeSet<String> {
    s.logs.keys().cloned().collect()
}

/// A path's `.git` directory.
pub fn gitdir(repo: &Path) -> PathBuf {
    repo.join(".git")
}
