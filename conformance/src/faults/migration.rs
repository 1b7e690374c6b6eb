//! `git refs migrate` under faults: a case's refs written by git into a files repository,
//! migrated to reftable, and the result migrated back to files, each migration once traced
//! and then once per fault point of the repository's `.git` directory (the new refs written
//! into `ref_migration.*`, the old store removed, the new one moved into place, the config
//! rewritten; the commit point is the config's rename), each trial classified from git's
//! exit and the repository git sees afterwards: its ref format, its refs, a migration
//! directory left behind, and whether the same migration then goes through.
//!
//! Our side of the migration to reftable is the library's import (`RefDb::import` of
//! `FilesRefs::read`) into an empty stack of its own (`.git/reftable-ours`), run in the fault
//! worker under the same faults: it must read every ref or fail, and leave either no table or
//! the whole import. (The library has no in-place swap of a repository's ref store, and its
//! export to files writes into a directory the caller discards on failure.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cases::case::{not_applicable, run_generated};
use crate::cases::ours::refdb_options;
use crate::faults::class::{Class, Reported};
use crate::faults::config::FaultsConfig;
use crate::faults::trial::{reported, spread, Side, SideRun, Trial};
use crate::faults::worker::{pool_spec, Work, WorkerSpec};
use crate::lanes::before_deadline;
use crate::migrate::replay::replay_on_files;
use crate::ops::CaseOptions;
use crate::setup::env::Env;
use crate::snapshot::Snapshot;
use crate::stack_files::copy_dir;
use crate::syscalls::points::{fault_points, parse_trace_in, FaultPoint, Scope};
use crate::syscalls::strace::{self, Traced, Tracing};

/// One migration of a case's repository, tried under faults.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MigrationRun {
    /// The case (`seed1-case3`).
    pub case: String,
    /// The format migrated to (`reftable`, `files`).
    pub to: String,
    /// git's unfaulted run and trials.
    pub git: SideRun,
    /// Our import's unfaulted run and trials (migrations to reftable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ours: Option<SideRun>,
    /// Why nothing was tried: git refuses this migration without a fault (and leaves the
    /// repository as it was), so no fault can show anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl MigrationRun {
    /// git's side, then ours where there is one.
    pub fn sides(&self) -> impl Iterator<Item = &SideRun> {
        std::iter::once(&self.git).chain(&self.ours)
    }

    /// The command in registry signatures and reports.
    pub fn command(&self) -> String {
        format!("refs-migrate-to-{}", self.to)
    }
}

/// A migration under strace takes longer than this only when it hangs.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The commit clock of the migrations (they write no reflog entry of their own).
pub const TICK: u64 = 10_000;

/// The repository's `.git`, its objects apart: a migration's scope, committed by the rename
/// of `config.lock` onto `config` (the format switch).
pub const GIT_DIR: Scope = Scope {
    locate: git_dir_path,
    role: git_dir_role,
    commits: |args, result| {
        args.contains("config.lock\"") && args.contains("/config\"") && result.starts_with('0')
    },
};

/// The path under a `.git` directory in a call's arguments (quoted, or decoded by `-y`),
/// unless it is in the object store.
fn git_dir_path(args: &str) -> Option<&str> {
    let at = args.find(".git")?;
    let start = args[..at].rfind(['"', '<']).map_or(0, |i| i + 1);
    let rest = &args[at..];
    let end = rest.find(['"', '>']).map_or(rest.len(), |i| i);
    let path = &args[start..at + end];
    (!path.contains(".git/objects")).then_some(path)
}

