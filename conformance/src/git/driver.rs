//! Driving real git: an isolated environment, a version and capability probe, every
//! subprocess under a timeout, and coprocesses that answer a line at a time: `update-ref
//! --stdin`, which runs transactions with `start` / `prepare` / `commit` acknowledgements,
//! and `cat-file --batch-check`.

use reftable::TzOffset;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use reftable_testkit::process::{kill_pid, output_with_deadline, with_deadline_killing, Deadline};
pub use reftable_testkit::process::{run_in_group, run_in_group_capturing, Exit, Group};

use super::wrapper::Wrapper;

/// Base committer time of a case (git's `test_tick` start); steps add 60 s each.
pub const BASE_TIME: u64 = 1_112_911_993;
/// The committer's time zone at tick 0, and at every tick [`tz_at`] does not move east.
pub const TZ: &str = "-0700";

/// The committer's time zone at clock `tick`, as git's date text and as the reflog's
/// offset: [`TZ`], but every third tick `+0530`, a zone east of UTC (git parses the sign
/// and the digits apart) and not a whole number of hours.
pub fn tz_at(tick: u64) -> (&'static str, i16) {
    if tick % 3 == 2 {
        ("+0530", 530)
    } else {
        (TZ, -700)
    }
}

/// git's date text at clock `tick`: `BASE_TIME + 60·tick` in the zone [`tz_at`] gives.
pub fn date_at(tick: u64) -> String {
    format!("{} {}", BASE_TIME + 60 * tick, tz_at(tick).0)
}
/// Committer name.
pub const NAME: &str = "C O Mitter";
/// Committer email.
pub const EMAIL: &str = "committer@example.com";

/// The committer git's processes run as at clock `tick` ([`date_at`]), for
/// the library's side of the same operation.
pub fn committer_at(tick: u64) -> reftable::Signature {
    reftable::Signature {
        name: NAME.as_bytes().to_vec(),
        email: EMAIL.as_bytes().to_vec(),
        time: BASE_TIME + 60 * tick,
        tz_offset: TzOffset::from_hhmm(tz_at(tick).1),
    }
}

