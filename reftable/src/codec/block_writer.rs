//! Building one block: prefix-compressed records, the restart table, padding rules, and
//! for log blocks the zlib stream, following git's writer rules exactly (the mirror of
//! [`crate::codec::block`]).

use flate2::{Compress, Compression, FlushCompress, Status};

use crate::codec::format::{BlockType, MAX_RESTARTS};
use crate::codec::record::{self, CodecContext, Record};
use crate::codec::varint;
use crate::error::{Error, ErrorKind, Result};

/// Builds one block: prefix-compressed records, the restart table, and for log blocks the
/// zlib stream, following git's writer rules exactly.
#[derive(Debug)]
pub struct BlockWriter {
    buf: Vec<u8>,
    block_type: BlockType,
    header_off: usize,
    block_size: usize,
    restart_interval: usize,
    restarts: Vec<u32>,
    entries: usize,
    last_key: Vec<u8>,
    key: Vec<u8>,
    scratch: Vec<u8>,
    compressed: Vec<u8>,
    zlib: Option<Compress>,
}

impl BlockWriter {
    /// A writer for blocks of `block_size` bytes with a restart every `restart_interval`
    /// records.
    pub fn new(block_size: usize, restart_interval: usize) -> BlockWriter {
        BlockWriter {
            buf: Vec::with_capacity(block_size),
            block_type: BlockType::Ref,
            header_off: 0,
            block_size,
            restart_interval: restart_interval.max(1),
            restarts: Vec::new(),
            entries: 0,
            last_key: Vec::new(),
            key: Vec::new(),
            scratch: Vec::new(),
            compressed: Vec::new(),
            zlib: None,
        }
    }

    /// Start a new, empty block of `block_type`; `header_off` bytes are left for the file
    /// header (first block only).
    pub fn reset(&mut self, block_type: BlockType, header_off: usize) {
        self.buf.clear();
        self.buf.resize(header_off + 4, 0);
        self.buf[header_off] = block_type.byte();
        self.block_type = block_type;
        self.header_off = header_off;
        self.restarts.clear();
        self.entries = 0;
        self.last_key.clear();
    }

    /// The type of the block being built.
    pub fn block_type(&self) -> BlockType {
        self.block_type
    }

    /// Records added so far.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Restart points so far.
    pub fn restart_count(&self) -> usize {
        self.restarts.len()
    }

    /// Key of the last record added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Header offset of the block being built.
    pub fn header_off(&self) -> usize {
        self.header_off
    }

    /// Add a record. [`ErrorKind::EntryTooBig`] when it does not fit in what is left of the
    /// block (the block is unchanged then), [`ErrorKind::Api`] for an empty key.
    pub fn add<R: Record>(&mut self, rec: &R, ctx: &CodecContext) -> Result<()> {
        rec.write_key(&mut self.key);
        if self.key.is_empty() {
            return Err(Error::api("record with an empty key"));
        }
        let entries = planted!(
            RestartOffByOne,
            self.entries,
            self.entries + usize::from(self.entries > 0)
        );
        let prev: &[u8] = if entries % self.restart_interval == 0 {
            &[]
        } else {
            &self.last_key
        };
        self.scratch.clear();
        let mut is_restart =
            record::encode_key(&mut self.scratch, prev, &self.key, rec.value_type());
        rec.encode_value(&mut self.scratch, ctx);
        let n = self.scratch.len();
        let mut restarts = self.restarts.len();
        if restarts >= MAX_RESTARTS {
            is_restart = false;
        }
        if is_restart {
            restarts += 1;
        }
        let next = self.buf.len();
        if 2 + 3 * restarts + n > self.block_size.saturating_sub(next) {
            return Err(Error::new(
                ErrorKind::EntryTooBig,
                format!(
                    "record of {n} bytes does not fit in the {} bytes left of a {}-byte block",
                    self.block_size.saturating_sub(next),
                    self.block_size
                ),
            ));
        }
        if is_restart {
            self.restarts.push(next as u32);
        }
        self.buf.extend_from_slice(&self.scratch);
        std::mem::swap(&mut self.last_key, &mut self.key);
        self.entries += 1;
        Ok(())
    }

