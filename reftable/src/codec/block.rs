//! Blocks: the unit records are stored in.
//!
//! ```text
//! u8 block_type | u24 block_len | records… | u24 restart_offset × N | u16 N | padding
//! ```
//!
//! `block_len` counts from the start of the block, which for the first block of a file is
//! file offset 0, so the first block's length and restart offsets include the file header.
//! Log blocks hold everything after their 4-byte header as one zlib stream; `block_len` is
//! then the inflated length.

use flate2::{Decompress, FlushDecompress, Status};

use std::cell::RefCell;
use std::ops::ControlFlow;

use crate::codec::format::BlockType;
use crate::codec::record::{self, CodecContext, KeyIn, Record};
use crate::codec::ref_view::{decode_ref_value, RefValueView, RefView};
use crate::codec::varint;
use crate::error::{Error, ErrorKind, Result};
use crate::stats::Stats;

pub use crate::codec::format::MAX_RESTARTS;

/// Where a block is and how it is laid out; the block's bytes are held elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockInfo {
    /// File offset of the block start (0 for the first block, which holds the file header).
    pub offset: u64,
    /// The block type byte.
    pub block_type: BlockType,
    /// Bytes before the block header: the file header size in the first block, else 0.
    pub header_off: usize,
    /// `block_len` from the header (the inflated length for log blocks).
    pub block_len: usize,
    /// Number of restart points.
    pub restart_count: usize,
    /// Offset of the restart table within the block.
    pub restart_off: usize,
    /// Bytes from the block start to where the next block starts.
    pub full_size: usize,
    /// Bytes of the compressed stream (log blocks), else 0.
    pub compressed_len: usize,
}

impl BlockInfo {
    /// Offset of the first record within the block.
    pub fn records_start(&self) -> usize {
        self.header_off + 4
    }

    /// The i-th restart offset (relative to the block start), unchecked.
    pub fn restart(&self, data: &[u8], i: usize) -> usize {
        varint::be24(&data[self.restart_off + 3 * i..]) as usize
    }
}

fn corrupt(offset: u64, msg: impl Into<String>) -> Error {
    Error::format(msg).at_offset(offset)
}

/// Parse the block starting at `data[0]` (file offset `offset`).
///
/// `data` runs from the block start to the end of the table's blocks (the footer start).
/// `table_block_size` is the header's block size (0 for unaligned tables). When `want` is
/// given and the block has another (valid) type, returns `Ok(None)`: the section ended.
/// Log blocks are inflated into `inflated`, which then holds the whole block: the bytes up
/// to the end of the block header copied from `data`, then the inflated contents.
pub fn parse_block(
    data: &[u8],
    offset: u64,
    header_off: usize,
    table_block_size: usize,
    want: Option<BlockType>,
    inflated: &mut Vec<u8>,
    stats: &mut Stats,
) -> Result<Option<BlockInfo>> {
    if data.len() < header_off + 4 {
        return Err(corrupt(
            offset,
            "block header extends past the end of the data",
        ));
    }
    let Some(block_type) = BlockType::from_byte(data[header_off]) else {
        return Err(corrupt(
            offset + header_off as u64,
            format!("invalid block type byte 0x{:02x}", data[header_off]),
        ));
    };
    if want.is_some_and(|w| w != block_type) {
        return Ok(None);
    }
    stats.blocks_read += 1;
    let block_len = varint::be24(&data[header_off + 1..]) as usize;
    let min_len = header_off + 4 + 2;
    if block_len < min_len {
        return Err(corrupt(
            offset + header_off as u64 + 1,
            format!("block_len {block_len} is smaller than the minimum {min_len}"),
        ));
    }
    let body = header_off + 4;
    let (content, full_size, compressed_len): (&[u8], usize, usize) = if block_type
        == BlockType::Log
    {
        let consumed = inflate(&data[body..], block_len - body, inflated, &data[..body])
            .map_err(|e| e.at_offset(offset + body as u64))?;
        stats.blocks_inflated += 1;
        (&inflated[..], body + consumed, consumed)
    } else {
        if table_block_size > 0 && block_len > table_block_size && block_type != BlockType::Index {
            // The next block would start inside this one (git reads such overlapping
            // blocks again and again). Only index blocks may be larger than a block.
            return Err(corrupt(
                offset + header_off as u64 + 1,
                format!("block_len {block_len} exceeds the table's block size {table_block_size}"),
            ));
        }
        if block_len > data.len() {
            return Err(corrupt(
                offset + header_off as u64 + 1,
                format!(
                    "block_len {block_len} extends past the end of the data ({} bytes left)",
                    data.len()
                ),
            ));
        }
        // Where the next block starts: padded blocks take the table's block size, but a
        // short block followed by a non-NUL byte is unpadded and the next starts right
        // after it.
        let unpadded_next =
            block_len < table_block_size && block_len < data.len() && data[block_len] != 0;
        let full = if table_block_size == 0 || unpadded_next || block_len > table_block_size {
            block_len
        } else {
            table_block_size
        };
        (&data[..block_len], full, 0)
    };
    let restart_count = varint::be16(&content[block_len - 2..]) as usize;
    let restart_bytes = 3 * restart_count;
    if restart_bytes > block_len - 2 - body {
        return Err(corrupt(
            offset + block_len as u64 - 2,
            format!("restart count {restart_count} does not fit in a block of {block_len} bytes"),
        ));
    }
    Ok(Some(BlockInfo {
        offset,
        block_type,
        header_off,
        block_len,
        restart_count,
        restart_off: block_len - 2 - restart_bytes,
        full_size,
        compressed_len,
    }))
}

