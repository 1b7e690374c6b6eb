//! The obj section against the refs, both ways.
//!
//! A table of millions of refs has about as many obj records, so what is collected for this
//! check is kept flat: fixed-width entries in a few buffers, a few bytes more than the ids
//! themselves per ref, never a map node or a copied ref name per object id.

use std::collections::BTreeSet;
use std::ops::Range;

use reftable::codec::block::BlockInfo;
use reftable::RefRecord;

use super::records::hex;
use super::{TableChecker, MAX_PROBLEMS_PER_FILE};
use crate::text::show_bytes;

/// Object id prefixes of the refs with the ref block each ref is in: one entry per
/// (prefix, block), the prefix followed by the block offset in big-endian, so that sorting
/// the entries as bytes sorts them by prefix, then by offset.
#[derive(Debug, Default)]
pub(super) struct RefIds {
    width: usize,
    data: Vec<u8>,
}

impl RefIds {
    pub(super) fn push(&mut self, prefix: &[u8], block: u64) {
        self.width = prefix.len() + 8;
        let n = self.data.len();
        // Refs of one block to the same object (or peeled and value ids alike) come together.
        if n >= self.width && self.entry_at(n - self.width) == (prefix, block) {
            return;
        }
        self.data.extend_from_slice(prefix);
        self.data.extend_from_slice(&block.to_be_bytes());
    }

    fn len(&self) -> usize {
        self.data.len().checked_div(self.width).unwrap_or(0)
    }

    fn entry_at(&self, start: usize) -> (&[u8], u64) {
        let e = &self.data[start..start + self.width];
        let (p, off) = e.split_at(self.width - 8);
        (p, u64::from_be_bytes(off.try_into().expect("8 bytes")))
    }

    fn entry(&self, i: usize) -> (&[u8], u64) {
        self.entry_at(i * self.width)
    }

    /// Sort the entries and drop repeats.
    fn finish(&mut self) {
        let w = self.width;
        if w == 0 {
            return;
        }
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_unstable_by(|a, b| {
            let (a, b) = (*a as usize * w, *b as usize * w);
            self.data[a..a + w].cmp(&self.data[b..b + w])
        });
        let mut sorted = Vec::with_capacity(self.data.len());
        for i in order {
            let e = &self.data[i as usize * w..(i as usize + 1) * w];
            if sorted.len() < w || &sorted[sorted.len() - w..] != e {
                sorted.extend_from_slice(e);
            }
        }
        self.data = sorted;
    }

