//! The case's refs migrated to the files format, at the end of a case, on a copy of git's
//! repository: `git refs migrate --ref-format=files` must go through and write every ref the
//! model holds, root refs and symrefs to refs that do not exist included (git migrates raw
//! refs, broken ones too), with the same value. Only gits that migrate reflogs (2.48+; 2.46
//! and 2.47 refuse a repository with reflogs) and cases without a linked worktree (git
//! refuses to migrate those). The files are read with our reader of the files format, not
//! through git, whose iteration leaves dangling symrefs out.

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

/// A value as the comparison shows it: the id, or `ref: ` and the target.
fn shown(t: &Target) -> String {
    match t {
        Target::Object(id) => id.to_string(),
        Target::Symref(name) => format!("ref: {}", String::from_utf8_lossy(name)),
    }
}
