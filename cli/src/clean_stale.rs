//! `reftable clean-stale`: remove the lock and temporary files killed writers left in a
//! stack directory (the only subcommand that writes), through `reftable::stale`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use reftable::stale::{remove_stale, KeptBecause, StaleOptions};

use crate::error::{CliError, CliResult};
use crate::path::{resolve, Target};

/// Remove (or with `dry_run`, list) writer files in `path`'s stack older than `older_than`
/// seconds that no live process holds open. Prints one line per file.
pub fn run(path: &Path, older_than: u64, dry_run: bool) -> CliResult {
    let Target::Stack { dir, .. } = resolve(path)? else {
        return Err(CliError::usage(format!(
            "{}: clean-stale needs a repository or a reftable/ directory, not a table",
            path.display()
        )));
    };
    let opts = StaleOptions::default()
        .min_age(Duration::from_secs(older_than))
        .dry_run(dry_run);
    let report = remove_stale(&dir, &opts)?;
    let mut out = std::io::stdout().lock();
    let verb = if dry_run { "would remove" } else { "removed" };
    for p in &report.removed {
        writeln!(out, "{verb} {}", p.display())?;
    }
    for (p, why) in &report.kept {
        let why = match why {
            KeptBecause::Young(age) => {
                format!("{} s old, younger than {older_than} s", age.as_secs())
            }
            KeptBecause::HeldOpen(pid) => format!("held open by process {pid}"),
        };
        writeln!(out, "kept {} ({why})", p.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
