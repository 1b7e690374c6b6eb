//! A bound on the size of every file git writes in the gate's cases, and what a git that
//! did not finish (it ran into that bound or into the timeout) was writing.
//!
//! Every repository of a default run together takes 2.6 MiB at its peak. A git whose writer
//! never ends (the registry's `writer-index-never-shrinks`: an index level that does not
//! shrink is written again forever) writes about 100 MB a second, for the whole timeout:
//! gigabytes into the scratch file system, the machine's memory when that is a tmpfs. So the
//! modes that run git bound the size of any file they and the processes they start write
//! ([`bound_file_writes`], `RLIMIT_FSIZE`, which children inherit): such a git is killed by
//! `SIGXFSZ` within a fraction of a second, and the gate reports it as a git that did not
//! finish ([`unfinished`]), with what it left ([`leftover`]).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// The largest file a mode may write: six times what all the repositories of a default run
/// take at their peak, and 0.2 s of a runaway release build of git (1.6 s of an `-O0` one).
pub const FILE_BOUND: u64 = 16 << 20;

/// The signal that kills a process writing past its file-size limit.
pub const SIGXFSZ: i32 = 25;

/// Bound the size of every file this process and the processes it starts write to
/// [`FILE_BOUND`] (a lower limit already set is kept).
pub fn bound_file_writes() -> Result<(), String> {
    let now = getrlimit(Resource::Fsize);
    if now.current.is_some_and(|c| c <= FILE_BOUND) {
        return Ok(());
    }
    let bound = Rlimit {
        current: Some(FILE_BOUND),
        maximum: now.maximum,
    };
    setrlimit(Resource::Fsize, bound).map_err(|e| format!("cannot bound file sizes: {e}"))
}

/// A divergence's detail for a git that did not finish: killed after the timeout
/// (`signal` `None`) or by a signal, which is `SIGXFSZ` here. `None` for any other signal
/// (a crash).
pub fn unfinished(
    command: &str,
    signal: Option<i32>,
    stacks: &[PathBuf],
    block_size: u32,
) -> Option<String> {
    let how = match signal {
        None => format!("{command} timed out"),
        Some(SIGXFSZ) => format!(
            "{command} wrote past the gate's {} MiB bound on a file's size (SIGXFSZ)",
            FILE_BOUND >> 20
        ),
        Some(_) => return None,
    };
    Some(match leftover(stacks, block_size) {
        Some(what) => format!("{how}; {what}"),
        None => how,
    })
}

/// How many of a table's last blocks are read for their type.
const TAIL_BLOCKS: u64 = 8;

/// The largest unfinished table (`*.temp.*`) git left in the reftable directories
/// `stacks`, said in a few words: its size and, when its last eight whole blocks of
/// `block_size` bytes are all index blocks, that it ends in index blocks (no table git
/// finishes does: the footer follows the last index).
pub fn leftover(stacks: &[PathBuf], block_size: u32) -> Option<String> {
    let largest = stacks
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".temp."))
        .filter_map(|e| Some((e.metadata().ok()?.len(), e.path())))
        .max()?;
    let (len, path) = largest;
    let ends_in_index = tail_is_index(&path, len, u64::from(block_size)).unwrap_or(false);
    Some(if ends_in_index {
        format!("it left an unfinished table of {len} bytes that ends in index blocks")
    } else {
        format!("it left an unfinished table of {len} bytes")
    })
}

