//! Writing a script that a git will then execute, from a process whose other threads are
//! starting programs all the time.
//!
//! Linux refuses to execute a file that any process holds open for writing (`ETXTBSY`).
//! Our own write holds the file only briefly, but a child that another thread forks in that
//! moment inherits the descriptor and keeps it until its `exec`; a git that runs the script
//! then fails with "Text file busy" (seen on 2.45.4: one reference-transaction hook in
//! 120 cases). So the file is written by a short-lived `sh` of its own, whose descriptors no
//! thread of ours ever holds.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Write `content` to `path` and make it executable (mode 755), without this process ever
/// opening `path`.
pub fn write_executable(path: &Path, content: &str) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut child = Command::new("sh")
        .args(["-c", "cat >\"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(fail)?;
    let written = child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(content.as_bytes());
    let out = child.wait_with_output().map_err(fail)?;
    written.map_err(fail)?;
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_written_whole_and_runs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hook");
        write_executable(&p, "#!/bin/sh\necho ran \"$1\"\n").unwrap();
        let out = Command::new(&p).arg("x").output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran x\n");
        assert!(write_executable(&dir.path().join("no/such/dir/hook"), "").is_err());
    }
}
