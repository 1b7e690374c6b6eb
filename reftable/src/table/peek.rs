//! Lazy positioning over big log blocks: where a seek would stop at the first record of a
//! log block that inflates to over 1 MiB, only that record's key is read, from the start of
//! the block's zlib stream; the block is inflated once, when the record comes up.

use super::budget::KEEP_INFLATED;
use super::info::corrupt;
use super::iter::{block_data, State, TableIter};
use crate::codec::block::peek_log_key;
use crate::codec::format::BlockType;
use crate::codec::record::Record;
use crate::error::Result;

impl<R: Record> TableIter<R> {
    /// Position like [`TableIter::seek`], except that where the seek would stop at the first
    /// record of the first log block and that block inflates to more than 1 MiB, only that
    /// record's key is read, from the start of the block's zlib stream: a merged iterator
    /// queues the record by key and has [`TableIter::restore_current`] inflate the block
    /// when the record comes up. Over many tables whose single log block inflates to
    /// 16 MiB, each block is then inflated once, not once to queue it and again when it is
    /// read.
    pub(crate) fn seek_lazy(&mut self, key: &[u8]) -> Result<()> {
        if R::BLOCK_TYPE == BlockType::Log && self.peek_first(key)? {
            return Ok(());
        }
        self.seek(key)
    }

    /// The peek of [`TableIter::seek_lazy`]: whether the iterator is now positioned lazily.
    fn peek_first(&mut self, key: &[u8]) -> Result<bool> {
        let table = self.table.clone();
        let sec = *table.section_of::<R>().map_err(|e| table.err(e))?;
        // An indexed seek for a key lands in some later block; only a seek that starts at the
        // section start can stop at its first record.
        if !sec.present || (sec.index_offset != 0 && !key.is_empty()) {
            return Ok(false);
        }
        let Some((data, header_off)) = table.blocks_from(sec.offset) else {
            return Ok(false);
        };
        let mut first = std::mem::take(&mut self.bound);
        // Only blocks over KEEP_INFLATED are peeked: a smaller one is inflated in full and
        // kept at positioning, as a peek would inflate most of it twice.
        let peeked = peek_log_key(data, header_off, KEEP_INFLATED, &mut first)
            && first.as_slice() >= key
            && self.rec.decode(&first, 0, &[], &self.ctx).is_ok();
        self.bound = first;
        if !peeked {
            return Ok(false);
        }
        self.inflated = Vec::new();
        self.state = State::Peeked {
            offset: sec.offset,
            pending: true,
        };
        Ok(true)
    }

    /// Inflate the log block at `offset` whose first key was peeked, and decode that first
    /// record in full; the iterator is then as [`TableIter::seek`] would have left it after
    /// returning that record (still `pending` if it was).
    pub(super) fn load_peeked(&mut self, offset: u64, pending: bool) -> Result<()> {
        let mut key = std::mem::take(&mut self.bound);
        self.rec.write_key(&mut key);
        if let Some(r) = self.pool.as_mut().and_then(|p| p.rec.take()) {
            // Its buffers (a big message) are reused by the decode.
            self.rec = r;
        }
        let r = self.read_peeked(offset, &key);
        self.bound = key;
        match (&r, &mut self.state) {
            (Ok(()), State::Reading(reading)) => reading.pending = pending,
            _ => self.state = State::Ended,
        }
        self.release_if_done();
        r.map_err(|e| self.table.err(e))
    }

    /// Load the log block at `offset` and read its first record, which must have `key`.
    fn read_peeked(&mut self, offset: u64, key: &[u8]) -> Result<()> {
        let Some(b) = self.load_block_at(offset, Some(BlockType::Log))? else {
            return Err(corrupt(offset, "log block changed while being read"));
        };
        let data = block_data(&self.table, &b, &self.inflated);
        if !self
            .cursor
            .next(&b, data, &mut self.rec, &self.ctx, &mut self.stats)?
            || self.cursor.key() != key
        {
            return Err(corrupt(offset, "log block changed while being read"));
        }
        Ok(())
    }

