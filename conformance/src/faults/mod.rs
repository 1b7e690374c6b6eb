//! The faults mode (`conformance faults`): write operations of generated cases run on git
//! and on our library under system-call fault injection (strace's `--inject`), once per call
//! of the write path, and each outcome set against the repository's state.
//!
//! A case's operations are replayed by git on a reftable repository; before each chosen
//! operation the repository is kept, and the operation is run on copies of it:
//!
//! 1. once without a fault, traced (`trial.rs`): the trace gives the fault points (each call
//!    of `openat`, `write`, `fsync`, `close`, `rename`, `unlink`... that touches the stack,
//!    with the errors it may get: `points.rs`), the result the state "after";
//! 2. once per fault point (`strace.rs`), then the repository is looked at (`observe.rs`:
//!    state, git's `for-each-ref` and `refs verify`, files left, the next writer) and the
//!    trial classified (`class.rs`): acknowledged, acknowledged with a warning, clean refusal,
//!    or a defect — crash, unloadable stack, half-applied, lost acknowledged update,
//!    committed but reported failed, stuck lock.
//!
//! git's side runs git's command; ours runs the same operation through the library in a
//! worker process (`worker.rs`, `conformance fault-worker`). Any defect of ours fails the run;
//! one of git's fails it unless the registry has it (mode `faults`, signature `class
//! command`). `report.rs` tallies and writes the reproducers; `ci_tests.rs` makes CI tests;
//! `migration.rs` does the same for `git refs migrate` of each case's refs (git's side);
//! `config.rs` holds what a run does.

pub mod ci_tests;
pub mod class;
pub mod cli;
pub mod config;
pub mod finding_dir;
pub mod migration;
pub mod observe;
pub mod report;
pub mod trial;
pub mod worker;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use crate::cases::case::{not_applicable, run_generated};
use crate::defects::registry::{ExpectedSet, Mode};
use crate::finding::script::{git_invocation, sh_quote, ticks};
use crate::git::version::GitVersion;
use crate::lanes::take_in_turn;
use crate::ops::Op;
use crate::setup::env::{init_repo, Env};
use reftable_testkit::rng::Rng;

pub use config::FaultsConfig;
use migration::MigrationRun;
use report::{FaultsReport, OpRun};
use trial::{OpUnderTest, Side};

/// The git subcommand of an invocation (`update-ref`; `maintenance` past `-c` options).
fn command_name(args: &[String]) -> String {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-c" {
            it.next();
        } else if !a.starts_with('-') {
            return a.clone();
        }
    }
    String::new()
}

/// Run the faults mode on `env`'s git, matching git's defects against `known`.
pub fn run_faults(
    env: &Env,
    known: &ExpectedSet,
    cfg: &FaultsConfig,
) -> Result<FaultsReport, String> {
    if !crate::syscalls::strace::available() {
        return Err("strace is not installed (apt-get install strace)".into());
    }
    let started = Instant::now();
    let mut report = FaultsReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        seed: cfg.seed,
        fsync: cfg.fsync,
        ..Default::default()
    };
    let filing = Filing {
        known,
        version: GitVersion::parse(env.git.version()),
        out: cfg.out.clone(),
        written: BTreeSet::new(),
    };
    let scratch = env.dir.path().join("faults");
    let run = CaseRun {
        env,
        cfg,
        scratch: &scratch,
        filing: Mutex::new(filing),
        done: Mutex::new(Vec::new()),
        stop: Mutex::new(None),
    };
    take_in_turn(cfg.jobs, || !run.stopped(), |_, index| run.take(index));
    let mut done = run.done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|c| c.0);
    for (_, ops, migrations) in done {
        report.ops.extend(ops);
        report.migrations.extend(migrations);
        report.cases += 1;
    }
    match run.stop.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(Stop::Error(e)) => return Err(e),
        Some(Stop::Why(why)) => report.stop = Some(why),
        None => {}
    }
    report.seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(report)
}

/// Why the cases stopped before their number: an error, or a reason for the report.
enum Stop {
    Error(String),
    Why(String),
}

/// A case's index, its operations tried and its migrations.
type CaseDone = (u64, Vec<OpRun>, Vec<MigrationRun>);

/// The cases of a faults run, taken in turn by `cfg.jobs` workers.
struct CaseRun<'a> {
    env: &'a Env,
    cfg: &'a FaultsConfig,
    scratch: &'a Path,
    filing: Mutex<Filing<'a>>,
    /// Each case's index, operations and migrations.
    done: Mutex<Vec<CaseDone>>,
    stop: Mutex<Option<Stop>>,
}

