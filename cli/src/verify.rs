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

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use reftable::block::BlockInfo;

use reftable::format::BlockType;
use reftable::refdb::is_existence_marker;
use reftable::refname::is_valid_refname;
use reftable::table::Section;
use reftable::{HashId, IndexRecord, LogRecord, LogValue, ObjRecord, RefRecord, RefValue, Table};

use crate::dump::type_name;
use crate::path::{self, Target};
use crate::text::{show_bytes, show_log_key};
use crate::walk::{self, Decoded};
use crate::{CliError, CliResult};

/// Problems shown per file; the rest are counted.
const MAX_PROBLEMS_PER_FILE: usize = 100;

/// One problem: the file, where in it, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file (as reached from `PATH`).
    pub file: String,
    /// Byte offset in the file, when it applies.
    pub offset: Option<u64>,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: offset {o}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

/// The problems of one file, capped at [`MAX_PROBLEMS_PER_FILE`].
#[derive(Debug, Default)]
struct Report {
    file: String,
    problems: Vec<Problem>,
    hidden: usize,
}

impl Report {
    fn new(file: String) -> Report {
        Report {
            file,
            problems: Vec::new(),
            hidden: 0,
        }
    }

    fn add(&mut self, offset: Option<u64>, what: impl Into<String>) {
        if self.problems.len() >= MAX_PROBLEMS_PER_FILE {
            self.hidden += 1;
            return;
        }
        self.problems.push(Problem {
            file: self.file.clone(),
            offset,
            what: what.into(),
        });
    }

    fn at(&mut self, offset: u64, what: impl Into<String>) {
        self.add(Some(offset), what);
    }

    /// A problem at position `at` of block `b`.
    fn in_block(&mut self, b: &BlockInfo, at: usize, what: &str) {
        let (off, prefix) = walk::locate(b, at);
        self.at(off, format!("{prefix}{what}"));
    }

    fn error(&mut self, e: &reftable::Error) {
        self.add(e.offset(), e.message().to_string());
    }

    fn count(&self) -> usize {
        self.problems.len() + self.hidden
    }

    /// Print the problems, and a line for those not shown.
    fn print(&self, out: &mut impl Write) -> std::io::Result<()> {
        for p in &self.problems {
            writeln!(out, "{p}")?;
        }
        if self.hidden > 0 {
            writeln!(
                out,
                "{}: {} further problems not shown",
                self.file, self.hidden
            )?;
        }
        Ok(())
    }
}

/// A key, remembered compactly: its hash and length, and its start for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeySig {
    hash: u64,
    len: usize,
    shown: String,
}

impl KeySig {
    fn new(key: &[u8], log_keys: bool) -> KeySig {
        let mut h = DefaultHasher::new();
        key.hash(&mut h);
        KeySig {
            hash: h.finish(),
            len: key.len(),
            shown: if log_keys {
                show_log_key(key)
            } else {
                show_bytes(key, 100)
            },
        }
    }

    fn same(&self, other: &KeySig) -> bool {
        self.hash == other.hash && self.len == other.len
    }
}

/// An index entry: the key it promises and the block it points at.
#[derive(Clone, Debug)]
struct IndexEntry {
    key: KeySig,
    target: u64,
    /// Where the entry is, for messages.
    block: BlockInfo,
    at: usize,
}

/// An obj record and where it is.
#[derive(Clone, Debug)]
struct ObjEntry {
    prefix: Vec<u8>,
    offsets: Vec<u64>,
    block: BlockInfo,
    at: usize,
}

/// What the record checks of a table collect for the checks that need the whole table.
#[derive(Default)]
struct Collected {
    /// Last key of every block that decoded completely, by block offset.
    last_keys: BTreeMap<u64, KeySig>,
    /// Index entries by index block offset.
    index: BTreeMap<u64, Vec<IndexEntry>>,
    /// Obj records.
    objs: Vec<ObjEntry>,
    /// Object id prefix (`obj_id_len` bytes) → ref blocks holding a ref to such an object, and
    /// one such ref's name.
    ref_ids: BTreeMap<Vec<u8>, (BTreeSet<u64>, Vec<u8>)>,
}

/// Keys of the data blocks of one section, carried from block to block.
#[derive(Default)]
struct KeyOrder {
    prev: Vec<u8>,
    have_prev: bool,
}

