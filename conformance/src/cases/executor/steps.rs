//! Running one operation on git, on our ref database and on the model, one function per
//! kind of operation; `case.rs` compares what they return.

use crate::finding::divergence::Check;

use crate::cases::executor::wt_setup::WORKTREE_ID;
use crate::cases::executor::{Executor, Trial};

use crate::cases::ours::{self, our_refusal, refused};
use crate::cases::verdict::Refused;
use crate::err_class::ErrClass;
use crate::git::driver::{Exit, TxnResult, BASE_TIME};
use crate::git::messages;
use crate::git::runaway;
use crate::model::Refusal;
use crate::ops::{Expire, Op, Update};
use crate::setup::pool::PoolObjects;
use reftable::refdb::LogRefs;

/// The outcomes of one step on git, on us and (for transactions) on the model; `None` when
/// git crashed or hung (a divergence of its own).
pub(crate) type Outcomes = Option<(
    Result<(), Refused>,
    Result<(), Refused>,
    Option<Result<(), Refusal>>,
)>;

/// git's refusal of an operation, classified by the wording table.
fn git_refusal(stderr: &str) -> Refused {
    Refused {
        class: messages::classify(stderr),
        message: stderr.trim().to_string(),
    }
}

impl Executor<'_> {
    /// Run `op` everywhere.
    pub(crate) fn run_op(&mut self, op: &Op) -> Outcomes {
        match op {
            Op::Txn {
                updates,
                message,
                create_reflog,
            } => self.run_txn(updates, message, *create_reflog),
            Op::WorktreeTxn {
                updates,
                message,
                create_reflog,
            } => self.run_worktree_txn(updates, message, *create_reflog),
            Op::BatchTxn {
                updates,
                message,
                create_reflog,
            } => self.run_batch(updates, message, *create_reflog),
            Op::RefsCommand {
                updates,
                message,
                create_reflog,
            } => self.run_git_txn(op, updates, message, *create_reflog),
            Op::SymbolicRef {
                name,
                target,
                message,
            } => self.run_symbolic_ref(op, name, target, message),
            Op::Push { updates } => self.run_git_txn(op, updates, Op::PUSH_MESSAGE, false),
            Op::Fetch { updates, messages } => {
                let messages: Vec<&str> = messages.iter().map(String::as_str).collect();
                self.run_git_txn_logged(op, updates, &messages, false)
            }
            Op::Tag {
                updates,
                message,
                create_reflog,
            } => self.run_git_txn(op, updates, message, *create_reflog),
            Op::ReflogExpire {
                refname,
                expire,
                update_ref,
                unreachable,
            } => self.run_expire(refname, expire, *update_ref, *unreachable),
            Op::ReflogDelete {
                refname,
                index,
                rewrite,
                update_ref,
            } => self.run_reflog_delete(refname, *index, *rewrite, *update_ref),
            Op::ReflogDrop { refname } => self.run_reflog_drop(refname),
            Op::PackRefs { auto } => self.run_pack_refs(*auto),
            Op::MaintenancePackRefs => self.run_maintenance_pack_refs(),
            Op::Branch { .. } => self.run_branch(op),
            Op::Orphan { branch } => self.run_orphan(op, branch),
        }
    }

    /// `git checkout -l --orphan <branch>`: its own checks on us (the model has no say when
    /// they refuse), then the reflog created where the config would not create it, and the
    /// symref update of `HEAD` on us and on the model.
    fn run_orphan(&mut self, op: &Op, branch: &str) -> Outcomes {
        let pool = &self.env.pool(self.hash).pool;
        let objects = PoolObjects(pool);
        let plan = match ours::orphan_check(&self.db, branch, &objects) {
            Ok(p) => p,
            Err(refusal) => {
                let git_res = self.git_command_verdict(op)?;
                return Some((git_res, Err(refusal), None));
            }
        };
        let git_res = self.git_command_verdict(op)?;
        let refname = format!("refs/heads/{branch}");
        let creates = plan.switches && self.db.options().log_refs == LogRefs::None;
        let message = plan.message.clone();
        let update = ours::symbolic_ref_update("HEAD", &refname);
        let time = BASE_TIME + 60 * self.tick;
        let mut trial = self.model.clone();
        if creates {
            trial.create_reflog(&refname);
        }
        let model_res = trial.transaction(
            std::slice::from_ref(&update),
            &message,
            false,
            time,
            &objects,
        );
        self.model_trial = Some(Trial::Copy(trial));
        let c = self.committer();
        let ours_res = ours::orphan(&mut self.db, branch, &plan, &c, &objects);
        if git_res.is_ok() {
            if creates {
                // The files twin has no call that creates an empty reflog.
                self.retire_twin("checkout --orphan created an empty reflog");
            } else {
                self.twin_apply(&[update], &message);
            }
        }
        Some((git_res, ours_res, Some(model_res)))
    }

    /// `git branch -m/-M/-c/-C`, or `git refs rename` (`op`, an [`Op::Branch`]), against
    /// ours: the command's own checks (in its order), the library's rename or copy, and for
    /// `git branch`'s rename of `HEAD`'s branch the symref update of `HEAD` that follows it.
    fn run_branch(&mut self, op: &Op) -> Outcomes {
        let Op::Branch {
            old,
            new,
            copy,
            force,
            refs_rename,
        } = op
        else {
            return None;
        };
        let git_res = self.git_command_verdict(op)?;
        let oldref = format!("refs/heads/{old}");
        let newref = format!("refs/heads/{new}");
        let c = self.committer();
        let pool = &self.env.pool(self.hash).pool;
        let (ours_res, message) = match refs_rename {
            Some(m) => (
                ours::refs_rename(&mut self.db, &oldref, &newref, m, &c),
                m.clone(),
            ),
            None => {
                let message = ours::branch_message(&oldref, &newref, *copy);
                let names = ours::BranchNames {
                    old: &oldref,
                    new: &newref,
                };
                let objects = PoolObjects(pool);
                let r = ours::branch(&mut self.db, names, *copy, *force, &message, &c, &objects);
                (r, message)
            }
        };
        if ours_res.is_ok() {
            let time = BASE_TIME + 60 * self.tick;
            let follow_head = refs_rename.is_none();
            let m = &mut self.model;
            m.move_branch(&oldref, &newref, *copy, follow_head, &message, time);
            if let Some((_, twin)) = &self.twin {
                if let Err(e) = twin.move_branch(&oldref, &newref, *copy, follow_head) {
                    self.retire_twin(e);
                }
            }
        }
        Some((git_res, ours_res, None))
    }

    /// One `update-ref --stdin` transaction; in interleaved cases every other one is written
    /// into our stack by git itself.
    fn run_txn(&mut self, updates: &[Update], message: &str, create_reflog: bool) -> Outcomes {
        let pool = &self.env.pool(self.hash).pool;
        let objects = PoolObjects(pool);
        let lines: String = updates.iter().filter_map(|u| u.stdin_lines()).collect();
        self.result
            .git_stdin
            .push(format!("start\n{lines}prepare\ncommit\n"));
        let git_res = self.git_txn_verdict(0, &lines, message, create_reflog)?;
        self.txns += 1;
        let time = BASE_TIME + 60 * self.tick;
        // The model decides without applying; it applies once git's verdict is known.
        let messages = vec![message; updates.len()];
        let pending =
            (self.model).prepare_logged(updates, &messages, create_reflog, time, &objects);
        let model_res = pending.map(|p| self.model_trial = Some(Trial::Pending(p)));
        let interleaved = self.interleave_repo.is_some() && self.txns % 2 == 0;
        let ours_res = if interleaved {
            self.git_writes_ours(&lines, message, create_reflog)?
        } else {
            let c = self.committer();
            ours::txn(&mut self.db, updates, message, create_reflog, &c, &objects)
        };
        if git_res.is_ok() {
            self.twin_apply(updates, message);
        }
        Some((git_res, ours_res, Some(model_res)))
    }

    /// `op`, a git command that makes one transaction of `updates` (`git refs
    /// create|update|delete`, `git push --atomic .`, `git symbolic-ref`), against the same
    /// transaction on us and on the model.
    fn run_git_txn(
        &mut self,
        op: &Op,
        updates: &[Update],
        message: &str,
        create_reflog: bool,
    ) -> Outcomes {
        self.run_git_txn_logged(op, updates, &vec![message; updates.len()], create_reflog)
    }

    /// [`Self::run_git_txn`] where each update logs its own message (`messages[i]` for
    /// `updates[i]`).
    fn run_git_txn_logged(
        &mut self,
        op: &Op,
        updates: &[Update],
        messages: &[&str],
        create_reflog: bool,
    ) -> Outcomes {
        let git_res = self.git_command_verdict(op)?;
        let pool = &self.env.pool(self.hash).pool;
        let objects = PoolObjects(pool);
        let time = BASE_TIME + 60 * self.tick;
        let pending = (self.model).prepare_logged(updates, messages, create_reflog, time, &objects);
        let model_res = pending.map(|p| self.model_trial = Some(Trial::Pending(p)));
        let c = self.committer();
        let ours_res =
            ours::txn_logged(&mut self.db, updates, messages, create_reflog, &c, &objects)
                .map(drop);
        if git_res.is_ok() {
            // The twin's backend is not transactional: one update at a time, each with its
            // message.
            for (u, m) in updates.iter().zip(messages) {
                self.twin_apply(std::slice::from_ref(u), m);
            }
        }
        Some((git_res, ours_res, Some(model_res)))
    }

    /// git's verdict on `op` run as the reproducers run it ([`git_invocation`]), at the
    /// step's time, with the case's auto-compaction.
    ///
    /// [`git_invocation`]: crate::finding::script::git_invocation
    fn git_command_verdict(&mut self, op: &Op) -> Option<Result<(), Refused>> {
        let (args, _) = crate::finding::script::git_invocation(op);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let repo = self.repo.path().to_path_buf();
        let out = (self.env.git).run_auto(&repo, &argv, "", self.tick, self.opts.auto_compaction);
        self.git_verdict(out)
    }

    /// `git symbolic-ref name target`: its own checks on us (the model has no say when they
    /// refuse), then its update as any one-transaction command.
    fn run_symbolic_ref(&mut self, op: &Op, name: &str, target: &str, message: &str) -> Outcomes {
        if let Err(refusal) = ours::symbolic_ref_check(name, target) {
            let git_res = self.git_command_verdict(op)?;
            return Some((git_res, Err(refusal), None));
        }
        let updates = [ours::symbolic_ref_update(name, target)];
        self.run_git_txn(op, &updates, message, false)
    }

    /// git's verdict on `lines` through the `update-ref` process `which` (see
    /// [`Executor::git_txn`]); `None` when git crashed or hung.
    pub(crate) fn git_txn_verdict(
        &mut self,
        which: usize,
        lines: &str,
        message: &str,
        create_reflog: bool,
    ) -> Option<Result<(), Refused>> {
        match self.git_txn(which, lines, message, create_reflog) {
            TxnResult::Committed => Some(Ok(())),
            TxnResult::Failed(Exit::Code(_), err) => Some(Err(git_refusal(&err))),
            TxnResult::Failed(Exit::Signal(s), err) => {
                self.git_without_answer("git update-ref", Some(s), &err);
                None
            }
            TxnResult::Failed(Exit::Timeout, err) => {
                self.git_without_answer("git update-ref", None, &err);
                None
            }
        }
    }

    /// A git that ended without an answer: one that did not finish (killed after the
    /// timeout, or by `SIGXFSZ` at the bound on a file's size), said with what it left in
    /// git's stacks, the main one's and a linked worktree's ([`runaway::unfinished`]); else
    /// one that crashed (`signal`).
    fn git_without_answer(&mut self, command: &str, signal: Option<i32>, stderr: &str) {
        let git_dir = self.repo.path().join(".git");
        let worktree = git_dir.join("worktrees").join(WORKTREE_ID);
        let stacks = [git_dir.join("reftable"), worktree.join("reftable")];
        match runaway::unfinished(command, signal, &stacks, self.opts.block_size) {
            Some(detail) => self.diverge(Check::Hang, "hang", detail),
            None => {
                let s = signal.unwrap_or_default();
                self.diverge(
                    Check::GitCrashed,
                    "git crashed",
                    format!("signal {s}: {stderr}"),
                );
            }
        }
    }

    /// An interleaved transaction: git writes it into our stack (through the interleave
    /// repository) and we reload; `None` when git's refusal is not in the wording table.
    fn git_writes_ours(
        &mut self,
        lines: &str,
        message: &str,
        create_reflog: bool,
    ) -> Option<Result<(), Refused>> {
        // git writes this transaction into our stack; we take the next.
        let r = match self.git_txn(1, lines, message, create_reflog) {
            TxnResult::Committed => Ok(()),
            TxnResult::Failed(_, err) => match messages::classify(&err) {
                Some(c) => Err(refused(c, &err)),
                None => {
                    self.diverge(
                        Check::ErrorClass,
                        "unclassified git message",
                        format!("git writing into our stack: {}", err.trim()),
                    );
                    return None;
                }
            },
        };
        if let Err(e) = self.db.reload() {
            self.diverge(Check::OursReadsGit, "reload failed", format!("{e:#}"));
        }
        Some(r)
    }

    /// Apply a transaction git applied to the twin, retiring the twin when the files
    /// backend cannot hold the result.
    pub(super) fn twin_apply(&mut self, updates: &[Update], message: &str) {
        if let Some((_, twin)) = &self.twin {
            if let Err(e) = twin.apply(updates, message) {
                // The files backend cannot hold every state a reftable stack
                // can (no HEAD, symref loops): the twin stops here.
                self.retire_twin(e);
            }
        }
    }

    /// The libgit2 twin stops following the case at a step the files backend cannot mirror
    /// (`why`); the first reason is the one reported.
    pub(super) fn retire_twin(&mut self, why: impl Into<String>) {
        if self.twin.take().is_some() {
            self.result.twin_retired = Some(why.into());
        }
    }

    /// `git reflog expire` against our expiry.
    fn run_expire(
        &mut self,
        refname: &str,
        expire: &Expire,
        update_ref: bool,
        unreachable: bool,
    ) -> Outcomes {
        let repo = self.repo.path().to_path_buf();
        let exp = crate::finding::script::expire_arg(expire);
        let args =
            crate::finding::script::reflog_expire_args(refname, expire, update_ref, unreachable);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let cutoff = ours::expire_cutoff(expire);
        // The library's other expiry path, on copies of the stacks as they are now.
        self.check_expiry_in_compaction(cutoff, &exp);
        if self.diverged() {
            return None;
        }
        let out = (self.env.git).run_auto(&repo, &args, "", self.tick, self.opts.auto_compaction);
        let git_res = self.git_verdict(out)?;
        let target = self.dwim_log(refname);
        let pool = &self.env.pool(self.hash).pool;
        let objects = PoolObjects(pool);
        let ours_res = match target {
            None => Err(refused(ErrClass::NoReflog, "no reflog")),
            Some(t) => {
                let update = update_ref.then_some(&objects);
                let r = ours::expire_log(&mut self.db, &t, cutoff, unreachable, update, pool);
                let reach = unreachable.then(|| self.model_reach(&t));
                self.model.expire(
                    &t,
                    &mut |_, e| {
                        e.time < cutoff || reach.is_some_and(|r| r.prunes(pool, &e.old, &e.new))
                    },
                    false,
                );
                if update_ref {
                    self.model.update_ref_from_reflog(&t);
                    // The files twin has no reflog expiry that moves the ref.
                    self.retire_twin("reflog expire --updateref");
                }
                r.map_err(|e| our_refusal(&e))
            }
        };
        Some((git_res, ours_res, None))
    }

    /// What an expiry of `target` with `--expire-unreachable=now` reaches, from the model's
    /// refs.
    fn model_reach(&self, target: &str) -> crate::cases::unreachable::Reach {
        let refs: Vec<(String, Option<reftable::ObjectId>)> = (self.model.refs.iter())
            .map(|(n, v)| {
                let id = match v {
                    crate::model::MValue::Oid(id) => Some(*id),
                    crate::model::MValue::Symref(_) => None,
                };
                (n.clone(), id)
            })
            .collect();
        let pool = &self.env.pool(self.hash).pool;
        crate::cases::unreachable::reach(pool, target, &refs)
    }

    /// `git reflog delete` of one entry against ours.
    fn run_reflog_delete(
        &mut self,
        refname: &str,
        index: usize,
        rewrite: bool,
        update_ref: bool,
    ) -> Outcomes {
        let spec = format!("{refname}@{{{index}}}");
        let mut args = vec!["reflog", "delete"];
        if rewrite {
            args.push("--rewrite");
        }
        if update_ref {
            args.push("--updateref");
        }
        args.push(&spec);
        let objects = PoolObjects(&self.env.pool(self.hash).pool);
        self.on_reflog(&args, refname, |exec, t| {
            let update = update_ref.then_some(&objects);
            let r = ours::delete_log_entry(&mut exec.db, t, index, rewrite, update);
            let n = exec.model.visible_entries(t);
            exec.model
                .expire(t, &mut |i, _| n > index && i == index, rewrite);
            if update_ref {
                exec.model.update_ref_from_reflog(t);
                // The files twin has no reflog expiry that moves the ref.
                exec.retire_twin("reflog delete --updateref");
            }
            r
        })
    }

    /// `git reflog drop` against ours: the reflog git's name rules find (the name's own, else
    /// that of the ref it points at) is deleted whole; none found is a refusal.
    fn run_reflog_drop(&mut self, refname: &str) -> Outcomes {
        self.on_reflog(&["reflog", "drop", refname], refname, |exec, t| {
            exec.model.drop_reflog(t);
            exec.db.delete_reflog(t.as_bytes()).map(drop)
        })
    }

    /// A `git reflog` subcommand `args` on `refname` against `ours` on the reflog git's name
    /// rules find for it (none found: a refusal for want of a reflog).
    fn on_reflog(
        &mut self,
        args: &[&str],
        refname: &str,
        ours: impl FnOnce(&mut Self, &str) -> reftable::Result<()>,
    ) -> Outcomes {
        let repo = self.repo.path().to_path_buf();
        let out = self
            .env
            .git
            .run_auto(&repo, args, "", self.tick, self.opts.auto_compaction);
        let git_res = self.git_verdict(out)?;
        // A reflog git cannot rewrite for its size (a record too large for the table it
        // writes) is a storage limit the model does not know: the model stays as it was.
        let too_large = matches!(&git_res, Err(r) if r.class == Some(ErrClass::EntryTooLarge));
        let model = too_large.then(|| self.model.clone());
        let ours_res = match self.dwim_log(refname) {
            None => Err(refused(ErrClass::NoReflog, "no reflog")),
            Some(t) => ours(self, &t).map_err(|e| our_refusal(&e)),
        };
        if let Some(model) = model {
            self.model = model;
            self.result.model_not_applicable += 1;
        }
        Some((git_res, ours_res, None))
    }

    /// `git maintenance run --auto --task=pack-refs` against our `pack-refs --auto`: what git
    /// packs when it finds packing required (`refs_optimize_required`, 2.53+) is what its
    /// `pack-refs --auto` packs, and nothing when that finds nothing to do.
    fn run_maintenance_pack_refs(&mut self) -> Outcomes {
        let repo = self.repo.path().to_path_buf();
        let args = crate::finding::script::MAINTENANCE_PACK_REFS;
        let out = self.env.git.run(&repo, &args, "", self.tick);
        let git_res = self.git_verdict(out)?;
        let ours_res = self.db.pack_refs(true).map_err(|e| our_refusal(&e));
        Some((git_res, ours_res, None))
    }

    /// `git pack-refs` against ours.
    fn run_pack_refs(&mut self, auto: bool) -> Outcomes {
        let repo = self.repo.path().to_path_buf();
        let mut args = vec!["pack-refs"];
        if auto {
            args.push("--auto");
        }
        let out = self.env.git.run(&repo, &args, "", self.tick);
        let git_res = self.git_verdict(out)?;
        let ours_res = self.db.pack_refs(auto).map_err(|e| our_refusal(&e));
        Some((git_res, ours_res, None))
    }

    /// git's verdict on a finished command.
    pub(crate) fn git_verdict(
        &mut self,
        out: crate::git::driver::Output,
    ) -> Option<Result<(), Refused>> {
        match out.exit {
            Exit::Code(0) => Some(Ok(())),
            Exit::Code(code) => Some(Err(Refused {
                class: messages::classify_exit(code, &out.stderr),
                message: if out.stderr.trim().is_empty() {
                    format!("(no message, exit status {code})")
                } else {
                    out.stderr.trim().to_string()
                },
            })),
            Exit::Signal(s) => {
                self.git_without_answer("git", Some(s), &out.stderr);
                None
            }
            Exit::Timeout => {
                self.git_without_answer("git", None, &out.stderr);
                None
            }
        }
    }

    fn dwim_log(&self, name: &str) -> Option<String> {
        ours::dwim_log(&self.db, name)
    }
}
