//! The files of a case's repositories: the tables of a stack as bytes (each read once) and
//! copying a repository.

use std::path::Path;

/// A stack's tables: (name without its random part, bytes), in `tables.list` order.
pub(crate) type Tables = Vec<(String, std::sync::Arc<Vec<u8>>)>;

/// Tables already read, by path: a table never changes once it is in a stack (a new table
/// gets a new name), so each is read once.
pub(crate) type TableCache = std::collections::HashMap<std::path::PathBuf, std::sync::Arc<Vec<u8>>>;

pub(crate) fn tables_cached(dir: &Path, cache: &mut TableCache) -> Tables {
    tables_listed(dir, &list_bytes(dir), cache)
}

/// A stack's tables and its directory's files, with `tables.list` read once for both.
pub(crate) fn stack_cached(dir: &Path, cache: &mut TableCache) -> (Tables, StackFiles) {
    let list = list_bytes(dir);
    (
        tables_listed(dir, &list, cache),
        StackFiles::with_list(dir, &list),
    )
}

/// The bytes of `tables.list` in `dir` (none when it cannot be read).
fn list_bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("tables.list")).unwrap_or_default()
}

/// The tables `list` names (none when it is not UTF-8).
fn tables_listed(dir: &Path, list: &[u8], cache: &mut TableCache) -> Tables {
    let list = std::str::from_utf8(list).unwrap_or_default();
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

/// A stack directory as its writer left it: the name of every file in it, sorted, and the
/// bytes of `tables.list`, each with a table's random part masked (the 8 hex digits before
/// `.ref` that git draws; any other shape is kept as it is, so that it shows).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct StackFiles {
    pub names: Vec<String>,
    pub list: Vec<u8>,
}

impl StackFiles {
    pub(crate) fn of(dir: &Path) -> StackFiles {
        StackFiles::with_list(dir, &list_bytes(dir))
    }

    /// The files of `dir`, whose `tables.list` holds `list`.
    fn with_list(dir: &Path, list: &[u8]) -> StackFiles {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| mask_random(&e.file_name().to_string_lossy()))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        let list = list
            .split_inclusive(|&b| b == b'\n')
            .flat_map(|l| match std::str::from_utf8(l) {
                Ok(s) => mask_random(s).into_bytes(),
                Err(_) => l.to_vec(),
            })
            .collect();
        StackFiles { names, list }
    }

    /// What differs between `ours` and `git` (`None`: nothing).
    pub(crate) fn difference(ours: &StackFiles, git: &StackFiles) -> Option<String> {
        if ours.list != git.list {
            return Some(format!(
                "tables.list bytes differ: ours {:?}, git's {:?}",
                String::from_utf8_lossy(&ours.list),
                String::from_utf8_lossy(&git.list)
            ));
        }
        let only = |a: &StackFiles, b: &StackFiles| -> Vec<String> {
            a.names
                .iter()
                .filter(|n| !b.names.contains(n))
                .cloned()
                .collect()
        };
        let (o, g) = (only(ours, git), only(git, ours));
        (ours.names != git.names)
            .then(|| format!("stack directory differs: only ours has {o:?}, only git's has {g:?}"))
    }
}

/// `name` (a file name or a line of `tables.list`) with a table's random part masked:
/// `<stem>-<8 lowercase hex digits>.ref` becomes `<stem>-********.ref`.
fn mask_random(name: &str) -> String {
    let (body, newline) = match name.strip_suffix('\n') {
        Some(b) => (b, "\n"),
        None => (name, ""),
    };
    let masked = body.split_once('.').and_then(|(stem, ext)| {
        let (prefix, random) = stem.rsplit_once('-')?;
        let drawn = random.len() == 8
            && random
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        drawn.then(|| format!("{prefix}-********.{ext}"))
    });
    masked.unwrap_or_else(|| body.to_string()) + newline
}

/// Copy a directory tree (regular files and directories; `skip` names one entry of `from`
/// to leave out).
pub(crate) fn copy_dir(from: &Path, to: &Path, skip: Option<&str>) -> Result<(), String> {
    copy_tree(from, to, skip, false)
}

/// A scratch copy of a repository or stack for git and us to write into: [`copy_dir`], with
/// each table (`*.ref`) and pack file a hard link to the original, where the file system
/// allows one. A writer never changes one in place (it writes a new one and renames it in,
/// and deletes the old), so the two trees cannot see each other's writes; what damages
/// tables must copy them.
pub(crate) fn scratch_copy(from: &Path, to: &Path, skip: Option<&str>) -> Result<(), String> {
    copy_tree(from, to, skip, true)
}