/// The first key of the log block starting at `data[header_off]`, read by inflating only
/// the start of its stream (at most [`PEEK_BYTES`]), into `key`. `false` when that cannot
/// tell: another block type, a key longer than what was inflated, or data that the full
/// parse would reject (it reports why); also a block that claims to inflate to at most
/// `min_block_len` bytes, for which a peek would cost about as much as inflating it. The
/// block is not checked further: a caller uses the key to order blocks and parses the
/// block in full before reading its records.
pub fn peek_log_key(
    data: &[u8],
    header_off: usize,
    min_block_len: usize,
    key: &mut Vec<u8>,
) -> bool {
    let body = header_off + 4;
    if data.len() <= body || BlockType::from_byte(data[header_off]) != Some(BlockType::Log) {
        return false;
    }
    let block_len = varint::be24(&data[header_off + 1..]) as usize;
    if block_len < body + 2 || block_len <= min_block_len {
        return false;
    }
    let mut out = vec![0; (block_len - body).min(PEEK_BYTES)];
    let inflated = with_inflater(|z| {
        let ok = z.decompress(&data[body..], &mut out, FlushDecompress::Sync);
        ok.is_ok().then(|| z.total_out() as usize)
    });
    let Some(inflated) = inflated else {
        return false;
    };
    out.truncate(inflated);
    match record::decode_key_header(&out) {
        Ok(h) if h.prefix_len == 0 => {
            key.clear();
            key.extend_from_slice(&out[h.suffix_start..h.suffix_start + h.suffix_len]);
            true
        }
        _ => false,
    }
}

/// How much of a log block [`peek_log_key`] inflates: room for any plausible ref name.
pub const PEEK_BYTES: usize = 16 * 1024;

thread_local! {
    /// The zlib stream state this thread inflates log blocks with, reset for each block:
    /// zlib allocates and initializes a new one in several kilobytes, which cost about as
    /// much as inflating a small block.
    static INFLATER: RefCell<Decompress> = RefCell::new(Decompress::new(true));
}

/// Run `f` with this thread's inflater, reset to the start of a zlib stream.
fn with_inflater<T>(f: impl FnOnce(&mut Decompress) -> T) -> T {
    INFLATER.with(|z| {
        let mut z = z.borrow_mut();
        z.reset(true);
        f(&mut z)
    })
}

/// Inflate the zlib stream at the start of `input` into `out` (after `prefix`), expecting
/// exactly `expected` bytes. Returns the compressed bytes consumed. The output grows in
/// chunks as inflation produces data, so a bogus `block_len` cannot make it allocate up front.
fn inflate(input: &[u8], expected: usize, out: &mut Vec<u8>, prefix: &[u8]) -> Result<usize> {
    out.clear();
    out.extend_from_slice(prefix);
    let target = prefix.len() + expected;
    with_inflater(|z| inflate_into(z, input, target, out))
}

/// [`inflate`]'s loop, with `z` at the start of a stream and `out` holding the prefix.
fn inflate_into(
    z: &mut Decompress,
    input: &[u8],
    target: usize,
    out: &mut Vec<u8>,
) -> Result<usize> {
    loop {
        let in_pos = z.total_in() as usize;
        // The stream writes into the spare capacity, not zeroed first.
        make_room(out, inflate_step(target, out.len()), target + 1);
        let before_out = z.total_out();
        let result = z.decompress_vec(&input[in_pos..], out, FlushDecompress::Finish);
        let produced = (z.total_out() - before_out) as usize;
        let status = result.map_err(|e| {
            Error::new(
                ErrorKind::Zlib,
                format!("log block: invalid zlib data: {e}"),
            )
        })?;
        if out.len() > target {
            return Err(Error::format(format!(
                "log block inflates to more than its block_len of {target} bytes"
            )));
        }
        match status {
            Status::StreamEnd => {
                if out.len() != target {
                    return Err(Error::format(format!(
                        "log block inflates to {} bytes, its block_len says {target}",
                        out.len()
                    )));
                }
                return Ok(z.total_in() as usize);
            }
            Status::Ok | Status::BufError => {
                if produced == 0 && z.total_in() as usize == in_pos {
                    return Err(Error::new(
                        ErrorKind::Zlib,
                        "log block: zlib stream is truncated",
                    ));
                }
            }
        }
    }
}

