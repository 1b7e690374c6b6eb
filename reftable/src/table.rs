//! Reading one table: header, footer and CRC checks, sections, index descent, and the table
//! iterators.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use crate::bytes::Bytes;
use crate::codec::block::{parse_block, peek_log_key, BlockCursor, BlockInfo};
use crate::codec::format::{header_size, BlockType, Footer};
use crate::codec::record::{CodecContext, IndexRecord, LogRecord, ObjRecord, Record, RefRecord};
use crate::error::{Error, Result};
use crate::hash::{HashId, ObjectId};
use crate::leaf_index::{LeafIndex, Source};
use crate::stats::{Stats, StatsSink};

/// Where one section of a table is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Section {
    /// Whether the table has this section.
    pub present: bool,
    /// File offset of the section's first block.
    pub offset: u64,
    /// File offset of the root level of the section's index, 0 without an index.
    pub index_offset: u64,
}

/// What a table's header and footer say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// Format version (1 or 2).
    pub version: u8,
    /// The hash of the object ids.
    pub hash: HashId,
    /// Block size from the header (0 means unaligned).
    pub block_size: u32,
    /// Smallest update index of the ref records.
    pub min_update_index: u64,
    /// Largest update index of the records.
    pub max_update_index: u64,
    /// File size.
    pub size: u64,
    /// File offset of the footer (the end of the blocks).
    pub footer_offset: u64,
    /// The ref section.
    pub refs: Section,
    /// The obj section.
    pub objs: Section,
    /// Length of the abbreviated object ids in obj records.
    pub obj_id_len: u8,
    /// The log section.
    pub logs: Section,
    /// The stored CRC-32 of the footer.
    pub footer_crc: u32,
}

impl TableInfo {
    /// Header size of this table.
    pub fn header_size(&self) -> usize {
        header_size(self.version)
    }

    /// The section holding records of block type `t` (index blocks belong to the
    /// section they index).
    pub fn section(&self, t: BlockType) -> Option<&Section> {
        match t {
            BlockType::Ref => Some(&self.refs),
            BlockType::Log => Some(&self.logs),
            BlockType::Obj => Some(&self.objs),
            BlockType::Index => None,
        }
    }
}

struct TableInner {
    name: PathBuf,
    bytes: Bytes,
    info: TableInfo,
    sink: StatsSink,
    /// Per section (refs, objs, logs): indexed seeks so far, and the leaf index built
    /// after [`LEAF_INDEX_AFTER`] of them (`None` inside: the index is not a clean tree).
    indexed_seeks: [AtomicU32; 3],
    leaf: [OnceLock<Option<LeafIndex>>; 3],
}

/// Indexed seeks of one section after which its leaf index is built: a process that
/// looks up a few names never decodes the whole index, one that looks up many pays for it
/// once.
const LEAF_INDEX_AFTER: u32 = 64;

fn section_slot(t: BlockType) -> usize {
    match t {
        BlockType::Ref => 0,
        BlockType::Obj => 1,
        _ => 2,
    }
}

/// One reftable, read-only. Cheap to clone: clones share the bytes.
///
/// ```
/// use reftable::{ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
///
/// let mut w = Writer::new(Vec::new(), WriteOptions::default());
/// w.set_limits(1, 1).unwrap();
/// let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
/// w.add_ref(&RefRecord::new("refs/heads/main", 1, RefValue::Object(id))).unwrap();
/// let bytes = w.finish().unwrap();
///
/// let table = Table::from_bytes("example.ref", bytes).unwrap();
/// let main = table.read_ref(b"refs/heads/main").unwrap().unwrap();
/// assert_eq!(main.value_id(), Some(&id));
/// ```
#[derive(Clone)]
pub struct Table {
    inner: Arc<TableInner>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.inner.name)
            .field("info", &self.inner.info)
            .finish()
    }
}

fn corrupt(offset: u64, msg: impl Into<String>) -> Error {
    Error::format(msg).at_offset(offset)
}

/// Check a table's header and footer and work out where its sections are.
pub fn parse_info(data: &[u8]) -> Result<TableInfo> {
    let footer = Footer::decode(data)?;
    let header = footer.header;
    let hsize = header.size();
    let footer_offset = data.len() - footer.size();
    let first_type = if hsize < footer_offset {
        BlockType::from_byte(data[hsize])
    } else {
        None
    };
    if footer.obj_offset > 0 && footer.obj_id_len == 0 {
        return Err(corrupt(
            (footer_offset + hsize + 8) as u64,
            "obj section present with an object id length of 0",
        ));
    }
    Ok(TableInfo {
        version: header.version,
        hash: header.hash,
        block_size: header.block_size,
        min_update_index: header.min_update_index,
        max_update_index: header.max_update_index,
        size: data.len() as u64,
        footer_offset: footer_offset as u64,
        refs: Section {
            present: first_type == Some(BlockType::Ref),
            offset: 0,
            index_offset: footer.ref_index_offset,
        },
        objs: Section {
            present: footer.obj_offset > 0,
            offset: footer.obj_offset,
            index_offset: footer.obj_index_offset,
        },
        obj_id_len: footer.obj_id_len,
        logs: Section {
            present: first_type == Some(BlockType::Log) || footer.log_offset > 0,
            offset: footer.log_offset,
            index_offset: footer.log_index_offset,
        },
        footer_crc: footer.crc,
    })
}

impl Table {
    /// Open a table file (memory-mapped when large enough).
    pub fn open(path: impl AsRef<Path>) -> Result<Table> {
        let path = path.as_ref();
        let bytes = Bytes::open(path)?;
        Table::new(path.to_path_buf(), bytes)
    }

