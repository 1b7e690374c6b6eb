//! The merged view over a stack of tables: a priority queue of table iterators where, for
//! equal keys, the newest table wins and older records are shadowed.
//!
//! Tombstones are returned to callers by default, so that every bounded operation can stop
//! at the first key past its bound, tombstone or not (git's fix for quadratic lookups after
//! mass deletions, commit 146a946321). [`MergedTable::set_suppress_deletions`] restores git
//! 2.47's behaviour of skipping them inside the iterator.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::codec::record::{LogRecord, Record, RefRecord};
use crate::codec::ref_view::RefView;
use crate::error::{Error, Result};
use crate::hash::HashId;
use crate::stats::{Stats, StatsSink};
use crate::table::{Budget, Table, TableIter};

mod ref_log;

pub use ref_log::RefLog;

/// Inflated log data the table iterators of one merged iterator may hold together before
/// the idle ones let theirs go, unless [`MergedTable::set_inflate_budget`] says otherwise.
pub const INFLATE_BUDGET: usize = 32 << 20;

/// A read-only view of several tables, oldest first, as one.
///
/// ```
/// use reftable::{MergedTable, ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
///
/// fn table(ui: u64, refs: &[(&str, Option<u8>)]) -> Table {
///     let mut w = Writer::new(Vec::new(), WriteOptions::default());
///     w.set_limits(ui, ui).unwrap();
///     for (name, v) in refs {
///         let value = match v {
///             Some(b) => RefValue::Object(ObjectId::from_bytes(&[*b; 20]).unwrap()),
///             None => RefValue::Deletion,
///         };
///         w.add_ref(&RefRecord::new(*name, ui, value)).unwrap();
///     }
///     Table::from_bytes(format!("{ui}.ref"), w.finish().unwrap()).unwrap()
/// }
///
/// let old = table(1, &[("a", Some(1)), ("b", Some(1))]);
/// let new = table(2, &[("a", None)]);
/// let merged = MergedTable::new(vec![old, new], Default::default()).unwrap();
/// assert!(merged.read_ref(b"a").unwrap().is_none()); // deleted in the newer table
/// assert!(merged.read_ref(b"b").unwrap().is_some());
/// // Iteration returns the tombstone for "a" too; callers filter.
/// let live: Vec<_> = merged.refs().unwrap().map(|r| r.unwrap())
///     .filter(|r| !r.is_deletion()).map(|r| r.refname).collect();
/// assert_eq!(live, [b"b".to_vec()]);
/// # use reftable::table::Record;
/// ```
#[derive(Clone, Debug)]
pub struct MergedTable {
    tables: Vec<Table>,
    hash: HashId,
    suppress_deletions: bool,
    inflate_budget: usize,
    /// Where the iterators leave their own counters (key comparisons, heap operations)
    /// when dropped; a stack shares one sink between the views it builds.
    sink: Arc<StatsSink>,
}

impl MergedTable {
    /// A merged view of `tables` (oldest first). Every table must use `hash`.
    pub fn new(tables: Vec<Table>, hash: HashId) -> Result<MergedTable> {
        MergedTable::with_sink(tables, hash, Arc::default())
    }

    /// A merged view whose iterators count into `sink`.
    pub(crate) fn with_sink(
        tables: Vec<Table>,
        hash: HashId,
        sink: Arc<StatsSink>,
    ) -> Result<MergedTable> {
        for t in &tables {
            if t.hash() != hash {
                return Err(Error::format(format!(
                    "table uses {} but the stack uses {}",
                    t.hash().name(),
                    hash.name()
                ))
                .in_file(t.name()));
            }
        }
        Ok(MergedTable {
            tables,
            hash,
            suppress_deletions: false,
            inflate_budget: INFLATE_BUDGET,
            sink,
        })
    }

    /// Skip tombstones inside the iterators (git 2.47's behaviour). Off by default: with it
    /// on, a lookup after many deletions scans every tombstone past the wanted key.
    pub fn set_suppress_deletions(&mut self, on: bool) {
        self.suppress_deletions = on;
    }

    /// How much inflated log data the table iterators of one merged iterator may hold together
    /// ([`INFLATE_BUDGET`] by default). Past it, the iterators not being read let their
    /// blocks go and inflate them again when they move on: less memory, more inflating.
    pub fn set_inflate_budget(&mut self, bytes: usize) {
        self.inflate_budget = bytes;
    }

    /// Whether tombstones are skipped inside the iterators.
    pub fn suppress_deletions(&self) -> bool {
        self.suppress_deletions
    }

    /// The tables, oldest first.
    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// The hash of the view.
    pub fn hash(&self) -> HashId {
        self.hash
    }

    /// Smallest update index of the tables (0 without tables).
    pub fn min_update_index(&self) -> u64 {
        self.tables
            .iter()
            .map(Table::min_update_index)
            .min()
            .unwrap_or(0)
    }

    /// Largest update index of the tables (0 without tables).
    pub fn max_update_index(&self) -> u64 {
        self.tables
            .iter()
            .map(Table::max_update_index)
            .max()
            .unwrap_or(0)
    }

    /// Iterate `R`'s records from the first key `>= key` (`b""` for all).
    pub fn seek<R: Record>(&self, key: &[u8]) -> Result<MergedIter<R>> {
        let iters = self
            .tables
            .iter()
            .map(|t| t.unpositioned::<R>())
            .collect::<Result<Vec<_>>>()?;
        let mut it = MergedIter::new(
            iters,
            self.suppress_deletions,
            self.inflate_budget,
            self.sink.clone(),
        );
        it.seek(key)?;
        Ok(it)
    }

