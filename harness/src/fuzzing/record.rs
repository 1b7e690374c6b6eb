//! Target `record_decode`: one encoded record (key prefix compression and value) of any
//! type, decoded against a previous key, then re-encoded.
//!
//! Input: a flags byte, the previous key's length `n`, `n` bytes of previous key, then the
//! encoded record. Flags bits 0–1: record type (ref, log, obj, index); bit 2: SHA-256 ids;
//! bits 3–4: `min_update_index` (0, 1, 2^32, `u64::MAX`).
//!
//! Oracle: a record that decodes re-encodes (with the same prefix length) to the bytes it
//! was decoded from, whenever the encoding is canonical (the stored value type is the one
//! the record would choose; obj records may spell a count of 1 to 7 either way), and the
//! re-encoding decodes to the same record.

use reftable::codec::record::{decode_key, encode_key, CodecContext};
use reftable::codec::record::{IndexRecord, ObjRecord, Record};
use reftable::{LogRecord, RefRecord};

use crate::{alloc, limits};

/// Allocation budget per input byte: the previous key, the decoded key and the record's
/// strings, and the re-encoding, each at most the input.
const ALLOC_PER_BYTE: u64 = 16;

/// Decode one record and check its re-encoding; see the module docs for the input layout.
pub fn record_decode(data: &[u8]) {
    let [flags, prev_len, rest @ ..] = data else {
        return;
    };
    let (prev, encoded) = rest.split_at((*prev_len as usize).min(rest.len()));
    let ctx = CodecContext {
        hash_size: if flags & 4 != 0 { 32 } else { 20 },
        min_update_index: [0, 1, 1 << 32, u64::MAX][usize::from((flags >> 3) & 3)],
        max_update_index: u64::MAX,
    };
    let ((), peak) = alloc::measure(|| match flags & 3 {
        0 => check::<RefRecord>(prev, encoded, &ctx),
        1 => check::<LogRecord>(prev, encoded, &ctx),
        2 => check::<ObjRecord>(prev, encoded, &ctx),
        _ => check::<IndexRecord>(prev, encoded, &ctx),
    });
    limits::check_alloc("record_decode", peak, ALLOC_PER_BYTE, data.len() as u64);
}

fn check<R: Record + PartialEq>(prev: &[u8], encoded: &[u8], ctx: &CodecContext) {
    let mut key = prev.to_vec();
    let Ok(h) = decode_key(encoded, &mut key) else {
        return;
    };
    assert!(
        h.len() <= encoded.len(),
        "key header claims bytes past the input"
    );
    assert_eq!(&key[..h.prefix_len], &prev[..h.prefix_len]);
    assert_eq!(&key[h.prefix_len..], &encoded[h.suffix_start..h.len()]);
    let value = &encoded[h.len()..];
    let mut rec = R::default();
    let Ok(n) = rec.decode(&key, h.value_type, value, ctx) else {
        return;
    };
    assert!(
        n <= value.len(),
        "decode consumed {n} of {} bytes",
        value.len()
    );
    let mut k = Vec::new();
    rec.write_key(&mut k);
    assert_eq!(k, key, "record key differs from the decoded key");

    // Re-encode with the same prefix length: `key[..prefix_len]` as the previous key.
    let mut out = Vec::new();
    encode_key(&mut out, &key[..h.prefix_len], &key, rec.value_type());
    let klen = out.len();
    rec.encode_value(&mut out, ctx);
    let same_type = rec.value_type() == h.value_type;
    // An obj record with value type 0 and a count of 1 to 7 re-encodes the count in the
    // type instead: the value bytes then differ by the count varint.
    let obj_count_in_type =
        R::BLOCK_TYPE == reftable::codec::format::BlockType::Obj && h.value_type == 0 && !same_type;
    if same_type {
        assert_eq!(
            &out[..klen],
            &encoded[..h.len()],
            "key re-encodes differently"
        );
    }
    if !obj_count_in_type {
        assert_eq!(
            &out[klen..],
            &value[..n],
            "value re-encodes differently: {rec:?}"
        );
    }

    let mut key2 = prev.to_vec();
    let h2 = decode_key(&out, &mut key2).expect("re-encoded key decodes");
    let mut rec2 = R::default();
    let n2 = rec2
        .decode(&key2, h2.value_type, &out[h2.len()..], ctx)
        .expect("re-encoded record decodes");
    assert_eq!(h2.len() + n2, out.len(), "re-encoded record length");
    assert_eq!(rec2, rec, "re-encoded record decodes to another record");
}