    /// Move to the next record as [`TableIter::next_record`] does, but leave a lazily
    /// positioned record (see [`TableIter::seek_lazy`]) unread: `true` when there is a
    /// current record, whose key at least is known.
    #[inline(always)]
    pub(crate) fn next_key(&mut self) -> Result<bool> {
        if let State::Peeked { pending, .. } = &mut self.state {
            if std::mem::take(pending) {
                return Ok(true);
            }
        }
        Ok(self.next_record()?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use crate::codec::format::Footer;
    use crate::codec::record::{LogRecord, Record, RefRecord};
    use crate::table::testing::{log, name_and_size, refs, two_big_log_blocks, write};
    use crate::table::Table;
    use crate::WriteOptions;

    /// A lazy seek reads only the first key of a big log block; the block is inflated once,
    /// when the record is restored, and the records then come out as a plain seek gives
    /// them. A key past the first record, or a section with an index, seeks as usual.
    #[test]
    fn lazy_seek_peeks_then_inflates_once() {
        let opts = WriteOptions {
            block_size: 16_777_215,
            ..WriteOptions::default()
        };
        let logs = [log("refs/heads/a", 2 << 20), log("refs/heads/b", 100)];
        let t = write(&[], &logs, opts);
        let all: Vec<LogRecord> = t.logs().unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(all.len(), 2);
        for key in [&b""[..], b"refs/heads/", b"refs/heads/a"] {
            let mut it = t.unpositioned::<LogRecord>().unwrap();
            it.seek_lazy(key).unwrap();
            assert_eq!(it.stats().blocks_inflated, 0);
            assert_eq!(it.inflated_bytes(), 0);
            assert!(it.next_key().unwrap());
            assert_eq!(it.current().refname, b"refs/heads/a");
            assert_eq!(it.current().value_bytes(), 0, "only the key is known");
            it.restore_current().unwrap();
            assert_eq!(it.current(), &all[0]);
            assert_eq!(it.next_record().unwrap(), Some(&all[1]));
            assert!(it.next_record().unwrap().is_none());
            assert_eq!(it.stats().blocks_inflated, 1);
        }
        // Moving past a peeked record without restoring it.
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert!(it.next_key().unwrap());
        assert!(it.next_key().unwrap());
        assert_eq!(it.current(), &all[1]);
        // The first key is before the one sought: a full seek.
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"refs/heads/a\x01").unwrap();
        assert_eq!(it.stats().blocks_inflated, 1);
        assert_eq!(it.next_record().unwrap(), Some(&all[1]));
        // Refs are never peeked.
        let r = write(&refs(3), &[], WriteOptions::default());
        let mut it = r.unpositioned::<RefRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert_eq!(
            it.next_record().unwrap().unwrap().refname,
            b"refs/heads/b00000"
        );
    }
    /// Four log blocks that each inflate to over `KEEP_INFLATED`, so the section has an
    /// index. A full scan starts at the section start and is positioned lazily (nothing
    /// inflated); a lookup by key goes through the index and never peeks at the first
    /// block, even for a key at or before the first record (peeking would add a partial
    /// inflate to every indexed lookup).
    #[test]
    fn an_indexed_log_section_is_peeked_only_by_full_scans() {
        let opts = WriteOptions {
            block_size: 3 << 20,
            ..WriteOptions::default()
        };
        let logs: Vec<LogRecord> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| log(&format!("refs/heads/{n}"), 2 << 20))
            .collect();
        let t = write(&[], &logs, opts);
        assert_ne!(t.info().logs.index_offset, 0, "four blocks are indexed");
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert_eq!(
            it.stats().blocks_inflated,
            0,
            "a full scan positions lazily"
        );
        assert_eq!(
            name_and_size(it.next_record().unwrap()).map(|(n, _)| n),
            Some("refs/heads/a".to_string())
        );
        for name in ["refs/heads/", "refs/heads/a"] {
            let mut key = Vec::new();
            log(name, 0).write_key(&mut key);
            let mut it = t.unpositioned::<LogRecord>().unwrap();
            it.seek_lazy(&key).unwrap();
            assert_eq!(it.stats().blocks_inflated, 1, "{name}: through the index");
            assert_eq!(
                name_and_size(it.next_record().unwrap()).map(|(n, _)| n),
                Some("refs/heads/a".to_string())
            );
        }
    }
    /// A peeked record whose block no longer starts with the peeked key is an error.
    #[test]
    fn a_peeked_key_must_match_its_block() {
        let t = two_big_log_blocks();
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert!(it.next_key().unwrap());
        it.rec.refname = b"refs/heads/z".to_vec();
        let e = it.restore_current().unwrap_err();
        assert!(e.message().contains("changed while being read"), "{e}");
    }
    /// A peeked block that then fails to inflate (its stream damaged past the peeked part)
    /// reports the error when the record is restored, and the iterator ends.
    #[test]
    fn lazy_seek_reports_damage_found_later() {
        let opts = WriteOptions {
            block_size: 16_777_215,
            ..WriteOptions::default()
        };
        let t = write(&[], &[log("refs/heads/a", 1 << 20)], opts);
        let mut bytes = t.bytes().to_vec();
        let f = Footer::decode(&bytes).unwrap();
        let end = bytes.len() - f.size();
        // The last bytes of the zlib stream hold its checksum.
        bytes[end - 3] ^= 0xff;
        let crc_at = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[end..crc_at]);
        bytes[crc_at..].copy_from_slice(&crc.to_be_bytes());
        let t = Table::from_bytes("t.ref", bytes).unwrap();
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert!(it.next_key().unwrap());
        let e = it.restore_current().unwrap_err();
        assert!(
            e.message().contains("zlib") || e.message().contains("inflate"),
            "{e}"
        );
        assert!(it.next_record().unwrap().is_none());
    }
}
