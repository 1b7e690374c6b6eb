//! Case generation: proptest strategies for abstract operations, resolved against the model's
//! state while a case runs, so that old values are right often enough for transactions to go
//! through and wrong often enough to exercise refusals.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use reftable::ObjectId;

use crate::git::profile::Features;
use crate::model::{Fault, MValue, Model};
use crate::ops::{CaseOptions, Expire, LogRefsOpt, Op, Update, Value};
use crate::setup::pool::{Pool, PoolObjects};
use reftable::refdb::ObjectKind;

pub use reftable_harness::names::name_pool;

/// Reflog messages: empty, ordinary, long, multi-line, non-ASCII, with tabs.
pub fn message_pool() -> Vec<String> {
    vec![
        String::new(),
        "commit: x".into(),
        "update by test".into(),
        "m".repeat(3000),
        "multi\n\nline\n".into(),
        "héllo wörld ✓".into(),
        "  tabs\tand   spaces  ".into(),
    ]
}

/// The object abstract value `i` stands for.
fn value_of(pool: &Pool, i: u8) -> ObjectId {
    let n = pool.commits.len() + pool.tags.len() + 2;
    match (i as usize) % n {
        k if k < pool.commits.len() => pool.commits[k],
        k if k < pool.commits.len() + pool.tags.len() => pool.tags[k - pool.commits.len()].0,
        k if k == n - 2 && i % 7 == 0 => pool.tree,
        k if k == n - 1 && i % 11 == 0 => pool.missing,
        _ => pool.commits[(i as usize) % pool.commits.len()],
    }
}

/// Which old value an abstract update expects.
#[derive(Clone, Copy, Debug)]
pub enum OldSpec {
    /// None given.
    Unchecked,
    /// The current value (right unless the transaction changes it first).
    Current,
    /// Some pool value (usually wrong).
    Other(u8),
    /// Must not exist.
    Absent,
}

/// An abstract update: indexes into the pools, resolved later.
#[derive(Clone, Debug)]
pub enum AUpdate {
    /// `create`.
    Create(u8, u8),
    /// `update` with an old-value spec.
    Update(u8, u8, OldSpec),
    /// `delete`.
    Delete(u8, OldSpec),
    /// `verify`.
    Verify(u8, OldSpec),
    /// `symref-create`.
    SymrefCreate(u8, u8),
    /// `symref-update` (optionally checking the old target; optionally no-deref).
    SymrefUpdate(u8, u8, bool, bool),
    /// `symref-delete` (optionally checking the old target).
    SymrefDelete(u8, bool),
    /// `update` through `option no-deref`.
    UpdateNoDeref(u8, u8),
    /// `create` through `option no-deref` (on a dangling symref, git 2.52 refuses what
    /// older gits overwrite).
    CreateNoDeref(u8, u8),
}

/// An abstract operation.
#[derive(Clone, Debug)]
pub enum AOp {
    /// A transaction; `new_segment` starts a new update-ref process (new message and time).
    Txn(Vec<AUpdate>, u8, bool, bool),
    /// Create `n` refs under a prefix in one transaction (p1401's first step).
    MassCreate(u8, u16, u8),
    /// Delete everything under a prefix in one transaction.
    MassDelete(u8),
    /// Reflog expiry of a name.
    Expire(u8, bool),
    /// Reflog delete of one entry.
    ReflogDelete(u8, u8, bool),
    /// Reflog drop: a name with a reflog (even pick) or any name (odd pick).
    ReflogDrop(u8),
    /// pack-refs.
    Pack(u8),
    /// Create one ref whose record is `delta` bytes longer than what exactly fills the
    /// first ref block of a one-ref table (0: fills it exactly; 1: one byte too long).
    FillBlock(i8, u8),
    /// `git branch -m/-M/-c/-C`: (old pick, new pick, new-name shape, copy, force).
    Branch(u8, u8, u8, bool, bool),
    /// A transaction ([`AOp::Txn`]'s fields) run in the case's linked worktree, over
    /// [`worktree_name_pool`]; never drawn by the strategy, made by `with_worktree`.
    WorktreeTxn(Vec<AUpdate>, u8, bool, bool),
    /// A transaction ([`AOp::Txn`]'s fields) run through `update-ref --batch-updates` where
    /// the git has it; never drawn by the strategy, made by `with_batches`.
    BatchTxn(Vec<AUpdate>, u8, bool, bool),
    /// A transaction ([`AOp::Txn`]'s fields) run through `git refs create|update|delete`
    /// where the git has them and it is one update they can express; never drawn by the
    /// strategy, made by `with_batches`.
    RefsTxn(Vec<AUpdate>, u8, bool, bool),
    /// A transaction ([`AOp::Txn`]'s fields) whose first update's name is pointed at
    /// another pool name by `git symbolic-ref`; never drawn by the strategy, made by
    /// `with_batches`.
    SymbolicRef(Vec<AUpdate>, u8, bool, bool),
    /// A transaction ([`AOp::Txn`]'s fields) pushed with `git push --atomic .` as far as a
    /// push can express it; never drawn by the strategy, made by `with_batches`.
    Push(Vec<AUpdate>, u8, bool, bool),
    /// A transaction ([`AOp::Txn`]'s fields) fetched with `git fetch --atomic .` as far as
    /// a fetch can express it; never drawn by the strategy, made by `with_batches`.
    Fetch(Vec<AUpdate>, u8, bool, bool),
    /// A transaction ([`AOp::Txn`]'s fields) whose first update is made a `git tag` (or
    /// whose deletions a `git tag -d`) as far as the command can express it; never drawn
    /// by the strategy, made by `with_batches`.
    Tag(Vec<AUpdate>, u8, bool, bool),
    /// `git checkout -l --orphan` of the pool branch at or after this name pick (a
    /// transaction's first name); never drawn by the strategy, made by `with_batches`.
    Orphan(u8),
}

impl AUpdate {
    /// The name pick of the ref the update writes.
    fn name_pick(&self) -> u8 {
        match *self {
            AUpdate::Create(n, _)
            | AUpdate::Update(n, ..)
            | AUpdate::Delete(n, _)
            | AUpdate::Verify(n, _)
            | AUpdate::SymrefCreate(n, _)
            | AUpdate::SymrefUpdate(n, ..)
            | AUpdate::SymrefDelete(n, _)
            | AUpdate::UpdateNoDeref(n, _)
            | AUpdate::CreateNoDeref(n, _) => n,
        }
    }
}

fn old_spec() -> impl Strategy<Value = OldSpec> {
    prop_oneof![
        3 => Just(OldSpec::Unchecked),
        4 => Just(OldSpec::Current),
        1 => any::<u8>().prop_map(OldSpec::Other),
        1 => Just(OldSpec::Absent),
    ]
}

fn aupdate() -> impl Strategy<Value = AUpdate> {
    let n = any::<u8>();
    let v = any::<u8>();
    prop_oneof![
        4 => (n, v).prop_map(|(a, b)| AUpdate::Create(a, b)),
        6 => (n, v, old_spec()).prop_map(|(a, b, o)| AUpdate::Update(a, b, o)),
        3 => (n, old_spec()).prop_map(|(a, o)| AUpdate::Delete(a, o)),
        1 => (n, old_spec()).prop_map(|(a, o)| AUpdate::Verify(a, o)),
        1 => (n, n).prop_map(|(a, b)| AUpdate::SymrefCreate(a, b)),
        1 => (n, n, any::<bool>(), any::<bool>()).prop_map(|(a, b, c, d)| AUpdate::SymrefUpdate(a, b, c, d)),
        1 => (n, any::<bool>()).prop_map(|(a, c)| AUpdate::SymrefDelete(a, c)),
        1 => (n, v).prop_map(|(a, b)| AUpdate::UpdateNoDeref(a, b)),
        1 => (n, v).prop_map(|(a, b)| AUpdate::CreateNoDeref(a, b)),
    ]
}

