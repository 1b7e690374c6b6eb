//! Records and their encodings: key prefix compression, and the ref, log, obj and index
//! records stored in the four block types.
//!
//! Every record is stored as
//! `varint(prefix_len) varint(suffix_len << 3 | value_type) suffix value`, where the key is the
//! first `prefix_len` bytes of the previous key in the block followed by `suffix`.

use std::fmt;

use crate::codec::format::BlockType;
use crate::codec::varint;
use crate::hash::ObjectId;
use crate::signature::{Signature, TzOffset};
use crate::target::Target;

pub use super::fields::CodecContext;
use super::fields::{get_bytes, get_varint};
use super::ref_view::{decode_ref_value, decode_update_index, RefValueView, RefView};

mod sealed {
    /// Only this crate's record types implement [`super::Record`].
    pub trait Sealed {}
    impl Sealed for super::RefRecord {}
    impl Sealed for super::LogRecord {}
    impl Sealed for super::ObjRecord {}
    impl Sealed for super::IndexRecord {}
}

/// A record type stored in one kind of block.
///
/// Implemented by [`RefRecord`], [`LogRecord`], and the index layer's `ObjRecord` and
/// `IndexRecord` (and sealed: the format has these four); the block and table iterators are
/// generic over it. Its encoding methods take the codec's context (`unstable-codec`).
pub trait Record: sealed::Sealed + Clone + Default + fmt::Debug + Send + Sync + 'static {
    /// The block type this record lives in.
    const BLOCK_TYPE: BlockType;

    /// Replace the contents of `out` with this record's key.
    fn write_key(&self, out: &mut Vec<u8>);

    /// The 3-bit value type stored next to the key.
    fn value_type(&self) -> u8;

    /// Append the encoded value (everything after the key) to `out`.
    fn encode_value(&self, out: &mut Vec<u8>, ctx: &CodecContext);

    /// Decode the record whose full key is `key` from the value bytes at the start of `data`,
    /// reusing this record's buffers. Returns the number of value bytes consumed.
    fn decode(
        &mut self,
        key: &[u8],
        value_type: u8,
        data: &[u8],
        ctx: &CodecContext,
    ) -> Result<usize, &'static str>;

    /// Whether this record is a deletion (tombstone). Obj and index records never are.
    fn is_deletion(&self) -> bool {
        false
    }

    /// The length of the value at the start of `data`, checked as [`Record::decode`]
    /// checks it but not decoded; `None` where this type has no cheaper way than decoding.
    /// Seeks step over the records before their target with it, comparing keys only.
    fn skip_value(
        _value_type: u8,
        _data: &[u8],
        _ctx: &CodecContext,
    ) -> Option<Result<usize, &'static str>> {
        None
    }

    /// Heap bytes the record's decoded value holds (a reflog message can be 16 MiB); 0 for
    /// types whose values are small. Merged iterators let big ones go while they wait.
    fn value_bytes(&self) -> usize {
        0
    }
}

/// Append the prefix-compressed encoding of `key` (relative to `prev`) with `value_type` in
/// the low bits. Returns whether the record is a restart point (prefix length 0).
pub fn encode_key(out: &mut Vec<u8>, prev: &[u8], key: &[u8], value_type: u8) -> bool {
    let prefix = varint::common_prefix(prev, key);
    let suffix = &key[prefix..];
    varint::put(out, prefix as u64);
    varint::put(
        out,
        ((suffix.len() as u64) << 3) | u64::from(value_type & 7),
    );
    out.extend_from_slice(suffix);
    prefix == 0
}

/// The fixed part of an encoded key: how much of the previous key to keep and the suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHeader {
    /// Bytes taken from the previous key.
    pub prefix_len: usize,
    /// Where the suffix starts (relative to the record start).
    pub suffix_start: usize,
    /// Suffix length.
    pub suffix_len: usize,
    /// The 3-bit value type.
    pub value_type: u8,
}

impl KeyHeader {
    /// Bytes of the key encoding, header and suffix.
    pub fn len(&self) -> usize {
        self.suffix_start + self.suffix_len
    }

    /// Whether the encoding is empty (never true for a decoded header).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Parse the key encoding at the start of `data`, checking that the suffix is inside `data`.
#[inline]
pub fn decode_key_header(data: &[u8]) -> Result<KeyHeader, &'static str> {
    Ok(key_header_at(data, 0)?.0)
}

/// [`decode_key_header`] of the key at `data[at..]` (the header's offsets relative to `at`),
/// and the suffix.
#[inline(always)]
fn key_header_at(data: &[u8], at: usize) -> Result<(KeyHeader, &[u8]), &'static str> {
    let mut pos = at;
    let (prefix, word) = match data.get(at..).and_then(<[u8]>::first_chunk::<2>) {
        // Both varints of one byte (a prefix below 128, a suffix below 16): most keys.
        Some(&[p, w]) if (p | w) & 0x80 == 0 => {
            pos += 2;
            (u64::from(p), u64::from(w))
        }
        _ => (
            get_varint(data, &mut pos, "truncated or overflowing key prefix length")?,
            get_varint(data, &mut pos, "truncated or overflowing key suffix length")?,
        ),
    };
    let suffix_start = pos;
    let what = "key suffix extends past the end of the records";
    let suffix = get_bytes(data, &mut pos, word >> 3, what)?;
    let h = KeyHeader {
        prefix_len: usize::try_from(prefix).map_err(|_| "key prefix length too large")?,
        suffix_start: suffix_start - at,
        suffix_len: suffix.len(),
        value_type: (word & 7) as u8,
    };
    Ok((h, suffix))
}

