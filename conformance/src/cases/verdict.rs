//! Comparing outcomes: whether git, this crate and the model accept an operation, and when
//! they refuse it, whether for a reason that applies.
//!
//! git's check order changed between versions (objects checked when an update is queued in
//! newer gits, D/F checks batched after the per-update checks since 2.50), so a transaction
//! with two faults is refused by different gits for different reasons. The model names every
//! fault of a transaction; a refusal passes when the reason reported is one of them.

use crate::err_class::ErrClass;
use crate::finding::divergence::Check;
use crate::model::Refusal;

/// How an implementation refused: the class (`None` for git: a message the wording table
/// does not know, which is reported and never taken for a match; for us: an error that is no
/// refusal, such as an I/O error) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The class, when the message is known.
    pub class: Option<ErrClass>,
    /// What git printed.
    pub message: String,
}

/// One failed comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The check that failed.
    pub check: Check,
    /// A short class (`error mismatch`, `unclassified git message`).
    pub class: &'static str,
    /// What differs.
    pub detail: String,
}

/// The comparisons made on one operation's outcomes, and the first that failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerdictComparison {
    /// Checks compared (each counted once).
    pub compared: Vec<Check>,
    /// The first failed comparison.
    pub mismatch: Option<Mismatch>,
    /// The model could not judge (a storage-level refusal such as an entry too large for
    /// the block size: the model knows no tables).
    pub model_not_applicable: bool,
}

fn show(r: &Result<(), Refused>) -> String {
    match r {
        Ok(()) => "accepted".into(),
        Err(Refused {
            class: Some(c),
            message,
        }) => format!("refused ({c:?}): {}", first_line(message)),
        Err(Refused {
            class: None,
            message,
        }) => format!("refused (unclassified): {}", first_line(message)),
    }
}

fn first_line(s: &str) -> &str {
    s.trim().lines().next().unwrap_or("")
}

/// Compare git's outcome, ours and (for transactions) the model's.
///
/// - git's message must be classified; an unknown one fails [`Check::ErrorClass`].
/// - git and we must agree on accepting ([`Check::Verdict`]).
/// - When both refuse a transaction, git's reason and ours must each be a fault the model
///   found ([`Check::ErrorClass`]); for other operations the two classes must be equal.
/// - The model must agree on accepting, and the reason git gave must be one of its faults
///   ([`Check::Model`]), unless git refused for a storage reason the model cannot judge.
pub fn compare(
    git: &Result<(), Refused>,
    ours: &Result<(), Refused>,
    model: Option<&Result<(), Refusal>>,
) -> VerdictComparison {
    let mut out = VerdictComparison::default();
    out.compared.push(Check::Verdict);
    out.mismatch = first_mismatch(&mut out, git, ours, model);
    out
}

/// [`compare`] for a transaction the model cannot judge (one in a linked worktree), on a git
/// whose check order differs from the library's (`reorders`: it checks objects when an
/// update is queued or batches its D/F checks, 2.48+): when both refuse, each reason must be
/// a fault of a transaction, but which of the transaction's faults each reports first is not
/// compared, since without the model the set is unknown. On a git that checks in the
/// library's order the classes must be equal, as everywhere else.
pub fn compare_unmodeled(
    git: &Result<(), Refused>,
    ours: &Result<(), Refused>,
    reorders: bool,
) -> VerdictComparison {
    let mut c = compare(git, ours, None);
    if let (true, Some(m), Err(g), Err(o)) = (reorders, &c.mismatch, git, ours) {
        let both_faults = [g.class, o.class]
            .iter()
            .all(|c| c.is_some_and(|c| c.fault().is_some()));
        if m.check == Check::ErrorClass && both_faults {
            c.mismatch = None;
        }
    }
    c
}

/// A failed comparison (as [`first_mismatch`] returns it).
fn mismatch(check: Check, class: &'static str, detail: String) -> Option<Mismatch> {
    Some(Mismatch {
        check,
        class,
        detail,
    })
}

