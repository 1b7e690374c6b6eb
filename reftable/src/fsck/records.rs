//! Per-record checks: keys in order, record contents, and collecting what the table-wide
//! checks need (last keys of blocks, index entries, obj records, object ids of refs).

use std::collections::BTreeMap;

use super::checker::{SectionRange, TableChecker};
use super::collected::{IndexEntry, KeySig};
use super::finding::FindingKind;
use super::shown::{hex, show_bytes, show_log_key};
use crate::codec::block::BlockInfo;
use crate::codec::format::BlockType;
use crate::codec::record::{IndexRecord, LogRecord, LogValue, ObjRecord, RefRecord, RefValue};
use crate::refname::is_valid_refname;
use crate::walk::{self, DecodedRecord};

/// Keys of the data blocks of one section, carried from block to block.
#[derive(Default)]
pub(super) struct KeyOrder {
    pub(super) prev: Vec<u8>,
    pub(super) have_prev: bool,
}

/// A problem found while decoding, before it is located.
pub(super) type Issue = (usize, String);

/// What the checks of one block's records gather: the key order (carried over from the
/// section's previous block), where each record starts, and the problems found.
struct BlockKeys<'o> {
    order: &'o mut KeyOrder,
    /// Offset of each record, and whether its prefix length is 0.
    starts: Vec<(usize, bool)>,
    issues: Vec<Issue>,
    /// Whether the keys are log keys (shown as `name@{index}`).
    log: bool,
}

impl BlockKeys<'_> {
    /// Note a record at `at` with key `key`: it must sort after the one before it.
    fn record(&mut self, key: &[u8], at: usize, prefix_len: usize) {
        let order = &mut *self.order;
        if order.have_prev && key <= order.prev.as_slice() {
            let log = self.log;
            let show = |k: &[u8]| {
                if log {
                    show_log_key(k)
                } else {
                    show_bytes(k, 100)
                }
            };
            let before = if self.starts.is_empty() {
                "the last key of the previous block,"
            } else {
                "the previous key,"
            };
            let what = format!(
                "key {} is not greater than {before} {}",
                show(key),
                show(&order.prev)
            );
            self.issues.push((at, what));
        }
        order.prev.clear();
        order.prev.extend_from_slice(key);
        order.have_prev = true;
        self.starts.push((at, prefix_len == 0));
    }
}

