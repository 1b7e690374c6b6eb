//! Known git defects: one registry for every mode ([`registry`]).

pub mod registry;