    /// Every ref record in name order (tombstones included unless suppressed).
    pub fn refs(&self) -> Result<MergedIter<RefRecord>> {
        self.seek(b"")
    }

    /// Ref records from the first name `>= name`.
    pub fn seek_ref(&self, name: &[u8]) -> Result<MergedIter<RefRecord>> {
        self.seek(name)
    }

    /// The live value of ref `name`, if it exists (see [`MergedTable::ref_record`] for
    /// tombstones). Reads one record past the seek position at most, whatever the number of
    /// tombstones.
    pub fn read_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        Ok(self.ref_record(name)?.filter(|r| !r.is_deletion()))
    }

    /// The newest record of `name`, tombstones included (with suppressed deletions, a
    /// deleted ref has none).
    pub fn ref_record(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        // A point lookup needs no merge: the newest table that has a record of `name`
        // decides, and older tables are not read at all.
        let mut found = None;
        for t in self.tables.iter().rev() {
            let mut it = t.seek_ref(name)?;
            let hit = it.next_record()?.filter(|r| r.refname == name).cloned();
            if hit.is_some() {
                found = hit;
                break;
            }
        }
        Ok(found.filter(|r| !(self.suppress_deletions && r.is_deletion())))
    }

    /// Every log record: refs in name order, newest first per ref.
    pub fn logs(&self) -> Result<MergedIter<LogRecord>> {
        self.seek(b"")
    }

    /// Log records from the newest entry of `name` on.
    pub fn seek_log(&self, name: &[u8]) -> Result<MergedIter<LogRecord>> {
        self.seek(&LogRecord::seek_key(name, u64::MAX))
    }

    /// Sum of the counters of every table's iterators so far, and of the merged
    /// iterators' own (key comparisons between tables, heap operations).
    pub fn stats(&self) -> Stats {
        let mut s = self.sink.get();
        for t in &self.tables {
            s += t.stats();
        }
        s
    }
}

/// Equal when key and table are (as `Ord` says).
#[derive(Debug, PartialEq, Eq)]
struct HeapItem {
    key: Vec<u8>,
    index: usize,
}

impl Ord for HeapItem {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap pops the greatest: the smallest key, and for equal keys the newest table.
        other.key.cmp(&self.key).then(self.index.cmp(&other.index))
    }
}

impl PartialOrd for HeapItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An iterator over a [`MergedTable`] in key order, newest record per key.
#[derive(Debug)]
pub struct MergedIter<R: Record> {
    /// The table iterators; each one's current record is its entry in the queue (not
    /// copied: a reflog entry can be 16 MiB).
    iters: Vec<TableIter<R>>,
    heap: BinaryHeap<HeapItem>,
    spare_keys: Vec<Vec<u8>>,
    /// The table whose record was returned last; advanced on the next call.
    advance: Option<usize>,
    suppress_deletions: bool,
    /// What the table iterators hold, kept within the inflate budget.
    budget: Budget<R>,
    /// The merged level's own counters, left in `sink` on drop.
    stats: Stats,
    sink: Arc<StatsSink>,
    failed: bool,
}

impl<R: Record> Drop for MergedIter<R> {
    fn drop(&mut self) {
        self.sink.add(&self.stats);
    }
}

impl<R: Record> MergedIter<R> {
    /// Not positioned: [`MergedIter::seek`] positions the tables.
    fn new(
        iters: Vec<TableIter<R>>,
        suppress_deletions: bool,
        inflate_budget: usize,
        sink: Arc<StatsSink>,
    ) -> MergedIter<R> {
        let n = iters.len();
        MergedIter {
            iters,
            heap: BinaryHeap::with_capacity(n),
            spare_keys: Vec::new(),
            advance: None,
            suppress_deletions,
            budget: Budget::new(n, inflate_budget),
            stats: Stats::default(),
            sink,
            failed: false,
        }
    }

    /// Read the next record of table `i` and queue it. When the table iterators together
    /// hold more inflated log data than the budget, the others let theirs go (and
    /// inflate their block again when they move on), so memory stays bounded by the
    /// budget and one block, not by tables x block size.
    fn fill(&mut self, i: usize) -> Result<()> {
        if !self.budget.next_key(&mut self.iters, i)? {
            return Ok(());
        }
        {
            let r = self.iters[i].current();
            let mut key = self.spare_keys.pop().unwrap_or_default();
            r.write_key(&mut key);
            self.stats.heap_operations += 1;
            self.heap.push(HeapItem { key, index: i });
        }
        Ok(())
    }

