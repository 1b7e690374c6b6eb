//! What a repository looks like after a faulted write: its refs and reflogs as our reader
//! sees them, whether git loads the stack (`for-each-ref`, `refs verify`), which lock and
//! temporary files were left in the stack directory, and whether the next writer of the same
//! side (git after git, our library after ours) gets through, and if not, whether its
//! message says which file to remove.

use std::path::Path;

use crate::git::driver::Git;
use crate::snapshot::Snapshot;

/// The repository after a trial.
#[derive(Clone, Debug)]
pub struct Observed {
    /// Refs and reflogs (our reader), or why they could not be read.
    pub state: Result<Snapshot, String>,
    /// Why git could not load the stack, if it could not.
    pub git_load: Option<String>,
    /// Lock and temporary files left in the stack directory.
    pub left: Vec<String>,
    /// Why the next write failed, if it did.
    pub next_write: Option<String>,
}

/// The ref the next-write check creates.
pub const NEXT_REF: &str = "refs/faults/next";

/// Files in `stack` that a finished writer should not leave: locks and temporary tables.
pub fn left_files(stack: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(stack) else {
        return Vec::new();
    };
    let mut left: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock") || n.contains(".temp") || n.starts_with("tmp"))
        .collect();
    left.sort();
    left
}

/// How a trial's repository is looked at: our reader, git's, and the next writer (which
/// writes [`NEXT_REF`] into the repository and returns its refusal, if any).
pub struct Lookers<'a> {
    /// git, for `for-each-ref` and `refs verify`.
    pub git: &'a Git,
    /// Whether this git has `refs verify`.
    pub refs_verify: bool,
    /// Our reader on a stack directory.
    pub read: &'a dyn Fn(&Path) -> Result<Snapshot, String>,
    /// The next writer on a repository.
    pub next_write: &'a dyn Fn(&Path) -> Option<String>,
}

/// Look at the repository `repo` after a trial: state, git's view, files left, then the
/// next write (which changes the repository: done last).
pub fn observe(look: &Lookers<'_>, repo: &Path) -> Observed {
    let (git, read) = (look.git, look.read);
    let stack = repo.join(".git/reftable");
    let state = read(&stack);
    let mut git_load = None;
    let mut checks = vec![vec!["for-each-ref"]];
    if look.refs_verify {
        checks.push(vec!["refs", "verify"]);
    }
    for args in checks {
        let o = git.run(repo, &args, "", 0);
        if !o.exit.success() {
            git_load = Some(format!(
                "git {} ({:?}): {}",
                args.join(" "),
                o.exit,
                o.stderr.trim()
            ));
            break;
        }
    }
    let left = left_files(&stack);
    let next_write = (look.next_write)(repo);
    Observed {
        state,
        git_load,
        left,
        next_write,
    }
}
