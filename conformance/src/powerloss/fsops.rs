//! A recorded write operation as file-system operations on the stack directory: files
//! created, written (with their bytes), truncated, synced, renamed and removed, and the
//! directory synced, in the order the trace (`strace -f -y -e write=all`) shows them. Files
//! are told apart by inode, so a rename moves a file's data with it.

use std::collections::HashMap;

/// An inode: a file, whatever names it has had.
pub type Ino = usize;

/// One operation on the stack directory or a file in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsOp {
    /// A new empty file under `name`.
    Create { name: String, ino: Ino },
    /// Bytes written at an offset.
    Write {
        ino: Ino,
        offset: u64,
        data: Vec<u8>,
    },
    /// The file cut to `len` bytes.
    Truncate { ino: Ino, len: u64 },
    /// `fsync`/`fdatasync` of a file: its data so far is durable.
    Sync { ino: Ino },
    /// `fsync` of the stack directory: the names so far are durable.
    SyncDir,
    /// `from` renamed onto `to` (replacing it).
    Rename { from: String, to: String },
    /// `name` removed.
    Unlink { name: String },
}

impl FsOp {
    /// Whether the operation changes the directory (names), not a file's data.
    pub fn is_metadata(&self) -> bool {
        matches!(
            self,
            FsOp::Create { .. } | FsOp::Rename { .. } | FsOp::Unlink { .. }
        )
    }
}

/// The calls recorded besides the faults mode's write path.
pub const EXTRA_SYSCALLS: &[&str] = &["ftruncate", "writev", "pwritev"];

/// What the parser knows while reading a trace.
struct Parser<'a> {
    stack: &'a str,
    names: HashMap<String, Ino>,
    next_ino: Ino,
    /// File positions of open descriptors, per process.
    pos: HashMap<(u32, i64), u64>,
    ops: Vec<FsOp>,
}

/// The operations of `trace` on the directory `stack` (absolute), whose files before the
/// run are `existing` (inodes 0..n in that order).
pub fn parse(trace: &str, stack: &str, existing: &[String]) -> Result<Vec<FsOp>, String> {
    let mut p = Parser {
        stack,
        names: existing.iter().cloned().zip(0..).collect(),
        next_ino: existing.len(),
        pos: HashMap::new(),
        ops: Vec::new(),
    };
    for (pid, call, dump) in calls(trace) {
        p.call(pid, &call, &dump)?;
    }
    Ok(p.ops)
}

/// The trace's calls: process, the call's text (an unfinished call joined with its
/// resumption) and the bytes its dump shows.
fn calls(trace: &str) -> Vec<(u32, String, Vec<u8>)> {
    let mut out: Vec<(u32, String, Vec<u8>)> = Vec::new();
    let mut pending: HashMap<u32, String> = HashMap::new();
    for line in trace.lines() {
        if let Some(hex) = line.strip_prefix(" | ") {
            if let Some(last) = out.last_mut() {
                last.2.extend(dump_bytes(hex));
            }
            continue;
        }
        let Some((pid, rest)) = line.trim_start().split_once(' ') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(head) = rest.strip_suffix("<unfinished ...>") {
            pending.insert(pid, head.trim_end().to_string());
        } else if let Some(at) = rest.find(" resumed>") {
            let head = pending.remove(&pid).unwrap_or_default();
            out.push((
                pid,
                format!("{head}{}", &rest[at + " resumed>".len()..]),
                Vec::new(),
            ));
        } else {
            out.push((pid, rest.to_string(), Vec::new()));
        }
    }
    out
}

/// The bytes of one dump line (` | 00010  72 65 ...  ascii |` without its ` | `): 16 byte
/// columns at fixed places, a space between the two groups of eight.
fn dump_bytes(line: &str) -> Vec<u8> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    for i in 0..16 {
        let at = 7 + i * 3 + usize::from(i >= 8);
        let Some(h) = b.get(at..at + 2) else { break };
        match std::str::from_utf8(h)
            .ok()
            .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            Some(v) => out.push(v),
            None => break,
        }
    }
    out
}

