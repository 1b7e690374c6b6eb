//! Property tests: any valid record set written under any options reads back unchanged,
//! is found by seeks, and is laid out by git's writer rules.

use std::collections::BTreeMap;

use proptest::prelude::*;
use reftable::table::BlockType;
use reftable::walk;
use reftable::{
    ErrorKind, HashId, LogRecord, LogUpdate, LogValue, ObjectId, RefRecord, RefValue, Table,
    WriteOptions, Writer,
};
use reftable::{Signature, TzOffset};

fn id(hash: HashId, seed: u8) -> ObjectId {
    // A small pool of ids with shared prefixes, so obj_id_len varies.
    let mut b = vec![0u8; hash.size()];
    b[0] = seed % 4;
    b[1] = seed / 4 % 3;
    b[hash.size() - 1] = seed;
    ObjectId::from_bytes(&b).unwrap()
}

fn name_strategy() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        Just("refs/heads/".to_string()),
        Just("refs/tags/".to_string()),
        Just("a".to_string()),
        Just("a/".to_string()),
        Just("a-b".to_string()),
        Just("a.b".to_string()),
        Just("0".to_string()),
        Just("é".to_string()),
        "[a-z]{1,6}",
    ];
    proptest::collection::vec(part, 1..5).prop_map(|p| p.concat().into_bytes())
}

#[derive(Debug, Clone)]
enum V {
    Del,
    One(u8),
    Two(u8, u8),
    Sym(Vec<u8>),
}

fn value_strategy() -> impl Strategy<Value = V> {
    prop_oneof![
        Just(V::Del),
        any::<u8>().prop_map(V::One),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| V::Two(a, b)),
        name_strategy().prop_map(V::Sym),
    ]
}

fn options_strategy() -> impl Strategy<Value = WriteOptions> {
    (
        prop_oneof![Just(256u32), Just(300), Just(512), Just(1024), Just(4096)],
        prop_oneof![Just(1u16), Just(2), Just(3), Just(16), Just(0)],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(block_size, restart_interval, index_objects, unpadded, sha256)| {
                WriteOptions::default()
                    .block_size(block_size)
                    .restart_interval(restart_interval)
                    .index_objects(index_objects)
                    .unpadded(unpadded)
                    .hash(if sha256 { HashId::Sha256 } else { HashId::Sha1 })
                    .exact_log_message(false)
            },
        )
}

type Input = (
    WriteOptions,
    BTreeMap<Vec<u8>, (u64, V)>,
    BTreeMap<(Vec<u8>, u64), Option<(u8, u8, String, i16)>>,
);

fn input_strategy() -> impl Strategy<Value = Input> {
    (
        options_strategy(),
        proptest::collection::btree_map(name_strategy(), (0u64..4, value_strategy()), 0..300),
        proptest::collection::btree_map(
            (name_strategy(), 0u64..6),
            proptest::option::weighted(
                0.8,
                (any::<u8>(), any::<u8>(), "[ -~]{0,40}", -1200i16..1400),
            ),
            0..120,
        ),
    )
}

fn build(opts: WriteOptions, input: &Input) -> (Vec<RefRecord>, Vec<LogRecord>) {
    let hash = opts.hash;
    let refs = input
        .1
        .iter()
        .map(|(name, (ui, v))| {
            let value = match v {
                V::Del => RefValue::Deletion,
                V::One(a) => RefValue::Object(id(hash, *a)),
                V::Two(a, b) => RefValue::Peeled {
                    object: id(hash, *a),
                    peeled: id(hash, *b),
                },
                V::Sym(t) => RefValue::Symref(t.clone()),
            };
            RefRecord::new(name.clone(), 10 + ui, value)
        })
        .collect();
    // Log keys sort by name, then update index descending.
    let mut logs: Vec<LogRecord> = input
        .2
        .iter()
        .map(|((name, ui), v)| LogRecord {
            refname: name.clone(),
            update_index: 10 + ui,
            value: match v {
                None => LogValue::Deletion,
                Some((a, b, msg, tz)) => LogValue::Update(LogUpdate {
                    old_id: id(hash, *a),
                    new_id: id(hash, *b),
                    committer: Signature::new(
                        b"C O Mitter".to_vec(),
                        b"committer@example.com".to_vec(),
                        1_112_911_993 + u64::from(*a),
                        TzOffset::from_hhmm(*tz),
                    ),
                    message: format!("{msg}\n").into_bytes(),
                }),
            },
        })
        .collect();
    logs.sort_by(|a, b| {
        a.refname
            .cmp(&b.refname)
            .then(b.update_index.cmp(&a.update_index))
    });
    (refs, logs)
}

