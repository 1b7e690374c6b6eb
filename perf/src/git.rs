//! Driving a git binary for the same workloads, in an isolated environment, with every
//! process under a timeout. git has no counters we can read, so only wall time is measured.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Fixed identity and date of every git process (reproducible objects and reflogs).
/// The committer and author date of every git process of the report.
const IDENT_DATE: &str = "1112911993 -0700";

/// How a measured git command is counted.
#[derive(Clone, Copy, Debug)]
pub enum Counter<'a> {
    /// Not counted.
    None,
    /// `strace -f -c`, the summary written to this file.
    Strace(&'a Path),
    /// `valgrind --tool=callgrind --trace-children=yes`, one output file per process in
    /// this directory.
    Callgrind(&'a Path),
}

/// A git binary and the isolated home its processes run with.
pub struct Git {
    path: PathBuf,
    home: tempfile::TempDir,
    /// Longest a single git process may run.
    pub timeout: Duration,
    /// Extra environment for every process (e.g. `GIT_TEST_REFTABLE_AUTOCOMPACTION`).
    pub env: Vec<(String, String)>,
}

/// What went wrong running git.
#[derive(Debug)]
pub struct GitError(pub String);

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GitError {}

/// Result of git operations.
pub type GitResult<T> = std::result::Result<T, GitError>;

/// The git binary to use: `explicit`, else `REFTABLE_TEST_GIT`, else `git` on `PATH`.
pub fn git_binary(explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("REFTABLE_TEST_GIT").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("git"))
}

impl Git {
    /// A git runner for `path` with a fresh empty home and a 300 s timeout per process.
    pub fn new(path: impl Into<PathBuf>) -> GitResult<Git> {
        let home = tempfile::tempdir().map_err(|e| GitError(format!("temp home: {e}")))?;
        Ok(Git {
            path: path.into(),
            home,
            timeout: Duration::from_secs(300),
            env: Vec::new(),
        })
    }

    /// A command with the isolated environment: no system or global config, a temporary
    /// HOME, fixed identity and dates, no inherited repository variables.
    pub fn command(&self, dir: &Path) -> Command {
        self.command_of(self.path.as_os_str(), dir)
    }

