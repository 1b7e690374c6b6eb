//! A linked worktree's refs, kept as git's reftable backend keeps them: per-worktree refs
//! (`HEAD` and the other root refs, `refs/bisect/`, `refs/worktree/`, `refs/rewritten/`,
//! [`is_per_worktree_ref`](crate::refname::is_per_worktree_ref)) and their reflogs in the
//! worktree's own stack, `$GIT_COMMON_DIR/worktrees/<id>/reftable`, and every other ref in
//! the repository's stack, `$GIT_COMMON_DIR/reftable`, which all worktrees share.
//!
//! It follows `refs/reftable-backend.c` (`reftable_be_init`, `backend_for`,
//! `backend_for_worktree`) and `parse_worktree_ref` in `refs.c`:
//!
//! - a name is read from the stack [`parse_worktree_ref`] picks, under the name it gives:
//!   `main-worktree/HEAD` is `HEAD` in the common stack, `worktrees/<id>/HEAD` is `HEAD` in
//!   worktree `<id>`'s stack; symrefs are followed from stack to stack;
//! - listings merge the two stacks in name order: all of the worktree's records, and the
//!   common stack's shared ones (its per-worktree refs are the main worktree's);
//! - a transaction locks the stacks its updates name, in the order of the updates, writes one
//!   table into each stack it changes (each with that stack's next update index) and commits
//!   them in the order they were locked. Updating the branch the worktree's `HEAD` points to
//!   logs to that `HEAD`, in the worktree's stack; the main worktree's `HEAD` is not touched;
//! - the D/F check of a new name reads each leading directory from its own stack and looks
//!   below the name in both (in the common stack at shared refs only);
//! - `pack_refs` compacts the worktree's stack only.
//!
//! One deliberate difference: a transaction refuses to write through `main-worktree/...` or
//! `worktrees/<id>/...` names. git's backend routes such an update to the right stack but
//! writes the record under the prefixed name, which no read finds afterwards (2.45 to at
//! least 2.55). Another worktree's refs are written through that worktree's own store.
//!
//! The main worktree's store is the ordinary [`RefDb`] on `$GIT_COMMON_DIR/reftable`.

use crate::stack::Committed;
use std::path::{Path, PathBuf};

use crate::codec::record::{LogRecord, RefRecord};
use crate::error::{Error, Result};
use crate::hash::{HashId, ObjectId};
use crate::merged::{MergedTable, RefLog};
use crate::refname::{is_valid_refname, parse_worktree_ref, WorktreeRef};
use crate::stack::{Addition, Stack};
use crate::stack_reader::StackReader;

use super::objects::ObjectLookup;
use super::read::{LiveRefs, NoNames, OtherWorktrees, View, WorktreeView};
use super::reflog::{Expired, ReflogNames};
use super::rename::Placement;
use super::select::{WorktreeReflogNames, WorktreeRefs};
use super::transaction::{
    lock_stack, plan_updates, prefixed_refusal, to_work, writable_in_worktree, Planned,
    PreparedTransaction,
};
use super::update::RefUpdate;
use super::{RefDb, RefDbOptions};
use crate::signature::Signature;

/// One of a linked worktree's two stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorktreeStack {
    /// The repository's stack, `$GIT_COMMON_DIR/reftable`: shared refs.
    Common,
    /// The worktree's own stack, `$GIT_DIR/reftable`: its per-worktree refs.
    Own,
}

impl WorktreeStack {
    /// The stack that keeps `name` when written from a linked worktree (a
    /// `main-worktree/` or `worktrees/<id>/` name is not written from it).
    pub fn of(name: &[u8]) -> WorktreeStack {
        match parse_worktree_ref(name) {
            WorktreeRef::Current(_) => WorktreeStack::Own,
            _ => WorktreeStack::Common,
        }
    }
}

/// The other worktrees' stacks, opened read-only when a `worktrees/<id>/` name is read.
#[derive(Debug)]
struct OtherStacks {
    common_dir: PathBuf,
    hash: HashId,
}

impl OtherWorktrees for OtherStacks {
    fn stack(&self, id: &[u8]) -> Result<Option<MergedTable>> {
        // A worktree id is one plain directory name: never `..`, never a path.
        let Ok(id) = std::str::from_utf8(id) else {
            return Ok(None);
        };
        if id.starts_with('.') || id.contains('\\') || !is_valid_refname(id.as_bytes(), true) {
            return Ok(None);
        }
        let dir = self.common_dir.join("worktrees").join(id).join("reftable");
        Ok(Some(
            StackReader::open(dir, Some(self.hash))?.merged().clone(),
        ))
    }
}

