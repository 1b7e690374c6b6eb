//! git's files backend as this crate reads and writes it for migration: loose refs,
//! `packed-refs` and the reflogs under `logs/` of a `.git` directory ([`FilesRefs::read`]),
//! parsed as git parses them, and the files written back (a reflog line as git writes it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::codec::record::LogUpdate;
use crate::error::{Error, ErrorKind, Result};
use crate::hash::{HashId, ObjectId};
use crate::refname::{is_pseudoref, is_root_ref, is_valid_refname};
use crate::signature::{Signature, TzOffset};
use crate::target::Target;

/// What a files-backend `.git` directory holds: refs in name order, reflogs in the order
/// git's migration reads them (entries oldest first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilesRefs {
    /// Refs (root refs such as `HEAD` included), sorted by name.
    pub refs: Vec<(Vec<u8>, Target)>,
    /// Reflogs in `logs/` walk order, each oldest entry first; an entry's message is the
    /// line's as written (after the tab, without the line's newline).
    pub reflogs: Vec<(Vec<u8>, Vec<LogUpdate>)>,
}

/// An I/O error doing `what` to `path`.
pub(super) fn io(e: std::io::Error, what: &str, path: &Path) -> Error {
    Error::io(e, what.to_string()).in_file(path)
}

/// A files-backend file git could not read either.
fn corrupt(path: &Path, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Format, msg).in_file(path)
}

fn parse_value(path: &Path, content: &[u8], hash: HashId) -> Result<Target> {
    let line = content.strip_suffix(b"\n").unwrap_or(content);
    if let Some(t) = line.strip_prefix(b"ref: ") {
        return Ok(Target::Symref(t.to_vec()));
    }
    std::str::from_utf8(line)
        .ok()
        .filter(|h| h.len() == 2 * hash.size())
        .and_then(ObjectId::from_hex)
        .map(Target::Object)
        .ok_or_else(|| corrupt(path, "loose ref is neither an object id nor a symref"))
}

/// Directory entries sorted by name (git's sorted directory walk).
fn sorted_entries(dir: &Path) -> Result<Vec<(Vec<u8>, std::fs::FileType)>> {
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io(e, "read directory", dir)),
    };
    for e in rd {
        let e = e.map_err(|e| io(e, "read directory", dir))?;
        let t = e.file_type().map_err(|err| io(err, "stat", dir))?;
        out.push((e.file_name().into_encoded_bytes(), t));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut n = prefix.to_vec();
    if !n.is_empty() {
        n.push(b'/');
    }
    n.extend_from_slice(name);
    n
}

/// The file of ref (or reflog) `name` under `base`.
pub(super) fn path_of(base: &Path, name: &[u8]) -> PathBuf {
    base.join(String::from_utf8_lossy(name).as_ref())
}

impl FilesRefs {
    /// Read the refs and reflogs of the files-backend repository whose `.git` is `git_dir`.
    /// Errors: [`ErrorKind::Io`], and [`ErrorKind::Format`] for a loose ref or a
    /// `packed-refs` line git could not read either.
    pub fn read(git_dir: &Path, hash: HashId) -> Result<FilesRefs> {
        let mut refs = BTreeMap::new();
        // packed-refs first: loose refs shadow it.
        read_packed(&git_dir.join("packed-refs"), &mut refs)?;
        read_loose(git_dir, hash, &mut refs)?;
        let mut reflogs = Vec::new();
        walk_logs(&git_dir.join("logs"), b"", hash, &mut reflogs)?;
        Ok(FilesRefs {
            refs: refs.into_iter().collect(),
            reflogs,
        })
    }
}

/// The refs of the `packed-refs` file at `packed` (none when there is no such file).
fn read_packed(packed: &Path, refs: &mut BTreeMap<Vec<u8>, Target>) -> Result<()> {
    let bytes = match std::fs::read(packed) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e, "read", packed)),
    };
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if line.starts_with(b"#") || line.starts_with(b"^") {
            continue;
        }
        let (hex, name) = line
            .iter()
            .position(|&b| b == b' ')
            .map(|i| (&line[..i], &line[i + 1..]))
            .ok_or_else(|| corrupt(packed, "packed-refs line without a name"))?;
        let id = std::str::from_utf8(hex)
            .ok()
            .and_then(ObjectId::from_hex)
            .ok_or_else(|| corrupt(packed, "packed-refs line without an id"))?;
        refs.insert(name.to_vec(), Target::Object(id));
    }
    Ok(())
}

