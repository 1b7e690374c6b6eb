//! What tells git's crashes and the other findings apart: the signal and the first frames
//! of a backtrace under gdb for crashes, the command for the rest, and error messages
//! normalized for grouping samples.

use std::path::Path;

use crate::setup::env::Env;
use crate::syscalls::strace::{program_and_args, under};

use super::base::Base;
use super::class::{Class, Side};
use super::config::DamageConfig;
use super::observe::Observation;
use super::sides::git_args;
use super::trial::Trial;

/// What tells two findings apart. Ordered field by field (a command before any other, the
/// classes by name), as the findings of a run are listed and their directories numbered.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    /// Whose finding.
    pub(crate) side: Side,
    /// What went wrong.
    pub(crate) class: Class,
    /// The command; none for a crash, which is one finding whatever command reaches its
    /// site.
    pub(crate) command: Option<&'static str>,
    /// What [`signature`] made of it.
    pub(crate) signature: String,
}

impl Key {
    /// The key of observation `o` with signature `signature`.
    pub(crate) fn of(o: &Observation, signature: String) -> Key {
        Key {
            side: o.side,
            class: o.class,
            command: (o.class != Class::Crash).then_some(o.command),
            signature,
        }
    }

    /// Whether `o` is of this key's side and class, on its command if it has one (the
    /// signature is left to the caller: a crash's costs a run under gdb).
    pub(crate) fn covers(&self, o: &Observation) -> bool {
        o.side == self.side
            && o.class == self.class
            && (self.command.is_none() || self.command == Some(o.command))
    }
}

/// The first frames of git's crash under gdb (function names, or addresses without
/// symbols), libc and abort machinery left out.
fn backtrace(env: &Env, base: &Base, repo: &Path, command: &str) -> Option<Vec<String>> {
    // gdb starts git's binary in git's environment (a build tree's wrapper script, which
    // gdb cannot run, read into the binary it runs and the environment it sets).
    let mut git = env.git.command(repo, 0);
    git.args(git_args(base, command));
    let gdb = ["-batch", "-nx", "-ex", "run", "-ex", "bt 12", "--args"];
    let args = gdb
        .map(String::from)
        .into_iter()
        .chain(program_and_args(&git));
    let mut c = under("gdb", &git, args.collect());
    c.stdin(std::process::Stdio::null());
    let o = c.output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let mut frames = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('#')) {
        // `#3  0x000055555569abcd in func (args) at file:line` or `#3  func (args) ...`;
        // a binary without symbols gives `?? ()`, and the address stands for the frame
        // (gdb runs the program without address randomization, so it is stable).
        let mut t = line.split_whitespace().skip(1);
        let first = t.next().unwrap_or("?");
        let (addr, func) = if first.starts_with("0x") {
            t.next();
            (Some(first), t.next().unwrap_or("??"))
        } else {
            (None, first)
        };
        let libc = func.starts_with("__")
            || [
                "raise",
                "abort",
                "memcpy",
                "memmove",
                "memcmp",
                "strlen",
                "pthread_kill",
                "gsignal",
            ]
            .contains(&func);
        if libc {
            continue;
        }
        frames.push(match (func, addr) {
            ("??", Some(a)) => a.to_string(),
            _ => func.to_string(),
        });
        if frames.len() == 3 {
            break;
        }
    }
    (!frames.is_empty()).then_some(frames)
}

/// The name of the signal in a crash's detail (`signal N; ...`).
fn signal_name(detail: &str) -> &'static str {
    match detail
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.trim_end_matches(';').parse::<i32>().ok())
    {
        Some(6) => "SIGABRT",
        Some(11) => "SIGSEGV",
        Some(7) => "SIGBUS",
        Some(8) => "SIGFPE",
        _ => "signal",
    }
}

/// The key that tells findings apart.
pub(crate) fn signature(
    env: &Env,
    cfg: &DamageConfig,
    base: &Base,
    t: &Trial,
    o: &Observation,
) -> String {
    let command = o.command;
    if o.side == Side::Git && o.class == Class::Crash {
        let sig = signal_name(&o.detail);
        if cfg.gdb {
            // gdb runs on a fresh copy: pack-refs may have rewritten the stack.
            if let Some(frames) = backtrace(env, base, &t.git_repo, command) {
                return format!("{sig} in {}", frames.join(" < "));
            }
        }
        return format!("{sig} in {command}");
    }
    if o.class == Class::SanitizerReport {
        // A leak or a bad access is told apart by where: its kind and git's function.
        return o.detail.clone();
    }
    // The other classes are one behaviour per command (git swallowing a load error, git
    // reading less than we check, ...), whatever the damage; our errors are kept as samples.
    command.to_string()
}

/// An error message without numbers and table names, for grouping.
pub(crate) fn normalize(s: &str) -> String {
    let s = s.split("; git stderr").next().unwrap_or(s);
    let mut out = String::new();
    let mut last_digit = false;
    for ch in s.chars() {
        if ch.is_ascii_hexdigit() && ch.is_ascii_digit() {
            if !last_digit {
                out.push('N');
            }
            last_digit = true;
        } else {
            last_digit = false;
            out.push(ch);
        }
    }
    out.split_whitespace()
        .filter(|w| !w.contains(".ref"))
        .collect::<Vec<_>>()
        .join(" ")
}
