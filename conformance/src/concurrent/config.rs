//! What one concurrent run is asked to do: how many writers of each kind, how many
//! transactions, which refs they share, how often they run maintenance, and what happens
//! to a finding; and the command line that runs the same configuration again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConcurrentConfig {
    /// Seed.
    pub seed: u64,
    /// git writer processes.
    pub git_writers: u32,
    /// Our writer processes.
    pub our_writers: u32,
    /// Writer processes of another implementation, through `adapter`.
    #[serde(default)]
    pub impl_writers: u32,
    /// The implementation's adapter command line, and its `--impl` name for the command
    /// line that runs the configuration again.
    #[serde(default)]
    pub adapter: Option<(Vec<String>, String)>,
    /// Transactions per writer.
    pub txns: u32,
    /// Shared refs besides `main`.
    pub shared: u32,
    /// Maintenance (compaction, auto-compaction, reflog expiry) after every this many
    /// transactions of each writer (0: none).
    pub maintenance_every: u32,
    /// The binary that runs `concurrent-worker` (the `conformance` binary).
    pub worker_exe: PathBuf,
    /// A planted defect for our writers (`REFTABLE_PLANT`; test-hooks builds only).
    pub plant: Option<String>,
    /// Where findings go (`None`: not written).
    pub out: Option<PathBuf>,
    /// Re-run a finding with fewer writers and transactions while it reproduces.
    pub minimize: bool,
    /// Start no run of the minimization after this moment (a time budget's end).
    #[serde(skip)]
    pub deadline: Option<std::time::Instant>,
}

impl ConcurrentConfig {
    /// 2 git and 2 of our writers × `txns`, 4 shared refs, maintenance every 25.
    pub fn new(seed: u64, txns: u32, worker_exe: PathBuf) -> ConcurrentConfig {
        ConcurrentConfig {
            seed,
            git_writers: 2,
            our_writers: 2,
            impl_writers: 0,
            adapter: None,
            txns,
            shared: 4,
            maintenance_every: 25,
            worker_exe,
            plant: None,
            out: None,
            minimize: true,
            deadline: None,
        }
    }

    /// The `conformance concurrent` command line that runs this configuration again.
    pub fn command_line(&self, git: &Path) -> String {
        let imp = match &self.adapter {
            Some((_, name)) if self.impl_writers > 0 => format!(
                " --impl {} --impl-writers {}",
                crate::finding::script::sh_quote(name),
                self.impl_writers
            ),
            _ => String::new(),
        };
        format!(
            "conformance concurrent --git {} --seed {} --git-writers {} --our-writers {}{imp} --concurrent-txns {} --shared-refs {} --maintenance-every {}",
            crate::finding::script::sh_quote(&git.display().to_string()),
            self.seed,
            self.git_writers,
            self.our_writers,
            self.txns,
            self.shared,
            self.maintenance_every
        )
    }
}
