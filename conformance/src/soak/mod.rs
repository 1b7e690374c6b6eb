//! `conformance soak`: the generated cases of many fresh seeds, as git's CI meets them
//! (each CI run brings a seed of its own), and the rate of unexpected divergences per
//! 1,000 cases per git. Every unexpected divergence is grouped by its signature (check,
//! class and the detail's words without ids and numbers) over the seeds, with the first
//! case directory that shows it: the list to triage into a git defect (a registry entry
//! with its version range and reproducer) or a gate defect (fixed, with a regression
//! case). Seeds can be sharded over machines or a CI matrix (`--shard K/N` takes every
//! N-th seed).
//!
//! `cli.rs` runs the seeds through the run mode's runner ([`crate::run::runner`]);
//! `report.rs` adds them up.

pub mod cli;
pub mod report;
