//! The mutation report: one shard's, or the merge of a sample's shards (`mutate-merge`):
//! counts per class, the gate's and the tests' scores overall, per file and per function,
//! time per mutant, and every survivor with its diff; as JSON and Markdown.
//!
//! A score is killed / viable: viable mutants built to new object code and ran (unviable and
//! equivalent ones are left out); a timeout counts as viable and not killed.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::command::{Cmd, Ran};
use crate::outcome::{classify, Class, MutantResult};
use crate::state::{Plan, RunDir};

/// Counts of one group of mutants (all, a file, a function).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    /// The file or function (`file: function`).
    pub name: String,
    /// Mutants finished.
    pub mutants: usize,
    /// Of them viable.
    pub viable: usize,
    /// Count per class name.
    pub classes: BTreeMap<String, usize>,
    /// Killed by the gate (modes or counters, tests or not).
    pub gate_killed: usize,
    /// Killed by the tests (gate or not).
    pub tests_killed: usize,
    /// Killed by either.
    pub either_killed: usize,
}

impl Row {
    fn add(&mut self, c: Class) {
        self.mutants += 1;
        self.viable += usize::from(c.viable());
        *self.classes.entry(c.name().to_string()).or_default() += 1;
        self.gate_killed += usize::from(c.gate_killed());
        self.tests_killed += usize::from(c.tests_killed());
        self.either_killed += usize::from(c.gate_killed() || c.tests_killed());
    }

    fn count(&self, c: Class) -> usize {
        self.classes.get(c.name()).copied().unwrap_or(0)
    }

