//! The conformance gate: randomized ref operation sequences run on real git and on the
//! `reftable` crate (plus an in-memory model and a libgit2 files-backend twin), compared
//! after every step; divergences become replayable, minimized case directories.

pub use reftable_harness::refs_model as model;
pub use reftable_harness::{ops, snapshot};

pub mod case;
pub mod casedir;
pub mod expected;
pub mod gen;
pub mod git;
pub mod minimize;
pub mod report;
pub mod twin;
