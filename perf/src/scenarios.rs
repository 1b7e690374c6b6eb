//! The workloads of the complexity suite: each builds a stack with `n` tombstones (or `n`
//! refs) in a temporary directory, runs a batch of operations through the library's public
//! API, and returns what the operations cost in the library's counters.
//!
//! Counting rules. Table iterators add their counters into their table when they are dropped,
//! and [`reftable::Stack::stats`] sums the tables the stack holds *now*. A table that
//! compaction retires takes its counters with it, so the harness keeps a clone of every table
//! it has seen during an operation and sums those ([`TableLedger`]). For the same reason the
//! ref-database workloads run the stack with `auto_compaction: false` and call
//! [`reftable::Stack::auto_compact`] themselves right after each transaction: that is exactly
//! what a committing addition does with auto-compaction on, but lets the harness see the
//! transaction's new table before compaction retires it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};

use reftable::table::Stats;
use reftable::{
    ErrorKind, HashId, LogRecord, LogUpdate, LogValue, ObjectId, RefRecord, RefValue, Result,
    Stack, StackOptions, Table,
};
use reftable::{Signature, TzOffset};

/// The object id every ref of the workloads points at.
pub fn object_id() -> ObjectId {
    ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").expect("valid hex")
}

/// How the library is configured for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Skip tombstones inside the merged iterators (git 2.47's behaviour; the planted
    /// regression of the suite).
    pub suppress_deletions: bool,
    /// Run git's geometric auto-compaction after each transaction.
    pub auto_compaction: bool,
}

impl Config {
    /// The library's defaults: tombstones returned to callers, auto-compaction on.
    pub const OURS: Config = Config {
        suppress_deletions: false,
        auto_compaction: true,
    };
    /// git 2.47's iterator behaviour: tombstones skipped inside the merged iterator.
    pub const SUPPRESS_DELETIONS: Config = Config {
        suppress_deletions: true,
        auto_compaction: true,
    };

    /// The same configuration with auto-compaction switched.
    pub fn with_auto_compaction(self, on: bool) -> Config {
        Config {
            auto_compaction: on,
            ..self
        }
    }

    /// The `implementation` label of the report.
    pub fn implementation(&self) -> &'static str {
        if self.suppress_deletions {
            "ours-suppress-deletions"
        } else {
            "ours"
        }
    }

    fn stack_options(&self) -> StackOptions {
        StackOptions::default()
            .fsync(false)
            .auto_compaction(false)
            .suppress_deletions(self.suppress_deletions)
    }
}

/// How a counter is expected to grow per operation as `n` doubles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Growth {
    /// Independent of `n`.
    Constant,
    /// At most logarithmic in `n` (an index is walked).
    Logarithmic,
}

/// A workload of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scenario {
    /// Read refs that do not exist, each with up to `n` tombstones sorting after it.
    SeekMissing,
    /// Read refs that were deleted (their tombstone is the newest record).
    ReadDeleted,
    /// The D/F check for new names placed among `n` tombstones.
    DfCheck,
    /// Prefix iterations whose range is followed by tombstones before the next live ref.
    PrefixIteration,
    /// Reflog reads whose ref's entries are followed by log tombstones of other refs.
    ReflogRead,
    /// git's p1401 "recreate refs after mass delete": create `n` tags, delete them, create
    /// them again (the measured transaction), through the ref database.
    P1401Recreate,
    /// git's p1401 asymmetric case: create and delete `old-*`, then create `new-*`
    /// (measured), through the ref database.
    P1401Asymmetric,
    /// Add `n` refs one table at a time with auto-compaction; measures compaction work.
    AutoCompaction,
}

impl Scenario {
    /// Every scenario, in report order.
    pub const ALL: [Scenario; 8] = [
        Scenario::P1401Recreate,
        Scenario::P1401Asymmetric,
        Scenario::SeekMissing,
        Scenario::ReadDeleted,
        Scenario::DfCheck,
        Scenario::PrefixIteration,
        Scenario::ReflogRead,
        Scenario::AutoCompaction,
    ];

