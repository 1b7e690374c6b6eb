//! `crafted DIR [REFS]`: the hostile and the merely huge inputs of the resource-bound report
//! (`ci/resource-bounds.sh`), written into DIR. Each case is a directory holding a
//! `reftable/` stack or a single table, generated here rather than committed:
//!
//! - `big-log-blocks/`: 100 log-only tables, one reflog entry each whose log block inflates
//!   to 16 MiB (`reftable.blockSize=16777215` and a long message, as git itself writes);
//! - `listed-20000-times/`: one 40 KB table named 20,000 times in `tables.list`;
//! - `sparse-5gib/`: a table file of 5 GiB, a valid header and then holes;
//! - `repeated-16mib-blocks/`: one table of 100 log blocks, each the same block inflating
//!   to 16 MiB (the keys repeat, so the log section is out of order from the second block);
//! - `long-messages/`: a valid table of 60 reflog entries with 16 MiB messages (about 1 MB);
//! - `many-tables/`: a stack of 40,000 one-ref tables and 100 unlisted ones a crashed
//!   writer could have left (for `Stack::reload` and `Stack::clean`, once quadratic);
//! - `valid-refs/`: a valid table of REFS refs (default 2,000,000) to distinct objects, with
//!   its obj section, for `verify`'s memory against the table's size.

use std::fs;
use std::path::Path;

use reftable::{HashId, LogRecord, ObjectId, RefRecord, RefValue, Table, WriteOptions, Writer};
use reftable_testkit::tables::log_entry;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const BIG_BLOCK: u32 = 16_777_215;

fn stack(dir: &Path, tables: &[(String, Vec<u8>)], listed: &[&str]) -> Res<()> {
    let rt = dir.join("reftable");
    fs::create_dir_all(&rt)?;
    for (name, bytes) in tables {
        fs::write(rt.join(name), bytes)?;
    }
    let mut list = listed.join("\n");
    list.push('\n');
    fs::write(rt.join("tables.list"), list)?;
    Ok(())
}

fn table_name(ui: u64) -> String {
    format!(
        "0x{ui:012x}-0x{ui:012x}-{:08x}.ref",
        (ui as u32).wrapping_mul(2_654_435_761)
    )
}

fn log_table(entries: &[LogRecord], min: u64, max: u64) -> Res<Vec<u8>> {
    let opts = WriteOptions::default().block_size(BIG_BLOCK);
    let mut w = Writer::new(Vec::new(), opts);
    w.set_limits(min, max)?;
    for e in entries {
        w.add_log(e)?;
    }
    Ok(w.finish()?)
}

/// A message whose log record fills a 16 MiB block.
fn long_message() -> String {
    "m".repeat(16 * 1024 * 1024 - 4096)
}

fn big_log_blocks(dir: &Path) -> Res<()> {
    let msg = long_message();
    let mut tables = Vec::new();
    for ui in 1..=100u64 {
        let e = log_entry("refs/heads/main", ui, &msg, HashId::Sha1);
        tables.push((table_name(ui), log_table(&[e], ui, ui)?));
    }
    let names: Vec<&str> = tables.iter().map(|t| t.0.as_str()).collect();
    stack(dir, &tables, &names)
}

fn listed_many_times(dir: &Path) -> Res<()> {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 1)?;
    let id = ObjectId::from_bytes(&[7; 20]).ok_or("id")?;
    for i in 0..1000 {
        w.add_ref(&RefRecord::new(
            format!("refs/heads/b{i:05}"),
            1,
            RefValue::Object(id),
        ))?;
    }
    let name = table_name(1);
    let listed = vec![name.as_str(); 20_000];
    stack(dir, &[(name.clone(), w.finish()?)], &listed)
}

fn sparse(dir: &Path) -> Res<()> {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 1)?;
    let id = ObjectId::from_bytes(&[7; 20]).ok_or("id")?;
    w.add_ref(&RefRecord::new("refs/heads/main", 1, RefValue::Object(id)))?;
    let bytes = w.finish()?;
    fs::create_dir_all(dir)?;
    let path = dir.join(table_name(1));
    fs::write(&path, &bytes[..24])?;
    fs::OpenOptions::new()
        .write(true)
        .open(&path)?
        .set_len(5 << 30)?;
    Ok(())
}

