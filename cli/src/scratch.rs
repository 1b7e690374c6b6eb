//! Buffers a subcommand reuses from table to table: a log block can inflate to 16 MiB and
//! a reflog message (and so a printed line) can be as big, and fresh ones for each table
//! of a stack cost thousands of page faults.

use reftable::walk::BlockWalk;
use reftable::{LogRecord, Table};

/// A block walk, a log record and a line buffer kept between tables.
#[derive(Default)]
pub struct Scratch {
    walk: Option<BlockWalk>,
    /// Log records are decoded into this one.
    pub log: LogRecord,
    /// Output lines are built in this one.
    pub line: Vec<u8>,
}

impl Scratch {
    /// A walk over `t` from its first block, with the inflate buffer of the last walk.
    pub fn take_walk(&mut self, t: &Table) -> BlockWalk {
        match self.walk.take() {
            Some(mut w) => {
                w.restart(t.clone());
                w
            }
            None => t.blocks(),
        }
    }

    /// Keep `walk`'s buffer for the next table.
    pub fn keep_walk(&mut self, walk: BlockWalk) {
        self.walk = Some(walk);
    }
}
