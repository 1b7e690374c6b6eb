//! The files-backend twin: a second repository with git's classic `refs/` files, driven
//! through libgit2 (git2), which receives every transaction git accepted. Its ref state must
//! equal the reftable side's: a cross-backend oracle for what a ref store holds. The twin
//! remembers the names it wrote, so a comparison after a step can read just those back.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use git2::{ErrorCode, Repository};

use crate::ops::{Update, Value};
use crate::snapshot::SValue;

/// A files-backend repository driven through libgit2.
pub struct Twin {
    repo: Repository,
    /// The names written since [`Twin::take_written`] last took them.
    written: RefCell<BTreeSet<String>>,
}

impl Twin {
    /// Open the files-backend repository at `dir` (created by git with `--ref-format=files`).
    pub fn open(dir: &Path) -> Result<Twin, String> {
        // The twin only receives transactions git accepted, so git checked their objects.
        git2::opts::strict_object_creation(false);
        let repo = Repository::open(dir)
            .map_err(|e| format!("libgit2 cannot open {}: {e}", dir.display()))?;
        // The repository's own configuration only, as the gits run with: libgit2 would also
        // read the machine's global and system files (a `core.*` setting there would reach
        // the twin), and look at each of them again for every ref it writes.
        let own = || -> Result<(), git2::Error> {
            let mut config = git2::Config::new()?;
            config.add_file(&repo.path().join("config"), git2::ConfigLevel::Local, false)?;
            repo.set_config(&config)
        };
        own().map_err(|e| format!("libgit2 cannot read {}'s config: {e}", dir.display()))?;
        Ok(Twin {
            repo,
            written: RefCell::default(),
        })
    }