    /// The name used in reports and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Scenario::SeekMissing => "seek-missing",
            Scenario::ReadDeleted => "read-deleted",
            Scenario::DfCheck => "df-check",
            Scenario::PrefixIteration => "prefix-iteration",
            Scenario::ReflogRead => "reflog-read",
            Scenario::P1401Recreate => "p1401-recreate",
            Scenario::P1401Asymmetric => "p1401-asymmetric",
            Scenario::AutoCompaction => "auto-compaction",
        }
    }

    /// One line saying what is measured.
    pub fn description(&self) -> &'static str {
        match self {
            Scenario::SeekMissing => {
                "read_ref of 64 missing names spread over n tombstones (each has up to n tombstones after it)"
            }
            Scenario::ReadDeleted => "read_ref of 64 deleted refs spread over n tombstones",
            Scenario::DfCheck => {
                "check_name_available for 64 new names spread over n tombstones (lookups of each \
                 directory prefix, then a bounded scan of name/)"
            }
            Scenario::PrefixIteration => {
                "refs_with_prefix over 64 groups of 4 live refs, each group followed by n/64 tombstones"
            }
            Scenario::ReflogRead => {
                "reflog of 64 refs with 2 entries each, each followed by n/64 log tombstones of other refs"
            }
            Scenario::P1401Recreate => {
                "p1401: create n tags in one transaction, delete them in one, then re-create them \
                 in one transaction (measured; per op = per ref)"
            }
            Scenario::P1401Asymmetric => {
                "p1401: create and delete n old-* tags, then create n new-* tags in one \
                 transaction (measured; per op = per ref)"
            }
            Scenario::AutoCompaction => {
                "add n refs one table each with auto-compaction (measured: all additions; \
                 entries_written must stay below n log2 n)"
            }
        }
    }

    /// Whether the scenario goes through [`RefDb`] transactions (and so has an
    /// auto-compaction on / off variant).
    pub fn is_p1401(&self) -> bool {
        matches!(self, Scenario::P1401Recreate | Scenario::P1401Asymmetric)
    }

    /// The scenario from its [`Scenario::name`].
    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// How the per-operation counters are expected to grow. Every lookup walks each table's
    /// index, so the bound is logarithmic; compaction work per added ref is logarithmic too.
    pub fn growth(&self) -> Growth {
        Growth::Logarithmic
    }

    /// Run the scenario at size `n`.
    pub fn run(&self, n: usize, cfg: Config) -> Result<Point> {
        match self {
            Scenario::SeekMissing => lookups(n, cfg, Lookup::Missing),
            Scenario::ReadDeleted => lookups(n, cfg, Lookup::Deleted),
            Scenario::DfCheck => lookups(n, cfg, Lookup::DfCheck),
            Scenario::PrefixIteration => prefix_iteration(n, cfg),
            Scenario::ReflogRead => reflog_read(n, cfg),
            Scenario::P1401Recreate => p1401(n, cfg, false),
            Scenario::P1401Asymmetric => p1401(n, cfg, true),
            Scenario::AutoCompaction => auto_compaction(n, cfg),
        }
    }
}

/// What one run at one size cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    /// The size (tombstones, or refs).
    pub n: usize,
    /// Operations measured (lookups, or refs of the measured transaction).
    pub ops: u64,
    /// Counters of the measured operations (all tables, including ones compaction retired).
    pub stats: Stats,
    /// Counters of the seeks the operations start with, replayed alone on the same stack
    /// (index walk and positioning inside the first block; see [`seek_cost`]).
    pub seek: Stats,
    /// Records written by compaction during the measured operations.
    pub entries_written: u64,
    /// Tables in the stack after the measured operations (for auto-compaction: the most
    /// tables the stack held after any addition's compaction).
    pub tables: usize,
    /// Wall time of the measured operations.
    pub seconds: f64,
}

impl Point {
    /// Records decoded per operation.
    pub fn records_per_op(&self) -> f64 {
        self.stats.records_decoded as f64 / self.ops.max(1) as f64
    }

