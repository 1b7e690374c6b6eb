//! A ref database with git's semantics on top of a [`Stack`]: transactions of ref updates
//! (with old-value checks, symref dereferencing, D/F conflict and name checks), reflogs as
//! git's reftable backend writes them, reflog expiry, and pack-refs.
//!
//! It follows git 2.47's `refs/reftable-backend.c` and the generic ref layer in `refs.c`, so
//! that the same operations on git and on this crate give the same tables.

use std::path::Path;

use crate::codec::record::{LogRecord, LogUpdate, LogValue, Record, RefRecord, RefValue};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::ObjectId;
use crate::refname::{autocreates_reflog, is_pseudoref, is_safe_refname, is_valid_refname};
use crate::stack::{Stack, StackOptions};

/// How many refs are read while resolving a name (git's `SYMREF_MAXDEPTH`, counted as git's
/// `refs_resolve_ref_unsafe` counts it: one read per step, five in all), so a chain of at
/// most four symrefs ending in a direct ref resolves.
const SYMREF_MAX_DEPTH: usize = 5;

/// `core.logAllRefUpdates`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogRefs {
    /// `false`: only refs whose reflog already exists get entries.
    None,
    /// `true` (git's default in non-bare repositories): also branches, remote-tracking refs,
    /// notes and `HEAD`.
    #[default]
    Normal,
    /// `always`: every ref.
    Always,
}

/// What the object database says about an object id. The crate has no object database:
/// the caller answers through [`ObjectLookup`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// No such object.
    Missing,
    /// A commit.
    Commit,
    /// An annotated tag that peels to `peeled` (the final non-tag object).
    Tag {
        /// The fully peeled object.
        peeled: ObjectId,
    },
    /// A tree or blob.
    Other,
}

/// Answers object questions for transactions: existence (git refuses to point refs at
/// missing objects and branches at non-commits) and peeling (annotated tags are stored with
/// their peeled value).
pub trait ObjectLookup {
    /// What `id` is.
    fn lookup(&self, id: &ObjectId) -> ObjectKind;
}

/// An [`ObjectLookup`] that takes every object for an existing commit: no verification and
/// no peeled values.
#[derive(Clone, Copy, Debug, Default)]
pub struct AssumeCommits;

impl ObjectLookup for AssumeCommits {
    fn lookup(&self, _id: &ObjectId) -> ObjectKind {
        ObjectKind::Commit
    }
}

/// The committer identity and time written into reflog entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Committer {
    /// Name.
    pub name: Vec<u8>,
    /// Email, without `<>`.
    pub email: Vec<u8>,
    /// Seconds since the epoch.
    pub time: u64,
    /// Time zone as git stores it: `±HHMM` read as a decimal number (`-0700` → -700).
    pub tz_offset: i16,
}

/// A value a ref can have.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RefTarget {
    /// An object id; the null id means "no ref" (delete, or must not exist).
    Oid(ObjectId),
    /// A symbolic ref to the named ref.
    Symref(Vec<u8>),
}

/// One update of a transaction, in the terms of `git update-ref --stdin`.
///
/// ```
/// use reftable::refdb::{RefTarget, RefUpdate};
/// use reftable::ObjectId;
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// let u = RefUpdate::create("refs/heads/topic", id).message("branch: Created from main");
/// assert_eq!(u.new, Some(RefTarget::Oid(id)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RefUpdate {
    /// The ref to update.
    pub refname: Vec<u8>,
    /// The new value; `None` only verifies.
    pub new: Option<RefTarget>,
    /// The expected old value; `None` checks nothing; `Oid(null)` expects no ref.
    pub old: Option<RefTarget>,
    /// Update a symref itself rather than the ref it points to.
    pub no_deref: bool,
    /// Write a reflog entry even when `core.logAllRefUpdates` would not.
    pub create_reflog: bool,
    /// The reflog message (normalized as git does: whitespace runs become one space).
    pub message: Vec<u8>,
}

impl RefUpdate {
    fn new(refname: &[u8], new: Option<RefTarget>, old: Option<RefTarget>) -> RefUpdate {
        RefUpdate {
            refname: refname.to_vec(),
            new,
            old,
            no_deref: false,
            create_reflog: false,
            message: Vec::new(),
        }
    }

    /// `update <ref> <new> [<old>]`.
    pub fn update(refname: impl AsRef<[u8]>, new: ObjectId, old: Option<ObjectId>) -> RefUpdate {
        RefUpdate::new(
            refname.as_ref(),
            Some(RefTarget::Oid(new)),
            old.map(RefTarget::Oid),
        )
    }

