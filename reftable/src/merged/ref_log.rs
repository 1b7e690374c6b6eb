//! One ref's log in a merged view, lent record by record: newest first, tombstones skipped,
//! existence markers too where git hides them (`RefDb::reflog`). A reflog can hold many
//! entries of up to 16 MiB each, so it is never collected whole.

use super::{MergedIter, MergedTable};
use crate::codec::record::{LogRecord, Record};
use crate::error::Result;

/// The log records of one ref, newest first, without tombstones (and, from
/// the ref database's `RefDb::reflog`, without the existence marker). [`RefLog::next_record`] lends
/// each record; the [`Iterator`] implementation clones.
#[derive(Debug)]
pub struct RefLog {
    it: MergedIter<LogRecord>,
    name: Vec<u8>,
    done: bool,
    hide_markers: bool,
}

impl RefLog {
    /// The log of `name` in `merged`; existence markers are hidden when `hide_markers`.
    pub(crate) fn of(merged: &MergedTable, name: &[u8], hide_markers: bool) -> Result<RefLog> {
        Ok(RefLog {
            it: merged.seek_log(name)?,
            name: name.to_vec(),
            done: false,
            hide_markers,
        })
    }

    /// No records (a name no stack holds); `merged` only gives the iterator a table set.
    #[cfg_attr(not(feature = "refdb"), allow(dead_code))]
    pub(crate) fn none(merged: &MergedTable) -> Result<RefLog> {
        let mut e = RefLog::of(merged, b"", true)?;
        e.done = true;
        Ok(e)
    }

    /// The next record, borrowed until the next call.
    pub fn next_record(&mut self) -> Result<Option<&LogRecord>> {
        if self.done {
            return Ok(None);
        }
        loop {
            match self.it.next_record()? {
                None => break,
                Some(l) if l.refname != self.name => break,
                Some(l) if l.is_deletion() => continue,
                Some(l) if self.hide_markers && l.is_existence_marker() => continue,
                Some(_) => return Ok(self.it.last_returned()),
            }
        }
        self.done = true;
        Ok(None)
    }
}

impl Iterator for RefLog {
    type Item = Result<LogRecord>;

    fn next(&mut self) -> Option<Result<LogRecord>> {
        self.next_record().map(|r| r.cloned()).transpose()
    }
}

impl MergedTable {
    /// The live log of `name`, newest first: tombstones skipped, existence markers kept;
    /// stops at the first record of another ref.
    pub fn read_log(&self, name: &[u8]) -> Result<RefLog> {
        RefLog::of(self, name, false)
    }

    /// The reflog of `name` as git shows it, newest first: [`read_log`](Self::read_log)
    /// without the existence marker (the entry with null old and new ids that an empty
    /// reflog keeps).
    ///
    /// ```
    /// # use reftable::{LogRecord, LogUpdate, LogValue, MergedTable, ObjectId, Table, Writer, WriteOptions};
    /// # let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// # let mut w = Writer::new(Vec::new(), WriteOptions::default());
    /// # w.set_limits(1, 2).unwrap();
    /// # for (i, new_id) in [(2, id), (1, ObjectId::null(id.hash()))] {
    /// #     let u = LogUpdate { new_id, ..Default::default() };
    /// #     w.add_log(&LogRecord { refname: b"refs/heads/main".to_vec(), update_index: i, value: LogValue::Update(u) }).unwrap();
    /// # }
    /// # let table = Table::from_bytes("t.ref", w.finish().unwrap()).unwrap();
    /// let merged = MergedTable::new(vec![table], id.hash())?;
    /// let entries: Vec<u64> = merged.reflog(b"refs/heads/main")?.map(|l| l.unwrap().update_index).collect();
    /// assert_eq!(entries, [2]); // update index 1 is the existence marker
    /// # Ok::<(), reftable::Error>(())
    /// ```
    pub fn reflog(&self, name: &[u8]) -> Result<RefLog> {
        RefLog::of(self, name, true)
    }
}
