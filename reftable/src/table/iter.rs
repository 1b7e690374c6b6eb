//! The table iterator: its state, reading block after block, and lending records. Seeks are
//! in `seek.rs`; what it lets go to stay within a memory budget, and takes back, in
//! `budget.rs`.

use std::ops::ControlFlow;

use super::open::Table;
use super::pool::Pool;
use crate::codec::block::{parse_block, BlockCursor, BlockInfo};
use crate::codec::format::BlockType;
use crate::codec::record::{CodecContext, Record, RefRecord};
use crate::codec::ref_view::RefView;
use crate::error::Result;
use crate::stats::Stats;

/// Where a [`TableIter`] stands.
#[derive(Clone, Copy, Debug)]
pub(super) enum State {
    /// Nothing to read: not positioned yet, past the last record, or after an error.
    Ended,
    /// The current record is the first of the log block at `offset`, and only its key is
    /// known (from `peek_log_key`): the block is inflated when the record is needed (see
    /// `TableIter::seek_lazy`).
    Peeked {
        /// Where the block starts.
        offset: u64,
        /// The seek stopped at the record and nothing has moved onto it yet.
        pending: bool,
    },
    /// Reading a block, its cursor after the current record.
    Reading(Reading),
}

/// [`State::Reading`]: the block, and what of it and of its current record is held.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reading {
    /// The current block.
    pub(super) block: BlockInfo,
    /// A seek stopped at the current record: the next read returns it.
    pub(super) pending: bool,
    /// The (log) block's inflated contents were let go while records remain; they are
    /// inflated again before the next read.
    pub(super) block_let_go: bool,
    /// The current record's big value was let go while the iterator waited in a merged
    /// queue; `TableIter::restore_current` decodes it again.
    pub(super) value_let_go: bool,
}

impl Reading {
    /// At the start of `block`, holding all of it.
    pub(super) fn new(block: BlockInfo) -> Reading {
        Reading {
            block,
            pending: false,
            block_let_go: false,
            value_let_go: false,
        }
    }
}

/// An iterator over one section of a table, in key order.
///
/// [`TableIter::next_record`] lends each record without copying; the [`Iterator`]
/// implementation clones it.
#[derive(Debug)]
pub struct TableIter<R: Record> {
    pub(super) table: Table,
    pub(super) ctx: CodecContext,
    pub(super) state: State,
    pub(super) cursor: BlockCursor,
    /// A second cursor for looking at the next block's first key during a linear seek,
    /// kept so repeated seeks reuse its buffer.
    pub(super) probe: BlockCursor,
    pub(super) inflated: Vec<u8>,
    pub(super) spare: Vec<u8>,
    pub(super) rec: R,
    /// Inside [`TableIter::recycle_with`]: the buffers handed in, and the big ones this
    /// iterator let go, to be handed back.
    pub(super) pool: Option<Pool<R>>,
    /// The key of the index entry an indexed seek followed (reused between seeks): every
    /// key of the block it points at is at most this, which catches an entry pointing at a
    /// later block.
    pub(super) bound: Vec<u8>,
    pub(super) stats: Stats,
}

/// The bytes of block `info`: in the table, or inflated for a log block.
#[inline]
pub(super) fn block_data<'a>(table: &'a Table, info: &BlockInfo, inflated: &'a [u8]) -> &'a [u8] {
    if info.block_type == BlockType::Log {
        inflated
    } else {
        let start = info.offset as usize;
        &table.bytes()[start..start + info.block_len]
    }
}