/// Decode the key at the start of `data` on top of `key` (the previous key), in place.
/// Returns the header; `key` then holds the full key. Keys of a block increase strictly: a
/// key that does not sort after a previous one (not empty) is an error.
#[inline(always)]
pub fn decode_key(data: &[u8], key: &mut Vec<u8>) -> Result<KeyHeader, &'static str> {
    let (h, _) = decode_key_at(data, 0, key)?;
    Ok(h)
}

/// [`decode_key`] of the key at `data[at..]`: the header (relative to `at`) and where the
/// value starts (an offset into `data`).
#[inline(always)]
pub(crate) fn decode_key_at(
    data: &[u8],
    at: usize,
    key: &mut Vec<u8>,
) -> Result<(KeyHeader, usize), &'static str> {
    let (h, suffix) = key_header_at(data, at)?;
    let suffix_start = at + h.suffix_start;
    let end = suffix_start + h.suffix_len;
    check_key(h.prefix_len, suffix, key, key.len())?;
    key.truncate(h.prefix_len);
    append_short(key, data, suffix_start, suffix);
    Ok((h, end))
}

/// What [`decode_key_in`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyIn {
    /// The key is the buffer's first `len` bytes; its value, of `value_type`, starts at
    /// `value_start` (an offset into the data).
    Decoded {
        len: usize,
        value_type: u8,
        value_start: usize,
    },
    /// The buffer is too small: it must hold this many bytes. Nothing was written.
    Grow(usize),
}

/// [`decode_key_at`] into a buffer of fixed size whose first `len` bytes are the previous
/// key: the same checks, and the key's length kept by the caller rather than in a `Vec`,
/// so a long run of keys is decoded with no length or capacity kept in memory. A suffix of
/// up to 16 bytes is copied as one 16-byte chunk where both sides have the room; the
/// buffer asks for 16 bytes beyond the key it must hold.
#[inline(always)]
pub(crate) fn decode_key_in(
    data: &[u8],
    at: usize,
    key: &mut [u8],
    len: usize,
) -> Result<KeyIn, &'static str> {
    let (h, suffix) = key_header_at(data, at)?;
    let prefix = h.prefix_len;
    check_key(prefix, suffix, key, len)?;
    let start = at + h.suffix_start;
    let new_len = prefix + suffix.len();
    const CHUNK: usize = 16;
    let chunk = data.get(start..).and_then(<[u8]>::first_chunk::<CHUNK>);
    let room = key.len();
    let dst = key
        .get_mut(prefix..)
        .and_then(<[u8]>::first_chunk_mut::<CHUNK>);
    match (chunk, dst) {
        (Some(chunk), Some(dst)) if suffix.len() <= CHUNK => *dst = *chunk,
        _ if room < new_len + CHUNK => return Ok(KeyIn::Grow(new_len + CHUNK)),
        _ => key[prefix..new_len].copy_from_slice(suffix),
    }
    Ok(KeyIn::Decoded {
        len: new_len,
        value_type: h.value_type,
        value_start: start + suffix.len(),
    })
}

/// The checks of a key against the previous one (`key[..len]`, empty for a block's first):
/// the shared prefix inside it, the key not empty, and sorting after it. Both keys share
/// the first `prefix` bytes, so the new one sorts after the previous one exactly when its
/// suffix sorts after the rest of the previous key (usually decided by the first byte).
#[inline(always)]
fn check_key(prefix: usize, suffix: &[u8], key: &[u8], len: usize) -> Result<(), &'static str> {
    let Some(rest) = key.get(prefix..len) else {
        return Err("key prefix length exceeds the previous key");
    };
    if prefix == 0 && suffix.is_empty() {
        return Err("empty key");
    }
    if len != 0 && !sorts_after(suffix, rest) {
        return Err("key does not sort after the previous key");
    }
    Ok(())
}

/// Append `suffix`, which is `data[start..]`'s first bytes, to `key`. A suffix of up to 16
/// bytes with 16 bytes of `data` behind its start (most of them) is copied as one fixed
/// 16-byte chunk and the key cut back, which needs no call to `memcpy`; so that the chunk
/// never makes the key grow, a key that grows is given 16 bytes of room beyond it (one
/// allocation, as before).
#[inline(always)]
fn append_short(key: &mut Vec<u8>, data: &[u8], start: usize, suffix: &[u8]) {
    const CHUNK: usize = 16;
    let len = key.len() + suffix.len();
    if let Some(chunk) = data.get(start..start.wrapping_add(CHUNK)) {
        if suffix.len() <= CHUNK && key.capacity() - key.len() >= CHUNK {
            key.extend_from_slice(chunk);
            key.truncate(len);
            return;
        }
    }
    if key.capacity() < len + CHUNK {
        key.reserve(suffix.len() + CHUNK);
    }
    key.extend_from_slice(suffix);
}

/// Whether `new` sorts after `old`: decided by the first bytes in almost every record, with
/// no call to `memcmp`.
#[inline(always)]
fn sorts_after(new: &[u8], old: &[u8]) -> bool {
    // A loop rather than `new > old`: that calls `memcmp`, and the call makes the
    // decoding loop around it keep its registers on the stack.
    match (new.first(), old.first()) {
        (Some(a), Some(b)) if a != b => return a > b,
        _ => {}
    }
    // Eight bytes at a time (a block's restart keys share their first bytes with the key
    // before), then byte by byte.
    let n = new.len().min(old.len());
    let (mut a, mut b) = (&new[..n], &old[..n]);
    while let (Some((x, ra)), Some((y, rb))) =
        (a.split_first_chunk::<8>(), b.split_first_chunk::<8>())
    {
        if x != y {
            return u64::from_be_bytes(*x) > u64::from_be_bytes(*y);
        }
        (a, b) = (ra, rb);
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x > y;
        }
    }
    new.len() > old.len()
}

