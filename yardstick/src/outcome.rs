//! What became of one mutant: its class, from how the build, the gate's modes, the counters
//! comparison and the user's tests ended, and the record kept of it.
//!
//! The classes:
//!
//! | class | meaning |
//! | --- | --- |
//! | `killed-by-gate` | a gate mode failed on the mutant (a divergence, or git unusable), the tests passed or were not run |
//! | `killed-by-counters` | every gate mode passed, but the mutant makes more system calls per ref than the unmutated build (`complexity --counters` exit 1) |
//! | `killed-by-tests` | only the user's tests failed |
//! | `both` | the gate (modes or counters) and the tests failed |
//! | `survived` | everything passed |
//! | `timeout` | nothing failed, but something hung and was killed at its time budget |
//! | `unviable` | the mutant does not build |
//! | `equivalent` | the mutant builds to the same object code (code the preprocessor drops, say): nothing can tell it apart, so nothing is run |

use serde::{Deserialize, Serialize};

use crate::command::Ran;
use crate::mutants::Mutant;

/// A mutant's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// A gate mode failed, the tests did not.
    KilledByGate,
    /// Only the counters comparison failed (among gate and tests).
    KilledByCounters,
    /// Only the tests failed.
    KilledByTests,
    /// The gate and the tests failed.
    Both,
    /// Nothing failed.
    Survived,
    /// Nothing failed, something hung.
    Timeout,
    /// Does not build.
    Unviable,
    /// Same object code as the unmutated build.
    Equivalent,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 8] = [
        Class::KilledByGate,
        Class::KilledByCounters,
        Class::Both,
        Class::KilledByTests,
        Class::Survived,
        Class::Timeout,
        Class::Unviable,
        Class::Equivalent,
    ];

    /// The class's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::KilledByGate => "killed-by-gate",
            Class::KilledByCounters => "killed-by-counters",
            Class::KilledByTests => "killed-by-tests",
            Class::Both => "both",
            Class::Survived => "survived",
            Class::Timeout => "timeout",
            Class::Unviable => "unviable",
            Class::Equivalent => "equivalent",
        }
    }

    /// Built and ran (the denominator of a score).
    pub fn viable(self) -> bool {
        !matches!(self, Class::Unviable | Class::Equivalent)
    }

    /// The gate (its modes or the counters) killed it.
    pub fn gate_killed(self) -> bool {
        matches!(
            self,
            Class::KilledByGate | Class::KilledByCounters | Class::Both
        )
    }

    /// The tests killed it.
    pub fn tests_killed(self) -> bool {
        matches!(self, Class::KilledByTests | Class::Both)
    }
}

/// The class of a mutant that built, from how its commands ended.
pub fn classify(gate: &[Ran], tests: &[Ran], counters: Option<&Ran>) -> Class {
    let gate_kill = gate.iter().any(Ran::failed);
    let counters_kill = counters.is_some_and(|c| c.exit == "1");
    let tests_kill = tests.iter().any(Ran::failed);
    let hung = gate.iter().chain(tests).chain(counters).any(Ran::timed_out);
    match (gate_kill || counters_kill, tests_kill) {
        (true, true) => Class::Both,
        (true, false) if gate_kill => Class::KilledByGate,
        (true, false) => Class::KilledByCounters,
        (false, true) => Class::KilledByTests,
        (false, false) if hung => Class::Timeout,
        (false, false) => Class::Survived,
    }
}

/// The record of one mutant.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MutantResult {
    /// Its place in the shard's plan.
    pub index: usize,
    /// The mutant.
    pub mutant: Mutant,
    /// What became of it.
    pub class: Class,
    /// The source lines before and after.
    pub diff: String,
    /// The build.
    pub build: Ran,
    /// The gate's modes run, in order (they stop at the first that fails).
    pub gate: Vec<Ran>,
    /// The counters comparison, when the modes passed and counters were asked for.
    pub counters: Option<Ran>,
    /// The user's tests run, in order (they stop at the first that fails).
    pub tests: Vec<Ran>,
    /// Wall time of the whole mutant (build included).
    pub seconds: f64,
    /// The build's last lines for an unviable mutant, else empty.
    pub note: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(exit: &str) -> Ran {
        Ran {
            label: "x".into(),
            exit: exit.into(),
            seconds: 1.0,
        }
    }

    #[test]
    fn classes_follow_what_failed() {
        let (ok, bad, hung) = (|| ran("0"), || ran("1"), || ran("timeout"));
        let c = |g: &[Ran], t: &[Ran], k: Option<&Ran>| classify(g, t, k);
        assert_eq!(c(&[ok()], &[ok()], None), Class::Survived);
        assert_eq!(c(&[bad()], &[ok()], None), Class::KilledByGate);
        assert_eq!(c(&[bad()], &[], None), Class::KilledByGate);
        assert_eq!(c(&[ok()], &[bad()], None), Class::KilledByTests);
        assert_eq!(c(&[bad()], &[bad()], None), Class::Both);
        assert_eq!(c(&[ok()], &[ok()], Some(&bad())), Class::KilledByCounters);
        assert_eq!(c(&[ok()], &[bad()], Some(&bad())), Class::Both);
        assert_eq!(c(&[ok()], &[ok()], Some(&ran("2"))), Class::Survived);
        assert_eq!(c(&[hung()], &[ok()], None), Class::Timeout);
        assert_eq!(c(&[hung()], &[bad()], None), Class::KilledByTests);
        assert_eq!(c(&[ran("signal 11")], &[], None), Class::KilledByGate);
        assert!(Class::Both.gate_killed() && Class::Both.tests_killed());
        assert!(!Class::Unviable.viable() && Class::Timeout.viable());
    }
}
