//! Which reflog entries `git reflog expire --expire-unreachable=now` prunes for naming a
//! commit the ref does not reach (git's `reflog.c`, the same from 2.45 to master): the tips
//! are the ref's own value when it is a commit or an annotated tag of one, and for `HEAD`
//! the values of every ref under `refs/` that is no symref; an entry goes when its old or
//! new id is, or peels to, a commit no tip reaches (the null id, a tree and a missing object
//! are kept). A ref that is no commit (a symref, a tree, a missing object, no ref at all)
//! has no tip: every entry goes. The pool's commits are one history, so "reaches" is
//! "comes no later in it" ([`Pool::history_place`]).
//!
//! The model's side and ours both ask this, each with the refs it holds: reachability is
//! the command's, above the ref store, as git's `reflog.c` is above its backends.

use reftable::ObjectId;

use crate::setup::pool::Pool;

/// What an expiry's tips reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// No tip: every entry goes.
    NoTip,
    /// The commits up to this place in the pool's history (`None`: no commit at all, as for
    /// a `HEAD` when no ref under `refs/` is a commit).
    UpTo(Option<usize>),
}

/// What the expiry of `target`'s reflog reaches; `refs` are the live refs, each with its
/// direct id (`None` for a symref).
pub fn reach(pool: &Pool, target: &str, refs: &[(String, Option<ObjectId>)]) -> Reach {
    let place = |id: &Option<ObjectId>| id.as_ref().and_then(|id| pool.history_place(id));
    if is_head(target) {
        let tips = refs.iter().filter(|(n, _)| n.starts_with("refs/"));
        return Reach::UpTo(tips.filter_map(|(_, id)| place(id)).max());
    }
    match refs
        .iter()
        .find(|(n, _)| n == target)
        .and_then(|(_, id)| place(id))
    {
        Some(p) => Reach::UpTo(Some(p)),
        None => Reach::NoTip,
    }
}

impl Reach {
    /// Whether an entry from `old` to `new` goes.
    pub fn prunes(self, pool: &Pool, old: &ObjectId, new: &ObjectId) -> bool {
        let Reach::UpTo(last) = self else {
            return true;
        };
        let unreached = |id: &ObjectId| {
            pool.history_place(id)
                .is_some_and(|p| last.map_or(true, |l| p > l))
        };
        unreached(old) || unreached(new)
    }
}

/// `HEAD`, of this worktree or named through another (`main-worktree/HEAD`,
/// `worktrees/<id>/HEAD`), as git's `is_head` strips worktree prefixes.
fn is_head(name: &str) -> bool {
    let stripped = name
        .strip_prefix("main-worktree/")
        .or_else(|| {
            let rest = name.strip_prefix("worktrees/")?;
            Some(rest.split_once('/')?.1)
        })
        .unwrap_or(name);
    stripped == "HEAD"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> Pool {
        let id = |b: u8| ObjectId::from_bytes(&[b; 20]).unwrap();
        Pool {
            commits: (1..=6).map(id).collect(),
            tags: vec![(id(0x71), id(2)), (id(0x74), id(5))],
            tree: id(0x80),
            missing: id(0x90),
        }
    }

    #[test]
    fn a_ref_reaches_its_history_and_head_every_branch() {
        let p = pool();
        let c = |i: usize| p.commits[i];
        let refs = vec![
            ("HEAD".to_string(), None),
            ("refs/heads/a".to_string(), Some(c(1))),
            ("refs/heads/sym".to_string(), None),
            ("refs/tags/t".to_string(), Some(p.tags[1].0)),
            ("refs/heads/tree".to_string(), Some(p.tree)),
        ];
        assert_eq!(reach(&p, "refs/heads/a", &refs), Reach::UpTo(Some(1)));
        assert_eq!(reach(&p, "refs/tags/t", &refs), Reach::UpTo(Some(4)));
        assert_eq!(reach(&p, "HEAD", &refs), Reach::UpTo(Some(4)));
        assert_eq!(reach(&p, "worktrees/w/HEAD", &refs), Reach::UpTo(Some(4)));
        for no_tip in ["refs/heads/sym", "refs/heads/tree", "refs/heads/none"] {
            assert_eq!(reach(&p, no_tip, &refs), Reach::NoTip, "{no_tip}");
        }
        let null = ObjectId::null(reftable::HashId::Sha1);
        let a = Reach::UpTo(Some(1));
        assert!(!a.prunes(&p, &null, &c(1)));
        assert!(a.prunes(&p, &c(0), &c(2)));
        assert!(a.prunes(&p, &p.tags[1].0, &c(0)));
        assert!(!a.prunes(&p, &p.tree, &p.missing));
        assert!(Reach::UpTo(None).prunes(&p, &null, &c(0)));
        assert!(Reach::NoTip.prunes(&p, &null, &null));
    }
}