/// The ref store of a linked worktree: its own stack for per-worktree refs, the common stack
/// for the rest, with git's rules for which ref lives where (see the [module](self) docs).
///
/// ```
/// use reftable::refdb::{AssumeCommits, RefDbOptions, RefUpdate, WorktreeRefDb};
/// use reftable::{Signature, TzOffset};
/// use reftable::ObjectId;
///
/// let common = tempfile::tempdir().unwrap(); // $GIT_COMMON_DIR, the main `.git`
/// let git_dir = common.path().join("worktrees/wt"); // $GIT_DIR of worktree `wt`
/// std::fs::create_dir_all(&git_dir).unwrap();
/// std::fs::create_dir(common.path().join("reftable")).unwrap(); // the repository's stack
/// let mut wt = WorktreeRefDb::open(common.path(), &git_dir, RefDbOptions::default()).unwrap();
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// let me = Signature::default();
/// wt.transaction(&[RefUpdate::create("refs/heads/topic", id)], &me, &AssumeCommits).unwrap();
/// wt.transaction(
///     &[
///         RefUpdate::symref_create("HEAD", "refs/heads/topic").no_deref(),
///         RefUpdate::create("refs/bisect/bad", id),
///     ],
///     &me,
///     &AssumeCommits,
/// )
/// .unwrap();
/// // HEAD and refs/bisect/ live in the worktree's stack, the branch in the common one.
/// assert!(wt.own().read_ref(b"HEAD").unwrap().is_some());
/// assert!(wt.common().read_ref(b"refs/bisect/bad").unwrap().is_none());
/// assert_eq!(wt.resolve(b"HEAD").unwrap(), Some(id));
/// // Another worktree (here, the main one) reads this one's refs through `worktrees/wt/`.
/// assert_eq!(wt.resolve(b"worktrees/wt/refs/bisect/bad").unwrap(), Some(id));
/// // Updating the checked-out branch logs to this worktree's HEAD.
/// let next = ObjectId::from_hex("2c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// wt.transaction(&[RefUpdate::update("refs/heads/topic", next, Some(id))], &me, &AssumeCommits)
///     .unwrap();
/// assert_eq!(wt.reflog(b"HEAD").unwrap().count(), 2);
/// ```
#[derive(Debug)]
pub struct WorktreeRefDb {
    common: RefDb,
    own: RefDb,
    others: OtherStacks,
}

impl WorktreeRefDb {
    /// Open the ref store of the linked worktree whose git directory is `git_dir`
    /// (`$GIT_DIR`, `.git/worktrees/<id>`) in the repository whose common directory is
    /// `common_dir` (`$GIT_COMMON_DIR`, the main `.git`): the stacks `<git_dir>/reftable`
    /// (created if missing, as `git worktree add` does) and `<common_dir>/reftable`, which
    /// must exist. Both use `opts`, as git opens them with one set of options.
    ///
    /// Errors: [`ErrorKind::NotExist`](crate::ErrorKind::NotExist) when a directory is missing, [`ErrorKind::Api`](crate::ErrorKind::Api) when
    /// they are one directory (the main worktree, whose refs are all in a [`RefDb`]).
    pub fn open(
        common_dir: impl AsRef<Path>,
        git_dir: impl AsRef<Path>,
        opts: RefDbOptions,
    ) -> Result<WorktreeRefDb> {
        let (common_dir, git_dir) = (common_dir.as_ref(), git_dir.as_ref());
        let real = |p: &Path| {
            p.canonicalize()
                .map_err(|e| Error::io(e, "open worktree").in_file(p))
        };
        if real(common_dir)? == real(git_dir)? {
            return Err(Error::api(
                "the main worktree's refs all live in the common stack: open a RefDb",
            ));
        }
        Ok(WorktreeRefDb {
            common: RefDb::open(common_dir.join("reftable"), opts)?,
            own: RefDb::open_or_create(git_dir.join("reftable"), opts)?,
            others: OtherStacks {
                common_dir: common_dir.to_path_buf(),
                hash: opts.stack.hash(),
            },
        })
    }

    /// The common stack's ref database (shared refs, and the main worktree's own).
    pub fn common(&self) -> &RefDb {
        &self.common
    }

    /// The worktree's own stack's ref database (its per-worktree refs, under their plain
    /// names).
    pub fn own(&self) -> &RefDb {
        &self.own
    }

    /// The ref database of one of the two stacks, mutably (compaction, options).
    pub fn stack_db_mut(&mut self, which: WorktreeStack) -> &mut RefDb {
        match which {
            WorktreeStack::Common => &mut self.common,
            WorktreeStack::Own => &mut self.own,
        }
    }

    /// Re-read both stacks from disk.
    pub fn reload(&mut self) -> Result<()> {
        self.common.reload()?;
        self.own.reload()
    }

