//! Tests of reading one table: sections, counters, seeks (linear, indexed, leaf index),
//! lazy positioning and the memory the iterators hold.

use super::open::LEAF_INDEX_AFTER;
use super::pool::Pool;
use super::{Table, TableIter};
use crate::codec::format::Footer;
use crate::codec::record::{
    LogRecord, LogUpdate, LogValue, ObjRecord, Record, RefRecord, RefValue,
};
use crate::hash::ObjectId;
use crate::{WriteOptions, Writer};

fn id(i: u16) -> ObjectId {
    let mut b = [0x55u8; 20];
    b[..2].copy_from_slice(&i.to_be_bytes());
    ObjectId::from_bytes(&b).unwrap()
}

fn log(name: &str, message_len: usize) -> LogRecord {
    LogRecord {
        refname: name.as_bytes().to_vec(),
        update_index: 1,
        value: LogValue::Update(LogUpdate {
            new_id: id(1),
            message: vec![b'm'; message_len],
            ..Default::default()
        }),
    }
}

fn write(refs: &[RefRecord], logs: &[LogRecord], opts: WriteOptions) -> Table {
    let mut w = Writer::new(Vec::new(), opts);
    w.set_limits(1, 1).unwrap();
    for r in refs {
        w.add_ref(r).unwrap();
    }
    for l in logs {
        w.add_log(l).unwrap();
    }
    Table::from_bytes("t.ref", w.finish().unwrap()).unwrap()
}

fn refs(n: u16) -> Vec<RefRecord> {
    (0..n)
        .map(|i| RefRecord::new(format!("refs/heads/b{i:05}"), 1, RefValue::Object(id(i))))
        .collect()
}

#[test]
fn sections_present_and_debug() {
    let opts = WriteOptions::default();
    let both = write(&refs(3), &[log("refs/heads/b00000", 10)], opts);
    assert!(both.info().refs.present && both.info().logs.present);
    let only_refs = write(&refs(3), &[], opts);
    assert!(only_refs.info().refs.present && !only_refs.info().logs.present);
    let only_logs = write(&[], &[log("refs/heads/b00000", 10)], opts);
    assert!(!only_logs.info().refs.present && only_logs.info().logs.present);
    let shown = format!("{both:?}");
    assert!(
        shown.starts_with("Table") && shown.contains("t.ref"),
        "{shown}"
    );
}

/// A footer announcing an obj section with an id length of 0, at the offset of the
/// footer's obj field.
#[test]
fn an_obj_section_needs_an_id_length() {
    let t = write(&refs(3), &[], WriteOptions::default());
    let mut bytes = t.bytes().to_vec();
    let n = bytes.len();
    let f = Footer::decode(&bytes).unwrap();
    let field = n - f.size() + f.header.size() + 8;
    bytes[field..field + 8].copy_from_slice(&(5u64 << 5).to_be_bytes());
    let crc = crc32fast::hash(&bytes[n - f.size()..n - 4]);
    bytes[n - 4..].copy_from_slice(&crc.to_be_bytes());
    let e = Table::from_bytes("t.ref", bytes).unwrap_err();
    assert_eq!(e.offset(), Some(field as u64), "{e}");
    assert!(e.message().contains("object id length of 0"), "{e}");
}

/// The iterator's counters while it runs, the table's once it is dropped.
#[test]
fn counters_of_iterators() {
    let t = write(&refs(3), &[], WriteOptions::default());
    assert_eq!(t.stats().records_decoded, 0);
    let mut it = t.refs().unwrap();
    while it.next_record().unwrap().is_some() {}
    assert_eq!(it.stats().records_decoded, 3);
    drop(it);
    assert_eq!(t.stats().records_decoded, 3);
}

