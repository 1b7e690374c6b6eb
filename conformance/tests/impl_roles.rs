//! `conformance impl` through the binary, on the reference adapter (`reftable-adapter`,
//! beside the binary): the roles find nothing in our library; and, in a test-hooks build,
//! each defect planted into the adapter is found by the role and check that must see it.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// The reference adapter beside the gate's binary, or `None` (skipped, or a failure under
/// `REFTABLE_REQUIRE_GIT=1`) when it was not built.
fn adapter() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_conformance")).with_file_name("reftable-adapter");
    let found = if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "no {} (cargo build -p reftable-adapter)",
            bin.display()
        ))
    };
    reftable_testkit::skip::or_skip(found)
}

/// `conformance impl --impl ours` in `roles` with `plant` planted in the adapter, its
/// findings' directories in `dir`: exit status and the JSON report.
fn run_impl_in(
    dir: &tempfile::TempDir,
    plant: Option<&str>,
    cases: &str,
    roles: &str,
) -> (Option<i32>, Value) {
    let json = dir.path().join("impl.json");
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.args(["impl", "--impl", "ours", "--cases", cases, "--seed", "1"])
        .args(["--roles", roles, "--concurrent-txns", "40", "--out"])
        .arg(dir.path())
        .args(["--minimize-seconds", "0", "--jobs", "2", "--report-json"])
        .arg(&json);
    if let Some(p) = plant {
        c.env("REFTABLE_ADAPTER_PLANT", p);
    }
    let o = c.output().unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|_| {
        panic!("no report: {}", String::from_utf8_lossy(&o.stderr));
    });
    (o.status.code(), serde_json::from_str(&text).unwrap())
}

/// [`run_impl_in`] a directory of its own.
fn run_impl(plant: Option<&str>, cases: &str, roles: &str) -> (Option<i32>, Value) {
    run_impl_in(&tempfile::tempdir().unwrap(), plant, cases, roles)
}

/// `conformance impl --impl ours --replay FILE` with `plant` planted: its exit status.
#[cfg(reftable_test_hooks)]
fn replay(file: &str, plant: Option<&str>) -> Option<i32> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.args(["impl", "--impl", "ours", "--replay", file]);
    c.env_remove("REFTABLE_ADAPTER_PLANT");
    if let Some(p) = plant {
        c.env("REFTABLE_ADAPTER_PLANT", p);
    }
    c.output().unwrap().status.code()
}

/// The (role, check) of every distinct finding.
fn failing(report: &Value) -> Vec<(String, String)> {
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    findings
        .iter()
        .map(|d| {
            let f = &d["first"];
            (
                f["role"].as_str().unwrap().into(),
                f["check"].as_str().unwrap().into(),
            )
        })
        .collect()
}

// The ordinary build runs it; the test-hooks build runs only what needs its hooks.
#[cfg(not(reftable_test_hooks))]
#[test]
fn the_reference_adapter_agrees_with_git_in_every_role() {
    if adapter().is_none()
        || reftable_testkit::skip::or_skip(reftable_testkit::git::Git::find()).is_none()
    {
        return;
    }
    let (code, report) = run_impl(None, "12", "reader,writer,interleaved,concurrent");
    assert_eq!(failing(&report), vec![], "{report:#}");
    assert_eq!(code, Some(0));
    let passed = |role: &str, check: &str| {
        let rows = report["matrix"].as_array().unwrap();
        let row = rows
            .iter()
            .find(|r| r["role"] == role && r["check"] == check)
            .unwrap();
        row["passed"].as_u64().unwrap()
    };
    for (role, check) in [
        ("reader", "ref-values"),
        ("reader", "reflogs"),
        ("writer", "verdict"),
        ("writer", "state"),
        ("writer", "git-reads"),
        ("interleaved", "invariants"),
        ("concurrent", "acknowledged"),
        ("concurrent", "final-stack"),
    ] {
        assert!(passed(role, check) > 0, "{role} {check} compared nothing");
    }
}

#[cfg(reftable_test_hooks)]
#[test]
fn defects_planted_in_the_adapter_are_found_by_their_roles() {
    if adapter().is_none()
        || reftable_testkit::skip::or_skip(reftable_testkit::git::Git::find()).is_none()
    {
        return;
    }
    let plants = [
        ("skip-old-value", ("writer", "verdict")),
        ("reflog-wrong-old", ("reader", "reflogs")),
        ("drop-symref-target", ("reader", "symrefs")),
        ("skip-old-value", ("concurrent", "acknowledged")),
    ];
    for (plant, (role, check)) in plants {
        let (code, report) = run_impl(Some(plant), "12", role);
        let found = failing(&report);
        assert_eq!(code, Some(1), "{plant}: {found:?}");
        assert!(
            found.contains(&(role.to_string(), check.to_string())),
            "{plant} not found by {role} {check}: {found:?}"
        );
    }
}

/// A finding's directory replays it: its `finding.json` shows the finding again while the
/// defect is planted (exit 1), and not once it is gone (exit 0).
#[cfg(reftable_test_hooks)]
#[test]
fn a_finding_directory_replays_its_finding() {
    if adapter().is_none()
        || reftable_testkit::skip::or_skip(reftable_testkit::git::Git::find()).is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = run_impl_in(&dir, Some("skip-old-value"), "12", "writer");
    let findings = report["findings"].as_array().unwrap();
    let written = findings
        .iter()
        .find_map(|d| d["dir"].as_str())
        .expect("a finding directory");
    let file = format!("{written}/finding.json");
    assert_eq!(replay(&file, Some("skip-old-value")), Some(1));
    assert_eq!(replay(&file, None), Some(0));
}
