//! What the table's tests share: tables written with given records and options, ids,
//! log records with messages of a given size.

use super::Table;
use crate::codec::record::{LogRecord, LogUpdate, LogValue, Record, RefRecord, RefValue};
use crate::hash::ObjectId;
use crate::{WriteOptions, Writer};

pub(super) fn id(i: u16) -> ObjectId {
    let mut b = [0x55u8; 20];
    b[..2].copy_from_slice(&i.to_be_bytes());
    ObjectId::from_bytes(&b).unwrap()
}

pub(super) fn log(name: &str, message_len: usize) -> LogRecord {
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

pub(super) fn write(refs: &[RefRecord], logs: &[LogRecord], opts: WriteOptions) -> Table {
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

pub(super) fn refs(n: u16) -> Vec<RefRecord> {
    (0..n)
        .map(|i| RefRecord::new(format!("refs/heads/b{i:05}"), 1, RefValue::Object(id(i))))
        .collect()
}

/// Two log blocks that each inflate to over `KEEP_INFLATED`: a 2 MiB message, then
/// another and a small one.
pub(super) fn two_big_log_blocks() -> Table {
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

/// What a record is, without printing megabytes when a test fails.
pub(super) fn name_and_size(r: Option<&LogRecord>) -> Option<(String, usize)> {
    r.map(|l| {
        (
            String::from_utf8_lossy(&l.refname).into_owned(),
            l.value_bytes(),
        )
    })
}
