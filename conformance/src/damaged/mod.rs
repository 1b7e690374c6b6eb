//! The damaged-stack mode: stacks the gate wrote (git's side of generated cases), damaged by
//! [`crate::damage`] and handed to git's readers and writers and to ours.
//!
//! What is recorded for git, per command: a crash (signal), a hang, a load error hidden
//! behind exit 0 and empty output, a file touched outside the repository, data printed from
//! a stack we reject. For us the same list (panics instead of signals) must stay empty, plus
//! two ways of answering wrongly in silence: we return data other than the undamaged stack's
//! where git either rejects the stack or still returns the undamaged answer. git's crashes
//! are told apart by signal and the first frames of a backtrace (`gdb -batch` when it is
//! installed), each distinct one minimized (edit by edit, table by table) and written as a
//! directory with the damaged repository and a git-only `repro.sh`.

pub mod damage;

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::rng::Rng;
use reftable::refdb::{RefDb, RefDbOptions};
use reftable::{HashId, StackOptions, WriteOptions};
use serde::{Deserialize, Serialize};

use crate::generated::executor::Executor;

use crate::damaged::damage::{list_sites, sites, Damage, Edit};
use crate::git::driver::{Exit, BASE_TIME, TZ};
use crate::setup::env::Env;
use crate::stack_files::copy_dir;

/// What to run.
#[derive(Clone, Debug)]
pub struct DamageConfig {
    /// Seed (bases come from the gate's cases of this seed; damage from it too).
    pub seed: u64,
    /// Undamaged stacks to start from.
    pub bases: u64,
    /// Stop after this many damaged stacks ...
    pub trials: u64,
    /// ... or after this long, whichever comes first.
    pub budget: Duration,
    /// A git command that has not finished after this long is a hang.
    pub timeout: Duration,
    /// Parallel jobs.
    pub jobs: usize,
    /// Where findings are written.
    pub out: PathBuf,
    /// Backtraces of git's crashes with gdb (when installed).
    pub gdb: bool,
}

/// The relative path, from a stack directory, of the file outside the repository that
/// `tables.list` damage points at (`trial/repo/.git/reftable` → `trial/outside/victim.ref`).
const OUTSIDE: &str = "../../../outside/victim.ref";

/// The commands run on each damaged stack, on git and on us.
const COMMANDS: [&str; 5] = [
    "for-each-ref",
    "show-ref",
    "reflog-show",
    "refs-verify",
    "pack-refs",
];

/// One undamaged starting point.
struct Base {
    /// A copy of git's repository after the case (objects copied in, no alternates).
    repo: PathBuf,
    /// Names looked up by `show-ref --verify` and `reflog show`.
    names: Vec<String>,
    reflog_name: Option<String>,
    /// The object hash.
    hash: HashId,
    /// Every damage site of its files.
    sites: Vec<Edit>,
    /// git's output for each command on the undamaged stack.
    git_base: BTreeMap<&'static str, String>,
    /// Ours.
    ours_base: BTreeMap<&'static str, Result<String, String>>,
}

/// A finding: what went wrong, on whose side, where.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    /// `git` or `ours`.
    pub side: String,
    /// The class (`crash`, `hang`, `hidden-load-error`, ...).
    pub class: String,
    /// The command.
    pub command: String,
    /// What tells distinct defects apart: signal and first frames for crashes.
    pub signature: String,
    /// How often it was seen.
    pub count: u64,
    /// Every command that showed it (a crash site is often reached from several).
    pub commands: Vec<String>,
    /// Distinct details (our errors, numbers and names left out), at most 8.
    pub samples: Vec<String>,
    /// The first damage that showed it (minimized once the run ends).
    pub damage: Damage,
    /// The base it was seen on.
    pub base: usize,
    /// Detail (stderr, our error, the outputs).
    pub detail: String,
    /// The directory with the damaged repository and `repro.sh`.
    pub case_dir: Option<String>,
}

/// The mode's report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DamageReport {
    /// git under test.
    pub git: String,
    /// Its version.
    pub version: String,
    /// Seed.
    pub seed: u64,
    /// Bases.
    pub bases: u64,
    /// Damaged stacks tried.
    pub trials: u64,
    /// Commands run (git and ours).
    pub commands: u64,
    /// Wall time.
    pub seconds: f64,
    /// Outcomes per class over every command on git (`ok`, `error`, `crash`, ...).
    pub git_outcomes: BTreeMap<String, u64>,
    /// Distinct findings on git's side.
    pub git_findings: Vec<Finding>,
    /// Findings on our side (must be empty).
    pub ours_findings: Vec<Finding>,
}

