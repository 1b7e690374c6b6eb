//! What a run has found so far, gathered under one lock by its workers: the distinct
//! findings by key (each with its count, commands, samples and first damage) and how often
//! each of git's commands ended which way.

use std::collections::BTreeMap;

use crate::git::driver::Exit;

use super::damage::Damage;
use super::observe::Observation;
use super::report::Finding;
use super::signature::{normalize, Key};

/// The findings and git's outcomes of a run so far.
#[derive(Default)]
pub(crate) struct Tally {
    /// Distinct findings, by what tells them apart.
    pub(crate) findings: BTreeMap<Key, Finding>,
    /// How often each `command: outcome` of git's was seen.
    pub(crate) outcomes: BTreeMap<String, u64>,
}

impl Tally {
    /// Count how each of git's commands of a trial ended.
    pub(crate) fn count_exits(&mut self, exits: Vec<(&'static str, Exit)>) {
        for (c, e) in exits {
            let class = match e {
                Exit::Code(0) => "exit 0".to_string(),
                Exit::Code(_) => "error".to_string(),
                Exit::Signal(s) => format!("signal {s}"),
                Exit::Timeout => "timeout".to_string(),
            };
            *self.outcomes.entry(format!("{c}: {class}")).or_default() += 1;
        }
    }

    /// Record observation `o` with signature `sig`, seen under `damage` on base `bi`: one
    /// more sighting of a known finding, or a new one (announced on stderr).
    pub(crate) fn record(&mut self, o: Observation, sig: String, damage: &Damage, bi: usize) {
        let key = Key::of(&o, sig.clone());
        let sample = normalize(&o.detail);
        self.findings
            .entry(key)
            .and_modify(|f| {
                f.count += 1;
                if !f.commands.iter().any(|c| c == o.command) {
                    f.commands.push(o.command.into());
                }
                if f.samples.len() < 8 && !f.samples.contains(&sample) {
                    f.samples.push(sample.clone());
                }
            })
            .or_insert_with(|| {
                eprintln!(
                    "damaged: {} {} on {}: {sig} ({})",
                    o.side,
                    o.class,
                    o.command,
                    damage.kinds()
                );
                Finding {
                    side: o.side,
                    class: o.class,
                    command: o.command.into(),
                    commands: vec![o.command.into()],
                    samples: vec![sample.clone()],
                    signature: sig,
                    count: 1,
                    damage: damage.clone(),
                    base: bi,
                    detail: o.detail.chars().take(2000).collect(),
                    case_dir: None,
                    known: None,
                }
            });
    }
}