fn aop() -> impl Strategy<Value = AOp> {
    prop_oneof![
        20 => (proptest::collection::vec(aupdate(), 1..4), any::<u8>(), any::<bool>(), proptest::bool::weighted(0.05))
            .prop_map(|(u, m, seg, cr)| AOp::Txn(u, m, seg, cr)),
        1 => (0u8..3, 10u16..300, any::<u8>()).prop_map(|(p, n, v)| AOp::MassCreate(p, n, v)),
        1 => (0u8..3).prop_map(AOp::MassDelete),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(n, all)| AOp::Expire(n, all)),
        1 => (any::<u8>(), 0u8..4, any::<bool>()).prop_map(|(n, i, r)| AOp::ReflogDelete(n, i, r)),
        1 => any::<u8>().prop_map(AOp::ReflogDrop),
        1 => (0u8..3).prop_map(AOp::Pack),
        2 => (prop_oneof![4 => Just(0i8), 1 => -3i8..=-1, 1 => Just(1i8)], any::<u8>())
            .prop_map(|(d, v)| AOp::FillBlock(d, v)),
        2 => (any::<u8>(), any::<u8>(), 0u8..6, proptest::bool::weighted(0.4), proptest::bool::weighted(0.4))
            .prop_map(|(a, b, shape, copy, force)| AOp::Branch(a, b, shape, copy, force)),
    ]
}

fn options() -> impl Strategy<Value = CaseOptions> {
    (
        proptest::bool::weighted(0.25),
        prop_oneof![4 => Just(4096u32), 1 => Just(1024), 1 => Just(300)],
        prop_oneof![4 => Just(16u16), 1 => Just(1), 1 => Just(3)],
        proptest::bool::weighted(0.85),
        prop_oneof![1 => Just(LogRefsOpt::False), 4 => Just(LogRefsOpt::True), 1 => Just(LogRefsOpt::Always)],
        proptest::bool::weighted(0.3),
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(sha256, block_size, restart_interval, index_objects, log_refs, auto_compaction, interleave)| CaseOptions {
            sha256,
            block_size,
            restart_interval,
            index_objects,
            log_refs,
            auto_compaction,
            interleave,
            worktree: false,
        })
}

/// The options and abstract operations of case `index` of a run with `seed`.
pub fn generate(seed: u64, index: u64, ops: usize) -> (CaseOptions, Vec<AOp>) {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&index.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let opts = options().new_tree(&mut runner).expect("strategy").current();
    let list = proptest::collection::vec(aop(), ops..=ops)
        .new_tree(&mut runner)
        .expect("strategy")
        .current();
    (opts, list)
}

/// One case in this many of `conformance run` has a linked worktree (`with_worktree`).
pub const WORKTREE_ONE_IN: u64 = 4;

/// One transaction in this many of a case without a worktree runs through
/// `update-ref --batch-updates` (`with_batches`), and one in this many through
/// `git refs create|update|delete`; half as many as a `git symbolic-ref`, as many again as
/// a `git push`, and as many again become a `git checkout -l --orphan`.
pub const BATCH_ONE_IN: usize = 6;

/// Case `index` of a run with `seed` as `conformance run` has it: [`generate`]'s case, and
/// for one case in [`WORKTREE_ONE_IN`] a linked worktree in which about two transactions
/// in five run ([`AOp::WorktreeTxn`]) and no `git branch` (it moves other worktrees'
/// `HEAD`s, which our side does not follow); in the other cases one transaction in
/// [`BATCH_ONE_IN`] runs as a batch ([`AOp::BatchTxn`]). The choices come from generators
/// of their own, so every case's options and other operations are [`generate`]'s.
pub fn generate_with_reach(seed: u64, index: u64, ops: usize) -> (CaseOptions, Vec<AOp>) {
    let (opts, aops) = generate(seed, index, ops);
    let mut rng = reftable_testkit::rng::Rng(
        seed ^ index.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x77_6f72_6b74,
    );
    if rng.below(WORKTREE_ONE_IN as usize) != 0 {
        let mut rng = reftable_testkit::rng::Rng(rng.0 ^ 0x62_6174_6368);
        return (opts, with_batches(aops, &mut rng));
    }
    with_worktree(opts, aops, &mut rng)
}

/// Whether `name` is none of `updates`' names and neither a directory of one of them nor
/// inside one (no D/F conflict among a transaction's updates).
fn apart_from(updates: &[Update], name: &str) -> bool {
    updates.iter().all(|k| {
        let a = &k.refname;
        a != name && !name.starts_with(&format!("{a}/")) && !a.starts_with(&format!("{name}/"))
    })
}

/// The branch checked out in the main worktree: the end of `HEAD`'s symref chain (`HEAD`
/// itself when it is detached).
fn checked_out(model: &Model) -> &str {
    let mut head = "HEAD";
    for _ in 0..crate::model::SYMREF_READS {
        if let Some(MValue::Symref(t)) = model.refs.get(head) {
            head = t;
        }
    }
    head
}

/// `aops` with the transactions `rng` picks (one in [`BATCH_ONE_IN`] each) run as batches,
/// through `git refs`, as a `git symbolic-ref`, `git push`, `git fetch` or `git tag`, or
/// replaced by a `git checkout -l --orphan`.
fn with_batches(aops: Vec<AOp>, rng: &mut reftable_testkit::rng::Rng) -> Vec<AOp> {
    aops.into_iter()
        .map(|a| match (a, rng.below(2 * BATCH_ONE_IN)) {
            (AOp::Txn(u, m, seg, cr), 0 | 1) => AOp::BatchTxn(u, m, seg, cr),
            (AOp::Txn(u, m, seg, cr), 2 | 3) => AOp::RefsTxn(u, m, seg, cr),
            (AOp::Txn(u, m, seg, cr), 4) => AOp::SymbolicRef(u, m, seg, cr),
            (AOp::Txn(u, m, seg, cr), 5) => AOp::Push(u, m, seg, cr),
            (AOp::Txn(u, ..), 6) if !u.is_empty() => AOp::Orphan(u[0].name_pick()),
            (AOp::Txn(u, m, seg, cr), 7) => AOp::Fetch(u, m, seg, cr),
            (AOp::Txn(u, m, seg, cr), 8) => AOp::Tag(u, m, seg, cr),
            (other, _) => other,
        })
        .collect()
}

/// `git tag -d` of `tags`, each once, deleted without a message or an expected value and
/// without following symrefs (`refs_delete_refs`); `None` when there is none.
fn tag_deletions(tags: impl Iterator<Item = String>, null: &ObjectId) -> Option<Op> {
    let mut deleted: Vec<Update> = Vec::new();
    for tag in tags {
        if deleted.iter().all(|d| d.refname != tag) {
            deleted.push(Update {
                refname: tag,
                new: Some(Value::oid(null)),
                old: None,
                no_deref: true,
            });
        }
    }
    (!deleted.is_empty()).then(|| Op::Tag {
        updates: deleted,
        message: String::new(),
        create_reflog: false,
    })
}

/// `opts` and `aops` with a linked worktree: transactions chosen by `rng` run in it, and
/// `git branch` operations are left out.
pub(crate) fn with_worktree(
    mut opts: CaseOptions,
    aops: Vec<AOp>,
    rng: &mut reftable_testkit::rng::Rng,
) -> (CaseOptions, Vec<AOp>) {
    opts.worktree = true;
    let aops = aops
        .into_iter()
        .filter(|a| !matches!(a, AOp::Branch(..)))
        .map(|a| match a {
            AOp::Txn(u, m, seg, cr) if rng.chance(40) => AOp::WorktreeTxn(u, m, seg, cr),
            other => other,
        })
        .collect();
    (opts, aops)
}

