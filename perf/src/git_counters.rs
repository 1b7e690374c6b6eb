//! Complexity across git builds on exact counters: the system calls of git per operation
//! (`strace -f -c`, see [`crate::syscalls`]) for the scenarios git's reftable regressions
//! came in, beside our library's own counters on the same work, and a verdict when one git
//! build does worse than another.
//!
//! Scenarios (each at every size `n`; "per op" divides by `n`):
//! - `create-tags` / `create-heads`: one `update-ref --stdin` transaction creating `n` refs
//!   under `refs/tags/` (which makes git check for a reflog of each) or `refs/heads/`;
//! - `create-preexisting`: `n` creates of tags, half of them annotated-tag targets, in a
//!   repository that already has `n` packed branches;
//! - `for-each-ref`, `for-each-ref-no-sort`: listing `n` packed refs;
//! - `show-ref-verify`: `show-ref --verify` of `n` names in one process;
//! - `auto-compaction`: `n` single-ref `update-ref` processes with auto-compaction on;
//! - `transactions`: `n` single-ref transactions in one `update-ref --stdin` process
//!   (`start`, `create`, `commit` each), auto-compaction on: the work of a transaction
//!   without a process's start-up around it (a stack reloaded once more per transaction
//!   shows here and nowhere else);
//! - `p1401`: create `n` tags, delete them, create them again (the last one measured);
//! - `migrate-to-reftable`, `migrate-to-files`: `git refs migrate` of `n` refs, without
//!   reflogs (gits that have the command; 2.46 and 2.47 refuse to migrate reflogs).

use std::path::Path;

use reftable::refdb::{AssumeCommits, RefDb, RefDbOptions, RefUpdate};

use reftable::table::Stats;
use reftable::{ObjectId, StackOptions};
use reftable::{Signature, TzOffset};
use serde::{Deserialize, Serialize};

use crate::fit::exponent_over_sizes;
use crate::git::{create_script, delete_script, Counter, Git, GitError, GitResult};
use crate::syscalls::{Syscalls, SHOWN};

/// A scenario of the git-counter report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GitScenario {
    /// One transaction creating `n` tags.
    CreateTags,
    /// One transaction creating `n` branches.
    CreateHeads,
    /// `n` tag creates (half annotated) among `n` packed branches.
    CreatePreexisting,
    /// `for-each-ref` over `n` refs.
    ForEachRef,
    /// `for-each-ref --no-sort` over `n` refs.
    ForEachRefNoSort,
    /// `show-ref --verify` of `n` names.
    ShowRefVerify,
    /// `n` one-ref transactions, auto-compaction on.
    AutoCompaction,
    /// `n` one-ref transactions in one process, auto-compaction on.
    Transactions,
    /// p1401: re-create `n` deleted tags.
    P1401,
    /// `git refs migrate --ref-format=reftable` of `n` refs.
    MigrateToReftable,
    /// `git refs migrate --ref-format=files` of `n` refs.
    MigrateToFiles,
}

impl GitScenario {
    /// Every scenario, in report order.
    pub const ALL: [GitScenario; 11] = [
        GitScenario::CreateTags,
        GitScenario::CreateHeads,
        GitScenario::CreatePreexisting,
        GitScenario::ForEachRef,
        GitScenario::ForEachRefNoSort,
        GitScenario::ShowRefVerify,
        GitScenario::AutoCompaction,
        GitScenario::Transactions,
        GitScenario::P1401,
        GitScenario::MigrateToReftable,
        GitScenario::MigrateToFiles,
    ];

