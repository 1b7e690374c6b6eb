//! The gate catches planted bugs: each deliberate defect in the library is detected by some
//! generated case, minimized to a short case, and the minimized case replays the divergence.
//!
//! The defects exist only in builds made with `--cfg reftable_test_hooks`
//! (`ci/test-hooks.sh`, run by `.ci/run`); in other builds this file is empty.
#![cfg(reftable_test_hooks)]

mod common;

use conformance::cases::case::{run_concrete, run_generated};
use conformance::cases::casedir::{self, CaseFile};
use conformance::cases::minimize::minimize;
use conformance::defects::registry::{self, ExpectedSet};
use conformance::finding::divergence::Divergence;
use reftable::test_hooks::{plant, Defect};

#[test]
fn planted_defects_are_caught_minimized_and_replayable() {
    let Some(env) = common::env() else { return };
    let out = tempfile::tempdir().unwrap();
    let mut report = Vec::new();
    // Divergences that are known defects of this git are not what a planted defect shows.
    let known = ExpectedSet::load(&registry::default_path()).unwrap();
    let version = env.profile.git_version();
    let unknown = |d: &&Divergence| known.matching(&version, d).is_none();
    for defect in Defect::ALL {
        plant(defect);
        let found = (0..30).find_map(|index| {
            let r = run_generated(&env, 11, index, 15).unwrap();
            r.divergences.iter().any(|d| unknown(&d)).then_some(r)
        });
        let Some(found) = found else {
            plant(Defect::None);
            panic!("{defect:?} was not detected by 30 generated cases");
        };
        let opts = found.options.unwrap();
        let check = found.divergences.iter().find(unknown).unwrap().check;
        let wanted = |d: &Divergence| d.check == check && unknown(&d);
        let (ops, runs) = minimize(&env, opts, found.ops.clone(), &wanted, None);
        let replay = run_concrete(&env, opts, &ops).unwrap();
        assert!(
            replay.divergences.iter().any(wanted),
            "{defect:?}: the minimized case does not replay"
        );
        assert!(
            ops.len() <= 6,
            "{defect:?}: minimized to {} operations",
            ops.len()
        );
        // A case directory round-trips through case.json and still replays.
        let dir = out.path().join(format!("{defect:?}"));
        let file = CaseFile {
            seed: None,
            index: None,
            options: opts,
            ops: ops.clone(),
            divergences: replay.divergences.clone(),
            git_version: env.git.version().to_string(),
            git: Some(env.git.bin().display().to_string()),
        };
        casedir::write(&dir, &file, &replay, None, Some(env.pool(opts.hash()))).unwrap();
        for script in ["rerun.sh", "reproduce.sh"] {
            assert!(dir.join(script).is_file(), "{script} written");
        }
        let back = CaseFile::read(&dir).unwrap();
        let again = run_concrete(&env, back.options, &back.ops).unwrap();
        assert!(again.divergences.iter().any(wanted));
        // Without the defect the same case is clean (but for known defects of this git).
        plant(Defect::None);
        let clean = run_concrete(&env, opts, &ops).unwrap();
        assert!(
            !clean.divergences.iter().any(|d| unknown(&d)),
            "{defect:?}: minimized case diverges without the defect: {:?}",
            clean.divergences
        );
        report.push(format!(
            "{defect:?}: caught by {:?} ({}), minimized from {} to {} operations in {runs} runs",
            check,
            found.divergences.iter().find(unknown).unwrap().class,
            found.ops.len(),
            ops.len()
        ));
    }
    plant(Defect::None);
    for line in report {
        eprintln!("{line}");
    }
}
