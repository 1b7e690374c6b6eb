//! Check a reftable stack the way `reftable verify` does: every table's blocks, indexes and
//! records, and the stack's `tables.list` and update indexes. Exit status 1 when there is
//! something to report.
//!
//! ```sh
//! cargo run -p reftable --example verify                           # a demo stack, then a damaged copy
//! cargo run -p reftable --example verify -- path/to/.git/reftable
//! ```

use std::error::Error;
use std::path::Path;

use reftable::refdb::{AssumeCommits, RefUpdate};
use reftable::{fsck, ObjectId, RefDb, RefDbOptions, Signature, TzOffset};

fn main() -> Result<(), Box<dyn Error>> {
    if let Some(dir) = std::env::args_os().nth(1) {
        let clean = report(Path::new(&dir))?;
        std::process::exit(i32::from(!clean));
    }
    let scratch = tempfile::tempdir()?;
    let dir = scratch.path().join("demo");
    let mut db = RefDb::open_or_create(&dir, RefDbOptions::default())?;
    let me = Signature {
        name: b"C O Mitter".to_vec(),
        email: b"committer@example.com".to_vec(),
        time: 1_700_000_000,
        tz_offset: TzOffset::from_hhmm(0),
    };
    let id = ObjectId::from_bytes(&[1; 20]).expect("20 bytes");
    db.transaction(
        &[RefUpdate::create("refs/heads/main", id)],
        &me,
        &AssumeCommits,
    )?;
    assert!(report(&dir)?, "a stack just written is clean");
    // Damage the last byte of the table, its footer's checksum: the check says where.
    let table = dir.join(&db.stack().table_names()[0]);
    let mut bytes = std::fs::read(&table)?;
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&table, bytes)?;
    assert!(!report(&dir)?, "the damage is found");
    Ok(())
}

/// Print what the check finds in the stack at `dir`; whether it found nothing.
fn report(dir: &Path) -> Result<bool, Box<dyn Error>> {
    let found = fsck::check_stack(dir, None)?;
    for f in found.findings() {
        let at = f.offset.map_or(String::new(), |o| format!(" at {o}"));
        println!("{}{at}: {:?}: {}", f.file.display(), f.kind, f.text);
    }
    println!(
        "{}: {} tables, {} findings",
        dir.display(),
        found.tables_checked,
        found.count()
    );
    Ok(found.count() == 0)
}
