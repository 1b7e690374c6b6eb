//! Replays every committed fuzz input on stable, without libFuzzer: each file of
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` goes through the same function
//! the fuzz binary calls (typed inputs decoded exactly as libfuzzer-sys does), under the
//! same counting allocator, so the resource bounds are checked too.
//!
//! To add a reproducer: put the (minimized) file in `fuzz/regressions/<target>/` with a
//! name that says what it found, and run `cargo test -p reftable-harness --test fuzz_replay`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use reftable_harness::alloc::CountingAlloc;
use reftable_harness::fuzzing::{self, TARGETS};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `dir`, sorted, without hidden (temporary) ones; none when it is missing.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    out.sort();
    out
}

/// Fewer files than this in a target's corpus means the corpus was lost or the path is
/// wrong: replaying nothing must not pass. Every committed corpus holds well over this.
const MIN_CORPUS_FILES: usize = 100;

/// Run every corpus and regression file of `target`; fail listing every file that panics,
/// and fail when the corpus is (nearly) empty.
fn replay(target: &str) {
    let mut failures = Vec::new();
    let mut count = 0;
    for kind in ["corpus", "regressions"] {
        for path in files(&fuzz_dir().join(kind).join(target)) {
            // A running fuzzer may delete files it has reduced: skip those.
            let Ok(data) = std::fs::read(&path) else {
                continue;
            };
            count += 1;
            if catch_unwind(AssertUnwindSafe(|| fuzzing::run(target, &data))).is_err() {
                failures.push(path.display().to_string());
            }
        }
    }
    eprintln!("{target}: replayed {count} files");
    assert!(
        count >= MIN_CORPUS_FILES,
        "{target}: only {count} files under {} (corpus missing?)",
        fuzz_dir().join("corpus").join(target).display()
    );
    assert!(
        failures.is_empty(),
        "{target}: {} of {count} files fail (messages above):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

#[test]
fn block_decode() {
    replay("block_decode");
}

#[test]
fn record_decode() {
    replay("record_decode");
}

#[test]
fn table_read() {
    replay("table_read");
}

#[test]
fn stack_read() {
    replay("stack_read");
}

#[test]
fn write_roundtrip() {
    replay("write_roundtrip");
}

#[test]
fn merged_model() {
    replay("merged_model");
}

#[test]
fn refdb_model() {
    replay("refdb_model");
}

/// Every target has a fuzz binary, a replay test above and a seeded or generated corpus;
/// every fuzz binary is a target.
#[test]
fn targets_match_the_fuzz_crate() {
    let mut bins: Vec<String> = files(&fuzz_dir().join("fuzz_targets"))
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    bins.sort();
    let mut targets: Vec<String> = TARGETS.iter().map(|t| t.to_string()).collect();
    targets.sort();
    assert_eq!(bins, targets);
    // `file!()` is relative to the workspace, tests run in the crate directory: read this
    // file through the manifest directory, and fail when it cannot be read.
    let this = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_replay.rs");
    let this = std::fs::read_to_string(&this)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", this.display()));
    for t in TARGETS {
        assert!(
            this.contains(&format!("replay(\"{t}\");")),
            "no replay test for {t}"
        );
    }
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    for t in TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{t}\"")),
            "no [[bin]] for {t}"
        );
    }
}

/// The allocator is really counting here, so the allocation bounds are checked.
#[test]
fn counting_allocator_is_installed() {
    let (v, peak) = reftable_harness::alloc::measure(|| vec![0u8; 1 << 16]);
    assert_eq!(v.len(), 1 << 16);
    assert!(peak.unwrap() >= 1 << 16);
}

/// The `arbitrary` crate decodes typed inputs; another version may decode the same bytes into
/// another input. The fuzz crate and this test must use the same one.
#[test]
fn arbitrary_versions_match() {
    let version = |lock: &Path| {
        let text = std::fs::read_to_string(lock).unwrap();
        let at = text
            .find("name = \"arbitrary\"\nversion = \"")
            .unwrap_or_else(|| panic!("no arbitrary in {}", lock.display()));
        let rest = &text[at + "name = \"arbitrary\"\nversion = \"".len()..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    assert_eq!(
        version(&root.join("Cargo.lock")),
        version(&fuzz_dir().join("Cargo.lock")),
        "arbitrary differs between Cargo.lock and fuzz/Cargo.lock"
    );
}