impl CaseRun<'_> {
    /// Whether a case or the budget stopped the run.
    fn stopped(&self) -> bool {
        (self.stop.lock().unwrap_or_else(|e| e.into_inner())).is_some()
    }

    /// Run case `index` unless the cases or the budget are used up, or (`--fail-fast`) the
    /// case fails the run: whether its lane goes on.
    fn take(&self, index: u64) -> bool {
        if self.cfg.cases.is_some_and(|n| index >= n) {
            return false;
        }
        if crate::budget::past(self.cfg.deadline) {
            self.stop_with(Stop::Why("time budget used".into()));
            return false;
        }
        match self.case(index) {
            Ok(clean) if clean || !self.cfg.fail_fast => true,
            Ok(_) => {
                self.stop_with(Stop::Why("--fail-fast: a defect that fails the run".into()));
                false
            }
            Err(e) => {
                self.stop_with(Stop::Error(e));
                false
            }
        }
    }

    /// The first reason to stop is kept.
    fn stop_with(&self, why: Stop) {
        let mut stop = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        stop.get_or_insert(why);
    }

    /// Case `index`: its chosen operations tried, its migrations; whether it is clean.
    fn case(&self, index: u64) -> Result<bool, String> {
        let (env, cfg) = (self.env, self.cfg);
        let case = format!("seed{}-case{index}", cfg.seed);
        let dir = self.scratch.join(&case);
        let filing = || self.filing.lock().unwrap_or_else(|e| e.into_inner());
        let mut ops = Vec::new();
        for_each_chosen_op(env, cfg, index, &dir, &mut |t, step| {
            let mut op = try_op(t, &case, step)?;
            filing().file(t, &mut op);
            ops.push(op);
            Ok(())
        })?;
        let mut migrations = Vec::new();
        if cfg.migrations && !crate::budget::past(cfg.deadline) {
            migrations =
                migration::try_migrations(env, cfg, index, &dir.join("migrate"), &mut |r, src| {
                    filing().file_migration(r, src)
                })?;
            let _ = std::fs::remove_dir_all(&dir);
        }
        let run = FaultsReport {
            ops,
            migrations,
            ..Default::default()
        };
        let clean = run.clean();
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        done.push((index, run.ops, run.migrations));
        Ok(clean)
    }
}

