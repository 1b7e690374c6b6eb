//! The stack: git's stack unit-test checklist (u-reftable-stack.c), ported as behaviour.

use std::time::Duration;

use reftable::stack::LogExpiry;
use reftable::table::Record;
use reftable::{
    Committed, ErrorKind, HashId, LogRecord, LogUpdate, LogValue, ObjectId, Outdated, RefRecord,
    RefValue, Stack, StackOptions, WriteOptions,
};
use reftable::{Signature, TzOffset};

fn oid(b: u8) -> ObjectId {
    ObjectId::from_bytes(&[b; 20]).unwrap()
}

fn opts() -> StackOptions {
    StackOptions::default()
        .lock_timeout(Some(Duration::ZERO))
        .fsync(false)
}

fn no_auto() -> StackOptions {
    opts().auto_compaction(false)
}

/// Without auto-compaction, waiting up to 10 s for a lock another writer holds.
fn waiting() -> StackOptions {
    no_auto().lock_timeout(Some(Duration::from_secs(10)))
}

fn add_ref(st: &mut Stack, name: &str, value: Option<u8>) -> reftable::Result<Committed> {
    st.add(|w, ui| {
        w.set_limits(ui, ui)?;
        let v = value.map_or(RefValue::Deletion, |b| RefValue::Object(oid(b)));
        w.add_ref(&RefRecord::new(name, ui, v))
    })
}

/// Add one table: `name` at `oid(1)` and a reflog entry for it with `msg`.
fn add_ref_and_log(st: &mut Stack, name: &str, msg: &str) -> reftable::Result<Committed> {
    st.add(|w, ui| {
        w.set_limits(ui, ui)?;
        w.add_ref(&RefRecord::new(name, ui, RefValue::Object(oid(1))))?;
        w.add_log(&log(name, ui, 10, msg))
    })
}

/// A writer that added two tables (`refs/heads/a`, `refs/heads/b`) to the stack in `dir`, and
/// a second stack opened on them after.
fn writer_of_two_and_reader(dir: &std::path::Path) -> (Stack, Stack) {
    let mut w = Stack::open(dir, no_auto()).unwrap();
    add_ref(&mut w, "refs/heads/a", Some(1)).unwrap();
    add_ref(&mut w, "refs/heads/b", Some(2)).unwrap();
    let st = Stack::open(dir, no_auto()).unwrap();
    (w, st)
}

/// A stack in `dir` of three tables, one ref each (`refs/heads/a`, `b`, `c`), without
/// auto-compaction.
fn stack_of_three(dir: &std::path::Path) -> Stack {
    let mut st = Stack::open(dir, no_auto()).unwrap();
    for (i, name) in ["refs/heads/a", "refs/heads/b", "refs/heads/c"]
        .iter()
        .enumerate()
    {
        add_ref(&mut st, name, Some(i as u8 + 1)).unwrap();
    }
    st
}

fn log(name: &str, ui: u64, time: u64, msg: &str) -> LogRecord {
    LogRecord {
        refname: name.as_bytes().to_vec(),
        update_index: ui,
        value: LogValue::Update(LogUpdate {
            old_id: oid(0),
            new_id: oid(ui as u8),
            committer: Signature::new(
                "C O Mitter",
                "committer@example.com",
                time,
                TzOffset::from_hhmm(100),
            ),
            message: msg.as_bytes().to_vec(),
        }),
    }
}

fn ls(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn add_one_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), opts().default_permissions(Some(0o660))).unwrap();
    st.add(|w, ui| {
        w.set_limits(ui, ui)?;
        w.add_ref(&RefRecord::new(
            "HEAD",
            ui,
            RefValue::Symref(b"master".to_vec()),
        ))
    })
    .unwrap();
    let r = st.merged().read_ref(b"HEAD").unwrap().unwrap();
    assert_eq!(r.symref_target(), Some(&b"master"[..]));
    assert_eq!(r.update_index, 1);
    let list = std::fs::read_to_string(dir.path().join("tables.list")).unwrap();
    assert!(list.ends_with(".ref\n"));
    assert_eq!(list.lines().count(), 1);
    let name = list.trim();
    assert!(name.starts_with("0x000000000001-0x000000000001-"), "{name}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["tables.list", name] {
            let mode = std::fs::metadata(dir.path().join(f))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o660, "{f}");
        }
    }
    // Only tables.list and the table: no temp or lock files left.
    assert_eq!(ls(dir.path()).len(), 2);
}

#[test]
fn uptodate_and_reload_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = Stack::open(dir.path(), no_auto()).unwrap();
    let mut b = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut a, "refs/heads/a", Some(1)).unwrap();
    assert!(!b.is_up_to_date().unwrap());
    let e = add_ref(&mut b, "refs/heads/b", Some(2)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Outdated);
    // With the reload flag (what git's transactions use) the addition goes through.
    let mut add = b.new_addition(Outdated::Reload).unwrap();
    assert_eq!(add.next_update_index(), 2);
    add.add_table(|w, ui| {
        w.set_limits(ui, ui)?;
        w.add_ref(&RefRecord::new(
            "refs/heads/b",
            ui,
            RefValue::Object(oid(2)),
        ))
    })
    .unwrap();
    add.commit().unwrap();
    a.reload().unwrap();
    assert!(a.merged().read_ref(b"refs/heads/b").unwrap().is_some());
    assert_eq!(a.tables().len(), 2);
}

