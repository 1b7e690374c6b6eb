//! What the roles check, by name: the rows of an implementation's conformance matrix.

use serde::{Deserialize, Serialize};

/// One check of a role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImplCheck {
    /// Every ref's object id (refs that are not symrefs).
    RefValues,
    /// Every symref's target.
    Symrefs,
    /// Peeled ids of annotated tags (where the implementation claims them).
    Peeled,
    /// One ref looked up by name (each ref the step touched).
    Lookup,
    /// Each reflog's entries: ids, identity, date, zone, message.
    Reflogs,
    /// Which refs have a reflog.
    ReflogNames,
    /// A transaction accepted or refused as git did, for the same reason.
    Verdict,
    /// What the implementation wrote reads, to our reader, as what git wrote does.
    State,
    /// What the implementation wrote reads, to git, as what git wrote does (`for-each-ref`,
    /// reflogs), and `git refs verify` and `git fsck` find nothing more in it.
    GitReads,
    /// The stack's invariants after its writes: `tables.list` names readable tables in
    /// update-index order, no lock left behind (our deep check of the stack).
    Invariants,
    /// Tables byte for byte as git's (where the implementation claims it).
    Bytes,
    /// The adapter answered every request (no crash, no hang, no error where git had none).
    Answers,
    /// On a damaged copy of git's stack the adapter answers every request, `done` or
    /// `error`: no crash, no hang.
    SurvivesDamage,
    /// Where our reader rejects a damaged stack, the adapter answers `error` or reads the
    /// undamaged state: never other refs or reflogs read as good.
    RejectsDamage,
    /// Where our reader still reads a damaged stack (the damage left a valid stack), the
    /// adapter answers `error`, or reads what our reader reads or the undamaged state.
    ReadsDamage,
    /// Beside git's writers, every transaction the implementation acknowledged is in the
    /// stack once, under an update index of its own, within the time it ran, and all of
    /// them replay on the model in that order (no lost update).
    Acknowledged,
    /// Each refusal has a cause (a held lock, or a fault of the transaction at some moment
    /// while it ran) and leaves no trace.
    Refusals,
    /// Readers sampling the stack while the writers ran never see a torn or older state.
    Samples,
    /// The final stack reads, to git and to us, as the replay ends; its reflogs too; no
    /// lock or stray file is left and `git refs verify` passes.
    FinalStack,
}

impl ImplCheck {
    /// Every check, in the matrix's order.
    pub const ALL: [ImplCheck; 19] = [
        ImplCheck::RefValues,
        ImplCheck::Symrefs,
        ImplCheck::Peeled,
        ImplCheck::Lookup,
        ImplCheck::Reflogs,
        ImplCheck::ReflogNames,
        ImplCheck::Verdict,
        ImplCheck::State,
        ImplCheck::GitReads,
        ImplCheck::Invariants,
        ImplCheck::Bytes,
        ImplCheck::Answers,
        ImplCheck::SurvivesDamage,
        ImplCheck::RejectsDamage,
        ImplCheck::ReadsDamage,
        ImplCheck::Acknowledged,
        ImplCheck::Refusals,
        ImplCheck::Samples,
        ImplCheck::FinalStack,
    ];

    /// Its name in reports and in the registry.
    pub fn name(self) -> &'static str {
        match self {
            ImplCheck::RefValues => "ref-values",
            ImplCheck::Symrefs => "symrefs",
            ImplCheck::Peeled => "peeled",
            ImplCheck::Lookup => "lookup",
            ImplCheck::Reflogs => "reflogs",
            ImplCheck::ReflogNames => "reflog-names",
            ImplCheck::Verdict => "verdict",
            ImplCheck::State => "state",
            ImplCheck::GitReads => "git-reads",
            ImplCheck::Invariants => "invariants",
            ImplCheck::Bytes => "bytes",
            ImplCheck::Answers => "answers",
            ImplCheck::SurvivesDamage => "survives-damage",
            ImplCheck::RejectsDamage => "rejects-damage",
            ImplCheck::ReadsDamage => "reads-damage",
            ImplCheck::Acknowledged => "acknowledged",
            ImplCheck::Refusals => "refusals",
            ImplCheck::Samples => "samples",
            ImplCheck::FinalStack => "final-stack",
        }
    }
}

/// The roles an implementation is put in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// It reads the stack git wrote, after every step.
    Reader,
    /// It applies the case's transactions to a copy of the stack (git the other operations).
    Writer,
    /// It and git take turns with the case's transactions on one stack.
    Interleaved,
    /// It reads damaged copies of git's stack once the case is over (opt-in: slower).
    Damaged,
    /// Its writer processes run beside git's on one repository (one round per run, not
    /// per case), with the concurrent mode's accounting.
    Concurrent,
}

impl Role {
    /// Every role, in order.
    pub const ALL: [Role; 5] = [
        Role::Reader,
        Role::Writer,
        Role::Interleaved,
        Role::Damaged,
        Role::Concurrent,
    ];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Writer => "writer",
            Role::Interleaved => "interleaved",
            Role::Damaged => "damaged",
            Role::Concurrent => "concurrent",
        }
    }

    /// Whether the role makes `check` (the matrix has a row for each it makes).
    pub fn checks(self, check: ImplCheck) -> bool {
        use ImplCheck::*;
        let damage = matches!(check, SurvivesDamage | RejectsDamage | ReadsDamage);
        let rounds = matches!(check, Acknowledged | Refusals | Samples | FinalStack);
        let writes = matches!(check, Verdict | State | GitReads | Invariants | Bytes);
        match self {
            Role::Damaged => damage,
            Role::Concurrent => rounds || check == Answers,
            Role::Reader => !damage && !rounds && !writes,
            // The writer reads nothing through the adapter: what it wrote is read by us.
            Role::Writer => writes || matches!(check, Answers | Reflogs),
            Role::Interleaved => !damage && !rounds,
        }
    }

    /// The role a name gives.
    pub fn parse(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                format!(
                    "no role {s}: the roles are reader, writer, interleaved, damaged, concurrent"
                )
            })
    }
}
