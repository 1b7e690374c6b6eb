//! The run mode (`conformance run`): the case engine's cases × the gits under test, known
//! defects replayed at start ([`stale`]), divergences minimized into case directories
//! ([`runner`]), the concurrent round the default run ends with, the report ([`report`]) and
//! its CI test results ([`ci_tests`]).

pub mod ci_tests;
pub mod cli;
pub mod report;
pub mod runner;
pub mod stale;
