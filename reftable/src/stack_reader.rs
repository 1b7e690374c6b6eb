//! Reading a stack: `tables.list` and the tables it names, from a directory (read-only: no
//! directory is created, no lock taken) or from memory. [`Stack`](crate::Stack) loads its
//! tables through the same parser and table opener; tools that only read use
//! [`StackReader`].
//!
//! ```
//! use reftable::{ObjectId, RefRecord, RefValue, StackReader, Writer, WriteOptions};
//!
//! let mut w = Writer::new(Vec::new(), WriteOptions::default());
//! w.set_limits(1, 1).unwrap();
//! let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
//! w.add_ref(&RefRecord::new("refs/heads/main", 1, RefValue::Object(id))).unwrap();
//! let table = w.finish().unwrap();
//!
//! let name = "0x000000000001-0x000000000001-01234567.ref";
//! let stack = StackReader::from_memory(
//!     format!("{name}\n").as_bytes(),
//!     |n| (n == name).then(|| table.clone()),
//!     None,
//! ).unwrap();
//! assert!(stack.merged().read_ref(b"refs/heads/main").unwrap().is_some());
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::bytes::read_regular;
use crate::error::{Error, ErrorKind, Result};
use crate::hash::HashId;
use crate::lock::random_u32;
use crate::merged::MergedTable;
use crate::table::Table;
use crate::tables_list::parse_tables_list;

/// Open the tables `names` lists with `open`, reusing those `reuse` has open already.
pub(crate) fn open_tables(
    names: &[String],
    mut open: impl FnMut(&str) -> Result<Table>,
    reuse: impl Fn(&str) -> Option<Table>,
) -> Result<Vec<Table>> {
    names
        .iter()
        .map(|n| match reuse(n) {
            Some(t) => Ok(t),
            None => open(n),
        })
        .collect()
}

/// Open the table `name` of the stack in `dir` (a regular file; see [`Table::open`]). A
/// missing file is [`ErrorKind::NotExist`], "listed in tables.list but missing".
pub(crate) fn open_listed(dir: &Path, name: &str) -> Result<Table> {
    let path = dir.join(name);
    Table::open(&path).map_err(|e| {
        if e.kind() == ErrorKind::NotExist {
            Error::new(ErrorKind::NotExist, "listed in tables.list but missing").in_file(&path)
        } else {
            e
        }
    })
}

/// How long a reader retries when a table is missing because a writer compacted the stack
/// meanwhile (git retries for up to 3 seconds).
pub(crate) const RELOAD_DEADLINE: Duration = Duration::from_secs(3);

/// Load a stack: read the list (`read_list` gives the names and whatever else the caller
/// keeps of that read), then open its tables. When a table is missing and a second read of
/// the list names other tables, a writer replaced them meanwhile: try again, with growing,
/// jittered delays, for up to [`RELOAD_DEADLINE`]. A table missing from an unchanged list is
/// missing for good.
pub(crate) fn load_retrying<P, T>(
    read_list: impl FnMut() -> Result<(Vec<String>, P)>,
    open: impl FnMut(&[String]) -> Result<T>,
) -> Result<(Vec<String>, P, T)> {
    load_retrying_until(Instant::now() + RELOAD_DEADLINE, read_list, open)
}

/// [`load_retrying`] with its deadline given: at least three tries, then none past it.
fn load_retrying_until<P, T>(
    deadline: Instant,
    mut read_list: impl FnMut() -> Result<(Vec<String>, P)>,
    mut open: impl FnMut(&[String]) -> Result<T>,
) -> Result<(Vec<String>, P, T)> {
    let mut delay_ms = 0u64;
    let mut tries = 0u32;
    loop {
        let (names, pin) = read_list()?;
        match open(&names) {
            Ok(t) => return Ok((names, pin, t)),
            Err(e) if e.kind() == ErrorKind::NotExist => {
                tries += 1;
                if read_list()?.0 == names || (tries >= 3 && Instant::now() > deadline) {
                    return Err(e);
                }
                delay_ms = next_delay(delay_ms, random_u32());
                std::thread::sleep(Duration::from_millis(delay_ms));
            }
            Err(e) => return Err(e),
        }
    }
}

/// The next retry delay in milliseconds: the last one, plus a random share of it
/// (`jitter / 2^32`), plus 1.
fn next_delay(last_ms: u64, jitter: u32) -> u64 {
    last_ms + last_ms * u64::from(jitter) / (1u64 << 32) + 1
}

