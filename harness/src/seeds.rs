//! Seed inputs for the byte-level fuzz targets, cut from real tables (the git-written
//! fixtures): whole tables, single blocks, single records with their previous key, and
//! whole stacks; plus small synthetic tables with multi-level indexes, which git only
//! writes for tables too large to be good seeds.

use reftable::codec::block::{parse_block, BlockCursor, BlockInfo};
use reftable::codec::format::BlockType;
use reftable::codec::record::CodecContext;
use reftable::codec::record::{IndexRecord, ObjRecord, Record};
use reftable::table::Stats;
use reftable::{
    HashId, LogRecord, LogUpdate, LogValue, ObjectId, RefRecord, RefValue, Table, WriteOptions,
    Writer,
};

use crate::stack_input::StackInput;

/// The flags byte of `block_decode` for a block of `t` at `offset`.
fn block_flags(t: &Table, offset: u64) -> u8 {
    let mut flags = 0u8;
    if t.hash() == HashId::Sha256 {
        flags |= 1;
    }
    if offset == 0 {
        flags |= 2;
    }
    flags |= match t.info().block_size {
        0 => 0,
        256 => 1 << 2,
        4096 => 2 << 2,
        _ => 3 << 2,
    };
    flags | ((t.min_update_index().min(15) as u8) << 4)
}

/// One `block_decode` input per block of `t`: flags, then the block's bytes up to the next
/// block (the first block keeps the file header before it).
pub fn blocks(t: &Table) -> Vec<Vec<u8>> {
    let footer = t.info().footer_offset as usize;
    t.blocks()
        .filter_map(|b| b.ok())
        .map(|b| {
            let start = b.offset as usize;
            let end = (start + b.full_size).min(footer);
            let mut seed = vec![block_flags(t, b.offset)];
            seed.extend_from_slice(&t.bytes()[start..end]);
            seed
        })
        .collect()
}

/// The (inflated) bytes of the block `info` of `t`.
fn block_bytes(t: &Table, info: &BlockInfo) -> Vec<u8> {
    let footer = t.info().footer_offset as usize;
    let data = &t.bytes()[info.offset as usize..footer];
    if info.block_type != BlockType::Log {
        return data[..info.block_len].to_vec();
    }
    let mut inflated = Vec::new();
    parse_block(
        data,
        info.offset,
        info.header_off,
        t.info().block_size as usize,
        None,
        &mut inflated,
        &mut Stats::default(),
    )
    .expect("block parsed before");
    inflated
}

fn records_of<R: Record>(
    info: &BlockInfo,
    data: &[u8],
    ctx: &CodecContext,
    kind: u8,
) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur = BlockCursor::default();
    cur.reset(info);
    let mut rec = R::default();
    let mut stats = Stats::default();
    loop {
        let prev = cur.key().to_vec();
        let at = cur.pos();
        if !matches!(cur.next(info, data, &mut rec, ctx, &mut stats), Ok(true)) {
            break;
        }
        if prev.len() > 255 {
            continue;
        }
        let mut flags = kind;
        if ctx.hash_size == 32 {
            flags |= 4;
        }
        if ctx.min_update_index == 1 {
            flags |= 1 << 3;
        } else if ctx.min_update_index != 0 {
            continue;
        }
        let mut seed = vec![flags, prev.len() as u8];
        seed.extend_from_slice(&prev);
        seed.extend_from_slice(&data[at..cur.pos()]);
        out.push(seed);
    }
    out
}

/// One `record_decode` input per record of `t` (records whose previous key is longer than
/// 255 bytes, or whose table's `min_update_index` the flags cannot express, are skipped).
pub fn records(t: &Table) -> Vec<Vec<u8>> {
    let ctx = t.codec_context();
    let mut out = Vec::new();
    for b in t.blocks().filter_map(|b| b.ok()) {
        let data = block_bytes(t, &b);
        out.extend(match b.block_type {
            BlockType::Ref => records_of::<RefRecord>(&b, &data, &ctx, 0),
            BlockType::Log => records_of::<LogRecord>(&b, &data, &ctx, 1),
            BlockType::Obj => records_of::<ObjRecord>(&b, &data, &ctx, 2),
            _ => records_of::<IndexRecord>(&b, &data, &ctx, 3),
        });
    }
    out
}

/// The `stack_read` input for a `tables.list` and the files it names.
pub fn stack(list: &[u8], files: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    StackInput {
        list,
        files: files
            .iter()
            .map(|(n, b)| (n.as_slice(), b.as_slice()))
            .collect(),
    }
    .encode()
}

/// Small tables (about 1 to 8 KB) with multi-level ref indexes, obj sections and, in the
/// larger ones, indexed log sections: tiny blocks and short names make many levels from few
/// records.
pub fn synthetic_tables() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (block_size, refs, logs, hash) in [
        (64u32, 40usize, 0usize, HashId::Sha1),
        (80, 60, 0, HashId::Sha1),
        (96, 40, 0, HashId::Sha256),
        (160, 80, 30, HashId::Sha1),
    ] {
        let opts = WriteOptions::default()
            .block_size(block_size)
            .restart_interval(2)
            .hash(hash);
        let mut w = Writer::new(Vec::new(), opts);
        w.set_limits(1, 2).expect("limits");
        let id = |i: usize| ObjectId::from_bytes(&vec![(i % 5) as u8; hash.size()]).expect("id");
        for i in 0..refs {
            let r = RefRecord::new(
                format!("r/{i:03}"),
                1 + (i % 2) as u64,
                RefValue::Object(id(i)),
            );
            w.add_ref(&r).expect("ref fits");
        }
        for i in 0..logs {
            w.add_log(&LogRecord {
                refname: format!("r/{i:03}").into_bytes(),
                update_index: 2,
                value: LogValue::Update(LogUpdate {
                    old_id: id(i),
                    new_id: id(i + 1),
                    message: b"m".to_vec(),
                    ..Default::default()
                }),
            })
            .expect("log fits");
        }
        out.push(w.finish().expect("table"));
    }
    out
}
