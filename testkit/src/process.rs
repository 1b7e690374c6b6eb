//! Child processes under a timeout: how one ended ([`Exit`]), a watchdog that kills a late
//! child, and a command run as the leader of a process group of its own so that a timeout
//! kills everything it started (a hung git started by a shell keeps the pipes it inherited
//! open when only the shell dies).

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

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

/// A child under a deadline, as the shared watchdog holds it.
struct Armed {
    at: Instant,
    pid: u32,
    kill: fn(u32),
    slot: Arc<Mutex<Slot>>,
}

/// What the waiting caller and the watchdog tell each other about one child: the caller
/// that it is done with it (reaped, or no longer under the deadline: the watchdog must not
/// kill its pid any more), the watchdog that it killed it.
#[derive(Default)]
struct Slot {
    reaped: bool,
    fired: bool,
}

/// The children under a deadline, as the watchdog and the callers arming it share them.
#[derive(Default)]
struct Armory {
    armed: Vec<Armed>,
    /// When the watchdog wakes next (`None`: when something is armed).
    wakes_at: Option<Instant>,
    /// How many were armed after the last pruning of reaped children.
    kept: usize,
}

/// The one watchdog thread every deadline shares, started on first use: a thread per child
/// costs more than the child's own start on a gate that runs thousands of short gits.
/// Arming it wakes it only when the new deadline comes before the one it sleeps until:
/// deadlines share one timeout, so it sleeps through the arming of short gits, and wakes
/// at a deadline to kill a child that is still running then.
fn watchdog() -> &'static (Mutex<Armory>, Condvar) {
    static WATCHDOG: OnceLock<Arc<(Mutex<Armory>, Condvar)>> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        let shared = Arc::new((Mutex::new(Armory::default()), Condvar::new()));
        let watched = Arc::clone(&shared);
        std::thread::spawn(move || watch(&watched));
        shared
    })
}

