//! Drives the built `reftable` binary: on the tables git wrote (fixtures/repos), on corrupted
//! copies of tables (the inputs that crash git 2.47.3, notes §6), on broken stacks, and on a
//! repository made by a real git when one with reftable support is available.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use reftable::codec::block_writer::BlockWriter;
use reftable::codec::format::BlockType;
use reftable::codec::record::CodecContext;
use reftable::{
    LogRecord, LogUpdate, LogValue, ObjectId, RefRecord, RefValue, WriteOptions, Writer,
};

const BIN: &str = env!("CARGO_BIN_EXE_reftable");

fn reftable(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run the reftable binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Run and require exit status 0; returns stdout.
fn ok(args: &[&str]) -> String {
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

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

// --- fixtures ----------------------------------------------------------------------------

struct Case {
    name: String,
    dir: PathBuf,
    restart_interval: u16,
    index_objects: bool,
    tables: Vec<String>,
}

impl Case {
    fn stack(&self) -> PathBuf {
        self.dir.join("reftable")
    }

    fn expected(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.join("expected").join(file))
            .unwrap_or_else(|e| panic!("{}: {file}: {e}", self.name))
    }
}

fn cases() -> Vec<Case> {
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
fn as_git_logs(ours: &str) -> String {
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

#[test]
fn refs_equal_gits_listing() {
    for case in cases() {
        let got = ok(&["refs", s(&case.stack())]);
        assert_eq!(got, case.expected("stack.refs"), "{}: stack", case.name);
        for t in &case.tables {
            let got = ok(&["refs", s(&case.stack().join(t))]);
            assert_eq!(
                got,
                case.expected(&format!("{t}.refs")),
                "{}: {t}",
                case.name
            );
        }
    }
}

#[test]
fn logs_equal_gits_listing() {
    let mut compared = 0;
    for case in cases() {
        let got = ok(&["logs", s(&case.stack())]);
        assert_eq!(
            as_git_logs(&got),
            case.expected("stack.logs"),
            "{}: stack",
            case.name
        );
        compared += got.lines().count();
        for t in &case.tables {
            let got = ok(&["logs", s(&case.stack().join(t))]);
            assert_eq!(
                as_git_logs(&got),
                case.expected(&format!("{t}.logs")),
                "{}: {t}",
                case.name
            );
        }
    }
    assert!(compared > 1000, "only {compared} log lines compared");
}

#[test]
fn logs_of_one_ref() {
    for case in cases()
        .iter()
        .filter(|c| c.name == "default" || c.name == "tombstones")
    {
        let all = ok(&["logs", s(&case.stack())]);
        for name in ["HEAD", "refs/heads/main", "refs/heads/nope"] {
            let want: String = all
                .lines()
                .filter(|l| l.split(' ').next() == Some(name))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(
                ok(&["logs", s(&case.stack()), name]),
                want,
                "{}: {name}",
                case.name
            );
        }
    }
}

#[test]
fn tombstones_are_listed_on_request() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "tombstones")
        .unwrap();
    let plain = ok(&["refs", s(&case.stack())]);
    let with = ok(&["refs", "--tombstones", s(&case.stack())]);
    let deleted: Vec<&str> = with.lines().filter(|l| l.ends_with(" deleted")).collect();
    assert!(!deleted.is_empty(), "the tombstones case deletes refs");
    let live: String = with
        .lines()
        .filter(|l| !l.ends_with(" deleted"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(live, plain);
    // Names stay in order with tombstones mixed in.
    let names: Vec<&str> = with.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn json_is_one_document_with_the_same_content() {
    for case in cases() {
        let text = ok(&["refs", "--tombstones", s(&case.stack())]);
        let doc: serde_json::Value =
            serde_json::from_str(&ok(&["refs", "--json", "--tombstones", s(&case.stack())]))
                .unwrap();
        let refs = doc["refs"].as_array().unwrap();
        assert_eq!(refs.len(), text.lines().count(), "{}", case.name);
        for (r, line) in refs.iter().zip(text.lines()) {
            let name = r["name"].as_str().unwrap();
            let rebuilt = match r["type"].as_str().unwrap() {
                "oid" => format!("{name} {}", r["value"].as_str().unwrap()),
                "peeled" => format!(
                    "{name} {} {}",
                    r["value"].as_str().unwrap(),
                    r["peeled"].as_str().unwrap()
                ),
                "symref" => format!("{name} ref:{}", r["target"].as_str().unwrap()),
                "deleted" => format!("{name} deleted"),
                t => panic!("type {t}"),
            };
            assert_eq!(rebuilt, line, "{}", case.name);
            assert!(r["update_index"].as_u64().is_some());
        }
        let text = ok(&["logs", s(&case.stack())]);
        let doc: serde_json::Value =
            serde_json::from_str(&ok(&["logs", "--json", s(&case.stack())])).unwrap();
        let logs = doc["logs"].as_array().unwrap();
        assert_eq!(logs.len(), text.lines().count(), "{}", case.name);
        for (l, line) in logs.iter().zip(text.lines()) {
            let prefix = format!(
                "{} {} {} {} {} <{}> {} {} ",
                l["refname"].as_str().unwrap(),
                l["update_index"],
                l["old"].as_str().unwrap(),
                l["new"].as_str().unwrap(),
                l["name"].as_str().unwrap(),
                l["email"].as_str().unwrap(),
                l["time"],
                l["tz"].as_str().unwrap(),
            );
            assert!(line.starts_with(&prefix), "{}: {line}", case.name);
            assert!(l["message"].as_str().unwrap().ends_with('\n'));
        }
        assert_eq!(
            doc["hash"],
            if case.name.starts_with("sha256") {
                "sha256"
            } else {
                "sha1"
            }
        );
    }
}

#[test]
fn reencode_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let mut n = 0;
    for case in cases() {
        for t in &case.tables {
            let input = case.stack().join(t);
            let out = tmp.path().join(format!("{}-{t}", case.name));
            let mut args = vec![
                "reencode".to_string(),
                s(&input).to_string(),
                "-o".into(),
                s(&out).to_string(),
                "--restart-interval".into(),
                case.restart_interval.to_string(),
            ];
            if !case.index_objects {
                args.push("--no-index-objects".into());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let said = ok(&args);
            assert!(
                said.contains("byte-identical"),
                "{}: {t}: {said}",
                case.name
            );
            assert!(
                std::fs::read(&out).unwrap() == std::fs::read(&input).unwrap(),
                "{}: {t}: re-encoded table differs",
                case.name
            );
            n += 1;
        }
    }
    assert!(n >= 50, "only {n} tables re-encoded");
    // Other options give another (valid) table, and say so.
    let case = cases().into_iter().find(|c| c.name == "many-refs").unwrap();
    let out = tmp.path().join("other.ref");
    let input = case.stack().join(&case.tables[0]);
    let said = ok(&[
        "reencode",
        s(&input),
        "-o",
        s(&out),
        "--restart-interval",
        "3",
    ]);
    assert!(said.contains("differs"), "{said}");
    ok(&["verify", s(&out)]);
    assert_eq!(ok(&["refs", s(&out)]), ok(&["refs", s(&input)]));
}

#[test]
fn verify_is_clean_on_every_git_table() {
    for case in cases() {
        let o = reftable(&["verify", s(&case.stack())]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", case.name, stdout(&o));
        assert_eq!(stdout(&o), "", "{}", case.name);
        assert!(stderr(&o).contains("no problems"), "{}", case.name);
        for t in &case.tables {
            let o = reftable(&["verify", s(&case.stack().join(t))]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}: {t}: {}",
                case.name,
                stdout(&o)
            );
        }
    }
}

#[test]
fn dump_and_stat_on_every_git_table() {
    let mut layouts = 0;
    for case in cases() {
        let dump = ok(&["dump", "--blocks", s(&case.stack())]);
        assert!(dump.starts_with("stack "), "{}", case.name);
        for t in &case.tables {
            assert!(dump.contains(&format!("table {t}\n")), "{}: {t}", case.name);
        }
        let stat = ok(&["stat", s(&case.stack())]);
        assert!(stat.contains("compaction would help: "), "{}", case.name);
        // t0613's block layouts: type, where the restart table starts, restart count.
        if let Ok(want) = std::fs::read_to_string(case.dir.join("expected/t0613-layout")) {
            let got: String = dump
                .lines()
                .filter_map(|l| l.strip_prefix("  block at "))
                .map(|l| {
                    let ty = l.split("type ").nth(1).unwrap().chars().next().unwrap();
                    let restarts = l.split(", ").find(|f| f.ends_with(" restarts")).unwrap();
                    let at = l.split("restart table at ").nth(1).unwrap();
                    let at = at.split(',').next().unwrap();
                    format!("{ty} {at} {}\n", restarts.split(' ').next().unwrap())
                })
                .collect();
            assert_eq!(got, want, "{}", case.name);
            layouts += 1;
        }
    }
    assert!(layouts >= 6);
    // Index levels of the multi-level case (blockSize=300, restartInterval=3).
    let case = cases()
        .into_iter()
        .find(|c| c.name == "small-blocks-r3")
        .unwrap();
    let stat = ok(&["stat", s(&case.stack())]);
    assert!(stat.contains("in 2 levels"), "{stat}");
    assert!(stat.contains("obj id length "), "{stat}");
}

#[test]
fn repository_paths_resolve_to_the_stack() {
    let case = cases().into_iter().find(|c| c.name == "default").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let gitdir = repo.join(".git");
    std::fs::create_dir_all(gitdir.join("reftable")).unwrap();
    for e in std::fs::read_dir(case.stack()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), gitdir.join("reftable").join(e.file_name())).unwrap();
    }
    std::fs::write(gitdir.join("HEAD"), "ref: refs/heads/.invalid\n").unwrap();
    std::fs::write(
        gitdir.join("config"),
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefstorage = reftable\n",
    )
    .unwrap();
    let want = case.expected("stack.refs");
    for p in [
        repo.clone(),
        gitdir.clone(),
        gitdir.join("reftable"),
        gitdir.join("reftable/tables.list"),
    ] {
        assert_eq!(ok(&["refs", s(&p)]), want, "{}", p.display());
    }
    ok(&["verify", s(&repo)]);
    // Not a repository, a missing path, a files-backend repository: usage errors (2).
    let files = tmp.path().join("files");
    std::fs::create_dir_all(files.join(".git/refs")).unwrap();
    std::fs::write(files.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for p in [tmp.path().to_path_buf(), tmp.path().join("nope"), files] {
        for cmd in ["refs", "logs", "dump", "stat", "verify"] {
            let o = reftable(&[cmd, s(&p)]);
            assert_eq!(o.status.code(), Some(2), "{cmd} {}", p.display());
            assert!(stderr(&o).starts_with("reftable: "), "{}", stderr(&o));
        }
    }
    // An empty stack (no tables.list yet): nothing listed, and nothing is created.
    let empty = tmp.path().join("empty/.git");
    std::fs::create_dir_all(empty.join("reftable")).unwrap();
    std::fs::write(
        empty.join("config"),
        "[extensions]\n\tobjectFormat = sha256\n",
    )
    .unwrap();
    assert_eq!(ok(&["refs", s(&empty)]), "");
    assert!(ok(&["dump", s(&empty)]).contains("hash sha256"));
    ok(&["verify", s(&empty)]);
    assert_eq!(
        std::fs::read_dir(empty.join("reftable")).unwrap().count(),
        0
    );
    // Usage errors exit 2.
    assert_eq!(reftable(&["refs"]).status.code(), Some(2));
    assert_eq!(reftable(&["frobnicate"]).status.code(), Some(2));
}

// --- corrupt inputs ------------------------------------------------------------------------

fn oid(b: u8) -> ObjectId {
    ObjectId::from_bytes(&[b; 20]).unwrap()
}

fn log(name: &str, ui: u64, msg: &str) -> LogRecord {
    LogRecord {
        refname: name.as_bytes().to_vec(),
        update_index: ui,
        value: LogValue::Update(LogUpdate {
            old_id: oid(0),
            new_id: oid(1),
            name: b"C O Mitter".to_vec(),
            email: b"committer@example.com".to_vec(),
            time: 1_112_911_993,
            tz_offset: -700,
            message: msg.as_bytes().to_vec(),
        }),
    }
}

/// HEAD → main, main, a peeled tag, two reflog entries (as reftable/tests/corrupt.rs).
fn base() -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 2).unwrap();
    let head = RefValue::Symref(b"refs/heads/main".to_vec());
    w.add_ref(&RefRecord::new("HEAD", 1, head)).unwrap();
    w.add_ref(&RefRecord::new(
        "refs/heads/main",
        1,
        RefValue::Object(oid(1)),
    ))
    .unwrap();
    let tag = RefValue::Peeled {
        object: oid(2),
        peeled: oid(1),
    };
    w.add_ref(&RefRecord::new("refs/tags/v1", 2, tag)).unwrap();
    w.add_log(&log("HEAD", 1, "commit (initial): one")).unwrap();
    w.add_log(&log("refs/heads/main", 1, "commit (initial): one"))
        .unwrap();
    w.finish().unwrap()
}

fn be24(b: &[u8]) -> usize {
    (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize
}

/// CRC-32 (zlib's), for rewriting footers.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn fix_crc(b: &mut [u8], footer: usize) {
    let n = b.len();
    let crc = crc32(&b[n - footer..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_be_bytes());
}

/// A log-only table whose log block is incompressible: valid by the format, but its
/// compressed stream extends past the block size git reads (notes §1.9).
fn unreadable_by_git() -> Vec<u8> {
    let ctx = CodecContext {
        hash_size: 20,
        min_update_index: 1,
    };
    let mut w = BlockWriter::new(4096, 16);
    w.reset(BlockType::Log, 24);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    };
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
                    name: ids.2.clone(),
                    email: ids.3.clone(),
                    time: 1,
                    tz_offset: 0,
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

/// The corrupt tables of notes §6 (and a few more), by name.
fn corrupt_tables() -> Vec<(&'static str, Vec<u8>)> {
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

fn assert_problem_lines(out: &str, file: &str, what: &str) {
    assert!(!out.is_empty(), "{what}: no problem printed");
    for line in out.lines() {
        assert!(
            line.starts_with(file),
            "{what}: line without the file: {line}"
        );
    }
}

#[test]
fn verify_reports_every_corrupt_input() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.ref");
    std::fs::write(&good, base()).unwrap();
    ok(&["verify", s(&good)]);
    for (what, bytes) in corrupt_tables() {
        let file = tmp.path().join("corrupt.ref");
        std::fs::write(&file, &bytes).unwrap();
        let o = reftable(&["verify", s(&file)]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{what}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        let out = stdout(&o);
        assert_problem_lines(&out, s(&file), what);
        assert!(
            out.lines().next().unwrap().contains(": offset "),
            "{what}: no offset: {out}"
        );
        if what == "log block git cannot read" {
            assert!(out.contains("git cannot read this block"), "{out}");
        }
        // The other subcommands fail cleanly or succeed; they never crash.
        for cmd in [
            &["refs"][..],
            &["logs"],
            &["dump", "--blocks"],
            &["stat"],
            &["refs", "--json"],
        ] {
            let mut args = cmd.to_vec();
            args.push(s(&file));
            let o = reftable(&args);
            match o.status.code() {
                Some(0) => {}
                Some(1) => assert!(stderr(&o).starts_with("reftable: "), "{what}: {cmd:?}"),
                c => panic!("{what}: {cmd:?} exited with {c:?}: {}", stderr(&o)),
            }
        }
        let out = tmp.path().join("out.ref");
        let o = reftable(&["reencode", s(&file), "-o", s(&out)]);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{what}: reencode");
    }
}

#[test]
fn every_truncation_and_byte_flip_is_handled() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.ref");
    let b = base();
    let mut variants: Vec<Vec<u8>> = (0..b.len()).step_by(7).map(|n| b[..n].to_vec()).collect();
    for i in (0..b.len()).step_by(3) {
        let mut c = b.clone();
        c[i] ^= 0x5a;
        fix_crc(&mut c, 68);
        variants.push(c);
    }
    for v in variants {
        std::fs::write(&file, &v).unwrap();
        let o = reftable(&["verify", s(&file)]);
        let code = o.status.code();
        assert!(matches!(code, Some(0 | 1)), "exit {code:?}: {}", stderr(&o));
        let o = reftable(&["dump", "--blocks", s(&file)]);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "dump: {}",
            stderr(&o)
        );
    }
}

/// A copy of the default case's stack in a temporary directory.
fn stack_copy(tmp: &Path) -> (PathBuf, Vec<String>) {
    let case = cases().into_iter().find(|c| c.name == "default").unwrap();
    let dir = tmp.join("reftable");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(case.stack()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    (dir, case.tables)
}

#[test]
fn verify_reports_broken_stacks() {
    type Breakage = fn(&Path, &[String]) -> &'static str;
    let breakages: Vec<Breakage> = vec![
        |dir, names| {
            std::fs::write(dir.join("../x.ref"), base()).unwrap();
            let list = format!("{}\n../x.ref\n{}\n", names[0], names[1..].join("\n"));
            std::fs::write(dir.join("tables.list"), list).unwrap();
            "escapes the directory"
        },
        |dir, names| {
            std::fs::remove_file(dir.join(&names[1])).unwrap();
            "is listed but missing"
        },
        |dir, names| {
            let list = format!("{}\n{}\n", names.join("\n"), names[0]);
            std::fs::write(dir.join("tables.list"), list).unwrap();
            "listed twice"
        },
        |dir, names| {
            let list = format!("{}\n{}\n{}\n", names[1], names[0], names[2]);
            std::fs::write(dir.join("tables.list"), list).unwrap();
            "is not greater than the max_update_index"
        },
        |dir, names| {
            std::fs::write(dir.join("tables.list"), names.join("\n")).unwrap();
            "does not end with a newline"
        },
        |dir, names| {
            std::fs::copy(
                dir.join(&names[0]),
                dir.join("0x000000000020-0x000000000020-01234567.ref"),
            )
            .unwrap();
            "stray table"
        },
        |dir, _| {
            std::fs::write(dir.join("tables.list.lock"), "").unwrap();
            "leftover lock file"
        },
        |dir, names| {
            let renamed = "0x000000000009-0x000000000009-0123456.ref";
            std::fs::rename(dir.join(&names[1]), dir.join(renamed)).unwrap();
            let list = format!("{}\n{renamed}\n{}\n", names[0], names[2]);
            std::fs::write(dir.join("tables.list"), list).unwrap();
            "is not git's"
        },
        |dir, names| {
            let t = dir.join(&names[2]);
            let mut b = std::fs::read(&t).unwrap();
            let n = b.len();
            b[n - 1] ^= 0xff;
            std::fs::write(&t, b).unwrap();
            "CRC-32"
        },
    ];
    for (i, brk) in breakages.into_iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, names) = stack_copy(tmp.path());
        let want = brk(&dir, &names);
        let o = reftable(&["verify", s(&dir)]);
        let out = stdout(&o);
        assert_eq!(
            o.status.code(),
            Some(1),
            "case {i} ({want}): {out}{}",
            stderr(&o)
        );
        assert!(out.contains(want), "case {i}: want {want:?} in:\n{out}");
        assert_problem_lines(&out, s(&dir), want);
        // Reading such a stack fails cleanly or works; never a crash, never a file written.
        let before: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        for cmd in ["refs", "logs", "dump", "stat"] {
            let o = reftable(&[cmd, s(&dir)]);
            assert!(
                matches!(o.status.code(), Some(0 | 1)),
                "case {i}: {cmd}: {}",
                stderr(&o)
            );
        }
        let after: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(before.len(), after.len(), "case {i}: files changed");
    }
}

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

