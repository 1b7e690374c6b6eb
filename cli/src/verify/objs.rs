//! The obj section against the refs, both ways.

use std::collections::BTreeSet;

use super::records::hex;
use super::TableChecker;
use crate::text::show_bytes;

impl TableChecker<'_> {
    /// Check the obj section against the refs, both ways.
    pub(super) fn objs(&mut self, ref_blocks: &BTreeSet<u64>) {
        let i = *self.t.info();
        let mut seen: BTreeSet<Vec<u8>> = BTreeSet::new();
        let objs = std::mem::take(&mut self.c.objs);
        for o in &objs {
            let p = hex(&o.prefix);
            seen.insert(o.prefix.clone());
            let Some((want, _)) = self.c.ref_ids.get(&o.prefix) else {
                self.r.in_block(
                    &o.block,
                    o.at,
                    &format!("obj record {p} matches no ref's object id"),
                );
                continue;
            };
            if o.offsets.is_empty() {
                continue; // "scan all refs": valid for any prefix some ref has.
            }
            if o.offsets.windows(2).any(|w| w[1] <= w[0]) {
                self.r.in_block(
                    &o.block,
                    o.at,
                    &format!("obj record {p} lists block offsets that are not increasing"),
                );
            }
            for off in &o.offsets {
                if !ref_blocks.contains(off) {
                    self.r.in_block(
                        &o.block,
                        o.at,
                        &format!("obj record {p} points at offset {off}, which is not a ref block"),
                    );
                } else if !want.contains(off) {
                    self.r.in_block(
                        &o.block,
                        o.at,
                        &format!(
                            "obj record {p} lists the ref block at {off}, \
                             which has no ref to an object with this prefix"
                        ),
                    );
                }
            }
            let listed: BTreeSet<u64> = o.offsets.iter().copied().collect();
            for off in want.difference(&listed) {
                self.r.in_block(
                    &o.block,
                    o.at,
                    &format!(
                        "obj record {p} does not list the ref block at {off}, \
                         which has a ref to an object with this prefix"
                    ),
                );
            }
        }
        let missing: Vec<(Vec<u8>, Vec<u8>)> = self
            .c
            .ref_ids
            .iter()
            .filter(|(k, _)| !seen.contains(*k))
            .map(|(k, (_, name))| (k.clone(), name.clone()))
            .collect();
        for (prefix, name) in missing {
            self.r.at(
                i.objs.offset,
                format!(
                    "obj section has no record for object id prefix {} (ref {})",
                    hex(&prefix),
                    show_bytes(&name, 200)
                ),
            );
        }
    }
}
