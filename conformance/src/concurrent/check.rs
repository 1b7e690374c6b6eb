//! The checks of a concurrent run (see `mod.rs`) over its [`Evidence`]: what the writers
//! reported, what the reader sampled while they ran, and the final stack as git and we read
//! it. [`check`] runs one function per family of checks, in the order of this file, and the
//! findings come in that order: where each transaction is in the stack, why each refusal
//! happened, the replay of the commit order on the model, the samples, and the final state.

use std::collections::{BTreeSet, HashMap};

use reftable::ObjectId;

use crate::concurrent::evidence::{listed_refs, Evidence, LogEntry};
use crate::concurrent::finding::Findings;
use crate::concurrent::fingerprint::{model_print, sample_print, Print};
use crate::concurrent::spec::{commit_pool, names, Outcome, WriterKind};
use crate::err_class::ErrClass;
use crate::finding::divergence::Finding;
use crate::git::driver::BASE_TIME;
use crate::model::{Fault, Model};
use crate::ops::LogRefsOpt;
use crate::setup::pool::PoolObjects;
use crate::snapshot::Snapshot;

/// Check a concurrent run; the findings, empty when everything holds.
pub(crate) fn check(ev: &Evidence<'_>, commits: &[ObjectId]) -> Vec<Finding> {
    let mut f = Findings::new();
    for e in &ev.worker_errors {
        f.add("writer failed", e.clone());
    }
    // An unreadable stack is a finding, and the checks go on with what its tables that
    // still open hold: the updates lost with the missing ones show as lost.
    if let Some(e) = &ev.logs.unreadable {
        f.add("final stack unreadable", format!("our reader: {e}"));
    }
    let places = Places::of(&ev.logs.records);
    phantom_entries(ev, &places, &mut f);
    let order = CommitOrder::of(ev, &places, &mut f);
    // Replay the acknowledged transactions in that order on the model.
    let null = ObjectId::null(commits[0].hash());
    let pool = commit_pool(commits);
    let objects = PoolObjects(&pool);
    let pending = refusals(ev, &order, &mut f);
    let replay = Replay::run(&order, &pending, null, &objects, &mut f);
    samples(ev, &order, &replay.prints, &mut f);
    let want = Snapshot::of_model(&replay.model);
    final_through_us(ev, &want, &mut f);
    final_through_git(ev, &want, &mut f);
    leftovers(ev, &mut f);
    f.finish()
}

/// Where each reflog message is in the final stack.
struct Places<'l> {
    /// The update indexes of each message in the writers' journals.
    journal: HashMap<&'l str, Vec<u64>>,
    /// The update indexes of each message in any reflog.
    everywhere: HashMap<&'l str, BTreeSet<u64>>,
}