/// The watchdog: kill each armed child whose deadline passes before its caller reaped it.
fn watch(shared: &(Mutex<Armory>, Condvar)) {
    let (armory, woken) = shared;
    let mut a = lock(armory);
    loop {
        let now = Instant::now();
        a.armed.retain(|child| {
            let mut slot = lock(&child.slot);
            if !slot.reaped && child.at <= now {
                (child.kill)(child.pid);
                slot.fired = true;
            }
            !slot.reaped && !slot.fired
        });
        a.kept = a.armed.len();
        a.wakes_at = a.armed.iter().map(|child| child.at).min();
        a = match a.wakes_at {
            Some(at) => {
                let wait = woken.wait_timeout(a, at.saturating_duration_since(now));
                wait.unwrap_or_else(|e| e.into_inner()).0
            }
            None => woken.wait(a).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A deadline on a child we spawned: after its timeout, the watchdog calls its `kill` with
/// the child's pid, unless [`Deadline::end`] came first. While it is armed the child must
/// not be reaped (its pid could be reused).
pub struct Deadline(Arc<Mutex<Slot>>);

impl Deadline {
    /// Arm the watchdog for `pid`: `kill(pid)` after `timeout`.
    pub fn arm(pid: u32, timeout: Duration, kill: fn(u32)) -> Deadline {
        let slot = Arc::new(Mutex::new(Slot::default()));
        let at = Instant::now() + timeout;
        let (armory, woken) = watchdog();
        let mut a = lock(armory);
        // Children reaped since the last pruning stay listed until their deadline; prune
        // them when the list has doubled, so it stays as long as what is running.
        if a.armed.len() >= 2 * a.kept.max(16) {
            a.armed.retain(|child| !lock(&child.slot).reaped);
            a.kept = a.armed.len();
        }
        a.armed.push(Armed {
            at,
            pid,
            kill,
            slot: Arc::clone(&slot),
        });
        if a.wakes_at.map_or(true, |wakes| at < wakes) {
            woken.notify_one();
        }
        Deadline(slot)
    }

    /// Disarm it: whether the watchdog killed the child first.
    pub fn end(self) -> bool {
        let mut s = lock(&self.0);
        s.reaped = true;
        s.fired
    }
}

/// Run `work` (which ends when the child exits or closes its output), then reap `child`;
/// the watchdog calls `kill` with its pid if that takes longer than `timeout` (blocking
/// waits with a deadline, no polling).
pub fn with_deadline_killing<T>(
    child: &mut Child,
    timeout: Duration,
    kill: fn(u32),
    work: impl FnOnce(&mut Child) -> T,
) -> (Exit, T) {
    let deadline = Deadline::arm(child.id(), timeout, kill);
    let value = work(child);
    let status = child.wait();
    let timed_out = deadline.end();
    (exit_of(status, timed_out), value)
}

/// Read the child's piped standard output and error to their ends and reap it (what
/// [`Child::wait_with_output`] does, with no thread of ours), the watchdog calling `kill`
/// with its pid after `timeout`.
pub fn output_with_deadline(
    child: Child,
    timeout: Duration,
    kill: fn(u32),
) -> (Exit, std::process::Output) {
    let deadline = Deadline::arm(child.id(), timeout, kill);
    let out = child.wait_with_output();
    let timed_out = deadline.end();
    match out {
        Ok(o) => (exit_of::<()>(Ok(o.status), timed_out), o),
        Err(_) => {
            let o = std::process::Output {
                status: ExitStatus::default(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            };
            (exit_of(Err(()), timed_out), o)
        }
    }
}

fn exit_of<E>(status: Result<ExitStatus, E>, timed_out: bool) -> Exit {
    match status {
        _ if timed_out => Exit::Timeout,
        Ok(s) => Exit::from_status(s),
        Err(_) => Exit::Code(-1),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `script` run by `sh -c`. A script that outlives its test's kill must end in `exec`
    /// (dash forks a `-c` command's last program instead of becoming it): killing the
    /// shell alone would leave the program running, holding the test's output open.
    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_child_past_its_deadline_is_killed_and_one_within_it_is_not() {
        let mut slow = sh("exec sleep 600").spawn().unwrap();
        let mut quick = sh("exit 3").spawn().unwrap();
        let short = Duration::from_millis(200);
        let (exit, ()) = with_deadline_killing(&mut slow, short, kill_pid, |_| ());
        assert_eq!(exit, Exit::Timeout);
        let long = Duration::from_secs(600);
        let (exit, ()) = with_deadline_killing(&mut quick, long, kill_pid, |_| ());
        assert_eq!(exit, Exit::Code(3));
    }

    #[test]
    fn a_deadline_before_the_one_the_watchdog_sleeps_until_wakes_it() {
        // The watchdog sleeps until the long deadline; the short one, armed later after
        // many short-lived children (whose list is pruned meanwhile), must wake it.
        let mut long = sh("exec sleep 600").spawn().unwrap();
        let held = Deadline::arm(long.id(), Duration::from_secs(600), kill_pid);
        for _ in 0..40 {
            let mut quick = sh("exit 0").spawn().unwrap();
            let long = Duration::from_secs(600);
            let (exit, ()) = with_deadline_killing(&mut quick, long, kill_pid, |_| ());
            assert_eq!(exit, Exit::Code(0));
        }
        let mut slow = sh("exec sleep 600").spawn().unwrap();
        let started = Instant::now();
        let short = Duration::from_millis(200);
        let (exit, ()) = with_deadline_killing(&mut slow, short, kill_pid, |_| ());
        assert_eq!(exit, Exit::Timeout);
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "woken only at the long one"
        );
        assert!(!held.end());
        kill_pid(long.id());
        let _ = long.wait();
    }

    #[test]
    fn output_is_read_from_both_pipes_under_the_deadline() {
        let mut c = sh("echo out; echo err >&2; exit 2");
        let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        let (exit, out) = output_with_deadline(child.unwrap(), Duration::from_secs(600), kill_pid);
        assert_eq!(exit, Exit::Code(2));
        assert_eq!(
            (&out.stdout[..], &out.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
        // `exec`: the shell itself sleeps, so killing its pid closes the pipes (a child of
        // its own would keep them open; `run_in_group_capturing` kills such children too).
        let mut c = sh("echo partial; exec sleep 600");
        let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        let (exit, out) =
            output_with_deadline(child.unwrap(), Duration::from_millis(200), kill_pid);
        assert_eq!((exit, &out.stdout[..]), (Exit::Timeout, &b"partial\n"[..]));
    }

    #[test]
    fn an_ended_deadline_never_fires() {
        let mut child = sh("exec sleep 600").spawn().unwrap();
        let deadline = Deadline::arm(child.id(), Duration::from_millis(100), kill_pid);
        assert!(!deadline.end());
        // Past the deadline the child still runs: the watchdog let it be.
        let later = Deadline::arm(child.id(), Duration::from_millis(300), |_| {});
        while Arc::strong_count(&later.0) > 1 {
            std::thread::yield_now();
        }
        assert!(later.end(), "the watchdog fired the later deadline");
        assert!(matches!(child.try_wait(), Ok(None)));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn a_group_is_killed_whole() {
        // The shell's own child holds the pipe: only killing the group ends the read.
        let mut c = sh("sleep 600 & wait");
        let (exit, out, _) = run_in_group_capturing(&mut c, Duration::from_millis(200)).unwrap();
        assert_eq!((exit, out.as_str()), (Exit::Timeout, ""));
    }
}