/// Make room for `need` more bytes in `out`: geometric growth with the output (never to the
/// claimed length up front), but never past `limit` (the claimed length and the one byte
/// that shows a stream inflating to more).
fn make_room(out: &mut Vec<u8>, need: usize, limit: usize) {
    if out.capacity() - out.len() < need {
        let grown = (out.capacity() * 2).clamp(out.len() + need, limit);
        out.reserve_exact(grown - out.len());
    }
}

/// Output bytes one inflate call may produce: at most 64 KiB, and up to one byte more than
/// expected (`target`), to notice a stream that inflates to too much.
fn inflate_step(target: usize, have: usize) -> usize {
    const CHUNK: usize = 64 * 1024;
    (target + 1 - have).min(CHUNK)
}

/// A position in a block and the key decoded so far. The block's bytes are passed to each
/// call, so the cursor can live next to whatever owns them.
#[derive(Clone, Debug, Default)]
pub struct BlockCursor {
    pos: usize,
    key: Vec<u8>,
    /// Where the record decoded last starts.
    last: usize,
}

impl BlockCursor {
    /// Whether every record of the block has been decoded.
    pub fn at_end(&self, info: &BlockInfo) -> bool {
        self.pos >= info.restart_off
    }

    /// Position before the first record of the block.
    pub fn reset(&mut self, info: &BlockInfo) {
        self.pos = info.records_start();
        self.key.clear();
    }

    /// The key of the record decoded last.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Offset (relative to the block) of the next record.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Decode the next record into `rec`. `Ok(false)` at the end of the block.
    #[inline(always)]
    pub fn next<R: Record>(
        &mut self,
        info: &BlockInfo,
        data: &[u8],
        rec: &mut R,
        ctx: &CodecContext,
        stats: &mut Stats,
    ) -> Result<bool> {
        if self.pos >= info.restart_off {
            return Ok(false);
        }
        let records = &data[..info.restart_off];
        let at = self.pos;
        let err = |msg: &str| record_error(info, at, msg);
        let (h, vstart) = record::decode_key_at(records, at, &mut self.key).map_err(err)?;
        let n = rec
            .decode(&self.key, h.value_type, &records[vstart..], ctx)
            .map_err(err)?;
        stats.records_decoded += 1;
        self.last = at;
        self.pos = vstart + n;
        Ok(true)
    }

    /// Lend the ref records left in the block to `f` in place: the name is this cursor's
    /// key, the ids and target the block's bytes. The checks and errors are
    /// [`BlockCursor::next`]'s; tombstones are left out with `skip_deletions`.
    /// Returns `Break` when `f` broke (the cursor after the record lent), `Continue` at
    /// the end of the block. The position, the counters and the key's length are kept in
    /// locals and written back once: the key buffer is opened to its capacity for the
    /// pass (`record::decode_key_in`) and cut back to the key after it.
    #[inline(always)]
    pub fn for_each_ref<B>(
        &mut self,
        info: &BlockInfo,
        data: &[u8],
        ctx: &CodecContext,
        stats: &mut Stats,
        skip_deletions: bool,
        f: &mut impl FnMut(RefView<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>> {
        let records = &data[..info.restart_off];
        let (mut pos, mut last, mut decoded) = (self.pos, self.last, 0);
        let mut len = self.key.len();
        self.key.resize(self.key.capacity(), 0);
        let out = loop {
            let key = self.key.as_mut_slice();
            // Runs until the block ends, `f` breaks, an error, or the key needs more room.
            // The end is checked after each record, so the start of the one decoded last
            // is only kept where the pass ends (a pass that grows the key decodes again).
            if pos >= info.restart_off {
                break Ok(ControlFlow::Continue(()));
            }
            let pass = loop {
                let at = pos;
                let (value_type, vstart) = match record::decode_key_in(records, at, key, len) {
                    Ok(KeyIn::Decoded {
                        len: n,
                        value_type,
                        value_start,
                    }) => {
                        len = n;
                        (value_type, value_start)
                    }
                    Ok(KeyIn::Grow(need)) => break Pass::Grow(need),
                    Err(msg) => break Pass::Done(Err(record_error(info, at, msg))),
                };
                let (update_index, value, end) =
                    match decode_ref_value(value_type, records, vstart, ctx) {
                        Ok(v) => v,
                        Err(msg) => break Pass::Done(Err(record_error(info, at, msg))),
                    };
                (pos, decoded) = (end, decoded + 1);
                if !(skip_deletions && matches!(value, RefValueView::Deletion)) {
                    let view = RefView {
                        refname: &key[..len],
                        update_index,
                        value,
                    };
                    if let ControlFlow::Break(b) = f(view) {
                        last = at;
                        break Pass::Done(Ok(ControlFlow::Break(b)));
                    }
                }
                if pos >= info.restart_off {
                    last = at;
                    break Pass::Done(Ok(ControlFlow::Continue(())));
                }
            };
            match pass {
                Pass::Done(out) => break out,
                // Amortized: the buffer is open to its capacity, which `reserve` doubles.
                Pass::Grow(need) => {
                    self.key.reserve(need.saturating_sub(self.key.len()));
                    self.key.resize(self.key.capacity(), 0);
                }
            }
        };
        self.key.truncate(len);
        (self.pos, self.last) = (pos, last);
        stats.records_decoded += decoded;
        out
    }

    /// Decode the value of the record decoded last into `rec` again (a caller let it go to
    /// save memory); the cursor stays after it. `data` must be the same block's contents.
    pub fn redecode<R: Record>(
        &self,
        info: &BlockInfo,
        data: &[u8],
        rec: &mut R,
        ctx: &CodecContext,
        stats: &mut Stats,
    ) -> Result<()> {
        let records = &data[..info.restart_off];
        let at = self.last;
        let err = |msg: &str| record_error(info, at, msg);
        if at >= records.len() {
            return Err(err("record to decode again is outside the block"));
        }
        let h = record::decode_key_header(&records[at..]).map_err(err)?;
        let vstart = at + h.len();
        let n = rec
            .decode(&self.key, h.value_type, &records[vstart..], ctx)
            .map_err(err)?;
        stats.records_decoded += 1;
        if vstart + n != self.pos {
            return Err(err("record decoded again ends elsewhere"));
        }
        Ok(())
    }

    /// The key of restart record `i`, checked: inside the records, prefix length 0.
    fn restart_key<'d>(&self, info: &BlockInfo, data: &'d [u8], i: usize) -> Result<&'d [u8]> {
        let r = info.restart(data, i);
        if r < info.records_start() || r >= info.restart_off {
            return Err(record_error(
                info,
                info.restart_off + 3 * i,
                &format!("restart offset {r} is outside the records"),
            ));
        }
        let h = record::decode_key_header(&data[r..info.restart_off])
            .map_err(|m| record_error(info, r, m))?;
        if h.prefix_len != 0 {
            return Err(record_error(
                info,
                r,
                "restart point at a prefix-compressed record",
            ));
        }
        Ok(&data[r + h.suffix_start..r + h.len()])
    }

