//! How an embedder uses the crate: open a repository's ref stack read-only and list its
//! branches, then change refs in a prepared transaction with old-value checks, handling a
//! conflict through the error's fields.
//!
//! ```sh
//! cargo run -p reftable --example embed                       # on a demo stack
//! cargo run -p reftable --example embed -- path/to/.git/reftable
//! ```
//!
//! With a path, the transaction runs on a copy of that stack: the repository is only read.

use std::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};

use reftable::refdb::{AssumeCommits, Expected, LiveRefs, NewValue, RefUpdate};
use reftable::{
    ObjectId, RefDb, RefDbOptions, RefState, Refusal, Signature, StackReader, Target, TzOffset,
};

fn main() -> Result<(), Box<dyn Error>> {
    let scratch = tempfile::tempdir()?;
    let dir = match std::env::args_os().nth(1) {
        Some(p) => PathBuf::from(p),
        None => demo_stack(&scratch.path().join("demo"))?,
    };

    // 1. Read-only: nothing is created or locked. Each ref is lent, and the line is
    //    formatted into one reused buffer; what it points at is a `Target`, the type
    //    updates and refusals use too.
    let stack = StackReader::open(&dir, None)?;
    println!("{}: {} tables", dir.display(), stack.tables().len());
    let mut branches = LiveRefs::with_prefix(stack.merged(), b"refs/heads/")?;
    let mut out = std::io::stdout().lock();
    let mut hex = [0u8; 64];
    while let Some(r) = branches.next_record()? {
        out.write_all(&r.refname)?;
        match r.value.target().expect("LiveRefs skips tombstones") {
            Target::Object(id) => {
                out.write_all(b" ")?;
                out.write_all(id.hex_into(&mut hex).as_bytes())?;
            }
            Target::Symref(t) => {
                out.write_all(b" -> ")?;
                out.write_all(&t)?;
            }
        }
        out.write_all(b"\n")?;
    }
    drop(out);

    // 2. A transaction, on a copy of the stack.
    let copy = scratch.path().join("copy");
    copy_stack(&dir, &copy)?;
    let mut db = RefDb::open(&copy, RefDbOptions::default())?;
    let me = Signature {
        name: b"Embedder".to_vec(),
        email: b"embedder@example.com".to_vec(),
        time: 1_700_000_000,
        tz_offset: TzOffset::from_hhmm(0),
    };
    let hash = db.stack().options().hash();
    let new = ObjectId::from_bytes(&vec![0x42; hash.size()]).expect("a hash size");
    let target = b"refs/heads/embedded";
    // Expect the branch not to exist; if it does, the refusal says what it is, and the
    // update is retried against that value (compare and swap).
    let mut expected = Expected::Absent;
    for attempt in 1..=2 {
        let update = RefUpdate::new(
            target,
            Some(NewValue::Set(Target::Object(new))),
            expected.clone(),
        )
        .message("embed: set by the example");
        match db.prepare(&[update], &me, &AssumeCommits) {
            Ok(prepared) => {
                println!(
                    "attempt {attempt}: writes {} ref record(s) at update index {}",
                    prepared.ref_records(),
                    prepared.update_index()
                );
                prepared.commit()?;
                break;
            }
            Err(e) => match e.refusal() {
                Some(Refusal::OldValue { actual, .. }) => {
                    println!("attempt {attempt}: refused ({e}); retrying against {actual:?}");
                    // What the refusal found is what the retry expects: one type for both.
                    expected = match actual {
                        RefState::Is(found) => Expected::Is(found.clone()),
                        RefState::Absent | RefState::Unresolvable => Expected::Any,
                    };
                }
                _ => return Err(e.into()),
            },
        }
    }
    println!(
        "{} is now {:?}",
        String::from_utf8_lossy(target),
        db.resolve(target)?
    );
    Ok(())
}

/// A small stack with two branches, one of them the target of the transaction, so that the
/// first attempt meets a conflict.
fn demo_stack(dir: &Path) -> Result<PathBuf, Box<dyn Error>> {
    let mut db = RefDb::open_or_create(dir, RefDbOptions::default())?;
    let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").expect("hex");
    db.transaction(
        &[
            RefUpdate::create("refs/heads/main", id),
            RefUpdate::create("refs/heads/embedded", id),
            RefUpdate::symref_create("HEAD", "refs/heads/main"),
        ],
        &Signature::default(),
        &AssumeCommits,
    )?;
    Ok(dir.to_path_buf())
}

fn copy_stack(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_file() && !e.file_name().to_string_lossy().ends_with(".lock") {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}
