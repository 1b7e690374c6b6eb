//! Running one case: the same operations on git (reference repository), on our ref database,
//! on the model and on the files-backend twin, with every check after every step.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reftable::refdb::{Committer, ObjectKind, ObjectLookup, RefDb, RefDbOptions};
use reftable::refname::is_valid_refname;
use reftable::{ErrorKind, HashId, ObjectId, StackOptions, WriteOptions};
use serde::{Deserialize, Serialize};

use crate::gen::{Pool, Resolver};
use crate::git::{Exit, Git, TxnResult, UpdateRef, BASE_TIME, EMAIL, NAME};
use crate::model::{Model, Objects, Refusal};
use crate::ops::{CaseOptions, Expire, Op};
use crate::snapshot::{SValue, Snapshot};
use crate::twin::Twin;

/// The checks the gate makes; each divergence names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// git and we accept or refuse the same operations.
    Verdict,
    /// Refused operations fail for the same reason.
    ErrorClass,
    /// Tables are byte-identical (all but the random part of the file name).
    Bytes,
    /// Our reader on git's stack sees what our ref database holds.
    OursReadsGit,
    /// The model agrees with us.
    Model,
    /// git's `for-each-ref` on its stack matches our refs.
    GitView,
    /// git's reflogs (`log -g`) match ours.
    GitReflogs,
    /// The files-backend twin (libgit2) holds the same refs.
    Twin,
    /// git reads our stack: `for-each-ref`, reflogs and `pack-refs` on a copy of it.
    GitReadsOurs,
    /// git died of a signal.
    GitCrashed,
    /// git did not finish in time.
    Hang,
}

impl Check {
    /// Every check.
    pub const ALL: [Check; 11] = [
        Check::Verdict,
        Check::ErrorClass,
        Check::Bytes,
        Check::OursReadsGit,
        Check::Model,
        Check::GitView,
        Check::GitReflogs,
        Check::Twin,
        Check::GitReadsOurs,
        Check::GitCrashed,
        Check::Hang,
    ];
}

/// A difference between implementations at one step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// Index of the operation after which it showed (ops.len() for end-of-case checks).
    pub step: usize,
    /// Which check.
    pub check: Check,
    /// Classification (value mismatch, missing ref, …).
    pub class: String,
    /// What differs.
    pub detail: String,
}

/// Why an operation was refused, in classes comparable across implementations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrClass {
    /// Invalid ref name.
    Name,
    /// D/F conflict or duplicate update.
    Conflict,
    /// Old value mismatch.
    Mismatch,
    /// Missing object or non-commit on a branch.
    Object,
    /// Lock held.
    Lock,
    /// No reflog to work on.
    NoReflog,
    /// Anything else.
    Other,
}

/// Classify git's error output.
pub fn classify_git(stderr: &str) -> ErrClass {
    let s = stderr;
    if s.contains("bad name") || s.contains("invalid ref format") || s.contains("pseudoref") {
        ErrClass::Name
    } else if s.contains("exists; cannot create")
        || s.contains("at the same time")
        || s.contains("multiple updates")
    {
        ErrClass::Conflict
    } else if s.contains("nonexistent object") || s.contains("non-commit") {
        ErrClass::Object
    } else if s.contains("cannot lock references") || s.contains("Unable to create") {
        ErrClass::Lock
    } else if s.contains("cannot lock ref") || s.contains("verifying symref target") {
        ErrClass::Mismatch
    } else if s.contains("points nowhere") || s.contains("no reflog") {
        ErrClass::NoReflog
    } else {
        ErrClass::Other
    }
}

fn classify_ours(e: &reftable::Error) -> ErrClass {
    match e.kind() {
        ErrorKind::Refname => ErrClass::Name,
        ErrorKind::NameConflict => ErrClass::Conflict,
        ErrorKind::OldValueMismatch => ErrClass::Mismatch,
        ErrorKind::InvalidObject => ErrClass::Object,
        ErrorKind::Lock => ErrClass::Lock,
        _ => ErrClass::Other,
    }
}

fn classify_model(r: Refusal) -> ErrClass {
    match r {
        Refusal::Name => ErrClass::Name,
        Refusal::Conflict => ErrClass::Conflict,
        Refusal::Mismatch => ErrClass::Mismatch,
        Refusal::Object => ErrClass::Object,
    }
}

/// Objects of one hash, shared by every case of a run through git alternates.
pub struct ObjectPool {
    /// The pool's `objects` directory.
    pub objects_dir: PathBuf,
    /// The ids.
    pub pool: Pool,
}

