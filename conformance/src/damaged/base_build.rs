//! Building a run's bases: the gate's cases of the seed run on git and on us, git's
//! repository kept (the pool's objects copied in, every other one compacted by git), its
//! names and damage sites read, and both sides' answers on it undamaged recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reftable::refdb::RefDb;
use reftable::HashId;

use crate::cases::executor::Executor;
use crate::setup::env::Env;
use crate::stack_files::copy_dir;

use super::base::{db_options, Base};
use super::config::{DamageConfig, COMMANDS, OUTSIDE};
use super::damage::{Damage, Edit};
use super::sides::{run_git, run_ours};
use super::sites::{list_sites, sites};
use super::trial::{damage_for, Trial};

/// The bases of a run, in `work`: the gate's cases of `cfg.seed` in turn until `cfg.bases`
/// of them ran cleanly or four times as many were tried.
pub(crate) fn make_bases(env: &Env, cfg: &DamageConfig, work: &Path) -> Result<Vec<Base>, String> {
    let mut bases = Vec::new();
    let mut index = 0;
    while (bases.len() as u64) < cfg.bases && index < cfg.bases * 4 {
        let dir = work.join(format!("base{index}"));
        if let Some(b) = make_base(env, cfg.seed, index, &dir, index % 2 == 1)? {
            bases.push(b);
        }
        index += 1;
    }
    if bases.is_empty() {
        return Err("no case ran cleanly to serve as a base".into());
    }
    Ok(bases)
}

/// A base: run the gate's case `index` of `seed` (git and us, every check), keep a copy of
/// git's repository with the pool's objects copied in, optionally compacted by git.
fn make_base(
    env: &Env,
    seed: u64,
    index: u64,
    dir: &Path,
    compact: bool,
) -> Result<Option<Base>, String> {
    let Some((repo, hash)) = copy_case(env, seed, index, dir)? else {
        return Ok(None);
    };
    let git_dir = repo.join(".git");
    if compact {
        let o = env.git.run(&repo, &["pack-refs", "--all"], "", 0);
        if !o.exit.success() {
            return Err(format!("base pack-refs: {}", o.stderr));
        }
    }
    let stack = git_dir.join("reftable");
    let db = RefDb::open_or_create(&stack, db_options(hash)).map_err(|e| format!("{e:#}"))?;
    let (picked, reflog_name) = looked_up_names(&db)?;
    let all_sites = stack_sites(&stack)?;
    let mut base = Base {
        repo,
        names: picked,
        reflog_name,
        hash,
        sites: all_sites,
        git_base: BTreeMap::new(),
        ours_base: BTreeMap::new(),
    };
    undamaged_answers(env, &mut base, dir)?;
    Ok(Some(base))
}

/// Run the gate's case `index` of `seed` and copy git's repository to `dir/repo` (the pool's
/// pack comes with it): the copy and its hash, `None` when the case diverged.
fn copy_case(
    env: &Env,
    seed: u64,
    index: u64,
    dir: &Path,
) -> Result<Option<(PathBuf, HashId)>, String> {
    let (opts, aops) = crate::cases::generate::generate(seed, index, 30);
    let pool = env.pool(opts.hash()).pool.clone();
    let mut exec = Executor::new(env, opts)?;
    let mut resolver =
        crate::cases::generate::Resolver::new(pool, &env.profile.features, &exec.opts);
    for a in &aops {
        if let Some(op) = resolver.resolve(a, exec.model(), &exec.null()) {
            exec.step(op);
            if exec.diverged() {
                return Ok(None);
            }
        }
    }
    let repo = dir.join("repo");
    copy_dir(exec.repo.path(), &repo, None)?;
    let hash = exec.hash;
    drop(exec.finish());
    Ok(Some((repo, hash)))
}

/// The names the commands look up in the stack `db`: the first, middle and last ref for
/// `show-ref --verify`, and a reflog for `reflog show` (`HEAD` only when it is a ref).
fn looked_up_names(db: &RefDb) -> Result<(Vec<String>, Option<String>), String> {
    let mut names = Vec::new();
    let mut it = db.refs().map_err(|e| format!("{e:#}"))?;
    while let Some(r) = it.next_record().map_err(|e| format!("{e:#}"))? {
        names.push(String::from_utf8_lossy(&r.refname).into_owned());
    }
    let picked: Vec<String> = [0, names.len() / 2, names.len().saturating_sub(1)]
        .iter()
        .filter_map(|&i| names.get(i).cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let reflog_names = db
        .reflog_names()
        .and_then(|it| it.collect::<reftable::Result<Vec<_>>>())
        .map_err(|e| format!("{e:#}"))?;
    let reflog_name = reflog_names
        .into_iter()
        .map(|n| String::from_utf8_lossy(&n).into_owned())
        .find(|n| n != "HEAD" || names.iter().any(|m| m == "HEAD"));
    Ok((picked, reflog_name))
}

/// Every damage site of the stack in `stack`: its `tables.list`, then each table it names.
fn stack_sites(stack: &Path) -> Result<Vec<Edit>, String> {
    let mut all_sites = Vec::new();
    let list = std::fs::read(stack.join("tables.list")).map_err(|e| e.to_string())?;
    all_sites.extend(list_sites(&list, OUTSIDE));
    for name in String::from_utf8_lossy(&list).lines() {
        let bytes = std::fs::read(stack.join(name)).map_err(|e| e.to_string())?;
        all_sites.extend(sites(name, &bytes));
    }
    Ok(all_sites)
}

/// The undamaged answers of both sides, on a scratch copy in `dir` (pack-refs writes).
fn undamaged_answers(env: &Env, base: &mut Base, dir: &Path) -> Result<(), String> {
    let scratch = dir.join("scratch");
    let t = Trial::prepare(base, &Damage::default(), &scratch)?;
    for c in COMMANDS {
        let o = run_git(env, base, &t.git_repo, c, Duration::from_secs(60));
        base.git_base.insert(c, o.stdout);
    }
    base.ours_base = run_ours(base, &t.ours_stack);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// A damaged copy, in `dir`, of the reftable repository `repo` for another reader
/// (`conformance impl`'s damaged role): one damage drawn as trial `i` of a base is drawn
/// under `seed`, among every site of `repo`'s stack, and applied as a trial applies it. The
/// damaged repository is `dir/repo`, the victim file that `tables.list` damage may name is
/// `dir/outside/victim.ref`, and a copy of the damaged stack for our reader is
/// `dir/ours/.git/reftable`. Returns the repository, our stack and the damage; `None` when
/// the stack offers no site.
pub fn damaged_copy(
    repo: &Path,
    hash: HashId,
    (seed, i): (u64, u64),
    dir: &Path,
) -> Result<Option<(PathBuf, PathBuf, Damage)>, String> {
    let sites = stack_sites(&repo.join(".git/reftable"))?;
    if sites.is_empty() {
        return Ok(None);
    }
    let base = Base {
        repo: repo.to_path_buf(),
        names: Vec::new(),
        reflog_name: None,
        hash,
        sites,
        git_base: BTreeMap::new(),
        ours_base: BTreeMap::new(),
    };
    let damage = damage_for(seed, i, &base);
    let trial = Trial::prepare(&base, &damage, dir)?;
    Ok(Some((trial.git_repo, trial.ours_stack, damage)))
}
