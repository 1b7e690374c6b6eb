//! `fsck`: the rules a stack or table breaks that only the check sees (the readers take such
//! input without complaint), one test per rule of git's writer.

use reftable::fsck::{self, FindingKind};
use reftable::table::BlockType;
use reftable::{ObjectId, RefRecord, RefValue, Table, WriteOptions, Writer};

fn id(b: u8) -> ObjectId {
    ObjectId::from_bytes(&[b; 20]).unwrap()
}

/// A table of `names` at update indexes `min..=max`.
fn table(names: &[String], min: u64, max: u64, opts: WriteOptions) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), opts);
    w.set_limits(min, max).unwrap();
    for n in names {
        w.add_ref(&RefRecord::new(n.as_str(), min, RefValue::Object(id(1))))
            .unwrap();
    }
    w.finish().unwrap()
}

fn kinds(report: &fsck::Report) -> Vec<FindingKind> {
    report.findings().map(|f| f.kind).collect()
}

/// git adds a table only after the stack's last update index
/// (`reftable_addition_add`: `min_update_index < next_update_index` is refused): a table
/// that starts at the index the one before it ends at is a stack git never writes.
#[test]
fn tables_sharing_an_update_index_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let opts = WriteOptions::default();
    let names = [
        "0x000000000001-0x000000000002-00000001.ref",
        "0x000000000002-0x000000000003-00000002.ref",
    ];
    let bytes = [
        table(&["refs/heads/a".to_string()], 1, 2, opts),
        table(&["refs/heads/b".to_string()], 2, 3, opts),
    ];
    for (n, b) in names.iter().zip(&bytes) {
        std::fs::write(dir.path().join(n), b).unwrap();
    }
    std::fs::write(
        dir.path().join("tables.list"),
        format!("{}\n{}\n", names[0], names[1]),
    )
    .unwrap();
    let report = fsck::check_stack(dir.path(), None).unwrap();
    assert!(
        kinds(&report).contains(&FindingKind::Stack),
        "{:?}",
        kinds(&report)
    );
    // One index further on, the same two tables are a stack git writes.
    let later = "0x000000000003-0x000000000004-00000002.ref";
    std::fs::remove_file(dir.path().join(names[1])).unwrap();
    std::fs::write(
        dir.path().join(later),
        table(&["refs/heads/b".to_string()], 3, 4, opts),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tables.list"),
        format!("{}\n{later}\n", names[0]),
    )
    .unwrap();
    let report = fsck::check_stack(dir.path(), None).unwrap();
    assert_eq!(report.count(), 0, "{:?}", kinds(&report));
}

/// git's writer takes each key only after the one before it (`writer_add_record`), in
/// one block or across two: a block that starts with the key the previous block ended
/// with is reported, not only a repeat inside one block.
#[test]
fn a_key_repeated_across_a_block_boundary_is_reported() {
    let names: Vec<String> = (0..100).map(|i| format!("refs/heads/a{i:03}")).collect();
    let opts = WriteOptions::default().block_size(256).index_objects(false);
    let mut bytes = table(&names, 1, 1, opts);
    let t = Table::from_bytes("t.ref", bytes.clone()).unwrap();
    let second = t
        .blocks()
        .map(|b| b.unwrap())
        .filter(|b| b.block_type == BlockType::Ref)
        .nth(1)
        .expect("a second ref block");
    // The block's first record: prefix length 0, then (suffix length << 3 | type), then
    // the whole key.
    let at = second.offset as usize + 4;
    assert_eq!(bytes[at], 0, "a restart: no shared prefix");
    let key_at = at + 2;
    let key = std::str::from_utf8(&bytes[key_at..key_at + 15])
        .unwrap()
        .to_string();
    let i = names
        .iter()
        .position(|n| *n == key)
        .expect("the block's first key");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.ref");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        fsck::check_table(&path).unwrap().count(),
        0,
        "the table as written"
    );
    bytes[key_at..key_at + 15].copy_from_slice(names[i - 1].as_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let report = fsck::check_table(&path).unwrap();
    assert!(report.count() > 0, "a repeated key across blocks passed");
}

/// git names a table after both its first and its last update index (`format_name`): a
/// name that gets either one wrong is reported, not only one that gets both wrong.
#[test]
fn a_table_name_that_disagrees_with_its_header_is_reported() {
    let opts = WriteOptions::default();
    for (name, reported) in [
        ("0x000000000001-0x000000000002-00000001.ref", false),
        ("0x000000000001-0x000000000003-00000001.ref", true),
        ("0x000000000000-0x000000000002-00000001.ref", true),
        ("0x000000000005-0x000000000006-00000001.ref", true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let bytes = table(&["refs/heads/a".to_string()], 1, 2, opts);
        std::fs::write(dir.path().join(name), bytes).unwrap();
        std::fs::write(dir.path().join("tables.list"), format!("{name}\n")).unwrap();
        let report = fsck::check_stack(dir.path(), None).unwrap();
        let said = report
            .findings()
            .any(|f| f.kind == FindingKind::Stack && f.text.contains("file name says"));
        assert_eq!(said, reported, "{name}: {:?}", kinds(&report));
    }
}