    /// Name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            GitScenario::CreateTags => "create-tags",
            GitScenario::CreateHeads => "create-heads",
            GitScenario::CreatePreexisting => "create-preexisting",
            GitScenario::ForEachRef => "for-each-ref",
            GitScenario::ForEachRefNoSort => "for-each-ref-no-sort",
            GitScenario::ShowRefVerify => "show-ref-verify",
            GitScenario::AutoCompaction => "auto-compaction",
            GitScenario::Transactions => "transactions",
            GitScenario::P1401 => "p1401",
            GitScenario::MigrateToReftable => "migrate-to-reftable",
            GitScenario::MigrateToFiles => "migrate-to-files",
        }
    }

    /// The scenario called `name`.
    pub fn from_name(name: &str) -> Option<GitScenario> {
        GitScenario::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One git's counters for one scenario: per size, the system calls per operation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GitSeries {
    /// Scenario name.
    pub scenario: String,
    /// `git --version` of the build.
    pub git: String,
    /// The binary.
    pub path: String,
    /// Sizes measured.
    pub sizes: Vec<usize>,
    /// Per shown system call (and `total`): calls per operation at each size.
    pub per_op: Vec<(String, Vec<f64>)>,
    /// Why the scenario did not run on this git, if it did not.
    pub skipped: Option<String>,
}

impl GitSeries {
    /// Calls of `name` per operation at each size.
    pub fn values(&self, name: &str) -> Option<&[f64]> {
        self.per_op
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// Run `scenario` on `git` at `sizes`.
pub fn measure(git: &Git, scenario: GitScenario, sizes: &[usize]) -> GitResult<GitSeries> {
    measure_with(git, scenario, sizes, false)
}

/// [`measure`], with the instructions git executes per operation as well (`instructions`,
/// counted by callgrind in a second run of each size) when `instructions` is set.
pub fn measure_with(
    git: &Git,
    scenario: GitScenario,
    sizes: &[usize],
    instructions: bool,
) -> GitResult<GitSeries> {
    let version = git.version()?;
    let mut per: Vec<(String, Vec<f64>)> =
        SHOWN.iter().map(|s| (s.to_string(), Vec::new())).collect();
    if instructions {
        per.push(("instructions".to_string(), Vec::new()));
    }
    let mut skipped = None;
    for &n in sizes {
        let counted = run_once(git, scenario, n, Tool::Syscalls).and_then(|mut calls| {
            if instructions {
                let ir = run_once(git, scenario, n, Tool::Instructions)?;
                calls
                    .0
                    .insert("instructions".into(), ir.get("instructions"));
            }
            Ok(calls)
        });
        match counted {
            Ok(calls) => {
                for (name, vals) in per.iter_mut() {
                    vals.push(calls.get(name) as f64 / n as f64);
                }
            }
            Err(Skip::NotSupported(why)) => {
                skipped = Some(why);
                break;
            }
            Err(Skip::Failed(e)) => return Err(e),
        }
    }
    Ok(GitSeries {
        scenario: scenario.name().to_string(),
        git: version,
        path: git.path().display().to_string(),
        sizes: if skipped.is_some() {
            Vec::new()
        } else {
            sizes.to_vec()
        },
        per_op: if skipped.is_some() { Vec::new() } else { per },
        skipped,
    })
}

enum Skip {
    NotSupported(String),
    Failed(GitError),
}

impl From<GitError> for Skip {
    fn from(e: GitError) -> Skip {
        Skip::Failed(e)
    }
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:06}")).collect()
}

/// What a measurement counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    /// System calls by kind (`strace`).
    Syscalls,
    /// Instructions (`callgrind`), as the one counter `instructions`.
    Instructions,
}

