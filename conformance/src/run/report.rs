//! Run reports: one JSON document and a Markdown summary, with a section per git.

use std::collections::BTreeMap;

use crate::cases::variants;

use serde::Serialize;

use crate::finding::divergence::Check;
use crate::git::profile::Profile;

/// One divergence, as a reader acts on it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DivergenceRecord {
    /// The case (`seed7-case12`).
    pub case: String,
    /// The git's version.
    pub git: String,
    /// The git binary.
    pub git_path: String,
    /// The check that failed.
    pub check: String,
    /// Its class.
    pub class: String,
    /// Step of the case.
    pub step: usize,
    /// What differs.
    pub detail: String,
    /// The minimized operations (one summary each), empty when not minimized.
    pub minimized_ops: Vec<String>,
    /// Operations of the case up to the divergence, when not minimized.
    pub ops: usize,
    /// The case directory (and its `-min` twin when minimized).
    pub case_dir: String,
    /// The known git defect it matches, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

impl DivergenceRecord {
    /// One line for logs: case, check, git, minimized operations.
    pub fn line(&self) -> String {
        let ops = if self.minimized_ops.is_empty() {
            format!("{} operations (not minimized)", self.ops)
        } else {
            format!(
                "minimized to {}: {}",
                self.minimized_ops.len(),
                self.minimized_ops.join(" ; ")
            )
        };
        let detail = self.detail.lines().next().unwrap_or("");
        format!(
            "divergence: case {} check {} ({}) git {}: {detail}; {ops}; see {}",
            self.case, self.check, self.class, self.git, self.case_dir
        )
    }
}

/// One case run on one git, as the CI test results list it (not part of the JSON report,
/// whose divergences say the same of the cases that matter).
#[derive(Clone, Debug, Default)]
pub struct CaseSummary {
    /// The case's index in the seed's list.
    pub index: u64,
    /// The git's index in the run.
    pub git: usize,
    /// Operations run.
    pub operations: usize,
    /// Seconds it took.
    pub seconds: f64,
    /// Its divergences: indices into [`Report::divergences`].
    pub divergences: Vec<usize>,
    /// Its case directory, when a divergence was unexpected.
    pub dir: Option<String>,
    /// The minimized case's directory, when it was minimized.
    pub min_dir: Option<String>,
}

/// A known git defect seen in the run, with a reproducer that needs git alone.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GitDefect {
    /// The expected-divergence entry.
    pub id: String,
    /// The git that showed it.
    pub git: String,
    /// The versions the entry names.
    pub versions: String,
    /// Why git is wrong.
    pub reason: String,
    /// Where in git's source.
    pub evidence: String,
    /// Cases of the run that showed it.
    pub cases: u64,
    /// A shell script that reproduces it with git alone.
    pub reproducer: String,
}

