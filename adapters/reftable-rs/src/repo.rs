//! Opening a git directory: the stack in `reftable/`, with the options git would use for it,
//! read from the repository's `config` (object format, `core.bare`,
//! `core.logAllRefUpdates`, `reftable.*`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use reftable::refdb::LogRefs;
use reftable::{HashId, RefDb, RefDbOptions, StackOptions};

/// The settings of one repository's `config` that the ref store follows.
#[derive(Debug, Default)]
struct Config {
    /// `section.key` (lowercased) → value, last one wins.
    entries: Vec<(String, String)>,
}

impl Config {
    /// Read `gitdir/config`; a missing file is an empty configuration.
    fn read(gitdir: &Path) -> Config {
        let text = std::fs::read_to_string(gitdir.join("config")).unwrap_or_default();
        let mut section = String::new();
        let mut entries = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix('[') {
                let head = rest.split(']').next().unwrap_or("");
                section = head
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                continue;
            }
            if line.is_empty() || line.starts_with(['#', ';']) {
                continue;
            }
            let (k, v) = line.split_once('=').unwrap_or((line, "true"));
            let v = v
                .split(['#', ';'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('"');
            entries.push((
                format!("{section}.{}", k.trim().to_ascii_lowercase()),
                v.to_string(),
            ));
        }
        Config { entries }
    }

    /// The last value of `key` (`section.key`, lowercase).
    fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `key` as git's boolean.
    fn get_bool(&self, key: &str) -> Option<bool> {
        match self.get(key)?.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" | "" => Some(false),
            _ => None,
        }
    }

    /// `key` as a number.
    fn get_num<T: std::str::FromStr>(&self, key: &str) -> Option<T> {
        self.get(key)?.parse().ok()
    }
}

/// An open repository: its git directory, stack and hash.
#[derive(Debug)]
pub struct Repo {
    /// The git directory.
    pub gitdir: PathBuf,
    /// The ref database over `gitdir/reftable`.
    pub db: RefDb,
    /// The object format.
    pub hash: HashId,
}

/// The options git would use for the repository whose configuration is `cfg`.
fn options(cfg: &Config) -> RefDbOptions {
    let hash = match cfg
        .get("extensions.objectformat")
        .map(str::to_ascii_lowercase)
    {
        Some(f) if f == "sha256" => HashId::Sha256,
        _ => HashId::Sha1,
    };
    let bare = cfg.get_bool("core.bare").unwrap_or(false);
    let log_refs = match cfg
        .get("core.logallrefupdates")
        .map(str::to_ascii_lowercase)
    {
        Some(v) if v == "always" => LogRefs::Always,
        Some(_) if cfg.get_bool("core.logallrefupdates") == Some(true) => LogRefs::Normal,
        Some(_) => LogRefs::None,
        None if bare => LogRefs::None,
        None => LogRefs::Normal,
    };
    let mut stack = StackOptions::default();
    stack.write.hash = hash;
    if let Some(b) = cfg.get_num("reftable.blocksize") {
        stack.write.block_size = b;
    }
    if let Some(r) = cfg.get_num("reftable.restartinterval") {
        stack.write.restart_interval = r;
    }
    if let Some(i) = cfg.get_bool("reftable.indexobjects") {
        stack.write.index_objects = i;
    }
    if let Some(f) = cfg.get_num("reftable.geometricfactor") {
        stack.geometric_factor = f;
    }
    if let Some(ms) = cfg.get_num::<i64>("reftable.locktimeout") {
        stack.lock_timeout = u64::try_from(ms).ok().map(Duration::from_millis);
    }
    if let Some(auto) = cfg.get_bool("reftable.autocompaction") {
        stack.auto_compaction = auto;
    }
    RefDbOptions::default().stack(stack).log_refs(log_refs)
}

impl Repo {
    /// Open the reftable stack of the git directory `gitdir`, with the semantics of the git
    /// version `git` names where they changed (none: the newest).
    pub fn open(gitdir: &Path, git: Option<&str>) -> reftable::Result<Repo> {
        let cfg = Config::read(gitdir);
        let mut opts = options(&cfg);
        let version = git.and_then(release);
        // git refuses to write through a dangling symref since 2.52.
        opts.protect_dangling_symrefs = version.map_or(true, |v| v >= (2, 52, 0));
        // git stopped checking the old value of log-only updates in 2.51.1.
        opts.check_log_only_old_values = version.is_some_and(|v| v < (2, 51, 1));
        let db = RefDb::open_or_create(gitdir.join("reftable"), opts)?;
        Ok(Repo {
            gitdir: gitdir.to_path_buf(),
            db,
            hash: opts.stack.hash(),
        })
    }
}

/// The release a git version string names (`2.47.3`, `git version 2.52.0`,
/// `2.55.0.618.g1a3e64c6c4`): major, minor, patch (0 when absent).
fn release(v: &str) -> Option<(u32, u32, u32)> {
    let v = v.trim().trim_start_matches("git version ").trim();
    let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
    let (major, minor) = (parts.next()??, parts.next()??);
    Some((major, minor, parts.next().flatten().unwrap_or(0)))
}
