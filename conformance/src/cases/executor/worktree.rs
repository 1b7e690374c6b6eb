//! The steps and checks of a case's linked worktree ([`CaseOptions::worktree`](crate::ops::CaseOptions),
//! set up on both sides by `wt_setup.rs`). An
//! [`Op::WorktreeTxn`](crate::ops::Op) runs through `update-ref --stdin` in git's worktree
//! and through `WorktreeRefDb` on ours; after every step of such a case the worktree's stack
//! is compared byte for byte, git's `for-each-ref` in the worktree against our merged
//! listing, and names looked up in the worktree (its own, shared, `main-worktree/` and
//! `worktrees/wt/` ones, the prefixed ones from the main worktree too) by git's `cat-file
//! --batch-check` against `WorktreeRefDb`; at the end of the case, git's `reflog list` in
//! the worktree against `WorktreeRefDb::reflog_names`.
//!
//! The model does not know worktrees: a worktree transaction is judged by git against us
//! alone, and the model then takes our common stack's refs and reflogs (which the byte check
//! holds to git's) so that it goes on judging the main worktree's operations.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use reftable::refdb::WorktreeRefs;
use reftable::{ObjectId, RefValue};

use crate::cases::executor::checks::first_difference;
use crate::cases::executor::coprocs::WORKTREE;
use crate::cases::executor::lookups::{spread, GIT_TOUCHED};
use crate::cases::executor::steps::Outcomes;
use crate::cases::executor::wt_setup::WORKTREE_ID;
use crate::cases::executor::Executor;
use crate::cases::ours;
use crate::finding::divergence::{Check, Divergence};
use crate::model::{MEntry, MValue};
use crate::ops::Update;
use crate::setup::pool::PoolObjects;
use crate::snapshot::{SValue, Snapshot};
use crate::stack_files::{stack_cached, tables_cached, StackFiles, Tables};

/// Whether two `for-each-ref` listings (`name oid peeled symref` lines) differ in the
/// `%(symref)` field of symrefs alone (lines whose expected field names a ref). The known
/// defect's bytes can hold a newline: a line of `view` that does not start with a ref's
/// name (`refs/…`, or a root ref's capitals) is the rest of the line before it.
fn only_symref_column_differs(view: &[String], expect: &[String]) -> bool {
    let starts_a_ref = |l: &str| {
        let name = l.split(' ').next().unwrap_or("");
        name.starts_with("refs/")
            || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
    };
    let mut records: Vec<String> = Vec::new();
    for l in view {
        match records.last_mut() {
            Some(last) if !starts_a_ref(l) => {
                last.push('\n');
                last.push_str(l);
            }
            _ => records.push(l.clone()),
        }
    }
    let view = records.as_slice();
    // Name, id and peeled id from the left (none has a space); the rest is `%(symref)`,
    // which the known defect fills with whatever bytes a buffer held, spaces included, or
    // leaves empty: git's reftable backend empties that buffer before it reads a ref, so
    // the other stack's next ref being no symref leaves nothing in it.
    fn split(l: &str) -> Option<((&str, &str, &str), &str)> {
        let mut f = l.splitn(4, ' ');
        Some(((f.next()?, f.next()?, f.next()?), f.next()?))
    }
    view.len() == expect.len()
        && view.iter().zip(expect).all(|(a, b)| {
            a == b
                || matches!((split(a), split(b)), (Some((x, _)), Some((y, t)))
                    if x == y && !t.is_empty())
        })
}

fn hash_of(a: &Tables, b: &Tables) -> u64 {
    let mut h = DefaultHasher::new();
    a.hash(&mut h);
    b.hash(&mut h);
    h.finish()
}

/// The refs a worktree sees, as a snapshot (no reflogs).
fn snapshot_of(refs: WorktreeRefs) -> reftable::Result<Snapshot> {
    let mut s = Snapshot::default();
    for r in refs {
        let r = r?;
        if let Some(v) = SValue::of(&r.value) {
            s.refs
                .insert(String::from_utf8_lossy(&r.refname).into_owned(), v);
        }
    }
    Ok(s)
}

