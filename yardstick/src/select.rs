//! What a run mutates: file specs (`reftable/*.c`, `refs.c:*transaction*`) resolved against
//! a checkout, the functions kept, and every mutant of them in a fixed order, with a
//! fingerprint of the sources so that a resumed run or a merge notices a changed checkout.

use std::path::Path;

use crate::build::fingerprint;
use crate::mutants::{glob, mutants_of, Mutant};

/// What is mutated by default: git's reftable library, the reftable backend, and the
/// transaction code of `refs.c`.
pub const DEFAULT_FILES: [&str; 3] = [
    "reftable/*.c",
    "refs/reftable-backend.c",
    "refs.c:*transaction*",
];

/// One resolved file and the function globs it keeps (empty: all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Path relative to the checkout.
    pub file: String,
    /// Function globs from the file's spec.
    pub functions: Vec<String>,
}

/// Resolve `specs` (`PATH[:FUNCTION-GLOB]`, `*` and `?` allowed in the file name) against
/// `root`: the files in name order, each once.
pub fn resolve(root: &Path, specs: &[String]) -> Result<Vec<Target>, String> {
    let mut out: Vec<Target> = Vec::new();
    for spec in specs {
        let (path, func) = match spec.split_once(':') {
            Some((p, f)) => (p, Some(f.to_string())),
            None => (spec.as_str(), None),
        };
        let (dir, pattern) = match path.rsplit_once('/') {
            Some((d, p)) => (d, p),
            None => ("", path),
        };
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .map_err(|e| format!("{}: {e}", root.join(dir).display()))?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| glob(pattern, n))
            .map(|n| {
                if dir.is_empty() {
                    n
                } else {
                    format!("{dir}/{n}")
                }
            })
            .filter(|n| root.join(n).is_file())
            .collect();
        if names.is_empty() {
            return Err(format!("{spec}: no such file in {}", root.display()));
        }
        names.sort();
        for file in names {
            let t = match out.iter_mut().find(|t| t.file == file) {
                Some(t) => t,
                None => {
                    out.push(Target {
                        file,
                        functions: Vec::new(),
                    });
                    out.last_mut().expect("pushed")
                }
            };
            t.functions.extend(func.clone());
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(out)
}

/// Every mutant of `targets` in `root` whose function matches the target's globs and one of
/// `functions` (when given), in file order; and the fingerprint of the files' contents.
pub fn candidates(
    root: &Path,
    targets: &[Target],
    functions: &[String],
) -> Result<(Vec<Mutant>, String), String> {
    let mut all = Vec::new();
    let mut sources = Vec::new();
    for t in targets {
        let p = root.join(&t.file);
        let src = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let keep = |name: &str| {
            (t.functions.is_empty() || t.functions.iter().any(|g| glob(g, name)))
                && (functions.is_empty() || functions.iter().any(|g| glob(g, name)))
        };
        all.extend(mutants_of(&t.file, &src, &keep));
        sources.extend_from_slice(t.file.as_bytes());
        sources.push(0);
        sources.extend_from_slice(src.as_bytes());
    }
    Ok((all, fingerprint(&sources)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_resolve_to_files_and_functions() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("lib")).unwrap();
        let f = "int add(int a) { return a + 1; }\nint sub(int a) { return a - 1; }\n";
        std::fs::write(d.path().join("lib/a.c"), f).unwrap();
        std::fs::write(d.path().join("lib/b.c"), f).unwrap();
        std::fs::write(d.path().join("lib/a.h"), f).unwrap();
        std::fs::write(d.path().join("top.c"), f).unwrap();
        let specs: Vec<String> = ["lib/*.c", "top.c:s*"].map(String::from).to_vec();
        let ts = resolve(d.path(), &specs).unwrap();
        let files: Vec<&str> = ts.iter().map(|t| t.file.as_str()).collect();
        assert_eq!(files, ["lib/a.c", "lib/b.c", "top.c"]);
        assert_eq!(ts[2].functions, ["s*"]);
        let (all, fp) = candidates(d.path(), &ts, &[]).unwrap();
        let top: Vec<&str> = all
            .iter()
            .filter(|m| m.file == "top.c")
            .map(|m| m.function.as_str())
            .collect();
        assert!(!top.is_empty() && top.iter().all(|f| *f == "sub"));
        let (only_add, fp2) = candidates(d.path(), &ts, &["add".into()]).unwrap();
        assert!(only_add.iter().all(|m| m.function == "add"));
        assert_eq!(fp, fp2);
        assert!(resolve(d.path(), &["nope/*.c".into()]).is_err());
        assert!(resolve(d.path(), &["lib/*.x".into()]).is_err());
    }
}
