//! A mutation run's directory, which makes it resumable and mergeable: `plan.json` (what
//! was chosen, the shard's mutants in order, the unmutated build's baseline) and one
//! `results/NNNNN.json` per finished mutant, each written whole (temporary file, then
//! rename), so a killed run loses at most the mutant it was on. `logs/NNNNN/` keeps every
//! command's output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::command::{Cmd, Ran};
use crate::mutants::Mutant;
use crate::outcome::MutantResult;

/// What a run chose, shard aside: two shard directories merge only when these are equal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// Seed of the sample.
    pub seed: u64,
    /// Sample size (0: every mutant).
    pub sample: usize,
    /// File specs.
    pub files: Vec<String>,
    /// Function globs.
    pub functions: Vec<String>,
    /// Mutant ids the run was limited to (empty: none).
    #[serde(default)]
    pub only: Vec<String>,
    /// Fingerprint of the mutated files' contents.
    pub sources: String,
    /// Mutants of the chosen files and functions before sampling.
    pub candidates: usize,
    /// The gate's commands.
    pub gate: Vec<Cmd>,
    /// The user's tests.
    pub tests: Vec<Cmd>,
    /// The counters comparison, if asked for.
    pub counters: Option<Cmd>,
    /// Every gate and test command ran on every mutant (`--every-command`), not only up to
    /// the first that failed: each command's kills are then complete.
    #[serde(default)]
    pub every_command: bool,
}

/// How the unmutated build did: every command must pass on it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Baseline {
    /// The build (incremental, in the copy).
    pub build: Ran,
    /// The gate's commands.
    pub gate: Vec<Ran>,
    /// The tests.
    pub tests: Vec<Ran>,
    /// The counters comparison of the unmutated build with itself.
    pub counters: Option<Ran>,
    /// Fingerprint of each mutated file's object file (for `equivalent`).
    pub objects: BTreeMap<String, Option<String>>,
    /// What runs the unmutated program (`{base_git}`).
    pub base_program: PathBuf,
}

/// A shard's plan.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    /// What was chosen.
    pub selection: Selection,
    /// This shard, `(k, n)`.
    pub shard: (usize, usize),
    /// Mutants of the whole sample (before sharding).
    pub sampled: usize,
    /// The shard's mutants, in the order they run.
    pub mutants: Vec<Mutant>,
    /// The unmutated build's run, once made.
    pub baseline: Option<Baseline>,
}

/// A run's directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    /// Its path.
    pub path: PathBuf,
}

impl RunDir {
    /// The directory at `path` (made absolute: commands run elsewhere).
    pub fn new(path: &Path) -> RunDir {
        RunDir {
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
        }
    }

    /// The plan, if the directory has one.
    pub fn plan(&self) -> Result<Option<Plan>, String> {
        let p = self.path.join("plan.json");
        if !p.exists() {
            return Ok(None);
        }
        read_json(&p).map(Some)
    }

    /// Write the plan.
    pub fn save_plan(&self, plan: &Plan) -> Result<(), String> {
        write_json(&self.path.join("plan.json"), plan)
    }

    /// Every finished mutant's record, by index.
    pub fn results(&self) -> Result<BTreeMap<usize, MutantResult>, String> {
        let dir = self.path.join("results");
        let mut out = BTreeMap::new();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(out);
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") {
                let r: MutantResult = read_json(&p)?;
                out.insert(r.index, r);
            }
        }
        Ok(out)
    }

    /// Write one mutant's record.
    pub fn save_result(&self, r: &MutantResult) -> Result<(), String> {
        let p = self
            .path
            .join("results")
            .join(format!("{:05}.json", r.index));
        write_json(&p, r)
    }

    /// Where mutant `index`'s command logs go.
    pub fn logs(&self, index: usize) -> PathBuf {
        self.path.join("logs").join(format!("{index:05}"))
    }

    /// An emptied scratch directory for one command.
    pub fn scratch(&self) -> Result<PathBuf, String> {
        let p = self.path.join("scratch");
        if p.exists() {
            std::fs::remove_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(p)
    }
}

/// Read a JSON file.
pub fn read_json<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// Write a JSON file whole: a temporary file beside it, then a rename.
pub fn write_json<T: Serialize>(p: &Path, value: &T) -> Result<(), String> {
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let tmp = p.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, p).map_err(|e| format!("{}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Class;

    #[test]
    fn results_round_trip_by_index() {
        let d = tempfile::tempdir().unwrap();
        let rd = RunDir::new(d.path());
        assert!(rd.plan().unwrap().is_none());
        let ran = Ran {
            label: "build".into(),
            exit: "0".into(),
            seconds: 0.5,
        };
        let m = crate::mutants::mutants_of("x.c", "int f(void) { return 1; }", &|_| true).remove(0);
        let r = MutantResult {
            index: 3,
            mutant: m,
            class: Class::Survived,
            diff: String::new(),
            build: ran,
            gate: vec![],
            counters: None,
            tests: vec![],
            seconds: 1.0,
            note: String::new(),
        };
        rd.save_result(&r).unwrap();
        let all = rd.results().unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[&3].class, Class::Survived);
        assert!(d.path().join("results/00003.json").is_file());
        let s = rd.scratch().unwrap();
        std::fs::write(s.join("f"), "x").unwrap();
        assert!(!rd.scratch().unwrap().join("f").exists());
    }
}
