//! Benchmarks and complexity tests for the reftable crate.
//!
//! - [`scenarios`]: the workloads (lookups past tombstones, git's p1401, auto-compaction),
//!   measured on the library's counters;
//! - [`bound`]: the decode-only bound of iteration and the bandwidth floor;
//! - [`fit`]: log-log growth exponents and the bounds the tests apply;
//! - [`report`]: the JSON / Markdown / SVG complexity report and the baseline check;
//! - [`git`]: driving a git binary for the same workloads (wall time, or under `strace`);
//! - [`syscalls`], [`instructions`], [`git_counters`]: git's system calls (and, optionally,
//!   instructions) per operation by scenario, and the comparison of git builds on them.
//!
//! The counter tests live in `tests/complexity.rs`, the report in the `complexity` binary,
//! criterion benches in `benches/`.

#![warn(missing_docs)]

pub mod bound;
pub mod fit;
pub mod git;
pub mod git_counters;
pub mod instructions;
pub mod report;
pub mod scenarios;
pub mod syscalls;
