//! Running a prepared command under strace: once to trace its write path, then once per
//! injected fault. The command (git, or our worker process) keeps its environment and
//! directory; strace and everything it starts run as one process group that a timeout kills
//! whole.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::faults::points::{FaultPoint, SYSCALLS};
use crate::git::driver::{run_in_group, Exit};

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

/// How a command is traced.
#[derive(Clone, Copy, Debug)]
pub enum Tracing<'a> {
    /// The write path's calls ([`SYSCALLS`]), with `fault` injected when there is one.
    Faults(Option<&'a FaultPoint>),
    /// The write path's calls and `extra` system calls, with the data of every write
    /// dumped (`-e write=all`): what the power-loss check replays.
    Record(&'a [&'a str]),
}

/// The strace arguments that run `cmd` as `how` says, the trace written to `log`.
pub fn strace_args(cmd: &Command, how: Tracing<'_>, log: &Path) -> Vec<String> {
    let mut a = vec![
        "-f".to_string(),
        "-qq".into(),
        "-y".into(),
        "-o".into(),
        log.display().to_string(),
    ];
    match how {
        Tracing::Faults(fault) => {
            a.extend(["-e".into(), format!("trace={}", SYSCALLS.join(","))]);
            if let Some(f) = fault {
                a.extend(["-e".into(), format!("inject={}", f.inject_arg())]);
            }
        }
        Tracing::Record(extra) => {
            let set: Vec<&str> = SYSCALLS.iter().chain(extra).copied().collect();
            a.extend(["-e".into(), format!("trace={}", set.join(","))]);
            a.extend(["-e".into(), "write=all".into()]);
        }
    }
    a.push("--".into());
    a.push(cmd.get_program().to_string_lossy().into_owned());
    a.extend(cmd.get_args().map(|s| s.to_string_lossy().into_owned()));
    a
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
    let mut c = Command::new("strace");
    c.args(strace_args(cmd, how, &file("trace")));
    c.env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    c.stdin(std::fs::File::open(file("stdin")).map_err(io)?)
        .stdout(std::fs::File::create(file("stdout")).map_err(io)?)
        .stderr(std::fs::File::create(file("stderr")).map_err(io)?);
    let exit = run_in_group(&mut c, timeout).map_err(|e| format!("cannot run strace: {e}"))?;
    let read = |name: &str| std::fs::read_to_string(file(name)).unwrap_or_default();
    Ok(Traced {
        exit,
        stdout: read("stdout"),
        stderr: read("stderr"),
        trace: read("trace"),
    })
}

/// The injection strace reports in `trace` (`(INJECTED)`), for the record of a trial: a
/// fault point that no call reached shows as none.
pub fn injected_line(trace: &str) -> Option<String> {
    trace
        .lines()
        .find(|l| l.contains("(INJECTED)"))
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
}
