//! The conformance gate: randomized ref operation sequences run on real git and on the
//! `reftable` crate (plus an in-memory model and a libgit2 files-backend twin), compared
//! after every step; divergences become replayable, minimized case directories.

pub use reftable_harness::refs_model as model;
pub use reftable_harness::{ops, snapshot};

pub mod concurrent;
pub mod cpu;
pub mod damaged;
pub mod defects;
pub mod err_class;
pub mod finding;
pub mod generated;
pub mod git;
pub mod migrate;
mod rng;
pub mod setup;
mod stack_files;
