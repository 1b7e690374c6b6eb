//! The power-loss mode (`conformance powerloss`): what a power loss during or after a write
//! can leave, for git under each `core.fsync` setting and for our library with fsync on and
//! off.
//!
//! The faults mode's chosen operations (`faults::for_each_chosen_op`) are each recorded
//! once per setting under strace, with the bytes of every write (`fsops.rs`: the stack
//! directory's creates, writes, syncs, renames and removals); `crash.rs` builds every state a
//! crash can leave under the usual file-system model (the directory's changes in order, a
//! file's unsynced data kept, lost or torn); `check.rs` puts each state in a repository and
//! reads it with our reader and git's `for-each-ref`. Our library with fsync on must leave
//! only loadable stacks holding the state before, after, or between the operation's commits,
//! and keep every write it reported; any other state fails the run. git's settings are
//! reported (its guarantees per `core.fsync`), never failed.

pub mod check;
pub mod ci_tests;
pub mod cli;
pub mod crash;
pub mod fsops;

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::defects::registry::{ExpectedSet, Mode};
use crate::faults::trial::Side;
use crate::faults::{for_each_chosen_op, FaultsConfig};
use crate::git::version::GitVersion;
use crate::setup::env::Env;

use check::{check_op, StateClass};

/// One durability setting of one side.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Setting {
    /// Its name in the report (`git core.fsync=reference`, `ours fsync on`).
    pub name: String,
    /// Whose.
    pub side: Side,
    /// `core.fsync`'s value for git (empty: git's default).
    pub core_fsync: String,
    /// Our stack's `fsync`.
    pub fsync: bool,
    /// Whether a bad state fails the run (ours with fsync on).
    pub required: bool,
}

/// The settings compared: git's default, `reference` and `committed`, ours with fsync on
/// and off.
pub fn settings() -> Vec<Setting> {
    let git = |v: &str| Setting {
        name: if v.is_empty() {
            "git, core.fsync default".into()
        } else {
            format!("git, core.fsync={v}")
        },
        side: Side::Git,
        core_fsync: v.into(),
        fsync: false,
        required: false,
    };
    let ours = |fsync: bool| Setting {
        name: format!("ours, fsync {}", if fsync { "on" } else { "off" }),
        side: Side::Ours,
        core_fsync: String::new(),
        fsync,
        required: fsync,
    };
    vec![
        git(""),
        git("reference"),
        git("committed"),
        ours(true),
        ours(false),
    ]
}

/// A setting's results over every operation.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SettingRun {
    /// The setting.
    pub setting: Option<Setting>,
    /// Operations recorded.
    pub ops: usize,
    /// File-system operations recorded (the crash points).
    pub fs_ops: usize,
    /// Syncs among them.
    pub syncs: usize,
    /// Distinct crash states checked.
    pub states: usize,
    /// States per class.
    pub classes: BTreeMap<StateClass, usize>,
    /// The first bad states, with their operation.
    pub examples: Vec<String>,
    /// The known git defects its bad states are (registry ids).
    pub known: Vec<String>,
    /// Operations that could not be recorded or checked.
    pub errors: Vec<String>,
}

impl Setting {
    /// How the registry names the setting: `git without fsync`, `git with fsync
    /// (reference)`, `ours with fsync`.
    pub fn signature_name(&self) -> String {
        match (self.side, self.core_fsync.as_str(), self.fsync) {
            (Side::Git, "", _) => "git without fsync".into(),
            (Side::Git, v, _) => format!("git with fsync ({v})"),
            (Side::Ours, _, true) => "ours with fsync".into(),
            (Side::Ours, _, false) => "ours without fsync".into(),
        }
    }
}

impl SettingRun {
    /// States of bad classes.
    pub fn bad(&self) -> usize {
        self.classes
            .iter()
            .filter(|(c, _)| c.is_bad())
            .map(|(_, n)| n)
            .sum()
    }
}

/// A power-loss run's report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PowerLossReport {
    /// The git.
    pub git: String,
    /// Its version.
    pub version: String,
    /// The seed.
    pub seed: u64,
    /// Cases taken.
    pub cases: u64,
    /// One entry per setting.
    pub settings: Vec<SettingRun>,
    /// Seconds taken.
    pub seconds: f64,
}

impl PowerLossReport {
    /// The known git defects its settings' crash states matched.
    pub fn known_defects(&self) -> Vec<&str> {
        self.settings
            .iter()
            .flat_map(|s| &s.known)
            .map(String::as_str)
            .collect()
    }

