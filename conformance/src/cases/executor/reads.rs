//! git's other reads of its stack, compared at the end of a case with what our refs say git
//! must answer: reflog entries by position (`NAME@{n}`, which git reads newest first through
//! the backend's reverse reflog iterator, where `log -g` reads oldest first), `git refs
//! exists` (2.52+) of names the model has and has not, and `git refs verify`, git's own
//! check of a stack (filtered listings are in `filtered.rs`).

use crate::cases::executor::Executor;
use crate::finding::divergence::{Check, Divergence};
use crate::git::driver::Exit;
use crate::snapshot::Snapshot;

/// The newest entries asked for by position in each reflog (`@{1}` to `@{3}`; `@{0}` is the
/// ref's current value).
const POSITIONS: usize = 3;

impl Executor<'_> {
    /// `git rev-parse NAME@{n}` for the reflogs `log -g` is compared on: `@{0}` is the value
    /// the name resolves to now, `@{n}` the new id of the n-th entry before the newest
    /// unless the entry after it (newer) created the ref, which ends the log there and leaves
    /// the current value (refs.c `read_ref_at`: the walk counts entries from the newest,
    /// keeps the caller's current value for a count of 0, and takes an entry's new id only
    /// when the previous one has an old id); then one past the oldest entry of one reflog.
    pub(super) fn check_reflog_positions(&mut self, ours: &Snapshot, step: usize) -> bool {
        let mut args = vec!["rev-parse".to_string()];
        let mut expect = Vec::new();
        for name in self.reflog_names(ours) {
            let log = &ours.logs[name];
            let Some((now, _)) = super::checks::resolve(ours, name) else {
                continue;
            };
            args.push(format!("{name}@{{0}}"));
            expect.push(now.clone());
            for n in 1..log.len().min(POSITIONS + 1) {
                args.push(format!("{name}@{{{n}}}"));
                // An entry that created the ref (no old id) ends the walk: the entries
                // before it are not reached, and the caller's current value stands.
                let ended = log[n - 1].old.bytes().all(|b| b == b'0');
                expect.push(if ended {
                    now.clone()
                } else {
                    log[n].new.clone()
                });
            }
        }
        if expect.is_empty() {
            return true;
        }
        if !self.check_past_the_oldest(ours, step) {
            return false;
        }
        self.count(Check::GitReflogs);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.env.git.run(self.repo.path(), &argv, "", self.tick);
        let got: Vec<&str> = out.stdout.lines().collect();
        let want: Vec<&str> = expect.iter().map(String::as_str).collect();
        if out.exit.success() && got == want {
            return true;
        }
        let first = args[1..]
            .iter()
            .zip(want.iter().zip(got.iter().chain(std::iter::repeat(&""))))
            .find(|(_, (w, g))| w != g)
            .map(|(a, (w, g))| format!("{a}: expected {w}, git {g:?}"))
            .unwrap_or_default();
        self.result.divergences.push(Divergence {
            step,
            check: Check::GitReflogs,
            class: "reflog position mismatch".into(),
            detail: format!(
                "git rev-parse of {} reflog positions: {:?}; {first}; {}",
                want.len(),
                out.exit,
                out.stderr.lines().next().unwrap_or("")
            ),
        });
        false
    }
}

