//! The in-memory reference model of a stack of tables: what a merged view must return.
//!
//! Tables are applied oldest first; for each key the newest table's record wins, tombstones
//! included. Reading with `suppress_deletions` drops the tombstones afterwards. Keys are the
//! records' encoded keys ([`Record::write_key`]), so the model orders logs exactly as tables
//! do (ref name, NUL, update index descending).

use std::collections::BTreeMap;
use std::ops::Bound;

use reftable::codec::record::Record;
use reftable::{LogRecord, RefRecord};

/// Newest-wins view of ref and log records, keyed by encoded key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackModel {
    refs: BTreeMap<Vec<u8>, RefRecord>,
    logs: BTreeMap<Vec<u8>, LogRecord>,
}

fn key_of<R: Record>(r: &R) -> Vec<u8> {
    let mut k = Vec::new();
    r.write_key(&mut k);
    k
}

fn from<'a, R: Record>(
    map: &'a BTreeMap<Vec<u8>, R>,
    key: &[u8],
    suppress_deletions: bool,
) -> impl Iterator<Item = &'a R> + 'a {
    map.range::<[u8], _>((Bound::Included(key), Bound::Unbounded))
        .map(|(_, r)| r)
        .filter(move |r| !(suppress_deletions && r.is_deletion()))
}

impl StackModel {
    /// An empty model.
    pub fn new() -> StackModel {
        StackModel::default()
    }

    /// Apply the records of the next (newer) table.
    pub fn add_table<'a>(
        &mut self,
        refs: impl IntoIterator<Item = &'a RefRecord>,
        logs: impl IntoIterator<Item = &'a LogRecord>,
    ) {
        for r in refs {
            self.refs.insert(key_of(r), r.clone());
        }
        for l in logs {
            self.logs.insert(key_of(l), l.clone());
        }
    }

    /// Ref records from the first name `>= key`, in name order.
    pub fn seek_refs<'a>(
        &'a self,
        key: &[u8],
        suppress_deletions: bool,
    ) -> impl Iterator<Item = &'a RefRecord> + 'a {
        from(&self.refs, key, suppress_deletions)
    }

    /// Every ref record in name order.
    pub fn refs(&self, suppress_deletions: bool) -> Vec<RefRecord> {
        self.seek_refs(b"", suppress_deletions).cloned().collect()
    }

    /// The live value of ref `name`.
    pub fn read_ref(&self, name: &[u8]) -> Option<&RefRecord> {
        self.refs.get(name).filter(|r| !r.is_deletion())
    }

    /// Log records from the first key `>= key`, in key order.
    pub fn seek_logs<'a>(
        &'a self,
        key: &[u8],
        suppress_deletions: bool,
    ) -> impl Iterator<Item = &'a LogRecord> + 'a {
        from(&self.logs, key, suppress_deletions)
    }

    /// Every log record in key order.
    pub fn logs(&self, suppress_deletions: bool) -> Vec<LogRecord> {
        self.seek_logs(b"", suppress_deletions).cloned().collect()
    }

    /// The live reflog of `name`, newest first.
    pub fn read_log(&self, name: &[u8]) -> Vec<LogRecord> {
        self.seek_logs(&LogRecord::seek_key(name, u64::MAX), false)
            .take_while(|l| l.refname == name)
            .filter(|l| !l.is_deletion())
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reftable::{LogValue, ObjectId, RefValue};

    fn r(name: &str, v: Option<u8>) -> RefRecord {
        let value = match v {
            Some(b) => RefValue::Object(ObjectId::from_bytes(&[b; 20]).unwrap()),
            None => RefValue::Deletion,
        };
        RefRecord::new(name, 1, value)
    }

    #[test]
    fn newest_wins_and_tombstones() {
        let mut m = StackModel::new();
        m.add_table(&[r("a", Some(1)), r("b", Some(1))], &[]);
        m.add_table(&[r("a", None), r("c", Some(2))], &[]);
        let names = |v: Vec<RefRecord>| v.into_iter().map(|r| r.refname).collect::<Vec<_>>();
        assert_eq!(names(m.refs(true)), [b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(names(m.refs(false)).len(), 3);
        assert!(m.read_ref(b"a").is_none());
        assert_eq!(m.seek_refs(b"bb", false).count(), 1);
    }

    #[test]
    fn logs_are_newest_first() {
        let l = |ui| LogRecord {
            refname: b"a".to_vec(),
            update_index: ui,
            value: LogValue::Deletion,
        };
        let mut m = StackModel::new();
        m.add_table(&[], &[l(1), l(3), l(2)]);
        let uis: Vec<u64> = m.logs(false).iter().map(|l| l.update_index).collect();
        assert_eq!(uis, [3, 2, 1]);
        assert!(m.read_log(b"a").is_empty());
    }
}
