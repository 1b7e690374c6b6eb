//! Self-contained case directories: everything needed to see and replay a divergence.
//!
//! ```text
//! case.json          options, seed, case index, operations, divergences, the git it ran on
//! git-stdin.txt      the exact update-ref --stdin input, transaction by transaction
//! ours/ git/         both stacks after the divergent step (when kept)
//! diff.txt           what differs
//! rerun.sh           replays the case through the gate, from any directory
//! reproduce.sh       the operations with git alone (no cargo), for a report upstream
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cases::outcome::CaseResult;
use crate::finding::dir::{rerun_script, write_script, REPRODUCE, RERUN};
use crate::finding::divergence::Divergence;
use crate::ops::{CaseOptions, Op};
use crate::setup::pool::ObjectPool;

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
    /// The git binary it ran on (replay uses it unless told otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
}

impl CaseFile {
    /// Read `dir/case.json`.
    pub fn read(dir: &Path) -> Result<CaseFile, String> {
        let text = std::fs::read_to_string(dir.join("case.json"))
            .map_err(|e| format!("{}: {e}", dir.join("case.json").display()))?;
        serde_json::from_str(&text).map_err(|e| format!("case.json: {e}"))
    }
}

/// A stack directory's files copied into a case directory (an empty directory when the
/// stack is gone).
fn copy_stack(from: &Path, to: &Path) -> std::io::Result<()> {
    if !from.is_dir() {
        return std::fs::create_dir_all(to);
    }
    crate::stack_files::copy_dir(from, to, None).map_err(std::io::Error::other)
}

/// Write a case directory for `result`. `stacks` are (ours, git's) stack directories; `pool`
/// the objects the case used (for the git-only script).
pub fn write(
    dir: &Path,
    file: &CaseFile,
    result: &CaseResult,
    stacks: Option<(&Path, &Path)>,
    pool: Option<&ObjectPool>,
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
    write_script(
        &dir.join(RERUN),
        &rerun_script(
            "Replay this case on the git recorded in case.json (or: rerun.sh --git PATH).",
            "",
            "replay \"$here\"",
        ),
    )?;
    if let Some(pool) = pool {
        let name = dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let title = format!(
            "reftable-rs conformance case {name} (git {})",
            file.git_version
        );
        let script = crate::finding::script::git_only(
            &title,
            &file.options,
            &file.ops,
            pool,
            &file.divergences,
        );
        write_script(&dir.join(REPRODUCE), &script)?;
    }
    Ok(())
}
