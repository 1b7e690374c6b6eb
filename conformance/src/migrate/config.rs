//! What a migration run is asked to do: which cases of which seed, how long each, and
//! where a case that diverged is written.

use std::path::PathBuf;

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct MigrateConfig {
    /// Seed.
    pub seed: u64,
    /// Cases (`u64::MAX`: until a time budget ends the list).
    pub cases: u64,
    /// Operations per case.
    pub ops: usize,
    /// Run only this case of the seed's list.
    pub only: Option<u64>,
    /// Where a case with an unexpected divergence is written (`None`: not written).
    pub out: Option<PathBuf>,
}
