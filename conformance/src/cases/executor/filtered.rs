//! git's filtered listings, compared at the end of a case with our refs filtered by git's
//! documented rules: `for-each-ref` narrowed by name patterns and `--exclude` (which the
//! reftable backend turns into seeks past the excluded names), and by `--points-at` (a ref
//! is shown when its value, or an object its annotated tag chain leads to, is one of the
//! ids; ref-filter.c `match_points_at`); two of them again through `git refs list` (2.52+),
//! which takes for-each-ref's options.

use crate::cases::executor::Executor;
use crate::finding::divergence::{Check, Divergence};
use crate::setup::pool::Pool;
use crate::snapshot::Snapshot;

/// One filtered listing: `--exclude`s, name patterns and `--points-at` ids, through
/// `for-each-ref` or `refs list`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Filter {
    excludes: Vec<String>,
    patterns: Vec<String>,
    points_at: Vec<String>,
    refs_list: bool,
}

impl Filter {
    /// The command line of the listing (its first two words the command).
    fn args(&self) -> Vec<String> {
        let command = if self.refs_list {
            ["refs", "list"]
        } else {
            ["for-each-ref", FORMAT]
        };
        let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
        if self.refs_list {
            args.push(FORMAT.to_string());
        }
        args.extend(self.excludes.iter().map(|e| format!("--exclude={e}")));
        args.extend(self.points_at.iter().map(|p| format!("--points-at={p}")));
        args.extend(self.patterns.iter().cloned());
        args
    }

    /// The command line as reports show it (without the format).
    fn shown(&self) -> String {
        let words: Vec<String> = self.args().into_iter().filter(|a| a != FORMAT).collect();
        words.join(" ")
    }

    /// Whether the listing shows `line` (a line of the full listing, see [`FORMAT`]):
    /// git-for-each-ref(1): a name must match one of the patterns, if any are given, and
    /// none of the excludes; with `--points-at`, the ref's object or the object it peels to
    /// must be one of the ids (the pool's tags point at commits, so one peel is the chain).
    fn shows(&self, line: &str) -> bool {
        let mut fields = line.split(' ');
        let name = fields.next().unwrap_or("");
        let ids: Vec<&str> = fields.take(2).filter(|f| !f.is_empty()).collect();
        name.starts_with("refs/")
            && (self.patterns.is_empty() || self.patterns.iter().any(|p| matches(p, name)))
            && !self.excludes.iter().any(|e| matches(e, name))
            && (self.points_at.is_empty()
                || ids.iter().any(|id| self.points_at.iter().any(|p| p == id)))
    }
}

impl Executor<'_> {
    /// `git for-each-ref` narrowed by `--exclude` and name patterns (see [`filters`]) and by
    /// `--points-at` (see [`points_at_filters`]) against our refs narrowed by git's rules.
    pub(super) fn check_filtered_views(&mut self, ours: &Snapshot, step: usize) {
        let names: Vec<&str> = ours
            .refs
            .keys()
            .map(String::as_str)
            .filter(|n| n.starts_with("refs/"))
            .collect();
        let full = self.expected_git_view(ours);
        let pool = &self.env.pool(self.hash).pool;
        // `--points-at` first: gits with a defect of `--exclude` (2.47) end the check there.
        let mut all = points_at_filters(&full, pool);
        all.extend(filters(&names));
        if self.env.profile.features.refs_list_exists {
            all.extend(refs_list_filters(&all));
        }
        for filter in all {
            self.count(Check::GitView);
            let args = filter.args();
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = self.env.git.run(self.repo.path(), &argv, "", self.tick);
            let view: Vec<&str> = out.stdout.lines().collect();
            let expect = expected_listing(&full, &filter);
            if out.exit.success() && view == expect {
                continue;
            }
            let detail = listing_difference(&filter.shown(), &expect, &view, &filter.excludes);
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

/// The format of the filtered listings: the one the full listing is compared in.
const FORMAT: &str = "--format=%(refname) %(objectname) %(*objectname) %(symref)";

/// The lines of the full listing `full` that `filter` keeps.
fn expected_listing<'f>(full: &'f [String], filter: &Filter) -> Vec<&'f str> {
    full.iter()
        .map(String::as_str)
        .filter(|l| filter.shows(l))
        .collect()
}

/// The name a listing line is about.
fn refname(line: &str) -> &str {
    line.split(' ').next().unwrap_or("")
}

