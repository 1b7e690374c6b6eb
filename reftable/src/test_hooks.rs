//! Test hooks: deliberate defects and crash points, compiled only into builds made with
//! `--cfg reftable_test_hooks` (`ci/test-hooks.sh` makes one, in a target directory of its
//! own). A `--cfg` is not a Cargo feature, so no feature unification in a workspace can switch
//! it on: every ordinary build, the `reftable` binary included, has none of this code.
//!
//! - [`Defect`]s are bugs the conformance gate must catch: [`plant`] switches one on for
//!   the whole process.
//! - [`CrashPoint`]s are the steps of a stack write where a crash test aborts the process:
//!   the one named by the `REFTABLE_CRASH_AT` environment variable (read once) aborts.
//!   [`at`] instead runs a closure there, once, on the thread that reaches it: the way an
//!   ordering test puts a second writer's step between two of the first one's.

use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A deliberate bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Defect {
    /// No defect.
    None = 0,
    /// Block writer: restart points one record late.
    RestartOffByOne = 1,
    /// Merged view: a tombstone does not shadow older values.
    TombstoneIgnored = 2,
    /// Ref database: transactions write update index + 1.
    WrongUpdateIndex = 3,
    /// Ref database: HEAD's entry is not written when its branch moves.
    DroppedReflogEntry = 4,
    /// Ref database: reflog time zones lose their sign.
    LostTzSign = 5,
    /// Stack: an addition trusts the stack it loaded before taking `tables.list.lock` and
    /// does not reload it under the lock, so a concurrent writer's tables are dropped (a lost
    /// update only concurrent writers can see).
    NoReloadUnderLock = 6,
    /// Stack: a failure after an addition's commit point (the reload or auto-compaction
    /// after `tables.list` was renamed into place) is returned as the commit's, as git does:
    /// a committed write reported failed, which only injected faults can show.
    AfterCommitErrorReturned = 7,
    /// Stack: the directory is not synced after renames, so an acknowledged write can be
    /// lost to a power loss (only the power-loss check can show it).
    NoDirSync = 8,
    /// Stack: an addition writes `tables.list` without its final newline (git 2.47 reads
    /// such a list, later gits refuse it: only the list's bytes show it to 2.47).
    ListWithoutFinalNewline = 9,
    /// Stack: a compaction leaves the tables it replaced in the directory (no reader sees
    /// them: only the directory's files show it).
    CompactedTablesKept = 10,
}

impl Defect {
    /// Every real defect.
    pub const ALL: [Defect; 7] = [
        Defect::RestartOffByOne,
        Defect::TombstoneIgnored,
        Defect::WrongUpdateIndex,
        Defect::DroppedReflogEntry,
        Defect::LostTzSign,
        Defect::ListWithoutFinalNewline,
        Defect::CompactedTablesKept,
    ];

    /// The defects only concurrent writers can see (the sequential gate cannot).
    pub const CONCURRENT: [Defect; 1] = [Defect::NoReloadUnderLock];

    /// The defects only injected system-call faults (`conformance faults`) or power loss
    /// (`conformance powerloss`) can show.
    pub const FAULTS: [Defect; 2] = [Defect::AfterCommitErrorReturned, Defect::NoDirSync];

    /// The defect's name in `REFTABLE_PLANT` (`no-reload-under-lock`, …).
    pub fn name(self) -> &'static str {
        match self {
            Defect::None => "none",
            Defect::RestartOffByOne => "restart-off-by-one",
            Defect::TombstoneIgnored => "tombstone-ignored",
            Defect::WrongUpdateIndex => "wrong-update-index",
            Defect::DroppedReflogEntry => "dropped-reflog-entry",
            Defect::LostTzSign => "lost-tz-sign",
            Defect::NoReloadUnderLock => "no-reload-under-lock",
            Defect::AfterCommitErrorReturned => "after-commit-error-returned",
            Defect::NoDirSync => "no-dir-sync",
            Defect::ListWithoutFinalNewline => "list-without-final-newline",
            Defect::CompactedTablesKept => "compacted-tables-kept",
        }
    }

    /// The defect named `name`.
    pub fn from_name(name: &str) -> Option<Defect> {
        std::iter::once(Defect::None)
            .chain(Defect::ALL)
            .chain(Defect::CONCURRENT)
            .chain(Defect::FAULTS)
            .find(|d| d.name() == name)
    }
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// How many more additions of this process wait for another writer (see
/// [`await_other_writers`]).
static AWAITS: AtomicU32 = AtomicU32::new(0);

/// How long an addition waits for another writer at most.
const AWAIT_LIMIT: Duration = Duration::from_secs(2);

/// Switch `defect` on for the whole process (`Defect::None` switches it off).
pub fn plant(defect: Defect) {
    ACTIVE.store(defect as u8, Ordering::SeqCst);
}

