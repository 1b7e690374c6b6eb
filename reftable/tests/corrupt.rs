//! Every corrupt input we know of (bad varints and lengths, prefix compression past the last
//! key, and the inputs that crash git 2.47.3) gives a clear error, never a panic; and every API misuse is reported as such.

use reftable::{
    ErrorKind, HashId, LogRecord, ObjectId, RefRecord, RefValue, Table, WriteOptions, Writer,
};

use reftable_testkit::tables::{base_table, fix_crc, log_entry, oid};

fn log(name: &str, ui: u64, msg: &str) -> LogRecord {
    log_entry(name, ui, msg, HashId::Sha1)
}

fn base() -> Vec<u8> {
    base_table(WriteOptions::default())
}

fn be24(b: &[u8]) -> usize {
    (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize
}

fn footer_field(bytes: &[u8], i: usize) -> usize {
    let at = bytes.len() - 68 + 24 + 8 * i;
    u64::from_be_bytes(bytes[at..at + 8].try_into().unwrap()) as usize
}

fn set_footer_field(bytes: &mut [u8], i: usize, v: u64) {
    let at = bytes.len() - 68 + 24 + 8 * i;
    bytes[at..at + 8].copy_from_slice(&v.to_be_bytes());
    fix_crc(bytes);
}

/// Open, then read everything: refs, logs, seeks and object lookups. The first error wins.
fn read_all(bytes: Vec<u8>) -> reftable::Result<()> {
    let t = Table::from_bytes("corrupt.ref", bytes)?;
    for r in t.refs()? {
        r?;
    }
    for l in t.logs()? {
        l?;
    }
    for name in [&b"HEAD"[..], b"refs/heads/main", b"refs/tags/v1", b"zzz"] {
        t.read_ref(name)?;
        if let Some(r) = t.seek_log(name)?.next() {
            r?;
        }
    }
    t.refs_for(&oid(1))?.collect::<reftable::Result<Vec<_>>>()?;
    for b in t.blocks() {
        b?;
    }
    Ok(())
}

fn expect(bytes: Vec<u8>, kind: ErrorKind, what: &str) {
    match read_all(bytes) {
        Ok(()) => panic!("{what}: read without error"),
        Err(e) => {
            assert_eq!(e.kind(), kind, "{what}: {e}");
            assert!(e.file().is_some(), "{what}: no file in {e}");
            assert!(e.offset().is_some(), "{what}: no offset in {e}");
        }
    }
}

#[test]
fn base_table_reads() {
    read_all(base()).unwrap();
}

#[test]
fn short_files() {
    expect(Vec::new(), ErrorKind::Format, "empty file");
    expect(vec![0; 1024], ErrorKind::Format, "1024 zero bytes");
    let b = base();
    for len in [4, 5, 23, 24, 40, 91] {
        expect(
            b[..len].to_vec(),
            ErrorKind::Format,
            &format!("truncated to {len}"),
        );
    }
    // Every truncation is an error or (never here) valid data, and never a panic.
    for len in 0..b.len() {
        let _ = read_all(b[..len].to_vec());
    }
}

#[test]
fn header_and_footer() {
    let mut b = base();
    b[0] = b'X';
    expect(b, ErrorKind::Format, "bad magic");
    let mut b = base();
    b[4] = 3;
    expect(b, ErrorKind::Format, "version 3");
    let mut b = base();
    let n = b.len();
    b[n - 68 + 10] ^= 1;
    fix_crc(&mut b);
    expect(b, ErrorKind::Format, "footer differs from header");
    let mut b = base();
    let n = b.len();
    b[n - 1] ^= 0xff;
    expect(b, ErrorKind::Format, "CRC flipped");
    let mut b = base();
    let obj = footer_field(&b, 1) as u64;
    set_footer_field(&mut b, 1, (obj | 1 << 5) & !31);
    expect(b, ErrorKind::Format, "obj section with obj_id_len 0");
    // SHA-256 table with an unknown hash id in header and footer.
    let mut b = base_table(WriteOptions::default().hash(HashId::Sha256));
    let n = b.len();
    b[24] = b'x';
    b[n - 72 + 24] = b'x';
    let crc = crc32fast::hash(&b[n - 72..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_be_bytes());
    expect(b, ErrorKind::Format, "unknown hash id");
}

#[test]
fn block_header_problems() {
    let mut b = base();
    b[24] = b'x';
    expect(b, ErrorKind::Format, "invalid block type");
    // block_len 0xffffff in the first block: git 2.47.3 segfaults.
    let mut b = base();
    b[25..28].copy_from_slice(&[0xff, 0xff, 0xff]);
    expect(b, ErrorKind::Format, "block_len past the data");
    let mut b = base();
    b[25..28].copy_from_slice(&[0, 0, 3]);
    expect(b, ErrorKind::Format, "block_len below the header");
    // Restart count 0xffff: git 2.47.3 segfaults.
    let mut b = base();
    let len = be24(&b[25..28]);
    b[len - 2..len].copy_from_slice(&[0xff, 0xff]);
    expect(b, ErrorKind::Format, "restart count 0xffff");
    // First restart offset 0xffffff: out of range, found on seek.
    let mut b = base();
    let len = be24(&b[25..28]);
    let count = u16::from_be_bytes([b[len - 2], b[len - 1]]) as usize;
    let first = len - 2 - 3 * count;
    b[first..first + 3].copy_from_slice(&[0xff, 0xff, 0xff]);
    expect(b, ErrorKind::Format, "restart offset 0xffffff");
    // A restart pointing at a prefix-compressed record.
    let mut b = base();
    let len = be24(&b[25..28]);
    let last = len - 2 - 3;
    let r = be24(&b[last..last + 3]);
    // refs/tags/v1 follows refs/heads/main with a shared prefix: point the last restart at it.
    let tag = (r + 1..len)
        .find(|&i| b[i..].starts_with(b"tags/v1"))
        .unwrap()
        - 2;
    b[last..last + 3].copy_from_slice(&(tag as u32).to_be_bytes()[1..]);
    expect(
        b,
        ErrorKind::Format,
        "restart at a prefix-compressed record",
    );
}

#[test]
fn restart_count_zero_is_read_linearly() {
    // git 2.47.3 aborts on a block without restarts; master reads it linearly, as we do.
    // A refs-only table, so the shorter block is followed by the footer.
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 1).unwrap();
    w.add_ref(&RefRecord::new("a", 1, RefValue::Object(oid(1))))
        .unwrap();
    w.add_ref(&RefRecord::new("b", 1, RefValue::Object(oid(2))))
        .unwrap();
    let mut t = w.finish().unwrap();
    let len = be24(&t[25..28]);
    let count = u16::from_be_bytes([t[len - 2], t[len - 1]]) as usize;
    let footer = t.split_off(len);
    t.truncate(len - 2 - 3 * count);
    t.extend_from_slice(&[0, 0]);
    let new_len = t.len() as u32;
    t[25..28].copy_from_slice(&new_len.to_be_bytes()[1..]);
    t.extend_from_slice(&footer);
    let table = Table::from_bytes("norestart.ref", t).unwrap();
    assert_eq!(table.refs().unwrap().count(), 2);
    assert!(table.read_ref(b"b").unwrap().is_some());
}

#[test]
fn record_problems() {
    // Ref value type 4: git 2.47.3 aborts.
    let mut b = base();
    assert_eq!(&b[28..30], &[0x00, 0x23]);
    b[29] = 0x24;
    expect(b, ErrorKind::Format, "ref value type 4");
    // Key prefix longer than the previous key, in the first record.
    let mut b = base();
    b[28] = 5;
    expect(b, ErrorKind::Format, "prefix on the first record");
    // Empty key.
    let mut b = base();
    b[29] = 0x03;
    expect(b, ErrorKind::Format, "empty key");
    // Varint overflow in the update index.
    let mut b = base();
    for i in 0..4 {
        b[34 + i] = 0xff;
    }
    let _ = read_all(b); // error or garbage, never a panic
}

#[test]
fn log_block_problems() {
    let b = base();
    let log = footer_field(&b, 3);
    assert_eq!(b[log], b'g');
    // block_len 1 and 5: git 2.47.3 overflows the heap (1) or shows an empty reflog (5).
    for len in [1u32, 5] {
        let mut c = b.clone();
        c[log + 1..log + 4].copy_from_slice(&len.to_be_bytes()[1..]);
        expect(c, ErrorKind::Format, &format!("log block_len {len}"));
    }
    // block_len larger than the inflated data.
    let mut c = b.clone();
    c[log + 1..log + 4].copy_from_slice(&0xfff0u32.to_be_bytes()[1..]);
    expect(c, ErrorKind::Format, "log block_len too large");
    // Corrupt deflate stream.
    let mut c = b.clone();
    let mid = log + 4 + (b.len() - 68 - log - 4) / 2;
    c[mid] ^= 0xff;
    expect(c, ErrorKind::Zlib, "flipped byte in the zlib stream");
    // Truncated zlib stream (the footer follows right after).
    let mut c = b[..b.len() - 68 - 10].to_vec();
    c.extend_from_slice(&b[b.len() - 68..]);
    let r = read_all(c).unwrap_err();
    assert!(
        matches!(r.kind(), ErrorKind::Zlib | ErrorKind::Format),
        "{r}"
    );
}

#[test]
fn section_offsets_past_the_table() {
    // Log offset u64::MAX with the CRC fixed: git master's seek_invalid_log_offset.
    let mut b = base();
    set_footer_field(&mut b, 3, u64::MAX);
    let t = Table::from_bytes("x.ref", b).unwrap();
    let e = t.seek_log(b"HEAD").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Format, "{e}");
    // Ref index offset past the end.
    let mut b = base();
    set_footer_field(&mut b, 0, 1 << 40);
    let t = Table::from_bytes("x.ref", b).unwrap();
    let e = t.seek_ref(b"HEAD").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Format, "{e}");
    // Ref index offset pointing at a ref block, which points at itself.
    let mut b = base();
    set_footer_field(&mut b, 0, 0);
    read_all(b).unwrap();
}

