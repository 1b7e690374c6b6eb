//! Fuzz target `refdb_model`: see `reftable_harness::fuzzing::refdb_model`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reftable_harness::alloc::CountingAlloc;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fuzz_target!(|data: &[u8]| reftable_harness::fuzzing::refdb_model(data));
