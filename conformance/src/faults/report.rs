//! A faults run's report: every operation tried with its trials per side, counts per class,
//! the defects found (git's matched against the registry), and a git-only reproducer line
//! (the strace injection) for each.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::faults::class::Class;
use crate::faults::migration::MigrationRun;
use crate::faults::trial::{Side, SideRun, Trial};
use crate::ops::Op;

/// One operation of a case, tried on both sides.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpRun {
    /// The case (`seed1-case3`).
    pub case: String,
    /// The operation's index in the case.
    pub step: usize,
    /// git's command (`update-ref`, `reflog`, `pack-refs`, ...).
    pub command: String,
    /// The git command line (for reproducers).
    pub invocation: String,
    /// The operation.
    pub op: Op,
    /// git's side and ours.
    pub sides: Vec<SideRun>,
}

/// The report of a faults run on one git.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FaultsReport {
    /// The git.
    pub git: String,
    /// Its version.
    pub version: String,
    /// The seed.
    pub seed: u64,
    /// Cases taken.
    pub cases: u64,
    /// Whether our stack synced.
    pub fsync: bool,
    /// The operations tried.
    pub ops: Vec<OpRun>,
    /// The migrations tried (`git refs migrate`, git's side only).
    #[serde(default)]
    pub migrations: Vec<MigrationRun>,
    /// Why the run stopped early, if it did.
    pub stop: Option<String>,
    /// Seconds taken.
    pub seconds: f64,
}

impl FaultsReport {
    /// The known git defects its trials matched.
    pub fn known_defects(&self) -> Vec<&str> {
        self.ops
            .iter()
            .flat_map(|o| &o.sides)
            .flat_map(|s| &s.trials)
            .chain(self.migrations.iter().flat_map(|m| &m.git.trials))
            .filter_map(|t| t.known.as_deref())
            .collect()
    }

    /// Trials of `side`, over every operation.
    pub fn trials(&self, side: Side) -> impl Iterator<Item = (&OpRun, &Trial)> {
        self.ops.iter().flat_map(move |o| {
            o.sides
                .iter()
                .filter(move |s| s.side == side)
                .flat_map(move |s| s.trials.iter().map(move |t| (o, t)))
        })
    }

    /// Trials per class of `side`.
    pub fn tally(&self, side: Side) -> BTreeMap<Class, usize> {
        let mut m = BTreeMap::new();
        for (_, t) in self.trials(side) {
            *m.entry(t.class).or_default() += 1;
        }
        m
    }

    /// Fault points found per side (all of them, tried or not).
    pub fn points(&self, side: Side) -> usize {
        self.sides(side).map(|s| s.points).sum()
    }

    fn sides(&self, side: Side) -> impl Iterator<Item = &SideRun> {
        self.ops
            .iter()
            .flat_map(move |o| o.sides.iter().filter(move |s| s.side == side))
    }

    /// The defects that fail the run: every bad trial of ours, git's that no registry
    /// entry matches, and a side that could not be tried.
    pub fn unexpected(&self) -> Vec<String> {
        let mut out = Vec::new();
        for o in &self.ops {
            for s in &o.sides {
                if let Some(e) = &s.error {
                    out.push(format!("{} step {} {:?}: {e}", o.case, o.step, s.side));
                }
                for t in s
                    .trials
                    .iter()
                    .filter(|t| t.class.is_bad() && t.known.is_none())
                {
                    out.push(finding_line(o, s.side, t));
                }
            }
        }
        for m in &self.migrations {
            for s in m.sides() {
                if let Some(e) = &s.error {
                    out.push(format!("{} {} {:?}: {e}", m.case, m.command(), s.side));
                }
                for t in s
                    .trials
                    .iter()
                    .filter(|t| t.class.is_bad() && t.known.is_none())
                {
                    out.push(migration_line(s.side, &m.case, &m.command(), t));
                }
            }
        }
        out
    }

    /// The run passes.
    pub fn clean(&self) -> bool {
        self.unexpected().is_empty()
    }