/// The loose refs of `git_dir`: root refs at the top, then everything under `refs/`
/// (lock files left out).
fn read_loose(git_dir: &Path, hash: HashId, refs: &mut BTreeMap<Vec<u8>, Target>) -> Result<()> {
    for (name, t) in sorted_entries(git_dir)? {
        if t.is_file() && is_root_ref(&name) {
            let p = path_of(git_dir, &name);
            let content = std::fs::read(&p).map_err(|e| io(e, "read", &p))?;
            refs.insert(name, parse_value(&p, &content, hash)?);
        }
    }
    let mut dirs = vec![b"refs".to_vec()];
    while let Some(d) = dirs.pop() {
        for (name, t) in sorted_entries(&path_of(git_dir, &d))? {
            let full = join(&d, &name);
            if t.is_dir() {
                dirs.push(full);
            } else if t.is_file() && !name.ends_with(b".lock") {
                let p = path_of(git_dir, &full);
                if !is_valid_refname(&full, false) {
                    return Err(corrupt(&p, "loose ref with an invalid name"));
                }
                let content = std::fs::read(&p).map_err(|e| io(e, "read", &p))?;
                refs.insert(full, parse_value(&p, &content, hash)?);
            }
        }
    }
    Ok(())
}

/// git's reflog walk: depth first, each directory's entries by name; regular files whose own
/// name is a valid one-level ref name.
fn walk_logs(
    dir: &Path,
    prefix: &[u8],
    hash: HashId,
    out: &mut Vec<(Vec<u8>, Vec<LogUpdate>)>,
) -> Result<()> {
    for (name, t) in sorted_entries(dir)? {
        let full = join(prefix, &name);
        let p = path_of(dir, &name);
        if t.is_dir() {
            walk_logs(&p, &full, hash, out)?;
        } else if t.is_file() && is_valid_refname(&name, true) {
            if is_pseudoref(&full) {
                return Err(Error::new(
                    ErrorKind::Refname,
                    format!(
                        "refusing to update reflog for pseudoref '{}'",
                        String::from_utf8_lossy(&full)
                    ),
                ));
            }
            let bytes = std::fs::read(&p).map_err(|e| io(e, "read", &p))?;
            out.push((full, parse_log(&bytes, hash)));
        }
    }
    Ok(())
}

/// The entries of a reflog file; lines git skips (no newline, bad ids, no identity, time 0,
/// a malformed zone) are skipped here too.
fn parse_log(bytes: &[u8], hash: HashId) -> Vec<LogUpdate> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
        let line = &rest[..nl];
        rest = &rest[nl + 1..];
        if let Some(e) = parse_log_line(line, hash) {
            out.push(e);
        }
    }
    out
}

fn parse_log_line(line: &[u8], hash: HashId) -> Option<LogUpdate> {
    let hex = 2 * hash.size();
    let id = |b: &[u8]| std::str::from_utf8(b).ok().and_then(ObjectId::from_hex);
    if line.len() < 2 * hex + 2 || line[hex] != b' ' || line[2 * hex + 1] != b' ' {
        return None;
    }
    let old_id = id(&line[..hex])?;
    let new_id = id(&line[hex + 1..2 * hex + 1])?;
    let ident = &line[2 * hex + 2..];
    let gt = ident.iter().position(|&b| b == b'>')?;
    let lt = ident[..gt].iter().position(|&b| b == b'<')?;
    let after = ident.get(gt + 1..)?;
    let after = after.strip_prefix(b" ")?;
    let sp = after.iter().position(|&b| b == b' ')?;
    let time: u64 = std::str::from_utf8(&after[..sp]).ok()?.parse().ok()?;
    if time == 0 {
        return None;
    }
    let tz_offset = TzOffset::parse(after.get(sp + 1..sp + 6)?)?;
    let msg = &after[sp + 6..];
    let message = msg.strip_prefix(b"\t").unwrap_or(msg).to_vec();
    Some(LogUpdate {
        old_id,
        new_id,
        committer: Signature::new(
            strip_crud(&ident[..lt]),
            strip_crud(&ident[lt + 1..gt]),
            time,
            tz_offset,
        ),
        message,
    })
}