/// What a filtered listing shows that it should not, and what it leaves out that it should
/// show, the names left out split into those an exclude pattern is a byte prefix of (but
/// not a path prefix of: the shape of excluding by prefix) and the others.
fn listing_difference(command: &str, expect: &[&str], view: &[&str], ex: &[String]) -> String {
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
    // Without excludes (a `--points-at` listing) nothing is left out by an exclude: its
    // differences never take the wording of an exclude defect.
    let left_out = if ex.is_empty() {
        "left out"
    } else {
        "left out though no --exclude matches them"
    };
    let mut parts = Vec::new();
    for (what, lines) in [
        (left_out, &other),
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
    format!("{command}: {}", parts.join("; "))
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
fn filters(names: &[&str]) -> Vec<Filter> {
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
        Filter {
            excludes: vec![pick.clone(), "refs/tags/".to_string()],
            ..Filter::default()
        },
        Filter {
            excludes: vec![pick],
            patterns: vec![dir],
            ..Filter::default()
        },
    ]
}

/// The `--points-at` listings, from the full listing `full` (see [`FORMAT`]) so that they
/// find something: the commit the first tag a ref under `refs/` holds peels to (refs
/// holding the commit and refs holding a tag of it; the pool's first tag's commit when no
/// ref holds a tag), and that tag itself with the tree (refs holding exactly those, not
/// the commit the tag points at), under `refs/`.
fn points_at_filters(full: &[String], pool: &Pool) -> Vec<Filter> {
    let held = full.iter().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f[0].starts_with("refs/") && f.get(2).is_some_and(|p| !p.is_empty()))
            .then(|| (f[1].to_string(), f[2].to_string()))
    });
    let pooled = pool
        .tags
        .first()
        .map(|(t, p)| (t.to_string(), p.to_string()));
    let Some((tag, peeled)) = held.or(pooled) else {
        return Vec::new();
    };
    vec![
        Filter {
            points_at: vec![peeled],
            ..Filter::default()
        },
        Filter {
            points_at: vec![tag, pool.tree.to_string()],
            patterns: vec!["refs/".to_string()],
            ..Filter::default()
        },
    ]
}

/// The first and the last of `filters` again through `git refs list`.
fn refs_list_filters(filters: &[Filter]) -> Vec<Filter> {
    let ends = [filters.first(), filters.last()];
    ends.into_iter()
        .flatten()
        .map(|f| Filter {
            refs_list: true,
            ..f.clone()
        })
        .collect()
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
        assert_eq!(f[0].excludes, vec!["refs/heads/b", "refs/tags/"]);
        assert_eq!(f[1].excludes, vec!["refs/heads/b".to_string()]);
        assert_eq!(f[1].patterns, vec!["refs/heads".to_string()]);
        assert!(f[1].shows("refs/heads/bc 1  "));
        assert!(!f[1].shows("refs/heads/b 1  "));
        assert!(!f[0].shows("refs/tags/t 1  "));
        assert!(!f[1].shows("refs/custom/x 1  "));
        assert!(filters(&[]).is_empty());
    }

    /// `--points-at` keeps a ref whose object is the id or whose tag peels to it; a tag id
    /// keeps only refs holding the tag itself. A git that left out the ref holding the tag,
    /// or showed the one holding the commit for the tag id, fails the comparison.
    #[test]
    fn points_at_keeps_values_and_peeled_tags() {
        let full: Vec<String> = [
            "refs/heads/c C  ",
            "refs/tags/t T C ",
            "refs/tags/u T2 C2 ",
            "refs/x/s C  refs/heads/c",
            "refs/heads/d D  ",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let commit = Filter {
            points_at: vec!["C".into()],
            ..Filter::default()
        };
        let expect = expected_listing(&full, &commit);
        assert_eq!(
            expect,
            [
                "refs/heads/c C  ",
                "refs/tags/t T C ",
                "refs/x/s C  refs/heads/c"
            ]
        );
        let tag = Filter {
            points_at: vec!["T".into()],
            ..Filter::default()
        };
        assert_eq!(expected_listing(&full, &tag), ["refs/tags/t T C "]);
        // A git that did not peel: the comparison names the ref it left out.
        let unpeeled = ["refs/heads/c C  ", "refs/x/s C  refs/heads/c"];
        assert_ne!(unpeeled.as_slice(), expect.as_slice());
        let d = listing_difference(&commit.shown(), &expect, &unpeeled, &[]);
        assert_eq!(d, "for-each-ref --points-at=C: left out [\"refs/tags/t\"]");
        let listed = Filter {
            refs_list: true,
            ..commit
        };
        assert_eq!(listed.shown(), "refs list --points-at=C");
        assert_eq!(listed.args()[..3], ["refs", "list", FORMAT]);
    }

    #[test]
    fn a_prefix_exclusion_is_named_as_such() {
        let expect = ["refs/heads/a-b X", "refs/heads/ab X", "refs/heads/b X"];
        let view = ["refs/heads/b X"];
        let d = listing_difference("for-each-ref", &expect, &view, &["refs/heads/a".into()]);
        assert_eq!(
            d,
            "for-each-ref: left out as byte-prefix matches of an --exclude \
             [\"refs/heads/a-b\", \"refs/heads/ab\"]"
        );
        let ex = ["refs/heads/x".to_string()];
        let d = listing_difference("for-each-ref", &expect, &["refs/heads/ab Y"], &ex);
        assert_eq!(
            d,
            "for-each-ref: left out though no --exclude matches them [\"refs/heads/a-b\", \
             \"refs/heads/ab\", \"refs/heads/b\"]; shown unexpectedly [\"refs/heads/ab Y\"]"
        );
    }
}
