//! The sections: where each starts and ends, that every block is in the right one, and every
//! level of every index.

use std::collections::{BTreeMap, BTreeSet};

use reftable::codec::block::BlockInfo;
use reftable::codec::format::BlockType;
use reftable::table::Section;

use super::records::IndexEntry;
use super::report::Report;
use super::{SectionRange, TableChecker};
use crate::dump::type_name;

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
        starts.sort_by_key(|s| s.1);
        starts.dedup_by_key(|s| s.1);
        let mut ranges = Vec::new();
        for (k, &(block_type, start, index_offset)) in starts.iter().enumerate() {
            let end = starts.get(k + 1).map_or(i.footer_offset, |s| s.1);
            ranges.push(SectionRange {
                block_type,
                start,
                end,
                index_offset,
            });
        }
        ranges
    }

    /// Work out the sections' ranges and check that every block is in the right one.
    ///
    /// `complete`: whether the block walk reached the footer; if not, offsets past the last
    /// block read cannot be checked.
    pub(super) fn sections(&mut self, blocks: &[BlockInfo], complete: bool) -> Vec<SectionRange> {
        let i = *self.t.info();
        let walked_to = blocks.last().map_or(0, |b| b.offset + b.full_size as u64);
        let unknown = |off: u64| !complete && off >= walked_to;
        // The walk yields blocks in increasing offset order.
        let at_block = |off: u64| {
            blocks
                .binary_search_by_key(&off, |b| b.offset)
                .ok()
                .map(|k| &blocks[k])
        };
        let footer_field = |k: u64| i.footer_offset + i.header_size() as u64 + k;
        let mut starts: Vec<(BlockType, u64, Section)> = Vec::new();
        if i.refs.present {
            starts.push((BlockType::Ref, 0, i.refs));
        }
        // Whether a block of type `want` starts at `off`, the section offset in footer field
        // `field`; a problem is reported otherwise (unless the walk stopped short of it).
        let section_start = |r: &mut Report, name: &str, want: BlockType, off: u64, field: u64| {
            let problem = match at_block(off) {
                Some(b) if b.block_type == want => return true,
                Some(b) => format!(
                    "{name} section offset {off} points at a '{}' block",
                    b.block_type.byte() as char
                ),
                None if unknown(off) => return false,
                None => format!("{name} section offset {off} is not the start of a block"),
            };
            r.at(footer_field(field), problem);
            false
        };
        if i.objs.present && section_start(&mut self.r, "obj", BlockType::Obj, i.objs.offset, 8) {
            starts.push((BlockType::Obj, i.objs.offset, i.objs));
        }
        if i.logs.present {
            let first_is_log = blocks
                .first()
                .is_some_and(|b| b.block_type == BlockType::Log);
            // A log-only table stores log offset 0: its logs start in the first block.
            if (i.logs.offset == 0 && first_is_log)
                || section_start(&mut self.r, "log", BlockType::Log, i.logs.offset, 24)
            {
                starts.push((BlockType::Log, i.logs.offset, i.logs));
            }
        }
        // git's order: refs, objs, logs.
        for w in starts.windows(2) {
            if w[1].1 <= w[0].1 {
                self.r.at(
                    footer_field(if w[1].0 == BlockType::Log { 24 } else { 8 }),
                    format!(
                        "the {} section (offset {}) does not come after the {} section (offset {})",
                        type_name(w[1].0),
                        w[1].1,
                        type_name(w[0].0),
                        w[0].1
                    ),
                );
            }
        }
        starts.sort_by_key(|s| s.1);
        starts.dedup_by_key(|s| s.1);
        let mut ranges = Vec::new();
        for (k, (t, start, sec)) in starts.iter().enumerate() {
            let end = starts.get(k + 1).map_or(i.footer_offset, |s| s.1);
            ranges.push(SectionRange {
                block_type: *t,
                start: *start,
                end,
                index_offset: sec.index_offset,
            });
        }
        let mut seen_index: BTreeSet<BlockType> = BTreeSet::new();
        for b in blocks {
            let Some(s) = ranges.iter().find(|s| s.contains(b.offset)) else {
                self.r.at(
                    b.offset,
                    format!(
                        "'{}' block outside every section the footer describes",
                        b.block_type.byte() as char
                    ),
                );
                continue;
            };
            if b.block_type == BlockType::Index {
                seen_index.insert(s.block_type);
            } else if b.block_type != s.block_type {
                self.r.at(
                    b.offset + b.header_off as u64,
                    format!(
                        "'{}' block inside the {} section",
                        b.block_type.byte() as char,
                        type_name(s.block_type)
                    ),
                );
            } else if seen_index.contains(&s.block_type) {
                self.r.at(
                    b.offset + b.header_off as u64,
                    format!(
                        "{} block after the section's index blocks",
                        type_name(s.block_type)
                    ),
                );
            }
        }
        ranges
    }

    /// Check every level of a section's index.
    pub(super) fn index(&mut self, s: &SectionRange, blocks: &[BlockInfo]) {
        let i = *self.t.info();
        let name = type_name(s.block_type);
        let in_section: Vec<&BlockInfo> = blocks.iter().filter(|b| s.contains(b.offset)).collect();
        let data_blocks: Vec<u64> = in_section
            .iter()
            .filter(|b| b.block_type == s.block_type)
            .map(|b| b.offset)
            .collect();
        let index_blocks: Vec<u64> = in_section
            .iter()
            .filter(|b| b.block_type == BlockType::Index)
            .map(|b| b.offset)
            .collect();
        let field = match s.block_type {
            BlockType::Ref => 0,
            BlockType::Obj => 16,
            _ => 32,
        };
        let field_off = i.footer_offset + i.header_size() as u64 + field;
        if s.index_offset == 0 {
            if let Some(&first) = index_blocks.first() {
                self.r.at(
                    first,
                    format!(
                        "index block in the {name} section, \
                         but the footer has no {name} index position"
                    ),
                );
            }
            return;
        }
        if !index_blocks.contains(&s.index_offset) {
            self.r.at(
                field_off,
                format!(
                    "{name} index position {} is not the start of \
                     an index block of the {name} section",
                    s.index_offset
                ),
            );
            return;
        }
        // The root level: the index blocks from the root position to the end of the section.
        let mut level: Vec<u64> = index_blocks
            .iter()
            .copied()
            .filter(|&o| o >= s.index_offset)
            .collect();
        let mut visited: BTreeSet<u64> = level.iter().copied().collect();
        let kinds: BTreeMap<u64, BlockType> = in_section
            .iter()
            .map(|b| (b.offset, b.block_type))
            .collect();
        let kind_of = |off: u64| kinds.get(&off).copied();
        loop {
            let entries: Vec<IndexEntry> = level
                .iter()
                .flat_map(|o| self.c.index.get(o).cloned().unwrap_or_default())
                .collect();
            if entries.is_empty() {
                self.r
                    .at(level[0], format!("{name} index level without entries"));
                return;
            }
            let lowest = level[0];
            let mut targets = Vec::new();
            let mut ok = true;
            let mut prev: Option<u64> = None;
            for e in &entries {
                let here = |r: &mut Report, what: String| r.in_block(&e.block, e.at, &what);
                if prev.is_some_and(|p| e.target <= p) {
                    here(
                        &mut self.r,
                        format!(
                            "index entry points at offset {}, not after the previous entry's block",
                            e.target
                        ),
                    );
                    ok = false;
                    continue;
                }
                prev = Some(e.target);
                if e.target >= lowest {
                    here(
                        &mut self.r,
                        format!(
                            "index entry points at offset {}, which is not before its index level",
                            e.target
                        ),
                    );
                    ok = false;
                    continue;
                }
                if kind_of(e.target).is_none() {
                    here(
                        &mut self.r,
                        format!(
                            "index entry points at offset {}, \
                             which is not a block of the {name} section",
                            e.target
                        ),
                    );
                    ok = false;
                    continue;
                }
                match self.c.last_keys.get(&e.target) {
                    Some(k) if !k.same(&e.key) => here(
                        &mut self.r,
                        format!(
                            "index key {} differs from the last key {} of the block at {}",
                            e.key.shown, k.shown, e.target
                        ),
                    ),
                    _ => {}
                }
                targets.push(e.target);
            }
            if !ok || targets.is_empty() {
                return;
            }
            let n_index = targets
                .iter()
                .filter(|&&t| kind_of(t) == Some(BlockType::Index))
                .count();
            if n_index == 0 {
                // The lowest level: it must point at every data block of the section, in order.
                if targets != data_blocks {
                    let listed: BTreeSet<u64> = targets.iter().copied().collect();
                    for d in &data_blocks {
                        if !listed.contains(d) {
                            self.r
                                .at(*d, format!("{name} block is not in the {name} index"));
                        }
                    }
                }
                break;
            }
            if n_index != targets.len() {
                self.r.at(
                    level[0],
                    format!("{name} index level points at both index and {name} blocks"),
                );
                return;
            }
            visited.extend(targets.iter().copied());
            level = targets;
        }
        for o in index_blocks {
            if !visited.contains(&o) {
                self.r.at(
                    o,
                    format!("{name} index block not reachable from the index root"),
                );
            }
        }
    }
}