    /// Position the cursor at the first record whose key is `>= want`, decoded into `rec`.
    /// `Ok(false)` when every key in the block is smaller.
    ///
    /// Binary search over the restart points, then a linear scan from the last restart whose
    /// key is not greater than `want`.
    pub fn seek<R: Record>(
        &mut self,
        info: &BlockInfo,
        data: &[u8],
        want: &[u8],
        rec: &mut R,
        ctx: &CodecContext,
        stats: &mut Stats,
    ) -> Result<bool> {
        // Smallest restart index whose key is greater than `want`.
        let (mut lo, mut hi) = (0usize, info.restart_count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            stats.key_comparisons += 1;
            if self.restart_key(info, data, mid)? > want {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        self.key.clear();
        self.pos = if lo == 0 {
            info.records_start()
        } else {
            info.restart(data, lo - 1)
        };
        // Compare keys only, and decode the value of the record the seek stops at.
        let records = &data[..info.restart_off];
        while self.pos < info.restart_off {
            let at = self.pos;
            let err = |msg: &str| record_error(info, at, msg);
            let h = record::decode_key(&records[at..], &mut self.key).map_err(err)?;
            let vstart = at + h.len();
            stats.records_decoded += 1;
            stats.key_comparisons += 1;
            let value = &records[vstart..];
            if self.key.as_slice() >= want {
                let n = rec
                    .decode(&self.key, h.value_type, value, ctx)
                    .map_err(err)?;
                self.last = at;
                self.pos = vstart + n;
                return Ok(true);
            }
            let n = match R::skip_value(h.value_type, value, ctx) {
                Some(n) => n,
                None => rec.decode(&self.key, h.value_type, value, ctx),
            }
            .map_err(err)?;
            self.pos = vstart + n;
        }
        Ok(false)
    }
}

fn record_error(info: &BlockInfo, at: usize, msg: &str) -> Error {
    if info.block_type == BlockType::Log {
        corrupt(
            info.offset,
            format!("log block, inflated offset {at}: {msg}"),
        )
    } else {
        corrupt(info.offset + at as u64, msg.to_string())
    }
}

/// A block parsed from bytes, with its own copy of the inflated contents for log blocks.
///
/// For tools and tests that look at one block at a time:
///
/// ```
/// use reftable::codec::block::Block;
/// use reftable::codec::block_writer::BlockWriter;
/// use reftable::codec::format::BlockType;
/// use reftable::codec::record::{CodecContext, RefRecord, RefValue};
///
/// let ctx = CodecContext { hash_size: 20, min_update_index: 1, max_update_index: 1 };
/// let mut w = BlockWriter::new(256, 16);
/// w.reset(BlockType::Ref, 0);
/// w.add(&RefRecord::new("HEAD", 1, RefValue::Symref(b"refs/heads/main".to_vec())), &ctx).unwrap();
/// w.finish().unwrap();
/// let bytes = w.finished().to_vec();
///
/// let block = Block::parse(&bytes, 0, 0).unwrap();
/// let recs: Vec<RefRecord> = block.records(&ctx).unwrap();
/// assert_eq!(recs[0].refname, b"HEAD");
/// ```
#[derive(Clone, Debug)]
pub struct Block<'a> {
    data: std::borrow::Cow<'a, [u8]>,
    info: BlockInfo,
}

impl<'a> Block<'a> {
    /// Parse a block of any type at the start of `data`.
    pub fn parse(data: &'a [u8], header_off: usize, table_block_size: usize) -> Result<Block<'a>> {
        let mut inflated = Vec::new();
        let mut stats = Stats::default();
        let info = parse_block(
            data,
            0,
            header_off,
            table_block_size,
            None,
            &mut inflated,
            &mut stats,
        )?
        .expect("no type wanted, so a block is always returned");
        let data = if info.block_type == BlockType::Log {
            std::borrow::Cow::Owned(inflated)
        } else {
            std::borrow::Cow::Borrowed(&data[..info.block_len])
        };
        Ok(Block { data, info })
    }

    /// The block's layout.
    pub fn info(&self) -> &BlockInfo {
        &self.info
    }

    /// The block's (inflated) bytes, from the block start to `block_len`.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Decode every record of the block as `R`.
    pub fn records<R: Record>(&self, ctx: &CodecContext) -> Result<Vec<R>> {
        let mut cur = BlockCursor::default();
        cur.reset(&self.info);
        let mut out = Vec::new();
        let mut rec = R::default();
        let mut stats = Stats::default();
        while cur.next(&self.info, &self.data, &mut rec, ctx, &mut stats)? {
            out.push(rec.clone());
        }
        Ok(out)
    }

    /// The first record with a key `>= want`, if any.
    pub fn seek<R: Record>(&self, want: &[u8], ctx: &CodecContext) -> Result<Option<R>> {
        let mut cur = BlockCursor::default();
        let mut rec = R::default();
        let mut stats = Stats::default();
        Ok(cur
            .seek(&self.info, &self.data, want, &mut rec, ctx, &mut stats)?
            .then_some(rec))
    }
}

/// How one pass of [`BlockCursor::for_each_ref`] over a key buffer ended.
enum Pass<B> {
    /// The block's end, `f`'s break, or an error.
    Done(Result<ControlFlow<B>>),
    /// The key buffer must hold this many bytes.
    Grow(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block at file offset 1000: `header_off` zeros (the file header of a first block),
    /// then the block type, `block_len` and `body`.
    fn block(header_off: usize, t: u8, block_len: usize, body: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; header_off];
        b.push(t);
        b.extend_from_slice(&(block_len as u32).to_be_bytes()[1..]);
        b.extend_from_slice(body);
        b
    }

