//! Target `stack_read`: a stack from an arbitrary `tables.list` and table files (layout in
//! [`crate::stack_input`]), loaded by the library's [`StackReader`] and read through the
//! merged view with and without `suppress_deletions`.
//!
//! Oracles: the merged view fails exactly when one of its tables fails to iterate; when
//! every table iterates in strictly increasing key order, the merged view equals the
//! newest-wins [`StackModel`] of the tables, and exact lookups agree with the model.
//!
//! Work and memory are bounded by the bytes of the *listed* tables: a list may name one
//! file many times, and each listing is a table of its own.

use reftable::codec::record::Record;
use reftable::table::Stats;
use reftable::{LogRecord, MergedTable, RefRecord, Result, StackReader, Table};

use crate::model::StackModel;
use crate::stack_input::StackInput;
use crate::{alloc, limits};

/// Names looked up with `read_ref` and `read_log`.
const LOOKUPS: usize = 8;

/// Allocation budget per byte of content: each table's copy of its file, and the decoded
/// records (a few hundred bytes of struct per record of at least 2 bytes) held five times
/// over: per table, in the model, and in the merged results of both modes.
const ALLOC_PER_BYTE: u64 = 1024;

/// Load a stack and read it; see the module docs.
pub fn stack_read(data: &[u8]) {
    let input = StackInput::parse(data);
    let ((stats, listed, passes), peak) = alloc::measure(|| read(&input));
    let content = limits::content_bytes(listed + data.len(), stats.blocks_inflated > 0);
    if let Some(why) = limits::work_excess(&stats, passes, content) {
        panic!("stack_read: {why}");
    }
    limits::check_alloc("stack_read", peak, ALLOC_PER_BYTE, content);
}

fn collect<R: Record, I: Iterator<Item = Result<R>>>(it: Result<I>) -> Result<Vec<R>> {
    it?.collect()
}

fn strictly_increasing<R: Record>(recs: &[R]) -> bool {
    let key = |r: &R| {
        let mut k = Vec::new();
        r.write_key(&mut k);
        k
    };
    recs.windows(2).all(|w| key(&w[0]) < key(&w[1]))
}

/// Returns the work done, the bytes of the listed tables and the passes made.
fn read(input: &StackInput<'_>) -> (Stats, usize, u64) {
    // The library's own stack loader, from memory.
    let loaded = StackReader::from_memory(
        input.list,
        |name| input.file(name.as_bytes()).map(<[u8]>::to_vec),
        None,
    );
    let Ok(stack) = loaded else {
        return (Stats::default(), 0, 0);
    };
    let tables = stack.tables().to_vec();
    let listed: usize = tables.iter().map(|t| t.bytes().len()).sum();
    let hash = tables.first().map_or(Default::default(), Table::hash);
    let total = |tables: &[Table]| {
        let mut s = Stats::default();
        for t in tables {
            s += t.stats();
        }
        s
    };
    let Ok(mut merged) = MergedTable::new(tables.clone(), hash) else {
        return (total(&tables), listed, 0);
    };

    // Each table on its own, through the same seek the merged view uses.
    let mut model = StackModel::new();
    let mut all_ok = true;
    let mut sorted = true;
    for t in &tables {
        let refs = collect(t.seek::<RefRecord>(b""));
        let logs = collect(t.seek::<LogRecord>(b""));
        match (refs, logs) {
            (Ok(refs), Ok(logs)) => {
                sorted &= strictly_increasing(&refs) && strictly_increasing(&logs);
                model.add_table(&refs, &logs);
            }
            _ => all_ok = false,
        }
    }
    let mut passes = 2;

    for suppress in [false, true] {
        merged.set_suppress_deletions(suppress);
        let refs = collect(merged.refs());
        let logs = collect(merged.logs());
        passes += 2;
        if !all_ok {
            assert!(
                refs.is_err() || logs.is_err(),
                "a table fails to iterate but the merged view does not (suppress {suppress})"
            );
            continue;
        }
        let (refs, logs) = match (refs, logs) {
            (Ok(r), Ok(l)) => (r, l),
            (r, l) => panic!(
                "every table iterates but the merged view fails: {:?} {:?}",
                r.err(),
                l.err()
            ),
        };
        if sorted {
            assert_eq!(
                refs,
                model.refs(suppress),
                "merged refs (suppress {suppress})"
            );
            assert_eq!(
                logs,
                model.logs(suppress),
                "merged logs (suppress {suppress})"
            );
        }
    }

    let names: Vec<Vec<u8>> = model
        .refs(false)
        .into_iter()
        .map(|r| r.refname)
        .chain(model.logs(false).into_iter().map(|l| l.refname))
        .take(LOOKUPS)
        .collect();
    for name in &names {
        // Lookups seek, and a table whose index disagrees with its blocks may still iterate
        // cleanly: the model is checked against lookups in `merged_model`, over tables the
        // writer made. Here a hit must be the live ref asked for.
        if let Ok(Some(r)) = merged.read_ref(name) {
            assert_eq!(r.refname, *name);
            assert!(!r.is_deletion());
        }
        let _ = merged.read_log(name).map(Iterator::count);
        passes += 4;
    }
    (total(&tables), listed, passes)
}