    /// The run passes: no bad state and no error for a required setting.
    pub fn clean(&self) -> bool {
        self.settings
            .iter()
            .filter(|s| s.setting.as_ref().is_some_and(|x| x.required))
            .all(|s| s.bad() == 0 && s.errors.is_empty())
    }

    /// The report in Markdown: one row per setting.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Power loss: git {} ({})\n\nSeed {}, {} cases, {:.0} s. Crash states per setting (a state is counted once however many crash points leave it).\n\n| setting | operations | fs operations | syncs | states |",
            self.version, self.git, self.seed, self.cases, self.seconds
        );
        for c in StateClass::ALL {
            s.push_str(&format!(" {} |", c.name()));
        }
        s.push_str("\n|---|---:|---:|---:|---:|");
        s.push_str(&"---:|".repeat(StateClass::ALL.len()));
        s.push('\n');
        for r in &self.settings {
            let name = r.setting.as_ref().map_or("?", |x| x.name.as_str());
            s.push_str(&format!(
                "| {name} | {} | {} | {} | {} |",
                r.ops, r.fs_ops, r.syncs, r.states
            ));
            for c in StateClass::ALL {
                s.push_str(&format!(" {} |", r.classes.get(&c).copied().unwrap_or(0)));
            }
            s.push('\n');
        }
        s.push_str("\n## Bad states (first of each setting)\n\n");
        for r in &self.settings {
            let name = r.setting.as_ref().map_or("?", |x| x.name.as_str());
            for k in &r.known {
                s.push_str(&format!("- {name}: known git defect `{k}`\n"));
            }
            for e in r.examples.iter().chain(&r.errors) {
                s.push_str(&format!("- {name}: {e}\n"));
            }
        }
        s
    }
}

/// Run the power-loss mode on `env`'s git: the faults mode's cases and chosen operations
/// (`cfg`), every operation under every setting.
pub fn run_powerloss(
    env: &Env,
    known: &ExpectedSet,
    cfg: &FaultsConfig,
) -> Result<PowerLossReport, String> {
    if !crate::syscalls::strace::available() {
        return Err("strace is not installed (apt-get install strace)".into());
    }
    let started = Instant::now();
    let all = settings();
    let mut report = PowerLossReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        seed: cfg.seed,
        settings: all
            .iter()
            .map(|s| SettingRun {
                setting: Some(s.clone()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let scratch = env.dir.path().join("powerloss");
    for index in 0.. {
        if cfg.cases.is_some_and(|n| index >= n) || crate::budget::past(cfg.deadline) {
            break;
        }
        let case = format!("seed{}-case{index}", cfg.seed);
        let dir = scratch.join(&case);
        for_each_chosen_op(env, cfg, index, &dir, &mut |t, step| {
            for (setting, run) in all.iter().zip(report.settings.iter_mut()) {
                let mut v = t.clone();
                v.fsync = setting.fsync;
                if !setting.core_fsync.is_empty() {
                    v.git_config = vec!["-c".into(), format!("core.fsync={}", setting.core_fsync)];
                }
                run.ops += 1;
                match check_op(&v, setting.side) {
                    Ok(o) => {
                        run.fs_ops += o.fs_ops;
                        run.syncs += o.syncs;
                        run.states += o.states;
                        for (c, n) in o.classes {
                            *run.classes.entry(c).or_default() += n;
                        }
                        for e in o.examples.into_iter().take(3 - run.examples.len().min(3)) {
                            run.examples.push(format!("{case} step {step}: {e}"));
                        }
                    }
                    Err(e) => run.errors.push(format!("{case} step {step}: {e}")),
                }
                let _ = std::fs::remove_dir_all(&v.scratch);
            }
            Ok(())
        })?;
        report.cases += 1;
    }
    if let Some(v) = GitVersion::parse(env.git.version()) {
        match_known(&mut report, known, &v);
    }
    report.seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(report)
}

/// Name the known git defects each git setting's bad states are.
fn match_known(report: &mut PowerLossReport, known: &ExpectedSet, v: &GitVersion) {
    for run in &mut report.settings {
        let Some(setting) = run.setting.as_ref().filter(|s| s.side == Side::Git) else {
            continue;
        };
        for (c, _) in run.classes.iter().filter(|(c, n)| c.is_bad() && **n > 0) {
            let signature = format!("{} {}", c.name(), setting.signature_name());
            if let Some(e) = known.matching_signature(v, Mode::Powerloss, &signature) {
                if !run.known.contains(&e.id) {
                    run.known.push(e.id.clone());
                }
            }
        }
    }
}