impl ObjectPool {
    /// Create a bare repository with commits, annotated tags and a tree.
    pub fn create(git: &Git, dir: &Path, hash: HashId) -> Result<ObjectPool, String> {
        let repo = dir.join(format!("pool-{}", hash.name()));
        let repo_s = repo.to_str().ok_or("non-UTF-8 temp path")?;
        git.ok(
            dir,
            &[
                "init",
                "-q",
                "--bare",
                &format!("--object-format={}", hash.name()),
                repo_s,
            ],
            "",
        )?;
        let tree = git.ok(&repo, &["mktree"], "")?.trim().to_string();
        let mut commits = Vec::new();
        let mut parent: Option<String> = None;
        for i in 0..6 {
            let mut args = vec!["commit-tree".to_string(), tree.clone()];
            if let Some(p) = &parent {
                args.push("-p".into());
                args.push(p.clone());
            }
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let c = git
                .ok(&repo, &a, &format!("commit {i}\n"))?
                .trim()
                .to_string();
            commits.push(ObjectId::from_hex(&c).ok_or("bad commit id")?);
            parent = Some(c);
        }
        let mut tags = Vec::new();
        for (i, target) in [commits[1], commits[4]].into_iter().enumerate() {
            let text = format!(
                "object {target}\ntype commit\ntag tag{i}\ntagger {NAME} <{EMAIL}> {BASE_TIME} -0700\n\nannotated {i}\n"
            );
            let t = git.ok(&repo, &["mktag"], &text)?.trim().to_string();
            tags.push((ObjectId::from_hex(&t).ok_or("bad tag id")?, target));
        }
        let mut missing = vec![0xdb; hash.size()];
        missing[0] = 0x01;
        Ok(ObjectPool {
            objects_dir: repo.join("objects"),
            pool: Pool {
                commits,
                tags,
                tree: ObjectId::from_hex(&tree).ok_or("bad tree id")?,
                missing: ObjectId::from_bytes(&missing).expect("size"),
            },
        })
    }
}

struct PoolObjects<'a>(&'a Pool);

impl ObjectLookup for PoolObjects<'_> {
    fn lookup(&self, id: &ObjectId) -> ObjectKind {
        if self.0.commits.contains(id) {
            ObjectKind::Commit
        } else if let Some((_, p)) = self.0.tags.iter().find(|(t, _)| t == id) {
            ObjectKind::Tag { peeled: *p }
        } else if *id == self.0.tree {
            ObjectKind::Other
        } else {
            ObjectKind::Missing
        }
    }
}

impl Objects for PoolObjects<'_> {
    fn is_commit(&self, id: &ObjectId) -> Option<bool> {
        match self.lookup(id) {
            ObjectKind::Missing => None,
            ObjectKind::Commit => Some(true),
            _ => Some(false),
        }
    }
}

/// Everything a run shares: git, a scratch directory, one object pool per hash.
pub struct Env {
    /// The git under test.
    pub git: Git,
    /// Scratch space.
    pub dir: tempfile::TempDir,
    sha1: ObjectPool,
    sha256: ObjectPool,
}

impl Env {
    /// Prepare a run with `git`.
    pub fn new(git: Git) -> Result<Env, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let sha1 = ObjectPool::create(&git, dir.path(), HashId::Sha1)?;
        let sha256 = ObjectPool::create(&git, dir.path(), HashId::Sha256)?;
        Ok(Env {
            git,
            dir,
            sha1,
            sha256,
        })
    }

    /// The pool of `hash`.
    pub fn pool(&self, hash: HashId) -> &ObjectPool {
        match hash {
            HashId::Sha1 => &self.sha1,
            HashId::Sha256 => &self.sha256,
        }
    }
}

/// The outcome of a case.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CaseResult {
    /// Options.
    pub options: Option<CaseOptions>,
    /// The operations run (concrete; up to the first divergence).
    pub ops: Vec<Op>,
    /// Divergences (the run of a case stops at the first divergent step).
    pub divergences: Vec<Divergence>,
    /// Comparisons made, per check.
    pub comparisons: BTreeMap<Check, u64>,
    /// The exact stdin sent to `git update-ref --stdin`, transaction by transaction.
    pub git_stdin: Vec<String>,
    /// Transactions git refused for storage reasons (entry too large), which the model
    /// cannot judge.
    pub model_not_applicable: u64,
    /// Whether the files-backend twin was retired (libgit2 cannot represent a state git
    /// accepted, such as a deleted HEAD or a symref loop).
    pub twin_retired: Option<String>,
}

/// A case being run.
pub struct Executor<'e> {
    env: &'e Env,
    opts: CaseOptions,
    hash: HashId,
    null: ObjectId,
    repo: tempfile::TempDir,
    ours_dir: tempfile::TempDir,
    db: RefDb,
    db_opts: RefDbOptions,
    model: Model,
    twin: Option<(tempfile::TempDir, Twin)>,
    interleave_repo: Option<tempfile::TempDir>,
    coproc: Option<(UpdateRef, (String, bool, bool))>,
    tick: u64,
    segment: Option<(String, bool)>,
    txns: u64,
    last_git_err: String,
    model_trial: Option<Model>,
    /// The result so far.
    pub result: CaseResult,
}