    fn score(&self, killed: usize) -> String {
        if self.viable == 0 {
            return "–".to_string();
        }
        format!("{:.0}%", 100.0 * killed as f64 / self.viable as f64)
    }
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct MutationReport {
    /// Seed of the sample.
    pub seed: u64,
    /// Mutants of the chosen files and functions.
    pub candidates: usize,
    /// Mutants in the sample.
    pub sampled: usize,
    /// The shards reported (`1/2`, ...).
    pub shards: Vec<String>,
    /// File specs.
    pub files: Vec<String>,
    /// Function globs.
    pub functions: Vec<String>,
    /// Mutant ids the sample was limited to.
    pub only: Vec<String>,
    /// The gate's commands.
    pub gate: Vec<Cmd>,
    /// The tests.
    pub tests: Vec<Cmd>,
    /// The counters comparison.
    pub counters: Option<Cmd>,
    /// Mutants planned in the shards reported.
    pub planned: usize,
    /// All finished mutants.
    pub total: Row,
    /// Per file.
    pub per_file: Vec<Row>,
    /// Per function.
    pub per_function: Vec<Row>,
    /// Median wall time per finished mutant.
    pub median_seconds: f64,
    /// Median wall time per viable mutant.
    pub median_viable_seconds: f64,
    /// Sum of the mutants' wall times.
    pub total_seconds: f64,
    /// Every finished mutant.
    pub mutants: Vec<MutantResult>,
}

/// The report of shards: their plans and finished mutants. Fails when the plans were not
/// made with the same choices or when a shard is there twice.
pub fn report(shards: &[(Plan, Vec<MutantResult>)]) -> Result<MutationReport, String> {
    let first = &shards.first().ok_or("no shard to report")?.0;
    let mut seen = Vec::new();
    for (p, _) in shards {
        if p.selection != first.selection || p.shard.1 != first.shard.1 {
            return Err(format!(
                "shard {}/{} was made with other choices than shard {}/{}",
                p.shard.0, p.shard.1, first.shard.0, first.shard.1
            ));
        }
        if seen.contains(&p.shard.0) {
            return Err(format!("shard {}/{} is there twice", p.shard.0, p.shard.1));
        }
        seen.push(p.shard.0);
    }
    let mutants: Vec<MutantResult> = shards.iter().flat_map(|(_, r)| r.clone()).collect();
    let (per_file, per_function) = groups(&mutants);
    let mut total = Row {
        name: "all".into(),
        ..Row::default()
    };
    mutants.iter().for_each(|m| total.add(m.class));
    let all: Vec<f64> = mutants.iter().map(|m| m.seconds).collect();
    let viable: Vec<f64> = mutants
        .iter()
        .filter(|m| m.class.viable())
        .map(|m| m.seconds)
        .collect();
    let s = &first.selection;
    Ok(MutationReport {
        seed: s.seed,
        candidates: s.candidates,
        sampled: first.sampled,
        shards: shards
            .iter()
            .map(|(p, _)| format!("{}/{}", p.shard.0, p.shard.1))
            .collect(),
        files: s.files.clone(),
        functions: s.functions.clone(),
        only: s.only.clone(),
        gate: s.gate.clone(),
        tests: s.tests.clone(),
        counters: s.counters.clone(),
        planned: shards.iter().map(|(p, _)| p.mutants.len()).sum(),
        total,
        per_file,
        per_function,
        median_seconds: median(all.clone()),
        median_viable_seconds: median(viable),
        total_seconds: all.iter().sum(),
        mutants,
    })
}

/// Load shard directories and report them together; with `gate_labels`, only those gate
/// commands count as the gate (see [`only_gates`]).
pub fn merge(
    dirs: &[std::path::PathBuf],
    gate_labels: &[String],
) -> Result<MutationReport, String> {
    let mut shards = Vec::new();
    for d in dirs {
        let rd = RunDir::new(d);
        let mut plan = rd
            .plan()?
            .ok_or_else(|| format!("{}: no plan.json (not a mutate-git --out)", d.display()))?;
        let mut results: Vec<MutantResult> = rd.results()?.into_values().collect();
        if !gate_labels.is_empty() {
            only_gates(&mut plan, &mut results, gate_labels)
                .map_err(|e| format!("{}: {e}", d.display()))?;
        }
        shards.push((plan, results));
    }
    report(&shards)
}

/// Keep only the gate commands labelled `labels` and classify each mutant again from them:
/// one gate scored without the others. Needs a run where every command ran on every mutant
/// (`--every-command`), else a command skipped after an earlier one failed would read as
/// passed. The counters comparison stays as it ran (after all the gate's commands passed).
pub fn only_gates(
    plan: &mut Plan,
    results: &mut [MutantResult],
    labels: &[String],
) -> Result<(), String> {
    let s = &mut plan.selection;
    if let Some(l) = labels
        .iter()
        .find(|l| !s.gate.iter().any(|c| &c.label == *l))
    {
        let known: Vec<&str> = s.gate.iter().map(|c| c.label.as_str()).collect();
        return Err(format!(
            "no gate command labelled {l} (the run's: {})",
            known.join(", ")
        ));
    }
    if !s.every_command && s.gate.len() > 1 {
        return Err("--gate-labels needs a run made with --every-command".into());
    }
    s.gate.retain(|c| labels.contains(&c.label));
    for r in results.iter_mut() {
        r.gate.retain(|g| labels.contains(&g.label));
        if r.class.viable() {
            r.class = classify(&r.gate, &r.tests, r.counters.as_ref());
        }
    }
    Ok(())
}

fn groups(mutants: &[MutantResult]) -> (Vec<Row>, Vec<Row>) {
    let mut files: BTreeMap<String, Row> = BTreeMap::new();
    let mut funcs: BTreeMap<String, Row> = BTreeMap::new();
    for m in mutants {
        let f = &m.mutant.file;
        let fun = format!("{f}: {}", m.mutant.function);
        for (map, key) in [(&mut files, f.clone()), (&mut funcs, fun)] {
            map.entry(key.clone())
                .or_insert_with(|| Row {
                    name: key,
                    ..Row::default()
                })
                .add(m.class);
        }
    }
    (files.into_values().collect(), funcs.into_values().collect())
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl MutationReport {
    /// The report in Markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Mutation yardstick\n\n");
        s += &format!(
            "{} mutants finished of {} planned (shards {}); the sample: {} of {} candidates, seed {}, files {}{}.\n\n",
            self.total.mutants,
            self.planned,
            self.shards.join(", "),
            self.sampled,
            self.candidates,
            self.seed,
            self.files.join(" "),
            if self.functions.is_empty() {
                String::new()
            } else {
                format!(", functions {}", self.functions.join(" "))
            }
        );
        if !self.only.is_empty() {
            s += &format!("Limited to the mutants `{}`.\n\n", self.only.join("`, `"));
        }
        s += &self.commands_md();
        s += "| class | mutants |\n| --- | ---: |\n";
        for c in Class::ALL {
            s += &format!("| {} | {} |\n", c.name(), self.total.count(c));
        }
        let t = &self.total;
        s += &format!(
            "\nScores over {} viable mutants: gate {} ({}), tests {} ({}), either {} ({}).\n",
            t.viable,
            t.score(t.gate_killed),
            t.gate_killed,
            t.score(t.tests_killed),
            t.tests_killed,
            t.score(t.either_killed),
            t.either_killed
        );
        s += &format!(
            "Time per mutant (build included): median {:.1} s, {:.1} s over viable ones; {:.0} s in all.\n\n",
            self.median_seconds, self.median_viable_seconds, self.total_seconds
        );
        s += &self.per_command_md();
        s += "## Per file\n\n";
        s += &table(&self.per_file);
        s += "\n## Per function\n\n";
        s += &table(&self.per_function);
        s += &self.survivors_md();
        s
    }

    fn commands_md(&self) -> String {
        let mut s = String::new();
        for c in &self.gate {
            s += &format!("- gate `{}`: `{}`\n", c.label, c.text);
        }
        if let Some(c) = &self.counters {
            s += &format!("- counters `{}`: `{}`\n", c.label, c.text);
        }
        for c in &self.tests {
            s += &format!("- tests `{}`: `{}`\n", c.label, c.text);
        }
        s + "\n"
    }

    /// Each command's kills among the viable mutants it ran on, and those no other command
    /// made. Complete only when every command ran on every mutant (`--every-command`).
    fn per_command_md(&self) -> String {
        let viable: Vec<&MutantResult> = self.mutants.iter().filter(|m| m.class.viable()).collect();
        let mut rows: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
        for m in &viable {
            let ran = command_runs(m);
            let killers: Vec<&String> = ran
                .iter()
                .filter(|(_, r)| kills(r))
                .map(|(l, _)| l)
                .collect();
            for (label, r) in &ran {
                let row = rows.entry(label.clone()).or_default();
                row.0 += 1;
                if kills(r) {
                    row.1 += 1;
                    row.2 += usize::from(killers.len() == 1);
                }
            }
        }
        let mut s = String::from("## Per command\n\n| command | ran on | killed | killed by no other command |\n| --- | ---: | ---: | ---: |\n");
        for (label, (ran, killed, alone)) in rows {
            s += &format!("| {label} | {ran} | {killed} | {alone} |\n");
        }
        s + "\n"
    }

    fn survivors_md(&self) -> String {
        let mut s = String::new();
        for (title, class) in [("Survivors", Class::Survived), ("Timeouts", Class::Timeout)] {
            let list: Vec<&MutantResult> =
                self.mutants.iter().filter(|m| m.class == class).collect();
            if list.is_empty() {
                continue;
            }
            s += &format!("\n## {title} ({})\n\n", list.len());
            for m in list {
                s += &format!(
                    "`{}` in `{}`:\n\n```diff\n{}```\n\n",
                    m.mutant.id, m.mutant.function, m.diff
                );
            }
        }
        s
    }
}

/// Every command that ran on mutant `m`, labelled with its kind.
fn command_runs(m: &MutantResult) -> Vec<(String, &Ran)> {
    let g = m.gate.iter().map(|r| (format!("gate {}", r.label), r));
    let c = m.counters.iter().map(|r| ("counters".to_string(), r));
    let t = m.tests.iter().map(|r| (format!("tests {}", r.label), r));
    g.chain(c).chain(t).collect()
}

/// A command that killed its mutant: a gate mode or test that failed, or the counters
/// comparison that found more work (exit 1).
fn kills(r: &Ran) -> bool {
    if r.label == "counters" {
        r.exit == "1"
    } else {
        r.failed()
    }
}

fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| | mutants | viable | gate kills | tests kills | both | survived | timeout | unviable | equivalent | gate score | tests score |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.mutants,
            r.viable,
            r.gate_killed,
            r.tests_killed,
            r.count(Class::Both),
            r.count(Class::Survived),
            r.count(Class::Timeout),
            r.count(Class::Unviable),
            r.count(Class::Equivalent),
            r.score(r.gate_killed),
            r.score(r.tests_killed)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_count_classes_and_scores() {
        let mut r = Row::default();
        for c in [
            Class::KilledByGate,
            Class::Both,
            Class::KilledByTests,
            Class::Survived,
            Class::Unviable,
        ] {
            r.add(c);
        }
        assert_eq!((r.mutants, r.viable), (5, 4));
        assert_eq!((r.gate_killed, r.tests_killed, r.either_killed), (2, 2, 3));
        assert_eq!(r.score(r.either_killed), "75%");
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0]), 2.5);
        assert!(report(&[]).is_err());
    }
}
