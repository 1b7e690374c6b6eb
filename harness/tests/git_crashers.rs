//! The corrupt tables that crash git 2.47.3 (the damaged inputs git's reader trusts, and the
//! table-level ones among git's past reftable bugs) each give a clear error from us: the right kind, a message saying what
//! is wrong, the file and the byte offset.
//!
//! Each input is cut from a git-written fixture table and committed as
//! `fuzz/regressions/table_read/git-2.47.3-<name>`, so the fuzz replay runs them through
//! the `table_read` target too. This test checks that each committed file is exactly what
//! its recipe makes; `REFTABLE_BLESS=1` (re)writes them.

use std::path::{Path, PathBuf};

use reftable::{ErrorKind, Table};

/// A git-written SHA-1 table with a ref block (HEAD first) and a log block.
const FIXTURE: &str = "fixtures/repos/default/reftable/0x000000000001-0x000000000008-47ab8992.ref";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn be24(b: &[u8]) -> usize {
    (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize
}

const FOOTER: usize = 68;

use reftable_testkit::tables::fix_crc;

fn footer_field_at(b: &[u8], i: usize) -> usize {
    b.len() - FOOTER + 24 + 8 * i
}

fn log_offset(b: &[u8]) -> usize {
    let at = footer_field_at(b, 3);
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

struct Case {
    name: &'static str,
    /// What git 2.47.3 does with it.
    git: &'static str,
    make: fn(Vec<u8>) -> Vec<u8>,
    kind: ErrorKind,
    message: &'static str,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "ref-value-type-4",
            git: "for-each-ref aborts (exit 134)",
            make: |mut b| {
                assert_eq!(&b[28..34], b"\x00\x23HEAD");
                b[29] = 0x24;
                b
            },
            kind: ErrorKind::Format,
            message: "invalid ref value type",
        },
        Case {
            name: "restart-count-0xffff",
            git: "for-each-ref segfaults (exit 139)",
            make: |mut b| {
                let len = be24(&b[25..28]);
                b[len - 2..len].copy_from_slice(&[0xff, 0xff]);
                b
            },
            kind: ErrorKind::Format,
            message: "restart count 65535 does not fit",
        },
        Case {
            name: "restart-count-0",
            git: "for-each-ref aborts (exit 134)",
            make: |mut b| {
                let len = be24(&b[25..28]);
                b[len - 2..len].copy_from_slice(&[0, 0]);
                b
            },
            kind: ErrorKind::Format,
            // The old restart table is now read as records, and its bytes decode as a
            // record without a key.
            message: "empty key",
        },
        Case {
            name: "first-block-len-0xffffff",
            git: "for-each-ref segfaults (exit 139)",
            make: |mut b| {
                b[25..28].copy_from_slice(&[0xff, 0xff, 0xff]);
                b
            },
            kind: ErrorKind::Format,
            message: "exceeds the table's block size",
        },
        Case {
            name: "truncated-to-40-bytes",
            git: "for-each-ref segfaults (exit 139)",
            make: |mut b| {
                b.truncate(40);
                b
            },
            kind: ErrorKind::Format,
            message: "shorter than a version 1 header and footer",
        },
        Case {
            name: "footer-crc-flipped",
            git: "load error swallowed: empty output, exit 0",
            make: |mut b| {
                let n = b.len();
                b[n - 1] ^= 0xff;
                b
            },
            kind: ErrorKind::Format,
            message: "footer CRC-32 mismatch",
        },
        Case {
            name: "header-differs-from-footer",
            git: "load error swallowed: empty output, exit 0",
            make: |mut b| {
                let n = b.len();
                b[n - FOOTER + 10] ^= 1;
                fix_crc(&mut b);
                b
            },
            kind: ErrorKind::Format,
            message: "footer does not repeat the file header",
        },
        Case {
            name: "empty-file",
            git: "load error swallowed: empty output, exit 0",
            make: |_| Vec::new(),
            kind: ErrorKind::Format,
            message: "too short for a reftable header",
        },
        Case {
            name: "log-block-len-1",
            git: "reflog show overflows the heap (exit 139)",
            make: |mut b| {
                let log = log_offset(&b);
                assert_eq!(b[log], b'g');
                b[log + 1..log + 4].copy_from_slice(&[0, 0, 1]);
                b
            },
            kind: ErrorKind::Format,
            message: "block_len 1 is smaller than the minimum",
        },
        Case {
            name: "log-block-len-5",
            git: "reflog show prints an empty reflog, exit 0",
            make: |mut b| {
                let log = log_offset(&b);
                b[log + 1..log + 4].copy_from_slice(&[0, 0, 5]);
                b
            },
            kind: ErrorKind::Format,
            message: "block_len 5 is smaller than the minimum",
        },
        Case {
            name: "restart-offset-past-records",
            git: "out-of-bounds read (fixed after 2.55, ec426765df)",
            make: |mut b| {
                let len = be24(&b[25..28]);
                let count = u16::from_be_bytes([b[len - 2], b[len - 1]]) as usize;
                let first = len - 2 - 3 * count;
                b[first..first + 3].copy_from_slice(&[0xff, 0xff, 0xff]);
                b
            },
            kind: ErrorKind::Format,
            message: "restart offset 16777215 is outside the records",
        },
        Case {
            name: "log-offset-past-table",
            git: "NULL dereference on seek (fixed after 2.55, a1c085df8d)",
            make: |mut b| {
                let at = footer_field_at(&b, 3);
                b[at..at + 8].copy_from_slice(&u64::MAX.to_be_bytes());
                fix_crc(&mut b);
                b
            },
            kind: ErrorKind::Format,
            message: "section offset points past the last block",
        },
        Case {
            name: "update-index-varint-overflow",
            git: "wraps silently (checked from 2.49, 072e3aa3a5)",
            make: |mut b| {
                // HEAD's update index varint: ten bytes that overflow a u64.
                b[34..43].copy_from_slice(&[0xff; 9]);
                b[43] = 0x7f;
                b
            },
            kind: ErrorKind::Format,
            message: "truncated or overflowing ref update index",
        },
    ]
}

