//! git's rules for reference names (`git check-ref-format`).

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

/// Whether git writes a reflog for `name` under `core.logAllRefUpdates=true` without one
/// existing: branches, remote-tracking refs, notes and `HEAD`.
pub fn autocreates_reflog(name: &[u8]) -> bool {
    name.starts_with(b"refs/heads/")
        || name.starts_with(b"refs/remotes/")
        || name.starts_with(b"refs/notes/")
        || name == b"HEAD"
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
            "refs/heads/.hidden",
        ];
        for n in bad {
            assert!(!is_valid_refname(n.as_bytes(), true), "{n}");
        }
        assert!(!is_valid_refname(b"HEAD", false));
        assert!(is_valid_refname(b"HEAD", true));
        assert!(is_valid_refname(b"foo", true));
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
}