/// What a git command printed and how it ended.
#[derive(Clone, Debug)]
pub struct Output {
    /// How it ended.
    pub exit: Exit,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// A git binary with an isolated environment.
#[derive(Debug)]
pub struct Git {
    bin: PathBuf,
    /// What `bin` is when it is a build tree's wrapper script this reads: the binary is then
    /// started with the script's environment, without a shell.
    wrapper: Option<Wrapper>,
    version: String,
    home: tempfile::TempDir,
    timeout: Duration,
}

/// How long one git command may run before it counts as hung: `REFTABLE_TEST_GIT_TIMEOUT`
/// seconds, else 120 (the mutation yardstick sets less, so that a mutant that makes git hang
/// is caught within its budget).
fn git_timeout() -> Duration {
    let secs = std::env::var("REFTABLE_TEST_GIT_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(120);
    Duration::from_secs(secs)
}

impl Git {
    /// The git to use: `explicit`, else `REFTABLE_TEST_GIT`, else `git` on PATH. Fails unless it
    /// is 2.45 or newer and can create a reftable repository. Each git command is killed
    /// (a hang) after 120 s, or `REFTABLE_TEST_GIT_TIMEOUT` seconds.
    pub fn find(explicit: Option<&Path>) -> Result<Git, String> {
        let bin = explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("REFTABLE_TEST_GIT").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("git"));
        let bin = absolute_bin(&bin);
        let home = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut git = Git {
            bin,
            wrapper: None,
            version: String::new(),
            home,
            timeout: git_timeout(),
        };
        let v = git.run(git.home.path(), &["version"], "", 0);
        if !v.exit.success() {
            return Err(format!(
                "cannot run {}: {} {}",
                git.bin.display(),
                v.stdout,
                v.stderr
            ));
        }
        git.wrapper = git.equivalent_wrapper();
        git.version = v
            .stdout
            .trim()
            .trim_start_matches("git version ")
            .to_string();
        let nums: Vec<u32> = git
            .version
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(2)
            .filter_map(|s| s.parse().ok())
            .collect();
        if nums.len() < 2 || (nums[0], nums[1]) < (2, 45) {
            return Err(format!(
                "{} is git {}; reftable needs git 2.45 or newer",
                git.bin.display(),
                git.version
            ));
        }
        let probe = git.home.path().join("probe");
        let p = git.run(
            git.home.path(),
            &[
                "init",
                "-q",
                "--ref-format=reftable",
                probe.to_str().unwrap(),
            ],
            "",
            0,
        );
        if !p.exit.success() {
            return Err(format!(
                "{} cannot create reftable repositories: {}",
                git.bin.display(),
                p.stderr.trim()
            ));
        }
        Ok(git)
    }

    /// The version string (`2.47.3`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The scratch home directory git runs with.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The binary as named (a build tree's `bin-wrappers/git`, say).
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The binary its commands start: [`Git::bin`], or the one a wrapper script runs.
    pub fn program(&self) -> &Path {
        self.wrapper.as_ref().map_or(&self.bin, |w| &w.program)
    }

    /// `bin` read as a wrapper script, when its binary started directly with the script's
    /// environment gets the environment the script gives it (compared: what git hands a
    /// shell alias).
    fn equivalent_wrapper(&self) -> Option<Wrapper> {
        let mut head = [0u8; 2];
        let mut f = std::fs::File::open(&self.bin).ok()?;
        if f.read_exact(&mut head).is_err() || &head != b"#!" {
            return None;
        }
        let script = std::fs::read_to_string(&self.bin).ok()?;
        let wrapper = Wrapper::read(&script)?;
        let args = ["-c", "alias.gate-env=!env", "gate-env"];
        let dir = self.home.path();
        let seen = |c: &mut Command| {
            let o = self.run_command(c, &args, "");
            let mut lines: Vec<String> = o.stdout.lines().map(str::to_string).collect();
            lines.sort();
            o.exit.success().then_some(lines)
        };
        let by_script = seen(&mut self.command_as(None, dir, 0, false))?;
        let direct = seen(&mut self.command_as(Some(&wrapper), dir, 0, false))?;
        (direct == by_script).then_some(wrapper)
    }

    /// A command in `dir` with the fixed environment, committer date [`date_at`]`(tick)`,
    /// auto-compaction off.
    pub fn command(&self, dir: &Path, tick: u64) -> Command {
        self.command_auto(dir, tick, false)
    }

    /// Like [`Git::command`], with git's auto-compaction on or off.
    pub fn command_auto(&self, dir: &Path, tick: u64, auto_compaction: bool) -> Command {
        self.command_as(self.wrapper.as_ref(), dir, tick, auto_compaction)
    }

    /// [`Git::command_auto`] starting `wrapper`'s binary with its environment, or `bin`.
    fn command_as(
        &self,
        wrapper: Option<&Wrapper>,
        dir: &Path,
        tick: u64,
        auto_compaction: bool,
    ) -> Command {
        let date = date_at(tick);
        let mut c = Command::new(wrapper.map_or(&self.bin, |w| &w.program));
        reftable_testkit::git::hermetic(&mut c, dir, self.home.path(), &date);
        if let Some(w) = wrapper {
            // The script's shell exports its directory as `PWD` (git prefers it to
            // `getcwd` where both name the same directory).
            if dir.is_absolute() {
                c.env("PWD", dir);
            }
            c.envs(w.env.iter().map(|(k, v)| (k, v)));
            if let Some(prefix) = &w.path_prefix {
                let mut path = std::ffi::OsString::from(prefix);
                path.push(std::env::var_os("PATH").unwrap_or_default());
                c.env("PATH", path);
            }
        }
        if !auto_compaction {
            c.env("GIT_TEST_REFTABLE_AUTOCOMPACTION", "false");
        }
        c
    }

    /// Run git with `args` and `stdin`, killed after the timeout.
    pub fn run(&self, dir: &Path, args: &[&str], stdin: &str, tick: u64) -> Output {
        self.run_auto(dir, args, stdin, tick, false)
    }

    /// Like [`Git::run`], with git's auto-compaction on or off.
    pub fn run_auto(
        &self,
        dir: &Path,
        args: &[&str],
        stdin: &str,
        tick: u64,
        auto: bool,
    ) -> Output {
        let mut c = self.command_auto(dir, tick, auto);
        self.run_command(&mut c, args, stdin)
    }

    /// Run a prepared command (see [`Git::command`]) with a timeout.
    pub fn run_command(&self, c: &mut Command, args: &[&str], stdin: &str) -> Output {
        self.run_command_within(c, args, stdin, self.timeout)
    }

    /// Like [`Git::run_command`], killed after `timeout` (a hang is an [`Exit::Timeout`]).
    pub fn run_command_within(
        &self,
        c: &mut Command,
        args: &[&str],
        stdin: &str,
        timeout: Duration,
    ) -> Output {
        // No input: git reads the end of /dev/null, as it would of an empty pipe.
        let input = if stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        };
        let child = c
            .args(args)
            .stdin(input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                return Output {
                    exit: Exit::Code(-1),
                    stdout: String::new(),
                    stderr: format!("cannot spawn git: {e}"),
                }
            }
        };
        // Small inputs fit the pipe: write them here rather than in a thread of their own.
        let writer = match child.stdin.take() {
            Some(mut input) if stdin.len() <= 4096 => {
                let _ = input.write_all(stdin.as_bytes());
                None
            }
            Some(mut input) => {
                let data = stdin.as_bytes().to_vec();
                Some(std::thread::spawn(move || {
                    let _ = input.write_all(&data);
                }))
            }
            None => None,
        };
        let (exit, out) = output_with_deadline(child, timeout, kill_pid);
        if let Some(w) = writer {
            let _ = w.join();
        }
        Output {
            exit,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Run and require success.
    pub fn ok(&self, dir: &Path, args: &[&str], stdin: &str) -> Result<String, String> {
        let o = self.run(dir, args, stdin, 0);
        if o.exit.success() {
            Ok(o.stdout)
        } else {
            Err(format!("git {args:?}: {:?}: {}", o.exit, o.stderr.trim()))
        }
    }
}

/// `bin` as an absolute path: looked up on `PATH` when it is a bare name, made absolute
/// against the current directory when relative (reports and case files name it).
fn absolute_bin(bin: &Path) -> PathBuf {
    if bin.components().count() == 1 {
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                let p = dir.join(bin);
                if p.is_file() {
                    return p;
                }
            }
        }
        return bin.to_path_buf();
    }
    std::path::absolute(bin).unwrap_or_else(|_| bin.to_path_buf())
}