/// The counters of the measured step of `scenario` at size `n`.
fn run_once(git: &Git, scenario: GitScenario, n: usize, tool: Tool) -> Result<Syscalls, Skip> {
    let dir = tempfile::tempdir().map_err(|e| GitError(format!("temp dir: {e}")))?;
    let repo = dir.path().join("repo");
    let trace = dir.path().join("trace");
    let traced = |args: &[&str], stdin: &[u8]| -> GitResult<Syscalls> {
        if tool == Tool::Instructions {
            let out =
                tempfile::tempdir_in(dir.path()).map_err(|e| GitError(format!("temp dir: {e}")))?;
            git.run_counted(&repo, args, stdin, Counter::Callgrind(out.path()))?;
            let n = crate::instructions::sum_dir(out.path())
                .map_err(|e| GitError(format!("callgrind output: {e}")))?;
            return Ok(Syscalls(
                [("instructions".to_string(), n)].into_iter().collect(),
            ));
        }
        git.run_counted(&repo, args, stdin, Counter::Strace(&trace))?;
        let text =
            std::fs::read_to_string(&trace).map_err(|e| GitError(format!("strace output: {e}")))?;
        Ok(Syscalls::parse(&text))
    };
    let migrate = matches!(
        scenario,
        GitScenario::MigrateToReftable | GitScenario::MigrateToFiles
    );
    if migrate {
        let from = if scenario == GitScenario::MigrateToReftable {
            "files"
        } else {
            "reftable"
        };
        let to = if from == "files" { "reftable" } else { "files" };
        let r = repo.to_string_lossy().into_owned();
        git.run(
            dir.path(),
            &["init", "-q", &format!("--ref-format={from}"), &r],
            b"",
        )?;
        if !has_refs_migrate(git, &repo) {
            return Err(Skip::NotSupported(
                "no `git refs migrate` (git < 2.46)".into(),
            ));
        }
        // Without reflogs, so every git that migrates does the same work (2.46 and 2.47
        // refuse to migrate reflogs).
        git.run(&repo, &["config", "core.logAllRefUpdates", "false"], b"")?;
        let commit = git.commit(&repo)?;
        git.update_ref_stdin(&repo, &create_script(&names("refs/heads/m-", n), &commit))?;
        let arg = format!("--ref-format={to}");
        return Ok(traced(&["refs", "migrate", &arg], b"")?);
    }
    git.init_reftable(&repo)?;
    let commit = git.commit(&repo)?;
    let s = match scenario {
        GitScenario::CreateTags => traced(
            &["update-ref", "--stdin"],
            &create_script(&names("refs/tags/t-", n), &commit),
        )?,
        GitScenario::CreateHeads => traced(
            &["update-ref", "--stdin"],
            &create_script(&names("refs/heads/b-", n), &commit),
        )?,
        GitScenario::CreatePreexisting => {
            git.update_ref_stdin(&repo, &create_script(&names("refs/heads/p-", n), &commit))?;
            git.run(&repo, &["pack-refs"], b"")?;
            let text = format!(
                "object {commit}\ntype commit\ntag a\ntagger C O Mitter <c@example.com> 1112911993 -0700\n\nannotated\n"
            );
            let (tag, _) = git.run(&repo, &["mktag"], text.as_bytes())?;
            let tag = String::from_utf8_lossy(&tag).trim().to_string();
            let mut script = String::new();
            for (i, name) in names("refs/tags/n-", n).iter().enumerate() {
                let target = if i % 2 == 0 { &tag } else { &commit };
                script.push_str(&format!("create {name} {target}\n"));
            }
            traced(&["update-ref", "--stdin"], script.as_bytes())?
        }
        GitScenario::ForEachRef | GitScenario::ForEachRefNoSort => {
            git.update_ref_stdin(&repo, &create_script(&names("refs/heads/f-", n), &commit))?;
            git.run(&repo, &["pack-refs"], b"")?;
            if scenario == GitScenario::ForEachRef {
                traced(&["for-each-ref"], b"")?
            } else {
                traced(&["for-each-ref", "--no-sort"], b"")?
            }
        }
        GitScenario::ShowRefVerify => {
            let all = names("refs/heads/s-", n);
            git.update_ref_stdin(&repo, &create_script(&all, &commit))?;
            git.run(&repo, &["pack-refs"], b"")?;
            let mut args = vec!["show-ref", "--verify", "--quiet"];
            args.extend(all.iter().map(String::as_str));
            traced(&args, b"")?
        }
        GitScenario::AutoCompaction => {
            let mut sum = Syscalls::default();
            for name in names("refs/heads/c-", n) {
                sum.add(&traced(&["update-ref", &name, &commit], b"")?);
            }
            sum
        }
        GitScenario::Transactions => {
            let mut script = String::new();
            for name in names("refs/heads/s-", n) {
                script.push_str(&format!("start\ncreate {name} {commit}\ncommit\n"));
            }
            traced(&["update-ref", "--stdin"], script.as_bytes())?
        }
        GitScenario::P1401 => {
            let (tree, _) = git.run(&repo, &["hash-object", "-w", "--stdin"], b"foo\n")?;
            let blob = String::from_utf8_lossy(&tree).trim().to_string();
            let tags = names("refs/tags/tag-", n);
            git.update_ref_stdin(&repo, &create_script(&tags, &blob))?;
            git.update_ref_stdin(&repo, &delete_script(&tags))?;
            traced(&["update-ref", "--stdin"], &create_script(&tags, &blob))?
        }
        GitScenario::MigrateToReftable | GitScenario::MigrateToFiles => unreachable!(),
    };
    Ok(s)
}

