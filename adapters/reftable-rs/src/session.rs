//! The adapter's state between requests (the open repository and its object lookups) and
//! the dispatch of one request to its verb.

use std::path::Path;

use reftable::refdb::{AssumeCommits, ObjectLookup};
use reftable::HashId;
use serde_json::{json, Value};

use crate::answer::Answer;
use crate::objects::GitObjects;
use crate::repo::Repo;
use crate::{maintenance, reads, transaction};

/// The protocol version spoken.
pub const PROTOCOL: u64 = 1;

/// Every verb this adapter answers.
pub const VERBS: &[&str] = &[
    "hello",
    "open",
    "refs",
    "ref",
    "reflog",
    "reflogs",
    "transaction",
    "compact",
    "expire_reflog",
    "rename",
    "copy",
    "verify",
    "reload",
    "close",
    "quit",
];

/// Whether to read another request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Go,
    /// `quit` was answered: exit.
    Quit,
}

/// The open repository, if any, and git's object lookups for it.
#[derive(Debug, Default)]
pub struct Session {
    repo: Option<Repo>,
    objects: Option<GitObjects>,
}

/// The answer to `hello`.
fn hello(req: &Value) -> Answer {
    match req.get("protocol").and_then(Value::as_u64) {
        Some(PROTOCOL) | None => {}
        Some(p) => return Answer::unsupported(format!("protocol {p}; this adapter speaks 1")),
    }
    // Tables are git's byte for byte when tags are peeled as git peels them, which needs
    // git's object lookups: claimed only where git can be run.
    let git = std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok();
    let mut claims = vec!["peeled", "reflogs_written"];
    if git {
        claims.extend(["byte_identical_tables", "object_checks"]);
    }
    Answer::done_with(json!({
        "protocol": PROTOCOL,
        "implementation": "reftable-rs",
        "version": env!("CARGO_PKG_VERSION"),
        "verbs": VERBS,
        "claims": claims,
        "hashes": ["sha1", "sha256"],
    }))
}

impl Session {
    /// Answer one request.
    pub fn serve(&mut self, req: &Value) -> (Answer, Flow) {
        let verb = req.get("verb").and_then(Value::as_str).unwrap_or("");
        let answer = match verb {
            "hello" => hello(req),
            "quit" => return (Answer::done(), Flow::Quit),
            "open" => self.open(req),
            "close" => {
                self.repo = None;
                self.objects = None;
                Answer::done()
            }
            "" => Answer::error("missing string field 'verb'"),
            _ if !VERBS.contains(&verb) => Answer::unsupported(format!("verb '{verb}'")),
            _ => self.on_repo(verb, req).unwrap_or_else(|a| a),
        };
        (answer, Flow::Go)
    }

    /// `open`: the reftable stack of a git directory.
    fn open(&mut self, req: &Value) -> Answer {
        let Some(gitdir) = req.get("gitdir").and_then(Value::as_str) else {
            return Answer::error("missing string field 'gitdir'");
        };
        self.repo = None;
        self.objects = None;
        let git = req.get("git").and_then(Value::as_str);
        match Repo::open(Path::new(gitdir), git) {
            Ok(repo) => {
                let hash = match repo.hash {
                    HashId::Sha1 => "sha1",
                    HashId::Sha256 => "sha256",
                };
                self.objects = GitObjects::start(&repo.gitdir, repo.hash);
                self.repo = Some(repo);
                Answer::done_with(json!({ "hash": hash }))
            }
            Err(e) => Answer::error(format!("{e:#}")),
        }
    }

    /// The verbs that need an open repository.
    fn on_repo(&mut self, verb: &str, req: &Value) -> Result<Answer, Answer> {
        let repo = self
            .repo
            .as_mut()
            .ok_or_else(|| Answer::error("no repository is open"))?;
        let objects: &dyn ObjectLookup = match &self.objects {
            Some(o) => o,
            None => &AssumeCommits,
        };
        let fail = |e: reftable::Error| Answer::from_error(&e);
        // Every verb sees the stack as it is on disk now, as each git command does.
        if verb != "reload" && !repo.db.stack().is_up_to_date().map_err(fail)? {
            repo.db.reload().map_err(fail)?;
        }
        match verb {
            "refs" => reads::refs(&repo.db).map_err(fail),
            "ref" => reads::one_ref(&repo.db, req),
            "reflog" => reads::reflog(&repo.db, req),
            "reflogs" => reads::reflogs(&repo.db).map_err(fail),
            "transaction" => transaction::transaction(repo, req, Some(objects)),
            "compact" => maintenance::compact(repo, req),
            "expire_reflog" => maintenance::expire_reflog(repo, req, objects),
            "rename" => maintenance::rename_or_copy(repo, req, false),
            "copy" => maintenance::rename_or_copy(repo, req, true),
            "verify" => maintenance::verify(repo),
            "reload" => repo.db.reload().map(|()| Answer::done()).map_err(fail),
            _ => Err(Answer::unsupported(format!("verb '{verb}'"))),
        }
    }
}
