//! The stack of tables git keeps in `.git/reftable/`: `tables.list` names the tables, oldest
//! first; additions write a new table and rewrite the list under `tables.list.lock`;
//! compaction merges a range of tables into one.

use std::collections::HashSet;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::codec::format::{footer_size, header_size};
use crate::codec::record::{LogRecord, Record, RefRecord};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::HashId;
use crate::lock::{set_permissions, LockFile, TempFile};
use crate::merged::{MergedIter, MergedTable};
use crate::stack_reader::{read_tables_list, reload_tables};
use crate::stats::{Stats, StatsSink};
use crate::table::Table;
use crate::tables_list::{parse_tables_list, table_name_stem};
use crate::writer::{WriteOptions, Writer};

/// The writer handed to the callbacks that write a table into a stack.
pub type TableWriter = Writer<BufWriter<File>>;

/// Options of a stack. New options may come in a minor release: build them from the
/// defaults with the method of each field.
///
/// ```
/// use reftable::{StackOptions, WriteOptions};
///
/// let opts = StackOptions::default()
///     .fsync(false)
///     .write(WriteOptions::default().block_size(1024));
/// assert_eq!((opts.fsync, opts.write.block_size), (false, 1024));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StackOptions {
    /// Options of the tables the stack writes (including the hash of the stack).
    pub write: WriteOptions,
    /// Compact automatically after each addition (git's geometric rule).
    pub auto_compaction: bool,
    /// The geometric factor of auto-compaction; 0 means 2.
    pub geometric_factor: u8,
    /// How long to wait for `tables.list.lock`: `None` waits forever, zero fails at once.
    /// git's ref backend uses 100 ms.
    pub lock_timeout: Option<Duration>,
    /// Permission bits for new tables and `tables.list` (Unix), e.g. `0o666`.
    pub default_permissions: Option<u32>,
    /// fsync tables and `tables.list` before they are renamed into place.
    pub fsync: bool,
    /// Skip tombstones inside the merged iterators, as git 2.47 does. Off by default: it
    /// makes lookups after mass deletions scan every tombstone past the wanted key (git's
    /// quadratic bug, fixed by commit 146a946321). For comparisons and complexity tests.
    pub suppress_deletions: bool,
}

setters!(StackOptions {
    write: WriteOptions,
    auto_compaction: bool,
    geometric_factor: u8,
    lock_timeout: Option<Duration>,
    default_permissions: Option<u32>,
    fsync: bool,
    suppress_deletions: bool,
});

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            write: WriteOptions::default(),
            auto_compaction: true,
            geometric_factor: 2,
            lock_timeout: Some(Duration::from_millis(100)),
            default_permissions: None,
            fsync: true,
            suppress_deletions: false,
        }
    }
}

impl StackOptions {
    /// The stack's hash.
    pub fn hash(&self) -> HashId {
        self.write.hash
    }
}

/// Which reflog entries compaction drops: `LogExpiry::default().time(cutoff)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogExpiry {
    /// Drop entries older than this time (seconds since the epoch); 0 keeps all.
    pub time: u64,
    /// Drop entries with a smaller update index; 0 keeps all.
    pub min_update_index: u64,
}

setters!(LogExpiry {
    time: u64,
    min_update_index: u64
});

impl LogExpiry {
    /// Whether compaction drops `l`: older than `time`, or below `min_update_index`.
    fn drops(&self, l: &LogRecord) -> bool {
        let time = l.update().map_or(0, |u| u.committer.time);
        (self.min_update_index > 0 && l.update_index < self.min_update_index)
            || (self.time > 0 && time < self.time)
    }
}

/// Counters of compaction work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactionStats {
    /// Compactions attempted.
    pub attempts: u64,
    /// Compactions that failed because of a lock held by someone else.
    pub failures: u64,
    /// Bytes of the tables compacted.
    pub bytes: u64,
    /// Records written by compaction.
    pub entries_written: u64,
}

