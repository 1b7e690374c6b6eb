//! Reading refs: a ref's live record, resolving symrefs as deep as git does, the D/F check,
//! and iterators over live refs that lend each record.

use std::borrow::Cow;

use crate::codec::record::{LogRecord, Record, RefRecord, RefValue};
use crate::error::{Error, Refusal, Result};
use crate::hash::{HashId, ObjectId};
use crate::merged::{MergedIter, MergedTable};
use crate::refname::{autocreates_reflog, is_valid_refname, parse_worktree_ref, WorktreeRef};

use super::{show, LogRefs, RefDb};

/// How many refs are read while resolving a name (git's `SYMREF_MAXDEPTH`, counted as git's
/// `refs_resolve_ref_unsafe` counts it: one read per step, five in all), so a chain of at
/// most four symrefs ending in a direct ref resolves.
const SYMREF_MAX_DEPTH: usize = 5;

/// Names in sorted order that a D/F check also looks at (the other refs of a transaction),
/// read by position so a caller need not copy them.
pub(crate) trait SortedNames {
    fn len(&self) -> usize;
    fn name(&self, i: usize) -> &[u8];

    /// Position of the first name `>= key`.
    fn first_at_or_after(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.name(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn contains(&self, key: &[u8]) -> bool {
        let i = self.first_at_or_after(key);
        i < self.len() && self.name(i) == key
    }
}

/// No other names.
pub(crate) struct NoNames;

impl SortedNames for NoNames {
    fn len(&self) -> usize {
        0
    }

    fn name(&self, _: usize) -> &[u8] {
        &[]
    }
}

/// The stacks of the other linked worktrees, which `worktrees/<id>/...` names reach.
pub(crate) trait OtherWorktrees: std::fmt::Debug {
    /// The merged view of worktree `id`'s stack; `None` when there is none to read.
    fn stack(&self, id: &[u8]) -> Result<Option<MergedTable>>;
}

/// A linked worktree's part of a view: its own stack, and a way to the others.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorktreeView<'a> {
    pub(crate) own: &'a MergedTable,
    pub(crate) others: &'a dyn OtherWorktrees,
}

/// The queries transactions and readers make of a merged view: of one stack, or of a linked
/// worktree's two, where every name is read from the stack git's `backend_for` picks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    /// The repository's stack (`$GIT_COMMON_DIR/reftable`).
    pub(crate) merged: &'a MergedTable,
    pub(crate) hash: HashId,
    /// Set in a linked worktree.
    pub(crate) worktree: Option<WorktreeView<'a>>,
}

impl<'a> View<'a> {
    /// A view of one stack.
    pub(crate) fn of(merged: &'a MergedTable, hash: HashId) -> View<'a> {
        View {
            merged,
            hash,
            worktree: None,
        }
    }

    /// The stack `name` lives in and its name there; `None` for a name no stack holds (in
    /// a worktree that has no stack, or the empty name of `worktrees/<id>`).
    pub(crate) fn route<'n>(
        &self,
        name: &'n [u8],
    ) -> Result<Option<(Cow<'a, MergedTable>, &'n [u8])>> {
        let Some(wt) = self.worktree else {
            return Ok(Some((Cow::Borrowed(self.merged), name)));
        };
        Ok(match parse_worktree_ref(name) {
            WorktreeRef::Current(n) => Some((Cow::Borrowed(wt.own), n)),
            WorktreeRef::Main(n) | WorktreeRef::Shared(n) => Some((Cow::Borrowed(self.merged), n)),
            WorktreeRef::Other { name: b"", .. } => None,
            WorktreeRef::Other { id, name: n } => wt.others.stack(id)?.map(|m| (Cow::Owned(m), n)),
        })
    }

