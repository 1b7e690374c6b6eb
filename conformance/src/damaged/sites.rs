//! Where to damage a reftable stack: the places in a table where a reader must check what
//! it is told (file header and footer fields, block headers, restart tables, record varints
//! and value types, index pointers, zlib streams, truncation points) and in `tables.list`
//! (lines, names, newlines), each as [`Edit`]s with the values most likely to break a
//! reader that trusts them.
//!
//! ```
//! use conformance::damaged::damage::Damage;
//! use conformance::damaged::sites::sites;
//! use reftable::{ObjectId, RefRecord, RefValue, Writer, WriteOptions};
//!
//! let mut w = Writer::new(Vec::new(), WriteOptions::default());
//! w.set_limits(1, 1).unwrap();
//! let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
//! w.add_ref(&RefRecord::new("refs/heads/main", 1, RefValue::Object(id))).unwrap();
//! let table = w.finish().unwrap();
//!
//! let edits = sites("t.ref", &table);
//! assert!(edits.iter().any(|e| e.kind == "restart-count"));
//! let mut files = vec![("t.ref".to_string(), table.clone())];
//! Damage { edits: vec![edits[0].clone()] }.apply(&mut files);
//! assert_ne!(files[0].1, table);
//! ```

use std::io::Write;

use reftable::codec::block::BlockInfo;
use reftable::codec::format::{footer_size, header_size, BlockType};
use reftable::codec::varint;
use reftable::table::TableInfo;
use reftable::Table;

use super::damage::Edit;

/// The big-endian encoding of `v` in `n` bytes.
fn be(v: u64, n: usize) -> Vec<u8> {
    v.to_be_bytes()[8 - n..].to_vec()
}

/// Values of an `n`-byte big-endian field that tend to break readers, given its current
/// value and the interesting offsets of the file.
fn field_values(current: u64, n: usize, offsets: &[u64]) -> Vec<u64> {
    let max = if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    };
    let mut v = vec![
        0,
        1,
        max,
        current.wrapping_add(1) & max,
        current.wrapping_sub(1) & max,
    ];
    v.extend(offsets.iter().filter(|&&o| o <= max));
    v.sort_unstable();
    v.dedup();
    v.retain(|&x| x != current);
    v
}

/// The smallest value whose varint takes `len` bytes (git's varint: each continuation byte
/// adds one before shifting, so every value has exactly one encoding).
fn varint_min(len: usize) -> Option<u64> {
    let mut min = 0u64;
    for _ in 1..len {
        min = min.checked_add(1)?.checked_mul(128)?;
    }
    Some(min)
}

/// Replacement varints of the same length as the one at the start of `data`.
fn varint_values(data: &[u8], extra: &[u64]) -> Vec<Vec<u8>> {
    let Some((current, len)) = varint::get(data) else {
        return Vec::new();
    };
    let lo = varint_min(len).unwrap_or(0);
    let hi = varint_min(len + 1).map_or(u64::MAX, |m| m - 1);
    let mut vals = vec![lo, hi, current.wrapping_add(1), current.wrapping_sub(1)];
    vals.extend_from_slice(extra);
    vals.sort_unstable();
    vals.dedup();
    vals.into_iter()
        .filter(|&v| v != current)
        .filter_map(|v| {
            let mut out = Vec::new();
            varint::put(&mut out, v);
            (out.len() == len).then_some(out)
        })
        .collect()
}

/// Every edit this module knows for the table `bytes` named `file`. Tables that cannot be
/// parsed get only truncations and byte flips of their header.
pub fn sites(file: &str, bytes: &[u8]) -> Vec<Edit> {
    let mut out = Vec::new();
    let len = bytes.len();
    truncation_sites(file, len, &mut out);
    let Ok(table) = Table::from_bytes(file, bytes.to_vec()) else {
        return out;
    };
    let info = *table.info();
    let hs = header_size(info.version);
    let fs = footer_size(info.version);
    let foot = info.footer_offset as usize;
    // Block starts, for pointers into the wrong place.
    let mut blocks: Vec<(BlockInfo, Vec<u8>)> = Vec::new();
    let mut walk = table.blocks();
    while let Some(Ok((b, data))) = walk.next_block() {
        blocks.push((b, data.to_vec()));
    }
    let offsets = pointer_targets(&blocks, &info, hs);
    block_cut_sites(file, &blocks, &mut out);
    header_sites(file, bytes, foot, &mut out);
    footer_sites(file, bytes, foot, hs, fs, &offsets, &mut out);

    for (b, data) in &blocks {
        block_sites(file, bytes, b, data, &offsets, info.hash.size(), &mut out);
    }
    // The last log block of a table without a log index can be re-deflated with damage
    // inside: nothing after it but the footer, whose place is counted from the end.
    if info.logs.index_offset == 0 {
        if let Some((b, data)) = blocks
            .last()
            .filter(|(b, _)| b.block_type == BlockType::Log)
        {
            inflated_log_sites(file, bytes, b, data, info.hash.size(), &mut out);
        }
    }
    out
}

