//! Fuzz target `merged_model`: see `reftable_harness::fuzzing::merged_model`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reftable_harness::alloc::CountingAlloc;
use reftable_harness::fuzzing::{merged_model, MergedInput};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fuzz_target!(|input: MergedInput| merged_model(input));