/// What a path under `.git` is, in words that do not depend on random names.
fn git_dir_role(path: &str) -> String {
    let inner = path.split_once(".git").map_or(path, |(_, r)| r);
    let kind = |p: &str| {
        if p.contains("/reftable") {
            "stack"
        } else if p.contains("packed-refs") {
            "packed-refs"
        } else if p.contains("/logs") {
            "reflogs"
        } else if p.contains("/refs") {
            "loose refs"
        } else if p.ends_with("HEAD") || p.ends_with("HEAD.lock") {
            "HEAD"
        } else if p.ends_with("/config") || p.ends_with("/config.lock") {
            "config"
        } else {
            "git dir"
        }
    };
    match inner.split_once("ref_migration.") {
        Some((_, rest)) => match rest.split_once('/') {
            Some((_, inner)) => format!("new {}", kind(&format!("/{inner}"))),
            None => "new git dir".into(),
        },
        None => kind(inner).to_string(),
    }
}

/// The repository as git sees it.
#[derive(Clone, Debug, PartialEq)]
struct View {
    /// `reftable` or `files`, from the config.
    format: String,
    /// The refs `for-each-ref` lists (name, value, symref target), or why it failed.
    refs: Result<String, String>,
    /// Migration directories left in `.git`.
    left: Vec<String>,
}

