//! An implementation's conformance report: who it is, what it offers, the matrix of role ×
//! check × outcome, and its distinct findings; as Markdown, JSON and an SVG picture of the
//! matrix.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::impls::check::{ImplCheck, Role};
use crate::impls::tally::{Cell, ImplFinding, Tally};
use crate::impls::wire::Hello;

/// One row of the matrix.
#[derive(Clone, Debug, Serialize)]
pub struct MatrixRow {
    /// The role.
    pub role: Role,
    /// The check.
    pub check: ImplCheck,
    /// What came of it.
    #[serde(flatten)]
    pub cell: Cell,
}

impl MatrixRow {
    /// `pass`, `FAIL`, `not tried` or `not run`.
    pub fn outcome(&self) -> &'static str {
        let c = &self.cell;
        match (c.failed, c.passed, c.not_tried) {
            (f, _, _) if f > 0 => "FAIL",
            (_, p, _) if p > 0 => "pass",
            (_, _, n) if n > 0 => "not tried",
            _ => "not run",
        }
    }
}

/// A finding and how many cases showed one like it.
#[derive(Clone, Debug, Serialize)]
pub struct Distinct {
    /// Role, check and the detail with ids and numbers left out.
    pub signature: String,
    /// Cases that showed it.
    pub cases: u64,
    /// The first (shortest) case that showed it.
    pub first: ImplFinding,
    /// Its directory (`finding.json`, `rerun.sh`), where one was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct ImplReport {
    /// What the adapter said of itself.
    pub hello: Hello,
    /// The adapter's command line.
    pub adapter: Vec<String>,
    /// The git the cases ran on.
    pub git: String,
    /// Seed and operations per case.
    pub seed: u64,
    /// Operations per case.
    pub ops: usize,
    /// Cases run.
    pub cases: u64,
    /// Cases not run, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// The roles.
    pub roles: Vec<Role>,
    /// Verbs of the protocol the adapter does not offer (not tried).
    pub not_offered: Vec<String>,
    /// Role × check × outcome.
    pub matrix: Vec<MatrixRow>,
    /// Distinct findings.
    pub findings: Vec<Distinct>,
    /// Wall time.
    pub seconds: f64,
}

/// Every verb of protocol 1.
const VERBS: &[&str] = &[
    "refs",
    "ref",
    "reflog",
    "reflogs",
    "transaction",
    "compact",
    "expire_reflog",
    "rename",
    "copy",
    "verify",
    "reload",
    "close",
];

impl ImplReport {
    /// The report of a run: `tally` summed over its cases.
    pub fn new(hello: Hello, adapter: Vec<String>, roles: Vec<Role>, tally: Tally) -> ImplReport {
        let not_offered: Vec<String> = (VERBS.iter())
            .filter(|v| !hello.offers(v))
            .map(|v| v.to_string())
            .collect();
        let mut matrix = Vec::new();
        for &role in &roles {
            for check in ImplCheck::ALL.into_iter().filter(|c| role.checks(*c)) {
                let cell = tally.cells.get(&(role, check)).cloned().unwrap_or_default();
                matrix.push(MatrixRow { role, check, cell });
            }
        }
        ImplReport {
            hello,
            adapter,
            git: String::new(),
            seed: 0,
            ops: 0,
            cases: 0,
            skipped: BTreeMap::new(),
            roles,
            not_offered,
            matrix,
            findings: distinct(tally.findings),
            seconds: 0.0,
        }
    }

    /// Findings the registry does not know.
    pub fn unexpected(&self) -> usize {
        self.findings
            .iter()
            .filter(|d| d.first.known.is_none())
            .count()
    }

    /// The report in Markdown.
    pub fn markdown(&self) -> String {
        let h = &self.hello;
        let mut s = format!(
            "# Conformance of {} {} against git {}\n\nSeed {}, {} cases of {} operations, roles {}; {:.0} s.\n\n",
            h.implementation, h.version, self.git, self.seed, self.cases, self.ops,
            self.roles.iter().map(|r| r.name()).collect::<Vec<_>>().join(", "), self.seconds
        );
        s += &format!(
            "Claims: {}. Not offered (not tried): {}.\n",
            list(&h.claims),
            list(&self.not_offered)
        );
        for (why, n) in &self.skipped {
            s += &format!("Cases not run: {n} ({why}).\n");
        }
        s += "\n| role | check | outcome | passed | failed | not tried |\n| --- | --- | --- | --- | --- | --- |\n";
        for r in &self.matrix {
            let why = r
                .cell
                .why_not
                .as_deref()
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            s += &format!(
                "| {} | {} | {} | {} | {} | {}{} |\n",
                r.role.name(),
                r.check.name(),
                r.outcome(),
                r.cell.passed,
                r.cell.failed,
                r.cell.not_tried,
                why
            );
        }
        s += &format!(
            "\n## Findings ({} distinct, {} not in the registry)\n\n",
            self.findings.len(),
            self.unexpected()
        );
        for d in &self.findings {
            let f = &d.first;
            let known = f
                .known
                .as_deref()
                .map(|k| format!(" — known: {k}"))
                .unwrap_or_default();
            s += &format!(
                "- **{} / {}** in {} cases{known}; first {} at step {} of {}: {}\n",
                f.role.name(),
                f.check.name(),
                d.cases,
                f.case,
                f.step,
                f.ops.len(),
                f.detail
            );
            if let Some(dir) = &d.dir {
                s += &format!("  rerun: `sh {dir}/rerun.sh`\n");
            }
        }
        s
    }
}

/// A list for a sentence.
fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// Findings grouped by signature, the shortest case of each first.
fn distinct(mut all: Vec<ImplFinding>) -> Vec<Distinct> {
    all.sort_by_key(|f| f.ops.len());
    let mut by: BTreeMap<String, Distinct> = BTreeMap::new();
    for f in all {
        let sig = signature(&f);
        by.entry(sig.clone())
            .and_modify(|d| d.cases += 1)
            .or_insert(Distinct {
                signature: sig,
                cases: 1,
                first: f,
                dir: None,
            });
    }
    by.into_values().collect()
}

/// Role, check and the detail's first words, with object ids and numbers left out (ref
/// names kept: `refs/custom/x` and `refs/notes/commits` may be two causes).
pub fn signature(f: &ImplFinding) -> String {
    let shape = crate::finding::shape::detail_shape(&f.detail);
    format!("{} {}: {shape}", f.role.name(), f.check.name())
}