/// A stack of reftables in a directory.
///
/// ```
/// use reftable::{ObjectId, RefRecord, RefValue, Stack, StackOptions};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut stack = Stack::open(dir.path(), StackOptions::default()).unwrap();
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// stack.add(|w, ui| {
///     w.set_limits(ui, ui)?;
///     w.add_ref(&RefRecord::new("refs/heads/main", ui, RefValue::Object(id)))
/// }).unwrap();
/// assert_eq!(stack.merged().read_ref(b"refs/heads/main").unwrap().unwrap().update_index, 1);
/// ```
#[derive(Debug)]
pub struct Stack {
    dir: PathBuf,
    list_path: PathBuf,
    opts: StackOptions,
    names: Vec<String>,
    merged: MergedTable,
    /// `tables.list` as loaded, kept open so that its inode cannot be reused while we compare
    /// identities (git's fix 4f36b8597c), with its device and inode.
    list_pin: Option<ListPin>,
    compaction: CompactionStats,
    /// Counters of tables that left the stack (so stats never go back).
    retired: Stats,
    /// The stack's own counters (tables opened, `tables.list` reads) and those of every
    /// merged iterator over its views.
    own: Arc<StatsSink>,
}

/// An open `tables.list` and the identity of the file it is.
type ListPin = (File, FileId);

/// Which file a path names, and the size and modification time it had. Writers replace
/// `tables.list` by renaming a new file over it, and the pin holds the old one open, so its
/// inode cannot be reused while pinned: the same device and inode mean the same list. The
/// size and time also catch a list rewritten in place, which git never does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