    /// Records decoded per operation after the seeks: what an operation reads past its
    /// seek position. Tombstones scanned past a bound show up here.
    pub fn scan_records_per_op(&self) -> f64 {
        self.stats
            .records_decoded
            .saturating_sub(self.seek.records_decoded) as f64
            / self.ops.max(1) as f64
    }

    /// Records decoded per operation by the seeks alone.
    pub fn seek_records_per_op(&self) -> f64 {
        self.seek.records_decoded as f64 / self.ops.max(1) as f64
    }

    /// Blocks read per operation.
    pub fn blocks_per_op(&self) -> f64 {
        self.stats.blocks_read as f64 / self.ops.max(1) as f64
    }

    /// Compaction entries written per operation.
    pub fn entries_written_per_op(&self) -> f64 {
        self.entries_written as f64 / self.ops.max(1) as f64
    }
}

/// Clones of every table seen during an operation, so that the counters of tables retired
/// by compaction still count.
#[derive(Default)]
pub struct TableLedger {
    tables: BTreeMap<PathBuf, Table>,
    retired: Stats,
}

impl TableLedger {
    /// Start a ledger with the stack's current tables.
    pub fn new(stack: &Stack) -> TableLedger {
        let mut l = TableLedger::default();
        l.see(stack);
        l
    }

    /// Remember the stack's current tables.
    pub fn see(&mut self, stack: &Stack) {
        for t in stack.tables() {
            self.tables
                .entry(t.name().to_path_buf())
                .or_insert_with(|| t.clone());
        }
    }

    /// Fold the counters of tables the stack no longer holds into a sum and let the
    /// tables go (they are not read again), then remember the current ones.
    pub fn settle(&mut self, stack: &Stack) {
        let live: Vec<&std::path::Path> = stack.tables().iter().map(|t| t.name()).collect();
        let gone: Vec<PathBuf> = self
            .tables
            .keys()
            .filter(|k| !live.contains(&k.as_path()))
            .cloned()
            .collect();
        for k in gone {
            if let Some(t) = self.tables.remove(&k) {
                self.retired += t.stats();
            }
        }
        self.see(stack);
    }

    /// The sum of the counters of every table seen, and the stack's own counters
    /// (tables opened, `tables.list` reads, merged iterators' comparisons and heap
    /// operations; [`Stack::own_stats`]).
    pub fn stats(&self, stack: &Stack) -> Stats {
        let mut s = self.retired;
        for t in self.tables.values() {
            s += t.stats();
        }
        // Tables count their own opening; the stack's count is the one that matters.
        s.tables_opened = 0;
        s += stack.own_stats();
        s
    }
}

fn committer() -> Signature {
    Signature {
        name: b"C O Mitter".to_vec(),
        email: b"committer@example.com".to_vec(),
        time: 1_112_911_993,
        tz_offset: TzOffset::from_hhmm(-700),
    }
}

fn log_entry(name: &[u8], ui: u64) -> LogRecord {
    LogRecord {
        refname: name.to_vec(),
        update_index: ui,
        value: LogValue::Update(LogUpdate {
            old_id: ObjectId::null(HashId::Sha1),
            new_id: object_id(),
            committer: Signature::new(
                b"C O Mitter".to_vec(),
                b"committer@example.com".to_vec(),
                1_112_911_993 + ui,
                TzOffset::from_hhmm(-700),
            ),
            message: b"update\n".to_vec(),
        }),
    }
}

/// The seeks a batch of operations starts with: merged ref seeks and reflog seeks.
#[derive(Clone, Debug, Default)]
pub struct Seeks {
    /// Keys of ref seeks.
    pub refs: Vec<Vec<u8>>,
    /// Ref names whose reflog is sought (from the newest entry).
    pub logs: Vec<Vec<u8>>,
}

/// What the seeks cost on their own: each builds a merged iterator positioned at its key
/// (index walk and binary search in every table, first record of every table) and drops it
/// without reading on. Deterministic, so subtracting it from an operation's counters leaves
/// what the operation read past its seek positions.
pub fn seek_cost(stack: &Stack, seeks: &Seeks) -> Result<Stats> {
    let ledger = TableLedger::new(stack);
    let before = ledger.stats(stack);
    for k in &seeks.refs {
        drop(stack.merged().seek::<RefRecord>(k)?);
    }
    for name in &seeks.logs {
        drop(stack.merged().seek_log(name)?);
    }
    Ok(ledger.stats(stack).since(before))
}

