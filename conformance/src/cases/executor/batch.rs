//! A batch step: `git update-ref --stdin --batch-updates` against our library's updates
//! checked one by one (`ours::batch`) and the model's rejections
//! (`Model::batch_rejections`), the rejected refs and their reasons compared right after the
//! batch; the refs, reflogs and tables after it are compared by the state checks as after
//! any step.

use super::steps::Outcomes;
use crate::cases::batch::{
    compare_reasons, compare_rejections, git_rejections, old_value_reason, Rejection,
};
use crate::cases::executor::{Executor, Trial};
use crate::cases::ours;
use crate::finding::divergence::Check;
use crate::git::driver::BASE_TIME;
use crate::git::messages;
use crate::git::version::GitVersion;
use crate::ops::{Op, Update, Value};
use crate::setup::pool::PoolObjects;

impl Executor<'_> {
    /// One `--batch-updates` batch on git, on us and on the model; `None` when git crashed
    /// or hung, or when the rejections differ (a divergence of their own).
    pub(crate) fn run_batch(
        &mut self,
        updates: &[Update],
        message: &str,
        create_reflog: bool,
    ) -> Outcomes {
        let op = Op::BatchTxn {
            updates: updates.to_vec(),
            message: message.to_string(),
            create_reflog,
        };
        let (args, stdin) = crate::finding::script::git_invocation(&op);
        let stdin = stdin.unwrap_or_default();
        self.result.git_stdin.push(stdin.clone());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let repo = self.repo.path().to_path_buf();
        let head_before = (self.git_head_log_len(), self.model.visible_entries("HEAD"));
        let out = self
            .env
            .git
            .run_auto(&repo, &argv, &stdin, self.tick, self.opts.auto_compaction);
        // Each rejection's message on standard error from 2.54 on.
        let messages = self.env.profile.git_version() >= GitVersion::parse("2.54").expect("2.54");
        let git_said = git_rejections(&out.stdout, &out.stderr, messages);
        let git_res = self.git_verdict(out)?;
        let pool = &self.env.pool(self.hash).pool;
        let objects = PoolObjects(pool);
        let model_said = self.model.batch_rejections(updates, &objects);
        let passed: Vec<Update> = (0..updates.len())
            .filter(|i| !model_said.iter().any(|(r, _)| r == i))
            .map(|i| updates[i].clone())
            .collect();
        let mut trial = self.model.clone();
        let time = BASE_TIME + 60 * self.tick;
        let model_res = trial.transaction(&passed, message, create_reflog, time, &objects);
        self.model_trial = Some(Trial::Copy(trial));
        let c = self.committer();
        let ours_res = ours::batch(&mut self.db, updates, message, create_reflog, &c, &objects);
        let (ours_said, ours_res) = match ours_res {
            Ok(r) => (r, Ok(())),
            Err(e) => (Vec::new(), Err(e)),
        };
        // git failed the batch as a whole where we committed it: said as a batch's
        // difference, so that it is not taken for a plain transaction's.
        if let (Err(g), Ok(())) = (&git_res, &ours_res) {
            self.count(Check::Verdict);
            // The batch dies on its `fatal:` line; the `error:` lines before it are the
            // rejected updates'.
            let fatal: Vec<&str> = g
                .message
                .lines()
                .filter(|l| l.starts_with("fatal: "))
                .collect();
            let (class, said) = match fatal.as_slice() {
                [] => (g.class, g.message.trim().to_string()),
                lines => {
                    let said = lines.join("\n");
                    (messages::classify(&said).or(g.class), said)
                }
            };
            let d = format!(
                "--batch-updates: git failed the whole batch ({class:?}): {said}; ours committed it with {} of {} updates rejected",
                ours_said.len(),
                updates.len()
            );
            self.diverge(Check::Verdict, "error mismatch", d);
            return None;
        }
        if git_res.is_ok() && ours_res.is_ok() {
            let ours_said: Vec<Rejection> = ours_said
                .into_iter()
                .map(|(i, r)| Rejection {
                    refname: updates[i].refname.clone(),
                    reason: String::new(),
                    class: r.class,
                    classes: &[],
                    detail: r.message,
                })
                .collect();
            let model_said: Vec<_> = model_said
                .iter()
                .map(|(i, f)| (updates[*i].refname.clone(), *f))
                .collect();
            self.count(Check::Verdict);
            let reasons = self.old_value_reasons(updates, &model_said);
            let mismatch = compare_rejections(&git_said, &ours_said, &model_said)
                .or_else(|| compare_reasons(&git_said, &reasons));
            if let Some(m) = mismatch {
                self.diverge(m.check, m.class, m.detail);
                return None;
            }
            if !self.head_log_grew_as_modeled(head_before, &model_said) {
                return None;
            }
            // Each update of a batch counted, and those that passed.
            let k = self
                .result
                .kinds
                .entry("update in a batch".into())
                .or_default();
            k[0] += updates.len() as u64;
            k[1] += passed.len() as u64;
            self.twin_apply(&passed, message);
        }
        Some((git_res, ours_res, Some(model_res)))
    }

    /// The reasons git must give for the rejected updates whose only fault is their old id,
    /// where the update is plain: an old id, the ref absent or holding an id in the model
    /// before the batch ([`old_value_reason`]).
    fn old_value_reasons(
        &self,
        updates: &[Update],
        rejected: &[(String, crate::model::Faults)],
    ) -> Vec<(String, &'static str)> {
        use crate::model::{Fault, MValue};
        let mut out = Vec::new();
        for (name, faults) in rejected {
            if !faults.iter().eq([Fault::OldValue]) {
                continue;
            }
            let Some(u) = updates.iter().find(|u| u.refname == *name) else {
                continue;
            };
            let Some(Value::Oid(old)) = &u.old else {
                continue;
            };
            let current = match self.model.refs.get(name) {
                None => None,
                Some(MValue::Oid(id)) => Some(id.to_string()),
                Some(MValue::Symref(_)) => continue,
            };
            out.push((name.clone(), old_value_reason(old, current.as_deref())));
        }
        out
    }

    /// How many entries `HEAD`'s reflog has in git's stack, those with both ids null (which
    /// git takes for existence markers) left out as `Model::visible_entries` leaves them
    /// out (0 when it cannot be read: the state checks report that).
    fn git_head_log_len(&mut self) -> usize {
        if self.git_db.reload().is_err() {
            return 0;
        }
        self.git_db.reflog(b"HEAD").map_or(0, |e| e.count())
    }

    /// Whether `HEAD`'s reflog in git's stack grew by as many entries as the model's
    /// (`before`: both lengths before the batch), checked right after the batch so that an
    /// entry for an update git rejected is named as such (the later byte comparison would
    /// only say the tables differ); false after reporting a divergence.
    fn head_log_grew_as_modeled(
        &mut self,
        before: (usize, usize),
        rejected: &[(String, crate::model::Faults)],
    ) -> bool {
        let git = self.git_head_log_len().saturating_sub(before.0);
        let model = match &self.model_trial {
            Some(Trial::Copy(m)) => m.visible_entries("HEAD"),
            _ => 0,
        };
        let model = model.saturating_sub(before.1);
        if git == model {
            return true;
        }
        let names: Vec<&str> = rejected.iter().map(|(n, _)| n.as_str()).collect();
        let more = if git > model { "more" } else { "fewer" };
        self.diverge(
            Check::GitReflogs,
            "reflog mismatch",
            format!(
                "--batch-updates: HEAD's reflog got {more} entries than the model's \
                 (git {git}, the model {model}); rejected updates {names:?}"
            ),
        );
        false
    }
}
