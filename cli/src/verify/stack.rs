//! The stack checks: `tables.list`, table names and update indexes across the stack, one
//! hash, stray tables and leftover lock and temporary files.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use reftable::HashId;

use super::check_file;
use super::report::{Problem, Report};
use crate::error::CliError;
use crate::path;
use crate::scratch::Scratch;
use crate::text::show_bytes;

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

/// How long a check of a stack that keeps changing is tried again (git's readers retry
/// for 3 seconds).
const RETRY_FOR: Duration = Duration::from_secs(3);

/// Check a stack and its tables. A check that finds problems while `tables.list` changed
/// under it (a writer committed or compacted meanwhile) is done again, so a live
/// repository is not reported as damaged.
pub(super) fn check_stack(
    dir: &Path,
    gitdir: Option<&Path>,
    out: &mut impl Write,
) -> Result<(usize, usize), CliError> {
    let list = dir.join("tables.list");
    let deadline = Instant::now() + RETRY_FOR;
    loop {
        let before = std::fs::read(&list).ok();
        let mut buf = Vec::new();
        let (problems, checked) = check_stack_once(dir, gitdir, &mut buf)?;
        let changed = std::fs::read(&list).ok() != before;
        if problems == 0 || !changed || Instant::now() > deadline {
            out.write_all(&buf)?;
            return Ok((problems, checked));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `path` belongs to a writer at work: younger than the age after which
/// `reftable clean-stale` takes such a file for a leftover, or gone already (the writer
/// finished while we looked). A table not in `tables.list` may be one a compaction is about
/// to list or has just replaced.
fn young(path: &Path) -> bool {
    let writer_age = reftable::stale::StaleOptions::default().min_age;
    match std::fs::symlink_metadata(path).and_then(|m| m.modified()) {
        Ok(t) => t.elapsed().is_ok_and(|age| age < writer_age),
        Err(_) => true,
    }
}

fn check_stack_once(
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
    let mut scratch = Scratch::default();
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
        let checked_table = check_file(&p, &s, &mut scratch)?;
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
        let what = if n.ends_with(".lock") {
            "leftover lock file (a writer crashed, or is running now)"
        } else if n.contains(".temp.") {
            "leftover temporary table (a writer crashed, or is running now)"
        } else if n.ends_with(".ref") && !listed.contains(&n) {
            "stray table not listed in tables.list"
        } else {
            continue;
        };
        if !young(&e.path()) {
            stray.push((n, what));
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