fn write_alternates(git_dir: &Path, objects: &Path) -> Result<(), String> {
    let info = git_dir.join("objects/info");
    std::fs::create_dir_all(&info).map_err(|e| e.to_string())?;
    std::fs::write(info.join("alternates"), format!("{}\n", objects.display()))
        .map_err(|e| e.to_string())
}

fn tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let list = std::fs::read_to_string(dir.join("tables.list")).unwrap_or_default();
    list.lines()
        .map(|n| {
            let stem = n.rsplit_once('-').map_or(n, |x| x.0).to_string();
            (stem, std::fs::read(dir.join(n)).unwrap_or_default())
        })
        .collect()
}

/// The first difference between two stacks' tables, if any.
pub fn compare_tables(ours: &Path, theirs: &Path) -> Option<String> {
    let a = tables(ours);
    let b = tables(theirs);
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    if names(&a) != names(&b) {
        return Some(format!(
            "tables.list differs: ours {:?}, git's {:?}",
            names(&a),
            names(&b)
        ));
    }
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        if x != y {
            let at = x
                .iter()
                .zip(y)
                .position(|(p, q)| p != q)
                .unwrap_or(x.len().min(y.len()));
            let block = block_at(y, at);
            return Some(format!(
                "{name}: bytes differ at offset {at} (block {block}); ours {} bytes, git's {}",
                x.len(),
                y.len()
            ));
        }
    }
    None
}

fn block_at(bytes: &[u8], at: usize) -> String {
    let Ok(t) = reftable::Table::from_bytes("git", bytes.to_vec()) else {
        return "?".into();
    };
    for (k, b) in t.blocks().enumerate() {
        let Ok(b) = b else { break };
        if (b.offset as usize..b.offset as usize + b.full_size).contains(&at) {
            return format!("{k} '{}' at {}", b.block_type as char, b.offset);
        }
    }
    "footer".into()
}

impl<'e> Executor<'e> {
    /// Set up git's repository, our stack, the model and the twin for a case.
    pub fn new(env: &'e Env, opts: CaseOptions) -> Result<Executor<'e>, String> {
        let git = &env.git;
        let hash = opts.hash();
        let pool = env.pool(hash);
        let repo = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
        let init = |dir: &Path, format: &str| -> Result<(), String> {
            git.ok(
                dir,
                &[
                    "init",
                    "-q",
                    &format!("--ref-format={format}"),
                    &format!("--object-format={}", hash.name()),
                    "-b",
                    "main",
                    ".",
                ],
                "",
            )?;
            write_alternates(&dir.join(".git"), &pool.objects_dir)?;
            for (k, v) in [
                ("reftable.blockSize", opts.block_size.to_string()),
                (
                    "reftable.restartInterval",
                    opts.restart_interval.to_string(),
                ),
                ("reftable.indexObjects", opts.index_objects.to_string()),
                ("core.logAllRefUpdates", opts.log_refs.as_str().to_string()),
            ] {
                git.ok(dir, &["config", k, &v], "")?;
            }
            Ok(())
        };
        init(repo.path(), "reftable")?;
        let ours_dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
        let git_stack = repo.path().join(".git/reftable");
        for e in std::fs::read_dir(&git_stack).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            std::fs::copy(&p, ours_dir.path().join(p.file_name().expect("file")))
                .map_err(|e| e.to_string())?;
        }
        let db_opts = RefDbOptions {
            stack: StackOptions {
                write: WriteOptions {
                    block_size: opts.block_size,
                    restart_interval: opts.restart_interval,
                    index_objects: opts.index_objects,
                    hash,
                    ..Default::default()
                },
                auto_compaction: opts.auto_compaction,
                fsync: false,
                ..Default::default()
            },
            log_refs: opts.log_refs.to_lib(),
        };
        let db = RefDb::open(ours_dir.path(), db_opts).map_err(|e| e.to_string())?;
        let null = ObjectId::null(hash);
        let mut model = Model::new(null, opts.log_refs, opts.block_size);
        model.init("main");
        let twin = if hash == HashId::Sha1 {
            let dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
            init(dir.path(), "files")?;
            let t = Twin::open(dir.path())?;
            Some((dir, t))
        } else {
            None
        };
        let interleave_repo = if opts.interleave {
            let dir = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
            init(dir.path(), "reftable")?;
            let stack = dir.path().join(".git/reftable");
            std::fs::remove_dir_all(&stack).map_err(|e| e.to_string())?;
            #[cfg(unix)]
            std::os::unix::fs::symlink(ours_dir.path(), &stack).map_err(|e| e.to_string())?;
            Some(dir)
        } else {
            None
        };
        Ok(Executor {
            env,
            opts,
            hash,
            null,
            repo,
            ours_dir,
            db,
            db_opts,
            model,
            twin,
            interleave_repo,
            coproc: None,
            tick: 0,
            segment: None,
            txns: 0,
            last_git_err: String::new(),
            model_trial: None,
            result: CaseResult {
                options: Some(opts),
                ..Default::default()
            },
        })
    }

    /// The model (for resolving generated operations).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The null id.
    pub fn null(&self) -> ObjectId {
        self.null
    }

