//! `reftable refs [--json] [--tombstones] PATH`: the live refs of the merged stack in name
//! order, root refs such as `HEAD` included.
//!
//! Lines: `<refname> <oid>`, `<refname> <oid> <peeled-oid>` (annotated tags),
//! `<refname> ref:<target>` (symrefs), and with `--tombstones` `<refname> deleted`.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use reftable::codec::record::Record;
use reftable::{RefRecord, RefValue};
use serde::Serialize;

use crate::error::CliResult;
use crate::path;
use crate::text::{lossy, write_ref};

/// One ref in the JSON document.
#[derive(Serialize)]
struct RefJson {
    /// The ref name (invalid UTF-8 replaced by U+FFFD).
    name: String,
    /// The update index of the transaction that wrote the record.
    update_index: u64,
    /// `oid`, `peeled` (annotated tag), `symref` or `deleted`.
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peeled: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
}

/// The JSON document of `refs --json`.
#[derive(Serialize)]
struct RefsJson {
    path: String,
    hash: &'static str,
    tables: usize,
    refs: Vec<RefJson>,
}

fn to_json(r: &RefRecord) -> RefJson {
    let mut j = RefJson {
        name: lossy(&r.refname),
        update_index: r.update_index,
        kind: "oid",
        value: None,
        peeled: None,
        target: None,
    };
    match &r.value {
        RefValue::Deletion => j.kind = "deleted",
        RefValue::Object(id) => j.value = Some(id.to_string()),
        RefValue::Peeled {
            object: value,
            peeled,
        } => {
            j.kind = "peeled";
            j.value = Some(value.to_string());
            j.peeled = Some(peeled.to_string());
        }
        RefValue::Symref(t) => {
            j.kind = "symref";
            j.target = Some(lossy(t));
        }
    }
    j
}

/// Run `refs`.
pub fn run(p: &Path, json: bool, tombstones: bool) -> CliResult {
    let opened = path::open(p)?;
    let mut it = opened.merged.refs()?;
    if json {
        let mut refs = Vec::new();
        while let Some(r) = it.next_record()? {
            if tombstones || !r.is_deletion() {
                refs.push(to_json(r));
            }
        }
        let doc = RefsJson {
            path: opened.target.path().display().to_string(),
            hash: opened.merged.hash().name(),
            tables: opened.tables().len(),
            refs,
        };
        crate::text::print_json(&doc)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    while let Some(r) = it.next_record()? {
        if tombstones || !r.is_deletion() {
            write_ref(&mut out, r)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