fn view(env: &Env, repo: &Path) -> View {
    let config = std::fs::read_to_string(repo.join(".git/config")).unwrap_or_default();
    let format = if config.contains("refstorage = reftable") {
        "reftable"
    } else {
        "files"
    };
    let mut args = vec!["for-each-ref"];
    if env.profile.features.include_root_refs {
        args.push("--include-root-refs");
    }
    args.push("--format=%(refname) %(objectname) %(symref)");
    let o = env.git.run(repo, &args, "", TICK);
    let refs = if o.exit.success() {
        Ok(o.stdout)
    } else {
        Err(format!("{:?}: {}", o.exit, o.stderr.trim()))
    };
    let mut left: Vec<String> = std::fs::read_dir(repo.join(".git"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ref_migration."))
        .collect();
    left.sort();
    View {
        format: format.into(),
        refs,
        left,
    }
}

/// What a writer reported, in one line: `done` (with its warning) or its first line.
fn said_line(said: &Reported) -> String {
    match said {
        Reported::Done(w) => format!(
            "done{}",
            w.as_deref().map_or(String::new(), |w| format!(" ({w})"))
        ),
        Reported::Failed(m) | Reported::Crashed(m) => m.lines().next().unwrap_or("").to_string(),
    }
}

/// What a faulted migration came to, from git's report and the repository before, after an
/// unfaulted migration, and after this one.
/// The same format and refs (what a migration left behind apart).
fn same_refs(a: &View, b: &View) -> bool {
    a.format == b.format && a.refs == b.refs
}

fn classify(said: &Reported, before: &View, after: &View, seen: &View) -> (Class, String) {
    let same = same_refs;
    let advice = match said {
        Reported::Failed(m) if m.contains("migrated refs can be found") => {
            " (git names the directory with the migrated refs)"
        }
        _ => "",
    };
    let state = format!(
        "format {}, {}{}",
        seen.format,
        match &seen.refs {
            Ok(r) => format!("{} refs", r.lines().count()),
            Err(e) => format!("refs not listed: {e}"),
        },
        if seen.left.is_empty() {
            String::new()
        } else {
            format!(", left {}", seen.left.join(" "))
        }
    );
    let class = match said {
        Reported::Crashed(_) => Class::Crash,
        _ if seen.refs.is_err() => Class::UnloadableStack,
        Reported::Done(w) if same(seen, after) => {
            if w.is_some() {
                Class::AcknowledgedWithWarning
            } else {
                Class::Acknowledged
            }
        }
        Reported::Done(_) if same(seen, before) => Class::LostAcknowledgedUpdate,
        Reported::Failed(_) if same(seen, before) => Class::CleanRefusal,
        Reported::Failed(_) if same(seen, after) => Class::CommittedButReportedFailed,
        _ => Class::HalfApplied,
    };
    let said = said_line(said);
    (class, format!("{said}; {state}{advice}"))
}

/// Why a migration's unfaulted run leaves nothing to try.
enum Unfaulted {
    /// git refused it and changed nothing (a reflog entry too big for the block size, ...).
    Refused(String),
    /// Anything else: the mode could not run it.
    Error(String),
}

impl From<String> for Unfaulted {
    fn from(e: String) -> Unfaulted {
        Unfaulted::Error(e)
    }
}

/// A migration of `src` to `to`, run on copies under `scratch`.
struct Migration<'a> {
    env: &'a Env,
    src: &'a Path,
    to: &'a str,
    scratch: PathBuf,
    /// Only the fault points that inject these errors (all without).
    errnos: Option<&'a [String]>,
}

impl Migration<'_> {
    fn command(&self, repo: &Path) -> Command {
        let mut c = self.env.git.command_auto(repo, TICK, true);
        c.args(["refs", "migrate", &format!("--ref-format={}", self.to)]);
        c
    }

    /// The migration on a fresh copy of the source (`scratch/name/repo`), traced as `how`.
    fn traced(&self, name: &str, how: Tracing<'_>) -> Result<(Traced, PathBuf), String> {
        let dir = self.scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let repo = dir.join("repo");
        copy_dir(self.src, &repo, None)?;
        let t = strace::run(&self.command(&repo), how, "", &dir, TIMEOUT)?;
        Ok((t, repo))
    }

    /// The same migration again, unfaulted, on a repository a trial left: its refusal.
    fn again(&self, repo: &Path) -> Option<String> {
        let to = format!("--ref-format={}", self.to);
        let o = self.env.git.run(repo, &["refs", "migrate", &to], "", TICK);
        (!o.exit.success()).then(|| o.stderr.trim().to_string())
    }

    /// The unfaulted run, then one trial per fault point (at most `max`, `lanes` at a time);
    /// the repository the unfaulted run migrated, and why nothing was tried if git refused
    /// the migration cleanly.
    fn run(
        &self,
        max: usize,
        lanes: usize,
        deadline: Option<std::time::Instant>,
    ) -> (SideRun, Option<PathBuf>, Option<String>) {
        let mut run = SideRun {
            side: Side::Git,
            unfaulted_done: false,
            points: 0,
            trials: Vec::new(),
            error: None,
        };
        let mut skipped = None;
        let migrated = match self.trials(max, lanes, deadline, &mut run) {
            Ok(m) => Some(m),
            Err(Unfaulted::Refused(why)) => {
                skipped = Some(why);
                None
            }
            Err(Unfaulted::Error(e)) => {
                run.error = Some(e);
                None
            }
        };
        (run, migrated, skipped)
    }

    fn trials(
        &self,
        max: usize,
        lanes: usize,
        deadline: Option<std::time::Instant>,
        run: &mut SideRun,
    ) -> Result<PathBuf, Unfaulted> {
        let before = view(self.env, self.src);
        let (base, migrated) = self.traced("unfaulted", Tracing::Faults(None))?;
        let said = reported(Side::Git, &base);
        match &said {
            Reported::Done(_) => {}
            Reported::Failed(m) if same_refs(&view(self.env, &migrated), &before) => {
                return Err(Unfaulted::Refused(format!(
                    "git refuses it without a fault: {}",
                    m.lines().next().unwrap_or("")
                )));
            }
            _ => {
                return Err(Unfaulted::Error(format!(
                    "the unfaulted migration did not go through: {said:?}"
                )))
            }
        }
        run.unfaulted_done = true;
        let after = view(self.env, &migrated);
        let calls = parse_trace_in(&base.trace, &GIT_DIR);
        let all = fault_points(&calls, self.errnos);
        run.points = all.len();
        let points = spread(&all, max);
        // Each point is tried on a copy of its own, so the points go to `lanes` threads: a
        // faults run's cases already run one per core, and this keeps the cores busy when
        // one case's migration outlasts the others' (300 refs make 400 points, a small case
        // 50).
        for t in before_deadline(&points, lanes, deadline, |i, p| {
            self.trial(i, p, &before, &after)
        }) {
            run.trials.push(t?);
        }
        Ok(migrated)
    }

    /// The migration under the fault `p`, on a copy of its own (`trial-i`), classified
    /// against the refs `before` it and `after` the unfaulted run.
    fn trial(
        &self,
        i: usize,
        p: &FaultPoint,
        before: &View,
        after: &View,
    ) -> Result<Trial, String> {
        let (t, repo) = self.traced(&format!("trial-{i}"), Tracing::Faults(Some(p)))?;
        let said = reported(Side::Git, &t);
        let seen = view(self.env, &repo);
        let (mut class, mut detail) = classify(&said, before, after, &seen);
        if class == Class::CleanRefusal {
            if let Some(why) = self.again(&repo) {
                class = Class::StuckLock;
                detail.push_str(&format!("; the same migration then fails: {why}"));
            }
        }
        let trial = Trial::new(p.clone(), (class, detail), &t, seen.left);
        let _ = std::fs::remove_dir_all(self.scratch.join(format!("trial-{i}")));
        Ok(trial)
    }
}

