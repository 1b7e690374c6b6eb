//! The known git defects replayed: every run-mode entry of the registry in range of a git
//! is run again as a case; one that stops reproducing fails the run (the defect was fixed,
//! or the entry's range is wrong).

use crate::cases::case::{not_applicable, replay_concrete};
use crate::cases::casedir::CaseFile;
use crate::cases::executor::fit;
use crate::defects::registry::{matches, Expected, ExpectedSet, Mode};
use crate::git::profile::Profile;
use crate::lanes::map_in_lanes;
use crate::setup::env::Env;

/// Replay every run-mode entry in range of `env`'s git, on `lanes` threads; returns one
/// line for each that no longer reproduces (or cannot be replayed), in the registry's order.
pub fn stale(known: &ExpectedSet, env: &Env, lanes: usize) -> Vec<String> {
    let v = env.profile.git_version();
    // A concurrency defect depends on the scheduler: its case keeps the interleaving, but
    // no serial replay shows it (its git-only reproducer does, most runs); migrate and
    // damaged entries have no case of generated operations.
    // A defect only a sanitizer build shows is asked only of a git built with it, and one
    // only a checking allocator shows not of a build without one.
    let shows = |e: &&Expected| e.shows_on(&env.profile.sanitizers);
    let entries: Vec<&Expected> = known.in_range_of(&v, Mode::Run).filter(shows).collect();
    let verdicts = map_in_lanes(&entries, lanes, |_, e| stale_line(known, env, e));
    verdicts.into_iter().flatten().collect()
}

/// Whether the entry `e` still reproduces on `env`'s git: `None`, or the line that says it
/// does not (or cannot be replayed).
fn stale_line(known: &ExpectedSet, env: &Env, e: &Expected) -> Option<String> {
    let v = env.profile.git_version();
    let dir = known.resolve(&e.case);
    let file = CaseFile::read(&dir);
    // A case this git cannot run as it was recorded (options it has no config for,
    // commands it lacks) says nothing of the defect here: its reproducer does.
    if file.as_ref().is_ok_and(|c| !replayable(&env.profile, c)) {
        return None;
    }
    match file.and_then(|c| replay_concrete(env, c.options, &c.ops)) {
        Ok(r) if r.divergences.iter().any(|d| matches(e, d)) => None,
        Ok(_) => Some(format!(
            "known divergence {} ({}) no longer reproduces on git {v}: remove it from {} or narrow its versions",
            e.id,
            e.versions,
            known.path.display()
        )),
        Err(err) => Some(format!("known divergence {}: cannot replay {}: {err}", e.id, dir.display())),
    }
}

/// Whether the git of `profile` runs the case `c` as it was recorded: with its options (a git
/// without `reftable.*` config runs every case at the default block size) and its commands.
fn replayable(profile: &Profile, c: &CaseFile) -> bool {
    fit(c.options, profile) == c.options && not_applicable(profile, &c.ops).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::profile::{Features, GitRules};
    use crate::ops::CaseOptions;

    fn profile(reftable_config: bool) -> Profile {
        Profile {
            version: "2.45.4".into(),
            build_options: String::new(),
            commit: None,
            features: Features {
                reftable_config,
                ..Features::default()
            },
            objects_checked_when_queued: false,
            df_checks_batched: false,
            non_commit_through_symref_refused: false,
            tables_list_needs_newline: false,
            rules: GitRules {
                dangling_symref_protected: false,
                log_only_old_checked: true,
            },
            symbolic_root_refs_listed: false,
            no_reflog_message: String::new(),
            sanitizers: Vec::new(),
            surprises: Vec::new(),
        }
    }

    #[test]
    fn a_case_with_a_block_size_is_not_replayed_by_a_git_without_reftable_config() {
        let small = CaseFile {
            seed: None,
            index: None,
            options: CaseOptions {
                block_size: 300,
                ..CaseOptions::default()
            },
            ops: Vec::new(),
            divergences: Vec::new(),
            git_version: "2.47.3".into(),
            git: None,
        };
        assert!(!replayable(&profile(false), &small));
        assert!(replayable(&profile(true), &small));
        let default = CaseFile {
            options: CaseOptions::default(),
            ..small
        };
        assert!(replayable(&profile(false), &default));
    }
}
