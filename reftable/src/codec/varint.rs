//! git's variable-length integer ("offset varint", the same as pack ofs-delta), and the
//! fixed-width big-endian helpers every other layer uses.
//!
//! Big-endian base-128 where every continuation step adds one, so each value has exactly
//! one encoding: 0 → `00`, 127 → `7f`, 128 → `80 00`, 16512 → `80 80 00`.

/// Longest encoding of a `u64`.
pub const MAX_VARINT_LEN: usize = 10;

/// Append the varint encoding of `value` to `out`.
///
/// ```
/// let mut out = Vec::new();
/// reftable::codec::varint::put(&mut out, 16511);
/// assert_eq!(out, [0xff, 0x7f]);
/// ```
pub fn put(out: &mut Vec<u8>, value: u64) {
    let mut buf = [0u8; MAX_VARINT_LEN];
    let mut i = MAX_VARINT_LEN - 1;
    let mut v = value;
    buf[i] = (v & 0x7f) as u8;
    loop {
        v >>= 7;
        if v == 0 {
            break;
        }
        v -= 1;
        i -= 1;
        buf[i] = 0x80 | (v & 0x7f) as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

/// Number of bytes [`put`] writes for `value`.
pub fn encoded_len(value: u64) -> usize {
    let mut n = 1;
    let mut v = value >> 7;
    while v != 0 {
        v -= 1;
        v >>= 7;
        n += 1;
    }
    n
}

/// Decode a varint at the start of `data`: the value and the bytes it took.
///
/// `None` when the input ends inside the varint or the value does not fit a `u64`
/// (git 2.47 silently wraps such values; git 2.49+ rejects them, as we do).
///
/// ```
/// assert_eq!(reftable::codec::varint::get(&[0x80, 0x80, 0x00, 0xaa]), Some((16512, 3)));
/// assert_eq!(reftable::codec::varint::get(&[0x80]), None);
/// ```
#[inline]
pub fn get(data: &[u8]) -> Option<(u64, usize)> {
    get_at(data, 0)
}

/// [`get`] of the varint at `data[at..]`: the value and where it ends (an offset into
/// `data`), with no slice made of the rest.
#[inline(always)]
pub(crate) fn get_at(data: &[u8], at: usize) -> Option<(u64, usize)> {
    let first = *data.get(at)?;
    let mut value = u64::from(first & 0x7f);
    let mut i = at + 1;
    let mut byte = first;
    while byte & 0x80 != 0 {
        byte = *data.get(i)?;
        i += 1;
        // value + 1 must not wrap and the shift must not drop set bits.
        value = value.checked_add(1)?;
        if value >> 57 != 0 {
            return None;
        }
        value = (value << 7) | u64::from(byte & 0x7f);
    }
    Some((value, i))
}

pub(crate) fn be16(data: &[u8]) -> u16 {
    u16::from_be_bytes([data[0], data[1]])
}

pub(crate) fn be24(data: &[u8]) -> u32 {
    u32::from_be_bytes([0, data[0], data[1], data[2]])
}

pub(crate) fn be32(data: &[u8]) -> u32 {
    u32::from_be_bytes([data[0], data[1], data[2], data[3]])
}

pub(crate) fn be64(data: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[..8]);
    u64::from_be_bytes(b)
}

pub(crate) fn put_be24(out: &mut [u8], v: u32) {
    out[..3].copy_from_slice(&v.to_be_bytes()[1..]);
}

/// Length of the longest common prefix of `a` and `b`.
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_encodings() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (127, &[0x7f]),
            (128, &[0x80, 0x00]),
            (255, &[0x80, 0x7f]),
            (256, &[0x81, 0x00]),
            (16511, &[0xff, 0x7f]),
            (16512, &[0x80, 0x80, 0x00]),
            (1_700_000_000, &[0x85, 0xa9, 0xce, 0xe1, 0x00]),
            (
                u64::MAX,
                &[0x80, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0x7f],
            ),
        ];
        for &(v, enc) in cases {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(out, enc, "encoding {v}");
            assert_eq!(encoded_len(v), enc.len());
            assert_eq!(get(enc), Some((v, enc.len())), "decoding {v}");
        }
    }

    #[test]
    fn roundtrip_git_vector() {
        for v in [0u64, 1, 27, 127, 128, 257, 4096, 1 << 63, u64::MAX] {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(get(&out), Some((v, out.len())));
        }
    }

    #[test]
    fn overflow_and_truncation_rejected() {
        // git's varint_overflow vector: nine 0xff then 0x00.
        let mut data = vec![0xff; 9];
        data.push(0x00);
        assert_eq!(get(&data), None);
        assert_eq!(get(&[0xff; 12]), None);
        assert_eq!(get(&[]), None);
        assert_eq!(get(&[0x80, 0x80]), None);
        // One more than u64::MAX's encoding.
        assert_eq!(
            get(&[0x80, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xff, 0x00]),
            None
        );
    }

    #[test]
    fn be_helpers() {
        let mut b = [0u8; 3];
        put_be24(&mut b, 0x0a0b0c);
        assert_eq!(be24(&b), 0x0a0b0c);
        assert_eq!(be16(&[1, 2]), 0x0102);
        assert_eq!(be32(&[1, 2, 3, 4]), 0x01020304);
        assert_eq!(be64(&[0, 0, 0, 0, 0, 0, 1, 0]), 256);
        assert_eq!(common_prefix(b"refs/heads/a", b"refs/tags/b"), 5);
    }
}