fn has_refs_migrate(git: &Git, dir: &Path) -> bool {
    // `git refs migrate -h` exits 129 with its usage on gits that have it.
    let out = git.command(dir).args(["refs", "migrate", "-h"]).output();
    out.is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout).contains("--ref-format")
            || String::from_utf8_lossy(&o.stderr).contains("--ref-format")
    })
}

/// A finding of [`compare`]: build `b` does worse than build `a` on a scenario.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Regression {
    /// Scenario name.
    pub scenario: String,
    /// The counter (system call name or `total`).
    pub counter: String,
    /// What moved, in words.
    pub detail: String,
}

/// Smallest per-op increase (calls) a ratio must also exceed to count: a scenario whose
/// count goes from 0.01 to 0.02 calls per operation has not regressed.
const MIN_ABSOLUTE: f64 = 0.5;

/// Regressions of `b` against `a` (same scenario, same sizes): a fitted exponent up by 0.3
/// or more, or calls per operation at the largest size up 1.5× or more (and by at least half
/// a call).
pub fn compare(a: &GitSeries, b: &GitSeries) -> Vec<Regression> {
    let mut out = Vec::new();
    if a.skipped.is_some() || b.skipped.is_some() || a.sizes != b.sizes || a.sizes.is_empty() {
        return out;
    }
    for (name, av) in &a.per_op {
        let Some(bv) = b.values(name) else { continue };
        let (la, lb) = (*av.last().expect("sizes"), *bv.last().expect("sizes"));
        if lb >= 1.5 * la && lb - la >= MIN_ABSOLUTE {
            out.push(Regression {
                scenario: a.scenario.clone(),
                counter: name.clone(),
                detail: format!(
                    "{name} per op at n={}: {la:.2} -> {lb:.2} ({:.1}x)",
                    a.sizes.last().expect("sizes"),
                    lb / la.max(1e-9)
                ),
            });
            continue;
        }
        if let (Some(ea), Some(eb)) = (
            exponent_over_sizes(&a.sizes, av),
            exponent_over_sizes(&b.sizes, bv),
        ) {
            if eb - ea >= 0.3 && lb - la >= MIN_ABSOLUTE {
                out.push(Regression {
                    scenario: a.scenario.clone(),
                    counter: name.clone(),
                    detail: format!("{name} per-op growth exponent {ea:.2} -> {eb:.2}"),
                });
            }
        }
    }
    out
}

