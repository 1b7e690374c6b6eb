//! The damaged role: once a case is over, git's repository is copied and damaged a bounded
//! number of times, one damage per trial drawn as the damaged-stack mode draws it
//! ([`crate::damaged::damaged_copy`]), and each damaged copy is read by the implementation
//! (`open`, `refs`, the reflogs) and by our reader. The implementation must survive every
//! copy (`survives-damage`: `done` or `error`, no crash, no hang); where our reader rejects
//! the stack it must answer `error` or the undamaged state (`rejects-damage`), and where our
//! reader still reads it, `error`, our reading or the undamaged state (`reads-damage`). The
//! undamaged state counts as git's or as the implementation's own reading of git's stack
//! (its ordinary differences are the reader role's findings), reflog entries by ids alone.
//! A reading git itself gives of the damaged copy is git's, not a finding
//! ([`crate::impls::git_view`]).

use std::collections::BTreeSet;
use std::path::Path;

use crate::cases::executor::Executor;
use crate::damaged::damage::Damage;
use crate::damaged::damaged_copy;
use crate::impls::check::ImplCheck;
use crate::impls::git_view::git_reads_so;
use crate::impls::process::Failure;
use crate::impls::read::{comparable, differences, read_all, AskError};
use crate::impls::side::Side;
use crate::impls::tally::Tally;
use crate::impls::wire::Answer;
use crate::snapshot::Snapshot;

/// What the implementation made of a damaged copy.
enum Reading {
    /// It read these refs and reflogs (`done` throughout).
    Read(Snapshot),
    /// It answered `error` (or refused) at some request.
    Error,
    /// It does not offer a verb the reading needs.
    Unsupported(String),
    /// It crashed or hung.
    Failed(String),
}

/// What a damaged copy's reading is set against: the undamaged state, and the
/// implementation's own reading of it (its ordinary differences from git are the reader
/// role's findings, not damage's). Both as compared: see [`shape`].
struct Against {
    /// git's undamaged state.
    undamaged: Snapshot,
    /// The implementation's reading of the undamaged stack, where it gave one.
    baseline: Option<Snapshot>,
}

/// The damaged role's trials on a case's final state: `trials` damaged copies of git's
/// repository, trial `i` drawn from `(seed, index, i)`. The side stops at its first finding.
pub fn check_damaged(side: &mut Side, exec: &Executor<'_>, case: (u64, u64, u64), t: &mut Tally) {
    let (seed, index, trials) = case;
    let Some(against) = against(side, exec, t) else {
        return;
    };
    let work = match tempfile::TempDir::new() {
        Ok(w) => w,
        Err(e) => return t.not_tried(side.role, ImplCheck::SurvivesDamage, &e.to_string()),
    };
    let (hash, opts) = (exec.options().hash(), exec.refdb_options());
    let git = exec.env_git().version().to_string();
    for i in 0..trials {
        let dir = work.path().join(format!("trial{i}"));
        let copy = damaged_copy(exec.git_repo(), hash, (trial_seed(seed, index), i), &dir);
        let (repo, ours_stack, damage) = match copy {
            Ok(Some(c)) => c,
            Ok(None) => return t.not_tried(side.role, ImplCheck::SurvivesDamage, "no site"),
            Err(e) => return t.not_tried(side.role, ImplCheck::SurvivesDamage, &e),
        };
        let ours = ours_reading(&ours_stack, opts);
        let names = log_names(&against.undamaged, ours.as_ref().ok());
        let theirs = their_reading(side, &repo.join(".git"), &git, &names);
        let git_agrees = |got: &Snapshot, base: &Snapshot| git_reads_so(exec, &repo, got, base);
        judge(
            side,
            (i, &damage),
            (&against, &ours, &theirs),
            &git_agrees,
            t,
        );
        let _ = std::fs::remove_dir_all(&dir);
        if side.failed.is_some() {
            return;
        }
    }
}

