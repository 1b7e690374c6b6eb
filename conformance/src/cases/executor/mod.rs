//! A case being run: git's repository, our stack, the model and the twin, one operation
//! at a time (`step`). The operations are in `steps.rs`, the checks after each step in
//! `checks.rs`, `lookups.rs` and `expiry.rs`, the git processes a case keeps running
//! (`update-ref --stdin`, `cat-file --batch-check`) in `coprocs.rs`.

mod bare_logs;
mod batch;
mod broken_refs;
mod broken_refs_verified;
pub(crate) mod checks;
mod config_limits;
mod coprocs;
mod expiry;
mod filtered;
mod git_turns;
mod last_read;
pub(crate) use git_turns::GIT_EVERY;
mod lookups;
mod obj_heavy;
mod quarantine;
mod reads;
mod ref_hook;
mod stash;
mod steps;
mod table_names;
mod to_files;
mod unreachable_probe;
mod verified;
mod worktree;
mod wt_setup;

use coprocs::{CatFiles, UpdateRefs, VERIFIER, WORKTREE};

use std::path::{Path, PathBuf};

use reftable::refdb::RefDb;

use reftable::Signature;
use reftable::{HashId, ObjectId};

use crate::cases::outcome::CaseResult;
use crate::cases::twin::Twin;
use crate::cases::verdict;
use crate::finding::divergence::{Check, Divergence};
use crate::git::driver::{TxnResult, UpdateRef};
use crate::git::profile::Profile;
use crate::model::Model;
use crate::ops::{CaseOptions, LogRefsOpt, Op};
use crate::setup::env::{init_repo, Env};

/// How many cases share one files-backend twin: it costs a libgit2 write and read-back per
/// transaction, about a seventh of the harness's time when every case had one (27 cases of a
/// default run on 2.47.3 have it).
pub(crate) const TWIN_EVERY: u64 = 3;

/// Which turn of the rotating checks a case with `opts` takes: a hash (FNV-1a) of its
/// options, which replaying and minimizing a case keep, so a finding shows again in both.
pub(crate) fn slot_of(opts: &CaseOptions) -> u64 {
    let text = serde_json::to_string(opts).unwrap_or_default();
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A case being run.
pub struct Executor<'e> {
    pub(crate) env: &'e Env,
    pub(crate) opts: CaseOptions,
    pub(crate) hash: HashId,
    pub(crate) null: ObjectId,
    pub(crate) repo: tempfile::TempDir,
    pub(crate) ours_dir: tempfile::TempDir,
    pub(crate) db: RefDb,
    /// Our reader on git's stack (reloaded before each look).
    pub(crate) git_db: RefDb,
    pub(crate) model: Model,
    pub(crate) twin: Option<(tempfile::TempDir, Twin)>,
    pub(crate) interleave_repo: Option<tempfile::TempDir>,
    /// The linked worktree of a worktree case, on both sides.
    pub(crate) worktree: Option<wt_setup::WorktreeSide>,
    /// The running `update-ref --stdin`s and the (message, flag) pairs that set the
    /// committer clock.
    update_refs: UpdateRefs,
    /// The running `cat-file --batch-check`s, by directory (`worktree.rs` looks up with them).
    pub(crate) cat_files: CatFiles,
    pub(crate) tick: u64,
    pub(crate) txns: u64,
    /// The model's side of the step's operation, kept if git applied it.
    pub(crate) model_trial: Option<Trial>,
    /// Fingerprint of git's stack when git's view of it was last checked.
    pub(crate) viewed: Option<u64>,
    /// Fingerprint of git's stack when git last looked refs up by name.
    pub(crate) looked_up: Option<u64>,
    /// Fingerprint of git's stack when our verify last checked it.
    pub(crate) verified: Option<u64>,
    /// The tables whose block edges our lookups and git's (`lookups.rs`) have sampled.
    pub(crate) edges_ours: std::collections::BTreeSet<PathBuf>,
    pub(crate) edges_git: std::collections::BTreeSet<PathBuf>,
    /// The refs the current step names (looked up by name after it).
    pub(crate) touched: Vec<String>,
    /// Which steps get the checks that run git (see `git_turns.rs`).
    pub(crate) git_turns: git_turns::GitTurns,
    /// Whether the end-of-case checks that take turns across cases all run on this one
    /// (a replay: see [`crate::cases::case::replay_concrete`]).
    pub(crate) every_turn: bool,
    /// Whether the current step is one of them.
    pub(crate) git_turn: bool,
    /// The names git looks up on the current turn (touched since its last one).
    pub(crate) turn_names: Vec<String>,
    /// Table bytes read so far.
    pub(crate) table_cache: crate::stack_files::TableCache,
    /// What our readers read when they last agreed with the model.
    pub(crate) last_read: Option<last_read::LastRead>,
    /// Our refs (the names the twin lists) when the twin last agreed with them.
    pub(crate) twin_agreed: Option<std::collections::BTreeMap<String, crate::snapshot::SValue>>,
    /// git's verdict on the last step's operation (none when the step ran nothing).
    pub(crate) last_git: Option<Result<(), verdict::Refused>>,
    /// The faults the model found in the last step's transaction, when it refused it.
    pub(crate) last_faults: Option<crate::model::Faults>,
    /// The result so far.
    pub result: CaseResult,
}

