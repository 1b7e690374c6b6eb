//! Attribution of concurrent findings to the known git defects of the git under test (the
//! concurrent-mode entries of the expected-divergences file).

use crate::defects::registry::{Expected, ExpectedSet};
use crate::finding::divergence::Finding;
use crate::setup::env::Env;

/// Mark the findings a known git defect of this git explains: those its entry matches, and
/// in a run where it matched, those of the classes it implies.
pub(crate) fn attribute(env: &Env, known: &ExpectedSet, findings: &mut [Finding]) {
    let v = env.profile.git_version();
    let mut shown: Vec<&Expected> = Vec::new();
    for f in findings.iter() {
        if let Some(e) = known.matching_concurrent(&v, &format!("{}: {}", f.class, f.detail)) {
            if shown.iter().all(|s| s.id != e.id) {
                shown.push(e);
            }
        }
    }
    for f in findings.iter_mut() {
        let direct = known.matching_concurrent(&v, &format!("{}: {}", f.class, f.detail));
        let implied = || shown.iter().copied().find(|e| e.implies.contains(&f.class));
        f.expected = direct.or_else(implied).map(|e| e.id.clone());
    }
}