/// Number of lookups (or groups) per micro scenario.
pub const OPS: usize = 64;

fn open(cfg: Config) -> Result<(tempfile::TempDir, RefDb)> {
    let dir = tempfile::tempdir().map_err(|e| reftable::Error::io(e, "create temp dir"))?;
    let db = RefDb::open_or_create(
        dir.path(),
        RefDbOptions::default().stack(cfg.stack_options()),
    )?;
    Ok((dir, db))
}

/// Write one table with `refs` (sorted by the caller) and `logs` (sorted by the caller).
fn add_table(stack: &mut Stack, refs: &[(Vec<u8>, RefValue)], logs: &[LogRecord]) -> Result<()> {
    stack
        .add(|w, ui| {
            w.set_limits(ui, ui)?;
            for (name, v) in refs {
                w.add_ref(&RefRecord::new(name.clone(), ui, v.clone()))?;
            }
            for l in logs {
                w.add_log(&LogRecord {
                    update_index: ui,
                    ..l.clone()
                })?;
            }
            Ok(())
        })
        .map(drop)
}

/// Run `op` and measure it with a ledger over the stack's tables; `seeks` are the seeks
/// `op` starts with, replayed first to separate their cost.
fn measure<F>(db: &mut RefDb, ops: u64, n: usize, seeks: &Seeks, op: F) -> Result<Point>
where
    F: FnOnce(&mut RefDb) -> Result<()>,
{
    let seek = seek_cost(db.stack(), seeks)?;
    let ledger = TableLedger::new(db.stack());
    let before = ledger.stats(db.stack());
    let written = db.stack().compaction_stats().entries_written;
    let t = Instant::now();
    op(db)?;
    let seconds = t.elapsed().as_secs_f64();
    Ok(Point {
        n,
        ops,
        stats: ledger.stats(db.stack()).since(before),
        seek,
        entries_written: db.stack().compaction_stats().entries_written - written,
        tables: db.stack().tables().len(),
        seconds,
    })
}

#[derive(Clone, Copy)]
enum Lookup {
    Missing,
    Deleted,
    DfCheck,
}

fn tag(i: usize) -> Vec<u8> {
    format!("refs/tags/v-{i:07}").into_bytes()
}

/// A stack of two tables: `refs/heads/main` and `n` tags, then tombstones for all the tags.
fn tombstoned_tags(n: usize, cfg: Config) -> Result<(tempfile::TempDir, RefDb)> {
    let (dir, mut db) = open(cfg)?;
    let mut live = vec![(b"refs/heads/main".to_vec(), RefValue::Object(object_id()))];
    live.extend((0..n).map(|i| (tag(i), RefValue::Object(object_id()))));
    add_table(db.stack_mut(), &live, &[])?;
    let dead: Vec<_> = (0..n).map(|i| (tag(i), RefValue::Deletion)).collect();
    add_table(db.stack_mut(), &dead, &[])?;
    Ok((dir, db))
}

fn lookups(n: usize, cfg: Config, kind: Lookup) -> Result<Point> {
    let (_dir, mut db) = tombstoned_tags(n, cfg)?;
    let names: Vec<Vec<u8>> = (0..OPS)
        .map(|k| {
            let mut name = tag(k * n / OPS);
            match kind {
                Lookup::Missing => name.extend_from_slice(b"-missing"),
                Lookup::Deleted => {}
                Lookup::DfCheck => name.extend_from_slice(b"-new"),
            }
            name
        })
        .collect();
    let mut seeks = Seeks::default();
    for name in &names {
        match kind {
            Lookup::Missing | Lookup::Deleted => seeks.refs.push(name.clone()),
            Lookup::DfCheck => {
                // git's D/F check: each directory prefix exactly, then `name/`.
                seeks.refs.push(b"refs".to_vec());
                seeks.refs.push(b"refs/tags".to_vec());
                let mut dir = name.clone();
                dir.push(b'/');
                seeks.refs.push(dir);
            }
        }
    }
    measure(&mut db, OPS as u64, n, &seeks, |db| {
        for name in &names {
            match kind {
                Lookup::Missing | Lookup::Deleted => assert!(db.read_ref(name)?.is_none()),
                Lookup::DfCheck => db.check_name_available(name)?,
            }
        }
        Ok(())
    })
}

