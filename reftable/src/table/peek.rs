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
    pub(crate) fn next_key(&mut self) -> Result<bool> {
        if let State::Peeked { pending, .. } = &mut self.state {
            if std::mem::take(pending) {
                return Ok(true);
            }
        }
        Ok(self.next_record()?.is_some())
    }
}
