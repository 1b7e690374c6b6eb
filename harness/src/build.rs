//! Turning generated records into tables: the sorted, de-duplicated records a writer
//! accepts, and the table it writes from them.

use std::io::{self, Write};

use reftable::{
    ErrorKind, LogRecord, LogUpdate, LogValue, RefRecord, Result, Table, WriteOptions, Writer,
    WriterStats,
};

use crate::inputs::{stored_message, FuzzLog, FuzzRef};

/// The records of one table, in the order a writer takes them, with log messages as the
/// table will store them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableRecords {
    /// Smallest update index of the table.
    pub min_update_index: u64,
    /// Largest update index of the table.
    pub max_update_index: u64,
    /// Ref records, strictly increasing by name.
    pub refs: Vec<RefRecord>,
    /// Log records, strictly increasing by key, messages as stored.
    pub logs: Vec<LogRecord>,
}

impl TableRecords {
    /// Records for update indexes `min..=max` from generated refs and logs: ref update
    /// indexes wrap into the range, log update indexes count down from `max`; for repeated
    /// keys the last one wins; logs whose message the writer must refuse are dropped.
    pub fn new(
        min: u64,
        max: u64,
        refs: &[FuzzRef],
        logs: &[FuzzLog],
        opts: &WriteOptions,
    ) -> TableRecords {
        let span = max - min;
        let mut rs: Vec<RefRecord> = refs
            .iter()
            .map(|r| {
                let ui = min + u64::from(r.ui) % span.saturating_add(1);
                RefRecord::new(r.name.0.clone(), ui, r.value.value(opts.hash))
            })
            .collect();
        // Stable sort, then keep the last of equal names.
        rs.sort_by(|a, b| a.refname.cmp(&b.refname));
        rs.reverse();
        rs.dedup_by(|later, earlier| later.refname == earlier.refname);
        rs.reverse();
        let mut ls: Vec<(Vec<u8>, LogRecord)> = logs
            .iter()
            .filter_map(|l| {
                let value = match &l.update {
                    None => LogValue::Deletion,
                    Some(u) => {
                        let mut upd = u.update(opts.hash);
                        upd.message = stored_message(&upd.message, opts.exact_log_message)?;
                        LogValue::Update(upd)
                    }
                };
                let rec = LogRecord {
                    refname: l.name.0.clone(),
                    update_index: max.saturating_sub(u64::from(l.ui)),
                    value,
                };
                let key = LogRecord::seek_key(&rec.refname, rec.update_index);
                Some((key, rec))
            })
            .collect();
        ls.sort_by(|a, b| a.0.cmp(&b.0));
        ls.reverse();
        ls.dedup_by(|later, earlier| later.0 == earlier.0);
        ls.reverse();
        TableRecords {
            min_update_index: min,
            max_update_index: max,
            refs: rs,
            logs: ls.into_iter().map(|(_, l)| l).collect(),
        }
    }