/// The undamaged state read by our reader and by the implementation (on git's own
/// repository, which it only reads); `None` (not tried, and why) when either cannot be had.
fn against(side: &mut Side, exec: &Executor<'_>, t: &mut Tally) -> Option<Against> {
    let stack = exec.git_repo().join(".git/reftable");
    let undamaged = match Snapshot::of_stack_dir(&stack, exec.refdb_options()) {
        Ok(s) => s,
        Err(e) => {
            let why = format!("our reader cannot read the undamaged stack: {e:#}");
            t.not_tried(side.role, ImplCheck::SurvivesDamage, &why);
            return None;
        }
    };
    let names = log_names(&undamaged, None);
    let git = exec.env_git().version().to_string();
    let baseline = match their_reading(side, &exec.git_repo().join(".git"), &git, &names) {
        Reading::Read(s) => Some(shape(&s)),
        Reading::Error | Reading::Unsupported(_) => None,
        Reading::Failed(f) => {
            let why = format!("the adapter fails on the undamaged stack: {f}");
            t.not_tried(side.role, ImplCheck::SurvivesDamage, &why);
            return None;
        }
    };
    let undamaged = shape(&comparable(&undamaged, &side.adapter));
    Some(Against {
        undamaged,
        baseline,
    })
}

/// A state as the damaged role compares it: refs as they are, reflog entries by their ids
/// alone (identities, dates, zones and messages are the reader role's to check).
fn shape(s: &Snapshot) -> Snapshot {
    let mut s = s.clone();
    for e in s.logs.values_mut().flatten() {
        e.message.clear();
        (e.time, e.tz, e.who) = (0, None, None);
    }
    s
}

/// The damage seed of a case: the run's seed and the case's index mixed, so that the
/// trials of different cases draw differently.
fn trial_seed(seed: u64, index: u64) -> u64 {
    seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index.wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
}

/// Our reader's reading of a damaged stack: its state, or its error (a panic of ours, which
/// the damaged-stack mode is there to find, taken as a rejection and named).
fn ours_reading(stack: &Path, opts: reftable::refdb::RefDbOptions) -> Result<Snapshot, String> {
    let read = std::panic::catch_unwind(|| Snapshot::of_stack_dir(stack, opts));
    match read {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(format!("{e:#}")),
        Err(_) => Err("our reader panicked".into()),
    }
}

/// The reflogs asked for: every one the undamaged stack or our reading has, and HEAD's.
fn log_names(undamaged: &Snapshot, ours: Option<&Snapshot>) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = undamaged.logs.keys().cloned().collect();
    names.extend(ours.into_iter().flat_map(|s| s.logs.keys().cloned()));
    names.insert("HEAD".into());
    names
}

/// The implementation's reading of the damaged repository at `gitdir`: `open`, then its
/// refs and the reflogs of `names` (and of every name it lists).
fn their_reading(side: &mut Side, gitdir: &Path, git: &str, names: &BTreeSet<String>) -> Reading {
    match side.adapter.open(gitdir, git) {
        Err(f) => return Reading::Failed(format!("open: {f}")),
        Ok(Answer::Done(_)) => {}
        Ok(Answer::Unsupported(m)) => return Reading::Unsupported(m),
        Ok(Answer::Error(_) | Answer::Refused(_)) => return Reading::Error,
    }
    match read_all(&mut side.adapter, names) {
        Ok(s) => Reading::Read(s),
        Err(AskError::Answered(_)) => Reading::Error,
        Err(AskError::Unsupported(m)) => Reading::Unsupported(m),
        Err(AskError::Failed(f)) => Reading::Failed(match f {
            Failure::Hang(w) => format!("read: hang: {w}"),
            Failure::Crash(w) => format!("read: crash: {w}"),
        }),
    }
}

