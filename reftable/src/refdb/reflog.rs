//! Reflogs as git's reftable backend keeps them: reading them (entries newest first,
//! tombstones and existence markers hidden), creating and deleting them, expiring entries,
//! and `git pack-refs`.

use crate::codec::record::{LogRecord, LogUpdate, LogValue, Record, RefRecord, RefValue};
use crate::error::Result;
use crate::hash::{HashId, ObjectId};
use crate::merged::{MergedIter, MergedTable, RefLog};
use crate::stack::{Committed, Outdated};

use super::objects::{ObjectKind, ObjectLookup};
use super::RefDb;

/// git's reflog message normalization: runs of whitespace (space, tab, CR, LF) become one
/// space, leading and trailing whitespace is dropped, and the message ends at a NUL.
///
/// ```
/// assert_eq!(reftable::refdb::normalize_message(b"  multi\n\nline\t x "), b"multi line x");
/// ```
pub fn normalize_message(msg: &[u8]) -> Vec<u8> {
    let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let mut out = Vec::with_capacity(msg.len());
    let mut was_space = true;
    for &c in msg {
        if c == 0 {
            break;
        }
        if was_space && is_space(c) {
            continue;
        }
        was_space = is_space(c);
        out.push(if was_space { b' ' } else { c });
    }
    while out.last() == Some(&b' ') {
        out.pop();
    }
    out
}

/// A reflog existence marker: null old and new ids, empty strings, time 0.
pub(crate) fn existence_marker(name: &[u8], update_index: u64, hash: HashId) -> LogRecord {
    LogRecord {
        refname: name.to_vec(),
        update_index,
        value: LogValue::Update(LogUpdate {
            old_id: ObjectId::null(hash),
            new_id: ObjectId::null(hash),
            ..Default::default()
        }),
    }
}

/// The names with a reflog in a stack, in name order (`git reflog list`), each once.
/// [`ReflogNames::next_record`] lends each name; the [`Iterator`] implementation copies it.
/// After an error it ends.
#[derive(Debug)]
pub struct ReflogNames {
    it: MergedIter<LogRecord>,
    name: Vec<u8>,
    started: bool,
    done: bool,
}

impl ReflogNames {
    /// The names with a reflog in `merged`.
    pub(crate) fn of(merged: &MergedTable) -> Result<ReflogNames> {
        Ok(ReflogNames {
            it: merged.logs()?,
            name: Vec::new(),
            started: false,
            done: false,
        })
    }

    /// The next name, borrowed until the next call.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let l = match self.it.next_record() {
                Ok(Some(l)) => l,
                Ok(None) => break,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            if l.is_deletion() || (self.started && l.refname == self.name) {
                continue;
            }
            self.name.clear();
            self.name.extend_from_slice(&l.refname);
            self.started = true;
            return Ok(Some(&self.name));
        }
        self.done = true;
        Ok(None)
    }
}

impl Iterator for ReflogNames {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        self.next_record()
            .map(|n| n.map(<[u8]>::to_vec))
            .transpose()
    }
}

/// What [`RefDb::expire_reflog`] did (or, with `dry_run`, would do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Expired {
    /// Entries pruned.
    pub pruned: usize,
    /// Entries kept.
    pub kept: usize,
}

impl RefDb {
    /// The reflog of `name` as git shows it: newest first, without tombstones and without
    /// the existence marker.
    pub fn reflog(&self, name: &[u8]) -> Result<RefLog> {
        RefLog::of(self.stack.merged(), name, true)
    }

    /// Whether `name` has a reflog (entries or an existence marker).
    pub fn reflog_exists(&self, name: &[u8]) -> Result<bool> {
        self.view().has_reflog(name)
    }

    /// Names with a reflog, in name order (`git reflog list`).
    pub fn reflog_names(&self) -> Result<ReflogNames> {
        ReflogNames::of(self.stack.merged())
    }

    /// Write a reflog existence marker for `name` unless it has a reflog already
    /// (`git update-ref --create-reflog`, `git reflog` with an empty log).
    pub fn create_reflog(&mut self, name: &[u8]) -> Result<Committed> {
        self.stack.reload()?;
        if self.view().has_reflog(name)? {
            return Ok(Committed { warning: None });
        }
        let name = name.to_vec();
        let hash = self.stack.options().hash();
        self.stack.add(|w, update_index| {
            w.set_limits(update_index, update_index)?;
            w.add_log_verbatim(&existence_marker(&name, update_index, hash))
        })
    }