/// Looking up an id no ref has decodes only the obj records the seek needs, never the
/// ref blocks of the next prefix.
#[test]
fn refs_for_a_missing_id_reads_no_ref_block() {
    // Refs to even ids only: an odd id's prefix falls between two obj records.
    let even: Vec<RefRecord> = (0..2000u16)
        .map(|i| {
            RefRecord::new(
                format!("refs/heads/b{i:05}"),
                1,
                RefValue::Object(id(2 * i)),
            )
        })
        .collect();
    let t = write(&even, &[], WriteOptions::default());
    assert!(t.info().objs.present);
    let missing = id(1001);
    let prefix = &missing.as_bytes()[..usize::from(t.info().obj_id_len)];
    let before = t.stats();
    {
        let mut it = t.seek::<ObjRecord>(prefix).unwrap();
        it.next_record().unwrap();
    }
    let seek_only = t.stats().since(before);
    let before = t.stats();
    assert!(t.refs_for(&missing).unwrap().is_empty());
    assert_eq!(t.stats().since(before), seek_only);
    assert_eq!(t.refs_for(&id(1998)).unwrap().len(), 1);
}

/// After [`LEAF_INDEX_AFTER`] indexed seeks a section's leaf index is built once and
/// answers exactly what the block-by-block descent did, for every name present and
/// absent (a multi-level index: 256-byte blocks), with one block read per lookup.
#[test]
fn leaf_index_answers_as_the_descent_does() {
    let all = refs(3000);
    let opts = WriteOptions {
        block_size: 256,
        ..WriteOptions::default()
    };
    let t = write(&all, &[], opts);
    let mut names: Vec<Vec<u8>> = Vec::new();
    for r in &all {
        names.push(r.refname.clone());
        let mut after = r.refname.clone();
        after.push(b'x');
        names.push(after);
    }
    names.push(b"a".to_vec());
    names.push(b"zzz".to_vec());
    let lookup = |t: &Table, n: &[u8]| {
        let mut it = t.seek_ref(n).unwrap();
        let first = it.next_record().unwrap().map(|r| r.refname.clone());
        (first, it.stats())
    };
    // Before: the descent (the first seeks only count towards the threshold).
    let descent: Vec<_> = names.iter().map(|n| lookup(&t, n)).collect();
    assert!(
        t.stats().index_entries_cached > 0,
        "built after enough seeks"
    );
    let cached = t.stats().index_entries_cached;
    let fresh = write(&all, &[], opts);
    // Exactly LEAF_INDEX_AFTER seeks descend block by block; the next one builds it.
    for k in 0..=LEAF_INDEX_AFTER {
        let built = fresh.stats().index_entries_cached;
        assert_eq!(built, 0, "leaf index built before indexed seek {k}");
        lookup(&fresh, b"refs/heads/b00000");
    }
    assert_eq!(
        fresh.stats().index_entries_cached,
        cached,
        "built by seek {LEAF_INDEX_AFTER}"
    );
    for (n, (want, slow)) in names.iter().zip(&descent) {
        let (got, fast) = lookup(&fresh, n);
        assert_eq!(&got, want, "{}", String::from_utf8_lossy(n));
        assert!(fast.blocks_read <= 1, "{fast:?} vs {slow:?}");
        assert!(fast.blocks_read < slow.blocks_read || slow.blocks_read <= 1);
    }
    // Built once per table.
    assert_eq!(fresh.stats().index_entries_cached, cached);
}

/// Small inflated log blocks stay with the iterator after their last record; one over
/// `KEEP_INFLATED` is let go as soon as its last record is read.
#[test]
fn inflated_log_blocks_kept_when_small_released_when_big() {
    let small: Vec<LogRecord> = (0..50)
        .map(|i| log(&format!("refs/heads/b{i:02}"), 200))
        .collect();
    let t = write(&[], &small, WriteOptions::default());
    let mut it = t.logs().unwrap();
    let mut n = 0;
    while it.next_record().unwrap().is_some() {
        n += 1;
        assert!(it.inflated_bytes() > 0);
    }
    assert_eq!(n, 50);
    let opts = WriteOptions {
        block_size: 16_777_215,
        ..WriteOptions::default()
    };
    let t = write(&[], &[log("refs/heads/big", 2 << 20)], opts);
    let mut it = t.logs().unwrap();
    assert!(it.next_record().unwrap().is_some());
    assert_eq!(it.inflated_bytes(), 0);
    assert!(it.next_record().unwrap().is_none());
}