/// What a run found against one git.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GitSection {
    /// The binary.
    pub path: String,
    /// `git version`.
    pub version: String,
    /// `git version --build-options`.
    pub build_options: String,
    /// The commit it was built from, when it says.
    pub commit: Option<String>,
    /// What the probe found.
    pub profile: Option<Profile>,
    /// Cases run.
    pub cases: u64,
    /// Operations run (over all cases).
    pub operations: u64,
    /// Comparisons made, per check.
    pub comparisons: BTreeMap<String, u64>,
    /// Checks not repeated because what they compare had not changed since they passed.
    pub unchanged_skipped: u64,
    /// Changed states whose git checks (git's view, git's lookups) waited for git's next
    /// turn, one change of the stack in `GIT_EVERY`.
    #[serde(default)]
    pub git_turns_waited: u64,
    /// End-of-case probes not made because their scenario could not be set up on a case's
    /// final state, by probe.
    pub probes_skipped: BTreeMap<String, u64>,
    /// Cases the files-backend twin followed from their start.
    #[serde(default)]
    pub twin_cases: u64,
    /// Of those, the ones where it was retired before their end, by reason (its shape).
    #[serde(default)]
    pub twin_retired: BTreeMap<String, u64>,
    /// Wall seconds in each check over this git's cases, after steps (`step: …`) and at
    /// cases' ends (`end: …`; each case's thread, git's processes included), and runs.
    pub check_costs: BTreeMap<String, crate::cases::outcome::Cost>,
    /// Seconds spent running this git's cases (summed over jobs; minimization excluded).
    pub case_seconds: f64,
    /// Operations verified per second of this git's share of the run.
    pub operations_per_second: f64,
    /// Divergences not listed as known git defects.
    pub unexpected_divergences: u64,
    /// Divergences matching a known git defect.
    pub expected_divergences: u64,
    /// Known divergences in this git's range that no longer reproduce.
    pub stale_expected: Vec<String>,
    /// Operations by kind: how many ran and how many git accepted.
    pub kinds: BTreeMap<String, [u64; 2]>,
    /// The variants of operations drawn ([`crate::cases::variants`]), with how often.
    #[serde(default)]
    pub variants: BTreeMap<String, u64>,
    /// The concurrent round on this git.
    pub concurrent: Option<crate::concurrent::ConcurrentReport>,
}

/// The JSON report of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Divergences not listed as known git defects, over every git: the gate fails when
    /// this is not 0.
    pub unexpected_divergences: u64,
    /// Divergences matching an entry of the expected-divergences file.
    pub expected_divergences: u64,
    /// Known divergences that no longer reproduce (the gate fails on these too).
    pub stale_expected: u64,
    /// The first git's version (the only one in a one-git run).
    pub git_version: String,
    /// The run's seed.
    pub seed: u64,
    /// Cases per git.
    pub cases: u64,
    /// Operations over every git.
    pub operations: u64,
    /// Wall-clock seconds of the case runs (minimization excluded).
    pub wall_seconds: f64,
    /// Wall-clock seconds spent minimizing divergent cases.
    pub minimize_seconds: f64,
    /// Operations verified per second of wall-clock time, over every git.
    pub operations_per_second: f64,
    /// CPU seconds of the harness process during the case runs (our library, the model,
    /// the libgit2 twin), where the platform tells (Linux).
    pub harness_cpu_seconds: Option<f64>,
    /// CPU seconds of its children during the case runs: the git processes.
    pub child_cpu_seconds: Option<f64>,
    /// The shard run (`K/N`).
    pub shard: String,
    /// The expected-divergences file.
    pub expected_file: String,
    /// One section per git.
    pub gits: Vec<GitSection>,
    /// Every divergence.
    pub divergences: Vec<DivergenceRecord>,
    /// Known git defects seen, with git-only reproducers.
    pub git_defects: Vec<GitDefect>,
    /// Why the run stopped before its list of cases ended (a time budget, fail-fast).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Every case run, in the order they ended (for the CI test results).
    #[serde(skip)]
    pub case_runs: Vec<CaseSummary>,
}

impl Report {
    /// The known git defects the run saw (its cases' and its concurrent rounds').
    pub fn known_defects(&self) -> Vec<&str> {
        let concurrent = self
            .gits
            .iter()
            .filter_map(|g| g.concurrent.as_ref())
            .flat_map(|c| c.known_defects());
        self.git_defects
            .iter()
            .map(|d| d.id.as_str())
            .chain(concurrent)
            .collect()
    }

    /// Where the CPU time of the case runs went, per operation: git's processes and the
    /// harness.
    pub fn cpu_line(&self) -> Option<String> {
        let (own, kids) = (self.harness_cpu_seconds?, self.child_cpu_seconds?);
        let ops = self.operations.max(1) as f64;
        Some(format!(
            "CPU: {:.1} s in git processes ({:.2} ms per operation), {:.1} s in the harness ({:.2} ms per operation)",
            kids,
            kids * 1e3 / ops,
            own,
            own * 1e3 / ops
        ))
    }

