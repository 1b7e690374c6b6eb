//! What the record checks of a table collect for the checks that need the whole table:
//! the last key of each block, the index entries, the obj check's data.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use super::obj_ids::ObjCheck;
use super::shown::{show_bytes, show_log_key};
use crate::codec::block::BlockInfo;

/// A key, remembered compactly: its hash and length, and its start for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct KeySig {
    pub(super) hash: u64,
    pub(super) len: usize,
    pub(super) shown: String,
}

impl KeySig {
    pub(super) fn new(key: &[u8], log_keys: bool) -> KeySig {
        let mut h = DefaultHasher::new();
        key.hash(&mut h);
        KeySig {
            hash: h.finish(),
            len: key.len(),
            shown: if log_keys {
                show_log_key(key)
            } else {
                show_bytes(key, 100)
            },
        }
    }

    pub(super) fn same(&self, other: &KeySig) -> bool {
        self.hash == other.hash && self.len == other.len
    }
}

/// An index entry: the key it promises and the block it points at.
#[derive(Clone, Debug)]
pub(super) struct IndexEntry {
    pub(super) key: KeySig,
    pub(super) target: u64,
    /// Where the entry is, for messages.
    pub(super) block: BlockInfo,
    pub(super) at: usize,
}

/// What the record checks of a table collect for the checks that need the whole table.
#[derive(Default)]
pub(super) struct Collected {
    /// Last key of every block that decoded completely, by block offset.
    pub(super) last_keys: BTreeMap<u64, KeySig>,
    /// Index entries by index block offset.
    pub(super) index: BTreeMap<u64, Vec<IndexEntry>>,
    /// The refs' object id prefixes (`obj_id_len` bytes) and ref blocks, checked against
    /// the obj records block by block.
    pub(super) obj: ObjCheck,
}
