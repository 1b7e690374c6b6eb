//! git's rules for reference names (`git check-ref-format`), and [`RefName`], a name checked
//! once against them.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// The full name of a ref a repository can hold, checked: `refs/` and at least one more
/// component, each valid by git's `check_refname_format` (no `..`, no component starting
/// with `.` or ending in `.lock`, no control bytes, space, `~^:?*[\`, no `@{`), or a root
/// ref (`HEAD`, `ORIG_HEAD`: upper case, `-` and `_` only; not `FETCH_HEAD` or
/// `MERGE_HEAD`, which git keeps as files).
///
/// Everything that takes a name takes `impl AsRef<[u8]>`, so a `RefName` goes where a byte
/// string does; the ref database still checks names as git does (a bad one is a refusal, not
/// a panic), and readers accept any name a table holds, checked or not.
///
/// ```
/// use reftable::RefName;
///
/// let main = RefName::new("refs/heads/main")?;
/// assert_eq!(main.as_bytes(), b"refs/heads/main");
/// assert_eq!(main.shorten(), b"main");
/// assert!(RefName::new("HEAD").is_ok());
/// for bad in ["refs/heads/a..b", "heads/main", "refs/", "Head", "refs/heads/x.lock"] {
///     assert!(RefName::new(bad).is_err(), "{bad}");
/// }
/// # Ok::<(), reftable::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RefName(Vec<u8>);

impl RefName {
    /// `name` checked, or an error of kind [`ErrorKind::Refname`].
    pub fn new(name: impl Into<Vec<u8>>) -> Result<RefName> {
        let name = name.into();
        let full = name.starts_with(b"refs/") && is_valid_refname(&name, false);
        let root = !name.is_empty() && is_root_ref_syntax(&name) && !is_pseudoref(&name);
        if full || root {
            Ok(RefName(name))
        } else {
            Err(Error::new(
                ErrorKind::Refname,
                format!(
                    "'{}' is not a valid ref name",
                    String::from_utf8_lossy(&name)
                ),
            ))
        }
    }

    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The name's bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The name without `refs/heads/`, `refs/tags/`, `refs/remotes/` or `refs/`, as git
    /// shows a branch, a tag or a remote-tracking branch.
    pub fn shorten(&self) -> &[u8] {
        ["refs/heads/", "refs/tags/", "refs/remotes/", "refs/"]
            .iter()
            .find_map(|p| self.0.strip_prefix(p.as_bytes()))
            .unwrap_or(&self.0)
    }
}

impl AsRef<[u8]> for RefName {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl TryFrom<&str> for RefName {
    type Error = Error;

    fn try_from(name: &str) -> Result<RefName> {
        RefName::new(name)
    }
}

impl TryFrom<&[u8]> for RefName {
    type Error = Error;

    fn try_from(name: &[u8]) -> Result<RefName> {
        RefName::new(name)
    }
}

impl TryFrom<Vec<u8>> for RefName {
    type Error = Error;

    fn try_from(name: Vec<u8>) -> Result<RefName> {
        RefName::new(name)
    }
}

/// The name, its bytes that are not UTF-8 replaced.
impl fmt::Display for RefName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

/// Whether `name` is a valid reference name by git's `check_refname_format`, with
/// one-level names such as `HEAD` allowed when `allow_onelevel`.
///
/// ```
/// use reftable::refname::is_valid_refname;
/// assert!(is_valid_refname(b"refs/heads/main", false));
/// assert!(is_valid_refname(b"HEAD", true));
/// for bad in ["refs/heads/a..b", "refs/heads/a.lock", "refs//x", "refs/heads/.x", "refs/x@{1}", "@"] {
///     assert!(!is_valid_refname(bad.as_bytes(), true), "{bad}");
/// }
/// ```
pub fn is_valid_refname(name: &[u8], allow_onelevel: bool) -> bool {
    if name == b"@" || name.is_empty() {
        return false;
    }
    let mut components = 0;
    for comp in name.split(|&b| b == b'/') {
        if !valid_component(comp) {
            return false;
        }
        components += 1;
    }
    if name.last() == Some(&b'.') {
        return false;
    }
    allow_onelevel || components >= 2
}

fn valid_component(comp: &[u8]) -> bool {
    if comp.is_empty() || comp[0] == b'.' || comp.ends_with(b".lock") {
        return false;
    }
    let mut last = 0u8;
    for &c in comp {
        let bad = match c {
            0..=0x20 | 0x7f => true,
            b':' | b'?' | b'[' | b'\\' | b'^' | b'~' | b'*' => true,
            b'.' => last == b'.',
            b'{' => last == b'@',
            _ => false,
        };
        if bad {
            return false;
        }
        last = c;
    }
    true
}

/// git's `refname_is_safe`, the weaker check for names that are only deleted or verified:
/// either `refs/…` that does not escape `refs/` once normalized, or an all-uppercase root
/// name (`HEAD`, `ORIG_HEAD`…).
pub fn is_safe_refname(name: &[u8]) -> bool {
    if let Some(rest) = name.strip_prefix(b"refs/") {
        if rest.is_empty() || rest[0] == b'/' || rest.last() == Some(&b'/') {
            return false;
        }
        // The path must already be normalized: no empty, "." or ".." components.
        return rest
            .split(|&b| b == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b"..");
    }
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_uppercase() || c == b'_')
}

