//! Whose a finding of a damaged stack is ([`Side`]) and what kind it is ([`Class`]): the
//! words the report, the finding directories, the CI results and the registry's `damaged`
//! signatures (`class command what`) use for them.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Whose command went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// git under test.
    Git,
    /// Our library.
    Ours,
}

impl Side {
    /// Both sides, in report order.
    pub const ALL: [Side; 2] = [Side::Git, Side::Ours];

    /// Its name in reports (`git`, `ours`).
    pub fn name(self) -> &'static str {
        match self {
            Side::Git => "git",
            Side::Ours => "ours",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What went wrong on a damaged stack. Either side may crash (git by a signal), hang or
/// touch a file outside the repository; the rest belong to one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// git was killed by a signal (or its sanitizer caught one).
    Crash,
    /// The command ran past the timeout.
    Hang,
    /// Our library panicked.
    Panic,
    /// A file outside the repository was created, changed or removed.
    TouchedOutside,
    /// A sanitizer built into git reported a leak, a bad access or undefined behaviour.
    SanitizerReport,
    /// git exited 0 with no output where the undamaged stack has some and we report an
    /// error: a load error swallowed.
    HiddenLoadError,
    /// git exited 0 printing data from a stack we reject.
    PrintedWhatWeReject,
    /// `git refs verify` passed a stack we reject.
    VerifyPassesWhatWeReject,
    /// We answered, other than the undamaged stack, where git refused the stack.
    AnsweredWhereGitRefused,
    /// We answered other than the undamaged stack where git still gave its answer.
    WrongWhereGitRight,
}

impl Class {
    /// Every class.
    pub const ALL: [Class; 10] = [
        Class::Crash,
        Class::Hang,
        Class::Panic,
        Class::TouchedOutside,
        Class::SanitizerReport,
        Class::HiddenLoadError,
        Class::PrintedWhatWeReject,
        Class::VerifyPassesWhatWeReject,
        Class::AnsweredWhereGitRefused,
        Class::WrongWhereGitRight,
    ];

    /// Its name in reports, directory names and the registry's signatures.
    pub fn name(self) -> &'static str {
        match self {
            Class::Crash => "crash",
            Class::Hang => "hang",
            Class::Panic => "panic",
            Class::TouchedOutside => "touched-outside",
            Class::SanitizerReport => "sanitizer-report",
            Class::HiddenLoadError => "hidden-load-error",
            Class::PrintedWhatWeReject => "printed-what-we-reject",
            Class::VerifyPassesWhatWeReject => "verify-passes-what-we-reject",
            Class::AnsweredWhereGitRefused => "answered-where-git-refused",
            Class::WrongWhereGitRight => "wrong-where-git-right",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Ordered by name, as the findings were when classes were strings: a run's findings (and
/// the numbers of their directories) come in the same order.
impl Ord for Class {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Class {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's JSON, its text and the registry see the same words.
    #[test]
    fn serde_and_display_give_the_same_names() {
        for c in Class::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
            assert_eq!(c.to_string(), c.name());
            let back: Class = serde_json::from_value(c.name().into()).unwrap();
            assert_eq!(back, c);
        }
        for s in Side::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(s.to_string(), s.name());
        }
        let mut by_order = Side::ALL;
        by_order.sort();
        let mut by_name = Side::ALL;
        by_name.sort_by_key(|s| s.name());
        assert_eq!(by_order, by_name);
    }
}