    fn committer(&self) -> Committer {
        Committer {
            name: NAME.as_bytes().to_vec(),
            email: EMAIL.as_bytes().to_vec(),
            time: BASE_TIME + 60 * self.tick,
            tz_offset: -700,
        }
    }

    fn count(&mut self, check: Check) {
        *self.result.comparisons.entry(check).or_default() += 1;
    }

    fn diverge(&mut self, check: Check, class: &str, detail: String) {
        let step = self.result.ops.len().saturating_sub(1);
        self.result.divergences.push(Divergence {
            step,
            check,
            class: class.into(),
            detail,
        });
    }

    /// Whether the case has diverged.
    pub fn diverged(&self) -> bool {
        !self.result.divergences.is_empty()
    }

    fn git_txn(
        &mut self,
        dir: &Path,
        lines: &str,
        message: &str,
        create_reflog: bool,
        which: bool,
    ) -> TxnResult {
        let key = (message.to_string(), create_reflog, which);
        let reuse = matches!(&self.coproc, Some((_, k)) if *k == key);
        if !reuse {
            let auto = self.opts.auto_compaction;
            let spawned =
                UpdateRef::spawn_with(&self.env.git, dir, self.tick, message, create_reflog, auto);
            match spawned {
                Ok(c) => self.coproc = Some((c, key)),
                Err(e) => return TxnResult::Failed(Exit::Code(-1), e.to_string()),
            }
        }
        let (c, _) = self.coproc.as_mut().expect("spawned");
        let r = c.transaction(lines);
        if matches!(r, TxnResult::Failed(..)) {
            self.coproc = None;
        }
        r
    }

    /// Run one operation on every implementation, then check.
    pub fn step(&mut self, op: Op) {
        self.result.ops.push(op.clone());
        // A new message or reflog flag starts a new segment: a new committer time.
        if let Op::Txn {
            message,
            create_reflog,
            ..
        } = &op
        {
            let seg = (message.clone(), *create_reflog);
            if self.segment.as_ref() != Some(&seg) {
                self.tick += 1;
                self.segment = Some(seg);
                self.coproc = None;
            }
        }
        let verdicts = self.run_op(&op);
        let Some((git_res, ours_res, model_res)) = verdicts else {
            return;
        };
        self.check_verdicts(git_res, ours_res, model_res);
        if !self.diverged() {
            self.check_state();
        }
    }

