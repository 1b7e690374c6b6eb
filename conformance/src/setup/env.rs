//! Everything a run against one git shares (`Env`: the git, its probed profile, scratch
//! space, object pools, freshly initialized repositories to copy) and the repositories made
//! from it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reftable::HashId;
use reftable_testkit::process::run_in_group_capturing;

use crate::git::driver::Git;
use crate::git::profile::Profile;
use crate::ops::CaseOptions;
use crate::setup::pool::ObjectPool;

/// What `/dev/shm` must have free to take the scratch repositories (a container's is often
/// 64 MiB, and others may share it): over ten times what they took at their peak in a
/// default run on two lanes (2.6 MiB, `du` sampled every 0.3 s) and in a damaged run
/// (1 MiB). A tmpfs with less is passed over for the temporary directory.
const SHM_ROOM: u64 = 32 << 20;

/// Where scratch repositories go: a tmpfs when there is one with room (the gate writes and
/// fsyncs many small files), else the system's temporary directory.
/// `REFTABLE_CONFORMANCE_TMP` names another place.
pub fn scratch_base() -> PathBuf {
    if let Some(p) = std::env::var_os("REFTABLE_CONFORMANCE_TMP") {
        return PathBuf::from(p);
    }
    let shm = Path::new("/dev/shm");
    // Where `df` cannot say, the tmpfs is taken as before.
    let roomy = free_bytes(shm).map_or(true, |free| free >= SHM_ROOM);
    if roomy && tempfile::tempdir_in(shm).is_ok() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// The bytes free on the file system of `path`, as `df -Pk` reports them (`None` where it
/// cannot run or says something else).
fn free_bytes(path: &Path) -> Option<u64> {
    let mut df = std::process::Command::new("df");
    df.arg("-Pk").arg(path);
    let (exit, out, _) = run_in_group_capturing(&mut df, Duration::from_secs(10)).ok()?;
    if !exit.success() {
        return None;
    }
    df_free_kib(&out)?.checked_mul(1024)
}

/// The "Available" column of `df -P`'s one line of figures, in KiB.
fn df_free_kib(out: &str) -> Option<u64> {
    out.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()
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

/// Give the repository at `git_dir` the pool's objects: a hard link to each file of the
/// pool's pack (a copy where the file system has no links). git never writes a pack in
/// place. An alternate would serve too, but then git lists the alternate's refs in a
/// process of its own for each `fetch` and `push` (220 of the 7,200 git processes of a
/// default run, and about a tenth of its git CPU).
fn link_pool(git_dir: &Path, objects: &Path) -> Result<(), String> {
    crate::stack_files::scratch_copy(&objects.join("pack"), &git_dir.join("objects/pack"), None)
}

/// A repository of `format` in `dir`, as `git init` makes it (a copy of the env's freshly
/// initialized template), with the case's options in its config and the pool's objects.
pub(crate) fn init_repo(
    env: &Env,
    dir: &Path,
    format: &str,
    opts: &CaseOptions,
) -> Result<(), String> {
    let hash = opts.hash();
    crate::stack_files::copy_dir(env.template(format, hash), dir, None)?;
    link_pool(&dir.join(".git"), &env.pool(hash).objects_dir)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_available_column_of_df() {
        let out = "Filesystem     1024-blocks  Used Available Capacity Mounted on\n\
                   shm                  65536  1024     64512       2% /dev/shm\n";
        assert_eq!(df_free_kib(out), Some(64512));
        assert_eq!(df_free_kib("Filesystem 1024-blocks\n"), None);
        assert_eq!(df_free_kib(""), None);
    }

    #[test]
    fn df_answers_for_the_root() {
        assert!(free_bytes(Path::new("/")).is_some_and(|b| b > 0));
    }
}
