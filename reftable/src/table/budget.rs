//! The memory a merged iterator's table iterators hold, kept within a budget: big inflated
//! log blocks and big decoded values are let go by idle iterators (evicted), inflated and
//! decoded again when their turn comes (restored), and handed from iterator to iterator
//! instead of freed (recycled). `TableIter`'s side is here, and the merged iterator's
//! accounting ([`Budget`]).

use super::info::corrupt;
use super::iter::{Reading, State, TableIter};
use super::pool::Pool;
use crate::codec::block::BlockInfo;
use crate::codec::format::BlockType;
use crate::codec::record::Record;
use crate::error::Result;

/// An inflated log block buffer larger than this is let go as soon as the iterator no
/// longer needs it, so idle iterators over big blocks do not hold their memory.
pub(super) const KEEP_INFLATED: usize = 1 << 20;

impl<R: Record> TableIter<R> {
    /// Bytes of inflated log data this iterator holds.
    pub(crate) fn inflated_bytes(&self) -> usize {
        self.inflated.capacity() + self.spare.capacity()
    }

    /// Heap bytes a merged iterator's budget charges this iterator: its inflated log data
    /// and the value of its current record (a reflog message can be as big as its block).
    pub(crate) fn held_bytes(&self) -> usize {
        self.inflated_bytes() + self.rec.value_bytes()
    }

    /// Let go of the inflated log data; the current block is inflated again when the
    /// iterator reads on. For merged iterators keeping memory within a budget.
    pub(crate) fn evict_inflated(&mut self) {
        self.inflated = Vec::new();
        self.spare = Vec::new();
        // A waiting record with a big value (a 16 MiB reflog message) goes too: a merged
        // iterator over many tables then holds one such record, not one per table. An
        // ended iterator's last record, which nothing reads before the next seek, goes
        // whatever its size.
        match &mut self.state {
            State::Ended => self.rec = R::default(),
            State::Peeked { .. } => {}
            State::Reading(r) => {
                if r.block.block_type == BlockType::Log && !self.cursor.at_end(&r.block) {
                    r.block_let_go = true;
                }
                if self.rec.value_bytes() > KEEP_INFLATED {
                    self.rec = R::default();
                    r.value_let_go = true;
                }
            }
        }
    }

    /// Decode the current record again if [`TableIter::evict_inflated`] let its value go
    /// (inflating its block again when that went too), or for the first time if only its
    /// key was peeked.
    #[inline]
    pub(crate) fn restore_current(&mut self) -> Result<()> {
        match &self.state {
            State::Peeked { .. } => self.restore_slow(),
            State::Reading(r) if r.value_let_go => self.restore_slow(),
            _ => Ok(()),
        }
    }

    /// [`TableIter::restore_current`] when there is something to restore.
    #[inline(never)]
    fn restore_slow(&mut self) -> Result<()> {
        match self.state {
            State::Peeked { offset, pending } => self.load_peeked(offset, pending),
            State::Reading(r) => self.decode_again(r),
            State::Ended => Ok(()),
        }
    }

    /// [`TableIter::restore_current`] of a record read from the block of `r`.
    fn decode_again(&mut self, r: Reading) -> Result<()> {
        let info = r.block;
        if r.block_let_go || self.inflated.is_empty() {
            self.reinflate(&info)?;
            self.state = State::Reading(Reading {
                block_let_go: false,
                ..r
            });
        }
        self.cursor
            .redecode(
                &info,
                &self.inflated,
                &mut self.rec,
                &self.ctx,
                &mut self.stats,
            )
            .map_err(|e| e.in_file(self.table.name()))?;
        self.state = State::Reading(Reading {
            block_let_go: false,
            value_let_go: false,
            ..r
        });
        self.release_if_done();
        Ok(())
    }

    /// After a record was decoded from the current block: a big inflated buffer whose block
    /// has no record left is let go right away.
    pub(super) fn release_if_done(&mut self) {
        if let Some(info) = self.block() {
            if info.block_type == BlockType::Log
                && self.inflated.capacity() > KEEP_INFLATED
                && self.cursor.at_end(&info)
            {
                let b = std::mem::take(&mut self.inflated);
                self.let_go(b);
            }
        }
        if self.spare.capacity() > KEEP_INFLATED {
            let b = std::mem::take(&mut self.spare);
            self.let_go(b);
        }
    }

    /// At the iterator's end: it keeps no big value (a merged iterator keeps its finished
    /// tables' iterators); inside [`TableIter::recycle_with`] the record is handed back.
    pub(super) fn release_last(&mut self) {
        if self.rec.value_bytes() > KEEP_INFLATED {
            let r = std::mem::take(&mut self.rec);
            if let Some(pool) = &mut self.pool {
                pool.rec = Some(r);
            }
        }
    }

    /// Inflate the current block again if [`TableIter::evict_inflated`] let it go.
    pub(super) fn restore(&mut self) -> Result<()> {
        let State::Reading(r) = &mut self.state else {
            return Ok(());
        };
        if !std::mem::take(&mut r.block_let_go) {
            return Ok(());
        }
        let info = r.block;
        self.reinflate(&info)
    }

