//! One table opened: its bytes, what its header and footer say, the counters its iterators
//! leave, and the leaf indexes built after many indexed seeks. Its reads are in `lookup.rs`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use super::info::{parse_info, Section, TableInfo};
use crate::bytes::Bytes;
use crate::codec::format::BlockType;
use crate::codec::record::{CodecContext, Record};
use crate::error::{Error, Result};
use crate::hash::HashId;
use crate::leaf_index::{LeafIndex, Source};
use crate::stats::{Stats, StatsSink};

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
pub(super) const LEAF_INDEX_AFTER: u32 = 64;

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

    /// `e` in this table's file.
    pub(super) fn err(&self, e: Error) -> Error {
        e.in_file(&self.inner.name)
    }

    /// Leave an iterator's counters with the table.
    pub(super) fn count(&self, work: &Stats) {
        self.inner.sink.add(work);
    }

    /// The leaf index of `R`'s section once enough indexed seeks asked for it.
    pub(super) fn leaf_index<R: Record>(&self, root: u64) -> Option<&LeafIndex> {
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

    /// Where `R`'s section is; index records have none of their own.
    pub(super) fn section_of<R: Record>(&self) -> Result<&Section> {
        self.inner
            .info
            .section(R::BLOCK_TYPE)
            .ok_or_else(|| Error::api("index records have no section of their own to iterate"))
    }
}

#[cfg(test)]
mod tests {
    use crate::table::testing::{log, refs, write};
    use crate::WriteOptions;

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
}