impl<'e> Executor<'e> {
    /// Set up git's repository, our stack, the model and the twin for a case. Options git
    /// cannot honour (`reftable.*` config before 2.46) fall back to git's defaults.
    pub fn new(env: &'e Env, opts: CaseOptions) -> Result<Executor<'e>, String> {
        Self::with_turns(env, opts, false)
    }

    /// [`Executor::new`]; with `every_turn`, the case gets every check that takes turns
    /// across cases (the twin, the end-of-case probes): a replay.
    pub fn with_turns(
        env: &'e Env,
        opts: CaseOptions,
        every_turn: bool,
    ) -> Result<Executor<'e>, String> {
        let opts = fit(opts, &env.profile);
        let hash = opts.hash();
        let repo = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
        init_repo(env, repo.path(), "reftable", &opts)?;
        let git_worktree = if opts.worktree {
            Some(wt_setup::add_git_worktree(env, repo.path(), &opts)?)
        } else {
            None
        };
        let ours_dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
        let git_stack = repo.path().join(".git/reftable");
        crate::stack_files::copy_dir(&git_stack, ours_dir.path(), None)?;
        let db_opts = crate::cases::ours::refdb_options(&opts, env.profile.rules, false);
        let db = RefDb::open_or_create(ours_dir.path(), db_opts).map_err(|e| format!("{e:#}"))?;
        let git_db = RefDb::open_or_create(&git_stack, db_opts).map_err(|e| format!("{e:#}"))?;
        let worktree = match git_worktree {
            Some(parent) => Some(wt_setup::our_worktree(
                env,
                repo.path(),
                ours_dir.path(),
                parent,
                db_opts,
            )?),
            None => None,
        };
        let null = ObjectId::null(hash);
        let mut model = Model::new(null, opts.log_refs, opts.block_size);
        model.protect_dangling_symrefs = env.profile.rules.dangling_symref_protected;
        model.log_only_old_checked = env.profile.rules.log_only_old_checked;
        model.init("main");
        // The twin follows one case in [`TWIN_EVERY`] (by the case's rotation slot, which a
        // minimization keeps; a replay has it), of SHA-1 cases only (libgit2's files backend).
        let twin_turn = every_turn || slot_of(&opts) % TWIN_EVERY == 1;
        let twin = if hash == HashId::Sha1 && twin_turn {
            Some(files_twin(env, &opts)?)
        } else {
            None
        };
        let twin_followed = twin.is_some();
        let interleave_repo = if opts.interleave {
            Some(interleave_repo(env, &opts, ours_dir.path())?)
        } else {
            None
        };
        let mut ex = Executor {
            env,
            opts,
            hash,
            null,
            repo,
            ours_dir,
            db,
            git_db,
            model,
            twin,
            interleave_repo,
            worktree,
            update_refs: UpdateRefs::default(),
            cat_files: CatFiles::default(),
            tick: 0,
            txns: 0,
            model_trial: None,
            viewed: None,
            looked_up: None,
            verified: None,
            edges_ours: Default::default(),
            edges_git: Default::default(),
            touched: Vec::new(),
            git_turns: Default::default(),
            every_turn,
            git_turn: false,
            turn_names: Vec::new(),
            table_cache: Default::default(),
            twin_agreed: None,
            last_read: None,
            last_git: None,
            last_faults: None,
            result: CaseResult {
                options: Some(opts),
                twin_followed,
                ..Default::default()
            },
        };
        ex.git_turns = git_turns::GitTurns::new(ex.rotation_slot());
        Ok(ex)
    }