/// A lazy seek reads only the first key of a big log block; the block is inflated once,
/// when the record is restored, and the records then come out as a plain seek gives
/// them. A key past the first record, or a section with an index, seeks as usual.
#[test]
fn lazy_seek_peeks_then_inflates_once() {
    let opts = WriteOptions {
        block_size: 16_777_215,
        ..WriteOptions::default()
    };
    let logs = [log("refs/heads/a", 2 << 20), log("refs/heads/b", 100)];
    let t = write(&[], &logs, opts);
    let all: Vec<LogRecord> = t.logs().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(all.len(), 2);
    for key in [&b""[..], b"refs/heads/", b"refs/heads/a"] {
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(key).unwrap();
        assert_eq!(it.stats().blocks_inflated, 0);
        assert_eq!(it.inflated_bytes(), 0);
        assert!(it.next_key().unwrap());
        assert_eq!(it.current().refname, b"refs/heads/a");
        assert_eq!(it.current().value_bytes(), 0, "only the key is known");
        it.restore_current().unwrap();
        assert_eq!(it.current(), &all[0]);
        assert_eq!(it.next_record().unwrap(), Some(&all[1]));
        assert!(it.next_record().unwrap().is_none());
        assert_eq!(it.stats().blocks_inflated, 1);
    }
    // Moving past a peeked record without restoring it.
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek_lazy(b"").unwrap();
    assert!(it.next_key().unwrap());
    assert!(it.next_key().unwrap());
    assert_eq!(it.current(), &all[1]);
    // The first key is before the one sought: a full seek.
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek_lazy(b"refs/heads/a\x01").unwrap();
    assert_eq!(it.stats().blocks_inflated, 1);
    assert_eq!(it.next_record().unwrap(), Some(&all[1]));
    // Refs are never peeked.
    let r = write(&refs(3), &[], WriteOptions::default());
    let mut it = r.unpositioned::<RefRecord>().unwrap();
    it.seek_lazy(b"").unwrap();
    assert_eq!(
        it.next_record().unwrap().unwrap().refname,
        b"refs/heads/b00000"
    );
}

/// Two log blocks that each inflate to over `KEEP_INFLATED`: a 2 MiB message, then
/// another and a small one.
fn two_big_log_blocks() -> Table {
    let opts = WriteOptions {
        block_size: 3 << 20,
        ..WriteOptions::default()
    };
    let logs = [
        log("refs/heads/a", 2 << 20),
        log("refs/heads/b", 2 << 20),
        log("refs/heads/c", 10),
    ];
    let t = write(&[], &logs, opts);
    assert_eq!(
        t.info().logs.index_offset,
        0,
        "a linear seek probes the next block"
    );
    t
}

/// Four log blocks that each inflate to over `KEEP_INFLATED`, so the section has an
/// index. A full scan starts at the section start and is positioned lazily (nothing
/// inflated); a lookup by key goes through the index and never peeks at the first
/// block, even for a key at or before the first record (peeking would add a partial
/// inflate to every indexed lookup).
#[test]
fn an_indexed_log_section_is_peeked_only_by_full_scans() {
    let opts = WriteOptions {
        block_size: 3 << 20,
        ..WriteOptions::default()
    };
    let logs: Vec<LogRecord> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| log(&format!("refs/heads/{n}"), 2 << 20))
        .collect();
    let t = write(&[], &logs, opts);
    assert_ne!(t.info().logs.index_offset, 0, "four blocks are indexed");
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek_lazy(b"").unwrap();
    assert_eq!(
        it.stats().blocks_inflated,
        0,
        "a full scan positions lazily"
    );
    assert_eq!(
        name_and_size(it.next_record().unwrap()).map(|(n, _)| n),
        Some("refs/heads/a".to_string())
    );
    for name in ["refs/heads/", "refs/heads/a"] {
        let mut key = Vec::new();
        log(name, 0).write_key(&mut key);
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(&key).unwrap();
        assert_eq!(it.stats().blocks_inflated, 1, "{name}: through the index");
        assert_eq!(
            name_and_size(it.next_record().unwrap()).map(|(n, _)| n),
            Some("refs/heads/a".to_string())
        );
    }
}

