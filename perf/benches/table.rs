//! The benchmark over a 1,000,000-ref table: iterate every ref, 10,000 random seeks,
//! write the table. Informational (wall time on a shared machine); sample size reduced so
//! the whole bench runs in a few minutes: `cargo bench -p perf --bench table`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reftable::{ObjectId, RefRecord, RefValue, Table, WriteOptions, Writer};

const N: usize = 1_000_000;
const SEEKS: usize = 10_000;

fn name(i: usize) -> Vec<u8> {
    format!("refs/heads/branch-{i:07}").into_bytes()
}

fn write_table(n: usize) -> Vec<u8> {
    let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").expect("hex");
    let mut w = Writer::new(Vec::with_capacity(n * 40), WriteOptions::default());
    w.set_limits(1, 1).expect("limits");
    let mut rec = RefRecord::new(Vec::new(), 1, RefValue::Object(id));
    for i in 0..n {
        rec.refname = name(i);
        w.add_ref(&rec).expect("add");
    }
    w.finish().expect("finish")
}

fn bench(c: &mut Criterion) {
    let bytes = write_table(N);
    let table = Table::from_bytes("million.ref", bytes).expect("table");
    let mut g = c.benchmark_group("table_1m");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));

    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("iterate_all", |b| {
        b.iter(|| {
            let mut it = table.refs().expect("iter");
            let mut k = 0usize;
            while let Some(r) = it.next_record().expect("record") {
                k += r.refname.len();
            }
            black_box(k)
        })
    });

    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let keys: Vec<Vec<u8>> = (0..SEEKS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            name((x % N as u64) as usize)
        })
        .collect();
    g.throughput(Throughput::Elements(SEEKS as u64));
    g.bench_function("seek_10k_random", |b| {
        b.iter(|| {
            let mut found = 0usize;
            for k in &keys {
                found += usize::from(table.read_ref(k).expect("read").is_some());
            }
            assert_eq!(found, SEEKS);
        })
    });

    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("write", |b| b.iter(|| black_box(write_table(N).len())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
