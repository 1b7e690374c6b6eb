//! What one case's roles came to: passes and failures per role and check, what was not
//! tried and why, and the findings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::impls::check::{ImplCheck, Role};
use crate::ops::Op;

/// Counts of one cell of the matrix.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// Comparisons that agreed with git.
    pub passed: u64,
    /// Comparisons that did not (findings, known or not).
    pub failed: u64,
    /// Comparisons the adapter could not be asked (unsupported), with the first reason.
    pub not_tried: u64,
    /// Why it was not tried, the first time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

/// A difference from git.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ImplFinding {
    /// The role.
    pub role: Role,
    /// The check.
    pub check: ImplCheck,
    /// The case (`seed7-case3`).
    pub case: String,
    /// Its index in the seed's list.
    pub index: u64,
    /// The step it showed at (0-based; the case's length for end-of-case checks).
    pub step: usize,
    /// What differs.
    pub detail: String,
    /// The case's operations up to that step (minimized when it could be).
    pub ops: Vec<Op>,
    /// The registry entry it is, if it is a known defect of the implementation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known: Option<String>,
}

/// A case's tally.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Per role and check.
    pub cells: BTreeMap<(Role, ImplCheck), Cell>,
    /// Findings (one per role at most: a role stops at its first).
    pub findings: Vec<ImplFinding>,
}

impl Tally {
    /// One comparison's outcome.
    pub fn count(&mut self, role: Role, check: ImplCheck, passed: bool) {
        let c = self.cells.entry((role, check)).or_default();
        if passed {
            c.passed += 1;
        } else {
            c.failed += 1;
        }
    }

    /// A comparison the adapter could not be asked.
    pub fn not_tried(&mut self, role: Role, check: ImplCheck, why: &str) {
        let c = self.cells.entry((role, check)).or_default();
        c.not_tried += 1;
        c.why_not.get_or_insert_with(|| why.to_string());
    }

    /// Add another tally.
    pub fn add(&mut self, other: Tally) {
        for (k, v) in other.cells {
            let c = self.cells.entry(k).or_default();
            c.passed += v.passed;
            c.failed += v.failed;
            c.not_tried += v.not_tried;
            if c.why_not.is_none() {
                c.why_not = v.why_not;
            }
        }
        self.findings.extend(other.findings);
    }
}