/// Where our import writes: a stack of its own beside git's ref store.
const OUR_STACK: &str = ".git/reftable-ours";

impl Migration<'_> {
    /// Our side: the library's import of the source repository's refs into an empty stack,
    /// unfaulted, then once per fault point of its trace.
    fn our_import(&self, cfg: &FaultsConfig, opts: &CaseOptions) -> SideRun {
        let mut run = SideRun {
            side: Side::Ours,
            unfaulted_done: false,
            points: 0,
            trials: Vec::new(),
            error: None,
        };
        if let Err(e) = self.our_trials(cfg, opts, &mut run) {
            run.error = Some(e);
        }
        run
    }

    fn our_trials(
        &self,
        cfg: &FaultsConfig,
        opts: &CaseOptions,
        run: &mut SideRun,
    ) -> Result<(), String> {
        let (base, repo) = self.our_traced(cfg, opts, "ours-unfaulted", Tracing::Faults(None))?;
        let said = reported(Side::Ours, &base);
        if !matches!(said, Reported::Done(_)) {
            // The library refuses what git refuses here (a reflog entry too big for the
            // block size, ...): nothing to try.
            return Ok(());
        }
        run.unfaulted_done = true;
        let after = self.our_view(opts, &repo);
        let calls = parse_trace_in(&base.trace, &GIT_DIR);
        let all = fault_points(&calls, cfg.errnos.as_deref());
        run.points = all.len();
        // A quarter of the operations' cap: the import's points are mostly reads of loose
        // refs, alike, and each clean refusal is tried again.
        let points = spread(&all, cfg.max_points / 4);
        for t in before_deadline(&points, cfg.jobs, cfg.deadline, |i, p| {
            self.our_trial(cfg, opts, i, p, &after)
        }) {
            run.trials.push(t?);
        }
        Ok(())
    }

    /// Our import under the fault `p`, on a copy of its own (`ours-trial-i`), classified
    /// against the refs `after` the unfaulted import.
    fn our_trial(
        &self,
        cfg: &FaultsConfig,
        opts: &CaseOptions,
        i: usize,
        p: &FaultPoint,
        after: &Imported,
    ) -> Result<Trial, String> {
        let name = format!("ours-trial-{i}");
        let (t, repo) = self.our_traced(cfg, opts, &name, Tracing::Faults(Some(p)))?;
        let said = reported(Side::Ours, &t);
        let seen = self.our_view(opts, &repo);
        let (mut class, mut detail) = classify_import(&said, after, &seen);
        if class == Class::CleanRefusal {
            let (again, _) =
                self.our_traced(cfg, opts, &format!("{name}-again"), Tracing::Faults(None))?;
            if let Reported::Failed(why) = reported(Side::Ours, &again) {
                class = Class::StuckLock;
                detail.push_str(&format!("; the same import then fails: {why}"));
            }
        }
        let left = crate::faults::observe::left_files(&repo.join(OUR_STACK));
        let trial = Trial::new(p.clone(), (class, detail), &t, left);
        let _ = std::fs::remove_dir_all(self.scratch.join(&name));
        Ok(trial)
    }

    /// Our import on a fresh copy of the source (`scratch/name/repo`), traced as `how`.
    fn our_traced(
        &self,
        cfg: &FaultsConfig,
        opts: &CaseOptions,
        name: &str,
        how: Tracing<'_>,
    ) -> Result<(Traced, PathBuf), String> {
        let dir = self.scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let repo = dir.join("repo");
        copy_dir(self.src, &repo, None)?;
        let spec = WorkerSpec {
            stack: repo.join(OUR_STACK),
            work: Work::Import(repo.join(".git")),
            tick: TICK,
            opts: *opts,
            rules: self.env.profile.rules,
            fsync: cfg.fsync,
            pool: pool_spec(&self.env.pool(opts.hash()).pool),
        };
        let path = dir.join("spec.json");
        let json = serde_json::to_vec(&spec).map_err(|e| e.to_string())?;
        std::fs::write(&path, json).map_err(|e| e.to_string())?;
        let mut c = Command::new(&cfg.worker_exe);
        c.arg("fault-worker").arg(&path);
        c.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        c.current_dir(&repo);
        let t = strace::run(&c, how, "", &dir, TIMEOUT)?;
        Ok((t, repo))
    }

    /// Our reader's view of the import's stack: nothing yet (no table), its refs and
    /// reflogs, or why it does not load.
    fn our_view(&self, opts: &CaseOptions, repo: &Path) -> Imported {
        let stack = repo.join(OUR_STACK);
        let list = std::fs::read_to_string(stack.join("tables.list")).unwrap_or_default();
        if list.trim().is_empty() {
            return Ok(None);
        }
        let o = refdb_options(opts, self.env.profile.rules, false);
        Snapshot::of_stack_dir(&stack, o)
            .map(Some)
            .map_err(|e| format!("{e:#}"))
    }
}

