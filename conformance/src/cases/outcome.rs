//! What a case came to: the operations run, divergences, comparisons per check.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::finding::divergence::{Check, Divergence};
use crate::ops::{CaseOptions, Op};

/// How often a check ran and the wall seconds it took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Runs.
    pub runs: u64,
    /// Wall seconds, summed.
    pub seconds: f64,
}

impl Cost {
    /// Add another's runs and seconds.
    pub fn add(&mut self, other: Cost) {
        self.runs += other.runs;
        self.seconds += other.seconds;
    }
}

/// The outcome of a case.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CaseResult {
    /// Options.
    pub options: Option<CaseOptions>,
    /// The operations run (concrete; up to the first divergence).
    pub ops: Vec<Op>,
    /// Divergences (the run of a case stops at the first divergent step).
    pub divergences: Vec<Divergence>,
    /// Comparisons made, per check.
    pub comparisons: BTreeMap<Check, u64>,
    /// Checks not repeated because what they compare had not changed since they last passed.
    pub unchanged: u64,
    /// Changed states whose git checks waited for git's next turn (`git_turns.rs`).
    #[serde(default)]
    pub git_turns_waited: u64,
    /// The exact stdin sent to `git update-ref --stdin`, transaction by transaction.
    pub git_stdin: Vec<String>,
    /// Transactions git refused for storage reasons (entry too large), which the model
    /// cannot judge.
    pub model_not_applicable: u64,
    /// Operations by kind (`txn`, `branch -m`, ...): how many ran and how many git accepted.
    #[serde(default)]
    pub kinds: BTreeMap<String, [u64; 2]>,
    /// The variants of operations the case drew ([`crate::cases::variants`]), with how often.
    #[serde(default)]
    pub variants: crate::cases::variants::Drawn,
    /// End-of-case probes whose scenario could not be set up on the case's final state, by
    /// probe.
    #[serde(default)]
    pub probes_skipped: BTreeMap<String, u64>,
    /// Time spent in each check after every step (`step: …`) and at the case's end
    /// (`end: …`): wall time of this case's thread, git's processes included.
    #[serde(default)]
    pub check_costs: BTreeMap<String, Cost>,
    /// Whether the files-backend twin followed the case from its start.
    #[serde(default)]
    pub twin_followed: bool,
    /// Whether the files-backend twin was retired (libgit2 cannot represent a state git
    /// accepted, such as a deleted HEAD or a symref loop).
    pub twin_retired: Option<String>,
}
