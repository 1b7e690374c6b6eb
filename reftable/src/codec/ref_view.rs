//! A ref record lent in place: its name is the iterator's key buffer and its value the
//! table's own bytes, so reading one copies nothing but the key's new suffix. The value's
//! decoding lives here once; [`RefRecord`](super::record::RefRecord)'s decode builds on it.

use super::fields::{get_bytes, get_varint, CodecContext};

/// A ref record borrowed from a table: what
/// [`MergedIter::for_each_ref`](crate::merged::MergedIter::for_each_ref) lends.
///
/// ```
/// use reftable::{ObjectId, RefRecord, RefValue, RefValueView, RefView};
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// let r = RefRecord::new("refs/heads/main", 7, RefValue::Object(id));
/// let v = RefView::from(&r);
/// assert_eq!(v.value, RefValueView::Object(id.as_bytes()));
/// assert_eq!(v.value_id(), Some(id.as_bytes()));
/// assert_eq!(v.to_record(), Some(r.clone()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefView<'a> {
    /// The ref name as raw bytes.
    pub refname: &'a [u8],
    /// The update index of the transaction that wrote this record.
    pub update_index: u64,
    /// The value.
    pub value: RefValueView<'a>,
}

/// The value of a [`RefView`]: [`RefValue`](super::record::RefValue) with its ids and target borrowed. An id is
/// the table's hash size long (20 or 32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefValueView<'a> {
    /// A tombstone (value type 0).
    Deletion,
    /// The object the ref points at (value type 1).
    Object(&'a [u8]),
    /// An annotated tag and the object it peels to (value type 2).
    Peeled {
        /// The tag object the ref points at.
        object: &'a [u8],
        /// The object the tag peels to.
        peeled: &'a [u8],
    },
    /// A symbolic ref's target name (value type 3).
    Symref(&'a [u8]),
}

impl<'a> RefView<'a> {
    /// Whether this is a tombstone.
    pub fn is_deletion(&self) -> bool {
        matches!(self.value, RefValueView::Deletion)
    }

    /// The object the ref points at directly, if any (for a peeled tag, the tag).
    pub fn value_id(&self) -> Option<&'a [u8]> {
        match self.value {
            RefValueView::Object(id) | RefValueView::Peeled { object: id, .. } => Some(id),
            RefValueView::Deletion | RefValueView::Symref(_) => None,
        }
    }
}

/// A ref record's update index at `*pos` (stored relative to the table's minimum), moving
/// past it: inside the table's range.
#[inline(always)]
pub(crate) fn decode_update_index(
    data: &[u8],
    pos: &mut usize,
    ctx: &CodecContext,
) -> Result<u64, &'static str> {
    let delta = get_varint(data, pos, "truncated or overflowing ref update index")?;
    let update_index = ctx
        .min_update_index
        .checked_add(delta)
        .ok_or("ref update index overflows")?;
    if update_index > ctx.max_update_index {
        return Err("ref update index above the table's max_update_index");
    }
    Ok(update_index)
}

/// Decode the ref record value at `data[at..]`: the update index, the value, and where it
/// ends (an offset into `data`). Every check of a ref value is here: the update index inside the
/// table's range, a known value type, ids and target inside `data`.
#[inline(always)]
pub(crate) fn decode_ref_value<'d>(
    value_type: u8,
    data: &'d [u8],
    at: usize,
    ctx: &CodecContext,
) -> Result<(u64, RefValueView<'d>, usize), &'static str> {
    let mut pos = at;
    let update_index = decode_update_index(data, &mut pos, ctx)?;
    let what = "ref value extends past the end of the records";
    let hash = ctx.hash_size as u64;
    let value = match value_type {
        0 => RefValueView::Deletion,
        1 => RefValueView::Object(get_bytes(data, &mut pos, hash, what)?),
        2 => {
            let object = get_bytes(data, &mut pos, hash, what)?;
            let peeled = get_bytes(data, &mut pos, hash, what)?;
            RefValueView::Peeled { object, peeled }
        }
        3 => {
            let len = get_varint(data, &mut pos, what)?;
            RefValueView::Symref(get_bytes(data, &mut pos, len, what)?)
        }
        _ => return Err("invalid ref value type (4..7 are reserved)"),
    };
    Ok((update_index, value, pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::record::{RefRecord, RefValue};
    use crate::hash::{HashId, ObjectId};

    fn ctx() -> CodecContext {
        CodecContext {
            hash_size: 20,
            min_update_index: 5,
            max_update_index: 9,
        }
    }

    /// Each value type decodes to its view, and the view and the record agree both ways.
    #[test]
    fn views_of_every_value_type() {
        let a = ObjectId::from_bytes(&[1; 20]).unwrap();
        let b = ObjectId::from_bytes(&[2; 20]).unwrap();
        let values = [
            RefValue::Deletion,
            RefValue::Object(a),
            RefValue::Peeled {
                object: a,
                peeled: b,
            },
            RefValue::Symref(b"refs/heads/x".to_vec()),
        ];
        for (t, value) in values.into_iter().enumerate() {
            let r = RefRecord::new("refs/heads/n", 7, value);
            let mut data = Vec::new();
            crate::codec::record::Record::encode_value(&r, &mut data, &ctx());
            data.push(0xff);
            let (ui, v, n) = decode_ref_value(t as u8, &data, 0, &ctx()).unwrap();
            assert_eq!((ui, n), (7, data.len() - 1));
            let view = RefView {
                refname: b"refs/heads/n",
                update_index: ui,
                value: v,
            };
            assert_eq!(view, RefView::from(&r));
            assert_eq!(view.to_record(), Some(r.clone()));
            assert_eq!(view.is_deletion(), t == 0);
            assert_eq!(view.value_id(), r.value_id().map(|id| id.as_bytes()));
        }
        assert_eq!(ObjectId::null(HashId::Sha1).len(), 20);
    }

    /// A value that runs past the data, an update index outside the table's range, and a
    /// reserved value type are errors.
    #[test]
    fn bad_values_are_errors() {
        let c = ctx();
        assert!(decode_ref_value(1, &[2, 1, 2], 0, &c).is_err());
        assert!(decode_ref_value(3, &[2, 9, b'a'], 0, &c).is_err());
        assert!(decode_ref_value(0, &[5], 0, &c).is_err());
        assert!(decode_ref_value(0, &[], 0, &c).is_err());
        assert!(decode_ref_value(4, &[0], 0, &c).is_err());
        let over = CodecContext {
            min_update_index: u64::MAX,
            max_update_index: u64::MAX,
            ..c
        };
        assert!(decode_ref_value(0, &[1], 0, &over).is_err());
        assert_eq!(decode_ref_value(0, &[9, 4], 1, &c).unwrap().0, 9);
    }
}