    fn view(&self) -> View<'_> {
        View {
            merged: self.common.stack.merged(),
            hash: self.common.stack.options().hash(),
            worktree: Some(WorktreeView {
                own: self.own.stack.merged(),
                others: &self.others,
            }),
        }
    }

    /// The live record of `name` (not following symrefs) in the stack that keeps it:
    /// `main-worktree/<name>` and `worktrees/<id>/<name>` included.
    pub fn read_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        self.view().raw_ref(name)
    }

    /// The object `name` points at, following symrefs from stack to stack as deep as git
    /// does; `None` when it does not resolve.
    pub fn resolve(&self, name: &[u8]) -> Result<Option<ObjectId>> {
        self.view().resolve_ref(name, true)
    }

    /// Every live ref this worktree sees, in name order: its own stack's and the common
    /// stack's shared refs (the worktree's record wins where both have a name).
    pub fn refs(&self) -> Result<WorktreeRefs> {
        self.refs_with_prefix(b"")
    }

    /// [`WorktreeRefDb::refs`] whose names start with `prefix`.
    pub fn refs_with_prefix(&self, prefix: &[u8]) -> Result<WorktreeRefs> {
        Ok(WorktreeRefs::new(
            LiveRefs::with_prefix(self.own.stack.merged(), prefix)?,
            LiveRefs::with_prefix(self.common.stack.merged(), prefix)?,
        ))
    }

    /// Check that `name` could be created from this worktree (git's D/F check across both
    /// stacks); the error's [`Refusal`](crate::Refusal) names the ref in the way.
    pub fn check_name_available(&self, name: &[u8]) -> Result<()> {
        self.view().check_available(name, &NoNames, &mut None)
    }

    /// The reflog of `name` (newest first, as [`RefDb::reflog`]) from the stack that keeps
    /// the ref.
    pub fn reflog(&self, name: &[u8]) -> Result<RefLog> {
        match self.view().route(name)? {
            Some((m, n)) => RefLog::of(&m, n, true),
            None => RefLog::none(self.common.stack.merged()),
        }
    }

    /// Whether `name` has a reflog.
    pub fn reflog_exists(&self, name: &[u8]) -> Result<bool> {
        self.view().has_reflog(name)
    }

    /// Names with a reflog that this worktree sees, in name order (`git reflog list` in the
    /// worktree): its own stack's and the common stack's shared ones.
    pub fn reflog_names(&self) -> Result<WorktreeReflogNames> {
        Ok(WorktreeReflogNames::new(
            ReflogNames::of(self.own.stack.merged())?,
            ReflogNames::of(self.common.stack.merged())?,
        ))
    }

    /// The database and name a reflog write of `name` goes to: git's reflog commands
    /// rewrite `main-worktree/<name>` to `<name>` in the common stack; another worktree's
    /// names are refused.
    fn reflog_target<'n>(&mut self, name: &'n [u8]) -> Result<(&mut RefDb, &'n [u8])> {
        match parse_worktree_ref(name) {
            WorktreeRef::Current(n) => Ok((&mut self.own, n)),
            WorktreeRef::Main(n) | WorktreeRef::Shared(n) => Ok((&mut self.common, n)),
            WorktreeRef::Other { .. } => Err(prefixed_refusal(name)),
        }
    }

    /// [`RefDb::create_reflog`] in the stack that keeps `name`.
    pub fn create_reflog(&mut self, name: &[u8]) -> Result<Committed> {
        let (db, name) = self.reflog_target(name)?;
        db.create_reflog(name)
    }

    /// [`RefDb::delete_reflog`] in the stack that keeps `name`.
    pub fn delete_reflog(&mut self, name: &[u8]) -> Result<Committed> {
        let (db, name) = self.reflog_target(name)?;
        db.delete_reflog(name)
    }

    /// [`RefDb::expire_reflog`] in the stack that keeps `name`.
    pub fn expire_reflog(
        &mut self,
        name: &[u8],
        prune: &mut dyn FnMut(&LogRecord) -> bool,
        rewrite: bool,
        dry_run: bool,
    ) -> Result<Expired> {
        let (db, name) = self.reflog_target(name)?;
        db.expire_reflog(name, prune, rewrite, dry_run)
    }

    /// `git pack-refs` in the worktree: compacts the worktree's own stack only, as git does
    /// (the common stack is packed from the main worktree, or through
    /// [`WorktreeRefDb::stack_db_mut`]).
    pub fn pack_refs(&mut self, auto: bool) -> Result<()> {
        self.own.pack_refs(auto)
    }

    /// [`RefDb::rename_ref`] from this worktree: as git's backend, the table goes to the
    /// stack of `new`, where the old ref, its reflog and the `HEAD` that may follow it are
    /// read too (a branch's rename reads and logs the main worktree's `HEAD`, in the common
    /// stack; `git branch -m` then moves this worktree's `HEAD` with a symref update). The
    /// D/F check of `new` sees both stacks.
    pub fn rename_ref(
        &mut self,
        old: &[u8],
        new: &[u8],
        message: &[u8],
        committer: &Signature,
    ) -> Result<Committed> {
        self.move_ref(old, new, message, committer, true)
    }

    /// [`RefDb::copy_ref`] from this worktree, into the stack of `new` (see
    /// [`WorktreeRefDb::rename_ref`]).
    pub fn copy_ref(
        &mut self,
        old: &[u8],
        new: &[u8],
        message: &[u8],
        committer: &Signature,
    ) -> Result<Committed> {
        self.move_ref(old, new, message, committer, false)
    }

    fn move_ref(
        &mut self,
        old: &[u8],
        new: &[u8],
        message: &[u8],
        committer: &Signature,
        rename: bool,
    ) -> Result<Committed> {
        writable_in_worktree(new)?;
        let others = &self.others;
        match WorktreeStack::of(new) {
            WorktreeStack::Common => {
                self.own.stack.reload()?;
                let wt = WorktreeView {
                    own: self.own.stack.merged(),
                    others,
                };
                let placement = Placement::Common(wt);
                self.common
                    .move_ref(old, new, message, committer, rename, placement)
            }
            WorktreeStack::Own => {
                self.common.stack.reload()?;
                let common = self.common.stack.merged();
                let placement = Placement::Own { common, others };
                self.own
                    .move_ref(old, new, message, committer, rename, placement)
            }
        }
    }
}

