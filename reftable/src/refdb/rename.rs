//! Renaming and copying a ref together with its reflog, as git's reftable backend does for
//! `git branch -m` / `-c` (and `git refs rename`): not a transaction but one table of its
//! own, holding the new ref (a copy of the old record, peeled value included), for a rename
//! a tombstone of the old one, two fresh reflog entries for the new name (one for a copy),
//! every live entry of the old reflog copied under the new name at its own update index and,
//! for a rename, a tombstone for each of them. A rename of the branch `HEAD` points at also
//! gets a `HEAD` entry; moving `HEAD` itself is the caller's next step (git's
//! `branch -m` does it with a symref update, see [`RefDb::rename_ref`]).
//!
//! The backend checks only what it must: the old ref exists and is not a symref, and the
//! new name is free of directory/file conflicts (for a rename the old name does not count).
//! Whether the new name already exists is the caller's question: an existing ref is
//! overwritten and its own reflog entries stay, as with git's `-M` / `-C`.

use crate::codec::record::{LogRecord, LogUpdate, LogValue, RefRecord, RefValue};
use crate::error::{Error, ErrorKind, Refusal, Result};
use crate::refname::is_valid_refname;
use crate::stack::{Committed, Outdated};

use crate::hash::HashId;
use crate::merged::MergedTable;

use super::read::{NoNames, OtherWorktrees, View, WorktreeView};
use super::reflog::normalize_message;
use super::{show, RefDb};
use crate::signature::Signature;

impl RefDb {
    /// Rename the ref `old` to `new` with its reflog, in one table; `message` goes into the
    /// new entries (git's `branch -m` writes `Branch: renamed refs/heads/a to refs/heads/b`).
    /// Renaming a ref to its own name writes nothing.
    ///
    /// When `HEAD` is a symref to `old`, it gets an entry (old id → null) in the table, as
    /// git's backend writes; `HEAD` itself still points at `old` afterwards: git's
    /// `branch -m` then updates it with a symref update of its own (a second table):
    ///
    /// ```
    /// use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};
    /// use reftable::{Signature, TzOffset};
    /// use reftable::ObjectId;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut db = RefDb::open(dir.path(), RefDbOptions::default()).unwrap();
    /// let me = Signature::new("C O Mitter", "c@example.com", 1700000000, TzOffset::from_hhmm(100));
    /// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// db.transaction(&[RefUpdate::create("refs/heads/topic", id).message("created")], &me, &AssumeCommits).unwrap();
    /// db.rename_ref(b"refs/heads/topic", b"refs/heads/renamed", b"Branch: renamed refs/heads/topic to refs/heads/renamed", &me).unwrap();
    /// assert_eq!(db.read_ref(b"refs/heads/topic").unwrap(), None);
    /// assert_eq!(db.resolve(b"refs/heads/renamed").unwrap(), Some(id));
    /// // The old entry moved, under two new ones.
    /// let log: Vec<_> = db.reflog(b"refs/heads/renamed").unwrap().map(|l| l.unwrap()).collect();
    /// assert_eq!(log.len(), 3);
    /// assert_eq!(log[2].update().unwrap().message, b"created\n");
    /// assert!(!db.reflog_exists(b"refs/heads/topic").unwrap());
    /// ```
    ///
    /// Errors: [`ErrorKind::NotExist`] when `old` does not exist, [`ErrorKind::Api`] when it
    /// is a symref (git cannot move those either), [`ErrorKind::Refname`] for an invalid new
    /// name, [`ErrorKind::NameConflict`] for a D/F conflict (with a [`Refusal`]), and
    /// [`ErrorKind::Lock`] when the stack is locked.
    pub fn rename_ref(
        &mut self,
        old: &[u8],
        new: &[u8],
        message: &[u8],
        committer: &Signature,
    ) -> Result<Committed> {
        self.move_ref(old, new, message, committer, true, Placement::Alone)
    }

    /// Copy the ref `old` to `new` with its reflog, in one table (git's `branch -c`): the
    /// new ref gets one fresh entry (null → id) over the copied ones. Errors as
    /// [`RefDb::rename_ref`], except that `old` itself counts in the D/F check.
    pub fn copy_ref(
        &mut self,
        old: &[u8],
        new: &[u8],
        message: &[u8],
        committer: &Signature,
    ) -> Result<Committed> {
        self.move_ref(old, new, message, committer, false, Placement::Alone)
    }

