//! Instructions a git process tree executes, counted by `valgrind --tool=callgrind`: like
//! system calls, an exact counter independent of machine load (and of the CPU's speed), for
//! comparing two git builds measured on different days. Optional: callgrind runs a program
//! some fifty times slower, so the report asks for it (`--instructions`) and it is detected
//! at start.

use std::path::Path;

/// The total of the `summary:` lines of every callgrind output file in `dir` (one per
/// process of the tree; `--trace-children=yes`).
pub fn sum_dir(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("callgrind.out"))
        {
            total += summary(&std::fs::read_to_string(&p)?);
        }
    }
    Ok(total)
}

/// The instructions (`Ir`) of one callgrind output file: its `summary:` line (or, in files
/// without one, its `totals:` line).
pub fn summary(text: &str) -> u64 {
    let line = |tag: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(tag))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
    };
    line("summary:").or_else(|| line("totals:")).unwrap_or(0)
}

/// Whether callgrind can count a process here (valgrind installed and working).
pub fn callgrind_works() -> bool {
    let Ok(dir) = tempfile::tempdir() else {
        return false;
    };
    let out = dir.path().join("callgrind.out.%p");
    std::process::Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .args(["-q", "--", "true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        && sum_dir(dir.path()).is_ok_and(|n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_totals_lines() {
        let text = "version: 1\ncreator: callgrind-3.19.0\npid: 12\ncmd:  git update-ref\n\
events: Ir\nsummary: 1234567\n\nfl=(1) x.c\nfn=(1) main\n3 10\ntotals: 1234567\n";
        assert_eq!(summary(text), 1_234_567);
        assert_eq!(summary("events: Ir\ntotals: 42\n"), 42);
        assert_eq!(summary("events: Ir\n"), 0);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("callgrind.out.1"), "summary: 10\n").unwrap();
        std::fs::write(dir.path().join("callgrind.out.2"), "summary: 32\n").unwrap();
        std::fs::write(dir.path().join("other"), "summary: 1000\n").unwrap();
        assert_eq!(sum_dir(dir.path()).unwrap(), 42);
    }
}