    /// [`Git::command`] running `program` instead of git (a tracer that runs git).
    fn command_of(&self, program: &std::ffi::OsStr, dir: &Path) -> Command {
        let mut c = Command::new(program);
        reftable_testkit::git::hermetic(&mut c, dir, self.home.path(), IDENT_DATE);
        c.env("XDG_CONFIG_HOME", self.home.path())
            .env("GIT_TERMINAL_PROMPT", "0");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Run `git args…` in `dir` with `stdin`, under the timeout. Returns stdout and the
    /// wall time of the whole process. A non-zero exit or a timeout is an error.
    pub fn run(&self, dir: &Path, args: &[&str], stdin: &[u8]) -> GitResult<(Vec<u8>, f64)> {
        self.run_traced(dir, args, stdin, None)
    }

    /// [`Git::run`] under `strace -f -c -o TRACE` when `trace` is given: the system calls
    /// of git and of every process it starts, summed by kind, are written to `TRACE`.
    pub fn run_traced(
        &self,
        dir: &Path,
        args: &[&str],
        stdin: &[u8],
        trace: Option<&Path>,
    ) -> GitResult<(Vec<u8>, f64)> {
        match trace {
            Some(t) => self.run_counted(dir, args, stdin, Counter::Strace(t)),
            None => self.run_counted(dir, args, stdin, Counter::None),
        }
    }

    /// [`Git::run`] under the counting tool `counter` names.
    pub fn run_counted(
        &self,
        dir: &Path,
        args: &[&str],
        stdin: &[u8],
        counter: Counter<'_>,
    ) -> GitResult<(Vec<u8>, f64)> {
        let what = format!("git {}", args.join(" "));
        let out_file = tempfile::tempfile().map_err(|e| GitError(format!("{what}: {e}")))?;
        let err_file = tempfile::tempfile().map_err(|e| GitError(format!("{what}: {e}")))?;
        let mut cmd = match counter {
            Counter::Strace(t) => {
                let mut c = self.command_of("strace".as_ref(), dir);
                c.args(["-f", "-c", "-o"]).arg(t).arg("--").arg(&self.path);
                c
            }
            Counter::Callgrind(out) => {
                let mut c = self.command_of("valgrind".as_ref(), dir);
                c.args(["--tool=callgrind", "--trace-children=yes", "-q"])
                    .arg(format!(
                        "--callgrind-out-file={}",
                        out.join("callgrind.out.%p").display()
                    ))
                    .arg("--")
                    .arg(&self.path);
                c
            }
            Counter::None => self.command(dir),
        };
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(out_file.try_clone().map_err(|e| GitError(e.to_string()))?)
            .stderr(err_file.try_clone().map_err(|e| GitError(e.to_string()))?);
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .map_err(|e| GitError(format!("{what}: cannot start {}: {e}", self.path.display())))?;
        // Feed stdin from a thread so a large input cannot block against a full pipe.
        let input = stdin.to_vec();
        let mut pipe = child.stdin.take().expect("piped stdin");
        let feeder = std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if start.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(GitError(format!(
                        "{what}: timed out after {:?}",
                        self.timeout
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Err(GitError(format!("{what}: wait: {e}"))),
            }
        };
        let seconds = start.elapsed().as_secs_f64();
        let _ = feeder.join();
        let read = |mut f: std::fs::File| -> Vec<u8> {
            use std::io::{Read, Seek};
            let mut v = Vec::new();
            let _ = f.seek(std::io::SeekFrom::Start(0));
            let _ = f.read_to_end(&mut v);
            v
        };
        if !status.success() {
            let err = read(err_file);
            return Err(GitError(format!(
                "{what}: {status}: {}",
                String::from_utf8_lossy(&err).trim()
            )));
        }
        Ok((read(out_file), seconds))
    }

    /// The git binary.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `git --version`, e.g. `git version 2.47.3`.
    pub fn version(&self) -> GitResult<String> {
        let (out, _) = self.run(self.home.path(), &["--version"], b"")?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// `git init --ref-format=reftable <dir>`.
    pub fn init_reftable(&self, dir: &Path) -> GitResult<()> {
        let d = dir.to_string_lossy().into_owned();
        self.run(
            self.home.path(),
            &["init", "-q", "--ref-format=reftable", &d],
            b"",
        )?;
        Ok(())
    }

    /// Write the blob `foo\n` (what p1401 points its tags at); returns its id.
    pub fn blob(&self, repo: &Path) -> GitResult<String> {
        let (out, _) = self.run(repo, &["hash-object", "-w", "--stdin"], b"foo\n")?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// An empty-tree commit made with `git commit-tree`; returns its id.
    pub fn commit(&self, repo: &Path) -> GitResult<String> {
        let (tree, _) = self.run(repo, &["mktree"], b"")?;
        let tree = String::from_utf8_lossy(&tree).trim().to_string();
        let (out, _) = self.run(repo, &["commit-tree", &tree, "-m", "base"], b"")?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// One `git update-ref --stdin` process fed `script`; returns its wall time.
    pub fn update_ref_stdin(&self, repo: &Path, script: &[u8]) -> GitResult<f64> {
        Ok(self.run(repo, &["update-ref", "--stdin"], script)?.1)
    }
}

/// `create <name> <id>` lines, one transaction.
pub fn create_script(names: &[String], id: &str) -> Vec<u8> {
    let mut s = String::new();
    for n in names {
        s.push_str(&format!("create {n} {id}\n"));
    }
    s.into_bytes()
}

/// `delete <name>` lines, one transaction.
pub fn delete_script(names: &[String]) -> Vec<u8> {
    let mut s = String::new();
    for n in names {
        s.push_str(&format!("delete {n}\n"));
    }
    s.into_bytes()
}

/// p1401 on git at size `n`: create `n` tags in one `update-ref --stdin`, delete them in
/// one, then time creating them again in one (`asymmetric`: delete `old-*`, create
/// `new-*`). git runs with its defaults (auto-compaction on), as p1401 does. Returns the
/// seconds of the measured `update-ref` process.
pub fn p1401(git: &Git, n: usize, asymmetric: bool) -> GitResult<f64> {
    let dir = tempfile::tempdir().map_err(|e| GitError(format!("temp dir: {e}")))?;
    let repo = dir.path().join("repo");
    git.init_reftable(&repo)?;
    let blob = git.blob(&repo)?;
    let names =
        |p: &str| -> Vec<String> { (1..=n).map(|i| format!("refs/tags/{p}-{i}")).collect() };
    let old = names(if asymmetric { "old" } else { "tag" });
    let new = if asymmetric {
        names("new")
    } else {
        old.clone()
    };
    git.update_ref_stdin(&repo, &create_script(&old, &blob))?;
    git.update_ref_stdin(&repo, &delete_script(&old))?;
    let seconds = git.update_ref_stdin(&repo, &create_script(&new, &blob))?;
    let (listed, _) = git.run(&repo, &["for-each-ref", "--format=%(refname)"], b"")?;
    let count = listed
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    if count != n {
        return Err(GitError(format!(
            "p1401 on git: expected {n} refs after re-creating, found {count}"
        )));
    }
    Ok(seconds)
}
