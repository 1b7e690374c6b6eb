//! The conformance gate: randomized ref operation sequences run on real git and on the
//! `reftable` crate (plus an in-memory model and a libgit2 files-backend twin), compared
//! after every step; divergences become replayable, minimized case directories.
//!
//! A folder per mode over shared folders; each file uses only files below it (see
//! `ARCHITECTURE.md`, and `python3 ci/layout.py --strict conformance/src`):
//!
//! | mode | folder | command |
//! | --- | --- | --- |
//! | generated cases (over the case engine, [`cases`]) | [`run`] | `conformance run`, `replay`, `minimize` |
//! | the generated cases of many fresh seeds | [`soak`] | `conformance soak` |
//! | concurrent writers | [`concurrent`] | `conformance concurrent` = `conformance run --concurrent` (and the round the default run ends with) |
//! | migration | [`migrate`] | `conformance migrate` |
//! | damaged stacks | [`damaged`] | `conformance damaged` |
//! | system-call faults during writes | [`faults`] | `conformance faults` |
//! | power loss during and after writes | [`powerloss`] | `conformance powerloss` |
//! | other reftable implementations through an adapter | [`impls`] | `conformance impl` |
//!
//! Each mode's options and entry are in its folder's `cli.rs`; [`mode`] holds what they
//! share: the common options, the report contract ([`mode::report::ModeReport`]) and the one
//! way a run ends (reports, summary, CI results, exit status 0, 1 or 2). The yardsticks
//! (`conformance coverage`, `mutate-git`, `mutate-merge`) are the `reftable-yardstick` crate;
//! strace tracing shared by the faults, power-loss and concurrent modes is [`syscalls`].
//!
//! Where to find things:
//!
//! - **a check of the run mode**: the [`finding::divergence::Check`] variant names it;
//!   the comparison is in `cases/executor/checks.rs` (state after every step, git's view,
//!   reflogs, git reading our stack), `lookups.rs` (point lookups), `expiry.rs` (reflog
//!   expiry in compaction), `reads.rs` (`@{n}`, `git refs exists`, `git refs verify`),
//!   `filtered.rs` (`for-each-ref` / `git refs list` with `--exclude`, patterns,
//!   `--points-at`), `worktree.rs` (a worktree case's linked worktree), `batch.rs` (an
//!   `update-ref --batch-updates` step; its rejections compared in [`cases::batch`]), or
//!   [`cases::verdict`] (accept/refuse and the refusal's class); each operation's run on
//!   git, us and the model in `cases/executor/steps.rs`.
//! - **a check of another mode**: `concurrent/check.rs` (one function per family),
//!   [`migrate`], `damaged/observe.rs`.
//! - **the wording of a git message**: [`git::messages::WORDINGS`] (every wording from 2.45
//!   to master, mapped to an [`err_class::ErrClass`]).
//! - **a probe of what a git does**: [`git::profile`] (`probe` and one helper per feature).
//! - **a known git defect**: [`defects::registry`], which reads
//!   `conformance/expected-divergences.json`; each entry's case and git-only reproducer are
//!   under `conformance/expected/<id>/`, its test in git's `t/` style under
//!   `conformance/upstream/` ([`defects::upstream`]).
//! - **how git is run**: [`git::driver`] (environment, timeouts that kill the process group,
//!   `update-ref --stdin` coprocesses); scripts git executes (hooks, wrappers) are written
//!   by `reftable_testkit::exec_file`, never opened for writing by a process that forks.
//! - **what a finding directory holds**: `cases/casedir.rs`, `concurrent/finding_dir.rs`,
//!   `damaged/finding_dir.rs`, `migrate/finding_dir.rs`.
//! - **TAP and JUnit output, time budgets**: [`ci_output`] writes what each mode's
//!   `ci_tests.rs` makes of its report; [`budget`] is the `--seconds` and `--fail-fast`
//!   every mode shares.

pub use reftable_harness::refs_model as model;
pub use reftable_harness::{ops, snapshot};

pub mod budget;
pub mod cases;
pub mod ci_output;
pub mod concurrent;
pub mod cpu;
pub mod damaged;
pub mod defects;
pub mod err_class;
pub mod faults;
pub mod finding;
pub mod git;
pub mod impls;
pub mod lanes;
pub mod migrate;
pub mod mode;
pub mod powerloss;
pub mod run;
pub mod setup;
pub mod soak;
mod stack_files;
pub mod syscalls;
