//! The case engine every mode runs cases with: cases from a seed ([`generate`]), each run on
//! git, on us, on the model and on the files-backend twin ([`executor`]: operations in
//! `executor/steps.rs`, checks after every step in `executor/checks.rs`, `lookups.rs`,
//! `expiry.rs`), verdicts compared as fault sets ([`verdict`]), one case run from its seed or
//! its concrete operations ([`case`]), a case directory written and read ([`casedir`]), and
//! a divergent case minimized ([`minimize`]). The run mode (`crate::run`) runs cases × gits
//! over it; the other modes use it for their bases, workers and replays.

pub mod batch;
pub mod case;
pub mod casedir;
pub mod executor;
pub mod generate;
pub mod minimize;
pub mod ours;
pub mod outcome;
pub mod twin;
pub mod unreachable;
pub mod variants;
pub mod verdict;
