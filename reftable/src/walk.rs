//! Walking a table block by block and a block record by record, with the offsets of each:
//! what inspection and verification tools need (`reftable dump`, `reftable verify`), where
//! the ordinary iterators hide the layout.
//!
//! ```
//! use reftable::{ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
//! use reftable::walk::for_each_record;
//!
//! let mut w = Writer::new(Vec::new(), WriteOptions::default());
//! w.set_limits(1, 1).unwrap();
//! let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
//! w.add_ref(&RefRecord::new("refs/heads/main", 1, RefValue::Object(id))).unwrap();
//! let table = Table::from_bytes("t.ref", w.finish().unwrap()).unwrap();
//!
//! let mut walk = table.blocks();
//! while let Some(block) = walk.next_block() {
//!     let (info, data) = block.unwrap();
//!     let problem = for_each_record::<RefRecord>(&info, data, &table.codec_context(), |r| {
//!         assert_eq!(r.offset, 24 + 4); // after the file header and the block header
//!         assert_eq!(r.key, b"refs/heads/main");
//!     });
//!     assert!(problem.is_none());
//! }
//! ```

use crate::codec::block::{parse_block, BlockInfo};
use crate::codec::format::BlockType;
use crate::codec::record::{self, CodecContext, Record};
use crate::stats::Stats;
use crate::table::Table;
use crate::Result;

/// Walks the blocks of a table in file order. Each log block is inflated once, into a buffer
/// the walk reuses.
#[derive(Debug)]
pub struct BlockWalk {
    table: Table,
    offset: u64,
    done: bool,
    inflated: Vec<u8>,
    stats: Stats,
}

impl Table {
    /// Every block of the file in order, for inspection and verification. (Defined here,
    /// with the walk: the inspection layer sits on top of the table reader.)
    pub fn blocks(&self) -> BlockWalk {
        BlockWalk::new(self.clone())
    }
}

impl BlockWalk {
    /// A walk over `table`'s blocks (also [`Table::blocks`]).
    pub fn new(table: Table) -> BlockWalk {
        BlockWalk {
            table,
            offset: 0,
            done: false,
            inflated: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// Walk `table` from its first block, keeping this walk's inflate buffer (and its
    /// counters): walking many tables with one walk allocates that buffer once.
    ///
    /// ```
    /// # use reftable::{ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
    /// # let table = |n: &str| {
    /// #     let mut w = Writer::new(Vec::new(), WriteOptions::default());
    /// #     w.set_limits(1, 1).unwrap();
    /// #     let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// #     w.add_ref(&RefRecord::new(n, 1, RefValue::Object(id))).unwrap();
    /// #     Table::from_bytes("t.ref", w.finish().unwrap()).unwrap()
    /// # };
    /// let mut walk = table("refs/heads/a").blocks();
    /// assert_eq!(walk.by_ref().count(), 1);
    /// walk.restart(table("refs/heads/b"));
    /// assert_eq!(walk.count(), 1);
    /// ```
    pub fn restart(&mut self, table: Table) {
        self.table = table;
        self.offset = 0;
        self.done = false;
    }

    /// The next block and its bytes from the block start to `block_len` (for log blocks the
    /// header followed by the inflated contents), borrowed until the next call. After an
    /// error the walk ends.
    pub fn next_block(&mut self) -> Option<Result<(BlockInfo, &[u8])>> {
        let info = *self.table.info();
        // A table of only a header and a footer (92 bytes for version 1, which git
        // accepts) has no block at all.
        let empty = info.footer_offset <= info.header_size() as u64;
        if self.done || empty {
            return None;
        }
        let (data, header_off) = self.table.blocks_from(self.offset)?;
        match parse_block(
            data,
            self.offset,
            header_off,
            info.block_size as usize,
            None,
            &mut self.inflated,
            &mut self.stats,
        ) {
            Ok(Some(b)) => {
                self.offset += b.full_size as u64;
                let bytes = if b.block_type == BlockType::Log {
                    &self.inflated[..]
                } else {
                    let start = b.offset as usize;
                    &self.table.bytes()[start..start + b.block_len]
                };
                Some(Ok((b, bytes)))
            }
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e.in_file(self.table.name())))
            }
        }
    }

    /// What the walk has read so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }
}

impl Iterator for BlockWalk {
    type Item = Result<BlockInfo>;

    fn next(&mut self) -> Option<Result<BlockInfo>> {
        self.next_block().map(|r| r.map(|(info, _)| info))
    }
}

/// One decoded record and where it is.
#[derive(Debug)]
#[non_exhaustive]
pub struct DecodedRecord<'a, R> {
    /// Offset of the record within the block (from the block start; inflated for log blocks).
    pub offset: usize,
    /// Bytes of the key shared with the previous record.
    pub prefix_len: usize,
    /// The 3-bit value type.
    pub value_type: u8,
    /// The full key.
    pub key: &'a [u8],
    /// The record.
    pub rec: &'a R,
}

