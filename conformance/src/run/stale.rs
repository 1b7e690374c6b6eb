//! The known git defects replayed: every run-mode entry of the registry in range of a git
//! is run again as a case; one that stops reproducing fails the run (the defect was fixed,
//! or the entry's range is wrong).

use crate::cases::case::replay_concrete;
use crate::cases::casedir::CaseFile;
use crate::defects::registry::{matches, Expected, ExpectedSet, Mode};
use crate::setup::env::Env;

/// Replay every run-mode entry in range of `env`'s git; returns one line for each that no
/// longer reproduces (or cannot be replayed).
pub fn stale(known: &ExpectedSet, env: &Env) -> Vec<String> {
    let v = env.profile.git_version();
    let mut out = Vec::new();
    // A concurrency defect depends on the scheduler: its case keeps the interleaving, but
    // no serial replay shows it (its git-only reproducer does, most runs); migrate and
    // damaged entries have no case of generated operations.
    // A defect only a sanitizer build shows is asked only of a git built with it, and one
    // only a checking allocator shows not of a build without one.
    let shows = |e: &&Expected| e.shows_on(&env.profile.sanitizers);
    for e in known.in_range_of(&v, Mode::Run).filter(shows) {
        let dir = known.resolve(&e.case);
        let r = CaseFile::read(&dir).and_then(|c| replay_concrete(env, c.options, &c.ops));
        match r {
            Ok(r) if r.divergences.iter().any(|d| matches(e, d)) => {}
            Ok(_) => out.push(format!(
                "known divergence {} ({}) no longer reproduces on git {v}: remove it from {} or narrow its versions",
                e.id,
                e.versions,
                known.path.display()
            )),
            Err(err) => out.push(format!("known divergence {}: cannot replay {}: {err}", e.id, dir.display())),
        }
    }
    out
}