    /// `create <ref> <new>`: fails if the ref exists.
    pub fn create(refname: impl AsRef<[u8]>, new: ObjectId) -> RefUpdate {
        let null = ObjectId::null(new.hash());
        RefUpdate::new(
            refname.as_ref(),
            Some(RefTarget::Oid(new)),
            Some(RefTarget::Oid(null)),
        )
    }

    /// `delete <ref> [<old>]`.
    pub fn delete(
        refname: impl AsRef<[u8]>,
        old: Option<ObjectId>,
        hash: crate::HashId,
    ) -> RefUpdate {
        RefUpdate::new(
            refname.as_ref(),
            Some(RefTarget::Oid(ObjectId::null(hash))),
            old.map(RefTarget::Oid),
        )
    }

    /// `verify <ref> [<old>]`: without `old`, the ref must not exist.
    pub fn verify(
        refname: impl AsRef<[u8]>,
        old: Option<ObjectId>,
        hash: crate::HashId,
    ) -> RefUpdate {
        let old = old.unwrap_or(ObjectId::null(hash));
        RefUpdate::new(refname.as_ref(), None, Some(RefTarget::Oid(old)))
    }

    /// `symref-create <ref> <target>`: fails if the ref exists.
    pub fn symref_create(
        refname: impl AsRef<[u8]>,
        target: impl AsRef<[u8]>,
        hash: crate::HashId,
    ) -> RefUpdate {
        RefUpdate::new(
            refname.as_ref(),
            Some(RefTarget::Symref(target.as_ref().to_vec())),
            Some(RefTarget::Oid(ObjectId::null(hash))),
        )
    }

    /// `symref-update <ref> <target> [ref <old-target> | oid <old-oid>]`.
    pub fn symref_update(
        refname: impl AsRef<[u8]>,
        target: impl AsRef<[u8]>,
        old: Option<RefTarget>,
    ) -> RefUpdate {
        RefUpdate::new(
            refname.as_ref(),
            Some(RefTarget::Symref(target.as_ref().to_vec())),
            old,
        )
    }

    /// `symref-delete <ref> [<old-target>]` (always without dereferencing).
    pub fn symref_delete(
        refname: impl AsRef<[u8]>,
        old_target: Option<&[u8]>,
        hash: crate::HashId,
    ) -> RefUpdate {
        let mut u = RefUpdate::new(
            refname.as_ref(),
            Some(RefTarget::Oid(ObjectId::null(hash))),
            old_target.map(|t| RefTarget::Symref(t.to_vec())),
        );
        u.no_deref = true;
        u
    }

    /// `symref-verify <ref> [<old-target>]`: without a target, the ref must not exist.
    pub fn symref_verify(
        refname: impl AsRef<[u8]>,
        old_target: Option<&[u8]>,
        hash: crate::HashId,
    ) -> RefUpdate {
        let old = match old_target {
            Some(t) => RefTarget::Symref(t.to_vec()),
            None => RefTarget::Oid(ObjectId::null(hash)),
        };
        let mut u = RefUpdate::new(refname.as_ref(), None, Some(old));
        u.no_deref = true;
        u
    }

    /// The `git update-ref --stdin` line(s) for this update (without the message, which
    /// `update-ref` takes from `-m`): `option no-deref` first when set. `None` for the one
    /// combination update-ref cannot express: a new object id with an old symref target.
    ///
    /// ```
    /// use reftable::refdb::RefUpdate;
    /// use reftable::{HashId, ObjectId};
    /// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// assert_eq!(RefUpdate::create("refs/heads/x", id).update_ref_command().unwrap(),
    ///            format!("create refs/heads/x {id}\n"));
    /// assert_eq!(RefUpdate::symref_delete("HEAD", Some(b"refs/heads/main"), HashId::Sha1)
    ///                .update_ref_command().unwrap(),
    ///            "option no-deref\nsymref-delete HEAD refs/heads/main\n");
    /// ```
    pub fn update_ref_command(&self) -> Option<String> {
        let name = show(&self.refname);
        let mut out = String::new();
        if self.no_deref {
            out.push_str("option no-deref\n");
        }
        let line = match (&self.new, &self.old) {
            (Some(RefTarget::Oid(n)), Some(RefTarget::Oid(o))) if !n.is_null() && o.is_null() => {
                format!("create {name} {n}")
            }
            (Some(RefTarget::Oid(n)), Some(RefTarget::Oid(o))) if !n.is_null() => {
                format!("update {name} {n} {o}")
            }
            (Some(RefTarget::Oid(n)), None) if !n.is_null() => format!("update {name} {n}"),
            // An object id with an old symref target has no update-ref syntax.
            (Some(RefTarget::Oid(n)), Some(RefTarget::Symref(_))) if !n.is_null() => return None,
            (Some(RefTarget::Oid(_)), Some(RefTarget::Symref(t))) => {
                format!("symref-delete {name} {}", show(t))
            }
            (Some(RefTarget::Oid(_)), Some(RefTarget::Oid(o))) => format!("delete {name} {o}"),
            (Some(RefTarget::Oid(_)), None) => format!("delete {name}"),
            (Some(RefTarget::Symref(t)), Some(RefTarget::Oid(o))) if o.is_null() => {
                format!("symref-create {name} {}", show(t))
            }
            (Some(RefTarget::Symref(t)), Some(RefTarget::Oid(o))) => {
                format!("symref-update {name} {} oid {o}", show(t))
            }
            (Some(RefTarget::Symref(t)), Some(RefTarget::Symref(o))) => {
                format!("symref-update {name} {} ref {}", show(t), show(o))
            }
            (Some(RefTarget::Symref(t)), None) => format!("symref-update {name} {}", show(t)),
            (None, Some(RefTarget::Symref(t))) => format!("symref-verify {name} {}", show(t)),
            (None, Some(RefTarget::Oid(o))) => format!("verify {name} {o}"),
            (None, None) => format!("verify {name}"),
        };
        out.push_str(&line);
        out.push('\n');
        Some(out)
    }