/// What our import left, as our reader reads it: a snapshot, none (no table), or why it
/// cannot be read.
type Imported = Result<Option<Snapshot>, String>;

/// What a faulted import came to: all or nothing, against the unfaulted import's stack.
fn classify_import(said: &Reported, after: &Imported, seen: &Imported) -> (Class, String) {
    let class = match (said, seen) {
        (Reported::Crashed(_), _) => Class::Crash,
        (_, Err(_)) => Class::UnloadableStack,
        (Reported::Done(w), s) if s == after => {
            if w.is_some() {
                Class::AcknowledgedWithWarning
            } else {
                Class::Acknowledged
            }
        }
        (Reported::Done(_), Ok(None)) => Class::LostAcknowledgedUpdate,
        (Reported::Failed(_), Ok(None)) => Class::CleanRefusal,
        (Reported::Failed(_), s) if s == after => Class::CommittedButReportedFailed,
        _ => Class::HalfApplied,
    };
    let state = match seen {
        Ok(None) => "no table".to_string(),
        Ok(Some(s)) if Ok(Some(s.clone())) == *after => "the whole import".to_string(),
        Ok(Some(_)) => "a stack other than the import's".to_string(),
        Err(e) => format!("does not load: {e}"),
    };
    let said = said_line(said);
    (class, format!("{said}; {state}"))
}

