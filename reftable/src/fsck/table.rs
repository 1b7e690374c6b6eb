//! One table checked: the header and footer fields, and the order the checks run in.

use std::path::Path;

use super::checker::{Scratch, TableChecker};
use super::collected::Collected;
use super::finding::{FileFindings, FindingKind};
use crate::error::{ErrorKind, Result};
use crate::table::Table;

/// A table's findings, and the table when it opened.
pub(super) struct Checked {
    pub(super) findings: FileFindings,
    pub(super) table: Option<Table>,
}

/// Check the table `file`. `Err` only for I/O errors other than a missing file.
pub(super) fn check_table_file(file: &Path, scratch: &mut Scratch) -> Result<Checked> {
    let mut findings = FileFindings::new(file);
    // Mapped, not read: a table of millions of refs is checked in little more memory than
    // the pages of it being looked at.
    let t = match Table::open(file) {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::Io => return Err(e),
        Err(e) => {
            findings.error(&e);
            return Ok(Checked {
                findings,
                table: None,
            });
        }
    };
    let mut c = TableChecker {
        t: &t,
        r: findings,
        c: Collected::default(),
        s: scratch,
    };
    c.header();
    let ranges = c.footer_ranges();
    let (blocks, complete) = c.walk(&ranges);
    let sections = c.sections(&blocks, complete);
    if complete {
        for s in &sections {
            c.index(s, &blocks);
        }
        if t.info().objs.present {
            c.objs_done();
        }
    }
    Ok(Checked {
        findings: c.r,
        table: Some(t),
    })
}

impl TableChecker<'_> {
    /// The header and footer fields that need no block: update index limits, the obj id
    /// length, index positions of absent sections, an obj section without refs.
    fn header(&mut self) {
        let i = *self.t.info();
        let footer_field = |k: u64| i.footer_offset + i.header_size() as u64 + k;
        if i.min_update_index > i.max_update_index {
            self.r.at(
                FindingKind::Footer,
                8,
                format!(
                    "min_update_index {} is larger than max_update_index {}",
                    i.min_update_index, i.max_update_index
                ),
            );
        }
        if i.objs.present && usize::from(i.obj_id_len) > i.hash.size() {
            self.r.at(
                FindingKind::Footer,
                footer_field(8),
                format!(
                    "obj id length {} is longer than a {} object id",
                    i.obj_id_len,
                    i.hash.name()
                ),
            );
        }
        let fields = [
            ("ref index position", i.refs.index_offset, i.refs.present, 0),
            (
                "obj index position",
                i.objs.index_offset,
                i.objs.present,
                16,
            ),
            (
                "log index position",
                i.logs.index_offset,
                i.logs.present,
                32,
            ),
        ];
        for (what, value, present, field) in fields {
            if value != 0 && !present {
                self.r.at(
                    FindingKind::Footer,
                    footer_field(field),
                    format!("{what} {value} is set but the table has no such section"),
                );
            }
        }
        if i.objs.present && !i.refs.present {
            self.r.at(
                FindingKind::Footer,
                footer_field(8),
                "obj section in a table without refs",
            );
        }
    }
}
