//! A git binary with an isolated environment: no user or system config, fixed identities,
//! a committer clock the test sets, a `HOME` of its own.
//!
//! The binary is `REFTABLE_TEST_GIT`, else `git` on `PATH`; [`Git::require`] skips (or, in
//! CI, fails) when it cannot make reftable repositories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The date every test starts at (git's `test_tick`), as seconds.
pub const BASE_TIME: u64 = 1_112_911_993;

/// A git to run in tests.
#[derive(Debug)]
pub struct Git {
    bin: PathBuf,
    home: tempfile::TempDir,
}

/// The binary tests use: `REFTABLE_TEST_GIT`, else `git` on `PATH`.
pub fn binary() -> PathBuf {
    std::env::var_os("REFTABLE_TEST_GIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("git"))
}

/// The sanitizers' settings a git built with `SANITIZE=...` reads, kept in a hermetic
/// environment: they change how a sanitizer reports, not what git does.
const SANITIZER_OPTIONS: [&str; 4] = [
    "ASAN_OPTIONS",
    "LSAN_OPTIONS",
    "UBSAN_OPTIONS",
    "MSAN_OPTIONS",
];

/// Set `c` up to run git hermetically in `dir` at `date` (`<seconds> <±HHMM>`): the
/// environment cleared but for `PATH` and the sanitizers' settings (`ASAN_OPTIONS`...),
/// `HOME` at `home`, no system or global config, fixed author and committer, `LC_ALL=C`,
/// `TZ=UTC`.
pub fn hermetic(c: &mut Command, dir: &Path, home: &Path, date: &str) {
    c.env_clear();
    for name in SANITIZER_OPTIONS {
        if let Some(v) = std::env::var_os(name) {
            c.env(name, v);
        }
    }
    c.current_dir(dir)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "A U Thor")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_NAME", "C O Mitter")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_COMMITTER_DATE", date)
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
}

impl Git {
    /// The test git, if it can make a reftable repository.
    pub fn find() -> Result<Git, String> {
        let git = Git {
            bin: binary(),
            home: tempfile::tempdir().map_err(|e| e.to_string())?,
        };
        let probe = git.home.path().join("probe");
        let o = git
            .command(git.home.path(), BASE_TIME)
            .args(["init", "-q", "--ref-format=reftable"])
            .arg(&probe)
            .output();
        match o {
            Ok(o) if o.status.success() => Ok(git),
            Ok(o) => Err(format!(
                "{} cannot make a reftable repository ({}); set REFTABLE_TEST_GIT",
                git.bin.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!(
                "cannot run {}: {e}; set REFTABLE_TEST_GIT",
                git.bin.display()
            )),
        }
    }

    /// The test git, or skip the test (see [`crate::skip`]).
    pub fn require() -> Option<Git> {
        crate::skip::or_skip(Git::find())
    }

    /// The binary.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// A hermetic command in `dir` with the clock at `time` (-0700), auto-compaction off.
    pub fn command(&self, dir: &Path, time: u64) -> Command {
        let mut c = Command::new(&self.bin);
        hermetic(&mut c, dir, self.home.path(), &format!("{time} -0700"));
        c.env("GIT_TEST_REFTABLE_AUTOCOMPACTION", "false");
        c
    }

    /// Run git with `args` and `stdin` in `dir` at `time`.
    pub fn run(&self, dir: &Path, time: u64, args: &[&str], stdin: &str) -> Output {
        use std::io::Write;
        let mut child = self
            .command(dir, time)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn git");
        let mut input = child.stdin.take().expect("piped");
        let data = stdin.as_bytes().to_vec();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&data);
        });
        let out = child.wait_with_output().expect("wait for git");
        let _ = writer.join();
        out
    }

    /// Run and require success; returns standard output.
    pub fn ok(&self, dir: &Path, time: u64, args: &[&str], stdin: &str) -> String {
        let o = self.run(dir, time, args, stdin);
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}
