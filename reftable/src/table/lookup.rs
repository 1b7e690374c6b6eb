//! A table's reads: iterators over its sections, point lookups and the records of one block
//! (the refs at one object id: `refs_for.rs`).

use super::info::corrupt;
use super::iter::TableIter;
use super::open::Table;
use crate::codec::block::BlockInfo;
use crate::codec::record::{LogRecord, Record, RefRecord};
use crate::error::Result;

impl Table {
    /// An iterator over every record of `R`'s section, in key order.
    pub fn iter<R: Record>(&self) -> Result<TableIter<R>> {
        let mut it = TableIter::new(self.clone());
        let sec = *self.section_of::<R>()?;
        if sec.present {
            it.start_section(sec.offset).map_err(|e| self.err(e))?;
        }
        Ok(it)
    }

    /// An iterator over `R`'s section that reads nothing until it is positioned with
    /// [`TableIter::seek`] (a merged iterator positions its tables one at a time, so that
    /// it never holds every table's first block at once).
    pub(crate) fn unpositioned<R: Record>(&self) -> Result<TableIter<R>> {
        self.section_of::<R>()?;
        Ok(TableIter::new(self.clone()))
    }

    /// An iterator over `R`'s section starting at the first record whose key is `>= key`.
    pub fn seek<R: Record>(&self, key: &[u8]) -> Result<TableIter<R>> {
        self.section_of::<R>()?;
        let mut it = TableIter::new(self.clone());
        it.seek(key)?;
        Ok(it)
    }

    /// Every ref record, tombstones included, in name order.
    pub fn refs(&self) -> Result<TableIter<RefRecord>> {
        self.iter()
    }

    /// Ref records from the first name `>= name`.
    pub fn seek_ref(&self, name: &[u8]) -> Result<TableIter<RefRecord>> {
        self.seek(name)
    }

    /// The live value of ref `name` in this table: `None` when the table has no record for
    /// it or a tombstone (see [`Table::ref_record`] for tombstones).
    pub fn read_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        Ok(self.ref_record(name)?.filter(|r| !r.is_deletion()))
    }

    /// The record stored for `name`, tombstones included.
    pub fn ref_record(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        let mut it = self.seek_ref(name)?;
        Ok(it.next_record()?.filter(|r| r.refname == name).cloned())
    }

    /// Every log record, tombstones included: refs in name order, newest first per ref.
    pub fn logs(&self) -> Result<TableIter<LogRecord>> {
        self.iter()
    }

    /// Log records from the newest entry of `name` on (continuing into later refs).
    pub fn seek_log(&self, name: &[u8]) -> Result<TableIter<LogRecord>> {
        self.seek(&LogRecord::seek_key(name, u64::MAX))
    }

    /// Log records from the entry of `name` with the largest update index `<= update_index`.
    pub fn seek_log_at(&self, name: &[u8], update_index: u64) -> Result<TableIter<LogRecord>> {
        self.seek(&LogRecord::seek_key(name, update_index))
    }

    /// Decode every record of the block described by `info` (from [`Table::blocks`]).
    pub fn block_records<R: Record>(&self, info: &BlockInfo) -> Result<Vec<R>> {
        let mut it = TableIter::<R>::new(self.clone());
        it.load_block_at(info.offset, None)
            .map_err(|e| self.err(e))?
            .ok_or_else(|| self.err(corrupt(info.offset, "no block at this offset")))?;
        let mut out = Vec::new();
        while let Some(r) = it.next_in_block().map_err(|e| self.err(e))? {
            out.push(r.clone());
        }
        Ok(out)
    }
}