    /// The entries whose prefix is `prefix` (after [`RefIds::finish`]).
    fn find(&self, prefix: &[u8]) -> Range<usize> {
        let n = self.len();
        let lo = partition(n, |i| self.entry(i).0 < prefix);
        let hi = partition(n, |i| self.entry(i).0 <= prefix);
        lo..hi
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

/// The obj records of a table with where each one is, in flat buffers.
#[derive(Debug, Default)]
pub(super) struct ObjEntries {
    width: usize,
    prefixes: Vec<u8>,
    offsets: Vec<u64>,
    /// Per record: the end of its offsets in `offsets`, its block in `blocks`, its position.
    records: Vec<(u32, u32, u32)>,
    blocks: Vec<BlockInfo>,
}

impl ObjEntries {
    pub(super) fn push(&mut self, prefix: &[u8], offsets: &[u64], b: &BlockInfo, at: usize) {
        self.width = prefix.len();
        if self.blocks.last().map(|l| l.offset) != Some(b.offset) {
            self.blocks.push(*b);
        }
        self.prefixes.extend_from_slice(prefix);
        self.offsets.extend_from_slice(offsets);
        self.records.push((
            self.offsets.len() as u32,
            (self.blocks.len() - 1) as u32,
            at as u32,
        ));
    }

    fn get(&self, i: usize) -> (&[u8], &[u64], &BlockInfo, usize) {
        let (end, block, at) = self.records[i];
        let start = if i == 0 { 0 } else { self.records[i - 1].0 };
        (
            &self.prefixes[i * self.width..(i + 1) * self.width],
            &self.offsets[start as usize..end as usize],
            &self.blocks[block as usize],
            at as usize,
        )
    }
}

impl TableChecker<'_> {
    /// Check the obj section against the refs, both ways.
    pub(super) fn objs(&mut self, ref_blocks: &BTreeSet<u64>) {
        let objs = std::mem::take(&mut self.c.objs);
        let mut ids = std::mem::take(&mut self.c.ref_ids);
        ids.finish();
        // Per entry of `ids`: whether an obj record has its prefix.
        let mut seen = vec![false; ids.len()];
        for k in 0..objs.records.len() {
            let (prefix, offsets, block, at) = objs.get(k);
            let p = hex(prefix);
            let want = ids.find(prefix);
            if want.is_empty() {
                let msg = format!("obj record {p} matches no ref's object id");
                self.r.in_block(block, at, &msg);
                continue;
            }
            want.clone().for_each(|i| seen[i] = true);
            if offsets.is_empty() {
                continue; // "Scan all refs": valid for any prefix some ref has.
            }
            if offsets.windows(2).any(|w| w[1] <= w[0]) {
                let msg = format!("obj record {p} lists block offsets that are not increasing");
                self.r.in_block(block, at, &msg);
            }
            for &off in offsets {
                let msg = if !ref_blocks.contains(&off) {
                    format!("obj record {p} points at offset {off}, which is not a ref block")
                } else if !want.clone().any(|i| ids.entry(i).1 == off) {
                    format!(
                        "obj record {p} lists the ref block at {off}, \
                         which has no ref to an object with this prefix"
                    )
                } else {
                    continue;
                };
                self.r.in_block(block, at, &msg);
            }
            for i in want {
                let off = ids.entry(i).1;
                if !offsets.contains(&off) {
                    let msg = format!(
                        "obj record {p} does not list the ref block at {off}, \
                         which has a ref to an object with this prefix"
                    );
                    self.r.in_block(block, at, &msg);
                }
            }
        }
        self.unlisted_prefixes(&ids, &seen);
    }

    /// Report the prefixes of refs' ids that no obj record has, naming one ref for each of
    /// those shown (found by one more pass over the refs, only when there are any).
    fn unlisted_prefixes(&mut self, ids: &RefIds, seen: &[bool]) {
        let mut missing: Vec<&[u8]> = Vec::new();
        let mut count = 0;
        let mut last: Option<&[u8]> = None;
        for (i, _) in seen.iter().enumerate().filter(|(_, s)| !**s) {
            let p = ids.entry(i).0;
            if last.replace(p) == Some(p) {
                continue; // the same prefix in another block
            }
            count += 1;
            if missing.len() < MAX_PROBLEMS_PER_FILE {
                missing.push(p);
            }
        }
        if count == 0 {
            return;
        }
        let mut names: Vec<Option<Vec<u8>>> = vec![None; missing.len()];
        if let Ok(mut it) = self.t.refs() {
            while let Some(Ok(r)) = it.next() {
                name_refs(&r, &missing, &mut names);
            }
        }
        let at = self.t.info().objs.offset;
        for (p, name) in missing.iter().zip(names) {
            let name = name.map_or("?".to_string(), |n| show_bytes(&n, 200));
            let msg = format!(
                "obj section has no record for object id prefix {} (ref {name})",
                hex(p)
            );
            self.r.at(at, msg);
        }
        for _ in missing.len()..count {
            self.r
                .at(at, "obj section has no record for an object id prefix");
        }
    }
}

/// Note `r`'s name for each of the `wanted` prefixes its ids have and that has no name yet.
fn name_refs(r: &RefRecord, wanted: &[&[u8]], names: &mut [Option<Vec<u8>>]) {
    for id in r.value_id().into_iter().chain(r.peeled_id()) {
        for (p, n) in wanted.iter().zip(names.iter_mut()) {
            if n.is_none() && id.as_bytes().starts_with(p) {
                *n = Some(r.refname.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_ids_sort_dedup_and_find() {
        let mut ids = RefIds::default();
        for (p, off) in [
            (b"bb", 4096u64),
            (b"aa", 0),
            (b"bb", 0),
            (b"aa", 0),
            (b"bb", 4096),
        ] {
            ids.push(p, off);
        }
        ids.finish();
        let all: Vec<(&[u8], u64)> = (0..ids.len()).map(|i| ids.entry(i)).collect();
        assert_eq!(all, [(&b"aa"[..], 0), (&b"bb"[..], 0), (&b"bb"[..], 4096)]);
        assert_eq!(ids.find(b"bb"), 1..3);
        assert_eq!(ids.find(b"ab"), 1..1);
        assert!(ids.find(b"zz").is_empty());
    }
}
