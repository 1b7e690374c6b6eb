//! The files repository a migration starts from: a case's operations replayed by git on a
//! files-backend repository (loose refs, `packed-refs` after the case's `pack-refs`,
//! reflogs in `logs/`).

use std::path::Path;

use crate::finding::script::{git_invocation, ticks};
use crate::ops::{CaseOptions, Op};
use crate::setup::env::{init_repo, Env};

/// Longest ref name replayed on a files repository (see [`replay_on_files`]).
const LONGEST_LOOSE_NAME: usize = 1000;

/// Replay `ops` with git on a new files repository in `files` with the case's options,
/// counting each operation replayed in `replayed`. Without `with_reflogs` (a git that
/// cannot migrate them) the reflogs are removed afterwards.
pub(crate) fn replay_on_files(
    env: &Env,
    files: &Path,
    opts: &CaseOptions,
    ops: &[Op],
    with_reflogs: bool,
    replayed: &mut u64,
) -> Result<(), String> {
    std::fs::create_dir_all(files).map_err(|e| e.to_string())?;
    init_repo(env, files, "files", opts)?;
    for (op, tick) in ops.iter().zip(ticks(ops)) {
        // A loose ref is a file: names of thousands of bytes make paths longer than the
        // system takes (git refuses them there; they would only be left out).
        if op
            .touched_refs()
            .iter()
            .any(|n| n.len() > LONGEST_LOOSE_NAME)
        {
            continue;
        }
        let (args, stdin) = git_invocation(op);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        env.git
            .run(files, &args, stdin.as_deref().unwrap_or(""), tick);
        *replayed += 1;
    }
    if !with_reflogs {
        let _ = std::fs::remove_dir_all(files.join(".git/logs"));
    }
    // A files repository without HEAD is no repository: the cases delete HEAD at times.
    let head = files.join(".git/HEAD");
    if !head.exists() {
        std::fs::write(&head, "ref: refs/heads/main\n").map_err(|e| e.to_string())?;
    }
    Ok(())
}