/// 100 refs in 256-byte blocks: a table with a ref index. Its bytes and the offset of the
/// index root.
fn indexed_table() -> (Vec<u8>, usize) {
    let mut w = Writer::new(Vec::new(), WriteOptions::default().block_size(256));
    w.set_limits(1, 1).unwrap();
    for i in 0..100 {
        w.add_ref(&RefRecord::new(
            format!("refs/heads/b{i:03}"),
            1,
            RefValue::Object(oid(1)),
        ))
        .unwrap();
    }
    let (b, stats) = w.finish_with_stats().unwrap();
    (b, stats.refs.index_offset as usize)
}

#[test]
fn index_cycles_are_rejected() {
    use reftable::codec::block::{parse_block, BlockCursor};
    use reftable::codec::record::{CodecContext, IndexRecord};
    use reftable::codec::varint;
    // A table with a ref index; point the root's last entry at the root itself.
    let (mut b, root) = indexed_table();
    assert!(root > 0);
    let (mut stats, mut scratch) = (reftable::table::Stats::default(), Vec::new());
    let info = parse_block(
        &b[root..],
        root as u64,
        0,
        256,
        None,
        &mut scratch,
        &mut stats,
    )
    .unwrap()
    .unwrap();
    let ctx = CodecContext {
        hash_size: 20,
        min_update_index: 1,
        max_update_index: 1,
    };
    let data = &b[root..root + info.block_len];
    let (mut c, mut rec) = (BlockCursor::default(), IndexRecord::default());
    c.reset(&info);
    let mut last = None;
    while c.next(&info, data, &mut rec, &ctx, &mut stats).unwrap() {
        last = Some((c.pos(), rec.offset));
    }
    // The last entry's offset is the varint that ends the record.
    let (end, offset) = last.expect("the root has entries");
    let mut old = Vec::new();
    varint::put(&mut old, offset);
    let mut enc = Vec::new();
    varint::put(&mut enc, root as u64);
    assert_eq!(enc.len(), old.len(), "the test table's layout changed");
    let at = root + end - old.len();
    assert_eq!(&b[at..at + old.len()], &old[..]);
    b[at..at + enc.len()].copy_from_slice(&enc);
    let t = Table::from_bytes("cycle.ref", b).unwrap();
    // Many times: past the seeks after which a table builds its in-memory leaf index,
    // which refuses such an index and leaves the lookups to the checked descent.
    for _ in 0..200 {
        let e = t.read_ref(b"refs/heads/b099").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Format, "{e}");
    }
    // Names the damaged entry does not lead to are still found.
    assert!(t.read_ref(b"refs/heads/b000").unwrap().is_some());
}

