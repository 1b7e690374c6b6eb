//! `reftable logs [--json] PATH [REFNAME]`: reflog entries of the merged stack, refs in name
//! order, newest first within a ref.
//!
//! Lines: `<refname> <update-index> <old-oid> <new-oid> <name> <<email>> <time> <±HHMM>
//! <message>`, the message without its trailing newline and with `\`, newline and tab escaped
//! as `\\`, `\n`, `\t`. Tombstones and reflog existence markers are not shown (as in git).

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use reftable::merged::MergedIter;

use reftable::{LogRecord, LogValue};
use serde::Serialize;

use crate::error::CliResult;
use crate::path;
use crate::text::{lossy, write_log};

/// One reflog entry in the JSON document.
#[derive(Serialize)]
struct LogJson {
    refname: String,
    update_index: u64,
    old: String,
    new: String,
    name: String,
    email: String,
    time: u64,
    /// `±HHMM` as git prints it.
    tz: String,
    /// The message exactly as stored (normally with one trailing newline).
    message: String,
}

/// The JSON document of `logs --json`.
#[derive(Serialize)]
struct LogsJson {
    path: String,
    hash: &'static str,
    tables: usize,
    logs: Vec<LogJson>,
}

fn to_json(l: &LogRecord) -> Option<LogJson> {
    let LogValue::Update(u) = &l.value else {
        return None;
    };
    Some(LogJson {
        refname: lossy(&l.refname),
        update_index: l.update_index,
        old: u.old_id.to_string(),
        new: u.new_id.to_string(),
        name: lossy(&u.committer.name),
        email: lossy(&u.committer.email),
        time: u.committer.time,
        tz: u.committer.tz_offset.to_string(),
        message: lossy(&u.message),
    })
}

/// Whether `logs` shows the record: not a tombstone, not an existence marker.
fn shown(l: &LogRecord) -> bool {
    matches!(l.value, LogValue::Update(_)) && !l.is_existence_marker()
}

/// The next record, ending at the first record of another ref when `only` names one.
fn next<'a>(
    it: &'a mut MergedIter<LogRecord>,
    only: Option<&[u8]>,
) -> Result<Option<&'a LogRecord>, reftable::Error> {
    Ok(it
        .next_record()?
        .filter(|l| only.map_or(true, |n| l.refname == n)))
}

/// Run `logs`.
pub fn run(p: &Path, json: bool, refname: Option<&str>) -> CliResult {
    let opened = path::open(p)?;
    let mut it = match refname {
        Some(name) => opened.merged.seek_log(name.as_bytes())?,
        None => opened.merged.logs()?,
    };
    let only = refname.map(str::as_bytes);
    if json {
        let mut logs = Vec::new();
        while let Some(l) = next(&mut it, only)? {
            if shown(l) {
                logs.extend(to_json(l));
            }
        }
        let doc = LogsJson {
            path: opened.target.path().display().to_string(),
            hash: opened.merged.hash().name(),
            tables: opened.tables().len(),
            logs,
        };
        crate::text::print_json(&doc)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    while let Some(l) = next(&mut it, only)? {
        if shown(l) {
            write_log(&mut out, l)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