impl<'l> Places<'l> {
    /// Where each message of the reflog records `logs` (ref, update index, message) is.
    fn of(logs: &'l [LogEntry]) -> Places<'l> {
        let mut journal: HashMap<&str, Vec<u64>> = HashMap::new();
        let mut everywhere: HashMap<&str, BTreeSet<u64>> = HashMap::new();
        for (r, i, m) in logs {
            everywhere.entry(m.as_str()).or_default().insert(*i);
            if r.starts_with("refs/journal/") {
                journal.entry(m.as_str()).or_default().push(*i);
            }
        }
        Places {
            journal,
            everywhere,
        }
    }
}

/// Reflog entries whose message no writer's transaction had.
fn phantom_entries(ev: &Evidence<'_>, places: &Places<'_>, f: &mut Findings) {
    let known: HashMap<&str, &Outcome> = ev
        .outcomes
        .iter()
        .filter(|o| o.txn.is_some())
        .map(|o| (o.message.as_str(), o))
        .collect();
    for m in places.everywhere.keys() {
        if !known.contains_key(m) {
            f.add(
                "phantom entry",
                format!("a reflog entry {m:?} that no writer attempted"),
            );
        }
    }
}

/// The acknowledged transactions in commit order (update index, then writer). State j is
/// the one after the first j of them; `indexes[j]` is the update index that state ends at.
struct CommitOrder<'o> {
    order: Vec<(u64, &'o Outcome)>,
    indexes: Vec<u64>,
}

impl<'o> CommitOrder<'o> {
    /// Place every transaction of `ev` in the stack, checking that a refused one left no
    /// trace and an acknowledged one is there once, under an update index of its own,
    /// within its window.
    fn of(ev: &'o Evidence<'_>, places: &Places<'_>, f: &mut Findings) -> CommitOrder<'o> {
        let mut order: Vec<(u64, &Outcome)> = Vec::new();
        let mut by_index: HashMap<u64, &str> = HashMap::new();
        for o in ev.outcomes.iter().filter(|o| o.txn.is_some()) {
            let at = places.journal.get(o.message.as_str());
            if !o.accepted {
                refused_left_no_trace(o, places, f);
                continue;
            }
            let Some(at) = at else {
                lost_update(o, f);
                continue;
            };
            let index = at[0];
            placed_once_in_window(o, at, places, &mut by_index, f);
            order.push((index, o));
        }
        order.sort_by_key(|(i, o)| (*i, o.writer));
        let indexes: Vec<u64> = std::iter::once(0)
            .chain(order.iter().map(|(i, _)| *i))
            .collect();
        CommitOrder { order, indexes }
    }

    /// The state (prefix of the commit order) the stack is in at update index `index`.
    fn prefix_at(&self, index: u64) -> usize {
        self.indexes.partition_point(|i| *i <= index) - 1
    }
}

/// A refused transaction `o` has no reflog entry.
fn refused_left_no_trace(o: &Outcome, places: &Places<'_>, f: &mut Findings) {
    if let Some(ix) = places.everywhere.get(o.message.as_str()) {
        f.add(
            "refused transaction left a trace",
            format!(
                "{:?} was refused ({}) but has reflog entries at update index {ix:?}",
                o.message,
                o.error.trim()
            ),
        );
    }
}

/// The acknowledged transaction `o` is not in the journals.
fn lost_update(o: &Outcome, f: &mut Findings) {
    f.add(
        "lost update",
        format!(
            "{:?} (writer {} {:?}) was acknowledged{} but is not in the stack",
            o.message,
            o.writer,
            o.kind,
            o.index
                .map_or(String::new(), |i| format!(" at update index {i}"))
        ),
    );
}

/// The acknowledged transaction `o`, in the journals at `at`, is under one update index
/// (the one our writer saw), inside its window, and shares it with no other transaction
/// (`by_index`: the transaction at each update index so far).
fn placed_once_in_window<'o>(
    o: &'o Outcome,
    at: &[u64],
    places: &Places<'_>,
    by_index: &mut HashMap<u64, &'o str>,
    f: &mut Findings,
) {
    let index = at[0];
    if at.len() > 1 || places.everywhere[o.message.as_str()].len() > 1 {
        f.add(
            "transaction split",
            format!(
                "{:?} is under update indexes {:?}",
                o.message,
                places.everywhere[o.message.as_str()]
            ),
        );
    }
    if let Some(i) = o.index.filter(|i| *i != index) {
        f.add(
            "wrong update index",
            format!(
                "{:?}: our writer committed it at {i}, the stack has it at {index}",
                o.message
            ),
        );
    }
    if index <= o.before || index > o.after {
        f.add(
            "committed outside its window",
            format!(
                "{:?} is at update index {index}, but the stack was at {} before and {} after it ran",
                o.message, o.before, o.after
            ),
        );
    }
    if let Some(other) = by_index.insert(index, o.message.as_str()) {
        f.add(
            "update index shared",
            format!(
                "{:?} and {other:?} both committed at update index {index}",
                o.message
            ),
        );
    }
}

/// A refusal that names a fault: the first and last state of its window, the attempt, and
/// the fault some state inside the window must have.
type Pending<'o> = (usize, usize, &'o Outcome, Fault);

