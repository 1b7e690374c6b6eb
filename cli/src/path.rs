//! Resolving `PATH` (a repository, a `reftable/` directory or one table file) and opening
//! what it names read-only.

use std::path::{Path, PathBuf};

use reftable::{HashId, MergedTable, Table};

use crate::error::CliError;

/// What `PATH` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A stack directory (`.git/reftable`), with the git directory holding it when known.
    Stack {
        /// The stack directory.
        dir: PathBuf,
        /// The git directory whose `config` may name the object format.
        gitdir: Option<PathBuf>,
    },
    /// One table file.
    Table(PathBuf),
}

impl Target {
    /// The path to show in messages: the stack directory or the table file.
    pub fn path(&self) -> &Path {
        match self {
            Target::Stack { dir, .. } => dir,
            Target::Table(p) => p,
        }
    }
}

/// Work out what `path` names:
/// - a file: one table (a file named `tables.list` stands for its stack directory);
/// - a directory holding `tables.list`, or named `reftable`: a stack;
/// - a directory holding a `reftable/` directory (a `.git` directory or a bare repository):
///   its stack;
/// - a directory holding `.git` (a directory, or a `gitdir:` file as in linked worktrees and
///   submodules): that git directory's stack.
pub fn resolve(path: &Path) -> Result<Target, CliError> {
    let meta =
        std::fs::metadata(path).map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    if meta.is_file() {
        if path.file_name().is_some_and(|n| n == "tables.list") {
            let dir = path.parent().map_or_else(
                || PathBuf::from("."),
                |p| {
                    if p.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        p.to_path_buf()
                    }
                },
            );
            return Ok(stack_in(dir));
        }
        return Ok(Target::Table(path.to_path_buf()));
    }
    if !meta.is_dir() {
        return Err(CliError::usage(format!(
            "{}: not a file or directory",
            path.display()
        )));
    }
    if path.join("tables.list").is_file() || path.file_name().is_some_and(|n| n == "reftable") {
        return Ok(stack_in(path.to_path_buf()));
    }
    if path.join("reftable").is_dir() {
        return Ok(Target::Stack {
            dir: path.join("reftable"),
            gitdir: Some(path.to_path_buf()),
        });
    }
    let dotgit = path.join(".git");
    let gitdir = if dotgit.is_dir() {
        Some(dotgit)
    } else if dotgit.is_file() {
        Some(read_gitfile(&dotgit)?)
    } else if path.join("HEAD").is_file() && path.join("config").is_file() {
        // A git directory without a reftable/ directory.
        Some(path.to_path_buf())
    } else {
        None
    };
    match gitdir {
        Some(g) if g.join("reftable").is_dir() => Ok(Target::Stack {
            dir: g.join("reftable"),
            gitdir: Some(g),
        }),
        Some(g) => Err(CliError::usage(format!(
            "{}: the repository does not use the reftable ref format (no {})",
            path.display(),
            g.join("reftable").display()
        ))),
        None => Err(CliError::usage(format!(
            "{}: not a repository, a reftable directory or a table file",
            path.display()
        ))),
    }
}

fn stack_in(dir: PathBuf) -> Target {
    let gitdir = dir
        .parent()
        .filter(|p| p.join("config").is_file())
        .map(Path::to_path_buf);
    Target::Stack { dir, gitdir }
}

/// Read a file, refusing anything but a regular file (a FIFO or device would block or never
/// end). `NotFound` is passed through for callers that treat a missing file specially.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    std::fs::read(path)
}

/// Follow a `.git` file (`gitdir: <path>`), relative to the file's directory.
fn read_gitfile(file: &Path) -> Result<PathBuf, CliError> {
    let content = read_regular(file)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| CliError::usage(format!("{}: {e}", file.display())))?;
    let target = content
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            CliError::usage(format!(
                "{}: not a gitdir file (expected 'gitdir: <path>')",
                file.display()
            ))
        })?;
    let base = file.parent().unwrap_or(Path::new("."));
    Ok(base.join(target))
}

/// The object format a git directory's `config` names (`extensions.objectformat`), if any.
pub fn config_hash(gitdir: &Path) -> Option<HashId> {
    let content = read_regular(&gitdir.join("config")).ok()?;
    let content = String::from_utf8_lossy(&content);
    let mut section = String::new();
    for line in content.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            section = rest
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            continue;
        }
        if section != "extensions" {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if k.trim().eq_ignore_ascii_case("objectformat") {
            let v = v
                .split(['#', ';'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('"');
            return match v.to_ascii_lowercase().as_str() {
                "sha256" => Some(HashId::Sha256),
                "sha1" => Some(HashId::Sha1),
                _ => None,
            };
        }
    }
    None
}

/// What `PATH` opened to: the tables (oldest first) and their merged view.
pub struct Opened {
    /// What `PATH` named.
    pub target: Target,
    /// File names of the tables, as listed in `tables.list` (or the table file's path).
    pub names: Vec<String>,
    /// The merged view over the tables.
    pub merged: MergedTable,
}

impl Opened {
    /// The tables, oldest first.
    pub fn tables(&self) -> &[Table] {
        self.merged.tables()
    }
}

/// Open what `path` names read-only: a stack is read from `tables.list` (missing means empty)
/// and its tables opened one by one; nothing is created or locked.
pub fn open(path: &Path) -> Result<Opened, CliError> {
    let target = resolve(path)?;
    match &target {
        Target::Table(p) => {
            let t = Table::open(p)?;
            let hash = t.hash();
            Ok(Opened {
                names: vec![p.display().to_string()],
                merged: MergedTable::new(vec![t], hash)?,
                target,
            })
        }
        Target::Stack { dir, gitdir } => {
            // Through the library's reader: read-only, regular files only, and a table that
            // vanishes while a writer compacts makes it read the list again.
            let hint = gitdir.as_deref().and_then(config_hash);
            let stack = reftable::StackReader::open(dir, hint).map_err(|e| {
                let list = e.file().is_some_and(|f| f.ends_with("tables.list"));
                match e.kind() {
                    reftable::ErrorKind::Format if list => {
                        CliError::corrupt(format!("{e:#} (see 'reftable verify')"))
                    }
                    reftable::ErrorKind::NotExist => CliError::corrupt(format!("{e:#}")),
                    _ => CliError::from(e),
                }
            })?;
            Ok(Opened {
                names: stack.table_names().to_vec(),
                merged: stack.merged().clone(),
                target,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_format_from_config() {
        let dir = std::env::temp_dir().join(format!("reftable-cli-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("[core]\n\tbare = false\n", None),
            (
                "[extensions]\n\tobjectFormat = sha256\n",
                Some(HashId::Sha256),
            ),
            (
                "[Extensions]\n  objectformat=SHA1 ; comment\n",
                Some(HashId::Sha1),
            ),
            ("[core]\n\tobjectformat = sha256\n", None),
        ];
        for (content, want) in cases {
            std::fs::write(dir.join("config"), content).unwrap();
            assert_eq!(config_hash(&dir), want, "{content}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
