//! Counters of the work done by readers and writers.
//!
//! They are plain integers bumped on the hot path, deterministic for a given input, and
//! meant for complexity tests (records decoded per lookup must not grow with the number of
//! tombstones), for fuzz targets (work per input byte stays bounded) and for reports.

use std::ops::AddAssign;

/// Work counters. Iterators keep their own; tables and stacks add up what their iterators did.
///
/// ```
/// let mut a = reftable::Stats::default();
/// a.records_decoded += 3;
/// let b = reftable::Stats { blocks_read: 1, ..Default::default() };
/// a += b;
/// assert_eq!((a.records_decoded, a.blocks_read), (3, 1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
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
}

impl AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.records_decoded += o.records_decoded;
        self.blocks_read += o.blocks_read;
        self.blocks_inflated += o.blocks_inflated;
        self.key_comparisons += o.key_comparisons;
        self.tables_opened += o.tables_opened;
        self.entries_written += o.entries_written;
    }
}

/// A shared, thread-safe sink iterators add their counters to when they are dropped.
#[derive(Debug, Default)]
pub(crate) struct StatsSink {
    fields: [std::sync::atomic::AtomicU64; 6],
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
        }
    }
}
