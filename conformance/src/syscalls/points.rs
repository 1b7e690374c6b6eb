//! Where a fault can be injected: the write path's system calls, read from the trace of one
//! run without faults (`strace -f -y`), each named by its system call, its number among the
//! same process's calls of that system call (what strace's `when=` counts: per system call
//! and per process) and the file of the stack it touches; and the errors each one gets.
//! Short writes are points too: a file size limit (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored)
//! halfway through one write makes the kernel write part of it and return the short count,
//! and the next write fail with `EFBIG`, as a disk that fills up in the middle of a write
//! does.

use serde::{Deserialize, Serialize};

/// The system calls traced and faulted: opening, writing, syncing, closing, renaming and
/// removing files, and reading `tables.list` (interrupted only: what a read finds is the
/// damaged mode's concern).
pub const SYSCALLS: &[&str] = &[
    "openat",
    "read",
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
    "mkdir",
    "rmdir",
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
    /// For `write` and `pwrite64`: the file offset it writes at and the bytes it asks for.
    pub span: Option<(u64, u64)>,
    /// It opens a directory (`O_DIRECTORY`) or closes one opened so.
    pub directory: bool,
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
    /// A short write instead of an error: the file size limit in bytes that cuts this call
    /// (`errno` is then `SHORT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsize: Option<u64>,
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

    /// strace's argument for this injection; for a short write, the limit that makes it.
    pub fn inject_arg(&self) -> String {
        match self.fsize {
            Some(limit) => format!("{}:short:when={}:fsize={limit}", self.syscall, self.nth),
            None => format!("{}:error={}:when={}", self.syscall, self.errno, self.nth),
        }
    }
}

