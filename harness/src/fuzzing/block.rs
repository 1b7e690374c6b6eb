//! Target `block_decode`: one block of any type (ref, log with zlib, obj, index), decoded
//! record by record and searched with keys taken from it.
//!
//! Input: a flags byte, then the block. Flags bit 0: SHA-256 ids; bit 1: the block is the
//! first of a file (a file header precedes the block header); bits 2–3: the table block
//! size (0, 256, 4096, or the input length); bits 4–7: the table's `min_update_index`.

use reftable::codec::block::{parse_block, BlockCursor, BlockInfo};
use reftable::codec::format::BlockType;
use reftable::codec::record::CodecContext;
use reftable::codec::record::{IndexRecord, ObjRecord, Record};
use reftable::table::Stats;
use reftable::{HashId, LogRecord, RefRecord};

use crate::{alloc, limits};

/// Keys of the block used for seeks (each also truncated and bumped).
const SEEK_KEYS: usize = 8;

/// Allocation budget per byte of content: the inflate buffer, the kept keys and their
/// variants (each at most the content), and the record buffers.
const ALLOC_PER_BYTE: u64 = 64;

/// Decode a block of any type and seek in it; see the module docs for the input layout.
pub fn block_decode(data: &[u8]) {
    let Some((&flags, block)) = data.split_first() else {
        return;
    };
    let hash = if flags & 1 != 0 {
        HashId::Sha256
    } else {
        HashId::Sha1
    };
    let header_off = if flags & 2 != 0 {
        hash.header_size()
    } else {
        0
    };
    let table_block_size = match (flags >> 2) & 3 {
        0 => 0,
        1 => 256,
        2 => 4096,
        _ => block.len(),
    };
    let ctx = CodecContext {
        hash_size: hash.size(),
        min_update_index: u64::from(flags >> 4),
        max_update_index: u64::MAX,
    };
    let ((stats, passes), peak) =
        alloc::measure(|| decode(block, header_off, table_block_size, &ctx));
    let content = limits::content_bytes(data.len(), stats.blocks_inflated > 0);
    limits::check_work("block_decode", &stats, passes, content);
    limits::check_alloc("block_decode", peak, ALLOC_PER_BYTE, content);
}

/// Returns the work done and the number of passes over the block it may take.
fn decode(
    block: &[u8],
    header_off: usize,
    table_block_size: usize,
    ctx: &CodecContext,
) -> (Stats, u64) {
    let mut stats = Stats::default();
    let mut inflated = Vec::new();
    let parsed = parse_block(
        block,
        0,
        header_off,
        table_block_size,
        None,
        &mut inflated,
        &mut stats,
    );
    let Ok(Some(info)) = parsed else {
        return (stats, 1);
    };
    let data: &[u8] = if info.block_type == BlockType::Log {
        &inflated
    } else {
        &block[..info.block_len]
    };
    check_layout(&info, data);
    let passes = match info.block_type {
        BlockType::Ref => records::<RefRecord>(&info, data, ctx, &mut stats),
        BlockType::Log => records::<LogRecord>(&info, data, ctx, &mut stats),
        BlockType::Obj => records::<ObjRecord>(&info, data, ctx, &mut stats),
        BlockType::Index => records::<IndexRecord>(&info, data, ctx, &mut stats),
    };
    (stats, passes)
}

/// What `parse_block` promises about a block it accepted.
fn check_layout(info: &BlockInfo, data: &[u8]) {
    assert_eq!(
        data.len(),
        info.block_len,
        "block bytes vs block_len: {info:?}"
    );
    assert_eq!(
        info.restart_off + 3 * info.restart_count + 2,
        info.block_len,
        "restart table does not end the block: {info:?}"
    );
    assert!(
        info.records_start() <= info.restart_off,
        "restart table overlaps the block header: {info:?}"
    );
    assert!(
        info.full_size > 0,
        "a block must advance the offset: {info:?}"
    );
}

/// Decode every record, then seek to keys of the block. Returns the passes made.
fn records<R: Record>(info: &BlockInfo, data: &[u8], ctx: &CodecContext, stats: &mut Stats) -> u64 {
    let mut cur = BlockCursor::default();
    cur.reset(info);
    let mut rec = R::default();
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut key = Vec::new();
    while let Ok(true) = cur.next(info, data, &mut rec, ctx, stats) {
        rec.write_key(&mut key);
        assert_eq!(key, cur.key(), "record key differs from the decoded key");
        if keys.len() < SEEK_KEYS {
            keys.push(key.clone());
        }
    }
    let mut wants: Vec<Vec<u8>> = vec![Vec::new()];
    for k in keys {
        let mut shorter = k.clone();
        shorter.pop();
        let mut bumped = k.clone();
        if let Some(last) = bumped.last_mut() {
            *last = last.wrapping_add(1);
        }
        wants.extend([k, shorter, bumped]);
    }
    for want in &wants {
        let mut c = BlockCursor::default();
        if let Ok(true) = c.seek(info, data, want, &mut rec, ctx, stats) {
            assert!(c.key() >= want.as_slice(), "seek returned a smaller key");
        }
    }
    1 + wants.len() as u64
}
