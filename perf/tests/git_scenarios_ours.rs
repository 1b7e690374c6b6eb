//! Our side of the git-counter scenarios (`complexity --counters`): the counters a stack
//! reload per ref or a sync per ref would multiply stay constant per transaction. Asserts
//! on our counters only; git's side is a report (`ci/git-counters.sh`), never a test.

use perf::git_counters::{measure_ours, GitScenario};

const SIZES: [usize; 2] = [100, 400];

/// A counter of ours for a scenario that is one transaction of `n` refs, at each size.
fn per_transaction(scenario: GitScenario, counter: &str) -> Vec<f64> {
    let s = measure_ours(scenario, &SIZES).unwrap();
    let v = s
        .values(counter)
        .unwrap_or_else(|| panic!("{}: no {counter} counted: {:?}", scenario.name(), s.per_op));
    v.iter()
        .zip(SIZES)
        .map(|(per_op, n)| (per_op * n as f64).round())
        .collect()
}

#[test]
fn one_transaction_of_n_creates_stats_and_syncs_tables_list_a_constant_number_of_times() {
    for scenario in [
        GitScenario::CreateTags,
        GitScenario::CreateHeads,
        GitScenario::CreatePreexisting,
    ] {
        for counter in ["tables_list_stats", "tables_list_reads", "fsyncs"] {
            let v = per_transaction(scenario, counter);
            assert_eq!(
                v[0],
                v[1],
                "{} {counter} per transaction: {v:?}",
                scenario.name()
            );
            assert!(
                v[0] <= 4.0,
                "{} {counter}: {} per transaction",
                scenario.name(),
                v[0]
            );
        }
    }
}

#[test]
fn single_ref_transactions_stat_tables_list_a_constant_number_of_times_each() {
    // n transactions of one ref: per operation is per transaction. Each syncs its table, the
    // directory, tables.list and the directory again; the geometric auto-compaction after it
    // (about two in three transactions merge their table into the one below) adds its own
    // reload and four syncs, so the figure per transaction varies a little with n, and would
    // grow with it if a transaction reloaded per ref or per table.
    let s = measure_ours(GitScenario::AutoCompaction, &SIZES).unwrap();
    let stats = s.values("tables_list_stats").unwrap();
    assert!(
        stats.iter().all(|x| (5.0..6.0).contains(x)) && (stats[1] - stats[0]).abs() < 0.2,
        "tables.list stats per transaction: {stats:?}"
    );
    let syncs = s.values("fsyncs").unwrap();
    assert!(
        syncs.iter().all(|x| (6.0..7.2).contains(x)),
        "fsyncs per transaction: {syncs:?}"
    );
}
