//! `reftable dump [--blocks] PATH`: the tables, their header and footer fields and sections;
//! with `--blocks` every block (offset, type, length, restart count) and every record, like
//! git's test-only `test-tool dump-reftable -b`.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use reftable::codec::block::BlockInfo;

use reftable::codec::format::BlockType;
use reftable::codec::record::{IndexRecord, ObjRecord, Record};
use reftable::fsck::{show_bytes, show_log_key};

use reftable::table::Section;
use reftable::{LogRecord, RefRecord, Table};

use crate::error::{CliError, CliResult};
use crate::path::{self, Target};
use crate::scratch::Scratch;
use crate::text::{write_log, write_ref};
use reftable::walk::{self, DecodedRecord as Decoded};

/// The name of a block type.
pub fn type_name(t: BlockType) -> &'static str {
    t.name()
}

fn section_line(out: &mut impl Write, name: &str, s: &Section) -> std::io::Result<()> {
    if !s.present {
        return writeln!(out, "  {name} section: none");
    }
    write!(out, "  {name} section: offset {}", s.offset)?;
    if s.index_offset == 0 {
        writeln!(out, ", no index")
    } else {
        writeln!(out, ", index at {}", s.index_offset)
    }
}

/// Print a table's header and footer fields and its sections.
fn dump_header(out: &mut impl Write, name: &str, t: &Table) -> std::io::Result<()> {
    let i = t.info();
    writeln!(out, "table {name}")?;
    writeln!(
        out,
        "  version {}, hash {}, block size {}, update indexes {}..{}",
        i.version,
        i.hash.name(),
        i.block_size,
        i.min_update_index,
        i.max_update_index
    )?;
    writeln!(
        out,
        "  size {} bytes, footer at {}, footer CRC-32 0x{:08x}",
        i.size, i.footer_offset, i.footer_crc
    )?;
    section_line(out, "ref", &i.refs)?;
    section_line(out, "obj", &i.objs)?;
    if i.objs.present {
        writeln!(out, "  obj id length {}", i.obj_id_len)?;
    }
    section_line(out, "log", &i.logs)
}

