//! Damage to a reftable stack as data: byte edits of its files ([`Edit`], each naming the
//! structure it damages) applied in order ([`Damage`]). Serializable, so that a damaged
//! stack can be rebuilt from the undamaged one and minimized edit by edit; where the edits
//! go is found by [`super::sites`].

use serde::{Deserialize, Serialize};

/// One edit of one file of the stack (`tables.list` or a table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// The file name inside the stack directory.
    pub file: String,
    /// What kind of structure the edit damages (`block-len`, `restart-offset`, ...).
    pub kind: String,
    /// Where: the file offset the edit starts at.
    pub at: usize,
    /// How many bytes it replaces (`usize::MAX`: everything from `at` on, a truncation).
    pub remove: usize,
    /// The bytes put in their place.
    pub insert: Vec<u8>,
    /// Whether the table's footer CRC is recomputed afterwards (the edit touched the footer,
    /// and the damage under test should not be caught by the CRC alone).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fix_crc: bool,
}

impl Edit {
    /// An edit of `file` that leaves the footer CRC as it is.
    pub(crate) fn new(file: &str, kind: &str, at: usize, remove: usize, insert: Vec<u8>) -> Edit {
        Edit {
            file: file.to_string(),
            kind: kind.to_string(),
            at,
            remove,
            insert,
            fix_crc: false,
        }
    }

    /// The same edit, with the footer CRC recomputed after it.
    pub(crate) fn crc(mut self) -> Edit {
        self.fix_crc = true;
        self
    }

    /// Apply the edit to `bytes` (edits past the end are no-ops).
    pub fn apply_to(&self, bytes: &mut Vec<u8>) {
        if self.at > bytes.len() {
            return;
        }
        let end = self.at.saturating_add(self.remove).min(bytes.len());
        bytes.splice(self.at..end, self.insert.iter().copied());
        if self.fix_crc {
            reftable_testkit::tables::fix_crc(bytes);
        }
    }

    /// A one-line description.
    pub fn summary(&self) -> String {
        let what = if self.remove == usize::MAX && self.insert.is_empty() {
            "truncated".to_string()
        } else if self.remove == usize::MAX {
            format!("rewritten ({} bytes)", self.insert.len())
        } else {
            format!("{} bytes → {:02x?}", self.remove, short(&self.insert))
        };
        format!("{} {} at {}: {what}", self.file, self.kind, self.at)
    }
}

fn short(b: &[u8]) -> &[u8] {
    &b[..b.len().min(12)]
}

/// A set of edits applied in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Damage {
    /// The edits.
    pub edits: Vec<Edit>,
}

impl Damage {
    /// Apply every edit to the named files (files not named by any edit stay as they are).
    pub fn apply(&self, files: &mut [(String, Vec<u8>)]) {
        for e in &self.edits {
            if let Some((_, bytes)) = files.iter_mut().find(|(n, _)| *n == e.file) {
                e.apply_to(bytes);
            }
        }
    }

    /// Kinds of the edits, joined (`block-len+list-drop-line`).
    pub fn kinds(&self) -> String {
        let k: Vec<&str> = self.edits.iter().map(|e| e.kind.as_str()).collect();
        k.join("+")
    }
}
