//! `reftable verify PATH`: a deep check of every table and of the stack.
//!
//! Prints one line per problem on stdout, `<file>: offset <n>: <what is wrong>` (the offset
//! left out where it does not apply), and a summary on stderr. Exit status: 0 clean, 1
//! problems found, 2 usage or I/O error.
//!
//! Per table: header and footer (magic, version, hash id, header = footer, CRC-32), the block
//! walk (types, `block_len` bounds, padding, restart tables), sections (order, offsets, block
//! types), keys (decodable, strictly increasing within and across blocks), restart points (at
//! record starts with prefix length 0), ref records (value types, update indexes within the
//! header's limits, valid names), log records (well-formed keys, value types 0 and 1, update
//! indexes at most the maximum, one-line messages ending in exactly one newline), every level
//! of every index (each entry's key is the last key of the block it points at; the lowest
//! level covers every block of its section; no stray index blocks), the obj section against
//! the refs (both ways), and log blocks git 2.47 cannot read.
//!
//! Per stack: `tables.list` (names that are not plain file names in the directory, missing
//! tables, duplicates, missing final newline, names not in git's format or not matching the
//! table's update indexes), update indexes increasing across the stack, one hash for every
//! table (and the repository's `extensions.objectformat`), stray tables not in the list and
//! leftover lock and temporary files.
//!
//! Log blocks whose compressed stream extends past `max(block size, block_len)` bytes from
//! the block start are valid by the format and readable by this crate, but git (2.47 and
//! master) cannot read them: they are reported as problems (exit 1), with the message saying
//! so.

mod blocks;
mod objs;
mod records;
mod report;
mod sections;
mod stack;

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use reftable::codec::format::BlockType;
use reftable::Table;

use crate::error::{message_and_causes, CliError, CliResult};
use crate::path::{self, Target};
use crate::scratch::Scratch;
use records::Collected;
use report::Report;

/// Problems shown per file; the rest are counted.
const MAX_PROBLEMS_PER_FILE: usize = 100;

/// Where one section's blocks are: `[start, end)`.
#[derive(Clone, Copy, Debug)]
struct SectionRange {
    pub(super) block_type: BlockType,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) index_offset: u64,
}

impl SectionRange {
    pub(super) fn contains(&self, off: u64) -> bool {
        self.start <= off && off < self.end
    }
}

/// One table being checked: the table, its problems, and what the record checks collect.
struct TableChecker<'a> {
    t: &'a Table,
    r: Report,
    c: Collected,
    s: &'a mut Scratch,
}

impl TableChecker<'_> {
    fn header(&mut self) {
        let i = *self.t.info();
        if i.min_update_index > i.max_update_index {
            self.r.at(
                8,
                format!(
                    "min_update_index {} is larger than max_update_index {}",
                    i.min_update_index, i.max_update_index
                ),
            );
        }
        if i.objs.present && usize::from(i.obj_id_len) > i.hash.size() {
            self.r.at(
                i.footer_offset + i.header_size() as u64 + 8,
                format!(
                    "obj id length {} is longer than a {} object id",
                    i.obj_id_len,
                    i.hash.name()
                ),
            );
        }
        let fields = [
            (
                "ref index position",
                i.refs.index_offset,
                i.refs.present,
                0u64,
            ),
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
                    i.footer_offset + i.header_size() as u64 + field,
                    format!("{what} {value} is set but the table has no such section"),
                );
            }
        }
        if i.objs.present && !i.refs.present {
            self.r.at(
                i.footer_offset + i.header_size() as u64 + 8,
                "obj section in a table without refs",
            );
        }
    }
}

/// Everything `verify` learns about one table, for the stack checks.
struct Checked {
    report: Report,
    table: Option<Table>,
}

/// Check one table file. `Err` only for I/O errors other than a missing file.
fn check_file(file: &Path, shown: &str, scratch: &mut Scratch) -> Result<Checked, CliError> {
    let mut report = Report::new(shown.to_string());
    // Mapped, not read: a table of millions of refs is checked in little more memory than
    // the pages of it being looked at.
    let t = match Table::open(file) {
        Ok(t) => t,
        Err(e) if e.kind() == reftable::ErrorKind::Io => {
            return Err(CliError::usage(format!(
                "{shown}: {}",
                message_and_causes(&e)
            )));
        }
        Err(e) => {
            report.error(&e);
            return Ok(Checked {
                report,
                table: None,
            });
        }
    };
    let mut c = TableChecker {
        t: &t,
        r: report,
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
    let report = c.r;
    Ok(Checked {
        report,
        table: Some(t),
    })
}

/// Run `verify`.
pub fn run(p: &Path) -> CliResult {
    let target = path::resolve(p)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (problems, tables) = match &target {
        Target::Table(file) => {
            let c = check_file(file, &file.display().to_string(), &mut Scratch::default())?;
            c.report.print(&mut out)?;
            (c.report.count(), 1)
        }
        Target::Stack { dir, gitdir } => stack::check_stack(dir, gitdir.as_deref(), &mut out)?,
    };
    out.flush()?;
    let what = if tables == 1 { "table" } else { "tables" };
    if problems == 0 {
        eprintln!(
            "reftable verify: {}: {tables} {what} checked, no problems",
            target.path().display()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "reftable verify: {}: {tables} {what} checked, {problems} problem{}",
            target.path().display(),
            if problems == 1 { "" } else { "s" }
        );
        Ok(ExitCode::from(1))
    }
}