    /// The Markdown summary.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        self.md_summary(&mut s);
        self.md_git_table(&mut s);
        self.md_kinds(&mut s);
        self.md_variants(&mut s);
        self.md_concurrent(&mut s);
        for g in &self.gits {
            md_git_section(&mut s, g);
        }
        self.md_unexpected(&mut s);
        self.md_git_defects(&mut s);
        s
    }

    /// The title, the run's figures and where its CPU time went.
    fn md_summary(&self, s: &mut String) {
        s.push_str("# reftable conformance run\n\n");
        s.push_str(&format!(
            "Seed {}, shard {}, {} cases per git, {:.1} s of cases ({:.0} operations/s over every git), {:.1} s minimizing. Expected divergences from `{}`.\n\n",
            self.seed,
            self.shard,
            self.cases,
            self.wall_seconds,
            self.operations_per_second,
            self.minimize_seconds,
            self.expected_file
        ));
        if let Some(line) = self.cpu_line() {
            s.push_str(&line);
            s.push_str("\n\n");
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!(
                "The run {why}, after {} cases per git.\n\n",
                self.cases
            ));
        }
    }

    /// One table row per git: cases, operations, speed and divergences.
    fn md_git_table(&self, s: &mut String) {
        s.push_str("| git | cases | operations | operations/s | unexpected | expected | stale known |\n|---|---|---|---|---|---|---|\n");
        for g in &self.gits {
            s.push_str(&format!(
                "| {} (`{}`) | {} | {} | {:.0} | {} | {} | {} |\n",
                g.version,
                g.path,
                g.cases,
                g.operations,
                g.operations_per_second,
                g.unexpected_divergences,
                g.expected_divergences,
                g.stale_expected.len()
            ));
        }
    }

    /// Per git, the variants drawn, those never drawn, and what no operation drives yet.
    fn md_variants(&self, s: &mut String) {
        for g in &self.gits {
            let Some(p) = &g.profile else { continue };
            let every = variants::every(&p.features);
            let never = variants::never_drawn(&p.features, &g.variants);
            s.push_str(&format!(
                "\nVariants on git {}: {} of {} drawn{}.\n\n| variant | drawn |\n|---|---|\n",
                g.version,
                every.len() - never.len(),
                every.len(),
                if never.is_empty() {
                    String::new()
                } else {
                    format!("; never drawn: {}", never.join("; "))
                }
            ));
            for (label, n) in &g.variants {
                s.push_str(&format!("| {label} | {n} |\n"));
            }
        }
        s.push_str("\nWhat git does to refs that no operation of the gate drives yet:\n\n");
        for x in variants::NOT_DRIVEN {
            s.push_str(&format!("- {x}\n"));
        }
    }

    /// Per git, the operations run by kind and how many git accepted.
    fn md_kinds(&self, s: &mut String) {
        for g in &self.gits {
            let kinds: Vec<String> = g
                .kinds
                .iter()
                .map(|(k, [n, ok])| format!("{k} {n} ({ok} accepted by git)"))
                .collect();
            if !kinds.is_empty() {
                s.push_str(&format!("\ngit {}: {}.\n", g.version, kinds.join(", ")));
            }
        }
    }

    /// The concurrent rounds' own summaries.
    fn md_concurrent(&self, s: &mut String) {
        for c in self.gits.iter().filter_map(|g| g.concurrent.as_ref()) {
            s.push('\n');
            s.push_str(&c.markdown());
        }
    }

    /// The divergences not known as git defects, one line each.
    fn md_unexpected(&self, s: &mut String) {
        let unexpected: Vec<&DivergenceRecord> = self
            .divergences
            .iter()
            .filter(|d| d.expected.is_none())
            .collect();
        if !unexpected.is_empty() {
            s.push_str("\n## Unexpected divergences\n\n");
            for d in unexpected {
                s.push_str(&format!("- {}\n", d.line()));
            }
        }
    }

    /// The known git defects seen, with their reasons and git-only reproducers.
    fn md_git_defects(&self, s: &mut String) {
        if !self.git_defects.is_empty() {
            s.push_str("\n## git defects found\n");
            for d in &self.git_defects {
                s.push_str(&format!(
                    "\n### {} on git {} ({} cases; known in {})\n\n{}\n\nEvidence: {}\n\nReproduce with git alone:\n\n```sh\n{}```\n",
                    d.id, d.git, d.cases, d.versions, d.reason, d.evidence, d.reproducer
                ));
            }
        }
    }
}