/// One trial judged: the adapter's reading against our reading and the undamaged state. A
/// reading other than those is still good when git reads the damaged copy so too
/// (`git_agrees`, asked only then, about what the reading changed).
fn judge(
    side: &mut Side,
    (i, damage): (u64, &Damage),
    (against, ours, theirs): (&Against, &Result<Snapshot, String>, &Reading),
    git_agrees: &dyn Fn(&Snapshot, &Snapshot) -> bool,
    t: &mut Tally,
) {
    let role = side.role;
    let what = || format!("(trial {i}: {})", edits(damage));
    let got = match theirs {
        Reading::Failed(f) => {
            t.count(role, ImplCheck::SurvivesDamage, false);
            let d = format!("{}: {f}; damage {}", damage.kinds(), what());
            side.failed.get_or_insert((ImplCheck::SurvivesDamage, d));
            return;
        }
        Reading::Unsupported(m) => return t.not_tried(role, ImplCheck::SurvivesDamage, m),
        Reading::Error => None,
        Reading::Read(s) => Some(shape(s)),
    };
    t.count(role, ImplCheck::SurvivesDamage, true);
    let (check, ours) = match ours {
        Err(e) => (ImplCheck::RejectsDamage, Err(e.as_str())),
        Ok(s) => (
            ImplCheck::ReadsDamage,
            Ok(shape(&comparable(s, &side.adapter))),
        ),
    };
    let want = &against.undamaged;
    let good = [Some(want), against.baseline.as_ref(), ours.as_ref().ok()];
    let Some(got) = got.filter(|g| !good.into_iter().flatten().any(|s| s == g)) else {
        return t.count(role, check, true);
    };
    // Against its own undamaged reading where it gave one: what the damage changed.
    let (base, whose) = match &against.baseline {
        Some(b) => (b, "its own reading of the undamaged stack"),
        None => (want, "git's"),
    };
    if git_agrees(&got, base) {
        return t.count(role, check, true);
    }
    t.count(role, check, false);
    let first: Vec<String> = (differences(&got, base).into_iter())
        .take(3)
        .map(|(_, d)| d)
        .collect();
    let ours_said = match &ours {
        Err(e) => format!("our reader rejects it: {e}"),
        Ok(s) if s == want => "our reader reads the undamaged state".into(),
        Ok(_) => "our reader reads it otherwise (neither reading is the implementation's)".into(),
    };
    let d = format!(
        "{}: read as good, other than the undamaged stack (against {whose}: {}); {ours_said}; damage {}",
        damage.kinds(),
        first.join("; "),
        what()
    );
    side.failed.get_or_insert((check, d));
}

/// The damage's edits, each in a line's words.
fn edits(damage: &Damage) -> String {
    let e: Vec<String> = damage.edits.iter().map(|e| e.summary()).collect();
    e.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{SLog, SValue};

    /// Reflog entries are compared by their ids alone; refs as they are.
    #[test]
    fn shape_keeps_ids_and_refs() {
        let entry = |tz| SLog {
            old: "a".into(),
            new: "b".into(),
            message: "m\n".into(),
            time: 7,
            tz: Some(tz),
            who: Some(("n".into(), "e".into())),
        };
        let mut a = Snapshot::default();
        a.refs
            .insert("HEAD".into(), SValue::Symref("refs/heads/main".into()));
        a.logs.insert("HEAD".into(), vec![entry(530)]);
        let mut b = a.clone();
        b.logs.insert("HEAD".into(), vec![entry(-700)]);
        assert_eq!(shape(&a), shape(&b));
        b.refs
            .insert("refs/heads/x".into(), SValue::Oid("c".into(), None));
        assert_ne!(shape(&a), shape(&b));
    }

    /// Each case draws its own damage.
    #[test]
    fn cases_draw_apart() {
        assert_ne!(trial_seed(1, 0), trial_seed(1, 1));
        assert_ne!(trial_seed(1, 0), trial_seed(2, 0));
    }
}
