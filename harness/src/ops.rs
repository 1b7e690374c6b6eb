//! Operations a conformance case runs on every implementation, in a serializable form
//! (case files hold them as JSON), and their translation to `git` commands and to
//! `reftable::refdb` calls.

use reftable::refdb::{Expected, NewValue, RefUpdate};
use reftable::{HashId, ObjectId, Target};
use serde::{Deserialize, Serialize};

/// A ref value in a case: an object id (hex; all zeros = none) or a symref target.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// An object id in hex; the null id means "no ref".
    Oid(String),
    /// A symbolic ref target.
    Symref(String),
}

impl Value {
    /// The library's new value: the null id deletes.
    pub fn new_value(&self) -> NewValue {
        match self {
            Value::Oid(h) => {
                let id = ObjectId::from_hex(h).expect("hex object id");
                if id.is_null() {
                    NewValue::Delete
                } else {
                    NewValue::Set(Target::Object(id))
                }
            }
            Value::Symref(t) => NewValue::Set(Target::Symref(t.as_bytes().to_vec())),
        }
    }

    /// The library's expectation: the null id means "must not exist".
    pub fn expected(&self) -> Expected {
        match self {
            Value::Oid(h) => {
                let id = ObjectId::from_hex(h).expect("hex object id");
                if id.is_null() {
                    Expected::Absent
                } else {
                    Expected::Is(Target::Object(id))
                }
            }
            Value::Symref(t) => Expected::Is(Target::Symref(t.as_bytes().to_vec())),
        }
    }

    /// An object id value.
    pub fn oid(id: &ObjectId) -> Value {
        Value::Oid(id.to_string())
    }

    /// The null id of `hash`.
    pub fn null(hash: HashId) -> Value {
        Value::oid(&ObjectId::null(hash))
    }
}

/// One update of a transaction (the fields of `reftable::refdb::RefUpdate`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Update {
    /// The ref.
    pub refname: String,
    /// New value; `None` verifies only.
    pub new: Option<Value>,
    /// Expected old value.
    pub old: Option<Value>,
    /// `option no-deref`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_deref: bool,
}

impl Update {
    /// Whether `update-ref --create-reflog` applies to this command: it does for update,
    /// create and the symref commands that set a target, not for delete and verify.
    pub fn takes_create_reflog(&self) -> bool {
        match &self.new {
            Some(Value::Symref(_)) => true,
            Some(Value::Oid(h)) => ObjectId::from_hex(h).is_some_and(|id| !id.is_null()),
            None => false,
        }
    }

    /// Whether the update deletes its ref (a null new id).
    pub fn is_deletion(&self) -> bool {
        matches!(
            self.new.as_ref().map(Value::new_value),
            Some(NewValue::Delete)
        )
    }

    /// The library's update, with `message`; `create_reflog` is the `--create-reflog` of the
    /// update-ref process (dropped for commands that ignore it).
    pub fn to_ref_update(&self, message: &str, create_reflog: bool) -> RefUpdate {
        RefUpdate {
            refname: self.refname.as_bytes().to_vec(),
            new: self.new.as_ref().map(Value::new_value),
            expected: self.old.as_ref().map_or(Expected::Any, Value::expected),
            no_deref: self.no_deref,
            create_reflog: create_reflog && self.takes_create_reflog(),
            message: message.as_bytes().to_vec(),
        }
    }

    /// The `update-ref --stdin` lines, or `None` when update-ref has no syntax for it.
    pub fn stdin_lines(&self) -> Option<String> {
        self.to_ref_update("", false).update_ref_command()
    }
}

/// How `reflog expire` prunes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expire {
    /// `--expire=all`.
    All,
    /// `--expire=<time>`: entries older than `time` (seconds) go.
    Before(u64),
    /// `--expire=never`: no entry goes for its age.
    Never,
}