/// A problem found while decoding, before it is located.
type Issue = (usize, String);

fn hex(b: &[u8]) -> String {
    b.iter().map(|c| format!("{c:02x}")).collect()
}

/// Check key order for one record; `first` is true for the first record of a block.
fn check_order(
    order: &mut KeyOrder,
    key: &[u8],
    first: bool,
    log: bool,
    issues: &mut Vec<Issue>,
    at: usize,
) {
    if order.have_prev && key <= order.prev.as_slice() {
        let show = |k: &[u8]| {
            if log {
                show_log_key(k)
            } else {
                show_bytes(k, 100)
            }
        };
        issues.push((
            at,
            format!(
                "key {} is not greater than {} {}",
                show(key),
                if first {
                    "the last key of the previous block,"
                } else {
                    "the previous key,"
                },
                show(&order.prev)
            ),
        ));
    }
    order.prev.clear();
    order.prev.extend_from_slice(key);
    order.have_prev = true;
}

struct TableChecker<'a> {
    t: &'a Table,
    r: Report,
    c: Collected,
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

    /// Walk the blocks; checks that need only the block itself. Returns the blocks and
    /// whether the walk reached the footer.
    fn walk(&mut self) -> (Vec<BlockInfo>, bool) {
        let i = *self.t.info();
        let bytes = self.t.bytes();
        let mut blocks = Vec::new();
        for b in self.t.blocks() {
            let b = match b {
                Ok(b) => b,
                Err(e) => {
                    self.r.error(&e);
                    return (blocks, false);
                }
            };
            let tn = b.block_type.byte() as char;
            if b.restart_count == 0 {
                self.r.at(
                    b.offset + b.header_off as u64,
                    format!("'{tn}' block has no restart points (git 2.47 aborts reading it)"),
                );
            }
            if b.block_type == BlockType::Log {
                let reads = (if i.block_size == 0 {
                    4096
                } else {
                    i.block_size as usize
                })
                .max(b.block_len);
                let extent = b.header_off + 4 + b.compressed_len;
                if extent > reads {
                    self.r.at(
                        b.offset,
                        format!(
                            "log block's compressed data ends {extent} bytes from the block start, \
                             past the {reads} bytes git reads (max of block size and block_len): \
                             git cannot read this block"
                        ),
                    );
                }
            } else {
                if b.full_size < b.block_len {
                    self.r.at(
                        b.offset + b.header_off as u64 + 1,
                        format!(
                            "block_len {} is larger than the block size {}: the next block \
                             would start inside this one",
                            b.block_len, i.block_size
                        ),
                    );
                }
                let start = b.offset as usize + b.block_len;
                let end = (b.offset as usize + b.full_size).min(i.footer_offset as usize);
                if start < end {
                    if let Some(k) = bytes[start..end].iter().position(|&c| c != 0) {
                        self.r.at(
                            (start + k) as u64,
                            format!(
                                "non-NUL byte 0x{:02x} in the padding after a '{tn}' block",
                                bytes[start + k]
                            ),
                        );
                    }
                }
            }
            blocks.push(b);
        }
        (blocks, true)
    }

    /// Decode every record of every block; check keys, restarts and record contents.
    fn records(&mut self, blocks: &[BlockInfo], sections: &[SectionRange]) {
        let mut orders: BTreeMap<BlockType, KeyOrder> = BTreeMap::new();
        for b in blocks {
            let data = match walk::block_bytes(self.t, b) {
                Ok(d) => d,
                Err(e) => {
                    self.r.error(&e);
                    continue;
                }
            };
            // Data blocks continue their section's key order; index blocks are ordered within
            // the block only.
            let section = sections
                .iter()
                .find(|s| s.contains(b.offset))
                .map(|s| s.block_type);
            let mut local = KeyOrder::default();
            let order = if b.block_type == BlockType::Index {
                &mut local
            } else {
                orders.entry(section.unwrap_or(b.block_type)).or_default()
            };
            let mut starts: Vec<(usize, bool)> = Vec::new();
            let mut issues: Vec<Issue> = Vec::new();
            let err = match b.block_type {
                BlockType::Ref => self.ref_records(b, &data, order, &mut starts, &mut issues),
                BlockType::Log => self.log_records(b, &data, order, &mut starts, &mut issues),
                BlockType::Obj => self.obj_records(b, &data, order, &mut starts, &mut issues),
                _ => self.index_records(b, &data, order, &mut starts, &mut issues, section),
            };
            // The block's last key, for the index checks: only when every record decoded.
            if err.is_none() && !starts.is_empty() {
                let log = section == Some(BlockType::Log);
                self.c
                    .last_keys
                    .insert(b.offset, KeySig::new(&order.prev, log));
            }
            for (at, what) in issues {
                self.r.in_block(b, at, &what);
            }
            if let Some((at, msg)) = err {
                self.r
                    .in_block(b, at, &format!("cannot decode record: {msg}"));
            }
            self.restarts(b, &data, &starts, err.map(|(at, _)| at));
        }
    }

    /// Check the restart table against the record starts found (`starts`: offset and whether
    /// the record's prefix length is 0). `failed_at`: where decoding stopped, if it did.
    fn restarts(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        starts: &[(usize, bool)],
        failed_at: Option<usize>,
    ) {
        let decoded_to = failed_at.unwrap_or(b.restart_off);
        let mut prev = None;
        for (i, r) in walk::restarts(b, data).into_iter().enumerate() {
            let entry = b.restart_off + 3 * i;
            if r < b.records_start() || r >= b.restart_off {
                self.r.in_block(
                    b,
                    entry,
                    &format!(
                        "restart offset {r} is outside the records ({}..{})",
                        b.records_start(),
                        b.restart_off
                    ),
                );
                continue;
            }
            if prev.is_some_and(|p| r <= p) {
                self.r.in_block(
                    b,
                    entry,
                    &format!("restart offset {r} is not greater than the one before"),
                );
            }
            prev = Some(r);
            if r >= decoded_to {
                continue;
            }
            match starts.binary_search_by_key(&r, |s| s.0) {
                Ok(k) if !starts[k].1 => self.r.in_block(
                    b,
                    entry,
                    &format!("restart offset {r} points at a prefix-compressed record"),
                ),
                Ok(_) => {}
                Err(_) => self.r.in_block(
                    b,
                    entry,
                    &format!("restart offset {r} is not at the start of a record"),
                ),
            }
        }
    }

    fn ref_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        order: &mut KeyOrder,
        starts: &mut Vec<(usize, bool)>,
        issues: &mut Vec<Issue>,
    ) -> Option<(usize, &'static str)> {
        let i = *self.t.info();
        let obj_len = usize::from(i.obj_id_len);
        let want_ids = i.objs.present && obj_len > 0 && obj_len <= i.hash.size();
        let ref_ids = &mut self.c.ref_ids;
        walk::for_each_record::<RefRecord>(
            b,
            data,
            &self.t.codec_context(),
            |d: Decoded<'_, RefRecord>| {
                check_order(order, d.key, starts.is_empty(), false, issues, d.offset);
                starts.push((d.offset, d.prefix_len == 0));
                let r = d.rec;
                let name = show_bytes(&r.refname, 200);
                if r.update_index < i.min_update_index || r.update_index > i.max_update_index {
                    issues.push((
                        d.offset,
                        format!(
                            "ref {name} has update index {} outside the table's {}..{}",
                            r.update_index, i.min_update_index, i.max_update_index
                        ),
                    ));
                }
                if r.refname.contains(&0) {
                    issues.push((d.offset, format!("ref name {name} contains a NUL byte")));
                } else if !is_valid_refname(&r.refname, true) {
                    issues.push((
                        d.offset,
                        format!("ref name {name} is not a valid git ref name"),
                    ));
                }
                if let RefValue::Symref(t) = &r.value {
                    if t.is_empty() {
                        issues.push((d.offset, format!("symref {name} has an empty target")));
                    } else if t.contains(&0) {
                        issues.push((
                            d.offset,
                            format!("symref {name} target contains a NUL byte"),
                        ));
                    }
                }
                if want_ids {
                    for id in r.value_id().into_iter().chain(r.peeled_id()) {
                        let e = ref_ids
                            .entry(id.as_bytes()[..obj_len].to_vec())
                            .or_insert_with(|| (BTreeSet::new(), r.refname.clone()));
                        e.0.insert(b.offset);
                    }
                }
            },
        )
    }

    fn log_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        order: &mut KeyOrder,
        starts: &mut Vec<(usize, bool)>,
        issues: &mut Vec<Issue>,
    ) -> Option<(usize, &'static str)> {
        let max = self.t.info().max_update_index;
        walk::for_each_record::<LogRecord>(
            b,
            data,
            &self.t.codec_context(),
            |d: Decoded<'_, LogRecord>| {
                check_order(order, d.key, starts.is_empty(), true, issues, d.offset);
                starts.push((d.offset, d.prefix_len == 0));
                let l = d.rec;
                let name = show_log_key(d.key);
                if d.value_type > 1 {
                    issues.push((
                        d.offset,
                        format!(
                            "log {name} has value type {} (git writes 0 or 1)",
                            d.value_type
                        ),
                    ));
                }
                if l.update_index > max {
                    issues.push((
                        d.offset,
                        format!("log {name} has an update index above the table's maximum {max}"),
                    ));
                }
                if l.refname.contains(&0) {
                    issues.push((
                        d.offset,
                        format!("log {name}: ref name contains a NUL byte"),
                    ));
                } else if !is_valid_refname(&l.refname, true) {
                    issues.push((
                        d.offset,
                        format!("log {name}: ref name is not a valid git ref name"),
                    ));
                }
                if let LogValue::Update(u) = &l.value {
                    let m = &u.message;
                    let marker = is_existence_marker(l);
                    let body = m.strip_suffix(b"\n");
                    let bad = match body {
                        None => !(m.is_empty() && marker),
                        Some(body) => body.contains(&b'\n'),
                    };
                    if bad {
                        let what = if m.is_empty() {
                            "is empty (git stores at least a newline)".to_string()
                        } else if body.is_none() {
                            "does not end with a newline".to_string()
                        } else if body.is_some_and(|b| b.ends_with(b"\n")) {
                            "ends with more than one newline".to_string()
                        } else {
                            "has more than one line".to_string()
                        };
                        issues.push((d.offset, format!("log {name}: message {what}")));
                    }
                }
            },
        )
    }

    fn obj_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        order: &mut KeyOrder,
        starts: &mut Vec<(usize, bool)>,
        issues: &mut Vec<Issue>,
    ) -> Option<(usize, &'static str)> {
        let obj_len = usize::from(self.t.info().obj_id_len);
        let objs = &mut self.c.objs;
        walk::for_each_record::<ObjRecord>(
            b,
            data,
            &self.t.codec_context(),
            |d: Decoded<'_, ObjRecord>| {
                check_order(order, d.key, starts.is_empty(), false, issues, d.offset);
                starts.push((d.offset, d.prefix_len == 0));
                let o = d.rec;
                if o.hash_prefix.len() != obj_len {
                    issues.push((
                        d.offset,
                        format!(
                            "obj record key {} is {} bytes long, \
                         the footer's obj id length is {obj_len}",
                            hex(&o.hash_prefix[..o.hash_prefix.len().min(64)]),
                            o.hash_prefix.len()
                        ),
                    ));
                    return;
                }
                objs.push(ObjEntry {
                    prefix: o.hash_prefix.clone(),
                    offsets: o.offsets.clone(),
                    block: *b,
                    at: d.offset,
                });
            },
        )
    }

    fn index_records(
        &mut self,
        b: &BlockInfo,
        data: &[u8],
        order: &mut KeyOrder,
        starts: &mut Vec<(usize, bool)>,
        issues: &mut Vec<Issue>,
        section: Option<BlockType>,
    ) -> Option<(usize, &'static str)> {
        let log = section == Some(BlockType::Log);
        let mut entries = Vec::new();
        let err = walk::for_each_record::<IndexRecord>(
            b,
            data,
            &self.t.codec_context(),
            |d: Decoded<'_, IndexRecord>| {
                check_order(order, d.key, starts.is_empty(), log, issues, d.offset);
                starts.push((d.offset, d.prefix_len == 0));
                entries.push(IndexEntry {
                    key: KeySig::new(d.key, log),
                    target: d.rec.offset,
                    block: *b,
                    at: d.offset,
                });
            },
        );
        self.c.index.insert(b.offset, entries);
        err
    }
}

