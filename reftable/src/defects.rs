//! Deliberate bugs for testing the tests: with the `planted-defects` feature, a test can
//! switch one on at run time and check that the conformance gate notices. Without the
//! feature every check here is a constant `false`.

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
}

impl Defect {
    /// Every real defect.
    pub const ALL: [Defect; 5] = [
        Defect::RestartOffByOne,
        Defect::TombstoneIgnored,
        Defect::WrongUpdateIndex,
        Defect::DroppedReflogEntry,
        Defect::LostTzSign,
    ];
}

#[cfg(feature = "planted-defects")]
static ACTIVE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Switch `defect` on for the whole process (`Defect::None` switches it off).
#[cfg(feature = "planted-defects")]
pub fn plant(defect: Defect) {
    ACTIVE.store(defect as u8, std::sync::atomic::Ordering::SeqCst);
}

/// Whether `defect` is switched on.
#[inline]
pub(crate) fn active(defect: Defect) -> bool {
    #[cfg(feature = "planted-defects")]
    {
        ACTIVE.load(std::sync::atomic::Ordering::Relaxed) == defect as u8
    }
    #[cfg(not(feature = "planted-defects"))]
    {
        let _ = defect;
        false
    }
}

/// Crash here (abort the process) when the `REFTABLE_CRASH_AT` environment variable names
/// this point: for crash-consistency tests, with the `planted-defects` feature only.
#[inline]
pub(crate) fn crash_point(name: &str) {
    #[cfg(feature = "planted-defects")]
    if std::env::var("REFTABLE_CRASH_AT").is_ok_and(|v| v == name) {
        std::process::abort();
    }
    #[cfg(not(feature = "planted-defects"))]
    let _ = name;
}

/// The crash points of a stack write, in the order a transaction passes them.
pub const CRASH_POINTS: [&str; 9] = [
    "add:locked",
    "add:temp-written",
    "add:table-renamed",
    "commit:list-written",
    "commit:list-renamed",
    "compact:tables-locked",
    "compact:temp-written",
    "compact:table-renamed",
    "compact:list-renamed",
];
