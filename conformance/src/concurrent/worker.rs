//! One writer process of the concurrent mode: it waits for the start signal, then runs its
//! generated transactions (through `git update-ref --stdin` or through our `RefDb`) and its
//! maintenance (`pack-refs`, `pack-refs --auto`, `reflog expire`, or our equivalents), and
//! writes one [`Outcome`] line per attempt. Its choices come from its seed; the old values of
//! shared refs come from reading the stack just before each transaction, so they race with
//! the other writers as a real client's would.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use reftable::refdb::{RefDb, RefUpdate};
use reftable::{ObjectId, RefValue};

use crate::concurrent::impl_writer::ImplWriter;
use crate::concurrent::spec::{
    commit_pool, listed_max_index, names, refdb_options, Outcome, WorkerSpec, WriterKind,
};
use crate::git::driver::{committer_at, Git};
use crate::ops::{Update, Value};
use crate::setup::pool::PoolObjects;
use reftable_testkit::rng::Rng;

/// What one writer knows about the refs only it writes, and what it last read of the others.
struct State {
    own: BTreeMap<String, ObjectId>,
    last_read: BTreeMap<String, ObjectId>,
    journal: usize,
}

struct Worker<'a> {
    spec: &'a WorkerSpec,
    commits: Vec<ObjectId>,
    /// The objects our writer's transactions are checked against.
    pool: crate::setup::pool::Pool,
    rng: Rng,
    state: State,
    stack: std::path::PathBuf,
    reader: Option<RefDb>,
    ours: Option<RefDb>,
    git: Option<Git>,
    /// The implementation's adapter (an implementation's writer).
    imp: Option<ImplWriter>,
    /// Reads through git that failed, reported with the next outcome line.
    failed_reads: Vec<String>,
}

