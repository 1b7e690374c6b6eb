//! The leaf level of a section's index, decoded once and searched in memory.
//!
//! A seek through a table's index reads the root index block, one block per lower level,
//! and scans part of each. A table that is looked up many times (a big table in a
//! long-lived process) is better served by a sorted array of the leaf entries, the last key
//! of every block with its offset: a lookup is then one binary search in memory and one
//! block. [`crate::table::Table`] builds it after a number of indexed seeks, so processes
//! that look up a few names never pay for it.
//!
//! Building walks the whole index with the checks an indexed seek makes (an entry points
//! before its own block, only index blocks and the section's blocks are reached) and more: a
//! block reached twice, or leaves whose keys or offsets do not increase, make the index
//! unusable here. The caller then keeps seeking block by block, so a damaged index fails
//! the lookups it fails today and no others. The work is bounded by the number of blocks:
//! every block is visited at most once.

use std::collections::HashSet;

use crate::codec::block::{parse_block, BlockCursor, BlockInfo};
use crate::codec::format::BlockType;
use crate::codec::record::{CodecContext, IndexRecord};
use crate::stats::Stats;

/// The leaf entries of one section's index, in key order.
#[derive(Debug, Default)]
pub(crate) struct LeafIndex {
    /// Every leaf key, concatenated.
    keys: Vec<u8>,
    /// Where each key ends in `keys`.
    ends: Vec<usize>,
    /// The block each entry points at.
    blocks: Vec<u64>,
}

/// What [`LeafIndex::build`] reads: a table's blocks and how to decode them.
pub(crate) struct Source<'a> {
    /// The table's bytes up to the footer.
    pub(crate) blocks: &'a [u8],
    /// Header size (the first block starts after it).
    pub(crate) header_size: usize,
    /// The header's block size.
    pub(crate) block_size: usize,
    /// The section's own block type.
    pub(crate) section: BlockType,
    /// Codec context of the table.
    pub(crate) ctx: &'a CodecContext,
}

impl LeafIndex {
    /// Number of leaf entries.
    pub(crate) fn len(&self) -> usize {
        self.blocks.len()
    }

    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.keys[start..self.ends[i]]
    }

    /// The block holding the first key `>= want`: the first entry whose (last) key is not
    /// smaller. `None` when every key of the section is smaller.
    pub(crate) fn find(&self, want: &[u8], stats: &mut Stats) -> Option<(u64, &[u8])> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            stats.key_comparisons += 1;
            if self.key(mid) < want {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.blocks.get(lo).map(|&b| (b, self.key(lo)))
    }

    /// Walk the index whose root level starts at `root`; `None` when it is not a well-formed
    /// tree over increasing leaves (the caller keeps seeking block by block).
    pub(crate) fn build(src: &Source<'_>, root: u64, stats: &mut Stats) -> Option<LeafIndex> {
        let mut out = LeafIndex::default();
        let mut seen = HashSet::new();
        // The root level: consecutive index blocks from `root`.
        let mut root_blocks = Vec::new();
        let mut at = root;
        while let Some(b) = index_block(src, at, stats) {
            root_blocks.push(b);
            at = b.offset + b.full_size as u64;
        }
        if root_blocks.is_empty() {
            return None;
        }
        // Depth first, in key order, with an explicit stack of index blocks being read.
        let mut stack: Vec<(BlockInfo, BlockCursor)> = Vec::new();
        for b in root_blocks.into_iter().rev() {
            let mut c = BlockCursor::default();
            c.reset(&b);
            stack.push((b, c));
        }
        let mut rec = IndexRecord::default();
        while let Some((b, mut c)) = stack.pop() {
            let data = &src.blocks[b.offset as usize..b.offset as usize + b.block_len];
            if !c.next(&b, data, &mut rec, src.ctx, stats).ok()? {
                continue;
            }
            let child = rec.offset;
            // Entries point before their own block (lower levels are written first), and a
            // tree reaches each block once.
            if child >= b.offset || !seen.insert(child) {
                return None;
            }
            stack.push((b, c));
            match block_type(src, child)? {
                BlockType::Index => {
                    let cb = index_block(src, child, stats)?;
                    let mut cc = BlockCursor::default();
                    cc.reset(&cb);
                    stack.push((cb, cc));
                }
                t if t == src.section => {
                    let key = rec.last_key.as_slice();
                    let increasing = out.blocks.last().map_or(true, |&last| child > last)
                        && (out.len() == 0 || out.key(out.len() - 1) < key);
                    if !increasing {
                        return None;
                    }
                    out.keys.extend_from_slice(key);
                    out.ends.push(out.keys.len());
                    out.blocks.push(child);
                }
                _ => return None,
            }
        }
        (out.len() > 0).then_some(out)
    }
}

/// The type byte of the block at `offset` (a leaf is only looked at this far: the seek
/// that uses it parses it, with every check).
fn block_type(src: &Source<'_>, offset: u64) -> Option<BlockType> {
    let header_off = if offset == 0 { src.header_size } else { 0 };
    BlockType::from_byte(*src.blocks.get(offset as usize + header_off)?)
}

/// The index block at `offset`, parsed (index blocks are never compressed).
fn index_block(src: &Source<'_>, offset: u64, stats: &mut Stats) -> Option<BlockInfo> {
    let data = src.blocks.get(offset as usize..)?;
    let header_off = if offset == 0 { src.header_size } else { 0 };
    let mut unused = Vec::new();
    parse_block(
        data,
        offset,
        header_off,
        src.block_size,
        Some(BlockType::Index),
        &mut unused,
        stats,
    )
    .ok()
    .flatten()
}