#[test]
fn update_index_check() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "a", Some(1)).unwrap();
    let e = st
        .add(|w, _| {
            w.set_limits(1, 1)?;
            w.add_ref(&RefRecord::new("b", 1, RefValue::Object(oid(1))))
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Api);
    assert_eq!(st.tables().len(), 1);
    assert_eq!(ls(dir.path()).len(), 2, "no leftover temp table");
}

#[test]
fn lock_failure() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), opts()).unwrap();
    std::fs::write(dir.path().join("tables.list.lock"), "").unwrap();
    for i in 0..3 {
        let e = add_ref(&mut st, &format!("r{i}"), Some(1)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Lock);
    }
    // A lock released within the timeout is waited for.
    let lock = dir.path().join("tables.list.lock");
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        std::fs::remove_file(lock).unwrap();
    });
    st.set_options(opts().lock_timeout(Some(Duration::from_secs(5))))
        .unwrap();
    add_ref(&mut st, "late", Some(1)).unwrap();
    t.join().unwrap();
}

#[test]
fn empty_addition_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), opts()).unwrap();
    st.add(|w, ui| w.set_limits(ui, ui)).unwrap();
    assert_eq!(st.tables().len(), 0);
    let st2 = Stack::open(dir.path(), opts()).unwrap();
    assert_eq!(st2.tables().len(), 0);
    assert!(ls(dir.path()).iter().all(|f| !f.contains(".temp.")));
}

#[test]
fn tombstones_and_full_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    st.add(|w, ui| {
        w.set_limits(ui, ui)?;
        w.add_ref(&RefRecord::new("a", ui, RefValue::Object(oid(1))))?;
        w.add_ref(&RefRecord::new("b", ui, RefValue::Object(oid(1))))?;
        w.add_log(&log("a", ui, 10, "one"))
    })
    .unwrap();
    st.add(|w, ui| {
        w.set_limits(ui, ui)?;
        w.add_ref(&RefRecord::new("a", ui, RefValue::Deletion))?;
        w.add_log(&LogRecord {
            refname: b"a".to_vec(),
            update_index: 1,
            value: LogValue::Deletion,
        })
    })
    .unwrap();
    let m = st.merged();
    assert!(m.read_ref(b"a").unwrap().is_none());
    assert!(log_of(m, b"a").is_empty());
    // Iteration surfaces the tombstone.
    let all: Vec<RefRecord> = m.refs().unwrap().map(|r| r.unwrap()).collect();
    assert!(all[0].is_deletion());
    st.compact_all(None).unwrap();
    assert_eq!(st.tables().len(), 1);
    let all: Vec<RefRecord> = st.merged().refs().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(all.len(), 1, "tombstone dropped by full compaction");
    assert_eq!(st.merged().logs().unwrap().count(), 0);
    assert_eq!(ls(dir.path()).len(), 2, "old tables removed");
}

#[test]
fn compacting_a_range_keeps_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "a", Some(1)).unwrap();
    add_ref(&mut st, "a", None).unwrap();
    add_ref(&mut st, "b", Some(1)).unwrap();
    st.compact_range(1, 2, None, false).unwrap();
    assert_eq!(st.tables().len(), 2);
    assert!(st.merged().read_ref(b"a").unwrap().is_none());
    let t = &st.tables()[1];
    assert!(t.ref_record(b"a").unwrap().unwrap().is_deletion());
    assert_eq!((t.min_update_index(), t.max_update_index()), (2, 3));
}

#[test]
fn hash_id_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), opts()).unwrap();
    add_ref(&mut st, "a", Some(1)).unwrap();
    let sha256 = opts().write(WriteOptions::default().hash(HashId::Sha256));
    let e = Stack::open(dir.path(), sha256).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Format);
    Stack::open(dir.path(), opts()).unwrap();
}

#[test]
fn reflog_expire() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    for i in 1..=20u64 {
        st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            w.add_log(&log(&format!("branch{i:02}"), ui, i, "x"))
        })
        .unwrap();
    }
    st.compact_all(Some(&LogExpiry::default().time(10)))
        .unwrap();
    assert!(log_of(st.merged(), b"branch09").is_empty());
    assert_eq!(log_of(st.merged(), b"branch11").len(), 1);
    st.compact_all(Some(&LogExpiry::default().min_update_index(15)))
        .unwrap();
    assert!(log_of(st.merged(), b"branch14").is_empty());
    assert_eq!(log_of(st.merged(), b"branch15").len(), 1);
}

#[test]
fn log_normalize() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    let e = st
        .add(|w, ui| {
            w.set_limits(ui, ui)?;
            w.add_log(&log("a", ui, 1, "one\ntwo"))
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Api);
    for msg in ["one", "two\n"] {
        st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            w.add_log(&log("a", ui, 1, msg))
        })
        .unwrap();
    }
    let msgs: Vec<Vec<u8>> = log_of(st.merged(), b"a")
        .iter()
        .map(|l| l.update().unwrap().message.clone())
        .collect();
    assert_eq!(msgs, [b"two\n".to_vec(), b"one\n".to_vec()]);
}

