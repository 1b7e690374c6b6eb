//! Tables written by real git (fixtures/make-fixtures.sh, git 2.47.3): each is read
//! completely and equals git's own listing of it; each re-encodes byte-identically from its
//! records with the options git used; t0613's block layouts hold.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use reftable::table::Record;
use reftable::{
    HashId, LogRecord, LogValue, MergedTable, RefRecord, RefValue, Table, WriteOptions, Writer,
};

fn repos() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repos")
}

struct Case {
    name: String,
    dir: PathBuf,
    opts: WriteOptions,
    tables: Vec<(String, Table)>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(repos())
        .expect("fixtures/repos exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("options").exists())
        .collect();
    dirs.sort();
    for dir in dirs {
        let options = std::fs::read_to_string(dir.join("options")).unwrap();
        let mut opts = WriteOptions::default();
        for line in options.lines() {
            let (k, v) = line.split_once('=').unwrap();
            match k {
                "hash" => {
                    opts.hash = if v == "sha256" {
                        HashId::Sha256
                    } else {
                        HashId::Sha1
                    }
                }
                "block_size" => opts.block_size = v.parse().unwrap(),
                "restart_interval" => opts.restart_interval = v.parse().unwrap(),
                "index_objects" => opts.index_objects = v == "true",
                _ => {}
            }
        }
        let list = std::fs::read_to_string(dir.join("reftable/tables.list")).unwrap();
        let tables = list
            .lines()
            .filter(|l| !l.is_empty())
            .map(|n| {
                let t = Table::open(dir.join("reftable").join(n)).unwrap();
                (n.to_string(), t)
            })
            .collect();
        out.push(Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            dir,
            opts,
            tables,
        });
    }
    assert!(out.len() >= 15, "expected the committed fixture cases");
    out
}

fn format_refs(refs: impl IntoIterator<Item = RefRecord>) -> String {
    let mut s = String::new();
    for r in refs {
        let name = String::from_utf8_lossy(&r.refname);
        match &r.value {
            RefValue::Deletion => continue,
            RefValue::Object(id) => writeln!(s, "{name} {id}"),
            RefValue::Peeled {
                object: value,
                peeled,
            } => writeln!(s, "{name} {value} {peeled}"),
            RefValue::Symref(t) => writeln!(s, "{name} ref:{}", String::from_utf8_lossy(t)),
        }
        .unwrap();
    }
    s
}

/// git's `log -g` view: no tombstones, no existence markers, no entries without a new
/// commit.
fn format_logs(logs: impl IntoIterator<Item = LogRecord>) -> String {
    let mut s = String::new();
    for l in logs {
        let LogValue::Update(u) = &l.value else {
            continue;
        };
        if u.new_id.is_null() {
            continue;
        }
        let mut msg = u.message.clone();
        if msg.last() == Some(&b'\n') {
            msg.pop();
        }
        let msg = String::from_utf8_lossy(&msg)
            .replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\t', "\\t");
        let who = &u.committer;
        writeln!(
            s,
            "{} {} {} <{}> {} {} {msg}",
            String::from_utf8_lossy(&l.refname),
            u.new_id,
            String::from_utf8_lossy(&who.name),
            String::from_utf8_lossy(&who.email),
            who.time,
            who.tz_offset,
        )
        .unwrap();
    }
    s
}

fn expected(case: &Case, file: &str) -> String {
    std::fs::read_to_string(case.dir.join("expected").join(file))
        .unwrap_or_else(|e| panic!("{}: {file}: {e}", case.name))
}

fn all<R: Record>(it: impl Iterator<Item = reftable::Result<R>>) -> Vec<R> {
    it.collect::<Result<_, _>>().unwrap()
}

