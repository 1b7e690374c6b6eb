//! What the gate compares, what it reports when a comparison of the generated mode fails
//! ([`Divergence`]), and what the other modes report ([`Finding`]).

use serde::{Deserialize, Serialize};

/// The checks the gate makes; each divergence names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// git and we accept or refuse the same operations.
    Verdict,
    /// Refused operations fail for the same reason.
    ErrorClass,
    /// Tables are byte-identical (all but the random part of the file name).
    Bytes,
    /// Our reader on git's stack sees what our ref database holds.
    OursReadsGit,
    /// The model agrees with us.
    Model,
    /// Our verify (`reftable::fsck`) finds nothing wrong with a stack git wrote.
    OurVerify,
    /// Refs looked up by name (our point lookups on both stacks, git's `verify`) agree
    /// with the listing.
    Lookups,
    /// git's `for-each-ref` on its stack matches our refs.
    GitView,
    /// Our compaction with reflog expiry leaves what git's `reflog expire --all` and
    /// `pack-refs` leave.
    ExpiryCompaction,
    /// git's reflogs (`log -g`) match ours.
    GitReflogs,
    /// The files-backend twin (libgit2) holds the same refs.
    Twin,
    /// git reads our stack: `for-each-ref`, reflogs and `pack-refs` on a copy of it.
    GitReadsOurs,
    /// git refuses `reftable.*` values past their limits and takes them at the limits.
    ConfigLimits,
    /// git's commands on a copy of its repository at the end of a case: the
    /// reference-transaction hook reads each transaction's updates, per state; no ref
    /// changes in a quarantine environment; `stash` pushes and drops.
    GitProbes,
    /// git died of a signal.
    GitCrashed,
    /// git did not finish in time.
    Hang,
    /// The concurrent mode's checks (lost updates, reads of no serial state, refusals
    /// without cause, locks left behind).
    Concurrent,
}

impl Check {
    /// Every check.
    pub const ALL: [Check; 17] = [
        Check::Verdict,
        Check::ErrorClass,
        Check::Bytes,
        Check::OursReadsGit,
        Check::Model,
        Check::OurVerify,
        Check::Lookups,
        Check::GitView,
        Check::ExpiryCompaction,
        Check::GitReflogs,
        Check::Twin,
        Check::GitReadsOurs,
        Check::ConfigLimits,
        Check::GitProbes,
        Check::GitCrashed,
        Check::Hang,
        Check::Concurrent,
    ];
}

/// A difference between implementations at one step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// Index of the operation after which it showed (ops.len() for end-of-case checks).
    pub step: usize,
    /// Which check.
    pub check: Check,
    /// Classification (value mismatch, missing ref, …).
    pub class: String,
    /// What differs.
    pub detail: String,
}

/// Something a mode found wrong, as the concurrent and migration reports list it: a class,
/// the evidence, and the known git defect it is (a registry id), if one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind of wrong (`lost update`, `table bytes`, …).
    pub class: String,
    /// The evidence.
    pub detail: String,
    /// The known git defect it comes from (an entry of the registry whose range holds the
    /// git under test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}
