//! Watching the directory outside the repository that no reader may touch: a listing of
//! its files (size, modification time) and what changed between two listings.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Every file under a directory, with its size and modification time, sorted.
pub(crate) type Listing = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// The listing of everything under `dir`, `skip` left out.
pub(crate) fn now_listing(dir: &Path, skip: &Path) -> Listing {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p == skip {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, m.len(), m.modified().ok()));
        }
    }
    out.sort();
    out
}

/// What changed between two listings of the outside directory.
pub(crate) fn listing_change(before: &Listing, after: &Listing) -> String {
    let mut out = Vec::new();
    for b in before {
        match after.iter().find(|a| a.0 == b.0) {
            None => out.push(format!("removed {}", b.0.display())),
            Some(a) if a != b => out.push(format!("changed {}", b.0.display())),
            _ => {}
        }
    }
    for a in after.iter().filter(|a| !before.iter().any(|b| b.0 == a.0)) {
        out.push(format!("created {}", a.0.display()));
    }
    out.join("; ")
}
