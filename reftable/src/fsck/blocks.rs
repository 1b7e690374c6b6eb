//! Per-block checks: block types, lengths, padding, log blocks git cannot read, and the
//! restart table against the records found.

use std::collections::BTreeMap;

use super::checker::{SectionRange, TableChecker};
use super::finding::FindingKind;
use crate::codec::block::BlockInfo;
use crate::codec::format::BlockType;
use crate::walk::{self, BlockWalk};

impl TableChecker<'_> {
    /// Walk the blocks once: the checks that need only the block itself, then its records
    /// (each log block is inflated once). `sections` are the ranges the footer gives. Returns
    /// the blocks and whether the walk reached the footer.
    pub(super) fn walk(&mut self, sections: &[SectionRange]) -> (Vec<BlockInfo>, bool) {
        let mut walk = self.s.take_walk(self.t);
        let r = self.walk_with(&mut walk, sections);
        self.s.keep_walk(walk);
        r
    }

    fn walk_with(
        &mut self,
        walk: &mut BlockWalk,
        sections: &[SectionRange],
    ) -> (Vec<BlockInfo>, bool) {
        let i = *self.t.info();
        let table = self.t.clone();
        let bytes = table.bytes();
        let mut blocks = Vec::new();
        let mut orders = BTreeMap::new();
        while let Some(next) = walk.next_block() {
            let (b, data) = match next {
                Ok(x) => x,
                Err(e) => {
                    self.r.error(&e);
                    return (blocks, false);
                }
            };
            let tn = b.block_type.byte() as char;
            if b.restart_count == 0 {
                self.r.at(
                    FindingKind::Block,
                    b.offset + b.header_off as u64,
                    format!("'{tn}' block has no restart points (git 2.47 aborts reading it)"),
                );
            }
            if b.block_type == BlockType::Log {
                let reads = (if i.block_size == 0 {
                    4096
                } else {
                    i.block_size as usize
                })
                .max(b.block_len);
                let extent = b.header_off + 4 + b.compressed_len;
                if extent > reads {
                    self.r.at(
                        FindingKind::UnreadableByGit,
                        b.offset,
                        format!(
                            "log block's compressed data ends {extent} bytes from the block start, \
                             past the {reads} bytes git reads (max of block size and block_len): \
                             git cannot read this block"
                        ),
                    );
                }
            } else {
                if b.full_size < b.block_len {
                    self.r.at(
                        FindingKind::Block,
                        b.offset + b.header_off as u64 + 1,
                        format!(
                            "block_len {} is larger than the block size {}: the next block \
                             would start inside this one",
                            b.block_len, i.block_size
                        ),
                    );
                }
                let start = b.offset as usize + b.block_len;
                let end = (b.offset as usize + b.full_size).min(i.footer_offset as usize);
                if start < end {
                    if let Some(k) = bytes[start..end].iter().position(|&c| c != 0) {
                        self.r.at(
                            FindingKind::Block,
                            (start + k) as u64,
                            format!(
                                "non-NUL byte 0x{:02x} in the padding after a '{tn}' block",
                                bytes[start + k]
                            ),
                        );
                    }
                }
            }
            self.records(&b, data, sections, &mut orders);
            blocks.push(b);
        }
        (blocks, true)
    }

    /// Check the restart table against the record starts found (`starts`: offset and whether
    /// the record's prefix length is 0). `failed_at`: where decoding stopped, if it did.
    pub(super) fn restarts(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        starts: &[(usize, bool)],
        failed_at: Option<usize>,
    ) {
        let decoded_to = failed_at.unwrap_or(b.restart_off);
        let mut prev = None;
        for (i, r) in walk::restarts(b, data).into_iter().enumerate() {
            let entry = b.restart_off + 3 * i;
            if r < b.records_start() || r >= b.restart_off {
                self.r.in_block(
                    FindingKind::Block,
                    b,
                    entry,
                    &format!(
                        "restart offset {r} is outside the records ({}..{})",
                        b.records_start(),
                        b.restart_off
                    ),
                );
                continue;
            }
            if prev.is_some_and(|p| r <= p) {
                self.r.in_block(
                    FindingKind::Block,
                    b,
                    entry,
                    &format!("restart offset {r} is not greater than the one before"),
                );
            }
            prev = Some(r);
            if r >= decoded_to {
                continue;
            }
            match starts.binary_search_by_key(&r, |s| s.0) {
                Ok(k) if !starts[k].1 => self.r.in_block(
                    FindingKind::Block,
                    b,
                    entry,
                    &format!("restart offset {r} points at a prefix-compressed record"),
                ),
                Ok(_) => {}
                Err(_) => self.r.in_block(
                    FindingKind::Block,
                    b,
                    entry,
                    &format!("restart offset {r} is not at the start of a record"),
                ),
            }
        }
    }
}