impl TableChecker<'_> {
    /// Decode every record of block `b` (its bytes `data`, inflated for log blocks); check
    /// keys, restarts and record contents. `orders` carries each section's key order from
    /// block to block.
    pub(super) fn records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        sections: &[SectionRange],
        orders: &mut BTreeMap<BlockType, KeyOrder>,
    ) {
        {
            // Data blocks continue their section's key order; index blocks are ordered within
            // the block only.
            let section = sections
                .iter()
                .find(|s| s.contains(b.offset))
                .map(|s| s.block_type);
            let mut local = KeyOrder::default();
            let order = if b.block_type == BlockType::Index {
                &mut local
            } else {
                orders.entry(section.unwrap_or(b.block_type)).or_default()
            };
            let log = match b.block_type {
                BlockType::Log => true,
                BlockType::Index => section == Some(BlockType::Log),
                _ => false,
            };
            let mut keys = BlockKeys {
                order,
                starts: Vec::new(),
                issues: Vec::new(),
                log,
            };
            let err = match b.block_type {
                BlockType::Ref => self.ref_records(b, data, &mut keys),
                BlockType::Log => self.log_records(b, data, &mut keys),
                BlockType::Obj => self.obj_records(b, data, &mut keys),
                BlockType::Index => self.index_records(b, data, &mut keys),
            };
            let BlockKeys {
                order,
                starts,
                issues,
                ..
            } = keys;
            // The block's last key, for the index checks: only when every record decoded.
            if err.is_none() && !starts.is_empty() {
                let log = section == Some(BlockType::Log);
                let last = KeySig::new(&order.prev, log);
                self.c.last_keys.insert(b.offset, last);
            }
            for (at, what) in issues {
                self.r.in_block(FindingKind::Record, b, at, &what);
            }
            if let Some((at, msg)) = err {
                let what = format!("cannot decode record: {msg}");
                self.r.in_block(FindingKind::Record, b, at, &what);
            }
            self.restarts(b, data, &starts, err.map(|(at, _)| at));
            if b.block_type == BlockType::Obj {
                self.check_obj_block(b);
            }
        }
    }

    fn ref_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        keys: &mut BlockKeys<'_>,
    ) -> Option<(usize, &'static str)> {
        let i = *self.t.info();
        let obj_len = usize::from(i.obj_id_len);
        let want_ids = i.objs.present && obj_len > 0 && obj_len <= i.hash.size();
        self.c.obj.ref_blocks.insert(b.offset);
        let ref_ids = &mut self.c.obj.ids;
        walk::for_each_record::<RefRecord>(
            b,
            data,
            &self.t.codec_context(),
            |d: DecodedRecord<'_, RefRecord>| {
                keys.record(d.key, d.offset, d.prefix_len);
                let r = d.rec;
                let name = show_bytes(&r.refname, 200);
                if r.update_index < i.min_update_index || r.update_index > i.max_update_index {
                    keys.issues.push((
                        d.offset,
                        format!(
                            "ref {name} has update index {} outside the table's {}..{}",
                            r.update_index, i.min_update_index, i.max_update_index
                        ),
                    ));
                }
                if r.refname.contains(&0) {
                    keys.issues
                        .push((d.offset, format!("ref name {name} contains a NUL byte")));
                } else if !is_valid_refname(&r.refname, true) {
                    keys.issues.push((
                        d.offset,
                        format!("ref name {name} is not a valid git ref name"),
                    ));
                }
                if let RefValue::Symref(t) = &r.value {
                    if t.is_empty() {
                        keys.issues
                            .push((d.offset, format!("symref {name} has an empty target")));
                    } else if t.contains(&0) {
                        keys.issues.push((
                            d.offset,
                            format!("symref {name} target contains a NUL byte"),
                        ));
                    }
                }
                if want_ids {
                    for id in r.value_id().into_iter().chain(r.peeled_id()) {
                        ref_ids.push(&id.as_bytes()[..obj_len], b.offset);
                    }
                }
            },
        )
    }

    fn log_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        keys: &mut BlockKeys<'_>,
    ) -> Option<(usize, &'static str)> {
        let max = self.t.info().max_update_index;
        let mut log = std::mem::take(&mut self.s.log);
        let err = walk::for_each_record_in(
            b,
            data,
            &self.t.codec_context(),
            &mut log,
            |d: DecodedRecord<'_, LogRecord>| {
                keys.record(d.key, d.offset, d.prefix_len);
                let l = d.rec;
                let name = show_log_key(d.key);
                if d.value_type > 1 {
                    keys.issues.push((
                        d.offset,
                        format!(
                            "log {name} has value type {} (git writes 0 or 1)",
                            d.value_type
                        ),
                    ));
                }
                if l.update_index > max {
                    keys.issues.push((
                        d.offset,
                        format!("log {name} has an update index above the table's maximum {max}"),
                    ));
                }
                if l.refname.contains(&0) {
                    keys.issues.push((
                        d.offset,
                        format!("log {name}: ref name contains a NUL byte"),
                    ));
                } else if !is_valid_refname(&l.refname, true) {
                    keys.issues.push((
                        d.offset,
                        format!("log {name}: ref name is not a valid git ref name"),
                    ));
                }
                if let LogValue::Update(u) = &l.value {
                    let m = &u.message;
                    let marker = l.is_existence_marker();
                    let body = m.strip_suffix(b"\n");
                    let bad = match body {
                        None => !(m.is_empty() && marker),
                        Some(body) => body.contains(&b'\n'),
                    };
                    if bad {
                        let what = if m.is_empty() {
                            "is empty (git stores at least a newline)".to_string()
                        } else if body.is_none() {
                            "does not end with a newline".to_string()
                        } else if body.is_some_and(|b| b.ends_with(b"\n")) {
                            "ends with more than one newline".to_string()
                        } else {
                            "has more than one line".to_string()
                        };
                        keys.issues
                            .push((d.offset, format!("log {name}: message {what}")));
                    }
                }
            },
        );
        self.s.log = log;
        err
    }

    fn obj_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        keys: &mut BlockKeys<'_>,
    ) -> Option<(usize, &'static str)> {
        let obj_len = usize::from(self.t.info().obj_id_len);
        let objs = &mut self.c.obj.block;
        walk::for_each_record::<ObjRecord>(
            b,
            data,
            &self.t.codec_context(),
            |d: DecodedRecord<'_, ObjRecord>| {
                keys.record(d.key, d.offset, d.prefix_len);
                let o = d.rec;
                if o.hash_prefix.len() != obj_len {
                    keys.issues.push((
                        d.offset,
                        format!(
                            "obj record key {} is {} bytes long, \
                         the footer's obj id length is {obj_len}",
                            hex(&o.hash_prefix[..o.hash_prefix.len().min(64)]),
                            o.hash_prefix.len()
                        ),
                    ));
                    return;
                }
                objs.push(&o.hash_prefix, &o.offsets, d.offset);
            },
        )
    }

    fn index_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        keys: &mut BlockKeys<'_>,
    ) -> Option<(usize, &'static str)> {
        let log = keys.log;
        let mut entries = Vec::new();
        let err = walk::for_each_record::<IndexRecord>(
            b,
            data,
            &self.t.codec_context(),
            |d: DecodedRecord<'_, IndexRecord>| {
                keys.record(d.key, d.offset, d.prefix_len);
                entries.push(IndexEntry {
                    key: KeySig::new(d.key, log),
                    target: d.rec.offset,
                    block: *b,
                    at: d.offset,
                });
            },
        );
        self.c.index.insert(b.offset, entries);
        err
    }
}
