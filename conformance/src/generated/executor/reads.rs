//! git's other reads of its stack, compared at the end of a case with what our refs say git
//! must answer: reflog entries by position (`NAME@{n}`, which git reads newest first through
//! the backend's reverse reflog iterator, where `log -g` reads oldest first), listings
//! narrowed by name patterns and `--exclude` (which the reftable backend turns into seeks
//! past the excluded names), and `git refs verify`, git's own check of a stack.

use crate::finding::divergence::{Check, Divergence};
use crate::generated::executor::Executor;
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
    /// when the previous one has an old id). Only positions inside the reflog are asked for.
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

    /// `git for-each-ref` narrowed by `--exclude` and name patterns (see [`filters`]) against
    /// our refs narrowed by git's documented rules for both.
    pub(super) fn check_filtered_views(&mut self, ours: &Snapshot, step: usize) {
        let names: Vec<&str> = ours
            .refs
            .keys()
            .map(String::as_str)
            .filter(|n| n.starts_with("refs/"))
            .collect();
        let full = self.expected_git_view(ours);
        for (excludes, patterns) in filters(&names) {
            self.count(Check::GitView);
            let mut args = vec!["for-each-ref".to_string(), FORMAT.to_string()];
            args.extend(excludes.iter().map(|e| format!("--exclude={e}")));
            args.extend(patterns.iter().cloned());
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = self.env.git.run(self.repo.path(), &argv, "", self.tick);
            let view: Vec<&str> = out.stdout.lines().collect();
            let expect: Vec<&str> = full
                .iter()
                .map(String::as_str)
                .filter(|l| shown(refname(l), &excludes, &patterns))
                .collect();
            if out.exit.success() && view == expect {
                continue;
            }
            let detail = listing_difference(&args[2..], &expect, &view, &excludes);
            self.result.divergences.push(Divergence {
                step,
                check: Check::GitView,
                class: "filtered listing mismatch".into(),
                detail: format!("{detail} ({:?} {})", out.exit, out.stderr.trim()),
            });
            return;
        }
    }
}

impl Executor<'_> {
    /// `git refs verify` (2.47+) in `repo`: its exit and what it said, `None` for a git
    /// without it. What it reports depends on the refs (2.5x reports HEAD pointing outside
    /// refs/heads/ as an error), so the gate compares it between two stacks with the same
    /// refs rather than with an answer of its own; only a crash or hang is wrong by itself.
    pub(super) fn refs_verify(&self, repo: &std::path::Path) -> Result<Option<String>, String> {
        if !self.env.profile.features.refs_verify {
            return Ok(None);
        }
        let out = self.env.git.run(repo, &["refs", "verify"], "", self.tick);
        let said = format!("{:?}: {}", out.exit, out.stderr.trim());
        match out.exit {
            crate::git::driver::Exit::Code(_) => Ok(Some(said)),
            _ => Err(format!("git refs verify: {said}")),
        }
    }
}

/// The format of the filtered listings: the one the full listing is compared in.
const FORMAT: &str = "--format=%(refname) %(objectname) %(*objectname) %(symref)";

/// The name a listing line is about.
fn refname(line: &str) -> &str {
    line.split(' ').next().unwrap_or("")
}

/// What a filtered listing shows that it should not, and what it leaves out that it should
/// show, the names left out split into those an exclude pattern is a byte prefix of (but
/// not a path prefix of: the shape of excluding by prefix) and the others.
fn listing_difference(args: &[String], expect: &[&str], view: &[&str], ex: &[String]) -> String {
    let missing = expect
        .iter()
        .filter(|l| !view.contains(l))
        .map(|l| refname(l));
    let (by_prefix, other): (Vec<&str>, Vec<&str>) = missing.partition(|n| {
        ex.iter()
            .any(|e| n.starts_with(e.as_str()) && !matches(e, n))
    });
    let extra: Vec<&str> = view
        .iter()
        .filter(|l| !expect.contains(l))
        .copied()
        .collect();
    let mut parts = Vec::new();
    for (what, lines) in [
        ("left out though no --exclude matches them", &other),
        (
            "left out as byte-prefix matches of an --exclude",
            &by_prefix,
        ),
        ("shown unexpectedly", &extra),
    ] {
        if !lines.is_empty() {
            parts.push(format!("{what} {:?}", &lines[..lines.len().min(5)]));
        }
    }
    format!("for-each-ref {}: {}", args.join(" "), parts.join("; "))
}

