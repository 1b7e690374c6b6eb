//! What the deep check finds: each problem as data (file, offset, kind, text), grouped by
//! the file they are about and capped per file.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::codec::block::BlockInfo;
use crate::error::Error;
use crate::walk;

/// Problems kept per file; the rest are counted ([`FileFindings::not_shown`]).
pub const MAX_FINDINGS_PER_FILE: usize = 100;

/// What part of the format a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FindingKind {
    /// The table cannot be opened or read on: the library's own error ([`Error`]) as text.
    Unreadable,
    /// Header and footer fields: update index limits, section positions, obj id length.
    Footer,
    /// Block framing: block lengths, padding, restart tables.
    Block,
    /// A log block valid by the format that git (2.47 and master) cannot read.
    UnreadableByGit,
    /// Sections: where they start, their order, blocks in the wrong one.
    Section,
    /// Index levels: keys, targets, coverage, unreachable index blocks.
    Index,
    /// Records: undecodable, keys out of order, values git does not write.
    Record,
    /// The obj section against the refs, both ways.
    Objects,
    /// `tables.list`: lines that are not table names, duplicates, missing tables, its end.
    TablesList,
    /// The tables of a stack together: update indexes, names against headers, one hash.
    Stack,
    /// Files in the stack directory no writer at work owns: locks, temporary and unlisted
    /// tables.
    Leftover,
}

/// One problem: the file, where in it, what kind, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The file (the stack directory joined with its name, or the table path given).
    pub file: PathBuf,
    /// Byte offset in the file, when it applies.
    pub offset: Option<u64>,
    /// What part of the format is wrong.
    pub kind: FindingKind,
    /// What is wrong, in words.
    pub text: String,
}

impl fmt::Display for Finding {
    /// `<file>: offset <n>: <text>`, the offset left out where it does not apply.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: offset {o}: {}", self.file.display(), self.text),
            None => write!(f, "{}: {}", self.file.display(), self.text),
        }
    }
}

/// The findings about one file (a table, `tables.list` or the stack directory), at most
/// [`MAX_FINDINGS_PER_FILE`] of them kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileFindings {
    /// The file the findings are about.
    pub file: PathBuf,
    /// The findings kept, in the order found.
    pub findings: Vec<Finding>,
    /// How many more there were.
    pub not_shown: usize,
}

impl FileFindings {
    pub(crate) fn new(file: &Path) -> FileFindings {
        FileFindings {
            file: file.to_path_buf(),
            ..FileFindings::default()
        }
    }

    /// Every problem found, shown or not.
    pub fn count(&self) -> usize {
        self.findings.len() + self.not_shown
    }

    pub(crate) fn push(&mut self, f: Finding) {
        if self.findings.len() >= MAX_FINDINGS_PER_FILE {
            self.not_shown += 1;
        } else {
            self.findings.push(f);
        }
    }

    pub(crate) fn add(&mut self, kind: FindingKind, offset: Option<u64>, text: impl Into<String>) {
        let file = self.file.clone();
        self.push(Finding {
            file,
            offset,
            kind,
            text: text.into(),
        });
    }

    pub(crate) fn at(&mut self, kind: FindingKind, offset: u64, text: impl Into<String>) {
        self.add(kind, Some(offset), text);
    }

    /// A problem at position `at` of block `b`.
    pub(crate) fn in_block(&mut self, kind: FindingKind, b: &BlockInfo, at: usize, what: &str) {
        let (off, prefix) = walk::locate(b, at);
        self.at(kind, off, format!("{prefix}{what}"));
    }

    /// The library's error reading the file: its message and causes, at its offset.
    pub(crate) fn error(&mut self, e: &Error) {
        self.add(FindingKind::Unreadable, e.offset(), message_and_causes(e));
    }
}

/// `e`'s message and its causes (`what: cause: cause...`), without file and offset, which
/// the finding carries.
fn message_and_causes(e: &Error) -> String {
    let mut out = e.message().to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// What a check found: the findings by file, in the order the files were checked, and how
/// many tables were checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The findings, file by file (files without findings included).
    pub files: Vec<FileFindings>,
    /// Tables opened and checked.
    pub tables_checked: usize,
}

impl Report {
    /// Every problem found, shown or not; 0 for a clean table or stack.
    pub fn count(&self) -> usize {
        self.files.iter().map(FileFindings::count).sum()
    }

    /// The findings kept, file by file.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.files.iter().flat_map(|f| &f.findings)
    }
}
