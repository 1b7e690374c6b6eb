//! Where a fault can be injected: the write path's system calls, read from the trace of one
//! run without faults (`strace -f -y`), each named by its system call, its number among the
//! same process's calls of that system call (what strace's `when=` counts: per system call
//! and per process) and the file of the stack it touches; and the errors each one gets.

use serde::{Deserialize, Serialize};

/// The system calls traced and faulted: opening, writing, syncing, closing, renaming and
/// removing files (reads are the damaged mode's concern).
pub const SYSCALLS: &[&str] = &[
    "openat",
    "write",
    "pwrite64",
    "fsync",
    "fdatasync",
    "close",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
];

/// One call of the write path in a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The process.
    pub pid: u32,
    /// The system call.
    pub syscall: String,
    /// Its number among the process's calls of this system call, from 1.
    pub nth: u32,
    /// What it touches in the stack directory ([`role`]).
    pub role: String,
    /// An `openat` that may create the file.
    pub creates: bool,
    /// Made after the first commit point of the run (the rename of `tables.list.lock` onto
    /// `tables.list`): what fails here cannot undo that commit.
    pub after_commit: bool,
}

/// One injection: the `nth` call of `syscall` fails with `errno`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FaultPoint {
    /// The system call.
    pub syscall: String,
    /// Which call of it (strace's `when=`).
    pub nth: u32,
    /// The error it returns.
    pub errno: String,
    /// What the call touches (`tables.list.lock`, `new table`, ...).
    pub role: String,
    /// After the run's first commit point ([`Call::after_commit`]).
    pub after_commit: bool,
}

impl FaultPoint {
    /// `after-commit` or `before-commit`, as registry signatures name it.
    pub fn phase(&self) -> &'static str {
        if self.after_commit {
            "after-commit"
        } else {
            "before-commit"
        }
    }

    /// strace's argument for this injection.
    pub fn inject_arg(&self) -> String {
        format!("{}:error={}:when={}", self.syscall, self.errno, self.nth)
    }
}

/// The errors a call gets: `ENOSPC` where data or a new file needs space, `EIO` everywhere,
/// `EINTR` on writes (a caller must retry it: git's `xwrite`, Rust's `write_all`). None for
/// closing the stack directory: Linux reports no I/O error there (a directory has no data
/// to write back), and Rust's standard library treats one as impossible (it panics).
pub fn errnos(call: &Call) -> &'static [&'static str] {
    match call.syscall.as_str() {
        "close" if call.role == "stack directory" => &[],
        "write" | "pwrite64" => &["ENOSPC", "EIO", "EINTR"],
        "openat" if call.creates => &["ENOSPC", "EIO"],
        _ => &["EIO"],
    }
}

/// What a path in the stack directory is, in words that do not depend on the random part of
/// table names.
pub fn role(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let name = name.trim_end_matches("(deleted)");
    if name == "reftable" {
        "stack directory".into()
    } else if name == "tables.list" || name == "tables.list.lock" {
        name.into()
    } else if name.ends_with(".ref.lock") {
        "table lock".into()
    } else if name.contains(".temp") || name.starts_with("tmp") {
        "new table".into()
    } else if name.ends_with(".ref") {
        "table".into()
    } else {
        "other".into()
    }
}

/// The stack directory's path in a trace line (a path argument, or a file descriptor that
/// `-y` decodes).
fn stack_path(args: &str) -> Option<&str> {
    let at = args.find("/.git/reftable")?;
    let start = args[..at].rfind(['"', '<']).map_or(0, |i| i + 1);
    let rest = &args[at..];
    let end = rest.find(['"', '>']).map_or(rest.len(), |i| i);
    Some(&args[start..at + end])
}

