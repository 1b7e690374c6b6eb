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

#[cfg(test)]
mod tests {
    use crate::codec::record::RefRecord;
    use crate::table::open::LEAF_INDEX_AFTER;
    use crate::table::testing::{refs, write};
    use crate::table::Table;
    use crate::WriteOptions;

    /// After [`LEAF_INDEX_AFTER`] indexed seeks a section's leaf index is built once and
    /// answers exactly what the block-by-block descent did, for every name present and
    /// absent (a multi-level index: 256-byte blocks), with one block read per lookup.
    #[test]
    fn leaf_index_answers_as_the_descent_does() {
        let all = refs(3000);
        let opts = WriteOptions {
            block_size: 256,
            ..WriteOptions::default()
        };
        let t = write(&all, &[], opts);
        let mut names: Vec<Vec<u8>> = Vec::new();
        for r in &all {
            names.push(r.refname.clone());
            let mut after = r.refname.clone();
            after.push(b'x');
            names.push(after);
        }
        names.push(b"a".to_vec());
        names.push(b"zzz".to_vec());
        let lookup = |t: &Table, n: &[u8]| {
            let mut it = t.seek_ref(n).unwrap();
            let first = it.next_record().unwrap().map(|r| r.refname.clone());
            (first, it.stats())
        };
        // Before: the descent (the first seeks only count towards the threshold).
        let descent: Vec<_> = names.iter().map(|n| lookup(&t, n)).collect();
        assert!(
            t.stats().index_entries_cached > 0,
            "built after enough seeks"
        );
        let cached = t.stats().index_entries_cached;
        let fresh = write(&all, &[], opts);
        // Exactly LEAF_INDEX_AFTER seeks descend block by block; the next one builds it.
        for k in 0..=LEAF_INDEX_AFTER {
            let built = fresh.stats().index_entries_cached;
            assert_eq!(built, 0, "leaf index built before indexed seek {k}");
            lookup(&fresh, b"refs/heads/b00000");
        }
        assert_eq!(
            fresh.stats().index_entries_cached,
            cached,
            "built by seek {LEAF_INDEX_AFTER}"
        );
        for (n, (want, slow)) in names.iter().zip(&descent) {
            let (got, fast) = lookup(&fresh, n);
            assert_eq!(&got, want, "{}", String::from_utf8_lossy(n));
            assert!(fast.blocks_read <= 1, "{fast:?} vs {slow:?}");
            assert!(fast.blocks_read < slow.blocks_read || slow.blocks_read <= 1);
        }
        // Built once per table.
        assert_eq!(fresh.stats().index_entries_cached, cached);
    }
    /// Seeking through a multi-level index: each index level costs a binary search in its
    /// block and one comparison against the parent entry's key, and the ref block one
    /// more (its first key against the entry's). Exact totals of the work, as the
    /// complexity baseline holds them, for fewer seeks than build the leaf index.
    #[test]
    fn indexed_seek_comparisons() {
        let opts = WriteOptions {
            block_size: 256,
            ..WriteOptions::default()
        };
        let all = refs(3000);
        let t = write(&all, &[], opts);
        assert_ne!(t.info().refs.index_offset, 0);
        let before = t.stats();
        let picked: Vec<&RefRecord> = all.iter().step_by(50).collect();
        assert!(picked.len() as u32 <= LEAF_INDEX_AFTER);
        for r in &picked {
            let mut it = t.seek_ref(&r.refname).unwrap();
            assert_eq!(it.next_record().unwrap().unwrap().refname, r.refname);
        }
        let work = t.stats().since(before);
        assert_eq!(work.index_entries_cached, 0, "no leaf index yet");
        assert_eq!((work.blocks_read, work.key_comparisons), (180, 1481));
    }
    /// Seeking without an index walks the blocks: one key comparison per block start it
    /// looks at, then a binary search inside the block.
    #[test]
    fn linear_seek_comparisons() {
        let opts = WriteOptions {
            block_size: 1024,
            ..WriteOptions::default()
        };
        let t = write(&refs(60), &[], opts);
        assert_eq!(t.info().refs.index_offset, 0, "no index: a linear seek");
        let before = t.stats();
        {
            let mut it = t.seek_ref(b"refs/heads/b00059").unwrap();
            assert_eq!(
                it.next_record().unwrap().unwrap().refname,
                b"refs/heads/b00059"
            );
        }
        assert_eq!(t.stats().since(before).key_comparisons, 8);
        // Every key, block starts included: exact totals of the work.
        let before = t.stats();
        for r in refs(60) {
            let mut it = t.seek_ref(&r.refname).unwrap();
            assert_eq!(it.next_record().unwrap().unwrap().refname, r.refname);
        }
        let all = t.stats().since(before);
        assert_eq!((all.blocks_read, all.key_comparisons), (120, 624));
    }
    /// An index entry moved to point at the next block, or back at the previous one: a
    /// lookup of a key of the block it should point at is an error, through the index blocks and through the in-memory leaf
    /// index alike, never a silent "not found".
    #[test]
    fn an_index_entry_pointing_at_a_later_block_is_corrupt() {
        use crate::codec::record::IndexRecord;
        use crate::codec::varint;
        let opts = WriteOptions {
            block_size: 256,
            ..WriteOptions::default()
        };
        let t = write(&refs(200), &[], opts);
        let index = t.info().refs.index_offset;
        assert!(index > 0, "the table has a ref index");
        // The index block's first two entries: their record offsets and block pointers.
        let mut entries = Vec::new();
        let mut walk = t.blocks();
        while let Some(b) = walk.next_block() {
            let (info, data) = b.unwrap();
            if info.offset == index {
                crate::walk::for_each_record::<IndexRecord>(&info, data, &t.codec_context(), |r| {
                    entries.push((
                        info.offset as usize + r.offset,
                        r.rec.offset,
                        r.rec.last_key.clone(),
                    ))
                });
            }
        }
        // Entry 1 points at the second block (offset 256); make it point at the third,
        // whose offset has a varint of the same length.
        let (at, ptr, key) = entries[1].clone();
        let next_ptr = entries[2].1;
        let mut bytes = t.bytes().to_vec();
        // The value varint follows the key: prefix length, suffix length and type, suffix.
        let (prefix, l1) = varint::get(&bytes[at..]).unwrap();
        let (_, l2) = varint::get(&bytes[at + l1..]).unwrap();
        let ptr_at = at + l1 + l2 + key.len() - prefix as usize;
        assert_eq!(varint::get(&bytes[ptr_at..]).unwrap(), (ptr, 2));
        let mut enc = Vec::new();
        varint::put(&mut enc, next_ptr);
        assert_eq!(enc.len(), 2);
        bytes[ptr_at..ptr_at + 2].copy_from_slice(&enc);
        let damaged = Table::from_bytes("t.ref", bytes.clone()).unwrap();
        // The first key of the second block: just past entry 0's key.
        let victim = refs(200)
            .into_iter()
            .map(|r| r.refname)
            .find(|n| n[..] > entries[0].2[..])
            .unwrap();
        assert!(t.read_ref(&victim).unwrap().is_some());
        for round in 0..(LEAF_INDEX_AFTER + 2) {
            let r = damaged.read_ref(&victim);
            assert!(r.is_err(), "lookup {round}: {r:?}");
        }
        // Entry 2 pointing back at the second block (as entry 1 does): a lookup of a key
        // of the third block would otherwise start in the second and take the third's
        // first record for the answer.
        let (at2, ptr2, key2) = entries[2].clone();
        let mut bytes = t.bytes().to_vec();
        let (prefix, l1) = varint::get(&bytes[at2..]).unwrap();
        let (_, l2) = varint::get(&bytes[at2 + l1..]).unwrap();
        let ptr_at = at2 + l1 + l2 + key2.len() - prefix as usize;
        assert_eq!(varint::get(&bytes[ptr_at..]).unwrap(), (ptr2, 2));
        let mut enc = Vec::new();
        varint::put(&mut enc, ptr);
        bytes[ptr_at..ptr_at + 2].copy_from_slice(&enc);
        let damaged = Table::from_bytes("t.ref", bytes).unwrap();
        let victim = refs(200)
            .into_iter()
            .map(|r| r.refname)
            .filter(|n| n[..] > entries[1].2[..])
            .nth(1)
            .unwrap();
        assert!(t.read_ref(&victim).unwrap().is_some());
        for round in 0..(LEAF_INDEX_AFTER + 2) {
            let r = damaged.read_ref(&victim);
            assert!(r.is_err(), "lookup {round} of a later block's key: {r:?}");
        }
    }
}
