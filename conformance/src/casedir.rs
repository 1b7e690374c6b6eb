//! Self-contained case directories: everything needed to see and replay a divergence.
//!
//! ```text
//! case.json        options, seed, case index, operations, divergences
//! git-stdin.txt    the exact update-ref --stdin input, transaction by transaction
//! ours/ git/       both stacks after the divergent step
//! diff.txt         what differs
//! replay.sh        one-line replay command
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::case::{CaseResult, Divergence};
use crate::ops::{CaseOptions, Op};

/// What `case.json` holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseFile {
    /// Run seed (when generated).
    pub seed: Option<u64>,
    /// Case index in the run (when generated).
    pub index: Option<u64>,
    /// Options.
    pub options: CaseOptions,
    /// Concrete operations.
    pub ops: Vec<Op>,
    /// The divergences seen.
    pub divergences: Vec<Divergence>,
    /// git version.
    pub git_version: String,
}

impl CaseFile {
    /// Read `dir/case.json`.
    pub fn read(dir: &Path) -> Result<CaseFile, String> {
        let text = std::fs::read_to_string(dir.join("case.json"))
            .map_err(|e| format!("{}: {e}", dir.join("case.json").display()))?;
        serde_json::from_str(&text).map_err(|e| format!("case.json: {e}"))
    }
}

fn copy_stack(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    if let Ok(entries) = std::fs::read_dir(from) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::copy(e.path(), to.join(e.file_name()))?;
            }
        }
    }
    Ok(())
}

/// Write a case directory for `result`. `stacks` are (ours, git's) stack directories.
pub fn write(
    dir: &Path,
    file: &CaseFile,
    result: &CaseResult,
    stacks: Option<(&Path, &Path)>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("case.json"),
        serde_json::to_string_pretty(file).expect("serializable"),
    )?;
    std::fs::write(dir.join("git-stdin.txt"), result.git_stdin.join("\n"))?;
    let mut diff = String::new();
    for d in &result.divergences {
        let op = result
            .ops
            .get(d.step)
            .map(Op::summary)
            .unwrap_or_else(|| "end of case".into());
        diff.push_str(&format!(
            "step {}: {op}\n  check: {:?} ({})\n  {}\n",
            d.step, d.check, d.class, d.detail
        ));
    }
    std::fs::write(dir.join("diff.txt"), diff)?;
    if let Some((ours, git)) = stacks {
        copy_stack(ours, &dir.join("ours"))?;
        copy_stack(git, &dir.join("git"))?;
    }
    std::fs::write(
        dir.join("replay.sh"),
        "#!/bin/sh\n# Replay this case against the git in REFTABLE_TEST_GIT (or on PATH).\nexec cargo run --release -p conformance -- replay \"$(dirname \"$0\")\"\n",
    )?;
    Ok(())
}
