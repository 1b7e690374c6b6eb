//! A transaction's verdict from the implementation set against git's: accepted by both, or
//! refused by both for the same reason (git's refusal class mapped onto the protocol's).

use crate::cases::verdict::Refused;
use crate::err_class::ErrClass;
use crate::impls::wire::{Answer, Refusal};

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

/// Whether the implementation's answer agrees with git's verdict; when not, why.
pub fn agree(git: &Result<(), Refused>, answer: &Answer) -> Result<(), String> {
    match (git, answer) {
        (Ok(()), Answer::Done(_)) => Ok(()),
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
        assert!(agree(&Ok(()), &Answer::Done(serde_json::json!({}))).is_ok());
        assert!(agree(&git_refused, &refused("old-value")).is_ok());
        assert!(agree(&git_refused, &refused("lock")).is_err());
        assert!(agree(&Ok(()), &refused("old-value")).is_err());
        assert!(agree(&git_refused, &Answer::Done(serde_json::json!({}))).is_err());
        let unknown = Err(Refused {
            class: None,
            message: "?".into(),
        });
        assert!(agree(&unknown, &refused("other")).is_ok());
    }
}
