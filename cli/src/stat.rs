//! `reftable stat PATH`: per table and for the stack: size, refs, logs, tombstones, blocks
//! per section, index levels, obj id length; and whether compaction would help.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use reftable::codec::block::BlockInfo;

use reftable::codec::format::BlockType;
use reftable::codec::record::{IndexRecord, Record};

use reftable::stack::suggest_compaction_segment;
use reftable::walk::{for_each_record, for_each_record_in, locate};
use reftable::{RefRecord, Table};

use crate::error::CliResult;
use crate::path::{self, Target};
use crate::scratch::Scratch;

/// Blocks of one section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SectionLayout {
    /// Ref, obj or log blocks.
    pub blocks: u64,
    /// Index blocks over them, all levels.
    pub index_blocks: u64,
    /// Index levels (0 without an index).
    pub index_levels: u32,
}

/// Blocks per section of a table, from a walk over its blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The ref section.
    pub refs: SectionLayout,
    /// The obj section.
    pub objs: SectionLayout,
    /// The log section.
    pub logs: SectionLayout,
}

impl Layout {
    fn section_mut(&mut self, t: BlockType) -> &mut SectionLayout {
        match t {
            BlockType::Obj => &mut self.objs,
            BlockType::Log => &mut self.logs,
            _ => &mut self.refs,
        }
    }
}

/// Count the blocks of each section (index blocks belong to the data blocks before them) and
/// the index levels, by descending from each section's root along first entries; and the
/// records of the ref and log blocks, from the same walk (each log block inflated once).
/// `scratch`'s buffers are reused from table to table.
fn layout_and_counts(t: &Table, scratch: &mut Scratch) -> reftable::Result<(Layout, Counts)> {
    let mut out = Layout::default();
    let mut counts = Counts::default();
    let mut blocks: BTreeMap<u64, BlockInfo> = BTreeMap::new();
    let mut data_type = BlockType::Ref;
    let ctx = t.codec_context();
    let mut walk = scratch.take_walk(t);
    let log = &mut scratch.log;
    while let Some(b) = walk.next_block() {
        let (b, data) = b?;
        let problem = match b.block_type {
            BlockType::Ref => for_each_record::<RefRecord>(&b, data, &ctx, |r| {
                counts.add_ref(r.rec.is_deletion())
            }),
            BlockType::Log => for_each_record_in(&b, data, &ctx, log, |r| counts.add_log(r.rec)),
            _ => None,
        };
        if let Some((at, why)) = problem {
            let (offset, place) = locate(&b, at);
            return Err(reftable::Error::format(format!("{place}{why}"))
                .at_offset(offset)
                .in_file(t.name()));
        }
        if b.block_type == BlockType::Index {
            out.section_mut(data_type).index_blocks += 1;
        } else {
            data_type = b.block_type;
            out.section_mut(data_type).blocks += 1;
        }
        blocks.insert(b.offset, b);
    }
    scratch.keep_walk(walk);
    let info = t.info();
    for (ty, sec) in [
        (BlockType::Ref, info.refs),
        (BlockType::Obj, info.objs),
        (BlockType::Log, info.logs),
    ] {
        if !sec.present || sec.index_offset == 0 {
            continue;
        }
        let mut levels = 0;
        let mut at = sec.index_offset;
        while let Some(b) = blocks.get(&at).filter(|b| b.block_type == BlockType::Index) {
            levels += 1;
            let first = t.block_records::<IndexRecord>(b)?.into_iter().next();
            match first {
                // Lower levels come before the level pointing at them.
                Some(r) if r.offset < at => at = r.offset,
                _ => break,
            }
        }
        out.section_mut(ty).index_levels = levels;
    }
    Ok((out, counts))
}

/// Record counts of a table or a merged view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    refs: u64,
    ref_tombstones: u64,
    logs: u64,
    log_tombstones: u64,
    markers: u64,
}

impl Counts {
    fn ref_records(&self) -> u64 {
        self.refs + self.ref_tombstones
    }

    fn log_records(&self) -> u64 {
        self.logs + self.log_tombstones + self.markers
    }

    fn add_ref(&mut self, deleted: bool) {
        if deleted {
            self.ref_tombstones += 1;
        } else {
            self.refs += 1;
        }
    }