/// One step of a case.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum Op {
    /// One `update-ref --stdin` transaction (`start` … `commit`).
    Txn {
        /// The updates, in order.
        updates: Vec<Update>,
        /// The `-m` message.
        message: String,
        /// `--create-reflog`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        create_reflog: bool,
    },
    /// One `update-ref --stdin --batch-updates` (git 2.50+): each update that fails its
    /// checks is rejected on its own (reported on standard output with a reason), the others
    /// are committed as one transaction.
    BatchTxn {
        /// The updates, in order.
        updates: Vec<Update>,
        /// The `-m` message.
        message: String,
        /// `--create-reflog`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        create_reflog: bool,
    },
    /// One update through `git refs create`, `update` or `delete` (git master after 2.55): a
    /// transaction of that one update (`updates` holds it), the plain object values these
    /// commands take, never a symref.
    RefsCommand {
        /// The update (one).
        updates: Vec<Update>,
        /// The `--message`.
        message: String,
        /// `--create-reflog`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        create_reflog: bool,
    },
    /// `git symbolic-ref [-m <message>] <name> <target>`: the command's own checks of the
    /// target, then the update of a symref without dereferencing `name` (update-ref's
    /// `option no-deref` + `symref-update`).
    SymbolicRef {
        /// The symref set.
        name: String,
        /// Its new target.
        target: String,
        /// The `-m` message (none when empty).
        message: String,
    },
    /// `git push --atomic . +<new>:<ref>…` (`:<ref>` for a deletion): `receive-pack`
    /// over the local transport updates the repository's own refs in one transaction, each
    /// update expecting the value it advertised (`old`), with the reflog message `push`.
    Push {
        /// The updates: a new object id (null: delete) and the current value as old value.
        updates: Vec<Update>,
    },
    /// `git fetch --atomic … . +<new>:<ref>…` ([`Op::fetch_args`]): fetch from the
    /// repository itself by object id, every update in one transaction, each with its own
    /// reflog message (`fetch <its arguments>: <what>`, where what is `storing ref` for a
    /// new ref, `fast-forward` or `forced-update` for a moved one). A new ref is written
    /// without an old value, a moved one expecting the value fetch read.
    Fetch {
        /// The updates: a new commit id, and as old value the current one (none for a new
        /// ref).
        updates: Vec<Update>,
        /// The reflog message of each update, in the order of `updates`.
        messages: Vec<String>,
    },
    /// `git tag` ([`Op::tag_args`]): one lightweight tag set to an object, `-f` when it
    /// exists (its transaction expects the value the command read, or no ref), with
    /// `--create-reflog` when asked and the reflog message `message` (`tag: tagging <abbrev>
    /// (<what the object is>)`); or `git tag -d` of tags that exist, one transaction of
    /// deletions without a message or an expected value that do not follow symrefs.
    Tag {
        /// A new object id under `refs/tags/`, or deletions (null ids).
        updates: Vec<Update>,
        /// The reflog message (empty for deletions).
        message: String,
        /// `--create-reflog`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        create_reflog: bool,
    },
    /// `git reflog expire --expire=… --expire-unreachable=never|now [--updateref] <ref>`.
    ReflogExpire {
        /// The ref.
        refname: String,
        /// What to prune.
        expire: Expire,
        /// `--updateref`: the ref takes the newest kept entry's new id.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        update_ref: bool,
        /// `--expire-unreachable=now` (else `never`): entries naming a commit the ref's
        /// history does not reach go too, all of them when the ref is no commit.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unreachable: bool,
    },
    /// `git reflog delete [--rewrite] [--updateref] <ref>@{index}`.
    ReflogDelete {
        /// The ref.
        refname: String,
        /// Which entry, 0 = newest.
        index: usize,
        /// `--rewrite`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        rewrite: bool,
        /// `--updateref`: the ref takes the newest remaining entry's new id.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        update_ref: bool,
    },
    /// `git reflog drop <ref>`: the whole reflog goes, the ref stays (git 2.50+).
    ReflogDrop {
        /// The ref (resolved as git resolves a reflog name).
        refname: String,
    },
    /// `git maintenance run --auto --task=pack-refs` (not detached): git decides whether the
    /// refs need packing and runs `pack-refs --auto` if so.
    MaintenancePackRefs,
    /// `git pack-refs` (`--auto` when `auto`).
    PackRefs {
        /// Geometric compaction only.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        auto: bool,
    },
    /// One `update-ref --stdin` transaction run in the case's linked worktree
    /// ([`CaseOptions::worktree`]): git's `git -C <worktree> update-ref --stdin`, ours through
    /// `reftable::refdb::WorktreeRefDb`.
    WorktreeTxn {
        /// The updates, in order.
        updates: Vec<Update>,
        /// The `-m` message.
        message: String,
        /// `--create-reflog`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        create_reflog: bool,
    },
    /// `git checkout -q -l --orphan <branch>` in the main worktree: the branch name must be
    /// valid and not exist, and `HEAD` must name a commit; under `core.logAllRefUpdates=false`
    /// the branch's reflog is created empty (`refs_create_reflog`, which no other git command
    /// calls), then `HEAD` points at the unborn branch with the message
    /// `checkout: moving from <old> to <branch>`.
    Orphan {
        /// The new branch, without `refs/heads/`.
        branch: String,
    },
    /// `git branch -m` / `-M` / `-c` / `-C <old> <new>` (branch names without `refs/heads/`).
    Branch {
        /// The branch moved or copied.
        old: String,
        /// Its new name.
        new: String,
        /// `-c` / `-C` rather than `-m` / `-M`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        copy: bool,
        /// `-M` / `-C`: overwrite an existing branch.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        force: bool,
        /// `git refs rename [--message=<this>] refs/heads/<old> refs/heads/<new>` (git master
        /// after 2.55) in place of `git branch -m`: the same backend rename without the
        /// branch command's checks and without pointing `HEAD` at the new name; no
        /// `--message` when empty.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refs_rename: Option<String>,
    },
}

