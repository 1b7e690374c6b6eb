//! The sections: where each starts and ends, and that every block is in the right one.

use std::collections::BTreeSet;

use super::checker::{SectionRange, TableChecker};
use super::finding::FindingKind;
use crate::codec::block::BlockInfo;
use crate::codec::format::BlockType;

impl TableChecker<'_> {
    /// The sections' ranges as the footer gives them (refs from 0, then the obj and log
    /// sections at their offsets), before the walk shows whether blocks are there.
    pub(super) fn footer_ranges(&self) -> Vec<SectionRange> {
        let i = *self.t.info();
        let mut starts: Vec<(BlockType, u64, u64)> = Vec::new();
        if i.refs.present {
            starts.push((BlockType::Ref, 0, i.refs.index_offset));
        }
        if i.objs.present {
            starts.push((BlockType::Obj, i.objs.offset, i.objs.index_offset));
        }
        if i.logs.present {
            starts.push((BlockType::Log, i.logs.offset, i.logs.index_offset));
        }
        ranges_of(starts, i.footer_offset)
    }

    /// Work out the sections' ranges and check that every block is in the right one.
    ///
    /// `complete`: whether the block walk reached the footer; if not, offsets past the last
    /// block read cannot be checked.
    pub(super) fn sections(&mut self, blocks: &[BlockInfo], complete: bool) -> Vec<SectionRange> {
        let i = *self.t.info();
        let mut starts: Vec<(BlockType, u64, u64)> = Vec::new();
        if i.refs.present {
            starts.push((BlockType::Ref, 0, i.refs.index_offset));
        }
        let obj = (BlockType::Obj, i.objs.offset, i.objs.index_offset);
        if i.objs.present && self.section_starts_at(blocks, complete, obj, 8) {
            starts.push(obj);
        }
        if i.logs.present {
            let log = (BlockType::Log, i.logs.offset, i.logs.index_offset);
            let first_is_log = blocks
                .first()
                .is_some_and(|b| b.block_type == BlockType::Log);
            // A log-only table stores log offset 0: its logs start in the first block.
            if (i.logs.offset == 0 && first_is_log)
                || self.section_starts_at(blocks, complete, log, 24)
            {
                starts.push(log);
            }
        }
        // git's order: refs, objs, logs.
        for w in starts.windows(2) {
            if w[1].1 <= w[0].1 {
                self.r.at(
                    FindingKind::Section,
                    self.footer_field(if w[1].0 == BlockType::Log { 24 } else { 8 }),
                    format!(
                        "the {} section (offset {}) does not come after the {} section (offset {})",
                        w[1].0.name(),
                        w[1].1,
                        w[0].0.name(),
                        w[0].1
                    ),
                );
            }
        }
        let ranges = ranges_of(starts, i.footer_offset);
        self.blocks_in_sections(blocks, &ranges);
        ranges
    }

    /// The offset of footer field `k` (bytes after the header's copy).
    fn footer_field(&self, k: u64) -> u64 {
        let i = self.t.info();
        i.footer_offset + i.header_size() as u64 + k
    }

    /// Whether a block of the section's type starts at its offset (`section`: type, offset,
    /// index offset), which footer field `field` holds; a problem is reported otherwise
    /// (unless the walk stopped short of it, `complete` false).
    fn section_starts_at(
        &mut self,
        blocks: &[BlockInfo],
        complete: bool,
        section: (BlockType, u64, u64),
        field: u64,
    ) -> bool {
        let (want, off, _) = section;
        let name = want.name();
        let walked_to = blocks.last().map_or(0, |b| b.offset + b.full_size as u64);
        // The walk yields blocks in increasing offset order.
        let at_block = blocks
            .binary_search_by_key(&off, |b| b.offset)
            .ok()
            .map(|k| &blocks[k]);
        let problem = match at_block {
            Some(b) if b.block_type == want => return true,
            Some(b) => format!(
                "{name} section offset {off} points at a '{}' block",
                b.block_type.byte() as char
            ),
            None if !complete && off >= walked_to => return false,
            None => format!("{name} section offset {off} is not the start of a block"),
        };
        self.r
            .at(FindingKind::Section, self.footer_field(field), problem);
        false
    }

    /// Every block in a section, of its type, and none after the section's index blocks.
    fn blocks_in_sections(&mut self, blocks: &[BlockInfo], ranges: &[SectionRange]) {
        let mut seen_index: BTreeSet<BlockType> = BTreeSet::new();
        for b in blocks {
            let Some(s) = ranges.iter().find(|s| s.contains(b.offset)) else {
                self.r.at(
                    FindingKind::Section,
                    b.offset,
                    format!(
                        "'{}' block outside every section the footer describes",
                        b.block_type.byte() as char
                    ),
                );
                continue;
            };
            let what = if b.block_type == BlockType::Index {
                seen_index.insert(s.block_type);
                continue;
            } else if b.block_type != s.block_type {
                format!(
                    "'{}' block inside the {} section",
                    b.block_type.byte() as char,
                    s.block_type.name()
                )
            } else if seen_index.contains(&s.block_type) {
                format!(
                    "{} block after the section's index blocks",
                    s.block_type.name()
                )
            } else {
                continue;
            };
            let at = b.offset + b.header_off as u64;
            self.r.at(FindingKind::Section, at, what);
        }
    }
}

/// The sections' ranges from their starts (type, offset, index offset): each ends where
/// the next starts, the last at the footer; one range per offset.
fn ranges_of(mut starts: Vec<(BlockType, u64, u64)>, footer_offset: u64) -> Vec<SectionRange> {
    starts.sort_by_key(|s| s.1);
    starts.dedup_by_key(|s| s.1);
    let ends: Vec<u64> = starts.iter().skip(1).map(|s| s.1).collect();
    starts
        .iter()
        .zip(ends.into_iter().chain(std::iter::once(footer_offset)))
        .map(|(&(block_type, start, index_offset), end)| SectionRange {
            block_type,
            start,
            end,
            index_offset,
        })
        .collect()
}
