//! The refs of a table that point at one object, lent one at a time: through the ref
//! blocks the obj section lists for the id's prefix when the table has one, else by reading
//! every ref.

use super::info::corrupt;
use super::iter::TableIter;
use super::open::Table;
use crate::codec::record::{ObjRecord, RefRecord};
use crate::error::Result;
use crate::hash::ObjectId;

/// Where a [`RefsFor`] reads next.
#[derive(Debug)]
enum Source {
    /// Every ref, in order (no obj section, or its record says "scan").
    Scan,
    /// The ref blocks an obj record lists: their offsets, the next one to load, and where
    /// the last loaded block ends (each block is visited once).
    Blocks {
        offsets: Vec<u64>,
        next: usize,
        next_free: u64,
    },
    /// Nothing more.
    Done,
}

/// The refs of a table whose value or peeled value is one object id, in table order,
/// tombstones excluded ([`Table::refs_for`]). [`RefsFor::next_record`] lends each record;
/// the [`Iterator`] implementation clones it.
#[derive(Debug)]
pub struct RefsFor {
    refs: TableIter<RefRecord>,
    id: ObjectId,
    source: Source,
}

impl Table {
    /// Refs whose value or peeled value is `id`, in table order, tombstones excluded.
    /// Uses the obj section when the table has one, else reads every ref.
    pub fn refs_for(&self, id: &ObjectId) -> Result<RefsFor> {
        let (refs, source) = self.refs_for_source(id)?;
        Ok(RefsFor {
            refs,
            id: *id,
            source,
        })
    }

    fn refs_for_source(&self, id: &ObjectId) -> Result<(TableIter<RefRecord>, Source)> {
        let info = self.info();
        if !info.objs.present {
            return Ok((self.refs()?, Source::Scan));
        }
        let len = (info.obj_id_len as usize).min(id.len());
        let prefix = &id.as_bytes()[..len];
        let mut it = self.seek::<ObjRecord>(prefix)?;
        let offsets = match it.next_record()? {
            Some(o) if o.hash_prefix == prefix => o.offsets.clone(),
            _ => return Ok((TableIter::new(self.clone()), Source::Done)),
        };
        if offsets.is_empty() {
            return Ok((self.refs()?, Source::Scan));
        }
        let blocks = Source::Blocks {
            offsets,
            next: 0,
            next_free: 0,
        };
        Ok((TableIter::new(self.clone()), blocks))
    }
}

impl RefsFor {
    /// The next ref pointing at the id, borrowed until the next call.
    pub fn next_record(&mut self) -> Result<Option<&RefRecord>> {
        loop {
            let scanning = match self.source {
                Source::Done => return Ok(None),
                Source::Scan => true,
                Source::Blocks { .. } => false,
            };
            let r = if scanning {
                self.refs.next_record()
            } else {
                self.refs.next_in_block()
            };
            // After an error, nothing more.
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    self.source = Source::Done;
                    // A block's own reads leave the file to the table.
                    return Err(if scanning {
                        e
                    } else {
                        self.refs.table().err(e)
                    });
                }
            };
            match r {
                Some(r) if points_at(r, &self.id) => return Ok(Some(self.refs.current())),
                Some(_) => {}
                None if scanning => self.source = Source::Done,
                None => {
                    if let Err(e) = self.load_next_block() {
                        self.source = Source::Done;
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Position on the next listed ref block, or end.
    fn load_next_block(&mut self) -> Result<()> {
        let Source::Blocks {
            offsets,
            next,
            next_free,
        } = &mut self.source
        else {
            return Ok(());
        };
        let Some(&off) = offsets.get(*next) else {
            self.source = Source::Done;
            return Ok(());
        };
        *next += 1;
        let t = self.refs.table().clone();
        // An offset inside a block already visited is corrupt (and would make the lookup
        // quadratic).
        if off < *next_free {
            let what = "obj record lists a position inside a ref block it already listed";
            return Err(t.err(corrupt(off, what)));
        }
        self.refs.load_single_block(off).map_err(|e| t.err(e))?;
        if let Some(b) = self.refs.block() {
            *next_free = b.offset + b.full_size as u64;
        }
        Ok(())
    }
}

impl Iterator for RefsFor {
    type Item = Result<RefRecord>;

    fn next(&mut self) -> Option<Result<RefRecord>> {
        self.next_record().map(|r| r.cloned()).transpose()
    }
}

/// Whether `r`'s value or peeled value is `id`.
fn points_at(r: &RefRecord, id: &ObjectId) -> bool {
    r.value_id() == Some(id) || r.peeled_id() == Some(id)
}

#[cfg(test)]
mod tests {
    use crate::codec::record::{ObjRecord, RefRecord, RefValue};
    use crate::table::testing::{id, write};
    use crate::WriteOptions;

    /// Looking up an id no ref has decodes only the obj records the seek needs, never the
    /// ref blocks of the next prefix.
    #[test]
    fn refs_for_a_missing_id_reads_no_ref_block() {
        // Refs to even ids only: an odd id's prefix falls between two obj records.
        let even: Vec<RefRecord> = (0..2000u16)
            .map(|i| {
                RefRecord::new(
                    format!("refs/heads/b{i:05}"),
                    1,
                    RefValue::Object(id(2 * i)),
                )
            })
            .collect();
        let t = write(&even, &[], WriteOptions::default());
        assert!(t.info().objs.present);
        let missing = id(1001);
        let prefix = &missing.as_bytes()[..usize::from(t.info().obj_id_len)];
        let before = t.stats();
        {
            let mut it = t.seek::<ObjRecord>(prefix).unwrap();
            it.next_record().unwrap();
        }
        let seek_only = t.stats().since(before);
        let before = t.stats();
        assert!(t.refs_for(&missing).unwrap().next().is_none());
        assert_eq!(t.stats().since(before), seek_only);
        assert_eq!(t.refs_for(&id(1998)).unwrap().count(), 1);
    }
}