    fn parse(data: &[u8], header_off: usize, block_size: usize) -> Result<Option<BlockInfo>> {
        parse_block(
            data,
            1000,
            header_off,
            block_size,
            None,
            &mut Vec::new(),
            &mut Stats::default(),
        )
    }

    fn error(data: &[u8], header_off: usize, block_size: usize) -> (Option<u64>, String) {
        let e = parse(data, header_off, block_size).unwrap_err();
        (e.offset(), e.message().to_string())
    }

    fn info(data: &[u8], header_off: usize, block_size: usize) -> BlockInfo {
        parse(data, header_off, block_size).unwrap().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(9));
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    /// The first key of a log block, from the start of its stream: only a key that fits in
    /// [`PEEK_BYTES`] and starts the block (prefix length 0), only in a log block.
    #[test]
    fn peeking_at_a_log_block_first_key() {
        let log_block = |key: &[u8], prefix: u8| {
            let mut records = vec![prefix];
            varint::put(&mut records, (key.len() as u64) << 3 | 1);
            records.extend_from_slice(key);
            records.extend_from_slice(&[7; 100]);
            block(0, b'g', 4 + records.len(), &zlib(&records))
        };
        let mut key = b"stale".to_vec();
        assert!(peek_log_key(
            &log_block(b"refs/heads/main", 0),
            0,
            0,
            &mut key
        ));
        assert_eq!(key, b"refs/heads/main");
        // The first block of a file, after its header.
        let mut first = vec![0; 24];
        first.extend_from_slice(&log_block(b"HEAD", 0));
        assert!(peek_log_key(&first, 24, 0, &mut key));
        assert_eq!(key, b"HEAD");
        let long = vec![b'x'; PEEK_BYTES];
        assert!(!peek_log_key(&log_block(&long, 0), 0, 0, &mut key));
        assert!(peek_log_key(
            &log_block(&long[..PEEK_BYTES - 8], 0),
            0,
            0,
            &mut key
        ));
        assert_eq!(key.len(), PEEK_BYTES - 8);
        assert!(!peek_log_key(&log_block(b"HEAD", 3), 0, 0, &mut key));
        let mut not_log = log_block(b"HEAD", 0);
        not_log[0] = b'r';
        assert!(!peek_log_key(&not_log, 0, 0, &mut key));
        // A key longer than the block says it is: not read past block_len.
        let mut short = log_block(b"refs/heads/main", 0);
        short[1..4].copy_from_slice(&[0, 0, 12]);
        assert!(!peek_log_key(&short, 0, 0, &mut key));
        assert!(!peek_log_key(
            &block(0, b'g', 3, &zlib(&[0])),
            0,
            0,
            &mut key
        ));
        // The smallest log block a first key fits in, at the start of a file.
        let mut records = vec![0u8];
        varint::put(&mut records, 13 << 3);
        records.extend_from_slice(b"HEAD\0\xff\xff\xff\xff\xff\xff\xff\xfe");
        records.extend_from_slice(&[0, 0, 28, 0, 1]);
        let mut tiny = vec![0; 24];
        tiny.extend_from_slice(&block(0, b'g', 28 + records.len(), &zlib(&records)));
        assert!(peek_log_key(&tiny, 24, 0, &mut key));
        assert_eq!(key.len(), 13);
        // Ref names as long as git allows (4,096 bytes and more) are peeked.
        assert!(peek_log_key(&log_block(&[b'r'; 8000], 0), 0, 0, &mut key));
        // Blocks no bigger than the minimum given are not peeked.
        let b = log_block(b"HEAD", 0);
        let claimed = (b[1] as usize) << 16 | (b[2] as usize) << 8 | b[3] as usize;
        assert!(peek_log_key(&b, 0, claimed - 1, &mut key));
        assert!(!peek_log_key(&b, 0, claimed, &mut key));
        let mut damaged = log_block(b"HEAD", 0);
        damaged[4] ^= 0xff;
        assert!(!peek_log_key(&damaged, 0, 0, &mut key));
        assert!(!peek_log_key(&damaged[..5], 0, 0, &mut key));
    }

