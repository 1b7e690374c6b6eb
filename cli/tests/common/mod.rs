//! What the CLI tests share: running the built binary, the fixture repositories git wrote,
//! and the damaged tables and stacks the robustness tests feed it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use reftable::codec::block_writer::BlockWriter;
use reftable::codec::format::BlockType;
use reftable::codec::record::CodecContext;
use reftable::{LogRecord, LogUpdate, LogValue, ObjectId, Signature, TzOffset, WriteOptions};

pub const BIN: &str = env!("CARGO_BIN_EXE_reftable");

pub fn reftable(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run the reftable binary")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Run and require exit status 0; returns stdout.
pub fn ok(args: &[&str]) -> String {
    let o = reftable(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "reftable {args:?}: {}{}",
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub restart_interval: u16,
    pub index_objects: bool,
    pub tables: Vec<String>,
}

impl Case {
    pub fn stack(&self) -> PathBuf {
        self.dir.join("reftable")
    }

    pub fn expected(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.join("expected").join(file))
            .unwrap_or_else(|e| panic!("{}: {file}: {e}", self.name))
    }
}

pub fn cases() -> Vec<Case> {
    let repos = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repos");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&repos)
        .expect("fixtures/repos")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("options").exists())
        .collect();
    dirs.sort();
    let out: Vec<Case> = dirs
        .into_iter()
        .map(|dir| {
            let options = std::fs::read_to_string(dir.join("options")).unwrap();
            let (mut restart_interval, mut index_objects) = (16, true);
            for line in options.lines() {
                match line.split_once('=') {
                    Some(("restart_interval", v)) => restart_interval = v.parse().unwrap(),
                    Some(("index_objects", v)) => index_objects = v == "true",
                    _ => {}
                }
            }
            let list = std::fs::read_to_string(dir.join("reftable/tables.list")).unwrap();
            Case {
                name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                tables: list.lines().map(str::to_string).collect(),
                dir,
                restart_interval,
                index_objects,
            }
        })
        .collect();
    assert!(out.len() >= 15, "expected the committed fixture cases");
    out
}

/// `reftable logs` lines in the fixtures' format (git's `log -g` view): without the update
/// index and the old id, and without entries whose new id is null (log -g shows only entries
/// that point at a commit).
pub fn as_git_logs(ours: &str) -> String {
    let mut out = String::new();
    for line in ours.lines() {
        let mut f = line.splitn(5, ' ');
        let (name, _ui, _old, new, rest) = (
            f.next().unwrap(),
            f.next().unwrap(),
            f.next().unwrap(),
            f.next().unwrap(),
            f.next().unwrap(),
        );
        if new.bytes().all(|c| c == b'0') {
            continue;
        }
        out.push_str(&format!("{name} {new} {rest}\n"));
    }
    out
}

pub fn oid(b: u8) -> ObjectId {
    reftable_testkit::tables::oid(b)
}

/// HEAD → main, main, a peeled tag, two reflog entries (as reftable/tests/corrupt.rs).
pub fn base() -> Vec<u8> {
    reftable_testkit::tables::base_table(WriteOptions::default())
}

