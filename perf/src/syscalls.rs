//! System calls of a git process tree, counted by `strace -f -c`: deterministic counters for
//! a program we cannot instrument, independent of machine load, so two git builds measured
//! on different days compare.

use std::collections::BTreeMap;

/// Calls per system call name (`openat`, `newfstatat`, ...), summed over a process tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Syscalls(pub BTreeMap<String, u64>);

/// The system calls a report shows per operation: the ones git's reftable regressions moved
/// (stat calls of stack reloads, opens and reads of tables, mappings, syncs) and the total.
pub const SHOWN: [&str; 7] = [
    "newfstatat",
    "openat",
    "read",
    "mmap",
    "fsync",
    "rename",
    "total",
];

impl Syscalls {
    /// Parse the summary table `strace -c` writes:
    ///
    /// ```text
    /// % time     seconds  usecs/call     calls    errors syscall
    /// ------ ----------- ----------- --------- --------- ----------------
    ///  52.17    0.000012           1        10         2 newfstatat
    /// ...
    /// 100.00    0.000023                    17         2 total
    /// ```
    ///
    /// `fstat`, `stat` and `lstat` are counted with `newfstatat` (C libraries pick one or
    /// the other for the same call), `fdatasync` with `fsync`, `renameat`/`renameat2` with
    /// `rename`. The `total` row is recomputed from the rows.
    pub fn parse(text: &str) -> Syscalls {
        let mut out = BTreeMap::new();
        let mut total = 0;
        for line in text.lines() {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 5 || cols[0].starts_with('%') || cols[0].starts_with('-') {
                continue;
            }
            let name = *cols.last().expect("5 columns");
            if name == "total" {
                continue;
            }
            let Ok(calls) = cols[3].parse::<u64>() else {
                continue;
            };
            let kind = match name {
                "fstat" | "stat" | "lstat" | "statx" | "newfstatat" | "fstatat64" => "newfstatat",
                "fdatasync" | "fsync" => "fsync",
                "renameat" | "renameat2" | "rename" => "rename",
                "open" | "openat" => "openat",
                "pread64" | "read" => "read",
                other => other,
            };
            *out.entry(kind.to_string()).or_insert(0) += calls;
            total += calls;
        }
        out.insert("total".to_string(), total);
        Syscalls(out)
    }

    /// Calls of `name` (0 when none).
    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    /// The calls of `self` minus those of `base` (saturating), for one step of a sequence.
    pub fn since(&self, base: &Syscalls) -> Syscalls {
        let mut out = self.0.clone();
        for (k, v) in out.iter_mut() {
            *v = v.saturating_sub(base.get(k));
        }
        Syscalls(out)
    }

    /// Add `other`'s calls.
    pub fn add(&mut self, other: &Syscalls) {
        for (k, v) in &other.0 {
            *self.0.entry(k.clone()).or_insert(0) += v;
        }
    }
}

/// Whether `strace` can trace a process here (installed, and allowed by the kernel).
pub fn strace_works() -> bool {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(_) => return false,
    };
    let out = dir.path().join("trace");
    std::process::Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out)
        .args(["--", "true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        && std::fs::read_to_string(&out).is_ok_and(|t| t.contains("total"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_rows_with_and_without_errors() {
        let text = "% time     seconds  usecs/call     calls    errors syscall\n\
------ ----------- ----------- --------- --------- ----------------\n\
 40.00    0.000004           0        10         2 newfstatat\n\
 30.00    0.000003           1         3           fstat\n\
 20.00    0.000002           0         7           openat\n\
 10.00    0.000001           1         1           fdatasync\n\
------ ----------- ----------- --------- --------- ----------------\n\
100.00    0.000010           0        21         2 total\n";
        let s = Syscalls::parse(text);
        assert_eq!(s.get("newfstatat"), 13);
        assert_eq!(s.get("openat"), 7);
        assert_eq!(s.get("fsync"), 1);
        assert_eq!(s.get("total"), 21);
        assert_eq!(s.get("mmap"), 0);
        let half =
            Syscalls::parse(" 40.00    0.000004           0         4         2 newfstatat\n");
        assert_eq!(s.since(&half).get("newfstatat"), 9);
    }
}
