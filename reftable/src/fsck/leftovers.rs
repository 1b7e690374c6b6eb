//! Files in the stack directory that should not be there: lock files, temporary tables and
//! tables `tables.list` does not name, unless young enough to be a writer's at work.

use std::collections::HashSet;
use std::path::Path;

use super::finding::{FileFindings, Finding, FindingKind};
use crate::error::{Error, Result};
use crate::stale::StaleOptions;

/// Report the leftovers in `dir` (whose `tables.list` names `listed`), sorted by name; all
/// of them, not capped: each is a file to look at and remove.
pub(super) fn check_leftovers(dir: &Path, listed: &HashSet<&str>) -> Result<FileFindings> {
    let read_err = |e| Error::io(e, "read the stack directory").in_file(dir);
    let mut stray: Vec<(String, &str)> = Vec::new();
    for e in std::fs::read_dir(dir).map_err(read_err)? {
        let e = e.map_err(read_err)?;
        let n = e.file_name().to_string_lossy().into_owned();
        let what = if n.ends_with(".lock") {
            "leftover lock file (a writer crashed, or is running now)"
        } else if n.contains(".temp.") {
            "leftover temporary table (a writer crashed, or is running now)"
        } else if n.ends_with(".ref") && !listed.contains(n.as_str()) {
            "stray table not listed in tables.list"
        } else {
            continue;
        };
        if !young(&e.path()) {
            stray.push((n, what));
        }
    }
    stray.sort();
    let mut r = FileFindings::new(dir);
    for (n, what) in stray {
        r.findings.push(Finding {
            file: dir.join(n),
            offset: None,
            kind: FindingKind::Leftover,
            text: what.to_string(),
        });
    }
    Ok(r)
}

/// Whether `path` belongs to a writer at work: younger than the age after which
/// [`crate::stale`] takes such a file for a leftover, or gone already (the writer finished
/// while we looked). A table not in `tables.list` may be one a compaction is about to list
/// or has just replaced.
fn young(path: &Path) -> bool {
    let writer_age = StaleOptions::default().min_age;
    match std::fs::symlink_metadata(path).and_then(|m| m.modified()) {
        Ok(t) => t.elapsed().is_ok_and(|age| age < writer_age),
        Err(_) => true,
    }
}
