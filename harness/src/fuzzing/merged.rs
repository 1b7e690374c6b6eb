//! Target `merged_model`: a stack of tables written from arbitrary records, read through
//! [`MergedTable`] and compared with the newest-wins [`StackModel`], with and without
//! `suppress_deletions`: full iteration, seeks, exact lookups and reflogs.

use arbitrary::Arbitrary;
use reftable::codec::record::Record;
use reftable::merged::MergedIter;
use reftable::table::Stats;
use reftable::{MergedTable, Result};

use crate::build::TableRecords;
use crate::inputs::{FuzzLog, FuzzOptions, FuzzRef, Name};
use crate::model::StackModel;
use crate::{alloc, limits};

/// Most tables in one stack.
const MAX_TABLES: usize = 8;

/// Allocation budget per byte of table content for reading every record of the stack into
/// a `Vec` (see `write_roundtrip`).
const READ_ALLOC_PER_BYTE: u64 = 512;

/// Records compared after each seek.
const SEEK_TAKE: usize = 8;

/// Input of [`merged_model`].
#[derive(Clone, Debug, Arbitrary)]
pub struct MergedInput {
    /// Writer options, shared by the tables.
    pub options: FuzzOptions,
    /// The tables, oldest first (at most 8 are used).
    pub tables: Vec<TableSpec>,
    /// Names to seek to and look up.
    pub probes: Vec<Name>,
}

/// The records of one table of a [`MergedInput`].
#[derive(Clone, Debug, Arbitrary)]
pub struct TableSpec {
    /// Ref records; table `i` covers update indexes `2i+1..=2i+2`.
    pub refs: Vec<FuzzRef>,
    /// Log records, at update indexes up to the table's maximum.
    pub logs: Vec<FuzzLog>,
}

fn take<R: Record>(it: Result<MergedIter<R>>, n: usize) -> Vec<R> {
    it.and_then(|it| it.take(n).collect())
        .unwrap_or_else(|e| panic!("merged view of tables the writer made: {e}"))
}

/// Build the stack, then compare the merged view with the model; see the module docs.
pub fn merged_model(input: MergedInput) {
    let opts = input.options.0;
    let mut model = StackModel::new();
    let mut tables = Vec::new();
    for (i, spec) in input.tables.iter().take(MAX_TABLES).enumerate() {
        let min = 2 * i as u64 + 1;
        let recs = TableRecords::new(min, min + 1, &spec.refs, &spec.logs, &opts);
        if let Some((t, _)) = recs.table(&format!("{i}.ref"), opts) {
            model.add_table(&recs.refs, &recs.logs);
            tables.push(t);
        }
    }
    let content: usize = tables.iter().map(|t| t.bytes().len()).sum();
    let mut merged = MergedTable::new(tables, opts.hash).expect("one hash for all tables");

    let mut names: Vec<Vec<u8>> = input.probes.iter().map(|p| p.0.clone()).collect();
    names.extend(model.refs(false).into_iter().map(|r| r.refname).step_by(3));
    names.extend(model.logs(false).into_iter().map(|l| l.refname).step_by(5));
    names.truncate(32);

    for suppress in [false, true] {
        merged.set_suppress_deletions(suppress);
        assert_eq!(suppress, merged.suppress_deletions());
        let all = usize::MAX;
        let ((refs, logs), peak) =
            alloc::measure(|| (take(merged.refs(), all), take(merged.logs(), all)));
        let bound = limits::content_bytes(content, merged.stats().blocks_inflated > 0);
        limits::check_alloc("merged_model: read", peak, READ_ALLOC_PER_BYTE, bound);
        assert_eq!(refs, model.refs(suppress), "refs (suppress {suppress})");
        assert_eq!(logs, model.logs(suppress), "logs (suppress {suppress})");
        for name in &names {
            let want: Vec<_> = model
                .seek_refs(name, suppress)
                .take(SEEK_TAKE)
                .cloned()
                .collect();
            assert_eq!(
                take(merged.seek_ref(name), SEEK_TAKE),
                want,
                "seek_ref {name:?}"
            );
            let want: Vec<_> = model
                .seek_logs(&reftable::LogRecord::seek_key(name, u64::MAX), suppress)
                .take(SEEK_TAKE)
                .cloned()
                .collect();
            assert_eq!(
                take(merged.seek_log(name), SEEK_TAKE),
                want,
                "seek_log {name:?}"
            );
            assert_eq!(
                merged.read_ref(name).unwrap().as_ref(),
                model.read_ref(name),
                "read_ref {name:?} (suppress {suppress})"
            );
            assert_eq!(
                merged
                    .read_log(name)
                    .and_then(|l| l.collect::<reftable::Result<Vec<_>>>())
                    .unwrap(),
                model.read_log(name),
                "read_log {name:?}"
            );
        }
    }

    // Each merged pass reads every table once; each seek reads each table at most twice.
    let passes = 2 * (2 + 4 * 2 * names.len() as u64);
    let stats: Stats = merged.stats();
    let content = limits::content_bytes(content, stats.blocks_inflated > 0);
    limits::check_work("merged_model", &stats, passes, content);
}
