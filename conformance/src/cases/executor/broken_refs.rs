//! Broken refs, at the end of a case, on a copy of git's repository: a table of ours added
//! to git's stack holds a ref to an object the repository does not have, a ref to the null
//! id and a ref whose name git's rules refuse (no git command writes any of them; a crash,
//! a bug or another implementation can). `for-each-ref` must list what it listed before
//! and the ref to the missing object (its id needs no object), leave the other two out
//! with a warning each; asked for what the missing object peels to, it must refuse with
//! "missing object" (every git from 2.45 on does; none may crash). Before that last
//! command, `refs verify` over them (`broken_refs_verified.rs`).

use reftable::{ObjectId, RefRecord, RefValue, Stack, StackOptions};

use crate::cases::executor::Executor;
use crate::git::driver::Exit;

/// The planted refs' names, in key order: the ref to the missing object last, so that
/// a command that stops at it has passed the other two.
pub(super) const NULL: &str = "refs/gate-probe/null";
const BAD_NAME: &str = "refs/gate-probe/two..dots";
const MISSING: &str = "refs/gate-probe/zz-missing";

impl Executor<'_> {
    /// The check described in the module docs; `expect` is git's listing of its refs.
    pub(super) fn check_broken_refs(&self, expect: &[String]) -> Result<(), String> {
        let scratch = self.copy_of_git_repo()?;
        let verified_before = self.verify_refs(scratch.path());
        let stack_dir = scratch.path().join(".git/reftable");
        let mut opts = StackOptions::default().auto_compaction(false);
        opts.write.hash = self.hash;
        let mut stack = Stack::open_or_create(&stack_dir, opts).map_err(|e| format!("{e:#}"))?;
        let pool = &self.env.pool(self.hash).pool;
        // One byte repeated: not the id of anything a repository holds.
        let len = ObjectId::null(self.hash).len();
        let missing = ObjectId::from_bytes(&vec![0x11; len]).ok_or("hash size")?;
        let planted = [
            (NULL, ObjectId::null(self.hash)),
            (BAD_NAME, pool.commits[0]),
            (MISSING, missing),
        ];
        stack
            .add(|w, ui| {
                w.set_limits(ui, ui)?;
                for (name, id) in planted {
                    w.add_ref(&RefRecord::new(name, ui, RefValue::Object(id)))?;
                }
                Ok(())
            })
            .map_err(|e| format!("planting broken refs: {e:#}"))?;
        let mut args = vec!["for-each-ref"];
        if self.env.profile.features.include_root_refs {
            args.push("--include-root-refs");
        }
        args.push("--format=%(refname) %(objectname) %(symref)");
        let out = self.env.git.run(scratch.path(), &args, "", self.tick);
        let mut want: Vec<String> = expect.iter().map(|l| without_peeled(l)).collect();
        want.push(format!("{MISSING} {missing} "));
        want.sort_by(|a, b| a.split(' ').next().cmp(&b.split(' ').next()));
        let listed: Vec<String> = out.stdout.lines().map(str::to_string).collect();
        let warned = format!(
            "warning: ignoring broken ref {NULL}\nwarning: ignoring ref with broken name {BAD_NAME}"
        );
        if !out.exit.success() || listed != want || out.stderr.trim() != warned {
            let extra: Vec<&String> = listed.iter().filter(|l| !want.contains(l)).collect();
            let lacking: Vec<&String> = want.iter().filter(|l| !listed.contains(l)).collect();
            return Err(format!(
                "for-each-ref with broken refs planted: {:?}, {:?}; not expected {extra:?}, \
                 not listed {lacking:?}",
                out.exit,
                out.stderr.trim()
            ));
        }
        self.broken_refs_iterated(scratch.path(), &missing)?;
        // Before the dereferencing below, which master's double free stops.
        self.check_broken_refs_verified(scratch.path(), &mut stack, verified_before)?;
        let peeled = ["for-each-ref", "--format=%(refname) %(*objectname)"];
        let out = self.env.git.run(scratch.path(), &peeled, "", self.tick);
        let refused = format!("fatal: missing object {missing} for {MISSING}");
        // The two warnings come first again.
        if !matches!(out.exit, Exit::Code(128))
            || out.stderr.lines().last() != Some(refused.as_str())
        {
            return Err(format!(
                "for-each-ref %(*objectname) with a ref to a missing object: {:?}, {:?}",
                out.exit,
                out.stderr.trim()
            ));
        }
        Ok(())
    }
}

impl Executor<'_> {
    /// Two more commands that iterate over broken refs: `show-ref` stops at the first of
    /// them (the null one); `rev-parse --all` prints the null id for the null and the
    /// misnamed ref and the missing id, one after the other in ref order, and leaves them
    /// out without ref paranoia.
    fn broken_refs_iterated(
        &self,
        repo: &std::path::Path,
        missing: &ObjectId,
    ) -> Result<(), String> {
        let out = self.env.git.run(repo, &["show-ref"], "", self.tick);
        let null = ObjectId::null(self.hash);
        let stop = format!("fatal: git show-ref: bad ref {NULL} ({null})");
        if !matches!(out.exit, Exit::Code(128)) || out.stderr.lines().last() != Some(stop.as_str())
        {
            return Err(format!(
                "show-ref with broken refs planted: {:?}, {:?}, expected {stop:?}",
                out.exit,
                out.stderr.trim()
            ));
        }
        let out = self
            .env
            .git
            .run(repo, &["rev-parse", "--all"], "", self.tick);
        let run = format!("{null}\n{null}\n{missing}\n");
        if !out.exit.success() || !out.stdout.contains(&run) {
            return Err(format!(
                "rev-parse --all with broken refs planted: {:?}, {:?}; no {run:?} in its output",
                out.exit,
                out.stderr.trim()
            ));
        }
        self.broken_refs_without_paranoia(repo, missing)
    }

    /// `rev-parse --all` with `GIT_REF_PARANOIA=0` (on by default since 2.36): iteration
    /// then leaves every broken ref out, saying so only of the one whose object is missing.
    fn broken_refs_without_paranoia(
        &self,
        repo: &std::path::Path,
        missing: &ObjectId,
    ) -> Result<(), String> {
        let mut c = self.env.git.command(repo, self.tick);
        c.env("GIT_REF_PARANOIA", "0");
        let out = self
            .env
            .git
            .run_command(&mut c, &["rev-parse", "--all"], "");
        let null = ObjectId::null(self.hash).to_string();
        let said = format!("error: {MISSING} does not point to a valid object!");
        let listed_broken = out
            .stdout
            .lines()
            .any(|l| l == null || l == missing.to_string());
        if !out.exit.success() || listed_broken || !out.stderr.lines().any(|l| l == said) {
            return Err(format!(
                "rev-parse --all with GIT_REF_PARANOIA=0 and broken refs planted: {:?}, {:?}; \
                 {} the broken refs",
                out.exit,
                out.stderr.trim(),
                if listed_broken { "listed" } else { "left out" }
            ));
        }
        Ok(())
    }
}

/// A line of [`Executor::git_refs`] (name, id, peeled id, symref) without its peeled id.
fn without_peeled(line: &str) -> String {
    let f: Vec<&str> = line.splitn(4, ' ').collect();
    format!(
        "{} {} {}",
        f[0],
        f.get(1).unwrap_or(&""),
        f.get(3).unwrap_or(&"")
    )
}
