//! `tables.list` checked line by line: names that are not UTF-8, not plain file names in
//! the stack directory, listed twice or not in git's format, and a missing final newline.

use super::finding::{FileFindings, FindingKind};
use super::shown::show_bytes;
use crate::tables_list::{ends_without_newline, list_lines, parse_table_name, ListEntry};

/// A table `tables.list` names: its name, and where the line is (offset, line number).
#[derive(Debug)]
pub(super) struct Listed {
    pub(super) name: String,
    pub(super) offset: u64,
    pub(super) line: usize,
}

/// Check `content` (`tables.list`'s bytes), reporting to `r`; returns the tables it lists
/// that can be opened (names in git's format or not), in order.
pub(super) fn check_list(content: &[u8], r: &mut FileFindings) -> Vec<Listed> {
    let kind = FindingKind::TablesList;
    if ends_without_newline(content) {
        r.at(
            kind,
            content.len() as u64,
            "the last line does not end with a newline (git 2.52 and later reject the file)",
        );
    }
    let mut listed = Vec::new();
    for line in list_lines(content) {
        let (n, at) = (line.number, line.offset);
        let shown = || show_bytes(line.bytes, 200);
        let name = match line.entry {
            ListEntry::NotUtf8 => {
                let what = format!("line {n}: table name {} is not UTF-8", shown());
                r.at(kind, at, what);
                continue;
            }
            ListEntry::NotAFileName(_) => {
                let what = format!(
                    "line {n}: {} is not a file name in the stack directory \
                     (it escapes the directory); not opened",
                    shown()
                );
                r.at(kind, at, what);
                continue;
            }
            ListEntry::Duplicate(name) => {
                r.at(kind, at, format!("line {n}: table {name} is listed twice"));
                continue;
            }
            ListEntry::Name(name) => name,
        };
        if parse_table_name(name).is_none() {
            let what =
                format!("line {n}: table name {name} is not git's 0x<min>-0x<max>-<random>.ref");
            r.at(kind, at, what);
        }
        listed.push(Listed {
            name: name.to_string(),
            offset: at,
            line: n,
        });
    }
    listed
}