/// git's ident cleaning: leading and trailing "crud" (control bytes, space and `,:;<>"\'`)
/// dropped, and `<`, `>` and newlines removed inside.
fn strip_crud(s: &[u8]) -> Vec<u8> {
    let crud = |c: u8| c <= 0x20 || b",:;<>\"\\'".contains(&c);
    let start = s.iter().position(|&c| !crud(c)).unwrap_or(s.len());
    let end = s.iter().rposition(|&c| !crud(c)).map_or(start, |i| i + 1);
    s[start..end]
        .iter()
        .copied()
        .filter(|c| !b"<>\n".contains(c))
        .collect()
}

/// Append the reflog line git writes for `u`: ids, the identity cleaned as git cleans it,
/// time and zone, and the message after a tab (no tab when it is empty), its trailing
/// newline replaced by the line's.
pub(super) fn write_log_line(out: &mut Vec<u8>, u: &LogUpdate) {
    let who = &u.committer;
    out.extend_from_slice(format!("{} {} ", u.old_id, u.new_id).as_bytes());
    out.extend_from_slice(&strip_crud(&who.name));
    out.extend_from_slice(b" <");
    out.extend_from_slice(&strip_crud(&who.email));
    out.extend_from_slice(format!("> {} {}", who.time, who.tz_offset).as_bytes());
    let msg = u.message.strip_suffix(b"\n").unwrap_or(&u.message);
    if !msg.is_empty() {
        out.push(b'\t');
        out.extend_from_slice(msg);
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_as_git_reads_them() {
        let z = "0".repeat(40);
        let a = "1".repeat(40);
        let line = format!("{z} {a} ,Crud Name. <m@x> 1700000000 -0730\tmsg  here");
        let e = parse_log_line(line.as_bytes(), HashId::Sha1).unwrap();
        assert_eq!(
            (e.committer.name.as_slice(), e.committer.email.as_slice()),
            (&b"Crud Name."[..], &b"m@x"[..])
        );
        assert_eq!(
            (e.committer.time, e.committer.tz_offset.hhmm()),
            (1_700_000_000, -730)
        );
        assert_eq!(e.message, b"msg  here");
        // No tab: the message starts right after the zone; time 0 and bad zones are skipped.
        let e =
            parse_log_line(format!("{z} {a} N <m> 5 +0000 x").as_bytes(), HashId::Sha1).unwrap();
        assert_eq!(e.message, b" x");
        assert!(
            parse_log_line(format!("{z} {a} N <m> 0 +0000\tx").as_bytes(), HashId::Sha1).is_none()
        );
        assert!(
            parse_log_line(format!("{z} {a} N <m> 5 0000\tx").as_bytes(), HashId::Sha1).is_none()
        );
        // A last line without its newline is not an entry.
        let two = format!("{z} {a} N <m> 5 +0000\tone\n{z} {a} N <m> 6 +0000\ttwo");
        assert_eq!(parse_log(two.as_bytes(), HashId::Sha1).len(), 1);
    }

    #[test]
    fn reflogs_in_gits_walk_order() {
        let dir = tempfile::tempdir().unwrap();
        let z = "0".repeat(40);
        let a = "1".repeat(40);
        for name in ["logs/refs/heads/a-b", "logs/refs/heads/a/b", "logs/HEAD"] {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{z} {a} N <m> 5 +0000\tx\n")).unwrap();
        }
        let f = FilesRefs::read(dir.path(), HashId::Sha1).unwrap();
        let names: Vec<&[u8]> = f.reflogs.iter().map(|(n, _)| n.as_slice()).collect();
        assert_eq!(names, [&b"HEAD"[..], b"refs/heads/a/b", b"refs/heads/a-b"]);
    }
}
