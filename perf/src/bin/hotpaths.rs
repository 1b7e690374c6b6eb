//! `hotpaths`: the library's hot paths on one stack, timed in thread CPU time, for a
//! side-by-side with git's C reftable library driven the same way (the C driver is
//! `perf/c/hotpaths.c`, built against a git checkout; see perf/README.md).
//!
//! `hotpaths DIR [REPS] [LOOKUPS]` opens the stack in DIR, which holds refs named
//! `refs/tags/t-%07d` (N of them; N is counted by the first iteration), and runs each
//! workload REPS times (default 4), printing one line per workload:
//!
//! ```text
//! workload first_ns_per_op steady_ns_per_op ops checksum
//! ```
//!
//! `first` is the first rep (cold caches of the process), `steady` the median of the
//! others. `HOTPATHS_ONLY=iterate,lookup-missing` runs only the workloads named (say, under
//! `valgrind --tool=callgrind`, to count instructions). Workloads:
//! - `iterate`: every record through the merged view (`merged().refs()`, `next_record`);
//! - `for-each-ref`: the same records lent by `for_each_ref` (no copy; same checksum);
//! - `lookup-existing`: LOOKUPS (default 10,000) exact lookups of existing names
//!   (`merged().read_ref`), name number `(k * 7919 + 13) % N` for k = 0..LOOKUPS;
//! - `lookup-missing`: the same names with `x` appended (absent, each sorts right after
//!   an existing name);
//! - `iterate-cloned`: the `Iterator` impl of the merged view (one owned record each);
//! - `refdb-refs`: `RefDb::refs()` (live refs, tombstones dropped).
//!
//! The checksums are defined on values only, so the C driver computes the same ones:
//! iteration folds `h = h * 31 + len(name) + first id byte` (wrapping, 64 bits) over the
//! records; lookups count the names found plus the sum of their first id bytes.

use std::ops::ControlFlow;
use std::time::Duration;

use cpu_time::ThreadTime;
use reftable::refdb::{RefDb, RefDbOptions};
use reftable::{RefRecord, Stack, StackOptions};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn first_byte(r: &RefRecord) -> u64 {
    r.value_id().map_or(0, |id| u64::from(id.as_bytes()[0]))
}

fn fold(h: u64, r: &RefRecord) -> u64 {
    h.wrapping_mul(31)
        .wrapping_add(r.refname.len() as u64)
        .wrapping_add(first_byte(r))
}

fn names(n: usize, lookups: usize, suffix: &str) -> Vec<Vec<u8>> {
    (0..lookups)
        .map(|k| format!("refs/tags/t-{:07}{suffix}", (k * 7919 + 13) % n.max(1)).into_bytes())
        .collect()
}

/// Run `work` `reps` times; (first, median of the rest) in ns per op, ops, checksum.
fn measure(reps: usize, mut work: impl FnMut() -> Res<(u64, u64)>) -> Res<(f64, f64, u64, u64)> {
    let mut times = Vec::new();
    let mut last = (0, 0);
    for _ in 0..reps.max(2) {
        let t = ThreadTime::now();
        let r = work()?;
        let spent: Duration = t.elapsed();
        if times.is_empty() {
            last = r;
        } else if r != last {
            return Err(format!("checksum changed between reps: {r:?} vs {last:?}").into());
        }
        times.push(spent.as_nanos() as f64 / r.0.max(1) as f64);
    }
    let first = times[0];
    let mut rest = times[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    Ok((first, rest[rest.len() / 2], last.0, last.1))
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).ok_or("usage: hotpaths DIR [REPS] [LOOKUPS]")?;
    let reps: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(4);
    let lookups: usize = args
        .get(3)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10_000);
    let opts = StackOptions::default().auto_compaction(false);
    let stack = Stack::open_or_create(dir, opts)?;
    let mut n = 0usize;
    let report = |name: &str, m: (f64, f64, u64, u64)| {
        println!("{name} {:.1} {:.1} {} {}", m.0, m.1, m.2, m.3);
    };
    let only = std::env::var("HOTPATHS_ONLY").ok();
    let wanted = |w: &str| {
        only.as_deref()
            .map_or(true, |o| o.split(',').any(|x| x == w))
    };

    if wanted("iterate") {
        let m = measure(reps, || {
            let (mut ops, mut h) = (0u64, 0u64);
            let mut it = stack.merged().refs()?;
            while let Some(r) = it.next_record()? {
                ops += 1;
                h = fold(h, r);
            }
            Ok((ops, h))
        })?;
        report("iterate", m);
        n = m.2 as usize;
    }

    if wanted("for-each-ref") {
        let m = measure(reps, || {
            let (mut ops, mut h) = (0u64, 0u64);
            let end = stack.merged().refs()?.for_each_ref(|r| {
                let first = r.value_id().map_or(0, |id| u64::from(id[0]));
                ops += 1;
                h = h
                    .wrapping_mul(31)
                    .wrapping_add(r.refname.len() as u64)
                    .wrapping_add(first);
                ControlFlow::<()>::Continue(())
            })?;
            assert!(end.is_continue());
            Ok((ops, h))
        })?;
        report("for-each-ref", m);
        n = m.2 as usize;
    }
    if n == 0 {
        // The lookups pick names by number: how many there are, without a timed pass.
        let _ = stack.merged().refs()?.for_each_ref(|_| {
            n += 1;
            ControlFlow::<()>::Continue(())
        })?;
    }

    for (label, suffix) in [("lookup-existing", ""), ("lookup-missing", "x")] {
        if !wanted(label) {
            continue;
        }
        let keys = names(n, lookups, suffix);
        let m = measure(reps, || {
            let mut sum = 0u64;
            for k in &keys {
                if let Some(r) = stack.merged().read_ref(k)? {
                    sum += 1 + first_byte(&r);
                }
            }
            Ok((keys.len() as u64, sum))
        })?;
        report(label, m);
    }

    if !wanted("iterate-cloned") && !wanted("refdb-refs") {
        return Ok(());
    }
    let m = measure(reps, || {
        let (mut ops, mut h) = (0u64, 0u64);
        for r in stack.merged().refs()? {
            ops += 1;
            h = fold(h, &r?);
        }
        Ok((ops, h))
    })?;
    report("iterate-cloned", m);

    let db = RefDb::open_or_create(dir, RefDbOptions::default().stack(opts))?;
    let m = measure(reps, || {
        let (mut ops, mut h) = (0u64, 0u64);
        let mut it = db.refs()?;
        while let Some(r) = it.next_record()? {
            ops += 1;
            h = fold(h, r);
        }
        Ok((ops, h))
    })?;
    report("refdb-refs", m);
    Ok(())
}