    /// Inflate the current log block `info` again into the iterator's buffer.
    fn reinflate(&mut self, info: &BlockInfo) -> Result<()> {
        if self
            .parse_at(info.offset, Some(BlockType::Log), false)?
            .is_none()
        {
            return Err(corrupt(info.offset, "log block changed while being read"));
        }
        Ok(())
    }

    /// A big buffer this iterator no longer needs: kept for recycling when a merged
    /// iterator asked for that, else freed.
    pub(super) fn let_go(&mut self, b: Vec<u8>) {
        if let Some(pool) = &mut self.pool {
            pool.keep_buf(b);
        }
    }

    /// Swap buffers with a merged iterator's pool around one step of this iterator: hand
    /// in `pool` (used instead of allocating when this iterator inflates a block or
    /// decodes its lazily peeked record), then take back what it let go. The pool keeps
    /// the biggest of each; at most one block and one record beyond what the iterators
    /// hold.
    pub(crate) fn recycle_with<T>(
        &mut self,
        pool: &mut Pool<R>,
        step: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.pool = Some(std::mem::take(pool));
        let r = step(self);
        *pool = self.pool.take().unwrap_or_default();
        r
    }
}

/// A merged iterator's budget: what each of its table iterators holds (inflated log blocks
/// and big decoded values), their sum, and the pool of let-go buffers handed from one
/// table iterator to the next. Past the limit, the idle iterators let theirs go, so memory
/// stays bounded by the budget and one block, not by tables x block size.
#[derive(Debug)]
pub(crate) struct Budget<R: Record> {
    limit: usize,
    /// Bytes each table iterator held after it last moved, and their sum.
    held: Vec<usize>,
    total: usize,
    pool: Pool<R>,
}

impl<R: Record> Budget<R> {
    /// A budget of `limit` bytes for `tables` table iterators, none charged yet.
    pub(crate) fn new(tables: usize, limit: usize) -> Budget<R> {
        Budget {
            limit,
            held: vec![0; tables],
            total: 0,
            pool: Pool::default(),
        }
    }

    /// Table `i`'s iterator was positioned again: it holds nothing charged yet.
    pub(crate) fn forget(&mut self, i: usize) {
        self.total -= self.held[i];
        self.held[i] = 0;
    }

    /// Move table `i`'s iterator to its next record (false at its end), keeping the
    /// inflated data all iterators hold within the budget.
    #[inline(always)]
    pub(crate) fn next_key(&mut self, iters: &mut [TableIter<R>], i: usize) -> Result<bool> {
        if R::BLOCK_TYPE != BlockType::Log {
            // Only log blocks are inflated; other iterators hold nothing to account for.
            return iters[i].next_key();
        }
        let next = iters[i].recycle_with(&mut self.pool, |it| it.next_key())?;
        self.charge(iters, i);
        Ok(next)
    }

    /// Decode table `i`'s current record in full again if its value was let go, or for the
    /// first time if only its key was peeked, and charge what that inflated. Charged even
    /// when nothing was restored: that is where a table that ended is evicted.
    #[inline]
    pub(crate) fn restore(&mut self, iters: &mut [TableIter<R>], i: usize) -> Result<()> {
        if R::BLOCK_TYPE != BlockType::Log {
            // Nothing of a ref or obj iterator is let go or peeked: no pool to hand round.
            return iters[i].restore_current();
        }
        iters[i].recycle_with(&mut self.pool, |it| it.restore_current())?;
        self.charge(iters, i);
        Ok(())
    }

    /// Charge table `i` what its iterator holds now (an ended one too: its last record
    /// until it is evicted). Past the budget, the other iterators let go of their inflated
    /// blocks and big values, and are charged the small record each may keep.
    fn charge(&mut self, iters: &mut [TableIter<R>], i: usize) {
        let now = iters[i].held_bytes();
        self.total = self.total - self.held[i] + now;
        self.held[i] = now;
        if self.total > self.limit {
            for (j, it) in iters.iter_mut().enumerate() {
                if j != i && self.held[j] > 0 {
                    it.evict_inflated();
                    let kept = it.held_bytes();
                    self.total = self.total - self.held[j] + kept;
                    self.held[j] = kept;
                }
            }
        }
    }

    /// What each table iterator is charged, and the sum (for tests of the accounting).
    #[cfg(test)]
    pub(crate) fn charged(&self) -> (&[usize], usize) {
        (&self.held, self.total)
    }
}

#[cfg(test)]
mod tests {
    use crate::codec::record::{LogRecord, Record};
    use crate::table::pool::Pool;
    use crate::table::testing::{log, name_and_size, two_big_log_blocks, write};
    use crate::table::TableIter;
    use crate::WriteOptions;

