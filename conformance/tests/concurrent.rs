//! The concurrent mode against the test git: git's and our writer processes on one
//! repository, with compaction and reflog expiry from both, lose nothing, and git does what
//! the forced orders after the round require; and (in a
//! test-hooks build, `ci/test-hooks.sh`) a planted lost update of ours is caught, minimized
//! and written with its interleaving and a serial replay.

mod common;

use std::path::PathBuf;

use conformance::concurrent::{run_concurrent, ConcurrentConfig};
use conformance::defects::registry::{default_path, ExpectedSet};
#[cfg(reftable_test_hooks)]
use conformance::finding::divergence::Finding;

fn config(txns: u32) -> ConcurrentConfig {
    ConcurrentConfig::new(7, txns, PathBuf::from(env!("CARGO_BIN_EXE_conformance")))
}

// The ordinary build runs it; the test-hooks build runs only what needs its hooks.
#[cfg(not(reftable_test_hooks))]
#[test]
fn git_and_our_writers_lose_nothing() {
    let Some(env) = common::env() else { return };
    let known = ExpectedSet::load(&default_path()).unwrap();
    let mut cfg = config(150);
    cfg.maintenance_every = 10;
    cfg.minimize = false;
    let r = run_concurrent(&env, &known, &cfg).unwrap();
    assert_eq!(r.unexpected(), 0, "{}", r.markdown());
    for (who, t) in ["git", "ours"].iter().zip(r.transactions) {
        assert_eq!(t[0], 2 * 150, "{who}: every attempt reported");
        assert!(
            t[1] > 150,
            "{who}: only {} acknowledged\n{}",
            t[1],
            r.markdown()
        );
    }
    for (who, m) in ["git", "ours"].iter().zip(r.maintenance) {
        assert!(m[0] == 2 * 15 && m[1] > 0, "{who}: maintenance {m:?}");
    }
    assert!(
        r.samples[0] > 0 && r.samples[1] > 0,
        "samples {:?}",
        r.samples
    );
    // The forced orders run after the round: where strace is (`.ci/run` installs it), each
    // is forced on the test git, which does what each one requires.
    if conformance::syscalls::strace::available() {
        assert_eq!(r.forced.len(), 5, "{}", r.markdown());
    } else {
        assert_eq!(r.not_forced.len(), 1, "{}", r.markdown());
    }
}

#[cfg(reftable_test_hooks)]
#[test]
fn a_planted_lost_update_is_caught_minimized_and_written() {
    let Some(env) = common::env() else { return };
    let known = ExpectedSet::load(&default_path()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut cfg = config(80);
    cfg.plant = Some("no-reload-under-lock".into());
    cfg.out = Some(out.path().to_path_buf());
    let r = run_concurrent(&env, &known, &cfg).unwrap();
    // The planted writer writes tables.list from a list it did not read again under the
    // lock: that drops the tables other writers added meanwhile, a lost update. Where one of
    // them had compacted, the list also names a table that is gone (a final stack our
    // reader cannot read); the updates are then looked for in the listed tables that still
    // open, so the lost update shows whatever the interleaving.
    let caught = |f: &Finding| f.class == "lost update" && f.expected.is_none();
    assert!(r.findings.iter().any(caught), "{}", r.markdown());
    let dir = PathBuf::from(r.finding_dir.as_deref().expect("written"));
    let small: ConcurrentConfig =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    // Which dimension shrinks depends on the interleavings the scheduler gives the smaller
    // runs (four tries each); at least one must.
    assert!(
        small.txns < cfg.txns
            || small.git_writers < cfg.git_writers
            || small.our_writers < cfg.our_writers
            || small.shared < cfg.shared
            || small.maintenance_every < cfg.maintenance_every,
        "not minimized: {small:?}\n{}",
        r.markdown()
    );
    assert!(r
        .minimized
        .as_deref()
        .unwrap()
        .contains(&format!("--concurrent-txns {}", small.txns)));
    let interleaving = std::fs::read_to_string(dir.join("interleaving.txt")).unwrap();
    assert!(
        interleaving.contains("committed \"concurrent w"),
        "{interleaving}"
    );
    let findings = std::fs::read_to_string(dir.join("findings.txt")).unwrap();
    // The smaller run shows the class minimized on, the first run's most frequent.
    let shown = ["lost update", "final stack unreadable"];
    assert!(shown.iter().any(|c| findings.contains(c)), "{findings}");
    assert!(findings.contains("serial replay"), "{findings}");
    assert!(dir.join("serial/case.json").is_file() && dir.join("stack/tables.list").is_file());
    let rerun = std::fs::read_to_string(dir.join("rerun.sh")).unwrap();
    assert!(
        rerun.contains("REFTABLE_PLANT=no-reload-under-lock"),
        "{rerun}"
    );
}
