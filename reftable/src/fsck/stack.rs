//! A stack checked: `tables.list`, each table it lists, the tables together (update
//! indexes, names against headers, one hash) and leftover files; done again while the
//! stack changes under the check.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use super::checker::Scratch;
use super::finding::{FileFindings, FindingKind, Report};
use super::leftovers::check_leftovers;
use super::list::{check_list, Listed};
use super::table::check_table_file;
use crate::bytes::read_regular;
use crate::error::{ErrorKind, Result};
use crate::hash::HashId;
use crate::stack_reader::RELOAD_DEADLINE;
use crate::tables_list::parse_table_name;

/// Check the stack in `dir`, retrying while it changes (see [`super::check_stack`]).
pub(super) fn check_stack_retrying(dir: &Path, expected: Option<HashId>) -> Result<Report> {
    let list = dir.join("tables.list");
    let deadline = Instant::now() + RELOAD_DEADLINE;
    loop {
        let before = read_regular(&list).ok();
        let report = check_stack_once(dir, expected)?;
        let changed = read_regular(&list).ok() != before;
        if report.count() == 0 || !changed || Instant::now() > deadline {
            return Ok(report);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One check of the stack: `tables.list`'s findings, each table's, the directory's.
fn check_stack_once(dir: &Path, expected: Option<HashId>) -> Result<Report> {
    let list_path = dir.join("tables.list");
    let mut list = FileFindings::new(&list_path);
    let listed = match read_regular(&list_path) {
        Ok(content) => check_list(&content, &mut list),
        Err(e) if e.kind() == ErrorKind::NotExist => Vec::new(),
        Err(e) => return Err(e),
    };
    let (tables, hashes) = check_tables(dir, &listed, &mut list)?;
    check_hashes(&hashes, expected, &mut list);
    let names: HashSet<&str> = listed.iter().map(|l| l.name.as_str()).collect();
    let leftovers = check_leftovers(dir, &names)?;
    let tables_checked = tables.len();
    let files = std::iter::once(list)
        .chain(tables)
        .chain(std::iter::once(leftovers))
        .collect();
    Ok(Report {
        files,
        tables_checked,
    })
}

/// Each table's hash, by file as shown.
type Hashes = Vec<(String, HashId)>;

/// Check each listed table, and the update indexes across them; a listed table that is
/// missing is reported to `list`. Returns the tables' findings and their hashes.
fn check_tables(
    dir: &Path,
    listed: &[Listed],
    list: &mut FileFindings,
) -> Result<(Vec<FileFindings>, Hashes)> {
    let mut hashes: Hashes = Vec::new();
    let mut prev: Option<(&str, u64)> = None;
    let mut out = Vec::new();
    let mut scratch = Scratch::default();
    for Listed { name, offset, line } in listed {
        let path = dir.join(name);
        if !path.exists() {
            let what = format!("line {line}: table {name} is listed but missing");
            list.at(FindingKind::TablesList, *offset, what);
            continue;
        }
        let checked = check_table_file(&path, &mut scratch)?;
        let mut r = checked.findings;
        if let Some(t) = &checked.table {
            let (min, max) = (t.min_update_index(), t.max_update_index());
            match parse_table_name(name) {
                Some((a, b)) if (a, b) != (min, max) => r.add(
                    FindingKind::Stack,
                    None,
                    format!("file name says update indexes {a}..{b}, the header says {min}..{max}"),
                ),
                _ => {}
            }
            if let Some((pn, pmax)) = prev.filter(|&(_, pmax)| min <= pmax) {
                let what = format!(
                    "min_update_index {min} is not greater than the max_update_index {pmax} \
                     of the table before it ({pn})"
                );
                r.at(FindingKind::Stack, 8, what);
            }
            prev = Some((name, max));
            hashes.push((path.display().to_string(), t.hash()));
        }
        out.push(r);
    }
    Ok((out, hashes))
}

/// One hash for the stack: the first table's, which must be the repository's (`expected`).
fn check_hashes(hashes: &[(String, HashId)], expected: Option<HashId>, list: &mut FileFindings) {
    let Some((first_name, first)) = hashes.first() else {
        return;
    };
    for (s, h) in &hashes[1..] {
        if h != first {
            let what = format!(
                "{s} uses {} but {first_name} uses {}",
                h.name(),
                first.name()
            );
            list.add(FindingKind::Stack, None, what);
        }
    }
    if let Some(cfg) = expected.filter(|cfg| cfg != first) {
        let what = format!(
            "the tables use {} but the repository's config says {}",
            first.name(),
            cfg.name()
        );
        list.add(FindingKind::Stack, None, what);
    }
}
