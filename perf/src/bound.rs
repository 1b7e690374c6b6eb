//! The decode-only bound of iteration: the ref records of one table walked with the
//! cheapest correct decoding (block header, varints, prefix copy into one key buffer, value
//! skipped past, its first id byte read), folding the checksum `hotpaths` folds
//! (`h = h * 31 + len(name) + first id byte`); and the bandwidth floor (the bytes summed).
//! No merged view, no record struct, no check beyond what keeps the walk inside the buffer:
//! what iteration could cost at best, for `decode_bound` and `perf/c/compare.py`.

/// A reftable varint at `*at` (git's encoding: each continuation adds one before shifting).
#[inline(always)]
fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut byte = *b.get(*at)?;
    *at += 1;
    let mut v = u64::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *b.get(*at)?;
        *at += 1;
        v = ((v + 1) << 7) | u64::from(byte & 0x7f);
    }
    Some(v)
}

fn be(b: &[u8], at: usize, n: usize) -> u64 {
    b[at..at + n]
        .iter()
        .fold(0, |v, &x| (v << 8) | u64::from(x))
}

/// Where the ref blocks end, the hash size and the block size, from the header and footer.
pub fn layout(t: &[u8]) -> Result<(usize, usize, usize), String> {
    if t.len() < 24 || &t[..4] != b"REFT" {
        return Err("not a reftable".into());
    }
    let (header, footer, hash) = match t[4] {
        1 => (24, 68, 20),
        2 => (28, 72, if &t[24..28] == b"s256" { 32 } else { 20 }),
        v => return Err(format!("version {v}")),
    };
    let f = t.len().checked_sub(footer).ok_or("too short")?;
    let block_size = be(t, 5, 3) as usize;
    let mut end = f;
    for at in [f + header, f + header + 8, f + header + 24] {
        let pos = be(t, at, 8);
        // The obj section's word carries the id length in its low 5 bits.
        let pos = if at == f + header + 8 { pos >> 5 } else { pos } as usize;
        if pos > 0 && pos < end {
            end = pos;
        }
    }
    Ok((end, hash, block_size))
}

/// One walk over the ref blocks: (records, checksum).
pub fn walk(t: &[u8], end: usize, hash: usize, block_size: usize) -> Option<(u64, u64)> {
    let (mut ops, mut h) = (0u64, 0u64);
    let mut key = [0u8; 4096];
    let mut block = 0usize;
    while block < end {
        let start = if block == 0 {
            usize::from(t[4] == 2) * 4 + 24
        } else {
            block
        };
        if *t.get(start)? != b'r' {
            break;
        }
        let block_end = block + be(t, start + 1, 3) as usize;
        let restarts = be(t, block_end - 2, 2) as usize;
        let records_end = block_end - 2 - 3 * restarts;
        let mut at = start + 4;
        while at < records_end {
            let prefix = varint(t, &mut at)? as usize;
            let word = varint(t, &mut at)?;
            let (suffix, kind) = ((word >> 3) as usize, word & 7);
            key.get_mut(prefix..prefix + suffix)?
                .copy_from_slice(t.get(at..at + suffix)?);
            at += suffix;
            varint(t, &mut at)?;
            let first = match kind {
                1 | 2 => {
                    let b = *t.get(at)?;
                    at += hash * kind as usize;
                    u64::from(b)
                }
                3 => {
                    at += varint(t, &mut at)? as usize;
                    0
                }
                _ => 0,
            };
            ops += 1;
            h = h
                .wrapping_mul(31)
                .wrapping_add((prefix + suffix) as u64)
                .wrapping_add(first);
        }
        // Unpadded tables continue right after a block; padded ones at the next multiple
        // of the block size.
        block = if t.get(block_end) == Some(&b'r') || block_size == 0 {
            block_end
        } else {
            block_end.div_ceil(block_size) * block_size
        };
    }
    Some((ops, h))
}

/// The ref section's bytes summed as 64-bit words.
pub fn touch(t: &[u8]) -> u64 {
    t.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .fold(0u64, u64::wrapping_add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reftable::{HashId, Stack, StackOptions};

    /// The walk reads what the library reads: the same records and checksum on every
    /// one-table stack git wrote for the fixtures (padded and not, SHA-1 and SHA-256).
    #[test]
    fn the_walk_folds_the_checksum_of_the_library_iteration() {
        let repos = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/repos");
        let mut tried = 0;
        for entry in std::fs::read_dir(repos).unwrap() {
            let stack = entry.unwrap().path().join("reftable");
            let Ok(list) = std::fs::read_to_string(stack.join("tables.list")) else {
                continue;
            };
            if list.lines().count() != 1 {
                continue;
            }
            let t = std::fs::read(stack.join(list.trim())).unwrap();
            let (end, hash, block_size) = layout(&t).unwrap();
            let walked = walk(&t, end, hash, block_size).unwrap();
            let mut opts = StackOptions::default();
            let options =
                std::fs::read_to_string(stack.with_file_name("options")).unwrap_or_default();
            if options.contains("hash=sha256") {
                opts.write.hash = HashId::Sha256;
            }
            let st = Stack::open_or_create(&stack, opts).unwrap();
            let (mut ops, mut h) = (0u64, 0u64);
            let mut it = st.merged().refs().unwrap();
            while let Some(r) = it.next_record().unwrap() {
                let first = r.value_id().map_or(0, |id| u64::from(id.as_bytes()[0]));
                ops += 1;
                h = h
                    .wrapping_mul(31)
                    .wrapping_add(r.refname.len() as u64)
                    .wrapping_add(first);
            }
            assert_eq!(walked, (ops, h), "{}", stack.display());
            tried += 1;
        }
        assert!(tried >= 3, "only {tried} one-table fixtures");
    }
}
