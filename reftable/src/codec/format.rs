//! The fixed layout of a table file: magic, versions, block types, the header and the footer.
//! A leaf of the crate: it knows bytes, not blocks or records.
//!
//! ```text
//! header:  "REFT" u8 version  u24 block_size  u64 min_update_index  u64 max_update_index
//!          [u32 hash_id, version 2 only]
//! footer:  header (again)  u64 ref_index_offset  u64 (obj_offset << 5 | obj_id_len)
//!          u64 obj_index_offset  u64 log_offset  u64 log_index_offset  u32 crc32
//! ```
//!
//! The CRC-32 covers the footer up to itself. Offsets of absent sections are 0.

use crate::codec::varint;
use crate::error::{Error, Result};
use crate::hash::HashId;

/// The table magic.
pub const MAGIC: &[u8; 4] = b"REFT";

/// Most restart points one block can hold (the count is a u16).
pub const MAX_RESTARTS: usize = 65535;

/// The largest block size the 24-bit header field holds.
pub const MAX_BLOCK_SIZE: u32 = (1 << 24) - 1;

/// Header size of a table version (24 bytes for version 1, 28 for version 2).
pub const fn header_size(version: u8) -> usize {
    if version == 1 {
        24
    } else {
        28
    }
}

/// Footer size of a table version (68 bytes for version 1, 72 for version 2).
pub const fn footer_size(version: u8) -> usize {
    header_size(version) + 5 * 8 + 4
}

/// The kind of a block, from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BlockType {
    /// `r`: ref records.
    Ref,
    /// `g`: log records, zlib-compressed.
    Log,
    /// `o`: obj records (object id prefix → ref block offsets).
    Obj,
    /// `i`: index records (last key → block offset).
    Index,
}

impl BlockType {
    /// Every block type.
    pub const ALL: [BlockType; 4] = [
        BlockType::Ref,
        BlockType::Log,
        BlockType::Obj,
        BlockType::Index,
    ];

    /// The type byte.
    pub const fn byte(self) -> u8 {
        match self {
            BlockType::Ref => b'r',
            BlockType::Log => b'g',
            BlockType::Obj => b'o',
            BlockType::Index => b'i',
        }
    }

    /// The type of a type byte.
    pub const fn from_byte(b: u8) -> Option<BlockType> {
        match b {
            b'r' => Some(BlockType::Ref),
            b'g' => Some(BlockType::Log),
            b'o' => Some(BlockType::Obj),
            b'i' => Some(BlockType::Index),
            _ => None,
        }
    }

    /// A word for it (`ref`, `log`, `obj`, `index`).
    pub const fn name(self) -> &'static str {
        match self {
            BlockType::Ref => "ref",
            BlockType::Log => "log",
            BlockType::Obj => "obj",
            BlockType::Index => "index",
        }
    }
}

/// A table header (repeated at the start of the footer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version: 1 (SHA-1) or 2 (any hash; git writes it for SHA-256).
    pub version: u8,
    /// Block size (0: unaligned, no padding).
    pub block_size: u32,
    /// Smallest update index of the table's records.
    pub min_update_index: u64,
    /// Largest update index of the table's records.
    pub max_update_index: u64,
    /// The hash of the object ids (implied SHA-1 in version 1).
    pub hash: HashId,
}

impl Header {
    /// The header git writes for `hash`: version 1 for SHA-1, 2 otherwise.
    pub fn new(hash: HashId, block_size: u32, min: u64, max: u64) -> Header {
        Header {
            version: hash.version(),
            block_size,
            min_update_index: min,
            max_update_index: max,
            hash,
        }
    }

    /// Encoded size.
    pub fn size(&self) -> usize {
        header_size(self.version)
    }

    /// Append the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(MAGIC);
        out.push(self.version);
        out.extend_from_slice(&self.block_size.to_be_bytes()[1..]);
        out.extend_from_slice(&self.min_update_index.to_be_bytes());
        out.extend_from_slice(&self.max_update_index.to_be_bytes());
        if self.version != 1 {
            out.extend_from_slice(&self.hash.format_id().to_be_bytes());
        }
    }

    /// Decode the header at the start of `data` (which must hold all of it); errors name
    /// the offset in `data`.
    pub fn decode(data: &[u8]) -> Result<Header> {
        if data.len() < 5 {
            return Err(corrupt(
                0,
                format!(
                    "file of {} bytes is too short for a reftable header",
                    data.len()
                ),
            ));
        }
        if &data[..4] != MAGIC {
            return Err(corrupt(0, "bad magic: not a reftable file"));
        }
        let version = data[4];
        if version != 1 && version != 2 {
            return Err(corrupt(
                4,
                format!("unsupported reftable version {version}"),
            ));
        }
        if data.len() < header_size(version) {
            return Err(corrupt(
                0,
                format!(
                    "{} bytes are too short for a version {version} header",
                    data.len()
                ),
            ));
        }
        let hash = if version == 1 {
            HashId::Sha1
        } else {
            let id = varint::be32(&data[24..]);
            HashId::from_format_id(id)
                .ok_or_else(|| corrupt(24, format!("unknown hash id 0x{id:08x}")))?
        };
        Ok(Header {
            version,
            block_size: varint::be24(&data[5..]),
            min_update_index: varint::be64(&data[8..]),
            max_update_index: varint::be64(&data[16..]),
            hash,
        })
    }
}

