//! The migration mode's report: the migrations compared, the differences found (each with
//! the known git defect it matches, if any), and its Markdown form.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::finding::divergence::Finding;

/// One migration that did not match.
#[derive(Clone, Debug, Serialize)]
pub struct MigrationDivergence {
    /// The case.
    pub case: String,
    /// What differs (`table bytes`, `git refused`, ...), the details and the known git
    /// defect it matches, if any.
    #[serde(flatten)]
    pub finding: Finding,
}

/// One case of the run, as the CI test results list it (not part of the JSON report).
#[derive(Clone, Debug, Default)]
pub struct MigrationCase {
    /// The case (`seed1-case3`).
    pub case: String,
    /// Its index in the seed's list.
    pub index: u64,
    /// Seconds it took.
    pub seconds: f64,
    /// Its operations, one summary each (the mode does not minimize).
    pub operations: Vec<String>,
    /// Where it was written, when it diverged unexpectedly and a directory was asked for.
    pub dir: Option<String>,
}

/// The mode's report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MigrationReport {
    /// git.
    pub git: String,
    /// Its version.
    pub version: String,
    /// Cases.
    pub cases: u64,
    /// Operations replayed on files repositories.
    pub operations: u64,
    /// Migrations compared (git's and ours).
    pub migrations: u64,
    /// Whether reflogs were migrated (the git can).
    pub with_reflogs: bool,
    /// Refs and reflog entries over all migrated repositories.
    pub refs: u64,
    /// Reflog entries.
    pub log_entries: u64,
    /// Tables compared byte for byte and equal.
    pub identical_tables: u64,
    /// Divergences.
    pub divergences: Vec<MigrationDivergence>,
    /// Cases left out, and why.
    pub skipped: Vec<String>,
    /// Migrations back to files compared (git's layout against ours).
    pub back_compared: u64,
    /// Of those, identical file trees.
    pub back_identical: u64,
    /// Repositories git then migrated back to files for real (its stack removed).
    pub back_migrated: u64,
    /// Migrations git and we both refused (a record too large for the block size).
    pub both_refused: u64,
    /// Seconds.
    pub seconds: f64,
    /// Why the run stopped before its list of cases ended (a time budget, fail-fast).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Every case run, in order (for the CI test results).
    #[serde(skip)]
    pub case_runs: Vec<MigrationCase>,
}

impl MigrationReport {
    /// The known git defects its divergences matched.
    pub fn known_defects(&self) -> Vec<&str> {
        self.divergences
            .iter()
            .filter_map(|d| d.finding.expected.as_deref())
            .collect()
    }

    /// Divergences no known git defect explains.
    pub fn unexpected(&self) -> usize {
        self.divergences
            .iter()
            .filter(|d| d.finding.expected.is_none())
            .count()
    }

    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Migration files → reftable: git {} and reftable-rs\n\n`{}`; {} cases, {} operations replayed on files repositories, {} migrations compared ({} refs, {} reflog entries; reflogs {}), {} tables byte-identical, {} refused by both (a record too large for the block size), {:.0} s.\n\n",
            self.version,
            self.git,
            self.cases,
            self.operations,
            self.migrations,
            self.refs,
            self.log_entries,
            if self.with_reflogs { "migrated" } else { "removed first: this git cannot migrate them" },
            self.identical_tables,
            self.both_refused,
            self.seconds
        );
        s.push_str(&format!(
            "Back to files (`git refs migrate --ref-format=files --dry-run` against `RefDb::export_files`): {} compared, {} identical file trees; {} then migrated back for real (the files its dry run showed, no `reftable/` left, the same refs).\n\n",
            self.back_compared, self.back_identical, self.back_migrated
        ));
        let mut by: BTreeMap<(String, Option<String>), u64> = BTreeMap::new();
        for d in &self.divergences {
            *by.entry((d.finding.class.clone(), d.finding.expected.clone()))
                .or_default() += 1;
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!("The run {why}, after {} cases.\n\n", self.cases));
        }
        s.push_str(&format!(
            "**{} unexpected divergences.**\n\n",
            self.unexpected()
        ));
        if !by.is_empty() {
            s.push_str("| difference | known git defect | cases |\n|---|---|---:|\n");
            for ((c, e), n) in &by {
                s.push_str(&format!(
                    "| {c} | {} | {n} |\n",
                    e.as_deref().unwrap_or("**none**")
                ));
            }
            s.push('\n');
        }
        for k in &self.skipped {
            s.push_str(&format!("- skipped {k}\n"));
        }
        for d in self
            .divergences
            .iter()
            .filter(|d| d.finding.expected.is_none())
            .take(20)
        {
            s.push_str(&format!(
                "- {} {}: {}\n",
                d.case,
                d.finding.class,
                d.finding.detail.replace('\n', " ")
            ));
        }
        s
    }
}
