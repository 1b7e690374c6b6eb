//! Counters of the work done by readers and writers.
//!
//! They are plain integers bumped on the hot path, deterministic for a given input, and
//! meant for complexity tests (records decoded per lookup must not grow with the number of
//! tombstones), for fuzz targets (work per input byte stays bounded) and for reports.

use std::ops::AddAssign;

/// Work counters. Iterators keep their own; tables and stacks add up what their iterators did.
///
/// ```
/// let mut a = reftable::table::Stats::default();
/// a.records_decoded += 3;
/// let mut b = reftable::table::Stats::default();
/// b.blocks_read = 1;
/// a += b;
/// assert_eq!((a.records_decoded, a.blocks_read), (3, 1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Stats {
    /// Records decoded from blocks (including index records and records skipped by seeks).
    pub records_decoded: u64,
    /// Blocks parsed (header and restart table checked), of any type.
    pub blocks_read: u64,
    /// Log blocks inflated.
    pub blocks_inflated: u64,
    /// Key comparisons made by seeks (restart binary search and linear scans).
    pub key_comparisons: u64,
    /// Tables opened.
    pub tables_opened: u64,
    /// Records written by compaction.
    pub entries_written: u64,
    /// Pushes onto and pops from merged iterators' priority queues.
    pub heap_operations: u64,
    /// Reads of `tables.list` (including the re-reads of a retried reload).
    pub tables_list_reads: u64,
    /// `stat` and `fstat` calls on `tables.list` (up-to-date checks and reads): the system
    /// calls a stack reload per ref would multiply.
    pub tables_list_stats: u64,
    /// `fsync` calls on tables and on `tables.list` (0 with `StackOptions::fsync` off).
    pub fsyncs: u64,
    /// Index records decoded into a table's in-memory leaf index: one-time work per table
    /// and section, after which its seeks need no index block (counted here rather than
    /// in `records_decoded`, which is per-seek work).
    pub index_entries_cached: u64,
}

impl Stats {
    /// Every counter with its field name, in declaration order (for reports and exact
    /// baselines).
    ///
    /// ```
    /// let mut s = reftable::table::Stats::default();
    /// s.blocks_read = 2;
    /// assert!(s.counters().contains(&("blocks_read", 2)));
    /// ```
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("records_decoded", self.records_decoded),
            ("blocks_read", self.blocks_read),
            ("blocks_inflated", self.blocks_inflated),
            ("key_comparisons", self.key_comparisons),
            ("tables_opened", self.tables_opened),
            ("entries_written", self.entries_written),
            ("heap_operations", self.heap_operations),
            ("tables_list_reads", self.tables_list_reads),
            ("index_entries_cached", self.index_entries_cached),
            ("tables_list_stats", self.tables_list_stats),
            ("fsyncs", self.fsyncs),
        ]
    }

    /// What was counted since `before` (each counter, saturating at 0).
    ///
    /// ```
    /// let (mut before, mut after) = (reftable::table::Stats::default(), reftable::table::Stats::default());
    /// (before.records_decoded, after.records_decoded) = (5, 8);
    /// assert_eq!(after.since(before).records_decoded, 3);
    /// ```
    pub fn since(self, before: Stats) -> Stats {
        Stats {
            records_decoded: self.records_decoded.saturating_sub(before.records_decoded),
            blocks_read: self.blocks_read.saturating_sub(before.blocks_read),
            blocks_inflated: self.blocks_inflated.saturating_sub(before.blocks_inflated),
            key_comparisons: self.key_comparisons.saturating_sub(before.key_comparisons),
            tables_opened: self.tables_opened.saturating_sub(before.tables_opened),
            entries_written: self.entries_written.saturating_sub(before.entries_written),
            heap_operations: self.heap_operations.saturating_sub(before.heap_operations),
            tables_list_reads: self
                .tables_list_reads
                .saturating_sub(before.tables_list_reads),
            index_entries_cached: self
                .index_entries_cached
                .saturating_sub(before.index_entries_cached),
            tables_list_stats: self
                .tables_list_stats
                .saturating_sub(before.tables_list_stats),
            fsyncs: self.fsyncs.saturating_sub(before.fsyncs),
        }
    }
}

impl AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.records_decoded += o.records_decoded;
        self.blocks_read += o.blocks_read;
        self.blocks_inflated += o.blocks_inflated;
        self.key_comparisons += o.key_comparisons;
        self.tables_opened += o.tables_opened;
        self.entries_written += o.entries_written;
        self.heap_operations += o.heap_operations;
        self.tables_list_reads += o.tables_list_reads;
        self.index_entries_cached += o.index_entries_cached;
        self.tables_list_stats += o.tables_list_stats;
        self.fsyncs += o.fsyncs;
    }
}

/// A shared, thread-safe sink iterators add their counters to when they are dropped.
#[derive(Debug, Default)]
pub(crate) struct StatsSink {
    fields: [std::sync::atomic::AtomicU64; 11],
}

impl StatsSink {
    pub(crate) fn add(&self, s: &Stats) {
        use std::sync::atomic::Ordering::Relaxed;
        let vals = [
            s.records_decoded,
            s.blocks_read,
            s.blocks_inflated,
            s.key_comparisons,
            s.tables_opened,
            s.entries_written,
            s.heap_operations,
            s.tables_list_reads,
            s.index_entries_cached,
            s.tables_list_stats,
            s.fsyncs,
        ];
        for (f, v) in self.fields.iter().zip(vals) {
            if v != 0 {
                f.fetch_add(v, Relaxed);
            }
        }
    }

    pub(crate) fn get(&self) -> Stats {
        use std::sync::atomic::Ordering::Relaxed;
        let f = |i: usize| self.fields[i].load(Relaxed);
        Stats {
            records_decoded: f(0),
            blocks_read: f(1),
            blocks_inflated: f(2),
            key_comparisons: f(3),
            tables_opened: f(4),
            entries_written: f(5),
            heap_operations: f(6),
            tables_list_reads: f(7),
            index_entries_cached: f(8),
            tables_list_stats: f(9),
            fsyncs: f(10),
        }
    }
}