/// Pseudorefs git keeps as files and refuses to update through a ref transaction.
pub fn is_pseudoref(name: &[u8]) -> bool {
    name == b"FETCH_HEAD" || name == b"MERGE_HEAD"
}

/// git's root refs: upper case and `_` only, not a pseudoref, and `HEAD`, a name ending in
/// `_HEAD` or one of the few others git keeps at the top.
#[cfg_attr(not(feature = "refdb"), allow(dead_code))]
pub(crate) fn is_root_ref(name: &[u8]) -> bool {
    let syntax = !name.is_empty() && name.iter().all(|&c| c.is_ascii_uppercase() || c == b'_');
    let known = [
        &b"HEAD"[..],
        b"AUTO_MERGE",
        b"BISECT_EXPECTED_REV",
        b"NOTES_MERGE_PARTIAL",
        b"NOTES_MERGE_REF",
        b"MERGE_AUTOSTASH",
    ];
    syntax && !is_pseudoref(name) && (name.ends_with(b"_HEAD") || known.contains(&name))
}

/// Whether git writes a reflog for `name` under `core.logAllRefUpdates=true` without one
/// existing: branches, remote-tracking refs, notes and `HEAD`.
pub fn autocreates_reflog(name: &[u8]) -> bool {
    name.starts_with(b"refs/heads/")
        || name.starts_with(b"refs/remotes/")
        || name.starts_with(b"refs/notes/")
        || name == b"HEAD"
}

