//! The class of a faulted write: what its writer reported, set against the states the
//! repository may be in afterwards (as before the operation, or as after it ran without a
//! fault) and against what the next reader and writer find.

use serde::{Deserialize, Serialize};

use crate::faults::observe::Observed;
use crate::snapshot::Snapshot;

/// What one faulted write came to. The first three are what a writer may do; the others
/// are defects, listed from the worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Reported done, and done.
    Acknowledged,
    /// Reported done with a warning (a failure after the commit point), and done.
    AcknowledgedWithWarning,
    /// Reported failed, and nothing changed.
    CleanRefusal,
    /// The writer was killed by a signal or hung.
    Crash,
    /// git or our reader cannot load the stack afterwards.
    UnloadableStack,
    /// Neither the state before the operation nor the one after it.
    HalfApplied,
    /// Reported done, but the operation's changes are not there.
    LostAcknowledgedUpdate,
    /// Reported failed, but the operation's changes are there.
    CommittedButReportedFailed,
    /// The next writer is refused, and neither its message nor the faulted writer's says
    /// which file to remove.
    StuckLock,
    /// An interrupted call (`EINTR`), or one that would have blocked (`EAGAIN`), was not made
    /// again: the writer reported otherwise than it does without the fault (failed, or done
    /// with a warning).
    InterruptNotRetried,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 10] = [
        Class::Acknowledged,
        Class::AcknowledgedWithWarning,
        Class::CleanRefusal,
        Class::Crash,
        Class::UnloadableStack,
        Class::HalfApplied,
        Class::LostAcknowledgedUpdate,
        Class::CommittedButReportedFailed,
        Class::StuckLock,
        Class::InterruptNotRetried,
    ];

    /// Its name in reports and in the registry's signatures.
    pub fn name(self) -> &'static str {
        match self {
            Class::Acknowledged => "acknowledged",
            Class::AcknowledgedWithWarning => "acknowledged-with-warning",
            Class::CleanRefusal => "clean-refusal",
            Class::Crash => "crash",
            Class::UnloadableStack => "unloadable-stack",
            Class::HalfApplied => "half-applied",
            Class::LostAcknowledgedUpdate => "lost-acknowledged-update",
            Class::CommittedButReportedFailed => "committed-but-reported-failed",
            Class::StuckLock => "stuck-lock",
            Class::InterruptNotRetried => "interrupt-not-retried",
        }
    }

    /// A defect (not something a writer may do under a fault).
    pub fn is_bad(self) -> bool {
        !matches!(
            self,
            Class::Acknowledged | Class::AcknowledgedWithWarning | Class::CleanRefusal
        )
    }
}

/// The class of a trial whose call was interrupted (`EINTR`) or would have blocked
/// (`EAGAIN`): `judged` (from [`classify`])
/// unless the writer, which must make the call again, reported otherwise than its
/// `unfaulted` run.
pub fn interrupted(
    judged: (Class, String),
    unfaulted: &Reported,
    reported: &Reported,
) -> (Class, String) {
    let kind = |r: &Reported| match r {
        Reported::Done(None) => "done",
        Reported::Done(Some(_)) => "done with a warning",
        Reported::Failed(_) => "failed",
        Reported::Crashed(_) => "crashed",
    };
    if judged.0.is_bad() || kind(unfaulted) == kind(reported) {
        return judged;
    }
    let detail = format!(
        "{} when interrupted, {} without: {}",
        kind(reported),
        kind(unfaulted),
        judged.1
    );
    (Class::InterruptNotRetried, detail)
}

/// How the writer ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reported {
    /// Done (with the warning it gave, if any).
    Done(Option<String>),
    /// Refused, with its message.
    Failed(String),
    /// Killed by a signal or by the timeout.
    Crashed(String),
}

