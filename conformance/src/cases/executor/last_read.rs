//! What our readers last read of a case's stacks, kept so that a step that changed nothing
//! (the same stack bytes and model) is not read again (`checks.rs`).

use crate::snapshot::Snapshot;

/// What our readers read (`ours`) when they last agreed with the model, under `key`: the
/// fingerprints of git's stack, the worktree's and the model's state.
pub(crate) struct LastRead {
    pub(crate) key: (u64, u64, u64),
    pub(crate) ours: Snapshot,
}