/// Case `index`'s refs written by git into a files repository under `dir`, migrated to
/// reftable under faults, and the unfaulted result migrated back to files under faults;
/// `file` is given each run with the repository it started from and the object directory
/// (while both are still there). Nothing when the git has no `refs migrate` or the case
/// does not apply to it.
pub fn try_migrations(
    env: &Env,
    cfg: &FaultsConfig,
    index: u64,
    dir: &Path,
    file: &mut dyn FnMut(&mut MigrationRun, &Path),
) -> Result<Vec<MigrationRun>, String> {
    if !env.profile.features.refs_migrate {
        return Ok(Vec::new());
    }
    let result = run_generated(env, cfg.seed, index, cfg.case_ops)?;
    let opts = result.options.unwrap_or_default();
    if not_applicable(&env.profile, &result.ops).is_some() {
        return Ok(Vec::new());
    }
    let files = dir.join("files");
    let with_reflogs = env.profile.features.migrate_reflogs;
    replay_on_files(env, &files, &opts, &result.ops, with_reflogs, &mut 0)?;
    let case = format!("seed{}-case{index}", cfg.seed);
    let mut runs = Vec::new();
    let mut src = files;
    for to in ["reftable", "files"] {
        let m = Migration {
            env,
            src: &src,
            to,
            scratch: dir.join(format!("to-{to}")),
            errnos: cfg.errnos.as_deref(),
        };
        let (git, migrated, skipped) = m.run(cfg.max_points, cfg.jobs, cfg.deadline);
        let mut r = MigrationRun {
            case: case.clone(),
            to: to.into(),
            git,
            skipped,
            ours: (to == "reftable").then(|| m.our_import(cfg, &opts)),
        };
        file(&mut r, &src);
        runs.push(r);
        match migrated {
            Some(repo) => src = repo,
            None => break,
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(format: &str, refs: &str, left: &[&str]) -> View {
        View {
            format: format.into(),
            refs: Ok(refs.into()),
            left: left.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn an_import_is_all_or_nothing() {
        let whole = Ok(Some(Snapshot::default()));
        let c = |said: Reported, seen: Result<Option<Snapshot>, String>| {
            classify_import(&said, &whole, &seen).0
        };
        assert_eq!(c(Reported::Done(None), whole.clone()), Class::Acknowledged);
        assert_eq!(
            c(Reported::Failed("x".into()), Ok(None)),
            Class::CleanRefusal
        );
        assert_eq!(
            c(Reported::Failed("x".into()), whole.clone()),
            Class::CommittedButReportedFailed
        );
        assert_eq!(
            c(Reported::Done(None), Ok(None)),
            Class::LostAcknowledgedUpdate
        );
        assert_eq!(
            c(Reported::Done(None), Err("bad".into())),
            Class::UnloadableStack
        );
    }

    #[test]
    fn paths_under_git_are_in_scope_and_named_without_random_parts() {
        let args = r#"("/r/.git/ref_migration.1aAAnO/packed-refs.new", "/r/.git/ref_migration.1aAAnO/packed-refs")"#;
        let p = git_dir_path(args).unwrap();
        assert_eq!(p, "/r/.git/ref_migration.1aAAnO/packed-refs.new");
        assert_eq!(git_dir_role(p), "new packed-refs");
        assert_eq!(git_dir_role(".git/reftable/tables.list"), "stack");
        assert_eq!(git_dir_role("/r/.git/config.lock"), "config");
        assert_eq!(
            git_dir_role(".git/ref_migration.X/logs/refs/heads/b"),
            "new reflogs"
        );
        assert!(git_dir_path(r#"(5</r/.git/objects/pack/x.pack>, "P", 4)"#).is_none());
    }

    #[test]
    fn a_migration_is_judged_by_format_and_refs() {
        let before = v("files", "refs/heads/a 1 \n", &[]);
        let after = v("reftable", "refs/heads/a 1 \n", &[]);
        let failed = |m: &str| Reported::Failed(m.into());
        let c = |said: &Reported, seen: &View| classify(said, &before, &after, seen).0;
        assert_eq!(c(&Reported::Done(None), &after), Class::Acknowledged);
        assert_eq!(c(&failed("x"), &before), Class::CleanRefusal);
        assert_eq!(c(&failed("x"), &after), Class::CommittedButReportedFailed);
        assert_eq!(
            c(&Reported::Done(None), &before),
            Class::LostAcknowledgedUpdate
        );
        // The old store removed, the new one not moved in: neither state.
        let emptied = v("files", "", &["ref_migration.X"]);
        assert_eq!(c(&failed("x"), &emptied), Class::HalfApplied);
        let (_, detail) = classify(
            &failed("migrated refs can be found at '.git/ref_migration.X'"),
            &before,
            &after,
            &emptied,
        );
        assert!(detail.contains("names the directory"), "{detail}");
    }
}
