//! What the obj check collects, kept flat: a table of millions of refs has about as many
//! obj records, so the refs' object id prefixes and the obj records of a block are
//! fixed-width entries in a few buffers, a few bytes more than the ids themselves per ref,
//! never a map node or a copied ref name per object id.

use std::collections::BTreeSet;
use std::ops::Range;

/// Object id prefixes of the refs with the ref block each ref is in: one entry per
/// (prefix, block), the prefix followed by the block's ordinal among the ref blocks
/// (4 bytes, big-endian), so that sorting the entries as bytes sorts them by prefix, then
/// by block. 2M refs with 3-byte prefixes take 14 MB, sorted in place.
#[derive(Debug, Default)]
pub(super) struct RefIds {
    width: usize,
    data: Vec<u8>,
    /// Offsets of the ref blocks that have entries, in file order (ordinal -> offset).
    blocks: Vec<u64>,
    /// Sorted: the obj records are being checked, later refs are not taken.
    pub(super) finished: bool,
}

impl RefIds {
    pub(super) fn push(&mut self, prefix: &[u8], block: u64) {
        if self.finished {
            return; // a ref block after the obj section: reported by the section checks
        }
        if self.blocks.last() != Some(&block) {
            self.blocks.push(block);
        }
        let Ok(ordinal) = u32::try_from(self.blocks.len() - 1) else {
            return; // more than 4 billion ref blocks cannot be in a table
        };
        self.width = prefix.len() + 4;
        let n = self.data.len();
        // Refs of one block to the same object (or peeled and value ids alike) come together.
        if n >= self.width && self.entry_at(n - self.width) == (prefix, block) {
            return;
        }
        self.data.extend_from_slice(prefix);
        self.data.extend_from_slice(&ordinal.to_be_bytes());
    }

    pub(super) fn len(&self) -> usize {
        self.data.len().checked_div(self.width).unwrap_or(0)
    }

    fn entry_at(&self, start: usize) -> (&[u8], u64) {
        let e = &self.data[start..start + self.width];
        let (p, ord) = e.split_at(self.width - 4);
        let ord = u32::from_be_bytes(ord.try_into().expect("4 bytes"));
        (p, self.blocks[ord as usize])
    }

    pub(super) fn entry(&self, i: usize) -> (&[u8], u64) {
        self.entry_at(i * self.width)
    }

    /// Sort the entries and drop repeats, in place.
    pub(super) fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let w = self.width;
        if w == 0 {
            return;
        }
        sort_records(&mut self.data, w);
        let mut kept = 0;
        for i in 0..self.len() {
            if kept == 0 || self.data[i * w..(i + 1) * w] != self.data[(kept - 1) * w..kept * w] {
                self.data.copy_within(i * w..(i + 1) * w, kept * w);
                kept += 1;
            }
        }
        self.data.truncate(kept * w);
        self.data.shrink_to_fit();
    }

    /// The entries whose prefix is `prefix` (after [`RefIds::finish`]).
    pub(super) fn find(&self, prefix: &[u8]) -> Range<usize> {
        let n = self.len();
        let lo = partition(n, |i| self.entry(i).0 < prefix);
        let hi = partition(n, |i| self.entry(i).0 <= prefix);
        lo..hi
    }
}

/// Sort the `w`-byte records of `data` as byte strings, in place (heapsort: no second
/// buffer for millions of entries).
fn sort_records(data: &mut [u8], w: usize) {
    let n = data.len() / w;
    let rec = |i: usize| i * w..(i + 1) * w;
    let less = |d: &[u8], a: usize, b: usize| d[rec(a)] < d[rec(b)];
    let swap = |d: &mut [u8], a: usize, b: usize| {
        let (lo, hi) = (a.min(b), a.max(b));
        let (x, y) = d.split_at_mut(hi * w);
        x[lo * w..(lo + 1) * w].swap_with_slice(&mut y[..w]);
    };
    let sift_down = |d: &mut [u8], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && less(d, child, child + 1) {
            child += 1;
        }
        if !less(d, root, child) {
            break;
        }
        swap(d, root, child);
        root = child;
    };
    for start in (0..n / 2).rev() {
        sift_down(data, start, n);
    }
    for end in (1..n).rev() {
        swap(data, 0, end);
        sift_down(data, 0, end);
    }
}