    /// A table from bytes in memory; `name` is used in error messages.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: Vec<u8>) -> Result<Table> {
        Table::new(name.as_ref().to_path_buf(), Bytes::Owned(bytes))
    }

    fn new(name: PathBuf, bytes: Bytes) -> Result<Table> {
        let info = parse_info(bytes.as_slice()).map_err(|e| e.in_file(&name))?;
        let sink = StatsSink::default();
        sink.add(&Stats {
            tables_opened: 1,
            ..Stats::default()
        });
        Ok(Table {
            inner: Arc::new(TableInner {
                name,
                bytes,
                info,
                sink,
                indexed_seeks: Default::default(),
                leaf: Default::default(),
            }),
        })
    }

    /// The file name (or the name given to [`Table::from_bytes`]).
    pub fn name(&self) -> &Path {
        &self.inner.name
    }

    /// Header and footer fields.
    pub fn info(&self) -> &TableInfo {
        &self.inner.info
    }

    /// The table's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.inner.bytes.as_slice()
    }

    /// The bytes from the block at `offset` to the footer, and how many of them before the
    /// block header are the file header (the first block's); `None` at or past the footer.
    pub(crate) fn blocks_from(&self, offset: u64) -> Option<(&[u8], usize)> {
        let info = self.info();
        if offset >= info.footer_offset {
            return None;
        }
        let header_off = if offset == 0 { info.header_size() } else { 0 };
        Some((
            &self.bytes()[offset as usize..info.footer_offset as usize],
            header_off,
        ))
    }

    /// The hash of the table's object ids.
    pub fn hash(&self) -> HashId {
        self.inner.info.hash
    }

    /// Smallest update index of the table.
    pub fn min_update_index(&self) -> u64 {
        self.inner.info.min_update_index
    }

    /// Largest update index of the table.
    pub fn max_update_index(&self) -> u64 {
        self.inner.info.max_update_index
    }

    /// What the iterators over this table have done so far (counted when they are dropped).
    pub fn stats(&self) -> Stats {
        self.inner.sink.get()
    }

    /// The context records of this table are decoded with.
    pub fn codec_context(&self) -> CodecContext {
        CodecContext {
            hash_size: self.inner.info.hash.size(),
            min_update_index: self.inner.info.min_update_index,
            max_update_index: self.inner.info.max_update_index,
        }
    }

    fn err(&self, e: Error) -> Error {
        e.in_file(&self.inner.name)
    }

    /// An iterator over every record of `R`'s section, in key order.
    pub fn iter<R: Record>(&self) -> Result<TableIter<R>> {
        let mut it = TableIter::new(self.clone());
        let sec = *self.section_of::<R>()?;
        if sec.present {
            it.start_section(sec.offset).map_err(|e| self.err(e))?;
        } else {
            it.done = true;
        }
        Ok(it)
    }

    /// An iterator over `R`'s section that reads nothing until it is positioned with
    /// [`TableIter::seek`] (a merged iterator positions its tables one at a time, so that
    /// it never holds every table's first block at once).
    pub(crate) fn unpositioned<R: Record>(&self) -> Result<TableIter<R>> {
        self.section_of::<R>()?;
        let mut it = TableIter::new(self.clone());
        it.done = true;
        Ok(it)
    }

    /// An iterator over `R`'s section starting at the first record whose key is `>= key`.
    pub fn seek<R: Record>(&self, key: &[u8]) -> Result<TableIter<R>> {
        self.section_of::<R>()?;
        let mut it = TableIter::new(self.clone());
        it.seek(key)?;
        Ok(it)
    }

    /// The leaf index of `R`'s section once enough indexed seeks asked for it.
    fn leaf_index<R: Record>(&self, root: u64) -> Option<&LeafIndex> {
        let slot = section_slot(R::BLOCK_TYPE);
        let cell = &self.inner.leaf[slot];
        if let Some(built) = cell.get() {
            return built.as_ref();
        }
        if self.inner.indexed_seeks[slot].fetch_add(1, Ordering::Relaxed) < LEAF_INDEX_AFTER {
            return None;
        }
        cell.get_or_init(|| {
            let info = &self.inner.info;
            let ctx = self.codec_context();
            let src = Source {
                blocks: &self.bytes()[..info.footer_offset as usize],
                header_size: info.header_size(),
                block_size: info.block_size as usize,
                section: R::BLOCK_TYPE,
                ctx: &ctx,
            };
            let mut work = Stats::default();
            let leaf = LeafIndex::build(&src, root, &mut work);
            self.inner.sink.add(&Stats {
                index_entries_cached: work.records_decoded,
                ..Stats::default()
            });
            leaf
        })
        .as_ref()
    }

    fn section_of<R: Record>(&self) -> Result<&Section> {
        self.inner
            .info
            .section(R::BLOCK_TYPE)
            .ok_or_else(|| Error::api("index records have no section of their own to iterate"))
    }

    /// Every ref record, tombstones included, in name order.
    pub fn refs(&self) -> Result<TableIter<RefRecord>> {
        self.iter()
    }

    /// Ref records from the first name `>= name`.
    pub fn seek_ref(&self, name: &[u8]) -> Result<TableIter<RefRecord>> {
        self.seek(name)
    }

    /// The live value of ref `name` in this table: `None` when the table has no record for
    /// it or a tombstone (see [`Table::ref_record`] for tombstones).
    pub fn read_ref(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        Ok(self.ref_record(name)?.filter(|r| !r.is_deletion()))
    }

    /// The record stored for `name`, tombstones included.
    pub fn ref_record(&self, name: &[u8]) -> Result<Option<RefRecord>> {
        let mut it = self.seek_ref(name)?;
        Ok(it.next_record()?.filter(|r| r.refname == name).cloned())
    }

    /// Every log record, tombstones included: refs in name order, newest first per ref.
    pub fn logs(&self) -> Result<TableIter<LogRecord>> {
        self.iter()
    }

    /// Log records from the newest entry of `name` on (continuing into later refs).
    pub fn seek_log(&self, name: &[u8]) -> Result<TableIter<LogRecord>> {
        self.seek(&LogRecord::seek_key(name, u64::MAX))
    }

    /// Log records from the entry of `name` with the largest update index `<= update_index`.
    pub fn seek_log_at(&self, name: &[u8], update_index: u64) -> Result<TableIter<LogRecord>> {
        self.seek(&LogRecord::seek_key(name, update_index))
    }

    /// Refs whose value or peeled value is `id`, in table order, tombstones excluded.
    /// Uses the obj section when the table has one, else scans every ref.
    pub fn refs_for(&self, id: &ObjectId) -> Result<Vec<RefRecord>> {
        let info = &self.inner.info;
        let matches = |r: &RefRecord| r.value_id() == Some(id) || r.peeled_id() == Some(id);
        let scan_all = || -> Result<Vec<RefRecord>> {
            let mut out = Vec::new();
            let mut it = self.refs()?;
            while let Some(r) = it.next_record()? {
                if matches(r) {
                    out.push(r.clone());
                }
            }
            Ok(out)
        };
        if !info.objs.present {
            return scan_all();
        }
        let len = (info.obj_id_len as usize).min(id.len());
        let prefix = &id.as_bytes()[..len];
        let mut it = self.seek::<ObjRecord>(prefix)?;
        let offsets = match it.next_record()? {
            Some(o) if o.hash_prefix == prefix => o.offsets.clone(),
            _ => return Ok(Vec::new()),
        };
        if offsets.is_empty() {
            return scan_all();
        }
        let mut out = Vec::new();
        let mut refs = TableIter::<RefRecord>::new(self.clone());
        let mut next_free = 0u64;
        for off in offsets {
            // Each listed block is visited once: an offset inside a block already visited
            // is corrupt (and would make the lookup quadratic).
            if off < next_free {
                return Err(self.err(corrupt(
                    off,
                    "obj record lists a position inside a ref block it already listed",
                )));
            }
            refs.load_single_block(off).map_err(|e| self.err(e))?;
            if let Some(b) = refs.block {
                next_free = b.offset + b.full_size as u64;
            }
            while let Some(r) = refs.next_in_block().map_err(|e| self.err(e))? {
                if matches(r) {
                    out.push(r.clone());
                }
            }
        }
        Ok(out)
    }

    /// Decode every record of the block described by `info` (from [`Table::blocks`]).
    pub fn block_records<R: Record>(&self, info: &BlockInfo) -> Result<Vec<R>> {
        let mut it = TableIter::<R>::new(self.clone());
        it.load_block_at(info.offset, None)
            .map_err(|e| self.err(e))?
            .ok_or_else(|| self.err(corrupt(info.offset, "no block at this offset")))?;
        let mut out = Vec::new();
        while let Some(r) = it.next_in_block().map_err(|e| self.err(e))? {
            out.push(r.clone());
        }
        Ok(out)
    }
}

