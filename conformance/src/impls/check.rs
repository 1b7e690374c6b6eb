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
}

impl ImplCheck {
    /// Every check, in the matrix's order.
    pub const ALL: [ImplCheck; 15] = [
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
}

impl Role {
    /// Every role, in order.
    pub const ALL: [Role; 4] = [Role::Reader, Role::Writer, Role::Interleaved, Role::Damaged];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Writer => "writer",
            Role::Interleaved => "interleaved",
            Role::Damaged => "damaged",
        }
    }

    /// The role a name gives.
    pub fn parse(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                format!("no role {s}: the roles are reader, writer, interleaved, damaged")
            })
    }
}
