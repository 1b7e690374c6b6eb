//! Every level of every section's index: each entry's key is the last key of the block it
//! points at, entries point forward at blocks of their section, the lowest level covers
//! every data block, and every index block is reachable from the root.

use std::collections::{BTreeMap, BTreeSet};

use super::checker::{SectionRange, TableChecker};
use super::collected::IndexEntry;
use super::finding::FindingKind;
use crate::codec::block::BlockInfo;
use crate::codec::format::BlockType;

/// A section's blocks by offset, with their types.
type Kinds = BTreeMap<u64, BlockType>;

impl TableChecker<'_> {
    /// Check every level of a section's index.
    pub(super) fn index(&mut self, s: &SectionRange, blocks: &[BlockInfo]) {
        let name = s.block_type.name();
        let in_section: Vec<&BlockInfo> = blocks.iter().filter(|b| s.contains(b.offset)).collect();
        let of_type = |t: BlockType| -> Vec<u64> {
            in_section
                .iter()
                .filter(|b| b.block_type == t)
                .map(|b| b.offset)
                .collect()
        };
        let (data_blocks, index_blocks) = (of_type(s.block_type), of_type(BlockType::Index));
        let field = match s.block_type {
            BlockType::Ref => 0,
            BlockType::Obj => 16,
            _ => 32,
        };
        if s.index_offset == 0 {
            if let Some(&first) = index_blocks.first() {
                let what = format!(
                    "index block in the {name} section, but the footer has no {name} index position"
                );
                self.r.at(FindingKind::Index, first, what);
            }
            return;
        }
        if !index_blocks.contains(&s.index_offset) {
            let what = format!(
                "{name} index position {} is not the start of an index block of the {name} section",
                s.index_offset
            );
            let i = self.t.info();
            let at = i.footer_offset + i.header_size() as u64 + field;
            self.r.at(FindingKind::Index, at, what);
            return;
        }
        let kinds: Kinds = in_section
            .iter()
            .map(|b| (b.offset, b.block_type))
            .collect();
        let Some(visited) = self.index_levels(s, &index_blocks, &data_blocks, &kinds) else {
            return;
        };
        for o in index_blocks.into_iter().filter(|o| !visited.contains(o)) {
            let what = format!("{name} index block not reachable from the index root");
            self.r.at(FindingKind::Index, o, what);
        }
    }

    /// Walk the index from its root level (the index blocks from the root position to the
    /// section's end) down to the level that points at data blocks, which must be all of
    /// `data_blocks`. Returns the index blocks visited, `None` where a level is broken.
    fn index_levels(
        &mut self,
        s: &SectionRange,
        index_blocks: &[u64],
        data_blocks: &[u64],
        kinds: &Kinds,
    ) -> Option<BTreeSet<u64>> {
        let name = s.block_type.name();
        let mut level: Vec<u64> = index_blocks
            .iter()
            .copied()
            .filter(|&o| o >= s.index_offset)
            .collect();
        let mut visited: BTreeSet<u64> = level.iter().copied().collect();
        loop {
            let targets = self.level_targets(name, &level, kinds)?;
            let n_index = targets
                .iter()
                .filter(|&t| kinds.get(t) == Some(&BlockType::Index))
                .count();
            if n_index == 0 {
                // The lowest level: it must point at every data block of the section, in order.
                if targets != data_blocks {
                    let listed: BTreeSet<u64> = targets.iter().copied().collect();
                    for d in data_blocks.iter().filter(|d| !listed.contains(d)) {
                        let what = format!("{name} block is not in the {name} index");
                        self.r.at(FindingKind::Index, *d, what);
                    }
                }
                return Some(visited);
            }
            if n_index != targets.len() {
                let what = format!("{name} index level points at both index and {name} blocks");
                self.r.at(FindingKind::Index, level[0], what);
                return None;
            }
            visited.extend(targets.iter().copied());
            level = targets;
        }
    }

    /// The blocks the entries of one index level (its blocks `level`) point at, each entry
    /// checked: after the previous entry's target, before the level, a block of the section,
    /// keyed by that block's last key. `None` when the level has no entries or an entry
    /// points where it must not.
    fn level_targets(&mut self, name: &str, level: &[u64], kinds: &Kinds) -> Option<Vec<u64>> {
        let entries: Vec<IndexEntry> = level
            .iter()
            .flat_map(|o| self.c.index.get(o).cloned().unwrap_or_default())
            .collect();
        if entries.is_empty() {
            let what = format!("{name} index level without entries");
            self.r.at(FindingKind::Index, level[0], what);
            return None;
        }
        let lowest = level[0];
        let mut targets = Vec::new();
        let mut ok = true;
        let mut prev: Option<u64> = None;
        for e in &entries {
            let t = e.target;
            let out_of_order = prev.is_some_and(|p| t <= p);
            let wrong = if out_of_order {
                Some(format!(
                    "index entry points at offset {t}, not after the previous entry's block"
                ))
            } else if t >= lowest {
                Some(format!(
                    "index entry points at offset {t}, which is not before its index level"
                ))
            } else if !kinds.contains_key(&t) {
                Some(format!(
                    "index entry points at offset {t}, which is not a block of the {name} section"
                ))
            } else {
                None
            };
            if !out_of_order {
                prev = Some(t);
            }
            if let Some(what) = wrong {
                self.r.in_block(FindingKind::Index, &e.block, e.at, &what);
                ok = false;
                continue;
            }
            match self.c.last_keys.get(&t) {
                Some(k) if !k.same(&e.key) => {
                    let what = format!(
                        "index key {} differs from the last key {} of the block at {t}",
                        e.key.shown, k.shown
                    );
                    self.r.in_block(FindingKind::Index, &e.block, e.at, &what);
                }
                _ => {}
            }
            targets.push(t);
        }
        (ok && !targets.is_empty()).then_some(targets)
    }
}
