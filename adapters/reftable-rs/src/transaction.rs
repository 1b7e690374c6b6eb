//! The `transaction` verb: the protocol's updates as the library's [`RefUpdate`]s, applied
//! as one table or refused as a whole.

use reftable::refdb::{AssumeCommits, ObjectLookup, RefUpdate};
use reftable::HashId;
use serde_json::Value;

use crate::answer::Answer;
use crate::repo::Repo;
use crate::wire::{bool_field, parse_ident, parse_new, parse_old, str_field};

/// One protocol update as a [`RefUpdate`].
fn parse_update(u: &Value, hash: HashId) -> Result<RefUpdate, Answer> {
    if !u.is_object() {
        return Err(Answer::error("an update must be a JSON object"));
    }
    let name = str_field(u, "name")?;
    let new = parse_new(u.get("new"), hash)?;
    let mut expected = parse_old(u.get("old"), hash)?;
    if crate::plant::planted(crate::plant::Plant::SkipOldValue) {
        expected = reftable::refdb::Expected::Any;
    }
    let mut update = RefUpdate::new(name, new, expected);
    update.no_deref = bool_field(u, "no_deref")?;
    update.create_reflog = bool_field(u, "create_reflog")?;
    if let Some(m) = u.get("message").filter(|m| !m.is_null()) {
        let m = m
            .as_str()
            .ok_or_else(|| Answer::error("'message' must be a string"))?;
        update.message = m.as_bytes().to_vec();
    }
    Ok(update)
}

/// `transaction`: apply every update or none. `objects` answers object questions; without
/// it every object is taken for a commit.
pub fn transaction(
    repo: &mut Repo,
    req: &Value,
    objects: Option<&dyn ObjectLookup>,
) -> Result<Answer, Answer> {
    let committer = parse_ident(req.get("committer"))?;
    let updates = req
        .get("updates")
        .and_then(Value::as_array)
        .ok_or_else(|| Answer::error("missing array field 'updates'"))?
        .iter()
        .map(|u| parse_update(u, repo.hash))
        .collect::<Result<Vec<_>, _>>()?;
    let objects = objects.unwrap_or(&AssumeCommits);
    repo.db
        .transaction(&updates, &committer, objects)
        .map_err(|e| Answer::from_error(&e))?;
    Ok(Answer::done())
}
