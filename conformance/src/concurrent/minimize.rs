//! Minimization of a concurrent finding: fewer transactions, fewer writers, no maintenance,
//! no shared refs, each kept while a run (one of a few, since the interleaving is up to the
//! scheduler) still shows a finding of the same class; no run is started after the
//! configuration's deadline.

use crate::concurrent::config::ConcurrentConfig;
use crate::concurrent::coordinator::{run_once, RunOutput};
use crate::setup::env::Env;

/// Smaller configurations to try, in order, when `cfg` showed a finding.
fn smaller(cfg: &ConcurrentConfig) -> Vec<ConcurrentConfig> {
    let mut out = Vec::new();
    if cfg.txns > 10 {
        out.push(ConcurrentConfig {
            txns: (cfg.txns / 2).max(10),
            ..cfg.clone()
        });
    }
    if cfg.git_writers > 1 {
        out.push(ConcurrentConfig {
            git_writers: cfg.git_writers - 1,
            ..cfg.clone()
        });
    }
    if cfg.our_writers > 1 {
        out.push(ConcurrentConfig {
            our_writers: cfg.our_writers - 1,
            ..cfg.clone()
        });
    }
    if cfg.impl_writers > 1 {
        out.push(ConcurrentConfig {
            impl_writers: cfg.impl_writers - 1,
            ..cfg.clone()
        });
    }
    if cfg.maintenance_every > 0 {
        out.push(ConcurrentConfig {
            maintenance_every: 0,
            ..cfg.clone()
        });
    }
    if cfg.shared > 0 {
        out.push(ConcurrentConfig {
            shared: 0,
            ..cfg.clone()
        });
    }
    out
}

/// How often a smaller configuration is run before it counts as not reproducing (the
/// interleaving is up to the scheduler).
const ATTEMPTS: usize = 4;

/// Shrink `cfg` while a run still shows a finding of `class`; the smallest run's output.
pub(crate) fn minimize(
    env: &Env,
    cfg: &ConcurrentConfig,
    class: &str,
) -> (ConcurrentConfig, Option<RunOutput>) {
    let mut best = cfg.clone();
    let mut best_run = None;
    'outer: loop {
        for c in smaller(&best) {
            for _ in 0..ATTEMPTS {
                if crate::budget::past(cfg.deadline) {
                    return (best, best_run);
                }
                let Ok(r) = run_once(env, &c) else { continue };
                if r.report.findings.iter().any(|f| f.class == class) {
                    best = c;
                    best_run = Some(r);
                    continue 'outer;
                }
            }
        }
        return (best, best_run);
    }
}