    /// Run `op`; returns (git, ours, model) outcomes, `None` if git crashed or hung.
    #[allow(clippy::type_complexity)]
    fn run_op(
        &mut self,
        op: &Op,
    ) -> Option<(
        Result<(), ErrClass>,
        Result<(), ErrClass>,
        Option<Result<(), ErrClass>>,
    )> {
        let pool = &self.env.pool(self.hash).pool;
        let objects = PoolObjects(pool);
        let repo = self.repo.path().to_path_buf();
        match op {
            Op::Txn {
                updates,
                message,
                create_reflog,
            } => {
                let lines: String = updates.iter().filter_map(|u| u.stdin_lines()).collect();
                self.result
                    .git_stdin
                    .push(format!("start\n{lines}prepare\ncommit\n"));
                let git_res = self.git_txn(&repo, &lines, message, *create_reflog, false);
                let git_res = match git_res {
                    TxnResult::Committed => Ok(()),
                    TxnResult::Failed(Exit::Code(_), err) => {
                        self.last_git_err = err.trim().to_string();
                        Err(classify_git(&err))
                    }
                    TxnResult::Failed(Exit::Signal(s), err) => {
                        self.diverge(
                            Check::GitCrashed,
                            "git crashed",
                            format!("signal {s}: {err}"),
                        );
                        return None;
                    }
                    TxnResult::Failed(Exit::Timeout, _) => {
                        self.diverge(Check::Hang, "hang", "git update-ref timed out".into());
                        return None;
                    }
                };
                self.txns += 1;
                let time = BASE_TIME + 60 * self.tick;
                // The model decides on a copy; it is kept once git's verdict is known.
                let mut trial = self.model.clone();
                let model_res = trial
                    .transaction(updates, message, *create_reflog, time, &objects)
                    .map_err(classify_model);
                self.model_trial = Some(trial);
                let interleaved = self.interleave_repo.is_some() && self.txns % 2 == 0;
                let ours_res = if interleaved {
                    // git writes this transaction into our stack; we take the next.
                    let dir = self
                        .interleave_repo
                        .as_ref()
                        .expect("set")
                        .path()
                        .to_path_buf();
                    let saved = self.coproc.take();
                    let r = self.git_txn(&dir, &lines, message, *create_reflog, true);
                    self.coproc = None;
                    drop(saved);
                    let r = match r {
                        TxnResult::Committed => Ok(()),
                        TxnResult::Failed(_, err) => Err(classify_git(&err)),
                    };
                    if let Err(e) = self.db.reload() {
                        self.diverge(Check::OursReadsGit, "reload failed", e.to_string());
                    }
                    r
                } else {
                    let names_ok = updates.iter().all(|u| {
                        is_valid_refname(u.refname.as_bytes(), true)
                            && [&u.new, &u.old].into_iter().flatten().all(|v| match v {
                                crate::ops::Value::Symref(t) => {
                                    is_valid_refname(t.as_bytes(), true)
                                }
                                _ => true,
                            })
                    });
                    if !names_ok {
                        // update-ref's parser refuses invalid names before the ref layer.
                        Err(ErrClass::Name)
                    } else {
                        let upd: Vec<_> = updates
                            .iter()
                            .map(|u| u.to_ref_update(message, *create_reflog))
                            .collect();
                        let c = self.committer();
                        self.db
                            .transaction(&upd, &c, &objects)
                            .map_err(|e| classify_ours(&e))
                    }
                };
                if git_res.is_ok() {
                    if let Some((_, twin)) = &self.twin {
                        if let Err(e) = twin.apply(updates, message) {
                            // The files backend cannot hold every state a reftable stack
                            // can (no HEAD, symref loops): the twin stops here.
                            self.result.twin_retired = Some(e);
                            self.twin = None;
                        }
                    }
                }
                Some((git_res, ours_res, Some(model_res)))
            }
            Op::ReflogExpire { refname, expire } => {
                let exp = match expire {
                    Expire::All => "--expire=all".to_string(),
                    Expire::Before(t) => format!("--expire={t} +0000"),
                };
                let out = self.env.git.run_auto(
                    &repo,
                    &[
                        "reflog",
                        "expire",
                        &exp,
                        "--expire-unreachable=never",
                        refname,
                    ],
                    "",
                    self.tick,
                    self.opts.auto_compaction,
                );
                let git_res = self.git_verdict(out)?;
                let target = self.dwim_log(refname);
                let ours_res = match target {
                    None => Err(ErrClass::NoReflog),
                    Some(t) => {
                        let cutoff = match expire {
                            Expire::All => u64::MAX,
                            Expire::Before(t) => *t,
                        };
                        let r = self.db.expire_reflog(
                            t.as_bytes(),
                            &mut |l| l.update().is_some_and(|u| u.time < cutoff),
                            false,
                            false,
                        );
                        self.model.expire(&t, &mut |_, e| e.time < cutoff, false);
                        r.map_err(|e| classify_ours(&e))
                    }
                };
                Some((git_res, ours_res, None))
            }
            Op::ReflogDelete {
                refname,
                index,
                rewrite,
            } => {
                let spec = format!("{refname}@{{{index}}}");
                let mut args = vec!["reflog", "delete"];
                if *rewrite {
                    args.push("--rewrite");
                }
                args.push(&spec);
                let out =
                    self.env
                        .git
                        .run_auto(&repo, &args, "", self.tick, self.opts.auto_compaction);
                let git_res = self.git_verdict(out)?;
                let ours_res = match self.dwim_log(refname) {
                    None => Err(ErrClass::NoReflog),
                    Some(t) => {
                        let entries = self.db.reflog(t.as_bytes()).unwrap_or_default();
                        let target_ui = entries.get(*index).map(|l| l.update_index);
                        let r = self.db.expire_reflog(
                            t.as_bytes(),
                            &mut |l| Some(l.update_index) == target_ui,
                            *rewrite,
                            false,
                        );
                        let n = self.model.logs.get(&t).map_or(0, Vec::len);
                        self.model
                            .expire(&t, &mut |i, _| n > *index && i == *index, *rewrite);
                        r.map_err(|e| classify_ours(&e))
                    }
                };
                Some((git_res, ours_res, None))
            }
            Op::PackRefs { auto } => {
                let mut args = vec!["pack-refs"];
                if *auto {
                    args.push("--auto");
                }
                let out = self.env.git.run(&repo, &args, "", self.tick);
                let git_res = self.git_verdict(out)?;
                let ours_res = self.db.pack_refs(*auto).map_err(|e| classify_ours(&e));
                Some((git_res, ours_res, None))
            }
        }
    }

    /// git's `dwim_log` for a full ref name: the ref must resolve, and the reflog is its own
    /// or, failing that, the one of the ref it resolves to.
    fn dwim_log(&self, name: &str) -> Option<String> {
        self.db.resolve(name.as_bytes()).ok()??;
        if self.db.reflog_exists(name.as_bytes()).ok()? {
            return Some(name.to_string());
        }
        let mut n = name.to_string();
        for _ in 0..=5 {
            match self.db.read_ref(n.as_bytes()).ok()??.value {
                reftable::RefValue::Symref(t) => n = String::from_utf8_lossy(&t).into_owned(),
                _ => break,
            }
        }
        (n != name && self.db.reflog_exists(n.as_bytes()).ok()?).then_some(n)
    }

