//! Which steps get the checks that cost a git process: git's `for-each-ref` of its stack,
//! git's lookups by name, and the same two in a linked worktree; and the checks that read
//! git's whole stack again with our code: our verify, and our reader on it after a reload.
//!
//! The other checks (tables and stack files byte for byte, our reader on our stack, the
//! model, our lookups, the files-backend twin) run after every step that changed
//! something. git's
//! view of its own stack reads the very bytes those checks compared, so it needs no step of
//! its own: it runs on one change of the stack in [`GIT_EVERY`], at a phase fixed by the
//! case's options (a replay and a minimization keep it), and on the case's last state
//! whatever the phase. The names a step touched wait for git's next turn, so each is looked
//! up by git all the same.

use std::collections::BTreeSet;

/// One change of git's stack in this many gets git's own checks.
pub(crate) const GIT_EVERY: u64 = 4;

/// The turns of one case.
#[derive(Debug, Default)]
pub(crate) struct GitTurns {
    /// Where in each run of [`GIT_EVERY`] changes git's turn falls.
    phase: u64,
    /// Changes of git's stack so far.
    changes: u64,
    /// Fingerprints after the last step: of git's stacks together (what counts as a change)
    /// and of its main stack alone (what git's view and lookups remember).
    last: Option<(u64, u64)>,
    /// Names touched since git last looked names up.
    pending: BTreeSet<String>,
}

impl GitTurns {
    /// The turns of a case whose options hash to `slot`.
    pub(crate) fn new(slot: u64) -> GitTurns {
        GitTurns {
            phase: slot % GIT_EVERY,
            ..GitTurns::default()
        }
    }

    /// After a step that left git's main stack at `fp` and a linked worktree's at
    /// `worktree_fp` (0 without one) and named `touched`: whether git's checks run now. A step
    /// that changed neither is no turn (the last check still holds).
    pub(crate) fn step(&mut self, fp: u64, worktree_fp: u64, touched: &[String]) -> bool {
        self.pending.extend(touched.iter().cloned());
        let both = fp ^ worktree_fp;
        if self.last.map(|l| l.0) != Some(both) {
            self.changes += 1;
        }
        self.last = Some((both, fp));
        self.changes % GIT_EVERY == self.phase
    }

    /// The names for git to look up, since its last turn.
    pub(crate) fn take_pending(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending).into_iter().collect()
    }

    /// The main stack's fingerprint after the last step, for the end of the case.
    pub(crate) fn last(&self) -> Option<u64> {
        self.last.map(|l| l.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_change_in_four_is_gits_and_names_wait_for_it() {
        assert_eq!(GIT_EVERY, 4);
        let mut t = GitTurns::new(0);
        let a = |s: &str| vec![s.to_string()];
        let steps = [
            (1, a("x")),
            (1, a("y")),
            (2, a("z")),
            (3, vec![]),
            (4, vec![]),
        ];
        let turns: Vec<bool> = (steps.into_iter())
            .map(|(fp, names)| t.step(fp, 0, &names))
            .collect();
        // changes: 1, none, 2, 3, 4 (git's).
        assert_eq!(turns, [false, false, false, false, true]);
        assert_eq!(t.take_pending(), ["x", "y", "z"]);
        assert!(t.take_pending().is_empty());
        assert_eq!(t.last(), Some(4));
        let mut other = GitTurns::new(1);
        assert!(other.step(7, 0, &[]));
        // A change of the worktree's stack alone is a change too; the main stack's is kept.
        for (worktree, turn) in [(9, false), (10, false), (11, false), (12, true)] {
            assert_eq!(t.step(4, worktree, &[]), turn);
        }
        assert_eq!(t.last(), Some(4));
    }
}
