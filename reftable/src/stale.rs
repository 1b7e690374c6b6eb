//! Files a killed writer leaves in a stack directory: `tables.list.lock` (an addition or a
//! compaction held it), `<table>.ref.lock` (a compaction locked the table) and
//! `<stem>.temp.XXXXXX` (a table being written). git and this library share the protocol, so
//! such files block every later writer (or, for table locks, keep auto-compaction off those
//! tables) until someone removes them. [`remove_stale`] removes them safely: only files older
//! than a threshold, and (where `/proc` shows open files, as on Linux) none that a live
//! process holds open.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};

/// What [`remove_stale`] removes. New options may come in a minor release: build them from
/// the defaults with the method of each field.
///
/// ```
/// use std::time::Duration;
/// let opts = reftable::stale::StaleOptions::default().min_age(Duration::ZERO).dry_run(true);
/// assert!(opts.dry_run);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StaleOptions {
    /// Only files last modified at least this long ago. git holds `tables.list.lock` for as
    /// long as a transaction or a compaction runs, and a compaction of a big stack can take
    /// minutes: the default is 10 minutes.
    pub min_age: Duration,
    /// Report what would be removed, remove nothing.
    pub dry_run: bool,
}

setters!(StaleOptions {
    min_age: Duration,
    dry_run: bool
});

impl Default for StaleOptions {
    fn default() -> StaleOptions {
        StaleOptions {
            min_age: Duration::from_secs(600),
            dry_run: false,
        }
    }
}

/// Why a candidate was left in place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeptBecause {
    /// Younger than [`StaleOptions::min_age`] (its age).
    Young(Duration),
    /// A live process has it open (process id).
    HeldOpen(u32),
}

/// What [`remove_stale`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StaleReport {
    /// Removed (or, in a dry run, to be removed).
    pub removed: Vec<PathBuf>,
    /// Left in place, and why.
    pub kept: Vec<(PathBuf, KeptBecause)>,
}

/// Whether `name` is a file a writer makes in a stack directory and removes (or renames)
/// before it finishes.
pub fn is_writer_file(name: &str) -> bool {
    name == "tables.list.lock"
        || (name.starts_with("0x") && (name.ends_with(".ref.lock") || name.contains(".temp.")))
}

/// Remove the lock and temporary files of killed writers from the stack directory `dir`.
///
/// ```
/// use std::time::Duration;
/// use reftable::stale::{remove_stale, StaleOptions};
///
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("tables.list.lock"), b"").unwrap();
/// let opts = StaleOptions::default().min_age(Duration::ZERO).dry_run(true);
/// let found = remove_stale(dir.path(), &opts).unwrap();
/// assert_eq!(found.removed.len(), 1);
/// assert!(dir.path().join("tables.list.lock").exists(), "a dry run removes nothing");
/// ```
pub fn remove_stale(dir: &Path, opts: &StaleOptions) -> Result<StaleReport> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(e, "read stack directory").in_file(dir))?;
    let now = SystemTime::now();
    let mut candidates = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_writer_file(&name) {
            continue;
        }
        // Never follow a symlink, never touch a directory or a special file.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .unwrap_or_default();
        candidates.push((entry.path(), age));
    }
    candidates.sort();
    let holders = if candidates.is_empty() {
        Vec::new()
    } else {
        open_files(&candidates.iter().map(|(p, _)| p.clone()).collect())
    };
    let mut report = StaleReport::default();
    for (path, age) in candidates {
        if age < opts.min_age {
            report.kept.push((path, KeptBecause::Young(age)));
        } else if let Some((_, pid)) = holders.iter().find(|(p, _)| *p == path) {
            report.kept.push((path, KeptBecause::HeldOpen(*pid)));
        } else {
            if !opts.dry_run {
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(Error::io(e, "remove stale file").in_file(&path)),
                }
            }
            report.removed.push(path);
        }
    }
    Ok(report)
}

/// Which of `paths` some process has open, from `/proc/<pid>/fd` (empty where there is no
/// `/proc` or it cannot be read: then age alone decides).
fn open_files(paths: &HashSet<PathBuf>) -> Vec<(PathBuf, u32)> {
    let canonical: Vec<(PathBuf, PathBuf)> = paths
        .iter()
        .filter_map(|p| p.canonicalize().ok().map(|c| (c, p.clone())))
        .collect();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if let Some((_, orig)) = canonical.iter().find(|(c, _)| *c == target) {
                    out.push((orig.clone(), pid));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_writer_files_old_enough_and_not_held_go() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let names = [
            "tables.list.lock",
            "0x000000000001-0x000000000002-01234567.ref.lock",
            "0x000000000003-0x000000000003-89abcdef.temp.a1b2c3",
            "0x000000000001-0x000000000002-01234567.ref",
            "tables.list",
            "other.lock",
        ];
        for n in names {
            std::fs::write(d.join(n), b"x").unwrap();
        }
        // A temp file this process holds open stays.
        let held = d.join("0x000000000004-0x000000000004-00000000.temp.ffffff");
        let _open = std::fs::File::create(&held).unwrap();
        let young = remove_stale(d, &StaleOptions::default()).unwrap();
        assert!(young.removed.is_empty());
        assert_eq!(young.kept.len(), 4);
        let opts = StaleOptions {
            min_age: Duration::ZERO,
            dry_run: false,
        };
        let r = remove_stale(d, &opts).unwrap();
        let removed: Vec<String> = r
            .removed
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(removed, [names[1], names[2], names[0]]);
        if Path::new("/proc/self/fd").exists() {
            assert_eq!(
                r.kept,
                [(held.clone(), KeptBecause::HeldOpen(std::process::id()))]
            );
        }
        for n in &names[3..] {
            assert!(d.join(n).exists(), "{n} must stay");
        }
    }

    /// A dry run reports what would go and removes nothing; only a table's lock or temporary
    /// file (a name starting with a table's `0x` range) or the list's lock is a writer's, and
    /// a file just made is young until the minimum age has passed.
    #[test]
    fn a_dry_run_removes_nothing_and_only_table_named_files_count() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let names = [
            "0x000000000001-0x000000000001-01234567.ref.lock",
            "notes.ref.lock",
            "backup.temp.1",
        ];
        for n in names {
            std::fs::write(d.join(n), b"x").unwrap();
        }
        assert!(is_writer_file(names[0]) && is_writer_file("tables.list.lock"));
        assert!(!is_writer_file(names[1]) && !is_writer_file(names[2]));
        let dry = StaleOptions {
            min_age: Duration::ZERO,
            dry_run: true,
        };
        let r = remove_stale(d, &dry).unwrap();
        assert_eq!(r.removed, [d.join(names[0])]);
        for n in names {
            assert!(d.join(n).exists(), "{n} must stay");
        }
        // Ages set on the files, not left to the clock: half an hour is young for an hour's
        // limit, two hours is not.
        let aged = |name: &str, secs: u64| {
            let f = std::fs::File::options()
                .write(true)
                .open(d.join(name))
                .unwrap();
            let when = std::time::SystemTime::now() - Duration::from_secs(secs);
            f.set_modified(when).unwrap();
        };
        aged(names[0], 1800);
        let hour = StaleOptions {
            min_age: Duration::from_secs(3600),
            dry_run: false,
        };
        let r = remove_stale(d, &hour).unwrap();
        assert!(r.removed.is_empty());
        assert!(matches!(r.kept[..], [(_, KeptBecause::Young(_))]));
        aged(names[0], 7200);
        let r = remove_stale(d, &hour).unwrap();
        assert_eq!(r.removed, [d.join(names[0])]);
        assert!(!d.join(names[0]).exists());
    }
}
