//! The tool never blocks or crashes, and writes only through clean-stale: a closed stdout,
//! special files in a stack, leftovers of killed writers.

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

/// `clean-stale` lists (dry run) and then removes what killed writers leave, keeps young
/// files and leaves the tables and `tables.list` alone; the stack reads the same after.
#[test]
fn clean_stale_removes_only_writer_leftovers() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, names) = stack_copy(tmp.path());
    let before = ok(&["refs", s(&dir)]);
    let leftovers = [
        "tables.list.lock".to_string(),
        format!("{}.lock", names[0]),
        "0x000000000009-0x000000000009-01234567.temp.abcdef".to_string(),
    ];
    for n in &leftovers {
        std::fs::write(dir.join(n), b"").unwrap();
    }
    // Just made: too young for the default threshold.
    let young = ok(&["clean-stale", s(&dir)]);
    assert_eq!(
        young.lines().filter(|l| l.starts_with("kept ")).count(),
        3,
        "{young}"
    );
    let dry = ok(&["clean-stale", "--older-than", "0", "--dry-run", s(&dir)]);
    assert_eq!(
        dry.lines()
            .filter(|l| l.starts_with("would remove "))
            .count(),
        3,
        "{dry}"
    );
    assert!(leftovers.iter().all(|n| dir.join(n).exists()));
    let done = ok(&["clean-stale", "--older-than", "0", s(&dir)]);
    assert_eq!(
        done.lines().filter(|l| l.starts_with("removed ")).count(),
        3,
        "{done}"
    );
    assert!(leftovers.iter().all(|n| !dir.join(n).exists()));
    assert!(names.iter().all(|n| dir.join(n).exists()));
    assert_eq!(ok(&["refs", s(&dir)]), before);
    // A table is not a stack.
    let o = reftable(&["clean-stale", s(&dir.join(&names[0]))]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// The 92-byte table (header and footer, no block) that git accepts: every subcommand reads
/// it as empty, `verify` finds nothing wrong.
#[test]
fn the_empty_table_git_accepts_is_fine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("reftable");
    std::fs::create_dir_all(&dir).unwrap();
    let name = "0x000000000001-0x000000000001-01234567.ref";
    let bytes = reftable_testkit::tables::empty_table();
    assert_eq!(bytes.len(), 92);
    std::fs::write(dir.join(name), &bytes).unwrap();
    std::fs::write(dir.join("tables.list"), format!("{name}\n")).unwrap();
    for target in [dir.clone(), dir.join(name)] {
        for cmd in [
            &["refs"][..],
            &["logs"],
            &["dump"],
            &["dump", "--blocks"],
            &["stat"],
            &["verify"],
        ] {
            let mut args = cmd.to_vec();
            args.push(s(&target));
            let o = reftable(&args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{args:?}: {}{}",
                stdout(&o),
                stderr(&o)
            );
        }
    }
}