/// Whether `defect` is switched on.
pub(crate) fn active(defect: Defect) -> bool {
    ACTIVE.load(Ordering::Relaxed) == defect as u8
}

/// While [`Defect::NoReloadUnderLock`] is planted, the next `n` additions of this process
/// wait, before they take `tables.list.lock`, until another process changes `tables.list`
/// (at most two seconds each). The stack each loaded is then out of date when it locks, and
/// the planted defect drops the other writer's tables every time, not only when the
/// scheduler happens to put a commit between a load and a lock (a concurrent worker's
/// test would otherwise pass or fail with the machine's load).
pub fn await_other_writers(n: u32) {
    AWAITS.store(n, Ordering::SeqCst);
}

/// Before an addition locks the list `list`: the wait [`await_other_writers`] asked for.
pub(crate) fn before_lock(list: &Path) {
    let due = AWAITS.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    if due.is_err() || !active(Defect::NoReloadUnderLock) {
        return;
    }
    let before = std::fs::read(list).ok();
    let until = Instant::now() + AWAIT_LIMIT;
    while Instant::now() < until && std::fs::read(list).ok() == before {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A step of a stack write where a crash test can abort the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrashPoint {
    /// An addition holds `tables.list.lock`.
    AddLocked,
    /// An addition's table is written to its temporary file.
    AddTempWritten,
    /// The table is renamed into the stack directory.
    AddTableRenamed,
    /// The new `tables.list` is written to its lock file.
    CommitListWritten,
    /// The lock file is renamed over `tables.list`.
    CommitListRenamed,
    /// A compaction holds the locks of the tables it merges.
    CompactTablesLocked,
    /// The compacted table is written to its temporary file.
    CompactTempWritten,
    /// The compacted table is renamed into the stack directory.
    CompactTableRenamed,
    /// The new `tables.list` is in place.
    CompactListRenamed,
}

impl CrashPoint {
    /// Every crash point, in the order a transaction and a compaction pass them.
    pub const ALL: [CrashPoint; 9] = [
        CrashPoint::AddLocked,
        CrashPoint::AddTempWritten,
        CrashPoint::AddTableRenamed,
        CrashPoint::CommitListWritten,
        CrashPoint::CommitListRenamed,
        CrashPoint::CompactTablesLocked,
        CrashPoint::CompactTempWritten,
        CrashPoint::CompactTableRenamed,
        CrashPoint::CompactListRenamed,
    ];

    /// The name `REFTABLE_CRASH_AT` takes (`add:locked`, …).
    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::AddLocked => "add:locked",
            CrashPoint::AddTempWritten => "add:temp-written",
            CrashPoint::AddTableRenamed => "add:table-renamed",
            CrashPoint::CommitListWritten => "commit:list-written",
            CrashPoint::CommitListRenamed => "commit:list-renamed",
            CrashPoint::CompactTablesLocked => "compact:tables-locked",
            CrashPoint::CompactTempWritten => "compact:temp-written",
            CrashPoint::CompactTableRenamed => "compact:table-renamed",
            CrashPoint::CompactListRenamed => "compact:list-renamed",
        }
    }

    /// The point named `name`.
    pub fn from_name(name: &str) -> Option<CrashPoint> {
        CrashPoint::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// A step to run when this thread reaches a crash point.
type Interleaved = (CrashPoint, Box<dyn FnOnce()>);

thread_local! {
    static AT: std::cell::RefCell<Vec<Interleaved>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Run `step` the next time this thread reaches `point` (once; the hooks of other threads
/// are their own). `step` may write to the same stack through another [`crate::Stack`]:
/// the hook is taken off before it runs, so the crash points it passes run no hook of its.
pub fn at(point: CrashPoint, step: impl FnOnce() + 'static) {
    AT.with(|a| a.borrow_mut().push((point, Box::new(step))));
}

/// Whether a step given to [`at`] is still waiting for its point on this thread (and drop
/// them all): an ordering test asserts that its point was reached.
pub fn take_unreached() -> Vec<CrashPoint> {
    AT.with(|a| a.borrow_mut().drain(..).map(|(p, _)| p).collect())
}

/// Abort the process if `REFTABLE_CRASH_AT` names `point`; run a step [`at`] gave for it.
pub(crate) fn crash_at(point: CrashPoint) {
    let due = AT.with(|a| {
        let mut a = a.borrow_mut();
        let i = a.iter().position(|(p, _)| *p == point)?;
        Some(a.remove(i).1)
    });
    if let Some(step) = due {
        step();
    }
    static ARMED: OnceLock<Option<CrashPoint>> = OnceLock::new();
    let armed = ARMED.get_or_init(|| {
        std::env::var("REFTABLE_CRASH_AT")
            .ok()
            .and_then(|n| CrashPoint::from_name(&n))
    });
    if *armed == Some(point) {
        std::process::abort();
    }
}
