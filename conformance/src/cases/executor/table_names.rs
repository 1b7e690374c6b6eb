//! git on a copy of its own stack whose tables were renamed, at the end of a case: git opens
//! a table by whatever name `tables.list` gives it, so it must read the same refs; and since
//! 2.52 `git refs verify` warns of each name outside git's own format
//! (`<hex>-<hex>-<hex>.ref` or `.log`), of no other, and otherwise says what it says of the
//! stack as git named it. The only way a command reaches the name check of git's reftable
//! fsck; the names are chosen so that every rule of that check decides one of them.

use std::path::Path;

use crate::cases::executor::Executor;

/// Names a table is renamed to, in this order from an offset that turns with the case, and
/// whether git's format allows them. An overflowing number comes right before an allowed
/// name: a check that does not clear the overflow of one name before reading the next
/// would refuse the second.
const NAMES: [(&str, bool); 8] = [
    // 17 hex digits do not fit 64 bits.
    ("1ffffffffffffffff-1-1.ref", false),
    // Allowed: unpadded numbers, a `.log` suffix.
    ("1-2-3.log", true),
    // No number before the first dash.
    ("table.ref", false),
    // No number before the second dash.
    ("0x1-table.ref", false),
    // Allowed: a `0x` prefix on every number, as git writes the first two.
    ("0x1-0x2-0x3.ref", true),
    // No number before the suffix.
    ("1-2-zz.ref", false),
    // Another suffix.
    ("1-2-3.txt", false),
    // Only one dash.
    ("1-2.ref", false),
];

impl Executor<'_> {
    /// The check described in the module docs; `own_verify` is what `git refs verify` said of
    /// git's stack (`None` for a git without it) and `expect` git's listing of its refs.
    pub(super) fn git_reads_renamed(
        &self,
        expect: &[String],
        own_verify: &Option<String>,
    ) -> Result<(), String> {
        let scratch = self.copy_of_git_repo()?;
        let stack = scratch.path().join(".git/reftable");
        let renamed = rename_tables(&stack, self.txns as usize)?;
        let listed = self.git_refs(scratch.path())?;
        if listed != expect {
            return Err(format!(
                "for-each-ref with tables renamed to {renamed:?}: {} lines, expected {}",
                listed.len(),
                expect.len()
            ));
        }
        // Table names are checked since 2.52, the release that also brought `git refs list`.
        let (Some(own), true) = (own_verify, self.env.profile.features.refs_list_exists) else {
            return Ok(());
        };
        let said = self.refs_verify(scratch.path())?.unwrap_or_default();
        let want = with_name_warnings(own, &renamed);
        if said != want {
            return Err(format!(
                "git refs verify with tables renamed to {renamed:?}: {said:?}, expected {want:?}"
            ));
        }
        Ok(())
    }
}

/// Rename the tables `stack/tables.list` names to [`NAMES`] from `offset` on (at most as
/// many tables as there are names; the others keep theirs), and the list with them: the
/// new names and whether git's format allows each.
fn rename_tables(stack: &Path, offset: usize) -> Result<Vec<(&'static str, bool)>, String> {
    let list = stack.join("tables.list");
    let content = std::fs::read_to_string(&list).map_err(|e| e.to_string())?;
    let mut lines = Vec::new();
    let mut renamed = Vec::new();
    for (i, old) in content.lines().enumerate() {
        if i >= NAMES.len() {
            lines.push(old.to_string());
            continue;
        }
        let (new, allowed) = NAMES[(offset + i) % NAMES.len()];
        std::fs::rename(stack.join(old), stack.join(new)).map_err(|e| format!("{old}: {e}"))?;
        lines.push(new.to_string());
        renamed.push((new, allowed));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(&list, text).map_err(|e| e.to_string())?;
    Ok(renamed)
}

/// What `refs verify` says of the renamed stack, from what it said of the original one
/// (`"<exit>: <stderr>"`): one warning per name the format does not allow, in list order,
/// before the rest (the tables are checked before the refs); warnings leave the exit as it
/// was.
fn with_name_warnings(own: &str, renamed: &[(&str, bool)]) -> String {
    let (exit, said) = own.split_once(": ").unwrap_or((own, ""));
    let mut lines: Vec<String> = renamed
        .iter()
        .filter(|(_, allowed)| !allowed)
        .map(|(name, _)| {
            format!("warning: {name}: badReftableTableName: invalid reftable table name")
        })
        .collect();
    lines.extend(said.lines().map(str::to_string));
    format!("{exit}: {}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warnings go before what git said of its own stack, in list order, and only for
    /// names the format does not allow.
    #[test]
    fn warnings_for_the_names_git_does_not_allow() {
        let renamed = [
            ("table.ref", false),
            ("1-2-3.log", true),
            ("1-2.ref", false),
        ];
        let w =
            |n: &str| format!("warning: {n}: badReftableTableName: invalid reftable table name");
        assert_eq!(
            with_name_warnings("Code(0): ", &renamed),
            format!("Code(0): {}\n{}", w("table.ref"), w("1-2.ref"))
        );
        assert_eq!(
            with_name_warnings("Code(255): error: HEAD: badHeadTarget: x", &renamed[1..2]),
            "Code(255): error: HEAD: badHeadTarget: x"
        );
    }

    /// Each table gets the next name from the offset on, and the list names them.
    #[test]
    fn tables_are_renamed_in_list_order() {
        let d = tempfile::tempdir().unwrap();
        for t in ["a.ref", "b.ref"] {
            std::fs::write(d.path().join(t), t).unwrap();
        }
        std::fs::write(d.path().join("tables.list"), "a.ref\nb.ref\n").unwrap();
        let renamed = rename_tables(d.path(), 1).unwrap();
        assert_eq!(renamed, [NAMES[1], NAMES[2]]);
        let list = std::fs::read_to_string(d.path().join("tables.list")).unwrap();
        assert_eq!(list, format!("{}\n{}\n", NAMES[1].0, NAMES[2].0));
        assert_eq!(
            std::fs::read_to_string(d.path().join(NAMES[2].0)).unwrap(),
            "b.ref"
        );
    }
}
