//! The generated mode (`conformance run`): cases from a seed ([`generate`]), each run on git,
//! on us, on the model and on the files-backend twin ([`executor`]: operations in
//! `executor/steps.rs`, checks after every step in `executor/checks.rs`, `lookups.rs`,
//! `expiry.rs`), verdicts compared as fault sets ([`verdict`]), divergences minimized
//! ([`minimize`]), cases × gits run and reported ([`run`], [`report`]) and turned into CI
//! test results ([`ci_tests`]).

pub mod batch;
pub mod case;
pub mod casedir;
pub mod ci_tests;
pub mod executor;
pub mod generate;
pub mod minimize;
pub mod ours;
pub mod outcome;
pub mod report;
pub mod run;
pub mod stale;
pub mod twin;
pub mod unreachable;
pub mod verdict;