/// Truncations of a file of `len` bytes at fixed points: inside the header, inside the
/// first records, just before the end.
fn truncation_sites(file: &str, len: usize, out: &mut Vec<Edit>) {
    for cut in [
        0,
        1,
        4,
        23,
        40,
        91,
        len.saturating_sub(1),
        len.saturating_sub(4),
    ] {
        if cut < len {
            out.push(Edit::new(file, "truncate", cut, usize::MAX, Vec::new()));
        }
    }
}

/// The offsets a damaged pointer is made to point at: every block start, the footer, the
/// end of the file, the end of the file header, one past every block start.
fn pointer_targets(blocks: &[(BlockInfo, Vec<u8>)], info: &TableInfo, hs: usize) -> Vec<u64> {
    let mut offsets: Vec<u64> = blocks.iter().map(|(b, _)| b.offset).collect();
    offsets.extend([info.footer_offset, info.size, hs as u64]);
    for (b, _) in blocks {
        offsets.push(b.offset + 1);
    }
    offsets
}

/// Truncations at every block start but the first, and 5 bytes into it.
fn block_cut_sites(file: &str, blocks: &[(BlockInfo, Vec<u8>)], out: &mut Vec<Edit>) {
    for (b, _) in blocks {
        if b.offset > 0 {
            out.push(Edit::new(
                file,
                "truncate",
                b.offset as usize,
                usize::MAX,
                Vec::new(),
            ));
            out.push(Edit::new(
                file,
                "truncate",
                b.offset as usize + 5,
                usize::MAX,
                Vec::new(),
            ));
        }
    }
}

/// File header: version, block size, update indexes; the footer (at `foot`) repeats the
/// header, so each is damaged in the header alone and in both (with the CRC fixed).
fn header_sites(file: &str, bytes: &[u8], foot: usize, out: &mut Vec<Edit>) {
    let len = bytes.len();
    let header_fields: [(&str, usize, usize); 4] = [
        ("header-version", 4, 1),
        ("header-block-size", 5, 3),
        ("header-min-update-index", 8, 8),
        ("header-max-update-index", 16, 8),
    ];
    for (kind, at, n) in header_fields {
        let cur = be_read(&bytes[at..at + n]);
        let mut vals = field_values(cur, n, &[]);
        if kind == "header-version" {
            vals = vec![0, 1, 2, 3].into_iter().filter(|&v| v != cur).collect();
        }
        for v in vals {
            out.push(Edit::new(file, kind, at, n, be(v, n)));
            // The same value in the footer's copy of the header too (with the CRC fixed),
            // as one edit that rewrites the file.
            if foot + at + n <= len {
                let mut both = bytes.to_vec();
                both[at..at + n].copy_from_slice(&be(v, n));
                both[foot + at..foot + at + n].copy_from_slice(&be(v, n));
                reftable_testkit::tables::fix_crc(&mut both);
                out.push(Edit::new(
                    file,
                    &format!("{kind}-both"),
                    0,
                    usize::MAX,
                    both,
                ));
            }
        }
    }
}