    #[test]
    fn header_type_and_length_errors_say_where() {
        assert_eq!(
            error(&[b'r', 0, 0], 0, 0),
            (
                Some(1000),
                "block header extends past the end of the data".into()
            )
        );
        // Exactly a header: read on, and find the block longer than the data.
        assert_eq!(
            error(&[b'r', 0, 0, 6], 0, 0),
            (
                Some(1001),
                "block_len 6 extends past the end of the data (4 bytes left)".into()
            )
        );
        assert_eq!(
            error(&block(24, b'x', 30, &[0, 0]), 24, 0),
            (Some(1024), "invalid block type byte 0x78".into())
        );
        assert_eq!(
            error(&block(24, b'r', 29, &[0, 0]), 24, 0),
            (
                Some(1025),
                "block_len 29 is smaller than the minimum 30".into()
            )
        );
        let smallest = info(&block(24, b'r', 30, &[0, 0]), 24, 0);
        assert_eq!((smallest.restart_count, smallest.restart_off), (0, 28));
        assert_eq!(smallest.records_start(), 28);
    }

    #[test]
    fn block_size_and_data_bounds() {
        let body = [0u8; 13];
        assert_eq!(
            error(&block(0, b'r', 17, &body), 0, 16),
            (
                Some(1001),
                "block_len 17 exceeds the table's block size 16".into()
            )
        );
        // Index blocks may be larger than a block; a block may end where the data does.
        assert_eq!(info(&block(0, b'i', 17, &body), 0, 16).full_size, 17);
        assert_eq!(info(&block(0, b'r', 17, &body), 0, 0).full_size, 17);
        assert_eq!(
            error(&block(0, b'r', 18, &body), 0, 0),
            (
                Some(1001),
                "block_len 18 extends past the end of the data (17 bytes left)".into()
            )
        );
    }

    const CTX: CodecContext = CodecContext {
        hash_size: 20,
        min_update_index: 1,
        max_update_index: u64::MAX,
    };

    /// A block of `recs` as the table writer makes it, restarts every `restart_interval`.
    fn written<R: Record>(t: BlockType, recs: &[R], restart_interval: usize) -> Vec<u8> {
        let mut w = crate::codec::block_writer::BlockWriter::new(4096, restart_interval);
        w.reset(t, 0);
        for r in recs {
            w.add(r, &CTX).unwrap();
        }
        w.finish().unwrap();
        w.finished().to_vec()
    }

    fn refs(names: &[&str]) -> Vec<record::RefRecord> {
        let id = crate::ObjectId::from_bytes(&[1; 20]).unwrap();
        names
            .iter()
            .map(|n| record::RefRecord::new(*n, 1, record::RefValue::Object(id)))
            .collect()
    }

    /// The one-block convenience type: a ref block's bytes as they are, a log block's
    /// inflated; every record; seeks to a key present, between two, and past the last.
    #[test]
    fn a_block_on_its_own() {
        let written_refs = refs(&["refs/heads/a", "refs/heads/b", "refs/heads/c"]);
        let bytes = written(BlockType::Ref, &written_refs, 2);
        let b = Block::parse(&bytes, 0, 0).unwrap();
        assert_eq!(b.info().block_type, BlockType::Ref);
        assert_eq!(b.data(), &bytes[..b.info().block_len]);
        assert_eq!(b.records::<record::RefRecord>(&CTX).unwrap(), written_refs);
        let seek = |k: &[u8]| b.seek::<record::RefRecord>(k, &CTX).unwrap();
        assert_eq!(seek(b"refs/heads/b").as_ref(), Some(&written_refs[1]));
        assert_eq!(seek(b"refs/heads/bb").as_ref(), Some(&written_refs[2]));
        assert_eq!(seek(b"refs/heads/d"), None);
        let log = record::LogRecord {
            refname: b"refs/heads/a".to_vec(),
            update_index: 1,
            value: record::LogValue::Update(record::LogUpdate {
                message: b"hello\n".to_vec(),
                ..Default::default()
            }),
        };
        let bytes = written(BlockType::Log, std::slice::from_ref(&log), 16);
        let b = Block::parse(&bytes, 0, 0).unwrap();
        assert_eq!(b.data().len(), b.info().block_len);
        assert_eq!(b.data()[0], b'g');
        assert_eq!(b.records::<record::LogRecord>(&CTX).unwrap(), [log]);
    }