/// git's floor(log_n(sz)).
fn fastlog(mut sz: u64, n: u64) -> u64 {
    let mut l = 0;
    while sz > 0 {
        sz /= n;
        l += 1;
    }
    l.max(1) - 1
}

/// git's auto_compaction and auto_compaction_factor tests: after i additions the stack has
/// fewer than factor·log_factor(i) tables; with factor 2 compaction writes fewer than
/// N·log2(N) entries.
#[test]
fn auto_compaction_keeps_the_stack_logarithmic() {
    for factor in [2u8, 5] {
        let dir = tempfile::tempdir().unwrap();
        let mut st = Stack::open(dir.path(), opts().geometric_factor(factor)).unwrap();
        let n = 100u64;
        let f = u64::from(factor);
        for i in 0..n {
            // As in git's tests: symrefs to "master" (factor 2), null ids (factor 5).
            st.add(|w, ui| {
                w.set_limits(ui, ui)?;
                let value = if factor == 2 {
                    RefValue::Symref(b"master".to_vec())
                } else {
                    RefValue::Object(ObjectId::null(HashId::Sha1))
                };
                w.add_ref(&RefRecord::new(format!("branch{i:04}"), ui, value))
            })
            .unwrap();
            assert!(
                i < f || (st.tables().len() as u64) < f * fastlog(i, f),
                "factor {factor}: {} tables after {} additions",
                st.tables().len(),
                i + 1
            );
        }
        if factor == 2 {
            let written = st.compaction_stats().entries_written;
            assert!(written < n * fastlog(n, 2), "{written} entries written");
        }
        assert_eq!(st.merged().refs().unwrap().count(), n as usize);
    }
}

#[test]
fn auto_compaction_with_locked_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    for i in 0..5 {
        add_ref(&mut st, &format!("r{i}"), Some(1)).unwrap();
    }
    assert_eq!(st.tables().len(), 5);
    // Lock the third table: best effort compacts the two newest.
    let locked = dir.path().join(format!("{}.lock", st.table_names()[2]));
    std::fs::write(&locked, "").unwrap();
    st.auto_compact().unwrap();
    assert_eq!(st.tables().len(), 4);
    assert_eq!(st.compaction_stats().failures, 0);
    // compact_all is not best effort: it fails and leaves the stack alone.
    let e = st.compact_all(None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lock);
    assert_eq!(st.tables().len(), 4);
    assert_eq!(st.compaction_stats().failures, 1);
    assert!(locked.exists());
}

#[test]
fn failing_auto_compaction_does_not_fail_the_addition() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "a", Some(1)).unwrap();
    std::fs::write(dir.path().join(format!("{}.lock", st.table_names()[0])), "").unwrap();
    st.set_options(opts()).unwrap();
    let committed = add_ref(&mut st, "b", Some(1)).unwrap();
    assert_eq!(st.tables().len(), 2);
    assert_eq!(st.compaction_stats().failures, 1);
    // A table locked by another compaction is no error of the addition's, not even a
    // warning (as in git).
    assert!(committed.warning.is_none());
}

#[test]
fn concurrent_compaction_and_clean() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = Stack::open(dir.path(), no_auto()).unwrap();
    for i in 0..3 {
        add_ref(&mut a, &format!("r{i}"), Some(1)).unwrap();
    }
    let mut b = Stack::open(dir.path(), no_auto()).unwrap();
    b.compact_all(None).unwrap();
    // The other instance reloads across the compaction.
    a.reload().unwrap();
    assert_eq!(a.tables().len(), 1);
    assert_eq!(a.merged().refs().unwrap().count(), 3);
    // A stale table left behind (covered update indexes) is removed by clean.
    let stale = dir
        .path()
        .join(&a.table_names()[0])
        .with_file_name("0x000000000001-0x000000000001-deadbeef.ref");
    std::fs::copy(dir.path().join(&a.table_names()[0]), &stale).unwrap();
    std::fs::write(dir.path().join("garbage.ref"), "not a table").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    let mut c = Stack::open(dir.path(), no_auto()).unwrap();
    c.clean().unwrap();
    let files = ls(dir.path());
    assert!(!stale.exists());
    assert!(files.contains(&"garbage.ref".to_string()));
    assert!(files.contains(&"notes.txt".to_string()));
    assert_eq!(files.len(), 4);
}

#[test]
fn compaction_splices_concurrent_additions() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = Stack::open(dir.path(), no_auto()).unwrap();
    for i in 0..3 {
        add_ref(&mut a, &format!("r{i}"), Some(1)).unwrap();
    }
    // Another writer appends while `a` is about to compact tables 0..=1 of its view.
    let mut b = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut b, "r3", Some(1)).unwrap();
    // `a` is outdated: compaction refuses (git 2.47: outdated at the first lock).
    let e = a.compact_range(0, 1, None, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Outdated);
    a.reload().unwrap();
    a.compact_range(0, 1, None, false).unwrap();
    assert_eq!(a.tables().len(), 3);
    assert_eq!(a.merged().refs().unwrap().count(), 4);
}

#[test]
fn read_across_reload() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    for i in 0..3 {
        add_ref(&mut st, &format!("r{i}"), Some(1)).unwrap();
    }
    let mut it = st.merged().refs().unwrap();
    assert_eq!(it.next().unwrap().unwrap().refname, b"r0");
    let mut other = Stack::open(dir.path(), no_auto()).unwrap();
    other.compact_all(None).unwrap();
    st.reload().unwrap();
    assert_eq!(it.next().unwrap().unwrap().refname, b"r1");
    assert_eq!(it.next().unwrap().unwrap().refname, b"r2");
    assert!(it.next().is_none());
}