impl<R: Record> TableIter<R> {
    /// Not positioned: reads nothing until a seek or a block is loaded.
    pub(super) fn new(table: Table) -> TableIter<R> {
        let ctx = table.codec_context();
        TableIter {
            table,
            ctx,
            state: State::Ended,
            cursor: BlockCursor::default(),
            probe: BlockCursor::default(),
            inflated: Vec::new(),
            spare: Vec::new(),
            rec: R::default(),
            pool: None,
            bound: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// The record [`TableIter::next_record`] returned last.
    pub(crate) fn current(&self) -> &R {
        &self.rec
    }

    /// The table this iterator reads.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// What this iterator has done so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The block being read, if any.
    pub(super) fn block(&self) -> Option<BlockInfo> {
        match self.state {
            State::Reading(r) => Some(r.block),
            _ => None,
        }
    }

    /// Whether a seek stopped at the current record and nothing has moved onto it yet;
    /// `false` afterwards.
    fn take_pending(&mut self) -> bool {
        match &mut self.state {
            State::Peeked { pending, .. } | State::Reading(Reading { pending, .. }) => {
                std::mem::take(pending)
            }
            State::Ended => false,
        }
    }

    /// Parse the block at `offset` into `buf`; `Ok(None)` past the end or at another type.
    pub(super) fn parse_at(
        &mut self,
        offset: u64,
        want: Option<BlockType>,
        use_spare: bool,
    ) -> Result<Option<BlockInfo>> {
        let Some((data, header_off)) = self.table.blocks_from(offset) else {
            return Ok(None);
        };
        let info = self.table.info();
        let buf = if use_spare {
            &mut self.spare
        } else {
            &mut self.inflated
        };
        if buf.capacity() == 0 {
            if let Some(pool) = &mut self.pool {
                std::mem::swap(buf, &mut pool.buf);
            }
        }
        parse_block(
            data,
            offset,
            header_off,
            info.block_size as usize,
            want,
            buf,
            &mut self.stats,
        )
    }

    /// Make the block at `offset` the current one, positioned before its first record;
    /// at none, the iterator ends.
    pub(super) fn load_block_at(
        &mut self,
        offset: u64,
        want: Option<BlockType>,
    ) -> Result<Option<BlockInfo>> {
        let b = self.parse_at(offset, want, false)?;
        self.state = match b {
            Some(block) => {
                self.cursor.reset(&block);
                State::Reading(Reading::new(block))
            }
            None => State::Ended,
        };
        Ok(b)
    }

    /// The next record of the current block only, decoded in full.
    pub(super) fn next_in_block(&mut self) -> Result<Option<&R>> {
        let Some(info) = self.block() else {
            return Ok(None);
        };
        self.restore()?;
        let data = block_data(&self.table, &info, &self.inflated);
        if !self
            .cursor
            .next(&info, data, &mut self.rec, &self.ctx, &mut self.stats)?
        {
            return Ok(None);
        }
        if let State::Reading(r) = &mut self.state {
            r.value_let_go = false;
        }
        self.release_if_done();
        Ok(Some(&self.rec))
    }

    /// The next record, borrowed until the next call. After an error the iterator ends.
    #[inline(always)]
    pub fn next_record(&mut self) -> Result<Option<&R>> {
        if self.next_in_current_block()? {
            return Ok(Some(&self.rec));
        }
        self.next_record_slow()
    }

    /// The common case of [`TableIter::next_record`]: reading on in a block that is held in
    /// full, nothing pending or let go. `Ok(false)` when that is not the case or the block
    /// has no record left; the slow path then takes over.
    #[inline(always)]
    fn next_in_current_block(&mut self) -> Result<bool> {
        let State::Reading(r) = &mut self.state else {
            return Ok(false);
        };
        if r.pending || r.block_let_go {
            return Ok(false);
        }
        r.value_let_go = false;
        let info = &r.block;
        let data = block_data(&self.table, info, &self.inflated);
        match (self.cursor).next(info, data, &mut self.rec, &self.ctx, &mut self.stats) {
            Ok(true) => {
                if R::BLOCK_TYPE == BlockType::Log {
                    self.release_if_done();
                }
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) => {
                self.state = State::Ended;
                Err(e.in_file(self.table.name()))
            }
        }
    }

    /// [`TableIter::next_record`] past the fast path: a pending record, a block let go, or
    /// the next block.
    #[inline(never)]
    fn next_record_slow(&mut self) -> Result<Option<&R>> {
        if let State::Ended = self.state {
            return Ok(None);
        }
        if self.take_pending() {
            if let Err(e) = self.restore_current() {
                self.state = State::Ended;
                return Err(e);
            }
            return Ok(Some(&self.rec));
        }
        match self.advance() {
            Ok(true) => Ok(Some(&self.rec)),
            Ok(false) => {
                self.state = State::Ended;
                self.release_last();
                Ok(None)
            }
            Err(e) => {
                self.state = State::Ended;
                Err(e.in_file(self.table.name()))
            }
        }
    }

    /// Move to the next record, into the next blocks when this one has none left.
    fn advance(&mut self) -> Result<bool> {
        if let State::Peeked { .. } = self.state {
            // Moving past a peeked record: read its block first.
            self.restore_current()?;
        }
        loop {
            let Some(info) = self.block() else {
                return Ok(false);
            };
            if self.next_in_block()?.is_some() {
                return Ok(true);
            }
            let next = info.offset + info.full_size as u64;
            if self.load_block_at(next, Some(R::BLOCK_TYPE))?.is_none() {
                return Ok(false);
            }
        }
    }
}

impl TableIter<RefRecord> {
    /// Lend the records from here on to `f` as [`RefView`]s, tombstones left out with
    /// `skip_deletions`, until `f` breaks or the table ends. After a break the next read
    /// returns the record after the one lent last, but [`TableIter::current`] is not that
    /// record (it is not decoded into `rec`); at the end the iterator has ended. Records of a block held in full are lent from the block without
    /// a copy; the others (a pending one, a block's first) through `next_record`.
    #[inline(always)]
    pub(crate) fn for_each_ref<B>(
        &mut self,
        skip_deletions: bool,
        f: &mut impl FnMut(RefView<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        loop {
            if let ControlFlow::Break(b) = self.views_in_block(skip_deletions, f)? {
                return Ok(ControlFlow::Break(b));
            }
            let Some(r) = self.next_record_slow()? else {
                return Ok(ControlFlow::Continue(()));
            };
            if !(skip_deletions && r.is_deletion()) {
                if let ControlFlow::Break(b) = f(RefView::from(r)) {
                    return Ok(ControlFlow::Break(b));
                }
            }
        }
    }

    /// [`TableIter::for_each_ref`] in a block held in full with nothing pending: its
    /// records lent straight from the block. `Continue` when the block has no record left
    /// or is not held so.
    #[inline(always)]
    fn views_in_block<B>(
        &mut self,
        skip_deletions: bool,
        f: &mut impl FnMut(RefView<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        let State::Reading(r) = &mut self.state else {
            return Ok(ControlFlow::Continue(()));
        };
        if r.pending || r.block_let_go {
            return Ok(ControlFlow::Continue(()));
        }
        r.value_let_go = false;
        let info = r.block;
        let data = block_data(&self.table, &info, &self.inflated);
        let out =
            (self.cursor).for_each_ref(&info, data, &self.ctx, &mut self.stats, skip_deletions, f);
        if let Err(e) = out {
            self.state = State::Ended;
            return Err(e.in_file(self.table.name()));
        }
        out
    }
}

impl<R: Record> Iterator for TableIter<R> {
    type Item = Result<R>;

    fn next(&mut self) -> Option<Result<R>> {
        self.next_record().map(|r| r.cloned()).transpose()
    }
}

impl<R: Record> Drop for TableIter<R> {
    fn drop(&mut self) {
        self.table.count(&self.stats);
    }
}

#[cfg(test)]
mod tests {
    use crate::table::testing::{refs, write};
    use crate::WriteOptions;

    /// The iterator's counters while it runs, the table's once it is dropped.
    #[test]
    fn counters_of_iterators() {
        let t = write(&refs(3), &[], WriteOptions::default());
        assert_eq!(t.stats().records_decoded, 0);
        let mut it = t.refs().unwrap();
        while it.next_record().unwrap().is_some() {}
        assert_eq!(it.stats().records_decoded, 3);
        drop(it);
        assert_eq!(t.stats().records_decoded, 3);
    }
}