fn write(opts: WriteOptions, refs: &[RefRecord], logs: &[LogRecord]) -> reftable::Result<Vec<u8>> {
    let mut w = Writer::new(Vec::new(), opts);
    w.set_limits(10, 15)?;
    for r in refs {
        w.add_ref(r)?;
    }
    for l in logs {
        w.add_log(l)?;
    }
    w.finish()
}

proptest! {
    #![proptest_config(ProptestConfig {
        // PROPTEST_CASES lowers this where a run is repeated many times (ci/mutants.sh).
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96),
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::WithSource("regressions"))),
        .. ProptestConfig::default()
    })]

    #[test]
    fn write_read_roundtrip(input in input_strategy()) {
        let opts = input.0;
        let (refs, logs) = build(opts, &input);
        let bytes = match write(opts, &refs, &logs) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::EmptyTable => {
                prop_assert!(refs.is_empty() && logs.is_empty());
                return Ok(());
            }
            Err(e) if e.kind() == ErrorKind::EntryTooBig => {
                // Only possible for records close to the block size.
                prop_assert!(opts.block_size <= 300, "{e}");
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        let table = Table::from_bytes("prop.ref", bytes.clone()).unwrap();
        let got_refs: Vec<RefRecord> = table.refs().unwrap().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&got_refs, &refs);
        let got_logs: Vec<LogRecord> = table.logs().unwrap().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&got_logs, &logs);

        // Every ref is found by name, and a seek lands on the first name >= the key.
        for (i, r) in refs.iter().enumerate() {
            let found = table.ref_record(&r.refname).unwrap();
            prop_assert_eq!(found.as_ref(), Some(r));
            let mut shorter = r.refname.clone();
            shorter.pop();
            let first = table.seek_ref(&shorter).unwrap().next().transpose().unwrap();
            let want = refs.iter().find(|x| x.refname >= shorter);
            prop_assert_eq!(first.as_ref(), want);
            let mut longer = r.refname.clone();
            longer.push(0);
            let after = table.seek_ref(&longer).unwrap().next().transpose().unwrap();
            prop_assert_eq!(after.as_ref(), refs.get(i + 1));
        }
        // Every log is found by (name, update index); seeking a ref's log gives its newest.
        for l in &logs {
            let got = table.seek_log_at(&l.refname, l.update_index).unwrap().next().unwrap().unwrap();
            prop_assert_eq!(&got, l);
            let newest = table.seek_log(&l.refname).unwrap().next().unwrap().unwrap();
            let want = logs.iter().find(|x| x.refname == l.refname).unwrap();
            prop_assert_eq!(&newest, want);
        }
        // Object id lookups agree with a filter over all refs.
        for seed in [0u8, 1, 5, 77, 255] {
            let oid = id(opts.hash, seed);
            let want: Vec<&RefRecord> = refs
                .iter()
                .filter(|r| r.value_id() == Some(&oid) || r.peeled_id() == Some(&oid))
                .collect();
            let got: Vec<RefRecord> = table.refs_for(&oid).unwrap().map(Result::unwrap).collect();
            prop_assert_eq!(got.iter().collect::<Vec<_>>(), want);
        }
        // The layout follows git's writer rules, which the reader above does not need:
        // every `restart_interval`-th record of a block (the first included) shares no
        // prefix, the restart table lists exactly the records that share none, and every
        // padded block but the last of its section is exactly `block_size` long. (Byte identity with git's own
        // writer is checked on real tables in `fixtures.rs` and `git_interop.rs`.)
        layout_follows_git(&table, opts)?;
    }
}

