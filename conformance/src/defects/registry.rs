//! Known git defects: divergences we expect from some gits, each with the versions that have
//! the defect, a signature that identifies it, the evidence that git is wrong, a case
//! directory that reproduces it and a shell script that shows it with git alone.
//!
//! An entry is matched only against gits in its version range, and the gate replays every
//! entry in range of the gits it runs: one that stops reproducing there fails the run (the
//! defect was fixed, or the entry's range is wrong).
//!
//! The file is JSON, a list of entries:
//!
//! ```json
//! [{
//!   "id": "non-commit-through-symref",
//!   "versions": ">= 2.55.0.400, < 2.56.0",
//!   "check": "verdict",
//!   "detail_contains": "to branch",
//!   "reason": "why git is wrong",
//!   "evidence": "refs.c:1234 (commit abc123)",
//!   "case": "expected/non-commit-through-symref",
//!   "reproducer": "expected/non-commit-through-symref/reproduce.sh"
//! }]
//! ```
//!
//! `case` and `reproducer` are relative to the file's directory.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::finding::divergence::{Check, Divergence};
use crate::git::version::{GitVersion, VersionRange};

/// One known divergence.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Expected {
    /// Short identifier.
    pub id: String,
    /// The gits that have the defect (`>= 2.50.0, < 2.55.0`; `*` for all).
    pub versions: String,
    /// The check that diverges.
    pub check: Check,
    /// A substring of the divergence detail that identifies it.
    pub detail_contains: String,
    /// Why git is wrong here.
    pub reason: String,
    /// git source file and line, or the commit that introduced or fixed the defect.
    #[serde(default)]
    pub evidence: String,
    /// Case directory that reproduces it.
    pub case: String,
    /// A shell script that shows the defect with git alone.
    #[serde(default)]
    pub reproducer: String,
    /// Concurrent-mode entries: the finding classes that follow from the defect in a run
    /// where it shows (a dropped table also makes later reads and update indexes look
    /// wrong).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implies: Vec<String>,
}

/// The loaded file.
#[derive(Clone, Debug, Default)]
pub struct ExpectedSet {
    /// Where it was read from.
    pub path: PathBuf,
    entries: Vec<(Expected, VersionRange)>,
}

/// The file the gate reads when none is named: `REFTABLE_EXPECTED_DIVERGENCES`, else
/// `conformance/expected-divergences.json` of the current directory's workspace, else the
/// one next to this crate's sources.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("REFTABLE_EXPECTED_DIVERGENCES") {
        return PathBuf::from(p);
    }
    let here = Path::new("conformance/expected-divergences.json");
    if here.is_file() {
        return here.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("expected-divergences.json")
}

impl ExpectedSet {
    /// Read the file at `path`.
    pub fn load(path: &Path) -> Result<ExpectedSet, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let list: Vec<Expected> =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut entries = Vec::new();
        for e in list {
            let r = VersionRange::parse(&e.versions)
                .map_err(|m| format!("{}: entry {}: {m}", path.display(), e.id))?;
            entries.push((e, r));
        }
        Ok(ExpectedSet {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// Every entry.
    pub fn entries(&self) -> impl Iterator<Item = &Expected> {
        self.entries.iter().map(|(e, _)| e)
    }

    /// The entries whose range holds `v`.
    pub fn in_range<'s>(&'s self, v: &'s GitVersion) -> impl Iterator<Item = &'s Expected> {
        self.entries
            .iter()
            .filter(move |(_, r)| r.contains(v))
            .map(|(e, _)| e)
    }

    /// The entry in range of `v` that `d` matches, if any.
    pub fn matching<'s>(&'s self, v: &'s GitVersion, d: &Divergence) -> Option<&'s Expected> {
        self.in_range(v).find(|e| matches(e, d))
    }

    /// The concurrent-mode entry in range of `v` that a finding (`class: detail`) matches.
    pub fn matching_concurrent<'s>(
        &'s self,
        v: &'s GitVersion,
        finding: &str,
    ) -> Option<&'s Expected> {
        self.in_range(v)
            .find(|e| e.check == Check::Concurrent && finding.contains(&e.detail_contains))
    }

    /// A path of an entry, resolved against the file's directory.
    pub fn resolve(&self, rel: &str) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(rel)
    }
}

/// Whether `d` is the divergence `e` describes.
pub fn matches(e: &Expected, d: &Divergence) -> bool {
    e.check == d.check && d.detail.contains(&e.detail_contains)
}
