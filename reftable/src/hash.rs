//! Hash functions and object ids.

use std::cmp::Ordering;
use std::fmt;

/// The hash function of a repository, which fixes the object id size and the table version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HashId {
    /// SHA-1: 20-byte ids, version 1 tables.
    #[default]
    Sha1,
    /// SHA-256: 32-byte ids, version 2 tables.
    Sha256,
}

impl HashId {
    /// Size of an object id in bytes.
    pub const fn size(self) -> usize {
        match self {
            HashId::Sha1 => 20,
            HashId::Sha256 => 32,
        }
    }

    /// The 4-byte format id stored in version 2 headers (`sha1` or `s256`).
    pub const fn format_id(self) -> u32 {
        match self {
            HashId::Sha1 => 0x7368_6131,
            HashId::Sha256 => 0x7332_3536,
        }
    }

    /// The hash for a version 2 format id.
    pub fn from_format_id(id: u32) -> Option<HashId> {
        match id {
            0x7368_6131 => Some(HashId::Sha1),
            0x7332_3536 => Some(HashId::Sha256),
            _ => None,
        }
    }

    /// The table version git writes for this hash: 1 for SHA-1, 2 otherwise.
    pub const fn version(self) -> u8 {
        match self {
            HashId::Sha1 => 1,
            HashId::Sha256 => 2,
        }
    }

    /// Header size of the tables git writes for this hash (24 or 28 bytes).
    pub const fn header_size(self) -> usize {
        match self {
            HashId::Sha1 => 24,
            HashId::Sha256 => 28,
        }
    }

    /// Footer size of the tables git writes for this hash (68 or 72 bytes).
    pub const fn footer_size(self) -> usize {
        self.header_size() + 5 * 8 + 4
    }

    /// git's name for the hash (`sha1`, `sha256`).
    pub const fn name(self) -> &'static str {
        match self {
            HashId::Sha1 => "sha1",
            HashId::Sha256 => "sha256",
        }
    }
}

/// An object id (SHA-1 or SHA-256), stored inline.
///
/// ```
/// use reftable::ObjectId;
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// assert_eq!(id.len(), 20);
/// assert_eq!(id.to_string(), "1c2a7e431f340e344b233e7a96a11e55310b1471");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectId {
    len: u8,
    bytes: [u8; 32],
}

impl ObjectId {
    /// The all-zero id of a hash ("null id").
    pub const fn null(hash: HashId) -> ObjectId {
        ObjectId {
            len: hash.size() as u8,
            bytes: [0; 32],
        }
    }

    /// Overwrite this id with `bytes` of the same length (20 or 32); `false`, and unchanged,
    /// for another length. The decoders' way to reuse a record's id in place.
    #[inline(always)]
    pub(crate) fn overwrite(&mut self, bytes: &[u8]) -> bool {
        match (self.len, bytes.len()) {
            (20, 20) => self.bytes[..20].copy_from_slice(&bytes[..20]),
            (32, 32) => self.bytes.copy_from_slice(&bytes[..32]),
            _ => return false,
        }
        true
    }

    /// An id from 20 or 32 raw bytes.
    #[inline]
    pub fn from_bytes(bytes: &[u8]) -> Option<ObjectId> {
        if bytes.len() != 20 && bytes.len() != 32 {
            return None;
        }
        let mut id = ObjectId {
            len: bytes.len() as u8,
            bytes: [0; 32],
        };
        // Fixed-size copies: this runs once per decoded record, and a copy of a length
        // known at compile time is a few moves instead of a call to memcpy.
        match bytes.len() {
            20 => id.bytes[..20].copy_from_slice(&bytes[..20]),
            _ => id.bytes.copy_from_slice(&bytes[..32]),
        }
        Some(id)
    }

