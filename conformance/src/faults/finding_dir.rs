//! A faults finding written to disk: the repository before the operation (with the pool's
//! pack, so it stands alone), the operation's standard input, and `reproduce.sh`, which
//! runs git's command on a copy with the fault injected by strace and shows what it left.

use std::path::Path;

use crate::faults::class::Class;
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
    /// git's arguments (without `git`) and standard input.
    pub args: &'a [String],
    /// Standard input.
    pub stdin: &'a str,
    /// The committer clock of the operation.
    pub tick: u64,
    /// The fault.
    pub point: &'a FaultPoint,
    /// The class of git's faulted run the script tests for; none for a finding of ours,
    /// which git alone does not show.
    pub class: Option<Class>,
}

/// Write the finding into `dir` (made anew).
pub fn write(dir: &Path, f: &FindingFiles<'_>) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    fresh(dir).map_err(io)?;
    let repo = dir.join("repo");
    copy_dir(f.pre, &repo, None)?;
    std::fs::write(dir.join("stdin"), f.stdin).map_err(io)?;
    write_script(&dir.join(REPRODUCE), &script(f)).map_err(io)
}

/// The test of `class` on git's faulted run: a shell condition over `$status` (its exit
/// status), `$load` (the exit status of `for-each-ref` after it), `$before`, `$after` (the
/// refs before and after it) and `$clean_status`, `$clean` (the unfaulted run's).
fn shows(class: Class) -> &'static str {
    match class {
        Class::Crash => "[ $status -gt 128 ]",
        Class::UnloadableStack => "[ $load -ne 0 ]",
        Class::HalfApplied => "[ \"$after\" != \"$before\" ] && [ \"$after\" != \"$clean\" ]",
        Class::LostAcknowledgedUpdate => "[ $status -eq 0 ] && [ \"$after\" != \"$clean\" ]",
        Class::CommittedButReportedFailed => {
            "[ $status -ne 0 ] && [ \"$after\" = \"$clean\" ] && [ \"$after\" != \"$before\" ]"
        }
        Class::StuckLock => "ls .git/reftable/*.lock >/dev/null 2>&1",
        Class::InterruptNotRetried => "[ $status -ne $clean_status ]",
        Class::Acknowledged | Class::AcknowledgedWithWarning | Class::CleanRefusal => "false",
    }
}

/// The end of a finding's script: the refs after the faulted run, the unfaulted run on
/// another copy, and the exit: 1 while git's run shows `class`, 0 when it does not (and
/// always for a finding of ours).
fn verdict(class: Option<Class>, env: &str, args: &str) -> String {
    let (test, said) = match class {
        Some(c) => (shows(c), format!("git {}", c.name())),
        None => (
            "false",
            "a finding of ours: git alone does not show it".into(),
        ),
    };
    format!(
        "after=$(refs)\ncp -R \"$here/repo\" \"$work/clean\" || exit 2\ncd \"$work/clean\" || exit 2\n{env} \"$GIT\" {args} <\"$here/stdin\" >/dev/null 2>&1\nclean_status=$?\nclean=$(refs)\nif {test}; then\n  echo \"DEFECT: {said}\"\n  exit 1\nfi\necho \"ok: not shown ({said})\"\nexit 0\n"
    )
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
    let args = args.join(" ");
    let verdict = verdict(f.class, &env, &args);
    format!(
        "#!/bin/sh\n{about}#\n# git's command on a copy of repo/ with {how} ({inject}), then unfaulted on another.\n#   sh {REPRODUCE} [GIT]    Exit 1 while the defect shows, 0 when it does not, 2 when it\n#   cannot run (no strace, no git, a copy failed).\nGIT=${{1:-git}}\ncommand -v strace >/dev/null || {{ echo \"needs strace\"; exit 2; }}\n\"$GIT\" version || {{ echo \"cannot run $GIT\"; exit 2; }}\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\nwork=$(mktemp -d)\ntrap 'rm -rf \"$work\"' EXIT\nrefs() {{ {env} \"$GIT\" for-each-ref --format='%(refname) %(objectname) %(symref)' 2>/dev/null; }}\ncp -R \"$here/repo\" \"$work/repo\" || exit 2\ncd \"$work/repo\" || exit 2\nbefore=$(refs)\n{env} \\\n  strace -f -qq -y -o \"$work/trace\" -e trace={} {fault} \"$GIT\" {args} <\"$here/stdin\"\nstatus=$?\necho \"exit status $status\"\ngrep -E 'INJECTED|EFBIG' \"$work/trace\"\n{env} \"$GIT\" for-each-ref\nload=$?\necho \"for-each-ref: exit status $load\"\nls .git/reftable\n{verdict}",
        SYSCALLS.join(","),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class's script (and one of ours) has the three exits.
    #[test]
    fn a_reproducer_exits_1_0_or_2() {
        let point = FaultPoint {
            syscall: "write".into(),
            nth: 1,
            errno: "EIO".into(),
            role: "new table".into(),
            after_commit: false,
            fsize: None,
        };
        for class in Class::ALL.map(Some).into_iter().chain([None]) {
            let f = FindingFiles {
                about: "a finding",
                pre: Path::new("/nonexistent"),
                args: &["update-ref".into(), "--stdin".into()],
                stdin: "",
                tick: 1,
                point: &point,
                class,
            };
            let s = script(&f);
            for exit in ["exit 1\n", "exit 0\n", "exit 2"] {
                assert!(s.contains(exit), "{class:?}: no {exit}\n{s}");
            }
            let syntax = std::process::Command::new("sh")
                .args(["-n", "-c", &s])
                .status();
            assert!(syntax.unwrap().success(), "{class:?}: not sh\n{s}");
            let bad = class.is_some_and(Class::is_bad);
            assert_eq!(bad, !s.contains("if false;"), "{class:?}");
        }
    }
}
