//! Running a prepared command under strace: once to trace its write path, then once per
//! injected fault. The command (git, or our worker process) keeps its environment and
//! directory; strace and everything it starts run as one process group that a timeout kills
//! whole.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::git::driver::{run_in_group, run_in_group_capturing, Exit};
use crate::syscalls::points::{FaultPoint, SYSCALLS};

/// How a traced run ended and what it printed.
#[derive(Clone, Debug)]
pub struct Traced {
    /// The command's exit (strace exits as its tracee did).
    pub exit: Exit,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error (strace's own complaints too).
    pub stderr: String,
    /// The trace (`-y`: file descriptors decoded to paths).
    pub trace: String,
}

/// Whether strace runs here (`strace -V`).
pub fn available() -> bool {
    Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this strace stops a tracee only at the traced calls (`--seccomp-bpf`, strace
/// 5.3+, where the kernel lets it install the filter): it runs `true` so, and takes the
/// flag only when that exits 0 and says nothing (a warning would land in the traced
/// command's error output). Asked once.
pub fn seccomp_filter() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        let args = [
            "-f",
            "--seccomp-bpf",
            "-qq",
            "-e",
            "trace=openat",
            "-o",
            "/dev/null",
        ];
        Command::new("strace")
            .args(args)
            .args(["--", "true"])
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success() && o.stderr.is_empty() && o.stdout.is_empty())
    })
}

/// How a command is traced.
#[derive(Clone, Copy, Debug)]
pub enum Tracing<'a> {
    /// The write path's calls ([`SYSCALLS`]), with `fault` injected when there is one.
    Faults(Option<&'a FaultPoint>),
    /// The write path's calls and `extra` system calls, with the data of every write
    /// dumped (`-e write=all`): what the power-loss check replays.
    Record(&'a [&'a str]),
}

/// The command that runs what follows it with files limited to `limit` bytes and `SIGXFSZ`
/// ignored (an ignored signal stays ignored across `exec`), so that the write that crosses
/// the limit is cut short and the next one fails with `EFBIG`.
pub fn short_write_wrapper(limit: u64) -> [String; 4] {
    [
        "sh".into(),
        "-c".into(),
        "trap '' XFSZ; exec prlimit --fsize=$0:$0 -- \"$@\"".into(),
        limit.to_string(),
    ]
}

/// The strace arguments that run `cmd` as `how` says, the trace written to `log`.
pub fn strace_args(cmd: &Command, how: Tracing<'_>, log: &Path) -> Vec<String> {
    let mut a = vec!["-f".to_string()];
    // Only the traced calls stop the tracee (a seccomp filter), not every call: the write
    // path's run under strace costs a fraction of the kernel time.
    if seccomp_filter() {
        a.push("--seccomp-bpf".into());
    }
    a.extend([
        "-qq".into(),
        "-y".into(),
        "-o".into(),
        log.display().to_string(),
    ]);
    match how {
        Tracing::Faults(fault) => {
            // A trial needs only the injected call's line, and strace counts `when=` per
            // process and system call whatever else it traces: the faulted call alone
            // stops the tracee (a faults run's kernel time was mostly strace's stops). A
            // short write is found among the write path's calls.
            let traced = match fault {
                Some(f) if f.fsize.is_none() => f.syscall.clone(),
                _ => SYSCALLS.join(","),
            };
            a.extend(["-e".into(), format!("trace={traced}")]);
            match fault {
                Some(FaultPoint {
                    fsize: Some(limit), ..
                }) => {
                    a.push("--".into());
                    a.extend(short_write_wrapper(*limit));
                    a.extend(program_and_args(cmd));
                    return a;
                }
                Some(f) => a.extend(["-e".into(), format!("inject={}", f.inject_arg())]),
                None => {}
            }
        }
        Tracing::Record(extra) => {
            let set: Vec<&str> = SYSCALLS.iter().chain(extra).copied().collect();
            a.extend(["-e".into(), format!("trace={}", set.join(","))]);
            a.extend(["-e".into(), "write=all".into()]);
        }
    }
    a.push("--".into());
    a.extend(program_and_args(cmd));
    a
}

/// `cmd`'s program and arguments, for the end of a strace command line.
pub fn program_and_args(cmd: &Command) -> impl Iterator<Item = String> + '_ {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|s| s.to_string_lossy().into_owned())
}

/// strace with `args` (which end with `cmd`'s program and arguments), in `cmd`'s
/// environment (which must be complete, as [`crate::git::driver::Git::command`]'s is) and
/// directory.
pub fn under_strace(cmd: &Command, args: Vec<String>) -> Command {
    under("strace", cmd, args)
}

