//! Reading a record's fields: the table's facts a value is decoded against, and the
//! bounded readers every record decoding goes through (a varint, a run of bytes inside the
//! data), each failing with the caller's description of what ran out.

use super::varint;

/// What a record's value is decoded against: the table's object id size and the update index
/// that ref records are stored relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodecContext {
    /// Object id size in bytes (20 or 32).
    pub hash_size: usize,
    /// The table's `min_update_index`; ref records store `update_index - min_update_index`.
    pub min_update_index: u64,
    /// The table's `max_update_index`: a ref or log record above it is corrupt, as git's
    /// writer never writes one (`u64::MAX` to not check). Log records below the minimum are
    /// valid (reflog expiry rewrites entries at their old update index).
    pub max_update_index: u64,
}

/// The varint at `*pos`, moving past it; `what` when it is truncated or overflows.
#[inline(always)]
pub(crate) fn get_varint(
    data: &[u8],
    pos: &mut usize,
    what: &'static str,
) -> Result<u64, &'static str> {
    let (v, end) = varint::get_at(data, *pos).ok_or(what)?;
    *pos = end;
    Ok(v)
}

/// The `len` bytes at `*pos`, moving past them; `what` when they run past `data`.
#[inline(always)]
pub(crate) fn get_bytes<'a>(
    data: &'a [u8],
    pos: &mut usize,
    len: u64,
    what: &'static str,
) -> Result<&'a [u8], &'static str> {
    // Two comparisons, no sum that could overflow: the rest of the data, then its start.
    let rest = data.get(*pos..).ok_or(what)?;
    let n = usize::try_from(len).map_err(|_| what)?;
    let s = rest.get(..n).ok_or(what)?;
    *pos += n;
    Ok(s)
}