/// The calls of the write path that touch the stack, from a trace written with
/// `strace -f -qq -y -e trace=`[`SYSCALLS`]; counted per process and system call as strace
/// counts for `when=`.
pub fn parse_trace(log: &str) -> Vec<Call> {
    let mut counts: std::collections::HashMap<(u32, String), u32> = Default::default();
    let mut calls = Vec::new();
    let mut committed = false;
    for line in log.lines() {
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(pid) = pid.trim().parse::<u32>() else {
            continue;
        };
        let rest = rest.trim_start();
        // `<... write resumed>` continues a call counted at its start.
        let Some(paren) = rest.find('(') else {
            continue;
        };
        let syscall = &rest[..paren];
        if !SYSCALLS.contains(&syscall) {
            continue;
        }
        let nth = counts.entry((pid, syscall.to_string())).or_default();
        *nth += 1;
        let args = rest[paren..].split(" = ").next().unwrap_or("");
        let Some(path) = stack_path(args) else {
            continue;
        };
        calls.push(Call {
            pid,
            syscall: syscall.to_string(),
            nth: *nth,
            role: role(path),
            creates: syscall == "openat" && args.contains("O_CREAT"),
            after_commit: committed,
        });
        let result = rest.rsplit(" = ").next().unwrap_or("");
        committed |= syscall.starts_with("rename")
            && args.contains("tables.list.lock\"")
            && args.contains("tables.list\"")
            && result.starts_with('0');
    }
    calls
}

/// Every injection for `calls`: each call with each of its errors, once per (system call,
/// number, error) however many processes made that call.
pub fn points(calls: &[Call]) -> Vec<FaultPoint> {
    let mut out: Vec<FaultPoint> = Vec::new();
    for c in calls {
        for e in errnos(c) {
            let p = FaultPoint {
                syscall: c.syscall.clone(),
                nth: c.nth,
                errno: e.to_string(),
                role: c.role.clone(),
                after_commit: c.after_commit,
            };
            if !out
                .iter()
                .any(|q| q.syscall == p.syscall && q.nth == p.nth && q.errno == p.errno)
            {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"29990 openat(AT_FDCWD</tmp/r>, "/tmp/r/.git/config", O_RDONLY) = 3</tmp/r/.git/config>
29990 close(3</tmp/r/.git/config>) = 0
29990 openat(AT_FDCWD</tmp/r>, "/tmp/r/.git/reftable/tables.list.lock", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = 4</tmp/r/.git/reftable/tables.list.lock>
29990 write(1<pipe:[1]>, "x", 1) = 1
29990 write(5</tmp/r/.git/reftable/0x03-0x03-f8.temp.SURXNA>, "REFT"..., 68) = 68
29990 rename("/tmp/r/.git/reftable/0x03-0x03-f8.temp.SURXNA", "/tmp/r/.git/reftable/0x03-0x03-ce.ref") = 0
29990 rename("/tmp/r/.git/reftable/tables.list.lock", "/tmp/r/.git/reftable/tables.list") = 0
29990 close(3</tmp/r/.git/reftable/tables.list>(deleted)) = 0
29991 write(4</tmp/r/.git/reftable/tables.list.lock>, "0x"..., 86) = 86
+++ exited with 0 +++
"#;

    #[test]
    fn calls_are_counted_per_process_and_syscall_and_kept_in_the_stack() {
        let calls = parse_trace(TRACE);
        let got: Vec<_> = calls
            .iter()
            .map(|c| {
                let (s, role) = (c.syscall.as_str(), c.role.as_str());
                (c.pid, s, c.nth, role, c.creates, c.after_commit)
            })
            .collect();
        assert_eq!(
            got,
            [
                (29990, "openat", 2, "tables.list.lock", true, false),
                (29990, "write", 2, "new table", false, false),
                (29990, "rename", 1, "new table", false, false),
                (29990, "rename", 2, "tables.list.lock", false, false),
                (29990, "close", 2, "tables.list", false, true),
                (29991, "write", 1, "tables.list.lock", false, true),
            ]
        );
    }

    #[test]
    fn points_give_each_call_its_errors_once() {
        let calls = parse_trace(TRACE);
        let p = points(&calls);
        let args: Vec<String> = p.iter().map(FaultPoint::inject_arg).collect();
        assert_eq!(
            args,
            [
                "openat:error=ENOSPC:when=2",
                "openat:error=EIO:when=2",
                "write:error=ENOSPC:when=2",
                "write:error=EIO:when=2",
                "write:error=EINTR:when=2",
                "rename:error=EIO:when=1",
                "rename:error=EIO:when=2",
                "close:error=EIO:when=2",
                "write:error=ENOSPC:when=1",
                "write:error=EIO:when=1",
                "write:error=EINTR:when=1",
            ]
        );
    }
}
