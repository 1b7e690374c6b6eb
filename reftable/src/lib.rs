//! # reftable
//!
//! A reader and writer for git's [reftable] ref storage format: the sorted, prefix-compressed,
//! block-indexed files git keeps in `.git/reftable/` when a repository uses
//! `--ref-format=reftable`.
//!
//! - Reads every table git writes: SHA-1 (version 1) and SHA-256 (version 2), ref, obj, log
//!   and index blocks, multi-level indexes, log-only and unpadded tables.
//! - Writes tables byte-identical to git's for the same records and options
//!   ([`Writer`], [`WriteOptions`]).
//! - Never panics, aborts, hangs or allocates without bound on corrupt input: every problem
//!   is an [`Error`] of kind [`ErrorKind::Format`] (or [`ErrorKind::Zlib`]) naming the file
//!   and byte offset.
//!
//! ## zlib
//!
//! Log blocks are zlib streams. The default `zlib` feature uses the C zlib git itself links,
//! which reproduces git's compressed bytes exactly; the `zlib-rs` feature uses the pure-Rust
//! zlib-rs instead, whose output can differ (rarely) in compressed bytes but never in content.
//!
//! ## What to use
//!
//! - A repository's refs: [`RefDb`] (transactions with git's rules, prepared and committed
//!   in two phases; reflogs; `pack-refs`) over a [`Stack`] (`tables.list`, locks,
//!   compaction). Read-only tools open a [`StackReader`], which creates and locks nothing.
//! - A linked worktree's refs: [`refdb::WorktreeRefDb`], over the worktree's own stack
//!   (`.git/worktrees/<id>/reftable`, per-worktree refs) and the common one, with git's rules
//!   for which ref lives where.
//! - Single tables: [`Table`] to read, [`Writer`] to write; [`MergedTable`] for several.
//! - Checking a table or a stack deeply, every problem with its file and offset: [`fsck`].
//! - Looking inside tables (dumps, verifiers, fuzzers): [`walk`], and with the `unstable-codec`
//!   feature the encoding layer itself, `codec` (outside semver: it may change in any release).
//!
//! The read path, one module a step, each using only those before it: `codec`
//! (`varint` → `format` → `record` → `block`) → [`table`] → [`merged`] →
//! [`stack_reader`] → [`stack`] → [`refdb`]. Writing mirrors it: `codec::block_writer` →
//! [`Writer`] → [`Stack`] → [`RefDb`].
//!
//! ```
//! use reftable::{ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
//!
//! let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
//! let mut w = Writer::new(Vec::new(), WriteOptions::default());
//! w.set_limits(1, 1).unwrap();
//! for name in ["refs/heads/a", "refs/heads/b", "refs/tags/v1"] {
//!     w.add_ref(&RefRecord::new(name, 1, RefValue::Object(id))).unwrap();
//! }
//! let table = Table::from_bytes("example.ref", w.finish().unwrap()).unwrap();
//!
//! let names: Vec<Vec<u8>> = table
//!     .seek_ref(b"refs/heads/b")
//!     .unwrap()
//!     .map(|r| r.unwrap().refname)
//!     .collect();
//! assert_eq!(names, [b"refs/heads/b".to_vec(), b"refs/tags/v1".to_vec()]);
//! ```
//!
//! [reftable]: https://git-scm.com/docs/reftable

#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]

#[cfg(not(any(feature = "zlib", feature = "zlib-rs")))]
compile_error!("enable the `zlib` (default) or `zlib-rs` feature: log blocks need a zlib");

/// `crash_point!(AddLocked)`: a crash test aborts here; expands to nothing unless built with
/// `--cfg reftable_test_hooks` (see `test_hooks`).
macro_rules! crash_point {
    ($point:ident) => {
        #[cfg(reftable_test_hooks)]
        $crate::test_hooks::crash_at($crate::test_hooks::CrashPoint::$point);
    };
}

/// `setters!(Type { field: Ty, ... })`: a method per public field that returns the options
/// with that field set, so that options marked `#[non_exhaustive]` (to which a new field is
/// not a breaking change) are built outside the crate as `Type::default().field(value)`.
macro_rules! setters {
    ($ty:ident { $($field:ident: $fty:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("These options with `", stringify!($field), "` set to `value` (see the field).")]
                #[must_use]
                pub fn $field(mut self, value: $fty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

/// `defect!(LostTzSign)`: whether that planted defect is switched on; the constant `false`
/// unless built with `--cfg reftable_test_hooks`.
macro_rules! defect {
    ($defect:ident) => {{
        #[cfg(reftable_test_hooks)]
        let on = $crate::test_hooks::active($crate::test_hooks::Defect::$defect);
        #[cfg(not(reftable_test_hooks))]
        let on = false;
        on
    }};
}

/// `planted!(Defect, correct, defective)`: the value `correct`, or with `--cfg
/// reftable_test_hooks` and that defect planted, `defective` (which a normal build never
/// compiles, so mutation testing finds no dead code to mutate in it).
macro_rules! planted {
    ($defect:ident, $correct:expr, $defective:expr) => {{
        #[cfg(reftable_test_hooks)]
        let v = if $crate::test_hooks::active($crate::test_hooks::Defect::$defect) {
            $defective
        } else {
            $correct
        };
        #[cfg(not(reftable_test_hooks))]
        let v = $correct;
        v
    }};
}

mod bytes;
#[cfg(feature = "unstable-codec")]
pub mod codec;
// Without the feature the layer is the crate's own; what only tools outside call goes unused.
#[cfg(not(feature = "unstable-codec"))]
#[allow(dead_code, unused_imports)]
mod codec;
mod error;
pub mod fsck;
mod hash;
mod leaf_index;
mod lock;
pub mod merged;
#[cfg(feature = "refdb")]
pub mod refdb;
pub mod refname;
mod signature;
pub mod stack;
pub mod stack_reader;
pub mod stale;
mod stats;
pub mod table;
mod tables_list;
mod target;
#[cfg(reftable_test_hooks)]
pub mod test_hooks;
pub mod walk;
mod writer;

// The everyday types; the rest of each layer is reached through its module (`codec`,
// `table`, `merged`, `stack`, `walk`), once.
pub use codec::record::{LogRecord, LogUpdate, LogValue, RefRecord, RefValue};
pub use codec::ref_view::{RefValueView, RefView};
pub use error::{Error, ErrorKind, RefState, Refusal, Result};
pub use hash::{HashId, ObjectId};
pub use merged::MergedTable;
#[cfg(feature = "refdb")]
pub use refdb::{RefDb, RefDbOptions, RefUpdate};
pub use refname::RefName;
pub use signature::{Signature, TzOffset};
pub use stack::{Committed, Outdated, Stack, StackOptions};
pub use stack_reader::StackReader;
pub use table::Table;
pub use target::Target;
pub use writer::{SectionStats, WriteOptions, Writer, WriterStats};

/// The crate README's examples (what crates.io shows), compiled and run as doctests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