/// Wait for `child` to exit, killing it after `timeout`.
fn wait_timeout(child: &mut Child, timeout: Duration) -> Exit {
    with_deadline_killing(child, timeout, kill_pid, |_| ()).0
}

/// A git that reads commands on its standard input and answers a line at a time, served by
/// no thread of ours: answers are read under a deadline of the shared watchdog, and git's
/// standard error goes to an anonymous file, read when it fails.
struct Coprocess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: std::fs::File,
    timeout: Duration,
}

impl Coprocess {
    /// Start `c` (a git command line, its arguments given). Its standard error goes to an
    /// unnamed file in the directory it runs in (the case's, on the fast file system the
    /// run chose) where it can have one there, else in the system's temporary directory.
    fn spawn(c: &mut Command, timeout: Duration) -> std::io::Result<Coprocess> {
        let stderr = match c.get_current_dir() {
            Some(dir) => tempfile::tempfile_in(dir).or_else(|_| tempfile::tempfile())?,
            None => tempfile::tempfile()?,
        };
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr.try_clone()?)
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Coprocess {
            child,
            stdin,
            stdout,
            stderr,
            timeout,
        })
    }

    /// Send `text`, then read `n` lines (fewer when git stops answering), under the
    /// deadline: the lines, and whether the deadline killed git.
    fn exchange(&mut self, text: &str, n: usize) -> (Vec<String>, bool) {
        let deadline = Deadline::arm(self.child.id(), self.timeout, kill_pid);
        let sent = match self.stdin.as_mut() {
            Some(s) => s.write_all(text.as_bytes()).and_then(|_| s.flush()).is_ok(),
            None => false,
        };
        let mut lines = Vec::with_capacity(n);
        while sent && lines.len() < n {
            let mut line = String::new();
            match self.stdout.read_line(&mut line) {
                Ok(k) if k > 0 => lines.push(line.trim_end_matches('\n').to_string()),
                _ => break,
            }
        }
        (lines, deadline.end())
    }

    /// After an exchange that failed: git's exit (a timeout when the deadline killed it)
    /// and everything it wrote to its standard error.
    fn failed(&mut self, timed_out: bool) -> (Exit, String) {
        self.stdin = None;
        let exit = match wait_timeout(&mut self.child, self.timeout) {
            _ if timed_out => Exit::Timeout,
            exit => exit,
        };
        let mut err = Vec::new();
        let _ = (self.stderr.seek(std::io::SeekFrom::Start(0)))
            .and_then(|_| self.stderr.read_to_end(&mut err));
        (exit, String::from_utf8_lossy(&err).into_owned())
    }

    /// Close its input and wait for it to exit.
    fn finish(mut self) -> Exit {
        self.stdin = None;
        wait_timeout(&mut self.child, self.timeout)
    }
}