/// The Markdown report: per scenario one table with a row per git.
pub fn markdown(series: &[GitSeries], regressions: &[Regression]) -> String {
    let mut s = String::from("# git system calls per operation, by scenario and build\n\n");
    s.push_str(
        "Counted with `strace -f -c` (every process git starts included), divided by the \
         scenario's size. Exact and independent of machine load: two builds measured on \
         different days compare.\n\n",
    );
    if series.iter().any(|x| x.values("instructions").is_some()) {
        s.push_str(
            "`instructions` rows: instructions executed by git and every process it starts \
             (`valgrind --tool=callgrind --trace-children=yes`, a second run of the same \
             step), per operation.\n\n",
        );
    }
    let mut scenarios: Vec<&str> = series.iter().map(|x| x.scenario.as_str()).collect();
    scenarios.dedup();
    for sc in scenarios {
        s.push_str(&format!("## {sc}\n\n"));
        let rows: Vec<&GitSeries> = series.iter().filter(|x| x.scenario == sc).collect();
        let sizes = rows
            .iter()
            .find(|r| !r.sizes.is_empty())
            .map(|r| r.sizes.clone())
            .unwrap_or_default();
        s.push_str("| implementation | system call (git) or counter (ours) |");
        for n in &sizes {
            s.push_str(&format!(" n={n} |"));
        }
        s.push_str(" exponent |\n|---|---|");
        for _ in &sizes {
            s.push_str("---:|");
        }
        s.push_str("---:|\n");
        for r in rows {
            if let Some(why) = &r.skipped {
                s.push_str(&format!("| {} | not run: {why} |\n", r.git));
                continue;
            }
            for (name, vals) in &r.per_op {
                s.push_str(&format!("| {} | {name} |", r.git));
                for v in vals {
                    s.push_str(&format!(" {v:.2} |"));
                }
                let e = exponent_over_sizes(&r.sizes, vals)
                    .map_or("".to_string(), |e| format!("{e:.2}"));
                s.push_str(&format!(" {e} |\n"));
            }
        }
        s.push('\n');
    }
    s.push_str("## Verdict\n\n");
    if regressions.is_empty() {
        s.push_str("No build does worse than the first beyond the thresholds (exponent +0.3, or 1.5x calls per operation at the largest size).\n");
    } else {
        for r in regressions {
            s.push_str(&format!(
                "- **regression** in {}: {}\n",
                r.scenario, r.detail
            ));
        }
    }
    s
}

/// Our library on the same scenario, with its own counters per operation (records decoded,
/// blocks read, `tables.list` reads and stats, fsyncs, ...): the row the report puts beside
/// git's. The migrations are `FilesRefs::read` + `RefDb::import` of `n` packed branches and
/// `RefDb::export_files` of a stack of `n` branches.
pub fn measure_ours(scenario: GitScenario, sizes: &[usize]) -> reftable::Result<GitSeries> {
    let ours = OursRun::new(scenario);
    let mut counters: Vec<(String, Vec<f64>)> = Vec::new();
    for &n in sizes {
        let spent = ours.measure(n)?;
        for (i, (name, v)) in spent.counters().iter().enumerate() {
            if counters.len() <= i {
                counters.push((name.to_string(), Vec::new()));
            }
            counters[i].1.push(*v as f64 / n as f64);
        }
    }
    Ok(GitSeries {
        scenario: scenario.name().to_string(),
        git: "ours (reftable-rs)".to_string(),
        path: String::new(),
        sizes: sizes.to_vec(),
        per_op: counters
            .into_iter()
            .filter(|(_, v)| v.iter().any(|x| *x > 0.0))
            .collect(),
        skipped: None,
    })
}

/// One scenario on our library, and what its updates write: the committer, a commit and an
/// annotated tag (the object ids taken on trust).
struct OursRun {
    scenario: GitScenario,
    me: Signature,
    commit: ObjectId,
    tag: ObjectId,
}

impl OursRun {
    fn new(scenario: GitScenario) -> OursRun {
        OursRun {
            scenario,
            me: Signature {
                name: b"C O Mitter".to_vec(),
                email: b"committer@example.com".to_vec(),
                time: 1_112_911_993,
                tz_offset: TzOffset::from_hhmm(-700),
            },
            commit: ObjectId::from_hex("1c2a7e431f340e344b233e7a96a11e55310b1471").expect("hex"),
            tag: ObjectId::from_hex("2d3b8f542f451f455c344c8ba7b22f66421c2582").expect("hex"),
        }
    }

