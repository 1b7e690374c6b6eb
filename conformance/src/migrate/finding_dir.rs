//! The directory a migration case with an unexpected divergence is written to (with
//! `--out`): the case's repositories as the run left them (`repos/`: the files repository
//! git made, the dry run's and the real migration's copies, our stack), the differences,
//! the case's operations, and a `rerun.sh` that runs that one case again.

use std::path::Path;

use crate::finding::dir::{fresh, rerun_script, write_script, RERUN};
use crate::migrate::config::MigrateConfig;
use crate::migrate::report::MigrationDivergence;
use crate::setup::env::Env;

/// Write case `index` of `cfg`'s seed, whose repositories are in `repos`, under `out`;
/// returns its directory, or `None` (said on stderr) when it cannot be written.
pub(crate) fn write_case_dir(
    env: &Env,
    cfg: &MigrateConfig,
    index: u64,
    out: &Path,
    repos: &Path,
    divergences: &[MigrationDivergence],
) -> Option<String> {
    let dir = out.join(format!("migrate-seed{}-case{index}", cfg.seed));
    match write(env, cfg, index, &dir, repos, divergences) {
        Ok(()) => Some(dir.display().to_string()),
        Err(e) => {
            eprintln!("conformance: cannot write {}: {e}", dir.display());
            None
        }
    }
}

fn write(
    env: &Env,
    cfg: &MigrateConfig,
    index: u64,
    dir: &Path,
    repos: &Path,
    divergences: &[MigrationDivergence],
) -> Result<(), String> {
    fresh(dir).map_err(|e| e.to_string())?;
    // Loose refs of the gate's longest names may not copy; what copies is still evidence.
    if let Err(e) = crate::stack_files::copy_dir(repos, &dir.join("repos"), None) {
        std::fs::write(dir.join("repos-incomplete.txt"), format!("{e}\n"))
            .map_err(|e| e.to_string())?;
    }
    let mut diff = String::new();
    for d in divergences {
        let known = d
            .finding
            .expected
            .as_ref()
            .map_or(String::new(), |id| format!(" (known git defect {id})"));
        diff.push_str(&format!(
            "{}{known}\n  {}\n",
            d.finding.class, d.finding.detail
        ));
    }
    std::fs::write(dir.join("diff.txt"), diff).map_err(|e| e.to_string())?;
    // The recorded git as the default of a parameter expansion inside double quotes.
    let git: String = env
        .git
        .bin()
        .display()
        .to_string()
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' | '$' | '`' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let about = format!(
        "Run migration case {index} of seed {} again on git {} (or: REFTABLE_TEST_GIT=PATH rerun.sh,\nrerun.sh --git PATH); its repositories are kept in rerun/ beside this script.",
        cfg.seed,
        env.git.version()
    );
    let vars = format!(
        "REFTABLE_TEST_GIT=\"${{REFTABLE_TEST_GIT:-{git}}}\" REFTABLE_MIGRATE_KEEP=\"$here/rerun\" "
    );
    let args = format!(
        "migrate --seed {} --ops {} --case {index}",
        cfg.seed, cfg.ops
    );
    write_script(&dir.join(RERUN), &rerun_script(&about, &vars, &args)).map_err(|e| e.to_string())
}