    /// Set the reflog message.
    pub fn message(mut self, msg: impl AsRef<[u8]>) -> RefUpdate {
        self.message = msg.as_ref().to_vec();
        self
    }

    /// Update a symref itself (`option no-deref`).
    pub fn no_deref(mut self) -> RefUpdate {
        self.no_deref = true;
        self
    }

    /// Force a reflog entry (`--create-reflog`).
    pub fn create_reflog(mut self) -> RefUpdate {
        self.create_reflog = true;
        self
    }
}

/// Options of a ref database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefDbOptions {
    /// The stack's options.
    pub stack: StackOptions,
    /// `core.logAllRefUpdates`.
    pub log_refs: LogRefs,
    /// Refuse an update that does not dereference (`no_deref`) and expects no ref, of a ref
    /// that is a dangling symref, as git does since 2.52 ("dangling symref already exists");
    /// git 2.45 to 2.51 overwrite the symref. On by default.
    pub protect_dangling_symrefs: bool,
}

impl Default for RefDbOptions {
    fn default() -> Self {
        RefDbOptions {
            stack: StackOptions::default(),
            log_refs: LogRefs::default(),
            protect_dangling_symrefs: true,
        }
    }
}

/// A ref database in a reftable stack directory.
///
/// ```
/// use reftable::refdb::{AssumeCommits, Committer, RefDb, RefDbOptions, RefUpdate};
/// use reftable::ObjectId;
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut db = RefDb::open(dir.path(), RefDbOptions::default()).unwrap();
/// let me = Committer { name: b"C O Mitter".to_vec(), email: b"c@example.com".to_vec(), time: 1700000000, tz_offset: 100 };
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// db.transaction(&[RefUpdate::create("refs/heads/main", id).message("first")], &me, &AssumeCommits).unwrap();
/// assert_eq!(db.resolve(b"refs/heads/main").unwrap(), Some(id));
/// assert_eq!(db.reflog(b"refs/heads/main").unwrap()[0].update().unwrap().message, b"first\n");
/// ```
#[derive(Debug)]
pub struct RefDb {
    stack: Stack,
    opts: RefDbOptions,
}

/// One update being prepared: git's `struct ref_update` with its flags spelled out.
#[derive(Clone, Debug)]
struct Work {
    refname: Vec<u8>,
    new: Option<RefTarget>,
    old: Option<RefTarget>,
    no_deref: bool,
    log_only: bool,
    via_head: bool,
    create_reflog: bool,
    message: Vec<u8>,
    /// The ref is currently a symref.
    is_symref: bool,
}

impl Work {
    fn new_is_null(&self) -> bool {
        matches!(&self.new, Some(RefTarget::Oid(id)) if id.is_null())
    }

    fn expects_existing(&self) -> bool {
        match &self.old {
            Some(RefTarget::Oid(id)) => !id.is_null(),
            Some(RefTarget::Symref(_)) => true,
            None => false,
        }
    }
}

fn err(kind: ErrorKind, msg: String) -> Error {
    Error::new(kind, msg)
}

fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// git's reflog message normalization: runs of whitespace (space, tab, CR, LF) become one
/// space, leading and trailing whitespace is dropped.
pub fn normalize_message(msg: &[u8]) -> Vec<u8> {
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let mut out = Vec::with_capacity(msg.len());
    let mut was_space = true;
    for &c in msg {
        if c == 0 {
            break;
        }
        if was_space && is_space(c) {
            continue;
        }
        was_space = is_space(c);
        out.push(if was_space { b' ' } else { c });
    }
    while out.last() == Some(&b' ') {
        out.pop();
    }
    out
}

