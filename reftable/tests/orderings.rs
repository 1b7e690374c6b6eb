//! Two writers on one stack, in every order their steps can take: the first writer's
//! addition or compaction is stopped at each of its steps (the library's crash points) and
//! a second writer adds, compacts, reloads or cleans there; then the same two one after the
//! other. Deterministic: the second writer runs on the first one's thread, at the point
//! given (test-hooks builds only, `ci/test-hooks.sh`).
//!
//! What must hold whatever the order:
//! - each write either succeeds or is refused as git refuses it (the lock is held, or the
//!   stack changed since the writer loaded it), never another error;
//! - every write that succeeded is read by a new reader, with the refs that were there;
//! - the stack opens, its tables' update indexes increase, and the directory holds
//!   `tables.list` and the tables it lists, nothing else (no lock, no orphaned table);
//! - a reload in the middle sees the stack before or after the first writer's step, and
//!   a clean deletes nothing that is listed.
#![cfg(reftable_test_hooks)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use reftable::test_hooks::{at, take_unreached, CrashPoint};
use reftable::{ErrorKind, ObjectId, RefRecord, RefValue, Stack, StackOptions};

/// Planting a defect is process-wide: the tests of this file take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const BEFORE: [&str; 3] = ["refs/heads/a", "refs/heads/b", "refs/heads/c"];

fn opts() -> StackOptions {
    StackOptions::default()
        .lock_timeout(Some(Duration::ZERO))
        .auto_compaction(false)
        .fsync(false)
}

fn add(st: &mut Stack, name: &str) -> reftable::Result<()> {
    st.add(|w, ui| {
        w.set_limits(ui, ui)?;
        let id = ObjectId::from_bytes(&[ui as u8; 20]).unwrap();
        w.add_ref(&RefRecord::new(name, ui, RefValue::Object(id)))
    })
    .map(drop)
}

/// A stack of three tables, one ref each.
fn three_tables() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Stack::open(dir.path(), opts()).unwrap();
    for name in BEFORE {
        add(&mut st, name).unwrap();
    }
    dir
}

fn refs(st: &Stack) -> Vec<String> {
    let mut it = st.merged().refs().unwrap();
    let mut out = Vec::new();
    while let Some(r) = it.next_record().unwrap() {
        out.push(String::from_utf8(r.refname.clone()).unwrap());
    }
    out
}

/// The first writer's operation and the points it passes.
#[derive(Clone, Copy, Debug)]
enum First {
    Add,
    Compact,
}

impl First {
    fn points(self) -> &'static [CrashPoint] {
        match self {
            First::Add => &[
                CrashPoint::AddLocked,
                CrashPoint::AddTempWritten,
                CrashPoint::AddTableRenamed,
                CrashPoint::CommitListWritten,
                CrashPoint::CommitListRenamed,
            ],
            First::Compact => &[
                CrashPoint::CompactTablesLocked,
                CrashPoint::CompactTempWritten,
                CrashPoint::CompactTableRenamed,
                CrashPoint::CompactListRenamed,
            ],
        }
    }

    fn run(self, st: &mut Stack) -> reftable::Result<()> {
        match self {
            First::Add => add(st, "refs/heads/first"),
            First::Compact => st.compact_all(None),
        }
    }
}

/// The second writer's operation: on a stack it opened before the first writer started.
#[derive(Clone, Copy, Debug)]
enum Second {
    Add,
    Compact,
    Reload,
    Clean,
}

const SECONDS: [Second; 4] = [Second::Add, Second::Compact, Second::Reload, Second::Clean];

/// What the second writer did: its result, and for a reload the refs it then read.
type Outcome = (reftable::Result<()>, Option<Vec<String>>);

impl Second {
    fn run(self, st: &mut Stack) -> Outcome {
        match self {
            Second::Add => (add(st, "refs/heads/second"), None),
            Second::Compact => (st.compact_all(None), None),
            Second::Reload => match st.reload() {
                Ok(()) => (Ok(()), Some(refs(st))),
                Err(e) => (Err(e), None),
            },
            Second::Clean => (st.clean(), None),
        }
    }
}

/// A refusal git's writers give too: the lock is held, or the stack moved on.
fn refused_as_git_does(r: &reftable::Result<()>) -> bool {
    match r {
        Ok(()) => true,
        Err(e) => matches!(e.kind(), ErrorKind::Lock | ErrorKind::Outdated),
    }
}

/// The checks of the module docs on the stack in `dir` after both writers.
/// How a write ended, for the test's output.
fn said(r: &reftable::Result<()>) -> String {
    match r {
        Ok(()) => "ok".into(),
        Err(e) => format!("refused ({:?})", e.kind()),
    }
}