fn meta_id(m: &std::fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(FileId {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

fn file_id(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().as_ref().and_then(meta_id)
}

/// git's `suggest_compaction_segment`: the range `[start, end)` of tables to merge so that
/// table sizes form a geometric sequence again (each at least `factor` times the next).
/// Returns `None` when nothing needs compacting.
pub fn suggest_compaction_segment(sizes: &[u64], factor: u8) -> Option<(usize, usize)> {
    let factor = u64::from(if factor == 0 { 2 } else { factor });
    let n = sizes.len();
    if n <= 1 {
        return None;
    }
    let mut end = 0;
    let mut bytes = 0u64;
    let mut i = n - 1;
    while i > 0 {
        if sizes[i - 1] < sizes[i].saturating_mul(factor) {
            end = i + 1;
            bytes = sizes[i];
            break;
        }
        i -= 1;
    }
    let mut start = 0;
    while i > 0 {
        let curr = bytes;
        bytes = bytes.saturating_add(sizes[i - 1]);
        if sizes[i - 1] < curr.saturating_mul(factor) {
            start = i - 1;
        }
        i -= 1;
    }
    (end > start).then_some((start, end))
}

impl Stack {
    /// Open the stack in the directory `dir` and load its tables. A directory without
    /// `tables.list` is an empty stack, as git reads it.
    ///
    /// Errors: [`ErrorKind::NotExist`] when `dir` is missing
    /// ([`Stack::open_or_create`] creates it).
    pub fn open(dir: impl AsRef<Path>, opts: StackOptions) -> Result<Stack> {
        let dir = dir.as_ref();
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => Stack::load(dir.to_path_buf(), opts),
            Ok(_) => Err(
                Error::new(ErrorKind::Io, "the stack directory is not a directory").in_file(dir),
            ),
            Err(e) => Err(Error::io(e, "open stack directory").in_file(dir)),
        }
    }

    /// Open the stack in `dir`, creating the directory (and its parents) when missing, as
    /// `git init --ref-format=reftable` does; an existing stack is opened as it is.
    pub fn open_or_create(dir: impl AsRef<Path>, opts: StackOptions) -> Result<Stack> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(e, "create stack directory").in_file(dir))?;
        Stack::load(dir.to_path_buf(), opts)
    }

    fn load(dir: PathBuf, opts: StackOptions) -> Result<Stack> {
        let mut stack = Stack {
            list_path: dir.join("tables.list"),
            dir,
            opts,
            names: Vec::new(),
            merged: MergedTable::new(Vec::new(), opts.hash())?,
            list_pin: None,
            compaction: CompactionStats::default(),
            retired: Stats::default(),
            own: Arc::default(),
        };
        stack.reload()?;
        Ok(stack)
    }

    /// The stack directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The options.
    pub fn options(&self) -> &StackOptions {
        &self.opts
    }

    /// Change the options used by later writes (e.g. to switch auto-compaction).
    pub fn set_options(&mut self, opts: StackOptions) -> Result<()> {
        if opts.hash() != self.opts.hash() {
            return Err(Error::api("the hash of an open stack cannot change"));
        }
        self.opts = opts;
        self.merged.set_suppress_deletions(opts.suppress_deletions);
        Ok(())
    }

    /// The merged view of the loaded tables.
    pub fn merged(&self) -> &MergedTable {
        &self.merged
    }

    /// The loaded tables, oldest first.
    pub fn tables(&self) -> &[Table] {
        self.merged.tables()
    }

    /// File names of the loaded tables, oldest first.
    pub fn table_names(&self) -> &[String] {
        &self.names
    }

    /// The update index the next addition gets: the last table's maximum plus one.
    pub fn next_update_index(&self) -> u64 {
        self.tables().last().map_or(1, |t| t.max_update_index() + 1)
    }

    /// Compaction counters.
    pub fn compaction_stats(&self) -> CompactionStats {
        self.compaction
    }

    /// Counters of all reads through the loaded tables and those that left the stack, the
    /// stack's own counters ([`Stack::own_stats`]) and entries written by its compactions.
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for t in self.merged.tables() {
            s += t.stats();
        }
        // Tables opened are counted per table too: report what this stack opened instead.
        s.tables_opened = 0;
        s += self.retired;
        s += self.own.get();
        s.entries_written = self.compaction.entries_written;
        s
    }

    /// The counters the stack keeps itself rather than its tables: tables opened,
    /// `tables.list` reads, and the key comparisons and heap operations of every merged
    /// iterator over the stack (compaction's included). Unlike the tables' counters they
    /// stay with the stack when compaction retires a table.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut stack = reftable::Stack::open(dir.path(), Default::default()).unwrap();
    /// let before = stack.own_stats();
    /// stack.reload().unwrap();
    /// assert_eq!(stack.own_stats().since(before).tables_list_reads, 1);
    /// ```
    pub fn own_stats(&self) -> Stats {
        self.own.get()
    }

    /// Read `tables.list` through one open handle: the names, and the handle with the
    /// identity of the very file the names came from.
    fn read_list_pinned(&self) -> Result<(Vec<String>, Option<ListPin>)> {
        use std::io::Read;
        self.count_list_read();
        let (file, meta) = match crate::bytes::open_regular_meta(&self.list_path, "tables.list") {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotExist => {
                self.count_list_stats(1);
                return Ok((Vec::new(), None));
            }
            Err(e) => return Err(e),
        };
        // The path's stat and the handle's fstat, which also pins the file's identity.
        self.count_list_stats(2);
        let len = meta.len();
        let mut content = Vec::new();
        (&file)
            .take(len)
            .read_to_end(&mut content)
            .map_err(|e| Error::io(e, "read tables.list").in_file(&self.list_path))?;
        let names = parse_tables_list(&content).map_err(|e| e.in_file(&self.list_path))?;
        let id = meta_id(&meta);
        Ok((names, id.map(|id| (file, id))))
    }

    fn read_list(&self) -> Result<Vec<String>> {
        self.count_list_read();
        self.count_list_stats(2);
        read_tables_list(&self.dir)
    }

    fn count_list_read(&self) {
        self.count(Stats {
            tables_list_reads: 1,
            ..Stats::default()
        });
    }

    fn count(&self, s: Stats) {
        self.own.add(&s);
    }

    /// `n` stat or fstat calls on `tables.list`.
    fn count_list_stats(&self, n: u64) {
        self.count(Stats {
            tables_list_stats: n,
            ..Stats::default()
        });
    }

    /// A table or a new `tables.list` is about to be written (and synced, with `fsync` on).
    fn count_fsync(&self) {
        if self.opts.fsync {
            self.count(Stats {
                fsyncs: 1,
                ..Stats::default()
            });
        }
    }

    /// With `fsync` on, sync the stack directory, so that the renames made in it so far (a
    /// table put in place, a new `tables.list`) survive a power loss: the order is the table's
    /// data, the directory, `tables.list`'s data, the directory.
    fn sync_dir(&self) -> Result<()> {
        if !self.opts.fsync || planted!(NoDirSync, false, true) {
            return Ok(());
        }
        // Counted as done, not as `count_fsync` decides: a sync made with fsync off shows.
        self.count(Stats {
            fsyncs: 1,
            ..Stats::default()
        });
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(e, "fsync stack directory").in_file(&self.dir))
    }

    /// Re-read `tables.list` and open the tables it names, reusing tables already open. When
    /// `tables.list` is still the file last read (one `stat`: the same file, size and time),
    /// nothing is read, as git's `reftable_stack_reload` does. When a table is missing
    /// because a concurrent compaction replaced it, the list is re-read and the load retried
    /// (with growing, jittered delays, for up to about 3 seconds). On failure the stack keeps
    /// its previous tables.
    pub fn reload(&mut self) -> Result<()> {
        if self.list_unchanged() {
            return Ok(());
        }
        self.reload_changed()
    }

    /// [`Stack::reload`] where the list is known to have changed (this stack just replaced
    /// it, or found it changed), as git's commit and compaction reload without asking.
    fn reload_changed(&mut self) -> Result<()> {
        let (names, pin, tables, opened) =
            reload_tables(&self.dir, &self.names, self.merged.tables(), || {
                self.read_list_pinned()
            })?;
        self.own.add(&Stats {
            tables_opened: opened,
            ..Stats::default()
        });
        // Keep the counters of tables leaving the stack, so stats never go back.
        let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
        for (name, t) in self.names.iter().zip(self.merged.tables()) {
            if !listed.contains(name.as_str()) {
                let mut gone = t.stats();
                gone.tables_opened = 0;
                self.retired += gone;
            }
        }
        self.merged = MergedTable::with_sink(tables, self.opts.hash(), self.own.clone())?;
        self.merged
            .set_suppress_deletions(self.opts.suppress_deletions);
        self.names = names;
        self.list_pin = pin;
        Ok(())
    }

    /// Whether `tables.list` still names the loaded tables.
    pub fn is_up_to_date(&self) -> Result<bool> {
        if self.list_unchanged() {
            return Ok(true);
        }
        self.count_list_stats(1);
        if !self.list_path.exists() {
            return Ok(self.names.is_empty());
        }
        Ok(self.read_list()? == self.names)
    }

    /// Whether `tables.list` is still the file the loaded tables were read from (one `stat`,
    /// and none when no list was read).
    fn list_unchanged(&self) -> bool {
        let Some((_, id)) = &self.list_pin else {
            return false;
        };
        self.count_list_stats(1);
        file_id(&self.list_path) == Some(*id)
    }

    fn lock_list(&self) -> Result<LockFile> {
        let lock = LockFile::acquire(&self.list_path, self.opts.lock_timeout)?;
        set_permissions(lock.lock_path(), self.opts.default_permissions)?;
        Ok(lock)
    }

    /// Start an addition: lock `tables.list` and check the stack is up to date; when it is
    /// not, reload it or fail with [`ErrorKind::Outdated`], as `outdated` says.
    pub fn new_addition(&mut self, outdated: Outdated) -> Result<Addition<'_>> {
        #[cfg(reftable_test_hooks)]
        crate::test_hooks::before_lock(&self.list_path);
        let lock = self.lock_list()?;
        if !planted!(NoReloadUnderLock, self.is_up_to_date()?, true) {
            if outdated == Outdated::Reload {
                self.reload_changed()?;
            } else {
                return Err(Error::new(
                    ErrorKind::Outdated,
                    "the stack changed on disk since it was loaded",
                )
                .in_file(&self.list_path));
            }
        }
        let next_update_index = self.next_update_index();
        crash_point!(AddLocked);
        Ok(Addition {
            stack: self,
            lock: Some(lock),
            next_update_index,
            new_tables: Vec::new(),
        })
    }

    /// Add one table written by `write` (which gets the writer and the next update index)
    /// in one addition; auto-compacts afterwards unless disabled. Fails with
    /// [`ErrorKind::Outdated`] when the stack changed on disk.
    pub fn add<F>(&mut self, write: F) -> Result<Committed>
    where
        F: FnOnce(&mut TableWriter, u64) -> Result<()>,
    {
        let mut add = self.new_addition(Outdated::Fail)?;
        add.add_table(write)?;
        add.commit()
    }

    fn write_table<F>(&mut self, stem: &str, write: F) -> Result<Option<(TempFile, u64, u64)>>
    where
        F: FnOnce(&mut TableWriter) -> Result<()>,
    {
        let (temp, file) = TempFile::create(&self.dir.join(stem))?;
        set_permissions(temp.path(), self.opts.default_permissions)?;
        let mut w = Writer::new(BufWriter::new(file), self.opts.write);
        write(&mut w)?;
        let (min, max) = w.limits();
        let out = match w.finish() {
            Ok(out) => out,
            Err(e) if e.kind() == ErrorKind::EmptyTable => return Ok(None),
            Err(e) => return Err(e.in_file(temp.path())),
        };
        let file = out
            .into_inner()
            .map_err(|e| Error::io(e.into_error(), "write table").in_file(temp.path()))?;
        self.count_fsync();
        if self.opts.fsync {
            file.sync_all()
                .map_err(|e| Error::io(e, "fsync table").in_file(temp.path()))?;
        }
        Ok(Some((temp, min, max)))
    }

    fn lock_error(&mut self, e: Error) -> Error {
        if e.kind() == ErrorKind::Lock {
            self.compaction.failures += 1;
        }
        e
    }

    /// Merge all tables into one, dropping tombstones (and expired reflog entries). A no-op
    /// for a stack of at most one table without expiry.
    pub fn compact_all(&mut self, expiry: Option<&LogExpiry>) -> Result<()> {
        let n = self.tables().len();
        self.compact_range(0, n.saturating_sub(1), expiry, false)
            .map_err(|e| self.lock_error(e))
    }

    /// Compact by git's geometric rule: merge the newest tables whose sizes break the
    /// sequence. Best effort: tables locked by a concurrent compaction shrink the range.
    pub fn auto_compact(&mut self) -> Result<()> {
        let version = self.opts.hash().version();
        let overhead = (footer_size(version) + header_size(version) - 1) as u64;
        let sizes: Vec<u64> = self
            .tables()
            .iter()
            .map(|t| t.info().size.saturating_sub(overhead))
            .collect();
        match suggest_compaction_segment(&sizes, self.opts.geometric_factor) {
            Some((start, end)) => self
                .compact_range(start, end - 1, None, true)
                .map_err(|e| self.lock_error(e)),
            None => Ok(()),
        }
    }

    /// Compact tables `first..=last` into one (see git's `stack_compact_range`).
    pub fn compact_range(
        &mut self,
        first: usize,
        last: usize,
        expiry: Option<&LogExpiry>,
        best_effort: bool,
    ) -> Result<()> {
        if first > last || (expiry.is_none() && first == last) || last >= self.tables().len() {
            return Ok(());
        }
        self.compaction.attempts += 1;
        let (first, table_locks) = self.lock_tables_to_compact(first, last, best_effort)?;
        crash_point!(CompactTablesLocked);

        let tables: Vec<Table> = self.tables()[first..=last].to_vec();
        let min = tables[0].min_update_index();
        let max = tables[tables.len() - 1].max_update_index();
        let written = self.write_compacted(&tables, min, max, first == 0, expiry)?;
        crash_point!(CompactTempWritten);

        let list_lock = self.lock_list()?;
        let (names, first_to_replace, last_to_replace) = self.find_compacted(first, last)?;
        let new_name = self.install_compacted(written, min, max)?;
        let content = tables_list_content(
            &names,
            first_to_replace,
            last_to_replace,
            new_name.as_deref(),
        );
        self.commit_compacted_list(list_lock, &content, new_name.as_deref())?;
        crash_point!(CompactListRenamed);
        self.sync_dir()?;
        self.reload_changed()?;
        for t in &tables {
            if !defect!(CompactedTablesKept) {
                let _ = std::fs::remove_file(t.name());
            }
        }
        drop(table_locks);
        Ok(())
    }

    /// Under the list lock, check the stack is up to date and lock tables `first..=last`
    /// newest first; with best effort, settle for the newer ones. Returns the first table
    /// locked and the locks; the list lock is released again.
    fn lock_tables_to_compact(
        &self,
        first: usize,
        last: usize,
        best_effort: bool,
    ) -> Result<(usize, Vec<LockFile>)> {
        let list_lock = self.lock_list()?;
        if !self.is_up_to_date()? {
            return Err(Error::new(
                ErrorKind::Outdated,
                "the stack changed on disk since it was loaded",
            )
            .in_file(&self.list_path));
        }
        let mut first = first;
        let mut table_locks = Vec::new();
        for i in (first..=last).rev() {
            let path = self.dir.join(&self.names[i]);
            match LockFile::acquire(&path, Some(Duration::ZERO)) {
                Ok(mut l) => {
                    l.close();
                    table_locks.push(l);
                }
                Err(e) if e.kind() == ErrorKind::Lock && best_effort && last - i >= 2 => {
                    first = i + 1;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        list_lock.release()?;
        Ok((first, table_locks))
    }

    /// Merge `tables` into a temporary table spanning update indexes `min..=max` (`None`
    /// when nothing is left), counting the bytes read and the entries written.
    fn write_compacted(
        &mut self,
        tables: &[Table],
        min: u64,
        max: u64,
        drop_tombstones: bool,
        expiry: Option<&LogExpiry>,
    ) -> Result<Option<(TempFile, u64, u64)>> {
        for t in tables {
            self.compaction.bytes += t.info().size;
        }
        let hash = self.opts.hash();
        let own = self.own.clone();
        let mut entries = 0u64;
        let written = self.write_table(&table_name_stem(min, max), |w| {
            w.set_limits(min, max)?;
            let merged = MergedTable::with_sink(tables.to_vec(), hash, own.clone())?;
            let mut refs = merged.seek::<RefRecord>(b"")?;
            copy_refs(w, &mut refs, drop_tombstones, &mut entries)?;
            let mut logs = merged.seek::<LogRecord>(b"")?;
            copy_logs(w, &mut logs, drop_tombstones, expiry, &mut entries)
        });
        self.compaction.entries_written += entries;
        written
    }

    /// The current table names and where tables `first..=last` of the loaded stack sit in
    /// them: unchanged when the stack is up to date, else found in the list on disk (someone
    /// added or compacted meanwhile).
    fn find_compacted(&self, first: usize, last: usize) -> Result<(Vec<String>, usize, usize)> {
        if self.is_up_to_date()? {
            return Ok((self.names.clone(), first, last));
        }
        let names = self.read_list()?;
        let ours = &self.names[first..=last];
        match names.windows(ours.len()).position(|w| w == ours) {
            Some(at) => Ok((names.clone(), at, at + ours.len() - 1)),
            None => Err(Error::new(
                ErrorKind::Outdated,
                "the compacted tables are no longer in the stack",
            )
            .in_file(&self.list_path)),
        }
    }

    /// Rename the written table (if any) into the stack directory under its final name,
    /// which it returns.
    fn install_compacted(
        &self,
        written: Option<(TempFile, u64, u64)>,
        min: u64,
        max: u64,
    ) -> Result<Option<String>> {
        let mut new_name = None;
        if let Some((temp, _, _)) = written {
            let name = format!("{}.ref", table_name_stem(min, max));
            temp.persist(&self.dir.join(&name))?;
            self.sync_dir()?;
            crash_point!(CompactTableRenamed);
            new_name = Some(name);
        }
        Ok(new_name)
    }

    /// Write `content` as `tables.list` and commit it; on failure delete the new table
    /// `new_name`, which the list would have named.
    fn commit_compacted_list(
        &self,
        mut list_lock: LockFile,
        content: &str,
        new_name: Option<&str>,
    ) -> Result<()> {
        self.count_fsync();
        let committed = list_lock
            .write_contents(content.as_bytes(), self.opts.fsync)
            .and_then(|_| list_lock.commit());
        if let Err(e) = committed {
            if let Some(n) = new_name {
                let _ = std::fs::remove_file(self.dir.join(n));
            }
            return Err(e);
        }
        Ok(())
    }

    /// Delete table files in the stack directory that `tables.list` does not name and whose
    /// update indexes are all covered by the stack (left behind by crashed writers or
    /// compactions). Files that do not parse as tables are left alone.
    pub fn clean(&mut self) -> Result<()> {
        let lock = self.lock_list()?;
        self.reload()?;
        let max = self.next_update_index() - 1;
        let listed: HashSet<&str> = self.names.iter().map(String::as_str).collect();
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| Error::io(e, "read stack directory").in_file(&self.dir))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".ref") || listed.contains(name.as_str()) {
                continue;
            }
            let path = entry.path();
            if let Ok(t) = Table::open(&path) {
                if t.max_update_index() <= max {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        drop(lock);
        Ok(())
    }
}

/// Copy the merged refs into `w`, leaving out deletions when `drop_tombstones`; counts them
/// in `entries`.
fn copy_refs(
    w: &mut TableWriter,
    refs: &mut MergedIter<RefRecord>,
    drop_tombstones: bool,
    entries: &mut u64,
) -> Result<()> {
    while let Some(r) = refs.next_record()? {
        if drop_tombstones && r.is_deletion() {
            continue;
        }
        w.add_ref(r)?;
        *entries += 1;
    }
    Ok(())
}

/// Copy the merged reflog entries into `w`, leaving out deletions when `drop_tombstones`
/// and the entries `expiry` drops; counts them in `entries`.
fn copy_logs(
    w: &mut TableWriter,
    logs: &mut MergedIter<LogRecord>,
    drop_tombstones: bool,
    expiry: Option<&LogExpiry>,
    entries: &mut u64,
) -> Result<()> {
    while let Some(l) = logs.next_record()? {
        if drop_tombstones && l.is_deletion() {
            continue;
        }
        if expiry.is_some_and(|x| x.drops(l)) {
            continue;
        }
        w.add_log(l)?;
        *entries += 1;
    }
    Ok(())
}

/// The text of `tables.list` with `names[first..=last]` replaced by `new_name` (by nothing
/// when `None`): one name a line.
fn tables_list_content(
    names: &[String],
    first: usize,
    last: usize,
    new_name: Option<&str>,
) -> String {
    let mut content = String::new();
    for n in names[..first]
        .iter()
        .map(String::as_str)
        .chain(new_name)
        .chain(names[last + 1..].iter().map(String::as_str))
    {
        content.push_str(n);
        content.push('\n');
    }
    content
}

/// What [`Stack::new_addition`] does when the stack changed on disk since it was loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outdated {
    /// Reload it under the lock and add on top of what is there now (git's ref backend,
    /// whose transactions check their old values against the reloaded stack).
    Reload,
    /// Fail with [`ErrorKind::Outdated`]: the caller decided what to write from the stack
    /// it loaded (git's `reftable_stack_add`).
    Fail,
}

/// What a committed addition did: its tables are in the stack. The work after the commit
/// point (the reload, auto-compaction) may have failed all the same: that is a warning to
/// show or log, not a failure of the commit.
///
/// ```
/// # fn main() -> reftable::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// use reftable::{RefRecord, RefValue, Stack, StackOptions};
/// let mut stack = Stack::open(dir.path(), StackOptions::default())?;
/// let head = RefValue::Symref(b"refs/heads/main".to_vec());
/// let committed = stack.add(|w, update_index| {
///     w.set_limits(update_index, update_index)?;
///     w.add_ref(&RefRecord::new("HEAD", update_index, head))
/// })?;
/// if let Some(e) = &committed.warning {
///     eprintln!("warning: committed, but {e:#}");
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct Committed {
    /// Why the reload or the auto-compaction after the commit failed, if it did.
    pub warning: Option<Error>,
}

/// An addition in progress: holds `tables.list.lock` until committed or dropped. Dropping it
/// without [`Addition::commit`] deletes the tables it wrote and releases the lock.
#[derive(Debug)]
pub struct Addition<'a> {
    stack: &'a mut Stack,
    lock: Option<LockFile>,
    next_update_index: u64,
    new_tables: Vec<String>,
}

