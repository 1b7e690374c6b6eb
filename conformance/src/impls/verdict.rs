//! A transaction's verdict from the implementation set against git's: accepted by both, or
//! refused by both for the same reason (git's refusal class mapped onto the protocol's).

use crate::cases::verdict::Refused;
use crate::err_class::ErrClass;
use crate::impls::wire::{Answer, Refusal};
use crate::model::Faults;

/// The protocol's reason for a refusal of git's class.
pub fn reason_of(class: ErrClass) -> &'static str {
    match class {
        ErrClass::BadName | ErrClass::Duplicate => "name",
        ErrClass::DfConflict => "df-conflict",
        ErrClass::OldValue => "old-value",
        ErrClass::MissingObject | ErrClass::NoReflog | ErrClass::NoBranch => "missing",
        ErrClass::Lock | ErrClass::Outdated => "lock",
        ErrClass::NonCommit
        | ErrClass::EntryTooLarge
        | ErrClass::BranchExists
        | ErrClass::SymrefNotMovable => "other",
    }
}

/// The classes a protocol reason stands for.
pub fn classes_of(reason: &str) -> &'static [ErrClass] {
    match reason {
        "old-value" => &[ErrClass::OldValue],
        "df-conflict" => &[ErrClass::DfConflict],
        "missing" => &[
            ErrClass::MissingObject,
            ErrClass::NoReflog,
            ErrClass::NoBranch,
        ],
        "name" => &[ErrClass::BadName, ErrClass::Duplicate],
        "lock" => &[ErrClass::Lock, ErrClass::Outdated],
        "other" => &[
            ErrClass::NonCommit,
            ErrClass::EntryTooLarge,
            ErrClass::BranchExists,
            ErrClass::SymrefNotMovable,
        ],
        _ => &[],
    }
}

/// Whether the implementation's answer agrees with git's verdict; when not, why. `faults`,
/// when the model refused the transaction too, are all its faults: git reports one of them
/// (which one changed between versions), and so may the implementation.
pub fn agree(
    git: &Result<(), Refused>,
    answer: &Answer,
    faults: Option<Faults>,
) -> Result<(), String> {
    match (git, answer) {
        (Ok(()), Answer::Done(_)) => Ok(()),
        (Err(_), Answer::Refused(r)) if one_of(r, faults) => Ok(()),
        (Err(g), Answer::Refused(r)) => same_reason(g, r),
        (Ok(()), Answer::Refused(r)) => Err(format!(
            "refused ({}: {}) what git accepted",
            r.reason, r.message
        )),
        (Err(g), Answer::Done(_)) => Err(format!(
            "accepted what git refused ({})",
            g.message.lines().next().unwrap_or("")
        )),
        (_, Answer::Error(m)) => Err(format!("error: {m}")),
        (_, Answer::Unsupported(m)) => Err(format!("unsupported: {m}")),
    }
}

/// Whether the implementation's reason is one of the transaction's faults.
fn one_of(r: &Refusal, faults: Option<Faults>) -> bool {
    let Some(faults) = faults else {
        return false;
    };
    (classes_of(&r.reason).iter()).any(|c| c.fault().is_some_and(|f| faults.contains(f)))
}

/// Two refusals for the same reason; git's wording not in the table takes any reason.
fn same_reason(git: &Refused, r: &Refusal) -> Result<(), String> {
    let Some(class) = git.class else {
        return Ok(());
    };
    let want = reason_of(class);
    if r.reason == want {
        return Ok(());
    }
    Err(format!(
        "refused as {} ({}), git as {want} ({})",
        r.reason,
        r.message,
        git.message.lines().next().unwrap_or("")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(reason: &str) -> Answer {
        Answer::Refused(Refusal {
            reason: reason.into(),
            detail: None,
            message: "m".into(),
        })
    }

    #[test]
    fn verdicts_agree_on_acceptance_and_on_the_reason() {
        let git_refused = Err(Refused {
            class: Some(ErrClass::OldValue),
            message: "is at X but expected Y".into(),
        });
        assert!(agree(&Ok(()), &Answer::Done(serde_json::json!({})), None).is_ok());
        assert!(agree(&git_refused, &refused("old-value"), None).is_ok());
        assert!(agree(&git_refused, &refused("lock"), None).is_err());
        assert!(agree(&Ok(()), &refused("old-value"), None).is_err());
        assert!(agree(&git_refused, &Answer::Done(serde_json::json!({})), None).is_err());
        let unknown = Err(Refused {
            class: None,
            message: "?".into(),
        });
        assert!(agree(&unknown, &refused("other"), None).is_ok());
    }

    #[test]
    fn any_fault_of_the_transaction_is_a_reason_when_the_model_knows_them() {
        let git = Err(Refused {
            class: Some(ErrClass::NonCommit),
            message: "trying to write non-commit object".into(),
        });
        let both: Faults = [ErrClass::NonCommit, ErrClass::DfConflict]
            .iter()
            .filter_map(|c| c.fault())
            .collect();
        assert!(agree(&git, &refused("df-conflict"), Some(both)).is_ok());
        assert!(agree(&git, &refused("old-value"), Some(both)).is_err());
        assert!(agree(&git, &refused("df-conflict"), None).is_err());
    }
}