#[test]
fn reload_with_missing_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "a", Some(1)).unwrap();
    add_ref(&mut st, "b", Some(1)).unwrap();
    let mut it = st.merged().refs().unwrap();
    let list = dir.path().join("tables.list");
    let mut content = std::fs::read_to_string(&list).unwrap();
    content.push_str("0x000000000003-0x000000000003-12345678.ref\n");
    std::fs::write(&list, content).unwrap();
    let e = st.reload().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotExist);
    assert_eq!(st.tables().len(), 2);
    assert!(st.merged().read_ref(b"b").unwrap().is_some());
    assert_eq!(it.next().unwrap().unwrap().refname, b"a");
}

#[test]
fn path_escaping_tables_list_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tables.list"), "../../etc/passwd\n").unwrap();
    let e = Stack::open(dir.path(), opts()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Format);
    assert!(e.to_string().contains("tables.list"), "{e}");
}

#[test]
fn many_additions_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), opts()).unwrap();
    let n = 40u64;
    for i in 0..n {
        st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            let name = format!("branch{i:02}");
            w.add_ref(&RefRecord::new(
                name.clone(),
                ui,
                RefValue::Object(oid(i as u8)),
            ))?;
            w.add_log(&log(&name, ui, 1000 + i, "update"))
        })
        .unwrap();
    }
    let fresh = Stack::open(dir.path(), opts()).unwrap();
    for i in 0..n {
        let name = format!("branch{i:02}");
        let r = fresh.merged().read_ref(name.as_bytes()).unwrap().unwrap();
        assert_eq!(r.value_id(), Some(&oid(i as u8)));
        assert_eq!(r.update_index, i + 1);
        let l = log_of(fresh.merged(), name.as_bytes());
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].update().unwrap().committer.time, 1000 + i);
    }
    assert_eq!(fresh.merged().refs().unwrap().count(), n as usize);
}

/// The accessors and counters a caller sees: the options it gave, records decoded by
/// reads, `tables.list` not read again while its file is the one loaded, read again once
/// another writer replaced it.
#[test]
fn options_counters_and_up_to_date_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    assert_eq!(*st.options(), no_auto());
    add_ref(&mut st, "refs/heads/a", Some(1)).unwrap();
    let before = st.stats();
    assert!(st.merged().read_ref(b"refs/heads/a").unwrap().is_some());
    assert!(st.stats().since(before).records_decoded >= 1);

    let own = st.own_stats();
    assert!(own.tables_list_reads >= 1, "{own:?}");
    assert!(st.is_up_to_date().unwrap());
    assert!(st.is_up_to_date().unwrap());
    let spent = st.own_stats().since(own);
    assert_eq!(spent.tables_list_reads, 0);
    // An up-to-date check of an unchanged list is one stat, and so is a reload of it, as in
    // git's `reftable_stack_reload`.
    assert_eq!(spent.tables_list_stats, 2, "{spent:?}");
    let own = st.own_stats();
    st.reload().unwrap();
    let spent = st.own_stats().since(own);
    assert_eq!((spent.tables_list_stats, spent.tables_list_reads), (1, 0));
    // `no_auto()` does not sync; with fsync on, an addition syncs its table, the directory
    // (the table's rename), the list and the directory again (the list's rename).
    let mut synced = Stack::open(dir.path(), no_auto().fsync(true)).unwrap();
    let own = synced.own_stats();
    add_ref(&mut synced, "refs/heads/s", Some(3)).unwrap();
    assert_eq!(synced.own_stats().since(own).fsyncs, 4);
    st.reload().unwrap();
    let own = st.own_stats();
    add_ref(&mut st, "refs/heads/t", Some(4)).unwrap();
    assert_eq!(st.own_stats().since(own).fsyncs, 0);

    let mut other = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut other, "refs/heads/b", Some(2)).unwrap();
    let own = st.own_stats();
    assert!(!st.is_up_to_date().unwrap());
    assert_eq!(st.own_stats().since(own).tables_list_reads, 1);
    st.reload().unwrap();
    assert!(st.merged().read_ref(b"refs/heads/b").unwrap().is_some());
}

/// A `tables.list` rewritten in place (the same file, which git never does) with another
/// size is read again by a reload: the loaded list is known by its file, size and time.
#[test]
fn a_list_rewritten_in_place_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "refs/heads/a", Some(1)).unwrap();
    add_ref(&mut st, "refs/heads/b", Some(2)).unwrap();
    let list = dir.path().join("tables.list");
    let first = std::fs::read_to_string(&list).unwrap();
    let first = first.lines().next().unwrap().to_string();
    // `fs::write` truncates and writes the file the stack holds open: its inode stays.
    std::fs::write(&list, format!("{first}\n")).unwrap();
    assert!(!st.is_up_to_date().unwrap());
    st.reload().unwrap();
    assert_eq!(st.tables().len(), 1);
    assert!(st.merged().read_ref(b"refs/heads/b").unwrap().is_none());
}