fn group(k: usize) -> String {
    format!("refs/heads/g{k:03}")
}

fn prefix_iteration(n: usize, cfg: Config) -> Result<Point> {
    let (_dir, mut db) = open(cfg)?;
    let per = n / OPS;
    let mut created = Vec::new();
    let mut deleted = Vec::new();
    for k in 0..OPS {
        for j in 0..4 {
            let name = format!("{}/r{j}", group(k)).into_bytes();
            created.push((name, RefValue::Object(object_id())));
        }
        for i in 0..per {
            let name = format!("{}t-{i:07}", group(k)).into_bytes();
            created.push((name.clone(), RefValue::Object(object_id())));
            deleted.push((name, RefValue::Deletion));
        }
    }
    created.sort_by(|a, b| a.0.cmp(&b.0));
    add_table(db.stack_mut(), &created, &[])?;
    add_table(db.stack_mut(), &deleted, &[])?;
    let seeks = Seeks {
        refs: (0..OPS)
            .map(|k| format!("{}/", group(k)).into_bytes())
            .collect(),
        logs: Vec::new(),
    };
    measure(&mut db, OPS as u64, n, &seeks, |db| {
        for k in 0..OPS {
            let prefix = format!("{}/", group(k));
            assert_eq!(db.refs_with_prefix(prefix.as_bytes())?.count(), 4);
        }
        Ok(())
    })
}

fn reflog_read(n: usize, cfg: Config) -> Result<Point> {
    let (_dir, mut db) = open(cfg)?;
    let per = n / OPS;
    let mut first = Vec::new();
    let mut second = Vec::new();
    let mut tombstones = Vec::new();
    for k in 0..OPS {
        let name = group(k).into_bytes();
        first.push(log_entry(&name, 0));
        second.push(log_entry(&name, 0));
        for i in 0..per {
            let other = format!("{}t-{i:07}", group(k)).into_bytes();
            first.push(log_entry(&other, 0));
            tombstones.push(LogRecord {
                refname: other,
                update_index: 0,
                value: LogValue::Deletion,
            });
        }
    }
    // Table 1: one entry for every name; table 2: a second entry for the 64 live reflogs;
    // table 3: tombstones for the entries of table 1 of the other names.
    add_table(db.stack_mut(), &[], &first)?;
    add_table(db.stack_mut(), &[], &second)?;
    // A log tombstone hides the entry with the same key: same name and update index (1).
    db.stack_mut().add(|w, ui| {
        w.set_limits(ui, ui)?;
        for l in &tombstones {
            w.add_log(&LogRecord {
                update_index: 1,
                ..l.clone()
            })?;
        }
        Ok(())
    })?;
    let seeks = Seeks {
        refs: Vec::new(),
        logs: (0..OPS).map(|k| group(k).into_bytes()).collect(),
    };
    measure(&mut db, OPS as u64, n, &seeks, |db| {
        for k in 0..OPS {
            assert_eq!(db.reflog(group(k).as_bytes())?.count(), 2);
        }
        Ok(())
    })
}

fn tags(prefix: &str, n: usize) -> Vec<Vec<u8>> {
    (1..=n)
        .map(|i| format!("refs/tags/{prefix}-{i}").into_bytes())
        .collect()
}

/// One transaction, then (with auto-compaction) the compaction a committing addition runs.
fn transaction(db: &mut RefDb, updates: &[RefUpdate], cfg: Config) -> Result<()> {
    db.transaction(updates, &committer(), &AssumeCommits)?;
    if cfg.auto_compaction {
        match db.stack_mut().auto_compact() {
            Err(e) if matches!(e.kind(), ErrorKind::Lock | ErrorKind::Outdated) => {}
            other => other?,
        }
    }
    Ok(())
}