fn now_listing(dir: &Path, skip: &Path) -> Listing {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p == skip {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, m.len(), m.modified().ok()));
        }
    }
    out.sort();
    out
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
    let (opts, aops) = crate::generated::generate::generate(seed, index, 30);
    let pool = env.pool(opts.hash()).pool.clone();
    let mut exec = Executor::new(env, opts)?;
    let mut resolver = crate::generated::generate::Resolver::new(
        pool,
        env.profile.features.symref_commands,
        &exec.opts,
    );
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
    let git_dir = repo.join(".git");
    let _ = std::fs::remove_file(git_dir.join("objects/info/alternates"));
    copy_dir(
        &env.pool(hash).objects_dir,
        &git_dir.join("objects"),
        Some("info"),
    )?;
    if compact {
        let o = env.git.run(&repo, &["pack-refs", "--all"], "", 0);
        if !o.exit.success() {
            return Err(format!("base pack-refs: {}", o.stderr));
        }
    }
    let stack = git_dir.join("reftable");
    let db = RefDb::open(&stack, db_options(hash)).map_err(|e| e.to_string())?;
    let mut names = Vec::new();
    let mut it = db.refs().map_err(|e| e.to_string())?;
    while let Some(r) = it.next_ref().map_err(|e| e.to_string())? {
        names.push(String::from_utf8_lossy(&r.refname).into_owned());
    }
    let picked: Vec<String> = [0, names.len() / 2, names.len().saturating_sub(1)]
        .iter()
        .filter_map(|&i| names.get(i).cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let reflog_name = db
        .reflog_names()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|n| String::from_utf8_lossy(&n).into_owned())
        .find(|n| n != "HEAD" || names.iter().any(|m| m == "HEAD"));
    let mut all_sites = Vec::new();
    let list = std::fs::read(stack.join("tables.list")).map_err(|e| e.to_string())?;
    all_sites.extend(list_sites(&list, OUTSIDE));
    for name in String::from_utf8_lossy(&list).lines() {
        let bytes = std::fs::read(stack.join(name)).map_err(|e| e.to_string())?;
        all_sites.extend(sites(name, &bytes));
    }
    let mut base = Base {
        repo,
        names: picked,
        reflog_name,
        hash,
        sites: all_sites,
        git_base: BTreeMap::new(),
        ours_base: BTreeMap::new(),
    };
    // The undamaged answers, on a scratch copy (pack-refs writes).
    let scratch = dir.join("scratch");
    let t = Trial::prepare(&base, &Damage::default(), &scratch)?;
    for c in COMMANDS {
        let o = run_git(env, &base, &t.git_repo, c, Duration::from_secs(60));
        base.git_base.insert(c, o.stdout);
    }
    base.ours_base = run_ours(&base, &t.ours_stack);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(Some(base))
}

