//! # reftable-harness
//!
//! What the reftable fuzz targets, tests and (later) the conformance gate share:
//!
//! - [`fuzzing`]: the body of every fuzz target, one function each. The `fuzz/` crate wraps
//!   each in `fuzz_target!`; `tests/fuzz_replay.rs` runs every committed corpus and
//!   regression file through the same functions on stable, without libFuzzer.
//! - [`inputs`]: structured (`Arbitrary`) ref names, object ids, records and writer options.
//! - [`build`]: sorted, de-duplicated records and the table a writer makes of them.
//! - [`model`]: the in-memory newest-wins model of a stack of tables.
//! - [`stack_input`], [`stack_load`]: the stack target's input layout and loader.
//! - [`limits`], [`alloc`]: the resource bounds (records decoded, bytes allocated) every
//!   target asserts, and the counting allocator that measures the latter.

#![warn(missing_docs)]

pub mod alloc;
pub mod build;
pub mod fuzzing;
pub mod inputs;
pub mod limits;
pub mod model;
pub mod seeds;
pub mod stack_input;
pub mod stack_load;