#[test]
fn api_misuse() {
    let new = || {
        let mut w = Writer::new(Vec::new(), WriteOptions::default());
        w.set_limits(5, 6).unwrap();
        w
    };
    let r = |name: &str, ui| RefRecord::new(name, ui, RefValue::Object(oid(1)));
    // Unsorted keys and duplicates.
    let mut w = new();
    w.add_ref(&r("b", 5)).unwrap();
    assert_eq!(w.add_ref(&r("a", 5)).unwrap_err().kind(), ErrorKind::Api);
    assert_eq!(w.add_ref(&r("b", 5)).unwrap_err().kind(), ErrorKind::Api);
    // Empty key.
    assert_eq!(new().add_ref(&r("", 5)).unwrap_err().kind(), ErrorKind::Api);
    // Update index outside the limits.
    assert_eq!(
        new().add_ref(&r("a", 4)).unwrap_err().kind(),
        ErrorKind::Api
    );
    assert_eq!(
        new().add_ref(&r("a", 7)).unwrap_err().kind(),
        ErrorKind::Api
    );
    assert_eq!(
        new().add_log(&log("a", 7, "m")).unwrap_err().kind(),
        ErrorKind::Api
    );
    // Logs may go below the minimum (rewritten old entries).
    new().add_log(&log("a", 1, "m")).unwrap();
    // Limits after records.
    let mut w = new();
    w.add_ref(&r("a", 5)).unwrap();
    assert_eq!(w.set_limits(1, 9).unwrap_err().kind(), ErrorKind::Api);
    // A ref after a log.
    let mut w = new();
    w.add_log(&log("a", 5, "m")).unwrap();
    assert_eq!(w.add_ref(&r("b", 5)).unwrap_err().kind(), ErrorKind::Api);
    // Multi-line log message.
    assert_eq!(
        new().add_log(&log("a", 5, "one\ntwo")).unwrap_err().kind(),
        ErrorKind::Api
    );
    // Wrong object id size.
    let sha256 = ObjectId::from_bytes(&[1; 32]).unwrap();
    assert_eq!(
        new()
            .add_ref(&RefRecord::new("a", 5, RefValue::Object(sha256)))
            .unwrap_err()
            .kind(),
        ErrorKind::Api
    );
    // Block size above 16 MiB.
    let opts = WriteOptions::default().block_size(1 << 24);
    assert_eq!(
        Writer::try_new(Vec::new(), opts).err().unwrap().kind(),
        ErrorKind::Api
    );
    // A record larger than a block (git's log_overflow: 255-byte message, 256-byte blocks).
    let mut w = Writer::new(Vec::new(), WriteOptions::default().block_size(256));
    w.set_limits(1, 1).unwrap();
    let msg = "x".repeat(255);
    assert_eq!(
        w.add_log(&log("refs/heads/master", 1, &msg))
            .unwrap_err()
            .kind(),
        ErrorKind::EntryTooBig
    );
}

