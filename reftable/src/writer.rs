//! Writing a table with git's layout, byte for byte.
//!
//! The rules git's writer follows and this one reproduces:
//! - a restart every `restart_interval` records and at every record whose key shares no
//!   prefix with the previous one;
//! - blocks padded with NULs to the block size, but padding is written only when another
//!   block follows: the last block is unpadded, and the padding of the block before the first
//!   log block is dropped;
//! - an index over a section when it has more than 3 blocks (1 when unpadded), with further
//!   index levels until the top level fits that threshold; the root level comes last;
//! - an obj section only when the ref section got an index, with
//!   `obj_id_len = max(2, 1 + longest common prefix of consecutive ids)`;
//! - log blocks hold at most one block of uncompressed data and are zlib-compressed at
//!   level 9.
//!
//! One deliberate difference: git 2.47 cannot read a log block whose compressed stream
//! extends past one block from the block start. git's writer can produce such a block from
//! incompressible data; this writer moves records to the next block instead, so that every
//! table it writes is readable by git. For all other input the bytes are git's.

use std::collections::BTreeMap;
use std::io::Write;

use crate::codec::block_writer::BlockWriter;
use crate::codec::format::{header_size, BlockType, Footer, Header, MAX_BLOCK_SIZE};
use crate::codec::record::{
    CodecContext, IndexRecord, LogRecord, LogValue, ObjRecord, Record, RefRecord,
};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::{HashId, ObjectId};

/// Options of a table writer. The defaults are git's. New options may come in a minor
/// release: build them from the defaults with the method of each field.
///
/// ```
/// use reftable::{HashId, WriteOptions};
///
/// let opts = WriteOptions::default().hash(HashId::Sha256).restart_interval(3);
/// assert_eq!((opts.hash, opts.restart_interval), (HashId::Sha256, 3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Block size in bytes; 0 means 4096. At most [`MAX_BLOCK_SIZE`](crate::table::MAX_BLOCK_SIZE).
    pub block_size: u32,
    /// A restart point every this many records; 0 means 16.
    pub restart_interval: u16,
    /// Write the obj section (object id → ref blocks) when the ref section is indexed.
    pub index_objects: bool,
    /// Do not pad blocks to the block size (indexes are then written above 1 block).
    pub unpadded: bool,
    /// The hash of the object ids; fixes the table version (1 for SHA-1, 2 for SHA-256).
    pub hash: HashId,
    /// Store log messages as given instead of normalizing them to one line ending in `\n`.
    pub exact_log_message: bool,
}

setters!(WriteOptions {
    block_size: u32,
    restart_interval: u16,
    index_objects: bool,
    unpadded: bool,
    hash: HashId,
    exact_log_message: bool,
});

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            block_size: 4096,
            restart_interval: 16,
            index_objects: true,
            unpadded: false,
            hash: HashId::Sha1,
            exact_log_message: false,
        }
    }
}

impl WriteOptions {
    fn effective_block_size(&self) -> u32 {
        if self.block_size == 0 {
            4096
        } else {
            self.block_size
        }
    }

    fn effective_restart_interval(&self) -> usize {
        if self.restart_interval == 0 {
            16
        } else {
            self.restart_interval as usize
        }
    }
}

/// Per-section counts of what a writer wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SectionStats {
    /// Records written.
    pub entries: u64,
    /// Restart points written.
    pub restarts: u64,
    /// Blocks written.
    pub blocks: u64,
    /// Index blocks written for this section.
    pub index_blocks: u64,
    /// Number of index levels.
    pub max_index_level: u32,
    /// Offset of the section's first block.
    pub offset: u64,
    /// Offset of the root index level (0 without an index).
    pub index_offset: u64,
}

/// What a writer wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriterStats {
    /// The ref section.
    pub refs: SectionStats,
    /// The obj section.
    pub objs: SectionStats,
    /// The log section.
    pub logs: SectionStats,
    /// All index blocks.
    pub index: SectionStats,
    /// Blocks of any type.
    pub blocks: u64,
    /// `obj_id_len` of the obj section (0 without one).
    pub obj_id_len: u8,
}