    /// The counters the measured step spends at size `n`, on a fresh stack (with a files
    /// repository beside it for the migrations) after the scenario's setup.
    fn measure(&self, n: usize) -> reftable::Result<Stats> {
        let dir = tempfile::tempdir().map_err(|e| reftable::Error::io(e, "temp dir"))?;
        // The files-backend side of the migrations: `.git` beside the stack.
        let files = tempfile::tempdir().map_err(|e| reftable::Error::io(e, "temp dir"))?;
        let mut db = self.open(dir.path())?;
        self.set_up(&mut db, n, files.path())?;
        let mut ledger = crate::scenarios::TableLedger::new(db.stack());
        let before = ledger.stats(db.stack());
        self.run_measured(&mut db, &mut ledger, n, files.path())?;
        ledger.settle(db.stack());
        Ok(ledger.stats(db.stack()).since(before))
    }

    /// The stack in `dir` with the library's defaults, auto-compaction on for the
    /// scenarios that measure it.
    fn open(&self, dir: &Path) -> reftable::Result<RefDb> {
        let auto = matches!(
            self.scenario,
            GitScenario::AutoCompaction | GitScenario::Transactions
        );
        RefDb::open_or_create(
            dir,
            // The library's defaults (fsync on), as a user gets them; git syncs reftables
            // only when `core.fsync` names references, which its default does not.
            RefDbOptions::default().stack(StackOptions::default().auto_compaction(auto)),
        )
    }

