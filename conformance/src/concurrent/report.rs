//! What a concurrent run reports: its counts of attempts, refusals, maintenance runs and
//! samples, the final stack's size, its findings, and where a finding was minimized to and
//! written; as a console line and as a Markdown section.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::finding::divergence::Finding;

/// The result of one concurrent run (and of its minimization).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ConcurrentReport {
    /// git under test.
    pub git: String,
    /// Its version.
    pub version: String,
    /// Seed.
    pub seed: u64,
    /// Writers: git, ours, the implementation's.
    pub writers: [u32; 3],
    /// Transactions attempted per writer.
    pub txns_per_writer: u32,
    /// Transactions attempted, acknowledged, refused: git writers, ours, the
    /// implementation's.
    pub transactions: [[u64; 3]; 3],
    /// Refusals by cause (`lock`, `old_value`, `df_conflict`, …) per kind of writer.
    pub refusals: BTreeMap<String, u64>,
    /// Maintenance runs (attempted, succeeded): git, ours, the implementation's.
    pub maintenance: [[u64; 2]; 3],
    /// Reader samples taken: through git, through us.
    pub samples: [u64; 2],
    /// Highest update index at the end.
    pub final_update_index: u64,
    /// Tables in the final stack.
    pub final_tables: usize,
    /// Wall seconds of the run (minimization excluded).
    pub seconds: f64,
    /// What went wrong (empty on a clean run).
    pub findings: Vec<Finding>,
    /// The smallest configuration that still showed the first finding.
    pub minimized: Option<String>,
    /// Where the finding was written.
    pub finding_dir: Option<String>,
    /// The forced orders of events that ran (see `forced.rs`).
    pub forced: Vec<String>,
    /// Those that could not be forced on this git, and why.
    pub not_forced: Vec<String>,
}

impl ConcurrentReport {
    /// One line for the console.
    pub fn line(&self) -> String {
        let [g, o, i] = self.transactions;
        let [_, _, im] = self.maintenance;
        let (imp, imp_counts, imp_maint) = if self.writers[2] > 0 {
            (
                format!(" + {} implementation writers", self.writers[2]),
                format!(", implementation {} / {}", i[1], i[2]),
                format!(", implementation {}/{}", im[1], im[0]),
            )
        } else {
            Default::default()
        };
        format!(
            "concurrent: git {} seed {}: {} git + {} our writers{imp} × {} transactions in {:.1} s; git {} acknowledged / {} refused, ours {} / {}{imp_counts}; maintenance git {}/{}, ours {}/{}{imp_maint}; {} + {} samples; {} tables, update index {}; {} forced orders of {}; {} unexpected findings, {} from known git defects",
            self.version,
            self.seed,
            self.writers[0],
            self.writers[1],
            self.txns_per_writer,
            self.seconds,
            g[1],
            g[2],
            o[1],
            o[2],
            self.maintenance[0][1],
            self.maintenance[0][0],
            self.maintenance[1][1],
            self.maintenance[1][0],
            self.samples[0],
            self.samples[1],
            self.final_tables,
            self.final_update_index,
            self.forced.len(),
            self.forced.len() + self.not_forced.len(),
            self.unexpected(),
            self.findings.len() - self.unexpected()
        )
    }

    /// A Markdown section.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "### Concurrent mode, git {}\n\n{}\n\n",
            self.version,
            self.line()
        );
        if !self.refusals.is_empty() {
            let r: Vec<String> = self
                .refusals
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            s.push_str(&format!("Refusals by cause: {}.\n\n", r.join(", ")));
        }
        if !self.forced.is_empty() {
            s.push_str(&format!("Forced orders: {}.\n\n", self.forced.join(", ")));
        }
        for why in &self.not_forced {
            s.push_str(&format!("- not forced: {why}\n"));
        }
        for f in &self.findings {
            let known = f
                .expected
                .as_ref()
                .map_or(String::new(), |e| format!(" (known git defect `{e}`)"));
            s.push_str(&format!("- **{}**{known}: {}\n", f.class, f.detail));
        }
        if let Some(m) = &self.minimized {
            s.push_str(&format!("\nMinimized: `{m}`\n"));
        }
        if let Some(d) = &self.finding_dir {
            s.push_str(&format!("\nWritten to `{d}`\n"));
        }
        s
    }

    /// The known git defects its findings matched.
    pub fn known_defects(&self) -> impl Iterator<Item = &str> {
        self.findings.iter().filter_map(|f| f.expected.as_deref())
    }

    /// Findings no known git defect explains.
    pub fn unexpected(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.expected.is_none())
            .count()
    }
}