    /// A record that cannot be decoded is reported at its file offset (a ref block) or at
    /// its block with the inflated offset (a log block); a restart entry pointing outside
    /// the records at the entry's own offset. The cursor's position is where the next
    /// record starts.
    #[test]
    fn record_errors_say_where() {
        let mut bytes = written(BlockType::Ref, &refs(&["refs/heads/a", "refs/heads/b"]), 16);
        let info = info(&bytes, 0, 0);
        let mut c = BlockCursor::default();
        let mut rec = record::RefRecord::default();
        let mut st = Stats::default();
        c.reset(&info);
        assert_eq!(c.pos(), info.records_start());
        assert!(c.next(&info, &bytes, &mut rec, &CTX, &mut st).unwrap());
        let second = c.pos();
        // prefix length (1 byte), suffix length and type (1), the name, the update index
        // delta (1) and the id.
        assert_eq!(
            second,
            info.records_start() + 3 + b"refs/heads/a".len() + 20
        );
        // The second record shares more than the whole first key.
        bytes[second] = 0x7f;
        c.reset(&info);
        assert!(c.next(&info, &bytes, &mut rec, &CTX, &mut st).unwrap());
        let e = c.next(&info, &bytes, &mut rec, &CTX, &mut st).unwrap_err();
        assert_eq!(e.offset(), Some(1000 + second as u64), "{e}");

        let e = record_error(
            &BlockInfo {
                block_type: BlockType::Log,
                ..info
            },
            7,
            "bad",
        );
        assert_eq!(e.offset(), Some(1000));
        assert_eq!(e.message(), "log block, inflated offset 7: bad");

        // Three restarts; the middle entry points into the block header.
        let mut bytes = written(
            BlockType::Ref,
            &refs(&["refs/heads/a", "refs/heads/b", "refs/heads/c"]),
            1,
        );
        let info = self::info(&bytes, 0, 0);
        assert_eq!(info.restart_count, 3);
        let entry = info.restart_off + 3;
        bytes[entry..entry + 3].copy_from_slice(&[0, 0, 1]);
        let e = c
            .seek(&info, &bytes, b"refs/heads/b", &mut rec, &CTX, &mut st)
            .unwrap_err();
        assert_eq!(e.offset(), Some(1000 + entry as u64), "{e}");
        assert!(
            e.message()
                .contains("restart offset 1 is outside the records"),
            "{e}"
        );
    }

    /// Streams whose output crosses an inflate step in the middle of a long match: the next
    /// step copies the rest of the match without reading input, which is progress.
    #[test]
    fn a_match_across_inflate_steps() {
        for n in (65_536 - 300..65_536 + 300).chain(131_072 - 300..131_072 + 300) {
            // A run of one byte, then a restart count of 0.
            let mut content = vec![b'm'; n - 2];
            content.extend_from_slice(&[0, 0]);
            let data = block(0, b'g', 4 + n, &zlib(&content));
            let mut out = Vec::new();
            let r = parse_block(&data, 0, 0, 0, None, &mut out, &mut Stats::default());
            assert!(r.is_ok(), "{n}: {}", r.unwrap_err());
        }
    }

    /// The offset of a block_len past the end names the length field, also in a file's first
    /// block, after the file header.
    #[test]
    fn a_first_block_too_long_for_its_data() {
        let (at, msg) = error(&block(24, b'r', 500, &[0; 10]), 24, 0);
        assert_eq!(at, Some(1000 + 24 + 1));
        assert!(msg.contains("extends past the end of the data"), "{msg}");
    }

    #[test]
    fn where_the_next_block_starts() {
        // Padded: NULs up to the block size.
        let mut padded = block(0, b'r', 8, &[0; 4]);
        padded.resize(32, 0);
        assert_eq!(info(&padded, 0, 16).full_size, 16);
        // Unpadded: the next block's type byte right after this one.
        let mut unpadded = block(0, b'r', 8, &[0; 4]);
        unpadded.extend_from_slice(&block(0, b'r', 8, &[0; 4]));
        assert_eq!(info(&unpadded, 0, 16).full_size, 8);
        // The last block of the data, shorter than a block.
        assert_eq!(info(&block(0, b'r', 8, &[0; 4]), 0, 16).full_size, 16);
    }