impl Worker<'_> {
    fn pick_other(&mut self, not: Option<ObjectId>) -> ObjectId {
        loop {
            let c = self.commits[self.rng.below(self.commits.len())];
            if Some(c) != not {
                return c;
            }
        }
    }

    /// The current value of `name` as the stack shows it now (`None`: absent, or the stack
    /// could not be read; a wrong guess only makes the transaction fail its old-value check).
    fn read_now(&mut self, name: &str) -> Option<ObjectId> {
        // A git writer reads one in three values through `git rev-parse`, so git's readers
        // run under the load too; a read git fails (other than "no such ref") is reported.
        if self.spec.kind == WriterKind::Git && self.rng.chance(33) {
            return self.read_through_git(name);
        }
        if let Some(imp) = self.imp.as_mut() {
            let v = imp.read(name);
            return self.remember(name, v);
        }
        let db = match self.spec.kind {
            WriterKind::Ours => self.ours.as_mut(),
            WriterKind::Git | WriterKind::Impl => self.reader.as_mut(),
        }?;
        db.reload().ok()?;
        let v = match db.read_ref(name.as_bytes()).ok()??.value {
            RefValue::Object(id) => Some(id),
            RefValue::Peeled { object, .. } => Some(object),
            _ => None,
        };
        self.remember(name, v)
    }

    /// Keep what was read of `name` for the transactions that use an older value.
    fn remember(&mut self, name: &str, v: Option<ObjectId>) -> Option<ObjectId> {
        match v {
            Some(id) => self.state.last_read.insert(name.to_string(), id),
            None => self.state.last_read.remove(name),
        };
        v
    }

    fn read_through_git(&mut self, name: &str) -> Option<ObjectId> {
        let git = self.git.as_ref().expect("git writer");
        let mut c = git.command_auto(&self.spec.repo, 0, false);
        let out = git.run_command(&mut c, &["rev-parse", "-q", "--verify", name], "");
        let v = match out.exit {
            crate::git::driver::Exit::Code(0) => ObjectId::from_hex(out.stdout.trim()),
            crate::git::driver::Exit::Code(1) if out.stderr.trim().is_empty() => None,
            _ => {
                self.failed_reads
                    .push(format!("rev-parse {name}: {}", git_error(&out)));
                None
            }
        };
        self.remember(name, v)
    }

    /// The updates of transaction `i`, drawn from the seed and the stack as read now.
    fn updates(&mut self, i: u32) -> Vec<Update> {
        let id = self.spec.id;
        let null = ObjectId::null(self.commits[0].hash());
        let mut out: Vec<Update> = Vec::new();
        // The journal: one entry per acknowledged transaction of this writer, never deleted
        // or expired, so its reflog gives every transaction's update index.
        let j = self.commits[(self.state.journal + 1) % self.commits.len()];
        out.push(upd(&names::journal(id), Some(j), None));
        let extra = 1 + self.rng.below(3);
        for _ in 0..extra {
            let roll = self.rng.below(100);
            let u = if roll < 40 {
                let name = names::own(id, self.rng.below(names::OWN));
                match self.state.own.get(&name).copied() {
                    None => upd(&name, Some(self.pick_other(None)), Some(null)),
                    Some(cur) if self.rng.chance(25) => del(&name, cur, null),
                    Some(cur) => upd(&name, Some(self.pick_other(Some(cur))), Some(cur)),
                }
            } else if roll < 78 {
                let slot = self.rng.below(self.spec.shared as usize + 1);
                let name = names::shared(slot);
                let cur = if self.rng.chance(85) {
                    self.read_now(&name)
                } else {
                    self.state.last_read.get(&name).copied()
                };
                match cur {
                    None => upd(&name, Some(self.pick_other(None)), Some(null)),
                    Some(cur) if slot != 0 && self.rng.chance(15) => del(&name, cur, null),
                    Some(cur) => upd(&name, Some(self.pick_other(Some(cur))), Some(cur)),
                }
            } else if roll < 88 {
                let name = names::DF[self.rng.below(names::DF.len())].to_string();
                match self.read_now(&name) {
                    None => upd(&name, Some(self.pick_other(None)), Some(null)),
                    Some(cur) => del(&name, cur, null),
                }
            } else if roll < 96 {
                upd(&names::tag(id, i), Some(self.pick_other(None)), Some(null))
            } else {
                upd(names::EXPIRY, Some(self.pick_other(None)), None)
            };
            if out.iter().all(|o| o.refname != u.refname) {
                out.push(u);
            }
        }
        out
    }

    /// Run one transaction; `(accepted, error text, update index when ours, refusal class)`.
    /// An implementation's writer may cut `updates` to what it can take.
    fn commit(&mut self, updates: &mut Vec<Update>, message: &str, tick: u64) -> Attempt {
        match self.spec.kind {
            WriterKind::Git => {
                let git = self.git.as_ref().expect("git writer");
                let mut stdin = String::new();
                for u in updates {
                    stdin.push_str(&u.stdin_lines().expect("update-ref syntax"));
                }
                let mut c = git.command_auto(&self.spec.repo, tick, true);
                let out =
                    git.run_command(&mut c, &["update-ref", "-m", message, "--stdin"], &stdin);
                if out.exit.success() {
                    return (true, String::new(), None, None);
                }
                (false, git_error(&out), None, git_class(&out))
            }
            WriterKind::Ours => {
                let db = self.ours.as_mut().expect("our writer");
                let lib: Vec<RefUpdate> = updates
                    .iter()
                    .map(|u| u.to_ref_update(message, false))
                    .collect();
                let objects = PoolObjects(&self.pool);
                let r = db
                    .prepare(&lib, &committer_at(tick), &objects)
                    .and_then(|p| {
                        let index = p.update_index();
                        p.commit().map(|_| index)
                    });
                match r {
                    Ok(index) => (true, String::new(), Some(index), None),
                    Err(e) => (false, format!("{e:#}"), None, crate::err_class::of_ours(&e)),
                }
            }
            WriterKind::Impl => {
                let imp = self.imp.as_mut().expect("an implementation's writer");
                let (ok, error, class) = imp.commit(updates, message, tick);
                (ok, error, None, class)
            }
        }
    }

    /// Maintenance number `k`: compaction of the whole stack, auto-compaction, or expiring
    /// the expiry ref's reflog, in turn; `None` when an implementation does not offer it.
    fn maintain(
        &mut self,
        k: u32,
        tick: u64,
    ) -> Option<(String, bool, String, Option<crate::err_class::ErrClass>)> {
        let what = ["pack-refs", "pack-refs --auto", "reflog expire"][k as usize % 3];
        Some(match self.spec.kind {
            WriterKind::Git => {
                let git = self.git.as_ref().expect("git writer");
                let args: &[&str] = match k % 3 {
                    0 => &["pack-refs"],
                    1 => &["pack-refs", "--auto"],
                    _ => &[
                        "reflog",
                        "expire",
                        "--expire=now",
                        "--expire-unreachable=now",
                        names::EXPIRY,
                    ],
                };
                let mut c = git.command_auto(&self.spec.repo, tick, true);
                let out = git.run_command(&mut c, args, "");
                if out.exit.success() {
                    return Some((what.to_string(), true, String::new(), None));
                }
                (what.to_string(), false, git_error(&out), git_class(&out))
            }
            WriterKind::Ours => {
                let db = self.ours.as_mut().expect("our writer");
                let r = match k % 3 {
                    0 => db.pack_refs(false),
                    1 => db.pack_refs(true),
                    _ => db
                        .expire_reflog(names::EXPIRY.as_bytes(), &mut |_| true, false, false)
                        .map(|_| ()),
                };
                let class = r.as_ref().err().and_then(crate::err_class::of_ours);
                let err = r.err().map(|e| format!("{e:#}")).unwrap_or_default();
                (what.to_string(), err.is_empty(), err, class)
            }
            WriterKind::Impl => {
                let imp = self.imp.as_mut().expect("an implementation's writer");
                let (what, (ok, err, class)) = imp.maintain(k)?;
                (what, ok, err, class)
            }
        })
    }
}