/// Opening counts the tables it opens, a reload opens only the new ones, and a
/// `tables.list` rewritten with the same names (a new file) still means up to date.
#[test]
fn reloads_open_only_new_tables_and_compare_names() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, mut st) = writer_of_two_and_reader(dir.path());
    assert_eq!(st.own_stats().tables_opened, 2);
    add_ref(&mut w, "refs/heads/c", Some(3)).unwrap();
    st.reload().unwrap();
    assert_eq!(st.own_stats().tables_opened, 3);

    let list = dir.path().join("tables.list");
    let content = std::fs::read(&list).unwrap();
    let tmp = dir.path().join("tables.list.new");
    std::fs::write(&tmp, &content).unwrap();
    std::fs::rename(&tmp, &list).unwrap();
    assert!(st.is_up_to_date().unwrap());
}

/// A `tables.list` that is not a regular file is an error, not an empty stack.
#[test]
fn a_tables_list_that_is_a_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tables.list")).unwrap();
    let e = Stack::open(dir.path(), no_auto()).unwrap_err();
    assert!(e.message().contains("not a regular file"), "{e}");
}

/// Counters never go back: a table compacted away by another writer keeps its counts in
/// the stack that read it.
#[test]
fn counters_survive_a_concurrent_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = stack_of_three(dir.path());
    let mut it = st.merged().refs().unwrap();
    while it.next_record().unwrap().is_some() {}
    drop(it);
    let read = st.stats().records_decoded;
    assert_eq!(read, 3);
    let mut other = Stack::open(dir.path(), no_auto()).unwrap();
    other.compact_all(None).unwrap();
    st.reload().unwrap();
    assert_eq!(st.tables().len(), 1);
    assert_eq!(st.stats().records_decoded, read);
}

/// A log record that fits a block but compresses to more than one fails the addition
/// when the table is finished; nothing is added.
#[test]
fn a_table_that_cannot_be_finished_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let opts = no_auto().write(
        WriteOptions::default()
            .block_size(1024)
            .exact_log_message(true),
    );
    let mut st = Stack::open(dir.path(), opts).unwrap();
    let mut x = reftable_testkit::tables::Noise::new(7);
    let mut noise = |n: usize| x.bytes(n);
    // Nothing in the record zlib could shrink: random ids and message, no name or email.
    let mut rec = log("refs/heads/a", 1, 0, "");
    if let LogValue::Update(u) = &mut rec.value {
        u.old_id = ObjectId::from_bytes(&noise(20)).unwrap();
        u.new_id = ObjectId::from_bytes(&noise(20)).unwrap();
        u.committer.name.clear();
        u.committer.email.clear();
        u.message = noise(850);
    }
    let mut found = None;
    for extra in 0..120 {
        if let LogValue::Update(u) = &mut rec.value {
            u.message.push(b'x' ^ extra as u8);
        }
        let r = rec.clone();
        let res = st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            let mut r = r;
            r.update_index = ui;
            w.add_log(&r)
        });
        if let Err(e) = res {
            found = Some((e.kind(), e.message().contains("compresses")));
            break;
        }
    }
    assert_eq!(found, Some((ErrorKind::EntryTooBig, true)));
}

/// compact_range: empty and out-of-range requests do nothing (not even an attempt); a
/// compaction counts one attempt, the bytes it read and the entries it wrote; best effort
/// settles for the newer tables only when at least two remain.
#[test]
fn compact_range_bounds_counters_and_best_effort() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    for i in 0..4 {
        add_ref(&mut st, &format!("refs/heads/r{i}"), Some(1)).unwrap();
    }
    for (first, last) in [(1, 0), (2, 2), (0, 4)] {
        st.compact_range(first, last, None, false).unwrap();
        assert_eq!(st.tables().len(), 4, "{first}..={last}");
    }
    assert_eq!(st.compaction_stats().attempts, 0);
    let sizes: u64 = st.tables()[2..].iter().map(|t| t.info().size).sum();
    st.compact_range(2, 3, None, false).unwrap();
    assert_eq!(st.tables().len(), 3);
    let c = st.compaction_stats();
    assert_eq!((c.attempts, c.bytes, c.entries_written), (1, sizes, 2));

    // The newest table locked: nothing newer to settle for.
    let newest = dir.path().join(format!("{}.lock", st.table_names()[2]));
    std::fs::write(&newest, "").unwrap();
    assert_eq!(
        st.compact_range(0, 2, None, true).unwrap_err().kind(),
        ErrorKind::Lock
    );
    std::fs::remove_file(&newest).unwrap();
    // The oldest locked: the two newer ones are compacted.
    let oldest = dir.path().join(format!("{}.lock", st.table_names()[0]));
    std::fs::write(&oldest, "").unwrap();
    st.compact_range(0, 2, None, true).unwrap();
    assert_eq!(st.tables().len(), 2);
}

/// Expiry in compaction keeps an entry written exactly at the cutoff (git's `reflog expire
/// --expire=<t>` drops only older ones) and one exactly at the minimum update index.
#[test]
fn compaction_expiry_keeps_entries_at_the_cutoff() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    for (i, time) in [(1u64, 100u64), (2, 200), (3, 300)] {
        st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            w.add_log(&log("refs/heads/m", ui, time, &format!("m{i}\n")))
        })
        .unwrap();
    }
    let times = |st: &Stack| -> Vec<u64> {
        st.merged()
            .logs()
            .unwrap()
            .map(|l| l.unwrap().update().unwrap().committer.time)
            .collect()
    };
    st.compact_all(Some(&LogExpiry::default().time(200)))
        .unwrap();
    assert_eq!(times(&st), [300, 200]);
    st.compact_all(Some(&LogExpiry::default().min_update_index(3)))
        .unwrap();
    assert_eq!(times(&st), [300]);
}