/// The operations of case `index` that are tried: `n` of them, drawn from the seed.
fn chosen(seed: u64, index: u64, len: usize, n: usize) -> Vec<usize> {
    let mut rng = Rng(seed ^ index.wrapping_mul(0x5851_f42d_4c95_7f2d) ^ 0xfa17);
    let mut picked: Vec<usize> = Vec::new();
    while picked.len() < n.min(len) {
        let i = rng.below(len);
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    picked.sort_unstable();
    picked
}

/// Case `index` of the seed replayed by git on a reftable repository in `dir/pre`, with
/// `each` called on every chosen operation (and its step) before it is replayed; the case's
/// options with auto-compaction on, as git runs by default.
pub fn for_each_chosen_op(
    env: &Env,
    cfg: &FaultsConfig,
    index: u64,
    dir: &Path,
    each: &mut dyn FnMut(&OpUnderTest<'_>, usize) -> Result<(), String>,
) -> Result<(), String> {
    let result = run_generated(env, cfg.seed, index, cfg.case_ops)?;
    let mut opts = result.options.unwrap_or_default();
    opts.auto_compaction = true;
    opts.interleave = false;
    let ops = result.ops;
    if not_applicable(&env.profile, &ops).is_some() {
        return Ok(());
    }
    let pre = dir.join("pre");
    std::fs::create_dir_all(&pre).map_err(|e| e.to_string())?;
    init_repo(env, &pre, "reftable", &opts)?;
    let picked = chosen(cfg.seed, index, ops.len(), cfg.ops_per_case);
    for (step, (op, tick)) in ops.iter().zip(ticks(&ops)).enumerate() {
        if picked.contains(&step) && !crate::budget::past(cfg.deadline) {
            let t = OpUnderTest {
                env,
                opts,
                op,
                tick,
                pre: &pre,
                scratch: dir.join("trials"),
                worker_exe: &cfg.worker_exe,
                fsync: cfg.fsync,
                git_config: Vec::new(),
                max_points: cfg.max_points,
                errnos: cfg.errnos.clone(),
                deadline: cfg.deadline,
            };
            each(&t, step)?;
        }
        let (args, stdin) = git_invocation(op);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut c = env.git.command_auto(&pre, tick, true);
        env.git
            .run_command(&mut c, &args, stdin.as_deref().unwrap_or(""));
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}

/// Both sides of one operation.
fn try_op(t: &OpUnderTest<'_>, case: &str, step: usize) -> Result<OpRun, String> {
    let before = t.read(&t.pre.join(".git/reftable"))?;
    let (args, stdin) = git_invocation(t.op);
    let mut invocation: Vec<String> = args.iter().map(|a| sh_quote(a)).collect();
    if let Some(s) = stdin {
        invocation.push(format!("<<'EOF'\n{s}EOF"));
    }
    Ok(OpRun {
        case: case.to_string(),
        step,
        command: command_name(&args),
        invocation: invocation.join(" "),
        op: Op::clone(t.op),
        sides: vec![
            t.run_side(Side::Git, &before),
            t.run_side(Side::Ours, &before),
        ],
    })
}

/// A trial's signature for the registry: `class phase command syscall role`
/// (`committed-but-reported-failed after-commit update-ref write new table`).
pub fn signature(t: &trial::Trial, command: &str) -> String {
    let p = &t.point;
    format!(
        "{} {} {command} {} {}",
        t.class.name(),
        p.phase(),
        p.syscall,
        p.role
    )
}

/// What is done with a tried operation's defects: git's matched against the registry, and
/// the first of each kind not known written as a finding directory.
struct Filing<'a> {
    known: &'a ExpectedSet,
    version: Option<GitVersion>,
    out: Option<PathBuf>,
    written: BTreeSet<String>,
}

/// A kind of defect, for the first-of-its-kind finding directories and their names:
/// `side-class-phase-command-syscall-errno`.
fn kind(side: Side, t: &trial::Trial, command: &str) -> String {
    let p = &t.point;
    format!(
        "{side:?}-{}-{}-{command}-{}-{}",
        t.class.name(),
        p.phase(),
        p.syscall,
        p.errno
    )
    .to_lowercase()
}

impl Filing<'_> {
    /// The known git defect a bad trial of git's `command` is, if the registry has it.
    fn label(&self, trial: &mut trial::Trial, command: &str) {
        if let Some(v) = &self.version {
            trial.known = self
                .known
                .matching_signature(v, Mode::Faults, &signature(trial, command))
                .map(|e| e.id.clone());
        }
    }

    /// A migration's defects, as [`Filing::file`] does for an operation's (git's side only).
    fn file_migration(&mut self, r: &mut migration::MigrationRun, src: &Path) {
        let command = r.command();
        let args: Vec<String> = ["refs", "migrate", &format!("--ref-format={}", r.to)]
            .map(String::from)
            .to_vec();
        for trial in r.git.trials.iter_mut().filter(|t| t.class.is_bad()) {
            self.label(trial, &command);
            let kind = kind(Side::Git, trial, &command);
            let Some(out) = &self.out else { continue };
            if trial.known.is_some() || !self.written.insert(kind.clone()) {
                continue;
            }
            let about = report::migration_line(Side::Git, r.case.as_str(), &command, trial);
            let point = trial.point.clone();
            let files = finding_dir::FindingFiles {
                about: &about,
                pre: src,
                args: &args,
                stdin: "",
                tick: migration::TICK,
                point: &point,
                class: Some(trial.class),
            };
            let dir = out.join(kind);
            match finding_dir::write(&dir, &files) {
                Ok(()) => trial.finding_dir = Some(dir.display().to_string()),
                Err(e) => trial
                    .detail
                    .push_str(&format!(" (finding not written: {e})")),
            }
        }
    }

    fn file(&mut self, t: &OpUnderTest<'_>, op: &mut OpRun) {
        let command = op.command.clone();
        let mut to_write = Vec::new();
        for (si, s) in op.sides.iter_mut().enumerate() {
            for (ti, trial) in s.trials.iter_mut().enumerate() {
                if !trial.class.is_bad() {
                    continue;
                }
                if s.side == Side::Git {
                    self.label(trial, &command);
                }
                let kind = kind(s.side, trial, &command);
                if trial.known.is_none() && self.written.insert(kind.clone()) {
                    to_write.push((si, ti, kind));
                }
            }
        }
        let Some(out) = &self.out else { return };
        let (args, stdin) = git_invocation(t.op);
        for (si, ti, kind) in to_write {
            let (side, trial) = (op.sides[si].side, &op.sides[si].trials[ti]);
            let about = report::finding_line(op, side, trial);
            let point = trial.point.clone();
            let files = finding_dir::FindingFiles {
                about: &about,
                pre: t.pre,
                args: &args,
                stdin: stdin.as_deref().unwrap_or(""),
                tick: t.tick,
                point: &point,
                class: (side == Side::Git).then_some(trial.class),
            };
            let dir = out.join(kind);
            let written = finding_dir::write(&dir, &files);
            let trial = &mut op.sides[si].trials[ti];
            match written {
                Ok(()) => trial.finding_dir = Some(dir.display().to_string()),
                Err(e) => trial
                    .detail
                    .push_str(&format!(" (finding not written: {e})")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subcommand_is_found_past_config_options() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(command_name(&a(&["update-ref", "-m", "x"])), "update-ref");
        let m = crate::finding::script::MAINTENANCE_PACK_REFS;
        assert_eq!(command_name(&a(&m)), "maintenance");
    }

    #[test]
    fn chosen_operations_are_distinct_sorted_and_repeatable() {
        let a = chosen(1, 3, 20, 4);
        assert_eq!(a, chosen(1, 3, 20, 4));
        assert_eq!(a.len(), 4);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(chosen(1, 3, 2, 4), vec![0, 1]);
    }
}
