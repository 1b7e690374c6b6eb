//! Where a table's bytes live: a read-only memory map of the file, or an owned buffer; and
//! opening the stack's files, which must be regular files (a FIFO would block a reader
//! forever, a device such as `/dev/zero` never end).
//!
//! This is the only place in the crate with `unsafe` code.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result};

/// Open `path` for reading if it is a regular file (following symlinks). The type is checked
/// before opening (opening a FIFO blocks until a writer comes) and again on the open file.
pub(crate) fn open_regular(path: &Path, what: &str) -> Result<(File, u64)> {
    open_regular_meta(path, what).map(|(f, m)| (f, m.len()))
}

/// [`open_regular`] with the open handle's metadata (its `fstat`), for callers that also
/// need the file's identity.
pub(crate) fn open_regular_meta(path: &Path, what: &str) -> Result<(File, std::fs::Metadata)> {
    let not_regular =
        || Error::new(ErrorKind::Format, format!("{what} is not a regular file")).in_file(path);
    let meta =
        std::fs::metadata(path).map_err(|e| Error::io(e, format!("stat {what}")).in_file(path))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path).map_err(|e| Error::io(e, format!("open {what}")).in_file(path))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(e, format!("stat {what}")).in_file(path))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok((file, meta))
}

/// Read a regular file whole, never more than the size it had when opened.
pub(crate) fn read_regular(path: &Path) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path, "file")?;
    let mut out = Vec::with_capacity(len.min(1 << 20) as usize);
    file.take(len)
        .read_to_end(&mut out)
        .map_err(|e| Error::io(e, "read").in_file(path))?;
    Ok(out)
}

/// Files smaller than this are read into memory instead of being mapped.
const MIN_MMAP_SIZE: u64 = 64 * 1024;

/// The immutable bytes of one table.
pub(crate) enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    /// Open `path` read-only: mapped when large enough, read otherwise (and when mapping fails).
    pub(crate) fn open(path: &Path) -> Result<Bytes> {
        let (file, len) = open_regular(path, "table")?;
        if len >= MIN_MMAP_SIZE {
            // SAFETY: `Mmap` hands out the file's pages as `&[u8]`, which is sound only while
            // nobody changes or truncates the file. The map is read-only but shared: writes
            // to the file by anyone would show through it. Reftable files are immutable once
            // written: git and this crate write a table under a temporary name, rename it
            // into place, and never open a listed table for writing again; tables leave a
            // stack by being unlinked, which keeps the mapped pages alive. A process that
            // rewrites or truncates a table in place breaks that contract (a truncation would
            // fault on access), as it would for git, which maps tables the same way.
            if let Ok(map) = unsafe { memmap2::MmapOptions::new().map(&file) } {
                return Ok(Bytes::Mapped(map));
            }
        }
        let mut data = Vec::with_capacity(len as usize);
        file.take(len)
            .read_to_end(&mut data)
            .map_err(|e| Error::io(e, "read table").in_file(path))?;
        Ok(Bytes::Owned(data))
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}