impl Drop for Coprocess {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A running `git update-ref --stdin` that takes one transaction at a time and acknowledges
/// `start`, `prepare` and `commit`. git exits when a transaction fails; the caller starts a
/// new one then.
pub struct UpdateRef(Coprocess);

/// The result of one transaction through [`UpdateRef`].
#[derive(Clone, Debug)]
pub enum TxnResult {
    /// `commit: ok`.
    Committed,
    /// git refused it (and exited): its exit and error output.
    Failed(Exit, String),
}

impl UpdateRef {
    /// Start `git update-ref -m <message> [--create-reflog] --stdin` in `dir` at `tick`.
    pub fn spawn_with(
        git: &Git,
        dir: &Path,
        tick: u64,
        message: &str,
        create_reflog: bool,
        auto_compaction: bool,
    ) -> std::io::Result<UpdateRef> {
        let mut c = git.command_auto(dir, tick, auto_compaction);
        c.arg("update-ref");
        // update-ref refuses `-m ""`; without -m the message is empty.
        if !message.is_empty() {
            c.args(["-m", message]);
        }
        if create_reflog {
            c.arg("--create-reflog");
        }
        c.arg("--stdin");
        Ok(UpdateRef(Coprocess::spawn(&mut c, git.timeout)?))
    }

    /// Run one transaction made of `lines` (update-ref commands). The whole transaction is
    /// sent at once; git answers `start`, `prepare` and `commit` in turn, or dies at the
    /// first failure.
    pub fn transaction(&mut self, lines: &str) -> TxnResult {
        self.run(lines, "commit")
    }

    /// Prepare `lines` (say, `verify` commands: git looks each ref up by name and checks
    /// it) and abort: nothing is written. [`TxnResult::Committed`] when every check held.
    pub fn prepare_and_abort(&mut self, lines: &str) -> TxnResult {
        self.run(lines, "abort")
    }

    fn run(&mut self, lines: &str, end: &str) -> TxnResult {
        let verbs = ["start", "prepare", end];
        let text = format!("start\n{lines}prepare\n{end}\n");
        let (acks, timed_out) = self.0.exchange(&text, verbs.len());
        let acked = acks.len() == verbs.len()
            && (acks.iter().zip(verbs)).all(|(a, v)| a.strip_suffix(": ok") == Some(v));
        if acked && !timed_out {
            return TxnResult::Committed;
        }
        let (exit, err) = self.0.failed(timed_out);
        TxnResult::Failed(exit, err)
    }

    /// Close stdin and wait for git to exit.
    pub fn finish(self) -> Exit {
        self.0.finish()
    }
}

/// A running `git cat-file --batch-check=%(objectname)`: names in, a line each out (the id,
/// or `<name> missing`). git reloads a reftable stack on every lookup by name, so one
/// process serves a case's lookups from start to end.
pub struct CatFile(Coprocess);

impl CatFile {
    /// Start it in `dir`.
    pub fn spawn(git: &Git, dir: &Path, tick: u64) -> std::io::Result<CatFile> {
        let mut c = git.command(dir, tick);
        c.args(["cat-file", "--batch-check=%(objectname)"]);
        Ok(CatFile(Coprocess::spawn(&mut c, git.timeout)?))
    }

    /// git's line for each of `names`, or how it failed (its exit and error output; it is
    /// of no use after that).
    pub fn lookup(&mut self, names: &[String]) -> Result<Vec<String>, (Exit, String)> {
        let text: String = names.iter().map(|n| format!("{n}\n")).collect();
        let (lines, timed_out) = self.0.exchange(&text, names.len());
        if lines.len() == names.len() && !timed_out {
            return Ok(lines);
        }
        Err(self.0.failed(timed_out))
    }
}

/// Split `a\0b\0c` lines.
pub fn split_nul(line: &str) -> Vec<&str> {
    line.split('\0').collect()
}