/// Where one section's blocks are: `[start, end)`.
#[derive(Clone, Copy, Debug)]
struct SectionRange {
    block_type: BlockType,
    start: u64,
    end: u64,
    index_offset: u64,
}

impl SectionRange {
    fn contains(&self, off: u64) -> bool {
        self.start <= off && off < self.end
    }
}

impl TableChecker<'_> {
    /// Work out the sections' ranges and check that every block is in the right one.
    ///
    /// `complete`: whether the block walk reached the footer; if not, offsets past the last
    /// block read cannot be checked.
    fn sections(&mut self, blocks: &[BlockInfo], complete: bool) -> Vec<SectionRange> {
        let i = *self.t.info();
        let walked_to = blocks.last().map_or(0, |b| b.offset + b.full_size as u64);
        let unknown = |off: u64| !complete && off >= walked_to;
        // The walk yields blocks in increasing offset order.
        let at_block = |off: u64| {
            blocks
                .binary_search_by_key(&off, |b| b.offset)
                .ok()
                .map(|k| &blocks[k])
        };
        let footer_field = |k: u64| i.footer_offset + i.header_size() as u64 + k;
        let mut starts: Vec<(BlockType, u64, Section)> = Vec::new();
        if i.refs.present {
            starts.push((BlockType::Ref, 0, i.refs));
        }
        // Whether a block of type `want` starts at `off`, the section offset in footer field
        // `field`; a problem is reported otherwise (unless the walk stopped short of it).
        let section_start = |r: &mut Report, name: &str, want: BlockType, off: u64, field: u64| {
            let problem = match at_block(off) {
                Some(b) if b.block_type == want => return true,
                Some(b) => format!(
                    "{name} section offset {off} points at a '{}' block",
                    b.block_type.byte() as char
                ),
                None if unknown(off) => return false,
                None => format!("{name} section offset {off} is not the start of a block"),
            };
            r.at(footer_field(field), problem);
            false
        };
        if i.objs.present && section_start(&mut self.r, "obj", BlockType::Obj, i.objs.offset, 8) {
            starts.push((BlockType::Obj, i.objs.offset, i.objs));
        }
        if i.logs.present {
            let first_is_log = blocks
                .first()
                .is_some_and(|b| b.block_type == BlockType::Log);
            // A log-only table stores log offset 0: its logs start in the first block.
            if (i.logs.offset == 0 && first_is_log)
                || section_start(&mut self.r, "log", BlockType::Log, i.logs.offset, 24)
            {
                starts.push((BlockType::Log, i.logs.offset, i.logs));
            }
        }
        // git's order: refs, objs, logs.
        for w in starts.windows(2) {
            if w[1].1 <= w[0].1 {
                self.r.at(
                    footer_field(if w[1].0 == BlockType::Log { 24 } else { 8 }),
                    format!(
                        "the {} section (offset {}) does not come after the {} section (offset {})",
                        type_name(w[1].0),
                        w[1].1,
                        type_name(w[0].0),
                        w[0].1
                    ),
                );
            }
        }
        starts.sort_by_key(|s| s.1);
        starts.dedup_by_key(|s| s.1);
        let mut ranges = Vec::new();
        for (k, (t, start, sec)) in starts.iter().enumerate() {
            let end = starts.get(k + 1).map_or(i.footer_offset, |s| s.1);
            ranges.push(SectionRange {
                block_type: *t,
                start: *start,
                end,
                index_offset: sec.index_offset,
            });
        }
        let mut seen_index: BTreeSet<BlockType> = BTreeSet::new();
        for b in blocks {
            let Some(s) = ranges.iter().find(|s| s.contains(b.offset)) else {
                self.r.at(
                    b.offset,
                    format!(
                        "'{}' block outside every section the footer describes",
                        b.block_type.byte() as char
                    ),
                );
                continue;
            };
            if b.block_type == BlockType::Index {
                seen_index.insert(s.block_type);
            } else if b.block_type != s.block_type {
                self.r.at(
                    b.offset + b.header_off as u64,
                    format!(
                        "'{}' block inside the {} section",
                        b.block_type.byte() as char,
                        type_name(s.block_type)
                    ),
                );
            } else if seen_index.contains(&s.block_type) {
                self.r.at(
                    b.offset + b.header_off as u64,
                    format!(
                        "{} block after the section's index blocks",
                        type_name(s.block_type)
                    ),
                );
            }
        }
        ranges
    }

    /// Check every level of a section's index.
    fn index(&mut self, s: &SectionRange, blocks: &[BlockInfo]) {
        let i = *self.t.info();
        let name = type_name(s.block_type);
        let in_section: Vec<&BlockInfo> = blocks.iter().filter(|b| s.contains(b.offset)).collect();
        let data_blocks: Vec<u64> = in_section
            .iter()
            .filter(|b| b.block_type == s.block_type)
            .map(|b| b.offset)
            .collect();
        let index_blocks: Vec<u64> = in_section
            .iter()
            .filter(|b| b.block_type == BlockType::Index)
            .map(|b| b.offset)
            .collect();
        let field = match s.block_type {
            BlockType::Ref => 0,
            BlockType::Obj => 16,
            _ => 32,
        };
        let field_off = i.footer_offset + i.header_size() as u64 + field;
        if s.index_offset == 0 {
            if let Some(&first) = index_blocks.first() {
                self.r.at(
                    first,
                    format!(
                        "index block in the {name} section, \
                         but the footer has no {name} index position"
                    ),
                );
            }
            return;
        }
        if !index_blocks.contains(&s.index_offset) {
            self.r.at(
                field_off,
                format!(
                    "{name} index position {} is not the start of \
                     an index block of the {name} section",
                    s.index_offset
                ),
            );
            return;
        }
        // The root level: the index blocks from the root position to the end of the section.
        let mut level: Vec<u64> = index_blocks
            .iter()
            .copied()
            .filter(|&o| o >= s.index_offset)
            .collect();
        let mut visited: BTreeSet<u64> = level.iter().copied().collect();
        let kinds: BTreeMap<u64, BlockType> = in_section
            .iter()
            .map(|b| (b.offset, b.block_type))
            .collect();
        let kind_of = |off: u64| kinds.get(&off).copied();
        loop {
            let entries: Vec<IndexEntry> = level
                .iter()
                .flat_map(|o| self.c.index.get(o).cloned().unwrap_or_default())
                .collect();
            if entries.is_empty() {
                self.r
                    .at(level[0], format!("{name} index level without entries"));
                return;
            }
            let lowest = level[0];
            let mut targets = Vec::new();
            let mut ok = true;
            let mut prev: Option<u64> = None;
            for e in &entries {
                let here = |r: &mut Report, what: String| r.in_block(&e.block, e.at, &what);
                if prev.is_some_and(|p| e.target <= p) {
                    here(
                        &mut self.r,
                        format!(
                            "index entry points at offset {}, not after the previous entry's block",
                            e.target
                        ),
                    );
                    ok = false;
                    continue;
                }
                prev = Some(e.target);
                if e.target >= lowest {
                    here(
                        &mut self.r,
                        format!(
                            "index entry points at offset {}, which is not before its index level",
                            e.target
                        ),
                    );
                    ok = false;
                    continue;
                }
                if kind_of(e.target).is_none() {
                    here(
                        &mut self.r,
                        format!(
                            "index entry points at offset {}, \
                             which is not a block of the {name} section",
                            e.target
                        ),
                    );
                    ok = false;
                    continue;
                }
                match self.c.last_keys.get(&e.target) {
                    Some(k) if !k.same(&e.key) => here(
                        &mut self.r,
                        format!(
                            "index key {} differs from the last key {} of the block at {}",
                            e.key.shown, k.shown, e.target
                        ),
                    ),
                    _ => {}
                }
                targets.push(e.target);
            }
            if !ok || targets.is_empty() {
                return;
            }
            let n_index = targets
                .iter()
                .filter(|&&t| kind_of(t) == Some(BlockType::Index))
                .count();
            if n_index == 0 {
                // The lowest level: it must point at every data block of the section, in order.
                if targets != data_blocks {
                    let listed: BTreeSet<u64> = targets.iter().copied().collect();
                    for d in &data_blocks {
                        if !listed.contains(d) {
                            self.r
                                .at(*d, format!("{name} block is not in the {name} index"));
                        }
                    }
                }
                break;
            }
            if n_index != targets.len() {
                self.r.at(
                    level[0],
                    format!("{name} index level points at both index and {name} blocks"),
                );
                return;
            }
            visited.extend(targets.iter().copied());
            level = targets;
        }
        for o in index_blocks {
            if !visited.contains(&o) {
                self.r.at(
                    o,
                    format!("{name} index block not reachable from the index root"),
                );
            }
        }
    }

    /// Check the obj section against the refs, both ways.
    fn objs(&mut self, ref_blocks: &BTreeSet<u64>) {
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

/// Everything `verify` learns about one table, for the stack checks.
struct Checked {
    report: Report,
    table: Option<Table>,
}

/// Check one table file. `Err` only for I/O errors other than a missing file.
fn check_file(file: &Path, shown: &str) -> Result<Checked, CliError> {
    let mut report = Report::new(shown.to_string());
    let bytes = match path::read_regular(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            report.add(None, "not a regular file");
            return Ok(Checked {
                report,
                table: None,
            });
        }
        Err(e) => return Err(CliError::usage(format!("{shown}: {e}"))),
    };
    let t = match Table::from_bytes(shown, bytes) {
        Ok(t) => t,
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
    };
    c.header();
    let (blocks, complete) = c.walk();
    let sections = c.sections(&blocks, complete);
    c.records(&blocks, &sections);
    if complete {
        for s in &sections {
            c.index(s, &blocks);
        }
        if t.info().objs.present {
            let ref_blocks: BTreeSet<u64> = blocks
                .iter()
                .filter(|b| b.block_type == BlockType::Ref)
                .map(|b| b.offset)
                .collect();
            c.objs(&ref_blocks);
        }
    }
    let report = c.r;
    Ok(Checked {
        report,
        table: Some(t),
    })
}