/// Auto-compaction compares table sizes less the header and footer (minus one), as git
/// does: an older table one byte short of twice the newer one (so counted) is merged, one
/// exactly twice as big is not.
#[test]
fn auto_compaction_discounts_header_and_footer_like_git() {
    let overhead = 24 + 68 - 1;
    let (mut merged, mut kept) = (false, false);
    for len in 1..120 {
        let dir = tempfile::tempdir().unwrap();
        let mut st = Stack::open(dir.path(), no_auto()).unwrap();
        add_ref(&mut st, &format!("refs/heads/{}", "x".repeat(len)), Some(1)).unwrap();
        add_ref(&mut st, "refs/heads/y", Some(2)).unwrap();
        let s: Vec<u64> = st
            .tables()
            .iter()
            .map(|t| t.info().size - overhead)
            .collect();
        if s[0] + 1 == 2 * s[1] || s[0] == 2 * s[1] {
            st.auto_compact().unwrap();
            if s[0] + 1 == 2 * s[1] {
                assert_eq!(st.tables().len(), 1, "{s:?}");
                merged = true;
            } else {
                assert_eq!(st.tables().len(), 2, "{s:?}");
                kept = true;
            }
        }
    }
    assert!(merged && kept);
}

/// With an expiry, even a single table is compacted (to drop its expired entries).
#[test]
fn a_single_table_is_compacted_for_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    st.add(|w, ui| {
        w.set_limits(ui, ui)?;
        w.add_log(&log("refs/heads/m", ui, 100, "old\n"))?;
        w.add_log(&log("refs/heads/n", ui, 300, "new\n"))
    })
    .unwrap();
    let expiry = LogExpiry::default().time(200);
    st.compact_range(0, 0, Some(&expiry), false).unwrap();
    let names: Vec<Vec<u8>> = st
        .merged()
        .logs()
        .unwrap()
        .map(|l| l.unwrap().refname)
        .collect();
    assert_eq!(names, [b"refs/heads/n".to_vec()]);
}

/// Compaction counts every record it writes, reflog entries as well as refs.
#[test]
fn compaction_counts_the_log_entries_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    for i in 0..2u64 {
        add_ref_and_log(&mut st, &format!("refs/heads/r{i}"), "m\n").unwrap();
    }
    st.compact_all(None).unwrap();
    assert_eq!(st.compaction_stats().entries_written, 4);
}

/// `clean` removes an unlisted table whose update indexes the stack covers, never one at
/// the next update index: a writer may be about to list it.
#[test]
fn clean_leaves_a_table_at_the_next_update_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "refs/heads/a", Some(1)).unwrap();
    add_ref(&mut st, "refs/heads/b", Some(1)).unwrap();
    assert_eq!(st.next_update_index(), 3);
    let table_at = |ui: u64| {
        let mut w = reftable::Writer::new(Vec::new(), WriteOptions::default());
        w.set_limits(ui, ui).unwrap();
        w.add_ref(&RefRecord::new(
            "refs/heads/c",
            ui,
            RefValue::Object(oid(2)),
        ))
        .unwrap();
        w.finish().unwrap()
    };
    let covered = dir
        .path()
        .join("0x000000000002-0x000000000002-0badcafe.ref");
    let next = dir
        .path()
        .join("0x000000000003-0x000000000003-0badcafe.ref");
    std::fs::write(&covered, table_at(2)).unwrap();
    std::fs::write(&next, table_at(3)).unwrap();
    st.clean().unwrap();
    assert!(!covered.exists());
    assert!(next.exists());
}

/// The tables of one addition take increasing update indexes: the second is offered the
/// index after the first's maximum, and one reusing the first's index is refused.
#[test]
fn tables_of_one_addition_keep_their_indexes_apart() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "refs/heads/a", Some(1)).unwrap();
    let mut add = st.new_addition(Outdated::Fail).unwrap();
    let mut offered = Vec::new();
    add.add_table(|w, ui| {
        offered.push(ui);
        w.set_limits(ui, ui + 1)?;
        w.add_ref(&RefRecord::new(
            "refs/heads/b",
            ui + 1,
            RefValue::Object(oid(2)),
        ))
    })
    .unwrap();
    let e = add
        .add_table(|w, ui| {
            offered.push(ui);
            w.set_limits(3, 3)?;
            w.add_ref(&RefRecord::new("refs/heads/c", 3, RefValue::Object(oid(3))))
        })
        .unwrap_err();
    assert!(
        e.message()
            .contains("below the stack's next update index 4"),
        "{e}"
    );
    assert_eq!(offered, [2, 4]);
}

