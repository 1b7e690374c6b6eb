//! An implementation's writer in the concurrent mode: the worker process drives the
//! implementation through its adapter (`adapters/PROTOCOL.md`), as it drives git through
//! `update-ref --stdin` and us through `RefDb`. Its transactions, reads and maintenance
//! (`compact`, `expire_reflog`, where the adapter offers them) go through the protocol; a
//! refusal's reason becomes the refusal class the checks look for a cause of; a crash or a
//! hang is a refusal with no class (the checks then find no cause for it) and the adapter
//! is started again. An adapter that declines transactions of several refs (`unsupported`)
//! gets each transaction again as its journal update alone, and only those from then on:
//! the accounting still places every transaction by its journal entry.

use std::path::PathBuf;
use std::time::Duration;

use reftable::ObjectId;
use serde_json::{json, Value};

use crate::concurrent::spec::{names, WorkerSpec};
use crate::err_class::ErrClass;
use crate::git::driver::{committer_at, BASE_TIME};
use crate::impls::process::Adapter;
use crate::impls::wire::{self, Answer};
use crate::ops::Update;

/// Seconds the adapter may take over one request (a held lock waits up to 3 s).
const TIMEOUT: Duration = Duration::from_secs(30);

/// One attempt's result: acknowledged, the error text, the refusal's class.
pub(crate) type Answered = (bool, String, Option<ErrClass>);

/// The adapter a worker writes through.
pub(crate) struct ImplWriter {
    argv: Vec<String>,
    gitdir: PathBuf,
    git: String,
    adapter: Adapter,
    /// It declined a transaction of several refs: from then on, journal updates alone.
    single_only: bool,
}

impl ImplWriter {
    /// Start the adapter of `spec` and open the shared repository.
    pub(crate) fn open(spec: &WorkerSpec) -> Result<ImplWriter, String> {
        let gitdir = spec.repo.join(".git");
        let adapter = start(&spec.adapter, &gitdir, &spec.git_version)?;
        Ok(ImplWriter {
            argv: spec.adapter.clone(),
            gitdir,
            git: spec.git_version.clone(),
            adapter,
            single_only: false,
        })
    }

    /// The current value of `name` as the implementation reads it after re-reading the
    /// stack (`None`: absent, a symref, or no answer; a wrong guess only makes a
    /// transaction fail its old-value check).
    pub(crate) fn read(&mut self, name: &str) -> Option<ObjectId> {
        self.refresh().ok()?;
        match self.adapter.ask(&json!({"verb": "ref", "name": name})) {
            Ok(Answer::Done(v)) => {
                let oid = v.get("ref")?.get("oid")?.as_str()?;
                ObjectId::from_hex(oid)
            }
            Ok(_) => None,
            Err(_) => {
                let _ = self.restart();
                None
            }
        }
    }

    /// One transaction of `updates` with `message`, its reflog entries dated at `tick`; cut
    /// to its first update (the journal's) once the adapter declines several refs at once.
    pub(crate) fn commit(
        &mut self,
        updates: &mut Vec<Update>,
        message: &str,
        tick: u64,
    ) -> Answered {
        if self.single_only {
            updates.truncate(1);
        }
        let request = wire::transaction(updates, message, false, &committer_at(tick));
        match self.answered(&request) {
            Ok(answered) => answered,
            Err(_) if updates.len() > 1 => {
                self.single_only = true;
                self.commit(updates, message, tick)
            }
            Err(m) => (false, format!("unsupported: {m}"), None),
        }
    }

    /// Maintenance number `k` (compaction of the whole stack, automatic compaction, expiry
    /// of the expiry ref's reflog, in turn): what it was and how it went; `None` when the
    /// adapter does not offer it or declines it as unsupported.
    pub(crate) fn maintain(&mut self, k: u32) -> Option<(String, Answered)> {
        let (what, verb, request) = match k % 3 {
            0 => (
                "compact",
                "compact",
                json!({"verb": "compact", "mode": "all"}),
            ),
            1 => (
                "compact auto",
                "compact",
                json!({"verb": "compact", "mode": "auto"}),
            ),
            _ => (
                "expire_reflog",
                "expire_reflog",
                json!({"verb": "expire_reflog", "name": names::EXPIRY,
                       "expire": BASE_TIME + 1_000_000_000, "rewrite": false,
                       "updateref": false, "dry_run": false}),
            ),
        };
        if !self.adapter.hello.offers(verb) {
            return None;
        }
        // Declined as unsupported (a mode or option it lacks): not tried, as not offered.
        let answered = self.answered(&request).ok()?;
        Some((what.to_string(), answered))
    }

    /// Ask `request` and read its answer as an attempt's result; `Err` with the adapter's
    /// words when it answers `unsupported` (never an attempt).
    fn answered(&mut self, request: &Value) -> Result<Answered, String> {
        Ok(match self.adapter.ask(request) {
            Ok(Answer::Done(_)) => (true, String::new(), None),
            Ok(Answer::Refused(r)) => {
                // `other` stands for several classes, none of which the checks can name.
                let class = match r.reason.as_str() {
                    "other" => None,
                    reason => crate::impls::verdict::classes_of(reason).first().copied(),
                };
                let text = format!("refused ({}): {}", r.reason, r.message);
                (false, text, class)
            }
            Ok(Answer::Error(m)) => (false, format!("error: {m}"), None),
            Ok(Answer::Unsupported(m)) => return Err(m),
            Err(f) => {
                let restarted = match self.restart() {
                    Ok(()) => String::new(),
                    Err(e) => format!("; not restarted: {e}"),
                };
                (false, format!("adapter {f}{restarted}"), None)
            }
        })
    }

    /// Re-read the stack: `reload` where offered, else `open` again.
    fn refresh(&mut self) -> Result<(), String> {
        let answer = if self.adapter.hello.offers("reload") {
            self.adapter.ask(&json!({"verb": "reload"}))
        } else {
            self.adapter.open(&self.gitdir, &self.git)
        };
        match answer {
            Ok(Answer::Done(_)) => Ok(()),
            Ok(other) => Err(format!("{other:?}")),
            Err(f) => {
                let _ = self.restart();
                Err(f.to_string())
            }
        }
    }

    /// A fresh adapter after a crash or a hang.
    fn restart(&mut self) -> Result<(), String> {
        self.adapter = start(&self.argv, &self.gitdir, &self.git)?;
        Ok(())
    }
}

/// Start `argv` and open `gitdir` in it.
fn start(argv: &[String], gitdir: &std::path::Path, git: &str) -> Result<Adapter, String> {
    let mut a = Adapter::start(argv, TIMEOUT)?;
    match a.open(gitdir, git) {
        Ok(Answer::Done(_)) => Ok(a),
        other => Err(format!("open {}: {other:?}", gitdir.display())),
    }
}
