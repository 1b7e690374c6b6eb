//! The conformance gate: randomized ref operation sequences run on real git and on the
//! `reftable` crate (plus an in-memory model and a libgit2 files-backend twin), compared
//! after every step; divergences become replayable, minimized case directories.

pub mod case;
pub mod casedir;
pub mod expected;
pub mod fuzzing;
pub mod gen;
pub mod git;
pub mod minimize;
pub mod model;
pub mod ops;
pub mod report;
pub mod snapshot;
pub mod twin;
