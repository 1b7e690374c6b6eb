//! Structured fuzz inputs: ref names, object ids, ref and log records and writer options,
//! drawn with [`arbitrary`] from small alphabets so that names share prefixes, keys collide
//! across tables and object ids share leading bytes (which is what exercises prefix
//! compression, shadowing, tombstones and `obj_id_len`).

use arbitrary::{Arbitrary, Result, Unstructured};
use reftable::{HashId, LogUpdate, ObjectId, WriteOptions};
use reftable::{Signature, TzOffset};

/// Path components ref names are made of.
const COMPONENTS: &[&str] = &[
    "refs", "heads", "tags", "main", "master", "a", "b", "ab", "x", "topic", "v1.0", "HEAD",
    "remotes", "origin",
];

/// A ref name: mostly 1 to 4 components from a small alphabet, sometimes raw bytes.
/// Never empty and never containing NUL (git ref names cannot).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(pub Vec<u8>);

impl<'a> Arbitrary<'a> for Name {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(1u8, 16)? {
            let raw: Vec<u8> = Arbitrary::arbitrary(u)?;
            let mut name: Vec<u8> = raw.into_iter().filter(|&b| b != 0).take(64).collect();
            if name.is_empty() {
                name.push(b'z');
            }
            return Ok(Name(name));
        }
        let n = u.int_in_range(1..=4)?;
        let mut name = Vec::new();
        for i in 0..n {
            if i > 0 {
                name.push(b'/');
            }
            name.extend_from_slice(u.choose(COMPONENTS)?.as_bytes());
        }
        Ok(Name(name))
    }
}

/// An object id index into a small pool whose ids share leading bytes, or arbitrary bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oid {
    /// Pool id number `n`: bytes `[n/4, n%4, n, n, …]`, so pairs share 1 or 2 leading bytes.
    Pool(u8),
    /// The first bytes of the id (the rest zero).
    Raw([u8; 4]),
}

impl<'a> Arbitrary<'a> for Oid {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(1u8, 8)? {
            Ok(Oid::Raw(Arbitrary::arbitrary(u)?))
        } else {
            Ok(Oid::Pool(u.int_in_range(0..=15)?))
        }
    }
}

impl Oid {
    /// The id for tables of `hash`.
    pub fn id(self, hash: HashId) -> ObjectId {
        let mut b = [0u8; 32];
        match self {
            Oid::Pool(n) => {
                b.fill(n);
                b[0] = n / 4;
                b[1] = n % 4;
            }
            Oid::Raw(r) => b[..4].copy_from_slice(&r),
        }
        ObjectId::from_bytes(&b[..hash.size()]).expect("20 or 32 bytes")
    }
}

/// The value of a generated ref record.
#[derive(Clone, Debug, Arbitrary, PartialEq, Eq)]
pub enum RefVal {
    /// A tombstone.
    Deletion,
    /// A direct ref.
    Val1(Oid),
    /// An annotated tag and its peeled object.
    Val2(Oid, Oid),
    /// A symbolic ref.
    Symref(Name),
}

impl RefVal {
    /// The library value for tables of `hash`.
    pub fn value(&self, hash: HashId) -> reftable::RefValue {
        use reftable::RefValue;
        match self {
            RefVal::Deletion => RefValue::Deletion,
            RefVal::Val1(o) => RefValue::Object(o.id(hash)),
            RefVal::Val2(v, p) => RefValue::Peeled {
                object: v.id(hash),
                peeled: p.id(hash),
            },
            RefVal::Symref(n) => RefValue::Symref(n.0.clone()),
        }
    }
}

/// A generated ref: name, an update index offset within its table's range, and a value.
#[derive(Clone, Debug, Arbitrary, PartialEq, Eq)]
pub struct FuzzRef {
    /// The ref name.
    pub name: Name,
    /// Added to the table's minimum update index, modulo the range size.
    pub ui: u8,
    /// The value.
    pub value: RefVal,
}

/// Log message text: printable words and, at the end only, newlines (the writer normalizes
/// trailing newlines and rejects inner ones unless the message is stored exactly).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message(pub Vec<u8>);

