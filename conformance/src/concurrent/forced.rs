//! Orders of events the random round meets only by luck, forced: git is stopped at a chosen
//! system call (strace delivers `SIGSTOP` as the call returns) while another git commits, and
//! then let go; or one of git's calls fails. Each scenario runs on a fresh repository of its
//! own and says what git must do:
//!
//! - **append after commit**: git stopped just after committing its update, as it opens
//!   `tables.list` again to reload; another writer appends a table. The auto-compaction that
//!   follows finds the stack changed under it, which is benign: git must exit 0 and both refs
//!   be there.
//! - **append during compaction**: git stopped as its auto-compaction lets go of
//!   `tables.list.lock` to merge (the tables it merges stay locked); another writer appends.
//!   git must still install what it merged: the stack ends as git's own unpaused run of the
//!   same command left it, with the appended table on top. (Before 2.47.0 git wrote back the
//!   list it had read and dropped the appended table: `concurrent-compaction-drops-tables`.)
//! - **failed addition**: `reflog expire` of three refs, the first `chmod` of
//!   `tables.list.lock` failing (`EPERM`): the first ref's expiry fails and must let go of
//!   the lock, so that the other two refs expire.
//! - **read across a compaction**: `show-ref --verify` of three refs (a table each), stopped
//!   just after reading `tables.list` and before opening the tables it names, while another
//!   git compacts them into one and removes them. git must find the tables gone, read the
//!   list again and show every ref (the random round reaches this retry only when its
//!   timing happens to).
//! - **compaction past a locked table**: another process holds the lock of a table low in
//!   the stack (its `.lock` file exists) when a write auto-compacts. From 2.46 git compacts
//!   the tables above it, which it could lock, and leaves the rest: the write must succeed,
//!   every ref stay, the locked table stay listed and its lock stay where it was. (Before
//!   2.46 git compacts nothing then: not forced.)
//!
//! No lock or temporary file may be left behind (but for the last scenario's own lock).
//! Where to stop is found from a traced run of the same command on a copy of the same
//! repository (the first call of the kind after git's first commit of `tables.list`); when
//! git makes no such call, or the fault meets no call, the scenario is reported as not
//! forced, which is no finding.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reftable::ObjectId;

use crate::concurrent::coordinator::case_options;
use crate::concurrent::evidence::git_refs;
use crate::finding::divergence::Finding;
use crate::git::driver::{Exit, Group};
use crate::setup::env::{init_repo, Env};
use crate::stack_files::copy_dir;
use crate::syscalls::strace::{available, program_and_args, under_strace};

/// What the forced scenarios came to on one git.
#[derive(Clone, Debug, Default)]
pub(crate) struct ForcedRun {
    /// The scenarios forced as described.
    pub forced: Vec<&'static str>,
    /// The scenarios that could not be forced, and why.
    pub not_forced: Vec<String>,
    /// What git did wrong.
    pub findings: Vec<Finding>,
}

