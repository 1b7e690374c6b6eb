//! What transactions ask about objects (existence, commit or not, a tag's peeled id),
//! answered by a `git cat-file --batch-check` process on the repository: the library has
//! no object database of its own. Without git, every object is taken for a commit.

use std::cell::RefCell;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use reftable::refdb::{LookupError, ObjectKind, ObjectLookup};
use reftable::{HashId, ObjectId};

/// A running `git cat-file --batch-check` on one repository.
#[derive(Debug)]
pub struct GitObjects {
    child: Child,
    io: RefCell<(ChildStdin, BufReader<ChildStdout>)>,
    hash: HashId,
}

impl GitObjects {
    /// Start the lookup process for `gitdir`; `None` when git cannot be run.
    pub fn start(gitdir: &Path, hash: HashId) -> Option<GitObjects> {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(gitdir)
            .args(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        Some(GitObjects {
            child,
            io: RefCell::new((stdin, stdout)),
            hash,
        })
    }

    /// Ask about `spec`: its id and type, `None` when missing.
    fn ask(&self, spec: &str) -> Result<Option<(ObjectId, String)>, LookupError> {
        let mut io = self.io.borrow_mut();
        writeln!(io.0, "{spec}")?;
        io.0.flush()?;
        let mut line = String::new();
        if io.1.read_line(&mut line)? == 0 {
            return Err("git cat-file ended".into());
        }
        let mut words = line.split_whitespace();
        let (Some(id), Some(kind)) = (words.next(), words.next()) else {
            return Err(format!("git cat-file said {line:?}").into());
        };
        if kind == "missing" || kind == "ambiguous" {
            return Ok(None);
        }
        let id = ObjectId::from_hex(id).ok_or_else(|| format!("git cat-file said {line:?}"))?;
        Ok(Some((id, kind.to_string())))
    }
}

impl ObjectLookup for GitObjects {
    fn lookup(&self, id: &ObjectId) -> Result<ObjectKind, LookupError> {
        if id.hash() != self.hash {
            return Ok(ObjectKind::Missing);
        }
        Ok(match self.ask(&id.to_string())? {
            None => ObjectKind::Missing,
            Some((_, kind)) if kind == "commit" => ObjectKind::Commit,
            Some((_, kind)) if kind == "tag" => match self.ask(&format!("{id}^{{}}"))? {
                Some((peeled, _)) => ObjectKind::Tag { peeled },
                None => ObjectKind::Other,
            },
            Some(_) => ObjectKind::Other,
        })
    }
}

impl Drop for GitObjects {
    fn drop(&mut self) {
        // Closing stdin ends cat-file; wait so no zombie is left.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
