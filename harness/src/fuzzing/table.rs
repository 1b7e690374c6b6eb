//! Target `table_read`: the shape of git's own reftable fuzzer (`oss-fuzz/fuzz-reftable.c`)
//! plus seeks. Open the input as a table, drain the ref, log and obj sections, walk every
//! block and decode its records, then seek to keys taken from the input (decoded names,
//! variants of them, and raw windows of the bytes), read reflogs and look refs up by id.
//!
//! Oracle (holds for any bytes): header and footer fields are consistent with the size, an
//! exact lookup returns the name it was asked for, and an object lookup returns only refs
//! pointing at that object. Whether what a valid table holds is read back right is the
//! business of `write_roundtrip` and `merged_model`.

use reftable::codec::format::BlockType;
use reftable::codec::record::{ObjRecord, Record};
use reftable::table::TableIter;
use std::ops::ControlFlow;

use reftable::table::Stats;
use reftable::{LogRecord, MergedTable, ObjectId, RefRecord, Table};

use crate::{alloc, limits};

/// Names (and ids) kept from the drains for lookups.
const KEEP: usize = 8;

/// Allocation budget per byte of content: the table's copy of the input, two inflate
/// buffers, the kept names, and the records an object lookup returns (each a few dozen
/// bytes of struct per 2 bytes of content).
const ALLOC_PER_BYTE: u64 = 256;

/// Open and read a table; see the module docs.
pub fn table_read(data: &[u8]) {
    // The work is checked per operation, inside `read`.
    let (stats, peak) = alloc::measure(|| read(data));
    let content = limits::content_bytes(data.len(), stats.blocks_inflated > 0);
    limits::check_alloc("table_read", peak, ALLOC_PER_BYTE, content);
}

/// Checks the work of each operation on its own, so that one operation doing quadratic
/// work is caught even when the total budget (a sum over all operations) would hide it.
struct Meter<'t> {
    table: &'t Table,
    len: usize,
}

impl Meter<'_> {
    /// Run `op`, which may make `passes` passes over the table, and check its work.
    fn op<T>(&mut self, what: &str, passes: u64, op: impl FnOnce() -> T) -> T {
        let before = self.table.stats();
        let out = op();
        let after = self.table.stats();
        let mut delta = Stats::default();
        delta.records_decoded = after.records_decoded - before.records_decoded;
        delta.blocks_read = after.blocks_read - before.blocks_read;
        delta.blocks_inflated = after.blocks_inflated - before.blocks_inflated;
        let content = limits::content_bytes(self.len, after.blocks_inflated > 0);
        if let Some(why) = limits::work_excess(&delta, passes, content) {
            panic!("table_read: {what}: {why}");
        }
        out
    }
}

/// Drain an iterator, calling `f` on each record, until the end or the first error.
fn drain<R: Record>(it: reftable::Result<TableIter<R>>, mut f: impl FnMut(&R)) {
    let Ok(mut it) = it else {
        return;
    };
    while let Ok(Some(r)) = it.next_record() {
        f(r);
    }
}

/// The refs of a one-table merged view, lent by `for_each_ref` and returned by
/// `next_record`: the same records, then the same error (or none), then nothing more.
fn views_agree(t: &Table) {
    let Ok(m) = MergedTable::new(vec![t.clone()], t.hash()) else {
        return;
    };
    let (mut lent, mut returned) = (Vec::new(), Vec::new());
    let lent_end = m.refs().and_then(|mut it| {
        let end = it.for_each_ref(|v| {
            lent.push(v.to_record().expect("a table lends ids of its hash size"));
            ControlFlow::<()>::Continue(())
        });
        assert!(
            matches!(it.next_record(), Ok(None)),
            "records after the end"
        );
        end
    });
    let returned_end = m.refs().and_then(|mut it| {
        while let Some(r) = it.next_record()? {
            returned.push(r.clone());
        }
        Ok(ControlFlow::Continue(()))
    });
    assert_eq!(lent, returned, "for_each_ref and next_record");
    assert_eq!(
        lent_end.map_err(|e| e.to_string()),
        returned_end.map_err(|e| e.to_string())
    );
}