/// Decode the records of a block (`data` as [`BlockWalk::next_block`] gives it) in order,
/// calling `f` for each. Returns the offset within the block and the message of the first
/// record that cannot be decoded, if any; records after it are not visited. The key and
/// record are reused between calls, so memory stays bounded by the block size.
pub fn for_each_record<R: Record>(
    info: &BlockInfo,
    data: &[u8],
    ctx: &CodecContext,
    f: impl FnMut(DecodedRecord<'_, R>),
) -> Option<(usize, &'static str)> {
    for_each_record_in(info, data, ctx, &mut R::default(), f)
}

/// [`for_each_record`] decoding into `rec`, whose buffers are reused: a caller visiting
/// many blocks of big reflog messages keeps one record for all of them.
pub fn for_each_record_in<R: Record>(
    info: &BlockInfo,
    data: &[u8],
    ctx: &CodecContext,
    rec: &mut R,
    mut f: impl FnMut(DecodedRecord<'_, R>),
) -> Option<(usize, &'static str)> {
    let end = info.restart_off.min(data.len());
    let mut pos = info.records_start();
    let mut key = Vec::new();
    while pos < end {
        let h = match record::decode_key(&data[pos..end], &mut key) {
            Ok(h) => h,
            Err(m) => return Some((pos, m)),
        };
        let vstart = pos + h.len();
        let n = match rec.decode(&key, h.value_type, &data[vstart..end], ctx) {
            Ok(n) => n,
            Err(m) => return Some((pos, m)),
        };
        f(DecodedRecord {
            offset: pos,
            prefix_len: h.prefix_len,
            value_type: h.value_type,
            key: &key,
            rec,
        });
        pos = vstart + n;
    }
    None
}

/// The restart offsets of a block (relative to the block start), unchecked.
pub fn restarts(info: &BlockInfo, data: &[u8]) -> Vec<usize> {
    (0..info.restart_count)
        .map(|i| info.restart(data, i))
        .collect()
}

/// Where a position inside a block is, for messages: the file offset for blocks stored as is,
/// or the log block's offset and a prefix naming the position in its inflated contents.
pub fn locate(info: &BlockInfo, at: usize) -> (u64, String) {
    if info.block_type == BlockType::Log {
        (info.offset, format!("log block, inflated offset {at}: "))
    } else {
        (info.offset + at as u64, String::new())
    }
}

#[cfg(test)]
mod tests {
    use crate::{ObjectId, RefRecord, RefValue, Table, WriteOptions, Writer};

    fn table(names: &[&str], block_size: u32) -> Table {
        let mut w = Writer::new(
            Vec::new(),
            WriteOptions {
                block_size,
                ..WriteOptions::default()
            },
        );
        w.set_limits(1, 1).unwrap();
        let id = ObjectId::from_bytes(&[3; 20]).unwrap();
        for n in names {
            w.add_ref(&RefRecord::new(*n, 1, RefValue::Object(id)))
                .unwrap();
        }
        Table::from_bytes("t.ref", w.finish().unwrap()).unwrap()
    }

    /// A walk restarted on another table walks that table from its first block.
    #[test]
    fn a_restarted_walk_walks_the_new_table() {
        let names: Vec<String> = (0..200).map(|i| format!("refs/heads/b{i:04}")).collect();
        let many: Vec<&str> = names.iter().map(String::as_str).collect();
        let big = table(&many, 256);
        let small = table(&["refs/heads/a"], 256);
        let offsets = |t: &Table| -> Vec<u64> { t.blocks().map(|b| b.unwrap().offset).collect() };
        let mut walk = small.blocks();
        assert_eq!(walk.by_ref().count(), 1);
        walk.restart(big.clone());
        let again: Vec<u64> = walk.by_ref().map(|b| b.unwrap().offset).collect();
        assert_eq!(again, offsets(&big));
        assert!(again.len() > 10);
        walk.restart(small.clone());
        assert_eq!(
            walk.map(|b| b.unwrap().offset).collect::<Vec<_>>(),
            offsets(&small)
        );
    }

    /// Every record of a block is visited once, in key order, decoded into the one record
    /// given; a position in a ref block is located at the block's offset plus the position.
    #[test]
    fn a_blocks_records_in_order_and_where_they_are() {
        let t = table(&["refs/heads/a", "refs/heads/b", "refs/tags/c"], 4096);
        let ctx = t.codec_context();
        let mut walk = t.blocks();
        let (info, data) = walk.next_block().unwrap().unwrap();
        let mut seen = Vec::new();
        let mut rec = RefRecord::default();
        let err = super::for_each_record_in(&info, data, &ctx, &mut rec, |d| {
            seen.push((d.offset, d.key.to_vec(), d.rec.refname.clone()));
        });
        assert!(err.is_none());
        let keys: Vec<&[u8]> = seen.iter().map(|(_, k, _)| k.as_slice()).collect();
        assert_eq!(
            keys,
            [&b"refs/heads/a"[..], b"refs/heads/b", b"refs/tags/c"]
        );
        assert!(seen.iter().all(|(_, k, name)| k == name));
        assert_eq!(seen[0].0, info.records_start());
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0));
        let (at, prefix) = super::locate(&info, seen[1].0);
        assert_eq!((at, prefix.as_str()), (info.offset + seen[1].0 as u64, ""));
    }
}
