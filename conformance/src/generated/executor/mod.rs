//! A case being run: git's repository, our stack, the model and the twin, one operation
//! at a time (`step`). The operations are in `steps.rs`, the checks after each step in
//! `checks.rs`, `lookups.rs` and `expiry.rs`.

mod checks;
mod expiry;
mod lookups;
mod steps;

pub use checks::{resolve, walkable_reflogs};

use std::path::PathBuf;

use reftable::refdb::{Committer, RefDb, RefDbOptions};
use reftable::{HashId, ObjectId, StackOptions, WriteOptions};

use crate::finding::divergence::{Check, Divergence};
use crate::generated::outcome::CaseResult;
use crate::generated::twin::Twin;
use crate::generated::verdict;
use crate::git::driver::{Exit, TxnResult, UpdateRef};
use crate::git::profile::Profile;
use crate::model::Model;
use crate::ops::{CaseOptions, Op};
use crate::setup::env::{init_repo, Env};

/// The `-m` message and `--create-reflog` flag an `update-ref --stdin` runs with.
type TxnKey = (String, bool);

/// The `update-ref` that only verifies, on git's repository (see [`Executor::git_verify`]).
const VERIFIER: usize = 2;

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
    /// Running `update-ref --stdin`s: (0 git's repository / 1 the interleave repository /
    /// [`VERIFIER`], message and flag) → process. One per message: update-ref takes its message once.
    coprocs: Vec<((usize, TxnKey), UpdateRef)>,
    pub(crate) tick: u64,
    /// The (message, flag) pairs seen, in order: the committer clock of a transaction is the
    /// position of its pair (so a process can serve every transaction with its message).
    keys: Vec<TxnKey>,
    pub(crate) txns: u64,
    pub(crate) model_trial: Option<Model>,
    /// Fingerprint of git's stack when git's view of it was last checked.
    pub(crate) viewed: Option<u64>,
    /// Fingerprint of git's stack when git last looked refs up by name.
    pub(crate) looked_up: Option<u64>,
    /// The refs the current step names (looked up by name after it).
    pub(crate) touched: Vec<String>,
    /// Table bytes read so far.
    pub(crate) table_cache: crate::stack_files::TableCache,
    /// A transaction was applied to the twin since it was last compared.
    pub(crate) twin_changed: bool,
    /// Fingerprint of our refs when the twin was last compared.
    pub(crate) twin_checked: Option<u64>,
    /// The result so far.
    pub result: CaseResult,
}

impl<'e> Executor<'e> {
    /// Set up git's repository, our stack, the model and the twin for a case. Options git
    /// cannot honour (`reftable.*` config before 2.46) fall back to git's defaults.
    pub fn new(env: &'e Env, opts: CaseOptions) -> Result<Executor<'e>, String> {
        let opts = fit(opts, &env.profile);
        let hash = opts.hash();
        let repo = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
        init_repo(env, repo.path(), "reftable", &opts)?;
        let ours_dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
        let git_stack = repo.path().join(".git/reftable");
        for e in std::fs::read_dir(&git_stack).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            std::fs::copy(&p, ours_dir.path().join(p.file_name().expect("file")))
                .map_err(|e| e.to_string())?;
        }
        let db_opts = RefDbOptions {
            stack: StackOptions {
                write: WriteOptions {
                    block_size: opts.block_size,
                    restart_interval: opts.restart_interval,
                    index_objects: opts.index_objects,
                    hash,
                    ..Default::default()
                },
                auto_compaction: opts.auto_compaction,
                fsync: false,
                ..Default::default()
            },
            log_refs: opts.log_refs.to_lib(),
            protect_dangling_symrefs: env.profile.dangling_symref_protected,
        };
        let db = RefDb::open(ours_dir.path(), db_opts).map_err(|e| e.to_string())?;
        let git_db = RefDb::open(&git_stack, db_opts).map_err(|e| e.to_string())?;
        let null = ObjectId::null(hash);
        let mut model = Model::new(null, opts.log_refs, opts.block_size);
        model.protect_dangling_symrefs = env.profile.dangling_symref_protected;
        model.init("main");
        let twin = if hash == HashId::Sha1 {
            let dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
            init_repo(env, dir.path(), "files", &opts)?;
            let t = Twin::open(dir.path())?;
            Some((dir, t))
        } else {
            None
        };
        let interleave_repo = if opts.interleave {
            let dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
            init_repo(env, dir.path(), "reftable", &opts)?;
            let stack = dir.path().join(".git/reftable");
            std::fs::remove_dir_all(&stack).map_err(|e| e.to_string())?;
            #[cfg(unix)]
            std::os::unix::fs::symlink(ours_dir.path(), &stack).map_err(|e| e.to_string())?;
            Some(dir)
        } else {
            None
        };
        Ok(Executor {
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
            coprocs: Vec::new(),
            tick: 0,
            keys: Vec::new(),
            txns: 0,
            model_trial: None,
            viewed: None,
            looked_up: None,
            touched: Vec::new(),
            table_cache: Default::default(),
            twin_changed: true,
            twin_checked: None,
            result: CaseResult {
                options: Some(opts),
                ..Default::default()
            },
        })
    }