/// How a scenario ended: git did what it must, or a finding (class, detail), or it could
/// not be forced (why).
enum Outcome {
    Right,
    Wrong(&'static str, String),
    NotForced(String),
}

/// A scenario: run on a fresh directory of its own.
type Scenario = fn(&Env, &Path) -> Result<Outcome, String>;

/// The five scenarios, each on a fresh repository under `env`'s scratch directory.
pub(crate) fn run_forced(env: &Env) -> ForcedRun {
    let mut run = ForcedRun::default();
    if !available() {
        run.not_forced
            .push("none forced: strace is not installed (apt-get install strace)".into());
        return run;
    }
    let scenarios: [(&'static str, Scenario); 5] = [
        ("append after commit", append_after_commit),
        ("append during compaction", append_during_compaction),
        ("failed addition", failed_addition),
        ("read across a compaction", read_across_compaction),
        (
            "compaction past a locked table",
            compaction_past_locked_table,
        ),
    ];
    for (name, scenario) in scenarios {
        let outcome = tempfile::tempdir_in(env.dir.path())
            .map_err(|e| e.to_string())
            .and_then(|dir| scenario(env, dir.path()));
        match outcome {
            Ok(Outcome::Right) => run.forced.push(name),
            Ok(Outcome::Wrong(class, detail)) => {
                run.forced.push(name);
                run.findings.push(Finding {
                    class: class.into(),
                    detail: format!("forced {name}: {detail}"),
                    expected: None,
                });
            }
            Ok(Outcome::NotForced(why)) => run.not_forced.push(format!("{name}: {why}")),
            Err(e) => run.not_forced.push(format!("{name}: {e}")),
        }
    }
    run
}

/// The stack directory of the repository at `repo`.
fn stack(repo: &Path) -> std::path::PathBuf {
    repo.join(".git/reftable")
}

/// A fresh repository at `dir` as the random round makes them, and the pool's commits.
fn fresh(env: &Env, dir: &Path) -> Result<Vec<ObjectId>, String> {
    let opts = case_options();
    init_repo(env, dir, "reftable", &opts)?;
    Ok(env.pool(opts.hash()).pool.commits.clone())
}

/// The first scenario of the module docs.
fn append_after_commit(env: &Env, dir: &Path) -> Result<Outcome, String> {
    append_while_paused(env, dir, "openat", "tables.list", false)
}

/// The second scenario of the module docs.
fn append_during_compaction(env: &Env, dir: &Path) -> Result<Outcome, String> {
    append_while_paused(env, dir, "unlink", "tables.list.lock", true)
}

/// `git update-ref refs/heads/paused` with auto-compaction, stopped at the first `syscall`
/// on `file` after its commit while another git appends `refs/heads/other`; with
/// `same_tables`, the stack must end as the unpaused run left it plus the appended table.
fn append_while_paused(
    env: &Env,
    dir: &Path,
    syscall: &str,
    file: &str,
    same_tables: bool,
) -> Result<Outcome, String> {
    let base = dir.join("base");
    let commits = fresh(env, &base)?;
    let (ours, theirs) = (commits[0].to_string(), commits[1].to_string());
    let args = ["update-ref", "refs/heads/paused", ours.as_str()];
    let dry = dir.join("dry");
    copy_dir(&base, &dry, None)?;
    let traced = trace_git(env, &dry, &args, &["openat", "unlink", "rename"])?;
    let Some(when) = pause_index(&traced, syscall, file) else {
        return Ok(Outcome::NotForced(format!(
            "no {syscall} of {file} after the commit in git's unpaused run (no auto-compaction?)"
        )));
    };
    let unpaused = table_ranges(&stack(&dry))?;
    let repo = dir.join("repo");
    copy_dir(&base, &repo, None)?;
    let other = ["update-ref", "refs/heads/other", theirs.as_str()];
    let mut appended = None;
    let paused = run_paused(env, &repo, &args, (syscall, file, when), dir, &mut || {
        appended = Some(env.git.run(&repo, &other, "", 1));
    })?;
    let Some(appended) = appended else {
        return Ok(Outcome::NotForced(paused.stderr));
    };
    if !appended.exit.success() {
        return Ok(Outcome::NotForced(format!(
            "the other writer failed while git was stopped: {}",
            appended.stderr.trim()
        )));
    }
    let refs = git_refs(env, &repo)?;
    let missing: Vec<&str> = [("refs/heads/paused", &ours), ("refs/heads/other", &theirs)]
        .into_iter()
        .filter(|(name, id)| refs.get(*name) != Some(*id))
        .map(|(name, _)| name)
        .collect();
    if !missing.is_empty() {
        return Ok(Outcome::Wrong(
            "lost update",
            format!(
                "{} was acknowledged but is not in the stack ({refs:?}); git: {:?} {:?}",
                missing.join(" and "),
                paused.exit,
                paused.stderr.trim()
            ),
        ));
    }
    if !paused.exit.success() {
        return Ok(Outcome::Wrong(
            "committed but reported failed",
            format!("git exited {:?}: {:?}", paused.exit, paused.stderr.trim()),
        ));
    }
    if let Some(stray) = stray_files(&stack(&repo))? {
        return Ok(Outcome::Wrong("stray file left behind", stray));
    }
    let got = table_ranges(&stack(&repo))?;
    let want = with_append(&unpaused);
    if same_tables && got != want {
        return Ok(Outcome::Wrong(
            "compaction lost to an append",
            format!(
                "tables by update index {got:?}; the unpaused run left {unpaused:?}, so \
                 {want:?} with the appended table"
            ),
        ));
    }
    Ok(Outcome::Right)
}

/// The third scenario of the module docs.
fn failed_addition(env: &Env, dir: &Path) -> Result<Outcome, String> {
    let commits = fresh(env, dir)?;
    let refs = ["refs/heads/a", "refs/heads/b", "refs/heads/c"];
    for r in refs {
        for c in &commits[..2] {
            env.git
                .ok(dir, &["update-ref", r, &c.to_string()], "")
                .map_err(|e| format!("set-up: {e}"))?;
        }
    }
    let mut args = vec![
        "reflog",
        "expire",
        "--expire=now",
        "--expire-unreachable=now",
    ];
    args.extend(refs);
    let lock = stack(dir).join("tables.list.lock");
    let strace = [
        "-P".to_string(),
        lock.display().to_string(),
        "-e".into(),
        "trace=chmod".into(),
        "-e".into(),
        "inject=chmod:error=EPERM:when=1".into(),
    ];
    let run = run_traced(env, dir, &args, &strace, &dir.join("trace"))?;
    if !run.trace.contains("(INJECTED)") {
        return Ok(Outcome::NotForced(
            "git made no chmod of tables.list.lock".into(),
        ));
    }
    let mut left = Vec::new();
    for r in refs {
        let out = env
            .git
            .run(dir, &["reflog", "show", "--format=%H", r], "", 0);
        left.push(out.stdout.lines().count());
    }
    if left[1..] != [0, 0] {
        return Ok(Outcome::Wrong(
            "refusal without cause",
            format!(
                "reflog expire --expire=now of a, b and c with the first chmod of \
                 tables.list.lock failing: entries left {left:?}, want a's two and none of \
                 the others' (b and c are refused after a's failure); git: {:?} {:?}",
                run.exit,
                run.stderr.trim()
            ),
        ));
    }
    if left[0] == 2 && run.exit.success() {
        return Ok(Outcome::Wrong(
            "failure not reported",
            "reflog expire kept refs/heads/a's entries, as its failed chmod must, and \
             exited 0"
                .into(),
        ));
    }
    match stray_files(&stack(dir))? {
        Some(stray) => Ok(Outcome::Wrong("stray file left behind", stray)),
        None => Ok(Outcome::Right),
    }
}

/// How a git run under strace ended.
struct Run {
    exit: Exit,
    stderr: String,
    trace: String,
}

/// The fourth scenario of the module docs.
fn read_across_compaction(env: &Env, dir: &Path) -> Result<Outcome, String> {
    let commits = fresh(env, dir)?;
    let refs = ["refs/heads/a", "refs/heads/b", "refs/heads/c"];
    // Auto-compaction is off in these writes: a table each.
    for (r, c) in refs.iter().zip(&commits) {
        env.git
            .ok(dir, &["update-ref", r, &c.to_string()], "")
            .map_err(|e| format!("set-up: {e}"))?;
    }
    let before = table_ranges(&stack(dir))?;
    if before.len() < 2 {
        return Ok(Outcome::NotForced(format!("one table only: {before:?}")));
    }
    let mut args = vec!["show-ref", "--verify"];
    args.extend(refs);
    let mut compacted = None;
    let paused = run_paused(
        env,
        dir,
        &args,
        ("read", "tables.list", 1),
        dir,
        &mut || {
            compacted = Some(env.git.run(dir, &["pack-refs"], "", 1));
        },
    )?;
    let Some(compacted) = compacted else {
        return Ok(Outcome::NotForced(paused.stderr));
    };
    let after = table_ranges(&stack(dir))?;
    if !compacted.exit.success() || after.len() != 1 {
        return Ok(Outcome::NotForced(format!(
            "the compaction while git was stopped: {:?}, tables {after:?}: {}",
            compacted.exit,
            compacted.stderr.trim()
        )));
    }
    if !paused.exit.success() {
        return Ok(Outcome::Wrong(
            "read failed across a compaction",
            format!(
                "show-ref --verify of {refs:?} exited {:?}: {:?}",
                paused.exit,
                paused.stderr.trim()
            ),
        ));
    }
    match stray_files(&stack(dir))? {
        Some(stray) => Ok(Outcome::Wrong("stray file left behind", stray)),
        None => Ok(Outcome::Right),
    }
}

/// The fifth scenario of the module docs.
fn compaction_past_locked_table(env: &Env, dir: &Path) -> Result<Outcome, String> {
    let commits = fresh(env, dir)?;
    // Auto-compaction is off in these writes: a table each.
    for (i, c) in commits.iter().cycle().take(4).enumerate() {
        let name = format!("refs/heads/t{i}");
        env.git
            .ok(dir, &["update-ref", &name, &c.to_string()], "")
            .map_err(|e| format!("set-up: {e}"))?;
    }
    let before = listed(&stack(dir))?;
    if before.len() < 4 {
        return Ok(Outcome::NotForced(format!("tables {before:?}")));
    }
    let refs = git_refs(env, dir).map_err(|e| format!("set-up: {e}"))?;
    // The second table from the bottom: the tables above it and the write's own can be
    // merged without it.
    let locked = before[1].clone();
    let lock = stack(dir).join(format!("{locked}.lock"));
    std::fs::write(&lock, b"").map_err(|e| format!("{}: {e}", lock.display()))?;
    let id = commits[0].to_string();
    let args = ["update-ref", "refs/heads/past-the-lock", &id];
    let out = env.git.run_auto(dir, &args, "", 1, true);
    let after = listed(&stack(dir))?;
    let lock_kept = lock.is_file();
    let _ = std::fs::remove_file(&lock);
    let mut want = refs;
    want.insert("refs/heads/past-the-lock".into(), id);
    let wrong = |class: &'static str, what: String| {
        let tables = format!("tables {before:?} then {after:?}");
        Ok(Outcome::Wrong(class, format!("{what}; {tables}")))
    };
    if !out.exit.success() {
        let what = format!("update-ref exited {:?}: {:?}", out.exit, out.stderr.trim());
        return wrong("write failed past a locked table", what);
    }
    if !lock_kept || !after.contains(&locked) {
        let what = format!(
            "{locked} listed {}, its lock kept {lock_kept}",
            after.contains(&locked)
        );
        return wrong("locked table compacted", what);
    }
    let got = git_refs(env, dir)?;
    if got != want {
        return wrong(
            "refs lost past a locked table",
            format!("{got:?}, expected {want:?}"),
        );
    }
    if after.len() == before.len() + 1 {
        return Ok(Outcome::NotForced(
            "git compacted nothing past the lock (as gits before 2.46 do)".into(),
        ));
    }
    match stray_files(&stack(dir))? {
        Some(stray) => Ok(Outcome::Wrong("stray file left behind", stray)),
        None => Ok(Outcome::Right),
    }
}

/// The tables `tables.list` in `stack` names, in order.
fn listed(stack: &Path) -> Result<Vec<String>, String> {
    let list = std::fs::read_to_string(stack.join("tables.list"))
        .map_err(|e| format!("{}: {e}", stack.display()))?;
    Ok(list.lines().map(str::to_string).collect())
}

/// git with `args` in `repo` (auto-compaction on) under strace with `strace_args`, the
/// trace in `log`.
fn run_traced(
    env: &Env,
    repo: &Path,
    args: &[&str],
    strace_args: &[String],
    log: &Path,
) -> Result<Run, String> {
    let mut c = strace_command(env, repo, args, strace_args, log);
    let errors = log.with_extension("stderr");
    let file = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file(&errors)?);
    let group = Group::spawn(&mut c).map_err(|e| format!("cannot run strace: {e}"))?;
    let exit = group.wait(Duration::from_secs(120));
    Ok(Run {
        exit,
        stderr: std::fs::read_to_string(&errors).unwrap_or_default(),
        trace: std::fs::read_to_string(log).unwrap_or_default(),
    })
}

