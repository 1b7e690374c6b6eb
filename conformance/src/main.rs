//! `conformance`: the differential gate against real git. This file only dispatches: each
//! mode's options and entry are beside its code (`run/cli.rs`, `concurrent/cli.rs`,
//! `damaged/cli.rs`, `migrate/cli.rs`, `faults/cli.rs`, `powerloss/cli.rs`,
//! `defects/cli.rs`; the yardsticks in the `reftable-yardstick` crate), the options every
//! mode shares and the end every mode comes to in `mode/`.
//!
//! Exit statuses: 0 clean, 1 a finding that fails the run, 2 the run could not be made or
//! its results not written.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use conformance::concurrent::cli::ConcurrentArgs;
use conformance::damaged::cli::DamagedArgs;
use conformance::defects::cli::UpstreamArgs;
use conformance::faults::cli::{CaseArgs, FaultsArgs};
use conformance::impls::cli::ImplArgs;
use conformance::migrate::cli::MigrateArgs;
use conformance::mode::plant::{plant_from_env, plant_worker_from_env};
use conformance::run::cli::{CaseDirArgs, RunArgs};
use reftable_yardstick::cli as yardstick;

#[derive(Parser)]
#[command(
    name = "conformance",
    about = "Differential conformance gate: reftable-rs against real git"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run generated cases on git and on us (the default command).
    Run(RunArgs),
    /// git and our writer processes on one repository at once, with compaction and reflog
    /// expiry from both, then the forced orders (the same as `run --concurrent`).
    Concurrent(ConcurrentArgs),
    /// The generated cases of many fresh seeds (as git's CI brings them): unexpected
    /// divergences per 1,000 cases per git, grouped by signature for triage.
    Soak(conformance::soak::cli::SoakArgs),
    /// Re-run a case directory (on the git recorded in it unless --git is given).
    Replay(CaseDirArgs),
    /// Minimize a case directory into DIR-min.
    Minimize(CaseDirArgs),
    /// Damage stacks the gate wrote and hand them to git and to us: git's crashes, hangs,
    /// hidden load errors and files touched outside the repository are reported (distinct
    /// crash sites by backtrace, each minimized with a reproducer); any such finding on our
    /// side fails the run.
    Damaged(DamagedArgs),
    /// Replay the gate's cases on files-backend repositories, migrate each to reftable with
    /// `git refs migrate` and with our import, and compare the tables byte for byte.
    Migrate(MigrateArgs),
    /// Write operations of generated cases on git and on us under injected system-call
    /// faults (strace), once per call of the write path: a reported failure must leave
    /// nothing changed, a success must be there, the stack must load and the next writer get
    /// through. Any defect of ours fails the run, git's unless the registry knows it.
    Faults(FaultsArgs),
    /// What a power loss during or after a write can leave: each write operation recorded
    /// (its file-system operations), every crash state built under the usual file-system
    /// model and read by us and by git; git per `core.fsync` setting (reported), ours with
    /// fsync on (must stay loadable, all-or-nothing and durable once acknowledged) and off.
    Powerloss(CaseArgs),
    /// Another reftable implementation (dulwich, libgit2, ours through the reference
    /// adapter) in each role on the generated cases, through its adapter
    /// (adapters/PROTOCOL.md): reader, writer, interleaved, damaged (opt-in); the matrix and its
    /// findings, matched against the registry's `impl` entries.
    Impl(ImplArgs),
    /// Our side of one faulted operation (run by `faults` under strace).
    #[command(hide = true)]
    FaultWorker {
        /// The worker's spec (JSON).
        spec: PathBuf,
    },
    /// One writer process of the concurrent mode (run by `concurrent`).
    #[command(hide = true)]
    ConcurrentWorker {
        /// The worker's spec (JSON).
        spec: PathBuf,
    },
    /// Write the test in git's t/ style and a mailing-list message for a known git defect
    /// (its id in the registry) into --out; `all` for every defect that has a test.
    Upstream(UpstreamArgs),
    /// Mutants of a git checkout's reftable code (built in a copy, incrementally), each put
    /// through the gate's modes (and optionally the counters comparison and your tests):
    /// killed-by-gate, killed-by-counters, killed-by-tests, both, survived, timeout,
    /// unviable, equivalent. Resumable; --shard K/N and mutate-merge for CI matrices.
    MutateGit(yardstick::MutateArgs),
    /// Merge the run directories of a sample's shards into one report.
    MutateMerge(yardstick::MergeArgs),
    /// Line, branch and function coverage of a git checkout's reftable code reached by the
    /// gate's modes (and your tests), from a gcov build the tool makes in a copy.
    Coverage(yardstick::CoverageArgs),
    /// Print what the git under test does (the probe the gate runs at start).
    Probe {
        /// The git binary.
        #[arg(long)]
        git: Option<PathBuf>,
    },
}