/// An iterator over one section of a table, in key order.
///
/// [`TableIter::next_record`] lends each record without copying; the [`Iterator`]
/// implementation clones it.
#[derive(Debug)]
pub struct TableIter<R: Record> {
    table: Table,
    ctx: CodecContext,
    block: Option<BlockInfo>,
    cursor: BlockCursor,
    /// A second cursor for looking at the next block's first key during a linear seek,
    /// kept so repeated seeks reuse its buffer.
    probe: BlockCursor,
    inflated: Vec<u8>,
    spare: Vec<u8>,
    rec: R,
    pending: bool,
    done: bool,
    /// The current (log) block's inflated contents were let go while records remain; they
    /// are inflated again before the next read.
    evicted: bool,
    /// The current record's big value was let go while the iterator waited in a merged
    /// queue; [`TableIter::restore_current`] decodes it again.
    rec_evicted: bool,
    /// The current record is the first of the log block at this offset, and only its key is
    /// known (from [`peek_log_key`]): the block is inflated when the record is needed.
    lazy: Option<u64>,
    /// Big buffers this iterator let go, kept for a merged iterator to hand on to another
    /// table's iterator (see [`TableIter::recycle_with`]) instead of freeing them: a fresh
    /// 16 MiB buffer per table costs 4,096 page faults.
    recycling: bool,
    recycled: Vec<u8>,
    recycled_rec: Option<R>,
    /// The key of the index entry an indexed seek followed (reused between seeks): every
    /// key of the block it points at is at most this, which catches an entry pointing at a
    /// later block.
    bound: Vec<u8>,
    stats: Stats,
}

/// An inflated log block buffer larger than this is let go as soon as the iterator no
/// longer needs it, so idle iterators over big blocks do not hold their memory.
const KEEP_INFLATED: usize = 1 << 20;

#[inline]
fn block_data<'a>(table: &'a Table, info: &BlockInfo, inflated: &'a [u8]) -> &'a [u8] {
    if info.block_type == BlockType::Log {
        inflated
    } else {
        let start = info.offset as usize;
        &table.bytes()[start..start + info.block_len]
    }
}