/// Seeking through a multi-level index: each index level costs a binary search in its
/// block and one comparison against the parent entry's key, and the ref block one
/// more (its first key against the entry's). Exact totals of the work, as the
/// complexity baseline holds them, for fewer seeks than build the leaf index.
#[test]
fn indexed_seek_comparisons() {
    let opts = WriteOptions {
        block_size: 256,
        ..WriteOptions::default()
    };
    let all = refs(3000);
    let t = write(&all, &[], opts);
    assert_ne!(t.info().refs.index_offset, 0);
    let before = t.stats();
    let picked: Vec<&RefRecord> = all.iter().step_by(50).collect();
    assert!(picked.len() as u32 <= LEAF_INDEX_AFTER);
    for r in &picked {
        let mut it = t.seek_ref(&r.refname).unwrap();
        assert_eq!(it.next_record().unwrap().unwrap().refname, r.refname);
    }
    let work = t.stats().since(before);
    assert_eq!(work.index_entries_cached, 0, "no leaf index yet");
    assert_eq!((work.blocks_read, work.key_comparisons), (180, 1481));
}

/// What a record is, without printing megabytes when a test fails.
fn name_and_size(r: Option<&LogRecord>) -> Option<(String, usize)> {
    r.map(|l| {
        (
            String::from_utf8_lossy(&l.refname).into_owned(),
            l.value_bytes(),
        )
    })
}

/// A seek that probes the next big block and moves on lets the block it left go: the
/// iterator holds one big block, not two.
#[test]
fn a_seek_keeps_one_big_block() {
    let t = two_big_log_blocks();
    let mut key = Vec::new();
    log("refs/heads/b", 0).write_key(&mut key);
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek(&key).unwrap();
    assert_eq!(it.stats().blocks_inflated, 2);
    let held = it.inflated_bytes();
    assert!(held > 2 << 20 && held < 4 << 20, "{held}");
    let got = name_and_size(it.next_record().unwrap());
    assert_eq!(got.map(|g| g.0), Some("refs/heads/b".to_string()));
}

/// A peeked record whose block no longer starts with the peeked key is an error.
#[test]
fn a_peeked_key_must_match_its_block() {
    let t = two_big_log_blocks();
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek_lazy(b"").unwrap();
    assert!(it.next_key().unwrap());
    it.rec.refname = b"refs/heads/z".to_vec();
    let e = it.restore_current().unwrap_err();
    assert!(e.message().contains("changed while being read"), "{e}");
}