#[test]
fn log_message_normalization() {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 3).unwrap();
    w.add_log(&log("a", 3, "one")).unwrap();
    w.add_log(&log("a", 2, "two\n")).unwrap();
    w.add_log(&log("a", 1, "three\n\n\n")).unwrap();
    w.add_log(&log("b", 1, "")).unwrap();
    let t = Table::from_bytes("n.ref", w.finish().unwrap()).unwrap();
    let msgs: Vec<Vec<u8>> = t
        .logs()
        .unwrap()
        .map(|l| l.unwrap().update().unwrap().message.clone())
        .collect();
    assert_eq!(
        msgs,
        [&b"one\n"[..], b"two\n", b"three\n", b"\n"].map(|m| m.to_vec())
    );
}

/// Records above the table's `max_update_index` (git's writer never writes one) are corrupt,
/// not values to show: a crafted restart offset once made `logs` print a planted entry at
/// update index 2^64-1 in a table whose maximum was 1. Log records below the minimum stay
/// valid (reflog expiry rewrites entries at their old index).
#[test]
fn records_above_the_tables_max_update_index_are_corrupt() {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(3, 5).unwrap();
    w.add_ref(&RefRecord::new(
        "refs/heads/main",
        5,
        RefValue::Object(oid(1)),
    ))
    .unwrap();
    w.add_log(&log("refs/heads/main", 5, "five")).unwrap();
    w.add_log(&log("refs/heads/main", 1, "older than the table"))
        .unwrap();
    let good = w.finish().unwrap();
    read_all(good.clone()).unwrap();
    // Lower max_update_index to 4 in the header and the footer's copy of it.
    let mut b = good;
    let footer = b.len() - 68;
    for at in [16, footer + 16] {
        b[at..at + 8].copy_from_slice(&4u64.to_be_bytes());
    }
    fix_crc(&mut b);
    let t = Table::from_bytes("above-max.ref", b.clone()).unwrap();
    let e = t.refs().unwrap().next().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Format, "{e}");
    assert!(e.to_string().contains("max_update_index"), "{e}");
    let e = t.logs().unwrap().next().unwrap().unwrap_err();
    assert!(e.to_string().contains("max_update_index"), "{e}");
    expect(b, ErrorKind::Format, "records above max_update_index");
}

/// A full listing never goes through the index, so a damaged index cannot add records to it
/// or hide some (an index pointing into a fake block hidden in padding once made `refs`
/// print a ref that is not there and drop real ones).
#[test]
fn full_scans_do_not_trust_the_index() {
    let (mut b, root) = indexed_table();
    // Point the root's first entry into the middle of the first block.
    let suffix_len = (b[root + 5] >> 3) as usize;
    let off_at = root + 6 + suffix_len;
    let (first, old_len) = reftable::codec::varint::get(&b[off_at..]).unwrap();
    assert_eq!(first, 0);
    let mut enc = Vec::new();
    reftable::codec::varint::put(&mut enc, 100);
    assert_eq!(enc.len(), old_len);
    b[off_at..off_at + old_len].copy_from_slice(&enc);
    let t = Table::from_bytes("bad-index.ref", b).unwrap();
    let names: Vec<Vec<u8>> = t.refs().unwrap().map(|r| r.unwrap().refname).collect();
    assert_eq!(names.len(), 100);
    let merged = reftable::MergedTable::new(vec![t], HashId::Sha1).unwrap();
    let listed = merged.refs().unwrap().count();
    assert_eq!(
        listed, 100,
        "a merged listing starts at the section start too"
    );
}