/// A worktree transaction whose checks passed: one [`PreparedTransaction`] per stack it
/// locked (its table written, unlisted), in the order git locks and commits them.
#[derive(Debug)]
pub struct PreparedWorktreeTransaction<'a> {
    parts: Vec<(WorktreeStack, PreparedTransaction<'a>)>,
}

impl<'a> PreparedWorktreeTransaction<'a> {
    /// The part of one stack, when the transaction locked it.
    pub fn part(&self, which: WorktreeStack) -> Option<&PreparedTransaction<'a>> {
        self.parts.iter().find(|(w, _)| *w == which).map(|(_, p)| p)
    }

    /// The stacks locked, in commit order.
    pub fn order(&self) -> Vec<WorktreeStack> {
        self.parts.iter().map(|(w, _)| *w).collect()
    }

    /// Whether it writes nothing.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|(_, p)| p.is_empty())
    }

    /// Publish each stack's table in turn, in lock order. As in git, the stacks are not
    /// committed atomically together: when a later one fails, the earlier ones stay.
    /// The warning is the first stack's whose reload or auto-compaction failed.
    pub fn commit(self) -> Result<Committed> {
        let mut warning = None;
        for (_, p) in self.parts {
            warning = warning.or(p.commit()?.warning);
        }
        Ok(Committed { warning })
    }
}

/// A stack in a transaction: open for reading, or locked.
enum Slot<'a> {
    Open(&'a mut Stack),
    Locked(Addition<'a>),
}

impl<'a> Slot<'a> {
    fn merged(&self) -> &MergedTable {
        match self {
            Slot::Open(s) => s.merged(),
            Slot::Locked(a) => a.stack().merged(),
        }
    }

    /// Lock it; also says whether the stack changed from what had been read.
    fn lock(self) -> Result<(Slot<'a>, bool)> {
        match self {
            Slot::Open(s) => {
                let before = s.table_names().to_vec();
                let a = lock_stack(s)?;
                let changed = a.stack().table_names() != before.as_slice();
                Ok((Slot::Locked(a), changed))
            }
            locked => Ok((locked, false)),
        }
    }
}

/// The two stacks of a transaction, indexed by [`WorktreeStack`], and the lock order.
struct Slots<'a> {
    slots: [Option<Slot<'a>>; 2],
    order: Vec<WorktreeStack>,
}

impl<'a> Slots<'a> {
    fn index(which: WorktreeStack) -> usize {
        match which {
            WorktreeStack::Common => 0,
            WorktreeStack::Own => 1,
        }
    }

    fn merged(&self, which: WorktreeStack) -> Result<&MergedTable> {
        match &self.slots[Self::index(which)] {
            Some(s) => Ok(s.merged()),
            None => Err(Error::api("worktree stack already taken")),
        }
    }

    /// Lock `which` unless it is; whether the stack changed from what had been read.
    fn lock(&mut self, which: WorktreeStack) -> Result<bool> {
        if self.order.contains(&which) {
            return Ok(false);
        }
        let Some(slot) = self.slots[Self::index(which)].take() else {
            return Err(Error::api("worktree stack already taken"));
        };
        let (slot, changed) = slot.lock()?;
        self.slots[Self::index(which)] = Some(slot);
        self.order.push(which);
        Ok(changed)
    }

    fn view<'v>(&'v self, hash: HashId, others: &'v dyn OtherWorktrees) -> Result<View<'v>> {
        Ok(View {
            merged: self.merged(WorktreeStack::Common)?,
            hash,
            worktree: Some(WorktreeView {
                own: self.merged(WorktreeStack::Own)?,
                others,
            }),
        })
    }

    /// Write each locked stack's table, in lock order.
    fn write(
        mut self,
        planned: &mut Planned<'_>,
        committer: &Signature,
    ) -> Result<PreparedWorktreeTransaction<'a>> {
        let mut parts = Vec::with_capacity(self.order.len());
        for which in self.order {
            let Some(Slot::Locked(addition)) = self.slots[Self::index(which)].take() else {
                return Err(Error::api("worktree stack not locked"));
            };
            let keep = move |name: &[u8]| WorktreeStack::of(name) == which;
            parts.push((which, planned.write_table(addition, committer, &keep)?));
        }
        Ok(PreparedWorktreeTransaction { parts })
    }
}

