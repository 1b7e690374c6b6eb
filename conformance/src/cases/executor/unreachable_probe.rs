//! `reflog expire --expire-unreachable=now` over a history that went forward and back, at
//! the end of a case, on a copy of git's repository: a ref outside `refs/heads/` goes to the
//! newest commit, back to the oldest, forward one, to the tree and to a commit in between,
//! each with `--create-reflog`; the expiry (`--expire=never`: reachability alone decides)
//! must keep the entries whose ids are reached from the ref's commit or are no commit, and
//! prune the others ([`crate::cases::unreachable`]), whatever the entries before them
//! held. The generated cases' reflogs are short and rarely go back.

use reftable::ObjectId;

use crate::cases::executor::checks::ProbeError;
use crate::cases::executor::Executor;
use crate::cases::unreachable::Reach;
use crate::git::driver::{TxnResult, UpdateRef};

/// The ref the probe writes.
const PROBE_REF: &str = "refs/gate-probe/expire";

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_unreachable_expiry(&self) -> Result<(), ProbeError> {
        let pool = &self.env.pool(self.hash).pool;
        let c = &pool.commits;
        let values = [c[c.len() - 1], c[0], c[1], pool.tree, c[2]];
        let scratch = self.copy_of_git_repo()?;
        // One update-ref process, a transaction (a reflog entry) per value.
        let git = &self.env.git;
        let mut update_ref = UpdateRef::spawn_with(git, scratch.path(), self.tick, "", true, false)
            .map_err(|e| format!("cannot start update-ref: {e}"))?;
        for v in values {
            let line = format!("update {PROBE_REF} {v}\n");
            if let TxnResult::Failed(exit, err) = update_ref.transaction(&line) {
                let e = format!("update-ref --create-reflog {PROBE_REF} {v}: {exit:?}, {err:?}");
                return Err(e.into());
            }
        }
        update_ref.finish();
        let args = [
            "reflog",
            "expire",
            "--expire=never",
            "--expire-unreachable=now",
            PROBE_REF,
        ];
        let out = self.env.git.run(scratch.path(), &args, "", self.tick);
        let null = ObjectId::null(self.hash);
        let history: Vec<(ObjectId, ObjectId)> =
            (std::iter::once(null).chain(values)).zip(values).collect();
        // Newest first, as a reflog reads.
        let reach = Reach::UpTo(pool.history_place(&c[2]));
        let want: Vec<(ObjectId, ObjectId)> = (history.iter().rev())
            .filter(|(old, new)| !reach.prunes(pool, old, new))
            .copied()
            .collect();
        let got = self.probe_reflog(scratch.path())?;
        if !out.exit.success() || got != want {
            return Err(format!(
                "reflog expire --expire-unreachable=now of {history:?}: {:?}, {:?}; kept \
                 {got:?}, expected {want:?}",
                out.exit,
                out.stderr.trim()
            )
            .into());
        }
        Ok(())
    }

    /// The probe ref's reflog in git's stack at `repo`, newest first, read by our reader.
    fn probe_reflog(&self, repo: &std::path::Path) -> Result<Vec<(ObjectId, ObjectId)>, String> {
        let db = self.our_reader_of(repo)?;
        let log = db
            .reflog(PROBE_REF.as_bytes())
            .map_err(|e| format!("{e:#}"))?;
        let mut out = Vec::new();
        for l in log {
            let l = l.map_err(|e| format!("{e:#}"))?;
            match l.update() {
                Some(u) if !(u.old_id.is_null() && u.new_id.is_null()) => {
                    out.push((u.old_id, u.new_id))
                }
                _ => {}
            }
        }
        Ok(out)
    }
}