/// The strace command of [`run_traced`].
fn strace_command(
    env: &Env,
    repo: &Path,
    args: &[&str],
    strace_args: &[String],
    log: &Path,
) -> Command {
    let mut git = env.git.command_auto(repo, 0, true);
    git.args(args);
    let mut a = vec![
        "-f".into(),
        "-qq".into(),
        "-o".into(),
        log.display().to_string(),
    ];
    a.extend(strace_args.iter().cloned());
    a.push("--".into());
    a.extend(program_and_args(&git));
    under_strace(&git, a)
}

/// The calls `syscalls` git makes on `tables.list` and its lock running `args` in `repo`.
fn trace_git(env: &Env, repo: &Path, args: &[&str], syscalls: &[&str]) -> Result<String, String> {
    let s = stack(repo);
    let strace = [
        "-P".to_string(),
        s.join("tables.list").display().to_string(),
        "-P".into(),
        s.join("tables.list.lock").display().to_string(),
        "-e".into(),
        format!("trace={}", syscalls.join(",")),
    ];
    let run = run_traced(env, repo, args, &strace, &repo.with_extension("trace"))?;
    if !run.exit.success() {
        return Err(format!(
            "git {args:?} failed unpaused: {:?} {:?}",
            run.exit,
            run.stderr.trim()
        ));
    }
    Ok(run.trace)
}

