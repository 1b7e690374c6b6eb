//! A table's reads: iterators over its sections, point lookups, refs by object id (through
//! the obj section when there is one) and the records of one block.

use super::info::corrupt;
use super::iter::TableIter;
use super::open::Table;
use crate::codec::block::BlockInfo;
use crate::codec::record::{LogRecord, ObjRecord, Record, RefRecord};
use crate::error::Result;
use crate::hash::ObjectId;

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

    /// Refs whose value or peeled value is `id`, in table order, tombstones excluded.
    /// Uses the obj section when the table has one, else scans every ref.
    pub fn refs_for(&self, id: &ObjectId) -> Result<Vec<RefRecord>> {
        let info = self.info();
        if !info.objs.present {
            return self.scan_refs_for(id);
        }
        let len = (info.obj_id_len as usize).min(id.len());
        let prefix = &id.as_bytes()[..len];
        let mut it = self.seek::<ObjRecord>(prefix)?;
        let offsets = match it.next_record()? {
            Some(o) if o.hash_prefix == prefix => o.offsets.clone(),
            _ => return Ok(Vec::new()),
        };
        if offsets.is_empty() {
            return self.scan_refs_for(id);
        }
        self.refs_in_blocks(id, &offsets)
    }

    /// [`Table::refs_for`] by reading every ref.
    fn scan_refs_for(&self, id: &ObjectId) -> Result<Vec<RefRecord>> {
        let mut out = Vec::new();
        let mut it = self.refs()?;
        while let Some(r) = it.next_record()? {
            if points_at(r, id) {
                out.push(r.clone());
            }
        }
        Ok(out)
    }

    /// [`Table::refs_for`] through the ref blocks at `offsets`, an obj record's list.
    fn refs_in_blocks(&self, id: &ObjectId, offsets: &[u64]) -> Result<Vec<RefRecord>> {
        let mut out = Vec::new();
        let mut refs = TableIter::<RefRecord>::new(self.clone());
        let mut next_free = 0u64;
        for &off in offsets {
            // Each listed block is visited once: an offset inside a block already visited
            // is corrupt (and would make the lookup quadratic).
            if off < next_free {
                return Err(self.err(corrupt(
                    off,
                    "obj record lists a position inside a ref block it already listed",
                )));
            }
            refs.load_single_block(off).map_err(|e| self.err(e))?;
            if let Some(b) = refs.block() {
                next_free = b.offset + b.full_size as u64;
            }
            while let Some(r) = refs.next_in_block().map_err(|e| self.err(e))? {
                if points_at(r, id) {
                    out.push(r.clone());
                }
            }
        }
        Ok(out)
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

/// Whether `r`'s value or peeled value is `id`.
fn points_at(r: &RefRecord, id: &ObjectId) -> bool {
    r.value_id() == Some(id) || r.peeled_id() == Some(id)
}

#[cfg(test)]
mod tests {
    use crate::codec::record::{ObjRecord, RefRecord, RefValue};
    use crate::table::testing::{id, write};
    use crate::WriteOptions;

    /// Looking up an id no ref has decodes only the obj records the seek needs, never the
    /// ref blocks of the next prefix.
    #[test]
    fn refs_for_a_missing_id_reads_no_ref_block() {
        // Refs to even ids only: an odd id's prefix falls between two obj records.
        let even: Vec<RefRecord> = (0..2000u16)
            .map(|i| {
                RefRecord::new(
                    format!("refs/heads/b{i:05}"),
                    1,
                    RefValue::Object(id(2 * i)),
                )
            })
            .collect();
        let t = write(&even, &[], WriteOptions::default());
        assert!(t.info().objs.present);
        let missing = id(1001);
        let prefix = &missing.as_bytes()[..usize::from(t.info().obj_id_len)];
        let before = t.stats();
        {
            let mut it = t.seek::<ObjRecord>(prefix).unwrap();
            it.next_record().unwrap();
        }
        let seek_only = t.stats().since(before);
        let before = t.stats();
        assert!(t.refs_for(&missing).unwrap().is_empty());
        assert_eq!(t.stats().since(before), seek_only);
        assert_eq!(t.refs_for(&id(1998)).unwrap().len(), 1);
    }
}
