//! The options every mode takes, flattened into each mode's own: which git, which registry
//! of known defects, where the reports and the CI test results go.

use std::path::{Path, PathBuf};

use crate::ci_output::sink::{CiTargets, STDOUT};
use crate::defects::registry::{self, ExpectedSet};
use crate::git::driver::Git;
use crate::setup::env::Env;

/// Test results for CI systems, in every mode.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct CiArgs {
    /// Write the test results as TAP (one test per case): `--tap` to stdout, where the run's
    /// summary lines then become TAP comments (for `prove --exec` and meson), `--tap=FILE`
    /// to a file.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = STDOUT
    )]
    pub tap: Option<PathBuf>,
    /// Write the test results as JUnit XML to FILE (GitLab's `reports:junit`, GitHub's
    /// test-report actions).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

impl CiArgs {
    /// Where the test results go.
    pub fn targets(&self) -> CiTargets {
        CiTargets {
            tap: self.tap.clone(),
            junit: self.junit.clone(),
        }
    }
}

/// Where a mode's reports go.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Outputs {
    /// Write the JSON report here.
    #[arg(long)]
    pub report_json: Option<PathBuf>,
    /// Write the Markdown report here.
    #[arg(long)]
    pub report_md: Option<PathBuf>,
    #[command(flatten)]
    pub ci: CiArgs,
}

impl Outputs {
    /// Every file asked for, checked before the run: its directory must exist, so that a
    /// long run does not end in a report it cannot write.
    pub fn check(&self) -> Result<(), String> {
        let files = [&self.report_json, &self.report_md, &self.ci.junit];
        let tap = self.ci.tap.as_ref().filter(|p| p.as_os_str() != STDOUT);
        for p in files.into_iter().flatten().chain(tap) {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) {
                return Err(format!(
                    "cannot write {}: no directory {}",
                    p.display(),
                    dir.unwrap_or(Path::new(".")).display()
                ));
            }
        }
        Ok(())
    }
}

/// The options of every mode that tests one git.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Common {
    /// The git binary (default: REFTABLE_TEST_GIT, else git on PATH).
    #[arg(long)]
    pub git: Option<PathBuf>,
    /// The known git defects (default: REFTABLE_EXPECTED_DIVERGENCES, else
    /// conformance/expected-divergences.json).
    #[arg(long)]
    pub expected: Option<PathBuf>,
    #[command(flatten)]
    pub outputs: Outputs,
}

impl Common {
    /// The registry these options name, the git's environment, and the outputs checked.
    pub fn open(&self) -> Result<(ExpectedSet, Env), String> {
        self.outputs.check()?;
        Ok((
            load_registry(self.expected.as_deref())?,
            env(self.git.as_deref())?,
        ))
    }
}

/// The registry at `path`, else at its default place; one that cannot be read is an error.
pub fn load_registry(path: Option<&Path>) -> Result<ExpectedSet, String> {
    let path = path.map_or_else(registry::default_path, Path::to_path_buf);
    ExpectedSet::load(&path)
}

/// The environment of the git `git` names (else the default git): probed, its object pool
/// made.
pub fn env(git: Option<&Path>) -> Result<Env, String> {
    let git = Git::find(git)?;
    Env::new(git).map_err(|e| format!("cannot probe git or prepare the object pool: {e}"))
}

/// Parallel jobs by default: one more than the cores, as the gate waits on git a lot.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get() + 1)
}

/// `K/N` (1-based shard K of N), or the whole run.
pub fn parse_shard(s: Option<&str>) -> Result<(u64, u64), String> {
    let Some(s) = s else { return Ok((1, 1)) };
    let parsed = s
        .split_once('/')
        .and_then(|(k, n)| Some((k.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!("--shard wants K/N with 1 <= K <= N, got {s}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_in_a_missing_directory_is_refused_before_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Outputs::default();
        assert!(o.check().is_ok());
        o.report_md = Some(dir.path().join("report.md"));
        assert!(o.check().is_ok());
        o.ci.junit = Some(dir.path().join("no/such/junit.xml"));
        let e = o.check().unwrap_err();
        assert!(e.contains("no/such"), "{e}");
        o.ci.junit = None;
        o.ci.tap = Some(PathBuf::from(STDOUT));
        o.report_json = Some(PathBuf::from("plain-name.json"));
        assert!(o.check().is_ok());
    }

    #[test]
    fn shards_are_one_based_and_within_their_count() {
        assert_eq!(parse_shard(None), Ok((1, 1)));
        assert_eq!(parse_shard(Some("2/4")), Ok((2, 4)));
        for bad in ["0/4", "5/4", "x/4", "2"] {
            assert!(parse_shard(Some(bad)).is_err(), "{bad}");
        }
    }
}
