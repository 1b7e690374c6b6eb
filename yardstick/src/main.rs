//! `yardstick`: the gate's yardsticks on their own (`conformance mutate-git`,
//! `conformance mutate-merge` and `conformance coverage` are the same commands). A gate mode
//! named with `--modes` runs the `conformance` binary beside this one.

use clap::{Parser, Subcommand};
use reftable_yardstick::cli;

#[derive(Parser)]
#[command(
    name = "yardstick",
    about = "Mutation score and coverage of git's reftable code by the conformance gate"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Mutants of a git checkout's reftable code, each put through the gate (see
    /// `conformance mutate-git --help`).
    MutateGit(cli::MutateArgs),
    /// Merge the run directories of a sample's shards into one report.
    MutateMerge(cli::MergeArgs),
    /// Line, branch and function coverage of a git checkout's reftable code by the gate.
    Coverage(cli::CoverageArgs),
}

fn main() {
    let done = match Cli::parse().cmd {
        Cmd::MutateGit(a) => cli::mutate_git(a),
        Cmd::MutateMerge(a) => cli::mutate_merge(a),
        Cmd::Coverage(a) => cli::coverage(a),
    };
    std::process::exit(done.unwrap_or_else(|e| {
        eprintln!("yardstick: {e}");
        2
    }));
}
