//! Complexity tests on the library's counters: deterministic, no wall time, no git.
//!
//! Every scenario runs at doubling sizes and checks, per operation:
//! - blocks read stay constant;
//! - records decoded *past the seek positions* stay constant (what git 2.47's quadratic bug
//!   inflated: tombstones scanned before a bound is checked);
//! - for auto-compaction: entries written stay below `n log2 n` (git's unit-test bound) and
//!   grow logarithmically per added ref.
//!
//! The same checks must fail with `suppress_deletions` (git 2.47's behaviour): that test shows
//! the suite catches the regression. Run with `-- --nocapture` to see the per-op tables.
//!
//! Records decoded *by the seeks themselves* (index walks) are printed and checked against a
//! logarithmic bound in `seek_records_are_logarithmic`. (This test caught the library scanning
//! the root index level record by record; fixed since.)

use perf::fit::{check_growth, n_log2_n};
use perf::scenarios::{sweep, Config, Growth, Point, Scenario};

/// Sizes of the cheap scenarios (lookups over tables written directly).
const SIZES: [usize; 7] = [1000, 2000, 4000, 8000, 16000, 32000, 64000];
/// Sizes of the ref-database scenarios: a transaction of n creates costs O(n²) in memory
/// today (see perf/README.md), so debug builds stop at 8,000.
const P1401_SIZES: [usize; 4] = [1000, 2000, 4000, 8000];
/// One table per added ref is file-system bound (a few ms per addition).
const COMPACTION_SIZES: [usize; 4] = [256, 512, 1024, 2048];
/// Sizes for the planted regression on lookups (quadratic work; smaller keeps it quick).
const REGRESSION_SIZES: [usize; 4] = [1000, 2000, 4000, 8000];
/// Sizes for the planted regression through the ref database (18 s at 2,000 in debug).
const REGRESSION_P1401_SIZES: [usize; 3] = [250, 500, 1000];

fn print(title: &str, points: &[Point]) {
    println!("\n{title}");
    println!(
        "{:>7} {:>14} {:>14} {:>14} {:>11} {:>13} {:>7}",
        "n", "records/op", "seek rec/op", "scan rec/op", "blocks/op", "compacted/op", "tables"
    );
    for p in points {
        println!(
            "{:>7} {:>14.2} {:>14.2} {:>14.2} {:>11.2} {:>13.2} {:>7}",
            p.n,
            p.records_per_op(),
            p.seek_records_per_op(),
            p.scan_records_per_op(),
            p.blocks_per_op(),
            p.entries_written_per_op(),
            p.tables
        );
    }
}

/// The bounds of a scenario's points; `Err` names the first that broke.
fn check(scenario: Scenario, points: &[Point]) -> Result<(), String> {
    let sizes: Vec<usize> = points.iter().map(|p| p.n).collect();
    let per = |f: fn(&Point) -> f64| points.iter().map(f).collect::<Vec<f64>>();
    let name = scenario.name();
    if scenario == Scenario::AutoCompaction {
        for p in points {
            let bound = n_log2_n(p.n);
            if p.entries_written as f64 >= bound {
                return Err(format!(
                    "{name}: n={} wrote {} entries, not below n log2 n = {bound:.0}",
                    p.n, p.entries_written
                ));
            }
            let tables = 2.0 * (p.n as f64).log2();
            if p.tables as f64 >= tables {
                return Err(format!(
                    "{name}: n={} had {} tables, not below 2 log2 n = {tables:.1}",
                    p.n, p.tables
                ));
            }
        }
        check_growth(
            &format!("{name} entries written"),
            &sizes,
            &per(Point::entries_written_per_op),
            Growth::Logarithmic,
        )?;
        check_growth(
            &format!("{name} blocks read"),
            &sizes,
            &per(Point::blocks_per_op),
            Growth::Logarithmic,
        )?;
        return Ok(());
    }
    check_growth(
        &format!("{name} blocks read"),
        &sizes,
        &per(Point::blocks_per_op),
        Growth::Constant,
    )?;
    check_growth(
        &format!("{name} records decoded past the seeks"),
        &sizes,
        &per(Point::scan_records_per_op),
        Growth::Constant,
    )?;
    Ok(())
}

fn run(scenario: Scenario, sizes: &[usize], cfg: Config) -> Vec<Point> {
    let points = sweep(scenario, sizes, cfg).expect("scenario runs");
    let label = format!(
        "{} ({}, auto-compaction {})",
        scenario.name(),
        cfg.implementation(),
        if cfg.auto_compaction { "on" } else { "off" }
    );
    print(&label, &points);
    points
}

