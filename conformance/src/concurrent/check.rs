//! The checks of a concurrent run, over what the writers reported, what the reader sampled
//! while they ran, and the final stack as git and we read it (see `concurrent.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;

use reftable::{LogValue, ObjectId};
use serde::Serialize;

use crate::concurrent::worker::{commit_pool, refdb_options};
use crate::concurrent::{names, Outcome};
use crate::err_class::ErrClass;
use crate::git::driver::BASE_TIME;
use crate::model::{Fault, MValue, Model};
use crate::ops::LogRefsOpt;
use crate::setup::env::Env;
use crate::setup::pool::PoolObjects;
use crate::snapshot::Snapshot;

/// Something a concurrent run shows to be wrong.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What kind of wrong (`lost update`, `stale read`, …).
    pub class: String,
    /// The evidence.
    pub detail: String,
    /// The known git defect it comes from (an entry of the expected-divergences file whose
    /// range holds the git under test).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

fn finding(class: &str, detail: String) -> Finding {
    Finding {
        class: class.into(),
        detail,
        expected: None,
    }
}

/// What the reader saw at one moment: resolved refs under `refs/`.
pub(crate) struct Sample {
    pub(crate) through_git: bool,
    refs: BTreeMap<String, String>,
    /// The highest update index the stack had (our reader only).
    index: Option<u64>,
    error: Option<String>,
}

impl Sample {
    pub(crate) fn of(
        through_git: bool,
        refs: BTreeMap<String, String>,
        index: Option<u64>,
    ) -> Sample {
        Sample {
            through_git,
            refs,
            index,
            error: None,
        }
    }

    pub(crate) fn failed(through_git: bool, error: String) -> Sample {
        Sample {
            through_git,
            refs: BTreeMap::new(),
            index: None,
            error: Some(error),
        }
    }
}

/// Everything the checks look at.
pub(crate) struct Evidence<'a> {
    outcomes: &'a [Outcome],
    pub(crate) samples: Vec<Sample>,
    worker_errors: Vec<String>,
    /// Every reflog update record of the final stack, as we read it: (ref, index, message).
    logs: Result<Vec<(String, u64, String)>, String>,
    ours: Result<Snapshot, String>,
    git_refs: Result<BTreeMap<String, String>, String>,
    /// `git log -g` of each reflog we read: messages, newest first.
    git_reflogs: BTreeMap<String, Result<Vec<String>, String>>,
    /// Files in the stack directory that `tables.list` does not name.
    leftovers: Vec<String>,
    /// `git refs verify` on the final stack, when git has it and it fails.
    verify: Option<String>,
}

fn trim_nl(m: &[u8]) -> String {
    let s = String::from_utf8_lossy(m);
    s.strip_suffix('\n').unwrap_or(&s).to_string()
}

/// Every reflog update record of the stack in `stack`: (ref, update index, message).
fn log_records(stack: &Path) -> Result<Vec<(String, u64, String)>, String> {
    let db =
        reftable::refdb::RefDb::open(stack, refdb_options(false)).map_err(|e| e.to_string())?;
    let mut it = db.stack().merged().logs().map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(l) = it.next_record().map_err(|e| e.to_string())? {
        if let LogValue::Update(u) = &l.value {
            if !reftable::refdb::is_existence_marker(l) {
                out.push((
                    String::from_utf8_lossy(&l.refname).into_owned(),
                    l.update_index,
                    trim_nl(&u.message),
                ));
            }
        }
    }
    Ok(out)
}

/// The update index of each message in the writers' journals.
pub(crate) fn journal_indexes(stack: &Path) -> BTreeMap<String, u64> {
    log_records(stack)
        .unwrap_or_default()
        .into_iter()
        .filter(|(r, _, _)| r.starts_with("refs/journal/"))
        .map(|(_, i, m)| (m, i))
        .collect()
}

