//! The state checks of a case: after every step, the tables byte for byte (and the stack
//! directory's files, `tables.list`'s bytes among them), our reader on
//! git's stack, the model, the files-backend twin and git's own view of its stack; at the end
//! of a case, git's reflogs and git reading a copy of our stack (git's other reads at the
//! end are in `reads.rs`).

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::Instant;

use reftable::ObjectId;

use crate::finding::divergence::{Check, Divergence};

use crate::cases::executor::last_read::LastRead;
use crate::cases::executor::Executor;
use crate::cases::outcome::Cost;

use crate::model::{MValue, Model, SYMREF_READS};
use crate::snapshot::{SValue, Snapshot};
use crate::stack_files::{scratch_copy, stack_cached, tables, tables_cached, StackFiles, Tables};

fn fingerprint(t: &Tables) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// A fingerprint of what our readers are compared with in the model: its refs and its
/// reflogs (each entry's ids, message and time). Hashed where it stands, without the
/// snapshot a comparison builds (every id in hex, every message a `String`).
fn model_fingerprint(m: &Model) -> u64 {
    let mut h = DefaultHasher::new();
    for (name, v) in &m.refs {
        name.hash(&mut h);
        match v {
            MValue::Oid(id) => (0u8, id.as_bytes()).hash(&mut h),
            MValue::Symref(t) => (1u8, t).hash(&mut h),
        }
    }
    for (name, entries) in &m.logs {
        (name, entries.len()).hash(&mut h);
        for e in entries {
            (e.old.as_bytes(), e.new.as_bytes(), &e.message, e.time).hash(&mut h);
        }
    }
    h.finish()
}

pub(crate) fn first_difference(a: &Tables, b: &Tables) -> Option<String> {
    let names = |t: &Tables| t.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    if names(a) != names(b) {
        return Some(format!(
            "tables.list differs: ours {:?}, git's {:?}",
            names(a),
            names(b)
        ));
    }
    for ((name, x), (_, y)) in a.iter().zip(b) {
        if x != y {
            let at = x
                .iter()
                .zip(y.iter())
                .position(|(p, q)| p != q)
                .unwrap_or(x.len().min(y.len()));
            let block = block_at(y, at);
            return Some(format!(
                "{name}: bytes differ at offset {at} (block {block}); ours {} bytes, git's {}",
                x.len(),
                y.len()
            ));
        }
    }
    None
}

fn block_at(bytes: &[u8], at: usize) -> String {
    let Ok(t) = reftable::Table::from_bytes("git", bytes.to_vec()) else {
        return "?".into();
    };
    for (k, b) in t.blocks().enumerate() {
        let Ok(b) = b else { break };
        if (b.offset as usize..b.offset as usize + b.full_size).contains(&at) {
            return format!("{k} '{}' at {}", b.block_type.byte() as char, b.offset);
        }
    }
    "footer".into()
}

/// The names whose value differs between `a` and `b` (in one and not the other, or with
/// another value).
fn changed_names(a: &BTreeMap<String, SValue>, b: &BTreeMap<String, SValue>) -> Vec<String> {
    let gone = a.iter().filter(|(k, v)| b.get(*k) != Some(*v));
    let new = b.keys().filter(|k| !a.contains_key(*k));
    gone.map(|(k, _)| k).chain(new).cloned().collect()
}

/// An end-of-case probe of `E` (the executor): what went wrong, if anything.
type Probe<E> = fn(&E) -> Result<(), ProbeError>;

/// Why an end-of-case probe did not pass.
#[derive(Debug)]
pub(crate) enum ProbeError {
    /// Its scenario could not be set up on the state the case left (a `HEAD` that is a
    /// symref to itself cannot be pointed elsewhere, for instance): skipped and counted,
    /// never a divergence.
    Setup(String),
    /// git did other than the probe expects: a divergence.
    Differs(String),
}

impl From<String> for ProbeError {
    fn from(s: String) -> ProbeError {
        ProbeError::Differs(s)
    }
}

/// At most this many reflogs are sought by name after a step (`lookups.rs`).
const LOG_SEEKS: usize = 2;

/// How many cases share one run of each end-of-case check that takes turns: git's reflogs,
/// git reading our stack and the config limits on one case in this many (12 times in a
/// default run of 120 cases on 2.47.3).
const END_EVERY: u64 = 8;

/// How many cases share one run of broken refs and the filtered views, which alone show
/// known defects (2.47's exclude patterns, master's double free over a missing object):
/// 21 times in a default run on 2.47.3.
const VIEWS_EVERY: u64 = 4;

