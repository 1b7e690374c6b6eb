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
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 9] = [
        Class::Acknowledged,
        Class::AcknowledgedWithWarning,
        Class::CleanRefusal,
        Class::Crash,
        Class::UnloadableStack,
        Class::HalfApplied,
        Class::LostAcknowledgedUpdate,
        Class::CommittedButReportedFailed,
        Class::StuckLock,
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
