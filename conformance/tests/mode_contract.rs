//! The contract every mode keeps at its edges, through the binary: a report that cannot be
//! written, or a registry that cannot be read, is exit 2 with a message, before any git
//! runs; never a clean exit.

use std::process::Command;

/// Every mode, with the smallest arguments that would start a run.
const MODES: &[&[&str]] = &[
    &["run", "--cases", "1"],
    &["run", "--concurrent"],
    &["concurrent"],
    &["migrate", "--cases", "1"],
    &["damaged", "--trials", "1"],
    &["faults", "--cases", "1"],
    &["powerloss", "--cases", "1"],
    &["soak", "--seeds", "1", "--cases", "1"],
    &["impl", "--cases", "1"],
];

/// `conformance ARGS`: exit status and stderr.
fn conformance(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_report_into_a_missing_directory_is_exit_2_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    for flag in ["--report-md", "--report-json", "--junit", "--tap"] {
        for mode in MODES {
            let file = missing.join("report");
            let value = file.to_str().unwrap();
            let mut args = mode.to_vec();
            let joined;
            if flag == "--tap" {
                joined = format!("--tap={value}");
                args.push(&joined);
            } else {
                args.extend([flag, value]);
            }
            let (code, err) = conformance(&args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert!(err.contains("no/such/dir"), "{args:?} says: {err}");
        }
    }
}

#[test]
fn a_registry_that_cannot_be_read_is_exit_2_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("registry.json");
    std::fs::write(&bad, "not json").unwrap();
    for mode in MODES {
        let mut args = mode.to_vec();
        args.extend(["--expected", bad.to_str().unwrap()]);
        let (code, err) = conformance(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("registry.json"), "{args:?} says: {err}");
    }
    let (code, err) = conformance(&["upstream", "all", "--expected", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2), "upstream: {err}");
}
