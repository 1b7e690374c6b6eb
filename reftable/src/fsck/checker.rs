//! The state of one table's check, which each per-table check extends (`blocks`,
//! `records`, `objs`, `sections`), and the buffers kept from table to table.

use super::collected::Collected;
use super::finding::FileFindings;
use crate::codec::format::BlockType;
use crate::codec::record::LogRecord;
use crate::table::Table;
use crate::walk::BlockWalk;

/// Where one section's blocks are: `[start, end)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct SectionRange {
    pub(super) block_type: BlockType,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) index_offset: u64,
}

impl SectionRange {
    pub(super) fn contains(&self, off: u64) -> bool {
        self.start <= off && off < self.end
    }
}

/// Buffers kept from table to table of a stack: a log block can inflate to 16 MiB and a
/// reflog message can be as big, and fresh ones per table cost thousands of page faults.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    walk: Option<BlockWalk>,
    /// Log records are decoded into this one.
    pub(super) log: LogRecord,
}

impl Scratch {
    /// A walk over `t` from its first block, with the inflate buffer of the last walk.
    pub(super) fn take_walk(&mut self, t: &Table) -> BlockWalk {
        match self.walk.take() {
            Some(mut w) => {
                w.restart(t.clone());
                w
            }
            None => t.blocks(),
        }
    }

    /// Keep `walk`'s buffer for the next table.
    pub(super) fn keep_walk(&mut self, walk: BlockWalk) {
        self.walk = Some(walk);
    }
}

/// One table being checked: the table, its findings, and what the record checks collect.
pub(super) struct TableChecker<'a> {
    pub(super) t: &'a Table,
    pub(super) r: FileFindings,
    pub(super) c: Collected,
    pub(super) s: &'a mut Scratch,
}
