//! Positioning a table iterator at the first record whose key is at or after a key: a
//! linear seek over the section's blocks (no index, or a full scan), an indexed seek down
//! the index levels, or one binary search in the section's leaf index once it is built. An
//! index is trusted only as far as it can be checked on the way.

use super::info::corrupt;
use super::iter::{block_data, Reading, State, TableIter};
use crate::codec::block::{BlockCursor, BlockInfo};
use crate::codec::format::BlockType;
use crate::codec::record::{IndexRecord, Record};
use crate::error::Result;
use crate::leaf_index::LeafIndex;
use crate::stats::Stats;

impl<R: Record> TableIter<R> {
    /// Position the iterator at the first record whose key is `>= key` again, reusing its
    /// buffers (a caller that seeks many times keeps one iterator). After an error the
    /// iterator ends.
    ///
    /// ```
    /// # use reftable::{ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
    /// # let mut w = Writer::new(Vec::new(), WriteOptions::default());
    /// # w.set_limits(1, 1).unwrap();
    /// # let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// # for n in ["refs/heads/a", "refs/heads/b", "refs/tags/v1"] {
    /// #     w.add_ref(&RefRecord::new(n, 1, RefValue::Object(id))).unwrap();
    /// # }
    /// # let table = Table::from_bytes("t.ref", w.finish().unwrap()).unwrap();
    /// let mut it = table.seek_ref(b"refs/heads/b").unwrap();
    /// assert_eq!(it.next_record().unwrap().unwrap().refname, b"refs/heads/b");
    /// it.seek(b"refs/tags/").unwrap();
    /// assert_eq!(it.next_record().unwrap().unwrap().refname, b"refs/tags/v1");
    /// ```
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.state = State::Ended;
        let table = self.table.clone();
        let sec = *table.section_of::<R>()?;
        if !sec.present {
            return Ok(());
        }
        // A full scan starts at the section start, never through the index: a damaged
        // index cannot hide records from it or add some.
        let r = if sec.index_offset != 0 && !key.is_empty() {
            match table.leaf_index::<R>(sec.index_offset) {
                Some(leaf) => self.leaf_seek(leaf, key),
                None => self.indexed_seek(sec.index_offset, key),
            }
        } else {
            self.linear_seek(sec.offset, key)
        };
        if r.is_err() {
            self.state = State::Ended;
        }
        r.map_err(|e| table.err(e))
    }

    /// Make the first block of the section at `offset` current.
    pub(super) fn start_section(&mut self, offset: u64) -> Result<()> {
        if offset >= self.table.info().footer_offset {
            return Err(corrupt(offset, "section offset points past the last block"));
        }
        self.load_block_at(offset, Some(R::BLOCK_TYPE))?;
        Ok(())
    }

    /// Make the ref block at `offset` current, for obj index lookups.
    pub(super) fn load_single_block(&mut self, offset: u64) -> Result<()> {
        match self.load_block_at(offset, Some(R::BLOCK_TYPE))? {
            Some(_) => Ok(()),
            None => Err(corrupt(
                offset,
                "obj record points at an offset that is not a ref block",
            )),
        }
    }

    /// Seek by reading the first key of each block of the section in turn.
    fn linear_seek(&mut self, offset: u64, key: &[u8]) -> Result<()> {
        self.start_section(offset)?;
        let Some(cur) = self.block() else {
            return Ok(());
        };
        self.linear_seek_from(cur, key)
    }

    /// Linear seek from the loaded block `cur`: move on while the next block's first key is
    /// not past `key`, then binary-search inside the block.
    fn linear_seek_from(&mut self, mut cur: BlockInfo, key: &[u8]) -> Result<()> {
        loop {
            let next_off = cur.offset + cur.full_size as u64;
            let Some(next) = self.parse_at(next_off, Some(R::BLOCK_TYPE), true)? else {
                break;
            };
            let data = block_data(&self.table, &next, &self.spare);
            let c = &mut self.probe;
            c.reset(&next);
            if !c.next(&next, data, &mut self.rec, &self.ctx, &mut self.stats)? {
                break;
            }
            self.stats.key_comparisons += 1;
            if c.key() > key {
                break;
            }
            cur = next;
            std::mem::swap(&mut self.inflated, &mut self.spare);
        }
        self.state = State::Reading(Reading::new(cur));
        self.seek_in_block(&cur, key)
    }

    /// Binary-search the current block `info` for `key`: the record found, if any, is
    /// returned by the next read.
    fn seek_in_block(&mut self, info: &BlockInfo, key: &[u8]) -> Result<()> {
        let data = block_data(&self.table, info, &self.inflated);
        let found = self
            .cursor
            .seek(info, data, key, &mut self.rec, &self.ctx, &mut self.stats)?;
        if let State::Reading(r) = &mut self.state {
            r.pending = found;
        }
        self.release_if_done();
        Ok(())
    }

    /// Seek through the in-memory leaf index: one binary search, then one block.
    fn leaf_seek(&mut self, leaf: &LeafIndex, key: &[u8]) -> Result<()> {
        let Some((offset, bound)) = leaf.find(key, &mut self.stats) else {
            return Ok(());
        };
        match self.load_block_at(offset, Some(R::BLOCK_TYPE))? {
            Some(b) => {
                self.seek_in_block(&b, key)?;
                self.check_bound(&b, bound)
            }
            None => Err(corrupt(
                offset,
                "index entry points at a block of another section",
            )),
        }
    }

    /// After an indexed seek landed in `b`: the index entry that led there has the block's
    /// last key, which is at or after the key sought, so the seek must have found a record
    /// (else the entry points at an earlier block, and the records after it would come out
    /// as if they were the ones sought) and that record cannot be past the entry's key (else
    /// the entry points at a later block and the records in between would be skipped).
    fn check_bound(&mut self, b: &BlockInfo, bound: &[u8]) -> Result<()> {
        let pending = matches!(self.state, State::Reading(Reading { pending: true, .. }));
        let problem = if !pending {
            Some("index entry points at a block of keys before the key sought")
        } else {
            self.stats.key_comparisons += 1;
            (self.cursor.key() > bound)
                .then_some("index entry points at a block of keys past the entry's own key")
        };
        if let Some(why) = problem {
            self.state = State::Ended;
            return Err(corrupt(b.offset, why));
        }
        Ok(())
    }

    /// Seek through the index: scan the root level, then descend one block per level.
    fn indexed_seek(&mut self, index_offset: u64, key: &[u8]) -> Result<()> {
        let Some(mut idx) = self.root_entry(index_offset, key)? else {
            return Ok(());
        };
        // Only the offsets of index entries are needed on the way down.
        let mut parent = index_offset;
        let mut entry = IndexRecord::default();
        loop {
            // Lower levels and data blocks are written before the level that points at them:
            // an index entry pointing forward is corrupt (and would allow cycles).
            if idx >= parent {
                return Err(corrupt(
                    parent,
                    format!(
                        "index entry points at offset {idx} which is not before its index block"
                    ),
                ));
            }
            let Some(b) = self.load_block_at(idx, None)? else {
                return Err(corrupt(idx, "index entry points past the last block"));
            };
            if b.block_type != BlockType::Index {
                return self.seek_in_leaf_block(&b, key);
            }
            self.descend(&b, key, &mut entry)?;
            parent = b.offset;
            idx = entry.offset;
        }
    }

    /// The offset the root level of the index at `index_offset` gives for `key` (`None`:
    /// past every key), its entry's key kept in `self.bound`.
    fn root_entry(&mut self, index_offset: u64, key: &[u8]) -> Result<Option<u64>> {
        let mut root = TableIter::<IndexRecord>::new(self.table.clone());
        let found = (|| -> Result<Option<u64>> {
            if index_offset >= root.table.info().footer_offset {
                return Err(corrupt(
                    index_offset,
                    "index offset points past the last block",
                ));
            }
            let Some(first) = root.load_block_at(index_offset, Some(BlockType::Index))? else {
                return Err(corrupt(
                    index_offset,
                    "index offset does not point at an index block",
                ));
            };
            // The root level is a few consecutive index blocks: pick the block by first keys,
            // then binary-search its restart points, as in any other section.
            root.linear_seek_from(first, key)?;
            Ok(root.next_record()?.map(|r| {
                self.bound.clear();
                self.bound.extend_from_slice(&r.last_key);
                r.offset
            }))
        })();
        self.stats += root.stats;
        root.stats = Stats::default();
        found
    }

    /// One level down: the entry of index block `b` for `key`, into `entry`, checked
    /// against its parent entry's key (`self.bound`, then this entry's).
    fn descend(&mut self, b: &BlockInfo, key: &[u8], entry: &mut IndexRecord) -> Result<()> {
        let data = block_data(&self.table, b, &self.inflated);
        let mut c = BlockCursor::default();
        if !c.seek(b, data, key, entry, &self.ctx, &mut self.stats)? {
            return Err(corrupt(
                b.offset,
                "index block has no key at or after one its parent entry promised",
            ));
        }
        self.stats.key_comparisons += 1;
        if entry.last_key > self.bound {
            return Err(corrupt(
                b.offset,
                "index entry points at a block of keys past the entry's own key",
            ));
        }
        self.bound.clear();
        self.bound.extend_from_slice(&entry.last_key);
        Ok(())
    }

    /// The bottom of an indexed seek: `b` must be a block of this section, holding `key`'s
    /// place within the bound of the entry that led there.
    fn seek_in_leaf_block(&mut self, b: &BlockInfo, key: &[u8]) -> Result<()> {
        if b.block_type != R::BLOCK_TYPE {
            return Err(corrupt(
                b.offset,
                format!(
                    "index entry points at a '{}' block inside the '{}' section",
                    b.block_type.byte() as char,
                    R::BLOCK_TYPE.byte() as char
                ),
            ));
        }
        self.seek_in_block(b, key)?;
        let bound = std::mem::take(&mut self.bound);
        let r = self.check_bound(b, &bound);
        self.bound = bound;
        r
    }
}
