//! Fuzz target `write_roundtrip`: see `reftable_harness::fuzzing::write_roundtrip`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reftable_harness::alloc::CountingAlloc;
use reftable_harness::fuzzing::{write_roundtrip, RoundtripInput};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fuzz_target!(|input: RoundtripInput| write_roundtrip(input));