    /// The names the twin wrote (created, updated, deleted, renamed to or from) since this was
    /// last called: the only names whose values can have changed.
    pub fn take_written(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.written.borrow_mut())
    }

    fn wrote(&self, name: &str) {
        self.written.borrow_mut().insert(name.to_string());
    }

    /// The direct value of `name` (a symref's target, not followed), as [`Twin::refs`] lists it.
    pub fn value(&self, name: &str) -> Option<SValue> {
        self.read(name).map(|v| match v {
            Value::Symref(t) => SValue::Symref(t),
            Value::Oid(h) => SValue::Oid(h, None),
        })
    }

    fn read(&self, name: &str) -> Option<Value> {
        match self.repo.find_reference(name) {
            Ok(r) => {
                if let Ok(Some(t)) = r.symbolic_target() {
                    Some(Value::Symref(t.to_string()))
                } else {
                    r.target().map(|id| Value::Oid(id.to_string()))
                }
            }
            Err(_) => None,
        }
    }

    /// The ref a non-`no_deref` update of `name` lands on: the end of its symref chain (git
    /// splits an update hop by hop with no depth limit; loops are refused before this).
    fn final_name(&self, name: &str) -> String {
        let mut name = name.to_string();
        for _ in 0..64 {
            match self.read(&name) {
                Some(Value::Symref(t)) => name = t,
                _ => break,
            }
        }
        name
    }

    /// Apply a transaction git accepted, with git's dereferencing rules, through libgit2.
    pub fn apply(&self, updates: &[Update], message: &str) -> Result<(), String> {
        for u in updates {
            let is_symref = matches!(self.read(&u.refname), Some(Value::Symref(_)));
            let target = if u.no_deref || !is_symref {
                u.refname.clone()
            } else {
                self.final_name(&u.refname)
            };
            self.wrote(&target);
            let res = match &u.new {
                None => Ok(()),
                Some(Value::Symref(t)) => self
                    .repo
                    .reference_symbolic(&target, t, true, message)
                    .map(|_| ()),
                Some(Value::Oid(h)) => {
                    let id = git2::Oid::from_str(h).map_err(|e| e.to_string())?;
                    if id.is_zero() {
                        match self.repo.find_reference(&target) {
                            Ok(mut r) => r.delete(),
                            Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
                            Err(e) => Err(e),
                        }
                    } else {
                        self.repo.reference(&target, id, true, message).map(|_| ())
                    }
                }
            };
            res.map_err(|e| format!("libgit2: {}: {e}", u.refname))?;
        }
        Ok(())
    }

    /// `git branch -m/-c` git accepted: libgit2's own rename (a copy is a create), then, with
    /// `follow_head` (`git branch`, not `git refs rename`), `HEAD` follows a renamed branch
    /// it pointed at, as git's command does.
    pub fn move_branch(
        &self,
        old: &str,
        new: &str,
        copy: bool,
        follow_head: bool,
    ) -> Result<(), String> {
        let e = |e: git2::Error| format!("libgit2: branch {old} -> {new}: {e}");
        for name in [old, new, "HEAD"] {
            self.wrote(name);
        }
        let mut r = self.repo.find_reference(old).map_err(e)?;
        if copy {
            let id = r
                .target()
                .ok_or_else(|| format!("libgit2: {old} is not a direct ref"))?;
            self.repo.reference(new, id, true, "copy").map_err(e)?;
            return Ok(());
        }
        let was_head = matches!(self.read("HEAD"), Some(Value::Symref(t)) if t == old);
        r.rename(new, true, "rename").map_err(e)?;
        // libgit2's rename points HEAD at the new name itself; `git refs rename` does not.
        if was_head {
            let target = if follow_head { new } else { old };
            self.repo
                .reference_symbolic("HEAD", target, true, "rename")
                .map_err(e)?;
        }
        Ok(())
    }

    /// Every ref (HEAD and root refs included) with its direct value.
    pub fn refs(&self) -> Result<BTreeMap<String, SValue>, String> {
        let mut out = BTreeMap::new();
        let refs = self.repo.references().map_err(|e| e.to_string())?;
        for r in refs {
            let r = r.map_err(|e| e.to_string())?;
            let Ok(name) = r.name() else { continue };
            let v = if let Ok(Some(t)) = r.symbolic_target() {
                SValue::Symref(t.to_string())
            } else if let Some(id) = r.target() {
                SValue::Oid(id.to_string(), None)
            } else {
                continue;
            };
            out.insert(name.to_string(), v);
        }
        for root in ["HEAD", "ORIG_HEAD"] {
            if let Some(v) = self.value(root) {
                out.insert(root.to_string(), v);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(name: &str, new: Value) -> Update {
        Update {
            refname: name.into(),
            new: Some(new),
            old: None,
            no_deref: false,
        }
    }

    /// A new repository in `dir` with `key` set to `value` in its config, and the twin on it.
    fn twin_with(dir: &Path, key: &str, value: &str) -> Twin {
        let repo = Repository::init(dir).unwrap();
        repo.config().unwrap().set_str(key, value).unwrap();
        Twin::open(dir).unwrap()
    }

    /// The twin reads its repository's configuration and no other: not the machine's global
    /// or system files, which the gits do not read either.
    #[test]
    fn the_twin_reads_only_its_repository_config() {
        let dir = tempfile::tempdir().unwrap();
        let twin = twin_with(dir.path(), "core.twinprobe", "local");
        let config = twin.repo.config().unwrap();
        assert_eq!(config.get_string("core.twinprobe").unwrap(), "local");
        let mut levels = Vec::new();
        let mut entries = config.entries(None).unwrap();
        while let Some(entry) = entries.next() {
            levels.push(entry.unwrap().level());
        }
        assert!(!levels.is_empty());
        assert!(
            levels.iter().all(|l| *l == git2::ConfigLevel::Local),
            "{levels:?}"
        );
        for level in [
            git2::ConfigLevel::System,
            git2::ConfigLevel::XDG,
            git2::ConfigLevel::Global,
        ] {
            assert!(config.open_level(level).is_err(), "{level:?}");
        }
    }

    /// A ref libgit2 cannot look up (a generated name can be 4,035 bytes; libgit2 takes
    /// names shorter than 1,024) is refused when written, which retires the twin: never a
    /// write reported done that does not read back (as through libgit2's transactions).
    #[test]
    fn a_write_it_reports_done_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        // As the twin's repository is made: no reflogs.
        let twin = twin_with(dir.path(), "core.logAllRefUpdates", "false");
        let a = "a".repeat(40);
        for len in [100, 1023, 1024, 4035] {
            let name = crate::cases::generate::name_of_length(len, "t");
            if twin
                .apply(&[update(&name, Value::Oid(a.clone()))], "m")
                .is_ok()
            {
                let v = twin.value(&name);
                assert_eq!(
                    v,
                    Some(SValue::Oid(a.clone(), None)),
                    "a name of {len} bytes"
                );
            } else {
                assert!(len >= 1024, "a name of {len} bytes refused");
            }
        }
    }

    #[test]
    fn the_twin_names_what_it_wrote_and_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        let twin = Twin::open(dir.path()).unwrap();
        let a = "a".repeat(40);
        twin.take_written();
        let head = Update {
            no_deref: true,
            ..update("HEAD", Value::Symref("refs/heads/main".into()))
        };
        twin.apply(&[head], "m").unwrap();
        // An update through HEAD lands on (and names) its referent.
        twin.apply(&[update("HEAD", Value::Oid(a.clone()))], "m")
            .unwrap();
        let written: Vec<String> = twin.take_written().into_iter().collect();
        assert_eq!(written, ["HEAD", "refs/heads/main"]);
        assert!(twin.take_written().is_empty());
        assert_eq!(
            twin.value("refs/heads/main"),
            Some(SValue::Oid(a.clone(), None))
        );
        assert_eq!(
            twin.value("HEAD"),
            Some(SValue::Symref("refs/heads/main".into()))
        );
        twin.move_branch("refs/heads/main", "refs/heads/next", false, true)
            .unwrap();
        let written: Vec<String> = twin.take_written().into_iter().collect();
        assert_eq!(written, ["HEAD", "refs/heads/main", "refs/heads/next"]);
        assert_eq!(twin.value("refs/heads/main"), None);
        assert_eq!(twin.refs().unwrap().len(), 2);
    }
}