fn layout_follows_git(table: &Table, opts: WriteOptions) -> Result<(), TestCaseError> {
    let ctx = table.codec_context();
    // 0 means git's default, 16.
    let interval = if opts.restart_interval == 0 {
        16
    } else {
        opts.restart_interval as usize
    };
    let mut walk = table.blocks();
    let mut blocks = Vec::new();
    while let Some(block) = walk.next_block() {
        let (info, data) = block.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let restarts = walk::restarts(&info, data);
        // git's rule: every `restart_interval`-th record of a block is written without a
        // shared prefix, and every record without one is a restart point. So the restart
        // table lists exactly the records with prefix length 0, which include those.
        let mut n = 0usize;
        let mut starts = Vec::new();
        let mut bad_prefix = None;
        let mut visit = |offset: usize, prefix_len: usize| {
            if prefix_len == 0 {
                starts.push(offset);
            } else if n % interval == 0 {
                bad_prefix.get_or_insert(n);
            }
            n += 1;
        };
        let problem = match info.block_type {
            BlockType::Ref => walk::for_each_record::<RefRecord>(&info, data, &ctx, |r| {
                visit(r.offset, r.prefix_len)
            }),
            BlockType::Log => walk::for_each_record::<LogRecord>(&info, data, &ctx, |r| {
                visit(r.offset, r.prefix_len)
            }),
            _ => None,
        };
        prop_assert!(problem.is_none(), "block at {}: {:?}", info.offset, problem);
        prop_assert!(
            bad_prefix.is_none(),
            "record {:?} is due a restart but shares a prefix",
            bad_prefix
        );
        if matches!(info.block_type, BlockType::Ref | BlockType::Log) {
            prop_assert_eq!(
                restarts,
                starts,
                "restart points of the block at {}",
                info.offset
            );
        }
        blocks.push(info);
    }
    if !opts.unpadded {
        for pair in blocks.windows(2) {
            if pair[0].block_type != BlockType::Log && pair[1].block_type == pair[0].block_type {
                prop_assert_eq!(
                    pair[0].full_size,
                    opts.block_size as usize,
                    "padded {:?} block at {} is not block_size long",
                    pair[0].block_type,
                    pair[0].offset
                );
            }
        }
    }
    Ok(())
}

/// Incompressible log data: git's writer could produce a log block git 2.47 cannot read (the
/// compressed stream extends past one block); ours moves records to the next block instead.
#[test]
fn incompressible_logs_stay_within_a_block() {
    let mut state = 0x1234_5678_u64;
    let mut rnd = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let opts = WriteOptions::default().block_size(1024);
    let mut logs = Vec::new();
    for i in 0..40u64 {
        let mut b = [0u8; 20];
        b.iter_mut().for_each(|x| *x = rnd() as u8);
        let msg: String = (0..60)
            .map(|_| (b'!' + (rnd() % 90) as u8) as char)
            .collect();
        logs.push(LogRecord {
            refname: format!("refs/heads/{i:03}").into_bytes(),
            update_index: 10,
            value: LogValue::Update(LogUpdate {
                old_id: ObjectId::from_bytes(&b).unwrap(),
                new_id: ObjectId::from_bytes(&b.map(|x| x ^ 0x5a)).unwrap(),
                committer: Signature::new(
                    b"n".to_vec(),
                    b"e".to_vec(),
                    rnd() >> 30,
                    TzOffset::from_hhmm(0),
                ),
                message: format!("{msg}\n").into_bytes(),
            }),
        });
    }
    let bytes = write(opts, &[], &logs).unwrap();
    let table = Table::from_bytes("logs.ref", bytes).unwrap();
    for b in table.blocks() {
        let b = b.unwrap();
        assert!(
            b.header_off + 4 + b.compressed_len <= 1024,
            "log block at {} extends {} bytes",
            b.offset,
            b.header_off + 4 + b.compressed_len
        );
    }
    let got: Vec<LogRecord> = table.logs().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, logs);
}
