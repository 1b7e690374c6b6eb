//! # reftable-testkit
//!
//! What the workspace's tests share, in one place (as gitoxide's `gix-testtools` does):
//!
//! - [`git`]: a git binary driven with a fixed, isolated environment, and the one skip
//!   policy for tests that need something the machine may lack ([`skip`]);
//! - [`tables`]: small tables built in memory, object ids, reflog entries, and re-sealing a
//!   table's footer after a test damaged it;
//! - for the tool crates (the gate, the yardstick): child processes under a timeout that
//!   kills their whole process group ([`process`]), scripts written for another program to
//!   execute ([`exec_file`]), and a small seeded generator ([`rng`]).
//!
//! Never a dependency of the library or of anything a user installs.

pub mod exec_file;
pub mod git;
pub mod process;
pub mod rng;
pub mod skip;
pub mod tables;