    /// An id from 40 or 64 hex digits.
    pub fn from_hex(hex: &str) -> Option<ObjectId> {
        let hex = hex.as_bytes();
        if hex.len() != 40 && hex.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (i, pair) in hex.chunks(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16)?;
            let lo = (pair[1] as char).to_digit(16)?;
            bytes[i] = (hi * 16 + lo) as u8;
        }
        ObjectId::from_bytes(&bytes[..hex.len() / 2])
    }

    /// The raw bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Size in bytes (20 or 32).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether every byte is zero.
    pub fn is_null(&self) -> bool {
        self.as_bytes().iter().all(|&b| b == 0)
    }

    /// The hash this id belongs to, by its size.
    pub fn hash(&self) -> HashId {
        if self.len == 32 {
            HashId::Sha256
        } else {
            HashId::Sha1
        }
    }
}

impl Default for ObjectId {
    fn default() -> Self {
        ObjectId::null(HashId::Sha1)
    }
}

impl Ord for ObjectId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl PartialOrd for ObjectId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl ObjectId {
    /// Write the id in lower-case hex into `out` (which must hold at least `2 * len()`
    /// bytes) and return that part of it: one table lookup per byte, no formatting machinery.
    ///
    /// ```
    /// use reftable::ObjectId;
    /// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// let mut buf = [0u8; 64];
    /// assert_eq!(id.hex_into(&mut buf), "1c2a7e431f340e344b233e7a96a11e55310b1471");
    /// ```
    pub fn hex_into<'b>(&self, out: &'b mut [u8]) -> &'b str {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let bytes = self.as_bytes();
        let out = &mut out[..2 * bytes.len()];
        for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 0xf)];
        }
        std::str::from_utf8(out).expect("hex digits are ASCII")
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        f.write_str(self.hex_into(&mut buf))
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_roundtrip_and_rejects() {
        let hex = "0b3f5f2e6e1a7b1f4b0a7c3e0f0e1d2c3b4a59687766554433221100ffeeddcc";
        let id = ObjectId::from_hex(hex).unwrap();
        assert_eq!(id.len(), 32);
        assert_eq!(id.hash(), HashId::Sha256);
        assert_eq!(id.to_string(), hex);
        assert!(ObjectId::from_hex("xyz").is_none());
        assert!(ObjectId::from_hex(&"g".repeat(40)).is_none());
        assert!(ObjectId::null(HashId::Sha1).is_null());
        assert_eq!(HashId::from_format_id(0x7332_3536), Some(HashId::Sha256));
        assert_eq!(HashId::from_format_id(0), None);
    }

    /// SHA-1 tables are version 1 (24-byte header), SHA-256 tables version 2, whose header
    /// adds the 4-byte format id; the footer repeats the header and adds five offsets and
    /// a CRC.
    #[test]
    fn the_hash_decides_version_format_id_and_sizes() {
        let sha1 = HashId::Sha1;
        let sha256 = HashId::Sha256;
        assert_eq!((sha1.version(), sha256.version()), (1, 2));
        assert_eq!(sha1.format_id().to_be_bytes(), *b"sha1");
        assert_eq!(sha256.format_id().to_be_bytes(), *b"s256");
        assert_eq!(HashId::from_format_id(sha1.format_id()), Some(sha1));
        assert_eq!((sha1.header_size(), sha256.header_size()), (24, 28));
        assert_eq!((sha1.footer_size(), sha256.footer_size()), (68, 72));
        assert_eq!((sha1.size(), sha256.size()), (20, 32));
        assert_eq!((sha1.name(), sha256.name()), ("sha1", "sha256"));
    }

    /// The null id is all zero bytes, of either hash's length; an id with any byte set,
    /// the last one included, is not null.
    #[test]
    fn only_the_all_zero_id_is_null() {
        for hash in [HashId::Sha1, HashId::Sha256] {
            let null = ObjectId::null(hash);
            assert!(null.is_null());
            assert_eq!((null.len(), null.hash()), (hash.size(), hash));
            for at in [0, hash.size() / 2, hash.size() - 1] {
                let mut bytes = vec![0u8; hash.size()];
                bytes[at] = 1;
                let id = ObjectId::from_bytes(&bytes).unwrap();
                assert!(!id.is_null(), "{hash:?} byte {at}");
                assert_eq!(id.as_bytes(), bytes.as_slice());
            }
        }
    }
}
