//! The faults and power-loss modes end to end: injected system-call faults reach both sides
//! (some writes are refused cleanly, some acknowledged) and our side has no defect; crash
//! states of git's unsynced writes are bad and ours with fsync on are not; and, in a
//! test-hooks build, a library that reports a committed write as failed (as git does) fails
//! the faults run, one that does not sync the directory fails the power-loss run.

mod common;

use std::path::Path;
use std::process::Command;

/// Run `conformance faults` on one case; its exit code and JSON report.
fn faults(dir: &Path, plant: Option<&str>) -> (Option<i32>, serde_json::Value) {
    let out = dir.join("findings");
    let mut args = vec!["faults", "--cases", "1", "--ops-per-case", "2"];
    args.extend(["--max-points", "400", "--out", out.to_str().unwrap()]);
    if plant.is_some() {
        // A planted defect of our library shows in the operations; migrations are git's.
        args.push("--no-migrations");
    }
    mode(dir, &args, plant)
}

/// Run `conformance powerloss` on one operation; its exit code and JSON report.
fn powerloss(dir: &Path, plant: Option<&str>) -> (Option<i32>, serde_json::Value) {
    mode(
        dir,
        &["powerloss", "--cases", "1", "--ops-per-case", "1"],
        plant,
    )
}

/// Run a mode with `args`; its exit code and JSON report.
fn mode(dir: &Path, args: &[&str], plant: Option<&str>) -> (Option<i32>, serde_json::Value) {
    let report = dir.join("report.json");
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.args(args).arg("--report-json").arg(&report);
    if let Some(p) = plant {
        c.env("REFTABLE_PLANT", p);
    }
    let out = c.output().unwrap();
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), serde_json::from_str(&text).unwrap())
}

/// The classes of `side`'s trials.
fn classes(r: &serde_json::Value, side: &str) -> Vec<String> {
    trials(r, side)
        .into_iter()
        .map(|t| t["class"].as_str().unwrap().to_string())
        .collect()
}

fn strace_or_skip() -> bool {
    if conformance::syscalls::strace::available() {
        return true;
    }
    assert!(
        std::env::var_os("REFTABLE_REQUIRE_GIT").is_none(),
        "strace is required here (apt-get install strace)"
    );
    eprintln!("SKIPPED: no strace");
    false
}

#[cfg(not(reftable_test_hooks))]
#[test]
fn faults_reach_both_sides_and_ours_has_no_defect() {
    let Some(_env) = common::env() else { return };
    if !strace_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, r) = faults(dir.path(), None);
    assert_eq!(
        code,
        Some(0),
        "{}",
        serde_json::to_string_pretty(&r).unwrap()
    );
    for side in ["git", "ours"] {
        let c = classes(&r, side);
        assert!(c.len() >= 20, "{side}: {} trials", c.len());
        for want in ["acknowledged", "clean-refusal"] {
            assert!(c.iter().any(|x| x == want), "{side}: no {want} in {c:?}");
        }
    }
    let bad = [
        "crash",
        "unloadable-stack",
        "half-applied",
        "lost-acknowledged-update",
    ];
    let ours = classes(&r, "ours");
    assert!(
        !ours
            .iter()
            .any(|c| bad.contains(&c.as_str()) || c == "committed-but-reported-failed"),
        "{ours:?}"
    );
    // Short writes (a file size limit halfway through a write) are tried on both sides,
    // and each reached the write it was meant to cut.
    for side in ["git", "ours"] {
        let short: Vec<&serde_json::Value> = trials(&r, side)
            .into_iter()
            .filter(|t| t["point"]["errno"] == "SHORT")
            .collect();
        assert!(!short.is_empty(), "{side}: no short write tried");
        for t in short {
            assert!(t["injected"].is_string(), "{side}: {t}");
        }
    }
    // git's migrations of the case's refs (to reftable and back) were tried, and the faults
    // reached both a clean refusal and an acknowledged migration.
    let migrations = r["migrations"].as_array().unwrap();
    assert_eq!(migrations.len(), 2, "{migrations:?}");
    let migrated: Vec<&str> = migrations
        .iter()
        .flat_map(|m| m["git"]["trials"].as_array().unwrap())
        .map(|t| t["class"].as_str().unwrap())
        .collect();
    for want in ["acknowledged", "clean-refusal"] {
        assert!(migrated.contains(&want), "no {want} in {migrated:?}");
    }
    // Our import (the migration to reftable) under the same faults: tried, all or nothing.
    let ours: Vec<&str> = migrations
        .iter()
        .filter_map(|m| m["ours"]["trials"].as_array())
        .flatten()
        .map(|t| t["class"].as_str().unwrap())
        .collect();
    assert!(
        ours.contains(&"acknowledged") && ours.contains(&"clean-refusal"),
        "{ours:?}"
    );
    assert!(
        ours.iter()
            .all(|c| ["acknowledged", "acknowledged-with-warning", "clean-refusal"].contains(c)),
        "{ours:?}"
    );
}

/// Every trial of `side` in a faults report.
fn trials<'a>(r: &'a serde_json::Value, side: &str) -> Vec<&'a serde_json::Value> {
    let mut out = Vec::new();
    for op in r["ops"].as_array().into_iter().flatten() {
        for s in op["sides"].as_array().into_iter().flatten() {
            if s["side"] == side {
                out.extend(s["trials"].as_array().into_iter().flatten());
            }
        }
    }
    out
}

#[cfg(reftable_test_hooks)]
#[test]
fn a_committed_write_reported_failed_fails_the_run() {
    let Some(_env) = common::env() else { return };
    if !strace_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, r) = faults(dir.path(), Some("after-commit-error-returned"));
    assert_eq!(code, Some(1), "the planted defect must fail the run");
    let ours = classes(&r, "ours");
    assert!(
        ours.iter().any(|c| c == "committed-but-reported-failed"),
        "{ours:?}"
    );
}

/// The power-loss report's row for `setting`: (states, bad states, lost acknowledged).
fn setting(r: &serde_json::Value, name: &str) -> (u64, u64, u64) {
    let s = r["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"]["name"] == name)
        .unwrap_or_else(|| panic!("no setting {name}"));
    let n = |c: &str| s["classes"][c].as_u64().unwrap_or(0);
    let bad = n("unloadable") + n("neither") + n("lost-acknowledged");
    (s["states"].as_u64().unwrap(), bad, n("lost-acknowledged"))
}

#[cfg(not(reftable_test_hooks))]
#[test]
fn crash_states_break_unsynced_writes_and_not_ours() {
    let Some(_env) = common::env() else { return };
    if !strace_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, r) = powerloss(dir.path(), None);
    assert_eq!(
        code,
        Some(0),
        "{}",
        serde_json::to_string_pretty(&r).unwrap()
    );
    let (states, bad, _) = setting(&r, "ours, fsync on");
    assert!(
        states >= 5 && bad == 0,
        "ours, fsync on: {states} states, {bad} bad"
    );
    for unsynced in ["git, core.fsync default", "ours, fsync off"] {
        let (states, bad, _) = setting(&r, unsynced);
        assert!(bad > 0, "{unsynced}: {states} states and none bad");
    }
}

#[cfg(reftable_test_hooks)]
#[test]
fn a_missing_directory_sync_fails_the_power_loss_run() {
    let Some(_env) = common::env() else { return };
    if !strace_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, r) = powerloss(dir.path(), Some("no-dir-sync"));
    assert_eq!(code, Some(1), "the planted defect must fail the run");
    let (_, _, lost) = setting(&r, "ours, fsync on");
    assert!(
        lost > 0,
        "no acknowledged write lost without the directory sync"
    );
}