/// Footer fields after the header copy (the footer at `foot`, `hs` and `fs` bytes the header
/// and footer sizes): ref index, obj offset (<< 5 | id length), obj index, log offset, log
/// index, each pointed at `offsets` among others; and the footer CRC.
fn footer_sites(
    file: &str,
    bytes: &[u8],
    foot: usize,
    hs: usize,
    fs: usize,
    offsets: &[u64],
    out: &mut Vec<Edit>,
) {
    let len = bytes.len();
    let footer_fields: [(&str, usize); 5] = [
        ("footer-ref-index", 0),
        ("footer-obj-offset", 8),
        ("footer-obj-index", 16),
        ("footer-log-offset", 24),
        ("footer-log-index", 32),
    ];
    if foot + fs <= len {
        for (kind, rel) in footer_fields {
            let at = foot + hs + rel;
            let cur = be_read(&bytes[at..at + 8]);
            let mut vals = field_values(cur, 8, offsets);
            if kind == "footer-obj-offset" {
                // The id length lives in the low 5 bits.
                vals = (0..32u64)
                    .map(|l| (cur & !31) | l)
                    .chain(offsets.iter().map(|o| (o << 5) | (cur & 31)))
                    .filter(|&v| v != cur)
                    .collect();
            }
            for v in vals {
                out.push(Edit::new(file, kind, at, 8, be(v, 8)).crc());
            }
        }
        out.push(Edit::new(file, "footer-crc", len - 4, 4, vec![0, 0, 0, 0]));
    }
}

fn be_read(b: &[u8]) -> u64 {
    b.iter().fold(0, |acc, &x| (acc << 8) | x as u64)
}

/// Edits of one block: its header, restart table, records (for log blocks: its compressed
/// stream).
fn block_sites(
    file: &str,
    bytes: &[u8],
    b: &BlockInfo,
    data: &[u8],
    offsets: &[u64],
    hash_len: usize,
    out: &mut Vec<Edit>,
) {
    let start = b.offset as usize + b.header_off;
    block_header_sites(file, bytes, b, start, out);
    if b.block_type == BlockType::Log {
        zlib_sites(file, bytes, b, start + 4, out);
        return;
    }
    // Padding after a short block: a non-zero byte makes git take the block as unpadded.
    let end = b.offset as usize + b.block_len;
    if b.full_size > b.block_len && end < bytes.len() {
        out.push(Edit::new(file, "padding", end, 1, vec![1]));
    }
    let restarts = reftable::walk::restarts(b, data);
    restart_sites(file, bytes, b, &restarts, out);
    // Records: the first few of each block (and every restart point).
    let mut positions: Vec<usize> = vec![b.records_start()];
    positions.extend(restarts.iter().copied().filter(|&r| r < b.restart_off));
    positions.sort_unstable();
    positions.dedup();
    for pos in positions.into_iter().take(6) {
        let file_pos = b.offset as usize + pos;
        let kind_prefix = match b.block_type {
            BlockType::Ref => "ref",
            BlockType::Index => "index",
            BlockType::Obj => "obj",
            BlockType::Log => "log",
        };
        record_sites(file, bytes, file_pos, kind_prefix, offsets, hash_len, out);
    }
}

/// The block header at `start`: its type byte and its 3-byte length.
fn block_header_sites(file: &str, bytes: &[u8], b: &BlockInfo, start: usize, out: &mut Vec<Edit>) {
    for t in [b'r', b'i', b'o', b'g', 0, b'x'] {
        if t != b.block_type.byte() {
            out.push(Edit::new(file, "block-type", start, 1, vec![t]));
        }
    }
    let cur = be_read(&bytes[start + 1..start + 4]);
    let bl = b.block_len as u64;
    let extra = [4, 5, 6, b.header_off as u64 + 4, bl - 1, bl + 1, bl + 3];
    for v in field_values(cur, 3, &extra) {
        out.push(Edit::new(file, "block-len", start + 1, 3, be(v, 3)));
    }
}

/// A log block's compressed stream starting at `z`: flipped bytes at its start, middle and
/// end; its second half zeroed.
fn zlib_sites(file: &str, bytes: &[u8], b: &BlockInfo, z: usize, out: &mut Vec<Edit>) {
    let zlen = b.compressed_len;
    for at in [
        z,
        z + 1,
        z + zlen / 2,
        z + zlen.saturating_sub(5),
        z + zlen.saturating_sub(1),
    ] {
        if at < z + zlen && at < bytes.len() {
            out.push(Edit::new(file, "zlib-byte", at, 1, vec![bytes[at] ^ 0x5a]));
        }
    }
    if zlen > 8 {
        out.push(Edit::new(
            file,
            "zlib-zeroed",
            z + zlen / 2,
            zlen - zlen / 2,
            vec![0; zlen - zlen / 2],
        ));
    }
}

