//! The obj section against the refs, both ways: every ref block an obj record lists has a
//! ref with the record's prefix and every such block is listed; every prefix of a ref's id
//! has a record.

use super::checker::TableChecker;
use super::finding::{FindingKind, MAX_FINDINGS_PER_FILE};
use super::obj_ids::{ObjCheck, RefIds};
use super::shown::{hex, show_bytes};
use crate::codec::block::BlockInfo;
use crate::codec::record::RefRecord;

impl TableChecker<'_> {
    /// Check the obj records of block `b` (collected in `self.c.obj.block`) against the
    /// refs, which come before the obj section: every ref block a record lists has a ref
    /// with the prefix and every such block is listed.
    pub(super) fn check_obj_block(&mut self, b: &BlockInfo) {
        let mut check = std::mem::take(&mut self.c.obj);
        check.finish();
        let ObjCheck {
            ids,
            ref_blocks,
            block: objs,
            seen,
        } = &mut check;
        for k in 0..objs.records.len() {
            let (prefix, offsets, at) = objs.get(k);
            let p = hex(prefix);
            let want = ids.find(prefix);
            if want.is_empty() {
                let msg = format!("obj record {p} matches no ref's object id");
                self.r.in_block(FindingKind::Objects, b, at, &msg);
                continue;
            }
            want.clone().for_each(|i| seen[i] = true);
            if offsets.is_empty() {
                continue; // "Scan all refs": valid for any prefix some ref has.
            }
            if offsets.windows(2).any(|w| w[1] <= w[0]) {
                let msg = format!("obj record {p} lists block offsets that are not increasing");
                self.r.in_block(FindingKind::Objects, b, at, &msg);
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
                self.r.in_block(FindingKind::Objects, b, at, &msg);
            }
            for i in want {
                let off = ids.entry(i).1;
                if !offsets.contains(&off) {
                    let msg = format!(
                        "obj record {p} does not list the ref block at {off}, \
                         which has a ref to an object with this prefix"
                    );
                    self.r.in_block(FindingKind::Objects, b, at, &msg);
                }
            }
        }
        objs.clear();
        self.c.obj = check;
    }

    /// After a complete walk of a table with an obj section: the refs' prefixes no obj
    /// record had.
    pub(super) fn objs_done(&mut self) {
        let mut check = std::mem::take(&mut self.c.obj);
        check.finish();
        self.unlisted_prefixes(&check.ids, &check.seen);
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
            if missing.len() < MAX_FINDINGS_PER_FILE {
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
            self.r.at(FindingKind::Objects, at, msg);
        }
        for _ in missing.len()..count {
            let msg = "obj section has no record for an object id prefix";
            self.r.at(FindingKind::Objects, at, msg);
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