impl Op {
    /// The message and `--create-reflog` flag of an operation that runs at the committer
    /// time of its (message, flag) pair, as `update-ref` transactions do.
    pub fn clocked(&self) -> Option<(&str, bool)> {
        match self {
            Op::Txn {
                message,
                create_reflog,
                ..
            }
            | Op::WorktreeTxn {
                message,
                create_reflog,
                ..
            }
            | Op::BatchTxn {
                message,
                create_reflog,
                ..
            }
            | Op::RefsCommand {
                message,
                create_reflog,
                ..
            }
            | Op::Tag {
                message,
                create_reflog,
                ..
            } => Some((message, *create_reflog)),
            Op::SymbolicRef { message, .. } => Some((message, false)),
            Op::Push { .. } => Some((Op::PUSH_MESSAGE, false)),
            // One process: its first message keys its clock.
            Op::Fetch { messages, .. } => messages.first().map(|m| (m.as_str(), false)),
            _ => None,
        }
    }

    /// The refs the operation names: each update's ref and symref values, the expired or
    /// pruned reflog's ref, both branches of a rename or copy.
    pub fn touched_refs(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Op::Txn { updates, .. }
            | Op::WorktreeTxn { updates, .. }
            | Op::BatchTxn { updates, .. }
            | Op::RefsCommand { updates, .. }
            | Op::Push { updates }
            | Op::Fetch { updates, .. }
            | Op::Tag { updates, .. } => {
                for u in updates {
                    out.push(u.refname.clone());
                    for v in [&u.new, &u.old].into_iter().flatten() {
                        if let Value::Symref(t) = v {
                            out.push(t.clone());
                        }
                    }
                }
            }
            Op::SymbolicRef { name, target, .. } => {
                out.push(name.clone());
                out.push(target.clone());
            }
            Op::ReflogExpire { refname, .. }
            | Op::ReflogDelete { refname, .. }
            | Op::ReflogDrop { refname } => out.push(refname.clone()),
            Op::PackRefs { .. } | Op::MaintenancePackRefs => {}
            Op::Orphan { branch } => {
                out.push("HEAD".into());
                out.push(format!("refs/heads/{branch}"));
            }
            Op::Branch { old, new, .. } => {
                out.push(format!("refs/heads/{old}"));
                out.push(format!("refs/heads/{new}"));
            }
        }
        out
    }

    /// The kind of operation, for counts in reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Txn { .. } => "update-ref transaction",
            Op::WorktreeTxn { .. } => "update-ref transaction in a worktree",
            Op::BatchTxn { .. } => "update-ref --batch-updates",
            Op::RefsCommand { .. } => "refs create/update/delete",
            Op::SymbolicRef { .. } => "symbolic-ref",
            Op::Push { .. } => "push --atomic",
            Op::Fetch { .. } => "fetch --atomic",
            Op::Tag { updates, .. } if updates.iter().all(Update::is_deletion) => "tag -d",
            Op::Tag { .. } => "tag",
            Op::ReflogExpire {
                unreachable: true, ..
            } => "reflog expire --expire-unreachable=now",
            Op::ReflogExpire { .. } => "reflog expire",
            Op::ReflogDelete { .. } => "reflog delete",
            Op::ReflogDrop { .. } => "reflog drop",
            Op::MaintenancePackRefs => "maintenance pack-refs",
            Op::PackRefs { auto: false } => "pack-refs",
            Op::PackRefs { auto: true } => "pack-refs --auto",
            Op::Orphan { .. } => "checkout -l --orphan",
            Op::Branch {
                refs_rename: Some(_),
                ..
            } => "refs rename",
            Op::Branch { copy: false, .. } => "branch -m/-M",
            Op::Branch { copy: true, .. } => "branch -c/-C",
        }
    }

    /// The reflog message of [`Op::Push`]'s updates.
    pub const PUSH_MESSAGE: &'static str = "push";

    /// The arguments of [`Op::Fetch`] with `updates`, after `git`: by object id from the
    /// repository itself, forced, without tags, `FETCH_HEAD` or maintenance afterwards
    /// (none of them refs of the transaction). git's reflog message starts with `fetch`
    /// and these arguments after it.
    pub fn fetch_args(updates: &[Update]) -> Vec<String> {
        let mut args: Vec<String> = [
            "fetch",
            "--atomic",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            ".",
        ]
        .map(String::from)
        .to_vec();
        for u in updates {
            if let Some(Value::Oid(h)) = &u.new {
                args.push(format!("+{h}:{}", u.refname));
            }
        }
        args
    }

    /// The arguments of [`Op::Tag`] with `updates`, after `git`: `tag -d <short name>…` for
    /// deletions, else `tag [-f] [--create-reflog] <short name> <object id>` of the first
    /// update (`-f` when it expects an existing value).
    pub fn tag_args(updates: &[Update], create_reflog: bool) -> Vec<String> {
        let short = |u: &Update| {
            let name = &u.refname;
            name.strip_prefix("refs/tags/").unwrap_or(name).to_string()
        };
        let mut args = vec!["tag".to_string()];
        match updates.first() {
            Some(u) if !u.is_deletion() => {
                let exists = matches!(u.old.as_ref().map(Value::expected), Some(Expected::Is(_)));
                let flags = [(exists, "-f"), (create_reflog, "--create-reflog")];
                args.extend(flags.iter().filter(|f| f.0).map(|f| f.1.to_string()));
                args.push(short(u));
                if let Some(Value::Oid(h)) = &u.new {
                    args.push(h.clone());
                }
            }
            _ => {
                args.push("-d".into());
                args.extend(updates.iter().map(short));
            }
        }
        args
    }

    /// The `git branch` flag of a [`Op::Branch`].
    pub fn branch_flag(copy: bool, force: bool) -> &'static str {
        match (copy, force) {
            (false, false) => "-m",
            (false, true) => "-M",
            (true, false) => "-c",
            (true, true) => "-C",
        }
    }
}

