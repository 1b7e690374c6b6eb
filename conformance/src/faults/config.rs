//! What a faults run does: its seed and cases, the operations and fault points tried, our
//! side's settings, its budget and where its findings go.

use std::path::PathBuf;
use std::time::Instant;

/// What a faults run does.
#[derive(Clone, Debug)]
pub struct FaultsConfig {
    /// Seed of the generated cases.
    pub seed: u64,
    /// Cases to take (none: until the deadline).
    pub cases: Option<u64>,
    /// Operations per generated case.
    pub case_ops: usize,
    /// Operations tried per case.
    pub ops_per_case: usize,
    /// Fault points tried per side and operation at most.
    pub max_points: usize,
    /// Only the points that inject these errors (`SHORT`: a short write); all without.
    pub errnos: Option<Vec<String>>,
    /// The binary with the `fault-worker` subcommand.
    pub worker_exe: PathBuf,
    /// Whether our stack syncs.
    pub fsync: bool,
    /// No trial starts after this.
    pub deadline: Option<Instant>,
    /// Stop after the first case with a defect that fails the run.
    pub fail_fast: bool,
    /// Where findings go (the first of each kind: class, phase, command, call, error).
    pub out: Option<PathBuf>,
    /// Also migrate each case's refs (`git refs migrate`, files to reftable and back) under
    /// faults.
    pub migrations: bool,
    /// Cases run side by side (faults mode; each trial is a process of its own).
    pub jobs: usize,
}

impl FaultsConfig {
    /// Defaults: 3 cases of 20 operations, 4 operations each, at most 400 points per side
    /// (every point of the usual operation).
    pub fn new(seed: u64, worker_exe: PathBuf) -> FaultsConfig {
        FaultsConfig {
            seed,
            cases: Some(3),
            case_ops: 20,
            ops_per_case: 4,
            max_points: 400,
            errnos: None,
            worker_exe,
            fsync: true,
            deadline: None,
            jobs: 1,
            fail_fast: false,
            out: None,
            migrations: true,
        }
    }
}
