//! Allocations on the read hot paths, counted by the counting allocator: iterating a stack
//! allocates nothing per record (one table, or several merged), whatever the size; point
//! lookups allocate a bounded number of times each.
//!
//! Counts are deterministic (same input, same code, same allocations), so these are exact
//! assertions, not timings.

use reftable::{ObjectId, RefRecord, RefValue, Stack, StackOptions};
use reftable_harness::alloc::{count_allocations, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn id(i: usize) -> ObjectId {
    let mut b = [0u8; 20];
    b[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
    ObjectId::from_bytes(&b).expect("20 bytes")
}

fn name(i: usize) -> Vec<u8> {
    format!("refs/tags/t-{i:07}").into_bytes()
}

/// A stack of `tables` tables with `n` refs spread over them (every table holds every
/// `tables`-th ref, and the newest one also overwrites every tenth ref, so keys repeat
/// across tables and the merge has shadowed records to drop).
fn stack(n: usize, tables: usize) -> (tempfile::TempDir, Stack) {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StackOptions::default().auto_compaction(false).fsync(false);
    let mut st = Stack::open_or_create(dir.path(), opts).expect("open");
    for t in 0..tables {
        st.add(|w, ui| {
            w.set_limits(ui, ui)?;
            for i in 0..n {
                let here = i % tables == t || (t == tables - 1 && i % 10 == 0);
                if here {
                    w.add_ref(&RefRecord::new(name(i), ui, RefValue::Object(id(i))))?;
                }
            }
            Ok(())
        })
        .expect("add");
    }
    (dir, st)
}

/// Allocations of one full iteration through the merged view, and the records seen.
fn iterate(st: &Stack) -> (usize, u64) {
    let (seen, calls) = count_allocations(|| {
        let mut it = st.merged().refs().expect("refs");
        let mut seen = 0;
        while let Some(r) = it.next_record().expect("next") {
            assert!(r.value_id().is_some());
            seen += 1;
        }
        seen
    });
    (seen, calls.expect("the counting allocator is installed"))
}

#[test]
fn iterating_allocates_nothing_per_record() {
    for tables in [1, 3] {
        let (_a, small) = stack(1_000, tables);
        let (_b, big) = stack(20_000, tables);
        let (n_small, a_small) = iterate(&small);
        let (n_big, a_big) = iterate(&big);
        assert_eq!((n_small, n_big), (1_000, 20_000));
        // 20 times the records, the same allocations: setting up the iterators only
        // (one buffer per table iterator and the queue), none per record or per block.
        assert_eq!(
            a_small, a_big,
            "{tables} table(s): {a_small} allocations for 1,000 records, {a_big} for 20,000"
        );
        assert!(
            a_big <= 8 * tables as u64 + 8,
            "{tables} table(s): {a_big} allocations"
        );
        eprintln!("{tables} table(s): {a_big} allocations per iteration");
    }
}

#[test]
fn lookups_allocate_a_bounded_number_of_times() {
    for tables in [1, 3] {
        let (_d, st) = stack(20_000, tables);
        let mut per_lookup = Vec::new();
        for (label, suffix) in [("existing", ""), ("missing", "x")] {
            let keys: Vec<Vec<u8>> = (0..100)
                .map(|k| {
                    let mut n = name((k * 7919 + 13) % 20_000);
                    n.extend_from_slice(suffix.as_bytes());
                    n
                })
                .collect();
            let (found, calls) = count_allocations(|| {
                keys.iter()
                    .filter(|k| st.merged().read_ref(k).expect("read").is_some())
                    .count()
            });
            assert_eq!(found, if suffix.is_empty() { 100 } else { 0 });
            let calls = calls.expect("installed");
            eprintln!(
                "{tables} table(s), {label} names: {:.1} allocations per lookup",
                calls as f64 / 100.0
            );
            per_lookup.push((label, calls / 100));
        }
        for (label, n) in per_lookup {
            assert!(
                n <= LOOKUP_ALLOCATIONS * tables as u64,
                "{tables} table(s), {label}: {n} allocations per lookup"
            );
        }
    }
}

/// The most allocations one lookup may make per table in the stack: today one key buffer
/// per block cursor on the way down (root index, index level, ref block) and the returned
/// record. (It was 11 for one table before point lookups stopped building a merged
/// iterator; a re-seekable iterator would bring it to 0.)
const LOOKUP_ALLOCATIONS: u64 = 5;

/// One merged iterator re-seeked again and again (the D/F check's and prefix scans'
/// pattern): once warm, a seek and the read after it allocate nothing, indexed tables or
/// not.
#[test]
fn warm_reseeks_allocate_nothing() {
    for (n, tables) in [(20_000, 1), (20_000, 3), (300, 2)] {
        let (_d, st) = stack(n, tables);
        let keys: Vec<Vec<u8>> = (0..200).map(|k| name((k * 7919 + 13) % n)).collect();
        let mut it = st.merged().refs().expect("refs");
        let run = |it: &mut reftable::merged::MergedIter<RefRecord>| {
            for k in &keys {
                it.seek(k).expect("seek");
                let r = it.next_record().expect("next").expect("a record");
                assert_eq!(&r.refname, k);
            }
        };
        // Warm: buffers grown, the tables' leaf indexes built.
        run(&mut it);
        let ((), calls) = count_allocations(|| run(&mut it));
        assert_eq!(
            calls.expect("installed"),
            0,
            "{n} refs in {tables} table(s): allocations in 200 warm re-seeks"
        );
    }
}