fn db_options(hash: HashId) -> RefDbOptions {
    RefDbOptions {
        stack: StackOptions {
            write: WriteOptions {
                hash,
                ..Default::default()
            },
            fsync: false,
            auto_compaction: false,
            lock_timeout: Some(Duration::from_millis(0)),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A damaged copy of a base: git's repository and our stack side by side, a victim file
/// outside both.
struct Trial {
    dir: PathBuf,
    git_repo: PathBuf,
    ours_stack: PathBuf,
}

impl Trial {
    fn prepare(base: &Base, damage: &Damage, dir: &Path) -> Result<Trial, String> {
        let _ = std::fs::remove_dir_all(dir);
        let git_repo = dir.join("repo");
        copy_dir(&base.repo, &git_repo, None)?;
        let outside = dir.join("outside");
        std::fs::create_dir_all(&outside).map_err(|e| e.to_string())?;
        let stack = git_repo.join(".git/reftable");
        let list = std::fs::read_to_string(stack.join("tables.list")).map_err(|e| e.to_string())?;
        if let Some(first) = list.lines().next() {
            std::fs::copy(stack.join(first), outside.join("victim.ref"))
                .map_err(|e| e.to_string())?;
        }
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for e in damage.edits.iter() {
            if !files.iter().any(|(n, _)| *n == e.file) {
                let bytes = std::fs::read(stack.join(&e.file)).map_err(|e| e.to_string())?;
                files.push((e.file.clone(), bytes));
            }
        }
        damage.apply(&mut files);
        for (name, bytes) in &files {
            std::fs::write(stack.join(name), bytes).map_err(|e| e.to_string())?;
        }
        // Our stack at the same depth, so that relative names reach the same victim.
        let ours_stack = dir.join("ours/.git/reftable");
        copy_dir(&stack, &ours_stack, None)?;
        Ok(Trial {
            dir: dir.to_path_buf(),
            git_repo,
            ours_stack,
        })
    }

    /// Everything outside git's repository and our stack.
    fn outside(&self) -> Listing {
        now_listing(&self.dir.join("outside"), &self.git_repo)
    }
}

fn git_args<'a>(base: &'a Base, command: &str) -> Vec<&'a str> {
    match command {
        "for-each-ref" => vec!["for-each-ref", "--format=%(refname) %(objectname)"],
        "show-ref" => {
            let mut a = vec!["show-ref", "--verify"];
            a.extend(base.names.iter().map(String::as_str));
            a
        }
        "reflog-show" => {
            let mut a = vec!["reflog", "show", "--format=%H %gs"];
            a.extend(base.reflog_name.as_deref());
            a
        }
        "refs-verify" => vec!["refs", "verify"],
        "pack-refs" => vec!["pack-refs", "--all"],
        _ => unreachable!("unknown command {command}"),
    }
}

fn run_git(
    env: &Env,
    base: &Base,
    repo: &Path,
    command: &str,
    timeout: Duration,
) -> crate::git::driver::Output {
    if command == "refs-verify" && !env.profile.features.refs_verify {
        return crate::git::driver::Output {
            exit: Exit::Code(0),
            stdout: String::new(),
            stderr: String::new(),
        };
    }
    let args = git_args(base, command);
    let mut c = env.git.command(repo, 0);
    env.git.run_command_within(&mut c, &args, "", timeout)
}

/// Our answer to each command on the stack in `dir`: the same data git prints, from our
/// library (for-each-ref: resolved refs under `refs/`; show-ref: point lookups; reflog:
/// entries; refs-verify: every ref and log record; pack-refs: compaction).
fn ours_one(command: &str, dir: &Path, base: &Base) -> Result<String, String> {
    let e = |e: reftable::Error| e.to_string();
    let mut db = RefDb::open(dir, db_options(base.hash)).map_err(e)?;
    let mut out = String::new();
    match command {
        "for-each-ref" => {
            let mut names = Vec::new();
            let mut it = db.refs_with_prefix(b"refs/").map_err(e)?;
            while let Some(r) = it.next_ref().map_err(e)? {
                names.push(r.refname.clone());
            }
            for n in names {
                if let Some(id) = db.resolve(&n).map_err(e)? {
                    out.push_str(&format!("{} {}\n", String::from_utf8_lossy(&n), id));
                }
            }
        }
        "show-ref" => {
            for n in &base.names {
                let id = db.resolve(n.as_bytes()).map_err(e)?;
                out.push_str(&format!("{n} {id:?}\n"));
            }
        }
        "reflog-show" => {
            if let Some(n) = &base.reflog_name {
                let mut it = db.reflog(n.as_bytes()).map_err(e)?;
                while let Some(l) = it.next_entry().map_err(e)? {
                    out.push_str(&format!(
                        "{:?} {}\n",
                        l.value,
                        String::from_utf8_lossy(&l.refname)
                    ));
                }
            }
        }
        "refs-verify" => {
            let merged = db.stack().merged();
            let mut it = merged.refs().map_err(e)?;
            let mut n = 0u64;
            while it.next_record().map_err(e)?.is_some() {
                n += 1;
            }
            let mut it = merged.logs().map_err(e)?;
            while it.next_record().map_err(e)?.is_some() {
                n += 1;
            }
            out = format!("{n} records\n");
        }
        "pack-refs" => {
            db.pack_refs(false).map_err(e)?;
            // What the compacted stack holds.
            db.reload().map_err(e)?;
            let mut it = db.refs().map_err(e)?;
            while let Some(r) = it.next_ref().map_err(e)? {
                out.push_str(&format!("{}\n", String::from_utf8_lossy(&r.refname)));
            }
        }
        _ => unreachable!(),
    }
    Ok(out)
}

/// Every command on our side (each on its own copy of the stack, since pack-refs writes).
fn run_ours(base: &Base, stack: &Path) -> BTreeMap<&'static str, Result<String, String>> {
    let mut out = BTreeMap::new();
    for c in COMMANDS {
        let r = if c == "pack-refs" {
            let copy = stack.with_file_name("reftable-pack");
            let _ = copy_dir(stack, &copy, None);
            let r = ours_one(c, &copy, base);
            let _ = std::fs::remove_dir_all(&copy);
            r
        } else {
            ours_one(c, stack, base)
        };
        out.insert(c, r);
    }
    out
}

