//! # reftable-harness
//!
//! What the reftable fuzz targets, tests and the conformance gate share:
//!
//! - [`fuzzing`]: the body of every fuzz target, one function each. The `fuzz/` crate wraps
//!   each in `fuzz_target!`; `tests/fuzz_replay.rs` runs every committed corpus and
//!   regression file through the same functions on stable, without libFuzzer.
//! - [`inputs`]: structured (`Arbitrary`) ref names, object ids, records and writer options.
//! - [`build`]: sorted, de-duplicated records and the table a writer makes of them.
//! - [`model`]: the in-memory newest-wins model of a stack of tables.
//! - [`ops`], [`refs_model`], [`snapshot`]: ref operations as the conformance gate runs them,
//!   the in-memory model of git's ref semantics, and the normalized state implementations
//!   are compared on (used by the `conformance` crate and the `refdb_model` target).
//! - [`git_rules`]: the model's own ref-name and reflog-message rules, from git's
//!   documentation and source (not the library's).
//! - [`stack_input`]: the stack target's input layout.
//! - [`names`]: the ref names the gate and the fuzz targets draw from.
//! - [`limits`], [`alloc`]: the resource bounds (records decoded, bytes allocated) every
//!   target asserts, and the counting allocator that measures the latter.

#![warn(missing_docs)]

pub mod alloc;
pub mod build;
pub mod fuzzing;
pub mod git_rules;
pub mod inputs;
pub mod limits;
pub mod model;
pub mod names;
pub mod ops;
pub mod refs_model;
pub mod seeds;
pub mod snapshot;
pub mod stack_input;
