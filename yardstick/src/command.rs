//! The commands the yardsticks run (the build, the gate's modes, the user's tests, the
//! counters comparison): shell text with placeholders, run by `sh -c` in the tree, in a
//! process group of its own under a timeout that kills the whole group, output to a log.
//!
//! Placeholders: `{git}` the program built from the tree (`bin-wrappers/git` in a git
//! tree), `{base_git}` the same program from the unmutated build, `{tree}` the tree,
//! `{exe}` this `conformance` binary, `{complexity}` the perf crate's `complexity` binary
//! beside it, `{scratch}` an empty directory of the command's own.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use reftable_testkit::process::{run_in_group, Exit};

/// A command with a label (for reports) and its shell text (with placeholders).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cmd {
    /// Short name in reports (`run`, `tests 1`, ...).
    pub label: String,
    /// The shell text.
    pub text: String,
}

impl Cmd {
    /// `LABEL::TEXT` names a command; plain text gets `default_label`.
    pub fn parse(arg: &str, default_label: String) -> Cmd {
        match arg.split_once("::") {
            Some((l, t)) if !l.is_empty() && !l.contains(char::is_whitespace) => Cmd {
                label: l.to_string(),
                text: t.to_string(),
            },
            _ => Cmd {
                label: default_label,
                text: arg.to_string(),
            },
        }
    }
}

/// The gate's own modes as commands, by name (`run`, `migrate`, `concurrent`, `damaged`,
/// `retries`: the faults mode's `EINTR` and `EAGAIN` points),
/// in the sizes `conformance/README.md` names; the runs stop at their first divergence
/// and take a git command that runs 20 s for a hang, so that a mutant is judged quickly and a
/// mutant that makes git hang is caught within its budget rather than timed out.
pub fn builtin_mode(name: &str) -> Result<Cmd, String> {
    let text = match name {
        "run" => {
            "REFTABLE_TEST_GIT_TIMEOUT=20 {exe} run --git {git} --no-minimize --fail-fast --out {scratch}/cases"
        }
        "migrate" => "{exe} migrate --git {git} --cases 20",
        "concurrent" => {
            "REFTABLE_TEST_GIT_TIMEOUT=20 {exe} run --concurrent --concurrent-txns 500 --git {git} --no-minimize --fail-fast --out {scratch}/cases"
        }
        "damaged" => "{exe} damaged --git {git} --seconds 180 --no-gdb --out {scratch}/damaged",
        // The faults git must retry only (every other fault a git may refuse cleanly, which
        // says little of a mutant), two cases, no migrations: about a minute.
        "retries" => {
            "{exe} faults --git {git} --cases 2 --errnos EINTR,EAGAIN --no-migrations --fail-fast --out {scratch}/faults"
        }
        _ => {
            return Err(format!(
                "no gate mode {name}: the modes are run, migrate, concurrent, damaged, retries"
            ))
        }
    };
    Ok(Cmd {
        label: name.to_string(),
        text: text.to_string(),
    })
}

/// The values of the placeholders.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    /// `{git}`.
    pub git: PathBuf,
    /// `{base_git}`.
    pub base_git: PathBuf,
    /// `{tree}`.
    pub tree: PathBuf,
    /// `{exe}`.
    pub exe: PathBuf,
    /// `{complexity}`.
    pub complexity: PathBuf,
}

impl Vars {
    /// `text` with the placeholders filled in (`scratch` for `{scratch}`); paths are
    /// single-quoted for the shell.
    pub fn fill(&self, text: &str, scratch: &Path) -> String {
        let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
        text.replace("{git}", &q(&self.git))
            .replace("{base_git}", &q(&self.base_git))
            .replace("{tree}", &q(&self.tree))
            .replace("{exe}", &q(&self.exe))
            .replace("{complexity}", &q(&self.complexity))
            .replace("{scratch}", &q(scratch))
    }
}

/// How one command ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ran {
    /// The command's label.
    pub label: String,
    /// `0`, `1`, `signal 9`, `timeout`, or `spawn failed: ...`.
    pub exit: String,
    /// Wall time.
    pub seconds: f64,
}

impl Ran {
    /// Exit status 0.
    pub fn passed(&self) -> bool {
        self.exit == "0"
    }

    /// Killed at its timeout.
    pub fn timed_out(&self) -> bool {
        self.exit == "timeout"
    }

    /// Failed in any way but a timeout: the command saw something wrong.
    pub fn failed(&self) -> bool {
        !self.passed() && !self.timed_out()
    }
}

/// Run `text` (placeholders filled) with `sh -c` in `cwd`, output to `log`, under `timeout`;
/// `scratch` is emptied first. `env` adds variables.
pub fn run_logged(
    label: &str,
    text: &str,
    cwd: &Path,
    log: &Path,
    timeout: Duration,
    env: &[(&str, &str)],
) -> Ran {
    let started = Instant::now();
    let exit = spawn_logged(text, cwd, log, timeout, env);
    Ran {
        label: label.to_string(),
        exit: match exit {
            Ok(Exit::Code(c)) => c.to_string(),
            Ok(Exit::Signal(s)) => format!("signal {s}"),
            Ok(Exit::Timeout) => "timeout".to_string(),
            Err(e) => format!("spawn failed: {e}"),
        },
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn spawn_logged(
    text: &str,
    cwd: &Path,
    log: &Path,
    timeout: Duration,
    env: &[(&str, &str)],
) -> Result<Exit, String> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(text)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    for (k, v) in env {
        c.env(k, v);
    }
    run_in_group(&mut c, timeout).map_err(|e| e.to_string())
}

/// The last `n` lines of a log (for reports of unviable mutants and failed builds).
pub fn log_tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_placeholders_and_exits() {
        let c = Cmd::parse("t::cd t && sh x.sh", "tests 1".into());
        assert_eq!(
            (c.label.as_str(), c.text.as_str()),
            ("t", "cd t && sh x.sh")
        );
        let c = Cmd::parse("FOO=a::b sh x", "tests 1".into());
        assert_eq!(c.label, "FOO=a");
        let c = Cmd::parse("make test", "tests 2".into());
        assert_eq!(c.label, "tests 2");
        let v = Vars {
            git: "/a b/git".into(),
            ..Vars::default()
        };
        assert_eq!(
            v.fill("{git} x {scratch}", Path::new("/s")),
            "'/a b/git' x '/s'"
        );
        assert!(builtin_mode("nope").is_err());
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let t = Duration::from_secs(20);
        let r = run_logged("x", "echo hi; exit 3", dir.path(), &log, t, &[]);
        assert_eq!(r.exit, "3");
        assert!(r.failed());
        assert_eq!(log_tail(&log, 5), "hi");
    }

    #[test]
    fn a_timeout_kills_what_the_command_started() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let pidfile = dir.path().join("pid");
        let text = format!("sleep 600 & echo $! > '{}'; wait", pidfile.display());
        let r = run_logged("x", &text, dir.path(), &log, Duration::from_secs(1), &[]);
        assert!(r.timed_out(), "{r:?}");
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        assert!(
            !running(pid.trim()),
            "the sleep the shell started outlived the timeout"
        );
    }

    /// Whether process `pid` exists and is not a zombie waiting for its reaper.
    fn running(pid: &str) -> bool {
        std::thread::sleep(Duration::from_millis(100));
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    }
}
