//! Small tables built in memory, and what tests need to damage them on purpose.

use reftable::codec::format::Header;
use reftable::{
    HashId, LogRecord, LogUpdate, LogValue, ObjectId, RefRecord, RefValue, WriteOptions, Writer,
};
use reftable::{Signature, TzOffset};

/// The object id of `hash` whose every byte is `b`.
pub fn oid_in(b: u8, hash: HashId) -> ObjectId {
    ObjectId::from_bytes(&vec![b; hash.size()]).expect("a hash size")
}

/// The SHA-1 object id whose every byte is `b`.
pub fn oid(b: u8) -> ObjectId {
    oid_in(b, HashId::Sha1)
}

/// A reflog entry of `name` at update index `ui` (old id all 0, new all 1).
pub fn log_entry(name: &str, ui: u64, msg: &str, hash: HashId) -> LogRecord {
    LogRecord {
        refname: name.as_bytes().to_vec(),
        update_index: ui,
        value: LogValue::Update(LogUpdate {
            old_id: oid_in(0, hash),
            new_id: oid_in(1, hash),
            committer: Signature::new(
                b"C O Mitter".to_vec(),
                b"committer@example.com".to_vec(),
                crate::git::BASE_TIME,
                TzOffset::from_hhmm(-700),
            ),
            message: msg.as_bytes().to_vec(),
        }),
    }
}

/// The table the corruption tests start from: `HEAD` → `refs/heads/main`, main, a peeled
/// tag `refs/tags/v1`, and two reflog entries (update indexes 1 and 2).
pub fn base_table(opts: WriteOptions) -> Vec<u8> {
    let hash = opts.hash;
    let mut w = Writer::new(Vec::new(), opts);
    w.set_limits(1, 2).expect("limits");
    let refs = [
        RefRecord::new("HEAD", 1, RefValue::Symref(b"refs/heads/main".to_vec())),
        RefRecord::new("refs/heads/main", 1, RefValue::Object(oid_in(1, hash))),
        RefRecord::new(
            "refs/tags/v1",
            2,
            RefValue::Peeled {
                object: oid_in(2, hash),
                peeled: oid_in(1, hash),
            },
        ),
    ];
    for r in &refs {
        w.add_ref(r).expect("add ref");
    }
    w.add_log(&log_entry("HEAD", 1, "commit (initial): one", hash))
        .expect("add log");
    w.add_log(&log_entry(
        "refs/heads/main",
        1,
        "commit (initial): one",
        hash,
    ))
    .expect("add log");
    w.finish().expect("finish")
}

/// The footer size of the table `bytes` (from its header's version; 68 when unreadable).
pub fn footer_len(bytes: &[u8]) -> usize {
    Header::decode(bytes).map_or(68, |h| reftable::codec::format::footer_size(h.version))
}

/// Recompute the footer CRC-32 of the table `bytes` after a test changed the footer, so
/// that the damage under test is not caught by the CRC alone.
pub fn fix_crc(bytes: &mut [u8]) {
    let n = bytes.len();
    let f = footer_len(bytes);
    if n < f {
        return;
    }
    let crc = crc32fast::hash(&bytes[n - f..n - 4]);
    bytes[n - 4..].copy_from_slice(&crc.to_be_bytes());
}

/// The smallest table git accepts: the 24-byte header and the 68-byte footer, no block
/// (SHA-1, block size 4096, update indexes 1..1).
pub fn empty_table() -> Vec<u8> {
    let mut header = Vec::new();
    header.extend_from_slice(b"REFT");
    header.push(1);
    header.extend_from_slice(&4096u32.to_be_bytes()[1..]);
    header.extend_from_slice(&1u64.to_be_bytes());
    header.extend_from_slice(&1u64.to_be_bytes());
    let mut t = header.clone();
    t.extend_from_slice(&header);
    // ref index, obj offset (and id length), obj index, log offset, log index: none.
    t.extend_from_slice(&[0u8; 40]);
    t.extend_from_slice(&[0u8; 4]);
    fix_crc(&mut t);
    t
}

/// Bytes zlib cannot shrink (xorshift64), for tests that need a block to compress to more
/// than its contents.
///
/// ```
/// let mut noise = reftable_testkit::tables::Noise::new(7);
/// assert_ne!(noise.bytes(8), noise.bytes(8));
/// ```
#[derive(Clone, Debug)]
pub struct Noise(u64);

impl Noise {
    /// A generator from `seed` (not 0).
    pub fn new(seed: u64) -> Noise {
        Noise(seed.max(1))
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                (self.0 >> 24) as u8
            })
            .collect()
    }
}

/// A stack's tables in `tables.list` order, as (file name without its random suffix, bytes):
/// what two writers' stacks are compared by, byte for byte.
pub fn stack_tables(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let list = std::fs::read_to_string(dir.join("tables.list")).unwrap_or_default();
    list.lines()
        .map(|n| {
            let stem = n.rsplit_once('-').map_or(n, |(s, _)| s).to_string();
            (stem, std::fs::read(dir.join(n)).unwrap())
        })
        .collect()
}