    #[test]
    fn restart_table_must_fit() {
        assert_eq!(
            error(&block(0, b'r', 8, &[0, 0, 0, 1]), 0, 0),
            (
                Some(1006),
                "restart count 1 does not fit in a block of 8 bytes".into()
            )
        );
        let b = info(&block(0, b'r', 9, &[0, 0, 4, 0, 1]), 0, 0);
        assert_eq!(
            (
                b.restart_count,
                b.restart_off,
                b.restart(&block(0, b'r', 9, &[0, 0, 4, 0, 1]), 0)
            ),
            (1, 4, 4)
        );
    }

    #[test]
    fn counts_blocks_read_and_inflated_and_skips_other_types() {
        let mut stats = Stats::default();
        let data = block(0, b'o', 6, &[0, 0]);
        let got = parse_block(
            &data,
            0,
            0,
            0,
            Some(BlockType::Ref),
            &mut Vec::new(),
            &mut stats,
        );
        assert!(got.unwrap().is_none());
        assert_eq!(stats.blocks_read, 0);
        parse_block(&data, 0, 0, 0, None, &mut Vec::new(), &mut stats).unwrap();
        assert_eq!((stats.blocks_read, stats.blocks_inflated), (1, 0));
        let content = [0u8, 0];
        let log = block(0, b'g', 4 + content.len(), &zlib(&content));
        parse_block(&log, 0, 0, 0, None, &mut Vec::new(), &mut stats).unwrap();
        assert_eq!((stats.blocks_read, stats.blocks_inflated), (2, 1));
    }

    /// A log block bigger than one inflate step (64 KiB) inflates whole; the block's extent
    /// is its header and compressed bytes.
    #[test]
    fn big_log_blocks_inflate_in_steps() {
        let mut content: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        content.extend_from_slice(&[0, 0]);
        let z = zlib(&content);
        let mut data = block(0, b'g', 4 + content.len(), &z);
        data.extend_from_slice(&[b'g', 1, 2, 3]);
        let mut out = Vec::new();
        let b = parse_block(&data, 0, 0, 0, None, &mut out, &mut Stats::default())
            .unwrap()
            .unwrap();
        assert_eq!(&out[4..], &content[..]);
        assert_eq!((b.compressed_len, b.full_size), (z.len(), 4 + z.len()));
    }

    #[test]
    fn log_blocks_inflating_to_another_length_or_truncated() {
        let content = [7u8; 100];
        let z = zlib(&content);
        let msg = |block_len: usize, stream: &[u8]| {
            let e = parse(&block(0, b'g', block_len, stream), 0, 0).unwrap_err();
            (e.kind(), e.offset(), e.message().to_string())
        };
        assert_eq!(
            msg(4 + 50, &z),
            (
                ErrorKind::Format,
                Some(1004),
                "log block inflates to more than its block_len of 54 bytes".into()
            )
        );
        assert_eq!(
            msg(4 + 150, &z),
            (
                ErrorKind::Format,
                Some(1004),
                "log block inflates to 104 bytes, its block_len says 154".into()
            )
        );
        assert_eq!(
            msg(4 + 100, &z[..z.len() / 2]),
            (
                ErrorKind::Zlib,
                Some(1004),
                "log block: zlib stream is truncated".into()
            )
        );
        // A claimed length of 16 MiB for a tiny stream allocates as it inflates, not up front.
        let mut out = Vec::new();
        let data = block(0, b'g', (16 << 20) - 1, &z);
        assert!(parse_block(&data, 0, 0, 0, None, &mut out, &mut Stats::default()).is_err());
        assert!(out.capacity() < 1 << 20, "{}", out.capacity());
        // A block of 300,000 inflated bytes (five steps) takes a buffer of its length and
        // the one byte more that shows a stream inflating to more, no bigger.
        let content: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = Vec::new();
        let data = block(0, b'g', 4 + content.len(), &zlib(&content));
        parse_block(&data, 0, 0, 0, None, &mut out, &mut Stats::default()).unwrap();
        assert_eq!(&out[4..], &content[..]);
        assert!(
            out.capacity() <= 4 + content.len() + 1,
            "{}",
            out.capacity()
        );
    }

    #[test]
    fn a_block_after_a_broken_stream_inflates_from_a_fresh_start() {
        // The thread's inflater is reused: whatever a broken or half-read stream left in it
        // must not reach the next block.
        let mut content = vec![9u8; 300];
        content.extend_from_slice(&[0, 0]);
        let good = block(0, b'g', 4 + content.len(), &zlib(&content));
        let mut garbage = zlib(&content);
        garbage[2] ^= 0xff;
        let broken = block(0, b'g', 4 + content.len(), &garbage);
        let half = zlib(&content);
        let truncated = block(0, b'g', 4 + content.len(), &half[..half.len() / 2]);
        for bad in [&broken, &truncated] {
            assert!(parse(bad, 0, 0).is_err());
            let mut out = Vec::new();
            parse_block(&good, 0, 0, 0, None, &mut out, &mut Stats::default()).unwrap();
            assert_eq!(&out[4..], &content[..]);
        }
    }
}
