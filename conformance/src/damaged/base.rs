//! One undamaged starting point of a run ([`Base`]): git's repository after a gate case, the
//! names the commands look up, every damage site of its stack and both sides' answers on it
//! undamaged; and the options our library opens such a stack (or a damaged copy) with.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use reftable::refdb::RefDbOptions;
use reftable::{HashId, StackOptions, WriteOptions};

use super::damage::Edit;

/// Our answer to each command: its output, or the error we reported.
pub(crate) type Answers = BTreeMap<&'static str, Result<String, String>>;

/// One undamaged starting point.
pub(crate) struct Base {
    /// A copy of git's repository after the case (with the pool's pack).
    pub(crate) repo: PathBuf,
    /// Names looked up by `show-ref --verify` and `reflog show`.
    pub(crate) names: Vec<String>,
    pub(crate) reflog_name: Option<String>,
    /// The object hash.
    pub(crate) hash: HashId,
    /// Every damage site of its files.
    pub(crate) sites: Vec<Edit>,
    /// git's output for each command on the undamaged stack.
    pub(crate) git_base: BTreeMap<&'static str, String>,
    /// Ours.
    pub(crate) ours_base: Answers,
}

/// The options our library opens a base's stack with: its hash, no fsync, no automatic
/// compaction, no waiting for locks.
pub(crate) fn db_options(hash: HashId) -> RefDbOptions {
    RefDbOptions::default().stack(
        StackOptions::default()
            .write(WriteOptions::default().hash(hash))
            .fsync(false)
            .auto_compaction(false)
            .lock_timeout(Some(Duration::from_millis(0))),
    )
}