impl<R: Record> TableIter<R> {
    fn new(table: Table) -> TableIter<R> {
        let ctx = table.codec_context();
        TableIter {
            table,
            ctx,
            block: None,
            cursor: BlockCursor::default(),
            probe: BlockCursor::default(),
            inflated: Vec::new(),
            spare: Vec::new(),
            rec: R::default(),
            pending: false,
            done: false,
            evicted: false,
            rec_evicted: false,
            lazy: None,
            recycling: false,
            recycled: Vec::new(),
            recycled_rec: None,
            bound: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// The record [`TableIter::next_record`] returned last.
    pub(crate) fn current(&self) -> &R {
        &self.rec
    }

    /// Bytes of inflated log data this iterator holds.
    pub(crate) fn inflated_bytes(&self) -> usize {
        self.inflated.capacity() + self.spare.capacity()
    }

    /// Heap bytes a merged iterator's budget charges this iterator: its inflated log data
    /// and the value of its current record (a reflog message can be as big as its block).
    pub(crate) fn held_bytes(&self) -> usize {
        self.inflated_bytes() + self.rec.value_bytes()
    }

    /// Let go of the inflated log data; the current block is inflated again when the
    /// iterator reads on. For merged iterators keeping memory within a budget.
    pub(crate) fn evict_inflated(&mut self) {
        if let Some(info) = self.block {
            if info.block_type == BlockType::Log && !self.cursor.at_end(&info) {
                self.evicted = true;
            }
        }
        self.inflated = Vec::new();
        self.spare = Vec::new();
        // A waiting record with a big value (a 16 MiB reflog message) goes too: a merged
        // iterator over many tables then holds one such record, not one per table. An
        // ended iterator's last record, which nothing reads before the next seek, goes
        // whatever its size.
        if self.done {
            self.rec = R::default();
        } else if self.block.is_some() && self.rec.value_bytes() > KEEP_INFLATED {
            self.rec = R::default();
            self.rec_evicted = true;
        }
    }

    /// Decode the current record again if [`TableIter::evict_inflated`] let its value go
    /// (inflating its block again when that went too).
    pub(crate) fn restore_current(&mut self) -> Result<()> {
        if !self.rec_evicted {
            return Ok(());
        }
        if let Some(offset) = self.lazy.take() {
            return self.load_peeked(offset);
        }
        let Some(info) = self.block else {
            return Err(Error::api("no current record to decode again"));
        };
        if self.evicted || self.inflated.is_empty() {
            self.reinflate(&info)?;
            self.evicted = false;
        }
        self.cursor
            .redecode(
                &info,
                &self.inflated,
                &mut self.rec,
                &self.ctx,
                &mut self.stats,
            )
            .map_err(|e| e.in_file(self.table.name()))?;
        self.rec_evicted = false;
        self.release_if_done();
        Ok(())
    }

    /// After a record was decoded from the current block: a big inflated buffer whose block
    /// has no record left is let go right away.
    fn release_if_done(&mut self) {
        if let Some(info) = self.block {
            if info.block_type == BlockType::Log
                && self.inflated.capacity() > KEEP_INFLATED
                && self.cursor.at_end(&info)
            {
                let b = std::mem::take(&mut self.inflated);
                self.let_go(b);
            }
        }
        if self.spare.capacity() > KEEP_INFLATED {
            let b = std::mem::take(&mut self.spare);
            self.let_go(b);
        }
    }

    /// Inflate the current block again if [`TableIter::evict_inflated`] let it go.
    fn restore(&mut self) -> Result<()> {
        if !self.evicted {
            return Ok(());
        }
        self.evicted = false;
        match self.block {
            Some(info) => self.reinflate(&info),
            None => Ok(()),
        }
    }

    /// Inflate the current log block `info` again into the iterator's buffer.
    fn reinflate(&mut self, info: &BlockInfo) -> Result<()> {
        if self
            .parse_at(info.offset, Some(BlockType::Log), false)?
            .is_none()
        {
            return Err(corrupt(info.offset, "log block changed while being read"));
        }
        Ok(())
    }

    /// Position the iterator at the first record whose key is `>= key` again, reusing its
    /// buffers (a caller that seeks many times keeps one iterator). After an error the
    /// iterator ends.
    ///
    /// ```
    /// # use reftable::{ObjectId, RefRecord, RefValue, Table, Writer, WriteOptions};
    /// # let mut w = Writer::new(Vec::new(), WriteOptions::default());
    /// # w.set_limits(1, 1).unwrap();
    /// # let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
    /// # for n in ["refs/heads/a", "refs/heads/b", "refs/tags/v1"] {
    /// #     w.add_ref(&RefRecord::new(n, 1, RefValue::Object(id))).unwrap();
    /// # }
    /// # let table = Table::from_bytes("t.ref", w.finish().unwrap()).unwrap();
    /// let mut it = table.seek_ref(b"refs/heads/b").unwrap();
    /// assert_eq!(it.next_record().unwrap().unwrap().refname, b"refs/heads/b");
    /// it.seek(b"refs/tags/").unwrap();
    /// assert_eq!(it.next_record().unwrap().unwrap().refname, b"refs/tags/v1");
    /// ```
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.block = None;
        self.pending = false;
        self.done = false;
        self.evicted = false;
        self.rec_evicted = false;
        self.lazy = None;
        let table = self.table.clone();
        let sec = *table.section_of::<R>()?;
        if !sec.present {
            self.done = true;
            return Ok(());
        }
        // A full scan starts at the section start, never through the index: a damaged
        // index cannot hide records from it or add some.
        let r = if sec.index_offset != 0 && !key.is_empty() {
            match table.leaf_index::<R>(sec.index_offset) {
                Some(leaf) => self.leaf_seek(leaf, key),
                None => self.indexed_seek(sec.index_offset, key),
            }
        } else {
            self.linear_seek(sec.offset, key)
        };
        if r.is_err() {
            self.done = true;
        }
        r.map_err(|e| table.err(e))
    }

    /// Position like [`TableIter::seek`], except that where the seek would stop at the first
    /// record of the first log block and that block inflates to more than 1 MiB, only that
    /// record's key is read, from the start of the block's zlib stream: a merged iterator queues the record by key and has
    /// [`TableIter::restore_current`] inflate the block when the record comes up. Over
    /// many tables whose single log block inflates to 16 MiB, each block is then inflated
    /// once, not once to queue it and again when it is read.
    pub(crate) fn seek_lazy(&mut self, key: &[u8]) -> Result<()> {
        if R::BLOCK_TYPE == BlockType::Log && self.peek_first(key)? {
            return Ok(());
        }
        self.seek(key)
    }

    /// The peek of [`TableIter::seek_lazy`]: whether the iterator is now positioned lazily.
    fn peek_first(&mut self, key: &[u8]) -> Result<bool> {
        let table = self.table.clone();
        let sec = *table.section_of::<R>().map_err(|e| table.err(e))?;
        // An indexed seek for a key lands in some later block; only a seek that starts at the
        // section start can stop at its first record.
        if !sec.present || (sec.index_offset != 0 && !key.is_empty()) {
            return Ok(false);
        }
        let Some((data, header_off)) = table.blocks_from(sec.offset) else {
            return Ok(false);
        };
        let mut first = std::mem::take(&mut self.bound);
        // Only blocks over KEEP_INFLATED are peeked: a smaller one is inflated in full and
        // kept at positioning, as a peek would inflate most of it twice.
        let peeked = peek_log_key(data, header_off, KEEP_INFLATED, &mut first)
            && first.as_slice() >= key
            && self.rec.decode(&first, 0, &[], &self.ctx).is_ok();
        self.bound = first;
        if !peeked {
            return Ok(false);
        }
        self.block = None;
        self.done = false;
        self.evicted = false;
        self.inflated = Vec::new();
        self.pending = true;
        self.rec_evicted = true;
        self.lazy = Some(sec.offset);
        Ok(true)
    }

    /// Inflate the log block at `offset` whose first key was peeked, and decode that first
    /// record in full; the iterator is then as [`TableIter::seek`] would have left it after
    /// returning that record.
    fn load_peeked(&mut self, offset: u64) -> Result<()> {
        let mut key = std::mem::take(&mut self.bound);
        self.rec.write_key(&mut key);
        if let Some(r) = self.recycled_rec.take() {
            // Its buffers (a big message) are reused by the decode.
            self.rec = r;
        }
        let r = (|| {
            let Some(b) = self.load_block_at(offset, Some(BlockType::Log))? else {
                return Err(corrupt(offset, "log block changed while being read"));
            };
            let data = block_data(&self.table, &b, &self.inflated);
            if !self
                .cursor
                .next(&b, data, &mut self.rec, &self.ctx, &mut self.stats)?
                || self.cursor.key() != key.as_slice()
            {
                return Err(corrupt(offset, "log block changed while being read"));
            }
            Ok(())
        })();
        self.bound = key;
        self.rec_evicted = false;
        if r.is_err() {
            self.done = true;
            self.pending = false;
        }
        self.release_if_done();
        r.map_err(|e| self.table.err(e))
    }

    /// A big buffer this iterator no longer needs: kept for recycling when a merged
    /// iterator asked for that, else freed.
    fn let_go(&mut self, b: Vec<u8>) {
        if self.recycling && b.capacity() > self.recycled.capacity() {
            self.recycled = b;
        }
    }

    /// Swap buffers with a merged iterator's pool around one step of this iterator: hand
    /// in `buf` and `rec` (used instead of allocating when this iterator inflates a block
    /// or decodes its lazily peeked record), then take back what it let go. The pool keeps
    /// the biggest of each; at most one block and one record beyond what the iterators
    /// hold.
    pub(crate) fn recycle_with<T>(
        &mut self,
        buf: &mut Vec<u8>,
        rec: &mut Option<R>,
        step: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.recycling = true;
        self.recycled = std::mem::take(buf);
        self.recycled_rec = rec.take();
        let r = step(self);
        *buf = std::mem::take(&mut self.recycled);
        *rec = self.recycled_rec.take();
        self.recycling = false;
        r
    }

    /// Move to the next record as [`TableIter::next_record`] does, but leave a lazily
    /// positioned record (see [`TableIter::seek_lazy`]) unread: `true` when there is a
    /// current record, whose key at least is known.
    pub(crate) fn next_key(&mut self) -> Result<bool> {
        if self.pending && self.lazy.is_some() {
            self.pending = false;
            return Ok(true);
        }
        Ok(self.next_record()?.is_some())
    }

    /// The table this iterator reads.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// What this iterator has done so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Parse the block at `offset` into `buf`; `Ok(None)` past the end or at another type.
    fn parse_at(
        &mut self,
        offset: u64,
        want: Option<BlockType>,
        use_spare: bool,
    ) -> Result<Option<BlockInfo>> {
        let Some((data, header_off)) = self.table.blocks_from(offset) else {
            return Ok(None);
        };
        let info = self.table.info();
        let buf = if use_spare {
            &mut self.spare
        } else {
            &mut self.inflated
        };
        if buf.capacity() == 0 {
            std::mem::swap(buf, &mut self.recycled);
        }
        parse_block(
            data,
            offset,
            header_off,
            info.block_size as usize,
            want,
            buf,
            &mut self.stats,
        )
    }

    /// Make the block at `offset` the current one, positioned before its first record.
    fn load_block_at(&mut self, offset: u64, want: Option<BlockType>) -> Result<Option<BlockInfo>> {
        let b = self.parse_at(offset, want, false)?;
        self.block = b;
        self.evicted = false;
        if let Some(b) = &b {
            self.cursor.reset(b);
        }
        Ok(b)
    }

    /// Make the ref block at `offset` current, for obj index lookups.
    fn load_single_block(&mut self, offset: u64) -> Result<()> {
        match self.load_block_at(offset, Some(R::BLOCK_TYPE))? {
            Some(_) => Ok(()),
            None => Err(corrupt(
                offset,
                "obj record points at an offset that is not a ref block",
            )),
        }
    }

    fn start_section(&mut self, offset: u64) -> Result<()> {
        if offset >= self.table.info().footer_offset {
            return Err(corrupt(offset, "section offset points past the last block"));
        }
        if self.load_block_at(offset, Some(R::BLOCK_TYPE))?.is_none() {
            self.done = true;
        }
        Ok(())
    }

    /// Seek by reading the first key of each block of the section in turn.
    fn linear_seek(&mut self, offset: u64, key: &[u8]) -> Result<()> {
        self.start_section(offset)?;
        let Some(cur) = self.block else {
            return Ok(());
        };
        self.linear_seek_from(cur, key)
    }

    /// Linear seek from the loaded block `cur`: move on while the next block's first key is
    /// not past `key`, then binary-search inside the block.
    fn linear_seek_from(&mut self, mut cur: BlockInfo, key: &[u8]) -> Result<()> {
        loop {
            let next_off = cur.offset + cur.full_size as u64;
            let Some(next) = self.parse_at(next_off, Some(R::BLOCK_TYPE), true)? else {
                break;
            };
            let data = block_data(&self.table, &next, &self.spare);
            let c = &mut self.probe;
            c.reset(&next);
            if !c.next(&next, data, &mut self.rec, &self.ctx, &mut self.stats)? {
                break;
            }
            self.stats.key_comparisons += 1;
            if c.key() > key {
                break;
            }
            cur = next;
            std::mem::swap(&mut self.inflated, &mut self.spare);
        }
        self.block = Some(cur);
        self.seek_in_block(&cur, key)
    }

    fn seek_in_block(&mut self, info: &BlockInfo, key: &[u8]) -> Result<()> {
        let data = block_data(&self.table, info, &self.inflated);
        self.pending =
            self.cursor
                .seek(info, data, key, &mut self.rec, &self.ctx, &mut self.stats)?;
        self.release_if_done();
        Ok(())
    }

    /// Seek through the in-memory leaf index: one binary search, then one block.
    fn leaf_seek(&mut self, leaf: &LeafIndex, key: &[u8]) -> Result<()> {
        let Some((offset, bound)) = leaf.find(key, &mut self.stats) else {
            self.done = true;
            return Ok(());
        };
        match self.load_block_at(offset, Some(R::BLOCK_TYPE))? {
            Some(b) => {
                self.seek_in_block(&b, key)?;
                self.check_bound(&b, bound)
            }
            None => Err(corrupt(
                offset,
                "index entry points at a block of another section",
            )),
        }
    }

    /// After an indexed seek landed in `b`: the index entry that led there has the block's
    /// last key, which is at or after the key sought, so the seek must have found a record
    /// (else the entry points at an earlier block, and the records after it would come out
    /// as if they were the ones sought) and that record cannot be past the entry's key (else
    /// the entry points at a later block and the records in between would be skipped).
    fn check_bound(&mut self, b: &BlockInfo, bound: &[u8]) -> Result<()> {
        let problem = if !self.pending {
            Some("index entry points at a block of keys before the key sought")
        } else {
            self.stats.key_comparisons += 1;
            (self.cursor.key() > bound)
                .then_some("index entry points at a block of keys past the entry's own key")
        };
        if let Some(why) = problem {
            self.pending = false;
            self.done = true;
            return Err(corrupt(b.offset, why));
        }
        Ok(())
    }

    /// Seek through the index: scan the root level, then descend one block per level.
    fn indexed_seek(&mut self, index_offset: u64, key: &[u8]) -> Result<()> {
        let mut root = TableIter::<IndexRecord>::new(self.table.clone());
        let found = (|| -> Result<Option<u64>> {
            if index_offset >= root.table.info().footer_offset {
                return Err(corrupt(
                    index_offset,
                    "index offset points past the last block",
                ));
            }
            let Some(first) = root.load_block_at(index_offset, Some(BlockType::Index))? else {
                return Err(corrupt(
                    index_offset,
                    "index offset does not point at an index block",
                ));
            };
            // The root level is a few consecutive index blocks: pick the block by first keys,
            // then binary-search its restart points, as in any other section.
            root.linear_seek_from(first, key)?;
            Ok(root.next_record()?.map(|r| {
                self.bound.clear();
                self.bound.extend_from_slice(&r.last_key);
                r.offset
            }))
        })();
        self.stats += root.stats;
        root.stats = Stats::default();
        // Only the offsets of index entries are needed on the way down.
        let Some(mut idx) = found? else {
            self.done = true;
            return Ok(());
        };
        let mut parent = index_offset;
        let mut idx_rec = IndexRecord::default();
        loop {
            // Lower levels and data blocks are written before the level that points at them:
            // an index entry pointing forward is corrupt (and would allow cycles).
            if idx >= parent {
                return Err(corrupt(
                    parent,
                    format!(
                        "index entry points at offset {idx} which is not before its index block"
                    ),
                ));
            }
            let Some(b) = self.load_block_at(idx, None)? else {
                return Err(corrupt(idx, "index entry points past the last block"));
            };
            if b.block_type == BlockType::Index {
                let data = block_data(&self.table, &b, &self.inflated);
                let mut c = BlockCursor::default();
                if !c.seek(&b, data, key, &mut idx_rec, &self.ctx, &mut self.stats)? {
                    return Err(corrupt(
                        b.offset,
                        "index block has no key at or after one its parent entry promised",
                    ));
                }
                self.stats.key_comparisons += 1;
                if idx_rec.last_key > self.bound {
                    return Err(corrupt(
                        b.offset,
                        "index entry points at a block of keys past the entry's own key",
                    ));
                }
                self.bound.clear();
                self.bound.extend_from_slice(&idx_rec.last_key);
                parent = b.offset;
                idx = idx_rec.offset;
                continue;
            }
            if b.block_type != R::BLOCK_TYPE {
                return Err(corrupt(
                    b.offset,
                    format!(
                        "index entry points at a '{}' block inside the '{}' section",
                        b.block_type.byte() as char,
                        R::BLOCK_TYPE.byte() as char
                    ),
                ));
            }
            self.seek_in_block(&b, key)?;
            let bound = std::mem::take(&mut self.bound);
            let r = self.check_bound(&b, &bound);
            self.bound = bound;
            return r;
        }
    }

    /// The next record of the current block only.
    fn next_in_block(&mut self) -> Result<Option<&R>> {
        let Some(info) = self.block else {
            return Ok(None);
        };
        self.restore()?;
        let data = block_data(&self.table, &info, &self.inflated);
        if self
            .cursor
            .next(&info, data, &mut self.rec, &self.ctx, &mut self.stats)?
        {
            self.release_if_done();
            Ok(Some(&self.rec))
        } else {
            Ok(None)
        }
    }

    /// The next record, borrowed until the next call. After an error the iterator ends.
    pub fn next_record(&mut self) -> Result<Option<&R>> {
        if self.done {
            return Ok(None);
        }
        if self.pending {
            self.pending = false;
            if let Err(e) = self.restore_current() {
                self.done = true;
                return Err(e);
            }
            return Ok(Some(&self.rec));
        }
        match self.advance() {
            Ok(true) => Ok(Some(&self.rec)),
            Ok(false) => {
                self.done = true;
                // An iterator at its end keeps no big value (a merged iterator keeps its
                // finished tables' iterators).
                if self.rec.value_bytes() > KEEP_INFLATED {
                    let r = std::mem::take(&mut self.rec);
                    if self.recycling {
                        self.recycled_rec = Some(r);
                    }
                }
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                Err(e.in_file(self.table.name()))
            }
        }
    }

    fn advance(&mut self) -> Result<bool> {
        if self.lazy.is_some() {
            // Moving past a peeked record: read its block first.
            self.restore_current()?;
        }
        loop {
            let Some(info) = self.block else {
                return Ok(false);
            };
            self.restore()?;
            let data = block_data(&self.table, &info, &self.inflated);
            if self
                .cursor
                .next(&info, data, &mut self.rec, &self.ctx, &mut self.stats)?
            {
                self.rec_evicted = false;
                self.release_if_done();
                return Ok(true);
            }
            let next = info.offset + info.full_size as u64;
            if self.load_block_at(next, Some(R::BLOCK_TYPE))?.is_none() {
                return Ok(false);
            }
        }
    }
}

impl<R: Record> Iterator for TableIter<R> {
    type Item = Result<R>;

