//! A linked worktree's listings: its own stack's names and the common stack's shared
//! names merged in name order, the worktree's winning where both have one (git's
//! `ref_iterator_select`); refs and reflog names alike.

use crate::codec::record::RefRecord;
use crate::error::Result;
use crate::refname::{parse_worktree_ref, WorktreeRef};

use super::read::LiveRefs;
use super::reflog::ReflogNames;

/// What the merge orders by.
trait Named {
    fn name(&self) -> &[u8];
}

impl Named for RefRecord {
    fn name(&self) -> &[u8] {
        &self.refname
    }
}

impl Named for Vec<u8> {
    fn name(&self) -> &[u8] {
        self
    }
}

/// The next item of each side, held, and the one last lent.
#[derive(Debug)]
struct Select<T> {
    own_next: Option<T>,
    common_next: Option<T>,
    current: Option<T>,
}

impl<T: Named> Select<T> {
    fn new() -> Select<T> {
        Select {
            own_next: None,
            common_next: None,
            current: None,
        }
    }

    /// The next item in name order: `own` and `common` give each side's next one; of the
    /// common side only shared names count (the main worktree's own are not this one's).
    fn next(
        &mut self,
        own: impl FnOnce() -> Result<Option<T>>,
        mut common: impl FnMut() -> Result<Option<T>>,
    ) -> Result<Option<&T>> {
        if self.own_next.is_none() {
            self.own_next = own()?;
        }
        while self.common_next.is_none() {
            match common()? {
                None => break,
                Some(r) if matches!(parse_worktree_ref(r.name()), WorktreeRef::Shared(_)) => {
                    self.common_next = Some(r);
                }
                Some(_) => {}
            }
        }
        self.current = match (&self.own_next, &self.common_next) {
            (Some(a), Some(b)) if a.name() == b.name() => {
                self.common_next = None;
                self.own_next.take()
            }
            (Some(a), Some(b)) if a.name() < b.name() => self.own_next.take(),
            (_, Some(_)) => self.common_next.take(),
            (Some(_), None) => self.own_next.take(),
            (None, None) => None,
        };
        Ok(self.current.as_ref())
    }
}

/// The live refs a linked worktree sees, in name order: its own stack's records and the
/// common stack's shared refs, merged. Each record is lent by [`WorktreeRefs::next_record`];
/// the [`Iterator`] implementation clones it.
#[derive(Debug)]
pub struct WorktreeRefs {
    own: LiveRefs,
    common: LiveRefs,
    select: Select<RefRecord>,
}

impl WorktreeRefs {
    pub(super) fn new(own: LiveRefs, common: LiveRefs) -> WorktreeRefs {
        WorktreeRefs {
            own,
            common,
            select: Select::new(),
        }
    }

    /// The next live ref, borrowed until the next call.
    pub fn next_record(&mut self) -> Result<Option<&RefRecord>> {
        let (own, common) = (&mut self.own, &mut self.common);
        self.select.next(
            || Ok(own.next_record()?.cloned()),
            || Ok(common.next_record()?.cloned()),
        )
    }
}

impl Iterator for WorktreeRefs {
    type Item = Result<RefRecord>;

    fn next(&mut self) -> Option<Result<RefRecord>> {
        self.next_record().map(|r| r.cloned()).transpose()
    }
}

/// The names with a reflog a linked worktree sees, in name order (`git reflog list` in the
/// worktree): its own stack's and the common stack's shared ones. Each is lent by
/// [`WorktreeReflogNames::next_record`]; the [`Iterator`] implementation copies it.
#[derive(Debug)]
pub struct WorktreeReflogNames {
    own: ReflogNames,
    common: ReflogNames,
    select: Select<Vec<u8>>,
}

impl WorktreeReflogNames {
    pub(super) fn new(own: ReflogNames, common: ReflogNames) -> WorktreeReflogNames {
        WorktreeReflogNames {
            own,
            common,
            select: Select::new(),
        }
    }

    /// The next name, borrowed until the next call.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>> {
        let (own, common) = (&mut self.own, &mut self.common);
        let next = self.select.next(
            || Ok(own.next_record()?.map(<[u8]>::to_vec)),
            || Ok(common.next_record()?.map(<[u8]>::to_vec)),
        )?;
        Ok(next.map(Vec::as_slice))
    }
}

impl Iterator for WorktreeReflogNames {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        self.next_record()
            .map(|n| n.map(<[u8]>::to_vec))
            .transpose()
    }
}