/// Our commands on another thread, so that a hang is seen (the thread is then left behind).
fn run_ours_bounded(
    base: &Base,
    stack: &Path,
    timeout: Duration,
) -> Result<BTreeMap<&'static str, Result<String, String>>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let stack = stack.to_path_buf();
    let names = base.names.clone();
    let reflog_name = base.reflog_name.clone();
    let hash = base.hash;
    std::thread::spawn(move || {
        let b = Base {
            repo: PathBuf::new(),
            names,
            reflog_name,
            hash,
            sites: Vec::new(),
            git_base: BTreeMap::new(),
            ours_base: BTreeMap::new(),
        };
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| run_ours(&b, &stack)));
        let _ = tx.send(r.map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into())
        }));
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(p)) => Err(format!("panic: {p}")),
        Err(_) => Err("hang".into()),
    }
}

/// One observation: (side, class, command, detail).
type Observation = (&'static str, &'static str, &'static str, String);

/// Run every command on a damaged stack; what went wrong, on either side.
fn observe(
    env: &Env,
    cfg: &DamageConfig,
    base: &Base,
    t: &Trial,
) -> (Vec<Observation>, Vec<(&'static str, Exit)>) {
    let mut obs = Vec::new();
    let before = t.outside();
    let ours = run_ours_bounded(base, &t.ours_stack, cfg.timeout);
    match &ours {
        Err(p) if p == "hang" => obs.push(("ours", "hang", "all", p.clone())),
        Err(p) => obs.push(("ours", "panic", "all", p.clone())),
        Ok(_) => {}
    }
    let after = t.outside();
    if after != before {
        obs.push((
            "ours",
            "touched-outside",
            "all",
            listing_change(&before, &after),
        ));
    }
    let mut exits = Vec::new();
    for c in COMMANDS {
        let before = t.outside();
        let o = run_git(env, base, &t.git_repo, c, cfg.timeout);
        exits.push((c, o.exit.clone()));
        let after = t.outside();
        let base_out = &base.git_base[c];
        let our = ours.as_ref().ok().map(|m| &m[c]);
        let our_err = matches!(our, Some(Err(_)));
        let our_msg = match our {
            Some(Err(m)) => m.clone(),
            _ => String::new(),
        };
        match &o.exit {
            Exit::Signal(s) => obs.push((
                "git",
                "crash",
                c,
                format!("signal {s}; stderr: {}", o.stderr.trim()),
            )),
            Exit::Timeout => obs.push(("git", "hang", c, o.stderr.trim().to_string())),
            Exit::Code(0) if c != "pack-refs" && c != "refs-verify" && our_err => {
                if o.stdout.trim().is_empty() && !base_out.trim().is_empty() {
                    obs.push((
                        "git",
                        "hidden-load-error",
                        c,
                        format!("we: {our_msg}; git stderr: {}", o.stderr.trim()),
                    ));
                } else if !o.stdout.trim().is_empty() {
                    obs.push(("git", "printed-what-we-reject", c, format!("we: {our_msg}")));
                }
            }
            Exit::Code(0) if c == "refs-verify" && our_err => obs.push((
                "git",
                "verify-passes-what-we-reject",
                c,
                format!("we: {our_msg}"),
            )),
            _ => {}
        }
        if after != before {
            obs.push(("git", "touched-outside", c, listing_change(&before, &after)));
        }
        // Silent wrong answers on our side: we answer, differently from the undamaged
        // stack, where git refuses the stack or still gives the undamaged answer.
        if let (Some(Ok(ours_out)), Some(Ok(ours_base))) = (our, base.ours_base.get(c)) {
            if c == "for-each-ref" && ours_out != ours_base {
                let git_refused =
                    matches!(o.exit, Exit::Code(x) if x != 0) && mentions_corruption(&o.stderr);
                let git_undamaged =
                    o.exit.success() && o.stdout == *base_out && o.stderr.is_empty();
                if git_refused {
                    obs.push((
                        "ours",
                        "answered-where-git-refused",
                        c,
                        o.stderr.trim().to_string(),
                    ));
                } else if git_undamaged {
                    obs.push((
                        "ours",
                        "wrong-where-git-right",
                        c,
                        line_diff(ours_out, &o.stdout),
                    ));
                }
            }
        }
    }
    (obs, exits)
}

type Listing = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// What changed between two listings of the outside directory.
fn listing_change(before: &Listing, after: &Listing) -> String {
    let mut out = Vec::new();
    for b in before {
        match after.iter().find(|a| a.0 == b.0) {
            None => out.push(format!("removed {}", b.0.display())),
            Some(a) if a != b => out.push(format!("changed {}", b.0.display())),
            _ => {}
        }
    }
    for a in after.iter().filter(|a| !before.iter().any(|b| b.0 == a.0)) {
        out.push(format!("created {}", a.0.display()));
    }
    out.join("; ")
}

/// The lines only one of two outputs has, marked `ours` / `git`.
fn line_diff(ours: &str, git: &str) -> String {
    let a: std::collections::BTreeSet<&str> = ours.lines().collect();
    let b: std::collections::BTreeSet<&str> = git.lines().collect();
    let mut out = String::new();
    for l in a.difference(&b).take(20) {
        out.push_str(&format!("only ours: {l}\n"));
    }
    for l in b.difference(&a).take(20) {
        out.push_str(&format!("only git: {l}\n"));
    }
    out
}

fn mentions_corruption(stderr: &str) -> bool {
    let s = stderr.to_ascii_lowercase();
    ["format error", "corrupt", "reftable", "zlib"]
        .iter()
        .any(|w| s.contains(w))
}

/// The first frames of git's crash under gdb (function names, or addresses without
/// symbols), libc and abort machinery left out.
fn backtrace(env: &Env, base: &Base, repo: &Path, command: &str) -> Option<Vec<String>> {
    let args = git_args(base, command);
    let mut c = Command::new("gdb");
    let date = format!("{} {TZ}", BASE_TIME);
    reftable_testkit::git::hermetic(&mut c, repo, env.git.home(), &date);
    c.env("GIT_TEST_REFTABLE_AUTOCOMPACTION", "false");
    c.args(["-batch", "-nx", "-ex", "run", "-ex", "bt 12", "--args"]);
    c.arg(env.git.bin());
    c.args(&args);
    c.stdin(std::process::Stdio::null());
    let o = c.output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let mut frames = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('#')) {
        // `#3  0x000055555569abcd in func (args) at file:line` or `#3  func (args) ...`;
        // a binary without symbols gives `?? ()`, and the address stands for the frame
        // (gdb runs the program without address randomization, so it is stable).
        let mut t = line.split_whitespace().skip(1);
        let first = t.next().unwrap_or("?");
        let (addr, func) = if first.starts_with("0x") {
            t.next();
            (Some(first), t.next().unwrap_or("??"))
        } else {
            (None, first)
        };
        let libc = func.starts_with("__")
            || [
                "raise",
                "abort",
                "memcpy",
                "memmove",
                "memcmp",
                "strlen",
                "pthread_kill",
                "gsignal",
            ]
            .contains(&func);
        if libc {
            continue;
        }
        frames.push(match (func, addr) {
            ("??", Some(a)) => a.to_string(),
            _ => func.to_string(),
        });
        if frames.len() == 3 {
            break;
        }
    }
    (!frames.is_empty()).then_some(frames)
}

fn signal_name(detail: &str) -> &'static str {
    match detail
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.trim_end_matches(';').parse::<i32>().ok())
    {
        Some(6) => "SIGABRT",
        Some(11) => "SIGSEGV",
        Some(7) => "SIGBUS",
        Some(8) => "SIGFPE",
        _ => "signal",
    }
}

