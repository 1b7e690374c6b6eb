//! Benchmarks and complexity tests for the reftable crate (see `benches/`).