/// Inside [`TableIter::recycle_with`] an iterator inflates into the buffer handed in and
/// hands back the big ones it let go; outside it keeps none of them.
#[test]
fn recycled_buffers_go_round() {
    let t = two_big_log_blocks();
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek_lazy(b"").unwrap();
    let mut pool = Pool {
        buf: Vec::with_capacity(5 << 20),
        rec: None,
    };
    let step = |it: &mut TableIter<LogRecord>, pool: &mut Pool<LogRecord>| {
        it.recycle_with(pool, |it| {
            it.next_key()?;
            it.restore_current()?;
            Ok(name_and_size(Some(it.current())))
        })
        .unwrap()
    };
    // The peeked first block is inflated into the 5 MiB buffer handed in, and as its
    // one record is read, the buffer comes back holding the block.
    let (name, size) = step(&mut it, &mut pool).unwrap();
    assert_eq!((name.as_str(), size > 2 << 20), ("refs/heads/a", true));
    assert_eq!(pool.buf.capacity(), 5 << 20);
    assert!(
        pool.buf.len() > 2 << 20,
        "the buffer handed in was used: {}",
        pool.buf.len()
    );
    assert!(pool.rec.is_none());
    // The second block is inflated into it again; it stays while "c" is left.
    let (name, _) = step(&mut it, &mut pool).unwrap();
    assert_eq!(name, "refs/heads/b");
    assert_eq!(pool.buf.capacity(), 0);
    assert_eq!(it.inflated.capacity(), 5 << 20);
    let (name, _) = step(&mut it, &mut pool).unwrap();
    assert_eq!(name, "refs/heads/c");
    assert_eq!(pool.buf.capacity(), 5 << 20);
    assert!(it.pool.is_none());
    // Outside recycle_with nothing is kept for recycling.
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek(b"").unwrap();
    while it.next_record().unwrap().is_some() {}
    assert!(it.pool.is_none());
    assert_eq!(it.inflated_bytes(), 0);
    // At its end, an iterator in recycle_with hands back its big last record.
    let t = write(
        &[],
        &[log("refs/heads/a", 2 << 20)],
        WriteOptions {
            block_size: 3 << 20,
            ..WriteOptions::default()
        },
    );
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek(b"").unwrap();
    assert!(it.next_record().unwrap().is_some());
    let mut pool = Pool::default();
    let more = it.recycle_with(&mut pool, |it| it.next_key());
    assert!(!more.unwrap());
    assert!(pool.rec.is_some_and(|r| r.value_bytes() > 2 << 20));
}

/// A peeked block that then fails to inflate (its stream damaged past the peeked part)
/// reports the error when the record is restored, and the iterator ends.
#[test]
fn lazy_seek_reports_damage_found_later() {
    let opts = WriteOptions {
        block_size: 16_777_215,
        ..WriteOptions::default()
    };
    let t = write(&[], &[log("refs/heads/a", 1 << 20)], opts);
    let mut bytes = t.bytes().to_vec();
    let f = Footer::decode(&bytes).unwrap();
    let end = bytes.len() - f.size();
    // The last bytes of the zlib stream hold its checksum.
    bytes[end - 3] ^= 0xff;
    let crc_at = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[end..crc_at]);
    bytes[crc_at..].copy_from_slice(&crc.to_be_bytes());
    let t = Table::from_bytes("t.ref", bytes).unwrap();
    let mut it = t.unpositioned::<LogRecord>().unwrap();
    it.seek_lazy(b"").unwrap();
    assert!(it.next_key().unwrap());
    let e = it.restore_current().unwrap_err();
    assert!(
        e.message().contains("zlib") || e.message().contains("inflate"),
        "{e}"
    );
    assert!(it.next_record().unwrap().is_none());
}

/// Seeking without an index walks the blocks: one key comparison per block start it
/// looks at, then a binary search inside the block.
#[test]
fn linear_seek_comparisons() {
    let opts = WriteOptions {
        block_size: 1024,
        ..WriteOptions::default()
    };
    let t = write(&refs(60), &[], opts);
    assert_eq!(t.info().refs.index_offset, 0, "no index: a linear seek");
    let before = t.stats();
    {
        let mut it = t.seek_ref(b"refs/heads/b00059").unwrap();
        assert_eq!(
            it.next_record().unwrap().unwrap().refname,
            b"refs/heads/b00059"
        );
    }
    assert_eq!(t.stats().since(before).key_comparisons, 8);
    // Every key, block starts included: exact totals of the work.
    let before = t.stats();
    for r in refs(60) {
        let mut it = t.seek_ref(&r.refname).unwrap();
        assert_eq!(it.next_record().unwrap().unwrap().refname, r.refname);
    }
    let all = t.stats().since(before);
    assert_eq!((all.blocks_read, all.key_comparisons), (120, 624));
}