impl Executor<'_> {
    /// The checks after a step, in order; the first that fails ends them.
    pub(crate) fn check_state(&mut self) {
        let started = Instant::now();
        let Some(theirs_tables) = self.check_bytes() else {
            return;
        };
        let started = self.spent("step: tables byte for byte", started);
        let fp = fingerprint(&theirs_tables);
        let worktree_fp = self.worktree_fingerprint();
        let touched = std::mem::take(&mut self.touched);
        self.git_turn = self.git_turns.step(fp, worktree_fp, &touched);
        let key = (fp, worktree_fp, model_fingerprint(&self.model));
        let (read, before) = match self.last_read.take() {
            // The same stack bytes, the same stack in our database's memory and the same
            // model as when they last agreed: reading again would read the same.
            Some(last) if last.key == key && self.db_holds(&theirs_tables) => {
                self.result.unchanged += 1;
                (last, None)
            }
            before => match self.read_ours(key) {
                Some(read) => (read, Some(before)),
                None => return,
            },
        };
        let started = self.spent("step: our readers and the model", started);
        self.check_after_read(&read, before, touched, &theirs_tables, started);
        if !self.diverged() {
            self.last_read = Some(read);
        }
    }

    /// Our readers on both stacks, and what they read against the model (whose fingerprint
    /// is `key.2`): what they read, when they agree.
    fn read_ours(&mut self, key: (u64, u64, u64)) -> Option<LastRead> {
        let ours = self.check_readers()?;
        self.count(Check::Model);
        if !ours.agrees_with(&self.model) {
            let model = Snapshot::of_model(&self.model);
            let d = ours.as_model_sees().diff(&model, 10).join("\n");
            self.diverge(Check::Model, "value mismatch", d);
            return None;
        }
        Some(LastRead { key, ours })
    }

    /// The checks after our readers' (`read`, what they read; `before`, what they read
    /// last when they read again this step, `None` when nothing changed; `touched`, the
    /// names the step named).
    fn check_after_read(
        &mut self,
        read: &LastRead,
        before: Option<Option<LastRead>>,
        touched: Vec<String>,
        theirs_tables: &Tables,
        started: Instant,
    ) {
        let (fp, ours) = (read.key.0, &read.ours);
        let git_too = self.git_turn && self.looked_up != Some(fp);
        if self.git_turn && !self.check_our_verify(theirs_tables, fp) {
            return;
        }
        let started = self.spent("step: our verify on git's stack", started);
        if self.git_turn {
            self.turn_names = self.git_turns.take_pending();
        }
        let names = if git_too {
            self.turn_names.clone()
        } else {
            touched
        };
        // Reflogs are sought where the stack changed: those of at most `LOG_SEEKS` names
        // the step touched whose reflog changed.
        let log_names: Vec<String> = match &before {
            Some(before) => {
                let old = |n: &String| before.as_ref().and_then(|b| b.ours.logs.get(n));
                let changed = |n: &&String| old(n) != ours.logs.get(*n);
                let changed = names.iter().filter(changed);
                changed.take(LOG_SEEKS).cloned().collect()
            }
            None => Vec::new(),
        };
        self.check_lookups(ours, &names, git_too, &log_names);
        if self.diverged() {
            return;
        }
        let started = self.spent("step: lookups", started);
        self.looked_up = Some(fp);
        if !self.check_twin(ours, false) {
            return;
        }
        let started = self.spent("step: files-backend twin", started);
        // git's view of its stack depends on nothing but the stack (the objects are fixed):
        // an unchanged stack was checked already.
        if self.viewed == Some(fp) {
            self.result.unchanged += 1;
            return;
        }
        if !self.git_turn {
            self.result.git_turns_waited += 1;
            return;
        }
        self.check_git_view(ours, fp);
        self.spent("step: git's view", started);
    }

    /// Our tables and git's, byte for byte; git's tables when they are the same.
    fn check_bytes(&mut self) -> Option<Tables> {
        let git_stack = self.repo.path().join(".git/reftable");
        self.count(Check::Bytes);
        let (theirs_tables, git_files) = stack_cached(&git_stack, &mut self.table_cache);
        let (ours_tables, files) = stack_cached(self.ours_dir.path(), &mut self.table_cache);
        if self.table_cache.len() > 4096 {
            self.table_cache.clear();
        }
        if let Some(d) = first_difference(&ours_tables, &theirs_tables) {
            self.diverge(Check::Bytes, "bytes differ", d);
            return None;
        }
        if let Some(d) = StackFiles::difference(&files, &git_files) {
            self.diverge(Check::Bytes, "stack files differ", d);
            return None;
        }
        Some(theirs_tables)
    }

    /// Whether our database's stack in memory lists the tables `tables` names (without their
    /// random parts), in order.
    fn db_holds(&self, tables: &Tables) -> bool {
        let held = self.db.stack().tables();
        fn stem(t: &reftable::Table) -> Option<&str> {
            let name = t.name().file_name()?.to_str()?;
            Some(name.rsplit_once('-').map_or(name, |x| x.0))
        }
        held.len() == tables.len()
            && held
                .iter()
                .zip(tables)
                .all(|(t, (name, _))| stem(t) == Some(name.as_str()))
    }

    /// Our reader on our stack, and on git's (reloaded) on git's turns: both read, and
    /// read the same; what we read when they do.
    fn check_readers(&mut self) -> Option<Snapshot> {
        let ours = match Snapshot::of_refdb(&self.db) {
            Ok(s) => s,
            Err(e) => {
                self.diverge(
                    Check::OursReadsGit,
                    "read error",
                    format!("our stack: {e:#}"),
                );
                return None;
            }
        };
        if self.git_turn {
            return self.check_ours_reads_git(&ours).then_some(ours);
        }
        // Off git's turns it is only reloaded: the lookups read git's stack through it.
        if let Err(e) = self.git_db.reload() {
            let detail = format!("git's stack: {e:#}");
            self.diverge(Check::OursReadsGit, "read error", detail);
            return None;
        }
        Some(ours)
    }

    /// Our reader on git's stack, reloaded, against what it read on ours (`ours`): false
    /// when they differ. The bytes are the same (compared first), so this checks our
    /// reload of a stack another process changed; it takes git's turns, as our verify does.
    fn check_ours_reads_git(&mut self, ours: &Snapshot) -> bool {
        self.count(Check::OursReadsGit);
        let theirs = self
            .git_db
            .reload()
            .and_then(|()| Snapshot::of_refdb(&self.git_db));
        match theirs {
            Ok(theirs) if theirs != *ours => {
                let d = ours.diff(&theirs, 10).join("\n");
                self.diverge(Check::OursReadsGit, "value mismatch", d);
                false
            }
            Err(e) => {
                self.diverge(
                    Check::OursReadsGit,
                    "read error",
                    format!("git's stack: {e:#}"),
                );
                false
            }
            _ => true,
        }
    }

    /// The files-backend twin's refs against ours (without peeled ids); false
    /// when they differ. After they first agree, a step compares only the names the twin
    /// wrote and the names whose value changed on our side: the twin's other names cannot
    /// have changed, and agreed before. `full` compares every name (the end of a case).
    pub(super) fn check_twin(&mut self, ours: &Snapshot, full: bool) -> bool {
        let Some((_, twin)) = &self.twin else {
            return true;
        };
        // libgit2 lists refs under refs/ plus HEAD and ORIG_HEAD.
        let listed = |k: &str| k.starts_with("refs/") || k == "HEAD" || k == "ORIG_HEAD";
        let ours_refs: BTreeMap<String, SValue> = (ours.refs.iter())
            .filter(|(k, _)| listed(k))
            .map(|(k, v)| match v {
                SValue::Oid(id, Some(_)) => (k.clone(), SValue::Oid(id.clone(), None)),
                v => (k.clone(), v.clone()),
            })
            .collect();
        let written = twin.take_written();
        let twin_refs = match self.twin_agreed.take() {
            Some(agreed) if !full => {
                let mut names = written;
                names.extend(changed_names(&agreed, &ours_refs));
                names.retain(|n| listed(n));
                if names.is_empty() {
                    self.result.unchanged += 1;
                    self.twin_agreed = Some(ours_refs);
                    return true;
                }
                let mut twin_refs = agreed;
                for name in names {
                    match twin.value(&name) {
                        Some(v) => twin_refs.insert(name, v),
                        None => twin_refs.remove(&name),
                    };
                }
                Ok(twin_refs)
            }
            _ => twin.refs(),
        };
        self.count(Check::Twin);
        match twin_refs {
            Ok(t) if t != ours_refs => {
                let other = Snapshot {
                    refs: t,
                    logs: Default::default(),
                };
                let mine = Snapshot {
                    refs: ours_refs,
                    logs: Default::default(),
                };
                let d = mine.diff(&other, 10).join("\n");
                self.diverge(Check::Twin, "value mismatch", d);
                false
            }
            Err(e) => {
                self.diverge(Check::Twin, "twin error", e);
                false
            }
            Ok(_) => {
                self.twin_agreed = Some(ours_refs);
                true
            }
        }
    }

    /// git's `for-each-ref` of its stack against what it should show for our refs;
    /// remembers the stack (`fp`) when they agree.
    pub(super) fn check_git_view(&mut self, ours: &Snapshot, fp: u64) {
        self.count(Check::GitView);
        let repo = self.repo.path().to_path_buf();
        match self.git_refs(&repo) {
            Ok(view) => {
                let expect = self.expected_git_view(ours);
                if view != expect {
                    let d = listing_difference(&view, &expect);
                    self.diverge(
                        Check::GitView,
                        "value mismatch",
                        format!("for-each-ref: {d}"),
                    );
                    return;
                }
                self.viewed = Some(fp);
            }
            Err(e) => self.diverge(Check::GitView, "git rejects stack", e),
        }
    }

    /// `for-each-ref` lines (name, object, peeled, symref), root refs included where git can
    /// list them.
    pub(super) fn git_refs(&self, repo: &Path) -> Result<Vec<String>, String> {
        let mut args = vec!["for-each-ref"];
        if self.env.profile.features.include_root_refs {
            args.push("--include-root-refs");
        }
        args.push("--format=%(refname) %(objectname) %(*objectname) %(symref)");
        let out = self.env.git.run(repo, &args, "", self.tick);
        if !out.exit.success() {
            return Err(format!("for-each-ref: {:?}: {}", out.exit, out.stderr));
        }
        Ok(out.stdout.lines().map(str::to_string).collect())
    }

    /// What `for-each-ref` shows for our refs: symrefs resolved to their final ref (dangling
    /// and too deep ones hidden), peeled ids of annotated tags, one-level names other than
    /// root refs hidden (and all of them without `--include-root-refs`).
    pub(super) fn expected_git_view(&self, ours: &Snapshot) -> Vec<String> {
        let pool = &self.env.pool(self.hash).pool;
        let root_refs = self.env.profile.features.include_root_refs;
        let peel = |id: &str| {
            pool.tags
                .iter()
                .find(|(t, _)| t.to_string() == id)
                .map(|(_, p)| p.to_string())
                .unwrap_or_default()
        };
        let mut out = Vec::new();
        for (name, v) in &ours.refs {
            let root = !name.contains('/');
            if root && (!root_refs || (name != "HEAD" && !name.ends_with("_HEAD"))) {
                continue;
            }
            let (oid, symref) = match v {
                SValue::Oid(id, _) => (id.clone(), String::new()),
                SValue::Symref(_) => match resolve(ours, name) {
                    Some((id, last)) => (id, last),
                    None => continue,
                },
            };
            out.push(format!("{name} {oid} {} {symref}", peel(&oid)));
        }
        out
    }

    /// End-of-case checks: git's reflogs against ours (`log -g`, `reflog list`, positions),
    /// git reading a copy of our stack, and git's narrowed listings.
    pub fn finish(mut self) -> crate::cases::outcome::CaseResult {
        if self.diverged() {
            return self.result;
        }
        let step_end = self.result.ops.len();
        let ours = Snapshot::of_refdb(&self.db).unwrap_or_default();
        if !self.last_git_turn(&ours) {
            return self.result;
        }
        if !self.check_twin(&ours, true) {
            return self.result;
        }
        let slot = self.rotation_slot();
        // The end checks below take turns as the costly probes do, on every kind of stack
        // the options give: `even` on one case in [`END_EVERY`], `odd` on one in
        // [`VIEWS_EVERY`] of the others (a replay runs them all).
        let all = self.every_turn;
        let (even, odd) = (all || slot % END_EVERY == 0, all || slot % VIEWS_EVERY == 1);
        let started = Instant::now();
        if even {
            let Some(theirs) = self.check_git_reflogs(&ours, step_end) else {
                return self.result;
            };
            let started = self.spent(
                "end: reflogs (log -g, reflog list, @{n}, refs exists)",
                started,
            );
            self.count(Check::GitReadsOurs);
            let read = self.git_reads_ours(&ours, &theirs);
            let failed =
                self.failed_at_end(step_end, Check::GitReadsOurs, "git rejects our stack", read);
            if failed {
                return self.result;
            }
            self.spent("end: git reads our stack", started);
        }
        let started = Instant::now();
        // Each check from here on works on a scratch copy of git's repository, so one that
        // fails does not keep the others from being made: a known git defect there (master's
        // for-each-ref crash over a missing object, in half the cases) used to hide every
        // probe after it.
        if odd {
            let broken = self.check_broken_refs(&self.expected_git_view(&ours));
            self.failed_at_end(step_end, Check::GitView, "broken refs listed", broken);
        }
        let started = self.spent_if(odd, "end: broken refs", started);
        if even {
            self.count(Check::ConfigLimits);
            let limits = self.check_config_limits();
            self.failed_at_end(step_end, Check::ConfigLimits, "reftable.* limit", limits);
        }
        let mut started = self.spent_if(even, "end: config limits", started);
        self.count(Check::GitProbes);
        for (i, (class, every, probe)) in Self::GIT_PROBES.into_iter().enumerate() {
            if !self.every_turn && (slot + i as u64) % every != 0 {
                continue;
            }
            let outcome = probe(&self);
            started = self.spent(&format!("end: probe: {class}"), started);
            match outcome {
                Ok(()) => {}
                Err(ProbeError::Setup(why)) => {
                    let why = crate::finding::shape::detail_shape(&why);
                    let key = format!("{class}: {why}");
                    *self.result.probes_skipped.entry(key).or_default() += 1;
                }
                Err(ProbeError::Differs(d)) => {
                    self.failed_at_end(step_end, Check::GitProbes, class, Err(d));
                }
            }
        }
        if odd {
            self.check_filtered_views(&ours, step_end);
        }
        let started = self.spent_if(odd, "end: filtered views", started);
        self.check_worktree_reflogs(step_end);
        self.spent("end: worktree reflogs", started);
        self.result
    }

    /// git's reflogs against ours (`reflog list`, `log -g`, `@{n}` positions, `refs
    /// exists`): what `log -g` showed, or `None` after a divergence.
    fn check_git_reflogs(
        &mut self,
        ours: &Snapshot,
        step_end: usize,
    ) -> Option<BTreeMap<String, Vec<String>>> {
        let repo = self.repo.path().to_path_buf();
        self.count(Check::GitReflogs);
        if self.env.profile.features.reflog_list {
            let list = self.env.git.run(&repo, &["reflog", "list"], "", self.tick);
            let git_names: Vec<&str> = list.stdout.lines().collect();
            let our_names: Vec<&str> = ours.logs.keys().map(String::as_str).collect();
            if !list.exit.success() || git_names != our_names {
                let detail = format!("git reflog list {git_names:?}, ours {our_names:?}");
                self.reflog_divergence(step_end, detail);
                return None;
            }
        }
        let theirs = self.git_reflogs(&repo, ours);
        let expect = self.expected_git_reflogs(ours);
        for (name, lines) in &theirs {
            if expect.get(name) != Some(lines) {
                let want = expect.get(name).cloned().unwrap_or_default();
                let first = want
                    .iter()
                    .zip(lines)
                    .find(|(a, b)| a != b)
                    .map(|(a, b)| format!("expected {a:?}, git {b:?}"))
                    .unwrap_or_else(|| format!("git's first line {:?}", lines.first()));
                let detail = format!(
                    "log -g {name}: {} lines expected, git {}; {first}",
                    want.len(),
                    lines.len()
                );
                self.reflog_divergence(step_end, detail);
                return None;
            }
        }
        if !self.check_reflog_positions(ours, step_end) || !self.check_refs_exists(step_end) {
            return None;
        }
        Some(theirs)
    }

    fn reflog_divergence(&mut self, step: usize, detail: String) {
        self.result.divergences.push(Divergence {
            step,
            check: Check::GitReflogs,
            class: "reflog mismatch".into(),
            detail,
        });
    }

    /// git's checks on the case's last state, where its last turn did not see it, and git's
    /// lookups of the names touched since: false when they diverge.
    pub(super) fn last_git_turn(&mut self, ours: &Snapshot) -> bool {
        let Some(fp) = self.git_turns.last() else {
            return true;
        };
        let names = self.git_turns.take_pending();
        self.git_turn = true;
        // Our verify and our full read of git's stack go together on git's turns: where the
        // last turn made them on this very stack, they hold.
        if self.verified != Some(fp) {
            let git_stack = self.repo.path().join(".git/reftable");
            let git_tables = tables_cached(&git_stack, &mut self.table_cache);
            if !self.check_our_verify(&git_tables, fp) || !self.check_ours_reads_git(ours) {
                return false;
            }
        }
        if self.looked_up != Some(fp) || !names.is_empty() {
            self.check_lookups(ours, &names, true, &names);
            if self.diverged() {
                return false;
            }
            self.looked_up = Some(fp);
        }
        if self.viewed != Some(fp) {
            self.check_git_view(ours, fp);
            if self.diverged() {
                return false;
            }
        }
        self.check_worktree(&names);
        !self.diverged()
    }

    /// [`Executor::spent`] when the check `ran`; `since` unchanged when it did not.
    fn spent_if(&mut self, ran: bool, name: &str, since: Instant) -> Instant {
        if ran {
            self.spent(name, since)
        } else {
            since
        }
    }

    /// Add the time since `since` to the check `name` (`step: …` after every step, `end: …`
    /// at the case's end); now, for the next one.
    fn spent(&mut self, name: &str, since: Instant) -> Instant {
        let now = Instant::now();
        let cost = Cost {
            runs: 1,
            seconds: now.duration_since(since).as_secs_f64(),
        };
        self.result
            .check_costs
            .entry(name.into())
            .or_default()
            .add(cost);
        now
    }

    /// The probes of [`Check::GitProbes`], each on a copy of git's repository, with the
    /// class a failure is reported under and how many cases share one run of it, in the
    /// order they run. They take turns: the costly ones (10 to 70 ms of git processes each)
    /// on one case in eight, the quarantine (3 ms) and the migration to files (10 ms, 2.48+)
    /// on one in four, chosen by the case's options (see [`Executor::rotation_slot`]; cases
    /// with the same options share a turn), so a run of 120 cases still makes each 5 to 25
    /// times (11 to 20 on 2.47.3 but for the bare copy's 5) and the quarantine and the
    /// migration about 30, on every kind of stack the options give (a replay makes them
    /// all).
    const GIT_PROBES: [(&'static str, u64, Probe<Self>); 7] = [
        ("reference-transaction hook", 8, Self::check_ref_hook),
        ("quarantine", 4, Self::check_quarantine),
        ("stash", 8, Self::check_stash),
        ("obj-heavy table", 8, Self::check_obj_heavy),
        ("unreachable expiry", 8, Self::check_unreachable_expiry),
        ("migrated to files", 4, Self::check_migrated_to_files),
        ("bare without logAllRefUpdates", 8, Self::check_bare_logs),
    ];

    /// Which turn of the rotating probes a case takes (see [`super::slot_of`]).
    pub(super) fn rotation_slot(&self) -> u64 {
        super::slot_of(&self.opts)
    }

    /// A scratch copy of git's repository (its `.git`), for the end-of-case probes that
    /// change what they look at.
    pub(super) fn copy_of_git_repo(&self) -> Result<tempfile::TempDir, String> {
        let scratch = tempfile::tempdir_in(self.env.dir.path()).map_err(|e| e.to_string())?;
        let git_dir = scratch.path().join(".git");
        scratch_copy(&self.repo.path().join(".git"), &git_dir, None)?;
        Ok(scratch)
    }

    /// Our reader on the stack of the repository `repo` (a probe's scratch copy), with the
    /// case's options: what a probe reads back of what git wrote there without another git
    /// process (our reader and git's agree on git's stacks after every step).
    pub(super) fn our_reader_of(&self, repo: &Path) -> Result<reftable::refdb::RefDb, String> {
        let opts = crate::cases::ours::refdb_options(&self.opts, self.env.profile.rules, false);
        reftable::refdb::RefDb::open(repo.join(".git/reftable"), opts).map_err(|e| format!("{e:#}"))
    }

    /// Record an end-of-case check's failure as a divergence of class `class`: whether
    /// there was one.
    fn failed_at_end(
        &mut self,
        step: usize,
        check: Check,
        class: &str,
        result: Result<(), String>,
    ) -> bool {
        let Err(detail) = result else {
            return false;
        };
        let class = class.into();
        self.result.divergences.push(Divergence {
            step,
            check,
            class,
            detail,
        });
        true
    }

    /// The reflogs `log -g` is compared on (see [`walkable_reflogs`]).
    pub(super) fn reflog_names<'s>(&self, ours: &'s Snapshot) -> Vec<&'s String> {
        let pool = &self.env.pool(self.hash).pool;
        walkable_reflogs(ours, |hex| {
            ObjectId::from_hex(hex).is_some_and(|id| pool.commits.contains(&id))
        })
    }

    /// `log -g` of the candidate reflogs (see [`log_g`]).
    fn git_reflogs(&self, repo: &Path, ours: &Snapshot) -> BTreeMap<String, Vec<String>> {
        crate::git::reflogs::log_g(&self.env.git, repo, &self.reflog_names(ours), self.tick)
    }

    /// What `log -g` shows for each candidate reflog, from our state.
    fn expected_git_reflogs(&self, ours: &Snapshot) -> BTreeMap<String, Vec<String>> {
        let mut out = BTreeMap::new();
        for name in self.reflog_names(ours) {
            // @{n} counts every entry git's backend yields, shown or not.
            let lines = ours.logs[name]
                .iter()
                .enumerate()
                .map(|(n, e)| {
                    let msg = e.message.strip_suffix('\n').unwrap_or(&e.message);
                    format!("{name}@{{{n}}} {} {msg}", e.new)
                })
                .collect();
            out.insert(name.clone(), lines);
        }
        out
    }

    /// git on a copy of git's repository with our stack: it lists the same refs and reflogs
    /// as on its own, `pack-refs` works and changes no ref, and `refs verify` says of it what
    /// it says of its own stack (and neither crashes nor hangs). When our tables are
    /// byte-identical to git's (all but the random part of their names), git reading them
    /// is git reading its own stack, which the other checks did: only `pack-refs` and
    /// `refs verify` of its own stack run.
    fn git_reads_ours(
        &mut self,
        ours: &Snapshot,
        git_own_reflogs: &BTreeMap<String, Vec<String>>,
    ) -> Result<(), String> {
        let scratch = tempfile::tempdir_in(self.env.dir.path()).map_err(|e| e.to_string())?;
        let git_dir = scratch.path().join(".git");
        scratch_copy(&self.repo.path().join(".git"), &git_dir, Some("reftable"))?;
        scratch_copy(self.ours_dir.path(), &git_dir.join("reftable"), None)?;
        let expect = self.expected_git_view(ours);
        let identical = first_difference(
            &tables(self.ours_dir.path()),
            &tables(&self.repo.path().join(".git/reftable")),
        )
        .is_none();
        let before = if identical {
            self.result.unchanged += 2;
            expect.clone()
        } else {
            self.git_refs(scratch.path())?
        };
        if before != expect {
            return Err(format!(
                "for-each-ref on our stack: {} lines, expected {}",
                before.len(),
                expect.len()
            ));
        }
        if !identical && self.git_reflogs(scratch.path(), ours) != *git_own_reflogs {
            return Err("git shows other reflogs on our stack than on its own".into());
        }
        let pack = self
            .env
            .git
            .run(scratch.path(), &["pack-refs"], "", self.tick);
        if !pack.exit.success() {
            return Err(format!(
                "pack-refs on our stack: {:?}: {}",
                pack.exit, pack.stderr
            ));
        }
        let after = self.git_refs(scratch.path())?;
        if after != before {
            return Err("refs changed across git pack-refs of our stack".into());
        }
        let own = self.refs_verify(self.repo.path())?;
        self.git_reads_renamed(&expect, &own)?;
        if identical {
            return Ok(());
        }
        let on_ours = self.refs_verify(scratch.path())?;
        if on_ours != own {
            return Err(format!(
                "git refs verify says {on_ours:?} on our stack, {own:?} on its own"
            ));
        }
        Ok(())
    }
}

