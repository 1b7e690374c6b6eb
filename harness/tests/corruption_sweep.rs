//! Deterministic corruption sweep: every truncation and single-byte change of each
//! git-written fixture table (all positions for tables up to [`FULL_SWEEP`] bytes, an even
//! sample of positions beyond) is read through the `table_read` fuzz target body, which
//! opens it, drains every section, walks the blocks, seeks and looks up by id. Each must
//! give an error or valid data: never a panic, and never more work or memory than the
//! target's resource bounds allow (the counting allocator is installed).

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reftable_harness::alloc::CountingAlloc;
use reftable_harness::fuzzing::table_read;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Tables up to this size get every position changed and every truncation.
const FULL_SWEEP: usize = 4096;

/// Positions (and truncation lengths) tried in a larger table.
const SAMPLES: usize = 192;

/// Longest one read of a corrupted table may take, even unoptimized: a read that takes
/// longer is as good as a hang.
const SLOW: Duration = Duration::from_secs(5);

fn fixture_tables() -> Vec<(PathBuf, Vec<u8>)> {
    let repos = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/repos");
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&repos)
        .unwrap()
        .map(|e| e.unwrap().path().join("reftable"))
        .collect();
    dirs.sort();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "ref"))
            .collect();
        paths.sort();
        for p in paths {
            let bytes = std::fs::read(&p).unwrap();
            if seen.insert(bytes.clone()) {
                out.push((p, bytes));
            }
        }
    }
    out
}

/// Positions to change (or lengths to truncate to) in `0..len`: all of them for small
/// tables, else an even sample that always includes the header and the footer.
fn positions(len: usize) -> Vec<usize> {
    if len <= FULL_SWEEP {
        return (0..len).collect();
    }
    let mut p: BTreeSet<usize> = (0..SAMPLES).map(|i| i * len / SAMPLES).collect();
    p.extend(0..32);
    p.extend(len.saturating_sub(72)..len);
    p.into_iter().collect()
}

/// The replacements tried at one position.
fn replacements(byte: u8, small: bool) -> Vec<u8> {
    let all = [
        byte ^ 0x01,
        byte ^ 0x80,
        byte ^ 0xff,
        0x00,
        0xff,
        byte.wrapping_add(1),
    ];
    let mut v: Vec<u8> = all.into_iter().filter(|&b| b != byte).collect();
    v.sort_unstable();
    v.dedup();
    if !small {
        v.truncate(2);
    }
    v
}

fn check(what: &str, data: &[u8], failures: &mut Vec<String>) {
    let start = Instant::now();
    if catch_unwind(AssertUnwindSafe(|| table_read(data))).is_err() {
        failures.push(what.to_string());
    }
    let took = start.elapsed();
    if took > SLOW {
        failures.push(format!("{what}: took {took:?}"));
    }
}

/// The sweep runs as [`SHARDS`] tests, case `i` in shard `i % SHARDS`, so the test harness
/// spreads it over the machine's cores (the allocation counters are per thread).
const SHARDS: usize = 4;

#[test]
fn every_truncation_and_byte_change_is_an_error_or_valid_0() {
    sweep(0);
}

#[test]
fn every_truncation_and_byte_change_is_an_error_or_valid_1() {
    sweep(1);
}

#[test]
fn every_truncation_and_byte_change_is_an_error_or_valid_2() {
    sweep(2);
}

#[test]
fn every_truncation_and_byte_change_is_an_error_or_valid_3() {
    sweep(3);
}

/// The corrupted tables of one shard: each truncation and each byte change of each fixture
/// table is one case.
fn sweep(shard: usize) {
    let tables = fixture_tables();
    assert!(
        tables.len() >= 40,
        "only {} distinct fixture tables",
        tables.len()
    );
    let mut failures = Vec::new();
    let mut cases = 0usize;
    let mut mine = 0usize;
    let start = Instant::now();
    let mut take = || {
        cases += 1;
        let yes = (cases - 1) % SHARDS == shard;
        mine += usize::from(yes);
        yes
    };
    for (path, bytes) in &tables {
        let name = path.file_name().unwrap().to_string_lossy();
        let small = bytes.len() <= FULL_SWEEP;
        let pos = positions(bytes.len());
        for &len in &pos {
            if take() {
                check(
                    &format!("{name}: truncated to {len}"),
                    &bytes[..len],
                    &mut failures,
                );
            }
        }
        let mut changed = bytes.clone();
        for &i in &pos {
            for b in replacements(bytes[i], small) {
                if take() {
                    changed[i] = b;
                    check(
                        &format!("{name}: byte {i} = 0x{b:02x}"),
                        &changed,
                        &mut failures,
                    );
                }
            }
            changed[i] = bytes[i];
        }
    }
    eprintln!(
        "corruption sweep, shard {shard} of {SHARDS}: {mine} corrupted tables from {} fixtures in {:?}",
        tables.len(),
        start.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {mine} corrupted tables fail:\n  {}",
        failures.len(),
        failures
            .iter()
            .take(50)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}
