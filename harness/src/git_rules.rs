//! The model's own copies of git's ref rules, written from git's documentation
//! (`git help check-ref-format`) and from what git's `refs.c` does, not taken from the
//! library under test: whether a ref name is valid, whether a name is safe to delete or
//! verify, which names are pseudorefs, which refs get a reflog by default, and how a reflog
//! message is cleaned before it is stored. `tests/model_rules.rs` compares them with the library's on
//! generated names and messages, so that where the library is wrong the oracle is not
//! wrong with it.

/// How one byte of a ref name counts (git's `refname_disposition`, in our words).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Byte {
    /// Allowed anywhere in a component.
    Plain,
    /// `/`: ends the component.
    Slash,
    /// `.`: allowed, but not twice in a row (`..`) nor at a component's start.
    Dot,
    /// `{`: allowed, but not after `@` (`@{` starts a reflog selector).
    Brace,
    /// Never allowed: control bytes (below 0x20, and DEL), space, and `:` `?` `[` `\` `^`
    /// `~` (revision syntax), and `*` (a refspec pattern; git allows one only in patterns,
    /// which these rules never check).
    Never,
}

fn byte_class(b: u8) -> Byte {
    match b {
        b'/' => Byte::Slash,
        b'.' => Byte::Dot,
        b'{' => Byte::Brace,
        0x00..=0x20 | 0x7f => Byte::Never,
        b':' | b'?' | b'[' | b'\\' | b'^' | b'~' | b'*' => Byte::Never,
        // Bytes 0x80 and up are allowed: git's table has no entry against them (UTF-8
        // names are fine).
        _ => Byte::Plain,
    }
}

/// Whether `name` is a ref name git accepts (`git check-ref-format [--allow-onelevel]`):
///
/// 1. no component (the parts between `/`) is empty (so no leading or trailing `/`, no
///    `//`), starts with `.` or ends with `.lock`;
/// 2. no `..`, no `@{`, no control byte (below 0x20, DEL), space, `:` `?` `[` `\` `^` `~`
///    or `*`;
/// 3. the name does not end with `.` and is not the single character `@`;
/// 4. at least two components, unless `allow_onelevel` (as for `HEAD`).
///
/// A NUL ends a C string, so git never sees one inside a name; here it is a control byte
/// and refused.
pub fn model_refname_ok(name: &[u8], allow_onelevel: bool) -> bool {
    if name.is_empty() || name == b"@" || name.ends_with(b".") {
        return false;
    }
    let mut components = 0usize;
    let mut start = 0usize;
    let mut prev = 0u8;
    for (i, &b) in name.iter().enumerate() {
        let ok = match byte_class(b) {
            Byte::Plain => true,
            Byte::Never => false,
            Byte::Dot => prev != b'.' && i != start,
            Byte::Brace => prev != b'@',
            Byte::Slash => {
                let c = &name[start..i];
                components += 1;
                start = i + 1;
                !c.is_empty() && !c.ends_with(b".lock")
            }
        };
        if !ok {
            return false;
        }
        prev = b;
    }
    let last = &name[start..];
    components += 1;
    !last.is_empty() && !last.ends_with(b".lock") && (allow_onelevel || components >= 2)
}

/// A reflog message as git stores it before the backend adds its newline (`refs.c`,
/// `normalize_reflog_message`): the message is a C string, so it ends at the first NUL;
/// every run of whitespace becomes one space, whitespace at the start is dropped, and so
/// is a trailing space. "Whitespace" is git's own locale-free `isspace`: space, tab, LF
/// and CR only (not vertical tab or form feed, and no byte from 0x80 up).
pub fn model_reflog_message(msg: &[u8]) -> Vec<u8> {
    let msg = msg.split(|&b| b == 0).next().unwrap_or_default();
    let git_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut out = Vec::with_capacity(msg.len());
    for word in msg.split(git_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(b' ');
        }
        out.extend_from_slice(word);
    }
    out
}

/// Whether a name is safe to delete or verify though not valid to write (`refs.c`,
/// `refname_is_safe`): under `refs/`, a non-empty rest that neither starts nor ends with `/`
/// and is already a normalized path (no empty, `.` or `..` component, so it cannot climb out
/// of `refs/`); anywhere else, a non-empty name of upper-case ASCII letters and `_` only.
pub fn model_refname_safe(name: &[u8]) -> bool {
    match name.strip_prefix(b"refs/") {
        Some(rest) => {
            !rest.is_empty()
                && rest
                    .split(|&b| b == b'/')
                    .all(|c| !matches!(c, b"" | b"." | b".."))
        }
        None => !name.is_empty() && name.iter().all(|&b| b.is_ascii_uppercase() || b == b'_'),
    }
}

/// The pseudorefs git keeps as files and refuses to write through a transaction
/// (`refs.c`, `is_pseudo_ref`): exactly `FETCH_HEAD` and `MERGE_HEAD`.
pub fn model_pseudoref(name: &[u8]) -> bool {
    matches!(name, b"FETCH_HEAD" | b"MERGE_HEAD")
}

/// Whether `core.logAllRefUpdates=true` gives `name` a reflog (`refs.c`,
/// `should_autocreate_reflog`): branches, remote-tracking refs, notes, and `HEAD`.
pub fn model_autocreates_reflog(name: &[u8]) -> bool {
    ["refs/heads/", "refs/remotes/", "refs/notes/"]
        .iter()
        .any(|p| name.starts_with(p.as_bytes()))
        || name == b"HEAD"
}