    fn next(&mut self) -> Option<Result<R>> {
        self.next_record().map(|r| r.cloned()).transpose()
    }
}

impl<R: Record> Drop for TableIter<R> {
    fn drop(&mut self) {
        self.table.inner.sink.add(&self.stats);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::record::{LogUpdate, LogValue, RefValue};
    use crate::{WriteOptions, Writer};

    fn id(i: u16) -> ObjectId {
        let mut b = [0x55u8; 20];
        b[..2].copy_from_slice(&i.to_be_bytes());
        ObjectId::from_bytes(&b).unwrap()
    }

    fn log(name: &str, message_len: usize) -> LogRecord {
        LogRecord {
            refname: name.as_bytes().to_vec(),
            update_index: 1,
            value: LogValue::Update(LogUpdate {
                new_id: id(1),
                message: vec![b'm'; message_len],
                ..Default::default()
            }),
        }
    }

    fn write(refs: &[RefRecord], logs: &[LogRecord], opts: WriteOptions) -> Table {
        let mut w = Writer::new(Vec::new(), opts);
        w.set_limits(1, 1).unwrap();
        for r in refs {
            w.add_ref(r).unwrap();
        }
        for l in logs {
            w.add_log(l).unwrap();
        }
        Table::from_bytes("t.ref", w.finish().unwrap()).unwrap()
    }

    fn refs(n: u16) -> Vec<RefRecord> {
        (0..n)
            .map(|i| RefRecord::new(format!("refs/heads/b{i:05}"), 1, RefValue::Object(id(i))))
            .collect()
    }

    #[test]
    fn sections_present_and_debug() {
        let opts = WriteOptions::default();
        let both = write(&refs(3), &[log("refs/heads/b00000", 10)], opts);
        assert!(both.info().refs.present && both.info().logs.present);
        let only_refs = write(&refs(3), &[], opts);
        assert!(only_refs.info().refs.present && !only_refs.info().logs.present);
        let only_logs = write(&[], &[log("refs/heads/b00000", 10)], opts);
        assert!(!only_logs.info().refs.present && only_logs.info().logs.present);
        let shown = format!("{both:?}");
        assert!(
            shown.starts_with("Table") && shown.contains("t.ref"),
            "{shown}"
        );
    }

    /// A footer announcing an obj section with an id length of 0, at the offset of the
    /// footer's obj field.
    #[test]
    fn an_obj_section_needs_an_id_length() {
        let t = write(&refs(3), &[], WriteOptions::default());
        let mut bytes = t.bytes().to_vec();
        let n = bytes.len();
        let f = Footer::decode(&bytes).unwrap();
        let field = n - f.size() + f.header.size() + 8;
        bytes[field..field + 8].copy_from_slice(&(5u64 << 5).to_be_bytes());
        let crc = crc32fast::hash(&bytes[n - f.size()..n - 4]);
        bytes[n - 4..].copy_from_slice(&crc.to_be_bytes());
        let e = Table::from_bytes("t.ref", bytes).unwrap_err();
        assert_eq!(e.offset(), Some(field as u64), "{e}");
        assert!(e.message().contains("object id length of 0"), "{e}");
    }

    /// The iterator's counters while it runs, the table's once it is dropped.
    #[test]
    fn counters_of_iterators() {
        let t = write(&refs(3), &[], WriteOptions::default());
        assert_eq!(t.stats().records_decoded, 0);
        let mut it = t.refs().unwrap();
        while it.next_record().unwrap().is_some() {}
        assert_eq!(it.stats().records_decoded, 3);
        drop(it);
        assert_eq!(t.stats().records_decoded, 3);
    }

    /// Looking up an id no ref has decodes only the obj records the seek needs, never the
    /// ref blocks of the next prefix.
    #[test]
    fn refs_for_a_missing_id_reads_no_ref_block() {
        // Refs to even ids only: an odd id's prefix falls between two obj records.
        let even: Vec<RefRecord> = (0..2000u16)
            .map(|i| {
                RefRecord::new(
                    format!("refs/heads/b{i:05}"),
                    1,
                    RefValue::Object(id(2 * i)),
                )
            })
            .collect();
        let t = write(&even, &[], WriteOptions::default());
        assert!(t.info().objs.present);
        let missing = id(1001);
        let prefix = &missing.as_bytes()[..usize::from(t.info().obj_id_len)];
        let before = t.stats();
        {
            let mut it = t.seek::<ObjRecord>(prefix).unwrap();
            it.next_record().unwrap();
        }
        let seek_only = t.stats().since(before);
        let before = t.stats();
        assert!(t.refs_for(&missing).unwrap().is_empty());
        assert_eq!(t.stats().since(before), seek_only);
        assert_eq!(t.refs_for(&id(1998)).unwrap().len(), 1);
    }

    /// After [`LEAF_INDEX_AFTER`] indexed seeks a section's leaf index is built once and
    /// answers exactly what the block-by-block descent did, for every name present and
    /// absent (a multi-level index: 256-byte blocks), with one block read per lookup.
    #[test]
    fn leaf_index_answers_as_the_descent_does() {
        let all = refs(3000);
        let opts = WriteOptions {
            block_size: 256,
            ..WriteOptions::default()
        };
        let t = write(&all, &[], opts);
        let mut names: Vec<Vec<u8>> = Vec::new();
        for r in &all {
            names.push(r.refname.clone());
            let mut after = r.refname.clone();
            after.push(b'x');
            names.push(after);
        }
        names.push(b"a".to_vec());
        names.push(b"zzz".to_vec());
        let lookup = |t: &Table, n: &[u8]| {
            let mut it = t.seek_ref(n).unwrap();
            let first = it.next_record().unwrap().map(|r| r.refname.clone());
            (first, it.stats())
        };
        // Before: the descent (the first seeks only count towards the threshold).
        let descent: Vec<_> = names.iter().map(|n| lookup(&t, n)).collect();
        assert!(
            t.stats().index_entries_cached > 0,
            "built after enough seeks"
        );
        let cached = t.stats().index_entries_cached;
        let fresh = write(&all, &[], opts);
        // Exactly LEAF_INDEX_AFTER seeks descend block by block; the next one builds it.
        for k in 0..=LEAF_INDEX_AFTER {
            let built = fresh.stats().index_entries_cached;
            assert_eq!(built, 0, "leaf index built before indexed seek {k}");
            lookup(&fresh, b"refs/heads/b00000");
        }
        assert_eq!(
            fresh.stats().index_entries_cached,
            cached,
            "built by seek {LEAF_INDEX_AFTER}"
        );
        for (n, (want, slow)) in names.iter().zip(&descent) {
            let (got, fast) = lookup(&fresh, n);
            assert_eq!(&got, want, "{}", String::from_utf8_lossy(n));
            assert!(fast.blocks_read <= 1, "{fast:?} vs {slow:?}");
            assert!(fast.blocks_read < slow.blocks_read || slow.blocks_read <= 1);
        }
        // Built once per table.
        assert_eq!(fresh.stats().index_entries_cached, cached);
    }

    /// Small inflated log blocks stay with the iterator after their last record; one over
    /// `KEEP_INFLATED` is let go as soon as its last record is read.
    #[test]
    fn inflated_log_blocks_kept_when_small_released_when_big() {
        let small: Vec<LogRecord> = (0..50)
            .map(|i| log(&format!("refs/heads/b{i:02}"), 200))
            .collect();
        let t = write(&[], &small, WriteOptions::default());
        let mut it = t.logs().unwrap();
        let mut n = 0;
        while it.next_record().unwrap().is_some() {
            n += 1;
            assert!(it.inflated_bytes() > 0);
        }
        assert_eq!(n, 50);
        let opts = WriteOptions {
            block_size: 16_777_215,
            ..WriteOptions::default()
        };
        let t = write(&[], &[log("refs/heads/big", 2 << 20)], opts);
        let mut it = t.logs().unwrap();
        assert!(it.next_record().unwrap().is_some());
        assert_eq!(it.inflated_bytes(), 0);
        assert!(it.next_record().unwrap().is_none());
    }

    /// A lazy seek reads only the first key of a big log block; the block is inflated once,
    /// when the record is restored, and the records then come out as a plain seek gives
    /// them. A key past the first record, or a section with an index, seeks as usual.
    #[test]
    fn lazy_seek_peeks_then_inflates_once() {
        let opts = WriteOptions {
            block_size: 16_777_215,
            ..WriteOptions::default()
        };
        let logs = [log("refs/heads/a", 2 << 20), log("refs/heads/b", 100)];
        let t = write(&[], &logs, opts);
        let all: Vec<LogRecord> = t.logs().unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(all.len(), 2);
        for key in [&b""[..], b"refs/heads/", b"refs/heads/a"] {
            let mut it = t.unpositioned::<LogRecord>().unwrap();
            it.seek_lazy(key).unwrap();
            assert_eq!(it.stats().blocks_inflated, 0);
            assert_eq!(it.inflated_bytes(), 0);
            assert!(it.next_key().unwrap());
            assert_eq!(it.current().refname, b"refs/heads/a");
            assert_eq!(it.current().value_bytes(), 0, "only the key is known");
            it.restore_current().unwrap();
            assert_eq!(it.current(), &all[0]);
            assert_eq!(it.next_record().unwrap(), Some(&all[1]));
            assert!(it.next_record().unwrap().is_none());
            assert_eq!(it.stats().blocks_inflated, 1);
        }
        // Moving past a peeked record without restoring it.
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert!(it.next_key().unwrap());
        assert!(it.next_key().unwrap());
        assert_eq!(it.current(), &all[1]);
        // The first key is before the one sought: a full seek.
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"refs/heads/a\x01").unwrap();
        assert_eq!(it.stats().blocks_inflated, 1);
        assert_eq!(it.next_record().unwrap(), Some(&all[1]));
        // Refs are never peeked.
        let r = write(&refs(3), &[], WriteOptions::default());
        let mut it = r.unpositioned::<RefRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert_eq!(
            it.next_record().unwrap().unwrap().refname,
            b"refs/heads/b00000"
        );
    }