    fn add_log(&mut self, l: &reftable::LogRecord) {
        if l.is_deletion() {
            self.log_tombstones += 1;
        } else if l.is_existence_marker() {
            self.markers += 1;
        } else {
            self.logs += 1;
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn section_line(
    out: &mut impl Write,
    name: &str,
    present: bool,
    s: &SectionLayout,
) -> std::io::Result<()> {
    if !present {
        return writeln!(out, "  {name} section: none");
    }
    write!(
        out,
        "  {name} section: {}",
        plural(s.blocks, "block", "blocks")
    )?;
    if s.index_levels == 0 && s.index_blocks == 0 {
        writeln!(out, ", no index")
    } else {
        writeln!(
            out,
            ", index of {} in {}",
            plural(s.index_blocks, "block", "blocks"),
            plural(u64::from(s.index_levels), "level", "levels")
        )
    }
}

/// Run `stat`.
pub fn run(p: &Path) -> CliResult {
    let opened = path::open(p)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut total = Counts::default();
    let mut bytes = 0u64;
    let mut scratch = Scratch::default();
    for (name, t) in opened.names.iter().zip(opened.tables()) {
        let i = t.info();
        let (l, c) = layout_and_counts(t, &mut scratch)?;
        total.refs += c.refs;
        total.ref_tombstones += c.ref_tombstones;
        total.logs += c.logs;
        total.log_tombstones += c.log_tombstones;
        total.markers += c.markers;
        bytes += i.size;
        writeln!(out, "table {name}")?;
        writeln!(
            out,
            "  size {} bytes, update indexes {}..{}, hash {}, block size {}",
            i.size,
            i.min_update_index,
            i.max_update_index,
            i.hash.name(),
            i.block_size
        )?;
        writeln!(
            out,
            "  refs {} (tombstones {}), logs {} (tombstones {}, existence markers {})",
            c.refs, c.ref_tombstones, c.logs, c.log_tombstones, c.markers
        )?;
        section_line(&mut out, "ref", i.refs.present, &l.refs)?;
        section_line(&mut out, "obj", i.objs.present, &l.objs)?;
        section_line(&mut out, "log", i.logs.present, &l.logs)?;
        if i.objs.present {
            writeln!(out, "  obj id length {}", i.obj_id_len)?;
        }
    }
    let Target::Stack { dir, .. } = &opened.target else {
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    let m = &opened.merged;
    let mut merged = Counts::default();
    let mut refs = m.refs()?;
    while let Some(r) = refs.next_record()? {
        merged.add_ref(r.is_deletion());
    }
    let mut logs = m.logs()?;
    while let Some(l) = logs.next_record()? {
        merged.add_log(l);
    }
    let n = m.tables().len();
    writeln!(out, "stack {}", dir.display())?;
    write!(
        out,
        "  {}, {bytes} bytes, hash {}",
        plural(n as u64, "table", "tables"),
        m.hash().name()
    )?;
    if n > 0 {
        write!(
            out,
            ", update indexes {}..{}",
            m.min_update_index(),
            m.max_update_index()
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "  merged: refs {} (tombstones {}), logs {} (tombstones {}, existence markers {})",
        merged.refs, merged.ref_tombstones, merged.logs, merged.log_tombstones, merged.markers
    )?;
    let shadowed_refs = total.ref_records().saturating_sub(merged.ref_records());
    let shadowed_logs = total.log_records().saturating_sub(merged.log_records());
    writeln!(
        out,
        "  shadowed by newer tables: {} ref records, {} log records",
        shadowed_refs, shadowed_logs
    )?;
    // git's auto-compaction sizes: file size minus the stack's footer and header (but one).
    let h = m.hash();
    let sizes: Vec<u64> = m
        .tables()
        .iter()
        .map(|t| {
            t.info()
                .size
                .saturating_sub(h.footer_size() as u64)
                .saturating_sub(h.header_size() as u64 - 1)
        })
        .collect();
    let auto = suggest_compaction_segment(&sizes, 2);
    match auto {
        Some((start, end)) => writeln!(
            out,
            "  auto-compaction (factor 2) would merge tables {}..{} of {n}",
            start + 1,
            end
        )?,
        None => writeln!(out, "  auto-compaction (factor 2): nothing to merge")?,
    }
    let dropped = shadowed_refs + shadowed_logs + merged.ref_tombstones + merged.log_tombstones;
    if n > 1 {
        writeln!(
            out,
            "  full compaction (git pack-refs): {n} tables -> 1, \
             drops {} shadowed and tombstone records",
            dropped
        )?;
    }
    let help = auto.is_some() || (n > 1 && dropped > 0);
    writeln!(
        out,
        "  compaction would help: {}",
        if help { "yes" } else { "no" }
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