impl<'a> Arbitrary<'a> for Message {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        const WORDS: &[&str] = &["commit", ": ", "branch", "reset", "x", " ", "é", "\t"];
        let n = u.int_in_range(0..=6)?;
        let mut m = Vec::new();
        for _ in 0..n {
            m.extend_from_slice(u.choose(WORDS)?.as_bytes());
        }
        if u.ratio(1u8, 4)? {
            // A long message, to make log records span blocks.
            let len = u.int_in_range(0..=2000)?;
            m.resize(m.len() + len, b'm');
        }
        let newlines = u.int_in_range(0..=2)?;
        m.resize(m.len() + newlines, b'\n');
        Ok(Message(m))
    }
}

/// A generated reflog entry or log tombstone.
#[derive(Clone, Debug, Arbitrary, PartialEq, Eq)]
pub struct FuzzLog {
    /// The ref name.
    pub name: Name,
    /// Update index offset (modulo the table's range, or anything up to its maximum).
    pub ui: u16,
    /// `None` for a log tombstone.
    pub update: Option<FuzzLogUpdate>,
}

/// The contents of a generated reflog entry.
#[derive(Clone, Debug, Arbitrary, PartialEq, Eq)]
pub struct FuzzLogUpdate {
    /// Old value.
    pub old: Oid,
    /// New value.
    pub new: Oid,
    /// Committer name index.
    pub who: u8,
    /// Seconds since the epoch.
    pub time: u64,
    /// Time zone.
    pub tz: i16,
    /// Message.
    pub message: Message,
}

impl FuzzLogUpdate {
    /// The library's reflog entry for tables of `hash` (message as generated).
    pub fn update(&self, hash: HashId) -> LogUpdate {
        const WHO: &[(&str, &str)] = &[
            ("C O Mitter", "committer@example.com"),
            ("A U Thor", "author@example.com"),
            ("", ""),
        ];
        let (name, email) = WHO[self.who as usize % WHO.len()];
        LogUpdate {
            old_id: self.old.id(hash),
            new_id: self.new.id(hash),
            committer: Signature::new(
                name.as_bytes().to_vec(),
                email.as_bytes().to_vec(),
                self.time,
                TzOffset::from_hhmm(self.tz),
            ),
            message: self.message.0.clone(),
        }
    }
}

/// Writer options as the fuzzer may set them. Block sizes stay at most 64 KiB, so that one
/// test case stays fast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuzzOptions(pub WriteOptions);

impl<'a> Arbitrary<'a> for FuzzOptions {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let block_size = if u.ratio(1u8, 2)? {
            *u.choose(&[0u32, 256, 1024, 4096])?
        } else {
            u.int_in_range(40..=65536)?
        };
        let restart_interval = if u.ratio(1u8, 2)? {
            *u.choose(&[0u16, 1, 3, 16])?
        } else {
            u.int_in_range(1..=300)?
        };
        let hash = if u.ratio(1u8, 4)? {
            HashId::Sha256
        } else {
            HashId::Sha1
        };
        Ok(FuzzOptions(
            WriteOptions::default()
                .block_size(block_size)
                .restart_interval(restart_interval)
                .index_objects(u.arbitrary()?)
                .unpadded(u.ratio(1u8, 4)?)
                .hash(hash)
                .exact_log_message(u.ratio(1u8, 4)?),
        ))
    }
}

/// The message a table stores for `message`: as given with `exact`, else with trailing
/// newlines replaced by one. `None` when the writer must refuse it (an inner newline).
pub fn stored_message(message: &[u8], exact: bool) -> Option<Vec<u8>> {
    if exact {
        return Some(message.to_vec());
    }
    let mut m = message;
    while let Some(s) = m.strip_suffix(b"\n") {
        m = s;
    }
    if m.contains(&b'\n') {
        return None;
    }
    let mut out = m.to_vec();
    out.push(b'\n');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_normalized_like_the_writer_does() {
        assert_eq!(stored_message(b"x", false).unwrap(), b"x\n");
        assert_eq!(stored_message(b"x\n\n", false).unwrap(), b"x\n");
        assert_eq!(stored_message(b"", false).unwrap(), b"\n");
        assert_eq!(stored_message(b"a\nb", false), None);
        assert_eq!(stored_message(b"a\nb", true).unwrap(), b"a\nb");
    }

    #[test]
    fn pool_ids_share_prefixes() {
        let a = Oid::Pool(4).id(HashId::Sha1);
        let b = Oid::Pool(5).id(HashId::Sha1);
        assert_eq!(a.as_bytes()[0], b.as_bytes()[0]);
        assert_ne!(a, b);
        assert_eq!(Oid::Pool(4).id(HashId::Sha256).len(), 32);
    }
}