    fn git_verdict(&mut self, out: crate::git::Output) -> Option<Result<(), ErrClass>> {
        match out.exit {
            Exit::Code(0) => Some(Ok(())),
            Exit::Code(_) => {
                self.last_git_err = out.stderr.trim().to_string();
                Some(Err(classify_git(&out.stderr)))
            }
            Exit::Signal(s) => {
                self.diverge(
                    Check::GitCrashed,
                    "git crashed",
                    format!("signal {s}: {}", out.stderr),
                );
                None
            }
            Exit::Timeout => {
                self.diverge(Check::Hang, "hang", "git timed out".into());
                None
            }
        }
    }

    fn check_verdicts(
        &mut self,
        git: Result<(), ErrClass>,
        ours: Result<(), ErrClass>,
        model: Option<Result<(), ErrClass>>,
    ) {
        self.count(Check::Verdict);
        let git_err = std::mem::take(&mut self.last_git_err);
        if git.is_ok() != ours.is_ok() {
            self.diverge(
                Check::Verdict,
                "error mismatch",
                format!("git {git:?}, ours {ours:?}; git said: {git_err}"),
            );
            return;
        }
        if let (Err(g), Err(o)) = (git, ours) {
            self.count(Check::ErrorClass);
            if g != o {
                self.diverge(
                    Check::ErrorClass,
                    "error mismatch",
                    format!("git {g:?}, ours {o:?}; git said: {git_err}"),
                );
                return;
            }
        }
        if let Some(m) = model {
            let trial = self.model_trial.take();
            if git == Err(ErrClass::Other) {
                // A storage-level refusal (entry too large…): the model knows no tables.
                self.result.model_not_applicable += 1;
                return;
            }
            self.count(Check::Model);
            if m.is_ok() != git.is_ok() || (m.is_err() && m != git) {
                self.diverge(
                    Check::Model,
                    "error mismatch",
                    format!("git {git:?}, model {m:?}; git said: {git_err}"),
                );
            } else if m.is_ok() {
                self.model = trial.expect("set with the verdict");
            }
        }
    }

    fn check_state(&mut self) {
        let git_stack = self.repo.path().join(".git/reftable");
        self.count(Check::Bytes);
        if let Some(d) = compare_tables(self.ours_dir.path(), &git_stack) {
            self.diverge(Check::Bytes, "bytes differ", d);
            return;
        }
        let ours = match Snapshot::of_refdb(&self.db) {
            Ok(s) => s,
            Err(e) => {
                self.diverge(Check::OursReadsGit, "read error", format!("our stack: {e}"));
                return;
            }
        };
        self.count(Check::OursReadsGit);
        match Snapshot::of_stack_dir(&git_stack, self.db_opts) {
            Ok(theirs) if theirs != ours => {
                let d = ours.diff(&theirs, 10).join("\n");
                self.diverge(Check::OursReadsGit, "value mismatch", d);
                return;
            }
            Err(e) => {
                self.diverge(
                    Check::OursReadsGit,
                    "read error",
                    format!("git's stack: {e}"),
                );
                return;
            }
            _ => {}
        }
        self.count(Check::Model);
        let model = Snapshot::of_model(&self.model);
        let seen = ours.as_model_sees();
        if model != seen {
            let d = seen.diff(&model, 10).join("\n");
            self.diverge(Check::Model, "value mismatch", d);
            return;
        }
        if let Some((_, twin)) = &self.twin {
            let twin_refs = twin.refs();
            self.count(Check::Twin);
            let mut ours_refs = seen.refs.clone();
            // libgit2 lists refs under refs/ plus HEAD and ORIG_HEAD.
            ours_refs.retain(|k, _| k.starts_with("refs/") || k == "HEAD" || k == "ORIG_HEAD");
            match twin_refs {
                Ok(t) if t != ours_refs => {
                    let other = Snapshot {
                        refs: t,
                        logs: Default::default(),
                    };
                    let mine = Snapshot {
                        refs: ours_refs,
                        logs: Default::default(),
                    };
                    let d = mine.diff(&other, 10).join("\n");
                    self.diverge(Check::Twin, "value mismatch", d);
                    return;
                }
                Err(e) => {
                    self.diverge(Check::Twin, "twin error", e);
                    return;
                }
                _ => {}
            }
        }
        self.count(Check::GitView);
        let repo = self.repo.path().to_path_buf();
        match self.git_refs(&repo) {
            Ok(view) => {
                let expect = self.expected_git_view(&ours);
                if view != expect {
                    let missing: Vec<_> = expect
                        .iter()
                        .filter(|l| !view.contains(l))
                        .take(5)
                        .collect();
                    let extra: Vec<_> = view
                        .iter()
                        .filter(|l| !expect.contains(l))
                        .take(5)
                        .collect();
                    self.diverge(
                        Check::GitView,
                        "value mismatch",
                        format!(
                            "for-each-ref: expected but missing {missing:?}; unexpected {extra:?}"
                        ),
                    );
                }
            }
            Err(e) => self.diverge(Check::GitView, "git rejects stack", e),
        }
    }