/// Whether a file named `name` is one git and we only ever write whole and rename in: a
/// table, or a pack's data, index or reverse index.
fn written_once(name: &[u8]) -> bool {
    [&b".ref"[..], b".pack", b".idx", b".rev"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

fn copy_tree(from: &Path, to: &Path, skip: Option<&str>, link: bool) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for e in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        let name = e.file_name();
        if skip.is_some_and(|s| name == s) {
            continue;
        }
        let (p, dest) = (e.path(), to.join(&name));
        let kind = e.file_type().map_err(|e| format!("{}: {e}", p.display()))?;
        if kind.is_dir() {
            copy_tree(&p, &dest, None, link)?;
        } else if kind.is_file() {
            let linked = link && written_once(name.as_encoded_bytes());
            if !(linked && std::fs::hard_link(&p, &dest).is_ok()) {
                std::fs::copy(&p, &dest).map_err(|e| format!("{}: {e}", p.display()))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_parts_masked_other_shapes_kept() {
        let m = |s: &str| mask_random(s);
        assert_eq!(
            m("0x000000000001-0x000000000002-0a1b2c3d.ref\n"),
            "0x000000000001-0x000000000002-********.ref\n"
        );
        assert_eq!(
            m("0x000000000001-0x000000000002-0a1b2c3d.ref.lock"),
            "0x000000000001-0x000000000002-********.ref.lock"
        );
        // Upper case, seven digits, no random part: kept.
        for kept in [
            "0x1-0x2-0A1B2C3D.ref",
            "0x1-0x2-0a1b2c3.ref",
            "tables.list.lock",
        ] {
            assert_eq!(m(kept), kept);
        }
    }

    #[test]
    fn lists_and_directories_compared() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for (d, r) in [(&a, "0a1b2c3d"), (&b, "ffffffff")] {
            let name = format!("0x000000000001-0x000000000001-{r}.ref");
            std::fs::write(d.path().join(&name), "t").unwrap();
            std::fs::write(d.path().join("tables.list"), format!("{name}\n")).unwrap();
        }
        let files = |d: &tempfile::TempDir| StackFiles::of(d.path());
        assert_eq!(StackFiles::difference(&files(&a), &files(&b)), None);
        std::fs::write(a.path().join("tables.list.lock"), "").unwrap();
        let d = StackFiles::difference(&files(&a), &files(&b)).unwrap();
        assert!(d.contains("only ours has [\"tables.list.lock\"]"), "{d}");
        let list = std::fs::read_to_string(b.path().join("tables.list")).unwrap();
        std::fs::write(b.path().join("tables.list"), list.trim_end()).unwrap();
        let d = StackFiles::difference(&files(&a), &files(&b)).unwrap();
        assert!(d.starts_with("tables.list bytes differ"), "{d}");
    }

    #[test]
    fn a_scratch_copy_links_tables_and_packs_and_copies_the_rest() {
        use std::os::unix::fs::MetadataExt;
        let (from, to) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let stack = from.path().join(".git/reftable");
        std::fs::create_dir_all(&stack).unwrap();
        std::fs::write(stack.join("0x1-0x1-0a1b2c3d.ref"), "table").unwrap();
        std::fs::write(stack.join("tables.list"), "0x1-0x1-0a1b2c3d.ref\n").unwrap();
        std::fs::write(from.path().join(".git/config"), "[core]\n").unwrap();
        let pack = from.path().join(".git/objects/pack");
        std::fs::create_dir_all(&pack).unwrap();
        std::fs::write(pack.join("pack-1.pack"), "pack").unwrap();
        let copy = to.path().join("copy");
        scratch_copy(from.path(), &copy, None).unwrap();
        let inode = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let table = "0x1-0x1-0a1b2c3d.ref";
        let copied = copy.join(".git/reftable");
        assert_eq!(inode(&stack.join(table)), inode(&copied.join(table)));
        let pack_file = "../objects/pack/pack-1.pack";
        assert_eq!(
            inode(&stack.join(pack_file)),
            inode(&copied.join(pack_file))
        );
        for other in ["tables.list", "../config"] {
            assert_ne!(inode(&stack.join(other)), inode(&copied.join(other)));
        }
        std::fs::write(copied.join("tables.list"), "").unwrap();
        assert_eq!(list_bytes(&stack), b"0x1-0x1-0a1b2c3d.ref\n");
        // A plain copy links nothing.
        let plain = to.path().join("plain");
        copy_dir(from.path(), &plain, None).unwrap();
        let table_copy = plain.join(".git/reftable").join(table);
        assert_ne!(inode(&stack.join(table)), inode(&table_copy));
        assert_eq!(std::fs::read(table_copy).unwrap(), b"table");
    }
}
