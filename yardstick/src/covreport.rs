//! The coverage report: per run and for the gate's and the tests' runs together, lines,
//! branches and functions of git's reftable code reached, in all and per file; and the
//! lines only one side reaches, grouped by function (the most first), as JSON and Markdown.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::coverage::RunCoverage;
use crate::gcov::{Figures, FileCov};

/// One run's (or one group of runs') figures.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The run's label, or the group's (`gate`, `tests`, `gate + tests`).
    pub label: String,
    /// How the run ended (`0`, `1`, `timeout`, ...); empty for a group.
    pub exit: String,
    /// Wall time (summed for a group).
    pub seconds: f64,
    /// All files together.
    pub total: Figures,
    /// Per file.
    pub per_file: BTreeMap<String, Figures>,
}

/// Lines of one function that one side reaches and the other does not.
#[derive(Clone, Debug, Serialize)]
pub struct OnlyLines {
    /// The file.
    pub file: String,
    /// The function.
    pub function: String,
    /// The lines.
    pub lines: Vec<u32>,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct CoverageReport {
    /// The coverage build.
    pub tree: String,
    /// Each run.
    pub runs: Vec<Summary>,
    /// The gate's runs together, the tests' together, and everything (when both sides ran).
    pub groups: Vec<Summary>,
    /// Lines only the tests reach, by function, the most first.
    pub only_tests: Vec<OnlyLines>,
    /// Lines only the gate reaches, by function, the most first.
    pub only_gate: Vec<OnlyLines>,
    /// How many functions the Markdown lists per difference.
    pub top: usize,
}

/// The coverage of `runs` merged, file by file.
fn union<'a>(runs: impl Iterator<Item = &'a RunCoverage>) -> BTreeMap<String, FileCov> {
    let mut out: BTreeMap<String, FileCov> = BTreeMap::new();
    for r in runs {
        for f in &r.files {
            match out.get_mut(&f.file) {
                Some(u) => u.merge(f),
                None => {
                    out.insert(f.file.clone(), f.clone());
                }
            }
        }
    }
    out
}

fn summary(label: &str, exit: &str, seconds: f64, files: &BTreeMap<String, FileCov>) -> Summary {
    let per_file: BTreeMap<String, Figures> = files
        .iter()
        .map(|(k, f)| (k.clone(), f.figures()))
        .collect();
    Summary {
        label: label.to_string(),
        exit: exit.to_string(),
        seconds,
        total: per_file
            .values()
            .fold(Figures::default(), |a, f| a.plus(*f)),
        per_file,
    }
}

/// Lines `a` reaches and `b` does not, grouped by function, the most first.
fn only(a: &BTreeMap<String, FileCov>, b: &BTreeMap<String, FileCov>) -> Vec<OnlyLines> {
    let mut out = Vec::new();
    for (file, fa) in a {
        let theirs: BTreeSet<u32> = b.get(file).map(|f| f.hit().collect()).unwrap_or_default();
        let mut by_fn: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for l in fa.hit().filter(|l| !theirs.contains(l)) {
            let f = fa.line_functions.get(&l).cloned().unwrap_or_default();
            by_fn.entry(f).or_default().push(l);
        }
        out.extend(by_fn.into_iter().map(|(function, lines)| OnlyLines {
            file: file.clone(),
            function,
            lines,
        }));
    }
    out.sort_by(|x, y| y.lines.len().cmp(&x.lines.len()).then(x.file.cmp(&y.file)));
    out
}

impl CoverageReport {
    /// The report of `runs` on the build in `tree`.
    pub fn new(tree: &str, runs: &[RunCoverage], top: usize) -> CoverageReport {
        let side = |s: &'static str| move |r: &&RunCoverage| r.side == s;
        let secs =
            |s: &'static str| -> f64 { runs.iter().filter(side(s)).map(|r| r.ran.seconds).sum() };
        let gate = union(runs.iter().filter(side("gate")));
        let tests = union(runs.iter().filter(side("tests")));
        let mut groups = Vec::new();
        if !gate.is_empty() {
            groups.push(summary("gate", "", secs("gate"), &gate));
        }
        if !tests.is_empty() {
            groups.push(summary("tests", "", secs("tests"), &tests));
        }
        if !gate.is_empty() && !tests.is_empty() {
            let all = union(runs.iter());
            groups.push(summary(
                "gate + tests",
                "",
                secs("gate") + secs("tests"),
                &all,
            ));
        }
        CoverageReport {
            tree: tree.to_string(),
            runs: runs
                .iter()
                .map(|r| {
                    let files = union(std::iter::once(r));
                    summary(&r.label, &r.ran.exit, r.ran.seconds, &files)
                })
                .collect(),
            groups,
            only_tests: if gate.is_empty() {
                Vec::new()
            } else {
                only(&tests, &gate)
            },
            only_gate: if tests.is_empty() {
                Vec::new()
            } else {
                only(&gate, &tests)
            },
            top,
        }
    }