    /// The model (for resolving generated operations).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The null id.
    pub fn null(&self) -> ObjectId {
        self.null
    }

    pub(crate) fn committer(&self) -> Committer {
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

    fn git_coproc(
        &mut self,
        which: usize,
        lines: &str,
        message: &str,
        create_reflog: bool,
        verify_only: bool,
    ) -> TxnResult {
        let key = (which, (message.to_string(), create_reflog));
        let at = match self.coprocs.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                let dir = match which {
                    0 | VERIFIER => self.repo.path().to_path_buf(),
                    _ => self
                        .interleave_repo
                        .as_ref()
                        .expect("interleaved")
                        .path()
                        .to_path_buf(),
                };
                let spawned = UpdateRef::spawn_with(
                    &self.env.git,
                    &dir,
                    self.tick,
                    message,
                    create_reflog,
                    self.opts.auto_compaction,
                );
                match spawned {
                    Ok(c) => self.coprocs.push((key, c)),
                    Err(e) => return TxnResult::Failed(Exit::Code(-1), e.to_string()),
                }
                self.coprocs.len() - 1
            }
        };
        let r = if verify_only {
            self.coprocs[at].1.prepare_and_abort(lines)
        } else {
            self.coprocs[at].1.transaction(lines)
        };
        if matches!(r, TxnResult::Failed(..)) {
            self.coprocs.swap_remove(at);
        }
        r
    }

    /// Run one operation on every implementation, then check.
    pub fn step(&mut self, op: Op) {
        self.result.ops.push(op.clone());
        self.touched = op.touched_refs();
        if let Op::Txn {
            message,
            create_reflog,
            ..
        } = &op
        {
            self.tick = crate::finding::script::tick_of(&mut self.keys, message, *create_reflog);
        }
        let Some((git_res, ours_res, model_res)) = self.run_op(&op) else {
            return;
        };
        let k = self.result.kinds.entry(op.kind().to_string()).or_default();
        k[0] += 1;
        k[1] += u64::from(git_res.is_ok());
        let c = verdict::compare(&git_res, &ours_res, model_res.as_ref());
        for check in c.compared {
            self.count(check);
        }
        if c.model_not_applicable {
            self.result.model_not_applicable += 1;
        }
        if let Some(f) = c.finding {
            self.diverge(f.check, f.class, f.detail);
            return;
        }
        // The model's transaction is kept when git applied it (not when git refused for a
        // storage reason the model cannot judge).
        let trial = self.model_trial.take();
        if let (Ok(()), Some(Ok(())), Some(trial)) = (&git_res, &model_res, trial) {
            self.model = trial;
        }
        self.check_state();
    }

    /// Paths of the two stacks (for case directories).
    pub fn stacks(&self) -> (PathBuf, PathBuf) {
        (
            self.ours_dir.path().to_path_buf(),
            self.repo.path().join(".git/reftable"),
        )
    }
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