/// A name with `.lock` in a component, for the creations that draw one of the last three
/// name indexes (each about one in 256): a middle component ending in `.lock` and a last one
/// (both refused by git's name check), or `.lock` inside a component (a valid name).
fn lock_component_name(from_last: u8) -> &'static str {
    [
        "refs/heads/a.lock/b",
        "refs/heads/a.lock",
        "refs/heads/a.lock.b",
    ][from_last as usize % 3]
}

/// The names a worktree's transactions draw from: its own `HEAD` and per-worktree refs
/// (`refs/bisect/`, `refs/worktree/`, `refs/rewritten/`, with D/F pairs), shared branches
/// and tags, the root ref `ORIG_HEAD`, and `refs/bisect` and `refs/worktree`: shared names
/// (no trailing slash) over the per-worktree directories, D/F conflicts across the stacks.
/// Never a `main-worktree/` or `worktrees/<id>/` name: git writes those under the prefixed
/// name (known defect `worktree-prefixed-name-written-as-is`) and our library refuses them;
/// they are read after every step instead.
pub fn worktree_name_pool() -> Vec<String> {
    [
        "HEAD",
        "refs/bisect/bad",
        "refs/bisect/good-1",
        "refs/bisect/bad/x",
        "refs/worktree/a",
        "refs/worktree/a/b",
        "refs/worktree/é",
        "refs/heads/main",
        "refs/heads/a",
        "refs/heads/wt",
        "refs/heads/topic",
        "refs/tags/v1",
        "ORIG_HEAD",
        "refs/rewritten/x",
        "refs/bisect",
        "refs/worktree",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Whether a transaction sets a symref and names refs of both of a worktree's stacks. Such a
/// transaction is left out of worktree cases: git writes and commits one table per stack in
/// turn and resolves a symref's new reflog value when it writes that stack's table, so the
/// value sees the other stack's update only when that stack happened to be committed first
/// (`symref-update refs/heads/main HEAD` then `symref-create refs/bisect/x refs/heads/main`
/// logs the worktree's `HEAD` for `refs/bisect/x`; alone in one stack the same two log
/// nothing for it). Our library resolves against the state before the transaction in every
/// case (seed 1, case 11 of 40 against git 2.47.3).
fn symref_across_stacks(op: &Op) -> bool {
    use reftable::refdb::WorktreeStack;
    let Op::Txn { updates, .. } = op else {
        return false;
    };
    let sets_symref = updates
        .iter()
        .any(|u| matches!(u.new, Some(Value::Symref(_))));
    let stacks: Vec<_> = updates
        .iter()
        .map(|u| WorktreeStack::of(u.refname.as_bytes()))
        .collect();
    sets_symref && stacks.contains(&WorktreeStack::Common) && stacks.contains(&WorktreeStack::Own)
}

/// Turns abstract operations into concrete ones against the model's current state.
pub struct Resolver {
    names: Vec<String>,
    messages: Vec<String>,
    pool: Pool,
    /// Current message and create-reflog flag of the segment.
    message: String,
    create_reflog: bool,
    mass: Vec<Vec<String>>,
    /// The git under test has `symref-*` commands (2.46+); without them such updates are
    /// left out.
    symref_commands: bool,
    /// The git under test has `git reflog drop` (2.50+); without it drops are left out.
    reflog_drop: bool,
    /// The git under test has `update-ref --batch-updates` (2.50+), and rejects updates
    /// naming bad objects one by one in it (2.55+); without it batches run as transactions.
    batch_updates: (bool, bool),
    /// The git under test has `git refs create|update|delete`; without them such
    /// transactions run through update-ref.
    refs_writes: bool,
    /// Block size and hash of the case (for [`AOp::FillBlock`]).
    block_size: u32,
    hash: reftable::HashId,
}

/// A valid ref name of exactly `len` bytes (at least 24) starting with `refs/heads/b<tag>-`,
/// in components of at most 200 bytes (file systems limit a component to 255).
pub fn name_of_length(len: usize, tag: &str) -> String {
    let mut name = format!("refs/heads/b{tag}-");
    let mut component = 0;
    while name.len() < len {
        if component == 200 && len - name.len() > 1 {
            name.push('/');
            component = 0;
        } else {
            name.push((b'a' + (name.len() % 26) as u8) as char);
            component += 1;
        }
    }
    name
}

/// The ref name length whose record, alone in a table's first ref block with one restart
/// point, makes the block exactly `block_size` bytes long (plus `delta`).
fn filling_name_length(block_size: u32, hash: reftable::HashId, delta: i8) -> Option<usize> {
    use reftable::codec::{format, varint};
    let header = format::header_size(if hash == reftable::HashId::Sha1 { 1 } else { 2 });
    // Block header (type and 24-bit length), restart table (one offset and the count).
    let room = (block_size as usize).checked_sub(header + 4 + 3 + 2)? as i64 + i64::from(delta);
    // Record: prefix length 0, (suffix length << 3 | type 1), name, update index delta 0, id.
    (24..block_size as usize).find(|&len| {
        let rec = 1 + varint::encoded_len(((len as u64) << 3) | 1) + len + 1 + hash.size();
        rec as i64 == room
    })
}

impl Resolver {
    /// A resolver over `pool`, for a git with `features`.
    pub fn new(pool: Pool, features: &Features, opts: &CaseOptions) -> Resolver {
        Resolver {
            block_size: opts.block_size,
            hash: opts.hash(),
            names: name_pool(),
            messages: message_pool(),
            pool,
            message: "init".into(),
            create_reflog: false,
            mass: vec![Vec::new(); 3],
            symref_commands: features.symref_commands,
            reflog_drop: features.reflog_drop,
            batch_updates: (features.batch_updates, features.batch_rejects_objects),
            refs_writes: features.refs_writes,
        }
    }

    fn name(&self, i: u8) -> String {
        self.names[i as usize % self.names.len()].clone()
    }

    /// A `reflog drop` when the git has it: of a reflog the model has for an even pick (so
    /// that most drops find one), of any name for an odd one.
    fn reflog_drop(&self, model: &Model, n: u8) -> Option<Op> {
        if !self.reflog_drop {
            return None;
        }
        let with_log = model
            .logs
            .keys()
            .nth(n as usize / 2 % model.logs.len().max(1));
        let refname = match with_log {
            Some(name) if n % 2 == 0 => name.clone(),
            _ => self.name(n),
        };
        Some(Op::ReflogDrop { refname })
    }

    fn current(&self, model: &Model, name: &str) -> Option<Value> {
        model.refs.get(name).map(|v| match v {
            MValue::Oid(id) => Value::oid(id),
            MValue::Symref(t) => Value::Symref(t.clone()),
        })
    }

    fn current_oid(&self, model: &Model, name: &str, null: &ObjectId) -> ObjectId {
        model.resolve(name).unwrap_or(*null)
    }

    fn old(&self, spec: OldSpec, model: &Model, name: &str, null: &ObjectId) -> Option<Value> {
        match spec {
            OldSpec::Unchecked => None,
            OldSpec::Current => {
                let id = self.current_oid(model, name, null);
                (!id.is_null()).then(|| Value::oid(&id))
            }
            OldSpec::Other(v) => Some(Value::oid(&value_of(&self.pool, v))),
            OldSpec::Absent => Some(Value::oid(null)),
        }
    }

    /// A `git branch -m/-c` the model can follow: `HEAD` a symref to a branch (or
    /// detached), the old branch existing or not checked out, a new name that is not the
    /// old one, not checked out, and has no reflog of its own when it is overwritten (the
    /// interleaving of two reflogs by update index is not modelled).
    fn branch(
        &self,
        model: &Model,
        a: u8,
        b: u8,
        shape: u8,
        copy: bool,
        force: bool,
    ) -> Option<Op> {
        const HEADS: &str = "refs/heads/";
        // git's command takes the end of HEAD's symref chain for the checked-out branch,
        // its backend HEAD's own target: one hop keeps the two the same.
        let head = match model.refs.get("HEAD") {
            Some(MValue::Symref(t))
                if t.starts_with(HEADS)
                    && !matches!(model.refs.get(t), Some(MValue::Symref(_))) =>
            {
                Some(t.clone())
            }
            Some(MValue::Oid(_)) => None,
            _ => return None,
        };
        let branches: Vec<&String> = model.refs.keys().filter(|k| k.starts_with(HEADS)).collect();
        let old = match (branches.get(a as usize % branches.len().max(1)), &head) {
            // One in four the checked-out branch, where it exists.
            (_, Some(h)) if a % 4 == 3 && model.refs.contains_key(h) => h.clone(),
            // Now and then a name that may not exist.
            (Some(n), _) if a % 8 != 0 => (*n).clone(),
            _ => self.name(a),
        };
        let old_short = old.strip_prefix(HEADS)?.to_string();
        let pool_branch = |i: u8| {
            (0..self.names.len())
                .map(|k| self.name(i.wrapping_add(k as u8)))
                .find(|n| n.starts_with(HEADS) && n != &old)
        };
        // A forced command onto an existing branch one time in two (one without a reflog,
        // where there is one: see above), a copy to an invalid name one time in four.
        let shape = match shape {
            _ if force && b % 2 == 0 => 6,
            _ if copy && b % 4 == 3 => 3,
            s => s,
        };
        let logless: Vec<&&String> = (branches.iter())
            .filter(|n| !model.logs.contains_key(n.as_str()) && **n != &old)
            .collect();
        let new_short = match shape {
            0 => format!("{old_short}/x"),
            1 => pool_branch(b)?.strip_prefix(HEADS)?.to_string(),
            6 if !logless.is_empty() => logless[b as usize % logless.len()]
                .strip_prefix(HEADS)?
                .to_string(),
            2 | 6 => branches
                .get(b as usize % branches.len().max(1))?
                .strip_prefix(HEADS)?
                .to_string(),
            // git's name check refuses each: `..`, a middle or last component ending in
            // `.lock`.
            3 => ["bad..name", "bad.lock/name", "bad.lock"][b as usize % 3].to_string(),
            _ => format!("moved-{b}"),
        };
        let new = format!("{HEADS}{new_short}");
        let exists = |n: &str| model.resolve(n).is_some() || model.refs.contains_key(n);
        let checked_out = |n: &str| head.as_deref() == Some(n);
        if new == old
            || (checked_out(&old) && !exists(&old))
            || (force && exists(&new) && (checked_out(&new) || model.logs.contains_key(&new)))
            || (!exists(&new) && model.logs.contains_key(&new))
            // A dangling symref is no branch to git's `branch -c`, which copies over it;
            // the model takes it for an existing branch.
            || (model.refs.contains_key(&new) && model.resolve(&new).is_none())
        {
            return None;
        }
        // One plain rename in three through `git refs rename` where the git has it, now and
        // then without a message. Of a missing branch one in two: a run draws few of them,
        // and one in three left a default run on master without one.
        let missing = !model.refs.contains_key(&old);
        let via_refs = if missing {
            b % 2 == 1
        } else {
            (a ^ b) % 3 == 0
        };
        let refs_rename = (self.refs_writes && !copy && !force && via_refs).then(|| {
            if b % 4 == 0 {
                String::new()
            } else {
                format!("refs rename of {old_short}")
            }
        });
        Some(Op::Branch {
            old: old_short,
            new: new_short,
            copy,
            force,
            refs_rename,
        })
    }

    /// A `git checkout -l --orphan` the model can follow: `HEAD` a symref to a branch (one
    /// hop) or detached, and a new branch with neither a ref nor a reflog (git's reftable
    /// backend asks whether the reflog exists by its newest record, a tombstone included
    /// since 2.46, where ours looks past tombstones).
    fn orphan(&self, model: &Model, n: u8) -> Option<Op> {
        const HEADS: &str = "refs/heads/";
        match model.refs.get("HEAD") {
            Some(MValue::Symref(t))
                if t.starts_with(HEADS)
                    && !matches!(model.refs.get(t), Some(MValue::Symref(_))) => {}
            Some(MValue::Oid(_)) => {}
            _ => return None,
        }
        let name = (0..self.names.len())
            .map(|k| self.name(n.wrapping_add(k as u8)))
            .find(|x| {
                x.starts_with(HEADS) && !model.refs.contains_key(x) && !model.logs.contains_key(x)
            })?;
        Some(Op::Orphan {
            branch: name.strip_prefix(HEADS)?.to_string(),
        })
    }

    /// The concrete operation for `op`; `None` when it resolves to nothing.
    pub fn resolve(&mut self, op: &AOp, model: &Model, null: &ObjectId) -> Option<Op> {
        match op {
            AOp::Txn(updates, msg, new_segment, create_reflog) => {
                let u = self.txn_updates(updates, *msg, *new_segment, *create_reflog, model, null);
                u.map(|u| self.segment_txn(u))
            }
            AOp::MassCreate(p, n, v) => Some(self.mass_create(*p, *n, *v)),
            AOp::MassDelete(p) => self.mass_delete(*p, model, null),
            AOp::Expire(n, all) => Some(self.expire(model, *n, *all)),
            // One in three with `--updateref`, of the newest or the next entry: deleting the
            // newest moves the ref to the entry before it.
            AOp::ReflogDelete(n, i, r) => {
                let update_ref = n % 3 == 1;
                Some(Op::ReflogDelete {
                    refname: self.name(*n),
                    index: *i as usize % if update_ref { 2 } else { 256 },
                    rewrite: *r,
                    update_ref,
                })
            }
            AOp::ReflogDrop(n) => self.reflog_drop(model, *n),
            AOp::Pack(2) => Some(Op::MaintenancePackRefs),
            AOp::Pack(auto) => Some(Op::PackRefs { auto: *auto == 1 }),
            AOp::Branch(a, b, shape, copy, force) => {
                self.branch(model, *a, *b, *shape, *copy, *force)
            }
            AOp::FillBlock(delta, v) => self.fill_block(*delta, *v),
            AOp::Orphan(n) => self.orphan(model, *n),
            AOp::BatchTxn(updates, msg, new_segment, create_reflog) => {
                let u =
                    self.txn_updates(updates, *msg, *new_segment, *create_reflog, model, null)?;
                self.batch(u, model)
            }
            AOp::SymbolicRef(updates, msg, new_segment, create_reflog) => {
                let u =
                    self.txn_updates(updates, *msg, *new_segment, *create_reflog, model, null)?;
                if !self.symref_commands {
                    // Before 2.46 `git symbolic-ref` wrote through the backend's own
                    // `create_symref` (no transaction, its own logging and D/F wording),
                    // which the model does not follow: the transaction runs as it is.
                    return Some(self.segment_txn(u));
                }
                self.symbolic_ref(&u, &updates[0])
            }
            AOp::Push(updates, msg, new_segment, create_reflog) => {
                let u =
                    self.txn_updates(updates, *msg, *new_segment, *create_reflog, model, null)?;
                Some(self.push(u, model, null))
            }
            AOp::Fetch(updates, msg, new_segment, create_reflog) => {
                let u =
                    self.txn_updates(updates, *msg, *new_segment, *create_reflog, model, null)?;
                Some(self.fetch(u, model))
            }
            AOp::Tag(updates, msg, new_segment, create_reflog) => {
                let u =
                    self.txn_updates(updates, *msg, *new_segment, *create_reflog, model, null)?;
                // One in three deletes the first update's tag if it exists.
                Some(self.tag(u, model, null, msg % 3 == 0))
            }
            AOp::RefsTxn(updates, msg, new_segment, create_reflog) => {
                let u =
                    self.txn_updates(updates, *msg, *new_segment, *create_reflog, model, null)?;
                Some(self.refs_command(u))
            }
            AOp::WorktreeTxn(updates, msg, new_segment, create_reflog) => {
                let main_names = std::mem::replace(&mut self.names, worktree_name_pool());
                let op = self
                    .txn_updates(updates, *msg, *new_segment, *create_reflog, model, null)
                    .map(|u| self.segment_txn(u));
                self.names = main_names;
                op.filter(|op| !symref_across_stacks(op))
                    .map(|op| match op {
                        Op::Txn {
                            updates,
                            message,
                            create_reflog,
                        } => Op::WorktreeTxn {
                            updates,
                            message,
                            create_reflog,
                        },
                        other => other,
                    })
            }
        }
    }

    /// `updates` as a `--batch-updates` batch where the git has one (else a transaction): its
    /// updates the model can judge one by one ([`Model::batch_rejections`]: plain creates,
    /// updates, deletes and verifies of distinct names, none over another, no symref nor
    /// `HEAD`, no bad name; objects only where git rejects them one by one), never a
    /// rejected update of `HEAD`'s branch (git logs it to `HEAD` anyway: known defect
    /// `batch-updates-rejected-update-logged-to-head`); `None` when none is left.
    fn batch(&self, updates: Vec<Update>, model: &Model) -> Option<Op> {
        let (true, objects_ok) = self.batch_updates else {
            return Some(self.segment_txn(updates));
        };
        let head = match model.refs.get("HEAD") {
            Some(MValue::Symref(t)) => t.clone(),
            _ => String::new(),
        };
        let pool = PoolObjects(&self.pool);
        let mut kept: Vec<Update> = Vec::new();
        for u in updates {
            let plain = !u.no_deref
                && u.refname != "HEAD"
                && !matches!(model.refs.get(&u.refname), Some(MValue::Symref(_)))
                && ![&u.new, &u.old]
                    .into_iter()
                    .flatten()
                    .any(|v| matches!(v, Value::Symref(_)));
            let apart = apart_from(&kept, &u.refname);
            let faults = model
                .refusal(std::slice::from_ref(&u), &pool)
                .map(|r| r.faults)
                .unwrap_or_default();
            let judged = !faults.contains(Fault::BadName)
                && (objects_ok
                    || !(faults.contains(Fault::MissingObject)
                        || faults.contains(Fault::NonCommit)))
                && (faults.is_empty() || u.refname != head);
            if plain && apart && judged {
                kept.push(u);
            }
        }
        (!kept.is_empty()).then(|| Op::BatchTxn {
            updates: kept,
            message: self.message.clone(),
            create_reflog: self.create_reflog,
        })
    }

    /// `updates` through `git refs create|update|delete` where the git has them and they
    /// are one update these express: an object id or deletion for a new value, no `verify`,
    /// no null old id for a deletion (git refuses it before anything else); else a
    /// transaction.
    fn refs_command(&self, updates: Vec<Update>) -> Op {
        let oid = |v: &Option<Value>| match v {
            Some(Value::Oid(h)) => ObjectId::from_hex(h),
            _ => None,
        };
        let fits = |u: &Update| {
            let new = oid(&u.new);
            let old_null = oid(&u.old).is_some_and(|o| o.is_null());
            new.is_some()
                && !matches!(u.old, Some(Value::Symref(_)))
                && !(new.is_some_and(|n| n.is_null()) && old_null)
        };
        if self.refs_writes && updates.len() == 1 && fits(&updates[0]) {
            return Op::RefsCommand {
                updates,
                message: self.message.clone(),
                create_reflog: self.create_reflog,
            };
        }
        self.segment_txn(updates)
    }

    /// `updates` as a `git push --atomic .` where a push expresses them: new values under
    /// `refs/` (commits, tags outside `refs/heads/`) and deletions of existing refs, none of
    /// a symref or of the branch `HEAD` points at (receive-pack refuses to change the
    /// checked-out branch), none leaving a ref as it is (the client leaves those out), and
    /// a transaction the model accepts (the refusals of receive-pack are not modelled);
    /// else a transaction.
    fn push(&self, updates: Vec<Update>, model: &Model, null: &ObjectId) -> Op {
        let pool = PoolObjects(&self.pool);
        let head = checked_out(model);
        let mut pushed: Vec<Update> = Vec::new();
        for u in &updates {
            let name = &u.refname;
            let current = match model.refs.get(name) {
                Some(MValue::Oid(id)) => *id,
                None => *null,
                Some(MValue::Symref(_)) => continue,
            };
            let Some(Value::Oid(h)) = &u.new else {
                continue;
            };
            let Some(new) = ObjectId::from_hex(h) else {
                continue;
            };
            let kind_ok = match pool.kind(&new) {
                ObjectKind::Commit => true,
                ObjectKind::Tag { .. } => !name.starts_with("refs/heads/"),
                _ => new.is_null() && !current.is_null(),
            };
            let apart = apart_from(&pushed, name);
            if name.starts_with("refs/") && name != head && new != current && kind_ok && apart {
                pushed.push(Update {
                    refname: name.clone(),
                    new: Some(Value::oid(&new)),
                    old: Some(Value::oid(&current)),
                    no_deref: false,
                });
            }
        }
        if pushed.is_empty() || model.refusal(&pushed, &pool).is_some() {
            return self.segment_txn(updates);
        }
        Op::Push { updates: pushed }
    }

    /// `updates` as a `git fetch --atomic . +<new>:<ref>…` ([`Op::fetch_args`]): new
    /// commits for refs under `refs/` but `refs/tags/` that are absent or hold another
    /// commit, none a symref or the branch `HEAD` points at (fetch refuses the checked-out
    /// branch), and a transaction the model accepts; else a transaction. Each update logs
    /// what fetch did to its ref — `storing ref` for a new one (the source is an id, so no
    /// remote name says head or tag), `fast-forward` or `forced-update` for a moved one
    /// (the pool's commits are one history) — so one fetch of mixed kinds is one
    /// transaction with a message per update.
    fn fetch(&self, updates: Vec<Update>, model: &Model) -> Op {
        let pool = PoolObjects(&self.pool);
        let head = checked_out(model);
        let place = |id: &ObjectId| self.pool.commits.iter().position(|c| c == id);
        let mut fetched: Vec<Update> = Vec::new();
        let mut whats: Vec<&str> = Vec::new();
        for u in &updates {
            let name = &u.refname;
            let Some(Value::Oid(h)) = &u.new else {
                continue;
            };
            let Some((new, new_place)) = ObjectId::from_hex(h).and_then(|n| Some((n, place(&n)?)))
            else {
                continue;
            };
            let (old, kind) = match model.refs.get(name) {
                None => (None, "storing ref"),
                Some(MValue::Oid(id)) => match place(id) {
                    Some(p) if p < new_place => (Some(Value::oid(id)), "fast-forward"),
                    Some(p) if p > new_place => (Some(Value::oid(id)), "forced-update"),
                    _ => continue,
                },
                Some(MValue::Symref(_)) => continue,
            };
            let apart = apart_from(&fetched, name);
            let ours = name.starts_with("refs/") && !name.starts_with("refs/tags/");
            if ours && name != head && apart {
                fetched.push(Update {
                    refname: name.clone(),
                    new: Some(Value::oid(&new)),
                    old,
                    no_deref: false,
                });
                whats.push(kind);
            }
        }
        if fetched.is_empty() || model.refusal(&fetched, &pool).is_some() {
            return self.segment_txn(updates);
        }
        let args = Op::fetch_args(&fetched).join(" ");
        let messages = whats.iter().map(|w| format!("{args}: {w}")).collect();
        Op::Fetch {
            updates: fetched,
            messages,
        }
    }

    /// `updates` as a `git tag` ([`Op::tag_args`]). Names map to tags of the same short
    /// name (`refs/heads/a/b` → `refs/tags/a/b`, so the name pool's D/F pairs and neighbours
    /// carry over; no root refs, never a symref, which git resolves before its transaction,
    /// nor the checked-out branch). When `delete_first`, a `git tag -d` of the first
    /// update's tag, or else of the model's first tag (so that the tags a case made are
    /// deleted again); otherwise the first update's tag set to the pool object it names,
    /// `-f` over an existing tag (the transaction expects its id; no ref otherwise), with
    /// git's message `tag: tagging <abbrev> (<what>)`. Where neither applies, a `git tag -d`
    /// of the existing tags the deletions among `updates` name; else a transaction.
    fn tag(&self, updates: Vec<Update>, model: &Model, null: &ObjectId, delete_first: bool) -> Op {
        let head = checked_out(model);
        let as_tag = |name: &str| {
            let rest = name.strip_prefix("refs/")?;
            let short = rest.split_once('/').map_or(rest, |(_, s)| s);
            let tag = format!("refs/tags/{short}");
            let holds_id = !matches!(model.refs.get(&tag), Some(MValue::Symref(_)));
            (holds_id && tag != head).then_some(tag)
        };
        let exists = |t: &String| model.refs.contains_key(t);
        let first = updates.first();
        let first_tag = first.and_then(|u| as_tag(&u.refname));
        if delete_first {
            let model_tags = model.refs.keys().filter(|n| n.starts_with("refs/tags/"));
            let mut model_tags = model_tags.filter_map(|n| as_tag(n));
            let chosen = first_tag
                .clone()
                .filter(exists)
                .or_else(|| model_tags.next());
            if let Some(op) = tag_deletions(chosen.into_iter(), null) {
                return op;
            }
        }
        let set = match first.and_then(|u| u.new.as_ref()) {
            Some(Value::Oid(h)) => ObjectId::from_hex(h).filter(|id| !id.is_null()),
            _ => None,
        };
        let op = set.zip(first_tag).and_then(|(id, first_tag)| {
            let what = self.pool.tag_description(&id)?;
            let old = match model.refs.get(&first_tag) {
                Some(MValue::Oid(o)) => *o,
                _ => ObjectId::null(id.hash()),
            };
            let hex = id.to_string();
            Some(Op::Tag {
                message: format!("tag: tagging {} ({what})", &hex[..7]),
                updates: vec![Update {
                    refname: first_tag,
                    new: Some(Value::Oid(hex)),
                    old: Some(Value::oid(&old)),
                    no_deref: false,
                }],
                create_reflog: self.create_reflog,
            })
        });
        op.or_else(|| {
            let named = updates.iter().filter(|u| u.is_deletion());
            tag_deletions(
                named.filter_map(|u| as_tag(&u.refname)).filter(exists),
                null,
            )
        })
        .unwrap_or_else(|| self.segment_txn(updates))
    }

    /// `git symbolic-ref` of the name of the first of `updates` (`first` its abstract form)
    /// to the pool name its value index stands for, with the segment's message.
    fn symbolic_ref(&self, updates: &[Update], first: &AUpdate) -> Option<Op> {
        let t = match *first {
            AUpdate::Create(_, v)
            | AUpdate::Update(_, v, _)
            | AUpdate::SymrefCreate(_, v)
            | AUpdate::SymrefUpdate(_, v, ..)
            | AUpdate::UpdateNoDeref(_, v)
            | AUpdate::CreateNoDeref(_, v) => v,
            AUpdate::Delete(n, _) | AUpdate::Verify(n, _) | AUpdate::SymrefDelete(n, _) => {
                n.wrapping_add(1)
            }
        };
        Some(Op::SymbolicRef {
            name: updates.first()?.refname.clone(),
            target: self.name(t),
            message: self.message.clone(),
        })
    }

    /// The object abstract value `i` stands for, as a ref value.
    fn oid(&self, i: u8) -> Value {
        Value::oid(&value_of(&self.pool, i))
    }

    /// A transaction of `updates` with the current segment's message and flag.
    fn segment_txn(&self, updates: Vec<Update>) -> Op {
        Op::Txn {
            updates,
            message: self.message.clone(),
            create_reflog: self.create_reflog,
        }
    }

    /// A new segment's message and flag when `new_segment`, then the concrete updates (the
    /// `symref-*` ones only where git has those commands); `None` when none is left.
    fn txn_updates(
        &mut self,
        updates: &[AUpdate],
        msg: u8,
        new_segment: bool,
        create_reflog: bool,
        model: &Model,
        null: &ObjectId,
    ) -> Option<Vec<Update>> {
        if new_segment {
            self.message = self.messages[msg as usize % self.messages.len()].clone();
            self.create_reflog = create_reflog;
        }
        let mut out: Vec<Update> = Vec::new();
        for u in updates {
            let upd = self.update(u, model, null);
            match upd.stdin_lines() {
                Some(l) if self.symref_commands || !l.contains("symref-") => out.push(upd),
                _ => {}
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The concrete update for `u`.
    fn update(&self, u: &AUpdate, model: &Model, null: &ObjectId) -> Update {
        match *u {
            AUpdate::Create(n, v) => Update {
                refname: if n >= u8::MAX - 2 {
                    lock_component_name(u8::MAX - n).to_string()
                } else {
                    self.name(n)
                },
                new: Some(self.oid(v)),
                old: Some(Value::oid(null)),
                no_deref: false,
            },
            AUpdate::Update(n, v, o) => self.update_with_old(n, v, o, model, null),
            AUpdate::Delete(n, o) => self.delete(n, o, model, null),
            AUpdate::Verify(n, o) => {
                let current = matches!(o, OldSpec::Current);
                let name = if current {
                    self.symref_pick(model, n)
                } else {
                    self.name(n)
                };
                // Of a symref, expecting its target: `symref-verify` (no-deref).
                if let (true, true, Some(MValue::Symref(t))) =
                    (current, self.symref_commands, model.refs.get(&name))
                {
                    return Update {
                        refname: name,
                        new: None,
                        old: Some(Value::Symref(t.clone())),
                        no_deref: true,
                    };
                }
                let old = self.old(o, model, &name, null).or(Some(Value::oid(null)));
                Update {
                    refname: name,
                    new: None,
                    old,
                    no_deref: false,
                }
            }
            AUpdate::SymrefCreate(n, t) => Update {
                refname: self.name(n),
                new: Some(Value::Symref(self.name(t))),
                old: Some(Value::oid(null)),
                no_deref: false,
            },
            AUpdate::SymrefUpdate(n, t, check, no_deref) => {
                self.symref_update(n, t, check, no_deref, model)
            }
            AUpdate::SymrefDelete(n, check) => self.symref_delete(n, check, model, null),
            AUpdate::UpdateNoDeref(n, v) => Update {
                refname: self.name(n),
                new: Some(self.oid(v)),
                old: None,
                no_deref: true,
            },
            AUpdate::CreateNoDeref(n, v) => Update {
                refname: self.name(n),
                new: Some(self.oid(v)),
                old: Some(Value::oid(null)),
                no_deref: true,
            },
        }
    }

    /// [`AUpdate::Update`]: `update` expecting the old value `o` stands for.
    fn update_with_old(&self, n: u8, v: u8, o: OldSpec, model: &Model, null: &ObjectId) -> Update {
        let name = self.name(n);
        let old = match self.old(o, model, &name, null) {
            Some(Value::Oid(h)) if ObjectId::from_hex(&h).is_some_and(|i| i.is_null()) => {
                Some(Value::Oid(h))
            }
            other => other,
        };
        Update {
            refname: name,
            new: Some(self.oid(v)),
            old,
            no_deref: false,
        }
    }

    /// [`AUpdate::Delete`]: `delete`, never with a zero old id.
    fn delete(&self, n: u8, o: OldSpec, model: &Model, null: &ObjectId) -> Update {
        let name = self.name(n);
        // update-ref refuses a zero old id for delete.
        let old = match o {
            OldSpec::Absent => None,
            o => self.old(o, model, &name, null),
        };
        Update {
            refname: name,
            new: Some(Value::oid(null)),
            old,
            no_deref: false,
        }
    }

    /// [`AUpdate::SymrefUpdate`]: `symref-update`, expecting the current value when `check`.
    fn symref_update(&self, n: u8, t: u8, check: bool, no_deref: bool, model: &Model) -> Update {
        let name = self.name(n);
        let old = match self.current(model, &name) {
            // A no-deref update of a symref checks an object id (`oid <id>`), where it finds
            // none: refused as a missing ref (the target is checked by `symref-delete` and
            // `symref-verify`, and by updates that dereference).
            Some(Value::Symref(_)) if check && no_deref => {
                Some(Value::oid(&value_of(&self.pool, t)))
            }
            current if check => current,
            _ => None,
        };
        Update {
            refname: name,
            new: Some(Value::Symref(self.name(t))),
            old,
            no_deref,
        }
    }

    /// For an odd pick one of the model's symrefs among the pool's names (so that
    /// `symref-delete` and `symref-verify` find one), else the pool's name `n`.
    fn symref_pick(&self, model: &Model, n: u8) -> String {
        let symrefs: Vec<&String> = (model.refs.iter())
            .filter(|(k, v)| matches!(v, MValue::Symref(_)) && self.names.contains(k))
            .map(|(k, _)| k)
            .collect();
        match symrefs.get(n as usize / 2 % symrefs.len().max(1)) {
            Some(s) if n % 2 == 1 => (*s).clone(),
            _ => self.name(n),
        }
    }

    /// [`AUpdate::SymrefDelete`]: `symref-delete`, expecting the current target when
    /// `check` and the ref is a symref.
    fn symref_delete(&self, n: u8, check: bool, model: &Model, null: &ObjectId) -> Update {
        let name = self.symref_pick(model, n);
        let old = if check {
            match self.current(model, &name) {
                Some(Value::Symref(t)) => Some(Value::Symref(t)),
                _ => None,
            }
        } else {
            None
        };
        Update {
            refname: name,
            new: Some(Value::oid(null)),
            old,
            no_deref: true,
        }
    }

    /// [`AOp::MassCreate`]: `n` refs under prefix `p`, remembered for [`AOp::MassDelete`].
    fn mass_create(&mut self, p: u8, n: u16, v: u8) -> Op {
        let prefix = ["refs/tags/t-", "refs/heads/mass/", "refs/tags/old-"][p as usize % 3];
        let names: Vec<String> = (0..n).map(|i| format!("{prefix}{i:04}")).collect();
        self.mass[p as usize % 3] = names.clone();
        let value = Value::oid(&self.pool.commits[v as usize % self.pool.commits.len()]);
        self.segment_txn(
            names
                .into_iter()
                .map(|refname| Update {
                    refname,
                    new: Some(value.clone()),
                    old: None,
                    no_deref: false,
                })
                .collect(),
        )
    }

    /// [`AOp::MassDelete`]: delete the refs of the last mass create under prefix `p` that
    /// still exist; `None` when none does.
    fn mass_delete(&mut self, p: u8, model: &Model, null: &ObjectId) -> Option<Op> {
        let names = std::mem::take(&mut self.mass[p as usize % 3]);
        let updates: Vec<Update> = names
            .into_iter()
            .filter(|n| model.refs.contains_key(n))
            .map(|refname| Update {
                refname,
                new: Some(Value::oid(null)),
                old: None,
                no_deref: true,
            })
            .collect();
        (!updates.is_empty()).then(|| self.segment_txn(updates))
    }

    /// [`AOp::Expire`]: expire all of a reflog or the entries before a time; one in four
    /// with `--updateref`, one in three with the unreachable entries instead of a time
    /// (`--expire=never`: only reachability decides); of a name with a reflog (even pick) or
    /// any name (odd pick), as [`AOp::ReflogDrop`], where the reflog is the longest but
    /// `HEAD`'s for the unreachable entries (a ref that went back in history prunes what led
    /// there).
    fn expire(&self, model: &Model, n: u8, all: bool) -> Op {
        let unreachable = n % 3 == 2;
        let longest = (model.logs.iter().filter(|(name, _)| *name != "HEAD"))
            .max_by_key(|(_, entries)| entries.len())
            .map(|(name, _)| name);
        let with_log = match longest {
            Some(name) if unreachable => Some(name),
            _ => model
                .logs
                .keys()
                .nth(n as usize / 2 % model.logs.len().max(1)),
        };
        let refname = match with_log {
            Some(name) if n % 2 == 0 => name.clone(),
            // One `--updateref` in two of `HEAD`, usually a symref.
            _ if n % 8 == 5 => "HEAD".to_string(),
            _ => self.name(n),
        };
        Op::ReflogExpire {
            update_ref: n % 4 == 1,
            unreachable,
            refname,
            expire: if all {
                Expire::All
            } else if unreachable {
                Expire::Never
            } else {
                Expire::Before(crate::git::driver::BASE_TIME + 60 * u64::from(n % 8))
            },
        }
    }

    /// [`AOp::FillBlock`]: one ref whose record fills the first ref block (plus `delta`);
    /// `None` when no name length does.
    fn fill_block(&self, delta: i8, v: u8) -> Option<Op> {
        let len = filling_name_length(self.block_size, self.hash, delta)?;
        Some(self.segment_txn(vec![Update {
            refname: name_of_length(len, &format!("{len}")),
            new: Some(self.oid(v)),
            old: None,
            no_deref: false,
        }]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields of a transaction-like abstract operation, as text.
    fn txn_fields(a: &AOp) -> Option<String> {
        match a {
            AOp::Txn(u, m, s, c)
            | AOp::BatchTxn(u, m, s, c)
            | AOp::RefsTxn(u, m, s, c)
            | AOp::SymbolicRef(u, m, s, c)
            | AOp::Push(u, m, s, c)
            | AOp::Fetch(u, m, s, c)
            | AOp::Tag(u, m, s, c)
            | AOp::WorktreeTxn(u, m, s, c) => Some(format!("{:?}", (u, m, s, c))),
            _ => None,
        }
    }

    /// A case without a worktree is [`generate`]'s with some transactions run as batches
    /// (about one in [`BATCH_ONE_IN`]) and some replaced by a `checkout --orphan` (one in
    /// twice that); one with a worktree keeps its options but the flag,
    /// and its operations but `git branch` (some transactions moved into the worktree).
    /// About one case in [`WORKTREE_ONE_IN`] has one.
    #[test]
    fn reach_keeps_existing_cases() {
        let (mut worktree_cases, mut batches, mut txns, mut orphans) = (0, 0, 0, 0);
        for index in 0..200 {
            let (plain_opts, plain) = generate(1, index, 30);
            let (opts, aops) = generate_with_reach(1, index, 30);
            if !opts.worktree {
                assert_eq!(opts, plain_opts);
                assert_eq!(aops.len(), plain.len());
                for (a, b) in plain.iter().zip(&aops) {
                    if !matches!(a, AOp::Txn(..)) {
                        assert_eq!(format!("{a:?}"), format!("{b:?}"));
                        continue;
                    }
                    // A transaction stays one, keeps its fields in another kind, or becomes
                    // a `checkout --orphan` of its first name.
                    if let (AOp::Orphan(n), AOp::Txn(u, ..)) = (b, a) {
                        assert_eq!(*n, u[0].name_pick());
                        orphans += 1;
                        continue;
                    }
                    assert_eq!(txn_fields(a), txn_fields(b), "{b:?}");
                    match b {
                        AOp::BatchTxn(..) => batches += 1,
                        _ => txns += 1,
                    }
                }
                continue;
            }
            worktree_cases += 1;
            assert_eq!(
                CaseOptions {
                    worktree: false,
                    ..opts
                },
                plain_opts
            );
            let kept: Vec<_> = plain
                .iter()
                .filter(|a| !matches!(a, AOp::Branch(..)))
                .collect();
            assert_eq!(kept.len(), aops.len());
            for (a, b) in kept.iter().zip(&aops) {
                match (a, b) {
                    (AOp::Txn(..), AOp::WorktreeTxn(..)) => {
                        assert_eq!(txn_fields(a), txn_fields(b))
                    }
                    _ => assert_eq!(format!("{a:?}"), format!("{b:?}")),
                }
            }
        }
        assert!(
            (30..70).contains(&worktree_cases),
            "{worktree_cases} of 200"
        );
        let share = batches * BATCH_ONE_IN * 10 / (batches + txns + orphans);
        assert!((7..14).contains(&share), "{batches} batches, {txns} txns");
        let share = orphans * 2 * BATCH_ONE_IN * 10 / (batches + txns + orphans);
        assert!((7..14).contains(&share), "{orphans} orphans, {txns} txns");
    }

    /// A fetch takes new commits for refs that are absent or hold another pool commit,
    /// each logged with what fetch did to it (new ref, fast-forward or forced update over
    /// the pool's one history), never the checked-out branch or a tag, and falls back to a
    /// transaction when none is left.
    #[test]
    fn a_fetch_logs_each_update_with_what_it_did() {
        let id = |n: u32| ObjectId::from_hex(&format!("{n:040x}")).unwrap();
        let pool = Pool {
            commits: vec![id(1), id(2), id(3)],
            tags: vec![],
            tree: id(9),
            missing: id(10),
        };
        let resolver = Resolver::new(pool, &Features::default(), &CaseOptions::default());
        let mut model = Model::new(id(0), LogRefsOpt::True, 4096);
        model
            .refs
            .insert("HEAD".into(), MValue::Symref("refs/heads/main".into()));
        for (name, n) in [("main", 2), ("a", 1), ("b", 3)] {
            model
                .refs
                .insert(format!("refs/heads/{name}"), MValue::Oid(id(n)));
        }
        let set = |name: &str, n: u32| Update {
            refname: name.into(),
            new: Some(Value::oid(&id(n))),
            old: None,
            no_deref: false,
        };
        let fetch = |updates: Vec<Update>| match resolver.fetch(updates, &model) {
            Op::Fetch { updates, messages } => {
                let args = Op::fetch_args(&updates).join(" ");
                assert!(args.starts_with("fetch --atomic "), "{args}");
                let whats: Vec<String> = messages
                    .iter()
                    .map(|m| m.strip_prefix(&format!("{args}: ")).unwrap().to_string())
                    .collect();
                let names: Vec<String> = updates.iter().map(|u| u.refname.clone()).collect();
                (names, whats, updates)
            }
            other => panic!("not a fetch: {other:?}"),
        };
        let (names, whats, updates) = fetch(vec![
            set("refs/heads/a", 3),
            set("refs/heads/b", 1),
            set("refs/heads/new", 2),
            set("refs/heads/main", 3),
            set("refs/tags/t", 2),
        ]);
        assert_eq!(
            names,
            ["refs/heads/a", "refs/heads/b", "refs/heads/new"].map(String::from)
        );
        assert_eq!(whats, ["fast-forward", "forced-update", "storing ref"]);
        let olds: Vec<_> = updates.iter().map(|u| u.old.clone()).collect();
        assert_eq!(
            olds,
            [Some(Value::oid(&id(1))), Some(Value::oid(&id(3))), None]
        );
        assert!(matches!(
            resolver.fetch(vec![set("refs/heads/main", 3)], &model),
            Op::Txn { .. }
        ));
    }

    /// A tag takes the first update's short name under `refs/tags/`, `-f` and the old id
    /// over an existing tag, git's message for what the object is; deletions become
    /// `tag -d` of the tags that exist; a symref, a root ref or an unknown object stays a
    /// transaction.
    #[test]
    fn a_tag_names_the_first_update_under_refs_tags() {
        let id = |n: u32| ObjectId::from_hex(&format!("{n:040x}")).unwrap();
        let pool = Pool {
            commits: vec![id(1), id(2), id(3)],
            tags: vec![(id(7), id(2))],
            tree: id(9),
            missing: id(10),
        };
        let resolver = Resolver::new(pool, &Features::default(), &CaseOptions::default());
        let mut model = Model::new(id(0), LogRefsOpt::True, 4096);
        for (name, v) in [
            ("HEAD", MValue::Symref("refs/heads/main".into())),
            ("refs/tags/a", MValue::Oid(id(1))),
            ("refs/tags/s", MValue::Symref("refs/heads/main".into())),
        ] {
            model.refs.insert(name.into(), v);
        }
        let set = |name: &str, n: u32| Update {
            refname: name.into(),
            new: Some(Value::oid(&id(n))),
            old: None,
            no_deref: false,
        };
        let tag = |updates: Vec<Update>| match resolver.tag(updates, &model, &id(0), false) {
            Op::Tag {
                updates, message, ..
            } => (Op::tag_args(&updates, false).join(" "), message),
            other => panic!("not a tag: {other:?}"),
        };
        let hex = |n: u32| id(n).to_string();
        assert_eq!(
            tag(vec![set("refs/heads/b/c", 2), set("refs/tags/a", 0)]),
            (
                format!("tag b/c {}", hex(2)),
                "tag: tagging 0000000 (commit 1, 2005-04-07)".into()
            )
        );
        assert_eq!(
            tag(vec![set("refs/heads/a", 7)]),
            (
                format!("tag -f a {}", hex(7)),
                "tag: tagging 0000000 (other tag object)".into()
            )
        );
        assert_eq!(
            tag(vec![set("refs/custom/t", 9)]).1,
            "tag: tagging 0000000 (tree object)"
        );
        assert_eq!(
            tag(vec![
                set("refs/heads/x", 0),
                set("refs/tags/a", 0),
                set("refs/heads/a", 0)
            ]),
            ("tag -d a".into(), String::new())
        );
        let tag_or_delete = |updates: Vec<Update>| match resolver.tag(updates, &model, &id(0), true)
        {
            Op::Tag { updates, .. } => Op::tag_args(&updates, false).join(" "),
            other => panic!("not a tag: {other:?}"),
        };
        assert_eq!(tag_or_delete(vec![set("refs/heads/a", 2)]), "tag -d a");
        // No tag b: the first tag holding an id goes (not the symref s).
        assert_eq!(tag_or_delete(vec![set("refs/heads/b", 2)]), "tag -d a");
        for stays in [
            vec![set("refs/heads/s", 1)],
            vec![set("ORIG_HEAD", 1)],
            vec![set("refs/heads/a", 10)],
            vec![set("refs/heads/x", 0)],
        ] {
            assert!(matches!(
                resolver.tag(stays, &model, &id(0), false),
                Op::Txn { .. }
            ));
        }
    }

    /// Worktree transactions never write through `main-worktree/` or `worktrees/<id>/`
    /// names (git's defect `worktree-prefixed-name-written-as-is`).
    #[test]
    fn worktree_names_are_unprefixed() {
        for n in worktree_name_pool() {
            assert!(
                reftable::refname::is_valid_refname(n.as_bytes(), true)
                    && !n.starts_with("main-worktree/")
                    && !n.starts_with("worktrees/"),
                "{n}"
            );
        }
    }
}