    /// Two log blocks that each inflate to over `KEEP_INFLATED`: a 2 MiB message, then
    /// another and a small one.
    fn two_big_log_blocks() -> Table {
        let opts = WriteOptions {
            block_size: 3 << 20,
            ..WriteOptions::default()
        };
        let logs = [
            log("refs/heads/a", 2 << 20),
            log("refs/heads/b", 2 << 20),
            log("refs/heads/c", 10),
        ];
        let t = write(&[], &logs, opts);
        assert_eq!(
            t.info().logs.index_offset,
            0,
            "a linear seek probes the next block"
        );
        t
    }

    /// Four log blocks that each inflate to over `KEEP_INFLATED`, so the section has an
    /// index. A full scan starts at the section start and is positioned lazily (nothing
    /// inflated); a lookup by key goes through the index and never peeks at the first
    /// block, even for a key at or before the first record (peeking would add a partial
    /// inflate to every indexed lookup).
    #[test]
    fn an_indexed_log_section_is_peeked_only_by_full_scans() {
        let opts = WriteOptions {
            block_size: 3 << 20,
            ..WriteOptions::default()
        };
        let logs: Vec<LogRecord> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| log(&format!("refs/heads/{n}"), 2 << 20))
            .collect();
        let t = write(&[], &logs, opts);
        assert_ne!(t.info().logs.index_offset, 0, "four blocks are indexed");
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert_eq!(
            it.stats().blocks_inflated,
            0,
            "a full scan positions lazily"
        );
        assert_eq!(
            name_and_size(it.next_record().unwrap()).map(|(n, _)| n),
            Some("refs/heads/a".to_string())
        );
        for name in ["refs/heads/", "refs/heads/a"] {
            let mut key = Vec::new();
            log(name, 0).write_key(&mut key);
            let mut it = t.unpositioned::<LogRecord>().unwrap();
            it.seek_lazy(&key).unwrap();
            assert_eq!(it.stats().blocks_inflated, 1, "{name}: through the index");
            assert_eq!(
                name_and_size(it.next_record().unwrap()).map(|(n, _)| n),
                Some("refs/heads/a".to_string())
            );
        }
    }