    /// The report in Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!("# Coverage yardstick\n\nBuild: `{}`.\n\n", self.tree);
        s += "| run | exit | seconds | lines | branches | functions |\n| --- | --- | ---: | ---: | ---: | ---: |\n";
        for r in self.runs.iter().chain(&self.groups) {
            let t = &r.total;
            s += &format!(
                "| {} | {} | {:.0} | {} | {} | {} |\n",
                r.label,
                r.exit,
                r.seconds,
                pct(t.lines_hit, t.lines),
                pct(t.branches_hit, t.branches),
                pct(t.functions_hit, t.functions)
            );
        }
        s += &self.per_file_md();
        for (title, list) in [
            ("Lines only the tests reach", &self.only_tests),
            ("Lines only the gate reaches", &self.only_gate),
        ] {
            if list.is_empty() {
                continue;
            }
            let total: usize = list.iter().map(|o| o.lines.len()).sum();
            s += &format!(
                "\n## {title}: {total} lines in {} functions (top {})\n\n| file | function | lines | which |\n| --- | --- | ---: | --- |\n",
                list.len(),
                self.top
            );
            for o in list.iter().take(self.top) {
                s += &format!(
                    "| {} | `{}` | {} | {} |\n",
                    o.file,
                    o.function,
                    o.lines.len(),
                    ranges(&o.lines)
                );
            }
        }
        s
    }

    /// Per file: lines / branches / functions of each group (each run when there is none).
    fn per_file_md(&self) -> String {
        let cols: &[Summary] = if self.groups.is_empty() {
            &self.runs
        } else {
            &self.groups
        };
        let mut s = String::from("\n## Per file (lines / branches / functions)\n\n| file |");
        for c in cols {
            s += &format!(" {} |", c.label);
        }
        s += "\n| --- |";
        s += &" ---: |".repeat(cols.len());
        s += "\n";
        let files: BTreeSet<&String> = cols.iter().flat_map(|c| c.per_file.keys()).collect();
        for f in files {
            s += &format!("| {f} |");
            for c in cols {
                let x = c.per_file.get(f).copied().unwrap_or_default();
                s += &format!(
                    " {} / {} / {} |",
                    pct(x.lines_hit, x.lines),
                    pct(x.branches_hit, x.branches),
                    pct(x.functions_hit, x.functions)
                );
            }
            s += "\n";
        }
        s
    }
}

/// `hit/total (p%)`.
fn pct(hit: usize, total: usize) -> String {
    if total == 0 {
        return "–".to_string();
    }
    format!("{hit}/{total} ({:.1}%)", 100.0 * hit as f64 / total as f64)
}

/// Line numbers as ranges: `3-5, 9`.
fn ranges(lines: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j + 1 < lines.len() && lines[j + 1] == lines[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            lines[i].to_string()
        } else {
            format!("{}-{}", lines[i], lines[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Ran;

    fn run(label: &str, side: &str, hit: &[u32]) -> RunCoverage {
        let mut f = FileCov {
            file: "a.c".into(),
            ..FileCov::default()
        };
        for l in 1..=6 {
            f.lines.insert(l, u64::from(hit.contains(&l)));
            f.line_functions
                .insert(l, if l <= 3 { "f" } else { "g" }.into());
        }
        RunCoverage {
            label: label.into(),
            side: side.into(),
            command: String::new(),
            ran: Ran {
                label: label.into(),
                exit: "0".into(),
                seconds: 2.0,
            },
            files: vec![f],
        }
    }

    #[test]
    fn groups_and_differences() {
        let runs = [
            run("run", "gate", &[1, 2]),
            run("migrate", "gate", &[3]),
            run("t", "tests", &[1, 4, 5, 6]),
        ];
        let r = CoverageReport::new("/x", &runs, 20);
        assert_eq!(r.groups.len(), 3);
        assert_eq!(r.groups[0].total.lines_hit, 3);
        assert_eq!(r.groups[2].total.lines_hit, 6);
        assert_eq!(r.only_tests.len(), 1);
        assert_eq!(
            (r.only_tests[0].function.as_str(), &r.only_tests[0].lines),
            ("g", &vec![4, 5, 6])
        );
        assert_eq!(r.only_gate[0].lines, [2, 3]);
        let md = r.markdown();
        assert!(
            md.contains("| g | `g`") || md.contains("`g` | 3 | 4-6"),
            "{md}"
        );
        assert_eq!(ranges(&[1, 2, 3, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(pct(1, 4), "1/4 (25.0%)");
    }
}
