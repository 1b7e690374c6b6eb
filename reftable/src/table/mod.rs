//! Reading one table, a file a concept, each using only those before it:
//!
//! - `info.rs`: what the header and footer say ([`TableInfo`], its [`Section`]s);
//! - `open.rs`: the [`Table`] (bytes, counters, leaf indexes built after many seeks);
//! - `pool.rs`: big buffers handed from one table iterator to the next;
//! - `iter.rs`: the [`TableIter`], a state machine reading block after block;
//! - `seek.rs`: its seeks (linear, indexed, through the leaf index);
//! - `budget.rs`: the memory its log blocks and values take, let go, restored and recycled
//!   within a merged iterator's budget (`Budget`);
//! - `peek.rs`: lazy positioning on the first key of a big log block;
//! - `lookup.rs`: the table's reads through its iterators (point lookups, refs by id).
//!
//! Each file's tests are at its end; `testing.rs` (tests only) writes the tables they read.

mod budget;
mod info;
mod iter;
mod lookup;
mod open;
mod peek;
mod pool;
mod refs_for;
mod seek;
#[cfg(test)]
mod testing;

pub use crate::codec::block::BlockInfo;
pub use crate::codec::format::{BlockType, MAX_BLOCK_SIZE};
pub use crate::codec::record::Record;
pub use crate::stats::Stats;
pub(crate) use budget::Budget;
pub use info::{Section, TableInfo};
pub use iter::TableIter;
pub use open::Table;
pub use refs_for::RefsFor;
