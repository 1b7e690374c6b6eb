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

use crate::stack::Committed;
use std::collections::BTreeSet;
use std::path::Path;

use crate::codec::record::{LogRecord, LogUpdate, LogValue, Record, RefRecord, RefValue};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::ObjectId;
/// Moved to [`crate::refname`]; kept here so that `refdb::migrate::is_root_ref` still works.
use crate::refname::is_root_ref;
use crate::target::Target;

pub use super::files::FilesRefs;
use super::files::{io, path_of, write_log_line};
use super::objects::{ObjectKind, ObjectLookup};
use super::reflog::normalize_message;
use super::{show, RefDb};

impl RefDb {
    /// Write `files` into this (empty) stack as one table, as git's `refs migrate` does (see
    /// the [module documentation](self)); `objects` gives annotated tags their peeled values.
    /// Errors: [`ErrorKind::Api`] when the stack is not empty, [`ErrorKind::ObjectLookup`]
    /// when `objects` fails, [`ErrorKind::Lock`] when the stack is locked.
    pub fn import(&mut self, files: &FilesRefs, objects: &dyn ObjectLookup) -> Result<Committed> {
        if !self.stack.tables().is_empty() {
            return Err(Error::new(
                ErrorKind::Api,
                "refs are imported into an empty stack only",
            ));
        }
        let refs = ref_values(files, objects)?;
        let block_size = self.stack.options().write.block_size;
        let max_message = (if block_size == 0 { 4096 } else { block_size } / 2) as usize;
        let null = ObjectId::null(self.stack.options().hash());
        let entries: usize = files.reflogs.iter().map(|(_, e)| e.len()).sum();
        self.stack.add(|w, first| {
            w.set_limits(first, first + entries.saturating_sub(1) as u64)?;
            for (name, value) in &refs {
                w.add_ref(&RefRecord::new(name.clone(), first, value.clone()))?;
            }
            let mut logs = log_records(files, first, null, max_message);
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

/// The refs of `files` as table values: annotated tags (as `objects` says) with their
/// peeled ids.
fn ref_values(files: &FilesRefs, objects: &dyn ObjectLookup) -> Result<Vec<(Vec<u8>, RefValue)>> {
    let mut refs = Vec::with_capacity(files.refs.len());
    for (name, v) in &files.refs {
        let value = match v {
            Target::Symref(t) => RefValue::Symref(t.clone()),
            Target::Object(id) => match objects.lookup(id) {
                Ok(ObjectKind::Tag { peeled }) => RefValue::Peeled {
                    object: *id,
                    peeled,
                },
                Ok(_) => RefValue::Object(*id),
                Err(e) => return Err(Error::new(ErrorKind::ObjectLookup, e.to_string())),
            },
        };
        refs.push((name.clone(), value));
    }
    Ok(refs)
}

/// The reflog entries of `files` as log records, in `logs/` walk order: each entry takes
/// the next update index from `first` on, and one whose new id is `null` writes nothing.
fn log_records(
    files: &FilesRefs,
    first: u64,
    null: ObjectId,
    max_message: usize,
) -> Vec<LogRecord> {
    let mut logs = Vec::new();
    let mut next = first;
    for (name, log) in &files.reflogs {
        for e in log {
            let update_index = next;
            next += 1;
            if e.new_id == null {
                continue;
            }
            let mut message = normalize_message(&e.message);
            message.truncate(max_message);
            message.push(b'\n');
            logs.push(LogRecord {
                refname: name.clone(),
                update_index,
                value: LogValue::Update(LogUpdate {
                    old_id: e.old_id,
                    new_id: e.new_id,
                    committer: e.committer.clone(),
                    message,
                }),
            });
        }
    }
    logs
}

impl RefDb {
    /// Write this stack's refs and reflogs into `git_dir` in git's files layout, as `git refs
    /// migrate --ref-format=files` does (git 2.48 to 2.54): branches, tags and other refs in
    /// `packed-refs` (sorted, annotated tags followed by their peeled id, computed by
    /// `objects`), symrefs and root refs as loose files, `refs/heads` and `refs/tags`
    /// created, every reflog oldest entry first in `logs/` (existence markers and tombstones
    /// left out, no file for a reflog without entries, no tab before an empty message), and
    /// the `refs/<x>` directory of each reflog's ref, which git leaves behind.
    ///
    /// git writes the refs and the reflog entries in one files transaction, whose
    /// directory/file check counts a reflog's name as a ref's: a reflog under a ref's name
    /// (the reflog of a deleted `refs/heads/a/b` beside a ref `refs/heads/a`), or the other
    /// way round, cannot be written, and nothing is.
    ///
    /// Errors: [`ErrorKind::NameConflict`] for such a pair (nothing written),
    /// [`ErrorKind::Io`], and the errors of reading the stack.
    pub fn export_files(&self, git_dir: &Path, objects: &dyn ObjectLookup) -> Result<()> {
        self.check_files_names()?;
        for d in ["refs/heads", "refs/tags"] {
            let p = git_dir.join(d);
            std::fs::create_dir_all(&p).map_err(|e| io(e, "create directory", &p))?;
        }
        self.export_refs(git_dir, objects)?;
        self.export_reflogs(git_dir)
    }

    /// [`RefDb::export_files`]'s refusal: a live ref's or a reflog's (with an entry) name
    /// that is a directory of another's.
    fn check_files_names(&self) -> Result<()> {
        let mut names = BTreeSet::new();
        let mut refs = self.refs()?;
        while let Some(r) = refs.next_record()? {
            if !r.is_deletion() {
                names.insert(r.refname.clone());
            }
        }
        let mut logs = self.stack.merged().logs()?;
        while let Some(l) = logs.next_record()? {
            if !l.is_deletion() && !l.is_existence_marker() {
                names.insert(l.refname.clone());
            }
        }
        for name in &names {
            let mut dirs = (0..name.len()).filter(|&i| name[i] == b'/');
            if let Some(i) = dirs.find(|&i| names.contains(&name[..i])) {
                return Err(Error::new(
                    ErrorKind::NameConflict,
                    format!(
                        "cannot write '{}' and '{}' as files: one is a directory of the other",
                        show(name),
                        show(&name[..i])
                    ),
                ));
            }
        }
        Ok(())
    }

    /// [`RefDb::export_files`]'s refs: `packed-refs`, and loose files for symrefs and root
    /// refs.
    fn export_refs(&self, git_dir: &Path, objects: &dyn ObjectLookup) -> Result<()> {
        let mut packed = b"# pack-refs with: peeled fully-peeled sorted \n".to_vec();
        let mut refs = self.refs()?;
        while let Some(r) = refs.next_record()? {
            match &r.value {
                RefValue::Symref(t) => {
                    write_file(git_dir, &r.refname, &[b"ref: ", &t[..], b"\n"].concat())?
                }
                RefValue::Object(id) | RefValue::Peeled { object: id, .. } => {
                    if is_root_ref(&r.refname) {
                        write_file(git_dir, &r.refname, format!("{id}\n").as_bytes())?;
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
        write_file(git_dir, b"packed-refs", &packed)
    }

    /// [`RefDb::export_files`]'s reflogs: one pass over the merged logs (name order, newest
    /// first per name), one reflog at a time, instead of a seek per reflog.
    fn export_reflogs(&self, git_dir: &Path) -> Result<()> {
        let mut it = self.stack.merged().logs()?;
        let mut name: Vec<u8> = Vec::new();
        let mut entries: Vec<LogRecord> = Vec::new();
        while let Some(l) = it.next_record()? {
            if l.refname != name {
                export_reflog(git_dir, &name, &entries)?;
                entries.clear();
                name.clone_from(&l.refname);
            }
            if !l.is_deletion() && !l.is_existence_marker() {
                entries.push(l.clone());
            }
        }
        export_reflog(git_dir, &name, &entries)
    }
}

/// Write the reflog of `name` whose live `entries` are newest first, oldest line first;
/// no file when no entry is left (those with null old and new ids are left out).
fn export_reflog(git_dir: &Path, name: &[u8], entries: &[LogRecord]) -> Result<()> {
    let mut lines = Vec::new();
    for l in entries.iter().rev() {
        let Some(u) = l.update() else { continue };
        if !(u.old_id.is_null() && u.new_id.is_null()) {
            write_log_line(&mut lines, u);
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    write_file(git_dir, &[&b"logs/"[..], name].concat(), &lines)?;
    // git writes reflog entries under a lock of the ref, whose directories it then prunes
    // down to the first two components: `refs/<x>` stays.
    let parts: Vec<&[u8]> = name.splitn(3, |&b| b == b'/').collect();
    if parts.len() == 3 {
        let d = path_of(git_dir, &[parts[0], b"/", parts[1]].concat());
        std::fs::create_dir_all(&d).map_err(|e| io(e, "create directory", &d))?;
    }
    Ok(())
}

/// Write the file of `name` under `git_dir`, creating its directories.
fn write_file(git_dir: &Path, name: &[u8], content: &[u8]) -> Result<()> {
    let p = path_of(git_dir, name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(e, "create directory", parent))?;
    }
    std::fs::write(&p, content).map_err(|e| io(e, "write", &p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashId;
    use crate::refdb::{AssumeCommits, RefDbOptions};

    /// A files repository of `files` (path, content) in a scratch directory, read back.
    fn files_repo(files: &[(&str, String)]) -> (tempfile::TempDir, FilesRefs) {
        let src = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let p = src.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let read = FilesRefs::read(src.path(), HashId::Sha1).unwrap();
        (src, read)
    }

    /// A new stack with `files` imported into it.
    fn imported(files: &[(&str, String)]) -> (tempfile::TempDir, RefDb) {
        let stack = tempfile::tempdir().unwrap();
        let mut db = RefDb::open(stack.path(), RefDbOptions::default()).unwrap();
        db.import(&files_repo(files).1, &AssumeCommits).unwrap();
        (stack, db)
    }

    /// git's migration (`migrate_one_reflog_entry`) gives every reflog entry an update index,
    /// an entry whose new id is null too, though that one writes no record.
    #[test]
    fn an_entry_with_a_null_new_id_spends_its_update_index() {
        let (z, a, b) = ("0".repeat(40), "1".repeat(40), "2".repeat(40));
        let (_stack, db) = imported(&[
            ("HEAD", format!("{b}\n")),
            (
                "logs/HEAD",
                format!(
                    "{z} {a} C O <c@x> 5 +0100\tone\n{a} {z} C O <c@x> 6 +0100\tgone\n\
                     {z} {b} C O <c@x> 7 +0100\tback\n"
                ),
            ),
        ]);
        let mut logs = db.stack.merged().logs().unwrap();
        let mut seen = Vec::new();
        while let Some(l) = logs.next_record().unwrap() {
            seen.push((l.refname.clone(), l.update_index));
        }
        assert_eq!(seen, [(b"HEAD".to_vec(), 3), (b"HEAD".to_vec(), 1)]);
    }

    /// A reflog that holds only its existence marker becomes no file, so it is in nobody's
    /// way: git migrates a ref under it, and one above it.
    #[test]
    fn an_empty_reflog_does_not_stop_an_export() {
        let a = "1".repeat(40);
        for (reflog, r) in [
            ("refs/heads/a", "refs/heads/a/b"),
            ("refs/heads/a/b", "refs/heads/a"),
        ] {
            let (_stack, mut db) = imported(&[("HEAD", format!("{a}\n")), (r, format!("{a}\n"))]);
            db.create_reflog(reflog.as_bytes()).unwrap();
            let out = tempfile::tempdir().unwrap();
            db.export_files(out.path(), &AssumeCommits).unwrap();
            assert!(!out.path().join("logs").join(reflog).exists(), "{reflog}");
        }
    }

    /// git's export_files refusal (refs.c `refs_verify_refnames_available` over the
    /// migration's one transaction): a reflog under a ref's name stops the export before a
    /// file is written.
    #[test]
    fn reflog_under_a_ref_is_not_exported() {
        let (z, a) = ("0".repeat(40), "1".repeat(40));
        let (_stack, db) = imported(&[
            ("HEAD", "ref: refs/heads/main\n".to_string()),
            ("refs/heads/a", format!("{a}\n")),
            (
                "logs/refs/heads/a/b",
                format!("{z} {a} C O <c@x> 5 +0100\tgone\n"),
            ),
        ]);
        let out = tempfile::tempdir().unwrap();
        let e = db.export_files(out.path(), &AssumeCommits).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NameConflict, "{e}");
        assert!(
            e.to_string()
                .contains("'refs/heads/a/b' and 'refs/heads/a'"),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
    }

    /// Files → stack → files: what is read back is what was read first (refs, reflog
    /// entries with their fields), in git's layout.
    #[test]
    fn export_reads_back_as_imported() {
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
        let (_src, read) = files_repo(&files);
        let (_stack, db) = imported(&files);
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
                        .map(|e| LogUpdate {
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
        // UTC is `+0000` in a reflog line, as git's files backend writes it.
        let log = std::fs::read_to_string(out.path().join("logs/refs/custom/x")).unwrap();
        assert_eq!(log, format!("{z} {a} C O <c@x> 7 +0000\tcustom msg\n"));
        assert!(out.path().join("refs/custom").is_dir() && out.path().join("refs/tags").is_dir());
        assert_eq!(
            std::fs::read_to_string(out.path().join("refs/heads/sym")).unwrap(),
            "ref: refs/heads/main\n"
        );
    }
}