/// `runner` (a tracer or a debugger) with `args`, which end with `cmd`'s program and
/// arguments, in `cmd`'s environment (which must be complete, as
/// [`crate::git::driver::Git::command`]'s is) and directory.
pub fn under(runner: &str, cmd: &Command, args: Vec<String>) -> Command {
    let mut c = Command::new(runner);
    c.args(args);
    c.env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    c
}

/// Run `cmd` (program, arguments, environment and directory as prepared; the environment
/// must be complete, as [`crate::git::driver::Git::command`]'s is) under strace as `how`
/// says, with `stdin`, its output and trace kept in files under `scratch`.
pub fn run(
    cmd: &Command,
    how: Tracing<'_>,
    stdin: &str,
    scratch: &Path,
    timeout: Duration,
) -> Result<Traced, String> {
    let file = |name: &str| scratch.join(name);
    let io = |e: std::io::Error| format!("{}: {e}", scratch.display());
    std::fs::write(file("stdin"), stdin).map_err(io)?;
    let mut c = under_strace(cmd, strace_args(cmd, how, &file("trace")));
    c.stdin(std::fs::File::open(file("stdin")).map_err(io)?);
    let cannot = |e: std::io::Error| format!("cannot run strace: {e}");
    let read = |name: &str| std::fs::read_to_string(file(name)).unwrap_or_default();
    if matches!(how, Tracing::Faults(Some(p)) if p.fsize.is_some()) {
        // Output into files would be cut by the file size limit too: pipes are not.
        let (exit, stdout, stderr) = run_in_group_capturing(&mut c, timeout).map_err(cannot)?;
        let trace = read("trace");
        return Ok(Traced {
            exit,
            stdout,
            stderr,
            trace,
        });
    }
    c.stdout(std::fs::File::create(file("stdout")).map_err(io)?)
        .stderr(std::fs::File::create(file("stderr")).map_err(io)?);
    let exit = run_in_group(&mut c, timeout).map_err(cannot)?;
    Ok(Traced {
        exit,
        stdout: read("stdout"),
        stderr: read("stderr"),
        trace: read("trace"),
    })
}

/// The injection strace reports in `trace` (`(INJECTED)`), or the first write a file size
/// limit cut short or refused, for the record of a trial: a fault point that no call reached
/// shows as none.
pub fn injected_line(trace: &str) -> Option<String> {
    trace
        .lines()
        .find(|l| l.contains("(INJECTED)") || l.contains("EFBIG") || is_short_write(l))
        .map(|l| {
            // strace pads the process id to five columns.
            l.split_once(' ')
                .map_or(l, |(_, rest)| rest.trim_start())
                .to_string()
        })
}

/// A `write` line whose result is less than the count it asked for.
fn is_short_write(line: &str) -> bool {
    let Some((call, result)) = line.rsplit_once(" = ") else {
        return false;
    };
    if !call.contains(" write(") {
        return false;
    }
    let asked = call.trim_end_matches(')').rsplit(", ").next();
    match (
        asked.and_then(|a| a.parse::<u64>().ok()),
        result.trim().parse::<u64>(),
    ) {
        (Some(a), Ok(r)) => r < a,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace_arg(args: &[String]) -> Vec<&str> {
        args.iter()
            .filter_map(|a| a.strip_prefix("trace="))
            .collect()
    }

    #[test]
    fn a_trial_traces_only_the_faulted_call_and_the_unfaulted_run_the_whole_write_path() {
        let cmd = Command::new("git");
        let log = Path::new("trace");
        let point = FaultPoint {
            syscall: "rename".into(),
            nth: 2,
            errno: "EIO".into(),
            role: "tables.list".into(),
            after_commit: false,
            fsize: None,
        };
        let trial = strace_args(&cmd, Tracing::Faults(Some(&point)), log);
        assert_eq!(trace_arg(&trial), ["rename"]);
        assert!(trial.contains(&"inject=rename:error=EIO:when=2".to_string()));
        let unfaulted = strace_args(&cmd, Tracing::Faults(None), log);
        assert_eq!(trace_arg(&unfaulted), [SYSCALLS.join(",").as_str()]);
    }

    #[test]
    fn the_injected_line_drops_the_padded_process_id() {
        let trace = "812   openat(AT_FDCWD, \".git/HEAD\", O_RDONLY) = 3\n\
                     812   rename(\"a\", \"b\") = -1 EIO (Input/output error) (INJECTED)\n";
        assert_eq!(
            injected_line(trace).as_deref(),
            Some("rename(\"a\", \"b\") = -1 EIO (Input/output error) (INJECTED)")
        );
    }
}
