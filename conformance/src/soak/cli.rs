//! `conformance soak`'s options and its run: seeds one after another through the run
//! mode's runner, each seed's divergences written under `--out/seed<S>/`.

use std::path::PathBuf;
use std::time::Instant;

use crate::mode::args::{default_jobs, load_registry, parse_shard, Outputs};
use crate::mode::report::finish;
use crate::run::cli::{announce_gits, run_envs};
use crate::run::runner::{run, RunConfig};
use crate::soak::report::SoakReport;

/// `conformance soak`'s options.
#[derive(clap::Args, Clone, Debug)]
pub struct SoakArgs {
    /// Seeds to run.
    #[arg(long, default_value_t = 30)]
    pub seeds: u64,
    /// The first seed (default: one the clock gives, printed, so that each soak is fresh
    /// and can be run again).
    #[arg(long)]
    pub first_seed: Option<u64>,
    /// Cases per seed (per git).
    #[arg(long, default_value_t = 120)]
    pub cases: u64,
    /// Operations per case.
    #[arg(long, default_value_t = 30)]
    pub ops: usize,
    /// Parallel jobs.
    #[arg(long, default_value_t = default_jobs())]
    pub jobs: usize,
    /// Run only every N-th seed from the K-th (1-based), e.g. 2/4: a CI matrix's share.
    #[arg(long)]
    pub shard: Option<String>,
    /// A git binary to soak; give it several times for each (default: REFTABLE_TEST_GIT,
    /// else git on PATH).
    #[arg(long)]
    pub git: Vec<PathBuf>,
    /// The known defects (default: REFTABLE_EXPECTED_DIVERGENCES, else
    /// conformance/expected-divergences.json).
    #[arg(long)]
    pub expected: Option<PathBuf>,
    /// Where divergent cases go (a folder per seed).
    #[arg(long, default_value = "target/conformance/soak")]
    pub out: PathBuf,
    /// Do not minimize divergent cases.
    #[arg(long)]
    pub no_minimize: bool,
    #[command(flatten)]
    pub outputs: Outputs,
}

/// The seeds of a soak: `n` from `first`, every `of`-th from the `k`-th.
fn seeds(first: u64, n: u64, (k, of): (u64, u64)) -> Vec<u64> {
    (0..n)
        .filter(|i| i % of == k - 1)
        .map(|i| first.wrapping_add(i))
        .collect()
}

/// A first seed from the clock: minutes since the epoch.
fn fresh_seed() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map(|d| d.as_secs() / 60).unwrap_or(1)
}

/// `conformance soak`: the exit status, or why the soak could not be made.
pub fn main(a: &SoakArgs) -> Result<i32, String> {
    a.outputs.check()?;
    let shard = parse_shard(a.shard.as_deref())?;
    let known = load_registry(a.expected.as_deref())?;
    let envs = run_envs(&a.git)?;
    announce_gits(&envs);
    let first = a.first_seed.unwrap_or_else(fresh_seed);
    let seeds = seeds(first, a.seeds, shard);
    eprintln!("soak: {} seeds from {first}: {seeds:?}", seeds.len());
    let start = Instant::now();
    let mut report = SoakReport {
        cases_per_seed: a.cases,
        ..Default::default()
    };
    for seed in seeds {
        let cfg = RunConfig {
            cases: a.cases,
            ops: a.ops,
            seed,
            jobs: a.jobs,
            shard: (1, 1),
            out: a.out.join(format!("seed{seed}")),
            minimize: !a.no_minimize,
        };
        let r = run(&envs, &known, &cfg)?;
        for d in r.divergences.iter().filter(|d| d.expected.is_none()) {
            eprintln!("soak: seed {seed}: {}", d.line());
        }
        eprintln!(
            "soak: seed {seed}: {} cases, {} unexpected, {} known",
            r.cases, r.unexpected_divergences, r.expected_divergences
        );
        report.add(seed, &r);
    }
    report.seconds = start.elapsed().as_secs_f64();
    finish(&report, &a.outputs, &known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_seeds() {
        assert_eq!(seeds(10, 5, (1, 1)), vec![10, 11, 12, 13, 14]);
        assert_eq!(seeds(10, 5, (1, 2)), vec![10, 12, 14]);
        assert_eq!(seeds(10, 5, (2, 2)), vec![11, 13]);
    }
}