/// An object id from its bytes (a table's hash size: 20 or 32).
#[inline]
fn id_from(b: &[u8]) -> Result<ObjectId, &'static str> {
    ObjectId::from_bytes(b).ok_or("unsupported object id size")
}

#[inline]
fn get_id(
    data: &[u8],
    pos: &mut usize,
    size: usize,
    what: &'static str,
) -> Result<ObjectId, &'static str> {
    id_from(get_bytes(data, pos, size as u64, what)?)
}

fn get_string_into(
    data: &[u8],
    pos: &mut usize,
    out: &mut Vec<u8>,
    what: &'static str,
) -> Result<(), &'static str> {
    let len = get_varint(data, pos, what)?;
    let s = get_bytes(data, pos, len, what)?;
    out.clear();
    out.extend_from_slice(s);
    Ok(())
}

fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    varint::put(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// The value of a ref record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum RefValue {
    /// A tombstone: the ref is deleted (value type 0).
    #[default]
    Deletion,
    /// The ref points at an object (value type 1; git's `VAL1`).
    Object(ObjectId),
    /// The ref points at an annotated tag, stored with the object the tag peels to (value
    /// type 2; git's `VAL2`).
    Peeled {
        /// The tag object the ref points at.
        object: ObjectId,
        /// The object the tag peels to.
        peeled: ObjectId,
    },
    /// A symbolic ref and its target name (value type 3).
    Symref(Vec<u8>),
}

impl RefValue {
    /// What the ref points at; `None` for a tombstone. A peeled tag's target is the tag
    /// object (the peeled id is [`RefRecord::peeled_id`]'s).
    pub fn target(&self) -> Option<Target> {
        match self {
            RefValue::Deletion => None,
            RefValue::Object(id) | RefValue::Peeled { object: id, .. } => Some(Target::Object(*id)),
            RefValue::Symref(t) => Some(Target::Symref(t.clone())),
        }
    }
}

impl From<Target> for RefValue {
    /// An object id as value type 1, a symref as value type 3.
    fn from(t: Target) -> RefValue {
        match t {
            Target::Object(id) => RefValue::Object(id),
            Target::Symref(name) => RefValue::Symref(name),
        }
    }
}

/// A ref record: a ref name, the update index that wrote it, and its value.
///
/// ```
/// use reftable::codec::record::Record;
/// use reftable::{ObjectId, RefRecord, RefValue};
/// let r = RefRecord::new("refs/heads/main", 1, RefValue::Object(ObjectId::null(Default::default())));
/// assert_eq!(r.refname, b"refs/heads/main");
/// assert!(!r.is_deletion());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RefRecord {
    /// The ref name as raw bytes.
    pub refname: Vec<u8>,
    /// The update index of the transaction that wrote this record.
    pub update_index: u64,
    /// The value.
    pub value: RefValue,
}

impl RefRecord {
    /// A record from a name, an update index and a value.
    pub fn new(refname: impl Into<Vec<u8>>, update_index: u64, value: RefValue) -> RefRecord {
        RefRecord {
            refname: refname.into(),
            update_index,
            value,
        }
    }

    /// The object the ref points at directly, if any.
    pub fn value_id(&self) -> Option<&ObjectId> {
        match &self.value {
            RefValue::Object(id) | RefValue::Peeled { object: id, .. } => Some(id),
            _ => None,
        }
    }

    /// The peeled object of an annotated tag ref, if stored.
    pub fn peeled_id(&self) -> Option<&ObjectId> {
        match &self.value {
            RefValue::Peeled { peeled, .. } => Some(peeled),
            _ => None,
        }
    }

    /// The target of a symbolic ref.
    pub fn symref_target(&self) -> Option<&[u8]> {
        match &self.value {
            RefValue::Symref(t) => Some(t),
            _ => None,
        }
    }
}

impl RefView<'_> {
    /// An owned copy; `None` when an id is not 20 or 32 bytes long (never for a view a
    /// table lent).
    pub fn to_record(&self) -> Option<RefRecord> {
        let value = match self.value {
            RefValueView::Deletion => RefValue::Deletion,
            RefValueView::Object(b) => RefValue::Object(ObjectId::from_bytes(b)?),
            RefValueView::Peeled { object, peeled } => RefValue::Peeled {
                object: ObjectId::from_bytes(object)?,
                peeled: ObjectId::from_bytes(peeled)?,
            },
            RefValueView::Symref(t) => RefValue::Symref(t.to_vec()),
        };
        Some(RefRecord::new(self.refname, self.update_index, value))
    }
}

impl<'a> From<&'a RefRecord> for RefView<'a> {
    fn from(r: &'a RefRecord) -> RefView<'a> {
        let value = match &r.value {
            RefValue::Deletion => RefValueView::Deletion,
            RefValue::Object(id) => RefValueView::Object(id.as_bytes()),
            RefValue::Peeled { object, peeled } => RefValueView::Peeled {
                object: object.as_bytes(),
                peeled: peeled.as_bytes(),
            },
            RefValue::Symref(t) => RefValueView::Symref(t),
        };
        RefView {
            refname: &r.refname,
            update_index: r.update_index,
            value,
        }
    }
}