/// Reload the stack in `dir`: `read_list` reads `tables.list` (and whatever the caller keeps
/// of that read); tables of `old` (named `old_names`) still listed are reused, the others
/// opened, retrying as [`load_retrying`] does. Returns the names, what `read_list` kept, the
/// tables and how many were opened.
pub(crate) fn reload_tables<P>(
    dir: &Path,
    old_names: &[String],
    old: &[Table],
    read_list: impl FnMut() -> Result<(Vec<String>, P)>,
) -> Result<(Vec<String>, P, Vec<Table>, u64)> {
    // By name through a map: a stack of many tables reloads in linear time.
    let by_name: std::collections::HashMap<&str, &Table> =
        old_names.iter().map(String::as_str).zip(old).collect();
    let reuse = |n: &str| by_name.get(n).map(|t| (*t).clone());
    let mut opened = 0u64;
    let (names, pin, tables) = load_retrying(read_list, |names| {
        open_tables(
            names,
            |n| {
                opened += 1;
                open_listed(dir, n)
            },
            reuse,
        )
    })?;
    Ok((names, pin, tables, opened))
}

/// Read `tables.list` in `dir`: a regular file (never a FIFO or device), its size bounding
/// the read; missing means an empty stack.
pub(crate) fn read_tables_list(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join("tables.list");
    match read_regular(&path) {
        Ok(content) => parse_tables_list(&content).map_err(|e| e.in_file(&path)),
        Err(e) if e.kind() == ErrorKind::NotExist => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// A stack opened for reading only.
#[derive(Debug)]
pub struct StackReader {
    /// The stack directory; `None` for a stack from memory.
    dir: Option<PathBuf>,
    names: Vec<String>,
    merged: MergedTable,
    hash_hint: Option<HashId>,
}

fn merged_of(tables: Vec<Table>, hint: Option<HashId>) -> Result<MergedTable> {
    let hash = tables.first().map(Table::hash).or(hint).unwrap_or_default();
    MergedTable::new(tables, hash)
}

impl StackReader {
    /// Open the stack in `dir` read-only. A missing `tables.list` is an empty stack. When a
    /// listed table is missing because a writer replaced it meanwhile, the list is read
    /// again (for up to about 3 seconds), as git's readers do. `hash` is the stack's hash
    /// when it has no table to say so (SHA-1 if `None`); every table must use one hash.
    pub fn open(dir: impl AsRef<Path>, hash: Option<HashId>) -> Result<StackReader> {
        let mut r = StackReader {
            dir: Some(dir.as_ref().to_path_buf()),
            names: Vec::new(),
            merged: MergedTable::new(Vec::new(), hash.unwrap_or_default())?,
            hash_hint: hash,
        };
        r.reload()?;
        Ok(r)
    }

    /// A stack from memory: `list` is `tables.list`, `file` gives a table's bytes by name
    /// (`None`: missing).
    pub fn from_memory(
        list: &[u8],
        mut file: impl FnMut(&str) -> Option<Vec<u8>>,
        hash: Option<HashId>,
    ) -> Result<StackReader> {
        let names = parse_tables_list(list).map_err(|e| e.in_file("tables.list"))?;
        let tables = open_tables(
            &names,
            |n| match file(n) {
                Some(bytes) => Table::from_bytes(n, bytes),
                None => Err(Error::new(
                    ErrorKind::NotExist,
                    "table named in tables.list is missing",
                )
                .in_file(n)),
            },
            |_| None,
        )?;
        Ok(StackReader {
            dir: None,
            names,
            merged: merged_of(tables, hash)?,
            hash_hint: hash,
        })
    }

    /// Read `tables.list` again and open what changed (tables still listed are reused). On
    /// failure the reader keeps what it had. A stack from memory does not change.
    pub fn reload(&mut self) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let (names, (), tables, _) = reload_tables(dir, &self.names, self.merged.tables(), || {
            Ok((read_tables_list(dir)?, ()))
        })?;
        self.merged = merged_of(tables, self.hash_hint)?;
        self.names = names;
        Ok(())
    }

    /// The merged view of the tables.
    pub fn merged(&self) -> &MergedTable {
        &self.merged
    }

    /// The tables, oldest first.
    pub fn tables(&self) -> &[Table] {
        self.merged.tables()
    }

    /// The table file names, as `tables.list` gives them.
    pub fn table_names(&self) -> &[String] {
        &self.names
    }

    /// The stack's hash (its tables', else the one given when opening).
    pub fn hash(&self) -> HashId {
        self.merged.hash()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_list_names_are_checked() {
        assert_eq!(
            parse_tables_list(b"a.ref\n\nb.ref\n").unwrap(),
            ["a.ref", "b.ref"]
        );
        assert_eq!(parse_tables_list(b"a.ref").unwrap(), ["a.ref"]);
        for bad in [
            &b"../x.ref\n"[..],
            b"/etc/passwd\n",
            b"sub/t.ref\n",
            b"..\n",
            b".\n",
            b"a\\b\n",
            b"a.ref\nb.ref\na.ref\n",
        ] {
            assert_eq!(
                parse_tables_list(bad).unwrap_err().kind(),
                ErrorKind::Format,
                "{bad:?}"
            );
        }
    }

    fn missing() -> Error {
        Error::new(ErrorKind::NotExist, "listed in tables.list but missing")
    }

    /// A list that names other tables on every read, and opens that fail `fails` times.
    #[allow(clippy::type_complexity)]
    fn changing(
        fails: usize,
    ) -> (
        impl FnMut() -> Result<(Vec<String>, ())>,
        impl FnMut(&[String]) -> Result<usize>,
        std::rc::Rc<std::cell::Cell<usize>>,
    ) {
        let reads = std::rc::Rc::new(std::cell::Cell::new(0));
        let opens = std::rc::Rc::new(std::cell::Cell::new(0));
        let r = reads.clone();
        let read = move || {
            r.set(r.get() + 1);
            Ok((vec![format!("{}.ref", r.get())], ()))
        };
        let o = opens.clone();
        let open = move |_: &[String]| {
            o.set(o.get() + 1);
            if o.get() <= fails {
                Err(missing())
            } else {
                Ok(o.get())
            }
        };
        (read, open, opens)
    }

    #[test]
    fn a_missing_table_in_a_list_that_changed_is_retried() {
        // The list changes between reads: a writer compacted meanwhile. Retried past three
        // tries while the deadline is ahead.
        let (read, open, opens) = changing(5);
        let (names, (), t) = load_retrying(read, open).unwrap();
        assert_eq!((opens.get(), t), (6, 6));
        assert_eq!(names, ["11.ref"]);
        // Past the deadline: three tries, then the error.
        let (read, open, opens) = changing(usize::MAX);
        let past = Instant::now() - Duration::from_millis(1);
        let e = load_retrying_until(past, read, open).unwrap_err();
        assert_eq!((e.kind(), opens.get()), (ErrorKind::NotExist, 3));
    }

    #[test]
    fn a_missing_table_in_an_unchanged_list_or_another_error_is_final() {
        let (mut reads, mut opens) = (0, 0);
        let e = load_retrying(
            || {
                reads += 1;
                Ok((vec!["a.ref".to_string()], ()))
            },
            |_| -> Result<()> {
                opens += 1;
                Err(missing())
            },
        )
        .unwrap_err();
        assert_eq!((e.kind(), reads, opens), (ErrorKind::NotExist, 2, 1));
        let mut reads = 0;
        let e = load_retrying(
            || {
                reads += 1;
                Ok((vec![format!("{reads}.ref")], ()))
            },
            |_| -> Result<()> { Err(Error::format("bad table")) },
        )
        .unwrap_err();
        assert_eq!((e.kind(), reads), (ErrorKind::Format, 1));
    }

    #[test]
    fn retry_delays_grow_with_jitter() {
        assert_eq!(next_delay(0, u32::MAX), 1);
        assert_eq!(next_delay(10, 0), 11);
        assert_eq!(next_delay(10, 1 << 31), 16);
        assert_eq!(next_delay(10, u32::MAX), 20);
    }

    #[test]
    fn a_listed_table_that_is_missing_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let e = open_listed(dir.path(), "0x1-0x1-0.ref").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotExist);
        assert!(
            e.message().contains("listed in tables.list but missing"),
            "{e}"
        );
        std::fs::create_dir(dir.path().join("dir.ref")).unwrap();
        let e = open_listed(dir.path(), "dir.ref").unwrap_err();
        assert!(e.message().contains("not a regular file"), "{e}");
    }

    /// A directory without `tables.list` is an empty stack of the hash given; a stack's
    /// names, tables and hash are what its list and tables say.
    #[test]
    fn readers_report_names_tables_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let empty = StackReader::open(dir.path(), Some(HashId::Sha256)).unwrap();
        assert!(empty.tables().is_empty() && empty.table_names().is_empty());
        assert_eq!(empty.hash(), HashId::Sha256);

        let opts = crate::WriteOptions {
            hash: HashId::Sha256,
            ..crate::WriteOptions::default()
        };
        let mut w = crate::Writer::new(Vec::new(), opts);
        w.set_limits(1, 1).unwrap();
        let id = crate::ObjectId::from_bytes(&[1; 32]).unwrap();
        w.add_ref(&crate::RefRecord::new(
            "refs/heads/a",
            1,
            crate::RefValue::Object(id),
        ))
        .unwrap();
        let bytes = w.finish().unwrap();
        let name = "0x000000000001-0x000000000001-00000001.ref";
        let r = StackReader::from_memory(
            format!("{name}\n").as_bytes(),
            |n| (n == name).then(|| bytes.clone()),
            None,
        )
        .unwrap();
        assert_eq!(r.table_names(), [name]);
        assert_eq!(r.tables().len(), 1);
        assert_eq!(r.hash(), HashId::Sha256);
    }

    #[test]
    fn special_files_are_never_read() {
        let dir = tempfile::tempdir().unwrap();
        // tables.list as a link to a device that never ends.
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("tables.list")).unwrap();
        let e = StackReader::open(dir.path(), None).unwrap_err();
        assert!(e.message().contains("not a regular file"), "{e}");
    }
}