/// How a git command failed: exit status and what it printed.
fn git_error(out: &crate::git::driver::Output) -> String {
    format!("{:?}: {}", out.exit, out.stderr.trim())
}

/// The class of a git failure, by wording or (when git printed nothing) by exit status.
fn git_class(out: &crate::git::driver::Output) -> Option<crate::err_class::ErrClass> {
    match out.exit {
        crate::git::driver::Exit::Code(code) => {
            crate::git::messages::classify_exit(code, &out.stderr)
        }
        _ => None,
    }
}

type Attempt = (
    bool,
    String,
    Option<u64>,
    Option<crate::err_class::ErrClass>,
);

fn upd(name: &str, new: Option<ObjectId>, old: Option<ObjectId>) -> Update {
    Update {
        refname: name.to_string(),
        new: new.map(|n| Value::Oid(n.to_string())),
        old: old.map(|o| Value::Oid(o.to_string())),
        no_deref: false,
    }
}

/// Delete `name`, expecting `old`.
fn del(name: &str, old: ObjectId, null: ObjectId) -> Update {
    upd(name, Some(null), Some(old))
}

/// An outcome of writer `spec` that is no transaction (a read or a maintenance run), and the
/// fields a transaction's outcome shares with it.
fn other(
    spec: &WorkerSpec,
    what: &str,
    tick: u64,
    (before, after): (u64, u64),
    accepted: bool,
    error: String,
    class: Option<crate::err_class::ErrClass>,
) -> Outcome {
    Outcome {
        writer: spec.id,
        kind: spec.kind,
        txn: None,
        what: what.into(),
        message: String::new(),
        updates: Vec::new(),
        tick,
        before,
        after,
        accepted,
        error,
        index: None,
        class,
    }
}

fn write_outcome(out: &mut impl Write, o: &Outcome) -> Result<(), String> {
    writeln!(out, "{}", serde_json::to_string(o).expect("json")).map_err(|e| e.to_string())
}