/// An index entry moved to point at the next block, or back at the previous one: a
/// lookup of a key of the block it should point at is an error, through the index blocks and through the in-memory leaf
/// index alike, never a silent "not found".
#[test]
fn an_index_entry_pointing_at_a_later_block_is_corrupt() {
    use crate::codec::record::IndexRecord;
    use crate::codec::varint;
    let opts = WriteOptions {
        block_size: 256,
        ..WriteOptions::default()
    };
    let t = write(&refs(200), &[], opts);
    let index = t.info().refs.index_offset;
    assert!(index > 0, "the table has a ref index");
    // The index block's first two entries: their record offsets and block pointers.
    let mut entries = Vec::new();
    let mut walk = t.blocks();
    while let Some(b) = walk.next_block() {
        let (info, data) = b.unwrap();
        if info.offset == index {
            crate::walk::for_each_record::<IndexRecord>(&info, data, &t.codec_context(), |r| {
                entries.push((
                    info.offset as usize + r.offset,
                    r.rec.offset,
                    r.rec.last_key.clone(),
                ))
            });
        }
    }
    // Entry 1 points at the second block (offset 256); make it point at the third,
    // whose offset has a varint of the same length.
    let (at, ptr, key) = entries[1].clone();
    let next_ptr = entries[2].1;
    let mut bytes = t.bytes().to_vec();
    // The value varint follows the key: prefix length, suffix length and type, suffix.
    let (prefix, l1) = varint::get(&bytes[at..]).unwrap();
    let (_, l2) = varint::get(&bytes[at + l1..]).unwrap();
    let ptr_at = at + l1 + l2 + key.len() - prefix as usize;
    assert_eq!(varint::get(&bytes[ptr_at..]).unwrap(), (ptr, 2));
    let mut enc = Vec::new();
    varint::put(&mut enc, next_ptr);
    assert_eq!(enc.len(), 2);
    bytes[ptr_at..ptr_at + 2].copy_from_slice(&enc);
    let damaged = Table::from_bytes("t.ref", bytes.clone()).unwrap();
    // The first key of the second block: just past entry 0's key.
    let victim = refs(200)
        .into_iter()
        .map(|r| r.refname)
        .find(|n| n[..] > entries[0].2[..])
        .unwrap();
    assert!(t.read_ref(&victim).unwrap().is_some());
    for round in 0..(LEAF_INDEX_AFTER + 2) {
        let r = damaged.read_ref(&victim);
        assert!(r.is_err(), "lookup {round}: {r:?}");
    }
    // Entry 2 pointing back at the second block (as entry 1 does): a lookup of a key
    // of the third block would otherwise start in the second and take the third's
    // first record for the answer.
    let (at2, ptr2, key2) = entries[2].clone();
    let mut bytes = t.bytes().to_vec();
    let (prefix, l1) = varint::get(&bytes[at2..]).unwrap();
    let (_, l2) = varint::get(&bytes[at2 + l1..]).unwrap();
    let ptr_at = at2 + l1 + l2 + key2.len() - prefix as usize;
    assert_eq!(varint::get(&bytes[ptr_at..]).unwrap(), (ptr2, 2));
    let mut enc = Vec::new();
    varint::put(&mut enc, ptr);
    bytes[ptr_at..ptr_at + 2].copy_from_slice(&enc);
    let damaged = Table::from_bytes("t.ref", bytes).unwrap();
    let victim = refs(200)
        .into_iter()
        .map(|r| r.refname)
        .filter(|n| n[..] > entries[1].2[..])
        .nth(1)
        .unwrap();
    assert!(t.read_ref(&victim).unwrap().is_some());
    for round in 0..(LEAF_INDEX_AFTER + 2) {
        let r = damaged.read_ref(&victim);
        assert!(r.is_err(), "lookup {round} of a later block's key: {r:?}");
    }
}
