//! A trial: the damage drawn for trial `i` of a base and the damaged copy the commands run
//! on (git's repository and our stack side by side, a victim file outside both).

use std::path::{Path, PathBuf};

use crate::stack_files::copy_dir;
use reftable_testkit::rng::Rng;

use super::base::Base;
use super::damage::{Damage, Edit};
use super::outside::{now_listing, Listing};

/// The damage of trial `i` of `base`.
pub(crate) fn damage_for(seed: u64, i: u64, base: &Base) -> Damage {
    let mut rng = Rng(seed.wrapping_mul(0x1000_0000_01b3) ^ i);
    let n = if rng.below(10) < 7 { 1 } else { 2 };
    let mut edits: Vec<Edit> = Vec::new();
    for _ in 0..n {
        let e = base.sites[rng.below(base.sites.len())].clone();
        // Two edits of the same file both at their planned offsets: the second one is
        // dropped when the first one rewrites or truncates the file.
        if edits
            .iter()
            .any(|x| x.file == e.file && x.remove == usize::MAX)
        {
            continue;
        }
        edits.push(e);
    }
    Damage { edits }
}

/// A damaged copy of a base: git's repository and our stack side by side, a victim file
/// outside both.
pub(crate) struct Trial {
    /// The trial's directory (`repo/`, `outside/`, `ours/`).
    pub(crate) dir: PathBuf,
    /// git's damaged repository.
    pub(crate) git_repo: PathBuf,
    /// Our copy of the damaged stack.
    pub(crate) ours_stack: PathBuf,
}

impl Trial {
    /// A fresh copy of `base` in `dir`, `damage` applied, with the victim file (a copy of the
    /// first table) outside the repository.
    pub(crate) fn prepare(base: &Base, damage: &Damage, dir: &Path) -> Result<Trial, String> {
        let _ = std::fs::remove_dir_all(dir);
        let git_repo = dir.join("repo");
        copy_dir(&base.repo, &git_repo, None)?;
        let outside = dir.join("outside");
        std::fs::create_dir_all(&outside).map_err(|e| e.to_string())?;
        let stack = git_repo.join(".git/reftable");
        let list = std::fs::read_to_string(stack.join("tables.list")).map_err(|e| e.to_string())?;
        if let Some(first) = list.lines().next() {
            std::fs::copy(stack.join(first), outside.join("victim.ref"))
                .map_err(|e| e.to_string())?;
        }
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for e in damage.edits.iter() {
            if !files.iter().any(|(n, _)| *n == e.file) {
                let bytes = std::fs::read(stack.join(&e.file)).map_err(|e| e.to_string())?;
                files.push((e.file.clone(), bytes));
            }
        }
        damage.apply(&mut files);
        for (name, bytes) in &files {
            std::fs::write(stack.join(name), bytes).map_err(|e| e.to_string())?;
        }
        // Our stack at the same depth, so that relative names reach the same victim.
        let ours_stack = dir.join("ours/.git/reftable");
        copy_dir(&stack, &ours_stack, None)?;
        Ok(Trial {
            dir: dir.to_path_buf(),
            git_repo,
            ours_stack,
        })
    }

    /// Everything outside git's repository and our stack.
    pub(crate) fn outside(&self) -> Listing {
        now_listing(&self.dir.join("outside"), &self.git_repo)
    }
}
