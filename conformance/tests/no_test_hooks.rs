//! An ordinary workspace build (the one `cargo build` and `cargo test --workspace` make)
//! carries no test hooks: the planted defects and crash points exist only in a build made
//! with `--cfg reftable_test_hooks`, which no Cargo feature can switch on.
//!
//! The `conformance` binary links every write path of the library (transactions,
//! compaction), so its bytes name the crash points exactly when the hooks are compiled in.

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn ordinary_binaries_have_no_test_hooks() {
    let bin = std::fs::read(env!("CARGO_BIN_EXE_conformance")).unwrap();
    let hooks = [
        "REFTABLE_CRASH_AT",
        "compact:temp-written",
        "add:table-renamed",
    ];
    let found: Vec<&str> = hooks
        .into_iter()
        .filter(|h| contains(&bin, h.as_bytes()))
        .collect();
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
