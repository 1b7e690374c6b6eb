//! Migrating refs from git's files backend into a reftable stack, as `git refs migrate
//! --ref-format=reftable` does (git 2.52 to 2.54; earlier and later gits differ, see below):
//! read the loose refs, `packed-refs` and `logs/` of a `.git` directory ([`FilesRefs::read`]),
//! then write them as one table into an empty stack ([`RefDb::import`]); and back, as
//! `--ref-format=files` does ([`RefDb::export_files`]).
//!
//! The table git writes: every ref at the stack's first update index, annotated tags with
//! their peeled value (computed from the objects; `packed-refs` peel lines are not trusted),
//! symrefs as symrefs, dangling ones included; every reflog entry at an update index of its
//! own, counted across all reflogs in the order git walks `logs/` (each directory's entries
//! sorted by name, depth first: `refs/heads/a/b` before `refs/heads/a-b`), oldest entry
//! first; an entry whose new id is null takes an index and writes nothing. Messages are
//! normalized and cut to half the block size like any reflog message.
//!
//! Where git differs by version: 2.46 and 2.47 refuse a repository with reflogs; 2.48 to
//! 2.51.0 number each reflog's entries from 1 on their own, store null old ids and a mangled
//! identity (fixed in 2.51.1 and 2.52); 2.55 stores annotated tags without peeled values. A
//! loose ref git cannot parse makes git stop reading refs and migrate the ones read so far;
//! here it is an error.
//!
//! ```
//! use reftable::refdb::{AssumeCommits, FilesRefs, RefDb, RefDbOptions};
//!
//! let git_dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir_all(git_dir.path().join("refs/heads")).unwrap();
//! std::fs::write(git_dir.path().join("HEAD"), "ref: refs/heads/main\n").unwrap();
//! let id = "1c2a7e431f340e344b233e7a96a11e55310b1471";
//! std::fs::write(git_dir.path().join("refs/heads/main"), format!("{id}\n")).unwrap();
//! std::fs::create_dir_all(git_dir.path().join("logs/refs/heads")).unwrap();
//! let line = format!("{} {id} C O Mitter <c@example.com> 1700000000 +0100\tcommit (initial): one\n", "0".repeat(40));
//! std::fs::write(git_dir.path().join("logs/refs/heads/main"), line).unwrap();
//!
//! let files = FilesRefs::read(git_dir.path(), reftable::HashId::Sha1).unwrap();
//! assert_eq!(files.refs.len(), 2);
//! let stack = tempfile::tempdir().unwrap();
//! let mut db = RefDb::open(stack.path(), RefDbOptions::default()).unwrap();
//! db.import(&files, &AssumeCommits).unwrap();
//! assert_eq!(db.stack().tables().len(), 1);
//! assert_eq!(db.reflog(b"refs/heads/main").unwrap().count(), 1);
//! ```

use std::path::Path;

use crate::codec::record::{LogRecord, LogUpdate, LogValue, Record, RefRecord, RefValue};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::{HashId, ObjectId};
/// Moved to [`crate::refname`]; kept here so that `refdb::migrate::is_root_ref` still works.
pub use crate::refname::is_root_ref;
use crate::refname::{is_pseudoref, is_valid_refname};

use super::objects::{ObjectKind, ObjectLookup};
use super::reflog::{is_existence_marker, normalize_message};
use super::RefDb;

/// A ref of the files backend: an object id or a symref target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilesValue {
    /// `<hex>`.
    Object(ObjectId),
    /// `ref: <target>`.
    Symref(Vec<u8>),
}

/// One line of a files-backend reflog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilesLogEntry {
    /// Old id.
    pub old_id: ObjectId,
    /// New id.
    pub new_id: ObjectId,
    /// Committer name.
    pub name: Vec<u8>,
    /// Committer email, without `<>`.
    pub email: Vec<u8>,
    /// Seconds since the epoch.
    pub time: u64,
    /// `±HHMM` read as a decimal number.
    pub tz_offset: i16,
    /// The message as written (after the tab, without the line's newline).
    pub message: Vec<u8>,
}

/// What a files-backend `.git` directory holds: refs in name order, reflogs in the order
/// git's migration reads them (entries oldest first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilesRefs {
    /// Refs (root refs such as `HEAD` included), sorted by name.
    pub refs: Vec<(Vec<u8>, FilesValue)>,
    /// Reflogs in `logs/` walk order, each oldest entry first.
    pub reflogs: Vec<(Vec<u8>, Vec<FilesLogEntry>)>,
}

fn io(e: std::io::Error, what: &str, path: &Path) -> Error {
    Error::io(e, what.to_string()).in_file(path)
}

fn corrupt(path: &Path, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Format, msg).in_file(path)
}

