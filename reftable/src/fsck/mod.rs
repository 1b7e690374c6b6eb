//! The deep check of a table or a stack, git's `reftable/fsck.c` grown: every problem as a
//! [`Finding`] (file, offset, [`FindingKind`], text), never the first error only.
//!
//! Named `fsck` after git's own (`reftable-fsck.h`, run by `git refs verify`), so that an
//! embedder finds it under the name git gives it; `reftable verify` prints what it finds.
//!
//! Per table: header and footer (magic, version, hash id, header = footer, CRC-32), the block
//! walk (types, `block_len` bounds, padding, restart tables), sections (order, offsets, block
//! types), keys (decodable, strictly increasing within and across blocks), restart points (at
//! record starts with prefix length 0), ref records (update indexes within the header's
//! limits, valid names, symref targets), log records (well-formed keys, value types 0 and 1,
//! update indexes at most the maximum, one-line messages ending in exactly one newline),
//! every level of every index (each entry's key is the last key of the block it points at;
//! the lowest level covers every block of its section; no stray index blocks), the obj
//! section against the refs (both ways), and log blocks git 2.47 and master cannot read
//! (their compressed stream extends past `max(block size, block_len)` bytes).
//!
//! Per stack: `tables.list` (names that are not plain file names in the directory, missing
//! tables, duplicates, missing final newline, names not in git's format or not matching the
//! table's update indexes), update indexes increasing across the stack, one hash for every
//! table (and the repository's, when given), stray tables not in the list and leftover lock
//! and temporary files older than a writer at work would leave them
//! ([`crate::stale::StaleOptions::min_age`]).
//!
//! A stack that changes under the check (a writer committed or compacted meanwhile) is
//! checked again, for up to 3 seconds as git's readers retry, so that a live repository is
//! not reported as damaged.
//!
//! Tables are mapped, not read: a table of millions of refs is checked in little more memory
//! than the pages of it being looked at and its object ids' prefixes.
//!
//! ```
//! use reftable::{fsck, ObjectId, RefRecord, RefValue, Writer, WriteOptions};
//!
//! let dir = std::env::temp_dir().join(format!("fsck-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let mut w = Writer::new(Vec::new(), WriteOptions::default());
//! w.set_limits(1, 1).unwrap();
//! let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
//! w.add_ref(&RefRecord::new("refs/heads/main", 1, RefValue::Object(id))).unwrap();
//! let name = "0x000000000001-0x000000000001-01234567.ref";
//! std::fs::write(dir.join(name), w.finish().unwrap()).unwrap();
//! // Listed twice: the second line is a finding, the table is checked once.
//! std::fs::write(dir.join("tables.list"), format!("{name}\n{name}\n")).unwrap();
//!
//! let report = fsck::check_stack(&dir, None).unwrap();
//! assert_eq!(report.tables_checked, 1);
//! let found: Vec<_> = report.findings().collect();
//! assert_eq!(found.len(), 1);
//! assert_eq!(found[0].kind, fsck::FindingKind::TablesList);
//! assert_eq!(found[0].offset, Some(43));
//! assert!(found[0].text.ends_with("is listed twice"));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod blocks;
mod checker;
mod collected;
mod finding;
mod index_levels;
mod leftovers;
mod list;
mod obj_ids;
mod objs;
mod records;
mod sections;
mod shown;
mod stack;
mod table;

use std::path::Path;

pub use finding::{FileFindings, Finding, FindingKind, Report, MAX_FINDINGS_PER_FILE};
pub use shown::{show_bytes, show_log_key};

use crate::error::Result;
use crate::hash::HashId;

/// Check the table file `path`. A table that cannot be opened (not a table, corrupt header
/// or footer) is a finding of kind [`FindingKind::Unreadable`]; `Err` only for I/O errors
/// other than a missing file.
pub fn check_table(path: impl AsRef<Path>) -> Result<Report> {
    let checked = table::check_table_file(path.as_ref(), &mut checker::Scratch::default())?;
    Ok(Report {
        tables_checked: 1,
        files: vec![checked.findings],
    })
}

/// Check the stack in `dir` (the directory holding `tables.list`) and every table it
/// lists; `expected` is the repository's object format (`extensions.objectformat`), when
/// known. The report holds `tables.list`'s findings, then each table's, then the
/// directory's leftovers. A missing `tables.list` is an empty stack. `Err` for I/O errors
/// reading the list, a table or the directory.
pub fn check_stack(dir: impl AsRef<Path>, expected: Option<HashId>) -> Result<Report> {
    stack::check_stack_retrying(dir.as_ref(), expected)
}