/// The restart table of a stored block: its count (2 bytes at the end) and its first
/// offsets (3 bytes each, before the count), pointed at other restarts and block bounds.
fn restart_sites(file: &str, bytes: &[u8], b: &BlockInfo, restarts: &[usize], out: &mut Vec<Edit>) {
    let count_at = b.offset as usize + b.block_len - 2;
    let count = b.restart_count as u64;
    for v in [0, 1, count + 1, count + 2, 0x7fff, 0xffff] {
        if v != count && v <= 0xffff {
            out.push(Edit::new(file, "restart-count", count_at, 2, be(v, 2)));
        }
    }
    let rel: Vec<u64> = restarts.iter().map(|&r| r as u64).collect();
    for i in 0..b.restart_count.min(4) {
        let at = b.offset as usize + b.restart_off + 3 * i;
        let cur = be_read(&bytes[at..at + 3]);
        let mut extra = rel.clone();
        extra.extend([
            b.restart_off as u64,
            b.block_len as u64,
            b.header_off as u64,
        ]);
        for v in field_values(cur, 3, &extra) {
            out.push(Edit::new(file, "restart-offset", at, 3, be(v, 3)));
        }
    }
}

/// Edits of the record starting at `at` in `bytes` (a stored block or an inflated log
/// block): prefix length, suffix length and value type, the first value varint.
fn record_sites(
    file: &str,
    bytes: &[u8],
    at: usize,
    what: &str,
    offsets: &[u64],
    hash_len: usize,
    out: &mut Vec<Edit>,
) {
    let Some(rest) = bytes.get(at..) else { return };
    let Some((_, l1)) = varint::get(rest) else {
        return;
    };
    for v in varint_values(rest, &[1, 5, 40]) {
        out.push(Edit::new(file, &format!("{what}-prefix-len"), at, l1, v));
    }
    let Some((st, l2)) = varint::get(&rest[l1..]) else {
        return;
    };
    let p2 = at + l1;
    let last = p2 + l2 - 1;
    for t in 0..8u8 {
        if u64::from(t) != st & 7 {
            out.push(Edit::new(
                file,
                &format!("{what}-value-type"),
                last,
                1,
                vec![(bytes[last] & !7) | t],
            ));
        }
    }
    let suffix = st >> 3;
    for v in varint_values(
        &rest[l1..],
        &[st & 7, 8 | (st & 7), (suffix + 64) << 3 | (st & 7)],
    ) {
        out.push(Edit::new(file, &format!("{what}-suffix-len"), p2, l2, v));
    }
    let vstart = p2 + l2 + suffix as usize;
    let value_at = if what == "log" {
        vstart + 2 * hash_len
    } else {
        vstart
    };
    if let Some(v) = bytes.get(value_at..) {
        let extra: Vec<u64> = if what == "index" {
            offsets.to_vec()
        } else {
            vec![0, 1 << 40]
        };
        for enc in varint_values(v, &extra) {
            let n = enc.len();
            out.push(Edit::new(
                file,
                &format!("{what}-value-varint"),
                value_at,
                n,
                enc,
            ));
        }
    }
}

/// Damage inside the last log block's inflated records, re-deflated in place (the block is
/// the last thing before the footer, so its new length moves only the footer).
fn inflated_log_sites(
    file: &str,
    bytes: &[u8],
    b: &BlockInfo,
    inflated: &[u8],
    hash_len: usize,
    out: &mut Vec<Edit>,
) {
    let start = b.offset as usize + b.header_off;
    let z = start + 4;
    let zend = z + b.compressed_len;
    if zend > bytes.len() {
        return;
    }
    let mut inner = Vec::new();
    record_sites(
        file,
        inflated,
        b.records_start(),
        "log",
        &[],
        hash_len,
        &mut inner,
    );
    // The restart table of the inflated block, too.
    let count_at = b.block_len.saturating_sub(2);
    if count_at >= b.records_start() && count_at + 2 <= inflated.len() {
        for v in [0u64, 0xffff] {
            inner.push(Edit::new(file, "log-restart-count", count_at, 2, be(v, 2)));
        }
    }
    for e in inner {
        let mut block = inflated.to_vec();
        e.apply_to(&mut block);
        // What is deflated is the block after its 4-byte header (and, for a first block,
        // after the file header).
        let body = &block[(b.header_off + 4).min(block.len())..];
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        if enc.write_all(body).is_err() {
            continue;
        }
        let Ok(z_new) = enc.finish() else { continue };
        let mut edit = Edit::new(file, &e.kind, z, b.compressed_len, z_new);
        edit.kind = format!("inflated-{}", e.kind);
        out.push(edit);
    }
}

