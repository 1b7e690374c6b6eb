//! The fuzz target bodies: one function per target, called by the thin `fuzz_target!`
//! wrappers in `fuzz/fuzz_targets/` and, on stable without libFuzzer, by the replay test
//! that runs every committed corpus and regression file.
//!
//! Every body returns normally for any input; a panic is a finding. Besides "no panic",
//! each body asserts the resource bounds of [`crate::limits`] and whatever oracle its input
//! allows (a model, a round trip, or invariants that hold even for corrupt data).

use arbitrary::{Arbitrary, Unstructured};

mod block;
mod merged;
mod record;
mod refdb;
mod roundtrip;
mod stack;
mod table;

pub use block::block_decode;
pub use merged::{merged_model, MergedInput, TableSpec};
pub use record::record_decode;
pub use refdb::{refdb_model, refdb_vs_model, Coverage};
pub use roundtrip::{write_roundtrip, RoundtripInput};
pub use stack::stack_read;
pub use table::table_read;

/// The names of the targets, as in `fuzz/fuzz_targets/<name>.rs`.
pub const TARGETS: &[&str] = &[
    "block_decode",
    "record_decode",
    "table_read",
    "stack_read",
    "write_roundtrip",
    "merged_model",
    "refdb_model",
];

/// Decode `data` the way libfuzzer-sys 0.4 decodes a typed `fuzz_target!` input (too
/// short for the size hint, or undecodable: skipped), then run `body` on it.
pub fn run_arbitrary<'a, T: Arbitrary<'a>>(data: &'a [u8], body: impl FnOnce(T)) {
    if data.len() < T::size_hint(0).0 {
        return;
    }
    if let Ok(input) = T::arbitrary_take_rest(Unstructured::new(data)) {
        body(input);
    }
}

/// Run target `name` on the raw bytes `data`, exactly as its fuzz binary would.
/// Panics on an unknown name.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "block_decode" => block_decode(data),
        "record_decode" => record_decode(data),
        "table_read" => table_read(data),
        "stack_read" => stack_read(data),
        "write_roundtrip" => run_arbitrary(data, write_roundtrip),
        "merged_model" => run_arbitrary(data, merged_model),
        "refdb_model" => refdb_model(data),
        _ => panic!("unknown fuzz target {name:?}"),
    }
}