/// One table whose log section is the same 16 MiB log block 100 times over.
fn repeated_blocks(dir: &Path) -> Res<()> {
    let e = log_entry("refs/heads/main", 1, &long_message(), HashId::Sha1);
    let one = log_table(&[e], 1, 1)?;
    let t = Table::from_bytes("one.ref", one.clone())?;
    let info = *t.info();
    let start = info.logs.offset as usize;
    let end = info.footer_offset as usize;
    let block = &one[start..end];
    let mut out = one[..start].to_vec();
    for _ in 0..100 {
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&one[end..]);
    fs::create_dir_all(dir)?;
    fs::write(dir.join(table_name(1)), out)?;
    Ok(())
}

fn long_messages(dir: &Path) -> Res<()> {
    let msg = long_message();
    let entries: Vec<LogRecord> = (0..60)
        .map(|i| log_entry(&format!("refs/heads/b{i:02}"), 1, &msg, HashId::Sha1))
        .collect();
    fs::create_dir_all(dir)?;
    fs::write(dir.join(table_name(1)), log_table(&entries, 1, 1)?)?;
    Ok(())
}

/// Tables in the `many-tables` stack.
const MANY: u64 = 40_000;

fn many_tables(dir: &Path) -> Res<()> {
    let rt = dir.join("reftable");
    fs::create_dir_all(&rt)?;
    let id = ObjectId::from_bytes(&[7; 20]).ok_or("id")?;
    let mut list = String::new();
    for k in 1..=MANY + 100 {
        // The last 100 are unlisted, with update indexes the stack covers.
        let ui = if k <= MANY { k } else { k - MANY };
        let mut w = Writer::new(Vec::new(), WriteOptions::default());
        w.set_limits(ui, ui)?;
        let name = format!("refs/heads/t{:05}", k % 1000);
        w.add_ref(&RefRecord::new(name, ui, RefValue::Object(id)))?;
        let file = if k <= MANY {
            table_name(ui)
        } else {
            format!("0x{ui:012x}-0x{ui:012x}-deadbeef.ref")
        };
        fs::write(rt.join(&file), w.finish()?)?;
        if k <= MANY {
            list.push_str(&file);
            list.push('\n');
        }
    }
    fs::write(rt.join("tables.list"), list)?;
    Ok(())
}

/// `crafted --stack-scale DIR`: time `Stack::open`, `reload` and `clean` on the stack in DIR
/// (the `many-tables` input), printing one line each. A report: wall times.
fn stack_scale(dir: &Path) -> Res<()> {
    use reftable::stack::{Stack, StackOptions};
    let t = std::time::Instant::now();
    let mut st = Stack::open_or_create(dir.join("reftable"), StackOptions::default())?;
    println!("open {} tables: {:.2?}", st.tables().len(), t.elapsed());
    let t = std::time::Instant::now();
    st.reload()?;
    println!("reload: {:.2?}", t.elapsed());
    let before = fs::read_dir(dir.join("reftable"))?.count();
    let t = std::time::Instant::now();
    st.clean()?;
    let after = fs::read_dir(dir.join("reftable"))?.count();
    println!(
        "clean: {:.2?}, {} files removed",
        t.elapsed(),
        before - after
    );
    Ok(())
}

fn valid_refs(dir: &Path, n: usize) -> Res<()> {
    let mut w = Writer::new(Vec::new(), WriteOptions::default());
    w.set_limits(1, 1)?;
    let mut rec = RefRecord::new(Vec::new(), 1, RefValue::Deletion);
    for i in 0..n {
        let mut id = [0u8; 20];
        // Spread over the id space so that the obj section has one record per ref.
        id[..8].copy_from_slice(&(i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
        rec.refname.clear();
        rec.refname
            .extend_from_slice(format!("refs/heads/branch-{i:08}").as_bytes());
        rec.value = RefValue::Object(ObjectId::from_bytes(&id).ok_or("id")?);
        w.add_ref(&rec)?;
    }
    fs::create_dir_all(dir)?;
    fs::write(dir.join(table_name(1)), w.finish()?)?;
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--stack-scale") {
        return stack_scale(Path::new(
            args.get(2).ok_or("usage: crafted --stack-scale DIR")?,
        ));
    }
    let out = Path::new(
        args.get(1)
            .ok_or("usage: crafted DIR [REFS] | crafted --stack-scale DIR")?,
    );
    let refs: usize = args
        .get(2)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(2_000_000);
    big_log_blocks(&out.join("big-log-blocks"))?;
    listed_many_times(&out.join("listed-20000-times"))?;
    sparse(&out.join("sparse-5gib"))?;
    repeated_blocks(&out.join("repeated-16mib-blocks"))?;
    long_messages(&out.join("long-messages"))?;
    many_tables(&out.join("many-tables"))?;
    valid_refs(&out.join("valid-refs"), refs)?;
    Ok(())
}