/// Read-only queries shared by transactions and callers.
impl Stack {
    fn raw_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        self.merged().read_ref(name)
    }

    /// Whether `name` has a reflog: a live log record (an entry or an existence marker).
    fn has_reflog(&self, name: &[u8]) -> Result<bool> {
        let mut it = self.merged().seek_log(name)?;
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
    fn should_write_log(&self, log_refs: LogRefs, name: &[u8]) -> Result<bool> {
        match log_refs {
            LogRefs::Always => Ok(true),
            LogRefs::Normal if autocreates_reflog(name) => Ok(true),
            _ => self.has_reflog(name),
        }
    }

    /// The live log records of `name` (entries and existence markers), newest first.
    fn live_logs(&self, name: &[u8]) -> Result<Vec<LogRecord>> {
        self.merged().read_log(name)
    }

    /// Follow symrefs from `name`. `Ok(None)`: too deep or a bad target name; a dangling
    /// symref resolves to the null id unless `reading`, where it is `None` too.
    fn resolve_ref(&self, name: &[u8], reading: bool) -> Result<Option<ObjectId>> {
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
                        Some(ObjectId::null(self.options().hash()))
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
    /// transaction may be a directory prefix of `name`, or live below `name/`.
    fn check_available(&self, name: &[u8], extras: &[Vec<u8>]) -> Result<()> {
        for (i, _) in name.iter().enumerate().filter(|(_, &c)| c == b'/') {
            let dir = &name[..i];
            if self.raw_ref(dir)?.is_some() {
                return Err(err(
                    ErrorKind::NameConflict,
                    format!("'{}' exists; cannot create '{}'", show(dir), show(name)),
                ));
            }
            // `extras` is sorted: binary searches keep big transactions linear.
            if extras.binary_search_by(|e| e.as_slice().cmp(dir)).is_ok() {
                return Err(err(
                    ErrorKind::NameConflict,
                    format!(
                        "cannot process '{}' and '{}' at the same time",
                        show(name),
                        show(dir)
                    ),
                ));
            }
        }
        let mut dir = name.to_vec();
        dir.push(b'/');
        // Bounded: stops at the first key outside `name/`, tombstone or not.
        let mut it = self.merged().seek_ref(&dir)?;
        while let Some(r) = it.next_record()? {
            if !r.refname.starts_with(&dir) {
                break;
            }
            if !r.is_deletion() {
                return Err(err(
                    ErrorKind::NameConflict,
                    format!(
                        "'{}' exists; cannot create '{}'",
                        show(&r.refname),
                        show(name)
                    ),
                ));
            }
        }
        let first_below = extras.partition_point(|e| e.as_slice() < dir.as_slice());
        if let Some(e) = extras.get(first_below).filter(|e| e.starts_with(&dir)) {
            return Err(err(
                ErrorKind::NameConflict,
                format!(
                    "cannot process '{}' and '{}' at the same time",
                    show(name),
                    show(e)
                ),
            ));
        }
        Ok(())
    }
}

impl RefDb {
    /// Open (or create) the ref database whose stack lives in `dir` (`.git/reftable`).
    pub fn open(dir: impl AsRef<Path>, opts: RefDbOptions) -> Result<RefDb> {
        Ok(RefDb {
            stack: Stack::open(dir, opts.stack)?,
            opts,
        })
    }

    /// The underlying stack.
    pub fn stack(&self) -> &Stack {
        &self.stack
    }

    /// The underlying stack, mutably (for compaction or option changes).
    pub fn stack_mut(&mut self) -> &mut Stack {
        &mut self.stack
    }

    /// The options.
    pub fn options(&self) -> &RefDbOptions {
        &self.opts
    }

    /// Re-read the stack from disk.
    pub fn reload(&mut self) -> Result<()> {
        self.stack.reload()
    }

    /// The live record of `name` (a value or a symref), without following symrefs.
    pub fn read_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        self.stack.raw_ref(name)
    }

    /// The object `name` points at, following symrefs; `None` when it does not resolve.
    pub fn resolve(&self, name: &[u8]) -> Result<Option<ObjectId>> {
        self.stack.resolve_ref(name, true)
    }

    /// Every live ref in name order (root refs such as `HEAD` included).
    pub fn refs(&self) -> Result<Vec<RefRecord>> {
        let mut out = Vec::new();
        let mut it = self.stack.merged().refs()?;
        while let Some(r) = it.next_record()? {
            if !r.is_deletion() {
                out.push(r.clone());
            }
        }
        Ok(out)
    }

    /// The live refs whose names start with `prefix`, in name order. Stops at the first key
    /// without the prefix, tombstone or not.
    pub fn refs_with_prefix(&self, prefix: &[u8]) -> Result<Vec<RefRecord>> {
        let mut out = Vec::new();
        let mut it = self.stack.merged().seek_ref(prefix)?;
        while let Some(r) = it.next_record()? {
            if !r.refname.starts_with(prefix) {
                break;
            }
            if !r.is_deletion() {
                out.push(r.clone());
            }
        }
        Ok(out)
    }

    /// Check that `name` could be created: no existing ref is a directory prefix of it and
    /// none lives below `name/` (git's D/F check). Bounded by the refs and tombstones under
    /// `name/`, not by the stack's size.
    pub fn check_name_available(&self, name: &[u8]) -> Result<()> {
        self.stack.check_available(name, &[])
    }

    /// The reflog of `name` as git shows it: newest first, without tombstones and without
    /// the existence marker.
    pub fn reflog(&self, name: &[u8]) -> Result<Vec<LogRecord>> {
        let mut logs = self.stack.live_logs(name)?;
        logs.retain(|l| !is_existence_marker(l));
        Ok(logs)
    }

    /// Whether `name` has a reflog (entries or an existence marker).
    pub fn reflog_exists(&self, name: &[u8]) -> Result<bool> {
        self.stack.has_reflog(name)
    }

    /// Names with a reflog, in name order (`git reflog list`).
    pub fn reflog_names(&self) -> Result<Vec<Vec<u8>>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        let mut it = self.stack.merged().logs()?;
        while let Some(l) = it.next_record()? {
            if !l.is_deletion() && out.last() != Some(&l.refname) {
                out.push(l.refname.clone());
            }
        }
        Ok(out)
    }

    /// Apply `updates` atomically as one table, with git's checks and reflog rules.
    ///
    /// Errors: [`ErrorKind::Refname`] for invalid names, [`ErrorKind::NameConflict`] for
    /// D/F conflicts and duplicate updates, [`ErrorKind::OldValueMismatch`] when an old
    /// value does not match, [`ErrorKind::InvalidObject`] for missing objects or
    /// non-commits on branches, [`ErrorKind::Lock`] when the stack is locked. Nothing is
    /// written on error.
    pub fn transaction(
        &mut self,
        updates: &[RefUpdate],
        committer: &Committer,
        objects: &dyn ObjectLookup,
    ) -> Result<()> {
        let hash = self.stack.options().hash();
        let null = ObjectId::null(hash);
        for u in updates {
            let needs_format = match &u.new {
                Some(RefTarget::Oid(id)) => !id.is_null(),
                Some(RefTarget::Symref(_)) => true,
                None => false,
            };
            let ok = if needs_format {
                is_valid_refname(&u.refname, true)
            } else {
                is_safe_refname(&u.refname)
            };
            if !ok {
                return Err(err(
                    ErrorKind::Refname,
                    format!(
                        "refusing to update ref with bad name '{}'",
                        show(&u.refname)
                    ),
                ));
            }
            if is_pseudoref(&u.refname) {
                return Err(err(
                    ErrorKind::Refname,
                    format!("refusing to update pseudoref '{}'", show(&u.refname)),
                ));
            }
            for t in [&u.new, &u.old].into_iter().flatten() {
                if let RefTarget::Symref(t) = t {
                    if !is_valid_refname(t, true) {
                        return Err(err(
                            ErrorKind::Refname,
                            format!("invalid symref target '{}'", show(t)),
                        ));
                    }
                }
                if let RefTarget::Oid(id) = t {
                    if id.len() != hash.size() {
                        return Err(Error::api("object id of the wrong hash"));
                    }
                }
            }
        }

        let log_refs = self.opts.log_refs;
        let protect_dangling = self.opts.protect_dangling_symrefs;
        let block_size = self.stack.options().write.block_size;
        let mut add = self.stack.new_addition(true).map_err(|e| {
            if e.kind() == ErrorKind::Lock {
                Error::new(ErrorKind::Lock, format!("cannot lock references: {e}"))
            } else {
                e
            }
        })?;
        let st = add.stack();

        let mut work: Vec<Work> = updates
            .iter()
            .map(|u| Work {
                refname: u.refname.clone(),
                new: u.new.clone(),
                old: u.old.clone(),
                no_deref: u.no_deref,
                log_only: false,
                via_head: false,
                create_reflog: u.create_reflog,
                message: normalize_message(&u.message),
                is_symref: false,
            })
            .collect();
        let mut affected: Vec<Vec<u8>> = work.iter().map(|w| w.refname.clone()).collect();
        affected.sort();
        if let Some(d) = affected.windows(2).find(|w| w[0] == w[1]) {
            return Err(err(
                ErrorKind::NameConflict,
                format!("multiple updates for ref '{}' not allowed", show(&d[0])),
            ));
        }
        let insert = |affected: &mut Vec<Vec<u8>>, name: &[u8]| {
            if let Err(at) = affected.binary_search_by(|x| x.as_slice().cmp(name)) {
                affected.insert(at, name.to_vec());
            }
        };
        let head_target = match st.raw_ref(b"HEAD")? {
            Some(RefRecord {
                value: RefValue::Symref(t),
                ..
            }) => Some(t),
            _ => None,
        };

        // (index into `work`, current value)
        let mut queued: Vec<(usize, ObjectId)> = Vec::new();
        let mut i = 0;
        while i < work.len() {
            let u = work[i].clone();
            if let Some(RefTarget::Oid(id)) = &u.new {
                if !id.is_null() && !u.log_only {
                    match objects.lookup(id) {
                        ObjectKind::Missing => {
                            return Err(err(
                                ErrorKind::InvalidObject,
                                format!(
                                    "trying to write ref '{}' with nonexistent object {id}",
                                    show(&u.refname)
                                ),
                            ))
                        }
                        ObjectKind::Commit => {}
                        _ if u.refname.starts_with(b"refs/heads/") || u.refname == b"HEAD" => {
                            return Err(err(
                                ErrorKind::InvalidObject,
                                format!(
                                    "trying to write non-commit object {id} to branch '{}'",
                                    show(&u.refname)
                                ),
                            ))
                        }
                        _ => {}
                    }
                }
            }
            // Updating the branch HEAD points to also logs to HEAD.
            if head_target.as_deref() == Some(u.refname.as_slice())
                && !u.log_only
                && !u.via_head
                && !defect!(DroppedReflogEntry)
            {
                if affected.iter().any(|a| a == b"HEAD") {
                    return Err(err(
                        ErrorKind::NameConflict,
                        format!(
                            "multiple updates for 'HEAD' (including one via its referent '{}') are not allowed",
                            show(&u.refname)
                        ),
                    ));
                }
                let as_oid = |t: &Option<RefTarget>| {
                    t.as_ref().map(|t| match t {
                        RefTarget::Oid(id) => RefTarget::Oid(*id),
                        RefTarget::Symref(_) => RefTarget::Oid(null),
                    })
                };
                work.push(Work {
                    refname: b"HEAD".to_vec(),
                    new: as_oid(&u.new),
                    old: as_oid(&u.old),
                    no_deref: true,
                    log_only: true,
                    via_head: u.via_head,
                    create_reflog: u.create_reflog,
                    message: u.message.clone(),
                    is_symref: false,
                });
                insert(&mut affected, b"HEAD");
            }

            let current = st.raw_ref(&u.refname)?;
            let Some(current) = current else {
                if u.expects_existing() {
                    return Err(err(
                        ErrorKind::OldValueMismatch,
                        format!(
                            "cannot lock ref '{}': unable to resolve reference '{}'",
                            show(&u.refname),
                            show(&u.refname)
                        ),
                    ));
                }
                st.check_available(&u.refname, &affected)?;
                if u.new.is_some() && !u.new_is_null() {
                    queued.push((i, null));
                }
                i += 1;
                continue;
            };
            let mut cur_oid = current.value_id().copied().unwrap_or(null);
            let mut referent = Vec::new();
            if let RefValue::Symref(t) = &current.value {
                work[i].is_symref = true;
                referent = t.clone();
                let resolved = st.resolve_ref(&u.refname, false)?;
                cur_oid = resolved.unwrap_or(null);
                if u.no_deref {
                    if u.old.is_some() && resolved.is_none() {
                        return Err(err(
                            ErrorKind::OldValueMismatch,
                            format!(
                                "cannot lock ref '{}': error reading reference",
                                show(&u.refname)
                            ),
                        ));
                    }
                } else {
                    work.push(Work {
                        refname: t.clone(),
                        new: u.new.clone(),
                        old: u.old.clone(),
                        no_deref: u.no_deref,
                        log_only: u.log_only,
                        via_head: u.via_head || u.refname == b"HEAD",
                        create_reflog: u.create_reflog,
                        message: u.message.clone(),
                        is_symref: false,
                    });
                    let w = &mut work[i];
                    w.log_only = true;
                    w.no_deref = true;
                    // The old value is checked on the referent; an old *target* stays.
                    if matches!(w.old, Some(RefTarget::Oid(_))) {
                        w.old = None;
                    }
                    if affected.iter().any(|a| a == t) {
                        return Err(err(
                            ErrorKind::NameConflict,
                            format!(
                                "multiple updates for '{}' (including one via symref '{}') are not allowed",
                                show(t),
                                show(&u.refname)
                            ),
                        ));
                    }
                    insert(&mut affected, t);
                }
            }
            let w = &work[i];
            match &w.old {
                Some(RefTarget::Symref(expected)) => {
                    if !w.is_symref {
                        return Err(err(
                            ErrorKind::OldValueMismatch,
                            format!(
                                "cannot lock ref '{}': expected symref with target '{}': but is a regular ref",
                                show(&w.refname),
                                show(expected)
                            ),
                        ));
                    }
                    if &referent != expected {
                        return Err(err(
                            ErrorKind::OldValueMismatch,
                            format!(
                                "cannot lock ref '{}': is at '{}' but expected '{}'",
                                show(&w.refname),
                                show(&referent),
                                show(expected)
                            ),
                        ));
                    }
                }
                Some(RefTarget::Oid(expected))
                    if protect_dangling
                        && !w.log_only
                        && w.no_deref
                        && w.is_symref
                        && expected.is_null()
                        && cur_oid.is_null() =>
                {
                    return Err(err(
                        ErrorKind::OldValueMismatch,
                        format!(
                            "cannot lock ref '{}': dangling symref already exists",
                            show(&w.refname)
                        ),
                    ));
                }
                Some(RefTarget::Oid(expected)) if *expected != cur_oid => {
                    let msg = if expected.is_null() {
                        "reference already exists".to_string()
                    } else if cur_oid.is_null() {
                        format!("reference is missing but expected {expected}")
                    } else {
                        format!("is at {cur_oid} but expected {expected}")
                    };
                    return Err(err(
                        ErrorKind::OldValueMismatch,
                        format!("cannot lock ref '{}': {msg}", show(&w.refname)),
                    ));
                }
                _ => {}
            }
            // A symref update carries no object id: git compares the null id with the
            // current value, so it always writes unless the ref resolves to nothing.
            let changes = match &w.new {
                Some(RefTarget::Oid(id)) => *id != cur_oid,
                Some(RefTarget::Symref(_)) => !cur_oid.is_null(),
                None => false,
            };
            if w.is_symref || w.log_only || changes {
                queued.push((i, cur_oid));
            }
            i += 1;
        }

        if queued.is_empty() {
            return Ok(());
        }
        queued.sort_by(|a, b| work[a.0].refname.cmp(&work[b.0].refname));
        let mut ts = add.next_update_index();
        if defect!(WrongUpdateIndex) {
            ts += 1;
        }
        let max_msg = (if block_size == 0 { 4096 } else { block_size } / 2) as usize;
        let mut refs: Vec<RefRecord> = Vec::new();
        let mut logs: Vec<LogRecord> = Vec::new();
        for &(i, current) in &queued {
            let u = &work[i];
            if u.new.is_some() && !u.is_symref && u.new_is_null() {
                // Deleting a ref deletes its reflog, entry by entry.
                for l in st.live_logs(&u.refname)? {
                    logs.push(LogRecord {
                        refname: u.refname.clone(),
                        update_index: l.update_index,
                        value: LogValue::Deletion,
                    });
                }
            } else if u.new.is_some()
                && (u.create_reflog || st.should_write_log(log_refs, &u.refname)?)
            {
                let new_id = match &u.new {
                    Some(RefTarget::Oid(id)) => Some(*id),
                    Some(RefTarget::Symref(t)) => st.resolve_ref(t, true)?,
                    None => None,
                };
                if let Some(new_id) = new_id {
                    let mut message = u.message[..u.message.len().min(max_msg)].to_vec();
                    if message.last() != Some(&b'\n') {
                        message.push(b'\n');
                    }
                    logs.push(LogRecord {
                        refname: u.refname.clone(),
                        update_index: ts,
                        value: LogValue::Update(LogUpdate {
                            old_id: current,
                            new_id,
                            name: committer.name.clone(),
                            email: committer.email.clone(),
                            time: committer.time,
                            tz_offset: if defect!(LostTzSign) {
                                committer.tz_offset.abs()
                            } else {
                                committer.tz_offset
                            },
                            message,
                        }),
                    });
                }
            }
            if u.log_only {
                continue;
            }
            let value = match &u.new {
                Some(RefTarget::Symref(t)) => RefValue::Symref(t.clone()),
                Some(RefTarget::Oid(id)) if id.is_null() => RefValue::Deletion,
                Some(RefTarget::Oid(id)) => match objects.lookup(id) {
                    ObjectKind::Tag { peeled } => RefValue::Peeled {
                        object: *id,
                        peeled,
                    },
                    _ => RefValue::Object(*id),
                },
                None => continue,
            };
            refs.push(RefRecord::new(u.refname.clone(), ts, value));
        }
        logs.sort_by(|a, b| {
            a.refname
                .cmp(&b.refname)
                .then(b.update_index.cmp(&a.update_index))
        });
        add.add_table(|w, _| {
            w.set_limits(ts, ts)?;
            for r in &refs {
                w.add_ref(r)?;
            }
            for l in &logs {
                w.add_log(l)?;
            }
            Ok(())
        })?;
        add.commit()
    }

    /// Write a reflog existence marker for `name` unless it has a reflog already
    /// (`git update-ref --create-reflog`, `git reflog` with an empty log).
    pub fn create_reflog(&mut self, name: &[u8]) -> Result<()> {
        self.stack.reload()?;
        if self.stack.has_reflog(name)? {
            return Ok(());
        }
        let name = name.to_vec();
        let hash = self.stack.options().hash();
        self.stack.add(|w, ts| {
            w.set_limits(ts, ts)?;
            w.add_log_verbatim(&existence_marker(&name, ts, hash))
        })
    }

    /// Delete the reflog of `name`: a tombstone for each live entry.
    pub fn delete_reflog(&mut self, name: &[u8]) -> Result<()> {
        self.stack.reload()?;
        let logs = self.stack.live_logs(name)?;
        self.stack.add(|w, ts| {
            w.set_limits(ts, ts)?;
            for l in &logs {
                w.add_log(&LogRecord {
                    refname: l.refname.clone(),
                    update_index: l.update_index,
                    value: LogValue::Deletion,
                })?;
            }
            Ok(())
        })
    }

    /// Expire reflog entries of `name` (`git reflog expire` / `git reflog delete`):
    /// entries for which `prune` says yes become tombstones, the others are rewritten (with
    /// `rewrite`, each entry's old id becomes the new id of the previous kept entry), and an
    /// existence marker is written when none survive. With `dry_run` nothing is written.
    /// `prune` sees the entries oldest first, as git's expiry callbacks do.
    pub fn expire_reflog(
        &mut self,
        name: &[u8],
        prune: &mut dyn FnMut(&LogRecord) -> bool,
        rewrite: bool,
        dry_run: bool,
    ) -> Result<()> {
        self.stack.reload()?;
        let hash = self.stack.options().hash();
        let mut logs: Vec<LogRecord> = self
            .stack
            .live_logs(name)?
            .into_iter()
            .filter(|l| !is_existence_marker(l))
            .collect();
        let mut add = self.stack.new_addition(false)?;
        let mut last_new: Option<ObjectId> = None;
        for l in logs.iter_mut().rev() {
            if prune(l) {
                l.value = LogValue::Deletion;
            } else if let LogValue::Update(u) = &mut l.value {
                if rewrite {
                    if let Some(prev) = last_new {
                        u.old_id = prev;
                    }
                }
                last_new = Some(u.new_id);
            }
        }
        let live = logs.iter().any(|l| !l.is_deletion());
        let name = name.to_vec();
        add.add_table(|w, ts| {
            w.set_limits(ts, ts)?;
            if !live {
                w.add_log_verbatim(&existence_marker(&name, ts, hash))?;
            }
            for l in &logs {
                w.add_log(l)?;
            }
            Ok(())
        })?;
        if dry_run {
            return Ok(());
        }
        add.commit()
    }

    /// `git pack-refs`: compact the whole stack into one table (dropping tombstones), then
    /// remove stale tables. With `auto`, compact only what the geometric rule asks for.
    pub fn pack_refs(&mut self, auto: bool) -> Result<()> {
        if auto {
            self.stack.auto_compact()?;
        } else {
            self.stack.compact_all(None)?;
        }
        self.stack.clean()
    }
}

/// A reflog existence marker: null old and new ids, empty strings, time 0.
fn existence_marker(name: &[u8], ts: u64, hash: crate::HashId) -> LogRecord {
    LogRecord {
        refname: name.to_vec(),
        update_index: ts,
        value: LogValue::Update(LogUpdate {
            old_id: ObjectId::null(hash),
            new_id: ObjectId::null(hash),
            ..Default::default()
        }),
    }
}

/// Whether a log record is a reflog existence marker (both ids null).
pub fn is_existence_marker(l: &LogRecord) -> bool {
    matches!(&l.value, LogValue::Update(u) if u.old_id.is_null() && u.new_id.is_null())
}