/// git's table file name: `0x<min>-0x<max>-<8 hex digits>.ref` (at least 12 digits each).
/// Returns the update indexes it names.
fn parse_table_name(name: &str) -> Option<(u64, u64)> {
    let stem = name.strip_suffix(".ref")?;
    let mut parts = stem.split('-');
    let (a, b, r) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let num = |s: &str| -> Option<u64> {
        let h = s.strip_prefix("0x")?;
        if h.len() < 12
            || !h
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        {
            return None;
        }
        u64::from_str_radix(h, 16).ok()
    };
    let hex8 = r.len() == 8
        && r.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
    if !hex8 {
        return None;
    }
    Some((num(a)?, num(b)?))
}

fn check_stack(
    dir: &Path,
    gitdir: Option<&Path>,
    out: &mut impl Write,
) -> Result<(usize, usize), CliError> {
    let list = dir.join("tables.list");
    let shown = |n: &str| dir.join(n).display().to_string();
    let mut lr = Report::new(list.display().to_string());
    let content = match path::read_regular(&list) {
        Ok(c) => Some(c),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(CliError::usage(format!("{}: {e}", list.display()))),
    };
    let mut names: Vec<String> = Vec::new();
    // Where each name is in tables.list: byte offset and line number.
    let mut lines: Vec<(u64, usize)> = Vec::new();
    let mut listed: HashSet<String> = HashSet::new();
    if let Some(content) = &content {
        if !content.is_empty() && !content.ends_with(b"\n") {
            lr.at(
                content.len() as u64,
                "the last line does not end with a newline (git 2.52 and later reject the file)",
            );
        }
        let mut pos = 0u64;
        for (n, line) in content.split(|&c| c == b'\n').enumerate() {
            let line_off = pos;
            pos += line.len() as u64 + 1;
            if line.is_empty() {
                continue;
            }
            let lineno = n + 1;
            let Ok(name) = std::str::from_utf8(line) else {
                lr.at(
                    line_off,
                    format!(
                        "line {lineno}: table name {} is not UTF-8",
                        show_bytes(line, 200)
                    ),
                );
                continue;
            };
            if name.contains(['/', '\\', '\0']) || name == "." || name == ".." {
                lr.at(
                    line_off,
                    format!(
                        "line {lineno}: {} is not a file name in the stack directory \
                         (it escapes the directory); not opened",
                        show_bytes(line, 200)
                    ),
                );
                continue;
            }
            if !listed.insert(name.to_string()) {
                lr.at(
                    line_off,
                    format!("line {lineno}: table {name} is listed twice"),
                );
                continue;
            }
            if parse_table_name(name).is_none() {
                lr.at(
                    line_off,
                    format!(
                        "line {lineno}: table name {name} is not git's \
                         0x<min>-0x<max>-<random>.ref"
                    ),
                );
            }
            names.push(name.to_string());
            lines.push((line_off, lineno));
        }
    }
    let mut problems = 0;
    let mut checked = 0;
    let mut hashes: Vec<(String, HashId)> = Vec::new();
    let mut prev: Option<(String, u64)> = None;
    let mut table_reports = Vec::new();
    for (name, &(line_off, lineno)) in names.iter().zip(&lines) {
        let p = dir.join(name);
        let s = shown(name);
        if !p.exists() {
            lr.at(
                line_off,
                format!("line {lineno}: table {name} is listed but missing"),
            );
            continue;
        }
        let checked_table = check_file(&p, &s)?;
        checked += 1;
        let mut report = checked_table.report;
        if let Some(t) = &checked_table.table {
            let (min, max) = (t.min_update_index(), t.max_update_index());
            if let Some((a, b)) = parse_table_name(name) {
                if (a, b) != (min, max) {
                    report.add(
                        None,
                        format!(
                            "file name says update indexes {a}..{b}, the header says {min}..{max}"
                        ),
                    );
                }
            }
            if let Some((pn, pmax)) = &prev {
                if min <= *pmax {
                    report.at(
                        8,
                        format!(
                            "min_update_index {min} is not greater than the max_update_index \
                             {pmax} of the table before it ({pn})"
                        ),
                    );
                }
            }
            prev = Some((name.clone(), max));
            hashes.push((s.clone(), t.hash()));
        }
        table_reports.push(report);
    }
    // One hash for the stack: the first table's, which must match the repository's config.
    if let Some((first_name, first)) = hashes.first().cloned() {
        for (s, h) in &hashes[1..] {
            if h != &first {
                lr.add(
                    None,
                    format!(
                        "{s} uses {} but {first_name} uses {}",
                        h.name(),
                        first.name()
                    ),
                );
            }
        }
        if let Some(cfg) = gitdir.and_then(path::config_hash) {
            if cfg != first {
                lr.add(
                    None,
                    format!(
                        "the tables use {} but the repository's config says {}",
                        first.name(),
                        cfg.name()
                    ),
                );
            }
        }
    }
    // Files in the directory that should not be there.
    let mut dr = Report::new(dir.display().to_string());
    let entries =
        std::fs::read_dir(dir).map_err(|e| CliError::usage(format!("{}: {e}", dir.display())))?;
    let mut stray: Vec<(String, &str)> = Vec::new();
    for e in entries {
        let e = e.map_err(|e| CliError::usage(format!("{}: {e}", dir.display())))?;
        let n = e.file_name().to_string_lossy().into_owned();
        if n.ends_with(".lock") {
            stray.push((
                n,
                "leftover lock file (a writer crashed, or is running now)",
            ));
        } else if n.contains(".temp.") {
            stray.push((
                n,
                "leftover temporary table (a writer crashed, or is running now)",
            ));
        } else if n.ends_with(".ref") && !listed.contains(&n) {
            stray.push((n, "stray table not listed in tables.list"));
        }
    }
    stray.sort();
    for (n, what) in stray {
        dr.problems.push(Problem {
            file: shown(&n),
            offset: None,
            what: what.to_string(),
        });
    }
    for r in std::iter::once(&lr)
        .chain(&table_reports)
        .chain(std::iter::once(&dr))
    {
        r.print(out)?;
        problems += r.count();
    }
    Ok((problems, checked))
}

