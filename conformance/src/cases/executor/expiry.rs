//! Reflog expiry inside compaction, against git. The library can drop old reflog entries
//! while it compacts (`Stack::compact_all` with a `LogExpiry`), a path git's commands never
//! take (`pack-refs` passes no expiry), so the transactions of a case never reach it. Before
//! each time-based `reflog expire` step, copies of both stacks are taken: git's copy gets
//! `git reflog expire --all --expire=<t> --expire-unreachable=never` and `git pack-refs`,
//! ours one `compact_all` with expiry time `t`, and the refs and reflogs of the two results
//! must agree (existence-only reflogs aside: git and the compaction keep those by other rules).

use reftable::refdb::RefDbOptions;
use reftable::stack::LogExpiry;
use reftable::Stack;

use crate::finding::divergence::Check;

use crate::cases::executor::Executor;
use crate::snapshot::Snapshot;
use crate::stack_files::scratch_copy;

/// Refs and reflogs with entries (empty reflogs, existence markers only, removed).
fn with_entries(mut s: Snapshot) -> Snapshot {
    s.logs.retain(|_, entries| !entries.is_empty());
    s
}

impl Executor<'_> {
    /// Compare our compaction with expiry time `cutoff` with git's `reflog expire --all`
    /// (`expire_arg`, git's `--expire=` value for the same cutoff) followed by `pack-refs`,
    /// on copies of the stacks as they are now.
    pub(crate) fn check_expiry_in_compaction(&mut self, cutoff: u64, expire_arg: &str) {
        if let Err((class, detail)) = self.expiry_in_compaction(cutoff, expire_arg) {
            self.diverge(Check::ExpiryCompaction, class, detail);
        }
    }

    fn expiry_in_compaction(
        &mut self,
        cutoff: u64,
        expire_arg: &str,
    ) -> Result<(), (&'static str, String)> {
        let setup = |e: String| ("harness error", e);
        self.count(Check::ExpiryCompaction);
        let scratch =
            tempfile::tempdir_in(self.env.dir.path()).map_err(|e| setup(e.to_string()))?;
        let git_repo = scratch.path().join("git");
        let git_dir = git_repo.join(".git");
        scratch_copy(&self.repo.path().join(".git"), &git_dir, None).map_err(setup)?;
        for args in [
            &[
                "reflog",
                "expire",
                "--all",
                expire_arg,
                "--expire-unreachable=never",
            ][..],
            &["pack-refs"][..],
        ] {
            let out = self.env.git.run(&git_repo, args, "", self.tick);
            if !out.exit.success() {
                let detail = format!("git {}: {:?}: {}", args.join(" "), out.exit, out.stderr);
                return Err(("git failed", detail));
            }
        }
        let ours_dir = scratch.path().join("ours");
        scratch_copy(self.ours_dir.path(), &ours_dir, None).map_err(setup)?;
        let opts: RefDbOptions = *self.db.options();
        let compacted = Stack::open_or_create(&ours_dir, opts.stack)
            .and_then(|mut s| s.compact_all(Some(&LogExpiry::default().time(cutoff))));
        if let Err(e) = compacted {
            return Err(("compaction failed", format!("{e:#}")));
        }
        let read = |dir: &std::path::Path, who: &str| {
            Snapshot::of_stack_dir(dir, opts)
                .map(with_entries)
                .map_err(|e| ("read error", format!("{who}: {e:#}")))
        };
        let git = read(&git_repo.join(".git/reftable"), "git's expired copy")?;
        let ours = read(&ours_dir, "our compacted copy")?;
        if git != ours {
            let d = ours.diff(&git, 10).join("\n");
            return Err((
                "expiry mismatch",
                format!("compaction with expiry {cutoff} (ours) vs reflog expire --all + pack-refs (git):\n{d}"),
            ));
        }
        Ok(())
    }
}
