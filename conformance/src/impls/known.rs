//! An implementation's findings matched against the registry's `impl` entries (its own
//! defects, in the range of its own versions).

use crate::defects::registry::ExpectedSet;
use crate::git::version::GitVersion;
use crate::impls::check::{ImplCheck, Role};
use crate::impls::report::ImplReport;

/// Name the registry entry each finding is, where it is one.
pub fn label(r: &mut ImplReport, known: &ExpectedSet) {
    let Some(v) = GitVersion::parse(&r.hello.version) else {
        return;
    };
    let name = r.hello.implementation.clone();
    for d in &mut r.findings {
        let f = &mut d.first;
        let text = format!("{} {}: {}", f.role.name(), f.check.name(), f.detail);
        // A finding already named (a known git defect behind a concurrent round's) keeps it.
        if f.known.is_none() {
            f.known = known.matching_impl(&name, &v, &text).map(|e| e.id.clone());
        }
    }
}

impl ImplReport {
    /// The registry entry every finding of `role` and `check` is, when all are one.
    pub fn known_for(&self, role: Role, check: ImplCheck) -> Option<String> {
        let mut ids = (self.findings.iter())
            .filter(|d| d.first.role == role && d.first.check == check)
            .map(|d| d.first.known.clone());
        let first = ids.next()??;
        ids.all(|k| k.as_ref() == Some(&first)).then_some(first)
    }
}