#[test]
fn each_table_equals_gits_listing() {
    let mut checked = 0;
    for case in cases() {
        for (name, t) in &case.tables {
            let refs = all(t.refs().unwrap());
            assert_eq!(
                format_refs(refs),
                expected(&case, &format!("{name}.refs")),
                "{}: {name}: refs",
                case.name
            );
            let logs = all(t.logs().unwrap());
            assert_eq!(
                format_logs(logs),
                expected(&case, &format!("{name}.logs")),
                "{}: {name}: logs",
                case.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} tables checked");
}

#[test]
fn each_stack_equals_gits_listing() {
    for case in cases() {
        let tables = case.tables.iter().map(|(_, t)| t.clone()).collect();
        let merged = MergedTable::new(tables, case.opts.hash).unwrap();
        let refs = all(merged.refs().unwrap());
        // Names are unique and sorted.
        assert!(refs.windows(2).all(|w| w[0].refname < w[1].refname));
        assert_eq!(
            format_refs(refs),
            expected(&case, "stack.refs"),
            "{}: stack refs",
            case.name
        );
        let logs = all(merged.logs().unwrap());
        assert_eq!(
            format_logs(logs),
            expected(&case, "stack.logs"),
            "{}: stack logs",
            case.name
        );
    }
}

#[test]
fn each_table_reencodes_byte_identically() {
    let (mut identical, mut inflated_only) = (0, 0);
    for case in cases() {
        for (name, t) in &case.tables {
            let refs = all(t.refs().unwrap());
            let logs = all(t.logs().unwrap());
            let mut w = Writer::new(Vec::new(), case.opts);
            w.set_limits(t.min_update_index(), t.max_update_index())
                .unwrap();
            for r in &refs {
                w.add_ref(r).unwrap();
            }
            for l in &logs {
                w.add_log_verbatim(l).unwrap();
            }
            let out = w.finish().unwrap();
            if out == t.bytes() {
                identical += 1;
                continue;
            }
            let at = out
                .iter()
                .zip(t.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(out.len().min(t.bytes().len()));
            let what = format!(
                "{}: {name}: re-encoded table differs at byte {at} (ours {} bytes, git's {})",
                case.name,
                out.len(),
                t.bytes().len()
            );
            // With the C zlib (default) the bytes must be git's. With zlib-rs only compressed
            // log bytes may differ: the blocks must hold the same inflated contents.
            if cfg!(feature = "zlib") {
                panic!("{what}");
            }
            let ours = Table::from_bytes("ours", out).unwrap();
            assert_eq!(block_contents(&ours), block_contents(t), "{what}");
            inflated_only += 1;
        }
    }
    eprintln!(
        "re-encoded tables: {identical} byte-identical, {inflated_only} identical once log blocks are inflated"
    );
}

/// Type and inflated bytes of every non-index block (index blocks hold offsets, which move
/// when a compressed log block has another length).
fn block_contents(t: &Table) -> Vec<(reftable::table::BlockType, Vec<u8>)> {
    let hs = t.info().header_size();
    t.blocks()
        .map(|b| b.unwrap())
        .filter(|b| b.block_type != reftable::table::BlockType::Index)
        .map(|b| {
            let ho = if b.offset == 0 { hs } else { 0 };
            let blk = reftable::codec::block::Block::parse(
                &t.bytes()[b.offset as usize..t.info().footer_offset as usize],
                ho,
                t.info().block_size as usize,
            )
            .unwrap();
            (b.block_type, blk.data()[ho..].to_vec())
        })
        .collect()
}

#[test]
fn t0613_layouts() {
    let mut checked = 0;
    for case in cases() {
        let Ok(layout) = std::fs::read_to_string(case.dir.join("expected/t0613-layout")) else {
            continue;
        };
        assert_eq!(case.tables.len(), 1, "{}", case.name);
        let t = &case.tables[0].1;
        // t0613 prints where the restart table starts and the restart count.
        let got: String = t
            .blocks()
            .map(|b| {
                let b = b.unwrap();
                format!(
                    "{} {} {}\n",
                    b.block_type.byte() as char,
                    b.restart_off,
                    b.restart_count
                )
            })
            .collect();
        assert_eq!(got, layout, "{}", case.name);
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} t0613 cases");
}

#[test]
fn lookups_agree_with_iteration() {
    for case in cases() {
        for (name, t) in &case.tables {
            let refs = all(t.refs().unwrap());
            for r in &refs {
                assert_eq!(
                    t.ref_record(&r.refname).unwrap().as_ref(),
                    Some(r),
                    "{}: {name}",
                    case.name
                );
            }
            // Object lookups (through the obj index when present) equal a filter.
            let mut by_id: BTreeMap<_, Vec<&RefRecord>> = BTreeMap::new();
            for r in &refs {
                for id in r.value_id().into_iter().chain(r.peeled_id()) {
                    let v = by_id.entry(*id).or_default();
                    if v.last().map(|x| &x.refname) != Some(&r.refname) {
                        v.push(r);
                    }
                }
            }
            for (id, want) in by_id.iter().take(200) {
                let got: Vec<RefRecord> = t.refs_for(id).unwrap().map(Result::unwrap).collect();
                assert_eq!(
                    got.iter().collect::<Vec<_>>(),
                    *want,
                    "{}: {name}: refs_for {id}",
                    case.name
                );
            }
            let logs = all(t.logs().unwrap());
            for l in logs.iter().step_by(7) {
                let got = t
                    .seek_log_at(&l.refname, l.update_index)
                    .unwrap()
                    .next()
                    .unwrap()
                    .unwrap();
                assert_eq!(&got, l, "{}: {name}", case.name);
            }
        }
    }
}
