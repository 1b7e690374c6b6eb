//! Our side of a migration: a stack with the case's options (fitted to the git, as the
//! generated mode fits them), filled by importing a files repository, and exported back to
//! a files layout.

use std::path::{Path, PathBuf};

use reftable::refdb::{FilesRefs, RefDb, RefDbOptions};
use reftable::{HashId, StackOptions, WriteOptions};

use crate::git::profile::Profile;
use crate::migrate::compare::only_table;
use crate::ops::CaseOptions;
use crate::setup::env::Env;
use crate::setup::pool::PoolObjects;

/// Where our stack of a case goes, and how it is written.
pub(crate) struct OurStack {
    /// The stack directory.
    dir: PathBuf,
    /// The case's object hash.
    hash: HashId,
    /// The options our ref database is opened with.
    options: RefDbOptions,
}

impl OurStack {
    /// The stack directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// A stack in `dir` with the options of the case `opts` as the git of `profile` takes
    /// them; nothing is written yet.
    pub(crate) fn new(dir: PathBuf, opts: CaseOptions, profile: &Profile) -> OurStack {
        let hash = opts.hash();
        let fitted = crate::cases::executor::fit(opts, profile);
        let options = RefDbOptions::default().stack(
            StackOptions::default()
                .write(
                    WriteOptions::default()
                        .block_size(fitted.block_size)
                        .restart_interval(fitted.restart_interval)
                        .index_objects(fitted.index_objects)
                        .hash(hash),
                )
                .auto_compaction(false)
                .fsync(false),
        );
        OurStack { dir, hash, options }
    }

    /// Import the refs and reflogs of the files repository `files` (its work tree) into
    /// the stack: the one table that makes.
    pub(crate) fn import(&self, env: &Env, files: &Path) -> Result<Vec<u8>, String> {
        let refs = FilesRefs::read(&files.join(".git"), self.hash).map_err(|e| format!("{e:#}"))?;
        let mut db =
            RefDb::open_or_create(&self.dir, self.options).map_err(|e| format!("{e:#}"))?;
        db.import(&refs, &PoolObjects(&env.pool(self.hash).pool))
            .map_err(|e| format!("{:?}: {e:#}", e.kind()))?;
        only_table(&self.dir)
    }

    /// Write the stack's refs and reflogs as a files layout into `to`.
    pub(crate) fn export(&self, env: &Env, to: &Path) -> reftable::Result<()> {
        RefDb::open_or_create(&self.dir, self.options)
            .and_then(|db| db.export_files(to, &PoolObjects(&env.pool(self.hash).pool)))
    }
}
