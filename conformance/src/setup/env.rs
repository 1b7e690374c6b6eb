//! Everything a run against one git shares (`Env`: the git, its probed profile, scratch
//! space, object pools, freshly initialized repositories to copy) and the repositories made
//! from it.

use std::path::{Path, PathBuf};

use reftable::HashId;

use crate::git::driver::Git;
use crate::git::profile::Profile;
use crate::ops::CaseOptions;
use crate::setup::pool::ObjectPool;

/// Where scratch repositories go: a tmpfs when there is one (the gate writes and fsyncs many
/// small files), else the system's temporary directory.
pub fn scratch_base() -> PathBuf {
    if let Some(p) = std::env::var_os("REFTABLE_CONFORMANCE_TMP") {
        return PathBuf::from(p);
    }
    let shm = Path::new("/dev/shm");
    let writable = tempfile::tempdir_in(shm).is_ok();
    if writable {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Everything a run against one git shares: the git, its probed profile, a scratch
/// directory, one object pool per hash.
pub struct Env {
    /// The git under test.
    pub git: Git,
    /// What it does.
    pub profile: Profile,
    /// Scratch space.
    pub dir: tempfile::TempDir,
    sha1: ObjectPool,
    sha256: ObjectPool,
    /// Freshly initialized repositories, copied for each case instead of running `git init`
    /// again: (ref format, hash) → template directory.
    templates: Vec<((&'static str, HashId), PathBuf)>,
}

impl Env {
    /// Probe `git` and prepare its object pools.
    pub fn new(git: Git) -> Result<Env, String> {
        let profile = crate::git::profile::probe(&git)?;
        let dir = tempfile::Builder::new()
            .prefix("reftable-conformance-")
            .tempdir_in(scratch_base())
            .map_err(|e| e.to_string())?;
        let sha1 = ObjectPool::create(&git, dir.path(), HashId::Sha1)?;
        let sha256 = ObjectPool::create(&git, dir.path(), HashId::Sha256)?;
        let mut templates = Vec::new();
        for format in ["reftable", "files"] {
            for hash in [HashId::Sha1, HashId::Sha256] {
                let t = dir
                    .path()
                    .join(format!("template-{format}-{}", hash.name()));
                std::fs::create_dir_all(&t).map_err(|e| e.to_string())?;
                git.ok(
                    &t,
                    &[
                        "init",
                        "-q",
                        "--template=",
                        &format!("--ref-format={format}"),
                        &format!("--object-format={}", hash.name()),
                        "-b",
                        "main",
                        ".",
                    ],
                    "",
                )?;
                templates.push(((format, hash), t));
            }
        }
        Ok(Env {
            git,
            profile,
            dir,
            sha1,
            sha256,
            templates,
        })
    }

    fn template(&self, format: &str, hash: HashId) -> &Path {
        &self
            .templates
            .iter()
            .find(|((f, h), _)| *f == format && *h == hash)
            .expect("a template for every format and hash")
            .1
    }

    /// The pool of `hash`.
    pub fn pool(&self, hash: HashId) -> &ObjectPool {
        match hash {
            HashId::Sha1 => &self.sha1,
            HashId::Sha256 => &self.sha256,
        }
    }
}

fn write_alternates(git_dir: &Path, objects: &Path) -> Result<(), String> {
    let info = git_dir.join("objects/info");
    std::fs::create_dir_all(&info).map_err(|e| e.to_string())?;
    std::fs::write(info.join("alternates"), format!("{}\n", objects.display()))
        .map_err(|e| e.to_string())
}

/// A repository of `format` in `dir`, as `git init` makes it (a copy of the env's freshly
/// initialized template), with the case's options in its config and the pool as alternate.
pub(crate) fn init_repo(
    env: &Env,
    dir: &Path,
    format: &str,
    opts: &CaseOptions,
) -> Result<(), String> {
    let hash = opts.hash();
    crate::stack_files::copy_dir(env.template(format, hash), dir, None)?;
    write_alternates(&dir.join(".git"), &env.pool(hash).objects_dir)?;
    // git reads later sections over earlier ones. No maintenance after a push
    // (`receive.autogc`): from 2.5x it packs the refs, which the case does not ask for.
    let config = format!(
        "[reftable]\n\tblockSize = {}\n\trestartInterval = {}\n\tindexObjects = {}\n[core]\n\tlogAllRefUpdates = {}\n[receive]\n\tautogc = false\n",
        opts.block_size,
        opts.restart_interval,
        opts.index_objects,
        opts.log_refs.as_str()
    );
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(".git/config"))
        .and_then(|mut f| f.write_all(config.as_bytes()))
        .map_err(|e| format!("config: {e}"))
}
