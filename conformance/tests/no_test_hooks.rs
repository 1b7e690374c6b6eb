//! An ordinary workspace build (the one `cargo build` and `cargo test --workspace` make)
//! carries no test hooks: the planted defects and crash points exist only in a build made
//! with `--cfg reftable_test_hooks`, which no Cargo feature can switch on.
//!
//! The `conformance` binary links every write path of the library (transactions,
//! compaction), so its bytes name the crash points exactly when the hooks are compiled in.

/// Which of `needles` the file `path` holds, by `grep -aoF` (a scan of the debug binary's
/// 100 MB in this unoptimized test took about 9 s; grep takes a fraction of one).
fn found_in(path: &str, needles: &[&'static str]) -> Vec<&'static str> {
    let mut grep = std::process::Command::new("grep");
    grep.args(["-a", "-o", "-F"]);
    for n in needles {
        grep.args(["-e", n]);
    }
    let out = grep.arg(path).output().expect("grep runs");
    assert!(out.status.code().is_some_and(|c| c <= 1), "grep: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let seen: std::collections::BTreeSet<&str> = text.lines().collect();
    needles
        .iter()
        .copied()
        .filter(|n| seen.contains(n))
        .collect()
}

#[test]
fn ordinary_binaries_have_no_test_hooks() {
    let hooks = [
        "REFTABLE_CRASH_AT",
        "compact:temp-written",
        "add:table-renamed",
    ];
    let found = found_in(env!("CARGO_BIN_EXE_conformance"), &hooks);
    if cfg!(reftable_test_hooks) {
        // The hooks build itself: the check must see them, or it proves nothing.
        assert_eq!(
            found.len(),
            hooks.len(),
            "hooks build without hooks: {found:?}"
        );
    } else {
        assert!(
            found.is_empty(),
            "test hooks in an ordinary build: {found:?}"
        );
    }
}