impl Addition<'_> {
    /// The update index this addition's table must use (at least).
    pub fn next_update_index(&self) -> u64 {
        self.next_update_index
    }

    /// The stack as it was when the addition started (or was reloaded).
    pub fn stack(&self) -> &Stack {
        self.stack
    }

    /// Write one table. An empty table is not added. The table's minimum update index must
    /// be at least [`Addition::next_update_index`].
    pub fn add_table<F>(&mut self, write: F) -> Result<()>
    where
        F: FnOnce(&mut TableWriter, u64) -> Result<()>,
    {
        let next = self.next_update_index;
        let stem = table_name_stem(next, next);
        let Some((temp, min, max)) = self.stack.write_table(&stem, |w| write(w, next))? else {
            return Ok(());
        };
        crash_point!(AddTempWritten);
        if min < next {
            return Err(Error::api(format!(
                "table's min_update_index {min} is below the stack's next update index {next}"
            )));
        }
        let name = format!("{}.ref", table_name_stem(min, max));
        temp.persist(&self.stack.dir.join(&name))?;
        self.stack.sync_dir()?;
        crash_point!(AddTableRenamed);
        self.new_tables.push(name);
        self.next_update_index = max + 1;
        Ok(())
    }

    /// Publish the new tables in `tables.list`, reload, and auto-compact unless disabled.
    /// Succeeds once `tables.list` names the new tables: a failure of the reload or of the
    /// auto-compaction after that is the [`Committed::warning`] (git 2.45 to master report
    /// such a compaction failure as the failure of the update, which is committed all the
    /// same).
    pub fn commit(mut self) -> Result<Committed> {
        let Some(mut lock) = self.lock.take() else {
            return Err(Error::api("addition already committed"));
        };
        if self.new_tables.is_empty() {
            return Ok(Committed { warning: None });
        }
        let mut content = String::new();
        for n in self.stack.names.iter().chain(&self.new_tables) {
            content.push_str(n);
            content.push('\n');
        }
        if defect!(ListWithoutFinalNewline) {
            content.pop();
        }
        self.stack.count_fsync();
        lock.write_contents(content.as_bytes(), self.stack.opts.fsync)?;
        crash_point!(CommitListWritten);
        lock.commit()?;
        crash_point!(CommitListRenamed);
        self.new_tables.clear();
        // The addition is committed: what follows cannot undo it, so its failure is a
        // warning of the commit rather than the commit's failure.
        let after = self.after_commit();
        if planted!(AfterCommitErrorReturned, false, after.is_err()) {
            return after.map(|()| Committed { warning: None });
        }
        Ok(Committed {
            warning: after.err(),
        })
    }

    /// Sync the directory that holds the new `tables.list` (with `fsync` on), reload the
    /// committed stack and auto-compact it unless disabled (lock and outdated errors from
    /// auto-compaction are ignored, as in git: another process is compacting).
    fn after_commit(&mut self) -> Result<()> {
        self.stack.sync_dir()?;
        self.stack.reload_changed()?;
        if self.stack.opts.auto_compaction {
            match self.stack.auto_compact() {
                Err(e) if matches!(e.kind(), ErrorKind::Lock | ErrorKind::Outdated) => {}
                other => other?,
            }
        }
        Ok(())
    }
}

