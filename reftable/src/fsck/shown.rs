//! How findings show bytes: keys and names escaped and cut, log keys as `name@{index}`,
//! object id prefixes in hex. `reftable dump` shows keys the same way.

/// Bytes as lower-case hex digits.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|c| format!("{c:02x}")).collect()
}

/// A key or name for a message: printable ASCII as is, `\` as `\\`, other bytes as `\xNN`,
/// cut after `max` bytes (the length said after the cut).
///
/// ```
/// assert_eq!(reftable::fsck::show_bytes(b"a\x00\\", 10), "a\\x00\\\\");
/// assert_eq!(reftable::fsck::show_bytes(b"abcdef", 2), "ab...(6 bytes)");
/// ```
pub fn show_bytes(b: &[u8], max: usize) -> String {
    let mut s = String::new();
    for &c in b.iter().take(max) {
        if (0x20..0x7f).contains(&c) && c != b'\\' {
            s.push(c as char);
        } else if c == b'\\' {
            s.push_str("\\\\");
        } else {
            s.push_str(&format!("\\x{c:02x}"));
        }
    }
    if b.len() > max {
        s.push_str(&format!("...({} bytes)", b.len()));
    }
    s
}

/// A log record's key for messages: `refname@{update_index}`, or the bytes as
/// [`show_bytes`] shows them when the key is not a log key.
///
/// ```
/// let mut key = b"refs/heads/main\0".to_vec();
/// key.extend_from_slice(&(u64::MAX - 7).to_be_bytes());
/// assert_eq!(reftable::fsck::show_log_key(&key), "refs/heads/main@{7}");
/// ```
pub fn show_log_key(key: &[u8]) -> String {
    if key.len() > 9 && key[key.len() - 9] == 0 {
        let (name, ui) = key.split_at(key.len() - 8);
        let ui = u64::MAX - u64::from_be_bytes(ui.try_into().expect("8 bytes"));
        format!("{}@{{{ui}}}", show_bytes(&name[..name.len() - 1], 200))
    } else {
        show_bytes(key, 200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printable ASCII shows as is, a backslash doubled, any other byte as `\xNN`; past
    /// `max` bytes the rest is cut and the full length said. A log key shows as
    /// `name@{update index}`, any other key as its bytes.
    #[test]
    fn bytes_escaped_and_cut_and_log_keys_by_name_and_index() {
        assert_eq!(show_bytes(b"refs/heads/x", 100), "refs/heads/x");
        assert_eq!(
            show_bytes(b"a\\b\x00\x7f\xff", 100),
            "a\\\\b\\x00\\x7f\\xff"
        );
        assert_eq!(show_bytes(b"abcdef", 3), "abc...(6 bytes)");
        assert_eq!(show_bytes(b"abc", 3), "abc");
        let mut key = b"refs/heads/main\0".to_vec();
        key.extend_from_slice(&(u64::MAX - 42).to_be_bytes());
        assert_eq!(show_log_key(&key), "refs/heads/main@{42}");
        assert_eq!(show_log_key(b"refs/heads/main"), "refs/heads/main");
        assert_eq!(hex(&[0x0a, 0xff]), "0aff");
    }
}
