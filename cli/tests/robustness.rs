//! The tool never blocks, crashes or writes: a closed stdout, special files in a stack.

mod common;

use std::process::Command;

use common::*;

#[test]
fn closed_stdout_is_not_a_crash() {
    let case = cases().into_iter().find(|c| c.name == "many-refs").unwrap();
    let mut child = Command::new(BIN)
        .args(["refs", s(&case.stack())])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 141)),
        "{:?}: {}",
        o.status,
        stderr(&o)
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn special_files_do_not_block() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, names) = stack_copy(tmp.path());
    let fifo = "0x00000000000b-0x00000000000b-00000000.ref";
    let made = Command::new("mkfifo").arg(dir.join(fifo)).status();
    let made = match made {
        Ok(s) if s.success() => Ok(()),
        other => Err(format!("mkfifo is not available: {other:?}")),
    };
    if reftable_testkit::skip::or_skip(made).is_none() {
        return;
    }
    let list = format!("{}\n{fifo}\n", names.join("\n"));
    std::fs::write(dir.join("tables.list"), list).unwrap();
    for cmd in ["refs", "logs", "dump", "stat", "verify"] {
        let o = reftable(&[cmd, s(&dir)]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
    }
    let o = reftable(&["verify", s(&dir)]);
    assert!(stdout(&o).contains("not a regular file"), "{}", stdout(&o));
}
