//! Known git defects: one registry for every mode ([`registry`]), and what is handed to
//! git's maintainers for each ([`upstream`]).

pub mod cli;
pub mod registry;
pub mod upstream;