/// The class of a trial whose writer `reported`, leaving `seen`; `before` and `after` are the
/// states before the operation and after it ran without a fault. With the class, the detail
/// that supports it.
pub fn classify(
    reported: &Reported,
    before: &Snapshot,
    after: &Snapshot,
    seen: &Observed,
) -> (Class, String) {
    if let Reported::Crashed(how) = reported {
        return (Class::Crash, how.clone());
    }
    let state = match (&seen.state, &seen.git_load) {
        (Err(e), _) => return (Class::UnloadableStack, format!("our reader: {e}")),
        (_, Some(e)) => return (Class::UnloadableStack, e.clone()),
        (Ok(s), None) => s,
    };
    let (was, done) = (state == before, state == after);
    let class = match reported {
        _ if !was && !done => {
            let d = state.diff(after, 4).join("; ");
            return (
                Class::HalfApplied,
                format!("against the unfaulted run: {d}"),
            );
        }
        Reported::Done(_) if !done => Class::LostAcknowledgedUpdate,
        Reported::Failed(_) if !was => Class::CommittedButReportedFailed,
        Reported::Done(Some(_)) => Class::AcknowledgedWithWarning,
        Reported::Done(None) => Class::Acknowledged,
        _ => Class::CleanRefusal,
    };
    let detail = match reported {
        Reported::Done(Some(w)) => w.clone(),
        Reported::Failed(m) => m.clone(),
        _ => String::new(),
    };
    if let Some(msg) = &seen.next_write {
        let named = |text: &str| seen.left.iter().any(|f| text.contains(f.as_str()));
        if !class.is_bad() && !named(msg) && !named(&detail) {
            let left = seen.left.join(", ");
            return (
                Class::StuckLock,
                format!("next write: {msg} (left: {left})"),
            );
        }
    }
    (class, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::SValue;

    fn state(refs: &[&str]) -> Snapshot {
        let mut s = Snapshot::default();
        for r in refs {
            s.refs
                .insert(r.to_string(), SValue::Symref("refs/heads/main".into()));
        }
        s
    }

    fn seen(s: Snapshot) -> Observed {
        Observed {
            state: Ok(s),
            git_load: None,
            left: Vec::new(),
            next_write: None,
        }
    }

    #[test]
    fn outcomes_against_states() {
        let (before, after) = (state(&["a"]), state(&["a", "b"]));
        let failed = Reported::Failed("fatal".into());
        let done = Reported::Done(None);
        let c = |r: &Reported, s: &[&str]| classify(r, &before, &after, &seen(state(s))).0;
        assert_eq!(c(&failed, &["a"]), Class::CleanRefusal);
        assert_eq!(c(&failed, &["a", "b"]), Class::CommittedButReportedFailed);
        assert_eq!(c(&done, &["a", "b"]), Class::Acknowledged);
        assert_eq!(c(&done, &["a"]), Class::LostAcknowledgedUpdate);
        assert_eq!(c(&failed, &["b"]), Class::HalfApplied);
        let warned = Reported::Done(Some("compaction".into()));
        assert_eq!(c(&warned, &["a", "b"]), Class::AcknowledgedWithWarning);
    }

    #[test]
    fn a_refused_next_write_is_stuck_unless_told_which_file() {
        let s = state(&["a"]);
        let mut o = seen(s.clone());
        o.left = vec!["tables.list.lock".into()];
        o.next_write = Some("cannot lock references".into());
        let r = Reported::Failed("fatal".into());
        assert_eq!(classify(&r, &s, &s, &o).0, Class::StuckLock);
        o.next_write = Some("remove tables.list.lock to continue".into());
        assert_eq!(classify(&r, &s, &s, &o).0, Class::CleanRefusal);
        o.next_write = Some("cannot lock references".into());
        let told = Reported::Failed("unable to unlink tables.list.lock".into());
        assert_eq!(classify(&told, &s, &s, &o).0, Class::CleanRefusal);
    }

    /// An interrupted call must end as the unfaulted run did: a failure or a warning where
    /// there was none is the writer giving up on it; the same refusal is fine.
    #[test]
    fn interrupted_calls_end_as_without_the_interruption() {
        let done = Reported::Done(None);
        let failed = Reported::Failed("error: cannot write".into());
        let ok = (Class::Acknowledged, String::new());
        assert_eq!(interrupted(ok.clone(), &done, &done).0, Class::Acknowledged);
        let refused = (Class::CleanRefusal, "error".to_string());
        let judged = interrupted(refused.clone(), &done, &failed);
        assert_eq!(judged.0, Class::InterruptNotRetried);
        assert_eq!(
            interrupted(refused, &failed, &failed).0,
            Class::CleanRefusal
        );
        let warned = Reported::Done(Some("warning: compaction".into()));
        let w = (Class::AcknowledgedWithWarning, String::new());
        assert_eq!(interrupted(w, &done, &warned).0, Class::InterruptNotRetried);
        let half = (Class::HalfApplied, String::new());
        assert_eq!(interrupted(half, &done, &failed).0, Class::HalfApplied);
    }

    #[test]
    fn unloadable_and_crash_come_first() {
        let s = state(&["a"]);
        let mut o = seen(s.clone());
        o.git_load = Some("git for-each-ref: corrupt".into());
        assert_eq!(
            classify(&Reported::Done(None), &s, &s, &o).0,
            Class::UnloadableStack
        );
        let crashed = Reported::Crashed("signal 11".into());
        assert_eq!(classify(&crashed, &s, &s, &o).0, Class::Crash);
    }
}
