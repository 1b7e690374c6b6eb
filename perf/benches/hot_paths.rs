//! Criterion benches of the hot paths (informational, wall time): open + seek, full scan,
//! writing N refs, compaction. `cargo bench -p perf --bench hot_paths`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use reftable::{ObjectId, RefRecord, RefValue, Stack, StackOptions, Table, WriteOptions, Writer};

fn id() -> ObjectId {
    ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").expect("hex")
}

fn name(i: usize) -> Vec<u8> {
    format!("refs/heads/branch-{i:07}").into_bytes()
}

fn table_bytes(n: usize) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 1).expect("limits");
    for i in 0..n {
        w.add_ref(&RefRecord::new(name(i), 1, RefValue::Object(id())))
            .expect("add");
    }
    w.finish().expect("finish")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("hot_paths");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for n in [10_000usize, 100_000] {
        let bytes = table_bytes(n);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.ref");
        std::fs::write(&path, &bytes).expect("write");
        let key = name(n / 2);
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("open_seek", n), &n, |b, _| {
            b.iter(|| {
                let t = Table::open(&path).expect("open");
                black_box(t.read_ref(&key).expect("read").is_some())
            })
        });
        let table = Table::from_bytes("t.ref", bytes.clone()).expect("table");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("full_scan", n), &n, |b, _| {
            b.iter(|| {
                let mut it = table.refs().expect("iter");
                let mut k = 0usize;
                while it.next_record().expect("next").is_some() {
                    k += 1;
                }
                black_box(k)
            })
        });
        g.bench_with_input(BenchmarkId::new("write", n), &n, |b, &n| {
            b.iter(|| black_box(table_bytes(n).len()))
        });
    }
    // Compaction: a stack of 16 tables of 4,096 refs each (a quarter of them deleted in
    // the newest tables), compacted into one.
    let opts = StackOptions::default().auto_compaction(false).fsync(false);
    g.throughput(Throughput::Elements(16 * 4096));
    g.bench_function("compact_all_16x4096", |b| {
        b.iter_with_setup(
            || {
                let dir = tempfile::tempdir().expect("tempdir");
                let mut st = Stack::open_or_create(dir.path(), opts).expect("stack");
                for t in 0..16usize {
                    st.add(|w, ui| {
                        w.set_limits(ui, ui)?;
                        for i in 0..4096usize {
                            let v = if t >= 12 && i % 4 == 0 {
                                RefValue::Deletion
                            } else {
                                RefValue::Object(id())
                            };
                            w.add_ref(&RefRecord::new(name(t * 4096 + i), ui, v))?;
                        }
                        Ok(())
                    })
                    .expect("add");
                }
                (dir, st)
            },
            |(dir, mut st)| {
                st.compact_all(None).expect("compact");
                black_box(st.tables().len());
                drop(dir);
            },
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