/// The key that tells findings apart.
fn signature(env: &Env, cfg: &DamageConfig, base: &Base, t: &Trial, o: &Observation) -> String {
    let (side, class, command, detail) = o;
    if *side == "git" && *class == "crash" {
        let sig = signal_name(detail);
        if cfg.gdb {
            // gdb runs on a fresh copy: pack-refs may have rewritten the stack.
            if let Some(frames) = backtrace(env, base, &t.git_repo, command) {
                return format!("{sig} in {}", frames.join(" < "));
            }
        }
        return format!("{sig} in {command}");
    }
    // The other classes are one behaviour per command (git swallowing a load error, git
    // reading less than we check, ...), whatever the damage; our errors are kept as samples.
    command.to_string()
}

/// An error message without numbers and table names, for grouping.
fn normalize(s: &str) -> String {
    let s = s.split("; git stderr").next().unwrap_or(s);
    let mut out = String::new();
    let mut last_digit = false;
    for ch in s.chars() {
        if ch.is_ascii_hexdigit() && ch.is_ascii_digit() {
            if !last_digit {
                out.push('N');
            }
            last_digit = true;
        } else {
            last_digit = false;
            out.push(ch);
        }
    }
    out.split_whitespace()
        .filter(|w| !w.contains(".ref"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The damage of trial `i` of `base`.
fn damage_for(seed: u64, i: u64, base: &Base) -> Damage {
    let mut rng = Rng(seed.wrapping_mul(0x1000_0000_01b3) ^ i);
    let n = if rng.below(10) < 7 { 1 } else { 2 };
    let mut edits: Vec<Edit> = Vec::new();
    for _ in 0..n {
        let e = base.sites[rng.below(base.sites.len())].clone();
        // Two edits of the same file both at their planned offsets: the second one is
        // dropped when the first one rewrites or truncates the file.
        if edits
            .iter()
            .any(|x| x.file == e.file && x.remove == usize::MAX)
        {
            continue;
        }
        edits.push(e);
    }
    Damage { edits }
}

/// Does `damage` on `base` still show the finding `key` (same side, class, command,
/// signature)?
fn reproduces(
    env: &Env,
    cfg: &DamageConfig,
    base: &Base,
    damage: &Damage,
    dir: &Path,
    key: &(String, String, String, String),
) -> bool {
    let Ok(t) = Trial::prepare(base, damage, dir) else {
        return false;
    };
    let (obs, _) = observe(env, cfg, base, &t);
    obs.iter().any(|o| {
        o.0 == key.0
            && o.1 == key.1
            && (key.2.is_empty() || o.2 == key.2)
            && signature(env, cfg, base, &t, o) == key.3
    })
}

/// Fewer edits, then fewer tables: drop each edit while the finding remains; then try
/// `tables.list` naming only the damaged tables.
fn minimize(
    env: &Env,
    cfg: &DamageConfig,
    base: &Base,
    mut damage: Damage,
    dir: &Path,
    key: &(String, String, String, String),
) -> Damage {
    let mut i = 0;
    while damage.edits.len() > 1 && i < damage.edits.len() {
        let mut d = damage.clone();
        d.edits.remove(i);
        if reproduces(env, cfg, base, &d, dir, key) {
            damage = d;
        } else {
            i += 1;
        }
    }
    if damage.edits.iter().all(|e| e.file != "tables.list") {
        let keep: Vec<&str> = damage.edits.iter().map(|e| e.file.as_str()).collect();
        let list = std::fs::read_to_string(base.repo.join(".git/reftable/tables.list"))
            .unwrap_or_default();
        let lines: Vec<&str> = list.lines().filter(|l| keep.contains(l)).collect();
        if lines.len() < list.lines().count() {
            let new: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let mut d = damage.clone();
            d.edits.insert(
                0,
                Edit {
                    file: "tables.list".into(),
                    kind: "list-only-damaged-tables".into(),
                    at: 0,
                    remove: usize::MAX,
                    insert: new.into_bytes(),
                    fix_crc: false,
                },
            );
            if reproduces(env, cfg, base, &d, dir, key) {
                damage = d;
            }
        }
    }
    damage
}

/// The git-only reproducer of every finding of a run, written once beside them:
/// `sh reproduce.sh FINDING-DIR [GIT]`.
const REPRODUCE: &str = include_str!("reproduce.sh");

/// Write a finding's damaged repository and a git-only reproducer.
fn write_finding(env: &Env, base: &Base, f: &Finding, dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let t = Trial::prepare(base, &f.damage, &dir.join("work"))?;
    copy_dir(&t.git_repo, &dir.join("repo"), None)?;
    copy_dir(&t.dir.join("outside"), &dir.join("outside"), None)?;
    let _ = std::fs::remove_dir_all(dir.join("work"));
    let args: Vec<String> = git_args(base, &f.command)
        .iter()
        .map(|a| crate::finding::script::sh_quote(a))
        .collect();
    let about = format!(
        "# {} {} on `{}` ({}), found by reftable-rs `conformance damaged`.\n# Damage: {}\n",
        f.side,
        f.class,
        f.command,
        f.signature,
        f.damage
            .edits
            .iter()
            .map(Edit::summary)
            .collect::<Vec<_>>()
            .join("; "),
    );
    let args = args.join(" ");
    let script = format!(
        "#!/bin/sh\n{about}# Run with GIT=/path/to/git (default: git). Exit status and signal are printed.\ncd \"$(dirname \"$0\")/repo\" || exit 2\nGIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_TEST_REFTABLE_AUTOCOMPACTION=false \"${{GIT:-git}}\" {args}\necho \"exit status $?\"\n"
    );
    std::fs::write(dir.join("repro.sh"), script).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ =
            std::fs::set_permissions(dir.join("repro.sh"), std::fs::Permissions::from_mode(0o755));
    }
    // The portable form: the damaged stack, the command (`command`, shell-quoted) and the
    // object format, which the run's one `reproduce.sh` puts into a fresh repository with the
    // objects of the case's pool as alternate (`objects-<hash>` beside the findings).
    copy_dir(&dir.join("repo/.git/reftable"), &dir.join("stack"), None)?;
    let objects = dir.with_file_name(format!("objects-{}", base.hash.name()));
    if !objects.exists() {
        copy_dir(&dir.join("repo/.git/objects"), &objects, Some("info"))?;
    }
    std::fs::write(dir.join("command"), format!("{args}\n")).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("object-format"), format!("{}\n", base.hash.name()))
        .map_err(|e| e.to_string())?;
    let shared = dir.with_file_name("reproduce.sh");
    if !shared.exists() {
        std::fs::write(&shared, REPRODUCE).map_err(|e| e.to_string())?;
    }
    let json = serde_json::to_string_pretty(f).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("finding.json"), json).map_err(|e| e.to_string())?;
    let _ = env;
    Ok(())
}

