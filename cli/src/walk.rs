//! Decoding the records of one block with their offsets, on top of the library's public
//! record API (`record::decode_key` and `Record::decode`), so that `dump` can show and
//! `verify` can check where each record is.

use std::borrow::Cow;

use reftable::block::{Block, BlockInfo};
use reftable::format::BlockType;
use reftable::record::{self, CodecContext};
use reftable::{Record, Table};

/// One decoded record and where it is.
pub struct Decoded<'a, R> {
    /// Offset of the record within the block (from the block start; inflated for log blocks).
    pub offset: usize,
    /// Bytes of the key shared with the previous record.
    pub prefix_len: usize,
    /// The 3-bit value type.
    pub value_type: u8,
    /// The full key.
    pub key: &'a [u8],
    /// The record.
    pub rec: &'a R,
}

/// The bytes of a block from its start to `block_len`: the file's bytes, or for log blocks
/// the header bytes followed by the inflated contents.
pub fn block_bytes<'t>(table: &'t Table, info: &BlockInfo) -> reftable::Result<Cow<'t, [u8]>> {
    let start = info.offset as usize;
    if info.block_type == BlockType::Log {
        let t = table.info();
        let data = &table.bytes()[start..t.footer_offset as usize];
        let b = Block::parse(data, info.header_off, t.block_size as usize)
            .map_err(|e| e.in_file(table.name()))?;
        Ok(Cow::Owned(b.data().to_vec()))
    } else {
        Ok(Cow::Borrowed(&table.bytes()[start..start + info.block_len]))
    }
}

/// Decode the records of a block in order, calling `f` for each. Returns the offset within
/// the block and the message of the first record that cannot be decoded, if any; records
/// after it are not visited. Keys and records are reused between calls, so memory stays
/// bounded by the block size.
pub fn for_each_record<R: Record>(
    info: &BlockInfo,
    data: &[u8],
    ctx: &CodecContext,
    mut f: impl FnMut(Decoded<'_, R>),
) -> Option<(usize, &'static str)> {
    let end = info.restart_off.min(data.len());
    let mut pos = info.records_start();
    let mut key = Vec::new();
    let mut rec = R::default();
    while pos < end {
        let h = match record::decode_key(&data[pos..end], &mut key) {
            Ok(h) => h,
            Err(m) => return Some((pos, m)),
        };
        let vstart = pos + h.len();
        let n = match rec.decode(&key, h.value_type, &data[vstart..end], ctx) {
            Ok(n) => n,
            Err(m) => return Some((pos, m)),
        };
        f(Decoded {
            offset: pos,
            prefix_len: h.prefix_len,
            value_type: h.value_type,
            key: &key,
            rec: &rec,
        });
        pos = vstart + n;
    }
    None
}

/// The restart offsets of a block (relative to the block start), unchecked.
pub fn restarts(info: &BlockInfo, data: &[u8]) -> Vec<usize> {
    (0..info.restart_count)
        .map(|i| info.restart(data, i))
        .collect()
}

/// Where a position inside a block is, for messages: the file offset for blocks stored as is,
/// or the log block's offset and the position in its inflated contents.
pub fn locate(info: &BlockInfo, at: usize) -> (u64, String) {
    if info.block_type == BlockType::Log {
        (info.offset, format!("log block, inflated offset {at}: "))
    } else {
        (info.offset + at as u64, String::new())
    }
}
