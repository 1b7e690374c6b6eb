//! Where a table's bytes live: a read-only memory map of the file, or an owned buffer.
//!
//! This is the only place in the crate with `unsafe` code.

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};

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
        let file = File::open(path).map_err(|e| Error::io(e, "open table").in_file(path))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io(e, "stat table").in_file(path))?
            .len();
        if len >= MIN_MMAP_SIZE {
            // SAFETY: reftable files are immutable once written: git and this crate write
            // them under a temporary name and rename them into place, and never modify a
            // table after it is listed in `tables.list`. The map is read-only and private,
            // so a concurrent writer cannot change the bytes we hand out except by
            // truncating the file, which no reftable writer does.
            if let Ok(map) = unsafe { memmap2::MmapOptions::new().map(&file) } {
                return Ok(Bytes::Mapped(map));
            }
        }
        let data = std::fs::read(path).map_err(|e| Error::io(e, "read table").in_file(path))?;
        Ok(Bytes::Owned(data))
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}