fn assert_bounded(scenario: Scenario, sizes: &[usize], cfg: Config) {
    let points = run(scenario, sizes, cfg);
    if let Err(e) = check(scenario, &points) {
        panic!("{e}");
    }
}

#[test]
fn seek_to_missing_name_before_tombstones() {
    assert_bounded(Scenario::SeekMissing, &SIZES, Config::OURS);
}

#[test]
fn read_deleted_ref() {
    assert_bounded(Scenario::ReadDeleted, &SIZES, Config::OURS);
}

#[test]
fn df_check_among_tombstones() {
    assert_bounded(Scenario::DfCheck, &SIZES, Config::OURS);
}

#[test]
fn prefix_iteration_ends_before_tombstones() {
    assert_bounded(Scenario::PrefixIteration, &SIZES, Config::OURS);
}

#[test]
fn reflog_read_past_log_tombstones() {
    assert_bounded(Scenario::ReflogRead, &SIZES, Config::OURS);
}

#[test]
fn p1401_recreate_with_auto_compaction() {
    assert_bounded(Scenario::P1401Recreate, &P1401_SIZES, Config::OURS);
}

#[test]
fn p1401_recreate_without_auto_compaction() {
    assert_bounded(
        Scenario::P1401Recreate,
        &P1401_SIZES,
        Config::OURS.with_auto_compaction(false),
    );
}

#[test]
fn p1401_asymmetric_with_auto_compaction() {
    assert_bounded(Scenario::P1401Asymmetric, &P1401_SIZES, Config::OURS);
}

#[test]
fn p1401_asymmetric_without_auto_compaction() {
    assert_bounded(
        Scenario::P1401Asymmetric,
        &P1401_SIZES,
        Config::OURS.with_auto_compaction(false),
    );
}

#[test]
fn auto_compaction_writes_within_n_log_n() {
    assert_bounded(Scenario::AutoCompaction, &COMPACTION_SIZES, Config::OURS);
}

/// Run each case and require the bound checks to fail for all of them.
fn assert_caught(cases: &[(Scenario, Config)], sizes: &[usize]) {
    let mut missed = Vec::new();
    for &(scenario, cfg) in cases {
        let points = run(scenario, sizes, cfg);
        match check(scenario, &points) {
            Err(e) => println!("caught as expected: {e}"),
            Ok(()) => missed.push(format!(
                "{} (auto-compaction {})",
                scenario.name(),
                cfg.auto_compaction
            )),
        }
    }
    assert!(
        missed.is_empty(),
        "the bound checks did not catch suppress_deletions in: {missed:?}"
    );
}

/// The planted regression: git 2.47's `suppress_deletions` makes every bounded scan through
/// the merged iterator go on past its bound over the tombstones. The same checks must fail
/// for every scenario that scans. (Point lookups, `seek-missing` and `read-deleted`, do not
/// go through the merged iterator at all: the newest table holding the name decides, so
/// suppressing deletions cannot make them scan; their bounds are checked above.)
#[test]
fn suppress_deletions_regression_is_caught_in_lookups() {
    let cases = [
        Scenario::DfCheck,
        Scenario::PrefixIteration,
        Scenario::ReflogRead,
    ]
    .map(|s| (s, Config::SUPPRESS_DELETIONS));
    assert_caught(&cases, &REGRESSION_SIZES);
}

/// The planted regression through the ref database: p1401's transactions.
#[test]
fn suppress_deletions_regression_is_caught_in_p1401() {
    let cases = [
        (Scenario::P1401Recreate, Config::SUPPRESS_DELETIONS),
        (
            Scenario::P1401Recreate,
            Config::SUPPRESS_DELETIONS.with_auto_compaction(false),
        ),
        (
            Scenario::P1401Asymmetric,
            Config::SUPPRESS_DELETIONS.with_auto_compaction(false),
        ),
    ];
    assert_caught(&cases, &REGRESSION_P1401_SIZES);
}

/// Records decoded by the seeks alone grow at most logarithmically (one block per index
/// level, a binary search over restart points in each). Before the fix the library scanned
/// the root index level record by record: about n / 320 records per seek.
#[test]
fn seek_records_are_logarithmic() {
    let mut failures = Vec::new();
    for scenario in [
        Scenario::SeekMissing,
        Scenario::ReadDeleted,
        Scenario::DfCheck,
        Scenario::PrefixIteration,
    ] {
        let points = run(scenario, &SIZES, Config::OURS);
        let sizes: Vec<usize> = points.iter().map(|p| p.n).collect();
        let seek: Vec<f64> = points.iter().map(Point::seek_records_per_op).collect();
        if let Err(e) = check_growth(
            &format!("{} seek records", scenario.name()),
            &sizes,
            &seek,
            Growth::Logarithmic,
        ) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
