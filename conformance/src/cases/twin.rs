//! The files-backend twin: a second repository with git's classic `refs/` files, driven
//! through libgit2 (git2), which receives every transaction git accepted. Its ref state must
//! equal the reftable side's: a cross-backend oracle for what a ref store holds.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{ErrorCode, Repository};

use crate::ops::{Update, Value};
use crate::snapshot::SValue;

/// A files-backend repository driven through libgit2.
pub struct Twin {
    repo: Repository,
}

impl Twin {
    /// Open the files-backend repository at `dir` (created by git with `--ref-format=files`).
    pub fn open(dir: &Path) -> Result<Twin, String> {
        // The twin only receives transactions git accepted, so git checked their objects.
        git2::opts::strict_object_creation(false);
        let repo = Repository::open(dir)
            .map_err(|e| format!("libgit2 cannot open {}: {e}", dir.display()))?;
        Ok(Twin { repo })
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
            if let Some(v) = self.read(root) {
                let v = match v {
                    Value::Symref(t) => SValue::Symref(t),
                    Value::Oid(h) => SValue::Oid(h, None),
                };
                out.insert(root.to_string(), v);
            }
        }
        Ok(out)
    }
}
