//! `reftable reencode TABLE -o OUT [--restart-interval N] [--no-index-objects]
//! [--block-size N]`: rewrite a table's records with this crate's writer. Given the options
//! git used (block size and hash come from the table's header), the output is byte-identical
//! to a table git wrote.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use reftable::{Table, WriteOptions, Writer};

use crate::error::{CliError, CliResult};

/// What `reencode` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// The table to read.
    pub table: PathBuf,
    /// Where to write.
    pub out: PathBuf,
    /// Restart interval of the new table.
    pub restart_interval: u16,
    /// Whether to write an obj section.
    pub index_objects: bool,
    /// Block size of the new table; `None` takes the input's.
    pub block_size: Option<u32>,
}

/// Run `reencode`.
pub fn run(o: &Options) -> CliResult {
    let meta = std::fs::metadata(&o.table)
        .map_err(|e| CliError::usage(format!("{}: {e}", o.table.display())))?;
    if !meta.is_file() {
        return Err(CliError::usage(format!(
            "{}: not a table file",
            o.table.display()
        )));
    }
    let (bytes, input_len, first_diff) = {
        let t = Table::open(&o.table)?;
        let info = *t.info();
        let block_size = o.block_size.unwrap_or(info.block_size);
        // A header block size of 0 means an unaligned table.
        let opts = WriteOptions::default()
            .block_size(block_size)
            .restart_interval(o.restart_interval)
            .index_objects(o.index_objects)
            .unpadded(block_size == 0)
            .hash(info.hash)
            .exact_log_message(true);
        let mut w =
            Writer::try_new(Vec::new(), opts).map_err(|e| CliError::usage(format!("{e:#}")))?;
        w.set_limits(info.min_update_index, info.max_update_index)
            .map_err(|e| CliError::corrupt(format!("{}: {e:#}", o.table.display())))?;
        let mut refs = t.refs()?;
        while let Some(r) = refs.next_record()? {
            w.add_ref(r).map_err(|e| {
                CliError::corrupt(format!("{}: cannot re-encode: {e:#}", o.table.display()))
            })?;
        }
        let mut logs = t.logs()?;
        while let Some(l) = logs.next_record()? {
            w.add_log_verbatim(l).map_err(|e| {
                CliError::corrupt(format!("{}: cannot re-encode: {e:#}", o.table.display()))
            })?;
        }
        let bytes = w.finish().map_err(|e| {
            CliError::corrupt(format!("{}: cannot re-encode: {e:#}", o.table.display()))
        })?;
        let first_diff = bytes
            .iter()
            .zip(t.bytes())
            .position(|(a, b)| a != b)
            .or((bytes.len() != t.bytes().len()).then(|| bytes.len().min(t.bytes().len())));
        (bytes, t.bytes().len(), first_diff)
    };
    std::fs::write(&o.out, &bytes)
        .map_err(|e| CliError::usage(format!("{}: {e}", o.out.display())))?;
    let mut out = std::io::stdout().lock();
    match first_diff {
        None => writeln!(
            out,
            "{}: {} bytes, byte-identical to {}",
            o.out.display(),
            bytes.len(),
            o.table.display()
        )?,
        Some(at) => writeln!(
            out,
            "{}: {} bytes, differs from {} ({input_len} bytes) from byte {at} on",
            o.out.display(),
            bytes.len(),
            o.table.display()
        )?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