    /// Delete the reflog of `name`: a tombstone for each live entry.
    pub fn delete_reflog(&mut self, name: &[u8]) -> Result<Committed> {
        self.stack.reload()?;
        let logs = self.view().live_logs(name)?;
        self.stack.add(|w, update_index| {
            w.set_limits(update_index, update_index)?;
            for l in &logs {
                w.add_log(&LogRecord {
                    refname: l.refname.clone(),
                    update_index: l.update_index,
                    value: LogValue::Deletion,
                })?;
            }
            Ok(())
        })
    }

    /// Expire reflog entries of `name` (`git reflog expire` / `git reflog delete`): entries
    /// for which `prune` says yes become tombstones, the others are rewritten (with
    /// `rewrite`, each entry's old id becomes the new id of the previous kept entry), and an
    /// existence marker is written when none survive; as git does, the table is written even
    /// when nothing is pruned. `prune` sees the entries oldest first, as git's expiry
    /// callbacks do. With `dry_run` nothing is written or locked: the result says what would
    /// happen.
    pub fn expire_reflog(
        &mut self,
        name: &[u8],
        prune: &mut dyn FnMut(&LogRecord) -> bool,
        rewrite: bool,
        dry_run: bool,
    ) -> Result<Expired> {
        self.expire(name, prune, rewrite, dry_run, None)
    }

    /// [`RefDb::expire_reflog`] as `git reflog expire --updateref` does it: when an entry is
    /// kept, its newest one's new id is not null, and `name` holds an object id itself (not
    /// a symref), the same table sets `name` to that id (peeled when `objects` says it is an
    /// annotated tag), also when it holds that id already, as git does.
    pub fn expire_reflog_update_ref(
        &mut self,
        name: &[u8],
        prune: &mut dyn FnMut(&LogRecord) -> bool,
        rewrite: bool,
        objects: &dyn ObjectLookup,
    ) -> Result<Expired> {
        self.expire(name, prune, rewrite, false, Some(objects))
    }

    fn expire(
        &mut self,
        name: &[u8],
        prune: &mut dyn FnMut(&LogRecord) -> bool,
        rewrite: bool,
        dry_run: bool,
        update_ref: Option<&dyn ObjectLookup>,
    ) -> Result<Expired> {
        self.stack.reload()?;
        let hash = self.stack.options().hash();
        let mut logs: Vec<LogRecord> = self
            .view()
            .live_logs(name)?
            .into_iter()
            .filter(|l| !l.is_existence_marker())
            .collect();
        let mut out = Expired::default();
        let mut last_new: Option<ObjectId> = None;
        for l in logs.iter_mut().rev() {
            if prune(l) {
                l.value = LogValue::Deletion;
                out.pruned += 1;
            } else if let LogValue::Update(u) = &mut l.value {
                out.kept += 1;
                if rewrite {
                    if let Some(prev) = last_new {
                        u.old_id = prev;
                    }
                }
                last_new = Some(u.new_id);
            }
        }
        if dry_run {
            return Ok(out);
        }
        let new_ref = match (update_ref, last_new) {
            (Some(objects), Some(id)) if !id.is_null() => self.updated_ref(name, id, objects)?,
            _ => None,
        };
        let live = out.kept > 0;
        let name = name.to_vec();
        let mut add = self.stack.new_addition(Outdated::Fail)?;
        add.add_table(|w, update_index| {
            w.set_limits(update_index, update_index)?;
            if let Some(value) = &new_ref {
                w.add_ref(&RefRecord::new(name.clone(), update_index, value.clone()))?;
            }
            if !live {
                w.add_log_verbatim(&existence_marker(&name, update_index, hash))?;
            }
            for l in &logs {
                w.add_log(l)?;
            }
            Ok(())
        })?;
        add.commit()?;
        Ok(out)
    }

    /// The value `--updateref` gives `name`: `id`, peeled if it is a tag; `None` when `name`
    /// does not hold an object id itself (a symref, or no ref).
    fn updated_ref(
        &self,
        name: &[u8],
        id: ObjectId,
        objects: &dyn ObjectLookup,
    ) -> Result<Option<RefValue>> {
        let holds_id = matches!(
            self.read_ref(name)?.map(|r| r.value),
            Some(RefValue::Object(_) | RefValue::Peeled { .. })
        );
        if !holds_id {
            return Ok(None);
        }
        Ok(Some(match objects.lookup(&id) {
            Ok(ObjectKind::Tag { peeled }) => RefValue::Peeled { object: id, peeled },
            _ => RefValue::Object(id),
        }))
    }

    /// `git pack-refs`: compact the whole stack into one table (dropping tombstones), then
    /// remove stale tables. With `auto`, compact only what the geometric rule asks for.
    pub fn pack_refs(&mut self, auto: bool) -> Result<()> {
        if auto {
            self.stack.auto_compact()?;
        } else {
            self.stack.compact_all(None)?;
        }
        self.stack.clean()
    }
}
