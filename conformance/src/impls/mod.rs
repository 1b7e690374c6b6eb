//! Other reftable implementations checked against git by the same generated cases
//! (`conformance impl`), through an adapter that speaks the protocol of
//! `adapters/PROTOCOL.md` ([`wire`], [`process`]; which adapter `--impl` names: [`which`]).
//!
//! Each case runs on git as every case does (the gate's own checks vouch for git's state
//! after each step); an implementation's roles ([`check`]) then do their part ([`side`]):
//! the reader reads git's stack after every step ([`read`]); the writer applies the case's
//! transactions to a copy of the stack, its verdicts set against git's ([`verdict`]) and
//! what it wrote read back by our reader; the interleaved role takes every other
//! transaction on one copy, git the rest. A writing role's copy ends read by git
//! (`for-each-ref`, `refs verify`, `fsck`) and by our deep check ([`end`]). The damaged
//! role (opt-in) reads, once the case is over, damaged copies of git's repository drawn as
//! the damaged-stack mode draws its damage, and must neither crash nor hang nor read as good
//! what our reader rejects, unless git reads it so too ([`damaged`], [`git_view`]). The
//! concurrent role runs the implementation's writer processes beside git's, once per run,
//! with the concurrent mode's accounting ([`concurrent`]). Each distinct finding is written
//! as a directory whose `rerun.sh` replays it, on any version ([`finding_dir`]). A case's
//! outcome ([`case`], [`tally`]) adds up to the report ([`report`]: the matrix of role ×
//! check × outcome, the distinct findings matched against the registry's `impl` entries
//! ([`known`]), a picture of the matrix ([`svg`])), and [`cli`] is the command.

pub mod case;
pub mod check;
pub mod cli;
pub mod concurrent;
pub mod damaged;
pub mod end;
pub mod finding_dir;
pub mod git_view;
pub mod known;
pub mod minimize;
pub mod process;
pub mod read;
pub mod report;
pub mod side;
pub mod svg;
pub mod tally;
pub mod verdict;
pub mod which;
pub mod wire;