/// p1401 through the ref database. The measured transaction is the re-creation.
fn p1401(n: usize, cfg: Config, asymmetric: bool) -> Result<Point> {
    let (_dir, mut db) = open(cfg)?;
    let id = object_id();
    let old = tags(if asymmetric { "old" } else { "tag" }, n);
    let new = if asymmetric {
        tags("new", n)
    } else {
        old.clone()
    };
    let create = |names: &[Vec<u8>]| -> Vec<RefUpdate> {
        names.iter().map(|r| RefUpdate::create(r, id)).collect()
    };
    let delete: Vec<RefUpdate> = old.iter().map(|r| RefUpdate::delete(r, None)).collect();
    transaction(&mut db, &create(&old), cfg)?;
    transaction(&mut db, &delete, cfg)?;
    let updates = create(&new);
    // The seeks a transaction makes for each created ref (refs/refdb.rs, following git):
    // the ref itself, each directory prefix, `name/` (D/F check), and its reflog (does
    // it have one?). Plus `HEAD` once.
    let mut seeks = Seeks {
        refs: vec![b"HEAD".to_vec()],
        logs: Vec::new(),
    };
    for name in &new {
        seeks.refs.push(name.clone());
        seeks.refs.push(b"refs".to_vec());
        seeks.refs.push(b"refs/tags".to_vec());
        let mut dir = name.clone();
        dir.push(b'/');
        seeks.refs.push(dir);
        seeks.logs.push(name.clone());
    }
    let seek = seek_cost(db.stack(), &seeks)?;
    let ledger_start = TableLedger::new(db.stack());
    let before = ledger_start.stats(db.stack());
    let written = db.stack().compaction_stats().entries_written;
    let t = Instant::now();
    db.transaction(&updates, &committer(), &AssumeCommits)?;
    let mut ledger = ledger_start;
    ledger.see(db.stack());
    if cfg.auto_compaction {
        match db.stack_mut().auto_compact() {
            Err(e) if matches!(e.kind(), ErrorKind::Lock | ErrorKind::Outdated) => {}
            other => other?,
        }
        ledger.see(db.stack());
    }
    let seconds = t.elapsed().as_secs_f64();
    let point = Point {
        n,
        ops: n as u64,
        stats: ledger.stats(db.stack()).since(before),
        seek,
        entries_written: db.stack().compaction_stats().entries_written - written,
        tables: db.stack().tables().len(),
        seconds,
    };
    // After the counters are read: the check's own reads must not count, so that a debug
    // build gives the release build's figures.
    debug_assert_eq!(db.refs()?.count(), n);
    Ok(point)
}

/// git's `t_reftable_stack_auto_compaction`: one ref per table, auto-compacting after each.
fn auto_compaction(n: usize, cfg: Config) -> Result<Point> {
    let (_dir, mut db) = open(cfg)?;
    let mut ledger = TableLedger::new(db.stack());
    let before = ledger.stats(db.stack());
    let t = Instant::now();
    let mut max_tables = 0;
    for i in 0..n {
        let name = format!("refs/heads/branch-{i:07}").into_bytes();
        add_table(
            db.stack_mut(),
            &[(name, RefValue::Object(object_id()))],
            &[],
        )?;
        ledger.see(db.stack());
        if cfg.auto_compaction {
            db.stack_mut().auto_compact()?;
        }
        ledger.settle(db.stack());
        max_tables = max_tables.max(db.stack().tables().len());
    }
    let seconds = t.elapsed().as_secs_f64();
    let written = db.stack().compaction_stats().entries_written;
    let mut stats = ledger.stats(db.stack()).since(before);
    stats.entries_written = written;
    Ok(Point {
        n,
        ops: n as u64,
        stats,
        seek: Stats::default(),
        entries_written: written,
        tables: max_tables,
        seconds,
    })
}

/// Run `scenario` at every size.
pub fn sweep(scenario: Scenario, sizes: &[usize], cfg: Config) -> Result<Vec<Point>> {
    sizes.iter().map(|&n| scenario.run(n, cfg)).collect()
}