impl Record for RefRecord {
    const BLOCK_TYPE: BlockType = BlockType::Ref;

    fn write_key(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.refname);
    }

    fn value_type(&self) -> u8 {
        match self.value {
            RefValue::Deletion => 0,
            RefValue::Object(_) => 1,
            RefValue::Peeled { .. } => 2,
            RefValue::Symref(_) => 3,
        }
    }

    fn encode_value(&self, out: &mut Vec<u8>, ctx: &CodecContext) {
        varint::put(out, self.update_index.wrapping_sub(ctx.min_update_index));
        match &self.value {
            RefValue::Deletion => {}
            RefValue::Object(id) => out.extend_from_slice(id.as_bytes()),
            RefValue::Peeled {
                object: value,
                peeled,
            } => {
                out.extend_from_slice(value.as_bytes());
                out.extend_from_slice(peeled.as_bytes());
            }
            RefValue::Symref(target) => put_string(out, target),
        }
    }

    #[inline(always)]
    fn decode(
        &mut self,
        key: &[u8],
        value_type: u8,
        data: &[u8],
        ctx: &CodecContext,
    ) -> Result<usize, &'static str> {
        let (update_index, value, n) = decode_ref_value(value_type, data, 0, ctx)?;
        self.update_index = update_index;
        self.refname.clear();
        self.refname.extend_from_slice(key);
        match value {
            RefValueView::Deletion => self.value = RefValue::Deletion,
            RefValueView::Object(b) => {
                // In place when the previous record was an object too (the common case):
                // no drop of the old value, no move of the whole enum.
                if let RefValue::Object(old) = &mut self.value {
                    if !old.overwrite(b) {
                        *old = id_from(b)?;
                    }
                } else {
                    self.value = RefValue::Object(id_from(b)?);
                }
            }
            RefValueView::Peeled { object, peeled } => {
                self.value = RefValue::Peeled {
                    object: id_from(object)?,
                    peeled: id_from(peeled)?,
                };
            }
            RefValueView::Symref(t) => {
                // The previous target's buffer is reused.
                let mut target = match std::mem::take(&mut self.value) {
                    RefValue::Symref(t) => t,
                    _ => Vec::new(),
                };
                target.clear();
                target.extend_from_slice(t);
                self.value = RefValue::Symref(target);
            }
        }
        Ok(n)
    }

    fn is_deletion(&self) -> bool {
        matches!(self.value, RefValue::Deletion)
    }

    #[inline]
    fn skip_value(
        value_type: u8,
        data: &[u8],
        ctx: &CodecContext,
    ) -> Option<Result<usize, &'static str>> {
        Some((|| {
            let mut pos = 0;
            decode_update_index(data, &mut pos, ctx)?;
            let what = "ref value extends past the end of the records";
            let len = match value_type {
                0 => 0,
                1 => ctx.hash_size as u64,
                2 => 2 * ctx.hash_size as u64,
                3 => get_varint(data, &mut pos, what)?,
                _ => return Err("invalid ref value type (4..7 are reserved)"),
            };
            get_bytes(data, &mut pos, len, what)?;
            Ok(pos)
        })())
    }
}

/// The contents of a reflog entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LogUpdate {
    /// The value before the update (null id when the ref was created).
    pub old_id: ObjectId,
    /// The value after the update (null id when the ref was deleted).
    pub new_id: ObjectId,
    /// Who made the change, and when.
    pub committer: Signature,
    /// The message; git's writer stores exactly one trailing newline.
    pub message: Vec<u8>,
}

/// The value of a log record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum LogValue {
    /// A log tombstone: hides the entry with the same key in older tables (value type 0).
    #[default]
    Deletion,
    /// A reflog entry (value type 1).
    Update(LogUpdate),
}

/// A log record: one reflog entry (or tombstone) of a ref, keyed by ref name and update
/// index, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LogRecord {
    /// The ref name as raw bytes.
    pub refname: Vec<u8>,
    /// The update index of the transaction that wrote the entry.
    pub update_index: u64,
    /// The entry.
    pub value: LogValue,
}

impl LogRecord {
    /// The reflog entry, unless this is a tombstone.
    pub fn update(&self) -> Option<&LogUpdate> {
        match &self.value {
            LogValue::Update(u) => Some(u),
            LogValue::Deletion => None,
        }
    }

    /// Whether this is a reflog existence marker (an update with both ids null), which git
    /// writes for an empty reflog and hides from every reader, whatever its other fields.
    pub fn is_existence_marker(&self) -> bool {
        matches!(&self.value, LogValue::Update(u) if u.old_id.is_null() && u.new_id.is_null())
    }

    /// The key of the newest possible entry of `refname`: where a reflog seek starts.
    pub fn seek_key(refname: &[u8], update_index: u64) -> Vec<u8> {
        let mut key = Vec::with_capacity(refname.len() + 9);
        key.extend_from_slice(refname);
        key.push(0);
        key.extend_from_slice(&(u64::MAX - update_index).to_be_bytes());
        key
    }
}

impl Record for LogRecord {
    const BLOCK_TYPE: BlockType = BlockType::Log;

    fn value_bytes(&self) -> usize {
        match &self.value {
            LogValue::Update(u) => {
                u.message.capacity() + u.committer.name.capacity() + u.committer.email.capacity()
            }
            LogValue::Deletion => 0,
        }
    }