fn read(data: &[u8]) -> Stats {
    let Ok(t) = Table::from_bytes("fuzz.ref", data.to_vec()) else {
        return Stats::default();
    };
    let info = *t.info();
    assert_eq!(info.size, data.len() as u64);
    assert_eq!(
        info.footer_offset + reftable::codec::format::footer_size(info.version) as u64,
        info.size
    );
    assert!(info.footer_offset >= info.header_size() as u64);
    let mut m = Meter {
        table: &t,
        len: data.len(),
    };

    let mut names: Vec<Vec<u8>> = Vec::new();
    let mut ids: Vec<ObjectId> = Vec::new();
    let mut logs: Vec<(Vec<u8>, u64)> = Vec::new();
    m.op("refs", 1, || {
        drain(t.refs(), |r: &RefRecord| {
            if names.len() < KEEP {
                names.push(r.refname.clone());
            }
            for id in r.value_id().into_iter().chain(r.peeled_id()) {
                if ids.len() < KEEP / 2 && !ids.contains(id) {
                    ids.push(*id);
                }
            }
        })
    });
    // The merged view's two ways through the ref section agree, damaged or not.
    m.op("for_each_ref", 2, || views_agree(&t));
    m.op("logs", 1, || {
        drain(t.logs(), |l: &LogRecord| {
            if logs.len() < KEEP {
                logs.push((l.refname.clone(), l.update_index));
            }
        })
    });
    m.op("objs", 1, || {
        drain(t.iter::<ObjRecord>(), |o| {
            assert!(!o.hash_prefix.is_empty());
        })
    });

    // The walk and each block's records: blocks may overlap when a `block_len` exceeds
    // the table's block size, so this is not one pass; it is bounded per block instead.
    for b in t.blocks() {
        let Ok(b) = b else { break };
        assert!(b.offset < info.footer_offset);
        m.op("block_records", 1, || {
            let _ = match b.block_type {
                BlockType::Ref => t.block_records::<RefRecord>(&b).map(drop),
                BlockType::Log => t.block_records::<LogRecord>(&b).map(drop),
                BlockType::Obj => t.block_records::<ObjRecord>(&b).map(drop),
                _ => t
                    .block_records::<reftable::codec::record::IndexRecord>(&b)
                    .map(drop),
            };
        });
    }

    // Keys from the input: decoded names, their variants, and raw windows of the bytes.
    let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
    for n in &names {
        let mut shorter = n.clone();
        shorter.pop();
        let mut longer = n.clone();
        longer.push(b'/');
        keys.extend([n.clone(), shorter, longer]);
    }
    for at in [info.header_size() + 4, data.len() / 2] {
        keys.push(data[at.min(data.len())..(at + 12).min(data.len())].to_vec());
    }
    // A seek in a corrupt table may land in a block whose keys are all smaller (its index
    // entry lied) and then go on into the next block, whose keys may be anything: only
    // exact lookups have an oracle here. A seek reads each index level once, then one
    // block (or the first record of each block, then one block): two passes at most.
    for k in &keys {
        m.op("seek_ref", 2, || {
            if let Ok(mut it) = t.seek_ref(k) {
                let _ = it.next_record();
            }
        });
        m.op("read_ref", 2, || {
            if let Ok(Some(r)) = t.read_ref(k) {
                assert_eq!(r.refname, *k, "read_ref returned another name");
            }
        });
        m.op("seek_log", 2, || {
            if let Ok(mut it) = t.seek_log(k) {
                let _ = it.next_record();
            }
        });
    }
    for (name, ui) in &logs {
        m.op("seek_log_at", 2, || {
            if let Ok(mut it) = t.seek_log_at(name, *ui) {
                let _ = it.next_record();
            }
        });
    }
    // An object lookup seeks in the obj section, then reads the ref blocks its record
    // names (or scans every ref): three passes at most, if the blocks it names are
    // distinct.
    for id in &ids {
        m.op("refs_for", 3, || {
            if let Ok(refs) = t.refs_for(id) {
                for r in refs.map_while(Result::ok) {
                    assert!(
                        r.value_id() == Some(id) || r.peeled_id() == Some(id),
                        "refs_for returned a ref pointing elsewhere"
                    );
                }
            }
        });
    }
    t.stats()
}
