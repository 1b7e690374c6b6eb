//! git's own view of a repository, item by item: where an implementation's reading of a
//! damaged stack differs from the undamaged state, git is asked about exactly those refs and
//! reflogs. When git reads each of them as the implementation did, the reading is git's
//! (the implementation shares git's library or its rules), not the implementation's finding.

use std::collections::BTreeMap;
use std::path::Path;

use crate::cases::executor::Executor;
use crate::git::driver::Exit;
use crate::snapshot::{SValue, Snapshot};

/// How long git may take to answer one question about a damaged repository.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether git, reading the repository `repo`, sees every ref and reflog on which `got`
/// differs from `want` as `got` has it: refs under `refs/` from `for-each-ref`, others
/// (`HEAD`, `ORIG_HEAD`, ...) one by one, since git lists them by version-dependent means.
pub fn git_reads_so(exec: &Executor<'_>, repo: &Path, got: &Snapshot, want: &Snapshot) -> bool {
    let refs = differing(&got.refs, &want.refs);
    let logs = differing(&got.logs, &want.logs);
    if refs.is_empty() && logs.is_empty() {
        return true;
    }
    // A damaged stack can make git hang (see the registry's damaged entries): each
    // question is bounded, and a git that does not answer does not agree.
    let git = |args: &[&str]| {
        let g = exec.env_git();
        g.run_command_within(&mut g.command(repo, exec.tick()), args, "", TIMEOUT)
    };
    let (listed_refs, root): (Vec<&String>, Vec<&String>) =
        refs.into_iter().partition(|n| n.starts_with("refs/"));
    let root_agrees = root.into_iter().all(|n| {
        let sym = git(&["symbolic-ref", "-q", n]);
        let theirs = if sym.exit.success() {
            Some((String::new(), sym.stdout.trim().to_string()))
        } else {
            let id = git(&["rev-parse", "-q", "--verify", n]);
            (id.exit.success()).then(|| (id.stdout.trim().to_string(), String::new()))
        };
        same_ref(got.refs.get(n), theirs.as_ref())
    });
    if !root_agrees {
        return false;
    }
    let refs = listed_refs;
    if !refs.is_empty() {
        let listing = git(&[
            "for-each-ref",
            "--format=%(refname) %(objectname) %(symref)",
        ]);
        if !listing.exit.success() {
            return false;
        }
        let theirs = listed(&listing.stdout);
        if refs
            .iter()
            .any(|n| !same_ref(got.refs.get(*n), theirs.get(*n)))
        {
            return false;
        }
    }
    logs.into_iter().all(|n| {
        let exists = git(&["reflog", "exists", n]).exit == Exit::Code(0);
        let Some(entries) = got.logs.get(n) else {
            return !exists;
        };
        let shown = git(&["reflog", "show", "--format=%H", n, "--"]);
        let ids: Vec<&str> = shown.stdout.lines().collect();
        exists && shown.exit.success() && ids.iter().eq(entries.iter().map(|e| &e.new))
    })
}

/// The names whose values differ between two maps.
fn differing<'a, V: PartialEq>(
    a: &'a BTreeMap<String, V>,
    b: &'a BTreeMap<String, V>,
) -> Vec<&'a String> {
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    names.retain(|n| a.get(*n) != b.get(*n));
    names
}

/// `for-each-ref`'s lines: each ref's object id and symref target (empty for none).
fn listed(out: &str) -> BTreeMap<String, (String, String)> {
    (out.lines())
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            let (name, id) = (f.next()?, f.next()?);
            Some((name.into(), (id.into(), f.next().unwrap_or("").into())))
        })
        .collect()
}

/// Whether a ref as read equals git's listing of it (absent in both, the same id, or the
/// same symref target).
fn same_ref(got: Option<&SValue>, git: Option<&(String, String)>) -> bool {
    match (got, git) {
        (None, None) => true,
        (Some(SValue::Oid(id, _)), Some((gid, target))) => target.is_empty() && id == gid,
        (Some(SValue::Symref(t)), Some((_, target))) => t == target,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_and_refs_compare() {
        let l = listed("refs/heads/a 1111 \nrefs/heads/s 1111 refs/heads/a\n");
        let oid = SValue::Oid("1111".into(), None);
        assert!(same_ref(Some(&oid), l.get("refs/heads/a")));
        assert!(!same_ref(Some(&oid), l.get("refs/heads/s")));
        let sym = SValue::Symref("refs/heads/a".into());
        assert!(same_ref(Some(&sym), l.get("refs/heads/s")));
        assert!(!same_ref(Some(&oid), None));
        assert!(same_ref(None, l.get("refs/heads/none")));
    }

    #[test]
    fn only_differing_names() {
        let a: BTreeMap<String, u8> = [("x".into(), 1), ("y".into(), 2)].into();
        let b: BTreeMap<String, u8> = [("x".into(), 1), ("z".into(), 3)].into();
        assert_eq!(differing(&a, &b), vec!["y", "z"]);
    }
}
