//! Child processes under a timeout: how one ended ([`Exit`]), a watchdog that kills a late
//! child, and a command run as the leader of a process group of its own so that a timeout
//! kills everything it started (a hung git started by a shell keeps the pipes it inherited
//! open when only the shell dies).

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How a git subprocess ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit code.
    Code(i32),
    /// Killed by a signal (git crashed: segfault, abort).
    Signal(i32),
    /// Did not finish within the timeout and was killed.
    Timeout,
}

impl Exit {
    pub fn from_status(s: ExitStatus) -> Exit {
        if let Some(c) = s.code() {
            return Exit::Code(c);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(sig) = s.signal() {
                return Exit::Signal(sig);
            }
        }
        Exit::Code(-1)
    }

    /// Exit code 0.
    pub fn success(&self) -> bool {
        *self == Exit::Code(0)
    }
}

/// Run `work` (which ends when the child exits or closes its output), then reap `child`;
/// a watchdog thread calls `kill` with its pid if that takes longer than `timeout` (blocking
/// waits with a deadline, no polling).
pub fn with_deadline_killing<T>(
    child: &mut Child,
    timeout: Duration,
    kill: fn(u32),
    work: impl FnOnce(&mut Child) -> T,
) -> (Exit, T) {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(timeout) {
            kill(pid);
            return true;
        }
        false
    });
    let value = work(child);
    let status = child.wait();
    let _ = done_tx.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    let exit = match status {
        _ if timed_out => Exit::Timeout,
        Ok(s) => Exit::from_status(s),
        Err(_) => Exit::Code(-1),
    };
    (exit, value)
}

/// SIGKILL a process we spawned and have not reaped yet (so its pid cannot have been reused).
pub fn kill_pid(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// SIGKILL every process of the process group `pgid` (a group [`run_in_group`] made, whose
/// leader has that pid).
pub fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Run `c` (its standard streams as the caller set them: files, say) as the leader of a
/// process group of its own, and wait for it. After `timeout` the whole group is killed, not
/// only the leader: a hung `git update-ref` started by a shell keeps running (and keeps any
/// pipe it inherited open) when only the shell dies. Members still in the group when the
/// leader has exited are killed too, so nothing the command started outlives it. (Being a
/// group of its own, the command does not get the terminal's Ctrl-C: it runs to its end or
/// its timeout when the caller is interrupted.)
pub fn run_in_group(c: &mut Command, timeout: Duration) -> std::io::Result<Exit> {
    Ok(Group::spawn(c)?.wait(timeout))
}

/// A command started as the leader of a process group of its own, as [`run_in_group`] runs
/// one, for a caller that does something else before it waits: it then waits as
/// [`run_in_group`] does, killing the whole group after the timeout.
pub struct Group(Child);

impl Group {
    /// Start `c` (its standard streams as the caller set them) in a group of its own.
    pub fn spawn(c: &mut Command) -> std::io::Result<Group> {
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            c.process_group(0);
        }
        Ok(Group(c.spawn()?))
    }

    /// Whether its leader has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.0.try_wait(), Ok(None))
    }

    /// Wait for the leader, killing the group after `timeout`; then kill what is left of it.
    pub fn wait(mut self, timeout: Duration) -> Exit {
        let pgid = self.0.id();
        let (exit, ()) = with_deadline_killing(&mut self.0, timeout, kill_group, |_| ());
        // The group outlives its leader while a member runs; then its id cannot be reused.
        kill_group(pgid);
        exit
    }
}

/// [`run_in_group`] with the command's standard output and error read through pipes (what a
/// file size limit on the command must not cut), returned as text.
pub fn run_in_group_capturing(
    c: &mut Command,
    timeout: Duration,
) -> std::io::Result<(Exit, String, String)> {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        c.process_group(0);
    }
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn()?;
    let pgid = child.id();
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let (exit, ()) = with_deadline_killing(&mut child, timeout, kill_group, |_| ());
    kill_group(pgid);
    let text = |h: std::thread::JoinHandle<String>| h.join().unwrap_or_default();
    Ok((exit, text(out), text(err)))
}
