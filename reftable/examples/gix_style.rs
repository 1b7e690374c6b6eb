//! Reading a repository's refs and reflogs from code shaped like gitoxide's (`gix-ref`):
//! object ids as fixed arrays (`[u8; 20]` for SHA-1, `[u8; 32]` for SHA-256), names as byte
//! strings (`&[u8]`, as `&BStr` derefs to), a reference as a name, a target (an object or
//! another name) and an optional peeled id, a reflog line as old id, new id, signature and
//! message. The types below stand in for gix's; the conversions are what a gix backend on
//! this crate would write, and none of them copies a record the stack lends.
//!
//! ```sh
//! cargo run -p reftable --example gix_style                  # on a demo stack
//! cargo run -p reftable --example gix_style -- path/to/repo  # its top level or its .git
//! ```
//!
//! Only reads: [`StackReader`] creates and locks nothing, so this runs beside git writing.

use std::error::Error;
use std::path::{Path, PathBuf};

use reftable::refdb::{AssumeCommits, LiveRefs};
use reftable::{
    HashId, ObjectId, RefDb, RefDbOptions, RefName, RefRecord, RefUpdate, RefValue, Signature,
    StackReader, TzOffset,
};

/// An object id as gix keeps it: the raw bytes of its hash kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Oid {
    Sha1([u8; 20]),
    Sha256([u8; 32]),
}

impl std::fmt::Display for Oid {
    /// Hex, as gix prints an id.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes: &[u8] = match self {
            Oid::Sha1(b) => b,
            Oid::Sha256(b) => b,
        };
        bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// What a ref points at, borrowed from the record the stack lends.
#[derive(Debug)]
enum Target<'a> {
    Object(Oid),
    Symbolic(&'a [u8]),
}

/// A reference, borrowed: gix's `Reference` is the owned form of the same three fields.
#[derive(Debug)]
struct Reference<'a> {
    name: &'a [u8],
    target: Target<'a>,
    /// The object an annotated tag peels to, which reftable stores beside the tag's id.
    peeled: Option<Oid>,
}

/// One reflog line, borrowed: gix's `log::LineRef` has the same fields.
#[derive(Debug)]
struct LogLine<'a> {
    previous_oid: Oid,
    new_oid: Oid,
    name: &'a [u8],
    email: &'a [u8],
    /// Seconds since the epoch and the offset from UTC in seconds, as gix's `Time` has them.
    seconds: u64,
    offset: i32,
    message: &'a [u8],
}

/// Our id as gix's: the bytes into the array of its length.
fn to_oid(id: &ObjectId) -> Oid {
    let bytes = id.as_bytes();
    match id.hash() {
        HashId::Sha1 => Oid::Sha1(bytes.try_into().expect("20 bytes")),
        HashId::Sha256 => Oid::Sha256(bytes.try_into().expect("32 bytes")),
    }
}

/// gix's id as ours (for writing, or for comparing with what a table holds).
fn from_oid(oid: &Oid) -> ObjectId {
    let bytes: &[u8] = match oid {
        Oid::Sha1(b) => b,
        Oid::Sha256(b) => b,
    };
    ObjectId::from_bytes(bytes).expect("a hash length")
}

/// A live ref record as a reference (`None` for a tombstone, which a listing never lends).
fn to_reference(r: &RefRecord) -> Option<Reference<'_>> {
    let (target, peeled) = match &r.value {
        RefValue::Object(id) => (Target::Object(to_oid(id)), None),
        RefValue::Peeled { object, peeled } => {
            (Target::Object(to_oid(object)), Some(to_oid(peeled)))
        }
        RefValue::Symref(name) => (Target::Symbolic(name.as_slice()), None),
        RefValue::Deletion => return None,
    };
    Some(Reference {
        name: &r.refname,
        target,
        peeled,
    })
}