/// The reflogs `log -g` is compared on: HEAD and refs with a direct value whose every entry
/// and whose current value are commits. (For other symrefs `log -g` picks a reflog by its
/// DWIM rules; those are left to the byte and reader checks.)
pub fn walkable_reflogs(ours: &Snapshot, is_commit: impl Fn(&str) -> bool) -> Vec<&String> {
    ours.logs
        .iter()
        // HEAD when detached or on a branch (`log -g HEAD` shows nothing when HEAD points
        // elsewhere, e.g. into refs/notes/), and refs with a direct value.
        .filter(|(n, _)| match ours.refs.get(*n) {
            Some(SValue::Oid(..)) => true,
            Some(SValue::Symref(t)) => *n == "HEAD" && t.starts_with("refs/heads/"),
            None => false,
        })
        .filter(|(_, log)| log.iter().all(|e| is_commit(&e.new)))
        // `log -g NAME` walks NAME's reflog only when NAME now resolves to a commit: a name
        // that resolves to a tag becomes a plain pending object and shows no reflog
        // (revision.c `add_pending_object_with_path`, `obj->type == OBJ_COMMIT`). HEAD on a
        // branch that is a symref to a ref holding a tag is such a name.
        .filter(|(n, _)| resolve(ours, n).is_some_and(|(id, _)| is_commit(&id)))
        // An empty reflog (existence marker only) makes `log -g` fall back to DWIM rules.
        .filter(|(_, log)| !log.is_empty())
        .map(|(n, _)| n)
        .collect()
}