/// The count (from 1) of the call strace is to stop git at, among the `syscall` calls on
/// the stack's `file` in `trace`: the first such call after git's first commit of
/// `tables.list` (the rename of its lock into place).
fn pause_index(trace: &str, syscall: &str, file: &str) -> Option<usize> {
    let on = |line: &str, f: &str| line.contains(&format!("/{f}\""));
    let mut seen = 0;
    let mut committed = false;
    for line in trace.lines() {
        let call = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.split('(').next())
            .unwrap_or("");
        if call == syscall && on(line, file) {
            seen += 1;
            if committed {
                return Some(seen);
            }
        }
        if call == "rename" && on(line, "tables.list.lock") && on(line, "tables.list") {
            committed = true;
        }
    }
    None
}

/// git with `args` in `repo`, stopped at the `when`th `syscall` on the stack's `file`
/// while `meanwhile` runs, then let go. `meanwhile` does not run when git never stops
/// there (the run's `stderr` then says so).
fn run_paused(
    env: &Env,
    repo: &Path,
    args: &[&str],
    (syscall, file, when): (&str, &str, usize),
    scratch: &Path,
    meanwhile: &mut dyn FnMut(),
) -> Result<Run, String> {
    let log = scratch.join("paused.trace");
    let strace = [
        "-P".to_string(),
        stack(repo).join(file).display().to_string(),
        "-e".into(),
        format!("trace={syscall}"),
        "-e".into(),
        format!("inject={syscall}:signal=SIGSTOP:when={when}"),
    ];
    let mut c = strace_command(env, repo, args, &strace, &log);
    let errors = scratch.join("paused.stderr");
    let out = std::fs::File::create(&errors).map_err(|e| e.to_string())?;
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(out);
    let mut group = Group::spawn(&mut c).map_err(|e| format!("cannot run strace: {e}"))?;
    let stopped = wait_for_stop(&mut group, &log, Duration::from_secs(30));
    if let Some(pid) = &stopped {
        meanwhile();
        let _ = Command::new("kill")
            .args(["-CONT", pid])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let exit = group.wait(Duration::from_secs(120));
    let mut stderr = std::fs::read_to_string(&errors).unwrap_or_default();
    if stopped.is_none() {
        stderr = format!("git did not stop at {syscall} {when} of {file} ({exit:?}): {stderr}");
    }
    Ok(Run {
        exit,
        stderr,
        trace: std::fs::read_to_string(&log).unwrap_or_default(),
    })
}

/// The pid of the process strace reports stopped in `log`, once it is; none when the
/// traced command ends first or `limit` passes.
fn wait_for_stop(group: &mut Group, log: &Path, limit: Duration) -> Option<String> {
    let start = Instant::now();
    loop {
        let trace = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(line) = trace.lines().find(|l| l.contains("--- stopped by SIGSTOP")) {
            return line.split_whitespace().next().map(str::to_string);
        }
        if group.exited() || start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The update-index range of each table `tables.list` names, from the names
/// (`0x<min>-0x<max>-<random>.ref`).
fn table_ranges(stack: &Path) -> Result<Vec<(u64, u64)>, String> {
    (listed(stack)?.iter())
        .map(|name| {
            let mut parts = name.split('-');
            let mut index = || {
                let p = parts.next()?.strip_prefix("0x")?;
                u64::from_str_radix(p, 16).ok()
            };
            match (index(), index()) {
                (Some(min), Some(max)) => Ok((min, max)),
                _ => Err(format!("table name {name:?} in {}", stack.display())),
            }
        })
        .collect()
}

/// `ranges` with one table appended after them: the next update index.
fn with_append(ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let next = ranges.iter().map(|r| r.1).max().unwrap_or(0) + 1;
    let mut out = ranges.to_vec();
    out.push((next, next));
    out
}

/// A file in the stack directory that is neither `tables.list` nor a table it names.
fn stray_files(stack: &Path) -> Result<Option<String>, String> {
    let names = listed(stack).unwrap_or_default();
    let entries = std::fs::read_dir(stack).map_err(|e| format!("{}: {e}", stack.display()))?;
    let mut stray: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "tables.list" && !names.contains(n))
        .collect();
    stray.sort();
    Ok((!stray.is_empty()).then(|| format!("left in the stack directory: {}", stray.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"5932  openat(AT_FDCWD, "/r/.git/reftable/tables.list", O_RDONLY) = 3
5932  openat(AT_FDCWD, "/r/.git/reftable/tables.list.lock", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = 4
5932  rename("/r/.git/reftable/tables.list.lock", "/r/.git/reftable/tables.list") = 0
5932  openat(AT_FDCWD, "/r/.git/reftable/tables.list", O_RDONLY) = 4
5932  openat(AT_FDCWD, "/r/.git/reftable/tables.list.lock", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = 3
5932  unlink("/r/.git/reftable/tables.list.lock") = 0
5932  openat(AT_FDCWD, "/r/.git/reftable/tables.list.lock", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = 3
5932  rename("/r/.git/reftable/tables.list.lock", "/r/.git/reftable/tables.list") = 0
"#;

    #[test]
    fn the_pause_is_the_first_call_of_its_kind_after_the_commit() {
        assert_eq!(pause_index(TRACE, "openat", "tables.list"), Some(2));
        assert_eq!(pause_index(TRACE, "openat", "tables.list.lock"), Some(2));
        assert_eq!(pause_index(TRACE, "unlink", "tables.list.lock"), Some(1));
        assert_eq!(pause_index(TRACE, "chmod", "tables.list.lock"), None);
        let no_commit: String = TRACE.lines().take(2).map(|l| format!("{l}\n")).collect();
        assert_eq!(pause_index(&no_commit, "openat", "tables.list"), None);
    }

    #[test]
    fn table_ranges_come_from_the_names_and_an_append_takes_the_next_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tables.list"),
            "0x000000000001-0x000000000002-d1e65de0.ref\n0x000000000003-0x000000000003-e2acf3e8.ref\n",
        )
        .unwrap();
        let r = table_ranges(dir.path()).unwrap();
        assert_eq!(r, vec![(1, 2), (3, 3)]);
        assert_eq!(with_append(&r), vec![(1, 2), (3, 3), (4, 4)]);
        std::fs::write(dir.path().join("tables.list"), "junk\n").unwrap();
        assert!(table_ranges(dir.path()).is_err());
    }

    #[test]
    fn files_the_list_does_not_name_are_stray() {
        let dir = tempfile::tempdir().unwrap();
        let names = "0x000000000001-0x000000000001-aaaaaaaa.ref";
        std::fs::write(dir.path().join("tables.list"), format!("{names}\n")).unwrap();
        std::fs::write(dir.path().join(names), "").unwrap();
        assert_eq!(stray_files(dir.path()).unwrap(), None);
        std::fs::write(dir.path().join("tables.list.lock"), "").unwrap();
        let stray = stray_files(dir.path()).unwrap().unwrap();
        assert!(stray.contains("tables.list.lock"), "{stray}");
    }
}
