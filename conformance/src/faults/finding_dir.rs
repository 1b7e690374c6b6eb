//! A faults finding written to disk: the repository before the operation (its objects
//! copied in, so it stands alone), the operation's standard input, and `reproduce.sh`, which
//! runs git's command on a copy with the fault injected by strace and shows what it left.

use std::path::Path;

use crate::finding::dir::{fresh, write_script, REPRODUCE};
use crate::finding::script::sh_quote;
use crate::git::driver::{date_at, EMAIL, NAME};
use crate::stack_files::copy_dir;
use crate::syscalls::points::{FaultPoint, SYSCALLS};
use crate::syscalls::strace::short_write_wrapper;

/// What a finding directory is made of.
pub struct FindingFiles<'a> {
    /// The finding, in one line (the script's comment).
    pub about: &'a str,
    /// The repository before the operation.
    pub pre: &'a Path,
    /// The object pool's `objects` directory the repository borrows from.
    pub objects: &'a Path,
    /// git's arguments (without `git`) and standard input.
    pub args: &'a [String],
    /// Standard input.
    pub stdin: &'a str,
    /// The committer clock of the operation.
    pub tick: u64,
    /// The fault.
    pub point: &'a FaultPoint,
}

/// Write the finding into `dir` (made anew).
pub fn write(dir: &Path, f: &FindingFiles<'_>) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    fresh(dir).map_err(io)?;
    let repo = dir.join("repo");
    copy_dir(f.pre, &repo, None)?;
    copy_dir(f.objects, &repo.join(".git/objects"), None)?;
    let _ = std::fs::remove_file(repo.join(".git/objects/info/alternates"));
    std::fs::write(dir.join("stdin"), f.stdin).map_err(io)?;
    write_script(&dir.join(REPRODUCE), &script(f)).map_err(io)
}

fn script(f: &FindingFiles<'_>) -> String {
    let about: String = f.about.lines().map(|l| format!("# {l}\n")).collect();
    let args: Vec<String> = f.args.iter().map(|a| sh_quote(a)).collect();
    let date = sh_quote(&date_at(f.tick));
    // strace counts the calls of one process, the shell of a bin-wrappers/git included: the
    // environment and strace's options are the gate's own, exactly, so that the count lands
    // on the same call (without tracing, a crash of git 2.48 did not show).
    let env = format!(
        "env -i PATH=\"$PATH\" HOME=\"$work\" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \\\n  GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com GIT_AUTHOR_DATE={date} \\\n  GIT_COMMITTER_NAME={} GIT_COMMITTER_EMAIL={} GIT_COMMITTER_DATE={date} LC_ALL=C TZ=UTC",
        sh_quote(NAME),
        sh_quote(EMAIL),
    );
    let inject = f.point.inject_arg();
    // A short write is made by a file size limit, not by strace.
    let (how, fault) = match f.point.fsize {
        Some(limit) => (
            "a file size limit cutting one write short",
            format!(
                "-- {}",
                short_write_wrapper(limit)
                    .iter()
                    .map(|a| sh_quote(a))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ),
        None => (
            "strace failing one system call",
            format!("-e inject={inject}"),
        ),
    };
    format!(
        "#!/bin/sh\n{about}#\n# git's command on a copy of repo/ with {how} ({inject}).\n#   sh {REPRODUCE} [GIT]\nGIT=${{1:-git}}\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\nwork=$(mktemp -d)\ntrap 'rm -rf \"$work\"' EXIT\ncp -R \"$here/repo\" \"$work/repo\"\ncd \"$work/repo\"\n{env} \\\n  strace -f -qq -y -o \"$work/trace\" -e trace={} {fault} \"$GIT\" {} <\"$here/stdin\"\necho \"exit status $?\"\ngrep -E 'INJECTED|EFBIG' \"$work/trace\"\n{env} \"$GIT\" for-each-ref\necho \"for-each-ref: exit status $?\"\nls .git/reftable\n",
        SYSCALLS.join(","),
        args.join(" ")
    )
}