// --- a real git ----------------------------------------------------------------------------

fn git_binary() -> String {
    std::env::var("REFTABLE_TEST_GIT").unwrap_or_else(|_| "git".into())
}

struct Git {
    bin: String,
    home: PathBuf,
    repo: PathBuf,
    tick: std::cell::Cell<u64>,
}

impl Git {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.args(args).current_dir(&self.repo);
        for (k, _) in std::env::vars() {
            if k.starts_with("GIT_") {
                c.env_remove(k);
            }
        }
        let date = format!("{} -0700", self.tick.get());
        c.env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "A U Thor")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "C O Mitter")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .env("TZ", "UTC")
            .env("LC_ALL", "C");
        c
    }

    fn run(&self, args: &[&str]) -> String {
        self.tick.set(self.tick.get() + 60);
        let o = self.cmd(args).output().expect("run git");
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    }
}

fn setup_git(tmp: &Path) -> Option<Git> {
    let require = std::env::var("REFTABLE_REQUIRE_GIT").is_ok_and(|v| v == "1");
    let g = Git {
        bin: git_binary(),
        home: tmp.join("home"),
        repo: tmp.join("repo"),
        tick: std::cell::Cell::new(1_112_911_993),
    };
    std::fs::create_dir_all(&g.home).unwrap();
    let init = Command::new(&g.bin)
        .args(["init", "-q", "--ref-format=reftable", "-b", "main"])
        .arg(&g.repo)
        .env("HOME", &g.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output();
    match init {
        Ok(o) if o.status.success() => Some(g),
        other => {
            let why = match other {
                Ok(o) => stderr(&o),
                Err(e) => e.to_string(),
            };
            assert!(
                !require,
                "REFTABLE_REQUIRE_GIT=1 but '{}' cannot make a reftable repository: {why}",
                g.bin
            );
            eprintln!(
                "NOTICE: skipping the real-git test: '{}' cannot make a reftable repository ({}); set REFTABLE_TEST_GIT",
                g.bin,
                why.trim()
            );
            None
        }
    }
}

#[test]
fn agrees_with_real_git() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(g) = setup_git(tmp.path()) else {
        return;
    };
    g.run(&["commit", "-q", "--allow-empty", "-m", "first"]);
    g.run(&["commit", "-q", "--allow-empty", "-m", "second\\with\ttab"]);
    g.run(&["branch", "topic"]);
    g.run(&["tag", "light"]);
    g.run(&["tag", "-a", "-m", "annotated", "v1"]);
    g.run(&[
        "symbolic-ref",
        "-m",
        "sym: point at main",
        "refs/heads/sym",
        "refs/heads/main",
    ]);
    g.run(&[
        "update-ref",
        "-m",
        "custom: create",
        "--create-reflog",
        "refs/custom/x",
        "HEAD~1",
    ]);
    g.run(&["branch", "gone"]);
    g.run(&["branch", "-D", "gone"]);
    g.run(&["commit", "-q", "--allow-empty", "-m", "third"]);
    g.run(&[
        "update-ref",
        "-m",
        "topic: move",
        "refs/heads/topic",
        "HEAD",
    ]);

    let repo = s(&g.repo);
    // refs == for-each-ref --include-root-refs (symrefs here point one level deep).
    let format = "%(refname) %(if)%(symref)%(then)ref:%(symref)%(else)%(objectname)\
                  %(if)%(*objectname)%(then) %(*objectname)%(end)%(end)";
    let git_refs = g.run(&[
        "for-each-ref",
        "--include-root-refs",
        &format!("--format={format}"),
    ]);
    let mut want: Vec<&str> = git_refs.lines().collect();
    want.sort();
    let ours = ok(&["refs", repo]);
    assert_eq!(ours.lines().collect::<Vec<_>>(), want);
    assert!(ours.contains("refs/tags/v1 ") && ours.contains("HEAD ref:refs/heads/main"));

    // logs == log -g for every ref with a reflog.
    let mut want = String::new();
    let mut names: Vec<String> = g
        .run(&["reflog", "list"])
        .lines()
        .map(String::from)
        .collect();
    names.sort();
    for name in &names {
        let out = g.run(&[
            "log",
            "-g",
            "--date=raw",
            "--format=%H%x01%gn%x01%ge%x01%gd%x01%gs",
            name,
            "--",
        ]);
        for line in out.lines() {
            let f: Vec<&str> = line.split('\x01').collect();
            // %gd with --date=raw: <ref>@{<time> <tz>}
            let when = f[3].split("@{").nth(1).unwrap().trim_end_matches('}');
            let msg = f[4].replace('\\', "\\\\").replace('\t', "\\t");
            want.push_str(&format!(
                "{name} {} {} <{}> {when} {msg}\n",
                f[0], f[1], f[2]
            ));
        }
    }
    let ours = ok(&["logs", repo]);
    assert_eq!(as_git_logs(&ours), want);
    // git turns the tab into a space; the backslash is escaped.
    assert!(ours.contains("commit: second\\\\with tab\n"), "{ours}");

    // A clean bill of health for what git wrote, and the other subcommands work.
    let o = reftable(&["verify", repo]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    ok(&["stat", repo]);
    ok(&["dump", "--blocks", repo]);
    let o = reftable(&["refs", "--tombstones", repo]);
    assert!(stdout(&o).contains("refs/heads/gone deleted") || !stdout(&o).contains("gone"));

    // After git pack-refs: one table, re-encoded byte-identically.
    g.run(&["pack-refs"]);
    let list = std::fs::read_to_string(g.repo.join(".git/reftable/tables.list")).unwrap();
    let table = g
        .repo
        .join(".git/reftable")
        .join(list.lines().next().unwrap());
    let out = tmp.path().join("re.ref");
    let said = ok(&["reencode", s(&table), "-o", s(&out)]);
    assert!(said.contains("byte-identical"), "{said}");
    ok(&["verify", repo]);
}

#[test]
fn special_files_do_not_block() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, names) = stack_copy(tmp.path());
    let fifo = "0x00000000000b-0x00000000000b-00000000.ref";
    let made = Command::new("mkfifo").arg(dir.join(fifo)).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("NOTICE: skipping: mkfifo is not available");
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
