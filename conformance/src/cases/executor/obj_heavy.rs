//! A table whose obj section has records too big for a block, at the end of one case in
//! [`OBJ_HEAVY_ONE_IN`], on a copy of git's repository: one `update-ref --stdin` with 300-byte
//! blocks and the obj index on creates [`REFS`] refs, nearly all on two commits (each one's
//! record lists more ref blocks than a block holds) and the rest spread over the others.
//! git writes a record too big for a block without its block positions; the second of the two
//! big ones, whichever it is, meets a block that already holds a record, and starts a new
//! one first. Our writer, given the same refs on a copy of the same stack, must write the
//! same bytes. The generated cases never get there: their largest transaction has 300 refs.

use reftable::{HashId, ObjectId, RefRecord, RefValue, Stack, StackOptions, WriteOptions};

use crate::cases::executor::checks::ProbeError;
use crate::cases::executor::Executor;
use crate::stack_files::{scratch_copy, tables};

/// One case in this many runs the probe (by its count of transactions).
pub const OBJ_HEAVY_ONE_IN: u64 = 3;

/// The refs the probe creates: enough 300-byte ref blocks that one commit's block positions
/// (two bytes each) overflow a block. Their names are long ([`NAME_PAD`]): a block holds two
/// refs, one on each of the two commits, so each commit is in nearly all of the 240 blocks
/// (about 330 refs are the least that reach it, with either hash; with short names, 11 refs
/// a block, it took 1,600).
const REFS: usize = 480;

/// What lengthens each probe ref's name, after its number (between 70 and 100 bytes do).
const NAME_PAD: &str =
    "-a-name-long-enough-that-a-300-byte-block-holds-two-refs-of-this-probe-and-no-more";

/// The block size the probe writes with, git's and ours.
const BLOCK_SIZE: u32 = 300;

impl Executor<'_> {
    /// The check described in the module docs.
    pub(super) fn check_obj_heavy(&self) -> Result<(), ProbeError> {
        if !self.env.profile.features.reftable_config || self.txns % OBJ_HEAVY_ONE_IN != 0 {
            return Ok(());
        }
        let refs = probe_refs(&self.env.pool(self.hash).pool.commits);
        let scratch = self.copy_of_git_repo()?;
        let git_stack = scratch.path().join(".git/reftable");
        let ours = tempfile::tempdir_in(self.env.dir.path()).map_err(|e| e.to_string())?;
        scratch_copy(&git_stack, ours.path(), None)?;
        let input: String = refs
            .iter()
            .map(|(name, id)| format!("create {name} {id}\n"))
            .collect();
        let block_size = format!("reftable.blockSize={BLOCK_SIZE}");
        let args = [
            "-c",
            &block_size,
            "-c",
            "reftable.restartInterval=16",
            "-c",
            "reftable.indexObjects=true",
            "-c",
            "core.logAllRefUpdates=false",
            "update-ref",
            "--stdin",
        ];
        let out = self.env.git.run(scratch.path(), &args, &input, self.tick);
        if !out.exit.success() {
            return Err(format!(
                "update-ref --stdin of {REFS} refs with 300-byte blocks: {:?}, {:?}",
                out.exit,
                out.stderr.trim()
            )
            .into());
        }
        let opts = StackOptions::default()
            .write(write_options(self.hash))
            .auto_compaction(false);
        let mut stack = Stack::open_or_create(ours.path(), opts).map_err(|e| format!("{e:#}"))?;
        stack
            .add(|w, ui| {
                w.set_limits(ui, ui)?;
                for (name, id) in &refs {
                    w.add_ref(&RefRecord::new(name.as_str(), ui, RefValue::Object(*id)))?;
                }
                Ok(())
            })
            .map_err(|e| format!("writing the probe's refs: {e:#}"))?;
        let (theirs, ours) = (tables(&git_stack), tables(ours.path()));
        match (theirs.last(), ours.last()) {
            (Some(t), Some(o)) if theirs.len() == ours.len() && t == o => Ok(()),
            (t, o) => Err(format!(
                "a table of {REFS} refs on few commits with 300-byte blocks: git's stack has \
                 {} tables, ours {}; the new tables {} ({} and {} bytes)",
                theirs.len(),
                ours.len(),
                if t == o { "are equal" } else { "differ" },
                t.map_or(0, |t| t.1.len()),
                o.map_or(0, |o| o.1.len()),
            )
            .into()),
        }
    }
}

/// The probe's refs, in name order: every sixteenth on one of the commits after the first
/// two in turn, the rest on the first two alternately.
fn probe_refs(commits: &[ObjectId]) -> Vec<(String, ObjectId)> {
    (0..REFS)
        .map(|i| {
            let id = if i % 16 == 0 {
                commits[2 + (i / 16) % (commits.len() - 2)]
            } else {
                commits[i % 2]
            };
            (format!("refs/gate-probe/objs/{i:04}{NAME_PAD}"), id)
        })
        .collect()
}

/// Our writer's options for the probe, as the `-c` settings give git.
fn write_options(hash: HashId) -> WriteOptions {
    WriteOptions::default()
        .block_size(BLOCK_SIZE)
        .restart_interval(16)
        .index_objects(true)
        .hash(hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reftable::codec::format::BlockType;
    use reftable::codec::record::ObjRecord;
    use reftable::{Table, Writer};

    /// The probe reaches what it is for, with either hash: the two big obj records are
    /// stored without positions, and the later of them opens an obj block after the first
    /// (it did not fit after the records before it, nor in a fresh block).
    #[test]
    fn the_big_obj_record_loses_its_positions() {
        for hash in [HashId::Sha1, HashId::Sha256] {
            let len = ObjectId::null(hash).len();
            let commits: Vec<ObjectId> = (1..=6u8)
                .map(|b| ObjectId::from_bytes(&vec![b * 37; len]).unwrap())
                .collect();
            let mut w = Writer::new(Vec::new(), write_options(hash));
            w.set_limits(1, 1).unwrap();
            for (name, id) in probe_refs(&commits) {
                w.add_ref(&RefRecord::new(name.as_str(), 1, RefValue::Object(id)))
                    .unwrap();
            }
            let table = Table::from_bytes("t.ref", w.finish().unwrap()).unwrap();
            let mut obj_blocks: Vec<Vec<ObjRecord>> = Vec::new();
            let mut walk = table.blocks();
            while let Some(b) = walk.next_block() {
                let (info, _) = b.unwrap();
                if info.block_type == BlockType::Obj {
                    obj_blocks.push(table.block_records::<ObjRecord>(&info).unwrap());
                }
            }
            let big = |r: &ObjRecord| {
                (commits[..2].iter()).any(|c| c.as_bytes().starts_with(&r.hash_prefix))
            };
            let places: Vec<(usize, usize, bool)> = (obj_blocks.iter().enumerate())
                .flat_map(|(b, recs)| recs.iter().enumerate().map(move |(i, r)| (b, i, r)))
                .filter(|(_, _, r)| big(r))
                .map(|(b, i, r)| (b, i, r.offsets.is_empty()))
                .collect();
            assert_eq!(places.len(), 2, "{hash:?}: {obj_blocks:?}");
            assert!(places.iter().all(|p| p.2), "{hash:?}: {obj_blocks:?}");
            assert!(places[1].0 > 0 && places[1].1 == 0, "{hash:?}: {places:?}");
        }
    }
}