pub fn be24(b: &[u8]) -> usize {
    (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize
}

pub fn fix_crc(b: &mut [u8], _footer: usize) {
    reftable_testkit::tables::fix_crc(b);
}

/// A log-only table whose log block is incompressible: valid by the format, but its
/// compressed stream extends past the block size git reads (git inflates at most a block's
/// size of a log block's stream).
pub fn unreadable_by_git() -> Vec<u8> {
    let ctx = CodecContext {
        hash_size: 20,
        min_update_index: 1,
        max_update_index: u64::MAX,
    };
    let mut w = BlockWriter::new(4096, 16);
    w.reset(BlockType::Log, 24);
    let mut x = reftable_testkit::tables::Noise::new(0x9e37_79b9_7f4a_7c15);
    let mut noise = |n: usize| x.bytes(n);
    // Fill the block to within a byte or two with incompressible records (the longest message
    // that fits, then the next record until not even an empty message fits), so that zlib
    // stores the data and the stream is 11 bytes longer than the block's contents.
    'fill: for i in 0..1000u64 {
        let ids = (noise(20), noise(20), noise(8), noise(8));
        for len in (0..=4096).rev() {
            let mut msg: Vec<u8> = noise(len)
                .into_iter()
                .map(|c| if c == b'\n' { b'x' } else { c })
                .collect();
            msg.push(b'\n');
            let rec = LogRecord {
                refname: format!("refs/heads/b{i:03}").into_bytes(),
                update_index: 1,
                value: LogValue::Update(LogUpdate {
                    old_id: ObjectId::from_bytes(&ids.0).unwrap(),
                    new_id: ObjectId::from_bytes(&ids.1).unwrap(),
                    committer: Signature::new(
                        ids.2.clone(),
                        ids.3.clone(),
                        1,
                        TzOffset::from_hhmm(0),
                    ),
                    message: msg,
                }),
            };
            if w.add(&rec, &ctx).is_ok() {
                continue 'fill;
            }
        }
        break;
    }
    w.finish().unwrap();
    let mut header = Vec::new();
    header.extend_from_slice(b"REFT\x01");
    header.extend_from_slice(&4096u32.to_be_bytes()[1..]);
    header.extend_from_slice(&1u64.to_be_bytes());
    header.extend_from_slice(&1u64.to_be_bytes());
    w.set_header(&header);
    let mut t = w.finished().to_vec();
    assert!(
        t.len() > 4096,
        "the block must not compress: {} bytes",
        t.len()
    );
    t.extend_from_slice(&header);
    t.extend_from_slice(&[0; 40]);
    t.extend_from_slice(&[0; 4]);
    fix_crc(&mut t, 68);
    t
}

/// The corrupt tables that crash git 2.47.3 (and a few more), by name.
pub fn corrupt_tables() -> Vec<(&'static str, Vec<u8>)> {
    let b = base();
    let n = b.len();
    let log_pos = u64::from_be_bytes(b[n - 68 + 48..n - 68 + 56].try_into().unwrap()) as usize;
    assert_eq!(b[log_pos], b'g');
    let first_len = be24(&b[25..28]);
    let mut out = vec![
        ("empty file", Vec::new()),
        ("truncated to 40 bytes", b[..40].to_vec()),
    ];
    let mut c = b.clone();
    c[first_len - 2..first_len].copy_from_slice(&[0xff, 0xff]);
    out.push(("restart count 0xffff", c));
    let mut c = b.clone();
    c[first_len - 2..first_len].copy_from_slice(&[0, 0]);
    out.push(("restart count 0", c));
    let mut c = b.clone();
    c[25..28].copy_from_slice(&[0xff, 0xff, 0xff]);
    out.push(("block_len 0xffffff", c));
    let mut c = b.clone();
    assert_eq!(&c[28..30], &[0x00, 0x23]);
    c[29] = 0x24;
    out.push(("ref value type 4", c));
    for (what, len) in [("log block_len 1", 1u32), ("log block_len 5", 5)] {
        let mut c = b.clone();
        c[log_pos + 1..log_pos + 4].copy_from_slice(&len.to_be_bytes()[1..]);
        out.push((what, c));
    }
    let mut c = b.clone();
    c[n - 1] ^= 0xff;
    out.push(("footer CRC flipped", c));
    let mut c = b.clone();
    c[n - 68 + 10] ^= 1;
    fix_crc(&mut c, 68);
    out.push(("header differs from footer", c));
    let mut c = b.clone();
    let mid = log_pos + 4 + (n - 68 - log_pos - 4) / 2;
    c[mid] ^= 0xff;
    out.push(("flipped byte in the zlib stream", c));
    // refs/tags/v1 before refs/heads/main: swap the last bytes of their suffixes.
    let mut c = b.clone();
    let at = (0..n).find(|&i| c[i..].starts_with(b"tags/v1")).unwrap();
    c[at] = b'a';
    out.push(("keys out of order", c));
    out.push(("log block git cannot read", unreadable_by_git()));
    out
}

pub fn assert_problem_lines(out: &str, file: &str, what: &str) {
    assert!(!out.is_empty(), "{what}: no problem printed");
    for line in out.lines() {
        assert!(
            line.starts_with(file),
            "{what}: line without the file: {line}"
        );
    }
}

pub fn stack_copy(tmp: &Path) -> (PathBuf, Vec<String>) {
    let case = cases().into_iter().find(|c| c.name == "default").unwrap();
    let dir = tmp.join("reftable");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(case.stack()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    (dir, case.tables)
}