impl WriterStats {
    fn section_mut(&mut self, t: BlockType) -> &mut SectionStats {
        match t {
            BlockType::Ref => &mut self.refs,
            BlockType::Obj => &mut self.objs,
            BlockType::Log => &mut self.logs,
            _ => &mut self.index,
        }
    }
}

/// Writes one table to `W`.
///
/// Call [`Writer::set_limits`], add refs in strictly increasing name order, then logs in
/// strictly increasing key order (ref name, then update index descending), then
/// [`Writer::finish`].
///
/// ```
/// use reftable::{LogRecord, LogUpdate, LogValue, ObjectId, RefRecord, RefValue, Signature, Table, TzOffset, Writer, WriteOptions};
///
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// let mut w = Writer::new(Vec::new(), WriteOptions::default());
/// w.set_limits(1, 1).unwrap();
/// w.add_ref(&RefRecord::new("HEAD", 1, RefValue::Symref(b"refs/heads/main".to_vec()))).unwrap();
/// w.add_ref(&RefRecord::new("refs/heads/main", 1, RefValue::Object(id))).unwrap();
/// w.add_log(&LogRecord {
///     refname: b"refs/heads/main".to_vec(),
///     update_index: 1,
///     value: LogValue::Update(LogUpdate {
///         new_id: id,
///         committer: Signature::new("C O Mitter", "committer@example.com", 1112911993, TzOffset::from_hhmm(-700)),
///         message: b"commit (initial): first".to_vec(),
///         ..Default::default()
///     }),
/// }).unwrap();
/// let bytes = w.finish().unwrap();
/// let table = Table::from_bytes("t.ref", bytes).unwrap();
/// let log = table.logs().unwrap().next().unwrap().unwrap();
/// assert_eq!(log.update().unwrap().message, b"commit (initial): first\n");
/// ```
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    opts: WriteOptions,
    block_size: usize,
    min_update_index: u64,
    max_update_index: u64,
    records_added: bool,
    /// Offset of the block being built (includes padding still pending).
    next: u64,
    pending_padding: u64,
    block: BlockWriter,
    /// Whether `block` holds a block in progress (git's `block_writer != NULL`).
    block_active: bool,
    last_key: Vec<u8>,
    key: Vec<u8>,
    index: Vec<IndexRecord>,
    obj_index: BTreeMap<ObjectId, Vec<u64>>,
    /// The log records of the log block being built, to move some to the next block when
    /// the compressed block would be larger than git can read.
    log_block: Vec<LogRecord>,
    stats: WriterStats,
    ctx: CodecContext,
    header: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// A writer to `out` with `opts`. Errors from invalid options are reported by the first
    /// call that needs them (see [`Writer::try_new`] to check up front).
    pub fn new(out: W, opts: WriteOptions) -> Writer<W> {
        let block_size = opts.effective_block_size() as usize;
        Writer {
            out,
            opts,
            block_size,
            min_update_index: 0,
            max_update_index: 0,
            records_added: false,
            next: 0,
            pending_padding: 0,
            block: BlockWriter::new(block_size, opts.effective_restart_interval()),
            block_active: false,
            last_key: Vec::new(),
            key: Vec::new(),
            index: Vec::new(),
            obj_index: BTreeMap::new(),
            log_block: Vec::new(),
            stats: WriterStats::default(),
            ctx: CodecContext {
                hash_size: opts.hash.size(),
                min_update_index: 0,
                max_update_index: u64::MAX,
            },
            header: Vec::new(),
        }
    }

    /// Like [`Writer::new`], but rejects a block size above
    /// [`MAX_BLOCK_SIZE`](crate::table::MAX_BLOCK_SIZE) at once.
    pub fn try_new(out: W, opts: WriteOptions) -> Result<Writer<W>> {
        check_options(&opts)?;
        Ok(Writer::new(out, opts))
    }

    /// Set the update index range of the table. Ref records must lie within it and log
    /// records must not exceed the maximum. Must be called before the first record.
    pub fn set_limits(&mut self, min: u64, max: u64) -> Result<()> {
        if self.records_added {
            return Err(Error::api("set_limits called after records were added"));
        }
        if min > max {
            return Err(Error::api(format!(
                "min_update_index {min} is larger than max_update_index {max}"
            )));
        }
        self.min_update_index = min;
        self.max_update_index = max;
        self.ctx.min_update_index = min;
        Ok(())
    }

    /// The update index limits set by [`Writer::set_limits`] (`(0, 0)` before).
    pub fn limits(&self) -> (u64, u64) {
        (self.min_update_index, self.max_update_index)
    }

    /// What has been written so far.
    pub fn stats(&self) -> &WriterStats {
        &self.stats
    }

    fn check_id(&self, id: &ObjectId) -> Result<()> {
        if id.len() != self.opts.hash.size() {
            return Err(Error::api(format!(
                "object id of {} bytes in a {} table",
                id.len(),
                self.opts.hash.name()
            )));
        }
        Ok(())
    }

    fn begin_record(&mut self) -> Result<()> {
        check_options(&self.opts)?;
        self.records_added = true;
        Ok(())
    }

    /// Add a ref record. Names must be strictly increasing and non-empty.
    pub fn add_ref(&mut self, rec: &RefRecord) -> Result<()> {
        self.begin_record()?;
        if self.block_active && self.block.block_type() != BlockType::Ref {
            return Err(Error::api("ref records must be added before log records"));
        }
        if rec.update_index < self.min_update_index || rec.update_index > self.max_update_index {
            return Err(Error::api(format!(
                "ref {} has update index {} outside the table's limits {}..={}",
                String::from_utf8_lossy(&rec.refname),
                rec.update_index,
                self.min_update_index,
                self.max_update_index
            )));
        }
        for id in rec.value_id().into_iter().chain(rec.peeled_id()) {
            self.check_id(id)?;
        }
        self.add_record(rec)?;
        if self.opts.index_objects {
            let off = self.next;
            for id in rec.value_id().into_iter().chain(rec.peeled_id()) {
                let offsets = self.obj_index.entry(*id).or_default();
                if offsets.last() != Some(&off) {
                    offsets.push(off);
                }
            }
        }
        Ok(())
    }

    /// Add a log record, normalizing its message as git does unless
    /// [`WriteOptions::exact_log_message`] is set: trailing newlines are stripped, a message
    /// that still contains a newline is an [`ErrorKind::Api`] error, and one `\n` is
    /// appended.
    pub fn add_log(&mut self, rec: &LogRecord) -> Result<()> {
        match &rec.value {
            LogValue::Update(u) if !self.opts.exact_log_message => {
                let mut msg: &[u8] = &u.message;
                while let Some(stripped) = msg.strip_suffix(b"\n") {
                    msg = stripped;
                }
                if msg.contains(&b'\n') {
                    return Err(Error::api(format!(
                        "log message of {} has more than one line",
                        String::from_utf8_lossy(&rec.refname)
                    )));
                }
                if msg.len() + 1 == u.message.len() {
                    return self.add_log_verbatim(rec);
                }
                let mut normalized = rec.clone();
                if let LogValue::Update(nu) = &mut normalized.value {
                    nu.message.truncate(msg.len());
                    nu.message.push(b'\n');
                }
                self.add_log_verbatim(&normalized)
            }
            _ => self.add_log_verbatim(rec),
        }
    }

    /// Add a log record exactly as given (no message normalization). git writes reflog
    /// existence markers this way, with an empty message.
    pub fn add_log_verbatim(&mut self, rec: &LogRecord) -> Result<()> {
        self.begin_record()?;
        if rec.update_index > self.max_update_index {
            return Err(Error::api(format!(
                "log entry of {} has update index {} above the table's maximum {}",
                String::from_utf8_lossy(&rec.refname),
                rec.update_index,
                self.max_update_index
            )));
        }
        if let Some(u) = rec.update() {
            self.check_id(&u.old_id)?;
            self.check_id(&u.new_id)?;
        }
        if self.block_active && self.block.block_type() == BlockType::Ref {
            self.finish_public_section()?;
        }
        self.next -= self.pending_padding;
        self.pending_padding = 0;
        self.add_record(rec)?;
        self.log_block.push(rec.clone());
        Ok(())
    }

    fn check_key_order<R: Record>(&mut self, rec: &R) -> Result<()> {
        rec.write_key(&mut self.key);
        if self.key.is_empty() {
            return Err(Error::api("record with an empty key"));
        }
        if self.last_key >= self.key {
            return Err(Error::api(format!(
                "keys out of order: {:?} after {:?}",
                String::from_utf8_lossy(&self.key),
                String::from_utf8_lossy(&self.last_key)
            )));
        }
        Ok(())
    }

    /// git's `writer_add_record`: order check, then add to the current block, flushing it
    /// and retrying in a fresh block when it is full.
    fn add_record<R: Record>(&mut self, rec: &R) -> Result<()> {
        self.check_key_order(rec)?;
        std::mem::swap(&mut self.last_key, &mut self.key);
        self.place_record(rec)
    }

    /// Add `rec` to the current block, flushing full blocks. Terminates because every flush
    /// writes at least one record out.
    fn place_record<R: Record>(&mut self, rec: &R) -> Result<()> {
        loop {
            if !self.block_active {
                self.reinit_block(R::BLOCK_TYPE);
            }
            match self.block.add(rec, &self.ctx) {
                Err(e) if e.kind() == ErrorKind::EntryTooBig && self.block.entries() > 0 => {
                    self.flush_block()?;
                }
                Err(e) if e.kind() == ErrorKind::EntryTooBig => {
                    let mut key = Vec::new();
                    rec.write_key(&mut key);
                    return Err(Error::new(
                        ErrorKind::EntryTooBig,
                        format!(
                            "record {:?} does not fit in an empty {}-byte block",
                            String::from_utf8_lossy(&key),
                            self.block_size
                        ),
                    ));
                }
                other => return other,
            }
        }
    }

    fn reinit_block(&mut self, block_type: BlockType) {
        let header_off = if self.next == 0 {
            header_size(self.opts.hash.version())
        } else {
            0
        };
        self.block.reset(block_type, header_off);
        self.block_active = true;
        if block_type == BlockType::Log {
            self.log_block.clear();
        }
    }

    fn header_fields(&self) -> Header {
        Header::new(
            self.opts.hash,
            self.block_size as u32,
            self.min_update_index,
            self.max_update_index,
        )
    }

    fn write_header(&mut self) {
        self.header.clear();
        self.header_fields().encode(&mut self.header);
    }

    fn padded_write(&mut self, data_is_block: bool, padding: u64) -> Result<()> {
        if self.pending_padding > 0 {
            let zeros = vec![0u8; self.pending_padding as usize];
            self.out
                .write_all(&zeros)
                .map_err(|e| Error::io(e, "write table"))?;
        }
        self.pending_padding = padding;
        let res = if data_is_block {
            self.out.write_all(self.block.finished())
        } else {
            self.out.write_all(&self.header)
        };
        res.map_err(|e| Error::io(e, "write table"))
    }

    fn flush_block(&mut self) -> Result<()> {
        if !self.block_active || self.block.entries() == 0 {
            return Ok(());
        }
        let block_type = self.block.block_type();
        let mut carry = Vec::new();
        let mut raw_len = self.block.finish()?;
        if block_type == BlockType::Log {
            // Keep the compressed block within what git 2.47 reads (one block from its start).
            while raw_len > self.block_size && self.log_block.len() > 1 {
                carry.insert(0, self.log_block.pop().expect("more than one record"));
                let recs = std::mem::take(&mut self.log_block);
                let header_off = self.block.header_off();
                self.block.reset(BlockType::Log, header_off);
                for r in &recs {
                    self.block.add(r, &self.ctx)?;
                }
                self.log_block = recs;
                raw_len = self.block.finish()?;
            }
            if raw_len > self.block_size {
                return Err(Error::new(
                    ErrorKind::EntryTooBig,
                    format!(
                        "log record compresses to a {raw_len}-byte block, larger than the {}-byte block size",
                        self.block_size
                    ),
                ));
            }
        }
        let padding = if !self.opts.unpadded && block_type != BlockType::Log {
            (self.block_size - raw_len) as u64
        } else {
            0
        };
        if self.next == 0 {
            self.write_header();
            let header = std::mem::take(&mut self.header);
            self.block.set_header(&header);
            self.header = header;
        }
        self.padded_write(true, padding)?;
        let entries = self.block.entries() as u64;
        let restarts = self.block.restart_count() as u64;
        let last_key = self.block.last_key().to_vec();
        self.index.push(IndexRecord {
            last_key,
            offset: self.next,
        });
        self.stats.blocks += 1;
        let next = self.next;
        let s = self.stats.section_mut(block_type);
        if s.blocks == 0 {
            s.offset = next;
        }
        s.blocks += 1;
        s.entries += entries;
        s.restarts += restarts;
        self.next += padding + raw_len as u64;
        self.block_active = false;
        for r in carry {
            // The carried records are in key order and follow the block just written.
            self.place_record(&r)?;
            self.log_block.push(r);
        }
        Ok(())
    }

    /// Flush the current block, and the block of records a log flush carried over.
    fn flush_all(&mut self) -> Result<()> {
        while self.block_active && self.block.entries() > 0 {
            self.flush_block()?;
        }
        Ok(())
    }

    /// git's `writer_finish_section`: flush, then write index levels while the last level
    /// has more blocks than the threshold.
    fn finish_section(&mut self) -> Result<()> {
        let block_type = self.block.block_type();
        let threshold = if self.opts.unpadded { 1 } else { 3 };
        let before_blocks = self.stats.index.blocks;
        let mut index_start = 0;
        let mut max_level = 0;
        self.flush_all()?;
        while self.index.len() > threshold {
            max_level += 1;
            index_start = self.next;
            self.reinit_block(BlockType::Index);
            self.last_key.clear();
            let level = std::mem::take(&mut self.index);
            for rec in &level {
                self.add_record(rec)?;
            }
            self.flush_all()?;
            // A block that holds a single index record never shrinks the level: the index
            // would grow forever.
            if self.index.len() >= level.len() {
                return Err(Error::new(
                    ErrorKind::EntryTooBig,
                    format!(
                        "a {}-byte block holds too few index records to build an index",
                        self.block_size
                    ),
                ));
            }
        }
        self.index.clear();
        let index_blocks = self.stats.index.blocks - before_blocks;
        let s = self.stats.section_mut(block_type);
        s.index_blocks = index_blocks;
        s.index_offset = index_start;
        s.max_index_level = max_level;
        self.last_key.clear();
        Ok(())
    }

    fn finish_public_section(&mut self) -> Result<()> {
        if !self.block_active {
            return Ok(());
        }
        let block_type = self.block.block_type();
        self.finish_section()?;
        if block_type == BlockType::Ref
            && self.opts.index_objects
            && self.stats.refs.index_blocks > 0
        {
            self.write_obj_section()?;
        }
        self.obj_index.clear();
        self.block_active = false;
        Ok(())
    }

    fn write_obj_section(&mut self) -> Result<()> {
        let mut max = 1;
        let mut prev: Option<&ObjectId> = None;
        for id in self.obj_index.keys() {
            if let Some(p) = prev {
                max = max.max(crate::codec::varint::common_prefix(
                    p.as_bytes(),
                    id.as_bytes(),
                ));
            }
            prev = Some(id);
        }
        // The footer has 5 bits for the length. Two SHA-256 ids sharing 31 bytes would ask
        // for 32, which git writes as a corrupt footer; we cap at 31 and merge the ids that
        // then share a key (lookups check the full id in the ref blocks anyway).
        let id_len = (max + 1).min(31);
        self.stats.obj_id_len = id_len as u8;
        self.reinit_block(BlockType::Obj);
        let mut objs: Vec<(Vec<u8>, Vec<u64>)> = Vec::with_capacity(self.obj_index.len());
        for (id, offsets) in std::mem::take(&mut self.obj_index) {
            let key = &id.as_bytes()[..id_len.min(id.len())];
            match objs.last_mut() {
                Some((k, offs)) if k.as_slice() == key => {
                    offs.extend(offsets);
                    offs.sort_unstable();
                    offs.dedup();
                }
                _ => objs.push((key.to_vec(), offsets)),
            }
        }
        let mut rec = ObjRecord::default();
        for (key, offsets) in objs {
            rec.hash_prefix = key;
            rec.offsets = offsets;
            match self.block.add(&rec, &self.ctx) {
                Err(e) if e.kind() == ErrorKind::EntryTooBig => {}
                other => {
                    other?;
                    continue;
                }
            }
            self.flush_block()?;
            self.reinit_block(BlockType::Obj);
            match self.block.add(&rec, &self.ctx) {
                Err(e) if e.kind() == ErrorKind::EntryTooBig => {
                    // Too many positions for one block: store the "scan all refs" form.
                    rec.offsets.clear();
                    self.block.add(&rec, &self.ctx)?;
                }
                other => other?,
            }
        }
        self.finish_section()
    }

    /// Finish the table: flush the last section, write the footer, and return the output.
    ///
    /// A table without records is still written (header and footer), but the result is an
    /// [`ErrorKind::EmptyTable`] error, as in git, so callers can skip adding it to a stack.
    pub fn finish(mut self) -> Result<W> {
        self.close()?;
        Ok(self.out)
    }

    /// Like [`Writer::finish`], returning the stats too.
    pub fn finish_with_stats(mut self) -> Result<(W, WriterStats)> {
        self.close()?;
        Ok((self.out, self.stats))
    }

    fn close(&mut self) -> Result<()> {
        check_options(&self.opts)?;
        self.finish_public_section()?;
        let empty = self.next == 0;
        self.pending_padding = 0;
        self.write_header();
        if empty {
            self.padded_write(false, 0)?;
        }
        let fields = Footer {
            header: self.header_fields(),
            ref_index_offset: self.stats.refs.index_offset,
            obj_offset: self.stats.objs.offset,
            obj_id_len: self.stats.obj_id_len,
            obj_index_offset: self.stats.objs.index_offset,
            log_offset: self.stats.logs.offset,
            log_index_offset: self.stats.logs.index_offset,
            crc: 0,
        };
        let mut footer = Vec::with_capacity(fields.size());
        fields.encode(&mut footer);
        self.out
            .write_all(&footer)
            .and_then(|_| self.out.flush())
            .map_err(|e| Error::io(e, "write table"))?;
        if empty {
            return Err(Error::new(ErrorKind::EmptyTable, "wrote an empty table"));
        }
        Ok(())
    }
}