    fn write_key(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.refname);
        out.push(0);
        out.extend_from_slice(&(u64::MAX - self.update_index).to_be_bytes());
    }

    fn value_type(&self) -> u8 {
        match self.value {
            LogValue::Deletion => 0,
            LogValue::Update(_) => 1,
        }
    }

    fn encode_value(&self, out: &mut Vec<u8>, _ctx: &CodecContext) {
        if let LogValue::Update(u) = &self.value {
            out.extend_from_slice(u.old_id.as_bytes());
            out.extend_from_slice(u.new_id.as_bytes());
            put_string(out, &u.committer.name);
            put_string(out, &u.committer.email);
            varint::put(out, u.committer.time);
            out.extend_from_slice(&u.committer.tz_offset.hhmm().to_be_bytes());
            put_string(out, &u.message);
        }
    }

    fn decode(
        &mut self,
        key: &[u8],
        value_type: u8,
        data: &[u8],
        ctx: &CodecContext,
    ) -> Result<usize, &'static str> {
        if key.len() <= 9 || key[key.len() - 9] != 0 {
            return Err("log key is not refname, NUL, 8-byte update index");
        }
        let name_len = key.len() - 9;
        self.refname.clear();
        self.refname.extend_from_slice(&key[..name_len]);
        self.update_index = u64::MAX - varint::be64(&key[name_len + 1..]);
        // Below the minimum is fine: reflog expiry rewrites entries at their old index.
        if self.update_index > ctx.max_update_index {
            return Err("log update index above the table's max_update_index");
        }
        if value_type == 0 {
            self.value = LogValue::Deletion;
            return Ok(0);
        }
        let mut u = match std::mem::take(&mut self.value) {
            LogValue::Update(u) => u,
            LogValue::Deletion => LogUpdate::default(),
        };
        let what = "log value extends past the end of the records";
        let mut pos = 0;
        u.old_id = get_id(data, &mut pos, ctx.hash_size, what)?;
        u.new_id = get_id(data, &mut pos, ctx.hash_size, what)?;
        let who = &mut u.committer;
        get_string_into(data, &mut pos, &mut who.name, what)?;
        get_string_into(data, &mut pos, &mut who.email, what)?;
        who.time = get_varint(data, &mut pos, what)?;
        let tz = get_bytes(data, &mut pos, 2, what)?;
        who.tz_offset = TzOffset::from_hhmm(i16::from_be_bytes([tz[0], tz[1]]));
        get_string_into(data, &mut pos, &mut u.message, what)?;
        self.value = LogValue::Update(u);
        Ok(pos)
    }

    fn is_deletion(&self) -> bool {
        matches!(self.value, LogValue::Deletion)
    }
}

/// An obj record: an abbreviated object id and the offsets of the ref blocks holding refs
/// that point at objects with that prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ObjRecord {
    /// The first `obj_id_len` bytes of the object id.
    pub hash_prefix: Vec<u8>,
    /// Ascending ref block offsets. Empty means "positions omitted: scan all refs".
    pub offsets: Vec<u64>,
}

impl Record for ObjRecord {
    const BLOCK_TYPE: BlockType = BlockType::Obj;

    fn write_key(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.hash_prefix);
    }

    fn value_type(&self) -> u8 {
        if (1..8).contains(&self.offsets.len()) {
            self.offsets.len() as u8
        } else {
            0
        }
    }

    fn encode_value(&self, out: &mut Vec<u8>, _ctx: &CodecContext) {
        let n = self.offsets.len();
        if n == 0 || n >= 8 {
            varint::put(out, n as u64);
        }
        let mut last = 0;
        for (i, &off) in self.offsets.iter().enumerate() {
            varint::put(out, if i == 0 { off } else { off.wrapping_sub(last) });
            last = off;
        }
    }

    fn decode(
        &mut self,
        key: &[u8],
        value_type: u8,
        data: &[u8],
        _ctx: &CodecContext,
    ) -> Result<usize, &'static str> {
        self.hash_prefix.clear();
        self.hash_prefix.extend_from_slice(key);
        self.offsets.clear();
        let mut pos = 0;
        let what = "obj record extends past the end of the records";
        let count = if value_type == 0 {
            get_varint(data, &mut pos, what)?
        } else {
            u64::from(value_type)
        };
        // Every position takes at least one byte: a count beyond the data is corrupt, and
        // checking it first keeps a bogus count from allocating.
        if count > (data.len() - pos) as u64 {
            return Err(what);
        }
        self.offsets.reserve(count as usize);
        let mut last = 0u64;
        for i in 0..count {
            let v = get_varint(data, &mut pos, what)?;
            last = if i == 0 {
                v
            } else if v == 0 {
                // Positions are distinct block offsets in ascending order.
                return Err("obj record positions are not strictly increasing");
            } else {
                last.checked_add(v).ok_or("obj record position overflows")?
            };
            self.offsets.push(last);
        }
        Ok(pos)
    }
}

/// An index record: the last key of a block and the block's file offset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct IndexRecord {
    /// The last key stored in the indexed block.
    pub last_key: Vec<u8>,
    /// File offset of the indexed block (0 for the first block).
    pub offset: u64,
}

impl Record for IndexRecord {
    const BLOCK_TYPE: BlockType = BlockType::Index;