/// Whether a listing with `excludes` and `patterns` shows `name` (git-for-each-ref(1): a
/// name must match one of the patterns, if any are given, and none of the excludes).
fn shown(name: &str, excludes: &[String], patterns: &[String]) -> bool {
    name.starts_with("refs/")
        && (patterns.is_empty() || patterns.iter().any(|p| matches(p, name)))
        && !excludes.iter().any(|e| matches(e, name))
}

/// Whether pattern `p`, which has no glob characters, matches ref `name`: the whole name, or
/// its beginning up to a slash (the pattern's own last character or the name's next one).
fn matches(p: &str, name: &str) -> bool {
    name == p
        || name
            .strip_prefix(p)
            .is_some_and(|rest| p.ends_with('/') || rest.starts_with('/'))
}

/// The filters of a case's two narrowed listings, from its refs under `refs/`: the first
/// name that another name has as a byte prefix but not as a path prefix (`refs/heads/a` when
/// `refs/heads/ab` exists; else the first name) excluded, with `refs/tags/` excluded too over
/// all refs, and alone under that name's directory given as a pattern without its slash.
fn filters(names: &[&str]) -> Vec<(Vec<String>, Vec<String>)> {
    let Some(first) = names.first() else {
        return Vec::new();
    };
    let pick = names
        .iter()
        .find(|n| {
            names
                .iter()
                .any(|m| m.len() > n.len() && m.starts_with(**n) && !matches(n, m))
        })
        .unwrap_or(first)
        .to_string();
    let dir = pick.rsplit_once('/').map_or("refs", |(d, _)| d).to_string();
    vec![
        (vec![pick.clone(), "refs/tags/".to_string()], Vec::new()),
        (vec![pick], vec![dir]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_patterns_match_whole_names_or_up_to_a_slash() {
        assert!(matches("refs/heads/a", "refs/heads/a"));
        assert!(matches("refs/heads/a", "refs/heads/a/b"));
        assert!(!matches("refs/heads/a", "refs/heads/ab"));
        assert!(!matches("refs/heads/a", "refs/heads/a-b"));
        assert!(matches("refs/heads/", "refs/heads/ab"));
        assert!(matches("refs/heads", "refs/heads/ab"));
        assert!(!matches("refs/head", "refs/heads/ab"));
    }

    #[test]
    fn the_excluded_name_is_a_byte_prefix_of_another_when_one_is() {
        let names = [
            "refs/heads/a",
            "refs/heads/a/b",
            "refs/heads/b",
            "refs/heads/bc",
        ];
        let f = filters(&names);
        assert_eq!(f[0].0, vec!["refs/heads/b", "refs/tags/"]);
        assert_eq!(
            f[1],
            (
                vec!["refs/heads/b".to_string()],
                vec!["refs/heads".to_string()]
            )
        );
        assert!(shown("refs/heads/bc", &f[1].0, &f[1].1));
        assert!(!shown("refs/heads/b", &f[1].0, &f[1].1));
        assert!(!shown("refs/tags/t", &f[0].0, &f[0].1));
        assert!(!shown("refs/custom/x", &f[1].0, &f[1].1));
        assert!(filters(&[]).is_empty());
    }

    #[test]
    fn a_prefix_exclusion_is_named_as_such() {
        let expect = ["refs/heads/a-b X", "refs/heads/ab X", "refs/heads/b X"];
        let view = ["refs/heads/b X"];
        let d = listing_difference(&[], &expect, &view, &["refs/heads/a".into()]);
        assert_eq!(
            d,
            "for-each-ref : left out as byte-prefix matches of an --exclude \
             [\"refs/heads/a-b\", \"refs/heads/ab\"]"
        );
        let d = listing_difference(&[], &expect, &["refs/heads/ab Y"], &["refs/heads/x".into()]);
        assert_eq!(
            d,
            "for-each-ref : left out though no --exclude matches them [\"refs/heads/a-b\", \
             \"refs/heads/ab\", \"refs/heads/b\"]; shown unexpectedly [\"refs/heads/ab Y\"]"
        );
    }
}
