//! The objects a case's refs point at: one bare repository per hash with commits, annotated
//! tags and a tree, shared by every case of a run through hard links to its pack, and the
//! answers the library and the model get about them.

use std::path::{Path, PathBuf};

use reftable::refdb::{LookupError, ObjectKind, ObjectLookup};
use reftable::{HashId, ObjectId};

use crate::git::driver::{Git, BASE_TIME, EMAIL, NAME};
use crate::model::Objects;

/// The objects a case can point refs at.
#[derive(Clone, Debug)]
pub struct Pool {
    /// Commits, oldest first: one history, each commit's parent the one before it.
    pub commits: Vec<ObjectId>,
    /// Annotated tags with what they peel to.
    pub tags: Vec<(ObjectId, ObjectId)>,
    /// A tree (not a commit).
    pub tree: ObjectId,
    /// An id no object has.
    pub missing: ObjectId,
}

/// Objects of one hash, shared by every case of a run through hard links to its pack.
pub struct ObjectPool {
    /// The pool's `objects` directory.
    pub objects_dir: PathBuf,
    /// The ids.
    pub pool: Pool,
}

impl ObjectPool {
    /// Create a bare repository with commits, annotated tags and a tree.
    pub fn create(git: &Git, dir: &Path, hash: HashId) -> Result<ObjectPool, String> {
        let repo = dir.join(format!("pool-{}", hash.name()));
        let repo_s = repo.to_str().ok_or("non-UTF-8 temp path")?;
        git.ok(
            dir,
            &[
                "init",
                "-q",
                "--bare",
                &format!("--object-format={}", hash.name()),
                repo_s,
            ],
            "",
        )?;
        let tree = git.ok(&repo, &["mktree"], "")?.trim().to_string();
        let mut commits = Vec::new();
        let mut parent: Option<String> = None;
        for i in 0..6 {
            let mut args = vec!["commit-tree".to_string(), tree.clone()];
            if let Some(p) = &parent {
                args.push("-p".into());
                args.push(p.clone());
            }
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let c = git
                .ok(&repo, &a, &format!("commit {i}\n"))?
                .trim()
                .to_string();
            commits.push(ObjectId::from_hex(&c).ok_or("bad commit id")?);
            parent = Some(c);
        }
        let mut tags = Vec::new();
        for (i, target) in [commits[1], commits[4]].into_iter().enumerate() {
            let text = format!(
                "object {target}\ntype commit\ntag tag{i}\ntagger {NAME} <{EMAIL}> {BASE_TIME} -0700\n\nannotated {i}\n"
            );
            let t = git.ok(&repo, &["mktag"], &text)?.trim().to_string();
            tags.push((ObjectId::from_hex(&t).ok_or("bad tag id")?, target));
        }
        pack(git, &repo, &commits, &tags, &tree)?;
        let mut missing = vec![0xdb; hash.size()];
        missing[0] = 0x01;
        Ok(ObjectPool {
            objects_dir: repo.join("objects"),
            pool: Pool {
                commits,
                tags,
                tree: ObjectId::from_hex(&tree).ok_or("bad tree id")?,
                missing: ObjectId::from_bytes(&missing).expect("size"),
            },
        })
    }
}

/// Move the pool's objects into one pack. Every git a case runs that reads an object
/// (`for-each-ref` peeling each ref, `push`, `reflog expire`, `log -g`) finds it in the
/// pack: a loose object costs git an open, a map and an inflate each time it is read, and
/// a listing that peels 300 refs was four times as costly in CPU.
fn pack(
    git: &Git,
    repo: &Path,
    commits: &[ObjectId],
    tags: &[(ObjectId, ObjectId)],
    tree: &str,
) -> Result<(), String> {
    let mut ids: Vec<String> = commits.iter().map(ObjectId::to_string).collect();
    ids.extend(tags.iter().map(|(t, _)| t.to_string()));
    ids.push(tree.to_string());
    let list = ids.join("\n") + "\n";
    git.ok(repo, &["pack-objects", "-q", "objects/pack/pool"], &list)?;
    git.ok(repo, &["prune-packed", "-q"], "")?;
    Ok(())
}

/// [`ObjectLookup`] and [`Objects`] over a pool.
pub struct PoolObjects<'a>(pub &'a Pool);

impl ObjectLookup for PoolObjects<'_> {
    fn lookup(&self, id: &ObjectId) -> Result<ObjectKind, LookupError> {
        Ok(self.kind(id))
    }
}

impl Pool {
    /// The place in [`Pool::commits`] of the commit `id` is or peels to (an annotated tag of
    /// it); `None` for anything else. A commit reaches exactly those at or before its place.
    pub fn history_place(&self, id: &ObjectId) -> Option<usize> {
        let commit = match self.tags.iter().find(|(t, _)| t == id) {
            Some((_, peeled)) => peeled,
            None => id,
        };
        self.commits.iter().position(|c| c == commit)
    }

    /// What `git tag`'s reflog message says of `id` in parentheses: a commit's subject and
    /// its committer date as a UTC day (the pool's commits are made at tick 0, subject
    /// `commit <place>`), `other tag object` for an annotated tag, `tree object`; `None` for
    /// an id no object has (git refuses to tag it).
    pub fn tag_description(&self, id: &ObjectId) -> Option<String> {
        if let Some(place) = self.commits.iter().position(|c| c == id) {
            Some(format!("commit {place}, {}", utc_day(BASE_TIME)))
        } else if self.tags.iter().any(|(t, _)| t == id) {
            Some("other tag object".into())
        } else if *id == self.tree {
            Some("tree object".into())
        } else {
            None
        }
    }
}

impl PoolObjects<'_> {
    /// What `id` is in the pool.
    pub fn kind(&self, id: &ObjectId) -> ObjectKind {
        if self.0.commits.contains(id) {
            ObjectKind::Commit
        } else if let Some((_, p)) = self.0.tags.iter().find(|(t, _)| t == id) {
            ObjectKind::Tag { peeled: *p }
        } else if *id == self.0.tree {
            ObjectKind::Other
        } else {
            ObjectKind::Missing
        }
    }
}

impl Objects for PoolObjects<'_> {
    fn is_commit(&self, id: &ObjectId) -> Option<bool> {
        match self.kind(id) {
            ObjectKind::Missing => None,
            ObjectKind::Commit => Some(true),
            _ => Some(false),
        }
    }
}

/// `YYYY-MM-DD` of the UTC day `secs` after the epoch (the civil calendar from a day count,
/// as in Howard Hinnant's `civil_from_days`).
fn utc_day(secs: u64) -> String {
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days against `date -u -d @SECS +%F`.
    #[test]
    fn utc_days() {
        assert_eq!(utc_day(0), "1970-01-01");
        assert_eq!(utc_day(BASE_TIME), "2005-04-07");
        assert_eq!(utc_day(951_825_600), "2000-02-29");
        assert_eq!(utc_day(4_107_542_399), "2100-02-28");
        assert_eq!(utc_day(4_107_542_400), "2100-03-01");
    }
}
