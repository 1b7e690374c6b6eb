//! A bounded conformance gate in `cargo test`: generated cases against real git must show no
//! divergence that is not a known git defect.

mod common;

use conformance::case::run_generated;
use conformance::expected;

#[test]
fn bounded_gate_has_no_unexpected_divergence() {
    let Some(env) = common::env() else { return };
    let known = expected::load().unwrap();
    let cases = std::env::var("CONFORMANCE_TEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12u64);
    let mut ops = 0;
    for index in 0..cases {
        let r = run_generated(&env, 7, index, 25).unwrap();
        ops += r.ops.len();
        let unexpected: Vec<_> = r
            .divergences
            .iter()
            .filter(|d| expected::matching(&known, d).is_none())
            .collect();
        assert!(
            unexpected.is_empty(),
            "case {index} ({:?}) diverged: {unexpected:#?}\nops: {:#?}",
            r.options,
            r.ops.iter().map(|o| o.summary()).collect::<Vec<_>>()
        );
    }
    eprintln!("{cases} cases, {ops} operations, no unexpected divergence");
}

/// Every known divergence still reproduces: an entry that stops matching must be removed.
#[test]
fn expected_divergences_still_reproduce() {
    let Some(env) = common::env() else { return };
    for e in expected::load().unwrap() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&e.case);
        let case = conformance::casedir::CaseFile::read(&dir).unwrap();
        let r = conformance::case::run_concrete(&env, case.options, &case.ops).unwrap();
        assert!(
            r.divergences
                .iter()
                .any(|d| expected::matching(std::slice::from_ref(&e), d).is_some()),
            "known divergence {} no longer reproduces: remove it from expected-divergences.json",
            e.id
        );
    }
}