/// The quoted strings of a call's arguments (paths).
fn quoted(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = args;
    while let Some(start) = rest.find('"') {
        let Some(len) = rest[start + 1..].find('"') else {
            break;
        };
        out.push(rest[start + 1..start + 1 + len].to_string());
        rest = &rest[start + len + 2..];
    }
    out
}

/// The decoded path of a descriptor argument or result (`5</a/b>` gives `(5, "/a/b")`).
fn fd_path(s: &str) -> Option<(i64, &str)> {
    let s = s.trim_start();
    let lt = s.find('<')?;
    let fd = s[..lt].parse().ok()?;
    let end = s[lt..].find('>')? + lt;
    Some((fd, &s[lt + 1..end]))
}

impl Parser<'_> {
    /// The name of `path` in the stack directory (`None`: elsewhere, or the directory).
    fn name<'p>(&self, path: &'p str) -> Option<&'p str> {
        let path = path.trim_end_matches("(deleted)");
        let rest = path.strip_prefix(self.stack)?.strip_prefix('/')?;
        (!rest.is_empty() && !rest.contains('/')).then_some(rest)
    }

    fn call(&mut self, pid: u32, call: &str, dump: &[u8]) -> Result<(), String> {
        let Some(paren) = call.find('(') else {
            return Ok(());
        };
        let syscall = &call[..paren];
        let (args, ret) = call[paren + 1..].rsplit_once(" = ").unwrap_or((call, "-1"));
        if ret.trim_start().starts_with('-') || ret.trim_start().starts_with('?') {
            return Ok(());
        }
        match syscall {
            "openat" => self.open(pid, args, ret),
            "write" | "pwrite64" => return self.write(pid, syscall, args, ret, dump),
            "writev" | "pwritev" if self.fd_arg(args).is_some() => {
                return Err(format!("{syscall} on the stack is not replayed: {call}"));
            }
            "ftruncate" => {
                if let Some((_, ino)) = self.fd_arg(args) {
                    let len = args
                        .rsplit(", ")
                        .next()
                        .and_then(|l| l.trim_end_matches(')').parse().ok());
                    let len = len.ok_or_else(|| format!("bad ftruncate: {call}"))?;
                    self.ops.push(FsOp::Truncate { ino, len });
                }
            }
            "fsync" | "fdatasync" => self.sync(args),
            "close" => {
                if let Some((fd, _)) = fd_path(args) {
                    self.pos.remove(&(pid, fd));
                }
            }
            "rename" | "renameat" | "renameat2" => self.rename(&quoted(args)),
            "unlink" | "unlinkat" => {
                if let Some(name) = quoted(args).first().and_then(|p| self.name(p)) {
                    let name = name.to_string();
                    self.names.remove(&name);
                    self.ops.push(FsOp::Unlink { name });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A descriptor argument on a file of the stack: the descriptor and the file's inode.
    fn fd_arg(&self, args: &str) -> Option<(i64, Ino)> {
        let (fd, path) = fd_path(args)?;
        let name = self.name(path)?;
        Some((fd, *self.names.get(name)?))
    }

    fn open(&mut self, pid: u32, args: &str, ret: &str) {
        let Some((fd, path)) = fd_path(ret) else {
            return;
        };
        let Some(name) = self.name(path).map(str::to_string) else {
            return;
        };
        let creates = args.contains("O_CREAT");
        match self.names.get(&name) {
            None if creates => {
                let ino = self.next_ino;
                self.next_ino += 1;
                self.names.insert(name.clone(), ino);
                self.ops.push(FsOp::Create { name, ino });
            }
            Some(&ino) if args.contains("O_TRUNC") => {
                self.ops.push(FsOp::Truncate { ino, len: 0 });
            }
            _ => {}
        }
        self.pos.insert((pid, fd), 0);
    }

    fn write(
        &mut self,
        pid: u32,
        syscall: &str,
        args: &str,
        ret: &str,
        dump: &[u8],
    ) -> Result<(), String> {
        let Some((fd, ino)) = self.fd_arg(args) else {
            return Ok(());
        };
        let n: usize = ret
            .trim()
            .parse()
            .map_err(|_| format!("bad {syscall} result {ret}"))?;
        if dump.len() < n {
            return Err(format!("{syscall} of {n} bytes dumped {}", dump.len()));
        }
        let offset = if syscall == "pwrite64" {
            let off = args
                .rsplit(", ")
                .next()
                .and_then(|o| o.trim_end_matches(')').parse().ok());
            off.ok_or_else(|| format!("bad pwrite64 offset: {args}"))?
        } else {
            let pos = self.pos.entry((pid, fd)).or_insert(0);
            let at = *pos;
            *pos += n as u64;
            at
        };
        self.ops.push(FsOp::Write {
            ino,
            offset,
            data: dump[..n].to_vec(),
        });
        Ok(())
    }

    fn sync(&mut self, args: &str) {
        let Some((_, path)) = fd_path(args) else {
            return;
        };
        if path == self.stack {
            self.ops.push(FsOp::SyncDir);
        } else if let Some(&ino) = self.name(path).and_then(|n| self.names.get(n)) {
            self.ops.push(FsOp::Sync { ino });
        }
    }

    fn rename(&mut self, paths: &[String]) {
        let [from, to] = paths else {
            return;
        };
        let (Some(from), Some(to)) = (self.name(from), self.name(to)) else {
            return;
        };
        let (from, to) = (from.to_string(), to.to_string());
        if let Some(ino) = self.names.remove(&from) {
            self.names.insert(to.clone(), ino);
        }
        self.ops.push(FsOp::Rename { from, to });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"9238  openat(AT_FDCWD</r>, "/r/.git/reftable/tables.list.lock", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = 4</r/.git/reftable/tables.list.lock>
9238  openat(AT_FDCWD</r>, "/r/.git/reftable/t.temp.X", O_RDWR|O_CREAT|O_EXCL, 0600) = 5</r/.git/reftable/t.temp.X>
9238  write(5</r/.git/reftable/t.temp.X>, "REFT\1"..., 5) = 5
 | 00000  52 45 46 54 01                                    REFT.            |
9238  write(1<pipe:[7]>, "ok", 2) = 2
 | 00000  6f 6b                                             ok               |
9238  fsync(5</r/.git/reftable/t.temp.X>) = 0
9238  close(5</r/.git/reftable/t.temp.X>) = 0
9238  rename("/r/.git/reftable/t.temp.X", "/r/.git/reftable/t.ref") = 0
9238  write(4</r/.git/reftable/tables.list.lock>, "t.ref\n"..., 6 <unfinished ...>
9239  close(3</r/.git/config>) = 0
9238  <... write resumed>) = 6
 | 00000  74 2e 72 65 66 0a                                 t.ref.           |
9238  fsync(6</r/.git/reftable>) = 0
9238  rename("/r/.git/reftable/tables.list.lock", "/r/.git/reftable/tables.list") = 0
9238  unlink("/r/.git/reftable/old.ref") = 0
9238  unlink("/r/.git/reftable/gone") = -1 ENOENT (No such file or directory)
"#;

    #[test]
    fn a_trace_becomes_the_stack_directory_operations() {
        let existing = vec!["tables.list".to_string(), "old.ref".to_string()];
        let ops = parse(TRACE, "/r/.git/reftable", &existing).unwrap();
        assert_eq!(
            ops,
            vec![
                FsOp::Create {
                    name: "tables.list.lock".into(),
                    ino: 2
                },
                FsOp::Create {
                    name: "t.temp.X".into(),
                    ino: 3
                },
                FsOp::Write {
                    ino: 3,
                    offset: 0,
                    data: b"REFT\x01".to_vec()
                },
                FsOp::Sync { ino: 3 },
                FsOp::Rename {
                    from: "t.temp.X".into(),
                    to: "t.ref".into()
                },
                FsOp::Write {
                    ino: 2,
                    offset: 0,
                    data: b"t.ref\n".to_vec()
                },
                FsOp::SyncDir,
                FsOp::Rename {
                    from: "tables.list.lock".into(),
                    to: "tables.list".into()
                },
                FsOp::Unlink {
                    name: "old.ref".into()
                },
            ]
        );
    }
}
