//! The ref database against the in-memory model on deterministic pseudo-random operation
//! sequences (the body of the `refdb_model` fuzz target).

#[test]
fn refdb_agrees_with_the_model() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let cases = 2000;
    let mut total = reftable_harness::fuzzing::Coverage::default();
    for _ in 0..cases {
        let len = 64 + (state % 512) as usize;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let c = reftable_harness::fuzzing::refdb_vs_model(&data);
        total.steps += c.steps;
        total.accepted += c.accepted;
        total.refused += c.refused;
    }
    eprintln!("{cases} inputs: {total:?}");
    assert!(
        total.accepted > 1000 && total.refused > 300,
        "too little exercised: {total:?}"
    );
    // Saved inputs under `fuzz/regressions/refdb_model/` are replayed (and must exist
    // as a corpus) by `harness/tests/fuzz_replay.rs`, which fails on any panic.
}