fn parse_value(path: &Path, content: &[u8], hash: HashId) -> Result<FilesValue> {
    let line = content.strip_suffix(b"\n").unwrap_or(content);
    if let Some(t) = line.strip_prefix(b"ref: ") {
        return Ok(FilesValue::Symref(t.to_vec()));
    }
    std::str::from_utf8(line)
        .ok()
        .filter(|h| h.len() == 2 * hash.size())
        .and_then(ObjectId::from_hex)
        .map(FilesValue::Object)
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

fn path_of(base: &Path, name: &[u8]) -> std::path::PathBuf {
    base.join(String::from_utf8_lossy(name).as_ref())
}

impl FilesRefs {
    /// Read the refs and reflogs of the files-backend repository whose `.git` is `git_dir`.
    /// Errors: [`ErrorKind::Io`], and [`ErrorKind::Format`] for a loose ref or a
    /// `packed-refs` line git could not read either.
    pub fn read(git_dir: &Path, hash: HashId) -> Result<FilesRefs> {
        let mut refs = std::collections::BTreeMap::new();
        // packed-refs first: loose refs shadow it.
        let packed = git_dir.join("packed-refs");
        match std::fs::read(&packed) {
            Ok(bytes) => {
                for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    if line.starts_with(b"#") || line.starts_with(b"^") {
                        continue;
                    }
                    let (hex, name) = line
                        .iter()
                        .position(|&b| b == b' ')
                        .map(|i| (&line[..i], &line[i + 1..]))
                        .ok_or_else(|| corrupt(&packed, "packed-refs line without a name"))?;
                    let id = std::str::from_utf8(hex)
                        .ok()
                        .and_then(ObjectId::from_hex)
                        .ok_or_else(|| corrupt(&packed, "packed-refs line without an id"))?;
                    refs.insert(name.to_vec(), FilesValue::Object(id));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e, "read", &packed)),
        }
        // Root refs at the top, then everything under refs/.
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
        let mut reflogs = Vec::new();
        walk_logs(&git_dir.join("logs"), b"", hash, &mut reflogs)?;
        Ok(FilesRefs {
            refs: refs.into_iter().collect(),
            reflogs,
        })
    }
}

