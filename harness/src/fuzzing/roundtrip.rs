//! Target `write_roundtrip`: arbitrary records under arbitrary writer options, written and
//! read back.
//!
//! Oracles: the table holds exactly the records written (messages as the writer stores
//! them); writing what was read gives the same bytes; every lookup (exact, seek, reflog at
//! an update index, refs by object id) agrees with the written records; the block walk
//! finds every record once; the header and footer agree with the writer's stats.

use reftable::codec::format::BlockType;
use std::collections::BTreeSet;

use arbitrary::Arbitrary;
use reftable::codec::record::{IndexRecord, ObjRecord, Record};
use reftable::table::TableIter;
use reftable::{LogRecord, ObjectId, RefRecord, Table};

use crate::build::TableRecords;
use crate::inputs::{FuzzLog, FuzzOptions, FuzzRef, Name};
use crate::{alloc, limits};

/// Input of [`write_roundtrip`].
#[derive(Clone, Debug, Arbitrary)]
pub struct RoundtripInput {
    /// Writer options.
    pub options: FuzzOptions,
    /// The table's smallest update index.
    pub min_update_index: u64,
    /// The table's update index range above its minimum.
    pub span: u8,
    /// Ref records (sorted and de-duplicated before writing).
    pub refs: Vec<FuzzRef>,
    /// Log records (sorted and de-duplicated before writing).
    pub logs: Vec<FuzzLog>,
    /// Extra names to look up.
    pub probes: Vec<Name>,
}

/// Allocation budget per byte of table content for reading every record into a `Vec`: a
/// record struct of a few hundred bytes at most per record of at least 2 bytes, doubled
/// for `Vec` growth, plus the inflate buffers.
const READ_ALLOC_PER_BYTE: u64 = 512;

/// Lookups of each kind made per table, to keep one case fast.
const LOOKUPS: usize = 64;

fn all<R: Record>(it: reftable::Result<TableIter<R>>) -> Vec<R> {
    it.and_then(|it| it.collect())
        .unwrap_or_else(|e| panic!("reading a table the writer made: {e}"))
}

/// Write the input's records and check what reads back; see the module docs.
pub fn write_roundtrip(input: RoundtripInput) {
    let opts = input.options.0;
    let min = input.min_update_index;
    let max = min.saturating_add(u64::from(input.span));
    let recs = TableRecords::new(min, max, &input.refs, &input.logs, &opts);
    let Some((t, wstats)) = recs.table("roundtrip.ref", opts) else {
        return;
    };

    // Header and footer.
    let info = *t.info();
    assert_eq!((info.min_update_index, info.max_update_index), (min, max));
    assert_eq!(info.hash, opts.hash);
    let block_size = if opts.block_size == 0 {
        4096
    } else {
        opts.block_size
    };
    assert_eq!(info.block_size, block_size);
    assert_eq!(info.refs.index_offset, wstats.refs.index_offset);
    assert_eq!(info.logs.index_offset, wstats.logs.index_offset);
    assert_eq!(info.objs.present, wstats.objs.blocks > 0);
    assert_eq!(wstats.refs.entries, recs.refs.len() as u64);
    assert_eq!(wstats.logs.entries, recs.logs.len() as u64);

    // What was written is what is read, by iteration and by a seek from the start. Reading
    // allocates at most a constant times the table's content.
    let ((refs, logs), peak) = alloc::measure(|| (all(t.refs()), all(t.logs())));
    let content = limits::content_bytes(t.bytes().len(), t.stats().blocks_inflated > 0);
    limits::check_alloc("write_roundtrip: read", peak, READ_ALLOC_PER_BYTE, content);
    assert_eq!(refs, recs.refs, "refs read back");
    assert_eq!(logs, recs.logs, "logs read back");
    assert_eq!(all(t.seek_ref(b"")), recs.refs, "refs from seek(\"\")");
    assert_eq!(
        all(t.seek::<LogRecord>(b"")),
        recs.logs,
        "logs from seek(\"\")"
    );

    // Writing what was read gives the same bytes.
    let again = TableRecords {
        refs,
        logs,
        ..recs.clone()
    };
    let (bytes, _) = again.write(opts, true).expect("re-writing what was read");
    assert!(
        bytes == t.bytes(),
        "re-encoded table differs from the original"
    );

    check_lookups(&t, &recs, &input.probes);
    check_blocks(&t, &recs);

    let passes = 8 + 2 * 4 * LOOKUPS as u64 + 2 * input.probes.len().min(LOOKUPS) as u64;
    limits::check_work("write_roundtrip", &t.stats(), passes, content);
}

fn check_lookups(t: &Table, recs: &TableRecords, probes: &[Name]) {
    for r in recs.refs.iter().take(LOOKUPS) {
        assert_eq!(
            t.ref_record(&r.refname).unwrap().as_ref(),
            Some(r),
            "read_ref"
        );
    }
    for p in probes.iter().take(LOOKUPS) {
        let want = recs.refs.iter().find(|r| r.refname >= p.0);
        let got = t.seek_ref(&p.0).unwrap().next().transpose().unwrap();
        assert_eq!(got.as_ref(), want, "seek_ref {p:?}");
        let key = LogRecord::seek_key(&p.0, u64::MAX);
        let want = recs.logs.iter().find(|l| {
            let mut k = Vec::new();
            l.write_key(&mut k);
            k >= key
        });
        let got = t.seek_log(&p.0).unwrap().next().transpose().unwrap();
        assert_eq!(got.as_ref(), want, "seek_log {p:?}");
    }
    for l in recs.logs.iter().take(LOOKUPS) {
        let got = t.seek_log_at(&l.refname, l.update_index).unwrap().next();
        assert_eq!(got.transpose().unwrap().as_ref(), Some(l), "seek_log_at");
    }
    let ids: BTreeSet<ObjectId> = recs
        .refs
        .iter()
        .flat_map(|r| r.value_id().into_iter().chain(r.peeled_id()))
        .copied()
        .collect();
    for id in ids.iter().take(LOOKUPS) {
        let want: Vec<&RefRecord> = recs
            .refs
            .iter()
            .filter(|r| r.value_id() == Some(id) || r.peeled_id() == Some(id))
            .collect();
        let got: Vec<RefRecord> = t.refs_for(id).unwrap().map(Result::unwrap).collect();
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "refs_for {id}");
    }
}

fn check_blocks(t: &Table, recs: &TableRecords) {
    let (mut refs, mut logs, mut objs) = (0, 0, 0);
    for b in t.blocks() {
        let b = b.unwrap_or_else(|e| panic!("block walk: {e}"));
        match b.block_type {
            BlockType::Ref => refs += t.block_records::<RefRecord>(&b).unwrap().len(),
            BlockType::Log => logs += t.block_records::<LogRecord>(&b).unwrap().len(),
            BlockType::Obj => objs += t.block_records::<ObjRecord>(&b).unwrap().len(),
            _ => assert!(!t.block_records::<IndexRecord>(&b).unwrap().is_empty()),
        }
    }
    assert_eq!(refs, recs.refs.len(), "ref records in the block walk");
    assert_eq!(logs, recs.logs.len(), "log records in the block walk");
    assert_eq!(
        objs,
        all(t.iter::<ObjRecord>()).len(),
        "obj records in the block walk"
    );
}
