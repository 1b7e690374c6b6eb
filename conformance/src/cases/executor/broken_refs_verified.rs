//! `git refs verify` over broken refs, a part of the broken-refs probe
//! (`broken_refs.rs`), on the same copy of git's repository: a second table of ours adds a
//! symref to a name git's rules refuse and a symref to a name outside `refs/`. From 2.53,
//! `refs verify` walks every ref of a reftable stack and reports the ref to the null id and
//! the symref to a refused name as errors, the symref outside `refs/` as a warning, each
//! under the ref's name (`worktrees/<id>/` before it in a linked worktree), in ref order, and
//! exits non-zero; before 2.53 it checks no ref of a reftable stack, and says what it said
//! before the refs were planted. Either way its other findings are those it had before.

use reftable::{ObjectId, RefRecord, RefValue, Stack};

use crate::cases::executor::Executor;
use crate::git::driver::Exit;
use crate::git::version::GitVersion;

use super::broken_refs::NULL;
use super::reads::Verified;

/// A symref to a name with a component starting with a dot, and its target.
const SYM_REFUSED: (&str, &str) = ("refs/gate-probe/sym-bad", "refs/gate-probe/..bad");
/// A symref to a well-formed name outside `refs/` and `worktrees/`, and its target.
const SYM_OUTSIDE: (&str, &str) = ("refs/gate-probe/sym-out", "gate-probe/out");

impl Executor<'_> {
    /// The check described in the module docs; `before` is `refs verify` on the copy
    /// before any ref was planted, `stack` our handle on its stack (which already holds the
    /// first broken refs).
    pub(super) fn check_broken_refs_verified(
        &self,
        repo: &std::path::Path,
        stack: &mut Stack,
        before: Option<Verified>,
    ) -> Result<(), String> {
        let Some(before) = before else {
            return Ok(());
        };
        stack
            .add(|w, ui| {
                w.set_limits(ui, ui)?;
                for (name, target) in [SYM_REFUSED, SYM_OUTSIDE] {
                    w.add_ref(&RefRecord::new(name, ui, RefValue::Symref(target.into())))?;
                }
                Ok(())
            })
            .map_err(|e| format!("planting broken symrefs: {e:#}"))?;
        let after = self
            .verify_refs(repo)
            .ok_or("refs verify went away between two runs")?;
        let checks_refs =
            self.env.profile.git_version() >= GitVersion::parse("2.53").expect("2.53");
        let mut want = before.lines.clone();
        if checks_refs {
            let null = ObjectId::null(self.hash);
            let (refused, refused_target) = SYM_REFUSED;
            let (outside, outside_target) = SYM_OUTSIDE;
            for line in [
                format!("error: {NULL}: badRefOid: points to invalid object ID '{null}'"),
                format!(
                    "error: {refused}: badReferentName: points to invalid refname '{refused_target}'"
                ),
                format!(
                    "warning: {outside}: symrefTargetIsNotARef: points to non-ref target '{outside_target}'"
                ),
            ] {
                insert_in_ref_order(&mut want, line);
            }
        }
        let exit_ok = if checks_refs {
            matches!(after.exit, Exit::Code(c) if c != 0)
        } else {
            after.exit == before.exit
        };
        if !exit_ok || after.lines != want {
            return Err(format!(
                "refs verify with broken refs planted: {:?}, {:?}; expected {want:?} (before \
                 planting: {:?}, {:?})",
                after.exit, after.lines, before.exit, before.lines
            ));
        }
        Ok(())
    }
}

/// The ref a `refs verify` finding is about: what follows `error: ` or `warning: ` up to
/// the next `: `.
fn finding_ref(line: &str) -> &str {
    let rest = line
        .strip_prefix("error: ")
        .or_else(|| line.strip_prefix("warning: "))
        .unwrap_or(line);
    rest.split(": ").next().unwrap_or(rest)
}

/// Insert `line` before the first finding about a ref that sorts after its own.
fn insert_in_ref_order(lines: &mut Vec<String>, line: String) {
    let name = finding_ref(&line).to_string();
    let at = lines
        .iter()
        .position(|l| finding_ref(l) > name.as_str())
        .unwrap_or(lines.len());
    lines.insert(at, line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_go_in_ref_order_before_a_worktrees() {
        let mut lines = vec![
            "error: HEAD: badHeadTarget: HEAD points to non-branch 'refs/tags/x'".to_string(),
            "warning: worktrees/wt/refs/a: x".to_string(),
        ];
        insert_in_ref_order(&mut lines, "error: refs/gate-probe/null: y".into());
        insert_in_ref_order(&mut lines, "warning: refs/gate-probe/sym-out: z".into());
        assert_eq!(
            lines.iter().map(|l| finding_ref(l)).collect::<Vec<_>>(),
            [
                "HEAD",
                "refs/gate-probe/null",
                "refs/gate-probe/sym-out",
                "worktrees/wt/refs/a"
            ]
        );
    }
}