/// Run the damaged-stack mode against the git of `env`.
pub fn run_damaged(env: &Env, cfg: &DamageConfig) -> Result<DamageReport, String> {
    let start = Instant::now();
    let work = tempfile::Builder::new()
        .prefix("reftable-damaged-")
        .tempdir_in(crate::setup::env::scratch_base())
        .map_err(|e| e.to_string())?;
    let mut bases = Vec::new();
    let mut index = 0;
    while (bases.len() as u64) < cfg.bases && index < cfg.bases * 4 {
        let dir = work.path().join(format!("base{index}"));
        if let Some(b) = make_base(env, cfg.seed, index, &dir, index % 2 == 1)? {
            bases.push(b);
        }
        index += 1;
    }
    if bases.is_empty() {
        return Err("no case ran cleanly to serve as a base".into());
    }
    let next = AtomicU64::new(0);
    let commands = AtomicU64::new(0);
    type Key = (String, String, String, String);
    let found: Mutex<(BTreeMap<Key, Finding>, BTreeMap<String, u64>)> =
        Mutex::new(Default::default());
    std::thread::scope(|s| {
        for job in 0..cfg.jobs.max(1) {
            let (bases, next, commands, found, work) =
                (&bases, &next, &commands, &found, work.path());
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= cfg.trials || start.elapsed() > cfg.budget {
                    break;
                }
                let bi = (i % bases.len() as u64) as usize;
                let base = &bases[bi];
                let damage = damage_for(cfg.seed, i, base);
                let dir = work.join(format!("trial-{job}"));
                let Ok(t) = Trial::prepare(base, &damage, &dir) else {
                    continue;
                };
                let (obs, exits) = observe(env, cfg, base, &t);
                commands.fetch_add(2 * COMMANDS.len() as u64, Ordering::Relaxed);
                let mut sigs = Vec::new();
                for o in &obs {
                    // A crash is re-run under gdb on a fresh copy.
                    let t2 = if o.1 == "crash" {
                        Trial::prepare(base, &damage, &work.join(format!("gdb-{job}"))).ok()
                    } else {
                        None
                    };
                    sigs.push(signature(env, cfg, base, t2.as_ref().unwrap_or(&t), o));
                }
                let mut g = found.lock().expect("lock");
                for (c, e) in exits {
                    let class = match e {
                        Exit::Code(0) => "exit 0".to_string(),
                        Exit::Code(_) => "error".to_string(),
                        Exit::Signal(s) => format!("signal {s}"),
                        Exit::Timeout => "timeout".to_string(),
                    };
                    *g.1.entry(format!("{c}: {class}")).or_default() += 1;
                }
                for (o, sig) in obs.into_iter().zip(sigs) {
                    let command = if o.1 == "crash" { "" } else { o.2 };
                    let key = (
                        o.0.to_string(),
                        o.1.to_string(),
                        command.to_string(),
                        sig.clone(),
                    );
                    let sample = normalize(&o.3);
                    g.0.entry(key)
                        .and_modify(|f| {
                            f.count += 1;
                            if !f.commands.iter().any(|c| c == o.2) {
                                f.commands.push(o.2.into());
                            }
                            if f.samples.len() < 8 && !f.samples.contains(&sample) {
                                f.samples.push(sample.clone());
                            }
                        })
                        .or_insert_with(|| {
                            eprintln!(
                                "damaged: {} {} on {}: {sig} ({})",
                                o.0,
                                o.1,
                                o.2,
                                damage.kinds()
                            );
                            Finding {
                                side: o.0.into(),
                                class: o.1.into(),
                                command: o.2.into(),
                                commands: vec![o.2.into()],
                                samples: vec![sample.clone()],
                                signature: sig,
                                count: 1,
                                damage: damage.clone(),
                                base: bi,
                                detail: o.3.chars().take(2000).collect(),
                                case_dir: None,
                            }
                        });
                }
            });
        }
    });
    let trials = next.load(Ordering::SeqCst).min(cfg.trials);
    let (found, outcomes) = found.into_inner().expect("lock");
    let mut report = DamageReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        seed: cfg.seed,
        bases: bases.len() as u64,
        trials,
        commands: commands.load(Ordering::SeqCst),
        git_outcomes: outcomes,
        ..Default::default()
    };
    let _ = std::fs::create_dir_all(&cfg.out);
    for (n, (key, mut f)) in found.into_iter().enumerate() {
        let base = &bases[f.base];
        f.damage = minimize(
            env,
            cfg,
            base,
            f.damage.clone(),
            &work.path().join("minimize"),
            &key,
        );
        let dir = cfg
            .out
            .join(format!("{}-{}-{}-{n}", f.side, f.class, f.command));
        if write_finding(env, base, &f, &dir).is_ok() {
            f.case_dir = Some(dir.display().to_string());
        }
        if f.side == "git" {
            report.git_findings.push(f);
        } else {
            report.ours_findings.push(f);
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

impl DamageReport {
    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Damaged stacks: git {} and reftable-rs\n\n`{}`; seed {}, {} bases, {} damaged stacks, {} commands, {:.0} s.\n\n",
            self.version, self.git, self.seed, self.bases, self.trials, self.commands, self.seconds
        );
        s.push_str(&format!(
            "**Ours: {} findings** (crashes, hangs, files touched outside, silent wrong answers).\n\n",
            self.ours_findings.len()
        ));
        let crash_sites = self
            .git_findings
            .iter()
            .filter(|f| f.class == "crash")
            .count();
        s.push_str(&format!(
            "**git: {} distinct findings, {crash_sites} distinct crash sites.**\n\n",
            self.git_findings.len()
        ));
        s.push_str("| side | class | commands | signature | seen | minimized damage | reproducer |\n|---|---|---|---|---:|---|---|\n");
        for f in self.ours_findings.iter().chain(&self.git_findings) {
            let dmg: Vec<String> = f.damage.edits.iter().map(Edit::summary).collect();
            s.push_str(&format!(
                "| {} | {} | `{}` | {} | {} | {} | {} |\n",
                f.side,
                f.class,
                f.commands.join("`, `"),
                f.signature.replace('|', "\\|"),
                f.count,
                dmg.join("; ").replace('|', "\\|"),
                f.case_dir.as_deref().unwrap_or("-")
            ));
        }
        s.push_str("\n## What we reported where git did not (samples per finding)\n\n");
        for f in self.git_findings.iter().filter(|f| f.class != "crash") {
            s.push_str(&format!("- {} on `{}`:\n", f.class, f.command));
            for x in &f.samples {
                s.push_str(&format!("  - {}\n", x.replace('|', "\\|")));
            }
        }
        s.push_str("\n## Outcomes of git's commands\n\n| command: outcome | count |\n|---|---:|\n");
        for (k, v) in &self.git_outcomes {
            s.push_str(&format!("| {k} | {v} |\n"));
        }
        s
    }
}