    /// Whether there is no record at all.
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty() && self.logs.is_empty()
    }

    /// An upper bound on the size of a table of these records: every block at least half
    /// full except for one record too large for the rest of it (so at most 4 times the
    /// records' encoded size, plus one block), and index levels adding at most as much again.
    pub fn size_bound(&self, opts: &WriteOptions) -> u64 {
        let id = opts.hash.size() as u64;
        let refs: u64 = self
            .refs
            .iter()
            .map(|r| 2 * r.refname.len() as u64 + 2 * id + 32)
            .sum();
        let update = |u: &LogUpdate| {
            (u.committer.name.len() + u.committer.email.len() + u.message.len()) as u64
        };
        let logs: u64 = self
            .logs
            .iter()
            .map(|l| 2 * (l.refname.len() as u64 + 9) + 2 * id + 48 + l.update().map_or(0, update))
            .sum();
        let block = u64::from(if opts.block_size == 0 {
            4096
        } else {
            opts.block_size
        });
        8 * (refs + logs) + 8 * block + 4096
    }

    /// Write the records with `opts`: refs with `add_ref`, logs with `add_log` (which
    /// normalizes messages unless `exact_log_message`), or `add_log_verbatim` when
    /// `verbatim`. Returns the bytes and the writer's stats. Output beyond
    /// [`TableRecords::size_bound`] is refused with an I/O error ([`RUNAWAY`]): a writer
    /// that never stops writing.
    pub fn write(&self, opts: WriteOptions, verbatim: bool) -> Result<(Vec<u8>, WriterStats)> {
        let sink = BoundedSink {
            out: Vec::new(),
            limit: self.size_bound(&opts),
        };
        let mut w = Writer::new(sink, opts);
        w.set_limits(self.min_update_index, self.max_update_index)?;
        for r in &self.refs {
            w.add_ref(r)?;
        }
        for l in &self.logs {
            if verbatim {
                w.add_log_verbatim(l)?;
            } else {
                w.add_log(l)?;
            }
        }
        let (sink, stats) = w.finish_with_stats()?;
        Ok((sink.out, stats))
    }

    /// Write the records and open the result. `Ok(None)` when the writer rightly refuses:
    /// a record larger than a block, or no records at all. Any other error is a bug.
    pub fn table(&self, name: &str, opts: WriteOptions) -> Option<(Table, WriterStats)> {
        match self.write(opts, false) {
            Ok((bytes, stats)) => {
                assert!(!self.is_empty(), "an empty table was written without error");
                let t = Table::from_bytes(name, bytes)
                    .unwrap_or_else(|e| panic!("cannot open the table just written: {e}"));
                Some((t, stats))
            }
            Err(e) if e.kind() == ErrorKind::EntryTooBig => None,
            Err(e) if e.kind() == ErrorKind::EmptyTable && self.is_empty() => None,
            Err(e) => panic!("writer refused valid records: {e}"),
        }
    }
}

/// The message of the I/O error [`TableRecords::write`] gets from its output past the bound.
pub const RUNAWAY: &str = "table output exceeds the bound for its records";

/// A `Vec` that refuses writes past `limit` bytes.
struct BoundedSink {
    out: Vec<u8>,
    limit: u64,
}

impl Write for BoundedSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if (self.out.len() + buf.len()) as u64 > self.limit {
            return Err(io::Error::other(format!(
                "{RUNAWAY} ({} bytes)",
                self.limit
            )));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::{FuzzLogUpdate, Message, Name, Oid, RefVal};

    fn fref(name: &str, ui: u8, v: u8) -> FuzzRef {
        FuzzRef {
            name: Name(name.as_bytes().to_vec()),
            ui,
            value: RefVal::Val1(Oid::Pool(v)),
        }
    }

    #[test]
    fn last_of_equal_keys_wins_and_messages_are_stored_as_written() {
        let opts = WriteOptions::default();
        let log = |msg: &str| FuzzLog {
            name: Name(b"a".to_vec()),
            ui: 0,
            update: Some(FuzzLogUpdate {
                old: Oid::Pool(0),
                new: Oid::Pool(1),
                who: 0,
                time: 1,
                tz: 0,
                message: Message(msg.as_bytes().to_vec()),
            }),
        };
        let recs = TableRecords::new(
            5,
            6,
            &[fref("b", 0, 1), fref("a", 1, 2), fref("b", 0, 3)],
            &[log("one\n\n"), log("two\nlines")],
            &opts,
        );
        let names: Vec<&[u8]> = recs.refs.iter().map(|r| &r.refname[..]).collect();
        assert_eq!(names, [&b"a"[..], b"b"]);
        assert_eq!(recs.refs[0].update_index, 6);
        assert_eq!(
            recs.refs[1].value,
            RefVal::Val1(Oid::Pool(3)).value(opts.hash)
        );
        // The multi-line message is dropped, the other normalized.
        assert_eq!(recs.logs.len(), 1);
        assert_eq!(recs.logs[0].update().unwrap().message, b"one\n");
        let (t, _) = recs.table("t.ref", opts).unwrap();
        assert_eq!(t.refs().unwrap().count(), 2);
    }

    #[test]
    fn small_blocks_are_refused_or_written() {
        let refs: Vec<FuzzRef> = (0..50)
            .map(|i| fref(&format!("refs/heads/{i:03}"), 0, i))
            .collect();
        for block_size in [64, 100, 256] {
            let opts = WriteOptions::default().block_size(block_size);
            let recs = TableRecords::new(1, 1, &refs, &[], &opts);
            if let Ok((bytes, _)) = recs.write(opts, false) {
                assert!(bytes.len() as u64 <= recs.size_bound(&opts));
            }
        }
    }
}
