//! Read a repository's reflogs without writing anything: every ref that has a reflog,
//! newest entry first, as `git reflog` shows them, through the lending iterator (each entry
//! is lent until the next one is asked for; nothing is copied per entry).
//!
//! ```sh
//! cargo run -p reftable --example reflogs                          # on a demo stack
//! cargo run -p reftable --example reflogs -- path/to/.git/reftable
//! ```

use std::error::Error;
use std::path::{Path, PathBuf};

use reftable::refdb::{AssumeCommits, RefUpdate};
use reftable::{ObjectId, RefDb, RefDbOptions, Signature, StackReader, TzOffset};

fn main() -> Result<(), Box<dyn Error>> {
    let scratch = tempfile::tempdir()?;
    let dir = match std::env::args_os().nth(1) {
        Some(p) => PathBuf::from(p),
        None => demo_stack(&scratch.path().join("demo"))?,
    };
    // Read-only: no lock is taken and nothing is created.
    let stack = StackReader::open(&dir, None)?;
    let merged = stack.merged();
    let mut logs = merged.logs()?;
    let mut shown = 0;
    while let Some(entry) = logs.next_record()? {
        // Tombstones and existence markers carry no update.
        let Some(u) = entry.update() else { continue };
        let message = String::from_utf8_lossy(&u.message);
        println!(
            "{} {} -> {} {}",
            String::from_utf8_lossy(&entry.refname),
            short(&u.old_id),
            short(&u.new_id),
            message.trim_end()
        );
        shown += 1;
    }
    println!("{shown} reflog entries in {} tables", stack.tables().len());
    Ok(())
}

fn short(id: &ObjectId) -> String {
    id.to_string()[..8].to_string()
}

/// A small stack to read when no path is given: two branches, one moved twice.
fn demo_stack(dir: &Path) -> Result<PathBuf, Box<dyn Error>> {
    let mut db = RefDb::open_or_create(dir, RefDbOptions::default())?;
    let me = Signature {
        name: b"C O Mitter".to_vec(),
        email: b"committer@example.com".to_vec(),
        time: 1_700_000_000,
        tz_offset: TzOffset::from_hhmm(100),
    };
    let id = |b: u8| ObjectId::from_bytes(&[b; 20]).expect("20 bytes");
    db.transaction(
        &[RefUpdate::create("refs/heads/main", id(1)).message("first")],
        &me,
        &AssumeCommits,
    )?;
    db.transaction(
        &[RefUpdate::create("refs/heads/topic", id(1)).message("branch")],
        &me,
        &AssumeCommits,
    )?;
    db.transaction(
        &[RefUpdate::update("refs/heads/main", id(2), Some(id(1))).message("second")],
        &me,
        &AssumeCommits,
    )?;
    Ok(dir.to_path_buf())
}