/// A table footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    /// The header it repeats.
    pub header: Header,
    /// Offset of the ref index root, 0 without one.
    pub ref_index_offset: u64,
    /// Offset of the obj section, 0 without one.
    pub obj_offset: u64,
    /// Length of the abbreviated object ids in obj records (5 bits).
    pub obj_id_len: u8,
    /// Offset of the obj index root, 0 without one.
    pub obj_index_offset: u64,
    /// Offset of the log section, 0 when it starts the file or is absent.
    pub log_offset: u64,
    /// Offset of the log index root, 0 without one.
    pub log_index_offset: u64,
    /// The CRC-32 stored in the footer (filled in by [`Footer::decode`]; [`Footer::encode`]
    /// computes it).
    pub crc: u32,
}

impl Footer {
    /// Encoded size.
    pub fn size(&self) -> usize {
        footer_size(self.header.version)
    }

    /// Append the encoding, with its CRC-32, to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        self.header.encode(out);
        for v in [
            self.ref_index_offset,
            (self.obj_offset << 5) | u64::from(self.obj_id_len & 31),
            self.obj_index_offset,
            self.log_offset,
            self.log_index_offset,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        let crc = crc32fast::hash(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }

    /// Decode and check the footer of the table `data` (the whole file): it must repeat the
    /// header byte for byte and carry a matching CRC-32. Errors name file offsets.
    pub fn decode(data: &[u8]) -> Result<Footer> {
        let header = Header::decode(data)?;
        let hsize = header.size();
        let fsize = footer_size(header.version);
        if data.len() < hsize + fsize {
            return Err(corrupt(
                0,
                format!(
                    "file of {} bytes is shorter than a version {} header and footer ({} bytes)",
                    data.len(),
                    header.version,
                    hsize + fsize
                ),
            ));
        }
        let at = data.len() - fsize;
        let f = &data[at..];
        if f[..hsize] != data[..hsize] {
            return Err(corrupt(at as u64, "footer does not repeat the file header"));
        }
        let stored = varint::be32(&f[fsize - 4..]);
        let computed = crc32fast::hash(&f[..fsize - 4]);
        if computed != stored {
            return Err(corrupt(
                (data.len() - 4) as u64,
                format!("footer CRC-32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}"),
            ));
        }
        let field = |i: usize| varint::be64(&f[hsize + 8 * i..]);
        let obj = field(1);
        Ok(Footer {
            header,
            ref_index_offset: field(0),
            obj_offset: obj >> 5,
            obj_id_len: (obj & 31) as u8,
            obj_index_offset: field(2),
            log_offset: field(3),
            log_index_offset: field(4),
            crc: stored,
        })
    }
}

fn corrupt(offset: u64, msg: impl Into<String>) -> Error {
    Error::format(msg).at_offset(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_footer_round_trip() {
        for hash in [HashId::Sha1, HashId::Sha256] {
            let header = Header::new(hash, 4096, 3, 0x1_0000_0001);
            let mut bytes = Vec::new();
            header.encode(&mut bytes);
            assert_eq!(bytes.len(), header.size());
            assert_eq!(bytes.len(), hash.header_size());
            assert_eq!(Header::decode(&bytes).unwrap(), header);
            let mut footer = Footer {
                header,
                ref_index_offset: 1000,
                obj_offset: 2000,
                obj_id_len: 3,
                obj_index_offset: 3000,
                log_offset: 4000,
                log_index_offset: 5000,
                crc: 0,
            };
            bytes.extend_from_slice(&[0; 100]);
            footer.encode(&mut bytes);
            assert_eq!(bytes.len(), header.size() + 100 + footer.size());
            let back = Footer::decode(&bytes).unwrap();
            footer.crc = back.crc;
            assert_eq!(back, footer);
            // Any flipped byte of the footer is caught.
            for i in bytes.len() - footer.size()..bytes.len() {
                let mut bad = bytes.clone();
                bad[i] ^= 0x40;
                assert!(Footer::decode(&bad).is_err(), "byte {i}");
            }
        }
    }

    #[test]
    fn block_types() {
        for t in BlockType::ALL {
            assert_eq!(BlockType::from_byte(t.byte()), Some(t));
        }
        assert_eq!(BlockType::from_byte(b'x'), None);
        assert_eq!(BlockType::Log.name(), "log");
    }

    #[test]
    fn bad_headers() {
        assert!(Header::decode(b"REF").is_err());
        assert!(Header::decode(b"XXXX\x01").is_err());
        assert!(Header::decode(b"REFT\x03aaaaaaaaaaaaaaaaaaaaaaaaaaa").is_err());
        let mut v2 = Vec::new();
        Header::new(HashId::Sha256, 0, 1, 1).encode(&mut v2);
        v2[24] = 0;
        assert!(Header::decode(&v2).is_err());
    }
}
