//! The case's refs migrated to the files format, at the end of a case, on a copy of git's
//! repository: `git refs migrate --ref-format=files` must go through and write every ref the
//! model holds, root refs and symrefs to refs that do not exist included (git migrates raw
//! refs, broken ones too), with the same value. Only gits that migrate reflogs (2.48+; 2.46
//! and 2.47 refuse a repository with reflogs) and cases without a linked worktree (git
//! refuses to migrate those). The files are read with our reader of the files format, not
//! through git, whose iteration leaves dangling symrefs out.
//!
//! git writes every ref and every reflog entry in one files transaction, and its
//! directory/file check counts a reflog's name as a ref's: a reflog whose name is under a
//! ref's (the reflog of a deleted `refs/heads/a/b` beside a ref `refs/heads/a`), or a ref's
//! under a reflog's, makes git refuse the migration, naming the two (in one wording or
//! another, by the order it met them), and leave the
//! repository as it was. The model predicts those pairs; a refusal naming one of them is
//! what git should do.

use reftable::refdb::FilesRefs;
use reftable::Target;

use crate::cases::executor::checks::ProbeError;
use crate::cases::executor::Executor;
use crate::model::MValue;

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_migrated_to_files(&self) -> Result<(), ProbeError> {
        if !self.env.profile.features.migrate_reflogs || self.opts.worktree {
            return Ok(());
        }
        let scratch = self.copy_of_git_repo()?;
        let args = ["refs", "migrate", "--ref-format=files"];
        let out = self.env.git.run(scratch.path(), &args, "", self.tick);
        if !out.exit.success() {
            if self.conflict_named(&out.stderr) {
                return Ok(());
            }
            return Err(format!(
                "refs migrate --ref-format=files: {:?}, {:?}",
                out.exit,
                out.stderr.trim()
            )
            .into());
        }
        let files = FilesRefs::read(&scratch.path().join(".git"), self.hash)
            .map_err(|e| format!("reading the migrated refs: {e:#}"))?;
        let got: Vec<(String, String)> = files
            .refs
            .iter()
            .map(|(name, t)| (String::from_utf8_lossy(name).into_owned(), shown(t)))
            .collect();
        let want: Vec<(String, String)> = (self.model.refs.iter())
            .map(|(name, v)| {
                let v = match v {
                    MValue::Oid(id) => id.to_string(),
                    MValue::Symref(t) => format!("ref: {t}"),
                };
                (name.clone(), v)
            })
            .collect();
        if got != want {
            let lacking: Vec<&(String, String)> =
                want.iter().filter(|r| !got.contains(r)).collect();
            let extra: Vec<&(String, String)> = got.iter().filter(|r| !want.contains(r)).collect();
            return Err(format!(
                "refs migrate --ref-format=files: not migrated as the model holds them \
                 {lacking:?}; not in the model {extra:?}"
            )
            .into());
        }
        Ok(())
    }
}

impl Executor<'_> {
    /// Whether `stderr` is git's refusal of a migration for two names the model holds, one
    /// a directory of the other, among its refs and its reflogs with entries.
    fn conflict_named(&self, stderr: &str) -> bool {
        let Some((a, b)) = refused_pair(stderr) else {
            return false;
        };
        let under = |n: &str, d: &str| n.strip_prefix(d).is_some_and(|r| r.starts_with('/'));
        let (name, dir) = if under(a, b) { (a, b) } else { (b, a) };
        let held = |n: &str| {
            self.model.refs.contains_key(n) || self.model.logs.get(n).is_some_and(|l| !l.is_empty())
        };
        under(name, dir) && held(name) && held(dir)
    }
}

/// The two names of git's directory/file refusal: "cannot process 'A' and 'B' at the same
/// time" (both in the transaction), or "'B' exists; cannot create 'A'" (`B` written before
/// `A` came; either may be the one under the other).
fn refused_pair(stderr: &str) -> Option<(&str, &str)> {
    stderr.lines().find_map(|line| {
        let between = |text: &'static str, end: &'static str| {
            let rest = line.split_once(text)?.1;
            let (a, rest) = rest.split_once("' and '")?;
            Some((a, rest.split_once(end)?.0))
        };
        between("cannot process '", "' at the same time").or_else(|| {
            let rest = line.split_once("error: '")?.1;
            let (b, rest) = rest.split_once("' exists; cannot create '")?;
            Some((rest.strip_suffix('\'')?, b))
        })
    })
}

/// A value as the comparison shows it: the id, or `ref: ` and the target.
fn shown(t: &Target) -> String {
    match t {
        Target::Object(id) => id.to_string(),
        Target::Symref(name) => format!("ref: {}", String::from_utf8_lossy(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::refused_pair;

    #[test]
    fn gits_refusal_names_the_pair() {
        let e = "error: cannot process 'refs/heads/a/b' and 'refs/heads/a' at the same time";
        assert_eq!(refused_pair(e), Some(("refs/heads/a/b", "refs/heads/a")));
        let e = "error: 'refs/heads/a' exists; cannot create 'refs/heads/a/b'";
        assert_eq!(refused_pair(e), Some(("refs/heads/a/b", "refs/heads/a")));
        let e = "error: 'refs/heads/a/b' exists; cannot create 'refs/heads/a'";
        assert_eq!(refused_pair(e), Some(("refs/heads/a", "refs/heads/a/b")));
        assert_eq!(refused_pair("error: some other failure"), None);
    }
}