impl Executor<'_> {
    /// One `update-ref --stdin` transaction in the worktree: git's in its worktree, ours
    /// through `WorktreeRefDb`; the model is not asked (see the [module](self) docs).
    pub(crate) fn run_worktree_txn(
        &mut self,
        updates: &[Update],
        message: &str,
        create_reflog: bool,
    ) -> Outcomes {
        let lines: String = updates.iter().filter_map(|u| u.stdin_lines()).collect();
        self.result
            .git_stdin
            .push(format!("start\n{lines}prepare\ncommit\n"));
        let git_res = self.git_txn_verdict(WORKTREE, &lines, message, create_reflog)?;
        let c = self.committer();
        let pool = &self.env.pool(self.hash).pool;
        let wt = self.worktree.as_mut().expect("a worktree case");
        let ours_res = match wt.db.reload() {
            Err(e) => Err(ours::our_refusal(&e)),
            Ok(()) => ours::parser_check(updates).and_then(|()| {
                let upd: Vec<_> = updates
                    .iter()
                    .map(|u| u.to_ref_update(message, create_reflog))
                    .collect();
                wt.db
                    .transaction(&upd, &c, &PoolObjects(pool))
                    .map(drop)
                    .map_err(|e| ours::our_refusal(&e))
            }),
        };
        if let Err(e) = self.db.reload() {
            self.diverge(Check::OursReadsGit, "reload failed", format!("{e:#}"));
            return None;
        }
        if git_res.is_ok() {
            // The files-backend twin has no worktree.
            self.retire_twin("a transaction in a linked worktree");
        }
        self.model_from_ours();
        Some((git_res, ours_res, None))
    }

    /// The model takes our common stack's refs and reflogs (after a worktree transaction,
    /// which the model cannot judge).
    fn model_from_ours(&mut self) {
        let Ok(s) = Snapshot::of_refdb(&self.db) else {
            return;
        };
        let id = |h: &str| ObjectId::from_hex(h).unwrap_or(self.null);
        self.model.refs = s
            .refs
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    SValue::Oid(h, _) => MValue::Oid(id(h)),
                    SValue::Symref(t) => MValue::Symref(t.clone()),
                };
                (k.clone(), v)
            })
            .collect();
        self.model.logs = s
            .logs
            .iter()
            .map(|(k, entries)| {
                let entries = entries
                    .iter()
                    .map(|e| MEntry {
                        old: id(&e.old),
                        new: id(&e.new),
                        message: e.message.as_bytes().to_vec(),
                        time: e.time,
                    })
                    .collect();
                (k.clone(), entries)
            })
            .collect();
    }

    /// The model as the worktree sees it (its refs and the shared ones), for resolving a
    /// worktree transaction's old values; `None` outside worktree cases.
    pub fn worktree_model(&mut self) -> Option<crate::model::Model> {
        let wt = self.worktree.as_mut()?;
        wt.db.reload().ok()?;
        let s = snapshot_of(wt.db.refs().ok()?).ok()?;
        let mut m = self.model.clone();
        m.refs = s
            .refs
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    SValue::Oid(h, _) => MValue::Oid(ObjectId::from_hex(&h).unwrap_or(self.null)),
                    SValue::Symref(t) => MValue::Symref(t),
                };
                (k, v)
            })
            .collect();
        Some(m)
    }

    /// git's stack of the linked worktree (`.git/worktrees/<id>/reftable`).
    fn git_worktree_stack(&self) -> std::path::PathBuf {
        self.repo
            .path()
            .join(".git/worktrees")
            .join(WORKTREE_ID)
            .join("reftable")
    }

    /// A fingerprint of git's worktree stack (0 in a case without a worktree), so that a
    /// step that changes only that stack counts as a change for git's turns.
    pub(crate) fn worktree_fingerprint(&mut self) -> u64 {
        if self.worktree.is_none() {
            return 0;
        }
        let git_stack = self.git_worktree_stack();
        let tables = tables_cached(&git_stack, &mut self.table_cache);
        hash_of(&tables, &Vec::new())
    }

    /// The worktree's checks after a step (see the [module](self) docs); `touched` are the
    /// refs the step named.
    pub(crate) fn check_worktree(&mut self, touched: &[String]) {
        let Some(wt) = self.worktree.as_ref() else {
            return;
        };
        let git_stack = self.git_worktree_stack();
        let ours_stack = wt.ours_stack();
        self.count(Check::Bytes);
        let (theirs, git_files) = stack_cached(&git_stack, &mut self.table_cache);
        let (ours, files) = stack_cached(&ours_stack, &mut self.table_cache);
        if let Some(d) = first_difference(&ours, &theirs) {
            self.diverge(Check::Bytes, "bytes differ", format!("worktree stack: {d}"));
            return;
        }
        if let Some(d) = StackFiles::difference(&files, &git_files) {
            self.diverge(
                Check::Bytes,
                "stack files differ",
                format!("worktree stack: {d}"),
            );
            return;
        }
        let common = tables_cached(
            &self.repo.path().join(".git/reftable"),
            &mut self.table_cache,
        );
        let fp = hash_of(&theirs, &common);
        if self.worktree.as_ref().and_then(|w| w.viewed) == Some(fp) {
            self.result.unchanged += 1;
            return;
        }
        if !self.git_turn {
            self.result.git_turns_waited += 1;
            return;
        }
        let wt = self.worktree.as_mut().expect("worktree");
        let snap = wt
            .db
            .reload()
            .and_then(|()| wt.db.refs())
            .and_then(snapshot_of);
        let snap = match snap {
            Ok(s) => s,
            Err(e) => {
                self.diverge(
                    Check::OursReadsGit,
                    "read error",
                    format!("worktree: {e:#}"),
                );
                return;
            }
        };
        if self.check_worktree_view(&snap) && self.check_worktree_lookups(touched) {
            self.worktree.as_mut().expect("worktree").viewed = Some(fp);
        }
    }

    /// git's `for-each-ref` in the worktree against what it should show for our worktree's
    /// refs (`snap`); false when they differ.
    fn check_worktree_view(&mut self, snap: &Snapshot) -> bool {
        self.count(Check::GitView);
        let path = self.worktree.as_ref().expect("worktree").git_path();
        let expect = self.expected_git_view(snap);
        match self.git_refs(&path) {
            Ok(view) if view == expect => true,
            Ok(view) => {
                let d = super::checks::listing_difference(&view, &expect);
                let what = if only_symref_column_differs(&view, &expect) {
                    // Known: git 2.47's `%(symref)` of a symref in a worktree's listing can
                    // name the target of a symref of the other stack
                    // (`worktree-for-each-ref-symref-of-another-ref`).
                    "for-each-ref in the worktree: only %(symref) of symrefs differs"
                } else {
                    "for-each-ref in the worktree"
                };
                self.diverge(Check::GitView, "value mismatch", format!("{what}: {d}"));
                false
            }
            Err(e) => {
                self.diverge(
                    Check::GitView,
                    "git rejects stack",
                    format!("in the worktree: {e}"),
                );
                false
            }
        }
    }

    /// Names looked up in the worktree: `HEAD` of each worktree through its prefix, and each
    /// ref the step named (a spread sample of [`GIT_TOUCHED`] of them, as git's lookups in the
    /// main worktree take) as it is and through `main-worktree/` and `worktrees/wt/`, by git's
    /// `cat-file --batch-check` against `WorktreeRefDb::resolve`; then the prefixed ones from
    /// the main worktree (where `worktrees/wt/` is another worktree's store), those whose
    /// record is not a symref only: git resolves a symref's target in the worktree reading
    /// it, and our library has no store of the main worktree that routes prefixed names.
    /// False when they differ.
    fn check_worktree_lookups(&mut self, touched: &[String]) -> bool {
        self.count(Check::Lookups);
        let mut names: Vec<String> = ["HEAD", "main-worktree/HEAD"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        names.push(format!("worktrees/{WORKTREE_ID}/HEAD"));
        let touched: BTreeSet<String> = touched.iter().cloned().collect();
        for n in spread(&touched, GIT_TOUCHED) {
            names.push(format!("main-worktree/{n}"));
            names.push(format!("worktrees/{WORKTREE_ID}/{n}"));
            names.push(n);
        }
        names.sort();
        names.dedup();
        let wt_path = self.worktree.as_ref().expect("worktree").git_path();
        if !self.lookups_in(&wt_path, "the worktree", &names, false) {
            return false;
        }
        names.retain(|n| n.starts_with("main-worktree/") || n.starts_with("worktrees/"));
        let main = self.repo.path().to_path_buf();
        self.lookups_in(&main, "the main worktree", &names, true)
    }

    /// `names` looked up by git's `cat-file --batch-check` in `dir` (`place`) against our
    /// worktree's store (when `direct_only`, the names whose record is no symref, against
    /// the record); false (a divergence) when they differ.
    fn lookups_in(
        &mut self,
        dir: &std::path::Path,
        place: &str,
        names: &[String],
        direct_only: bool,
    ) -> bool {
        let lines = match (self.cat_files).lookup(&self.env.git, dir, self.tick, names) {
            Ok(lines) => lines,
            Err((exit, err)) => {
                let e = format!("cat-file in {place}: {exit:?}: {}", err.trim());
                self.diverge(Check::Lookups, "git lookup failed", e);
                return false;
            }
        };
        let wt = self.worktree.as_ref().expect("worktree");
        for (name, line) in names.iter().zip(&lines) {
            let theirs = ObjectId::from_hex(line.trim());
            let ours = if direct_only {
                match wt.db.read_ref(name.as_bytes()) {
                    Ok(Some(r)) => match r.value {
                        RefValue::Object(id) | RefValue::Peeled { object: id, .. } => Ok(Some(id)),
                        _ => continue,
                    },
                    Ok(None) => Ok(None),
                    Err(e) => Err(e),
                }
            } else {
                wt.db.resolve(name.as_bytes())
            };
            if ours.as_ref().ok() != Some(&theirs) {
                let d = format!("{name} in {place}: git {line:?}, ours {ours:?}");
                self.diverge(Check::Lookups, "value mismatch", d);
                return false;
            }
        }
        true
    }

    /// At the end of a worktree case: git's `reflog list` in the worktree (its own reflogs and
    /// the shared ones, merged) against `WorktreeRefDb::reflog_names`.
    pub(crate) fn check_worktree_reflogs(&mut self, step_end: usize) {
        let Some(wt) = self.worktree.as_mut() else {
            return;
        };
        if !self.env.profile.features.reflog_list {
            return;
        }
        let ours = wt.db.reload().and_then(|()| wt.db.reflog_names());
        let out = self
            .env
            .git
            .run(&wt.git_path(), &["reflog", "list"], "", self.tick);
        self.count(Check::GitReflogs);
        let ours: Result<Vec<String>, _> = ours.and_then(|names| {
            names
                .map(|n| n.map(|n| String::from_utf8_lossy(&n).into_owned()))
                .collect()
        });
        let theirs: Vec<String> = out.stdout.lines().map(str::to_string).collect();
        if !out.exit.success() || ours.as_ref().ok() != Some(&theirs) {
            self.result.divergences.push(Divergence {
                step: step_end,
                check: Check::GitReflogs,
                class: "reflog mismatch".into(),
                detail: format!("git reflog list in the worktree {theirs:?}, ours {ours:?}"),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::only_symref_column_differs;

    #[test]
    fn a_symref_column_of_any_bytes_is_the_only_difference() {
        let expect = vec!["refs/rewritten/x 1111  refs/worktree/a".to_string()];
        for garbled in ["\u{15}\u{7}Y\u{5}", "a b", " "] {
            let view = vec![format!("refs/rewritten/x 1111  {garbled}")];
            assert!(only_symref_column_differs(&view, &expect), "{garbled:?}");
        }
        // Bytes with a newline in them: git's listing has a line more.
        let split = vec![
            "refs/rewritten/x 1111  \u{fffd}\u{fffd}".to_string(),
            "|\u{fffd}U".to_string(),
        ];
        assert!(only_symref_column_differs(&split, &expect));
        let extra_ref = vec![expect[0].clone(), "refs/heads/z 1111  ".to_string()];
        assert!(!only_symref_column_differs(&extra_ref, &expect));
        let other_id = vec!["refs/rewritten/x 2222  refs/worktree/a".to_string()];
        assert!(!only_symref_column_differs(&other_id, &expect));
        // The buffer emptied: a symref listed with no target.
        let emptied = vec!["refs/rewritten/x 1111  ".to_string()];
        assert!(only_symref_column_differs(&emptied, &expect));
        // A ref that is no symref listed with a target is another difference.
        let plain = vec!["refs/rewritten/x 1111  ".to_string()];
        assert!(!only_symref_column_differs(&expect, &plain));
    }
}
