//! `reftable`: look inside git's reftable stacks and tables.
//!
//! ```text
//! reftable refs [--json] [--tombstones] PATH     live refs of the merged stack
//! reftable logs [--json] PATH [REFNAME]          reflog entries
//! reftable dump [--blocks] PATH                  tables, headers, sections, blocks, records
//! reftable stat PATH                             sizes and counts; would compaction help
//! reftable verify PATH                           deep check (exit 1 when problems are found)
//! reftable reencode TABLE -o OUT                 rewrite a table with this crate's writer
//! reftable clean-stale [--older-than S] [--dry-run] PATH
//!                                                remove locks and temp files of killed writers
//! ```
//!
//! `PATH` is a repository (its top level or its `.git`), a `reftable/` directory, or one
//! table file. Nothing is ever written to `PATH`, except by `clean-stale`.
//!
//! Exit status: 0 success; 1 the data is corrupt (for `verify`: problems were found);
//! 2 usage or I/O error; 141 when stdout is closed early (like a program killed by SIGPIPE).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod clean_stale;
mod dump;
mod error;
mod logs;
mod path;
mod reencode;
mod refs;
mod scratch;
mod stat;
mod text;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Command line of the `reftable` tool.
#[derive(Parser, Debug)]
#[command(
    name = "reftable",
    version,
    about = "Look inside git's reftable ref storage: list, dump, measure, verify, re-encode",
    after_help = "PATH is a repository (its top level or its .git), a reftable/ directory, \
                  or one table file.\n\nExit status: 0 success; 1 corrupt data (verify: \
                  problems found); 2 usage or I/O error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The live refs in name order: `<refname> <oid> [<peeled>]` or `<refname> ref:<target>`.
    Refs {
        /// Print one JSON document instead of lines.
        #[arg(long)]
        json: bool,
        /// Also list deleted names (tombstones) as `<refname> deleted`.
        #[arg(long)]
        tombstones: bool,
        /// Repository, reftable/ directory or table file.
        path: PathBuf,
    },
    /// Reflog entries: refs in name order, newest first within a ref.
    Logs {
        /// Print one JSON document instead of lines.
        #[arg(long)]
        json: bool,
        /// Repository, reftable/ directory or table file.
        path: PathBuf,
        /// Only the entries of this ref.
        refname: Option<String>,
    },
    /// Tables, header fields and sections; with --blocks every block and record.
    Dump {
        /// Also print every block (offset, type, length, restarts) and its records.
        #[arg(long, short = 'b')]
        blocks: bool,
        /// With --blocks, stop once the log blocks inflated reach this many bytes (they can
        /// inflate to 16 MiB each; the default keeps a dump within seconds).
        #[arg(long, default_value_t = 1 << 30, value_name = "BYTES")]
        max_inflate: u64,
        /// Repository, reftable/ directory or table file.
        path: PathBuf,
    },
    /// Sizes, record counts, blocks per section, index levels; whether compaction would help.
    Stat {
        /// Repository, reftable/ directory or table file.
        path: PathBuf,
    },
    /// Deep check of every table and of the stack. Exit 0 clean, 1 problems found (one line
    /// each on stdout), 2 usage or I/O error.
    Verify {
        /// Repository, reftable/ directory or table file.
        path: PathBuf,
    },
    /// Rewrite a table's records with this crate's writer (byte-identical to git's table when
    /// given the options git used).
    Reencode {
        /// The table file to read.
        table: PathBuf,
        /// Where to write the new table.
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        out: PathBuf,
        /// Restart interval of the new table (git's reftable.restartInterval).
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
        restart_interval: u16,
        /// Do not write an obj section (git's reftable.indexObjects=false).
        #[arg(long)]
        no_index_objects: bool,
        /// Block size of the new table; default: the input table's.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16_777_215))]
        block_size: Option<u32>,
    },
    /// Remove `tables.list.lock`, `*.ref.lock` and `*.temp.*` files that a killed git or
    /// reftable writer left, when older than --older-than and held open by no live process
    /// (checked through /proc where there is one). Prints each file removed or kept.
    CleanStale {
        /// Only files at least this many seconds old (git may hold a lock for as long as a
        /// compaction runs).
        #[arg(long, default_value_t = 600)]
        older_than: u64,
        /// List what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Repository or reftable/ directory.
        path: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Refs {
            json,
            tombstones,
            path,
        } => refs::run(&path, json, tombstones),
        Command::Logs {
            json,
            path,
            refname,
        } => logs::run(&path, json, refname.as_deref()),
        Command::Dump {
            blocks,
            max_inflate,
            path,
        } => dump::run(&path, blocks, max_inflate),
        Command::Stat { path } => stat::run(&path),
        Command::Verify { path } => verify::run(&path),
        Command::CleanStale {
            older_than,
            dry_run,
            path,
        } => clean_stale::run(&path, older_than, dry_run),
        Command::Reencode {
            table,
            out,
            restart_interval,
            no_index_objects,
            block_size,
        } => reencode::run(&reencode::Options {
            table,
            out,
            restart_interval,
            index_objects: !no_index_objects,
            block_size,
        }),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if !e.message.is_empty() {
                eprintln!("reftable: {}", e.message);
            }
            ExitCode::from(e.code)
        }
    }
}
