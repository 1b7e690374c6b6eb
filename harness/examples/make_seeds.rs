//! Write the seed corpora of the byte-level fuzz targets from the git-written fixtures.
//!
//! `cargo run -p reftable-harness --example make_seeds` (from the workspace root) fills
//! `fuzz/corpus/{table_read,block_decode,record_decode,stack_read}/` with files named by a
//! hash of their contents, so re-running adds nothing twice (plus small synthetic tables with
//! multi-level indexes from `seeds::synthetic_tables`). Tables larger than 20 KB, and
//! stacks larger than 40 KB, are left out to keep libFuzzer's maximum input length small.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use reftable::Table;
use reftable_harness::seeds;

const MAX_TABLE: usize = 20_000;
const MAX_STACK: usize = 40_000;
const MAX_PER_TABLE: usize = 40;

fn save(dir: &Path, data: &[u8]) {
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("seed-{:016x}", h.finish())), data).unwrap();
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = root.join("fuzz/corpus");
    for table in seeds::synthetic_tables() {
        let t = Table::from_bytes("synthetic.ref", table.clone()).unwrap();
        save(&corpus.join("table_read"), &table);
        for s in seeds::blocks(&t).into_iter().take(MAX_PER_TABLE) {
            save(&corpus.join("block_decode"), &s);
        }
    }
    let mut repos: Vec<PathBuf> = std::fs::read_dir(root.join("fixtures/repos"))
        .unwrap()
        .map(|e| e.unwrap().path().join("reftable"))
        .filter(|p| p.join("tables.list").exists())
        .collect();
    repos.sort();
    for dir in repos {
        let list = std::fs::read(dir.join("tables.list")).unwrap();
        let mut files = Vec::new();
        for name in list.split(|&b| b == b'\n').filter(|n| !n.is_empty()) {
            let path = dir.join(String::from_utf8_lossy(name).as_ref());
            let bytes = std::fs::read(&path).unwrap();
            let t = Table::from_bytes(&path, bytes.clone()).unwrap();
            if bytes.len() <= MAX_TABLE {
                save(&corpus.join("table_read"), &bytes);
                for s in seeds::blocks(&t).into_iter().take(MAX_PER_TABLE) {
                    save(&corpus.join("block_decode"), &s);
                }
                for s in seeds::records(&t)
                    .into_iter()
                    .step_by(7)
                    .take(MAX_PER_TABLE)
                {
                    save(&corpus.join("record_decode"), &s);
                }
            }
            files.push((name.to_vec(), bytes));
        }
        let stack = seeds::stack(&list, &files);
        if stack.len() <= MAX_STACK {
            save(&corpus.join("stack_read"), &stack);
        }
    }
}