/// The errors a call gets: `ENOSPC` where data or a new file needs space, `EIO` everywhere,
/// `EINTR` on writes and on reads of `tables.list` (a caller must retry it: git's `xwrite`
/// and `xread` and its reftable library's own loops, Rust's `write_all` and
/// `read_to_end`), and nothing else on reads. `EAGAIN` where git's reftable code writes the
/// stack and reads `tables.list`: its loops (and `xwrite`, `xread` before 2.50) retry that
/// too; it is git's side only ([`git_only`]): a regular file never returns it, and our
/// library does not wait for one. None for closing a directory: Linux reports no I/O error
/// there (a directory has no data to write back), and Rust's standard library treats one as
/// impossible (it panics).
pub fn errnos(call: &Call) -> &'static [&'static str] {
    let stack_write = ["tables.list.lock", "new table", "table lock"].contains(&call.role.as_str());
    match call.syscall.as_str() {
        "read" if call.role == "tables.list" => &["EINTR", "EAGAIN"],
        "read" => &[],
        "close" if call.role == "stack directory" || call.directory => &[],
        "write" | "pwrite64" if stack_write => &["ENOSPC", "EIO", "EINTR", "EAGAIN"],
        "write" | "pwrite64" => &["ENOSPC", "EIO", "EINTR"],
        "openat" if call.creates => &["ENOSPC", "EIO"],
        "mkdir" => &["ENOSPC", "EIO"],
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

/// Which calls of a trace are fault points, and what they touch.
pub struct Scope {
    /// The path of a call's arguments that is in scope, if one is.
    pub locate: fn(&str) -> Option<&str>,
    /// What that path is, in words.
    pub role: fn(&str) -> String,
    /// Whether a call (its arguments, its result) is the commit point.
    pub commits: fn(&str, &str) -> bool,
}

/// The stack directory: a write operation's scope, committed by the rename of
/// `tables.list.lock` onto `tables.list`.
pub const STACK: Scope = Scope {
    locate: stack_path,
    role,
    commits: |args, result| {
        args.contains("tables.list.lock\"")
            && args.contains("tables.list\"")
            && result.starts_with('0')
    },
};

/// The calls of the write path that touch the stack, from a trace written with
/// `strace -f -qq -y -e trace=`[`SYSCALLS`]; counted per process and system call as strace
/// counts for `when=`.
pub fn parse_trace(log: &str) -> Vec<Call> {
    parse_trace_in(log, &STACK)
}

/// The calls of the trace `log` in `scope`, counted as [`parse_trace`] counts them.
pub fn parse_trace_in(log: &str, scope: &Scope) -> Vec<Call> {
    let mut counts: std::collections::HashMap<(u32, String), u32> = Default::default();
    let mut offsets: std::collections::HashMap<String, u64> = Default::default();
    let mut directories: std::collections::HashSet<String> = Default::default();
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
        let result = rest.rsplit(" = ").next().unwrap_or("");
        let opens_dir = syscall == "openat" && args.contains("O_DIRECTORY");
        if opens_dir {
            // The descriptor's path as `-y` decodes it, which is how `close` names it.
            if let Some((p, _)) = result.split_once('<').and_then(|(_, p)| p.split_once('>')) {
                directories.insert(p.to_string());
            }
        }
        let Some(path) = (scope.locate)(args) else {
            continue;
        };
        let span = match syscall {
            "openat" => {
                offsets.insert(path.to_string(), 0);
                None
            }
            "write" => last_number(args).map(|n| {
                let at = offsets.entry(path.to_string()).or_default();
                let span = (*at, n);
                *at += leading_number(result).unwrap_or(n);
                span
            }),
            "pwrite64" => {
                let mut nums = args
                    .rsplit(", ")
                    .filter_map(|a| a.trim_end_matches(')').parse().ok());
                let (at, n) = (nums.next(), nums.next());
                at.zip(n)
            }
            _ => None,
        };
        calls.push(Call {
            pid,
            syscall: syscall.to_string(),
            nth: *nth,
            role: (scope.role)(path),
            creates: syscall == "openat" && args.contains("O_CREAT"),
            after_commit: committed,
            span,
            directory: opens_dir || (syscall == "close" && directories.contains(path)),
        });
        committed |= syscall.starts_with("rename") && (scope.commits)(args, result);
    }
    calls
}

/// The last argument of a call's argument list when it is a number (`write`'s count).
fn last_number(args: &str) -> Option<u64> {
    args.trim_end_matches(')').rsplit(", ").next()?.parse().ok()
}

/// The number a result starts with (`68`, `-1 EFBIG ...`: none).
fn leading_number(result: &str) -> Option<u64> {
    result.split_whitespace().next()?.parse().ok()
}

/// The short writes of `calls`: for each write of two bytes or more to the stack, the file
/// size limit halfway through it. The write cut is the first one in the trace that reaches
/// past the limit (an earlier, longer file can take the cut), named by that call; one point
/// per call cut.
pub fn short_writes(calls: &[Call]) -> Vec<FaultPoint> {
    let mut out: Vec<FaultPoint> = Vec::new();
    for c in calls {
        let Some((at, n)) = c.span.filter(|&(_, n)| n >= 2) else {
            continue;
        };
        let limit = at + n / 2;
        let Some(cut) = calls
            .iter()
            .find(|d| d.span.is_some_and(|(a, m)| a + m > limit))
        else {
            continue;
        };
        if out
            .iter()
            .any(|q| q.syscall == cut.syscall && q.nth == cut.nth)
        {
            continue;
        }
        out.push(FaultPoint {
            syscall: cut.syscall.clone(),
            nth: cut.nth,
            errno: "SHORT".into(),
            role: cut.role.clone(),
            after_commit: cut.after_commit,
            fsize: Some(limit),
        });
    }
    out
}

/// Whether a point is tried on git's side only (`EAGAIN`, see [`errnos`]).
pub fn git_only(p: &FaultPoint) -> bool {
    p.errno == "EAGAIN"
}

/// Whether a writer must make the call again after this fault, and end as it would have
/// without it.
pub fn must_retry(p: &FaultPoint) -> bool {
    p.errno == "EINTR" || p.errno == "EAGAIN"
}

/// The points of a traced run: [`points`] and [`short_writes`], only those that inject one
/// of `errnos` when it is given (`SHORT` for a short write).
pub fn fault_points(calls: &[Call], errnos: Option<&[String]>) -> Vec<FaultPoint> {
    let mut all = points(calls);
    all.extend(short_writes(calls));
    all.retain(|p| errnos.map_or(true, |e| e.contains(&p.errno)));
    all
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
                fsize: None,
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
    fn writes_have_their_offsets_and_a_short_write_cuts_the_first_one_past_the_limit() {
        let trace = "1 openat(AT_FDCWD</r>, \"/r/.git/reftable/t.temp.X\", O_RDWR|O_CREAT, 0666) = 5</r/.git/reftable/t.temp.X>\n\
            1 write(5</r/.git/reftable/t.temp.X>, \"REFT\"..., 100) = 100\n\
            1 write(5</r/.git/reftable/t.temp.X>, \"r\"..., 40) = 40\n\
            1 openat(AT_FDCWD</r>, \"/r/.git/reftable/tables.list.lock\", O_RDWR|O_CREAT|O_EXCL, 0666) = 6</r/.git/reftable/tables.list.lock>\n\
            1 write(6</r/.git/reftable/tables.list.lock>, \"0x\"..., 30) = 30\n";
        let calls = parse_trace(trace);
        let spans: Vec<_> = calls.iter().filter_map(|c| c.span).collect();
        assert_eq!(spans, [(0, 100), (100, 40), (0, 30)]);
        let short: Vec<String> = short_writes(&calls)
            .iter()
            .map(FaultPoint::inject_arg)
            .collect();
        // Halfway through the lock's 30 bytes (15) the table's first write is already past
        // the limit: that call is cut, once.
        assert_eq!(
            short,
            [
                "write:short:when=1:fsize=50",
                "write:short:when=2:fsize=120"
            ]
        );
    }

    #[test]
    fn closing_a_directory_gets_no_error() {
        let trace = "1 openat(AT_FDCWD</r>, \".git/refs/\", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3</r/.git/reftable/x>\n\
            1 close(3</r/.git/reftable/x>) = 0\n\
            1 openat(AT_FDCWD</r>, \"/r/.git/reftable/tables.list\", O_RDONLY) = 4</r/.git/reftable/tables.list>\n\
            1 close(4</r/.git/reftable/tables.list>) = 0\n";
        let calls = parse_trace(trace);
        let closes: Vec<(bool, usize)> = calls
            .iter()
            .filter(|c| c.syscall == "close")
            .map(|c| (c.directory, errnos(c).len()))
            .collect();
        assert_eq!(closes, [(true, 0), (false, 1)]);
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
                "write:error=EAGAIN:when=2",
                "rename:error=EIO:when=1",
                "rename:error=EIO:when=2",
                "close:error=EIO:when=2",
                "write:error=ENOSPC:when=1",
                "write:error=EIO:when=1",
                "write:error=EINTR:when=1",
                "write:error=EAGAIN:when=1",
            ]
        );
    }

    /// Reads of `tables.list` are interrupted or would block, and only they: other reads of
    /// the stack and reads outside it are no fault points; `--errnos` keeps what it names.
    #[test]
    fn only_reads_of_the_list_are_interrupted() {
        let trace = r#"7 read(3</r/.git/config>, "[core]"..., 4096) = 120
7 read(3</r/.git/reftable/tables.list>, "0x01"..., 58) = 58
7 read(4</r/.git/reftable/0x01-0x01-aa.ref>, "REFT"..., 24) = 24
7 read(3</r/.git/reftable/tables.list>, "0x01"..., 58) = 58
"#;
        let calls = parse_trace(trace);
        let args: Vec<String> = points(&calls).iter().map(FaultPoint::inject_arg).collect();
        assert_eq!(
            args,
            [
                "read:error=EINTR:when=2",
                "read:error=EAGAIN:when=2",
                "read:error=EINTR:when=4",
                "read:error=EAGAIN:when=4"
            ]
        );
        let eintr = ["EINTR".to_string()];
        assert_eq!(fault_points(&calls, Some(&eintr)).len(), 2);
        assert!(fault_points(&calls, Some(&["EIO".to_string()])).is_empty());
    }
}