/// Every failed attempt has a cause: no crash or hang of git, no failed read, a refusal
/// git's or our wording classifies, and one that needs no fault (a held lock, an outdated
/// stack) or names one. The transactions refused for a fault, by the first state of their
/// window, to be checked against each state of it as the replay passes it.
fn refusals<'o>(
    ev: &'o Evidence<'_>,
    order: &CommitOrder<'_>,
    f: &mut Findings,
) -> Vec<Pending<'o>> {
    let mut pending: Vec<Pending<'o>> = Vec::new();
    for o in ev.outcomes.iter().filter(|o| !o.accepted) {
        let crashed = ["Signal(", "adapter crash"]
            .iter()
            .any(|p| o.error.starts_with(p));
        if crashed || o.error.starts_with("Timeout") || o.error.starts_with("adapter hang") {
            let class = match (o.kind, crashed) {
                (WriterKind::Impl, true) => "implementation crashed",
                (WriterKind::Impl, false) => "implementation hung",
                (_, true) => "git crashed",
                (_, false) => "git hung",
            };
            f.add(
                class,
                format!(
                    "{} {:?} of writer {}: {}",
                    o.what,
                    o.message,
                    o.writer,
                    o.error.trim()
                ),
            );
            continue;
        }
        if o.what == "read" {
            f.add(
                "reader failed",
                format!("writer {} {:?}: {}", o.writer, o.kind, o.error.trim()),
            );
            continue;
        }
        let Some(class) = o.class else {
            f.add(
                "unclassified refusal",
                format!(
                    "{} of writer {} {:?}: {}",
                    o.what,
                    o.writer,
                    o.kind,
                    o.error.trim()
                ),
            );
            continue;
        };
        let Some(fault) = class.fault() else {
            if !matches!(class, ErrClass::Lock | ErrClass::Outdated) {
                f.add(
                    "refusal without cause",
                    format!(
                        "{:?} of writer {} {:?} refused as {class:?}: {}",
                        o.what,
                        o.writer,
                        o.kind,
                        o.error.trim()
                    ),
                );
            }
            continue;
        };
        if o.txn.is_some() {
            pending.push((
                order.prefix_at(o.before),
                order.prefix_at(o.after),
                o,
                fault,
            ));
        }
    }
    pending.sort_by_key(|(lo, _, _, _)| *lo);
    pending
}

/// The replay of the commit order on the model: its final state and the fingerprint of
/// the state after each prefix.
struct Replay {
    model: Model,
    prints: Vec<Print>,
}

