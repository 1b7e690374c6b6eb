//! Coverage of one C file as gcov's JSON tells it (`gcov --json-format --stdout
//! --branch-probabilities`, gcc 9 and later): execution counts per line, branch counts per
//! line, functions with their lines; merged across runs, and summed up as lines, branches
//! and functions reached.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One function of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FnCov {
    /// First line.
    pub start: u32,
    /// Last line.
    pub end: u32,
    /// Times it was entered.
    pub count: u64,
}

/// The coverage of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCov {
    /// The file, relative to the tree.
    pub file: String,
    /// Execution count of every line with code.
    pub lines: BTreeMap<u32, u64>,
    /// The function each line with code is in.
    pub line_functions: BTreeMap<u32, String>,
    /// Count of each branch, by line.
    pub branches: BTreeMap<u32, Vec<u64>>,
    /// The file's functions.
    pub functions: BTreeMap<String, FnCov>,
}

/// Reached / present, for lines, branches and functions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Figures {
    /// Lines executed.
    pub lines_hit: usize,
    /// Lines with code.
    pub lines: usize,
    /// Branches taken.
    pub branches_hit: usize,
    /// Branches.
    pub branches: usize,
    /// Functions entered.
    pub functions_hit: usize,
    /// Functions.
    pub functions: usize,
}

impl Figures {
    /// The sum of two.
    pub fn plus(self, o: Figures) -> Figures {
        Figures {
            lines_hit: self.lines_hit + o.lines_hit,
            lines: self.lines + o.lines,
            branches_hit: self.branches_hit + o.branches_hit,
            branches: self.branches + o.branches,
            functions_hit: self.functions_hit + o.functions_hit,
            functions: self.functions + o.functions,
        }
    }
}

impl FileCov {
    /// Lines, branches and functions reached.
    pub fn figures(&self) -> Figures {
        let br = self.branches.values().flatten();
        Figures {
            lines_hit: self.lines.values().filter(|&&c| c > 0).count(),
            lines: self.lines.len(),
            branches_hit: br.clone().filter(|&&c| c > 0).count(),
            branches: br.count(),
            functions_hit: self.functions.values().filter(|f| f.count > 0).count(),
            functions: self.functions.len(),
        }
    }

    /// Add another run's counts of the same file.
    pub fn merge(&mut self, o: &FileCov) {
        for (l, c) in &o.lines {
            *self.lines.entry(*l).or_default() += c;
        }
        for (l, f) in &o.line_functions {
            self.line_functions.entry(*l).or_insert_with(|| f.clone());
        }
        for (l, bs) in &o.branches {
            let mine = self.branches.entry(*l).or_default();
            mine.resize(mine.len().max(bs.len()), 0);
            mine.iter_mut().zip(bs).for_each(|(a, b)| *a += b);
        }
        for (name, f) in &o.functions {
            let mine = self.functions.entry(name.clone()).or_insert_with(|| FnCov {
                count: 0,
                ..f.clone()
            });
            mine.count += f.count;
        }
    }

    /// The lines executed here.
    pub fn hit(&self) -> impl Iterator<Item = u32> + '_ {
        self.lines.iter().filter(|(_, &c)| c > 0).map(|(l, _)| *l)
    }
}

/// Run gcov on `file` (relative to `tree`, its object files beside it) and read its JSON.
pub fn collect(tree: &Path, file: &str) -> Result<FileCov, String> {
    let objdir = Path::new(file).parent().unwrap_or(Path::new(""));
    let objdir = if objdir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        objdir
    };
    let out = Command::new("gcov")
        .args(["--json-format", "--stdout", "--branch-probabilities"])
        .arg("--object-directory")
        .arg(objdir)
        .arg(file)
        .current_dir(tree)
        .output()
        .map_err(|e| format!("cannot run gcov: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let json = text.lines().find(|l| l.starts_with('{')).ok_or_else(|| {
        format!(
            "gcov printed no JSON for {file} (built with --coverage?): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    parse(json, file)
}

/// Read gcov's JSON document for `file`.
pub fn parse(json: &str, file: &str) -> Result<FileCov, String> {
    let doc: Value = serde_json::from_str(json).map_err(|e| format!("gcov JSON: {e}"))?;
    let entry = doc["files"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["file"].as_str() == Some(file)))
        .ok_or_else(|| format!("gcov's JSON has no entry for {file}"))?;
    let mut cov = FileCov {
        file: file.to_string(),
        ..FileCov::default()
    };
    let num = |v: &Value| v.as_u64().unwrap_or(0);
    for l in entry["lines"].as_array().into_iter().flatten() {
        let n = num(&l["line_number"]) as u32;
        *cov.lines.entry(n).or_default() += num(&l["count"]);
        if let Some(f) = l["function_name"].as_str() {
            cov.line_functions.insert(n, f.to_string());
        }
        let bs = l["branches"].as_array().into_iter().flatten();
        cov.branches
            .entry(n)
            .or_default()
            .extend(bs.map(|b| num(&b["count"])));
    }
    cov.branches.retain(|_, v| !v.is_empty());
    for f in entry["functions"].as_array().into_iter().flatten() {
        let name = f["name"].as_str().unwrap_or("?").to_string();
        let e = cov.functions.entry(name).or_default();
        e.start = num(&f["start_line"]) as u32;
        e.end = num(&f["end_line"]) as u32;
        e.count += num(&f["execution_count"]);
    }
    Ok(cov)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"files": [{"file": "sub/a.c", "lines": [
        {"line_number": 2, "count": 1, "function_name": "f", "branches": []},
        {"line_number": 3, "count": 1, "function_name": "f", "branches": [{"count": 0}, {"count": 1}]},
        {"line_number": 4, "count": 0, "function_name": "f", "branches": []},
        {"line_number": 7, "count": 0, "function_name": "g", "branches": []}],
      "functions": [{"name": "f", "start_line": 2, "end_line": 6, "execution_count": 1},
                    {"name": "g", "start_line": 7, "end_line": 7, "execution_count": 0}]},
      {"file": "sub/a.h", "lines": [], "functions": []}]}"#;

    #[test]
    fn gcov_json_is_read_and_merged() {
        let a = parse(DOC, "sub/a.c").unwrap();
        let f = a.figures();
        assert_eq!((f.lines_hit, f.lines), (2, 4));
        assert_eq!((f.branches_hit, f.branches), (1, 2));
        assert_eq!((f.functions_hit, f.functions), (1, 2));
        assert_eq!(a.line_functions[&7], "g");
        let mut b = a.clone();
        b.lines.insert(7, 3);
        b.functions.get_mut("g").unwrap().count = 1;
        b.branches.insert(3, vec![2, 0]);
        let mut u = a.clone();
        u.merge(&b);
        let g = u.figures();
        assert_eq!((g.lines_hit, g.branches_hit, g.functions_hit), (3, 2, 2));
        assert_eq!(u.hit().collect::<Vec<_>>(), [2, 3, 7]);
        assert!(parse(DOC, "other.c").is_err());
        let sum = f.plus(g);
        assert_eq!(sum.lines, 8);
    }
}