impl Op {
    /// A one-line summary for reports.
    pub fn summary(&self) -> String {
        let txn = |updates: &Vec<Update>| Op::Txn {
            updates: updates.clone(),
            message: String::new(),
            create_reflog: false,
        };
        match self {
            Op::WorktreeTxn { updates, .. } => format!("worktree {}", txn(updates).summary()),
            Op::BatchTxn { updates, .. } => format!("batch-updates {}", txn(updates).summary()),
            Op::RefsCommand { updates, .. } => format!("git refs {}", txn(updates).summary()),
            Op::Txn { updates, .. } => {
                let parts: Vec<String> = updates
                    .iter()
                    .map(|u| {
                        u.stdin_lines()
                            .unwrap_or_default()
                            .trim_end()
                            .replace('\n', "; ")
                    })
                    .collect();
                if parts.len() > 6 {
                    let n = parts.len();
                    format!(
                        "txn [{}, … {} more …, {}]",
                        parts[..3].join(", "),
                        n - 4,
                        parts[n - 1]
                    )
                } else {
                    format!("txn [{}]", parts.join(", "))
                }
            }
            Op::SymbolicRef { name, target, .. } => format!("symbolic-ref {name} {target}"),
            Op::Push { updates } => format!("push --atomic {}", txn(updates).summary()),
            Op::Fetch { updates, .. } => format!("fetch --atomic {}", txn(updates).summary()),
            Op::Tag {
                updates,
                create_reflog,
                ..
            } => Op::tag_args(updates, *create_reflog).join(" "),
            Op::ReflogExpire {
                refname,
                expire,
                update_ref,
                unreachable,
            } => format!(
                "reflog expire {expire:?}{}{} {refname}",
                if *unreachable {
                    " --expire-unreachable=now"
                } else {
                    ""
                },
                if *update_ref { " --updateref" } else { "" }
            ),
            Op::ReflogDelete {
                refname,
                index,
                rewrite,
                update_ref,
            } => format!(
                "reflog delete{}{} {refname}@{{{index}}}",
                if *rewrite { " --rewrite" } else { "" },
                if *update_ref { " --updateref" } else { "" }
            ),
            Op::ReflogDrop { refname } => format!("reflog drop {refname}"),
            Op::MaintenancePackRefs => "maintenance run --auto --task=pack-refs".into(),
            Op::PackRefs { auto } => format!("pack-refs{}", if *auto { " --auto" } else { "" }),
            Op::Orphan { branch } => format!("checkout -l --orphan {branch}"),
            Op::Branch {
                old,
                new,
                refs_rename: Some(m),
                ..
            } => format!("refs rename --message={m:?} refs/heads/{old} refs/heads/{new}"),
            Op::Branch {
                old,
                new,
                copy,
                force,
                ..
            } => format!("branch {} {old} {new}", Op::branch_flag(*copy, *force)),
        }
    }
}