fn check_after(
    dir: &Path,
    ran: (First, Second),
    first: &reftable::Result<()>,
    second: &Outcome,
    which: &str,
) {
    eprintln!("{which}: first {}, second {}", said(first), said(&second.0));
    assert!(refused_as_git_does(first), "{which}: first: {first:?}");
    assert!(
        refused_as_git_does(&second.0),
        "{which}: second: {:?}",
        second.0
    );
    let st = Stack::open(dir, opts()).unwrap_or_else(|e| panic!("{which}: open: {e}"));
    let read = refs(&st);
    let mut want: Vec<String> = BEFORE.iter().map(|s| s.to_string()).collect();
    if first.is_ok() && matches!(ran.0, First::Add) {
        want.push("refs/heads/first".into());
    }
    if second.0.is_ok() && matches!(ran.1, Second::Add) {
        want.push("refs/heads/second".into());
    }
    want.sort();
    assert_eq!(read, want, "{which}: refs");
    let mut last = 0;
    for t in st.tables() {
        assert!(
            t.min_update_index() > last,
            "{which}: update indexes do not increase"
        );
        last = t.max_update_index();
    }
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut listed: Vec<String> = st.table_names().to_vec();
    listed.push("tables.list".into());
    listed.sort();
    assert_eq!(files, listed, "{which}: the directory");
}

/// The second writer at `point` of the first writer's operation.
fn inside(first: First, point: CrashPoint, second: Second) {
    let dir = three_tables();
    let which = format!("{first:?} inside: {second:?} at {}", point.name());
    let mut a = Stack::open(dir.path(), opts()).unwrap();
    let path: PathBuf = dir.path().to_path_buf();
    let b_outcome: Rc<RefCell<Option<Outcome>>> = Rc::default();
    let slot = b_outcome.clone();
    at(point, move || {
        let mut b = Stack::open(&path, opts()).unwrap();
        *slot.borrow_mut() = Some(second.run(&mut b));
    });
    let first_result = first.run(&mut a);
    assert!(take_unreached().is_empty(), "{which}: point not reached");
    let outcome = b_outcome.borrow_mut().take().expect("second writer ran");
    if let (Second::Reload, Some(seen)) = (second, &outcome.1) {
        let before: Vec<String> = BEFORE.iter().map(|s| s.to_string()).collect();
        let mut after = before.clone();
        if matches!(first, First::Add) {
            after.push("refs/heads/first".into());
            after.sort();
        }
        assert!(
            *seen == before || *seen == after,
            "{which}: a reload read {seen:?}"
        );
    }
    check_after(dir.path(), (first, second), &first_result, &outcome, &which);
}

/// The same two one after the other, the second writer on a stack it loaded first.
fn then(first: First, second: Second) {
    let dir = three_tables();
    let which = format!("{first:?} then {second:?}");
    let mut a = Stack::open(dir.path(), opts()).unwrap();
    let mut b = Stack::open(dir.path(), opts()).unwrap();
    let first_result = first.run(&mut a);
    let outcome = second.run(&mut b);
    check_after(dir.path(), (first, second), &first_result, &outcome, &which);
}

#[test]
fn a_second_writer_at_every_step_of_an_addition() {
    let _turn = serial();
    for point in First::Add.points() {
        for second in SECONDS {
            inside(First::Add, *point, second);
        }
    }
}

#[test]
fn a_second_writer_at_every_step_of_a_compaction() {
    let _turn = serial();
    for point in First::Compact.points() {
        for second in SECONDS {
            inside(First::Compact, *point, second);
        }
    }
}

#[test]
fn a_second_writer_after_the_first() {
    let _turn = serial();
    for first in [First::Add, First::Compact] {
        for second in SECONDS {
            then(first, second);
        }
    }
}

/// The checks fail on the defects they are there for: an addition that does not reload
/// under the lock drops the other writer's table, a compaction that keeps the tables it
/// replaced leaves them in the directory.
#[test]
fn the_checks_catch_planted_ordering_defects() {
    let _turn = serial();
    use reftable::test_hooks::{plant, Defect};
    for (defect, run) in [
        (Defect::NoReloadUnderLock, (First::Add, Second::Add)),
        (
            Defect::CompactedTablesKept,
            (First::Compact, Second::Reload),
        ),
    ] {
        plant(defect);
        let caught = std::panic::catch_unwind(|| then(run.0, run.1)).is_err();
        plant(Defect::None);
        assert!(caught, "{defect:?} passed {run:?}");
    }
}
