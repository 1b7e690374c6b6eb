//! The problems `verify` finds in one file, located and capped.

use std::io::Write;

use reftable::codec::block::BlockInfo;
use reftable::walk;

use super::MAX_PROBLEMS_PER_FILE;
use crate::error::message_and_causes;

/// One problem: the file, where in it, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file (as reached from `PATH`).
    pub file: String,
    /// Byte offset in the file, when it applies.
    pub offset: Option<u64>,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: offset {o}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

/// The problems of one file, capped at `MAX_PROBLEMS_PER_FILE`.
#[derive(Debug, Default)]
pub(super) struct Report {
    file: String,
    pub(super) problems: Vec<Problem>,
    hidden: usize,
}

impl Report {
    pub(super) fn new(file: String) -> Report {
        Report {
            file,
            problems: Vec::new(),
            hidden: 0,
        }
    }

    pub(super) fn add(&mut self, offset: Option<u64>, what: impl Into<String>) {
        if self.problems.len() >= MAX_PROBLEMS_PER_FILE {
            self.hidden += 1;
            return;
        }
        self.problems.push(Problem {
            file: self.file.clone(),
            offset,
            what: what.into(),
        });
    }

    pub(super) fn at(&mut self, offset: u64, what: impl Into<String>) {
        self.add(Some(offset), what);
    }

    /// A problem at position `at` of block `b`.
    pub(super) fn in_block(&mut self, b: &BlockInfo, at: usize, what: &str) {
        let (off, prefix) = walk::locate(b, at);
        self.at(off, format!("{prefix}{what}"));
    }

    pub(super) fn error(&mut self, e: &reftable::Error) {
        self.add(e.offset(), message_and_causes(e));
    }

    pub(super) fn count(&self) -> usize {
        self.problems.len() + self.hidden
    }

    /// Print the problems, and a line for those not shown.
    pub(super) fn print(&self, out: &mut impl Write) -> std::io::Result<()> {
        for p in &self.problems {
            writeln!(out, "{p}")?;
        }
        if self.hidden > 0 {
            writeln!(
                out,
                "{}: {} further problems not shown",
                self.file, self.hidden
            )?;
        }
        Ok(())
    }
}