/// The bound on the size of the files a mode and the gits it starts write
/// (`git/runaway.rs`), set by every mode that runs git on repositories of its making; not
/// by the yardsticks, which build git (`impl` sets it once it has installed the
/// implementation, which may build it).
fn bounded() -> Result<(), String> {
    conformance::git::runaway::bound_file_writes()
}

/// What the commands that run generated cases set up first: the planted defect of a
/// test-hooks build (they run our side in this process) and the bound on file sizes.
fn cases() -> Result<(), String> {
    plant_from_env()?;
    bounded()
}

/// The command's exit status, or why it could not run.
fn dispatch(cmd: Cmd) -> Result<i32, String> {
    match cmd {
        Cmd::Run(a) => cases().and_then(|()| conformance::run::cli::main(&a)),
        Cmd::Concurrent(a) => bounded().and_then(|()| conformance::concurrent::cli::main(&a)),
        Cmd::Soak(a) => cases().and_then(|()| conformance::soak::cli::main(&a)),
        Cmd::Replay(a) => cases().and_then(|()| conformance::run::cli::replay(&a)),
        Cmd::Minimize(a) => cases().and_then(|()| conformance::run::cli::minimize(&a)),
        Cmd::Damaged(a) => bounded().and_then(|()| conformance::damaged::cli::main(&a)),
        Cmd::Migrate(a) => bounded().and_then(|()| conformance::migrate::cli::main(&a)),
        Cmd::Faults(a) => bounded().and_then(|()| conformance::faults::cli::main(&a)),
        Cmd::Powerloss(a) => bounded().and_then(|()| conformance::powerloss::cli::main(&a)),
        Cmd::Upstream(a) => conformance::defects::cli::main(&a),
        Cmd::Impl(a) => conformance::impls::cli::main(&a),
        Cmd::MutateGit(a) => yardstick::mutate_git(a),
        Cmd::MutateMerge(a) => yardstick::mutate_merge(a),
        Cmd::Coverage(a) => yardstick::coverage(a),
        Cmd::Probe { git } => {
            let e = conformance::mode::args::env(git.as_deref())?;
            let probe = serde_json::to_string_pretty(&e.profile).expect("json");
            println!("{probe}");
            Ok(0)
        }
        Cmd::FaultWorker { spec } => {
            plant_from_env()?;
            Ok(conformance::faults::worker::run_worker(&spec))
        }
        Cmd::ConcurrentWorker { spec } => {
            plant_worker_from_env()?;
            Ok(conformance::concurrent::worker_main(&spec))
        }
    }
}

fn main() {
    let cmd =
        Cli::parse()
            .cmd
            .unwrap_or_else(|| match Cli::parse_from(["conformance", "run"]).cmd {
                Some(cmd) => cmd,
                None => unreachable!("run parses"),
            });
    let code = dispatch(cmd).unwrap_or_else(|e| {
        eprintln!("conformance: {e}");
        2
    });
    std::process::exit(code);
}
