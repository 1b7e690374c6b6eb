//! The states a power loss can leave the stack directory in, from the operations a write
//! made ([`FsOp`]), under the usual model of a POSIX file system (as in ALICE, OSDI 2014,
//! for an ordered-metadata file system such as ext4):
//!
//! - the directory's changes (create, rename, unlink) reach the disk in their order, so a
//!   crash keeps a prefix of them; a sync of the directory makes every change before it
//!   durable;
//! - a file's data reaches the disk independently of the directory: what was written before
//!   the file's last sync is there; what was written after may be there or not (each file
//!   keeps all of it, none, or, to see torn writes, the first half of its bytes);
//! - a file whose creation was lost is nowhere; one whose data was lost is empty.
//!
//! A crash may come after any of the operations, or after the last (the writer had exited
//! and reported); every combination is built, and equal states are kept once (once among
//! those after the writer exited, once among the others).

use std::collections::{BTreeMap, BTreeSet};

use crate::powerloss::fsops::{FsOp, Ino};

/// The files of the stack directory after a crash.
pub type Files = BTreeMap<String, Vec<u8>>;

/// One state a crash can leave.
#[derive(Clone, Debug)]
pub struct CrashState {
    /// Operations done before the crash (all of them: after the writer exited).
    pub point: usize,
    /// Directory changes that reached the disk.
    pub names_kept: usize,
    /// How the unsynced data of each file came out (`lost`, `kept`, `torn`), for the report.
    pub data: String,
    /// The directory's files.
    pub files: Files,
}

/// How much of a file's unsynced data a crash keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keep {
    Lost,
    Kept,
    Torn,
}

/// Files with unsynced data up to this many get every combination of [`Keep`]; more get
/// the same choice for all.
const COMBINED_FILES: usize = 3;

/// Every distinct state a crash during or after `ops` can leave, the directory holding
/// `before` (name, inode, bytes) when they started.
pub fn crash_states(before: &[(String, Vec<u8>)], ops: &[FsOp]) -> Vec<CrashState> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for point in 0..=ops.len() {
        let done = &ops[..point];
        let metadata: Vec<usize> = (0..point).filter(|&i| done[i].is_metadata()).collect();
        let last_dir_sync = done.iter().rposition(|o| *o == FsOp::SyncDir);
        let forced = last_dir_sync.map_or(0, |s| metadata.iter().filter(|&&i| i < s).count());
        let unsynced = unsynced_files(done);
        for names_kept in forced..=metadata.len() {
            for keep in keep_choices(unsynced.len()) {
                let files = materialize(before, done, &metadata[..names_kept], &unsynced, &keep);
                // A state reachable after the writer exited is kept apart from the same
                // state seen earlier: only there must an acknowledged write be present.
                if seen.insert((point == ops.len(), files.clone())) {
                    out.push(CrashState {
                        point,
                        names_kept,
                        data: describe(&keep),
                        files,
                    });
                }
            }
        }
    }
    out
}

/// The directory when every operation of `done` reached the disk (what a reader sees
/// after them with no crash).
pub fn complete(before: &[(String, Vec<u8>)], done: &[FsOp]) -> Files {
    let metadata: Vec<usize> = (0..done.len()).filter(|&i| done[i].is_metadata()).collect();
    let unsynced = unsynced_files(done);
    let keep = vec![Keep::Kept; unsynced.len()];
    materialize(before, done, &metadata, &unsynced, &keep)
}

/// The files whose last write in `done` comes after their last sync.
fn unsynced_files(done: &[FsOp]) -> Vec<Ino> {
    let mut dirty: Vec<Ino> = Vec::new();
    for op in done {
        match op {
            FsOp::Write { ino, .. } | FsOp::Truncate { ino, .. } if !dirty.contains(ino) => {
                dirty.push(*ino);
            }
            FsOp::Sync { ino } => dirty.retain(|d| d != ino),
            _ => {}
        }
    }
    dirty
}

/// One choice per unsynced file.
fn keep_choices(n: usize) -> Vec<Vec<Keep>> {
    let all = [Keep::Lost, Keep::Kept, Keep::Torn];
    if n > COMBINED_FILES {
        return all.iter().map(|k| vec![*k; n]).collect();
    }
    let mut out = vec![Vec::new()];
    for _ in 0..n {
        out = out
            .into_iter()
            .flat_map(|c| {
                all.iter().map(move |k| {
                    let mut c = c.clone();
                    c.push(*k);
                    c
                })
            })
            .collect();
    }
    out
}

fn describe(keep: &[Keep]) -> String {
    let word = |k: &Keep| match k {
        Keep::Lost => "lost",
        Keep::Kept => "kept",
        Keep::Torn => "torn",
    };
    keep.iter().map(word).collect::<Vec<_>>().join(",")
}

