//! A ref database with git's semantics on top of a [`Stack`]: transactions of ref updates
//! (old-value checks, symref dereferencing, D/F conflict and name checks) prepared and
//! committed in two phases, reflogs as git's reftable backend writes them, reflog expiry,
//! and pack-refs.
//!
//! It follows git 2.47's `refs/reftable-backend.c` and the generic ref layer in `refs.c`
//! (with the rules git changed since where an option names them:
//! [`RefDbOptions::protect_dangling_symrefs`], [`RefDbOptions::check_log_only_old_values`]),
//! so that the same operations on git and on
//! this crate give the same tables.
//!
//! - what a transaction is made of: [`RefUpdate`], [`NewValue`], [`Expected`];
//! - what the caller tells transactions about objects: [`ObjectLookup`];
//! - reading refs: [`LiveRefs`];
//! - [`transaction`]: prepare and commit ([`PreparedTransaction`]);
//! - reflogs (lent as [`crate::merged::RefLog`], their names as [`ReflogNames`]), expiry
//!   ([`RefDb::expire_reflog`]) and pack-refs;
//! - renaming and copying a ref with its reflog ([`RefDb::rename_ref`], [`RefDb::copy_ref`]);
//! - [`migrate`]: refs and reflogs of git's files backend ([`FilesRefs::read`]) into a stack
//!   ([`RefDb::import`]) and back ([`RefDb::export_files`]);
//! - [`worktree`]: a linked worktree's refs over its own stack and the common one
//!   ([`WorktreeRefDb`]).

use std::path::Path;

use crate::error::Result;
use crate::stack::{Stack, StackOptions};

mod files;
pub mod migrate;
mod objects;
mod read;
mod reflog;
mod rename;
mod select;
pub mod transaction;
mod update;
pub mod worktree;

pub use migrate::FilesRefs;
pub use objects::{AssumeCommits, LookupError, ObjectKind, ObjectLookup};
pub use read::LiveRefs;
pub use reflog::{normalize_message, Expired, ReflogNames};
pub use select::{WorktreeReflogNames, WorktreeRefs};
pub use transaction::PreparedTransaction;
pub use update::{Expected, NewValue, RefUpdate};
pub use worktree::{PreparedWorktreeTransaction, WorktreeRefDb, WorktreeStack};

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

/// Options of a ref database. New options may come in a minor release: build them from the
/// defaults with the method of each field.
///
/// ```
/// use reftable::refdb::{LogRefs, RefDbOptions};
///
/// let opts = RefDbOptions::default().log_refs(LogRefs::Always).protect_dangling_symrefs(false);
/// assert_eq!(opts.log_refs, LogRefs::Always);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefDbOptions {
    /// The stack's options.
    pub stack: StackOptions,
    /// `core.logAllRefUpdates`.
    pub log_refs: LogRefs,
    /// Refuse an update that does not dereference (`no_deref`) and expects no ref, of a ref
    /// that is a dangling symref, as git does since 2.52 ("dangling symref already exists");
    /// git 2.45 to 2.51 overwrite the symref. On by default.
    pub protect_dangling_symrefs: bool,
    /// Check the expected old value of the log-only update a transaction adds for `HEAD`
    /// when it updates the branch `HEAD` points to, as git before 2.51.1 does: an update
    /// whose old value is a symref target expects `HEAD` to resolve to nothing, so it is
    /// refused ("reference already exists"). Since 046c67325c ("refs: stop unsetting
    /// REF_HAVE_OLD for log-only updates", 2.51.1) git checks no old value of a log-only
    /// update. Off by default.
    pub check_log_only_old_values: bool,
}

setters!(RefDbOptions {
    stack: StackOptions,
    log_refs: LogRefs,
    protect_dangling_symrefs: bool,
    check_log_only_old_values: bool,
});

impl Default for RefDbOptions {
    fn default() -> Self {
        RefDbOptions {
            stack: StackOptions::default(),
            log_refs: LogRefs::default(),
            protect_dangling_symrefs: true,
            check_log_only_old_values: false,
        }
    }
}

/// A ref database in a reftable stack directory.
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
/// db.transaction(&[RefUpdate::create("refs/heads/main", id).message("first")], &me, &AssumeCommits).unwrap();
/// assert_eq!(db.resolve(b"refs/heads/main").unwrap(), Some(id));
/// let first = db.reflog(b"refs/heads/main").unwrap().next().unwrap().unwrap();
/// assert_eq!(first.update().unwrap().message, b"first\n");
/// ```
#[derive(Debug)]
pub struct RefDb {
    stack: Stack,
    opts: RefDbOptions,
}

pub(crate) fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

impl RefDb {
    /// Open the ref database whose stack lives in the directory `dir` (`.git/reftable`).
    ///
    /// Errors: [`ErrorKind::NotExist`](crate::ErrorKind::NotExist) when `dir` is missing
    /// ([`RefDb::open_or_create`] creates it).
    pub fn open(dir: impl AsRef<Path>, opts: RefDbOptions) -> Result<RefDb> {
        Ok(RefDb {
            stack: Stack::open(dir, opts.stack)?,
            opts,
        })
    }

    /// Open the ref database in `dir`, creating the directory when missing
    /// ([`Stack::open_or_create`]).
    pub fn open_or_create(dir: impl AsRef<Path>, opts: RefDbOptions) -> Result<RefDb> {
        Ok(RefDb {
            stack: Stack::open_or_create(dir, opts.stack)?,
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
}
