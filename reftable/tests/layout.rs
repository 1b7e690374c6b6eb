//! Exact block layouts git's own tests pin, reproduced by our writer.

use reftable::table::BlockType;
use reftable::{HashId, ObjectId, RefRecord, RefValue, Table, WriteOptions, Writer};

/// git's `block_iterator` unit test: 500 refs `refs/heads/branch-000`..`499` pointing at the
/// null id, default options.
#[test]
fn git_block_iterator_vector() {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 1).unwrap();
    for i in 0..500 {
        let name = format!("refs/heads/branch-{i:03}");
        w.add_ref(&RefRecord::new(
            name,
            1,
            RefValue::Object(ObjectId::null(HashId::Sha1)),
        ))
        .unwrap();
    }
    let (bytes, stats) = w.finish_with_stats().unwrap();
    let table = Table::from_bytes("vector.ref", bytes).unwrap();
    let blocks: Vec<_> = table.blocks().collect::<Result<_, _>>().unwrap();
    let summary: Vec<(u8, usize, usize)> = blocks
        .iter()
        .map(|b| {
            let n = match b.block_type {
                BlockType::Ref => table.block_records::<RefRecord>(b).unwrap().len(),
                BlockType::Index => table
                    .block_records::<reftable::codec::record::IndexRecord>(b)
                    .unwrap()
                    .len(),
                BlockType::Obj => table
                    .block_records::<reftable::codec::record::ObjRecord>(b)
                    .unwrap()
                    .len(),
                _ => unreachable!(),
            };
            (b.block_type.byte(), n, b.restart_count)
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (b'r', 158, 10),
            (b'r', 159, 10),
            (b'r', 159, 10),
            (b'r', 24, 2),
            (b'i', 4, 1),
            (b'o', 1, 1),
        ]
    );
    assert_eq!(stats.refs.blocks, 4);
    assert_eq!(stats.refs.index_blocks, 1);
    assert_eq!(stats.obj_id_len, 2);
    // Every ref is found by a seek through the index.
    for i in (0..500).step_by(7) {
        let name = format!("refs/heads/branch-{i:03}");
        let r = table.read_ref(name.as_bytes()).unwrap().unwrap();
        assert_eq!(r.refname, name.as_bytes());
    }
    assert_eq!(
        table
            .refs_for(&ObjectId::null(HashId::Sha1))
            .unwrap()
            .count(),
        500
    );
}

/// An empty table is a header followed by a footer (92 bytes for SHA-1, 100 for SHA-256),
/// reported as EmptyTable, and reads as empty.
#[test]
fn empty_table() {
    for (hash, size) in [(HashId::Sha1, 92), (HashId::Sha256, 100)] {
        let mut out = Vec::new();
        let w = Writer::new(&mut out, WriteOptions::default().hash(hash));
        let err = w.finish().unwrap_err();
        assert_eq!(err.kind(), reftable::ErrorKind::EmptyTable);
        assert_eq!(out.len(), size);
        let t = Table::from_bytes("empty.ref", out).unwrap();
        assert_eq!(t.refs().unwrap().count(), 0);
        assert_eq!(t.logs().unwrap().count(), 0);
        assert_eq!(t.hash(), hash);
    }
}
