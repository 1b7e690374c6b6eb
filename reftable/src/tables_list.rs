//! `tables.list` line by line, and the table file names in it: the one parser the stack
//! loader and the deep check ([`crate::fsck`]) share, and git's name format
//! (`0x<min>-0x<max>-<random>.ref`) made and read.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::lock::random_u32;

/// One non-empty line of `tables.list`.
#[derive(Debug)]
pub(crate) struct ListLine<'a> {
    /// 1-based line number.
    pub(crate) number: usize,
    /// Byte offset of the line's start.
    pub(crate) offset: u64,
    /// The line's bytes, without its newline.
    pub(crate) bytes: &'a [u8],
    /// What the line is.
    pub(crate) entry: ListEntry<'a>,
}

/// What a line of `tables.list` holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ListEntry<'a> {
    /// A table file name, first listed here.
    Name(&'a str),
    /// Bytes that are not UTF-8.
    NotUtf8,
    /// A name that is not a plain file name in the stack directory (it would escape it).
    NotAFileName(&'a str),
    /// A name an earlier line lists already.
    Duplicate(&'a str),
}

/// The non-empty lines of `content`, each classified, one at a time (a list can name
/// thousands of tables); a last line without its newline is a line like any other (see
/// [`ends_without_newline`]).
pub(crate) fn list_lines(content: &[u8]) -> ListLines<'_> {
    ListLines {
        rest: content,
        offset: 0,
        number: 0,
        seen: HashSet::new(),
    }
}

/// The iterator [`list_lines`] returns.
#[derive(Debug)]
pub(crate) struct ListLines<'a> {
    rest: &'a [u8],
    offset: u64,
    number: usize,
    seen: HashSet<&'a str>,
}

impl<'a> Iterator for ListLines<'a> {
    type Item = ListLine<'a>;

    fn next(&mut self) -> Option<ListLine<'a>> {
        while !self.rest.is_empty() {
            let end = self.rest.iter().position(|&b| b == b'\n');
            let bytes = &self.rest[..end.unwrap_or(self.rest.len())];
            self.rest = &self.rest[end.map_or(self.rest.len(), |e| e + 1)..];
            let offset = self.offset;
            self.offset += bytes.len() as u64 + 1;
            self.number += 1;
            if bytes.is_empty() {
                continue;
            }
            let entry = match std::str::from_utf8(bytes) {
                Err(_) => ListEntry::NotUtf8,
                Ok(n) if n.contains(['/', '\\', '\0']) || n == "." || n == ".." => {
                    ListEntry::NotAFileName(n)
                }
                Ok(n) if !self.seen.insert(n) => ListEntry::Duplicate(n),
                Ok(n) => ListEntry::Name(n),
            };
            return Some(ListLine {
                number: self.number,
                offset,
                bytes,
                entry,
            });
        }
        None
    }
}

/// Whether a non-empty `tables.list` lacks its final newline (git before 2.52 accepts it,
/// 2.52 and later reject the file).
pub(crate) fn ends_without_newline(content: &[u8]) -> bool {
    !content.is_empty() && !content.ends_with(b"\n")
}

/// Parse `tables.list`: one table file name a line; empty lines are skipped. A name that is
/// not a plain file name in the stack directory is a format error (it is never opened), and
/// so is a name listed twice (git never writes one; opening it again would multiply the
/// memory a reader needs). A last line without its newline is accepted, as git did before
/// 2.52 (`reftable verify` reports it).
pub(crate) fn parse_tables_list(content: &[u8]) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for line in list_lines(content) {
        let n = line.number;
        match line.entry {
            ListEntry::Name(name) => names.push(name.to_string()),
            ListEntry::NotUtf8 => {
                return Err(Error::format(format!(
                    "tables.list line {n}: table name is not UTF-8"
                )))
            }
            ListEntry::NotAFileName(name) => {
                return Err(Error::format(format!(
                    "tables.list line {n}: {name:?} is not a table file name in the stack \
                     directory"
                )))
            }
            ListEntry::Duplicate(name) => {
                return Err(Error::format(format!(
                    "tables.list line {n}: table {name} is listed twice"
                )))
            }
        }
    }
    Ok(names)
}

/// git's table file name stem: `0x<min>-0x<max>-<random>` (at least 12 hex digits each).
pub(crate) fn table_name_stem(min: u64, max: u64) -> String {
    format!("0x{min:012x}-0x{max:012x}-{:08x}", random_u32())
}

/// The update indexes a table file name in git's format names: `0x<min>-0x<max>-<8 hex
/// digits>.ref`, at least 12 lower-case hex digits each; `None` for any other name.
pub(crate) fn parse_table_name(name: &str) -> Option<(u64, u64)> {
    let stem = name.strip_suffix(".ref")?;
    let mut parts = stem.split('-');
    let (a, b, r) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !(r.len() == 8 && lower_hex(r)) {
        return None;
    }
    let num = |s: &str| -> Option<u64> {
        let h = s.strip_prefix("0x")?;
        if h.len() < 12 || !lower_hex(h) {
            return None;
        }
        u64::from_str_radix(h, 16).ok()
    };
    Some((num(a)?, num(b)?))
}

fn lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names() {
        assert_eq!(
            parse_table_name("0x000000000001-0x00000000000a-56d9eff2.ref"),
            Some((1, 10))
        );
        assert_eq!(
            parse_table_name("0x1000000000000-0x1000000000001-00000000.ref"),
            Some((1 << 48, (1 << 48) + 1))
        );
        let made = format!("{}.ref", table_name_stem(1, 0x1_0000_0000_0000));
        assert_eq!(parse_table_name(&made), Some((1, 0x1_0000_0000_0000)));
        for bad in [
            "0x1-0x2-56d9eff2.ref",
            "0x000000000001-0x000000000001-56d9eff.ref",
            "0x000000000001-0x000000000001-56D9EFF2.ref",
            "0x000000000001-0x000000000001-56d9eff2.log",
            "0x000000000001-0x000000000001-56d9eff2-x.ref",
            "foo-bar-56d9eff2.ref",
        ] {
            assert_eq!(parse_table_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn lines_classified_with_offsets() {
        let lines: Vec<ListLine<'_>> = list_lines(b"a.ref\n\n../b\n\xff\na.ref\nc.ref").collect();
        let got: Vec<(usize, u64, &ListEntry<'_>)> = lines
            .iter()
            .map(|l| (l.number, l.offset, &l.entry))
            .collect();
        assert_eq!(
            got,
            [
                (1, 0, &ListEntry::Name("a.ref")),
                (3, 7, &ListEntry::NotAFileName("../b")),
                (4, 12, &ListEntry::NotUtf8),
                (5, 14, &ListEntry::Duplicate("a.ref")),
                (6, 20, &ListEntry::Name("c.ref")),
            ]
        );
        assert!(ends_without_newline(b"a.ref"));
        assert!(!ends_without_newline(b"") && !ends_without_newline(b"a.ref\n"));
    }
}