    /// Finish the block: append the restart table, set `block_len`, and compress log
    /// blocks. Returns the length of the finished block; its bytes are then
    /// [`BlockWriter::finished`]. The first `header_off` bytes are zero, for the caller to
    /// fill with the file header ([`BlockWriter::set_header`]).
    pub fn finish(&mut self) -> Result<usize> {
        for &r in &self.restarts {
            self.buf.extend_from_slice(&r.to_be_bytes()[1..]);
        }
        self.buf
            .extend_from_slice(&(self.restarts.len() as u16).to_be_bytes());
        let len = self.buf.len() as u32;
        varint::put_be24(&mut self.buf[self.header_off + 1..], len);
        if self.block_type == BlockType::Log {
            let skip = self.header_off + 4;
            let z = self
                .zlib
                .get_or_insert_with(|| Compress::new(Compression::new(9), true));
            z.reset();
            let src = &self.buf[skip..];
            self.compressed.clear();
            self.compressed.reserve(deflate_room(src.len()));
            loop {
                let consumed = z.total_in() as usize;
                let status = z
                    .compress_vec(
                        &src[consumed..],
                        &mut self.compressed,
                        FlushCompress::Finish,
                    )
                    .map_err(|e| Error::new(ErrorKind::Zlib, format!("deflate failed: {e}")))?;
                match status {
                    Status::StreamEnd => break,
                    _ => self
                        .compressed
                        .reserve(deflate_room(self.compressed.capacity())),
                }
            }
            self.buf.truncate(skip);
            self.buf.extend_from_slice(&self.compressed);
        }
        Ok(self.buf.len())
    }

    /// The bytes of the block after [`BlockWriter::finish`].
    pub fn finished(&self) -> &[u8] {
        &self.buf
    }

    /// Copy the file header into the first `header_off` bytes of the block.
    pub fn set_header(&mut self, header: &[u8]) {
        let n = self.header_off.min(header.len());
        self.buf[..n].copy_from_slice(&header[..n]);
    }
}

/// Room to reserve for deflating `len` bytes (and again when that was not enough): a
/// capacity hint only, the output is the same whatever it says.
fn deflate_room(len: usize) -> usize {
    len + len / 8 + 128
}

#[cfg(test)]
mod tests {
    use crate::codec::record::{LogUpdate, LogValue, RefValue};
    use crate::{LogRecord, ObjectId, RefRecord, Signature, Table, WriteOptions, Writer};

    /// Restart points every 16 records: 40 refs in one block have 3 (records 0, 16, 32),
    /// as the writer's statistics report.
    #[test]
    fn restarts_counted() {
        let mut w = Writer::new(Vec::new(), WriteOptions::default());
        w.set_limits(1, 1).unwrap();
        let id = ObjectId::from_bytes(&[1; 20]).unwrap();
        for i in 0..40 {
            w.add_ref(&RefRecord::new(
                format!("refs/heads/{i:02}"),
                1,
                RefValue::Object(id),
            ))
            .unwrap();
        }
        let (_, stats) = w.finish_with_stats().unwrap();
        assert_eq!(
            (stats.refs.entries, stats.refs.restarts, stats.refs.blocks),
            (40, 3, 1)
        );
    }

    /// Log records that do not compress: when the first block of a log-only table
    /// compresses to more than a block, it is laid out again with fewer records (its file
    /// header kept). Message lengths run across the point where two records stop fitting
    /// one block, so some of them take that path.
    #[test]
    fn first_log_block_relaid_keeps_the_file_header() {
        // splitmix64: bytes zlib cannot shrink.
        let mut seed = 1u64;
        let mut noise = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = seed;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    (z ^ (z >> 31)) as u8
                })
                .collect()
        };
        let opts = WriteOptions {
            block_size: 1024,
            exact_log_message: true,
            ..WriteOptions::default()
        };
        let mut two_blocks = 0;
        for len in 800..960 {
            let logs: Vec<LogRecord> = [("refs/heads/a", len), ("refs/heads/b", 30)]
                .iter()
                .map(|(name, n)| LogRecord {
                    refname: name.as_bytes().to_vec(),
                    update_index: 1,
                    value: LogValue::Update(LogUpdate {
                        old_id: ObjectId::from_bytes(&noise(20)).unwrap(),
                        new_id: ObjectId::from_bytes(&noise(20)).unwrap(),
                        committer: Signature {
                            email: noise(16),
                            ..Default::default()
                        },
                        message: noise(*n),
                    }),
                })
                .collect();
            let mut w = Writer::new(Vec::new(), opts);
            w.set_limits(1, 1).unwrap();
            let written = logs
                .iter()
                .try_for_each(|l| w.add_log(l))
                .and_then(|()| w.finish_with_stats());
            let (bytes, stats) = match written {
                Ok(x) => x,
                // The long record alone compresses to more than a block.
                Err(e) if e.kind() == crate::ErrorKind::EntryTooBig => continue,
                Err(e) => panic!("{e}"),
            };
            two_blocks += usize::from(stats.logs.blocks == 2);
            let t = Table::from_bytes("logs.ref", bytes).unwrap();
            let back: Vec<LogRecord> = t.logs().unwrap().map(|r| r.unwrap()).collect();
            assert!(back == logs, "message of {len} bytes: not read back");
        }
        assert!(two_blocks > 0 && two_blocks < 160, "{two_blocks}");
    }
}