    /// Seeking through a multi-level index: each index level costs a binary search in its
    /// block and one comparison against the parent entry's key, and the ref block one
    /// more (its first key against the entry's). Exact totals of the work, as the
    /// complexity baseline holds them, for fewer seeks than build the leaf index.
    #[test]
    fn indexed_seek_comparisons() {
        let opts = WriteOptions {
            block_size: 256,
            ..WriteOptions::default()
        };
        let all = refs(3000);
        let t = write(&all, &[], opts);
        assert_ne!(t.info().refs.index_offset, 0);
        let before = t.stats();
        let picked: Vec<&RefRecord> = all.iter().step_by(50).collect();
        assert!(picked.len() as u32 <= LEAF_INDEX_AFTER);
        for r in &picked {
            let mut it = t.seek_ref(&r.refname).unwrap();
            assert_eq!(it.next_record().unwrap().unwrap().refname, r.refname);
        }
        let work = t.stats().since(before);
        assert_eq!(work.index_entries_cached, 0, "no leaf index yet");
        assert_eq!((work.blocks_read, work.key_comparisons), (180, 1481));
    }

    /// What a record is, without printing megabytes when a test fails.
    fn name_and_size(r: Option<&LogRecord>) -> Option<(String, usize)> {
        r.map(|l| {
            (
                String::from_utf8_lossy(&l.refname).into_owned(),
                l.value_bytes(),
            )
        })
    }

    /// A seek that probes the next big block and moves on lets the block it left go: the
    /// iterator holds one big block, not two.
    #[test]
    fn a_seek_keeps_one_big_block() {
        let t = two_big_log_blocks();
        let mut key = Vec::new();
        log("refs/heads/b", 0).write_key(&mut key);
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek(&key).unwrap();
        assert_eq!(it.stats().blocks_inflated, 2);
        let held = it.inflated_bytes();
        assert!(held > 2 << 20 && held < 4 << 20, "{held}");
        let got = name_and_size(it.next_record().unwrap());
        assert_eq!(got.map(|g| g.0), Some("refs/heads/b".to_string()));
    }

    /// A peeked record whose block no longer starts with the peeked key is an error.
    #[test]
    fn a_peeked_key_must_match_its_block() {
        let t = two_big_log_blocks();
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert!(it.next_key().unwrap());
        it.rec.refname = b"refs/heads/z".to_vec();
        let e = it.restore_current().unwrap_err();
        assert!(e.message().contains("changed while being read"), "{e}");
    }