    fn write_key(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.last_key);
    }

    fn value_type(&self) -> u8 {
        0
    }

    fn encode_value(&self, out: &mut Vec<u8>, _ctx: &CodecContext) {
        varint::put(out, self.offset);
    }

    fn decode(
        &mut self,
        key: &[u8],
        _value_type: u8,
        data: &[u8],
        _ctx: &CodecContext,
    ) -> Result<usize, &'static str> {
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        let mut pos = 0;
        self.offset = get_varint(data, &mut pos, "truncated index record offset")?;
        Ok(pos)
    }

    #[inline]
    fn skip_value(
        _value_type: u8,
        data: &[u8],
        _ctx: &CodecContext,
    ) -> Option<Result<usize, &'static str>> {
        let mut pos = 0;
        Some(get_varint(data, &mut pos, "truncated index record offset").map(|_| pos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashId;

    const CTX: CodecContext = CodecContext {
        hash_size: 20,
        min_update_index: 5,
        max_update_index: u64::MAX,
    };

    fn id(b: u8) -> ObjectId {
        ObjectId::from_bytes(&[b; 20]).unwrap()
    }

    /// A value's target and back: an object for a direct ref and a peeled tag (the tag),
    /// the name for a symref, none for a tombstone; a target makes the plain value.
    #[test]
    fn values_and_targets() {
        let peeled = RefValue::Peeled {
            object: id(1),
            peeled: id(2),
        };
        let symref = RefValue::Symref(b"refs/heads/x".to_vec());
        assert_eq!(RefValue::Deletion.target(), None);
        assert_eq!(
            RefValue::Object(id(1)).target(),
            Some(Target::Object(id(1)))
        );
        assert_eq!(peeled.target(), Some(Target::Object(id(1))));
        assert_eq!(
            symref.target(),
            Some(Target::Symref(b"refs/heads/x".to_vec()))
        );
        assert_eq!(
            RefValue::from(Target::Object(id(3))),
            RefValue::Object(id(3))
        );
        assert_eq!(RefValue::from(symref.target().unwrap()), symref);
    }

    /// Decoding into a record reuses what it holds: an object id is overwritten in place, a
    /// symref target's buffer is kept (no allocation per record when iterating).
    #[test]
    fn decoding_reuses_the_record() {
        let mut value = Vec::new();
        let target = RefRecord::new("HEAD", 5, RefValue::Symref(b"refs/heads/main".to_vec()));
        target.encode_value(&mut value, &CTX);
        let mut rec = RefRecord::new("x", 5, RefValue::Symref(Vec::with_capacity(100)));
        assert_eq!(rec.decode(b"HEAD", 3, &value, &CTX), Ok(value.len()));
        assert_eq!(rec, target);
        match &rec.value {
            RefValue::Symref(t) => assert!(t.capacity() >= 100, "the buffer was replaced"),
            v => panic!("{v:?}"),
        }
        let mut value = Vec::new();
        let object = RefRecord::new("refs/heads/a", 6, RefValue::Object(id(7)));
        object.encode_value(&mut value, &CTX);
        let mut rec = RefRecord::new("refs/heads/z", 5, RefValue::Object(id(1)));
        assert_eq!(
            rec.decode(b"refs/heads/a", 1, &value, &CTX),
            Ok(value.len())
        );
        assert_eq!(rec, object);
    }

    #[test]
    fn only_tombstones_are_deletions() {
        let obj = ObjRecord {
            hash_prefix: vec![1, 2],
            offsets: vec![0],
        };
        let index = IndexRecord {
            last_key: b"refs/heads/a".to_vec(),
            offset: 4096,
        };
        assert!(!obj.is_deletion() && !index.is_deletion());
        assert!(RefRecord::new("a", 1, RefValue::Deletion).is_deletion());
        assert!(!RefRecord::new("a", 1, RefValue::Object(id(1))).is_deletion());
    }

    #[test]
    fn key_headers_bounds() {
        let mut enc = Vec::new();
        encode_key(&mut enc, b"", b"refs/x", 1);
        let h = decode_key_header(&enc).unwrap();
        assert_eq!(
            (h.prefix_len, h.suffix_start, h.suffix_len, h.value_type),
            (0, 2, 6, 1)
        );
        assert!(!h.is_empty() && h.len() == 8);
        assert!(KeyHeader {
            prefix_len: 0,
            suffix_start: 0,
            suffix_len: 0,
            value_type: 0
        }
        .is_empty());
        // One byte short of the suffix.
        assert_eq!(
            decode_key_header(&enc[..enc.len() - 1]),
            Err("key suffix extends past the end of the records")
        );
        // The largest prefix length a varint holds is a header (checked against the
        // previous key later), not an overflow.
        let mut big = Vec::new();
        varint::put(&mut big, u64::MAX);
        varint::put(&mut big, 0);
        assert_eq!(decode_key_header(&big).unwrap().prefix_len, usize::MAX);
    }

    fn roundtrip<R: Record + PartialEq>(rec: &R, ctx: &CodecContext) {
        let mut key = Vec::new();
        rec.write_key(&mut key);
        let mut enc = Vec::new();
        encode_key(&mut enc, b"", &key, rec.value_type());
        let klen = enc.len();
        rec.encode_value(&mut enc, ctx);
        let mut k2 = Vec::new();
        let h = decode_key(&enc, &mut k2).unwrap();
        assert_eq!(h.len(), klen);
        assert_eq!(k2, key);
        let mut out = R::default();
        let n = out.decode(&k2, h.value_type, &enc[klen..], ctx).unwrap();
        assert_eq!(n, enc.len() - klen, "value length");
        assert_eq!(&out, rec);
        // Truncating the value anywhere must fail cleanly.
        for cut in klen..enc.len() {
            let mut o = R::default();
            assert!(o.decode(&k2, h.value_type, &enc[klen..cut], ctx).is_err());
        }
    }

    #[test]
    fn ref_roundtrip_all_types() {
        for value in [
            RefValue::Deletion,
            RefValue::Object(id(1)),
            RefValue::Peeled {
                object: id(2),
                peeled: id(3),
            },
            RefValue::Symref(b"refs/heads/main".to_vec()),
        ] {
            roundtrip(&RefRecord::new("refs/heads/x", 7, value), &CTX);
        }
    }

    #[test]
    fn ref_invalid_value_type() {
        let mut r = RefRecord::default();
        for vt in 4..8 {
            assert_eq!(
                r.decode(b"a", vt, &[0], &CTX),
                Err("invalid ref value type (4..7 are reserved)")
            );
        }
    }

    #[test]
    fn log_roundtrip() {
        let upd = LogRecord {
            refname: b"refs/heads/main".to_vec(),
            update_index: 42,
            value: LogValue::Update(LogUpdate {
                old_id: id(1),
                new_id: id(2),
                committer: Signature::new(
                    "C O Mitter",
                    "c@example.com",
                    1_700_000_000,
                    TzOffset::from_hhmm(100),
                ),
                message: b"commit: x\n".to_vec(),
            }),
        };
        roundtrip(&upd, &CTX);
        let del = LogRecord {
            refname: b"refs/heads/main".to_vec(),
            update_index: 3,
            value: LogValue::Deletion,
        };
        roundtrip(&del, &CTX);
        let empty = LogRecord {
            refname: b"a".to_vec(),
            update_index: u64::MAX,
            value: LogValue::Update(LogUpdate::default()),
        };
        roundtrip(&empty, &CTX);
        // Reuse: decoding an update into a record holding other strings replaces them.
        let mut key = Vec::new();
        upd.write_key(&mut key);
        let mut val = Vec::new();
        empty.encode_value(&mut val, &CTX);
        let mut out = upd.clone();
        out.decode(&key, 1, &val, &CTX).unwrap();
        assert_eq!(out.update().unwrap().committer.name, b"");
        // And its name: a shorter one replaces the longer one held.
        let mut out = upd.clone();
        empty.write_key(&mut key);
        out.decode(&key, 1, &val, &CTX).unwrap();
        assert_eq!(out, empty);
    }

    #[test]
    fn log_key_checks() {
        let mut r = LogRecord::default();
        assert!(r.decode(b"short", 0, &[], &CTX).is_err());
        assert!(r.decode(b"abcdefghij", 0, &[], &CTX).is_err());
        let key = LogRecord::seek_key(b"x", 9);
        r.decode(&key, 0, &[], &CTX).unwrap();
        assert_eq!(r.update_index, 9);
        assert_eq!(r.refname, b"x");
    }

    #[test]
    fn obj_roundtrip_counts() {
        for n in [0usize, 1, 2, 7, 8, 9, 300] {
            let rec = ObjRecord {
                hash_prefix: vec![1, 2, 3],
                offsets: (0..n as u64).map(|i| i * 4096 + 7).collect(),
            };
            roundtrip(&rec, &CTX);
        }
    }

    #[test]
    fn obj_huge_count_does_not_allocate() {
        let mut val = Vec::new();
        varint::put(&mut val, u64::MAX >> 1);
        let mut r = ObjRecord::default();
        assert!(r.decode(b"ab", 0, &val, &CTX).is_err());
    }

    #[test]
    fn index_roundtrip() {
        roundtrip(
            &IndexRecord {
                last_key: b"refs/heads/zzz".to_vec(),
                offset: 123_456,
            },
            &CTX,
        );
    }

    #[test]
    fn key_prefix_compression() {
        let mut enc = Vec::new();
        assert!(!encode_key(
            &mut enc,
            b"refs/heads/main",
            b"refs/heads/topic",
            1
        ));
        assert_eq!(enc[0], 11);
        assert_eq!(enc[1], (5 << 3) | 1);
        let mut key = b"refs/heads/main".to_vec();
        let h = decode_key(&enc, &mut key).unwrap();
        assert_eq!(key, b"refs/heads/topic");
        assert_eq!(h.value_type, 1);
        // Prefix longer than the previous key.
        let mut short = b"ab".to_vec();
        assert!(decode_key(&enc, &mut short).is_err());
        // Empty key, first in a block or after another key; a key equal to the one
        // before it (all prefix, no suffix) does not sort after it.
        assert_eq!(decode_key(&[0, 0], &mut Vec::new()), Err("empty key"));
        assert_eq!(decode_key(&[0, 0], &mut b"abc".to_vec()), Err("empty key"));
        assert_eq!(
            decode_key(&[3, 0], &mut b"abc".to_vec()),
            Err("key does not sort after the previous key")
        );
        // Suffix past the end.
        assert!(decode_key(&[0, 0x50, b'a'], &mut Vec::new()).is_err());
        let _ = HashId::Sha1;
    }

    /// What a merged iterator's budget charges for a reflog entry: the capacity of its
    /// message, name and email together; nothing for a deletion or another record type.
    #[test]
    fn value_bytes_sum_the_log_strings() {
        let with = |message: usize, name: usize, email: usize| LogRecord {
            refname: b"refs/heads/main".to_vec(),
            update_index: 1,
            value: LogValue::Update(LogUpdate {
                message: Vec::with_capacity(message),
                committer: Signature {
                    name: Vec::with_capacity(name),
                    email: Vec::with_capacity(email),
                    ..Default::default()
                },
                ..Default::default()
            }),
        };
        let r = with(5, 3, 4);
        let LogValue::Update(u) = &r.value else {
            unreachable!()
        };
        let caps =
            u.message.capacity() + u.committer.name.capacity() + u.committer.email.capacity();
        assert!(caps >= 12);
        assert_eq!(r.value_bytes(), caps);
        let deletion = LogRecord {
            value: LogValue::Deletion,
            ..r.clone()
        };
        assert_eq!(deletion.value_bytes(), 0);
    }

    /// A key that does not sort after the one before it (damage the gate's damaged-stack
    /// mode made: a shortened prefix length) is refused, equal or smaller, with a shared
    /// prefix or none.
    #[test]
    fn keys_must_increase() {
        let sorts_after = |prev: &[u8], enc: &[u8]| decode_key(enc, &mut prev.to_vec());
        // prefix 5 ("refs/"), suffix "a": "refs/a" after "refs/b".
        let enc = [5, (1 << 3) | 1, b'a'];
        assert_eq!(
            sorts_after(b"refs/b", &enc),
            Err("key does not sort after the previous key")
        );
        assert!(sorts_after(b"refs/", &enc).is_ok());
        // The same key again, and a restart record (prefix 0) going back.
        assert!(sorts_after(b"refs/a", &enc).is_err());
        assert!(sorts_after(b"zz", &[0, (1 << 3) | 1, b'a']).is_err());
        assert!(sorts_after(b"a", &[0, (1 << 3) | 1, b'b']).is_ok());
    }

    /// The comparison without `memcmp` orders as slices do: shared runs of 8 bytes and
    /// more, a difference in the first byte, the last, or none (one a prefix of the other).
    #[test]
    fn sorts_after_orders_as_slices_do() {
        let base = b"refs/tags/t-0000017-and-some-more";
        let mut keys: Vec<Vec<u8>> = vec![Vec::new(), b"a".to_vec(), b"\xff".to_vec()];
        for n in 0..=base.len() {
            keys.push(base[..n].to_vec());
            if let Some((&last, head)) = base[..n].split_last() {
                for other in [last.wrapping_add(1), last.wrapping_sub(1)] {
                    keys.push([head, &[other]].concat());
                }
            }
        }
        for a in &keys {
            for b in &keys {
                assert_eq!(sorts_after(a, b), a > b, "{a:?} {b:?}");
            }
        }
    }

    proptest::proptest! {
        /// Keys decoded into a buffer of fixed size that grows when asked (from none) come
        /// out as [`decode_key_at`]'s, with the same errors: runs of keys sharing prefixes,
        /// suffixes longer than the 16-byte chunk, the data ending right after a suffix,
        /// and damaged prefix lengths.
        #[test]
        fn keys_decoded_in_place_are_decode_key_ats(
            keys in proptest::collection::vec(proptest::collection::vec(b'a'..b'e', 1..40), 1..20),
            damage in proptest::option::of((0usize..20, 0u8..60)),
        ) {
            let mut keys = keys;
            keys.sort();
            keys.dedup();
            let (mut data, mut prev) = (Vec::new(), Vec::new());
            for k in &keys {
                encode_key(&mut data, &prev, k, 1);
                prev = k.clone();
            }
            if let Some((i, b)) = damage {
                if let Some(x) = data.get_mut(i) {
                    *x = b;
                }
            }
            let (mut vec_key, mut buf, mut len) = (Vec::new(), Vec::new(), 0);
            let (mut a, mut b) = (0, 0);
            while a < data.len() {
                let want = decode_key_at(&data, a, &mut vec_key);
                let mut asked = None;
                let got = loop {
                    match decode_key_in(&data, b, &mut buf, len) {
                        Ok(KeyIn::Grow(need)) => {
                            proptest::prop_assert!(need > buf.len());
                            asked = Some(need);
                            buf.resize(need, 0);
                        }
                        other => break other,
                    }
                };
                match (want, got) {
                    (Ok((h, end)), Ok(KeyIn::Decoded { len: n, value_type, value_start })) => {
                        proptest::prop_assert_eq!(&buf[..n], &vec_key[..]);
                        // A buffer that had to grow asked for 16 bytes beyond the key.
                        proptest::prop_assert!(asked.map_or(true, |need| need == n + 16));
                        proptest::prop_assert_eq!((value_type, value_start), (h.value_type, end));
                        (a, b, len) = (end, value_start, n);
                    }
                    (Err(x), Err(y)) => {
                        proptest::prop_assert_eq!(x, y);
                        break;
                    }
                    (want, got) => proptest::prop_assert!(false, "{want:?} vs {got:?}"),
                }
            }
        }
    }

    /// A ref's first value is the object it names, tag or not; the second is the peeled
    /// object, only for a tag stored with it; a symref has neither, only its target.
    #[test]
    fn first_and_second_values_and_symref_target() {
        let values = |v: RefValue| {
            let r = RefRecord::new("refs/x", 3, v);
            assert_eq!((r.refname.as_slice(), r.update_index), (&b"refs/x"[..], 3));
            (
                r.value_id().copied(),
                r.peeled_id().copied(),
                r.symref_target().map(<[u8]>::to_vec),
            )
        };
        assert_eq!(values(RefValue::Object(id(1))), (Some(id(1)), None, None));
        let tag = RefValue::Peeled {
            object: id(1),
            peeled: id(2),
        };
        assert_eq!(values(tag), (Some(id(1)), Some(id(2)), None));
        let symref = RefValue::Symref(b"refs/heads/main".to_vec());
        assert_eq!(
            values(symref),
            (None, None, Some(b"refs/heads/main".to_vec()))
        );
        assert_eq!(values(RefValue::Deletion), (None, None, None));
    }
}
