//! Known git defects: divergences we expect, each with its reason and a case directory that
//! still reproduces it (a test replays every entry and fails when one stops diverging).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::case::{Check, Divergence};

/// One known divergence.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Expected {
    /// Short identifier.
    pub id: String,
    /// The check that diverges.
    pub check: Check,
    /// A substring of the divergence detail that identifies it.
    pub detail_contains: String,
    /// Why git is wrong here (with a reference to the fix or report).
    pub reason: String,
    /// Case directory (relative to the conformance crate) that reproduces it.
    pub case: String,
}

/// The expected-divergences file.
pub fn path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("expected-divergences.json")
}

/// Load the known divergences.
pub fn load() -> Result<Vec<Expected>, String> {
    let text = std::fs::read_to_string(path()).map_err(|e| format!("{}: {e}", path().display()))?;
    serde_json::from_str(&text).map_err(|e| format!("expected-divergences.json: {e}"))
}

/// The entry `d` matches, if any.
pub fn matching<'a>(list: &'a [Expected], d: &Divergence) -> Option<&'a Expected> {
    list.iter()
        .find(|e| e.check == d.check && d.detail.contains(&e.detail_contains))
}
