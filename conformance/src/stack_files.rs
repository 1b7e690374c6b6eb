//! The files of a case's repositories: the tables of a stack as bytes (each read once) and
//! copying a repository.

use std::path::Path;

/// A stack's tables: (name without its random part, bytes), in `tables.list` order.
pub(crate) type Tables = Vec<(String, std::sync::Arc<Vec<u8>>)>;

/// Tables already read, by path: a table never changes once it is in a stack (a new table
/// gets a new name), so each is read once.
pub(crate) type TableCache = std::collections::HashMap<std::path::PathBuf, std::sync::Arc<Vec<u8>>>;

pub(crate) fn tables_cached(dir: &Path, cache: &mut TableCache) -> Tables {
    let list = std::fs::read_to_string(dir.join("tables.list")).unwrap_or_default();
    list.lines()
        .map(|n| {
            let stem = n.rsplit_once('-').map_or(n, |x| x.0).to_string();
            let path = dir.join(n);
            let bytes = cache
                .entry(path)
                .or_insert_with_key(|p| std::sync::Arc::new(std::fs::read(p).unwrap_or_default()))
                .clone();
            (stem, bytes)
        })
        .collect()
}

pub(crate) fn tables(dir: &Path) -> Tables {
    tables_cached(dir, &mut TableCache::new())
}

/// Copy a directory tree (regular files and directories; `skip` names one entry of `from`
/// to leave out).
pub(crate) fn copy_dir(from: &Path, to: &Path, skip: Option<&str>) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for e in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        let name = e.file_name();
        if skip.is_some_and(|s| name == s) {
            continue;
        }
        let p = e.path();
        let meta = std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            copy_dir(&p, &to.join(&name), None)?;
        } else if meta.is_file() {
            std::fs::copy(&p, to.join(&name)).map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    Ok(())
}