    /// The live record of `name`.
    pub(crate) fn raw_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        match self.route(name)? {
            Some((m, n)) => m.read_ref(n),
            None => Ok(None),
        }
    }

    /// Whether `name` has a reflog: a live log record (an entry or an existence marker).
    pub(crate) fn has_reflog(&self, name: &[u8]) -> Result<bool> {
        let Some((m, name)) = self.route(name)? else {
            return Ok(false);
        };
        let mut it = m.seek_log(name)?;
        while let Some(l) = it.next_record()? {
            if l.refname != name {
                return Ok(false);
            }
            if !l.is_deletion() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether an update of `name` gets a reflog entry under `core.logAllRefUpdates`.
    pub(crate) fn should_write_log(&self, log_refs: LogRefs, name: &[u8]) -> Result<bool> {
        match log_refs {
            LogRefs::Always => Ok(true),
            LogRefs::Normal if autocreates_reflog(name) => Ok(true),
            _ => self.has_reflog(name),
        }
    }

    /// The live log records of `name` (entries and existence markers), newest first;
    /// collected, for the writes that replace or tombstone each of them.
    pub(crate) fn live_logs(&self, name: &[u8]) -> Result<Vec<LogRecord>> {
        match self.route(name)? {
            Some((m, n)) => m.read_log(n)?.collect(),
            None => Ok(Vec::new()),
        }
    }

    /// Follow symrefs from `name`. `Ok(None)`: too deep or a bad target name; a dangling
    /// symref resolves to the null id unless `reading`, where it is `None` too.
    pub(crate) fn resolve_ref(&self, name: &[u8], reading: bool) -> Result<Option<ObjectId>> {
        let mut name = name.to_vec();
        for _ in 0..SYMREF_MAX_DEPTH {
            if !is_valid_refname(&name, true) {
                return Ok(None);
            }
            match self.raw_ref(&name)? {
                None => {
                    return Ok(if reading {
                        None
                    } else {
                        Some(ObjectId::null(self.hash))
                    })
                }
                Some(r) => match r.value {
                    RefValue::Symref(t) => name = t,
                    RefValue::Object(id) | RefValue::Peeled { object: id, .. } => {
                        return Ok(Some(id))
                    }
                    RefValue::Deletion => unreachable!("read_ref hides tombstones"),
                },
            }
        }
        Ok(None)
    }

    /// git's `refs_verify_refname_available`: no existing ref or other ref of the
    /// transaction may be a directory prefix of `name`, or live below `name/`. `extras` is
    /// sorted. Bounded by the refs and tombstones under `name/`, not by the stack's size.
    /// `scan` is an iterator kept between calls (a transaction checks many names): it is
    /// re-seeked instead of built anew.
    pub(crate) fn check_available(
        &self,
        name: &[u8],
        extras: &dyn SortedNames,
        scan: &mut Option<MergedIter<RefRecord>>,
    ) -> Result<()> {
        self.check_available_except(name, extras, scan, None)
    }

    /// [`View::check_available`] where the existing ref `skip` does not count (a ref being
    /// renamed does not conflict with its new name).
    pub(crate) fn check_available_except(
        &self,
        name: &[u8],
        extras: &dyn SortedNames,
        scan: &mut Option<MergedIter<RefRecord>>,
        skip: Option<&[u8]>,
    ) -> Result<()> {
        let conflict = |existing: &[u8], in_transaction: bool| {
            let msg = if in_transaction {
                format!(
                    "cannot process '{}' and '{}' at the same time",
                    show(name),
                    show(existing)
                )
            } else {
                format!(
                    "'{}' exists; cannot create '{}'",
                    show(existing),
                    show(name)
                )
            };
            Error::refused(
                Refusal::DirectoryConflict {
                    name: name.to_vec(),
                    existing: existing.to_vec(),
                    in_transaction,
                },
                msg,
            )
        };
        for (i, _) in name.iter().enumerate().filter(|(_, &c)| c == b'/') {
            let dir = &name[..i];
            if skip != Some(dir) && self.raw_ref(dir)?.is_some() {
                return Err(conflict(dir, false));
            }
            // `extras` is sorted: binary searches keep big transactions linear.
            if extras.contains(dir) {
                return Err(conflict(dir, true));
            }
        }
        let mut dir = name.to_vec();
        dir.push(b'/');
        // Bounded: stops at the first key outside `name/`, tombstone or not.
        let it = match scan {
            Some(it) => {
                it.seek(&dir)?;
                it
            }
            None => scan.insert(self.merged.seek_ref(&dir)?),
        };
        // In a worktree the common stack's per-worktree refs are the main worktree's, which
        // git's merged iterator leaves out; the worktree's own stack counts whole.
        let shared_only = self.worktree.is_some();
        let mut found = first_under(it, &dir, |r| {
            skip != Some(&r.refname[..])
                && (!shared_only
                    || matches!(parse_worktree_ref(&r.refname), WorktreeRef::Shared(_)))
        })?;
        if let Some(wt) = self.worktree {
            let own = first_under(&mut wt.own.seek_ref(&dir)?, &dir, |r| {
                skip != Some(&r.refname[..])
            })?;
            // The merged iterator would meet the smaller name first.
            found = match (found, own) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if let Some(existing) = found {
            return Err(conflict(&existing, false));
        }
        let first_below = extras.first_at_or_after(&dir);
        if first_below < extras.len() && extras.name(first_below).starts_with(&dir) {
            return Err(conflict(extras.name(first_below), true));
        }
        Ok(())
    }
}

/// The first live ref under `dir` (which ends in `/`) that `counts`; stops at the first key
/// outside `dir`, tombstone or not.
fn first_under(
    it: &mut MergedIter<RefRecord>,
    dir: &[u8],
    counts: impl Fn(&RefRecord) -> bool,
) -> Result<Option<Vec<u8>>> {
    while let Some(r) = it.next_record()? {
        if !r.refname.starts_with(dir) {
            break;
        }
        if !r.is_deletion() && counts(r) {
            return Ok(Some(r.refname.clone()));
        }
    }
    Ok(None)
}

/// The live refs of a ref database in name order, root refs such as `HEAD` included (all of
/// them, or those under a prefix). [`LiveRefs::next_record`] lends each record without copying;
/// the [`Iterator`] implementation clones them.
///
/// ```
/// # use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};
/// # use reftable::{Signature, TzOffset};
/// # use reftable::ObjectId;
/// # let dir = tempfile::tempdir().unwrap();
/// # let mut db = RefDb::open(dir.path(), RefDbOptions::default()).unwrap();
/// # let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// # let u = [RefUpdate::create("refs/heads/a", id), RefUpdate::create("refs/tags/v1", id)];
/// # db.transaction(&u, &Signature::default(), &AssumeCommits).unwrap();
/// let mut branches = db.refs_with_prefix(b"refs/heads/").unwrap();
/// while let Some(r) = branches.next_record().unwrap() {
///     assert!(r.refname.starts_with(b"refs/heads/"));
/// }
/// ```
#[derive(Debug)]
pub struct LiveRefs {
    it: MergedIter<RefRecord>,
    prefix: Vec<u8>,
    done: bool,
}

impl LiveRefs {
    /// The live refs of `merged` whose names start with `prefix` (`b""` for all), for
    /// readers that hold a merged view rather than a [`RefDb`] (a
    /// [`StackReader`](crate::StackReader), say).
    pub fn with_prefix(merged: &MergedTable, prefix: &[u8]) -> Result<LiveRefs> {
        Ok(LiveRefs {
            it: merged.seek_ref(prefix)?,
            prefix: prefix.to_vec(),
            done: false,
        })
    }

    /// The next live ref, borrowed until the next call. Stops at the first key past the
    /// prefix, tombstone or not.
    pub fn next_record(&mut self) -> Result<Option<&RefRecord>> {
        if self.done {
            return Ok(None);
        }
        loop {
            match self.it.next_record()? {
                None => break,
                Some(r) if !r.refname.starts_with(&self.prefix) => break,
                Some(r) if r.is_deletion() => continue,
                Some(_) => return Ok(self.it.last_returned()),
            }
        }
        self.done = true;
        Ok(None)
    }
}

impl Iterator for LiveRefs {
    type Item = Result<RefRecord>;

    fn next(&mut self) -> Option<Result<RefRecord>> {
        self.next_record().map(|r| r.cloned()).transpose()
    }
}

impl RefDb {
    pub(crate) fn view(&self) -> View<'_> {
        View::of(self.stack.merged(), self.stack.options().hash())
    }

    /// The live record of `name` (a value or a symref), without following symrefs.
    pub fn read_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        self.view().raw_ref(name)
    }

    /// The object `name` points at, following symrefs as deep as git does (four symrefs);
    /// `None` when it does not resolve.
    pub fn resolve(&self, name: &[u8]) -> Result<Option<ObjectId>> {
        self.view().resolve_ref(name, true)
    }

    /// Every live ref in name order (root refs such as `HEAD` included).
    pub fn refs(&self) -> Result<LiveRefs> {
        self.refs_with_prefix(b"")
    }

    /// The live refs whose names start with `prefix`, in name order. Stops at the first key
    /// without the prefix, tombstone or not.
    pub fn refs_with_prefix(&self, prefix: &[u8]) -> Result<LiveRefs> {
        LiveRefs::with_prefix(self.stack.merged(), prefix)
    }

    /// Check that `name` could be created: no existing ref is a directory prefix of it and
    /// none lives below `name/` (git's D/F check). Bounded by the refs and tombstones under
    /// `name/`, not by the stack's size. The error's [`Refusal`] names the ref in the way.
    pub fn check_name_available(&self, name: &[u8]) -> Result<()> {
        self.view().check_available(name, &NoNames, &mut None)
    }
}
