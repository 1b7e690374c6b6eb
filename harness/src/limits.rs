//! Resource bounds the fuzz targets assert: decoded records and allocated bytes must stay
//! within a constant times what the input can hold.
//!
//! The reasoning behind the constants:
//!
//! - Every record takes at least [`MIN_RECORD_BYTES`] bytes of block content: a prefix
//!   varint and a suffix/type varint (a log tombstone whose key is all prefix has no more).
//!   One pass over a table therefore decodes at most `content / 2` records, where `content`
//!   is the table's bytes plus what its log blocks inflate to.
//! - A deflate stream expands at most [`MAX_INFLATE_RATIO`]:1 (a 258-byte match costs at
//!   least 2 bits), so a table with log blocks holds at most `len × (1 + 1032)` bytes of
//!   content, whatever its `block_len` fields say. Without inflated blocks, content is the
//!   input length itself, which keeps the bound tight enough to catch quadratic work.
//! - A target makes a fixed number of passes (full scans, plus two passes per seek at most:
//!   a seek reads each index level once and then one data block, or the first record of
//!   each block and then one block). Its record budget is `passes × content / 2`.
//! - Allocations: the library holds the table bytes, at most two inflate buffers (each at
//!   most a block's content plus one 64 KiB growth step) and one record per iterator; the
//!   targets add their own collections of decoded records. The per-target factor times the
//!   content, plus [`ALLOC_SLACK`] for zlib's state and fixed-size buffers, is the budget.
//!   A length field that made the library allocate what it *says* (up to 2^64) instead of
//!   what the input *holds* blows through it at once.

use reftable::table::Stats;

/// Fewest bytes of block content one record can take.
pub const MIN_RECORD_BYTES: u64 = 2;

/// Largest expansion of a deflate stream.
pub const MAX_INFLATE_RATIO: u64 = 1032;

/// Allocation allowance independent of the input: zlib's inflate state and window, one
/// 64 KiB inflate growth step per buffer, and the standard library's fixed buffers.
pub const ALLOC_SLACK: usize = 1 << 20;

/// Upper bound on the block content of `len` input bytes: the bytes themselves, plus what
/// log blocks can inflate to when the input made the library inflate any.
pub fn content_bytes(len: usize, inflated_any: bool) -> u64 {
    let len = len as u64;
    if inflated_any {
        len * (1 + MAX_INFLATE_RATIO)
    } else {
        len
    }
}

/// Why `stats` is over the budget of `passes × content / 2` records (plus one per pass for
/// rounding) or one block per content byte per pass; `None` when it is within.
pub fn work_excess(stats: &Stats, passes: u64, content: u64) -> Option<String> {
    let records = passes * (content / MIN_RECORD_BYTES + 1);
    if stats.records_decoded > records {
        return Some(format!(
            "decoded {} records, more than the budget of {records} \
             ({passes} passes over {content} bytes of content): {stats:?}",
            stats.records_decoded
        ));
    }
    // A block is at least 6 bytes (header and restart count); be generous: one per byte.
    let blocks = passes * (content + 1);
    if stats.blocks_read > blocks {
        return Some(format!(
            "read {} blocks, more than the budget of {blocks}: {stats:?}",
            stats.blocks_read
        ));
    }
    None
}

/// Panic if `stats` is over the work budget (see [`work_excess`]).
pub fn check_work(what: &str, stats: &Stats, passes: u64, content: u64) {
    if let Some(why) = work_excess(stats, passes, content) {
        panic!("{what}: {why}");
    }
}

/// Panic if the measured peak allocation exceeds `per_byte × content + ALLOC_SLACK`.
/// `peak` is `None` when the counting allocator is not installed: nothing is checked then.
pub fn check_alloc(what: &str, peak: Option<usize>, per_byte: u64, content: u64) {
    let Some(peak) = peak else {
        return;
    };
    let budget = per_byte
        .saturating_mul(content)
        .saturating_add(ALLOC_SLACK as u64);
    assert!(
        peak as u64 <= budget,
        "{what}: allocated a peak of {peak} bytes, more than the budget of {budget} \
         ({per_byte} per byte of {content} bytes of content + {ALLOC_SLACK})"
    );
}