    /// The rename or copy into this database's stack. git reads the old ref, its reflog and
    /// `HEAD` from the stack the new name lives in (whatever stack the old name belongs to);
    /// only the D/F check sees the whole worktree (`placement`).
    pub(crate) fn move_ref(
        &mut self,
        old: &[u8],
        new: &[u8],
        message: &[u8],
        committer: &Signature,
        rename: bool,
        placement: Placement<'_>,
    ) -> Result<Committed> {
        if !is_valid_refname(new, true) {
            return Err(Error::refused(
                Refusal::BadName {
                    name: new.to_vec(),
                    why: "invalid ref name",
                },
                format!("'{}' is not a valid ref name", show(new)),
            ));
        }
        let hash = self.stack.options().hash();
        let block_size = self.stack.options().write.block_size;
        let max_message = (if block_size == 0 { 4096 } else { block_size } / 2) as usize;
        let mut message = normalize_message(message);
        message.truncate(max_message);
        message.push(b'\n');
        let mut addition = self.stack.new_addition(Outdated::Reload)?;
        let view = View::of(addition.stack().merged(), hash);
        // What git's backend checks, in its order.
        let Some(rec) = view.raw_ref(old)? else {
            return Err(Error::new(
                ErrorKind::NotExist,
                format!("refname {} not found", show(old)),
            ));
        };
        let id = match &rec.value {
            RefValue::Object(id) | RefValue::Peeled { object: id, .. } => *id,
            RefValue::Symref(_) => {
                return Err(Error::refused(
                    Refusal::SymrefNotMovable { name: old.to_vec() },
                    format!(
                        "refname {} is a symbolic ref, copying it is not supported",
                        show(old)
                    ),
                ))
            }
            RefValue::Deletion => unreachable!("raw_ref hides tombstones"),
        };
        if old == new {
            return Ok(Committed { warning: None });
        }
        let skip = rename.then_some(old);
        placement
            .view(addition.stack().merged(), hash)
            .check_available_skipping(new, skip)?;
        let head_follows = rename
            && matches!(view.raw_ref(b"HEAD")?, Some(RefRecord { value: RefValue::Symref(t), .. }) if t == old);
        let copied = view.live_logs(old)?;
        let n = addition.next_update_index();
        let created = if rename { n + 1 } else { n };
        let null = crate::hash::ObjectId::null(hash);
        let fresh = |name: &[u8], ui: u64, old_id, new_id| LogRecord {
            refname: name.to_vec(),
            update_index: ui,
            value: LogValue::Update(LogUpdate {
                old_id,
                new_id,
                committer: committer.clone(),
                message: message.clone(),
            }),
        };
        // Records in key order: refs by name; logs by name, newest first.
        let mut refs = vec![RefRecord {
            refname: new.to_vec(),
            update_index: created,
            value: rec.value.clone(),
        }];
        if rename {
            refs.push(RefRecord::new(old.to_vec(), n, RefValue::Deletion));
        }
        refs.sort_by(|a, b| a.refname.cmp(&b.refname));
        let mut logs = Vec::with_capacity(2 * copied.len() + 3);
        if head_follows {
            logs.push(fresh(b"HEAD", n, id, null));
        }
        logs.push(fresh(new, created, null, id));
        if rename {
            logs.push(fresh(new, n, id, null));
        }
        for l in &copied {
            let mut c = l.clone();
            c.refname = new.to_vec();
            logs.push(c);
            if rename {
                logs.push(LogRecord {
                    refname: old.to_vec(),
                    update_index: l.update_index,
                    value: LogValue::Deletion,
                });
            }
        }
        logs.sort_by(|a, b| {
            a.refname
                .cmp(&b.refname)
                .then(b.update_index.cmp(&a.update_index))
        });
        addition.add_table(|w, _| {
            w.set_limits(n, created)?;
            for r in &refs {
                w.add_ref(r)?;
            }
            for l in &logs {
                w.add_log(l)?;
            }
            Ok(())
        })?;
        addition.commit()
    }
}

/// Where the stack a rename or copy writes stands.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Placement<'a> {
    /// A repository's one stack (the main worktree).
    Alone,
    /// The common stack of a linked worktree with this worktree part.
    Common(WorktreeView<'a>),
    /// A linked worktree's own stack, beside this common stack.
    Own {
        common: &'a MergedTable,
        others: &'a dyn OtherWorktrees,
    },
}