    /// Inside [`TableIter::recycle_with`] an iterator inflates into the buffer handed in and
    /// hands back the big ones it let go; outside it keeps none of them.
    #[test]
    fn recycled_buffers_go_round() {
        let t = two_big_log_blocks();
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        let mut buf = Vec::with_capacity(5 << 20);
        let mut rec = None;
        let step = |it: &mut TableIter<LogRecord>, buf: &mut Vec<u8>, rec: &mut Option<_>| {
            it.recycle_with(buf, rec, |it| {
                it.next_key()?;
                it.restore_current()?;
                Ok(name_and_size(Some(it.current())))
            })
            .unwrap()
        };
        // The peeked first block is inflated into the 5 MiB buffer handed in, and as its
        // one record is read, the buffer comes back holding the block.
        let (name, size) = step(&mut it, &mut buf, &mut rec).unwrap();
        assert_eq!((name.as_str(), size > 2 << 20), ("refs/heads/a", true));
        assert_eq!(buf.capacity(), 5 << 20);
        assert!(
            buf.len() > 2 << 20,
            "the buffer handed in was used: {}",
            buf.len()
        );
        assert!(rec.is_none());
        // The second block is inflated into it again; it stays while "c" is left.
        let (name, _) = step(&mut it, &mut buf, &mut rec).unwrap();
        assert_eq!(name, "refs/heads/b");
        assert_eq!(buf.capacity(), 0);
        assert_eq!(it.inflated.capacity(), 5 << 20);
        let (name, _) = step(&mut it, &mut buf, &mut rec).unwrap();
        assert_eq!(name, "refs/heads/c");
        assert_eq!(buf.capacity(), 5 << 20);
        assert_eq!(it.recycled.capacity(), 0);
        // Outside recycle_with nothing is kept for recycling.
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek(b"").unwrap();
        while it.next_record().unwrap().is_some() {}
        assert_eq!(it.recycled.capacity(), 0);
        assert!(it.recycled_rec.is_none());
        assert_eq!(it.inflated_bytes(), 0);
        // At its end, an iterator in recycle_with hands back its big last record.
        let t = write(
            &[],
            &[log("refs/heads/a", 2 << 20)],
            WriteOptions {
                block_size: 3 << 20,
                ..WriteOptions::default()
            },
        );
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek(b"").unwrap();
        assert!(it.next_record().unwrap().is_some());
        let mut rec = None;
        let more = it.recycle_with(&mut Vec::new(), &mut rec, |it| it.next_key());
        assert!(!more.unwrap());
        assert!(rec.is_some_and(|r| r.value_bytes() > 2 << 20));
    }

    /// A peeked block that then fails to inflate (its stream damaged past the peeked part)
    /// reports the error when the record is restored, and the iterator ends.
    #[test]
    fn lazy_seek_reports_damage_found_later() {
        let opts = WriteOptions {
            block_size: 16_777_215,
            ..WriteOptions::default()
        };
        let t = write(&[], &[log("refs/heads/a", 1 << 20)], opts);
        let mut bytes = t.bytes().to_vec();
        let f = Footer::decode(&bytes).unwrap();
        let end = bytes.len() - f.size();
        // The last bytes of the zlib stream hold its checksum.
        bytes[end - 3] ^= 0xff;
        let crc_at = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[end..crc_at]);
        bytes[crc_at..].copy_from_slice(&crc.to_be_bytes());
        let t = Table::from_bytes("t.ref", bytes).unwrap();
        let mut it = t.unpositioned::<LogRecord>().unwrap();
        it.seek_lazy(b"").unwrap();
        assert!(it.next_key().unwrap());
        let e = it.restore_current().unwrap_err();
        assert!(
            e.message().contains("zlib") || e.message().contains("inflate"),
            "{e}"
        );
        assert!(it.next_record().unwrap().is_none());
    }

    /// Seeking without an index walks the blocks: one key comparison per block start it
    /// looks at, then a binary search inside the block.
    #[test]
    fn linear_seek_comparisons() {
        let opts = WriteOptions {
            block_size: 1024,
            ..WriteOptions::default()
        };
        let t = write(&refs(60), &[], opts);
        assert_eq!(t.info().refs.index_offset, 0, "no index: a linear seek");
        let before = t.stats();
        {
            let mut it = t.seek_ref(b"refs/heads/b00059").unwrap();
            assert_eq!(
                it.next_record().unwrap().unwrap().refname,
                b"refs/heads/b00059"
            );
        }
        assert_eq!(t.stats().since(before).key_comparisons, 8);
        // Every key, block starts included: exact totals of the work.
        let before = t.stats();
        for r in refs(60) {
            let mut it = t.seek_ref(&r.refname).unwrap();
            assert_eq!(it.next_record().unwrap().unwrap().refname, r.refname);
        }
        let all = t.stats().since(before);
        assert_eq!((all.blocks_read, all.key_comparisons), (120, 624));
    }

    /// An index entry moved to point at the next block, or back at the previous one: a
    /// lookup of a key of the block it should point at is an error, through the index blocks and through the in-memory leaf
    /// index alike, never a silent "not found".
    #[test]
    fn an_index_entry_pointing_at_a_later_block_is_corrupt() {
        use crate::codec::record::IndexRecord;
        use crate::codec::varint;
        let opts = WriteOptions {
            block_size: 256,
            ..WriteOptions::default()
        };
        let t = write(&refs(200), &[], opts);
        let index = t.info().refs.index_offset;
        assert!(index > 0, "the table has a ref index");
        // The index block's first two entries: their record offsets and block pointers.
        let mut entries = Vec::new();
        let mut walk = t.blocks();
        while let Some(b) = walk.next_block() {
            let (info, data) = b.unwrap();
            if info.offset == index {
                crate::walk::for_each_record::<IndexRecord>(&info, data, &t.codec_context(), |r| {
                    entries.push((
                        info.offset as usize + r.offset,
                        r.rec.offset,
                        r.rec.last_key.clone(),
                    ))
                });
            }
        }
        // Entry 1 points at the second block (offset 256); make it point at the third,
        // whose offset has a varint of the same length.
        let (at, ptr, key) = entries[1].clone();
        let next_ptr = entries[2].1;
        let mut bytes = t.bytes().to_vec();
        // The value varint follows the key: prefix length, suffix length and type, suffix.
        let (prefix, l1) = varint::get(&bytes[at..]).unwrap();
        let (_, l2) = varint::get(&bytes[at + l1..]).unwrap();
        let ptr_at = at + l1 + l2 + key.len() - prefix as usize;
        assert_eq!(varint::get(&bytes[ptr_at..]).unwrap(), (ptr, 2));
        let mut enc = Vec::new();
        varint::put(&mut enc, next_ptr);
        assert_eq!(enc.len(), 2);
        bytes[ptr_at..ptr_at + 2].copy_from_slice(&enc);
        let damaged = Table::from_bytes("t.ref", bytes.clone()).unwrap();
        // The first key of the second block: just past entry 0's key.
        let victim = refs(200)
            .into_iter()
            .map(|r| r.refname)
            .find(|n| n[..] > entries[0].2[..])
            .unwrap();
        assert!(t.read_ref(&victim).unwrap().is_some());
        for round in 0..(LEAF_INDEX_AFTER + 2) {
            let r = damaged.read_ref(&victim);
            assert!(r.is_err(), "lookup {round}: {r:?}");
        }
        // Entry 2 pointing back at the second block (as entry 1 does): a lookup of a key
        // of the third block would otherwise start in the second and take the third's
        // first record for the answer.
        let (at2, ptr2, key2) = entries[2].clone();
        let mut bytes = t.bytes().to_vec();
        let (prefix, l1) = varint::get(&bytes[at2..]).unwrap();
        let (_, l2) = varint::get(&bytes[at2 + l1..]).unwrap();
        let ptr_at = at2 + l1 + l2 + key2.len() - prefix as usize;
        assert_eq!(varint::get(&bytes[ptr_at..]).unwrap(), (ptr2, 2));
        let mut enc = Vec::new();
        varint::put(&mut enc, ptr);
        bytes[ptr_at..ptr_at + 2].copy_from_slice(&enc);
        let damaged = Table::from_bytes("t.ref", bytes).unwrap();
        let victim = refs(200)
            .into_iter()
            .map(|r| r.refname)
            .filter(|n| n[..] > entries[1].2[..])
            .nth(1)
            .unwrap();
        assert!(t.read_ref(&victim).unwrap().is_some());
        for round in 0..(LEAF_INDEX_AFTER + 2) {
            let r = damaged.read_ref(&victim);
            assert!(r.is_err(), "lookup {round} of a later block's key: {r:?}");
        }
    }
}
