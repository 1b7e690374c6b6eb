//! Lock files (`<file>.lock`, created exclusively, committed by rename) and temporary files,
//! the way git's lockfile API and the reftable stack use them.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// A held lock on `path`, materialized as the file `path.lock`. Dropping it without
/// [`LockFile::commit`] removes the lock file.
#[derive(Debug)]
pub(crate) struct LockFile {
    target: PathBuf,
    lock_path: PathBuf,
    file: Option<File>,
}

impl LockFile {
    /// Take the lock, waiting up to `timeout` (`None`: forever) with growing, jittered sleeps.
    pub(crate) fn acquire(target: &Path, timeout: Option<Duration>) -> Result<LockFile> {
        let mut lock_path = target.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        let start = Instant::now();
        let mut backoff_ms = 1u64;
        loop {
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock_path)
            {
                Ok(file) => {
                    return Ok(LockFile {
                        target: target.to_path_buf(),
                        lock_path,
                        file: Some(file),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let waited = start.elapsed();
                    let expired = timeout.is_some_and(|t| waited >= t);
                    if expired {
                        return Err(Error::new(
                            ErrorKind::Lock,
                            locked_message(target, &lock_path),
                        )
                        .in_file(&lock_path));
                    }
                    let mut sleep = Duration::from_millis(
                        backoff_ms * (750 + random_u32() as u64 % 500) / 1000 + 1,
                    );
                    if let Some(t) = timeout {
                        sleep = sleep
                            .min(t.saturating_sub(waited))
                            .max(Duration::from_millis(1));
                    }
                    std::thread::sleep(sleep);
                    backoff_ms = (backoff_ms * 2).min(100);
                }
                Err(e) => return Err(Error::io(e, "create lock file").in_file(&lock_path)),
            }
        }
    }

    /// Path of the lock file.
    pub(crate) fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    /// Give up the open file handle but keep holding the lock (the file stays).
    pub(crate) fn close(&mut self) {
        self.file = None;
    }

    /// Write the new contents of the locked file, optionally fsync them.
    pub(crate) fn write_contents(&mut self, data: &[u8], fsync: bool) -> Result<()> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| Error::api("lock file already closed"))?;
        file.write_all(data)
            .map_err(|e| Error::io(e, "write lock file").in_file(&self.lock_path))?;
        if fsync {
            file.sync_all()
                .map_err(|e| Error::io(e, "fsync lock file").in_file(&self.lock_path))?;
        }
        Ok(())
    }

    /// Release the lock by removing the lock file, reporting when it cannot be removed: the
    /// lock then stays, and every writer is refused until someone deletes it, so the caller
    /// must hear of it (dropping the lock ignores the failure).
    pub(crate) fn release(mut self) -> Result<()> {
        self.file = None;
        let path = std::mem::take(&mut self.lock_path);
        std::fs::remove_file(&path)
            .map_err(|e| Error::io(e, "remove lock file (delete it by hand)").in_file(&path))
    }

    /// Replace the target with the lock file's contents (atomic rename) and release.
    pub(crate) fn commit(mut self) -> Result<()> {
        self.file = None;
        std::fs::rename(&self.lock_path, &self.target)
            .map_err(|e| Error::io(e, "rename lock file into place").in_file(&self.target))?;
        self.lock_path = PathBuf::new();
        Ok(())
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        self.file = None;
        if !self.lock_path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.lock_path);
        }
    }
}

/// What to tell a writer that finds `lock` taken: who may hold it, how old it is, and what
/// to do when no one does.
fn locked_message(target: &Path, lock: &Path) -> String {
    let age = std::fs::metadata(lock)
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|m| std::time::SystemTime::now().duration_since(m).ok())
        .map_or(String::new(), |a| format!(" (for {} s)", a.as_secs()));
    format!(
        "{} is locked{age}: another git or reftable process is writing it. If none is \
         running, a killed writer left the lock: `reftable clean-stale` removes such files \
         once they are old enough, or delete {} by hand",
        target.display(),
        lock.display()
    )
}

/// A temporary file that is deleted on drop unless renamed with [`TempFile::persist`].
#[derive(Debug)]
pub(crate) struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// Create `<prefix>.temp.XXXXXX` exclusively (mkstemp style).
    pub(crate) fn create(prefix: &Path) -> Result<(TempFile, File)> {
        for _ in 0..100 {
            let mut p = prefix.as_os_str().to_owned();
            p.push(format!(".temp.{:06x}", random_u32() & 0xff_ffff));
            let path = PathBuf::from(p);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => return Ok((TempFile { path }, f)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(e, "create temporary table").in_file(&path)),
            }
        }
        Err(Error::new(ErrorKind::Io, "could not find a free temporary file name").in_file(prefix))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Rename the file to `dest`; it is no longer deleted on drop.
    pub(crate) fn persist(mut self, dest: &Path) -> Result<()> {
        std::fs::rename(&self.path, dest)
            .map_err(|e| Error::io(e, "rename temporary table").in_file(dest))?;
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A random u32 for table names and back-off jitter: xorshift seeded from the clock, the
/// process id and a counter, so concurrent writers pick different names.
pub(crate) fn random_u32() -> u32 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        x = nanos ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    (x >> 16) as u32
}

/// Set the permission bits of `path` (Unix only; a no-op elsewhere).
pub(crate) fn set_permissions(path: &Path, mode: Option<u32>) -> Result<()> {
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io(e, "chmod").in_file(path))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_that_cannot_be_removed_is_reported_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("tables.list");
        let lock = LockFile::acquire(&target, Some(Duration::ZERO)).unwrap();
        // A directory where the lock file was: removing it as a file fails.
        let path = lock.lock_path().to_path_buf();
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let e = lock.release().unwrap_err();
        assert_eq!(e.file(), Some(path.as_path()));
        assert!(e.to_string().contains("delete it by hand"), "{e}");
        let lock = LockFile::acquire(&dir.path().join("other"), Some(Duration::ZERO)).unwrap();
        let path = lock.lock_path().to_path_buf();
        lock.release().unwrap();
        assert!(!path.exists());
    }
}