/// Each reference under `prefix`, in name order, handed to `each` without a copy.
fn for_each_reference(
    stack: &StackReader,
    prefix: &[u8],
    mut each: impl FnMut(Reference<'_>),
) -> reftable::Result<()> {
    let mut refs = LiveRefs::with_prefix(stack.merged(), prefix)?;
    while let Some(r) = refs.next_record()? {
        if let Some(reference) = to_reference(r) {
            each(reference);
        }
    }
    Ok(())
}

/// `name` peeled to an object: symbolic refs followed (at most 5 levels, as git does).
fn peel_to_id(stack: &StackReader, name: &[u8]) -> reftable::Result<Option<Oid>> {
    let mut name = name.to_vec();
    for _ in 0..5 {
        let Some(r) = stack.merged().read_ref(&name)? else {
            return Ok(None);
        };
        match to_reference(&r).map(|x| x.target) {
            Some(Target::Object(oid)) => return Ok(Some(oid)),
            Some(Target::Symbolic(next)) => name = next.to_vec(),
            None => return Ok(None),
        }
    }
    Ok(None)
}

/// The reflog of `name`, newest first (the order it is stored in; gix's reverse iterator),
/// each line handed to `each` without a copy.
fn for_each_log_line(
    stack: &StackReader,
    name: &[u8],
    mut each: impl FnMut(LogLine<'_>),
) -> reftable::Result<()> {
    let mut log = stack.merged().reflog(name)?;
    while let Some(u) = log.next_record()?.and_then(|l| l.update()) {
        each(LogLine {
            previous_oid: to_oid(&u.old_id),
            new_oid: to_oid(&u.new_id),
            name: &u.committer.name,
            email: &u.committer.email,
            seconds: u.committer.time,
            offset: u.committer.tz_offset.minutes().unwrap_or(0) * 60,
            message: u.message.strip_suffix(b"\n").unwrap_or(&u.message),
        });
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let scratch = tempfile::tempdir()?;
    let dir = match std::env::args_os().nth(1) {
        Some(p) => stack_dir(Path::new(&p)),
        None => demo_stack(&scratch.path().join("demo"))?,
    };
    let stack = StackReader::open(&dir, None)?;
    println!(
        "{}: {:?}, {} tables",
        dir.display(),
        stack.hash(),
        stack.tables().len()
    );

    match peel_to_id(&stack, b"HEAD")? {
        Some(id) => println!("HEAD peels to {id}"),
        None => println!("HEAD is unborn"),
    }
    let mut names = Vec::new();
    for_each_reference(&stack, b"refs/", |r| {
        let target = match &r.target {
            Target::Object(id) => id.to_string(),
            Target::Symbolic(name) => format!("ref: {}", String::from_utf8_lossy(name)),
        };
        let peeled = r.peeled.map_or(String::new(), |p| format!(" (peeled {p})"));
        println!("{} {target}{peeled}", String::from_utf8_lossy(r.name));
        names.push(r.name.to_vec());
    })?;
    for name in names.iter().map(Vec::as_slice).chain([b"HEAD".as_slice()]) {
        for_each_log_line(&stack, name, |l| {
            println!(
                "  {}: {} -> {} by {} <{}> at {} {:+}: {}",
                String::from_utf8_lossy(name),
                l.previous_oid,
                l.new_oid,
                String::from_utf8_lossy(l.name),
                String::from_utf8_lossy(l.email),
                l.seconds,
                l.offset,
                String::from_utf8_lossy(l.message)
            );
        })?;
    }
    Ok(())
}

/// The stack directory of a repository given by its top level, its `.git`, or the stack
/// directory itself.
fn stack_dir(p: &Path) -> PathBuf {
    [p.join(".git/reftable"), p.join("reftable")]
        .into_iter()
        .find(|d| d.is_dir())
        .unwrap_or_else(|| p.to_path_buf())
}

/// A small stack written from gix-style values: a branch created from a `[u8; 20]`, `HEAD`
/// pointing at it, and a second update, each with a reflog entry.
fn demo_stack(dir: &Path) -> Result<PathBuf, Box<dyn Error>> {
    let mut db = RefDb::open_or_create(dir, RefDbOptions::default())?;
    let (first, second) = (
        from_oid(&Oid::Sha1([0x1c; 20])),
        from_oid(&Oid::Sha1([0x2d; 20])),
    );
    let me = Signature::new(
        "A U Thor",
        "author@example.com",
        1_700_000_000,
        TzOffset::from_hhmm(-800),
    );
    let main = RefName::new("refs/heads/main")?;
    let create = RefUpdate::create(&main, first).message("branch: Created from gix");
    let head = RefUpdate::symref_create("HEAD", &main);
    db.transaction(&[create, head], &me, &AssumeCommits)?;
    let update = RefUpdate::update(&main, second, Some(first)).message("commit: second");
    db.transaction(&[update], &me, &AssumeCommits)?;
    Ok(dir.to_path_buf())
}