    /// The model (for resolving generated operations).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The null id.
    pub fn null(&self) -> ObjectId {
        self.null
    }

    pub(crate) fn committer(&self) -> Signature {
        crate::git::driver::committer_at(self.tick)
    }

    pub(crate) fn count(&mut self, check: Check) {
        *self.result.comparisons.entry(check).or_default() += 1;
    }

    pub(crate) fn diverge(&mut self, check: Check, class: &str, detail: String) {
        let step = self.result.ops.len().saturating_sub(1);
        self.result.divergences.push(Divergence {
            step,
            check,
            class: class.into(),
            detail,
        });
    }

    /// Whether the case has diverged.
    pub fn diverged(&self) -> bool {
        !self.result.divergences.is_empty()
    }

    /// One transaction through the `update-ref --stdin` of git's repository (`which` 0) or
    /// of the interleave repository (1) that runs with this message and flag, started when
    /// there is none (git exits after a refusal).
    pub(crate) fn git_txn(
        &mut self,
        which: usize,
        lines: &str,
        message: &str,
        create_reflog: bool,
    ) -> TxnResult {
        self.git_coproc(which, lines, message, create_reflog, false)
    }

    /// Let git check `lines` (`verify` commands) on its repository, writing nothing,
    /// through an `update-ref` of its own (`VERIFIER`: it never commits, so its clock and
    /// message do not matter).
    pub(crate) fn git_verify(&mut self, lines: &str) -> TxnResult {
        self.git_coproc(VERIFIER, lines, "", false, true)
    }

    /// `lines` through the process `which` of [`UpdateRefs`], started in its repository at
    /// the current tick when there is none.
    fn git_coproc(
        &mut self,
        which: usize,
        lines: &str,
        message: &str,
        create_reflog: bool,
        verify_only: bool,
    ) -> TxnResult {
        let spawn = || {
            let dir = match which {
                0 | VERIFIER => self.repo.path().to_path_buf(),
                WORKTREE => self.worktree.as_ref().expect("worktree").git_path(),
                _ => self
                    .interleave_repo
                    .as_ref()
                    .expect("interleaved")
                    .path()
                    .to_path_buf(),
            };
            UpdateRef::spawn_with(
                &self.env.git,
                &dir,
                self.tick,
                message,
                create_reflog,
                self.opts.auto_compaction,
            )
        };
        self.update_refs
            .run(which, lines, message, create_reflog, verify_only, spawn)
    }

    /// Run one operation on every implementation, then check.
    pub fn step(&mut self, op: Op) {
        for label in crate::cases::variants::of(&op, &self.model) {
            *self.result.variants.entry(label).or_default() += 1;
        }
        self.result.ops.push(op.clone());
        self.touched = op.touched_refs();
        if let Some((message, create_reflog)) = op.clocked() {
            self.tick = self.update_refs.tick(message, create_reflog);
        }
        self.last_git = None;
        self.last_faults = None;
        self.model_trial = None;
        let Some((git_res, ours_res, model_res)) = self.run_op(&op) else {
            return;
        };
        self.last_git = Some(git_res.clone());
        self.last_faults = model_res
            .as_ref()
            .and_then(|m| m.as_ref().err())
            .map(|r| r.faults);
        let k = self.result.kinds.entry(op.kind().to_string()).or_default();
        k[0] += 1;
        k[1] += u64::from(git_res.is_ok());
        let c = if matches!(op, Op::WorktreeTxn { .. }) {
            let p = &self.env.profile;
            let reorders = p.objects_checked_when_queued || p.df_checks_batched;
            verdict::compare_unmodeled(&git_res, &ours_res, reorders)
        } else {
            verdict::compare(&git_res, &ours_res, model_res.as_ref())
        };
        for check in c.compared {
            self.count(check);
        }
        if c.model_not_applicable {
            self.result.model_not_applicable += 1;
        }
        if let Some(mut f) = c.mismatch {
            // A message the wording table does not know is named with its command.
            if f.class == "unclassified git message" {
                f.detail = format!("{} (git {})", f.detail, op.kind());
            }
            self.diverge(f.check, f.class, f.detail);
            return;
        }
        // The model's transaction is kept when git applied it (not when git refused for a
        // storage reason the model cannot judge).
        let trial = self.model_trial.take();
        match (&git_res, &model_res, trial) {
            (Ok(()), Some(Ok(())), Some(Trial::Copy(m))) => self.model = m,
            (Ok(()), Some(Ok(())), Some(Trial::Pending(p))) => self.model.commit(&p),
            _ => {}
        }
        self.check_state();
        if !self.diverged() {
            let names = self.turn_names.clone();
            self.check_worktree(&names);
        }
    }