    /// Small inflated log blocks stay with the iterator after their last record; one over
    /// `KEEP_INFLATED` is let go as soon as its last record is read.
    #[test]
    fn inflated_log_blocks_kept_when_small_released_when_big() {
        let small: Vec<LogRecord> = (0..50)
            .map(|i| log(&format!("refs/heads/b{i:02}"), 200))
            .collect();
        let t = write(&[], &small, WriteOptions::default());
        let mut it = t.logs().unwrap();
        let mut n = 0;
        while it.next_record().unwrap().is_some() {
            n += 1;
            assert!(it.inflated_bytes() > 0);
        }
        assert_eq!(n, 50);
        let opts = WriteOptions {
            block_size: 16_777_215,
            ..WriteOptions::default()
        };
        let t = write(&[], &[log("refs/heads/big", 2 << 20)], opts);
        let mut it = t.logs().unwrap();
        assert!(it.next_record().unwrap().is_some());
        assert_eq!(it.inflated_bytes(), 0);
        assert!(it.next_record().unwrap().is_none());
    }
    /// A record whose value and block were let go is decoded again once, its block
    /// inflated again once: a second restore and the next read redo neither.
    #[test]
    fn a_restore_redoes_the_work_once() {
        let t = two_big_log_blocks();
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek(b"").unwrap();
        assert!(it.next_record().unwrap().is_some());
        let got = name_and_size(it.next_record().unwrap());
        assert_eq!(got.map(|g| g.0), Some("refs/heads/b".to_string()));
        it.evict_inflated();
        assert_eq!(it.held_bytes(), 0, "the big value and its block are let go");
        let before = it.stats();
        it.restore_current().unwrap();
        assert!(name_and_size(Some(it.current())).unwrap().1 >= 2 << 20);
        it.restore_current().unwrap();
        let after = it.stats().since(before);
        assert_eq!((after.records_decoded, after.blocks_inflated), (1, 1));
        let got = name_and_size(it.next_record().unwrap());
        assert_eq!(got.map(|g| g.0), Some("refs/heads/c".to_string()));
        let after = it.stats().since(before);
        assert_eq!((after.records_decoded, after.blocks_inflated), (2, 1));
    }

    /// A seek that probes the next big block and moves on lets the block it left go: the
    /// iterator holds one big block, not two.
    #[test]
    fn a_seek_keeps_one_big_block() {
        let t = two_big_log_blocks();
        let mut key = Vec::new();
        log("refs/heads/b", 0).write_key(&mut key);
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek(&key).unwrap();
        assert_eq!(it.stats().blocks_inflated, 2);
        let held = it.inflated_bytes();
        assert!(held > 2 << 20 && held < 4 << 20, "{held}");
        let got = name_and_size(it.next_record().unwrap());
        assert_eq!(got.map(|g| g.0), Some("refs/heads/b".to_string()));
    }
    /// Inside [`TableIter::recycle_with`] an iterator inflates into the buffer handed in and
    /// hands back the big ones it let go; outside it keeps none of them.
    #[test]
    fn recycled_buffers_go_round() {
        let t = two_big_log_blocks();
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        let mut pool = Pool {
            buf: Vec::with_capacity(5 << 20),
            rec: None,
        };
        let step = |it: &mut TableIter<LogRecord>, pool: &mut Pool<LogRecord>| {
            it.recycle_with(pool, |it| {
                it.next_key()?;
                it.restore_current()?;
                Ok(name_and_size(Some(it.current())))
            })
            .unwrap()
        };
        // The peeked first block is inflated into the 5 MiB buffer handed in, and as its
        // one record is read, the buffer comes back holding the block.
        let (name, size) = step(&mut it, &mut pool).unwrap();
        assert_eq!((name.as_str(), size > 2 << 20), ("refs/heads/a", true));
        assert_eq!(pool.buf.capacity(), 5 << 20);
        assert!(
            pool.buf.len() > 2 << 20,
            "the buffer handed in was used: {}",
            pool.buf.len()
        );
        assert!(pool.rec.is_none());
        // The second block is inflated into it again; it stays while "c" is left.
        let (name, _) = step(&mut it, &mut pool).unwrap();
        assert_eq!(name, "refs/heads/b");
        assert_eq!(pool.buf.capacity(), 0);
        assert_eq!(it.inflated.capacity(), 5 << 20);
        let (name, _) = step(&mut it, &mut pool).unwrap();
        assert_eq!(name, "refs/heads/c");
        assert_eq!(pool.buf.capacity(), 5 << 20);
        assert!(it.pool.is_none());
        // Outside recycle_with nothing is kept for recycling.
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek(b"").unwrap();
        while it.next_record().unwrap().is_some() {}
        assert!(it.pool.is_none());
        assert_eq!(it.inflated_bytes(), 0);
        // At its end, an iterator in recycle_with hands back its big last record.
        let t = write(
            &[],
            &[log("refs/heads/a", 2 << 20)],
            WriteOptions {
                block_size: 3 << 20,
                ..WriteOptions::default()
            },
        );
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek(b"").unwrap();
        assert!(it.next_record().unwrap().is_some());
        let mut pool = Pool::default();
        let more = it.recycle_with(&mut pool, |it| it.next_key());
        assert!(!more.unwrap());
        assert!(pool.rec.is_some_and(|r| r.value_bytes() > 2 << 20));
    }
}