fn print_records<R: Record>(
    out: &mut impl Write,
    t: &Table,
    b: &BlockInfo,
    data: &[u8],
    (rec, buf): (&mut R, &mut Vec<u8>),
    line: impl Fn(&mut Vec<u8>, &Decoded<'_, R>),
) -> std::io::Result<Option<String>> {
    let mut io_err = None;
    let err = walk::for_each_record_in(b, data, &t.codec_context(), rec, |d| {
        if io_err.is_some() {
            return;
        }
        buf.clear();
        let _ = write!(buf, "    +{} ", d.offset);
        line(buf, &d);
        buf.push(b'\n');
        if let Err(e) = out.write_all(buf) {
            io_err = Some(e);
        }
    });
    if let Some(e) = io_err {
        return Err(e);
    }
    Ok(err.map(|(at, msg)| {
        let (off, prefix) = walk::locate(b, at);
        format!("{}: offset {off}: {prefix}{msg}", t.name().display())
    }))
}

/// Print every block of a table and its records, stopping at a log block that would take the
/// bytes inflated past `inflate_left` (which it counts down). Returns the first problem met.
fn dump_blocks(
    out: &mut impl Write,
    t: &Table,
    scratch: &mut Scratch,
    inflate_left: &mut u64,
) -> Result<Option<String>, CliError> {
    let mut first_err = None;
    let mut data_type = BlockType::Ref;
    let mut walk = scratch.take_walk(t);
    let logs = t.info().logs;
    let mut next_at = 0u64;
    loop {
        // With the inflate budget spent, no log block is inflated at all.
        if *inflate_left == 0 && logs.present && next_at >= logs.offset {
            writeln!(
                out,
                "  (log blocks from {} not shown: the log blocks inflated reached --max-inflate)",
                next_at.max(logs.offset)
            )?;
            break;
        }
        let Some(next) = walk.next_block() else { break };
        let (b, data) = match next {
            Ok(x) => x,
            Err(e) => {
                first_err.get_or_insert(format!("{e:#}"));
                break;
            }
        };
        next_at = b.offset + b.full_size as u64;
        if !spend_inflate_budget(out, &b, inflate_left)? {
            break;
        }
        // An index block indexes the data blocks before it.
        if b.block_type != BlockType::Index {
            data_type = b.block_type;
        }
        print_block_head(out, &b, data, data_type)?;
        let err = print_block_records(out, t, &b, data, data_type, scratch)?;
        if let Some(e) = err {
            first_err.get_or_insert(e);
        }
    }
    scratch.keep_walk(walk);
    Ok(first_err)
}

/// Count a log block's inflated bytes against `inflate_left`. When they would pass it, zero
/// the budget, say where the dump stops and return false.
fn spend_inflate_budget(
    out: &mut impl Write,
    b: &BlockInfo,
    inflate_left: &mut u64,
) -> std::io::Result<bool> {
    if b.block_type != BlockType::Log {
        return Ok(true);
    }
    if (b.block_len as u64) > *inflate_left {
        *inflate_left = 0;
        writeln!(
            out,
            "  (stopped at the log block at {}: the log blocks inflated reach --max-inflate; the rest is not shown)",
            b.offset
        )?;
        return Ok(false);
    }
    *inflate_left -= b.block_len as u64;
    Ok(true)
}

/// Print a block's line (offset, type, lengths, restart table, next block) and its restart
/// points; `data_type` is the type of the data blocks an index block indexes.
fn print_block_head(
    out: &mut impl Write,
    b: &BlockInfo,
    data: &[u8],
    data_type: BlockType,
) -> std::io::Result<()> {
    let kind = if b.block_type == BlockType::Index {
        format!("{} index", type_name(data_type))
    } else {
        type_name(b.block_type).to_string()
    };
    write!(
        out,
        "  block at {}: type {} ({kind}), block_len {}",
        b.offset,
        b.block_type.byte() as char,
        b.block_len
    )?;
    if b.block_type == BlockType::Log {
        write!(out, " inflated, {} compressed bytes", b.compressed_len)?;
    }
    writeln!(
        out,
        ", {} restarts, restart table at {}, next block at {}",
        b.restart_count,
        b.restart_off,
        b.offset + b.full_size as u64
    )?;
    let restarts = walk::restarts(b, data);
    write!(out, "    restarts:")?;
    for r in restarts {
        write!(out, " {r}")?;
    }
    writeln!(out)
}

/// Print a block's records, one line each, by the block's type. Returns the problem that
/// stopped the records, if any.
fn print_block_records(
    out: &mut impl Write,
    t: &Table,
    b: &BlockInfo,
    data: &[u8],
    data_type: BlockType,
    scratch: &mut Scratch,
) -> std::io::Result<Option<String>> {
    let line = &mut scratch.line;
    match b.block_type {
        BlockType::Ref => {
            print_records(out, t, b, data, (&mut RefRecord::default(), line), ref_line)
        }
        BlockType::Log => print_records(out, t, b, data, (&mut scratch.log, line), log_line),
        BlockType::Obj => {
            print_records(out, t, b, data, (&mut ObjRecord::default(), line), obj_line)
        }
        _ => print_records(
            out,
            t,
            b,
            data,
            (&mut IndexRecord::default(), line),
            |buf, d| index_line(buf, d, data_type),
        ),
    }
}

/// A ref record's line: the ref and its update index.
fn ref_line(buf: &mut Vec<u8>, d: &Decoded<'_, RefRecord>) {
    buf.extend_from_slice(b"ref ");
    let _ = write_ref(buf, d.rec);
    let _ = write!(buf, " (update index {})", d.rec.update_index);
}

/// A log record's line, marking existence markers.
fn log_line(buf: &mut Vec<u8>, d: &Decoded<'_, LogRecord>) {
    buf.extend_from_slice(b"log ");
    let _ = write_log(buf, d.rec);
    if d.rec.is_existence_marker() {
        buf.extend_from_slice(b"(existence marker)");
    }
}

/// An obj record's line: the hash prefix in hex and the ref block offsets.
fn obj_line(buf: &mut Vec<u8>, d: &Decoded<'_, ObjRecord>) {
    let _ = write!(buf, "obj ");
    for c in &d.rec.hash_prefix {
        let _ = write!(buf, "{c:02x}");
    }
    if d.rec.offsets.is_empty() {
        let _ = write!(buf, " -> (all ref blocks)");
    } else {
        let _ = write!(buf, " ->");
        for o in &d.rec.offsets {
            let _ = write!(buf, " {o}");
        }
    }
}

/// An index record's line: the key, shown as the indexed `data_type`'s keys are, and the
/// block it points to.
fn index_line(buf: &mut Vec<u8>, d: &Decoded<'_, IndexRecord>, data_type: BlockType) {
    let key = if data_type == BlockType::Log {
        show_log_key(d.key)
    } else if data_type == BlockType::Obj {
        d.key.iter().map(|c| format!("{c:02x}")).collect()
    } else {
        show_bytes(d.key, 4096)
    };
    let _ = write!(buf, "index {key} -> {}", d.rec.offset);
}

/// Run `dump`.
pub fn run(p: &Path, blocks: bool, max_inflate: u64) -> CliResult {
    let opened = path::open(p)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    if let Target::Stack { dir, .. } = &opened.target {
        let m = &opened.merged;
        write!(
            out,
            "stack {}: {} tables, hash {}",
            dir.display(),
            m.tables().len(),
            m.hash().name()
        )?;
        if !m.tables().is_empty() {
            write!(
                out,
                ", update indexes {}..{}",
                m.min_update_index(),
                m.max_update_index()
            )?;
        }
        writeln!(out)?;
    }
    let mut first_err = None;
    let mut scratch = Scratch::default();
    let mut inflate_left = max_inflate;
    for (name, t) in opened.names.iter().zip(opened.tables()) {
        dump_header(&mut out, name, t)?;
        if blocks {
            if let Some(e) = dump_blocks(&mut out, t, &mut scratch, &mut inflate_left)? {
                writeln!(out, "  error: {e}")?;
                first_err.get_or_insert(e);
            }
        }
    }
    out.flush()?;
    match first_err {
        Some(e) => Err(CliError::corrupt(e)),
        None => Ok(ExitCode::SUCCESS),
    }
}