impl<'a> Evidence<'a> {
    /// Read the final stack of `repo` through us and through git.
    pub(crate) fn gather(
        env: &Env,
        repo: &Path,
        outcomes: &'a [Outcome],
        samples: Vec<Sample>,
        worker_errors: Vec<String>,
    ) -> Evidence<'a> {
        let stack = repo.join(".git/reftable");
        let ours = Snapshot::of_stack_dir(&stack, refdb_options(false)).map_err(|e| e.to_string());
        let git_refs = git_refs(env, repo);
        let mut git_reflogs = BTreeMap::new();
        if let Ok(s) = &ours {
            // One `git log -g` for every reflog we read (a run of thousands of transactions
            // has hundreds of tags with a reflog each).
            let names: Vec<&String> = s.logs.keys().collect();
            let mut walked = crate::git::reflogs::log_g(&env.git, repo, &names, 0);
            for name in names {
                let r = match walked.remove(name) {
                    // `<name>@{n} <id> <message>`: the message is the rest after the id.
                    Some(lines) => Ok(lines
                        .iter()
                        .map(|l| l.splitn(3, ' ').nth(2).unwrap_or("").to_string())
                        .collect()),
                    None => Err("git log -g cannot walk it".to_string()),
                };
                git_reflogs.insert(name.clone(), r);
            }
        }
        let listed: BTreeSet<String> = std::fs::read_to_string(stack.join("tables.list"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        let mut leftovers: Vec<String> = std::fs::read_dir(&stack)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n != "tables.list" && !listed.contains(n))
                    .collect()
            })
            .unwrap_or_default();
        leftovers.sort();
        let verify = env.profile.features.refs_verify.then(|| {
            let out = env.git.run(repo, &["refs", "verify"], "", 0);
            (!out.exit.success()).then(|| format!("{:?}: {}", out.exit, out.stderr.trim()))
        });
        Evidence {
            outcomes,
            samples,
            worker_errors,
            logs: log_records(&stack),
            ours,
            git_refs,
            git_reflogs,
            leftovers,
            verify: verify.flatten(),
        }
    }
}

/// `git for-each-ref` in `repo`: the refs under `refs/` git lists, with their ids.
pub(crate) fn git_refs(env: &Env, repo: &Path) -> Result<BTreeMap<String, String>, String> {
    let out = env.git.run(
        repo,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
        "",
        0,
    );
    if !out.exit.success() {
        return Err(format!("{:?}: {}", out.exit, out.stderr.trim()));
    }
    Ok(out
        .stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect())
}

/// What `for-each-ref` lists of a snapshot: its refs under `refs/` that point at objects
/// (the concurrent mode writes no symrefs there).
pub(crate) fn listed_refs(s: &Snapshot) -> BTreeMap<String, String> {
    s.refs
        .iter()
        .filter(|(n, _)| n.starts_with("refs/"))
        .filter_map(|(n, v)| match v {
            crate::snapshot::SValue::Oid(id, _) => Some((n.clone(), id.clone())),
            crate::snapshot::SValue::Symref(_) => None,
        })
        .collect()
}

/// A state's refs under `refs/`, resolved, as the readers show them.
#[cfg(test)]
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

/// A 128-bit fingerprint of a state's refs under `refs/` (name and id of each, in name
/// order), so that the state after every prefix of a long run need not be kept.
type Print = (u64, u64);

fn print_of<'a>(refs: impl Iterator<Item = (&'a str, &'a [u8])>) -> Print {
    let mut a = std::collections::hash_map::DefaultHasher::new();
    let mut b = std::collections::hash_map::DefaultHasher::new();
    b.write_u64(0x9e37_79b9_7f4a_7c15);
    for (name, id) in refs {
        for h in [&mut a, &mut b] {
            name.hash(h);
            id.hash(h);
        }
    }
    (a.finish(), b.finish())
}

/// The fingerprint of the model's refs under `refs/` that point at objects (what the
/// readers list).
fn model_print(m: &Model) -> Print {
    print_of(
        m.refs
            .iter()
            .filter(|(n, _)| n.starts_with("refs/"))
            .filter_map(|(n, v)| match v {
                MValue::Oid(id) => Some((n.as_str(), id.as_bytes())),
                MValue::Symref(_) => None,
            }),
    )
}

/// The fingerprint of a sample (hex ids; a malformed one never matches a state).
fn sample_print(refs: &BTreeMap<String, String>) -> Print {
    let ids: Vec<(&str, Vec<u8>)> = refs
        .iter()
        .map(|(n, h)| {
            let id = ObjectId::from_hex(h)
                .map_or_else(|| h.as_bytes().to_vec(), |i| i.as_bytes().to_vec());
            (n.as_str(), id)
        })
        .collect();
    print_of(ids.iter().map(|(n, id)| (*n, id.as_slice())))
}

/// At most this many findings of one class are listed (the first ones tell the story).
const PER_CLASS: usize = 5;

struct Findings(Vec<Finding>, BTreeMap<String, usize>);

impl Findings {
    fn add(&mut self, class: &str, detail: String) {
        let n = self.1.entry(class.to_string()).or_default();
        *n += 1;
        if *n <= PER_CLASS {
            self.0.push(finding(class, detail));
        }
    }

    fn finish(mut self) -> Vec<Finding> {
        for (class, n) in &self.1 {
            if *n > PER_CLASS {
                self.0.push(finding(
                    class,
                    format!("… {} more like this", n - PER_CLASS),
                ));
            }
        }
        self.0
    }
}