/// Auto-compaction after an addition ignores a held lock or an outdated stack, but not a
/// damaged table: the addition is in and the commit succeeds, with the compaction's error
/// as its warning (git 2.45 to master report it as the failure of an update that is
/// nonetheless committed).
#[test]
fn auto_compaction_reports_a_damaged_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref_and_log(&mut st, "refs/heads/a", &"x".repeat(3000)).unwrap();
    // Damage the compressed log data; the table still opens.
    let path = dir.path().join(&st.table_names()[0]);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = st.tables()[0].info().logs.offset as usize + 8;
    bytes[at] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let mut st = Stack::open(dir.path(), opts()).unwrap();
    let committed = add_ref_and_log(&mut st, "refs/heads/b", &"y".repeat(3000)).unwrap();
    let e = committed.warning.expect("the compaction's error");
    assert!(
        matches!(e.kind(), ErrorKind::Zlib | ErrorKind::Format),
        "{:?}: {e}",
        e.kind()
    );
    st.reload().unwrap();
    assert_eq!(st.tables().len(), 2, "the addition itself was committed");
}

/// A compaction that finds `tables.list` changed when it comes back to commit (another
/// writer added a table while it wrote) puts its table where its inputs are and keeps the
/// other writer's table after it. The other writer waits for the compaction's table locks,
/// then adds while the compaction is still writing: a race it wins by a wide margin (the
/// compaction writes 60,000 refs), checked by the table locks still being there after its
/// addition; the attempt is repeated when it lost.
#[test]
fn a_compaction_splices_its_table_into_a_list_changed_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    for t in 0..2 {
        st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            for i in 0..30_000 {
                let name = format!("refs/heads/t{t}-{i:06}");
                w.add_ref(&RefRecord::new(name, ui, RefValue::Object(oid(1))))?;
            }
            Ok(())
        })
        .unwrap();
    }
    let mut raced = false;
    for attempt in 0..5 {
        let mut a = Stack::open(dir.path(), waiting()).unwrap();
        let n = a.tables().len();
        let inputs: Vec<String> = a.table_names()[n - 2..].to_vec();
        let locks: Vec<std::path::PathBuf> = inputs
            .iter()
            .map(|t| dir.path().join(format!("{t}.lock")))
            .collect();
        let path = dir.path().to_path_buf();
        let other = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while !locks.iter().all(|l| l.exists()) {
                if start.elapsed() > Duration::from_secs(10) {
                    return false;
                }
                std::thread::yield_now();
            }
            let mut b = Stack::open(&path, waiting()).unwrap();
            add_ref(&mut b, &format!("refs/heads/other-{attempt}"), Some(2)).unwrap();
            locks.iter().all(|l| l.exists())
        });
        a.compact_range(n - 2, n - 1, None, false).unwrap();
        let during = other.join().unwrap();
        a.reload().unwrap();
        let names = a.table_names().to_vec();
        assert_eq!(
            names.len(),
            n,
            "two tables in, one out, one added: {names:?}"
        );
        assert!(!names.iter().any(|t| inputs.contains(t)), "{names:?}");
        assert!(
            names[n - 1] != names[n - 2]
                && a.merged().refs().unwrap().count() == 60_000 + attempt + 1,
            "{names:?}"
        );
        // The other writer's table comes after the compacted one.
        let last = &a.tables()[n - 1];
        assert_eq!(last.refs().unwrap().count(), 1, "{names:?}");
        if during {
            raced = true;
            break;
        }
    }
    assert!(
        raced,
        "the other writer never added while the compaction wrote"
    );
}

/// An addition is committed once `tables.list` names its table: an auto-compaction that then
/// fails (here on an older table whose record is damaged) is the commit's warning, not its
/// failure (git reports it as the update's failure).
#[test]
fn a_failed_compaction_after_commit_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    assert!(add_ref(&mut st, "refs/heads/a", Some(1))
        .unwrap()
        .warning
        .is_none());
    // The first record's (suffix length << 3 | value type) varint, right after the file
    // header, the block header and the record's prefix length: value type 7 does not exist.
    let older = dir.path().join(&st.table_names()[0]);
    let mut bytes = std::fs::read(&older).unwrap();
    let at = 24 + 4 + 1;
    assert_eq!(bytes[at], (12 << 3) | 1, "refs/heads/a, an object id");
    bytes[at] = (12 << 3) | 7;
    std::fs::write(&older, &bytes).unwrap();
    // Opened afresh, so that the damaged bytes are the ones read.
    let mut st = Stack::open(dir.path(), opts()).unwrap();
    // Two tables of one ref each: auto-compaction merges them and meets the damage.
    let committed = add_ref(&mut st, "refs/heads/b", Some(2)).expect("the addition is committed");
    let warning = committed.warning.expect("the compaction failed");
    assert_eq!(warning.kind(), ErrorKind::Format, "{warning}");
    let listed = std::fs::read_to_string(dir.path().join("tables.list")).unwrap();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert_eq!(
        st.merged()
            .read_ref(b"refs/heads/b")
            .unwrap()
            .unwrap()
            .value,
        RefValue::Object(oid(2))
    );
    assert!(!ls(dir.path()).iter().any(|n| n.ends_with(".lock")));
    // The next commit's own work succeeds: no warning.
    st.set_options(no_auto()).unwrap();
    assert!(add_ref(&mut st, "refs/heads/c", Some(3))
        .unwrap()
        .warning
        .is_none());
}

/// The live log of `name` in `m`, collected.
fn log_of(m: &reftable::MergedTable, name: &[u8]) -> Vec<reftable::LogRecord> {
    m.read_log(name).unwrap().map(Result::unwrap).collect()
}