impl Executor<'_> {
    /// `git rev-parse NAME@{n}` one entry past the oldest of the first reflog `log -g` is
    /// compared on: git walks the whole log newest first (to its end, where the backend's
    /// reverse iterator meets the next ref's log or the end of the stack), then answers the
    /// oldest entry's old id, or, when that is null (the entry created the ref), dies saying
    /// how many entries the log has (object-name.c `get_oid_basic`). False after reporting
    /// a difference.
    fn check_past_the_oldest(&mut self, ours: &Snapshot, step: usize) -> bool {
        let Some(name) = self.reflog_names(ours).into_iter().next() else {
            return true;
        };
        let log = &ours.logs[name];
        let Some(oldest) = log.last() else {
            return true;
        };
        let n = log.len();
        let arg = format!("{name}@{{{n}}}");
        let out = self
            .env
            .git
            .run(self.repo.path(), &["rev-parse", &arg], "", self.tick);
        let (want_exit, want_out, want_err) = if oldest.old.bytes().all(|b| b == b'0') {
            let died = format!("fatal: log for '{name}' only has {n} entries");
            (Exit::Code(128), String::new(), died)
        } else {
            (Exit::Code(0), oldest.old.clone(), String::new())
        };
        let got = (out.exit, out.stdout.trim(), out.stderr.trim());
        if got == (want_exit.clone(), want_out.as_str(), want_err.as_str()) {
            return true;
        }
        self.result.divergences.push(Divergence {
            step,
            check: Check::GitReflogs,
            class: "reflog position mismatch".into(),
            detail: format!(
                "git rev-parse {arg}, past the oldest entry: {got:?}; expected \
                 {:?}",
                (want_exit, want_out, want_err)
            ),
        });
        false
    }

    /// `git refs exists NAME` for the names of [`exists_probes`]: exit 0 for a name the
    /// model has a ref of (a symref too, dangling or not: the raw ref is read), 2 for one it
    /// has not (builtin/refs.c `cmd_refs_exists`). False after reporting a difference.
    pub(super) fn check_refs_exists(&mut self, step: usize) -> bool {
        if !self.env.profile.features.refs_list_exists {
            return true;
        }
        let names: Vec<&String> = (self.model.refs.keys())
            .filter(|n| n.starts_with("refs/"))
            .collect();
        for name in exists_probes(&names) {
            self.count(Check::Lookups);
            let out =
                (self.env.git).run(self.repo.path(), &["refs", "exists", &name], "", self.tick);
            let want = if self.model.refs.contains_key(&name) {
                0
            } else {
                2
            };
            if out.exit == crate::git::driver::Exit::Code(want) {
                continue;
            }
            self.result.divergences.push(Divergence {
                step,
                check: Check::Lookups,
                class: "refs exists mismatch".into(),
                detail: format!(
                    "git refs exists {name}: {:?}, the model says exit {want} ({})",
                    out.exit,
                    out.stderr.trim()
                ),
            });
            return false;
        }
        true
    }

    /// `git refs verify` (2.47+) in `repo`: its exit and what it said, `None` for a git
    /// without it. What it reports depends on the refs (2.5x reports HEAD pointing outside
    /// refs/heads/ as an error), so the gate compares it between two stacks with the same
    /// refs rather than with an answer of its own; only a crash or hang is wrong by itself.
    pub(super) fn refs_verify(&self, repo: &std::path::Path) -> Result<Option<String>, String> {
        let Some(v) = self.verify_refs(repo) else {
            return Ok(None);
        };
        let said = format!("{:?}: {}", v.exit, v.lines.join("\n").trim());
        match v.exit {
            crate::git::driver::Exit::Code(_) => Ok(Some(said)),
            _ => Err(format!("git refs verify: {said}")),
        }
    }
}

/// What `refs verify` said: its exit and the lines of its standard error.
pub(super) struct Verified {
    pub(super) exit: crate::git::driver::Exit,
    pub(super) lines: Vec<String>,
}

impl Executor<'_> {
    /// `git refs verify` in `repo`, `None` for a git without it (before 2.47).
    pub(super) fn verify_refs(&self, repo: &std::path::Path) -> Option<Verified> {
        if !self.env.profile.features.refs_verify {
            return None;
        }
        let out = self.env.git.run(repo, &["refs", "verify"], "", self.tick);
        Some(Verified {
            exit: out.exit,
            lines: out.stderr.lines().map(str::to_string).collect(),
        })
    }
}

/// The names `git refs exists` is asked about: the first and last of `names` (the model's
/// refs under `refs/`, in order) and `HEAD`, a name below the first (`<name>/x`, absent: a ref is in the
/// way), the directory of the last (absent unless a ref has that name) and a name just
/// after the last (`<name>-`).
fn exists_probes(names: &[&String]) -> Vec<String> {
    let (Some(first), Some(last)) = (names.first(), names.last()) else {
        return vec!["HEAD".to_string()];
    };
    let dir = last.rsplit_once('/').map_or("refs", |(d, _)| d);
    let mut out = vec![
        first.to_string(),
        last.to_string(),
        "HEAD".to_string(),
        format!("{first}/x"),
        dir.to_string(),
        format!("{last}-"),
    ];
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exists_probes_ask_about_present_and_absent_names() {
        let (a, b) = ("refs/heads/a".to_string(), "refs/tags/v1".to_string());
        assert_eq!(
            exists_probes(&[&a, &b]),
            [
                "refs/heads/a",
                "refs/tags/v1",
                "HEAD",
                "refs/heads/a/x",
                "refs/tags",
                "refs/tags/v1-"
            ]
        );
        assert_eq!(exists_probes(&[]), ["HEAD"]);
    }
}