/// Whether the file ends in [`TAIL_BLOCKS`] whole index blocks: padded blocks of
/// `block_size` bytes that start with the type `i` and a length that fits the block. Their
/// offsets are not known (log blocks before them are not padded), so every phase is tried.
fn tail_is_index(path: &Path, len: u64, block_size: u64) -> std::io::Result<bool> {
    let want = (TAIL_BLOCKS + 1) * block_size;
    if block_size < 8 || len < want {
        return Ok(false);
    }
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::Start(len - want))?;
    let mut tail = vec![0u8; want as usize];
    f.read_exact(&mut tail)?;
    let bs = block_size as usize;
    let is_index = |at: usize| {
        let n = u32::from_be_bytes([0, tail[at + 1], tail[at + 2], tail[at + 3]]) as usize;
        tail[at] == b'i' && n > 4 && n <= bs
    };
    let last_start = tail.len() - bs;
    Ok((0..bs).any(|shift| {
        let last = last_start - shift;
        (0..TAIL_BLOCKS as usize).all(|k| is_index(last - k * bs))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(dir: &Path, name: &str, blocks: &[u8], block_size: usize) {
        let mut bytes = Vec::new();
        for &t in blocks {
            let mut b = vec![0u8; block_size];
            b[0] = t;
            b[3] = 40;
            bytes.extend(b);
        }
        std::fs::write(dir.join(name), bytes).unwrap();
    }

    #[test]
    fn a_table_left_ending_in_index_blocks_is_named_so() {
        let d = tempfile::tempdir().unwrap();
        table(d.path(), "0x1-0x1-a.temp.x", b"rrrriiiiiiiiii", 300);
        table(d.path(), "0x1-0x1-b.ref", &[b'i'; 40], 300);
        let said = leftover(&[d.path().to_path_buf()], 300).unwrap();
        assert_eq!(
            said,
            "it left an unfinished table of 4200 bytes that ends in index blocks"
        );
        let detail = unfinished("git", Some(SIGXFSZ), &[d.path().to_path_buf()], 300).unwrap();
        assert!(
            detail.starts_with("git wrote past the gate's 16 MiB bound"),
            "{detail}"
        );
        assert!(detail.ends_with("ends in index blocks"), "{detail}");
    }

    #[test]
    fn index_blocks_after_unpadded_log_blocks_are_found_at_any_offset() {
        let d = tempfile::tempdir().unwrap();
        table(d.path(), "0x1-0x1-a.temp.x", b"riiiiiiiiiii", 300);
        let path = d.path().join("0x1-0x1-a.temp.x");
        let mut bytes = vec![b'g', 0, 0, 90];
        bytes.extend(std::iter::repeat_n(7u8, 173));
        bytes.extend(std::fs::read(&path).unwrap());
        bytes.truncate(bytes.len() - 120);
        std::fs::write(&path, &bytes).unwrap();
        assert!(leftover(&[d.path().to_path_buf()], 300)
            .unwrap()
            .ends_with("ends in index blocks"));
    }

    #[test]
    fn the_largest_table_left_in_any_stack_is_the_one_described() {
        let (main, wt) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        table(main.path(), "0x1-0x1-a.temp.x", b"rg", 300);
        table(wt.path(), "0x2-0x2-b.temp.y", b"riiiiiiiiiii", 300);
        let stacks = [main.path().to_path_buf(), wt.path().to_path_buf()];
        let said = leftover(&stacks, 300).unwrap();
        assert_eq!(
            said,
            "it left an unfinished table of 3600 bytes that ends in index blocks"
        );
        assert_eq!(
            leftover(&stacks[..1], 300).unwrap(),
            "it left an unfinished table of 600 bytes"
        );
    }

    #[test]
    fn a_table_with_other_blocks_at_its_end_is_only_measured() {
        let d = tempfile::tempdir().unwrap();
        table(d.path(), "0x1-0x1-a.temp.x", b"riiiiiiiiig", 300);
        assert_eq!(
            leftover(&[d.path().to_path_buf()], 300).unwrap(),
            "it left an unfinished table of 3300 bytes"
        );
        assert_eq!(
            unfinished("git", None, &[PathBuf::from("/nonexistent")], 300).unwrap(),
            "git timed out"
        );
        assert_eq!(
            unfinished("git", Some(11), &[d.path().to_path_buf()], 300),
            None
        );
    }
}