    /// `for-each-ref --include-root-refs` lines (name, object, peeled, symref).
    fn git_refs(&self, repo: &Path) -> Result<Vec<String>, String> {
        let out = self.env.git.run(
            repo,
            &[
                "for-each-ref",
                "--include-root-refs",
                "--format=%(refname) %(objectname) %(*objectname) %(symref)",
            ],
            "",
            self.tick,
        );
        if !out.exit.success() {
            return Err(format!("for-each-ref: {:?}: {}", out.exit, out.stderr));
        }
        Ok(out.stdout.lines().map(str::to_string).collect())
    }

    /// What `for-each-ref` shows for our refs: symrefs resolved to their final ref (dangling
    /// ones hidden), peeled ids of annotated tags, one-level names other than root refs hidden.
    fn expected_git_view(&self, ours: &Snapshot) -> Vec<String> {
        let pool = &self.env.pool(self.hash).pool;
        let peel = |id: &str| {
            pool.tags
                .iter()
                .find(|(t, _)| t.to_string() == id)
                .map(|(_, p)| p.to_string())
                .unwrap_or_default()
        };
        let mut out = Vec::new();
        for (name, v) in &ours.refs {
            let root = !name.contains('/');
            if root && name != "HEAD" && !name.ends_with("_HEAD") {
                continue;
            }
            let (oid, symref) = match v {
                SValue::Oid(id, _) => (id.clone(), String::new()),
                SValue::Symref(_) => {
                    let mut n = name.clone();
                    let mut resolved = None;
                    for _ in 0..=5 {
                        match ours.refs.get(&n) {
                            Some(SValue::Symref(t)) => n = t.clone(),
                            Some(SValue::Oid(id, _)) => {
                                resolved = Some(id.clone());
                                break;
                            }
                            None => break,
                        }
                    }
                    match resolved {
                        Some(id) => (id, n),
                        None => continue,
                    }
                }
            };
            out.push(format!("{name} {oid} {} {symref}", peel(&oid)));
        }
        out
    }

    /// End-of-case checks: git's reflogs against ours, and git reading a copy of our stack.
    pub fn finish(mut self) -> CaseResult {
        if self.diverged() {
            return self.result;
        }
        let step_end = self.result.ops.len();
        let ours = Snapshot::of_refdb(&self.db).unwrap_or_default();
        // git's reflogs: `log -g` of every ref with a reflog that resolves.
        let repo = self.repo.path().to_path_buf();
        self.count(Check::GitReflogs);
        let list = self.env.git.run(&repo, &["reflog", "list"], "", self.tick);
        let git_names: Vec<&str> = list.stdout.lines().collect();
        let our_names: Vec<&str> = ours.logs.keys().map(String::as_str).collect();
        if !list.exit.success() || git_names != our_names {
            self.result.divergences.push(Divergence {
                step: step_end,
                check: Check::GitReflogs,
                class: "reflog mismatch".into(),
                detail: format!("git reflog list {git_names:?}, ours {our_names:?}"),
            });
            return self.result;
        }
        let theirs = self.git_reflogs(&repo, &ours);
        let expect = self.expected_git_reflogs(&ours);
        for (name, lines) in &theirs {
            if expect.get(name) != Some(lines) {
                let want = expect.get(name).cloned().unwrap_or_default();
                let first = want
                    .iter()
                    .zip(lines)
                    .find(|(a, b)| a != b)
                    .map(|(a, b)| format!("expected {a:?}, git {b:?}"))
                    .unwrap_or_else(|| format!("git's first line {:?}", lines.first()));
                self.result.divergences.push(Divergence {
                    step: step_end,
                    check: Check::GitReflogs,
                    class: "reflog mismatch".into(),
                    detail: format!(
                        "log -g {name}: {} lines expected, git {}; {first}",
                        want.len(),
                        lines.len()
                    ),
                });
                return self.result;
            }
        }
        // git on our stack: a copy of git's repository with our reftable directory.
        self.count(Check::GitReadsOurs);
        if let Err(e) = self.git_reads_ours(&ours) {
            self.result.divergences.push(Divergence {
                step: step_end,
                check: Check::GitReadsOurs,
                class: "git rejects our stack".into(),
                detail: e,
            });
        }
        self.result
    }