    /// git's repository (its work tree; the git directory is `.git` in it).
    pub fn git_repo(&self) -> &Path {
        self.repo.path()
    }

    /// git's verdict on the last step's operation: accepted, or refused with git's message
    /// and its class; none when the step ran nothing.
    pub fn last_git_verdict(&self) -> Option<&Result<(), verdict::Refused>> {
        self.last_git.as_ref()
    }

    /// Every fault the model found in the last step's transaction, when it refused it: git
    /// reports one of them, in an order that changed between versions.
    pub fn last_model_faults(&self) -> Option<crate::model::Faults> {
        self.last_faults
    }

    /// The committer clock of the last step (its date is [`crate::git::driver::date_at`]).
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// The git under test.
    pub fn env_git(&self) -> &crate::git::driver::Git {
        &self.env.git
    }

    /// The environment (git, its profile, the object pools).
    pub fn env(&self) -> &'e Env {
        self.env
    }

    /// The options our reader opens the case's stacks with.
    pub fn refdb_options(&self) -> reftable::refdb::RefDbOptions {
        crate::cases::ours::refdb_options(&self.opts, self.env.profile.rules, false)
    }

    /// The case's options (as fitted to the git).
    pub fn options(&self) -> &CaseOptions {
        &self.opts
    }

    /// Whether the case auto-compacts (git's `reftable.autoCompaction`).
    pub fn auto_compaction(&self) -> bool {
        self.opts.auto_compaction
    }

    /// git's stack as our reader sees it now: what the checks after every step compared
    /// with git's own listings and reflogs.
    pub fn git_snapshot(&mut self) -> Result<crate::snapshot::Snapshot, String> {
        self.git_db.reload().map_err(|e| format!("{e:#}"))?;
        crate::snapshot::Snapshot::of_refdb(&self.git_db).map_err(|e| format!("{e:#}"))
    }

    /// Paths of the two stacks (for case directories).
    pub fn stacks(&self) -> (PathBuf, PathBuf) {
        (
            self.ours_dir.path().to_path_buf(),
            self.repo.path().join(".git/reftable"),
        )
    }
}

/// The model's side of an operation, kept until git's verdict is known.
pub(crate) enum Trial {
    /// A copy of the model the operation ran on.
    Copy(Model),
    /// A transaction the model accepted, not yet applied to it.
    Pending(crate::model::Pending),
}

/// A files-backend repository and the twin reading it (SHA-1 cases only). It keeps no
/// reflogs: the twin is compared on refs only, and a reflog costs libgit2 a `HEAD` lookup and
/// a file append for each ref it writes.
fn files_twin(env: &Env, opts: &CaseOptions) -> Result<(tempfile::TempDir, Twin), String> {
    let dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    let unlogged = CaseOptions {
        log_refs: LogRefsOpt::False,
        ..*opts
    };
    init_repo(env, dir.path(), "files", &unlogged)?;
    let t = Twin::open(dir.path())?;
    Ok((dir, t))
}

/// A reftable repository whose stack is a link to ours, so that git writes into our stack.
fn interleave_repo(
    env: &Env,
    opts: &CaseOptions,
    ours: &Path,
) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    init_repo(env, dir.path(), "reftable", opts)?;
    let stack = dir.path().join(".git/reftable");
    std::fs::remove_dir_all(&stack).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    std::os::unix::fs::symlink(ours, &stack).map_err(|e| e.to_string())?;
    Ok(dir)
}

/// `opts` as the git of `profile` can run them.
pub fn fit(mut opts: CaseOptions, profile: &Profile) -> CaseOptions {
    if !profile.features.reftable_config {
        let d = CaseOptions::default();
        opts.block_size = d.block_size;
        opts.restart_interval = d.restart_interval;
        opts.index_objects = d.index_objects;
    }
    opts
}