impl<'a> Worker<'a> {
    /// The writer `spec` describes, with the stack open through us (and, for a git writer,
    /// git found).
    fn open(spec: &'a WorkerSpec) -> Result<Worker<'a>, String> {
        let commits: Vec<ObjectId> = spec
            .commits
            .iter()
            .map(|h| ObjectId::from_hex(h).ok_or(format!("bad commit {h}")))
            .collect::<Result<_, _>>()?;
        let stack = spec.repo.join(".git/reftable");
        let mut w = Worker {
            spec,
            pool: commit_pool(&commits),
            commits,
            rng: Rng(spec.seed ^ (u64::from(spec.id) << 40) ^ 0xc0c0_0000),
            state: State {
                own: BTreeMap::new(),
                last_read: BTreeMap::new(),
                journal: 0,
            },
            reader: None,
            ours: None,
            git: None,
            imp: None,
            stack: stack.clone(),
            failed_reads: Vec::new(),
        };
        match spec.kind {
            WriterKind::Git => {
                w.git = Some(Git::find(Some(&spec.git))?);
                w.reader = Some(
                    RefDb::open_or_create(&stack, refdb_options(false))
                        .map_err(|e| format!("{e:#}"))?,
                );
            }
            WriterKind::Ours => {
                w.ours = Some(
                    RefDb::open_or_create(&stack, refdb_options(true))
                        .map_err(|e| format!("{e:#}"))?,
                );
            }
            WriterKind::Impl => w.imp = Some(ImplWriter::open(spec)?),
        }
        Ok(w)
    }

    /// Attempt transaction `i` and write its outcome to `out`, then one line for each read
    /// through git that failed while it was drawn.
    fn transaction(&mut self, i: u32, out: &mut impl Write) -> Result<(), String> {
        let spec = self.spec;
        let tick = u64::from(i);
        let mut updates = self.updates(i);
        let message = names::message(spec.id, i);
        let before = listed_max_index(&self.stack);
        let (accepted, error, index, class) = self.commit(&mut updates, &message, tick);
        let after = listed_max_index(&self.stack);
        if accepted {
            self.acknowledged(&updates);
        }
        let o = Outcome {
            txn: Some(i),
            message,
            updates,
            index,
            ..other(
                spec,
                "transaction",
                tick,
                (before, after),
                accepted,
                error,
                class,
            )
        };
        write_outcome(out, &o)?;
        for error in std::mem::take(&mut self.failed_reads) {
            let o = other(spec, "read", tick, (before, after), false, error, None);
            write_outcome(out, &o)?;
        }
        Ok(())
    }

    /// Take in an acknowledged transaction's `updates`: one more journal entry, and the new
    /// values of this writer's own refs.
    fn acknowledged(&mut self, updates: &[Update]) {
        self.state.journal += 1;
        for u in updates {
            if names::is_own(self.spec.id, &u.refname) {
                if let Some(Value::Oid(h)) = &u.new {
                    let id = ObjectId::from_hex(h).expect("hex");
                    if id.is_null() {
                        self.state.own.remove(&u.refname);
                    } else {
                        self.state.own.insert(u.refname.clone(), id);
                    }
                }
            }
        }
    }

    /// Run maintenance number `k` at `tick` and write its outcome to `out`.
    fn maintenance(&mut self, k: u32, tick: u64, out: &mut impl Write) -> Result<(), String> {
        let before = listed_max_index(&self.stack);
        let Some((what, ok, error, class)) = self.maintain(k, tick) else {
            return Ok(());
        };
        let after = listed_max_index(&self.stack);
        write_outcome(
            out,
            &other(self.spec, &what, tick, (before, after), ok, error, class),
        )
    }
}

/// Wait (up to a minute) for the coordinator's start signal, so that every writer starts
/// at once.
fn wait_for_start(spec: &WorkerSpec) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !spec.start.exists() {
        if Instant::now() > deadline {
            return Err("no start signal within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// The worker process's body; its outcomes go to `spec.outcomes`, one JSON line each.
pub(crate) fn work(spec: &WorkerSpec) -> Result<(), String> {
    let mut w = Worker::open(spec)?;
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&spec.outcomes)
            .map_err(|e| format!("{}: {e}", spec.outcomes.display()))?,
    );
    wait_for_start(spec)?;
    let mut maintenance = 0;
    for i in 0..spec.txns {
        w.transaction(i, &mut out)?;
        if spec.maintenance_every > 0 && (i + 1) % spec.maintenance_every == 0 {
            w.maintenance(maintenance, u64::from(i), &mut out)?;
            maintenance += 1;
        }
    }
    out.flush().map_err(|e| e.to_string())
}