/// Check a concurrent run; the findings, empty when everything holds.
pub(crate) fn check(ev: &Evidence<'_>, commits: &[ObjectId]) -> Vec<Finding> {
    let mut f = Findings(Vec::new(), BTreeMap::new());
    for e in &ev.worker_errors {
        f.add("writer failed", e.clone());
    }
    let logs = match &ev.logs {
        Ok(l) => l,
        Err(e) => {
            f.add("final stack unreadable", format!("our reader: {e}"));
            return f.finish();
        }
    };
    // Where each message is in the stack.
    let mut journal: HashMap<&str, Vec<u64>> = HashMap::new();
    let mut everywhere: HashMap<&str, BTreeSet<u64>> = HashMap::new();
    for (r, i, m) in logs {
        everywhere.entry(m.as_str()).or_default().insert(*i);
        if r.starts_with("refs/journal/") {
            journal.entry(m.as_str()).or_default().push(*i);
        }
    }
    let known: HashMap<&str, &Outcome> = ev
        .outcomes
        .iter()
        .filter(|o| o.txn.is_some())
        .map(|o| (o.message.as_str(), o))
        .collect();
    for m in everywhere.keys() {
        if !known.contains_key(m) {
            f.add(
                "phantom entry",
                format!("a reflog entry {m:?} that no writer attempted"),
            );
        }
    }
    // Acknowledged transactions in commit order.
    let mut order: Vec<(u64, &Outcome)> = Vec::new();
    let mut by_index: HashMap<u64, &str> = HashMap::new();
    for o in ev.outcomes.iter().filter(|o| o.txn.is_some()) {
        let at = journal.get(o.message.as_str());
        if !o.accepted {
            if let Some(ix) = everywhere.get(o.message.as_str()) {
                f.add(
                    "refused transaction left a trace",
                    format!(
                        "{:?} was refused ({}) but has reflog entries at update index {ix:?}",
                        o.message,
                        o.error.trim()
                    ),
                );
            }
            continue;
        }
        let Some(at) = at else {
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
            continue;
        };
        let index = at[0];
        if at.len() > 1 || everywhere[o.message.as_str()].len() > 1 {
            f.add(
                "transaction split",
                format!(
                    "{:?} is under update indexes {:?}",
                    o.message,
                    everywhere[o.message.as_str()]
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
        order.push((index, o));
    }
    order.sort_by_key(|(i, o)| (*i, o.writer));
    // Replay the acknowledged transactions in that order on the model. State j is the one
    // after the first j of them; `indexes[j]` is the update index that state ends at.
    let null = ObjectId::null(commits[0].hash());
    let pool = commit_pool(commits);
    let objects = PoolObjects(&pool);
    let indexes: Vec<u64> = std::iter::once(0)
        .chain(order.iter().map(|(i, _)| *i))
        .collect();
    let prefix_at = |index: u64| indexes.partition_point(|i| *i <= index) - 1;
    // Refusals that name a fault must have it in some state inside their window: they are
    // checked against each state of the window as the replay passes it.
    let mut pending: Vec<(usize, usize, &Outcome, Fault)> = Vec::new();
    for o in ev.outcomes.iter().filter(|o| !o.accepted) {
        if o.error.starts_with("Signal(") || o.error.starts_with("Timeout") {
            let class = if o.error.starts_with("Signal(") {
                "git crashed"
            } else {
                "git hung"
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
            pending.push((prefix_at(o.before), prefix_at(o.after), o, fault));
        }
    }
    pending.sort_by_key(|(lo, _, _, _)| *lo);
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
                &objects,
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
                .refusal(&o.updates, &objects)
                .is_some_and(|r| r.faults.contains(fault))
            {
                justified[p] = true;
                return false;
            }
            hi > j
        });
    }
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
    // Every sample is a prefix of the commit order, and never an older one than the last.
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
            let j = prefix_at(index);
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
    // The final state, through us and through git.
    let want = Snapshot::of_model(&model);
    match &ev.ours {
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
    match &ev.git_refs {
        Err(e) => f.add("final stack unreadable", format!("git for-each-ref: {e}")),
        Ok(refs) => {
            let expect = listed_refs(&want);
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
    f.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concurrent::WriterKind;
    use crate::ops::{Update, Value};

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
            logs: Ok(logs),
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
            .as_mut()
            .unwrap()
            .retain(|(_, _, m)| m != &names::message(1, 0));
        assert!(classes(&check(&ev, &c)).contains(&"lost update"));
    }

    #[test]
    fn a_refused_transaction_in_the_stack_left_a_trace() {
        let (o, c) = scenario();
        let mut ev = evidence(&o, &c);
        ev.logs
            .as_mut()
            .unwrap()
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
            .as_mut()
            .unwrap()
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
        for l in ev.logs.as_mut().unwrap() {
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