/// The comparisons of [`compare`] in order, each recorded in `out` as it is made; the first
/// that fails.
fn first_mismatch(
    out: &mut VerdictComparison,
    git: &Result<(), Refused>,
    ours: &Result<(), Refused>,
    model: Option<&Result<(), Refusal>>,
) -> Option<Mismatch> {
    if let Err(Refused {
        class: None,
        message,
    }) = git
    {
        out.compared.push(Check::ErrorClass);
        return mismatch(
            Check::ErrorClass,
            "unclassified git message",
            format!(
                "git's message is not in the wording table (conformance/src/messages.rs): {}",
                message.trim()
            ),
        );
    }
    let git_class = git.as_ref().err().and_then(|r| r.class);
    if git.is_ok() != ours.is_ok() {
        return mismatch(
            Check::Verdict,
            "error mismatch",
            format!("git {}, ours {}", show(git), show(ours)),
        );
    }
    if let Err(Refused {
        class: None,
        message,
    }) = ours
    {
        out.compared.push(Check::ErrorClass);
        return mismatch(
            Check::ErrorClass,
            "unexpected library error",
            format!("git {}, ours failed: {message}", show(git)),
        );
    }
    let ours = ours
        .as_ref()
        .map_err(|r| r.class.expect("classified above"));
    let storage = git_class.is_some_and(|c| c.fault().is_none());
    if let (Some(g), Err(o)) = (git_class, ours) {
        out.compared.push(Check::ErrorClass);
        if let Some(f) = class_mismatch(git, g, o, model, storage) {
            return Some(f);
        }
    }
    let m = model?;
    if storage {
        out.model_not_applicable = true;
        return None;
    }
    out.compared.push(Check::Model);
    model_mismatch(git, git_class, m)
}

/// When git and we both refuse (`g`, `o`): for a transaction the model refuses, each reason
/// must be one of its faults; otherwise (and for a storage refusal) the classes must be equal.
fn class_mismatch(
    git: &Result<(), Refused>,
    g: ErrClass,
    o: ErrClass,
    model: Option<&Result<(), Refusal>>,
    storage: bool,
) -> Option<Mismatch> {
    match model {
        Some(Err(refusal)) if !storage => {
            let applies = |c: ErrClass| c.fault().is_some_and(|f| refusal.faults.contains(f));
            if !applies(g) || !applies(o) {
                return mismatch(
                    Check::ErrorClass,
                    "error mismatch",
                    format!(
                        "git {}, ours {o:?}; the faults of this transaction are {}",
                        show(git),
                        refusal.faults
                    ),
                );
            }
        }
        _ if g != o => {
            return mismatch(
                Check::ErrorClass,
                "error mismatch",
                format!("git {}, ours {o:?}", show(git)),
            );
        }
        _ => {}
    }
    None
}

