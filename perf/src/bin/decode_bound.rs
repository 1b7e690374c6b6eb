//! `decode-bound`: how fast the ref records of one table can be walked at all, as the floor
//! against which `hotpaths`' iteration is judged.
//!
//! `decode-bound TABLE [REPS]` reads the table into memory (not timed), then walks every
//! ref block with the cheapest correct decoding (block header, varints, prefix copy into one
//! key buffer, value skipped past, its first id byte read) and folds the same checksum as
//! `hotpaths`' `iterate` (`h = h * 31 + len(name) + first id byte`), which it must equal on a
//! one-table stack. No merged view, no record struct, no bounds beyond what the walk needs to
//! stay inside the buffer. Then `bandwidth-floor`: the bytes of the ref section summed as
//! 64-bit words, per ref: what touching the data costs at all. Lines as `hotpaths` prints
//! them: `workload first_ns_per_op steady_ns_per_op ops checksum`, thread CPU time.

use std::time::Duration;

use cpu_time::ThreadTime;
use perf::bound::{layout, touch, walk};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn measure(reps: usize, ops_of: u64, mut work: impl FnMut() -> u64) -> (f64, f64, u64) {
    let mut times = Vec::new();
    let mut sum = 0;
    for _ in 0..reps.max(2) {
        let t = ThreadTime::now();
        sum = std::hint::black_box(work());
        let spent: Duration = t.elapsed();
        times.push(spent.as_nanos() as f64 / ops_of.max(1) as f64);
    }
    let first = times[0];
    let mut rest = times[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    (first, rest[rest.len() / 2], sum)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: decode-bound TABLE [REPS]")?;
    let reps: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(4);
    let t = std::fs::read(path)?;
    let (end, hash, block_size) = layout(&t)?;
    let (ops, _) = walk(&t, end, hash, block_size).ok_or("a block does not parse")?;
    let (first, steady, h) = measure(reps, ops, || {
        walk(std::hint::black_box(&t), end, hash, block_size).map_or(0, |r| r.1)
    });
    println!("decode-bound {first:.1} {steady:.1} {ops} {h}");
    let (first, steady, sum) = measure(reps, ops, || touch(std::hint::black_box(&t[..end])));
    println!("bandwidth-floor {first:.1} {steady:.1} {ops} {sum}");
    Ok(())
}
