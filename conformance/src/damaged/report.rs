//! What a damaged-stack run reports: each distinct [`Finding`] (side, class, signature,
//! minimized damage, reproducer) and the run's [`DamageReport`] with its Markdown form.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::class::{Class, Side};
use super::damage::{Damage, Edit};

/// A finding: what went wrong, on whose side, where.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    /// `git` or `ours`.
    pub side: Side,
    /// The class (`crash`, `hang`, `hidden-load-error`, ...).
    pub class: Class,
    /// The command.
    pub command: String,
    /// What tells distinct defects apart: signal and first frames for crashes.
    pub signature: String,
    /// How often it was seen.
    pub count: u64,
    /// Every command that showed it (a crash site is often reached from several).
    pub commands: Vec<String>,
    /// Distinct details (our errors, numbers and names left out), at most 8.
    pub samples: Vec<String>,
    /// The first damage that showed it (minimized once the run ends).
    pub damage: Damage,
    /// The base it was seen on.
    pub base: usize,
    /// Detail (stderr, our error, the outputs).
    pub detail: String,
    /// The directory with the damaged repository and `reproduce.sh`.
    pub case_dir: Option<String>,
    /// The known git defect (mode `damaged` of the registry) it matches, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known: Option<String>,
}

/// The mode's report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DamageReport {
    /// git under test.
    pub git: String,
    /// Its version.
    pub version: String,
    /// Seed.
    pub seed: u64,
    /// Bases.
    pub bases: u64,
    /// Damaged stacks tried.
    pub trials: u64,
    /// Commands run (git and ours).
    pub commands: u64,
    /// Wall time.
    pub seconds: f64,
    /// Outcomes per class over every command on git (`ok`, `error`, `crash`, ...).
    pub git_outcomes: BTreeMap<String, u64>,
    /// Distinct findings on git's side.
    pub git_findings: Vec<Finding>,
    /// Findings on our side (must be empty).
    pub ours_findings: Vec<Finding>,
    /// Why the trials stopped early, when fail-fast stopped them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Known damaged-stack defects in range whose reproducer no longer shows them (see
    /// `damaged/stale.rs`): they fail the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_known: Vec<StaleKnown>,
}

/// A known defect whose replay did not show it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StaleKnown {
    /// The registry entry.
    pub id: String,
    /// What the replay said, as one line.
    pub line: String,
}

impl DamageReport {
    /// The known git defects its findings matched.
    pub fn known_defects(&self) -> Vec<&str> {
        self.git_findings
            .iter()
            .filter_map(|f| f.known.as_deref())
            .collect()
    }

    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Damaged stacks: git {} and reftable-rs\n\n`{}`; seed {}, {} bases, {} damaged stacks, {} commands, {:.0} s.\n\n",
            self.version, self.git, self.seed, self.bases, self.trials, self.commands, self.seconds
        );
        s.push_str(&format!(
            "**Ours: {} findings** (crashes, hangs, files touched outside, silent wrong answers).\n\n",
            self.ours_findings.len()
        ));
        let crash_sites = self
            .git_findings
            .iter()
            .filter(|f| f.class == Class::Crash)
            .count();
        s.push_str(&format!(
            "**git: {} distinct findings, {crash_sites} distinct crash sites.**\n\n",
            self.git_findings.len()
        ));
        for st in &self.stale_known {
            s.push_str(&format!("**Stale:** {}\n\n", st.line));
        }
        s.push_str("| side | class | commands | signature | known git defect | seen | minimized damage | reproducer |\n|---|---|---|---|---|---:|---|---|\n");
        for f in self.ours_findings.iter().chain(&self.git_findings) {
            let dmg: Vec<String> = f.damage.edits.iter().map(Edit::summary).collect();
            s.push_str(&format!(
                "| {} | {} | `{}` | {} | {} | {} | {} | {} |\n",
                f.side,
                f.class,
                f.commands.join("`, `"),
                f.signature.replace('|', "\\|"),
                f.known.as_deref().map_or("-".into(), |k| format!("`{k}`")),
                f.count,
                dmg.join("; ").replace('|', "\\|"),
                f.case_dir.as_deref().unwrap_or("-")
            ));
        }
        s.push_str("\n## What we reported where git did not (samples per finding)\n\n");
        for f in self.git_findings.iter().filter(|f| f.class != Class::Crash) {
            s.push_str(&format!("- {} on `{}`:\n", f.class, f.command));
            for x in &f.samples {
                s.push_str(&format!("  - {}\n", x.replace('|', "\\|")));
            }
        }
        s.push_str("\n## Outcomes of git's commands\n\n| command: outcome | count |\n|---|---:|\n");
        for (k, v) in &self.git_outcomes {
            s.push_str(&format!("| {k} | {v} |\n"));
        }
        s
    }
}