/// The model must agree with git on accepting, and git's reason must be one of its faults.
fn model_mismatch(
    git: &Result<(), Refused>,
    git_class: Option<ErrClass>,
    m: &Result<(), Refusal>,
) -> Option<Mismatch> {
    let agrees = match (git_class, m) {
        (None, Ok(())) => true,
        (Some(g), Err(r)) => g.fault().is_some_and(|f| r.faults.contains(f)),
        _ => false,
    };
    if agrees {
        return None;
    }
    let m = match m {
        Ok(()) => "accepts".to_string(),
        Err(r) => format!("refuses with faults {}", r.faults),
    };
    mismatch(
        Check::Model,
        "error mismatch",
        format!("git {}, the model {m}", show(git)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Fault, Faults};

    fn ours(class: ErrClass) -> Result<(), Refused> {
        Err(Refused {
            class: Some(class),
            message: format!("{class:?}"),
        })
    }

    fn refused(class: ErrClass) -> Result<(), Refused> {
        Err(Refused {
            class: Some(class),
            message: format!("fatal: {class:?}"),
        })
    }

    fn faults(f: &[Fault]) -> Result<(), Refusal> {
        Err(Refusal {
            faults: f.iter().copied().collect::<Faults>(),
            first: f[0],
        })
    }

    #[test]
    fn two_faults_pass_whichever_git_reports() {
        // A wrong old value and a tree on a branch: git 2.47 reports the first, git 2.55 the
        // second (objects are checked when the update is queued).
        let model = faults(&[Fault::OldValue, Fault::NonCommit]);
        for g in [ErrClass::OldValue, ErrClass::NonCommit] {
            let c = compare(&refused(g), &ours(ErrClass::OldValue), Some(&model));
            assert_eq!(c.mismatch, None, "git reporting {g:?}");
            assert_eq!(
                c.compared,
                [Check::Verdict, Check::ErrorClass, Check::Model]
            );
        }
        // A D/F conflict and a missing ref: 2.47 reports the conflict, 2.50+ the old value.
        let model = faults(&[Fault::DfConflict, Fault::OldValue]);
        for g in [ErrClass::DfConflict, ErrClass::OldValue] {
            for o in [ErrClass::DfConflict, ErrClass::OldValue] {
                assert_eq!(compare(&refused(g), &ours(o), Some(&model)).mismatch, None);
            }
        }
    }

    #[test]
    fn a_reason_that_does_not_apply_fails() {
        let model = faults(&[Fault::OldValue, Fault::NonCommit]);
        let c = compare(
            &refused(ErrClass::DfConflict),
            &ours(ErrClass::OldValue),
            Some(&model),
        );
        let f = c.mismatch.expect("diverges");
        assert_eq!(f.check, Check::ErrorClass);
        assert!(f.detail.contains("{OldValue, NonCommit}"), "{}", f.detail);
        // Ours giving a reason outside the set fails the same way.
        let c = compare(
            &refused(ErrClass::OldValue),
            &ours(ErrClass::Duplicate),
            Some(&model),
        );
        assert_eq!(c.mismatch.expect("diverges").check, Check::ErrorClass);
    }

    #[test]
    fn unclassified_messages_are_never_a_match() {
        let git = Err(Refused {
            class: None,
            message: "fatal: something new went wrong\n".into(),
        });
        let c = compare(
            &git,
            &ours(ErrClass::OldValue),
            Some(&faults(&[Fault::OldValue])),
        );
        let f = c.mismatch.expect("diverges");
        assert_eq!(
            (f.check, f.class),
            (Check::ErrorClass, "unclassified git message")
        );
        assert!(f.detail.contains("something new went wrong"));
    }

    #[test]
    fn verdicts_and_the_model() {
        let ok: Result<(), Refused> = Ok(());
        assert_eq!(compare(&ok, &Ok(()), Some(&Ok(()))).mismatch, None);
        let c = compare(&ok, &ours(ErrClass::OldValue), Some(&Ok(())));
        assert_eq!(c.mismatch.expect("diverges").check, Check::Verdict);
        // git and we accept what the model refuses.
        let c = compare(&ok, &Ok(()), Some(&faults(&[Fault::NonCommit])));
        assert_eq!(c.mismatch.expect("diverges").check, Check::Model);
        // A storage refusal: the model cannot judge.
        let c = compare(
            &refused(ErrClass::EntryTooLarge),
            &ours(ErrClass::EntryTooLarge),
            Some(&Ok(())),
        );
        assert_eq!(c.mismatch, None);
        assert!(c.model_not_applicable);
        // Other operations compare classes exactly.
        let c = compare(&refused(ErrClass::NoReflog), &ours(ErrClass::Lock), None);
        assert_eq!(c.mismatch.expect("diverges").check, Check::ErrorClass);
        assert_eq!(
            compare(
                &refused(ErrClass::NoReflog),
                &ours(ErrClass::NoReflog),
                None
            )
            .mismatch,
            None
        );
    }

    #[test]
    fn an_unmodeled_refusal_may_name_another_fault_only_on_a_git_that_reorders() {
        let g = refused(ErrClass::NonCommit);
        let o = refused(ErrClass::OldValue);
        assert!(compare_unmodeled(&g, &o, true).mismatch.is_none());
        assert!(compare_unmodeled(&g, &o, false).mismatch.is_some());
        // Accepting against refusing is a mismatch however git orders its checks.
        assert!(compare_unmodeled(&Ok(()), &o, true).mismatch.is_some());
    }
}