    /// The reflogs `log -g` is compared on: HEAD and refs with a direct value. (For other
    /// symrefs `log -g` picks a reflog by its DWIM rules; those are left to the byte and
    /// reader checks.)
    fn reflog_names<'s>(&self, ours: &'s Snapshot) -> Vec<&'s String> {
        let pool = &self.env.pool(self.hash).pool;
        let all_commits = |n: &String| {
            ours.logs[n]
                .iter()
                .all(|e| ObjectId::from_hex(&e.new).is_some_and(|id| pool.commits.contains(&id)))
        };
        ours.logs
            .keys()
            // HEAD when detached or on a branch (`log -g HEAD` shows nothing when HEAD points
            // elsewhere, e.g. into refs/notes/), and refs with a direct value.
            .filter(|n| match ours.refs.get(*n) {
                Some(SValue::Oid(..)) => true,
                Some(SValue::Symref(t)) => *n == "HEAD" && t.starts_with("refs/heads/"),
                None => false,
            })
            .filter(|n| all_commits(n))
            // An empty reflog (existence marker only) makes `log -g` fall back to DWIM rules.
            .filter(|n| !ours.logs[*n].is_empty())
            .collect()
    }

    /// `log -g` of each candidate reflog, for the names git can walk (`log -g` refuses refs
    /// that do not resolve).
    fn git_reflogs(&self, repo: &Path, ours: &Snapshot) -> BTreeMap<String, Vec<String>> {
        let mut out = BTreeMap::new();
        for name in self.reflog_names(ours) {
            let o = self.env.git.run(
                repo,
                &["log", "-g", "--format=%gD %H %gs", name, "--"],
                "",
                self.tick,
            );
            if o.exit.success() {
                out.insert(name.clone(), o.stdout.lines().map(str::to_string).collect());
            }
        }
        out
    }

    /// What `log -g` shows for each candidate reflog, from our state.
    fn expected_git_reflogs(&self, ours: &Snapshot) -> BTreeMap<String, Vec<String>> {
        let mut out = BTreeMap::new();
        for name in self.reflog_names(ours) {
            // @{n} counts every entry git's backend yields, shown or not.
            let lines = ours.logs[name]
                .iter()
                .enumerate()
                .map(|(n, e)| {
                    let msg = e.message.strip_suffix('\n').unwrap_or(&e.message);
                    format!("{name}@{{{n}}} {} {msg}", e.new)
                })
                .collect();
            out.insert(name.clone(), lines);
        }
        out
    }

    fn git_reads_ours(&self, ours: &Snapshot) -> Result<(), String> {
        let scratch = tempfile::tempdir_in(self.env.dir.path()).map_err(|e| e.to_string())?;
        let git_dir = scratch.path().join(".git");
        copy_dir(&self.repo.path().join(".git"), &git_dir, Some("reftable"))?;
        copy_dir(self.ours_dir.path(), &git_dir.join("reftable"), None)?;
        let before = self.git_refs(scratch.path())?;
        let expect = self.expected_git_view(ours);
        if before != expect {
            return Err(format!(
                "for-each-ref on our stack: {} lines, expected {}",
                before.len(),
                expect.len()
            ));
        }
        let reflogs = self.git_reflogs(scratch.path(), ours);
        if reflogs != self.git_reflogs(self.repo.path(), ours) {
            return Err("git shows other reflogs on our stack than on its own".into());
        }
        let pack = self
            .env
            .git
            .run(scratch.path(), &["pack-refs"], "", self.tick);
        if !pack.exit.success() {
            return Err(format!(
                "pack-refs on our stack: {:?}: {}",
                pack.exit, pack.stderr
            ));
        }
        let after = self.git_refs(scratch.path())?;
        if after != before {
            return Err("refs changed across git pack-refs of our stack".into());
        }
        Ok(())
    }

    /// Paths of the two stacks (for case directories).
    pub fn stacks(&self) -> (PathBuf, PathBuf) {
        (
            self.ours_dir.path().to_path_buf(),
            self.repo.path().join(".git/reftable"),
        )
    }
}

fn copy_dir(from: &Path, to: &Path, skip: Option<&str>) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for e in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let e = e.map_err(|e| e.to_string())?;
        let name = e.file_name();
        if skip.is_some_and(|s| name == s) {
            continue;
        }
        let p = e.path();
        let meta = std::fs::symlink_metadata(&p).map_err(|e| e.to_string())?;
        if meta.is_dir() {
            copy_dir(&p, &to.join(&name), None)?;
        } else if meta.is_file() {
            std::fs::copy(&p, to.join(&name)).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Run a generated case: options and abstract operations from (seed, index), resolved while
/// the case runs. Stops at the first divergent step.
pub fn run_generated(env: &Env, seed: u64, index: u64, nops: usize) -> Result<CaseResult, String> {
    let (opts, aops) = crate::gen::generate(seed, index, nops);
    let pool = env.pool(opts.hash()).pool.clone();
    let mut exec = Executor::new(env, opts)?;
    let mut resolver = Resolver::new(pool);
    for a in &aops {
        let Some(op) = resolver.resolve(a, exec.model(), &exec.null()) else {
            continue;
        };
        exec.step(op);
        if exec.diverged() {
            break;
        }
    }
    Ok(exec.finish())
}

/// Run concrete operations under `opts` (replay and minimization).
pub fn run_concrete(env: &Env, opts: CaseOptions, ops: &[Op]) -> Result<CaseResult, String> {
    let mut exec = Executor::new(env, opts)?;
    for op in ops {
        exec.step(op.clone());
        if exec.diverged() {
            break;
        }
    }
    Ok(exec.finish())
}