/// Edits of `tables.list` (its current contents `list`; `outside` is a path, relative to
/// the stack directory, of a file outside the repository that no reader may touch).
pub fn list_sites(list: &[u8], outside: &str) -> Vec<Edit> {
    let text = String::from_utf8_lossy(list);
    let lines: Vec<&str> = text.lines().collect();
    let whole =
        |kind: &str, new: String| Edit::new("tables.list", kind, 0, usize::MAX, new.into_bytes());
    let join = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let mut out = vec![
        whole("list-empty", String::new()),
        whole("list-no-newline", text.trim_end_matches('\n').to_string()),
        whole("list-blank-line", format!("\n{text}")),
        whole("list-crlf", text.replace('\n', "\r\n")),
        whole(
            "list-missing-table",
            format!("{text}0x000000000099-0x000000000099-deadbeef.ref\n"),
        ),
        whole("list-outside", format!("{text}{outside}\n")),
        whole("list-absolute", format!("{text}/etc/hostname\n")),
        whole("list-directory", format!("{text}.\n")),
        whole("list-nul", format!("{text}x\0y.ref\n")),
        whole(
            "list-long-name",
            format!("{text}{}.ref\n", "a".repeat(5000)),
        ),
    ];
    for i in 0..lines.len() {
        let mut l = lines.clone();
        l.remove(i);
        out.push(whole("list-drop-line", join(&l)));
        let mut l = lines.clone();
        l.insert(i, lines[i]);
        out.push(whole("list-duplicate-line", join(&l)));
        if i + 1 < lines.len() {
            let mut l = lines.clone();
            l.swap(i, i + 1);
            out.push(whole("list-swap-lines", join(&l)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use reftable::{LogRecord, ObjectId, RefRecord, RefValue, WriteOptions, Writer};

    fn table() -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), WriteOptions::default().block_size(256));
        w.set_limits(1, 1).unwrap();
        let id = ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").unwrap();
        for i in 0..40 {
            w.add_ref(&RefRecord::new(
                format!("refs/heads/b{i:03}"),
                1,
                RefValue::Object(id),
            ))
            .unwrap();
        }
        let log = LogRecord {
            refname: b"refs/heads/b000".to_vec(),
            update_index: 1,
            ..Default::default()
        };
        w.add_log(&log).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn every_structure_has_sites() {
        let t = table();
        let s = sites("t.ref", &t);
        for kind in [
            "truncate",
            "header-version",
            "header-block-size-both",
            "footer-ref-index",
            "footer-obj-offset",
            "footer-log-offset",
            "block-type",
            "block-len",
            "restart-count",
            "restart-offset",
            "ref-prefix-len",
            "ref-value-type",
            "ref-suffix-len",
            "ref-value-varint",
            "index-value-varint",
            "zlib-byte",
            "inflated-log-value-type",
        ] {
            assert!(
                s.iter().any(|e| e.kind == kind),
                "no {kind} site in {} sites",
                s.len()
            );
        }
        // Every edit changes the bytes and keeps the footer CRC valid when it says so.
        for e in &s {
            let mut b = t.clone();
            e.apply_to(&mut b);
            assert_ne!(b, t, "{}", e.summary());
            if e.fix_crc && b.len() == t.len() {
                let mut fixed = b.clone();
                reftable_testkit::tables::fix_crc(&mut fixed);
                assert_eq!(fixed, b, "{}", e.summary());
            }
        }
    }

    #[test]
    fn varints_keep_their_length() {
        for data in [&[5u8][..], &[0x80, 0x05], &[0x81, 0x80, 0x00]] {
            let (_, len) = varint::get(data).unwrap();
            let vals = varint_values(data, &[]);
            assert!(!vals.is_empty());
            assert!(vals
                .iter()
                .all(|v| v.len() == len && varint::get(v).unwrap().1 == len));
        }
        assert_eq!(varint_min(1), Some(0));
        assert_eq!(varint_min(2), Some(128));
        assert_eq!(varint_min(3), Some(16512));
    }

    #[test]
    fn list_edits_change_the_list() {
        let list = b"a.ref\nb.ref\n";
        for e in list_sites(list, "../../../outside/x.ref") {
            let mut b = list.to_vec();
            e.apply_to(&mut b);
            assert_ne!(b, list.to_vec(), "{}", e.summary());
        }
    }
}