/// The directory after a crash: the names of `before` changed by the kept directory
/// operations (`kept`, indexes into `done`), each file's data as synced plus what `keep`
/// says of the rest.
fn materialize(
    before: &[(String, Vec<u8>)],
    done: &[FsOp],
    kept: &[usize],
    unsynced: &[Ino],
    keep: &[Keep],
) -> Files {
    let mut names: BTreeMap<String, Ino> = before
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), i))
        .collect();
    for &i in kept {
        match &done[i] {
            FsOp::Create { name, ino } => {
                names.insert(name.clone(), *ino);
            }
            FsOp::Rename { from, to } => {
                if let Some(ino) = names.remove(from) {
                    names.insert(to.clone(), ino);
                }
            }
            FsOp::Unlink { name } => {
                names.remove(name);
            }
            _ => {}
        }
    }
    names
        .into_iter()
        .map(|(name, ino)| {
            let start = before.get(ino).map(|(_, d)| d.clone()).unwrap_or_default();
            let choice = unsynced.iter().position(|&u| u == ino).map(|i| keep[i]);
            (name, data_of(ino, start, done, choice))
        })
        .collect()
}

/// A file's bytes: the writes up to its last sync, then the rest as `choice` says (`None`:
/// the file was synced after its last write).
fn data_of(ino: Ino, mut data: Vec<u8>, done: &[FsOp], choice: Option<Keep>) -> Vec<u8> {
    let last_sync = done.iter().rposition(|o| *o == FsOp::Sync { ino });
    let mine: Vec<(usize, &FsOp)> = done
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o, FsOp::Write { ino: i, .. } | FsOp::Truncate { ino: i, .. } if *i == ino))
        .collect();
    let unsynced: Vec<&FsOp> = mine
        .iter()
        .filter(|(i, _)| last_sync.map_or(true, |s| *i > s))
        .map(|(_, o)| *o)
        .collect();
    for (_, op) in mine
        .iter()
        .filter(|(i, _)| last_sync.is_some_and(|s| *i < s))
    {
        apply(&mut data, op);
    }
    let total: usize = unsynced.iter().map(|o| written(o)).sum();
    let mut budget = match choice {
        None | Some(Keep::Kept) => total,
        Some(Keep::Lost) => 0,
        Some(Keep::Torn) => total / 2,
    };
    for op in unsynced {
        if budget == 0 && written(op) > 0 {
            break;
        }
        match op {
            FsOp::Write {
                ino,
                offset,
                data: d,
            } if d.len() > budget => {
                let part = FsOp::Write {
                    ino: *ino,
                    offset: *offset,
                    data: d[..budget].to_vec(),
                };
                apply(&mut data, &part);
                break;
            }
            _ => apply(&mut data, op),
        }
        budget -= written(op);
    }
    data
}

/// Bytes an operation writes.
fn written(op: &FsOp) -> usize {
    match op {
        FsOp::Write { data, .. } => data.len(),
        _ => 0,
    }
}

fn apply(data: &mut Vec<u8>, op: &FsOp) {
    match op {
        FsOp::Write {
            offset, data: d, ..
        } => {
            let at = *offset as usize;
            if data.len() < at + d.len() {
                data.resize(at + d.len(), 0);
            }
            data[at..at + d.len()].copy_from_slice(d);
        }
        FsOp::Truncate { len, .. } => data.truncate(*len as usize),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(ino: Ino, data: &[u8]) -> FsOp {
        FsOp::Write {
            ino,
            offset: 0,
            data: data.to_vec(),
        }
    }

    /// An addition as git makes it without fsync, and as we make it with.
    fn addition(synced: bool) -> Vec<FsOp> {
        let mut ops = vec![
            FsOp::Create {
                name: "t.temp".into(),
                ino: 1,
            },
            w(1, b"TABLE"),
        ];
        if synced {
            ops.push(FsOp::Sync { ino: 1 });
        }
        ops.push(FsOp::Rename {
            from: "t.temp".into(),
            to: "t.ref".into(),
        });
        if synced {
            ops.push(FsOp::SyncDir);
        }
        ops.push(FsOp::Create {
            name: "tables.list.lock".into(),
            ino: 2,
        });
        ops.push(w(2, b"old.ref\nt.ref\n"));
        if synced {
            ops.push(FsOp::Sync { ino: 2 });
        }
        ops.push(FsOp::Rename {
            from: "tables.list.lock".into(),
            to: "tables.list".into(),
        });
        if synced {
            ops.push(FsOp::SyncDir);
        }
        ops
    }

    fn before() -> Vec<(String, Vec<u8>)> {
        vec![("tables.list".into(), b"old.ref\n".to_vec())]
    }

    fn listing_missing_table(s: &CrashState) -> bool {
        s.files
            .get("tables.list")
            .is_some_and(|l| l.ends_with(b"t.ref\n"))
            && s.files
                .get("t.ref")
                .is_none_or(|t| t.as_slice() != b"TABLE")
    }

    #[test]
    fn without_sync_a_list_can_name_a_table_whose_bytes_were_lost() {
        let states = crash_states(&before(), &addition(false));
        assert!(states.iter().any(listing_missing_table));
        // After the writer exited, the old list can still be what the disk has.
        let last = addition(false).len();
        assert!(states
            .iter()
            .any(|s| s.point == last && s.files["tables.list"] == b"old.ref\n"));
    }

    #[test]
    fn with_table_directory_list_directory_synced_every_state_is_old_or_new() {
        let ops = addition(true);
        let states = crash_states(&before(), &ops);
        assert!(!states.iter().any(listing_missing_table));
        for s in states.iter().filter(|s| s.point == ops.len()) {
            assert_eq!(s.files["tables.list"], b"old.ref\nt.ref\n", "{s:?}");
        }
        // A torn list was seen before its sync.
        assert!(states.iter().any(|s| s.data.contains("torn")));
    }
}