/// Resolve symref `name` in `s` as git does: at most [`SYMREF_READS`] reads; returns the
/// object id and the last ref of the chain.
pub fn resolve(s: &Snapshot, name: &str) -> Option<(String, String)> {
    let mut n = name.to_string();
    for _ in 0..SYMREF_READS {
        match s.refs.get(&n)? {
            SValue::Symref(t) => n = t.clone(),
            SValue::Oid(id, _) => return Some((id.clone(), n)),
        }
    }
    None
}

/// What a listing `view` lacks of `expect` and has beyond it (five lines of each at most).
pub(super) fn listing_difference(view: &[String], expect: &[String]) -> String {
    let missing: Vec<_> = expect
        .iter()
        .filter(|l| !view.contains(l))
        .take(5)
        .collect();
    let extra: Vec<_> = view
        .iter()
        .filter(|l| !expect.contains(l))
        .take(5)
        .collect();
    format!("expected but missing {missing:?}; unexpected {extra:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::SLog;

    #[test]
    fn changed_names_are_those_gone_new_or_with_another_value() {
        let a = snap(&[("gone", "1"), ("same", "2"), ("moved", "3")]).refs;
        let b = snap(&[("same", "2"), ("moved", "ref:same"), ("new", "4")]).refs;
        let mut names = changed_names(&a, &b);
        names.sort();
        assert_eq!(names, ["gone", "moved", "new"]);
        assert!(changed_names(&a, &a).is_empty());
    }

    fn snap(refs: &[(&str, &str)]) -> Snapshot {
        let mut s = Snapshot::default();
        for (n, v) in refs {
            let v = match v.strip_prefix("ref:") {
                Some(t) => SValue::Symref(t.to_string()),
                None => SValue::Oid(v.to_string(), None),
            };
            s.refs.insert(n.to_string(), v);
        }
        s
    }

    /// git reads a ref at most five times while resolving: a chain of four symrefs resolves,
    /// one of five does not (refs.c `refs_resolve_ref_unsafe`: `symref_count < SYMREF_MAXDEPTH`).
    #[test]
    fn symref_depth_is_gits() {
        let s = snap(&[
            ("s1", "ref:s2"),
            ("s2", "ref:s3"),
            ("s3", "ref:s4"),
            ("s4", "ref:s5"),
            ("s5", "ref:direct"),
            ("direct", "1111"),
        ]);
        assert_eq!(resolve(&s, "s2"), Some(("1111".into(), "direct".into())));
        assert_eq!(resolve(&s, "s1"), None);
        assert_eq!(
            resolve(&s, "direct"),
            Some(("1111".into(), "direct".into()))
        );
        assert_eq!(resolve(&s, "missing"), None);
    }

    /// `log -g HEAD` shows nothing when HEAD resolves, through a branch that is a symref,
    /// to a tag, even though every entry of HEAD's reflog is a commit (seed 1, case 149 of
    /// 500 against git 2.47.3).
    #[test]
    fn reflog_of_a_name_resolving_to_a_tag_is_not_walked() {
        let mut s = snap(&[
            ("HEAD", "ref:refs/heads/main"),
            ("refs/heads/main", "ref:ORIG_HEAD"),
            ("ORIG_HEAD", "7a9"),
            ("refs/heads/b", "c0"),
        ]);
        let entry = |new: &str| SLog {
            old: "0".into(),
            new: new.into(),
            message: String::new(),
            time: 0,
            tz: None,
            who: None,
        };
        s.logs.insert("HEAD".into(), vec![entry("c0")]);
        s.logs.insert("ORIG_HEAD".into(), vec![entry("c0")]);
        s.logs.insert("refs/heads/b".into(), vec![entry("c0")]);
        let is_commit = |h: &str| h.starts_with('c');
        assert_eq!(walkable_reflogs(&s, is_commit), vec!["refs/heads/b"]);
        s.refs
            .insert("ORIG_HEAD".into(), SValue::Oid("c1".into(), None));
        assert_eq!(
            walkable_reflogs(&s, is_commit),
            vec!["HEAD", "ORIG_HEAD", "refs/heads/b"]
        );
    }
}