    /// The scenario's setup, not measured: the refs (or the files repository) it starts
    /// from.
    fn set_up(&self, db: &mut RefDb, n: usize, files: &Path) -> reftable::Result<()> {
        let (me, commit) = (&self.me, self.commit);
        match self.scenario {
            GitScenario::CreatePreexisting => {
                db.transaction(
                    &creations("refs/heads/p-", n, &|_| commit),
                    me,
                    &AssumeCommits,
                )?;
            }
            GitScenario::ForEachRef
            | GitScenario::ForEachRefNoSort
            | GitScenario::ShowRefVerify => {
                db.transaction(
                    &creations("refs/heads/f-", n, &|_| commit),
                    me,
                    &AssumeCommits,
                )?;
            }
            GitScenario::MigrateToReftable => write_packed_branches(files, n, commit)?,
            GitScenario::MigrateToFiles => {
                db.transaction(
                    &creations("refs/heads/m-", n, &|_| commit),
                    me,
                    &AssumeCommits,
                )?;
            }
            GitScenario::P1401 => {
                let tags = creations("refs/tags/tag-", n, &|_| commit);
                db.transaction(&tags, me, &AssumeCommits)?;
                let del: Vec<RefUpdate> = (0..n)
                    .map(|i| RefUpdate::delete(format!("refs/tags/tag-{i:06}"), None))
                    .collect();
                db.transaction(&del, me, &AssumeCommits)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The scenario's measured step, settling `ledger` after each transaction where there
    /// are several.
    fn run_measured(
        &self,
        db: &mut RefDb,
        ledger: &mut crate::scenarios::TableLedger,
        n: usize,
        files: &Path,
    ) -> reftable::Result<()> {
        let (me, commit, tag) = (&self.me, self.commit, self.tag);
        match self.scenario {
            GitScenario::CreateTags => db
                .transaction(
                    &creations("refs/tags/t-", n, &|_| commit),
                    me,
                    &AssumeCommits,
                )
                .map(drop)?,
            GitScenario::CreateHeads => db
                .transaction(
                    &creations("refs/heads/b-", n, &|_| commit),
                    me,
                    &AssumeCommits,
                )
                .map(drop)?,
            GitScenario::CreatePreexisting => db
                .transaction(
                    &creations("refs/tags/n-", n, &|i| {
                        if i % 2 == 0 {
                            tag
                        } else {
                            commit
                        }
                    }),
                    me,
                    &AssumeCommits,
                )
                .map(drop)?,
            GitScenario::ForEachRef | GitScenario::ForEachRefNoSort => {
                let mut it = db.refs()?;
                while it.next_record()?.is_some() {}
            }
            GitScenario::ShowRefVerify => {
                for i in 0..n {
                    db.read_ref(format!("refs/heads/f-{i:06}").as_bytes())?;
                }
            }
            GitScenario::AutoCompaction | GitScenario::Transactions => {
                for i in 0..n {
                    let u = RefUpdate::create(format!("refs/heads/c-{i:06}"), commit);
                    db.transaction(&[u], me, &AssumeCommits)?;
                    ledger.settle(db.stack());
                }
            }
            GitScenario::P1401 => db
                .transaction(
                    &creations("refs/tags/tag-", n, &|_| commit),
                    me,
                    &AssumeCommits,
                )
                .map(drop)?,
            GitScenario::MigrateToReftable => {
                let refs = reftable::refdb::FilesRefs::read(files, reftable::HashId::Sha1)?;
                db.import(&refs, &AssumeCommits)?;
            }
            GitScenario::MigrateToFiles => db.export_files(files, &AssumeCommits)?,
        }
        Ok(())
    }
}

/// `n` creations of `{prefix}{i:06}`, each pointing at `target(i)`.
fn creations(prefix: &str, n: usize, target: &dyn Fn(usize) -> ObjectId) -> Vec<RefUpdate> {
    (0..n)
        .map(|i| RefUpdate::create(format!("{prefix}{i:06}"), target(i)))
        .collect::<Vec<_>>()
}

/// A files repository in `files` of `n` packed branches at `commit`, as `git pack-refs`
/// leaves them, and `HEAD` on the first.
fn write_packed_branches(files: &Path, n: usize, commit: ObjectId) -> reftable::Result<()> {
    let mut packed = String::from("# pack-refs with: peeled fully-peeled sorted \n");
    for i in 0..n {
        packed.push_str(&format!("{commit} refs/heads/m-{i:06}\n"));
    }
    let w = |name: &str, text: &str| {
        std::fs::write(files.join(name), text)
            .map_err(|e| reftable::Error::io(e, "write files repository"))
    };
    w("packed-refs", &packed)?;
    w("HEAD", "ref: refs/heads/m-000000\n")?;
    Ok(())
}

/// A log-log plot per scenario: every git's system calls per operation (total) and our
/// blocks read per operation, over the sizes.
pub fn svg(series: &[GitSeries]) -> String {
    use crate::report::{panel, Line};
    use std::fmt::Write;
    const PALETTE: [&str; 8] = [
        "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    ];
    let mut scenarios: Vec<&str> = series.iter().map(|x| x.scenario.as_str()).collect();
    scenarios.dedup();
    let (pw, ph, cols) = (460.0, 300.0, 2usize);
    let rows = scenarios.len().div_ceil(cols);
    let mut out = String::new();
    let (w, h) = (pw * cols as f64, ph * rows as f64 + 30.0);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14">git builds: system calls per operation (log-log); ours: blocks read per operation</text>"#,
        w / 2.0
    );
    for (k, sc) in scenarios.iter().enumerate() {
        let mut lines = Vec::new();
        for (i, s) in series.iter().filter(|x| x.scenario == *sc).enumerate() {
            let (name, label) = if s.path.is_empty() {
                ("blocks_read", format!("{} blocks read", s.git))
            } else {
                (
                    "total",
                    s.git.trim_start_matches("git version ").to_string(),
                )
            };
            let Some(vals) = s.values(name) else { continue };
            lines.push(Line {
                label,
                color: if s.path.is_empty() {
                    "#1f77b4"
                } else {
                    PALETTE[i % PALETTE.len()]
                },
                points: s
                    .sizes
                    .iter()
                    .map(|&n| n as f64)
                    .zip(vals.iter().copied())
                    .collect(),
            });
        }
        let (x0, y0) = ((k % cols) as f64 * pw, 30.0 + (k / cols) as f64 * ph);
        panel(&mut out, x0, y0, pw, ph, sc, &lines);
    }
    out.push_str("</svg>\n");
    out
}
