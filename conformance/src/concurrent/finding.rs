//! The collector the concurrent checks add their [`Finding`]s to, which lists only the first
//! few of each class and counts the rest.

use std::collections::BTreeMap;

use crate::finding::divergence::Finding;

/// A finding of `class` no known defect explains (yet).
fn finding(class: &str, detail: String) -> Finding {
    Finding {
        class: class.into(),
        detail,
        expected: None,
    }
}

/// At most this many findings of one class are listed (the first ones tell the story).
const PER_CLASS: usize = 5;

/// The findings so far, and how many of each class there were.
pub(crate) struct Findings(Vec<Finding>, BTreeMap<String, usize>);

impl Findings {
    /// No findings yet.
    pub(crate) fn new() -> Findings {
        Findings(Vec::new(), BTreeMap::new())
    }

    /// Add a finding of `class` (listed if fewer than [`PER_CLASS`] came before it).
    pub(crate) fn add(&mut self, class: &str, detail: String) {
        let n = self.1.entry(class.to_string()).or_default();
        *n += 1;
        if *n <= PER_CLASS {
            self.0.push(finding(class, detail));
        }
    }

    /// The findings listed, then one line per class with more than were listed.
    pub(crate) fn finish(mut self) -> Vec<Finding> {
        for (class, n) in &self.1 {
            if *n > PER_CLASS {
                self.0.push(finding(
                    class,
                    format!("… {} more like this", n - PER_CLASS),
                ));
            }
        }
        self.0
    }
}