/// Opening never creates the stack's directory: a missing one is an error saying so. The
/// creating open makes it (and its parents) as `git init` does, and opens an existing stack
/// as it is.
#[test]
fn only_the_creating_open_makes_a_missing_stack_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repo").join("reftable");
    let e = Stack::open(&path, opts()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotExist);
    assert!(!path.exists());
    let mut st = Stack::open_or_create(&path, no_auto()).unwrap();
    assert!(path.is_dir());
    assert!(st.tables().is_empty());
    add_ref(&mut st, "a", Some(1)).unwrap();
    let again = Stack::open_or_create(&path, no_auto()).unwrap();
    assert_eq!(again.table_names(), st.table_names());
    assert!(again.merged().read_ref(b"a").unwrap().is_some());
}

/// Up to date means the same table names in `tables.list`, not the same number of them: a
/// compaction of two tables followed by an addition leaves as many tables as before, and a
/// reader of the old list is outdated (and an addition from it is refused).
#[test]
fn a_list_of_as_many_other_tables_is_not_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, mut st) = writer_of_two_and_reader(dir.path());
    w.compact_all(None).unwrap();
    add_ref(&mut w, "refs/heads/c", Some(3)).unwrap();
    assert_eq!(w.table_names().len(), st.table_names().len());
    assert_ne!(w.table_names(), st.table_names());
    assert!(!st.is_up_to_date().unwrap());
    let e = st.new_addition(Outdated::Fail).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Outdated);
    st.reload().unwrap();
    assert!(st.is_up_to_date().unwrap());
    assert!(st.merged().read_ref(b"refs/heads/c").unwrap().is_some());
}

/// The geometric factor is the ratio auto-compaction keeps between a table and the sum of
/// the newer ones: at 2, sixteen equal additions leave several tables; at a factor no older
/// table can reach, each addition is merged into the one table.
#[test]
fn the_geometric_factor_sets_how_many_tables_auto_compaction_keeps() {
    let tables_after = |factor: u8| {
        let dir = tempfile::tempdir().unwrap();
        let mut st = Stack::open(dir.path(), opts().geometric_factor(factor)).unwrap();
        for i in 0..16 {
            add_ref(&mut st, &format!("refs/heads/b{i:02}"), Some(1)).unwrap();
        }
        assert_eq!(st.merged().refs().unwrap().count(), 16);
        st.tables().len()
    };
    assert!(tables_after(2) > 1);
    assert_eq!(tables_after(u8::MAX), 1);
}

/// A stack opened to suppress deletions hides tombstones from its merged view, after every
/// reload; switched off through the options, they surface again for the caller to skip.
#[test]
fn a_stack_that_suppresses_deletions_hides_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto().suppress_deletions(true)).unwrap();
    add_ref(&mut st, "refs/heads/a", Some(1)).unwrap();
    add_ref(&mut st, "refs/heads/b", Some(1)).unwrap();
    add_ref(&mut st, "refs/heads/a", None).unwrap();
    st.reload().unwrap();
    let names = |st: &Stack| -> Vec<Vec<u8>> {
        st.merged()
            .refs()
            .unwrap()
            .map(|r| r.unwrap().refname)
            .collect()
    };
    assert!(st.merged().suppress_deletions());
    assert_eq!(names(&st), [b"refs/heads/b".to_vec()]);
    st.set_options(no_auto()).unwrap();
    assert_eq!(
        names(&st),
        [b"refs/heads/a".to_vec(), b"refs/heads/b".to_vec()]
    );
}

/// An open stack's hash cannot change through its options: the tables it holds are of one
/// hash (git opens a stack with the repository's object format and keeps it).
#[test]
fn set_options_refuses_another_hash_and_takes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), no_auto()).unwrap();
    add_ref(&mut st, "refs/heads/a", Some(1)).unwrap();
    let other = no_auto().write(WriteOptions::default().hash(HashId::Sha256));
    assert_eq!(st.set_options(other).unwrap_err().kind(), ErrorKind::Api);
    assert_eq!(st.options().hash(), HashId::Sha1);
    add_ref(&mut st, "refs/heads/b", Some(2)).unwrap();
    assert!(st.tables().iter().all(|t| t.hash() == HashId::Sha1));
    st.set_options(opts()).unwrap();
    add_ref(&mut st, "refs/heads/c", Some(3)).unwrap();
    assert_eq!(st.tables().len(), 1, "auto-compaction now on");
}

/// The read-only stack lists every table of `tables.list`, in its order, and a reload
/// follows what a writer added.
#[test]
fn the_stack_reader_names_every_listed_table_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = stack_of_three(dir.path());
    let mut r = reftable::StackReader::open(dir.path(), None).unwrap();
    assert_eq!(r.table_names(), st.table_names());
    assert_eq!(r.tables().len(), 3);
    add_ref(&mut st, "refs/heads/d", Some(4)).unwrap();
    r.reload().unwrap();
    assert_eq!(r.table_names(), st.table_names());
    assert_eq!(r.table_names().len(), 4);
    let listed = std::fs::read_to_string(dir.path().join("tables.list")).unwrap();
    let listed: Vec<&str> = listed.lines().collect();
    assert_eq!(r.table_names(), listed.as_slice());
}