/// Run `verify`.
pub fn run(p: &Path) -> CliResult {
    let target = path::resolve(p)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (problems, tables) = match &target {
        Target::Table(file) => {
            let c = check_file(file, &file.display().to_string())?;
            c.report.print(&mut out)?;
            (c.report.count(), 1)
        }
        Target::Stack { dir, gitdir } => check_stack(dir, gitdir.as_deref(), &mut out)?,
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

#[cfg(test)]
mod tests {
    use super::parse_table_name;

    #[test]
    fn table_names() {
        assert_eq!(
            parse_table_name("0x000000000001-0x00000000000a-56d9eff2.ref"),
            Some((1, 10))
        );
        assert_eq!(
            parse_table_name("0x1000000000000-0x1000000000001-00000000.ref"),
            Some((1 << 48, (1 << 48) + 1))
        );
        for bad in [
            "0x1-0x2-56d9eff2.ref",
            "0x000000000001-0x000000000001-56d9eff.ref",
            "0x000000000001-0x000000000001-56D9EFF2.ref",
            "0x000000000001-0x000000000001-56d9eff2.log",
            "0x000000000001-0x000000000001-56d9eff2-x.ref",
            "foo-bar-56d9eff2.ref",
        ] {
            assert_eq!(parse_table_name(bad), None, "{bad}");
        }
    }
}
