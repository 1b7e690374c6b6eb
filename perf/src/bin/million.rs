//! `million`: the 1,000,000-ref workload (a table of a million refs) as whole processes, to put beside
//! `git update-ref --stdin` and `git for-each-ref` under `/usr/bin/time` (see
//! `ci/bench-vs-git.sh`).
//!
//! - `million write DIR [N] [ID]`: write one table of N refs (`refs/heads/branch-%07d`, all
//!   pointing at object ID) into a stack in DIR, as one addition (no auto-compaction);
//! - `million transaction DIR [N] [ID]`: the same refs created by one `RefDb` transaction,
//!   with git's checks (names, D/F conflicts, old values) and a reflog entry per branch, as
//!   `git update-ref --stdin` does in a non-bare repository;
//! - `million iterate DIR`: open the stack and print every live ref as `for-each-ref` does
//!   (`<id> commit\t<name>`) to stdout;
//! - `million seek DIR [K]`: K random exact lookups; prints lookups per second.

use std::io::{BufWriter, Write};
use std::time::Instant;

use reftable::codec::record::Record;
use reftable::{ObjectId, RefRecord, RefValue, Stack, StackOptions};

fn name(i: usize) -> String {
    format!("refs/heads/branch-{i:07}")
}

fn opts() -> StackOptions {
    StackOptions::default().auto_compaction(false).fsync(false)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage =
        "usage: million write DIR [N] [ID] | transaction DIR [N] [ID] | iterate DIR | seek DIR [K] [N]";
    let (mode, dir) = match (args.get(1), args.get(2)) {
        (Some(m), Some(d)) => (m.as_str(), d.as_str()),
        _ => return Err(usage.into()),
    };
    let num = |i: usize, d: usize| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(args.get(i).map(|s| s.parse()).transpose()?.unwrap_or(d))
    };
    let id = match (mode, args.get(4)) {
        ("write" | "transaction", Some(hex)) => {
            ObjectId::from_hex(hex).ok_or("ID: not a SHA-1 hex id")?
        }
        _ => ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").expect("hex"),
    };
    match mode {
        "write" => {
            let n = num(3, 1_000_000)?;
            let mut stack = Stack::open_or_create(dir, opts())?;
            stack.add(|w, ui| {
                w.set_limits(ui, ui)?;
                let mut rec = RefRecord::new(Vec::new(), ui, RefValue::Object(id));
                for i in 0..n {
                    rec.refname.clear();
                    rec.refname.extend_from_slice(name(i).as_bytes());
                    w.add_ref(&rec)?;
                }
                Ok(())
            })?;
        }
        "transaction" => {
            use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};
            use reftable::{Signature, TzOffset};
            let n = num(3, 1_000_000)?;
            let mut db = RefDb::open_or_create(dir, RefDbOptions::default().stack(opts()))?;
            // Generated as the transaction consumes them: no second copy of a million updates.
            let updates = (0..n).map(|i| RefUpdate::create(name(i), id));
            let me = Signature {
                name: b"C O Mitter".to_vec(),
                email: b"committer@example.com".to_vec(),
                time: 1_112_911_993,
                tz_offset: TzOffset::from_hhmm(-700),
            };
            db.transaction_iter(updates, &me, &AssumeCommits)?;
        }
        "iterate" => {
            let stack = Stack::open_or_create(dir, opts())?;
            let out = std::io::stdout();
            let mut out = BufWriter::with_capacity(1 << 16, out.lock());
            let mut it = stack.merged().refs()?;
            while let Some(r) = it.next_record()? {
                if r.is_deletion() {
                    continue;
                }
                if let Some(v) = r.value_id() {
                    writeln!(out, "{v} commit\t{}", String::from_utf8_lossy(&r.refname))?;
                }
            }
            out.flush()?;
        }
        "seek" => {
            let k = num(3, 10_000)?;
            let n = num(4, 1_000_000)?;
            let stack = Stack::open_or_create(dir, opts())?;
            // xorshift: a fixed pseudo-random sequence of existing names.
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            let t = Instant::now();
            for _ in 0..k {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x % n as u64) as usize;
                if stack.merged().read_ref(name(i).as_bytes())?.is_none() {
                    return Err(format!("{} missing", name(i)).into());
                }
            }
            let s = t.elapsed().as_secs_f64();
            println!("{k} lookups in {s:.3} s: {:.0} lookups/s", k as f64 / s);
        }
        _ => return Err(usage.into()),
    }
    Ok(())
}