/// The section of one git: its binary, build, profile, skipped checks, comparisons per
/// check and stale known divergences.
fn md_git_section(s: &mut String, g: &GitSection) {
    s.push_str(&format!(
        "\n## git {}\n\n- binary: `{}`\n",
        g.version, g.path
    ));
    if let Some(c) = &g.commit {
        s.push_str(&format!("- built from commit {c}\n"));
    }
    if let Some(p) = &g.profile {
        s.push_str(&format!("- profile: {}\n", p.summary()));
        s.push_str(&format!(
            "- reflog expire without a reflog says: `{}`\n",
            p.no_reflog_message
        ));
        for x in &p.surprises {
            s.push_str(&format!("- probe surprise: {x}\n"));
        }
    }
    s.push_str(&format!(
        "- {} checks skipped because their inputs had not changed since they passed\n",
        g.unchanged_skipped
    ));
    s.push_str(&format!(
        "- {} changed states left to git's next turn for git's own view and lookups and our \
         verify (one change of the stack in {} gets them, and every case's last state)\n",
        g.git_turns_waited,
        crate::cases::executor::GIT_EVERY
    ));
    for (probe, n) in &g.probes_skipped {
        s.push_str(&format!(
            "- probe not made in {n} cases, its scenario not set up: {probe}\n"
        ));
    }
    let retired: u64 = g.twin_retired.values().sum();
    s.push_str(&format!(
        "- the files-backend twin followed {} cases, {} of them to their end\n",
        g.twin_cases,
        g.twin_cases.saturating_sub(retired)
    ));
    for (why, n) in &g.twin_retired {
        s.push_str(&format!("- the twin retired in {n} cases: {why}\n"));
    }
    s.push('\n');
    if !g.check_costs.is_empty() {
        let share = |prefix: &str| -> f64 {
            (g.check_costs.iter())
                .filter(|(k, _)| k.starts_with(prefix))
                .map(|(_, c)| c.seconds)
                .sum()
        };
        let of = |x: f64| 100.0 * x / g.case_seconds.max(f64::EPSILON);
        let (step, end) = (share("step: "), share("end: "));
        s.push_str(&format!(
            "Checks: {step:.1} s after steps ({:.0} %), {end:.1} s at cases' ends ({:.0} %), of {:.1} s of case time; the rest runs the operations.\n\n| check | runs | seconds | ms per run |\n|---|---|---|---|\n",
            of(step),
            of(end),
            g.case_seconds
        ));
        for (k, c) in &g.check_costs {
            let per = 1000.0 * c.seconds / c.runs.max(1) as f64;
            s.push_str(&format!(
                "| {k} | {} | {:.2} | {per:.1} |\n",
                c.runs, c.seconds
            ));
        }
        s.push('\n');
    }
    s.push_str("| check | comparisons |\n|---|---|\n");
    for (k, v) in &g.comparisons {
        s.push_str(&format!("| {k} | {v} |\n"));
    }
    for x in &g.stale_expected {
        s.push_str(&format!("\n**stale:** {x}\n"));
    }
}

/// Add a case's comparison counts to `into`.
pub fn add_comparisons(into: &mut BTreeMap<String, u64>, c: &BTreeMap<Check, u64>) {
    for (k, v) in c {
        *into.entry(format!("{k:?}").to_lowercase()).or_default() += v;
    }
}