/// Which ref store a name belongs to when a repository has linked worktrees, and the name
/// that store keeps it under (git's `parse_worktree_ref`).
///
/// Per-worktree refs are the root refs (all-uppercase names such as `HEAD`, `ORIG_HEAD`,
/// `BISECT_LOG`) and everything under `refs/worktree/`, `refs/bisect/` and `refs/rewritten/`
/// ([`is_per_worktree_ref`]); they live in the worktree's own stack. `main-worktree/<name>`
/// and `worktrees/<id>/<name>` name the per-worktree ref `<name>` of the main worktree and
/// of the linked worktree `<id>`; with any other `<name>` they are ordinary shared names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorktreeRef<'a> {
    /// A per-worktree ref of the worktree asking (`HEAD`, `refs/bisect/x`).
    Current(&'a [u8]),
    /// `main-worktree/<name>`: the main worktree's per-worktree ref `<name>`.
    Main(&'a [u8]),
    /// `worktrees/<id>/<name>`: linked worktree `<id>`'s per-worktree ref `<name>`. The name
    /// is empty for `worktrees/<id>` without a slash, which names no ref.
    Other {
        /// The worktree's id (its directory under `$GIT_COMMON_DIR/worktrees/`).
        id: &'a [u8],
        /// The ref's name in that worktree.
        name: &'a [u8],
    },
    /// A ref every worktree shares (`refs/heads/main`), in the common stack.
    Shared(&'a [u8]),
}

impl<'a> WorktreeRef<'a> {
    /// The name the owning store keeps the ref under.
    pub fn name(&self) -> &'a [u8] {
        match *self {
            WorktreeRef::Current(n) | WorktreeRef::Main(n) | WorktreeRef::Shared(n) => n,
            WorktreeRef::Other { name, .. } => name,
        }
    }
}

/// Whether `name` has git's root ref syntax: only uppercase ASCII letters, `-` and `_`
/// (vacuously true of the empty name, as in git).
pub fn is_root_ref_syntax(name: &[u8]) -> bool {
    name.iter()
        .all(|&c| c.is_ascii_uppercase() || c == b'-' || c == b'_')
}

/// git's `is_per_worktree_ref`: names under `refs/worktree/`, `refs/bisect/` and
/// `refs/rewritten/` (the same three prefixes from git 2.18 to at least 2.55).
pub fn is_per_worktree_ref(name: &[u8]) -> bool {
    name.starts_with(b"refs/worktree/")
        || name.starts_with(b"refs/bisect/")
        || name.starts_with(b"refs/rewritten/")
}

fn is_current_worktree_ref(name: &[u8]) -> bool {
    is_root_ref_syntax(name) || is_per_worktree_ref(name)
}

/// Which store `name` belongs to, and its name there (git's `parse_worktree_ref`).
///
/// ```
/// use reftable::refname::{parse_worktree_ref, WorktreeRef};
/// assert_eq!(parse_worktree_ref(b"HEAD"), WorktreeRef::Current(b"HEAD"));
/// assert_eq!(parse_worktree_ref(b"refs/bisect/bad"), WorktreeRef::Current(b"refs/bisect/bad"));
/// assert_eq!(parse_worktree_ref(b"refs/heads/main"), WorktreeRef::Shared(b"refs/heads/main"));
/// assert_eq!(parse_worktree_ref(b"main-worktree/HEAD"), WorktreeRef::Main(b"HEAD"));
/// assert_eq!(
///     parse_worktree_ref(b"worktrees/wt/refs/bisect/bad"),
///     WorktreeRef::Other { id: b"wt", name: b"refs/bisect/bad" }
/// );
/// // Only per-worktree names can be reached through the prefixes.
/// assert_eq!(
///     parse_worktree_ref(b"worktrees/wt/refs/heads/x"),
///     WorktreeRef::Shared(b"worktrees/wt/refs/heads/x")
/// );
/// ```
pub fn parse_worktree_ref(name: &[u8]) -> WorktreeRef<'_> {
    if let Some(rest) = name.strip_prefix(b"worktrees/") {
        match rest.iter().position(|&c| c == b'/') {
            None => {
                return WorktreeRef::Other {
                    id: rest,
                    name: &[],
                }
            }
            Some(slash) if is_current_worktree_ref(&rest[slash + 1..]) => {
                return WorktreeRef::Other {
                    id: &rest[..slash],
                    name: &rest[slash + 1..],
                }
            }
            Some(_) => {}
        }
    }
    if let Some(rest) = name.strip_prefix(b"main-worktree/") {
        if is_current_worktree_ref(rest) {
            return WorktreeRef::Main(rest);
        }
    }
    if is_current_worktree_ref(name) {
        WorktreeRef::Current(name)
    } else {
        WorktreeRef::Shared(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_ref_format_cases() {
        let ok = [
            "refs/heads/main",
            "refs/tags/v1.0",
            "refs/heads/a-b",
            "refs/heads/a.b",
            "refs/heads/é",
            "refs/heads/@",
            "refs/heads/a@b",
        ];
        for n in ok {
            assert!(is_valid_refname(n.as_bytes(), false), "{n}");
        }
        let bad = [
            "refs/heads/",
            "/refs/heads/a",
            "refs/heads/a.",
            "refs/heads/a b",
            "refs/heads/a~1",
            "refs/heads/a^",
            "refs/heads/a:b",
            "refs/heads/a?",
            "refs/heads/a*",
            "refs/heads/a[",
            "refs/heads/a\\b",
            "refs/heads/\x01",
            "refs/heads/a\x7f",
            "refs/heads/x.lock",
            // `.lock` ends no component, not only the last (`check_refname_component`).
            "refs/heads/topic.lock/x",
            "refs/tags/v1.lock/rc",
            "refs/heads/.hidden",
            "refs/heads/.hidden/x",
        ];
        for n in bad {
            assert!(!is_valid_refname(n.as_bytes(), true), "{n}");
        }
        assert!(!is_valid_refname(b"HEAD", false));
        assert!(is_valid_refname(b"HEAD", true));
        assert!(is_valid_refname(b"foo", true));
    }

    #[test]
    fn root_refs() {
        for n in ["HEAD", "ORIG_HEAD", "CHERRY_PICK_HEAD", "AUTO_MERGE"] {
            assert!(is_root_ref(n.as_bytes()), "{n}");
        }
        for n in ["FETCH_HEAD", "MERGE_HEAD", "FOO", "head", "config"] {
            assert!(!is_root_ref(n.as_bytes()), "{n}");
        }
    }

    #[test]
    fn reflogs_created_by_default_as_git_chooses() {
        // `should_autocreate_reflog`: branches, remote-tracking refs, notes and HEAD.
        for n in [
            "refs/heads/main",
            "refs/remotes/origin/main",
            "refs/notes/commits",
            "HEAD",
        ] {
            assert!(autocreates_reflog(n.as_bytes()), "{n}");
        }
        for n in [
            "refs/tags/v1",
            "refs/stash",
            "ORIG_HEAD",
            "refs/heads",
            "refs/notes",
        ] {
            assert!(!autocreates_reflog(n.as_bytes()), "{n}");
        }
    }

    #[test]
    fn safe_names() {
        assert!(is_safe_refname(b"refs/heads/x"));
        assert!(is_safe_refname(b"HEAD"));
        assert!(is_safe_refname(b"ORIG_HEAD"));
        assert!(!is_safe_refname(b"refs/"));
        assert!(!is_safe_refname(b"refs/../x"));
        assert!(!is_safe_refname(b"refs/heads//x"));
        assert!(!is_safe_refname(b"head"));
    }

    #[test]
    fn worktree_refs_as_git_parses_them() {
        use WorktreeRef::*;
        let cases: [(&[u8], WorktreeRef<'_>); 14] = [
            (b"HEAD", Current(b"HEAD")),
            (b"ORIG_HEAD", Current(b"ORIG_HEAD")),
            (b"BISECT-X", Current(b"BISECT-X")),
            (b"", Current(b"")),
            (b"refs/worktree/y", Current(b"refs/worktree/y")),
            (b"refs/rewritten/z", Current(b"refs/rewritten/z")),
            (b"refs/bisect", Shared(b"refs/bisect")),
            (b"Head", Shared(b"Head")),
            (b"main-worktree/refs/bisect/b", Main(b"refs/bisect/b")),
            (
                b"main-worktree/refs/heads/b",
                Shared(b"main-worktree/refs/heads/b"),
            ),
            (b"main-worktree/", Main(b"")),
            (
                b"worktrees/x",
                Other {
                    id: b"x",
                    name: b"",
                },
            ),
            (
                b"worktrees//HEAD",
                Other {
                    id: b"",
                    name: b"HEAD",
                },
            ),
            (
                b"worktrees/x/main-worktree/HEAD",
                Shared(b"worktrees/x/main-worktree/HEAD"),
            ),
        ];
        for (name, want) in cases {
            assert_eq!(
                parse_worktree_ref(name),
                want,
                "{}",
                String::from_utf8_lossy(name)
            );
            assert_eq!(parse_worktree_ref(name).name(), want.name());
        }
    }

    /// A checked name is a full name under `refs/` valid by the format check, or a root ref
    /// that git would keep in the ref store (not a pseudoref kept as a file); it keeps its
    /// bytes, and shows without the first of git's display prefixes that fits.
    #[test]
    fn checked_names_are_full_or_root_and_shorten_by_the_first_prefix() {
        for good in ["refs/heads/main", "refs/x", "HEAD", "ORIG_HEAD", "BISECT-X"] {
            let name = RefName::new(good).unwrap();
            assert_eq!(name.as_bytes(), good.as_bytes());
            assert_eq!(name.clone().into_bytes(), good.as_bytes());
        }
        for bad in [
            "",
            "main",
            "refs/heads/a..b",
            "refs/",
            "Head",
            "FETCH_HEAD",
            "MERGE_HEAD",
            "refs/heads/x.lock",
        ] {
            let err = RefName::new(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Refname, "{bad}");
        }
        let shown = |n: &str| RefName::new(n).unwrap().shorten().to_vec();
        assert_eq!(shown("refs/heads/main"), b"main");
        assert_eq!(shown("refs/tags/v1"), b"v1");
        assert_eq!(shown("refs/remotes/origin/main"), b"origin/main");
        assert_eq!(shown("refs/notes/commits"), b"notes/commits");
        assert_eq!(shown("refs/heads/refs/tags/x"), b"refs/tags/x");
        assert_eq!(shown("HEAD"), b"HEAD");
    }
}
