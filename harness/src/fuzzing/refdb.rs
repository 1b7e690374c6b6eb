//! Fuzz target `refdb_model`: operation sequences on the ref database against the in-memory
//! model of git's ref semantics, without git. Any difference in verdict, error class, refs or
//! reflogs is a panic (a fuzz crash). `conformance/tests/refdb_model.rs` also runs it over
//! deterministic inputs.

use arbitrary::{Result as AResult, Unstructured};
use reftable::refdb::{LookupError, ObjectKind, ObjectLookup, RefDb, RefDbOptions};
use reftable::{HashId, ObjectId, StackOptions};
use reftable::{Signature, TzOffset};

use crate::names::FUZZ_NAMES;
use crate::ops::{LogRefsOpt, Update, Value};
use crate::refs_model::{library_fault, Model, Objects};
use crate::snapshot::Snapshot;

struct Pool;

fn oid(b: u8) -> ObjectId {
    ObjectId::from_bytes(&[b; 20]).expect("20 bytes")
}

impl ObjectLookup for Pool {
    fn lookup(&self, id: &ObjectId) -> Result<ObjectKind, LookupError> {
        Ok(match id.as_bytes()[0] {
            1..=4 => ObjectKind::Commit,
            5 => ObjectKind::Tag { peeled: oid(1) },
            6 => ObjectKind::Other,
            _ => ObjectKind::Missing,
        })
    }
}

impl Objects for Pool {
    fn is_commit(&self, id: &ObjectId) -> Option<bool> {
        match self.lookup(id).expect("infallible") {
            ObjectKind::Missing => None,
            ObjectKind::Commit => Some(true),
            _ => Some(false),
        }
    }
}

fn value(u: &mut Unstructured<'_>) -> AResult<Value> {
    Ok(Value::oid(&oid(u.int_in_range(0..=7)?)))
}

fn name(u: &mut Unstructured<'_>) -> AResult<String> {
    Ok(FUZZ_NAMES[u.choose_index(FUZZ_NAMES.len())?].to_string())
}

fn update(u: &mut Unstructured<'_>, null: &Value) -> AResult<Update> {
    let refname = name(u)?;
    let kind = u.int_in_range(0..=6)?;
    let (new, old, no_deref) = match kind {
        0 => (Some(value(u)?), None, false),
        1 => (Some(value(u)?), Some(value(u)?), false),
        2 => (Some(value(u)?), Some(null.clone()), false),
        3 => (
            Some(null.clone()),
            if u.arbitrary()? {
                Some(value(u)?)
            } else {
                None
            },
            u.arbitrary()?,
        ),
        4 => (None, Some(value(u)?), false),
        5 => (Some(Value::Symref(name(u)?)), None, u.arbitrary()?),
        _ => (
            Some(Value::Symref(name(u)?)),
            Some(Value::Symref(name(u)?)),
            true,
        ),
    };
    Ok(Update {
        refname,
        new,
        old,
        no_deref,
    })
}

/// What one input exercised.
#[derive(Clone, Copy, Debug, Default)]
pub struct Coverage {
    /// Operations run.
    pub steps: u64,
    /// Transactions both accepted.
    pub accepted: u64,
    /// Transactions both refused (for the same reason).
    pub refused: u64,
}

/// The fuzz target body: [`refdb_vs_model`] without the coverage figures.
pub fn refdb_model(data: &[u8]) {
    refdb_vs_model(data);
}

/// Run the operations encoded in `data` on a fresh `RefDb` and on the model; panic on any
/// difference. Returns what was exercised.
pub fn refdb_vs_model(data: &[u8]) -> Coverage {
    let mut cov = Coverage::default();
    let _ = run(data, &mut cov);
    cov
}

fn run(data: &[u8], cov: &mut Coverage) -> AResult<()> {
    let mut u = Unstructured::new(data);
    let log_refs = match u.int_in_range(0..=2)? {
        0 => LogRefsOpt::False,
        1 => LogRefsOpt::True,
        _ => LogRefsOpt::Always,
    };
    let auto_compaction: bool = u.arbitrary()?;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut db = RefDb::open_or_create(
        dir.path(),
        RefDbOptions::default()
            .stack(
                StackOptions::default()
                    .auto_compaction(auto_compaction)
                    .fsync(false),
            )
            .log_refs(log_refs.to_lib()),
    )
    .expect("open");
    let null = Value::null(HashId::Sha1);
    let mut model = Model::new(ObjectId::null(HashId::Sha1), log_refs, 4096);
    let me = |tick: u64| Signature {
        name: b"F".to_vec(),
        email: b"f@example.com".to_vec(),
        time: 1_000_000 + tick,
        tz_offset: TzOffset::from_hhmm(0),
    };
    for tick in 0..u.int_in_range(1..=24u64)? {
        cov.steps += 1;
        match u.int_in_range(0..=9)? {
            0 => {
                db.pack_refs(u.arbitrary()?).expect("pack-refs");
            }
            1 => {
                let n = name(&mut u)?;
                if db.reflog_exists(n.as_bytes()).expect("read") {
                    db.expire_reflog(n.as_bytes(), &mut |_| true, false, false)
                        .expect("expire");
                    model.expire(&n, &mut |_, _| true, false);
                }
            }
            _ => {
                let count = u.int_in_range(1..=3)?;
                let mut updates = Vec::new();
                for _ in 0..count {
                    updates.push(update(&mut u, &null)?);
                }
                let msg = ["", "m", "two  words", "tab\there"][u.choose_index(4)?];
                let lib: Vec<_> = updates
                    .iter()
                    .map(|x| x.to_ref_update(msg, false))
                    .collect();
                let ours = db.transaction(&lib, &me(tick), &Pool).map(drop);
                let mut trial = model.clone();
                let theirs = trial.transaction(&updates, msg, false, 1_000_000 + tick, &Pool);
                match (&ours, &theirs) {
                    (Ok(()), Ok(())) => {
                        cov.accepted += 1;
                        model = trial;
                    }
                    (Err(e), Err(r)) => {
                        cov.refused += 1;
                        // The library checks in git 2.47's order, as the model's `first` does.
                        assert_eq!(
                            library_fault(e),
                            Some(r.first),
                            "error classes differ: ours {e}, model {r:?}; updates {updates:?}"
                        )
                    }
                    _ => panic!(
                        "verdicts differ: ours {ours:?}, model {theirs:?}; updates {updates:?}"
                    ),
                }
            }
        }
        let ours = Snapshot::of_refdb(&db).expect("read").as_model_sees();
        let theirs = Snapshot::of_model(&model);
        assert!(
            ours == theirs,
            "state differs after step {tick}: {:?}",
            ours.diff(&theirs, 5)
        );
    }
    Ok(())
}
