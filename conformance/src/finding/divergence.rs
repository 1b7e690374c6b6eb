//! What the gate compares and what it reports when a comparison fails.

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
    pub const ALL: [Check; 14] = [
        Check::Verdict,
        Check::ErrorClass,
        Check::Bytes,
        Check::OursReadsGit,
        Check::Model,
        Check::Lookups,
        Check::GitView,
        Check::ExpiryCompaction,
        Check::GitReflogs,
        Check::Twin,
        Check::GitReadsOurs,
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
