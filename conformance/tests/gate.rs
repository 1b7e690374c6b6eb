//! A bounded conformance gate in `cargo test`: generated cases against real git must show no
//! divergence that is not a known git defect of that git's version.

mod common;

use conformance::cases::case::run_generated;
use conformance::defects::registry::{self, ExpectedSet, Mode};

#[test]
fn bounded_gate_has_no_unexpected_divergence() {
    let Some(env) = common::env() else { return };
    let known = ExpectedSet::load(&registry::default_path()).unwrap();
    let version = env.profile.git_version();
    let cases = std::env::var("CONFORMANCE_TEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12u64);
    let mut ops = 0;
    for index in 0..cases {
        let r = run_generated(&env, 7, index, 25).unwrap();
        ops += r.ops.len();
        let unexpected: Vec<_> = r
            .divergences
            .iter()
            .filter(|d| known.matching(&version, d).is_none())
            .collect();
        assert!(
            unexpected.is_empty(),
            "case {index} ({:?}) diverged: {unexpected:#?}\nops: {:#?}",
            r.options,
            r.ops.iter().map(|o| o.summary()).collect::<Vec<_>>()
        );
    }
    eprintln!("{cases} cases, {ops} operations, no unexpected divergence");
}

/// Every known divergence in range of this git still reproduces on it: an entry that stops
/// matching must be removed or its version range narrowed.
#[test]
fn expected_divergences_still_reproduce() {
    let Some(env) = common::env() else { return };
    let known = ExpectedSet::load(&registry::default_path()).unwrap();
    let stale = conformance::run::stale::stale(&known, &env, 2);
    assert!(stale.is_empty(), "{stale:#?}");
    eprintln!(
        "{} known divergences in range of git {}, all reproduce",
        known
            .in_range_of(&env.profile.git_version(), Mode::Run)
            .count(),
        env.profile.version
    );
}

/// The stale check names every entry whose recorded case no longer shows it, in the
/// registry's order, with its replays spread over threads: here, entries in range of this
/// git made to expect a detail no case shows.
#[test]
fn the_stale_check_names_each_entry_that_stops_reproducing() {
    let Some(env) = common::env() else { return };
    let path = registry::default_path();
    let known = ExpectedSet::load(&path).unwrap();
    let version = env.profile.git_version();
    let ids: Vec<String> = (known.in_range_of(&version, Mode::Run))
        .take(3)
        .map(|e| e.id.clone())
        .collect();
    if ids.is_empty() {
        eprintln!("no known divergence in range of git {version}: nothing to replay");
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let mut entries: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    entries.retain(|e| ids.iter().any(|id| e["id"] == id.as_str()));
    for e in &mut entries {
        let case = known.resolve(e["case"].as_str().unwrap());
        e["case"] = case.display().to_string().into();
        e["detail_contains"] = "a detail no case shows".into();
    }
    let dir = tempfile::tempdir().unwrap();
    let changed = dir.path().join("expected.json");
    std::fs::write(&changed, serde_json::to_string(&entries).unwrap()).unwrap();
    let changed = ExpectedSet::load(&changed).unwrap();
    let stale = conformance::run::stale::stale(&changed, &env, 2);
    let named: Vec<&str> = (stale.iter())
        .filter_map(|l| l.strip_prefix("known divergence "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(named, ids, "{stale:#?}");
}

/// Every case under `regressions/` (divergences found by the gate and fixed, in us or in the
/// harness) replays, with every check that takes turns, without a divergence that is not a
/// known git defect.
#[test]
fn fixed_divergences_stay_fixed() {
    let Some(env) = common::env() else { return };
    let known = ExpectedSet::load(&registry::default_path()).unwrap();
    let version = env.profile.git_version();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let (mut n, mut cases) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let case = entry.unwrap().path();
        cases += 1;
        let file = conformance::cases::casedir::CaseFile::read(&case).unwrap();
        if let Some(why) = conformance::cases::case::not_applicable(&env.profile, &file.ops) {
            eprintln!("{}: not run: {why}", case.display());
            continue;
        }
        let r = conformance::cases::case::replay_concrete(&env, file.options, &file.ops).unwrap();
        let unexpected: Vec<_> = r
            .divergences
            .iter()
            .filter(|d| known.matching(&version, d).is_none())
            .collect();
        assert!(unexpected.is_empty(), "{}: {unexpected:#?}", case.display());
        n += 1;
    }
    // The directory cannot silently empty out, and a git with every command runs them all.
    assert!(
        n >= 2,
        "only {n} of {cases} regression cases in {} ran",
        dir.display()
    );
    let f = &env.profile.features;
    assert!(n == cases || !(f.symref_commands && f.batch_updates && f.refs_writes));
    eprintln!("{n} regression cases replay clean");
}

/// A replay makes every end-of-case check that takes turns across cases, and has the twin:
/// a case recorded under other turns still meets the check that found it.
#[test]
fn a_replay_runs_every_turn() {
    let Some(env) = common::env() else { return };
    let generated = run_generated(&env, 7, 0, 3).unwrap();
    let opts = generated.options.unwrap();
    let replayed = conformance::cases::case::replay_concrete(&env, opts, &generated.ops).unwrap();
    let ran = |check: &str| replayed.check_costs.contains_key(check);
    let turns = [
        "end: reflogs (log -g, reflog list, @{n}, refs exists)",
        "end: broken refs",
        "end: filtered views",
        "end: probe: stash",
        "end: probe: reference-transaction hook",
        "end: probe: bare without logAllRefUpdates",
    ];
    let missing: Vec<_> = turns.iter().filter(|c| !ran(c)).collect();
    assert!(missing.is_empty(), "the replay skipped {missing:?}");
    assert_eq!(replayed.twin_followed, !opts.sha256);
    let skipped = turns
        .iter()
        .filter(|c| !generated.check_costs.contains_key(**c));
    assert!(
        skipped.count() > 0,
        "case 0 of seed 7 takes every turn: pick another"
    );
}
