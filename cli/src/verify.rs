//! `reftable verify PATH`: the library's deep check ([`reftable::fsck`]) of one table or of
//! a stack, printed.
//!
//! One line per problem on stdout, `<file>: offset <n>: <what is wrong>` (the offset left
//! out where it does not apply), a line for the problems of a file beyond the first 100,
//! and a summary on stderr. Exit status: 0 clean, 1 problems found, 2 usage or I/O error.
//! Log blocks git cannot read are problems too (exit 1), with the message saying so.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use reftable::fsck::{self, Report};

use crate::error::{CliError, CliResult};
use crate::path::{self, Target};

/// Run `verify`.
pub fn run(p: &Path) -> CliResult {
    let target = path::resolve(p)?;
    let report = match &target {
        Target::Table(file) => fsck::check_table(file),
        Target::Stack { dir, gitdir } => {
            fsck::check_stack(dir, gitdir.as_deref().and_then(path::config_hash))
        }
    }
    .map_err(|e| CliError::usage(format!("{e:#}")))?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    print(&report, &mut out)?;
    out.flush()?;
    let (problems, tables) = (report.count(), report.tables_checked);
    let what = if tables == 1 { "table" } else { "tables" };
    let shown = target.path().display();
    if problems == 0 {
        eprintln!("reftable verify: {shown}: {tables} {what} checked, no problems");
        Ok(ExitCode::SUCCESS)
    } else {
        let s = if problems == 1 { "" } else { "s" };
        eprintln!("reftable verify: {shown}: {tables} {what} checked, {problems} problem{s}");
        Ok(ExitCode::from(1))
    }
}

/// The findings file by file, and for each file a line for those not kept.
fn print(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    for f in &report.files {
        for finding in &f.findings {
            writeln!(out, "{finding}")?;
        }
        if f.not_shown > 0 {
            let (file, n) = (f.file.display(), f.not_shown);
            writeln!(out, "{file}: {n} further problems not shown")?;
        }
    }
    Ok(())
}
