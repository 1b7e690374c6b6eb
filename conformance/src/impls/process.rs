//! An adapter process: started in a process group of its own, asked one request at a time,
//! each answer awaited under a timeout. A hang kills the whole group (an adapter may be a
//! shell or an interpreter that started the implementation); a line that is not an answer,
//! or an adapter that exits with requests outstanding, is a crash.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{json, Value};

use crate::impls::wire::{Answer, Hello, PROTOCOL};

/// How an adapter failed to answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No answer within the timeout: the group was killed.
    Hang(String),
    /// It exited, or wrote what is not an answer.
    Crash(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Hang(w) => write!(f, "hang: {w}"),
            Failure::Crash(w) => write!(f, "crash: {w}"),
        }
    }
}

/// A running adapter.
pub struct Adapter {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Receiver<String>,
    timeout: Duration,
    /// What it said of itself.
    pub hello: Hello,
}

impl Adapter {
    /// Start `argv` and greet it; an adapter that does not speak protocol 1 is an error.
    pub fn start(argv: &[String], timeout: Duration) -> Result<Adapter, String> {
        let (prog, args) = argv.split_first().ok_or("an empty adapter command")?;
        let mut c = Command::new(prog);
        c.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            c.process_group(0);
        }
        let mut child = c.spawn().map_err(|e| format!("cannot start {prog}: {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        let lines = read_lines(child.stdout.take().expect("piped"));
        let stderr = read_all(child.stderr.take().expect("piped"));
        let mut a = Adapter {
            child,
            stdin,
            lines,
            stderr,
            timeout,
            hello: Hello::default(),
        };
        let hi = a.ask(&json!({"verb": "hello", "protocol": PROTOCOL}));
        a.hello = match hi {
            Ok(Answer::Done(v)) => Hello::of(&v)?,
            other => return Err(format!("{} answered hello with {other:?}", prog)),
        };
        Ok(a)
    }

    /// One request and its answer.
    pub fn ask(&mut self, request: &Value) -> Result<Answer, Failure> {
        let line = format!("{request}\n");
        let verb = request.get("verb").and_then(Value::as_str).unwrap_or("?");
        if self.stdin.write_all(line.as_bytes()).is_err() || self.stdin.flush().is_err() {
            let why = format!("{verb}: its input closed");
            return Err(Failure::Crash(self.exit_text(&why)));
        }
        match self.lines.recv_timeout(self.timeout) {
            Ok(l) => Answer::parse(l.trim_end()).map_err(Failure::Crash),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Failure::Hang(format!(
                    "no answer to {verb} in {:?}",
                    self.timeout
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let why = format!("{verb}: it exited without answering");
                Err(Failure::Crash(self.exit_text(&why)))
            }
        }
    }

    /// `open` on a repository's git directory, comparing with git `git` (its version).
    pub fn open(&mut self, gitdir: &std::path::Path, git: &str) -> Result<Answer, Failure> {
        let gitdir = gitdir.display().to_string();
        self.ask(&json!({"verb": "open", "gitdir": gitdir, "git": git}))
    }

    /// How it ended and the end of what it said on stderr.
    fn exit_text(&mut self, what: &str) -> String {
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
        let err = self
            .stderr
            .recv_timeout(Duration::from_secs(2))
            .unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("{what} ({status}): {}", tail.join(" | "))
    }

    /// Kill its whole process group.
    fn kill(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        let _ = self.stdin.write_all(b"{\"verb\":\"quit\"}\n");
        let _ = self.stdin.flush();
        // An adapter that does not leave on quit is killed with what it started.
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            self.kill();
        }
    }
}

/// Lines of `r` as they come.
fn read_lines<R: Read + Send + 'static>(r: R) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// All of `r`, once it ends.
fn read_all<R: Read + Send + 'static>(mut r: R) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    rx
}

/// Where the adapters of this workspace are: beside the running binary.
pub fn sibling(name: &str) -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find my own binary: {e}"))?;
    Ok(me.with_file_name(name))
}