impl WorktreeRefDb {
    /// Check `updates` as one transaction with git's rules across the worktree's two stacks
    /// and write a table into each stack it changes ([`RefDb::prepare`]'s checks and
    /// errors). The stacks the updates name are locked first, in the order of the updates;
    /// a stack only the planner reaches (the common stack through `HEAD`, the worktree's
    /// through `HEAD`'s reflog) is locked after the checks, which run again should it have
    /// changed meanwhile. Names under `main-worktree/` and `worktrees/<id>/` are refused
    /// ([`ErrorKind::Refname`](crate::ErrorKind::Refname); see the [module](self) docs).
    pub fn prepare<'a>(
        &'a mut self,
        updates: &[RefUpdate],
        committer: &Signature,
        objects: &dyn ObjectLookup,
    ) -> Result<PreparedWorktreeTransaction<'a>> {
        let opts = self.common.opts;
        let hash = opts.stack.hash();
        let work = to_work(updates.iter().cloned(), hash)?;
        for u in updates {
            writable_in_worktree(&u.refname)?;
        }
        let (common, own) = (&mut self.common.stack, &mut self.own.stack);
        common.reload()?;
        own.reload()?;
        let mut slots = Slots {
            slots: [Some(Slot::Open(common)), Some(Slot::Open(own))],
            order: Vec::with_capacity(2),
        };
        for u in updates {
            slots.lock(WorktreeStack::of(&u.refname))?;
        }
        let others = &self.others;
        let mut planned = plan_updates(slots.view(hash, others)?, work.clone(), &opts, objects)?;
        let missing = planned
            .written_names()
            .map(WorktreeStack::of)
            .find(|w| !slots.order.contains(w));
        if let Some(which) = missing {
            if slots.lock(which)? {
                planned = plan_updates(slots.view(hash, others)?, work, &opts, objects)?;
            }
        }
        slots.write(&mut planned, committer)
    }

    /// [`WorktreeRefDb::prepare`] and [`PreparedWorktreeTransaction::commit`] in one.
    pub fn transaction(
        &mut self,
        updates: &[RefUpdate],
        committer: &Signature,
        objects: &dyn ObjectLookup,
    ) -> Result<Committed> {
        self.prepare(updates, committer, objects)?.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refdb::AssumeCommits;
    use crate::{ErrorKind, RefValue, Refusal, StackOptions};

    fn id(b: u8) -> ObjectId {
        ObjectId::from_bytes(&[b; 20]).unwrap()
    }

    fn opts() -> RefDbOptions {
        RefDbOptions {
            stack: StackOptions {
                auto_compaction: false,
                fsync: false,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// A common dir whose main worktree has `HEAD -> main` and `refs/bisect/m`, and a linked
    /// worktree `wt` with `HEAD -> wtb`.
    fn setup() -> (tempfile::TempDir, WorktreeRefDb) {
        let dir = tempfile::tempdir().unwrap();
        let mut main = RefDb::open_or_create(dir.path().join("reftable"), opts()).unwrap();
        let me = Signature::default();
        let u = [
            RefUpdate::create("refs/heads/main", id(1)),
            RefUpdate::create("refs/heads/wtb", id(2)),
            RefUpdate::create("refs/bisect/m", id(1)),
            RefUpdate::symref_create("HEAD", "refs/heads/main").no_deref(),
        ];
        main.transaction(&u, &me, &AssumeCommits).unwrap();
        let git_dir = dir.path().join("worktrees/wt");
        std::fs::create_dir_all(&git_dir).unwrap();
        let mut wt = WorktreeRefDb::open(dir.path(), &git_dir, opts()).unwrap();
        let head = RefUpdate::symref_create("HEAD", "refs/heads/wtb").no_deref();
        wt.transaction(&[head], &me, &AssumeCommits).unwrap();
        (dir, wt)
    }

    fn tables(db: &RefDb) -> usize {
        db.stack().tables().len()
    }

    #[test]
    fn each_ref_goes_to_its_stack_with_that_stacks_update_index() {
        let (_d, mut wt) = setup();
        let (c, o) = (tables(wt.common()), tables(wt.own()));
        let u = [
            RefUpdate::create("refs/heads/new", id(3)),
            RefUpdate::create("refs/bisect/bad", id(3)),
            RefUpdate::create("refs/worktree/w", id(3)),
            RefUpdate::create("ORIG_HEAD", id(3)),
        ];
        let tx = wt
            .prepare(&u, &Signature::default(), &AssumeCommits)
            .unwrap();
        assert_eq!(tx.order(), [WorktreeStack::Common, WorktreeStack::Own]);
        let common = tx.part(WorktreeStack::Common).unwrap();
        let own = tx.part(WorktreeStack::Own).unwrap();
        assert_eq!((common.ref_records(), own.ref_records()), (1, 3));
        assert_eq!((common.update_index(), own.update_index()), (2, 2));
        tx.commit().unwrap();
        assert_eq!((tables(wt.common()), tables(wt.own())), (c + 1, o + 1));
        assert!(wt.common().read_ref(b"refs/bisect/bad").unwrap().is_none());
        assert!(wt.own().read_ref(b"refs/heads/new").unwrap().is_none());
        for name in [
            "refs/heads/new",
            "refs/bisect/bad",
            "refs/worktree/w",
            "ORIG_HEAD",
        ] {
            assert_eq!(wt.resolve(name.as_bytes()).unwrap(), Some(id(3)), "{name}");
        }
    }

    #[test]
    fn the_branch_of_head_logs_to_the_worktrees_head_only() {
        let (_d, mut wt) = setup();
        let me = Signature::default();
        let u = [RefUpdate::update("refs/heads/wtb", id(4), Some(id(2))).message("m")];
        let tx = wt.prepare(&u, &me, &AssumeCommits).unwrap();
        // The worktree's stack is locked after the checks, for HEAD's entry.
        assert_eq!(tx.order(), [WorktreeStack::Common, WorktreeStack::Own]);
        assert_eq!(tx.part(WorktreeStack::Own).unwrap().log_records(), 1);
        tx.commit().unwrap();
        let head: Vec<_> = wt.reflog(b"HEAD").unwrap().map(|l| l.unwrap()).collect();
        assert_eq!(head[0].update().unwrap().new_id, id(4));
        assert!(!wt.common().reflog_exists(b"HEAD").unwrap());
        // Through HEAD: HEAD's stack first, then the branch's.
        let u = [RefUpdate::update("HEAD", id(5), Some(id(4)))];
        let tx = wt.prepare(&u, &me, &AssumeCommits).unwrap();
        assert_eq!(tx.order(), [WorktreeStack::Own, WorktreeStack::Common]);
        tx.commit().unwrap();
        assert_eq!(wt.common().resolve(b"refs/heads/wtb").unwrap(), Some(id(5)));
        // Over the entry of the symref's creation.
        assert_eq!(wt.reflog(b"HEAD").unwrap().count(), 3);
        assert_eq!(wt.reflog(b"main-worktree/HEAD").unwrap().count(), 0);
    }

    #[test]
    fn a_locked_worktree_stack_blocks_only_what_writes_to_it() {
        let (d, mut wt) = setup();
        let me = Signature::default();
        let lock = d.path().join("worktrees/wt/reftable/tables.list.lock");
        std::fs::write(&lock, b"").unwrap();
        let shared = [RefUpdate::create("refs/heads/other", id(6))];
        wt.transaction(&shared, &me, &AssumeCommits).unwrap();
        let via_head = [RefUpdate::update("refs/heads/wtb", id(6), None)];
        let e = wt.transaction(&via_head, &me, &AssumeCommits).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Lock);
        assert_eq!(wt.common().resolve(b"refs/heads/wtb").unwrap(), Some(id(2)));
        std::fs::remove_file(&lock).unwrap();
        wt.transaction(&via_head, &me, &AssumeCommits).unwrap();
    }

    #[test]
    fn reads_through_main_worktree_and_worktrees_names() {
        let (_d, wt) = setup();
        let main_head = wt.read_ref(b"main-worktree/HEAD").unwrap().unwrap();
        assert_eq!(
            main_head.value,
            RefValue::Symref(b"refs/heads/main".to_vec())
        );
        assert_eq!(wt.resolve(b"main-worktree/HEAD").unwrap(), Some(id(1)));
        assert_eq!(
            wt.resolve(b"main-worktree/refs/bisect/m").unwrap(),
            Some(id(1))
        );
        assert_eq!(wt.resolve(b"refs/bisect/m").unwrap(), None);
        assert_eq!(wt.resolve(b"worktrees/wt/HEAD").unwrap(), Some(id(2)));
        for none in [
            "worktrees/nope/HEAD",
            "worktrees/../HEAD",
            "worktrees/.x/HEAD",
            "worktrees/wt",
        ] {
            assert_eq!(wt.read_ref(none.as_bytes()).unwrap(), None, "{none}");
            assert_eq!(wt.reflog(none.as_bytes()).unwrap().count(), 0, "{none}");
        }
    }

    #[test]
    fn listings_merge_the_stacks_as_git_selects() {
        let (_d, mut wt) = setup();
        let me = Signature::default();
        // The main worktree's own refs and reflogs in the common stack are not this
        // worktree's (git's `ref_iterator_select` keeps only shared names from there).
        let orig = RefUpdate::create("ORIG_HEAD", id(7)).create_reflog();
        wt.common.transaction(&[orig], &me, &AssumeCommits).unwrap();
        // A shared name in the worktree's stack shadows the common one (git never writes
        // one there; a crafted stack can have it).
        let n = wt.own.stack.next_update_index();
        let shadow = crate::RefRecord::new("refs/heads/main", n, RefValue::Object(id(9)));
        wt.own
            .stack
            .add(|w, ui| {
                w.set_limits(ui, ui)?;
                w.add_ref(&shadow)
            })
            .unwrap();
        wt.transaction(
            &[RefUpdate::create("refs/bisect/b", id(3))],
            &me,
            &AssumeCommits,
        )
        .unwrap();
        let names: Vec<(Vec<u8>, Option<ObjectId>)> = wt
            .refs()
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                (r.refname.clone(), r.value_id().copied())
            })
            .collect();
        let want: Vec<(Vec<u8>, Option<ObjectId>)> = vec![
            (b"HEAD".to_vec(), None),
            (b"refs/bisect/b".to_vec(), Some(id(3))),
            (b"refs/heads/main".to_vec(), Some(id(9))),
            (b"refs/heads/wtb".to_vec(), Some(id(2))),
        ];
        assert_eq!(names, want);
        let logs: Vec<Vec<u8>> = wt.reflog_names().unwrap().map(Result::unwrap).collect();
        assert_eq!(
            logs,
            [
                b"HEAD".to_vec(),
                b"refs/heads/main".to_vec(),
                b"refs/heads/wtb".to_vec()
            ]
        );
    }

    #[test]
    fn name_checks_span_both_stacks() {
        let (_d, mut wt) = setup();
        let me = Signature::default();
        wt.transaction(
            &[RefUpdate::create("refs/bisect/x", id(3))],
            &me,
            &AssumeCommits,
        )
        .unwrap();
        let conflict =
            |wt: &WorktreeRefDb, name: &str| match wt.check_name_available(name.as_bytes()) {
                Err(e) => match e.refusal() {
                    Some(Refusal::DirectoryConflict { existing, .. }) => Some(existing.clone()),
                    _ => panic!("{e}"),
                },
                Ok(()) => None,
            };
        assert_eq!(
            conflict(&wt, "refs/bisect/x/y"),
            Some(b"refs/bisect/x".to_vec())
        );
        assert_eq!(
            conflict(&wt, "refs/bisect"),
            Some(b"refs/bisect/x".to_vec())
        );
        assert_eq!(
            conflict(&wt, "refs/heads/wtb/y"),
            Some(b"refs/heads/wtb".to_vec())
        );
        assert_eq!(
            conflict(&wt, "refs/heads"),
            Some(b"refs/heads/main".to_vec())
        );
        // The main worktree's bisect ref is not this worktree's.
        assert_eq!(conflict(&wt, "refs/bisect/m/y"), None);
        let u = [RefUpdate::create("refs/bisect/m/y", id(3))];
        wt.transaction(&u, &me, &AssumeCommits).unwrap();
    }

    #[test]
    fn writes_through_other_worktrees_names_are_refused() {
        let (_d, mut wt) = setup();
        let me = Signature::default();
        for name in [
            "main-worktree/refs/bisect/m",
            "worktrees/wt/refs/bisect/y",
            "worktrees/wt/HEAD",
        ] {
            let e = wt
                .transaction(&[RefUpdate::create(name, id(3))], &me, &AssumeCommits)
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Refname, "{name}");
        }
        // A symref into another worktree cannot be written through either.
        let sym = [RefUpdate::symref_create("refs/worktree/s", "main-worktree/HEAD").no_deref()];
        wt.transaction(&sym, &me, &AssumeCommits).unwrap();
        let through = [RefUpdate::update("refs/worktree/s", id(3), None)];
        let e = wt.transaction(&through, &me, &AssumeCommits).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Refname);
        assert_eq!(wt.resolve(b"main-worktree/HEAD").unwrap(), Some(id(1)));
        // Reflog commands rewrite main-worktree/ names, as git's do.
        assert!(wt.reflog_target(b"worktrees/wt/HEAD").is_err());
        wt.delete_reflog(b"main-worktree/refs/heads/x").unwrap();
        let (db, n) = wt.reflog_target(b"main-worktree/HEAD").unwrap();
        assert_eq!(
            (db.stack().dir().ends_with("wt/reftable"), n),
            (false, &b"HEAD"[..])
        );
    }

    #[test]
    fn a_branch_rename_reads_and_logs_the_common_stacks_head() {
        let (_d, mut wt) = setup();
        let me = Signature::default();
        wt.rename_ref(b"refs/heads/wtb", b"refs/heads/wtb2", b"renamed", &me)
            .unwrap();
        assert_eq!(wt.resolve(b"refs/heads/wtb2").unwrap(), Some(id(2)));
        // HEAD of this worktree still names the old branch: moving it is the caller's step.
        assert_eq!(wt.resolve(b"HEAD").unwrap(), None);
        assert_eq!(wt.reflog(b"HEAD").unwrap().count(), 1);
        wt.rename_ref(b"refs/heads/main", b"refs/heads/trunk", b"renamed", &me)
            .unwrap();
        assert_eq!(wt.reflog(b"main-worktree/HEAD").unwrap().count(), 1);
        // D/F across the stacks.
        wt.transaction(
            &[RefUpdate::create("refs/bisect/x", id(3))],
            &me,
            &AssumeCommits,
        )
        .unwrap();
        let e = wt
            .copy_ref(b"refs/bisect/x", b"refs/bisect/x/y", b"", &me)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NameConflict);
    }

    #[test]
    fn the_main_worktree_is_not_a_linked_one() {
        let dir = tempfile::tempdir().unwrap();
        let e = WorktreeRefDb::open(dir.path(), dir.path(), opts()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Api);
        let missing = dir.path().join("worktrees/none");
        assert!(WorktreeRefDb::open(dir.path(), &missing, opts()).is_err());
    }

    /// Only `git init` and clone make the repository's stack (`reftable_be_create_on_disk`):
    /// a worktree opened against a common dir without one fails, and makes none.
    #[test]
    fn a_missing_common_stack_is_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join("worktrees/wt");
        std::fs::create_dir_all(&git_dir).unwrap();
        let e = WorktreeRefDb::open(dir.path(), &git_dir, opts()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotExist, "{e}");
        assert!(!dir.path().join("reftable").exists());
    }

    /// git moves a ref in the stack of its *new* name and reads the old ref there
    /// (`reftable_be_rename_ref` / `_copy_ref`: `backend_for(newrefname)`): across the
    /// boundary between this worktree's refs and the shared ones, the old ref is not found.
    #[test]
    fn a_move_across_stacks_reads_the_old_ref_in_the_new_names_stack() {
        let (_d, mut wt) = setup();
        let me = Signature::default();
        let own = RefUpdate::create("refs/bisect/x", id(3));
        wt.transaction(&[own], &me, &AssumeCommits).unwrap();
        for (old, new) in [
            (&b"refs/bisect/x"[..], &b"refs/heads/y"[..]),
            (b"refs/heads/main", b"refs/worktree/y"),
        ] {
            let moved = wt.rename_ref(old, new, b"m", &me);
            assert_eq!(moved.unwrap_err().kind(), ErrorKind::NotExist);
            assert_eq!(wt.resolve(new).unwrap(), None);
            let copied = wt.copy_ref(old, new, b"m", &me);
            assert_eq!(copied.unwrap_err().kind(), ErrorKind::NotExist);
            assert!(wt.resolve(old).unwrap().is_some());
        }
    }

    /// What another writer commits to either stack is seen after a reload of the worktree's
    /// store, the repository's stack as well as the worktree's own.
    #[test]
    fn a_reload_rereads_both_stacks() {
        let (d, mut wt) = setup();
        let git_dir = d.path().join("worktrees/wt");
        let mut other = WorktreeRefDb::open(d.path(), &git_dir, opts()).unwrap();
        let u = [
            RefUpdate::create("refs/heads/later", id(4)),
            RefUpdate::create("refs/worktree/later", id(4)),
        ];
        other
            .transaction(&u, &Signature::default(), &AssumeCommits)
            .unwrap();
        assert!(wt.read_ref(b"refs/heads/later").unwrap().is_none());
        assert!(wt.read_ref(b"refs/worktree/later").unwrap().is_none());
        wt.reload().unwrap();
        assert!(wt.read_ref(b"refs/heads/later").unwrap().is_some());
        assert!(wt.read_ref(b"refs/worktree/later").unwrap().is_some());
    }
}