/// Options a case runs under (the option matrix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CaseOptions {
    /// `--object-format=sha256`.
    pub sha256: bool,
    /// `reftable.blockSize`.
    pub block_size: u32,
    /// `reftable.restartInterval`.
    pub restart_interval: u16,
    /// `reftable.indexObjects`.
    pub index_objects: bool,
    /// `core.logAllRefUpdates`: "false", "true" or "always".
    pub log_refs: LogRefsOpt,
    /// Auto-compaction after each transaction.
    pub auto_compaction: bool,
    /// Every other transaction is written by git into our stack.
    pub interleave: bool,
    /// The repository has a linked worktree (`git worktree add --detach`), and the case's
    /// [`Op::WorktreeTxn`]s run in it (absent in case files older than it: false).
    #[serde(default)]
    pub worktree: bool,
}

/// `core.logAllRefUpdates`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogRefsOpt {
    /// `false`.
    False,
    /// `true`.
    True,
    /// `always`.
    Always,
}

impl LogRefsOpt {
    /// The config value.
    pub fn as_str(self) -> &'static str {
        match self {
            LogRefsOpt::False => "false",
            LogRefsOpt::True => "true",
            LogRefsOpt::Always => "always",
        }
    }

    /// The library's setting.
    pub fn to_lib(self) -> reftable::refdb::LogRefs {
        match self {
            LogRefsOpt::False => reftable::refdb::LogRefs::None,
            LogRefsOpt::True => reftable::refdb::LogRefs::Normal,
            LogRefsOpt::Always => reftable::refdb::LogRefs::Always,
        }
    }
}

impl Default for CaseOptions {
    fn default() -> Self {
        CaseOptions {
            sha256: false,
            block_size: 4096,
            restart_interval: 16,
            index_objects: true,
            log_refs: LogRefsOpt::True,
            auto_compaction: false,
            interleave: false,
            worktree: false,
        }
    }
}

impl CaseOptions {
    /// The hash.
    pub fn hash(&self) -> HashId {
        if self.sha256 {
            HashId::Sha256
        } else {
            HashId::Sha1
        }
    }
}
