//! A soak's report: per git the cases run and the rate of unexpected divergences per
//! 1,000 cases, the known defects seen, and the unexpected divergences grouped by
//! signature over the seeds.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ci_output::result::{TestResult, Verdict};
use crate::finding::shape::detail_shape;
use crate::mode::report::{pretty, ModeReport};
use crate::run::report::{DivergenceRecord, Report};

/// One git's share of the soak.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SoakGit {
    /// `git version`.
    pub version: String,
    /// The binary.
    pub path: String,
    /// Cases run.
    pub cases: u64,
    /// Divergences no registry entry explains.
    pub unexpected: u64,
    /// Divergences of known defects.
    pub expected: u64,
    /// Unexpected divergences per 1,000 cases.
    pub rate_per_1000: f64,
    /// Known defects seen, with how many cases showed each.
    pub known_seen: BTreeMap<String, u64>,
}

/// One kind of unexpected divergence: how often, on which seeds, and its first case.
#[derive(Clone, Debug, Serialize)]
pub struct Distinct {
    /// The git's version, check, class and the detail's shape.
    pub signature: String,
    /// Cases that showed it.
    pub cases: u64,
    /// The seeds they came from.
    pub seeds: Vec<u64>,
    /// The first case that showed it (its directory, minimized where it could be).
    pub first: DivergenceRecord,
}

/// The soak's report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SoakReport {
    /// Seeds run, in order.
    pub seeds: Vec<u64>,
    /// Cases per seed and git.
    pub cases_per_seed: u64,
    /// Per git.
    pub gits: Vec<SoakGit>,
    /// Unexpected divergences, grouped.
    pub distinct: Vec<Distinct>,
    /// Wall seconds.
    pub seconds: f64,
}

impl SoakReport {
    /// Add one seed's run.
    pub fn add(&mut self, seed: u64, r: &Report) {
        self.seeds.push(seed);
        for (i, g) in r.gits.iter().enumerate() {
            if self.gits.len() <= i {
                self.gits.push(SoakGit {
                    version: g.version.clone(),
                    path: g.path.clone(),
                    ..Default::default()
                });
            }
            let s = &mut self.gits[i];
            s.cases += g.cases;
            s.unexpected += g.unexpected_divergences;
            s.expected += g.expected_divergences;
            s.rate_per_1000 = 1000.0 * s.unexpected as f64 / s.cases.max(1) as f64;
        }
        for d in &r.divergences {
            match &d.expected {
                Some(id) => {
                    let g = self.gits.iter_mut().find(|g| g.version == d.git);
                    if let Some(g) = g {
                        *g.known_seen.entry(id.clone()).or_default() += 1;
                    }
                }
                None => self.unexpected(seed, d),
            }
        }
    }

    /// Count an unexpected divergence under its signature.
    fn unexpected(&mut self, seed: u64, d: &DivergenceRecord) {
        let signature = format!(
            "git {} {} ({}): {}",
            d.git,
            d.check,
            d.class,
            detail_shape(d.detail.lines().next().unwrap_or(""))
        );
        match self.distinct.iter_mut().find(|x| x.signature == signature) {
            Some(x) => {
                x.cases += 1;
                if !x.seeds.contains(&seed) {
                    x.seeds.push(seed);
                }
            }
            None => self.distinct.push(Distinct {
                signature,
                cases: 1,
                seeds: vec![seed],
                first: d.clone(),
            }),
        }
    }

    /// The line per git.
    fn git_line(&self, g: &SoakGit) -> String {
        format!(
            "soak: git {}: {} seeds x {} cases = {} cases, {} unexpected divergences ({:.1} per 1,000 cases), {} of known defects",
            g.version,
            self.seeds.len(),
            self.cases_per_seed,
            g.cases,
            g.unexpected,
            g.rate_per_1000,
            g.expected
        )
    }
}

impl ModeReport for SoakReport {
    fn suite(&self) -> String {
        "reftable-rs conformance soak".into()
    }

    fn json(&self) -> String {
        pretty(self)
    }

    fn markdown(&self) -> String {
        let mut s = format!(
            "# Soak: {} seeds x {} cases\n\nSeeds: {}.\n\n| git | cases | unexpected | per 1,000 cases | known |\n| --- | --- | --- | --- | --- |\n",
            self.seeds.len(),
            self.cases_per_seed,
            list(&self.seeds)
        );
        for g in &self.gits {
            s += &format!(
                "| {} | {} | {} | {:.1} | {} |\n",
                g.version, g.cases, g.unexpected, g.rate_per_1000, g.expected
            );
        }
        s += &format!(
            "\n## Unexpected divergences ({} kinds)\n\n",
            self.distinct.len()
        );
        for d in &self.distinct {
            s += &format!(
                "- **{}** in {} cases (seeds {}): first {}, see `{}`\n",
                d.signature,
                d.cases,
                list(&d.seeds),
                d.first.case,
                d.first.case_dir
            );
        }
        s
    }

    fn known_defects(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = (self.gits.iter())
            .flat_map(|g| g.known_seen.keys().map(String::as_str))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = (self.distinct.iter())
            .map(|d| format!("soak finding ({} cases): {}", d.cases, d.first.line()))
            .collect();
        lines.extend(self.gits.iter().map(|g| self.git_line(g)));
        lines
    }

    fn ci_tests(&self) -> Vec<TestResult> {
        (self.gits.iter())
            .map(|g| {
                let verdict = if g.unexpected > 0 {
                    Verdict::Fail
                } else {
                    Verdict::Pass
                };
                let name = format!("soak git {}", g.version);
                TestResult::new(&self.suite(), &name, verdict, self.git_line(g))
            })
            .collect()
    }

    fn failed(&self) -> bool {
        self.gits.iter().any(|g| g.unexpected > 0)
    }
}

/// Numbers for a sentence.
fn list(items: &[u64]) -> String {
    let s: Vec<String> = items.iter().map(u64::to_string).collect();
    s.join(", ")
}
