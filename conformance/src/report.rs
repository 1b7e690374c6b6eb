//! Run reports: one JSON document and a Markdown summary.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::case::Check;

/// The JSON report of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Divergences not listed as known git defects: the gate fails when this is not 0.
    pub unexpected_divergences: u64,
    /// Divergences matching an entry of the expected-divergences file.
    pub expected_divergences: u64,
    /// `git version` of the git under test.
    pub git_version: String,
    /// The run's seed.
    pub seed: u64,
    /// Cases run.
    pub cases: u64,
    /// Operations run (over all cases).
    pub operations: u64,
    /// Comparisons made, per check.
    pub comparisons: BTreeMap<String, u64>,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
    /// Operations verified per second.
    pub operations_per_second: f64,
    /// Case directories written for divergent cases.
    pub divergent_cases: Vec<String>,
    /// The shard run (`K/N`).
    pub shard: String,
}

impl Report {
    /// Add a case's comparison counts.
    pub fn add_comparisons(&mut self, c: &BTreeMap<Check, u64>) {
        for (k, v) in c {
            *self
                .comparisons
                .entry(format!("{k:?}").to_lowercase())
                .or_default() += v;
        }
    }

    /// The Markdown summary.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        s.push_str("# reftable conformance run\n\n");
        s.push_str(&format!(
            "| git | seed | shard | cases | operations | unexpected divergences | expected divergences | wall time | operations/s |\n|---|---|---|---|---|---|---|---|---|\n| {} | {} | {} | {} | {} | {} | {} | {:.1} s | {:.0} |\n\n",
            self.git_version,
            self.seed,
            self.shard,
            self.cases,
            self.operations,
            self.unexpected_divergences,
            self.expected_divergences,
            self.wall_seconds,
            self.operations_per_second
        ));
        s.push_str("| check | comparisons |\n|---|---|\n");
        for (k, v) in &self.comparisons {
            s.push_str(&format!("| {k} | {v} |\n"));
        }
        if !self.divergent_cases.is_empty() {
            s.push_str("\n## Divergent cases\n\n");
            for d in &self.divergent_cases {
                s.push_str(&format!("- `{d}`\n"));
            }
        }
        s
    }
}