    /// Position the iterator at the first key `>= key` again, reusing every table
    /// iterator and buffer: repeated seeks (prefix scans, the D/F check) allocate nothing
    /// once warm. After an error the iterator ends.
    ///
    /// ```
    /// # use reftable::{HashId, MergedTable, ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
    /// # let table = |names: &[&str], ui: u64| {
    /// #     let mut w = Writer::new(Vec::new(), WriteOptions::default());
    /// #     w.set_limits(ui, ui).unwrap();
    /// #     let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// #     for n in names {
    /// #         w.add_ref(&RefRecord::new(*n, ui, RefValue::Object(id))).unwrap();
    /// #     }
    /// #     Table::from_bytes("t.ref", w.finish().unwrap()).unwrap()
    /// # };
    /// let m = MergedTable::new(
    ///     vec![table(&["refs/heads/a", "refs/tags/v1"], 1), table(&["refs/heads/b"], 2)],
    ///     HashId::Sha1,
    /// )
    /// .unwrap();
    /// let mut it = m.seek_ref(b"refs/heads/").unwrap();
    /// assert_eq!(it.next_record().unwrap().unwrap().refname, b"refs/heads/a");
    /// it.seek(b"refs/heads/b").unwrap();
    /// assert_eq!(it.next_record().unwrap().unwrap().refname, b"refs/heads/b");
    /// assert_eq!(it.next_record().unwrap().unwrap().refname, b"refs/tags/v1");
    /// ```
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.failed = false;
        self.advance = None;
        while let Some(item) = self.heap.pop() {
            self.spare_keys.push(item.key);
        }
        // One table at a time: each is positioned and queued before the next one reads
        // anything, so the budget holds while the queue fills (100 tables whose first
        // record is a 16 MiB message never hold 100 of them).
        let r = (|| {
            for i in 0..self.iters.len() {
                self.iters[i].seek_lazy(key)?;
                self.budget.forget(i);
                self.fill(i)?;
            }
            Ok(())
        })();
        if r.is_err() {
            self.failed = true;
        }
        r
    }

    /// Counters of this iterator and its table iterators.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        for it in &self.iters {
            s += it.stats();
        }
        s
    }

    /// Heap bytes the table iterators hold in inflated log blocks and decoded values.
    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        (0..self.iters.len()).map(|i| self.held_by(i)).sum()
    }

    /// Heap bytes table `i`'s iterator holds: its inflated log block and current value
    /// (summed here, not through `TableIter::held_bytes`, so tests check that too).
    #[cfg(test)]
    fn held_by(&self, i: usize) -> usize {
        let t = &self.iters[i];
        t.inflated_bytes() + t.current().value_bytes()
    }

    /// The record the last [`MergedIter::next_record`] returned, if it returned one (not
    /// one [`MergedIter::for_each_ref`] lent).
    pub(crate) fn last_returned(&self) -> Option<&R> {
        self.advance.map(|i| self.iters[i].current())
    }

    /// The next record, borrowed until the next call. After an error the iterator ends.
    pub fn next_record(&mut self) -> Result<Option<&R>> {
        if self.failed {
            return Ok(None);
        }
        match self.step() {
            Ok(Some(i)) => Ok(Some(self.iters[i].current())),
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    #[inline]
    fn step(&mut self) -> Result<Option<usize>> {
        if let Some(i) = self.advance.take() {
            if self.heap.is_empty() {
                return self.pass_through(i);
            }
            self.fill(i)?;
        }
        loop {
            let Some(top) = self.heap.pop() else {
                return Ok(None);
            };
            self.stats.heap_operations += 1;
            if defect!(TombstoneIgnored)
                && self.iters[top.index].restore_current().is_ok()
                && self.iters[top.index].current().is_deletion()
            {
                // Planted bug: skip the tombstone without shadowing older records.
                self.spare_keys.push(top.key);
                self.fill(top.index)?;
                continue;
            }
            // Older tables' records with the same key are shadowed.
            while let Some(next) = self.heap.peek() {
                self.stats.key_comparisons += 1;
                if next.key != top.key {
                    break;
                }
                let shadowed = self.heap.pop().expect("peeked");
                self.stats.heap_operations += 1;
                self.spare_keys.push(shadowed.key);
                self.fill(shadowed.index)?;
            }
            self.spare_keys.push(top.key);
            // Filling the shadowed tables may have let this one's big value go.
            self.budget.restore(&mut self.iters, top.index)?;
            if self.suppress_deletions && self.iters[top.index].current().is_deletion() {
                self.fill(top.index)?;
                continue;
            }
            self.advance = Some(top.index);
            return Ok(Some(top.index));
        }
    }

    /// Table `i` is the only one with records left: nothing can shadow them, so they
    /// pass straight through, with no key copy and no queue work.
    #[inline]
    fn pass_through(&mut self, i: usize) -> Result<Option<usize>> {
        while self.budget.next_key(&mut self.iters, i)? {
            self.budget.restore(&mut self.iters, i)?;
            let deletion = self.iters[i].current().is_deletion();
            if deletion && (self.suppress_deletions || defect!(TombstoneIgnored)) {
                continue;
            }
            self.advance = Some(i);
            return Ok(Some(i));
        }
        Ok(None)
    }
}

impl MergedIter<RefRecord> {
    /// Lend the records from here on to `f`, in key order and newest per name as
    /// [`MergedIter::next_record`] returns them, until `f` breaks or the records end; the
    /// break's value comes back. Where one table is left to read (always, once the others
    /// are past), its records are lent straight from its blocks: the name is the iterator's
    /// key buffer, the ids the table's bytes, and nothing is copied or queued, which makes
    /// this the fastest way through a stack. After a break the iterator reads on from the
    /// next record; after an error it ends.
    ///
    /// ```
    /// # use reftable::{HashId, MergedTable, ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
    /// # let mut w = Writer::new(Vec::new(), WriteOptions::default());
    /// # w.set_limits(1, 1).unwrap();
    /// # let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// # for n in ["refs/heads/a", "refs/heads/b", "refs/tags/v1"] {
    /// #     w.add_ref(&RefRecord::new(n, 1, RefValue::Object(id))).unwrap();
    /// # }
    /// # let table = Table::from_bytes("t.ref", w.finish().unwrap()).unwrap();
    /// use std::ops::ControlFlow;
    /// let m = MergedTable::new(vec![table], HashId::Sha1).unwrap();
    /// // The branches: a prefix scan that stops at the first name past the prefix.
    /// let mut branches = Vec::new();
    /// let mut it = m.seek_ref(b"refs/heads/").unwrap();
    /// it.for_each_ref(|r| {
    ///     if !r.refname.starts_with(b"refs/heads/") {
    ///         return ControlFlow::Break(());
    ///     }
    ///     branches.push(r.refname.to_vec());
    ///     ControlFlow::Continue(())
    /// })
    /// .unwrap();
    /// assert_eq!(branches, [b"refs/heads/a", b"refs/heads/b"]);
    /// ```
    #[inline(always)]
    pub fn for_each_ref<B>(
        &mut self,
        mut f: impl FnMut(RefView<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        loop {
            if let (Some(i), true, false) = (self.advance, self.heap.is_empty(), self.failed) {
                // As `pass_through`: nothing can shadow table `i`'s records.
                let skip = self.suppress_deletions || defect!(TombstoneIgnored);
                return match self.iters[i].for_each_ref(skip, &mut f) {
                    Ok(ControlFlow::Continue(())) => {
                        self.advance = None;
                        Ok(ControlFlow::Continue(()))
                    }
                    Ok(b) => Ok(b),
                    Err(e) => {
                        self.failed = true;
                        Err(e)
                    }
                };
            }
            let Some(r) = self.next_record()? else {
                return Ok(ControlFlow::Continue(()));
            };
            if let ControlFlow::Break(b) = f(RefView::from(r)) {
                return Ok(ControlFlow::Break(b));
            }
        }
    }
}

impl<R: Record> Iterator for MergedIter<R> {
    type Item = Result<R>;

    fn next(&mut self) -> Option<Result<R>> {
        self.next_record().map(|r| r.cloned()).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::record::{LogUpdate, LogValue, RefValue};
    use crate::{ObjectId, WriteOptions, Writer};

    fn id(b: u8) -> ObjectId {
        ObjectId::from_bytes(&[b; 20]).unwrap()
    }

    fn table(refs: &[RefRecord], logs: &[LogRecord]) -> Table {
        let min = refs
            .iter()
            .map(|r| r.update_index)
            .chain(logs.iter().map(|l| l.update_index))
            .min()
            .unwrap();
        let max = refs
            .iter()
            .map(|r| r.update_index)
            .chain(logs.iter().map(|l| l.update_index))
            .max()
            .unwrap();
        let mut w = Writer::new(Vec::new(), WriteOptions::default());
        w.set_limits(min, max).unwrap();
        for r in refs {
            w.add_ref(r).unwrap();
        }
        for l in logs {
            w.add_log(l).unwrap();
        }
        Table::from_bytes("t.ref", w.finish().unwrap()).unwrap()
    }

    fn r(name: &str, ui: u64, v: Option<u8>) -> RefRecord {
        RefRecord::new(
            name,
            ui,
            v.map_or(RefValue::Deletion, |b| RefValue::Object(id(b))),
        )
    }

    fn l(name: &str, ui: u64, msg: Option<&str>) -> LogRecord {
        LogRecord {
            refname: name.as_bytes().to_vec(),
            update_index: ui,
            value: match msg {
                None => LogValue::Deletion,
                Some(m) => LogValue::Update(LogUpdate {
                    new_id: id(ui as u8),
                    message: m.as_bytes().to_vec(),
                    ..Default::default()
                }),
            },
        }
    }

    /// A table of the one reflog entry `log` at its update index, with blocks of
    /// `block_size` bytes (big enough for a message of megabytes).
    fn log_table(log: &LogRecord, block_size: u32) -> Table {
        let mut w = Writer::new(
            Vec::new(),
            WriteOptions {
                block_size,
                ..WriteOptions::default()
            },
        );
        w.set_limits(log.update_index, log.update_index).unwrap();
        w.add_log(log).unwrap();
        Table::from_bytes("t.ref", w.finish().unwrap()).unwrap()
    }

    /// One reflog entry per table, each with a message of 2 MiB: the tables waiting in the
    /// queue let their messages go, so the iterator holds about two at any time, not one
    /// per table (before the budget, 100 such tables took 1.6 GB).
    #[test]
    fn waiting_tables_do_not_each_hold_a_big_reflog_message() {
        let big = "m".repeat(2 << 20);
        let tables: Vec<Table> = (0..12u64)
            .map(|i| {
                log_table(
                    &l(&format!("refs/heads/b{:02}", i % 4), i + 1, Some(&big)),
                    4 << 20,
                )
            })
            .collect();
        let mut m = MergedTable::new(tables, HashId::Sha1).unwrap();
        m.set_inflate_budget(1 << 20);
        let mut it = m.logs().unwrap();
        let (mut n, mut peak) = (0, it.held_bytes());
        let mut keys = Vec::new();
        while let Some(rec) = it.next_record().unwrap() {
            let LogValue::Update(u) = &rec.value else {
                panic!("a tombstone")
            };
            assert_eq!(
                u.message.len(),
                big.len() + 1,
                "message decoded again in full"
            );
            keys.push((rec.refname.clone(), rec.update_index));
            n += 1;
            peak = peak.max(it.held_bytes());
        }
        assert_eq!(n, 12);
        // Name order, newest first per name.
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        assert_eq!(keys, sorted);
        assert!(peak <= 3 * (2 << 20) + (1 << 20), "peak {peak} bytes held");
    }

    /// git's merged `refs` vector: {a1,b1,c1}, {a deleted@2}, {c@3,d@3}.
    #[test]
    fn refs_newest_wins_and_tombstones_surface() {
        let t1 = table(
            &[r("a", 1, Some(1)), r("b", 1, Some(1)), r("c", 1, Some(1))],
            &[],
        );
        let t2 = table(&[r("a", 2, None)], &[]);
        let t3 = table(&[r("c", 3, Some(3)), r("d", 3, Some(3))], &[]);
        let m = MergedTable::new(vec![t1, t2, t3], HashId::Sha1).unwrap();
        let got: Vec<RefRecord> = m.refs().unwrap().map(|x| x.unwrap()).collect();
        assert_eq!(
            got,
            vec![
                r("a", 2, None),
                r("b", 1, Some(1)),
                r("c", 3, Some(3)),
                r("d", 3, Some(3))
            ]
        );
        assert_eq!((m.min_update_index(), m.max_update_index()), (1, 3));
        let mut suppressed = m.clone();
        suppressed.set_suppress_deletions(true);
        let names: Vec<Vec<u8>> = suppressed
            .refs()
            .unwrap()
            .map(|x| x.unwrap().refname)
            .collect();
        assert_eq!(names, [b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]);
        // Reseek after draining.
        let mut it = m.seek_ref(b"c").unwrap();
        assert_eq!(it.next().unwrap().unwrap().refname, b"c");
        let mut it2 = m.seek_ref(b"").unwrap();
        while it2.next().is_some() {}
        assert_eq!(
            m.seek_ref(b"b").unwrap().next().unwrap().unwrap().refname,
            b"b"
        );
    }

    /// git's merged `logs` vector: {a@2,a@1}, {a@3}, {a@2 deleted} → a@3, a@2 (deletion), a@1.
    #[test]
    fn logs_newest_table_wins_per_key() {
        let t1 = table(&[], &[l("a", 2, Some("two")), l("a", 1, Some("one"))]);
        let t2 = table(&[], &[l("a", 3, Some("three"))]);
        let t3 = table(&[], &[l("a", 2, None)]);
        let m = MergedTable::new(vec![t1, t2, t3], HashId::Sha1).unwrap();
        let got: Vec<(u64, bool)> = m
            .logs()
            .unwrap()
            .map(|x| x.unwrap())
            .map(|x| (x.update_index, x.is_deletion()))
            .collect();
        assert_eq!(got, [(3, false), (2, true), (1, false)]);
        let live: Vec<u64> = m
            .read_log(b"a")
            .unwrap()
            .map(|x| x.unwrap().update_index)
            .collect();
        assert_eq!(live, [3, 1]);
    }

    /// One key in every one of four tables, and keys in three: the newest table wins
    /// whichever position it is in, every older copy is shadowed (not returned later), and
    /// a tombstone in the newest hides values below it from `read_ref` but not from
    /// `ref_record`.
    #[test]
    fn a_key_in_three_or_more_tables() {
        let t1 = table(
            &[r("a", 1, Some(1)), r("k", 1, Some(1)), r("z", 1, Some(1))],
            &[],
        );
        let t2 = table(&[r("k", 2, Some(2)), r("m", 2, Some(2))], &[]);
        let t3 = table(
            &[r("a", 3, Some(3)), r("k", 3, None), r("m", 3, Some(3))],
            &[],
        );
        let t4 = table(&[r("k", 4, Some(4)), r("m", 4, None)], &[]);
        let m = MergedTable::new(vec![t1, t2, t3, t4], HashId::Sha1).unwrap();
        let got: Vec<RefRecord> = m.refs().unwrap().map(|x| x.unwrap()).collect();
        assert_eq!(
            got,
            [
                r("a", 3, Some(3)),
                r("k", 4, Some(4)),
                r("m", 4, None),
                r("z", 1, Some(1))
            ]
        );
        assert_eq!(m.read_ref(b"k").unwrap(), Some(r("k", 4, Some(4))));
        assert_eq!(m.read_ref(b"m").unwrap(), None);
        assert_eq!(m.ref_record(b"m").unwrap(), Some(r("m", 4, None)));
        // A seek onto the shared key and just past it.
        let names = |key: &[u8]| -> Vec<Vec<u8>> {
            m.seek_ref(key)
                .unwrap()
                .map(|x| x.unwrap().refname)
                .collect()
        };
        assert_eq!(names(b"k"), [b"k".to_vec(), b"m".to_vec(), b"z".to_vec()]);
        assert_eq!(names(b"k\0"), [b"m".to_vec(), b"z".to_vec()]);
        // Without the newest table, the tombstone of the third wins.
        let older = MergedTable::new(m.tables()[..3].to_vec(), HashId::Sha1).unwrap();
        assert_eq!(older.ref_record(b"k").unwrap(), Some(r("k", 3, None)));
        assert_eq!(older.read_ref(b"m").unwrap(), Some(r("m", 3, Some(3))));
    }

    /// Every value type, over several blocks, in stacks of one to four tables, with and
    /// without tombstones suppressed: `for_each_ref` lends what `next_record` returns, also
    /// when it breaks every few records and `next_record` and `seek` take turns with it.
    #[test]
    fn for_each_ref_lends_what_next_record_returns() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let owned = |it: &mut MergedIter<RefRecord>, out: &mut Vec<RefRecord>, stop: u64| {
            let mut lent = 0;
            let end = it.for_each_ref(|v| {
                out.push(v.to_record().unwrap());
                lent += 1;
                if lent == stop {
                    ControlFlow::Break(lent)
                } else {
                    ControlFlow::Continue(())
                }
            });
            end.unwrap()
        };
        for round in 0..40 {
            let mut tables = Vec::new();
            for ui in 1..=1 + rnd(4) {
                let mut refs = Vec::new();
                for k in 0..600u32 {
                    if ui > 1 && rnd(3) != 0 {
                        continue;
                    }
                    let name = format!("refs/tags/t{k:04}");
                    let value = match rnd(8) {
                        0 => RefValue::Deletion,
                        1 => RefValue::Symref(format!("refs/heads/{k}").into_bytes()),
                        2 => RefValue::Peeled {
                            object: id(k as u8),
                            peeled: id(!(k as u8)),
                        },
                        _ => RefValue::Object(id(k as u8)),
                    };
                    refs.push(RefRecord::new(name, ui, value));
                }
                if !refs.is_empty() {
                    tables.push(table(&refs, &[]));
                }
            }
            let mut m = MergedTable::new(tables, HashId::Sha1).unwrap();
            m.set_suppress_deletions(round % 2 == 1);
            let want: Vec<RefRecord> = m.refs().unwrap().map(|x| x.unwrap()).collect();
            let mut all = Vec::new();
            let mut lent = m.refs().unwrap();
            assert_eq!(owned(&mut lent, &mut all, 0), ControlFlow::Continue(()));
            assert_eq!(all, want);
            // The same work counted: every record decoded once, either way.
            let mut returned = m.refs().unwrap();
            while returned.next_record().unwrap().is_some() {}
            assert_eq!(lent.stats(), returned.stats());
            // Breaking every few records, a record in between from next_record.
            let mut it = m.refs().unwrap();
            let mut got = Vec::new();
            while let ControlFlow::Break(_) = owned(&mut it, &mut got, 1 + rnd(300)) {
                if let Some(r) = it.next_record().unwrap() {
                    got.push(r.clone());
                }
            }
            assert_eq!(got, want);
            assert_eq!(it.next_record().unwrap(), None);
            // After a seek, from the key on.
            let key = format!("refs/tags/t{:04}", rnd(600)).into_bytes();
            it.seek(&key).unwrap();
            let mut from = Vec::new();
            assert_eq!(owned(&mut it, &mut from, 0), ControlFlow::Continue(()));
            let want_from: Vec<RefRecord> =
                want.iter().filter(|r| r.refname >= key).cloned().collect();
            assert_eq!(from, want_from);
        }
    }

    /// Against a model (a map updated table by table) on pseudo-random stacks of 3 to 6
    /// tables over a few shared keys: every listing and every seek agree.
    #[test]
    fn agrees_with_a_model_on_deep_stacks() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..200 {
            let depth = 3 + rnd(4);
            let mut model = std::collections::BTreeMap::new();
            let mut tables = Vec::new();
            for ui in 1..=depth {
                let mut keys = std::collections::BTreeMap::new();
                for _ in 0..1 + rnd(5) {
                    let key = format!("refs/k{}", rnd(6));
                    let v = if rnd(3) == 0 {
                        None
                    } else {
                        Some(rnd(250) as u8)
                    };
                    keys.insert(key, v);
                }
                let refs: Vec<RefRecord> = keys.iter().map(|(k, v)| r(k, ui, *v)).collect();
                for rec in &refs {
                    model.insert(rec.refname.clone(), rec.clone());
                }
                tables.push(table(&refs, &[]));
            }
            let mut m = MergedTable::new(tables, HashId::Sha1).unwrap();
            let got: Vec<RefRecord> = m.refs().unwrap().map(|x| x.unwrap()).collect();
            let want: Vec<RefRecord> = model.values().cloned().collect();
            assert_eq!(got, want);
            // With deletions suppressed, also once only one table is left (the records
            // of the last table pass straight through).
            m.set_suppress_deletions(true);
            let got: Vec<RefRecord> = m.refs().unwrap().map(|x| x.unwrap()).collect();
            let live: Vec<RefRecord> = want.iter().filter(|r| !r.is_deletion()).cloned().collect();
            assert_eq!(got, live);
            m.set_suppress_deletions(false);
            // One iterator re-seeked to every key, in an order that goes back and forth.
            let mut again = m.refs().unwrap();
            for k in [3, 0, 6, 2, 5, 1, 4] {
                let key = format!("refs/k{k}").into_bytes();
                again.seek(&key).unwrap();
                let want: Vec<RefRecord> =
                    model.range(key.clone()..).map(|(_, v)| v.clone()).collect();
                let first_two: Vec<RefRecord> = (&mut again).take(2).map(|x| x.unwrap()).collect();
                assert_eq!(first_two, want.iter().take(2).cloned().collect::<Vec<_>>());
            }
            for k in 0..7 {
                let key = format!("refs/k{k}").into_bytes();
                let from: Vec<RefRecord> = m.seek_ref(&key).unwrap().map(|x| x.unwrap()).collect();
                let want: Vec<RefRecord> =
                    model.range(key.clone()..).map(|(_, v)| v.clone()).collect();
                assert_eq!(from, want);
                let live = model.get(&key).filter(|r| !r.is_deletion()).cloned();
                assert_eq!(m.read_ref(&key).unwrap(), live);
            }
        }
    }

    #[test]
    fn single_record_and_hash_mismatch() {
        let t = table(&[r("only", 1, Some(9))], &[]);
        let m = MergedTable::new(vec![t.clone()], HashId::Sha1).unwrap();
        assert!(m.read_ref(b"only").unwrap().is_some());
        assert!(m.read_ref(b"other").unwrap().is_none());
        let e = MergedTable::new(vec![t], HashId::Sha256).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Format);
    }

    #[test]
    fn accessors_describe_the_view() {
        let tables = vec![
            table(&[r("a", 5, Some(1))], &[]),
            table(&[r("b", 6, Some(2))], &[]),
            table(&[r("c", 7, Some(3))], &[]),
        ];
        let mut m = MergedTable::new(tables, HashId::Sha1).unwrap();
        assert_eq!(m.tables().len(), 3);
        assert_eq!((m.min_update_index(), m.max_update_index()), (5, 7));
        assert!(!m.suppress_deletions());
        m.set_suppress_deletions(true);
        assert!(m.suppress_deletions());
        m.set_suppress_deletions(false);
        assert!(!m.suppress_deletions());
        let empty = MergedTable::new(Vec::new(), HashId::Sha256).unwrap();
        assert_eq!(empty.hash(), HashId::Sha256);
        assert_eq!((empty.min_update_index(), empty.max_update_index()), (0, 0));
    }

    /// The merged level's counters while iterating, and left with the table when the
    /// iterator is dropped.
    #[test]
    fn iterators_count_and_leave_their_counters() {
        let m = MergedTable::new(
            vec![
                table(&[r("a", 1, Some(1)), r("b", 1, Some(1))], &[]),
                table(&[r("b", 2, Some(2)), r("c", 2, Some(2))], &[]),
            ],
            HashId::Sha1,
        )
        .unwrap();
        assert_eq!(m.stats().records_decoded, 0);
        let mut it = m.refs().unwrap();
        let mut names = Vec::new();
        while let Some(rec) = it.next_record().unwrap() {
            names.push(rec.refname.clone());
        }
        assert_eq!(names, [&b"a"[..], b"b", b"c"]);
        let s = it.stats();
        assert_eq!(s.records_decoded, 4);
        // 3 pushes, 2 winners popped, 1 shadowed "b" popped; then only the newer table
        // has records left and "c" passes straight through, with no queue work.
        assert_eq!(s.heap_operations, 6);
        // The merge's peeks and the tables' own comparisons, exactly.
        assert_eq!(s.key_comparisons, 8);
        drop(it);
        let left = m.stats();
        assert_eq!(left.records_decoded, 4);
        assert_eq!(left.heap_operations, 6);
    }

    /// Three log tables, two read in turn (a0 a1 b0 b1 ...) while the third waits for its
    /// turn (w2 x2 ...), with budgets that keep every block, that allow two tables' blocks,
    /// and that allow none.
    #[test]
    fn inflate_budget_bounds_what_idle_iterators_hold() {
        let long = "m".repeat(500);
        let tables: Vec<Table> = (0..3u64)
            .map(|k| {
                let names = if k < 2 {
                    ["a", "b", "c", "d"]
                } else {
                    ["w", "x", "y", "z"]
                };
                let logs: Vec<LogRecord> = names
                    .iter()
                    .map(|n| l(&format!("refs/{n}{k}"), k + 1, Some(&long)))
                    .collect();
                table(&[], &logs)
            })
            .collect();
        let read = |budget: Option<usize>| {
            let mut m = MergedTable::new(tables.clone(), HashId::Sha1).unwrap();
            if let Some(b) = budget {
                m.set_inflate_budget(b);
            }
            let mut it = m.logs().unwrap();
            let one_table = it.budget.charged().0[0];
            let mut names = Vec::new();
            let mut most_holding = 0;
            while let Some(rec) = it.next_record().unwrap() {
                names.push(String::from_utf8(rec.refname.clone()).unwrap());
                let (held, total) = it.budget.charged();
                assert_eq!(total, held.iter().sum::<usize>());
                let inflated = it.iters.iter().filter(|t| t.inflated_bytes() > 0).count();
                most_holding = most_holding.max(inflated);
            }
            (names, it.stats(), one_table, most_holding)
        };
        let (names, all, one_table, holding) = read(None);
        assert_eq!(names.len(), 12);
        assert_eq!(names[..4], ["refs/a0", "refs/a1", "refs/b0", "refs/b1"]);
        assert!(one_table > 0);
        assert_eq!(all.blocks_inflated, 3, "each table's one log block, once");
        assert_eq!(holding, 3);
        // Room for two tables' blocks and a half: whenever the third is inflated, the
        // other two let theirs go.
        let (names_mid, mid, _, holding) = read(Some(2 * one_table + one_table / 2));
        assert_eq!(names_mid, names);
        assert_eq!(holding, 2);
        assert_eq!(mid.blocks_inflated, 7);
        let (names_none, none, _, holding) = read(Some(0));
        assert_eq!(names_none, names);
        assert_eq!(holding, 1);
        assert_eq!(none.blocks_inflated, 10);
    }

    /// The budget's bookkeeping adds up, with and without evictions, after every record and
    /// after seeking again: each table is charged exactly what its iterator holds (inflated
    /// block and decoded message), ended and evicted tables included.
    #[test]
    fn held_bytes_are_accounted_across_reads_and_seeks() {
        let long = "m".repeat(700);
        let tables: Vec<Table> = (0..3u64)
            .map(|k| {
                let logs: Vec<LogRecord> = ["a", "b", "c"]
                    .iter()
                    .map(|n| l(&format!("refs/{n}{k}"), k + 1, Some(&long)))
                    .collect();
                table(&[], &logs)
            })
            .collect();
        for budget in [usize::MAX, 3000, 0] {
            let mut m = MergedTable::new(tables.clone(), HashId::Sha1).unwrap();
            m.set_inflate_budget(budget);
            let mut it = m.logs().unwrap();
            let check = |it: &MergedIter<LogRecord>, at: &str| {
                let (held, total) = it.budget.charged();
                assert_eq!(total, held.iter().sum::<usize>(), "{at}");
                // Each table is charged its inflated block and the message of its current
                // record (for an ended table, its last one); an evicted one holds nothing.
                for i in 0..it.iters.len() {
                    assert_eq!(it.budget.charged().0[i], it.held_by(i), "table {i}, {at}");
                }
            };
            // With no budget, every record's table evicts the others: an ended table, whose
            // last record nothing reads again, keeps nothing.
            let ended_hold_nothing = |it: &MergedIter<LogRecord>, at: &str| {
                let mut live: Vec<usize> = it.heap.iter().map(|h| h.index).collect();
                live.extend(it.advance);
                for i in (0..it.iters.len()).filter(|i| !live.contains(i)) {
                    assert_eq!(it.held_by(i), 0, "ended table {i}, {at}");
                }
            };
            check(&it, "positioned");
            let mut ended_seen = 0;
            for (k, key) in ["refs/b", "refs/a", "refs/c1", "refs/"].iter().enumerate() {
                let mut n = 0;
                while it.next_record().unwrap().is_some() {
                    n += 1;
                    let at = format!("record {n} after seek {k}");
                    check(&it, &at);
                    if budget == 0 {
                        ended_hold_nothing(&it, &at);
                        ended_seen += it.iters.len() - it.heap.len() - 1;
                    }
                    if n == 4 {
                        break;
                    }
                }
                it.seek(key.as_bytes()).unwrap();
                check(&it, &format!("seek {k} to {key}"));
            }
            if budget == 0 {
                assert!(ended_seen >= 3, "only {ended_seen} ended tables checked");
            }
        }
    }

    /// Over tables whose log block inflates to more than 1 MiB, positioning only peeks at
    /// each table's first key: nothing is inflated or held until a table's turn, and each
    /// block is inflated once, even with no budget at all.
    #[test]
    fn big_log_blocks_are_peeked_then_inflated_once() {
        let big = "m".repeat(2 << 20);
        let tables: Vec<Table> = (0..3u64)
            .map(|k| log_table(&l(&format!("refs/heads/b{k}"), k + 1, Some(&big)), 3 << 20))
            .collect();
        let mut m = MergedTable::new(tables, HashId::Sha1).unwrap();
        m.set_inflate_budget(0);
        let mut it = m.logs().unwrap();
        assert_eq!(it.budget.charged().1, 0);
        assert_eq!(it.stats().blocks_inflated, 0);
        let mut names = Vec::new();
        while let Some(rec) = it.next_record().unwrap() {
            names.push(String::from_utf8(rec.refname.clone()).unwrap());
            assert!(rec.value_bytes() > 2 << 20);
        }
        assert_eq!(names, ["refs/heads/b0", "refs/heads/b1", "refs/heads/b2"]);
        assert_eq!(it.stats().blocks_inflated, 3);
    }

    /// A big reflog message that is the last record of its block: the block is let go as
    /// soon as the record is decoded, and with no budget the record goes too while the
    /// other table's record is returned. It is decoded again, from a fresh inflate of its
    /// block, when its turn comes.
    #[test]
    fn a_big_last_record_let_go_is_decoded_again() {
        let big = "x".repeat(3 << 19);
        let mut w = Writer::new(
            Vec::new(),
            WriteOptions {
                block_size: 4 << 20,
                ..WriteOptions::default()
            },
        );
        w.set_limits(1, 1).unwrap();
        w.add_log(&l("refs/m", 1, Some("m"))).unwrap();
        w.add_log(&l("refs/x", 1, Some(&big))).unwrap();
        let with_big = Table::from_bytes("big.ref", w.finish().unwrap()).unwrap();
        let small = table(&[], &[l("refs/a", 2, Some("a")), l("refs/n", 2, Some("n"))]);
        let decoded_unlimited = {
            let m = MergedTable::new(vec![with_big.clone(), small.clone()], HashId::Sha1);
            let mut it = m.unwrap().logs().unwrap();
            let mut n = 0;
            while it.next_record().unwrap().is_some() {
                n += 1;
            }
            assert_eq!(n, 4);
            it.stats().records_decoded
        };
        let mut m = MergedTable::new(vec![with_big, small], HashId::Sha1).unwrap();
        m.set_inflate_budget(0);
        let mut it = m.logs().unwrap();
        let mut got = Vec::new();
        while let Some(rec) = it.next_record().unwrap() {
            let name = String::from_utf8(rec.refname.clone()).unwrap();
            let LogValue::Update(u) = &rec.value else {
                panic!("{name}: a deletion");
            };
            got.push((name.clone(), u.message.len()));
            if name == "refs/n" {
                // refs/x waits in the queue: its message was let go.
                assert_eq!(it.held_by(0), 0, "the big table while refs/n is read");
            }
        }
        let got: Vec<(&str, usize)> = got.iter().map(|(n, l)| (n.as_str(), *l)).collect();
        let want = [
            ("refs/a", 2),
            ("refs/m", 2),
            ("refs/n", 2),
            ("refs/x", (3 << 19) + 1),
        ];
        assert_eq!(got, want);
        // Each table's block once, and the big one again for refs/x, whose record is
        // decoded once more than without a budget.
        assert_eq!(it.stats().blocks_inflated, 3);
        assert_eq!(it.stats().records_decoded, decoded_unlimited + 1);
    }

    /// Equal keys come out newest table first in the queue, smallest key first overall.
    #[test]
    fn queue_order() {
        let mk = |key: &str, index| HeapItem {
            key: key.as_bytes().to_vec(),
            index,
        };
        let mut h = BinaryHeap::new();
        for (k, i) in [("b", 0), ("a", 0), ("a", 2), ("c", 1), ("a", 1)] {
            h.push(mk(k, i));
        }
        let order: Vec<(Vec<u8>, usize)> =
            std::iter::from_fn(|| h.pop().map(|x| (x.key, x.index))).collect();
        assert_eq!(
            order,
            [
                (b"a".to_vec(), 2),
                (b"a".to_vec(), 1),
                (b"a".to_vec(), 0),
                (b"b".to_vec(), 0),
                (b"c".to_vec(), 1)
            ]
        );
    }
}