/// Open, then read everything the way git's commands would: refs, reflogs, seeks, object
/// lookups, the block walk. The first error wins.
fn read_all(bytes: Vec<u8>) -> reftable::Result<()> {
    let t = Table::from_bytes("corrupt.ref", bytes)?;
    for r in t.refs()? {
        r?;
    }
    for l in t.logs()? {
        l?;
    }
    for name in [&b"HEAD"[..], b"refs/heads/main", b"zzz"] {
        t.read_ref(name)?;
        if let Some(r) = t.seek_log(name)?.next() {
            r?;
        }
    }
    for b in t.blocks() {
        b?;
    }
    Ok(())
}

#[test]
fn each_git_crasher_gets_a_clear_error() {
    let base = std::fs::read(root().join(FIXTURE)).unwrap();
    read_all(base.clone()).expect("the fixture itself reads");
    let dir = root().join("fuzz/regressions/table_read");
    let bless = std::env::var_os("REFTABLE_BLESS").is_some();
    for case in cases() {
        let bytes = (case.make)(base.clone());
        let file = dir.join(format!("git-2.47.3-{}", case.name));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &bytes).unwrap();
        } else {
            let committed = std::fs::read(&file)
                .unwrap_or_else(|e| panic!("{}: {e} (REFTABLE_BLESS=1 writes it)", file.display()));
            assert!(
                committed == bytes,
                "{} differs from its recipe",
                file.display()
            );
        }
        let err = read_all(bytes).expect_err(case.name);
        eprintln!("{:32} git 2.47.3: {:45} us: {err}", case.name, case.git);
        assert_eq!(err.kind(), case.kind, "{}: {err}", case.name);
        assert!(
            err.message().contains(case.message),
            "{}: expected {:?} in {err}",
            case.name,
            case.message
        );
        assert!(err.file().is_some(), "{}: no file in {err}", case.name);
        assert!(err.offset().is_some(), "{}: no offset in {err}", case.name);
    }
}
