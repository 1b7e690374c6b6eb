//! The ref names the gate and the fuzz targets draw from, in one place: small, collision-
//! prone sets (shared prefixes, D/F pairs such as `a` and `a/b`, sort-order neighbours
//! `a-b` `a.b` `a/b`, root refs, non-ASCII, a name near the block size) so that operations
//! meet each other.

/// The names of the `refdb_model` fuzz target (its corpus indexes into this list: keep the
/// order).
pub const FUZZ_NAMES: [&str; 12] = [
    "HEAD",
    "refs/heads/main",
    "refs/heads/a",
    "refs/heads/a/b",
    "refs/heads/a-b",
    "refs/heads/a.b",
    "refs/heads/b",
    "refs/tags/v1",
    "refs/custom/x",
    "refs/remotes/o/m",
    "ORIG_HEAD",
    "refs/heads/é",
];

/// Ref names: shared prefixes, D/F pairs, sort-order neighbours, root refs, non-ASCII, long.
pub fn name_pool() -> Vec<String> {
    let mut v: Vec<String> = [
        "HEAD",
        "refs/heads/main",
        "refs/heads/a",
        "refs/heads/a/b",
        "refs/heads/a-b",
        "refs/heads/a.b",
        "refs/heads/a0",
        "refs/heads/b/c/d",
        "refs/heads/b",
        "refs/heads/topic",
        "refs/heads/é",
        "refs/tags/v1",
        "refs/tags/v1.0",
        "refs/custom/x",
        "refs/remotes/origin/main",
        "refs/notes/commits",
        "ORIG_HEAD",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(format!("refs/heads/{}", "l".repeat(150)));
    v
}