impl Replay {
    /// Replay `order`: the model accepts each transaction after those before it, and each
    /// refusal of `pending` has its fault in some state inside its window.
    fn run(
        order: &CommitOrder<'_>,
        pending: &[Pending<'_>],
        null: ObjectId,
        objects: &PoolObjects<'_>,
        f: &mut Findings,
    ) -> Replay {
        let order = &order.order;
        let mut justified = vec![false; pending.len()];
        let mut next_pending = 0;
        let mut open: Vec<usize> = Vec::new();
        let mut model = Model::new(null, LogRefsOpt::Always, 4096);
        model.init("main");
        let mut prints: Vec<Print> = Vec::with_capacity(order.len() + 1);
        for j in 0..=order.len() {
            if j > 0 {
                let (i, o) = order[j - 1];
                if let Err(r) = model.transaction(
                    &o.updates,
                    &o.message,
                    false,
                    BASE_TIME + 60 * o.tick,
                    objects,
                ) {
                    f.add(
                        "not serializable",
                        format!(
                            "{:?} was acknowledged at update index {i}, but after the transactions before it the model refuses it ({:?})",
                            o.message,
                            r.faults.iter().collect::<Vec<_>>()
                        ),
                    );
                }
            }
            prints.push(model_print(&model));
            while next_pending < pending.len() && pending[next_pending].0 <= j {
                open.push(next_pending);
                next_pending += 1;
            }
            open.retain(|&p| {
                let (_, hi, o, fault) = pending[p];
                if model
                    .refusal(&o.updates, objects)
                    .is_some_and(|r| r.faults.contains(fault))
                {
                    justified[p] = true;
                    return false;
                }
                hi > j
            });
        }
        unjustified_refusals(pending, &justified, f);
        Replay { model, prints }
    }
}

/// The refusals of `pending` no state of their window justified.
fn unjustified_refusals(pending: &[Pending<'_>], justified: &[bool], f: &mut Findings) {
    for (p, &(_, _, o, _)) in pending.iter().enumerate() {
        if !justified[p] {
            f.add(
                "refusal without cause",
                format!(
                    "{:?} (writer {} {:?}) was refused as {:?} ({}), but no state between update index {} and {} has that fault",
                    o.message, o.writer, o.kind, o.class, o.error.trim(), o.before, o.after
                ),
            );
        }
    }
}

/// Every sample is a prefix of the commit order (`prints`: the fingerprint of each), and
/// never an older one than the last.
fn samples(ev: &Evidence<'_>, order: &CommitOrder<'_>, prints: &[Print], f: &mut Findings) {
    let mut at: HashMap<Print, Vec<usize>> = HashMap::new();
    for (j, p) in prints.iter().enumerate() {
        at.entry(*p).or_default().push(j);
    }
    let mut floor = 0usize;
    for (k, s) in ev.samples.iter().enumerate() {
        let who = if s.through_git { "git" } else { "our reader" };
        if let Some(e) = &s.error {
            f.add("reader failed", format!("sample {k}: {e}"));
            continue;
        }
        let print = sample_print(&s.refs);
        let matches: &[usize] = at.get(&print).map_or(&[], Vec::as_slice);
        if let Some(index) = s.index {
            let j = order.prefix_at(index);
            if prints[j] != print {
                f.add(
                    "torn read",
                    format!("sample {k} ({who}) at update index {index} is not the state after the transactions up to it"),
                );
                continue;
            }
            if j < floor && prints[floor] != print {
                f.add(
                    "stale read",
                    format!("sample {k} ({who}) shows an older state than an earlier sample"),
                );
            }
            floor = floor.max(j);
            continue;
        }
        match matches.iter().find(|j| **j >= floor) {
            Some(j) => floor = *j,
            None if !matches.is_empty() => {
                f.add(
                    "stale read",
                    format!("sample {k} ({who}) shows an older state than an earlier sample"),
                );
            }
            None => f.add(
                "torn read",
                format!(
                    "sample {k} ({who}) is no state after any prefix of the commit order ({} refs)",
                    s.refs.len()
                ),
            ),
        }
    }
}

/// The final state through us is the model's `want` (the expiry ref's reflog: a
/// subsequence of what was written).
fn final_through_us(ev: &Evidence<'_>, want: &Snapshot, f: &mut Findings) {
    match &ev.ours {
        // Found already, when the reflog records were read.
        Err(_) if ev.logs.unreadable.is_some() => {}
        Err(e) => f.add("final stack unreadable", format!("our reader: {e}")),
        Ok(ours) => {
            let mut ours = ours.as_model_sees();
            let mut want = want.clone();
            let got = ours.logs.remove(names::EXPIRY).unwrap_or_default();
            let all = want.logs.remove(names::EXPIRY).unwrap_or_default();
            let mut rest = all.iter();
            if !got.iter().all(|e| rest.any(|w| w == e)) {
                f.add(
                    "reflog mismatch",
                    format!(
                        "{}: {} entries that are not a subsequence of the {} written",
                        names::EXPIRY,
                        got.len(),
                        all.len()
                    ),
                );
            }
            for d in want.diff(&ours, 8) {
                f.add("final state differs", format!("model vs our reader: {d}"));
            }
        }
    }
}

/// The final refs and reflogs through git (`for-each-ref`, `log -g`) are the model's
/// `want` (but the expiry ref's reflog).
fn final_through_git(ev: &Evidence<'_>, want: &Snapshot, f: &mut Findings) {
    match &ev.git_refs {
        Err(e) => f.add("final stack unreadable", format!("git for-each-ref: {e}")),
        Ok(refs) => {
            let expect = listed_refs(want);
            if *refs != expect {
                let missing: Vec<&String> = expect
                    .keys()
                    .filter(|k| refs.get(*k) != expect.get(*k))
                    .take(4)
                    .collect();
                let extra: Vec<&String> = refs
                    .keys()
                    .filter(|k| refs.get(*k) != expect.get(*k))
                    .take(4)
                    .collect();
                f.add(
                    "final state differs",
                    format!("git for-each-ref: expected but not shown {missing:?}; shown but not expected {extra:?}"),
                );
            }
        }
    }
    for (name, got) in &ev.git_reflogs {
        if name == names::EXPIRY {
            continue;
        }
        let expect: Vec<String> = want
            .logs
            .get(name)
            .map(|es| {
                es.iter()
                    .map(|e| e.message.trim_end_matches('\n').to_string())
                    .collect()
            })
            .unwrap_or_default();
        match got {
            Err(e) => f.add("final stack unreadable", format!("git log -g {name}: {e}")),
            Ok(got) if *got != expect => f.add(
                "reflog mismatch",
                format!(
                    "git log -g {name}: {} entries, the model has {}",
                    got.len(),
                    expect.len()
                ),
            ),
            Ok(_) => {}
        }
    }
}

/// No lock or other file `tables.list` does not name is left, and `git refs verify` (when
/// git has it) passes.
fn leftovers(ev: &Evidence<'_>, f: &mut Findings) {
    for l in &ev.leftovers {
        let class = if l.ends_with(".lock") {
            "lock left behind"
        } else {
            "stray file left behind"
        };
        f.add(
            class,
            format!("{l} in the stack directory after every writer exited"),
        );
    }
    if let Some(v) = &ev.verify {
        f.add("git refs verify fails", v.clone());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::concurrent::evidence::{FinalLogs, Sample};
    use crate::model::MValue;
    use crate::ops::{Update, Value};

    /// A state's refs under `refs/`, resolved, as the readers show them.
    fn visible(m: &Model) -> BTreeMap<String, String> {
        m.refs
            .iter()
            .filter(|(n, _)| n.starts_with("refs/"))
            .filter_map(|(n, v)| match v {
                MValue::Oid(id) => Some((n.clone(), id.to_string())),
                MValue::Symref(_) => None,
            })
            .collect()
    }

    fn commits() -> Vec<ObjectId> {
        (1..=3u8)
            .map(|i| ObjectId::from_bytes(&[i; 20]).unwrap())
            .collect()
    }

    fn upd(name: &str, new: &ObjectId, old: Option<&ObjectId>) -> Update {
        Update {
            refname: name.into(),
            new: Some(Value::Oid(new.to_string())),
            old: old.map(|o| Value::Oid(o.to_string())),
            no_deref: false,
        }
    }

    fn outcome(writer: u32, txn: u32, updates: Vec<Update>, window: (u64, u64)) -> Outcome {
        Outcome {
            writer,
            kind: if writer == 0 {
                WriterKind::Git
            } else {
                WriterKind::Ours
            },
            txn: Some(txn),
            what: "transaction".into(),
            message: names::message(writer, txn),
            updates,
            tick: u64::from(txn),
            before: window.0,
            after: window.1,
            accepted: true,
            error: String::new(),
            index: None,
            class: None,
        }
    }

    /// Two writers: writer 0 creates main (index 1), writer 1 moves it (index 2), writer 0's
    /// second transaction expects the old value and is refused as it should be.
    fn scenario() -> (Vec<Outcome>, Vec<ObjectId>) {
        let c = commits();
        let main = "refs/heads/main";
        let mut refused = outcome(
            0,
            1,
            vec![
                upd(&names::journal(0), &c[1], None),
                upd(main, &c[2], Some(&c[0])),
            ],
            (2, 2),
        );
        refused.accepted = false;
        refused.class = Some(ErrClass::OldValue);
        refused.error = "fatal: cannot lock ref 'refs/heads/main': is at … but expected …".into();
        let outcomes = vec![
            outcome(
                0,
                0,
                vec![upd(&names::journal(0), &c[0], None), upd(main, &c[0], None)],
                (0, 1),
            ),
            outcome(
                1,
                0,
                vec![
                    upd(&names::journal(1), &c[0], None),
                    upd(main, &c[1], Some(&c[0])),
                ],
                (1, 2),
            ),
            refused,
        ];
        (outcomes, c)
    }

    /// What a correct stack holds after the scenario, read through us and through git.
    fn evidence(outcomes: &[Outcome], c: &[ObjectId]) -> Evidence<'static> {
        let pool = commit_pool(c);
        let mut m = Model::new(ObjectId::null(c[0].hash()), LogRefsOpt::Always, 4096);
        m.init("main");
        let mut logs = Vec::new();
        for (i, o) in outcomes.iter().filter(|o| o.accepted).enumerate() {
            m.transaction(
                &o.updates,
                &o.message,
                false,
                BASE_TIME + 60 * o.tick,
                &PoolObjects(&pool),
            )
            .unwrap();
            for u in &o.updates {
                logs.push((u.refname.clone(), i as u64 + 1, o.message.clone()));
            }
        }
        let ours = Snapshot::of_model(&m);
        let git_reflogs = ours
            .logs
            .iter()
            .map(|(n, es)| {
                (
                    n.clone(),
                    Ok(es
                        .iter()
                        .map(|e| e.message.trim_end().to_string())
                        .collect()),
                )
            })
            .collect();
        Evidence {
            outcomes: Vec::leak(outcomes.to_vec()),
            samples: vec![
                Sample::of(true, BTreeMap::new(), None),
                Sample::of(false, visible(&m), Some(2)),
            ],
            worker_errors: Vec::new(),
            logs: FinalLogs {
                records: logs,
                unreadable: None,
            },
            git_refs: Ok(visible(&m)),
            ours: Ok(ours),
            git_reflogs,
            leftovers: Vec::new(),
            verify: None,
        }
    }

    fn classes(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.class.as_str()).collect()
    }

    #[test]
    fn a_correct_run_has_no_findings() {
        let (o, c) = scenario();
        assert_eq!(check(&evidence(&o, &c), &c), vec![]);
    }

    #[test]
    fn a_missing_acknowledged_transaction_is_a_lost_update() {
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        ev.logs
            .records
            .retain(|(_, _, m)| m != &names::message(1, 0));
        assert!(classes(&check(&ev, &c)).contains(&"lost update"));
    }

    #[test]
    fn an_unreadable_stack_is_checked_through_the_tables_that_open() {
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        // A listed table gone: its update is in none of the tables that still open.
        ev.logs.unreadable = Some("a listed table is gone".into());
        ev.ours = Err("a listed table is gone".into());
        ev.logs
            .records
            .retain(|(_, _, m)| m != &names::message(1, 0));
        let found = check(&ev, &c);
        let classes = classes(&found);
        let unreadable = classes.iter().filter(|c| **c == "final stack unreadable");
        assert_eq!(unreadable.count(), 1, "{classes:?}");
        assert!(classes.contains(&"lost update"), "{classes:?}");
    }

    #[test]
    fn a_refused_transaction_in_the_stack_left_a_trace() {
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        ev.logs
            .records
            .push((names::journal(0), 3, names::message(0, 1)));
        assert!(classes(&check(&ev, &c)).contains(&"refused transaction left a trace"));
    }

    #[test]
    fn a_read_git_failed_is_reported() {
        let (mut o, c) = scenario();
        let mut read = o[0].clone();
        read.txn = None;
        read.what = "read".into();
        read.accepted = false;
        read.error = "rev-parse refs/heads/main: Signal(11): ".into();
        o.push(read);
        let ev = evidence(&o, &c);
        assert!(classes(&check(&ev, &c)).contains(&"reader failed"));
    }

    #[test]
    fn an_entry_nobody_wrote_is_a_phantom() {
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        ev.logs
            .records
            .push(("refs/heads/x".into(), 2, "concurrent w9 t9".into()));
        assert!(classes(&check(&ev, &c)).contains(&"phantom entry"));
    }

    #[test]
    fn a_refusal_no_state_explains_is_reported() {
        let (mut o, c) = scenario();
        // Expecting the value main really had: nothing justifies an old-value refusal.
        o[2].updates[1] = upd("refs/heads/main", &c[2], Some(&c[1]));
        let ev = evidence(&o, &c);
        assert!(classes(&check(&ev, &c)).contains(&"refusal without cause"));
        o[2].class = None;
        let ev = evidence(&o, &c);
        assert!(classes(&check(&ev, &c)).contains(&"unclassified refusal"));
    }

    #[test]
    fn an_index_outside_the_window_or_shared_is_reported() {
        let (mut o, c) = scenario();
        o[1].before = 5;
        let ev = evidence(&o, &c);
        assert!(classes(&check(&ev, &c)).contains(&"committed outside its window"));
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        for l in &mut ev.logs.records {
            l.1 = 1;
        }
        assert!(classes(&check(&ev, &c)).contains(&"update index shared"));
    }

    #[test]
    fn reads_must_follow_the_commit_order() {
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        let newest = ev.samples[1].refs.clone();
        let mut older = newest.clone();
        older.insert("refs/heads/main".into(), c[0].to_string());
        older.remove(&names::journal(1));
        // The newest state, then the one before it: a stale read.
        ev.samples = vec![
            Sample::of(true, newest.clone(), None),
            Sample::of(true, older.clone(), None),
        ];
        assert!(classes(&check(&ev, &c)).contains(&"stale read"));
        // A state no prefix has.
        let mut torn = newest.clone();
        torn.remove(&names::journal(0));
        ev.samples = vec![Sample::of(true, torn, None)];
        assert!(classes(&check(&ev, &c)).contains(&"torn read"));
        // Our reader's state must be the one its update index names.
        ev.samples = vec![Sample::of(false, older, Some(2))];
        assert!(classes(&check(&ev, &c)).contains(&"torn read"));
    }

    #[test]
    fn final_state_reflogs_and_leftovers_are_compared() {
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        ev.git_refs
            .as_mut()
            .unwrap()
            .insert("refs/heads/extra".into(), c[2].to_string());
        ev.git_reflogs.insert("HEAD".into(), Ok(vec![]));
        ev.leftovers = vec!["tables.list.lock".into(), "0x1-0x1-abcd.ref".into()];
        ev.verify = Some("Code(1): bad table".into());
        let got = check(&ev, &c);
        let got = classes(&got);
        for want in [
            "final state differs",
            "reflog mismatch",
            "lock left behind",
            "stray file left behind",
            "git refs verify fails",
        ] {
            assert!(got.contains(&want), "{want} missing from {got:?}");
        }
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        ev.ours.as_mut().unwrap().refs.remove("refs/heads/main");
        assert!(classes(&check(&ev, &c)).contains(&"final state differs"));
    }
}
