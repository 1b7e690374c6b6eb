//! Opening a stack's tables from a `tables.list` and in-memory files, as git's stack does.
//!
//! This stands in for the library's stack (issue 3, not merged yet) so that the stack fuzz
//! target exercises `tables.list` handling and the merged view over fuzzed tables today. Once
//! `reftable::Stack` can open a stack from memory or a directory, the target should use it
//! and this module should go.

use reftable::{Error, ErrorKind, HashId, MergedTable, Result, Table};

use crate::stack_input::StackInput;

/// Whether `name` may appear in `tables.list`: non-empty, a plain file name.
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name != b"." && name != b".." && !name.contains(&b'/') && !name.contains(&0)
}

/// The tables `tables.list` names, oldest first. Like git 2.52 and later, a non-empty list
/// must end with a newline; a name without a file is [`ErrorKind::NotExist`].
pub fn open_tables(input: &StackInput<'_>) -> Result<Vec<Table>> {
    let list = input.list;
    if list.is_empty() {
        return Ok(Vec::new());
    }
    let Some(body) = list.strip_suffix(b"\n") else {
        return Err(Error::format("tables.list does not end with a newline").in_file("tables.list"));
    };
    let mut tables = Vec::new();
    for (i, name) in body.split(|&b| b == b'\n').enumerate() {
        if !valid_name(name) {
            return Err(Error::format(format!(
                "line {}: invalid table name {:?}",
                i + 1,
                String::from_utf8_lossy(name)
            ))
            .in_file("tables.list"));
        }
        let shown = String::from_utf8_lossy(name).into_owned();
        let Some(bytes) = input.file(name) else {
            return Err(
                Error::new(ErrorKind::NotExist, "table named in tables.list is missing")
                    .in_file(shown),
            );
        };
        tables.push(Table::from_bytes(shown, bytes.to_vec())?);
    }
    Ok(tables)
}

/// The merged view of the stack: its tables must all use the first table's hash.
pub fn open_merged(input: &StackInput<'_>) -> Result<MergedTable> {
    let tables = open_tables(input)?;
    let hash = tables.first().map_or(HashId::Sha1, Table::hash);
    MergedTable::new(tables, hash)
}