impl<'a> Placement<'a> {
    /// The view the D/F check reads, with `locked` the stack being written.
    fn view(self, locked: &'a MergedTable, hash: HashId) -> View<'a> {
        match self {
            Placement::Alone => View::of(locked, hash),
            Placement::Common(wt) => View {
                merged: locked,
                hash,
                worktree: Some(wt),
            },
            Placement::Own { common, others } => View {
                merged: common,
                hash,
                worktree: Some(WorktreeView {
                    own: locked,
                    others,
                }),
            },
        }
    }
}

impl View<'_> {
    /// The D/F check of a rename or copy: as for a transaction of one update, with `skip`
    /// (the renamed ref) not counting as a conflict.
    pub(crate) fn check_available_skipping(&self, name: &[u8], skip: Option<&[u8]>) -> Result<()> {
        self.check_available_except(name, &NoNames, &mut None, skip)
    }
}

#[cfg(test)]
mod tests {
    use crate::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};
    use crate::{ErrorKind, ObjectId, RefValue, StackOptions};
    use crate::{Signature, TzOffset};

    fn me(time: u64) -> Signature {
        Signature {
            name: b"C O Mitter".to_vec(),
            email: b"c@example.com".to_vec(),
            time,
            tz_offset: TzOffset::from_hhmm(200),
        }
    }

    fn id(b: u8) -> ObjectId {
        ObjectId::from_bytes(&[b; 20]).unwrap()
    }

    fn db() -> (tempfile::TempDir, RefDb) {
        let dir = tempfile::tempdir().unwrap();
        let opts = RefDbOptions {
            stack: StackOptions {
                auto_compaction: false,
                fsync: false,
                ..Default::default()
            },
            ..Default::default()
        };
        let db = RefDb::open(dir.path(), opts).unwrap();
        (dir, db)
    }

    /// `topic` created, moved, moved again (update indexes 1..3), `main` at 4.
    fn setup(db: &mut RefDb) {
        let t = b"refs/heads/topic";
        let steps = [
            RefUpdate::create("refs/heads/topic", id(1)).message("created"),
            RefUpdate::update("refs/heads/topic", id(2), Some(id(1))).message("second"),
            RefUpdate::update("refs/heads/topic", id(3), Some(id(2))).message("third"),
            RefUpdate::create("refs/heads/main", id(9)).message("main"),
        ];
        for (i, u) in steps.into_iter().enumerate() {
            db.transaction(&[u], &me(100 + i as u64), &AssumeCommits)
                .unwrap();
        }
        assert_eq!(db.reflog(t).unwrap().count(), 3);
    }

    fn entries(db: &RefDb, name: &[u8]) -> Vec<(u64, ObjectId, ObjectId, Vec<u8>)> {
        db.reflog(name)
            .unwrap()
            .map(|l| {
                let l = l.unwrap();
                let u = l.update().unwrap().clone();
                (l.update_index, u.old_id, u.new_id, u.message)
            })
            .collect()
    }

    #[test]
    fn rename_writes_one_table_of_two_update_indexes() {
        let (_d, mut db) = db();
        setup(&mut db);
        let tables = db.stack().tables().len();
        let msg = b"Branch: renamed refs/heads/topic to refs/heads/renamed";
        db.rename_ref(b"refs/heads/topic", b"refs/heads/renamed", msg, &me(500))
            .unwrap();
        assert_eq!(db.stack().tables().len(), tables + 1);
        let t = db.stack().tables().last().unwrap();
        assert_eq!((t.min_update_index(), t.max_update_index()), (5, 6));
        let r = db.read_ref(b"refs/heads/renamed").unwrap().unwrap();
        assert_eq!((r.update_index, r.value), (6, RefValue::Object(id(3))));
        assert_eq!(db.read_ref(b"refs/heads/topic").unwrap(), None);
        assert!(!db.reflog_exists(b"refs/heads/topic").unwrap());
        let m = |s: &str| format!("{s}\n").into_bytes();
        let null = ObjectId::null(crate::HashId::Sha1);
        let full = String::from_utf8(msg.to_vec()).unwrap();
        assert_eq!(
            entries(&db, b"refs/heads/renamed"),
            vec![
                (6, null, id(3), m(&full)),
                (5, id(3), null, m(&full)),
                (3, id(2), id(3), m("third")),
                (2, id(1), id(2), m("second")),
                (1, null, id(1), m("created")),
            ]
        );
        // HEAD points at main: no HEAD entry.
        assert!(!db.reflog_exists(b"HEAD").unwrap());
    }

    #[test]
    fn copy_keeps_the_old_ref_and_writes_one_fresh_entry() {
        let (_d, mut db) = db();
        setup(&mut db);
        db.copy_ref(
            b"refs/heads/topic",
            b"refs/heads/copy",
            b"Branch: copied",
            &me(500),
        )
        .unwrap();
        let t = db.stack().tables().last().unwrap();
        assert_eq!((t.min_update_index(), t.max_update_index()), (5, 5));
        assert_eq!(db.resolve(b"refs/heads/topic").unwrap(), Some(id(3)));
        assert_eq!(db.reflog(b"refs/heads/topic").unwrap().count(), 3);
        let e = entries(&db, b"refs/heads/copy");
        assert_eq!(e.len(), 4);
        assert_eq!(e[0].0, 5);
        assert!(e[0].1.is_null() && e[0].2 == id(3));
    }

    #[test]
    fn renaming_heads_branch_logs_to_head_and_leaves_head_to_the_caller() {
        let (_d, mut db) = db();
        db.transaction(
            &[RefUpdate::create("refs/heads/main", id(1)).message("c1")],
            &me(1),
            &AssumeCommits,
        )
        .unwrap();
        db.transaction(
            &[
                RefUpdate::symref_update("HEAD", "refs/heads/main", crate::refdb::Expected::Any)
                    .no_deref(),
            ],
            &me(2),
            &AssumeCommits,
        )
        .unwrap();
        let before = db.reflog(b"HEAD").unwrap().count();
        db.rename_ref(b"refs/heads/main", b"refs/heads/trunk", b"m", &me(3))
            .unwrap();
        let head = entries(&db, b"HEAD");
        assert_eq!(head.len(), before + 1);
        assert_eq!((head[0].1, head[0].2.is_null()), (id(1), true));
        let h = db.read_ref(b"HEAD").unwrap().unwrap();
        assert_eq!(h.value, RefValue::Symref(b"refs/heads/main".to_vec()));
    }

    #[test]
    fn checks_in_gits_order() {
        let (_d, mut db) = db();
        setup(&mut db);
        let c = me(9);
        let err = |r: crate::Result<crate::Committed>| r.unwrap_err().kind();
        assert_eq!(
            err(db.rename_ref(b"refs/heads/nope", b"refs/heads/x", b"", &c)),
            ErrorKind::NotExist
        );
        db.transaction(
            &[RefUpdate::symref_create(
                "refs/heads/sym",
                "refs/heads/main",
            )],
            &c,
            &AssumeCommits,
        )
        .unwrap();
        assert_eq!(
            err(db.copy_ref(b"refs/heads/sym", b"refs/heads/x", b"", &c)),
            ErrorKind::Api
        );
        assert_eq!(
            err(db.rename_ref(b"refs/heads/main", b"refs/heads/a..b", b"", &c)),
            ErrorKind::Refname
        );
        // A copy into a directory of its own name conflicts; a rename does not.
        let e = db
            .copy_ref(b"refs/heads/topic", b"refs/heads/topic/x", b"", &c)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NameConflict);
        assert_eq!(
            e.to_string(),
            "'refs/heads/topic' exists; cannot create 'refs/heads/topic/x'"
        );
        db.rename_ref(b"refs/heads/topic", b"refs/heads/topic/x", b"", &c)
            .unwrap();
        assert_eq!(db.resolve(b"refs/heads/topic/x").unwrap(), Some(id(3)));
        // And another ref in the way is a conflict for both.
        assert_eq!(
            err(db.rename_ref(b"refs/heads/main", b"refs/heads/topic", b"", &c)),
            ErrorKind::NameConflict
        );
        // The same name: nothing written.
        let n = db.stack().tables().len();
        db.rename_ref(b"refs/heads/main", b"refs/heads/main", b"", &c)
            .unwrap();
        assert_eq!(db.stack().tables().len(), n);
    }
}