impl Drop for Addition<'_> {
    fn drop(&mut self) {
        for n in &self.new_tables {
            let _ = std::fs::remove_file(self.stack.dir.join(n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_vectors_from_git() {
        assert_eq!(
            suggest_compaction_segment(&[512, 64, 17, 16, 9, 9, 9, 16, 2, 16], 2),
            Some((1, 10))
        );
        assert_eq!(suggest_compaction_segment(&[64, 32, 16, 8, 4, 2], 2), None);
        assert_eq!(suggest_compaction_segment(&[261, 49, 47], 2), Some((1, 3)));
        assert_eq!(suggest_compaction_segment(&[5], 2), None);
        assert_eq!(suggest_compaction_segment(&[], 2), None);
    }

    /// A table exactly `factor` times the next is in order; one byte less is not. The
    /// factor given is used, and 0 means 2.
    #[test]
    fn segment_boundaries_and_factor() {
        assert_eq!(suggest_compaction_segment(&[4, 2], 2), None);
        assert_eq!(suggest_compaction_segment(&[3, 2], 2), Some((0, 2)));
        // The older table equals factor x the sum of the newer ones: it stays.
        assert_eq!(suggest_compaction_segment(&[6, 1, 2], 2), Some((1, 3)));
        assert_eq!(suggest_compaction_segment(&[5, 1, 2], 2), Some((0, 3)));
        assert_eq!(suggest_compaction_segment(&[5, 2], 3), Some((0, 2)));
        assert_eq!(suggest_compaction_segment(&[6, 2], 3), None);
        assert_eq!(suggest_compaction_segment(&[3, 2], 0), Some((0, 2)));
        assert_eq!(suggest_compaction_segment(&[4, 2], 0), None);
    }
}
