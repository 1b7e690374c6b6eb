//! Defects planted into the reference adapter, to show that the gate's roles can fail: only
//! in a build made with `--cfg reftable_test_hooks` (`ci/test-hooks.sh`); an ordinary
//! build has none and ignores the variable. `REFTABLE_ADAPTER_PLANT` names one:
//!
//! - `skip-old-value`: a transaction ignores every update's expected old value;
//! - `reflog-wrong-old`: a reflog entry says its new id where its old id belongs;
//! - `drop-symref-target`: a symref is read as an object id, its target dropped.

/// A planted defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plant {
    /// Transactions do not check old values.
    SkipOldValue,
    /// Reflog entries carry the wrong old id.
    ReflogWrongOld,
    /// Symrefs are read without their targets.
    DropSymrefTarget,
}

/// Whether `p` is planted in this process.
#[cfg(reftable_test_hooks)]
pub fn planted(p: Plant) -> bool {
    let name = match p {
        Plant::SkipOldValue => "skip-old-value",
        Plant::ReflogWrongOld => "reflog-wrong-old",
        Plant::DropSymrefTarget => "drop-symref-target",
    };
    std::env::var("REFTABLE_ADAPTER_PLANT").is_ok_and(|v| v == name)
}

/// An ordinary build plants nothing.
#[cfg(not(reftable_test_hooks))]
pub fn planted(_: Plant) -> bool {
    false
}
