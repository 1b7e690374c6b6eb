//! The conformance gate: randomized ref operation sequences run on real git and on the
//! `reftable` crate (plus an in-memory model and a libgit2 files-backend twin), compared
//! after every step; divergences become replayable, minimized case directories.

pub use reftable_harness::refs_model as model;
pub use reftable_harness::{ops, snapshot};

pub mod case;
pub mod casedir;
mod checks;
pub mod concurrent;
mod concurrent_check;
mod concurrent_worker;
pub mod cpu;
pub mod damage;
pub mod damaged;
pub mod divergence;
pub mod expected;
mod expiry;
pub mod gen;
pub mod git;
mod lookups;
pub mod messages;
pub mod migrate;
pub mod minimize;
pub mod pool;
pub mod profile;
pub mod report;
mod rng;
pub mod run;
pub mod script;
mod stack_files;
mod steps;
pub mod twin;
pub mod verdict;
pub mod version;