    /// The report in Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Faults: git {} ({})\n\nSeed {}, {} cases, {} operations, our fsync {}, {:.0} s.{}\n\n",
            self.version,
            self.git,
            self.seed,
            self.cases,
            self.ops.len(),
            if self.fsync { "on" } else { "off" },
            self.seconds,
            self.stop.as_ref().map_or(String::new(), |w| format!(" Stopped: {w}."))
        );
        s.push_str("| class | git | ours |\n|---|---:|---:|\n");
        let (g, u) = (self.tally(Side::Git), self.tally(Side::Ours));
        for c in Class::ALL {
            let n = |m: &BTreeMap<Class, usize>| m.get(&c).copied().unwrap_or(0);
            s.push_str(&format!("| {} | {} | {} |\n", c.name(), n(&g), n(&u)));
        }
        s.push_str(&format!(
            "| *fault points found* | {} | {} |\n| *trials* | {} | {} |\n\n",
            self.points(Side::Git),
            self.points(Side::Ours),
            self.trials(Side::Git).count(),
            self.trials(Side::Ours).count()
        ));
        s.push_str(&self.by_command());
        s.push_str(&self.migrations_md());
        s.push_str(&self.findings_md());
        s
    }

    /// The migrations: trials per class, and each defect.
    fn migrations_md(&self) -> String {
        if self.migrations.is_empty() {
            return String::new();
        }
        let mut s = String::from("## Migrations (git's `git refs migrate`; ours: the library's import into an empty stack)\n\n| case | to | side | points | trials | classes |\n|---|---|---|---:|---:|---|\n");
        for m in &self.migrations {
            for side in m.sides() {
                let mut n: BTreeMap<Class, usize> = BTreeMap::new();
                for t in &side.trials {
                    *n.entry(t.class).or_default() += 1;
                }
                let classes: Vec<String> =
                    n.iter().map(|(c, k)| format!("{} {k}", c.name())).collect();
                let skipped = m.skipped.as_ref().filter(|_| side.side == Side::Git);
                let classes = match (&side.error, skipped) {
                    (Some(e), _) => format!("not tried: {e}"),
                    (None, Some(why)) => format!("skipped: {why}"),
                    (None, None) if !side.unfaulted_done => {
                        "not tried: refused without a fault".into()
                    }
                    (None, None) => classes.join(", "),
                };
                s.push_str(&format!(
                    "| {} | {} | {:?} | {} | {} | {} |\n",
                    m.case,
                    m.to,
                    side.side,
                    side.points,
                    side.trials.len(),
                    classes.replace('|', "\\|")
                ));
            }
        }
        s.push('\n');
        for m in &self.migrations {
            for side in m.sides() {
                for t in side.trials.iter().filter(|t| t.class.is_bad()) {
                    let known = t
                        .known
                        .as_ref()
                        .map_or(String::new(), |k| format!(" (known: `{k}`)"));
                    let line = migration_line(side.side, &m.case, &m.command(), t);
                    s.push_str(&format!("- {line}{known}\n"));
                }
            }
        }
        s.push('\n');
        s
    }

    /// Operations and trials per git command.
    fn by_command(&self) -> String {
        let mut m: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
        for o in &self.ops {
            let e = m.entry(o.command.as_str()).or_default();
            e[0] += 1;
            for s in &o.sides {
                e[if s.side == Side::Git { 1 } else { 2 }] += s.trials.len();
            }
        }
        let mut s = "| command | operations | git trials | our trials |\n|---|---:|---:|---:|\n"
            .to_string();
        for (c, [n, g, u]) in m {
            s.push_str(&format!("| {c} | {n} | {g} | {u} |\n"));
        }
        s.push('\n');
        s
    }

    /// Known git defects as counts per registry entry and command; every other defect in
    /// full, with the git command line for git's.
    fn findings_md(&self) -> String {
        let mut known: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        let mut s = String::from("## Defects that fail the run\n\n");
        let mut any = false;
        for o in &self.ops {
            for side in &o.sides {
                for t in side.trials.iter().filter(|t| t.class.is_bad()) {
                    if let Some(k) = &t.known {
                        *known.entry((k.as_str(), o.command.as_str())).or_default() += 1;
                        continue;
                    }
                    any = true;
                    s.push_str(&format!("- {}\n", finding_line(o, side.side, t)));
                    if side.side == Side::Git {
                        s.push_str(&format!(
                            "  `strace -f -e inject={} git {}`\n",
                            t.point.inject_arg(),
                            o.invocation
                        ));
                    }
                }
            }
        }
        if !any {
            s.push_str("None.\n");
        }
        s.push_str(
            "\n## Known git defects\n\n| registry entry | command | trials |\n|---|---|---:|\n",
        );
        for ((k, c), n) in known {
            s.push_str(&format!("| `{k}` | {c} | {n} |\n"));
        }
        s
    }
}

/// One line for a bad trial of a migration.
pub fn migration_line(side: Side, case: &str, command: &str, t: &Trial) -> String {
    trial_line(&format!("{side:?}"), command, case, t)
}

/// One line for a bad trial.
pub fn finding_line(o: &OpRun, side: Side, t: &Trial) -> String {
    let place = format!("{} step {}", o.case, o.step);
    trial_line(&format!("{side:?}"), &o.command, &place, t)
}

/// A bad trial of `who`'s `command` at `place` in one line: class, phase, fault, the call
/// it reached, what came of it, and its finding directory.
fn trial_line(who: &str, command: &str, place: &str, t: &Trial) -> String {
    let dir = t
        .finding_dir
        .as_ref()
        .map_or(String::new(), |d| format!(" -> {d}"));
    format!(
        "{who} {} {} {command}, {place}: {} on {} ({}): {}{dir}",
        t.class.name(),
        t.point.phase(),
        t.point.inject_arg(),
        t.point.role,
        t.injected.as_deref().unwrap_or("no call reached"),
        t.detail.lines().next().unwrap_or("")
    )
}
