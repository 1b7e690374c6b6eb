//! The migration mode's run: the gate's cases of a seed, one after the other, each migrated
//! by git and by us ([`CaseRun`]) in a scratch directory.

use crate::defects::registry::{default_path, ExpectedSet};
use crate::generated::case::run_generated;
use crate::migrate::case::CaseRun;
use crate::migrate::report::MigrationReport;
use crate::setup::env::Env;

/// Run the mode over `cases` cases of `seed` against the git of `env`; differences are
/// matched against the migrate entries of the registry at [`default_path`].
pub fn run_migrate(
    env: &Env,
    seed: u64,
    cases: u64,
    ops: usize,
) -> Result<MigrationReport, String> {
    let start = std::time::Instant::now();
    let version = env.profile.git_version();
    let mut report = MigrationReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        with_reflogs: env.profile.features.migrate_reflogs,
        ..Default::default()
    };
    if !env.profile.features.refs_migrate {
        return Err(format!(
            "git {} has no `git refs migrate` (2.46+)",
            env.git.version()
        ));
    }
    let known = ExpectedSet::load(&default_path())?;
    let scratch = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    // REFTABLE_MIGRATE_KEEP=DIR keeps every case's repositories there, for a look.
    let keep = std::env::var_os("REFTABLE_MIGRATE_KEEP").map(std::path::PathBuf::from);
    let scratch_path = keep.clone().unwrap_or_else(|| scratch.path().to_path_buf());
    for index in 0..cases {
        let case = format!("seed{seed}-case{index}");
        let result = run_generated(env, seed, index, ops)?;
        let opts = result.options.ok_or("a case without options")?;
        report.cases += 1;
        let run = CaseRun::new(env, &known, &version, case, &scratch_path);
        let went_through = run.migrate(opts, &result.ops, &mut report)?;
        if went_through && keep.is_none() {
            let _ = std::fs::remove_dir_all(&run.dir);
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}