fn check_options(opts: &WriteOptions) -> Result<()> {
    if opts.block_size > MAX_BLOCK_SIZE {
        return Err(Error::api(format!(
            "block size {} exceeds the maximum of {MAX_BLOCK_SIZE}",
            opts.block_size
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ObjectId, RefValue};

    /// Four refs whose names are longer than half a block: each index block holds one
    /// record, so an index level is as large as the one below it. git's writer writes
    /// such levels forever (the gate's registry: `writer-index-never-shrinks`); ours
    /// refuses the table.
    fn four_long_names(opts: WriteOptions, len: usize) -> Result<Vec<u8>> {
        let mut w = Writer::new(Vec::new(), opts);
        w.set_limits(1, 1)?;
        let long = "l".repeat(len);
        for i in 1..=4 {
            let value = RefValue::Object(ObjectId::null(HashId::Sha1));
            w.add_ref(&RefRecord::new(format!("refs/heads/{i}{long}"), 1, value))?;
        }
        w.finish()
    }

    #[test]
    fn an_index_that_cannot_shrink_is_refused_not_written_forever() {
        let small = WriteOptions {
            block_size: 300,
            restart_interval: 1,
            ..WriteOptions::default()
        };
        for (opts, len) in [(small, 150), (WriteOptions::default(), 2100)] {
            let e = four_long_names(opts, len).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::EntryTooBig, "{e}");
            assert!(e.to_string().contains("too few index records"), "{e}");
        }
        // Names that fit two index records to a block build an index that shrinks.
        assert!(four_long_names(small, 100).is_ok());
    }
}
