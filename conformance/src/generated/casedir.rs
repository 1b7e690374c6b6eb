//! Self-contained case directories: everything needed to see and replay a divergence.
//!
//! ```text
//! case.json          options, seed, case index, operations, divergences, the git it ran on
//! git-stdin.txt      the exact update-ref --stdin input, transaction by transaction
//! ours/ git/         both stacks after the divergent step (when kept)
//! diff.txt           what differs
//! replay.sh          replays the case through the gate, from any directory
//! reproduce-git.sh   the operations with git alone (no cargo), for a report upstream
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::finding::divergence::Divergence;

use crate::generated::outcome::CaseResult;
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
    write_exec(&dir.join("replay.sh"), &replay_script())?;
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
        write_exec(&dir.join("reproduce-git.sh"), &script)?;
    }
    Ok(())
}

fn write_exec(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// `replay.sh`: runs the gate's `replay` on its own directory, wherever it is called from,
/// with the conformance binary that wrote it when it still exists, else through cargo in the
/// workspace it came from. Arguments pass through (`--git PATH` overrides the recorded git).
fn replay_script() -> String {
    let bin = std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .display()
        .to_string();
    let q = crate::finding::script::sh_quote;
    format!(
        "#!/bin/sh\n# Replay this case on the git recorded in case.json (or: replay.sh --git PATH).\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\nbin={}\nif [ -x \"$bin\" ]; then exec \"$bin\" replay \"$here\" \"$@\"; fi\nexec cargo run --quiet --release --manifest-path {} -p conformance -- replay \"$here\" \"$@\"\n",
        q(&bin),
        q(&format!("{workspace}/Cargo.toml"))
    )
}