/// git's reflog walk: depth first, each directory's entries by name; regular files whose own
/// name is a valid one-level ref name.
fn walk_logs(
    dir: &Path,
    prefix: &[u8],
    hash: HashId,
    out: &mut Vec<(Vec<u8>, Vec<FilesLogEntry>)>,
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
fn parse_log(bytes: &[u8], hash: HashId) -> Vec<FilesLogEntry> {
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

fn parse_log_line(line: &[u8], hash: HashId) -> Option<FilesLogEntry> {
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
    let tz = after.get(sp + 1..sp + 6)?;
    if !matches!(tz[0], b'+' | b'-') || !tz[1..].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let magnitude: i16 = std::str::from_utf8(&tz[1..]).ok()?.parse().ok()?;
    let tz_offset = if tz[0] == b'-' { -magnitude } else { magnitude };
    let msg = &after[sp + 6..];
    let message = msg.strip_prefix(b"\t").unwrap_or(msg).to_vec();
    Some(FilesLogEntry {
        old_id,
        new_id,
        name: strip_crud(&ident[..lt]),
        email: strip_crud(&ident[lt + 1..gt]),
        time,
        tz_offset,
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

impl RefDb {
    /// Write `files` into this (empty) stack as one table, as git's `refs migrate` does (see
    /// the [module documentation](self)); `objects` gives annotated tags their peeled values.
    /// Errors: [`ErrorKind::Api`] when the stack is not empty, [`ErrorKind::ObjectLookup`]
    /// when `objects` fails, [`ErrorKind::Lock`] when the stack is locked.
    pub fn import(&mut self, files: &FilesRefs, objects: &dyn ObjectLookup) -> Result<()> {
        if !self.stack.tables().is_empty() {
            return Err(Error::new(
                ErrorKind::Api,
                "refs are imported into an empty stack only",
            ));
        }
        let hash = self.stack.options().hash();
        let block_size = self.stack.options().write.block_size;
        let max_message = (if block_size == 0 { 4096 } else { block_size } / 2) as usize;
        let mut refs = Vec::with_capacity(files.refs.len());
        for (name, v) in &files.refs {
            let value = match v {
                FilesValue::Symref(t) => RefValue::Symref(t.clone()),
                FilesValue::Object(id) => match objects.lookup(id) {
                    Ok(ObjectKind::Tag { peeled }) => RefValue::Peeled {
                        object: *id,
                        peeled,
                    },
                    Ok(_) => RefValue::Object(*id),
                    Err(e) => {
                        return Err(Error::new(ErrorKind::ObjectLookup, e.to_string()));
                    }
                },
            };
            refs.push((name.clone(), value));
        }
        let null = ObjectId::null(hash);
        let entries: usize = files.reflogs.iter().map(|(_, e)| e.len()).sum();
        self.stack.add(|w, update_index| {
            w.set_limits(
                update_index,
                update_index + entries.saturating_sub(1) as u64,
            )?;
            for (name, value) in &refs {
                w.add_ref(&RefRecord::new(name.clone(), update_index, value.clone()))?;
            }
            let mut logs = Vec::with_capacity(entries);
            let mut index = 0u64;
            for (name, log) in &files.reflogs {
                for e in log {
                    let ui = update_index + index;
                    index += 1;
                    if e.new_id == null {
                        continue;
                    }
                    let mut message = normalize_message(&e.message);
                    message.truncate(max_message);
                    message.push(b'\n');
                    logs.push(LogRecord {
                        refname: name.clone(),
                        update_index: ui,
                        value: LogValue::Update(LogUpdate {
                            old_id: e.old_id,
                            new_id: e.new_id,
                            name: e.name.clone(),
                            email: e.email.clone(),
                            time: e.time,
                            tz_offset: e.tz_offset,
                            message,
                        }),
                    });
                }
            }
            logs.sort_by(|a, b| {
                a.refname
                    .cmp(&b.refname)
                    .then(b.update_index.cmp(&a.update_index))
            });
            for l in &logs {
                w.add_log(l)?;
            }
            Ok(())
        })
    }
}

impl RefDb {
    /// Write this stack's refs and reflogs into `git_dir` in git's files layout, as `git refs
    /// migrate --ref-format=files` does (git 2.48 to 2.54): branches, tags and other refs in
    /// `packed-refs` (sorted, annotated tags followed by their peeled id, computed by
    /// `objects`), symrefs and root refs as loose files, `refs/heads` and `refs/tags`
    /// created, every reflog oldest entry first in `logs/` (existence markers and tombstones
    /// left out, no file for a reflog without entries, no tab before an empty message), and
    /// the `refs/<x>` directory of each reflog's ref, which git leaves behind.
    /// Errors: [`ErrorKind::Io`], and the errors of reading the stack.
    pub fn export_files(&self, git_dir: &Path, objects: &dyn ObjectLookup) -> Result<()> {
        let hash = self.stack.options().hash();
        let null = ObjectId::null(hash);
        let write = |name: &[u8], content: &[u8]| -> Result<()> {
            let p = path_of(git_dir, name);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(e, "create directory", parent))?;
            }
            std::fs::write(&p, content).map_err(|e| io(e, "write", &p))
        };
        for d in ["refs/heads", "refs/tags"] {
            let p = git_dir.join(d);
            std::fs::create_dir_all(&p).map_err(|e| io(e, "create directory", &p))?;
        }
        let mut packed = b"# pack-refs with: peeled fully-peeled sorted \n".to_vec();
        let mut refs = self.refs()?;
        while let Some(r) = refs.next_ref()? {
            let loose = |v: &[u8]| {
                let mut c = v.to_vec();
                c.push(b'\n');
                c
            };
            match &r.value {
                RefValue::Symref(t) => write(&r.refname, &loose(&[b"ref: ", &t[..]].concat()))?,
                RefValue::Object(id) | RefValue::Peeled { object: id, .. } => {
                    if is_root_ref(&r.refname) {
                        write(&r.refname, &loose(id.to_string().as_bytes()))?;
                        continue;
                    }
                    packed.extend_from_slice(format!("{id} ").as_bytes());
                    packed.extend_from_slice(&r.refname);
                    packed.push(b'\n');
                    if let Ok(ObjectKind::Tag { peeled }) = objects.lookup(id) {
                        packed.extend_from_slice(format!("^{peeled}\n").as_bytes());
                    }
                }
                RefValue::Deletion => {}
            }
        }
        write(b"packed-refs", &packed)?;
        // One pass over the merged logs (name order, newest first per name), one reflog at a
        // time, instead of a seek per reflog.
        let emit = |name: &[u8], entries: &[LogRecord]| -> Result<()> {
            let mut lines = Vec::new();
            for l in entries.iter().rev() {
                let Some(u) = l.update() else { continue };
                if u.old_id == null && u.new_id == null {
                    continue;
                }
                let sign = if u.tz_offset < 0 { '-' } else { '+' };
                lines.extend_from_slice(format!("{} {} ", u.old_id, u.new_id).as_bytes());
                lines.extend_from_slice(&strip_crud(&u.name));
                lines.extend_from_slice(b" <");
                lines.extend_from_slice(&strip_crud(&u.email));
                lines.extend_from_slice(
                    format!("> {} {sign}{:04}", u.time, u.tz_offset.unsigned_abs()).as_bytes(),
                );
                let msg = u.message.strip_suffix(b"\n").unwrap_or(&u.message);
                if !msg.is_empty() {
                    lines.push(b'\t');
                    lines.extend_from_slice(msg);
                }
                lines.push(b'\n');
            }
            if !lines.is_empty() {
                write(&[&b"logs/"[..], name].concat(), &lines)?;
                // git writes reflog entries under a lock of the ref, whose directories it
                // then prunes down to the first two components: `refs/<x>` stays.
                let parts: Vec<&[u8]> = name.splitn(3, |&b| b == b'/').collect();
                if parts.len() == 3 {
                    let d = path_of(git_dir, &[parts[0], b"/", parts[1]].concat());
                    std::fs::create_dir_all(&d).map_err(|e| io(e, "create directory", &d))?;
                }
            }
            Ok(())
        };
        let mut it = self.stack.merged().logs()?;
        let mut name: Vec<u8> = Vec::new();
        let mut entries: Vec<LogRecord> = Vec::new();
        while let Some(l) = it.next_record()? {
            if l.refname != name {
                emit(&name, &entries)?;
                entries.clear();
                name.clone_from(&l.refname);
            }
            if !l.is_deletion() && !is_existence_marker(l) {
                entries.push(l.clone());
            }
        }
        emit(&name, &entries)?;
        Ok(())
    }
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
            (e.name.as_slice(), e.email.as_slice()),
            (&b"Crud Name."[..], &b"m@x"[..])
        );
        assert_eq!((e.time, e.tz_offset), (1_700_000_000, -730));
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

    /// Files → stack → files: what is read back is what was read first (refs, reflog
    /// entries with their fields), in git's layout.
    #[test]
    fn export_reads_back_as_imported() {
        use crate::refdb::{AssumeCommits, RefDbOptions};
        let src = tempfile::tempdir().unwrap();
        let z = "0".repeat(40);
        let a = "1".repeat(40);
        let b = "2".repeat(40);
        let files = [
            ("HEAD", "ref: refs/heads/main\n".to_string()),
            ("ORIG_HEAD", format!("{a}\n")),
            ("refs/heads/main", format!("{b}\n")),
            ("refs/heads/sym", "ref: refs/heads/main\n".to_string()),
            (
                "packed-refs",
                format!("# pack-refs with: peeled fully-peeled sorted \n{a} refs/tags/v1\n"),
            ),
            (
                "logs/refs/heads/main",
                format!("{z} {a} C O <c@x> 5 +0100\tone\n{a} {b} C O <c@x> 6 -0130\n"),
            ),
            (
                "logs/refs/custom/x",
                format!("{z} {a} C O <c@x> 7 +0000\tcustom  msg\n"),
            ),
        ];
        for (name, content) in &files {
            let p = src.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let read = FilesRefs::read(src.path(), HashId::Sha1).unwrap();
        let stack = tempfile::tempdir().unwrap();
        let mut db = RefDb::open(stack.path(), RefDbOptions::default()).unwrap();
        db.import(&read, &AssumeCommits).unwrap();
        let out = tempfile::tempdir().unwrap();
        db.export_files(out.path(), &AssumeCommits).unwrap();
        let again = FilesRefs::read(out.path(), HashId::Sha1).unwrap();
        assert_eq!(again.refs, read.refs);
        // Messages come back normalized (git stores them so); everything else as read.
        let norm = |f: &FilesRefs| -> Vec<_> {
            f.reflogs
                .iter()
                .map(|(n, e)| {
                    let e: Vec<_> = e
                        .iter()
                        .map(|e| FilesLogEntry {
                            message: normalize_message(&e.message),
                            ..e.clone()
                        })
                        .collect();
                    (n.clone(), e)
                })
                .collect()
        };
        assert_eq!(norm(&again), norm(&read));
        let packed = std::fs::read_to_string(out.path().join("packed-refs")).unwrap();
        assert_eq!(
            packed,
            format!("# pack-refs with: peeled fully-peeled sorted \n{b} refs/heads/main\n{a} refs/tags/v1\n")
        );
        let log = std::fs::read_to_string(out.path().join("logs/refs/heads/main")).unwrap();
        assert_eq!(
            log,
            format!("{z} {a} C O <c@x> 5 +0100\tone\n{a} {b} C O <c@x> 6 -0130\n")
        );
        assert!(out.path().join("refs/custom").is_dir() && out.path().join("refs/tags").is_dir());
        assert_eq!(
            std::fs::read_to_string(out.path().join("refs/heads/sym")).unwrap(),
            "ref: refs/heads/main\n"
        );
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