/// The first index in `0..n` for which `before` is false (`before` must be true on a prefix).
fn partition(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The obj records of the block being checked, in flat buffers (reused block to block).
#[derive(Debug, Default)]
pub(super) struct ObjEntries {
    width: usize,
    prefixes: Vec<u8>,
    offsets: Vec<u64>,
    /// Per record: the end of its offsets in `offsets`, its position in the block.
    pub(super) records: Vec<(usize, usize)>,
}

impl ObjEntries {
    pub(super) fn push(&mut self, prefix: &[u8], offsets: &[u64], at: usize) {
        self.width = prefix.len();
        self.prefixes.extend_from_slice(prefix);
        self.offsets.extend_from_slice(offsets);
        self.records.push((self.offsets.len(), at));
    }

    pub(super) fn get(&self, i: usize) -> (&[u8], &[u64], usize) {
        let (end, at) = self.records[i];
        let start = if i == 0 { 0 } else { self.records[i - 1].0 };
        (
            &self.prefixes[i * self.width..(i + 1) * self.width],
            &self.offsets[start..end],
            at,
        )
    }

    pub(super) fn clear(&mut self) {
        self.prefixes.clear();
        self.offsets.clear();
        self.records.clear();
    }
}

/// What the obj check keeps across blocks: the refs' prefixes, the ref blocks, and per
/// entry of the prefixes whether an obj record had it.
#[derive(Debug, Default)]
pub(super) struct ObjCheck {
    pub(super) ids: RefIds,
    pub(super) ref_blocks: BTreeSet<u64>,
    pub(super) block: ObjEntries,
    pub(super) seen: Vec<bool>,
}

impl ObjCheck {
    /// Sort the prefixes once the refs are all read (at the first obj block, or at the end).
    pub(super) fn finish(&mut self) {
        if !self.ids.finished {
            self.ids.finish();
            self.seen = vec![false; self.ids.len()];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_ids_sort_dedup_and_find() {
        let mut ids = RefIds::default();
        // Ref blocks come in file order.
        for (p, off) in [
            (b"bb", 0u64),
            (b"aa", 0),
            (b"bb", 0),
            (b"aa", 0),
            (b"bb", 4096),
            (b"bb", 4096),
        ] {
            ids.push(p, off);
        }
        ids.finish();
        let all: Vec<(&[u8], u64)> = (0..ids.len()).map(|i| ids.entry(i)).collect();
        assert_eq!(all, [(&b"aa"[..], 0), (&b"bb"[..], 0), (&b"bb"[..], 4096)]);
        // Taken after the sort: none.
        ids.push(b"cc", 8192);
        assert_eq!(ids.len(), 3);
        assert_eq!(ids.find(b"bb"), 1..3);
        assert_eq!(ids.find(b"ab"), 1..1);
        assert!(ids.find(b"zz").is_empty());
    }

    /// The in-place sort orders fixed-width records as a sort of their copies does.
    #[test]
    fn records_sort_in_place() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for (n, w) in [(0, 3), (1, 5), (2, 5), (7, 1), (1000, 7), (999, 36)] {
            let mut data: Vec<u8> = (0..n * w)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 4) as u8 // few distinct bytes: many equal records
                })
                .collect();
            let mut want: Vec<Vec<u8>> = data.chunks(w).map(<[u8]>::to_vec).collect();
            want.sort();
            sort_records(&mut data, w);
            assert_eq!(data, want.concat(), "{n} records of {w} bytes");
        }
    }
}
