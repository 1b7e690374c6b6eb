//! The migration mode: files-backend repositories made by replaying the gate's cases with
//! git (loose refs, `packed-refs` after the cases' `pack-refs`, reflogs in `logs/`), moved to
//! reftable by `git refs migrate --ref-format=reftable` (a dry run, then the real one) and
//! by our [`reftable::refdb::RefDb::import`]; the tables must be byte for byte the same, and
//! git must read the migrated repository as the files one.
//!
//! Where git's migration is known to differ by version (2.48 to 2.51 number each reflog on
//! its own and lose old ids and identities, 2.55 drops peeled values), the difference is
//! classified from the records and matched against [`KNOWN`]; gits that cannot migrate
//! reflogs (2.46, 2.47, by the probe) get repositories without them.

use std::collections::BTreeMap;
use std::path::Path;

use reftable::refdb::{FilesRefs, RefDb, RefDbOptions};
use reftable::{LogRecord, RefRecord, StackOptions, Table, WriteOptions};
use serde::Serialize;

use crate::generated::case::run_generated;

use crate::finding::script::{git_invocation, ticks};
use crate::git::version::VersionRange;
use crate::setup::env::{init_repo, Env};
use crate::setup::pool::PoolObjects;

/// Longest ref name replayed on a files repository (see [`run_migrate`]).
const LONGEST_LOOSE_NAME: usize = 1000;

/// A git migration defect: differences of this class on gits in `versions` are expected.
#[derive(Clone, Copy, Debug)]
pub struct KnownMigrationDefect {
    /// Identifier.
    pub id: &'static str,
    /// git versions.
    pub versions: &'static str,
    /// The difference class it explains.
    pub class: &'static str,
    /// The evidence.
    pub evidence: &'static str,
}

/// git's migration defects by version.
pub const KNOWN: &[KnownMigrationDefect] = &[
    KnownMigrationDefect {
        id: "migrate-reflog-index-per-reflog",
        versions: ">= 2.48.0, < 2.52.0",
        class: "log update indexes",
        evidence: "each reflog's entries numbered from 1 on their own, so entries of different refs share update indexes; one counter for all reflogs since 2f530e5d0a (2.52.0)",
    },
    KnownMigrationDefect {
        id: "migrate-reflog-old-ids-and-identity",
        versions: ">= 2.48.0, < 2.51.1",
        class: "log old ids or identity",
        evidence: "old ids written as null and the identity rebuilt from the login name; fixed by 465eff81de and ec922e0d30 (2.51.1)",
    },
    KnownMigrationDefect {
        id: "migrate-back-reflog-old-ids-and-identity",
        versions: ">= 2.48.0, < 2.51.1",
        class: "files: reflogs",
        evidence: "reftable to files: each line's old id is the ref's value when it was locked, and the identity is rebuilt from the login name; fixed by 465eff81de and ec922e0d30 (2.51.1)",
    },
    KnownMigrationDefect {
        id: "migrate-back-packed-refs-unpeeled",
        versions: ">= 2.55.0",
        class: "files: packed-refs",
        evidence: "packed-refs written without peel lines under a header that says fully-peeled: peeling moved to the generic layer (3ab3d5077d), skipped under REF_SKIP_OID_VERIFICATION",
    },
    KnownMigrationDefect {
        id: "migrate-annotated-tags-unpeeled",
        versions: ">= 2.55.0",
        class: "ref values",
        evidence: "peeling moved to the generic layer (3ab3d5077d), which skips it under REF_SKIP_OID_VERIFICATION, as the migration passes: annotated tags are written without their peeled value",
    },
];

/// One migration that did not match.
#[derive(Clone, Debug, Serialize)]
pub struct MigrationDivergence {
    /// The case.
    pub case: String,
    /// What differs (`table bytes`, `git refused`, ...).
    pub class: String,
    /// Details.
    pub detail: String,
    /// The known git defect it matches, if any.
    pub expected: Option<String>,
}

/// The mode's report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MigrationReport {
    /// git.
    pub git: String,
    /// Its version.
    pub version: String,
    /// Cases.
    pub cases: u64,
    /// Operations replayed on files repositories.
    pub operations: u64,
    /// Migrations compared (git's and ours).
    pub migrations: u64,
    /// Whether reflogs were migrated (the git can).
    pub with_reflogs: bool,
    /// Refs and reflog entries over all migrated repositories.
    pub refs: u64,
    /// Reflog entries.
    pub log_entries: u64,
    /// Tables compared byte for byte and equal.
    pub identical_tables: u64,
    /// Divergences.
    pub divergences: Vec<MigrationDivergence>,
    /// Cases left out, and why.
    pub skipped: Vec<String>,
    /// Migrations back to files compared (git's layout against ours).
    pub back_compared: u64,
    /// Of those, identical file trees.
    pub back_identical: u64,
    /// Migrations git and we both refused (a record too large for the block size).
    pub both_refused: u64,
    /// Seconds.
    pub seconds: f64,
}

impl MigrationReport {
    /// Divergences no known git defect explains.
    pub fn unexpected(&self) -> usize {
        self.divergences
            .iter()
            .filter(|d| d.expected.is_none())
            .count()
    }
}

fn records(bytes: &[u8]) -> Result<(Vec<RefRecord>, Vec<LogRecord>), String> {
    let t = Table::from_bytes("t", bytes.to_vec()).map_err(|e| e.to_string())?;
    let refs = t
        .refs()
        .and_then(|it| it.collect::<reftable::Result<Vec<_>>>())
        .map_err(|e| e.to_string())?;
    let logs = t
        .logs()
        .and_then(|it| it.collect::<reftable::Result<Vec<_>>>())
        .map_err(|e| e.to_string())?;
    Ok((refs, logs))
}

/// What differs between git's table and ours, as a class (for [`KNOWN`]) and a detail.
fn classify_difference(git: &[u8], ours: &[u8]) -> (String, String) {
    let (Ok((gr, gl)), Ok((or, ol))) = (records(git), records(ours)) else {
        return ("table bytes".into(), "a table cannot be read back".into());
    };
    if gr != or {
        let first = gr
            .iter()
            .zip(&or)
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("git {a:?}, ours {b:?}"))
            .unwrap_or_else(|| format!("{} refs in git's, {} in ours", gr.len(), or.len()));
        return ("ref values".into(), first);
    }
    let key = |l: &LogRecord| (l.refname.clone(), l.update_index);
    if gl.iter().map(key).collect::<Vec<_>>() != ol.iter().map(key).collect::<Vec<_>>() {
        let g: Vec<_> = gl
            .iter()
            .map(|l| {
                (
                    String::from_utf8_lossy(&l.refname).into_owned(),
                    l.update_index,
                )
            })
            .take(8)
            .collect();
        let o: Vec<_> = ol
            .iter()
            .map(|l| {
                (
                    String::from_utf8_lossy(&l.refname).into_owned(),
                    l.update_index,
                )
            })
            .take(8)
            .collect();
        return (
            "log update indexes".into(),
            format!("git {g:?}, ours {o:?}"),
        );
    }
    if let Some((a, b)) = gl.iter().zip(&ol).find(|(a, b)| a != b) {
        let (ua, ub) = (a.update(), b.update());
        let same_but_ids = match (ua, ub) {
            (Some(x), Some(y)) => x.message == y.message && x.new_id == y.new_id,
            _ => false,
        };
        let class = if same_but_ids {
            "log old ids or identity"
        } else {
            "log entries"
        };
        return (class.into(), format!("git {a:?}, ours {b:?}"));
    }
    ("table bytes".into(), "same records, different bytes".into())
}

/// The one table of the stack in `dir`.
fn only_table(dir: &Path) -> Result<Vec<u8>, String> {
    let list = std::fs::read_to_string(dir.join("tables.list"))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let names: Vec<&str> = list.lines().collect();
    if names.len() != 1 {
        return Err(format!("{} tables listed, not 1", names.len()));
    }
    std::fs::read(dir.join(names[0])).map_err(|e| e.to_string())
}

/// Every file and directory under `dir` (relative path, contents; `None` for a directory).
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
            if p.is_dir() {
                stack.push(p);
                out.insert(rel, None);
            } else {
                out.insert(rel, std::fs::read(&p).ok());
            }
        }
    }
    out
}

/// Where git's files layout and ours differ: a class (for [`KNOWN`]) and the first path.
fn tree_difference(git: &Path, ours: &Path) -> Option<(&'static str, String)> {
    let (g, o) = (tree(git), tree(ours));
    let paths: std::collections::BTreeSet<&String> = g.keys().chain(o.keys()).collect();
    let differs: Vec<&String> = paths
        .into_iter()
        .filter(|p| g.get(*p) != o.get(*p))
        .collect();
    let first = differs.first()?;
    let class = if first.as_str() == "packed-refs" {
        "files: packed-refs"
    } else if first.starts_with("logs") {
        "files: reflogs"
    } else {
        "files: loose refs and layout"
    };
    let show = |m: &BTreeMap<String, Option<Vec<u8>>>| match m.get(*first) {
        None => "absent".to_string(),
        Some(None) => "a directory".to_string(),
        Some(Some(b)) => String::from_utf8_lossy(&b[..b.len().min(400)]).into_owned(),
    };
    Some((
        class,
        format!("{first}: git {:?}, ours {:?}", show(&g), show(&o)),
    ))
}

/// The refs git shows in `repo`, for comparing before and after a migration.
fn git_refs(env: &Env, repo: &Path) -> String {
    let fmt = "--format=%(refname) %(objectname) %(symref)";
    let mut args = vec!["for-each-ref", fmt];
    if env.profile.features.include_root_refs {
        args.insert(1, "--include-root-refs");
    }
    env.git.run(repo, &args, "", 0).stdout
}

/// Run the mode over `cases` cases of `seed` against the git of `env`.
pub fn run_migrate(
    env: &Env,
    seed: u64,
    cases: u64,
    ops: usize,
) -> Result<MigrationReport, String> {
    let start = std::time::Instant::now();
    let version = env.profile.git_version();
    let mut report = MigrationReport {
        git: env.git.bin().display().to_string(),
        version: env.git.version().to_string(),
        with_reflogs: env.profile.features.migrate_reflogs,
        ..Default::default()
    };
    if !env.profile.features.refs_migrate {
        return Err(format!(
            "git {} has no `git refs migrate` (2.46+)",
            env.git.version()
        ));
    }
    let scratch = tempfile::tempdir_in(env.dir.path()).map_err(|e| e.to_string())?;
    // REFTABLE_MIGRATE_KEEP=DIR keeps every case's repositories there, for a look.
    let keep = std::env::var_os("REFTABLE_MIGRATE_KEEP").map(std::path::PathBuf::from);
    let scratch_path = keep.clone().unwrap_or_else(|| scratch.path().to_path_buf());
    for index in 0..cases {
        let case = format!("seed{seed}-case{index}");
        let result = run_generated(env, seed, index, ops)?;
        let opts = result.options.ok_or("a case without options")?;
        report.cases += 1;
        let dir = scratch_path.join(&case);
        let files = dir.join("files");
        std::fs::create_dir_all(&files).map_err(|e| e.to_string())?;
        init_repo(env, &files, "files", &opts)?;
        let skip = |why: String, report: &mut MigrationReport| {
            report.skipped.push(format!("{case}: {why}"));
        };
        for (op, tick) in result.ops.iter().zip(ticks(&result.ops)) {
            // A loose ref is a file: names of thousands of bytes make paths longer than the
            // system takes (git refuses them there; they would only be left out).
            if op
                .touched_refs()
                .iter()
                .any(|n| n.len() > LONGEST_LOOSE_NAME)
            {
                continue;
            }
            let (args, stdin) = git_invocation(op);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            env.git
                .run(&files, &args, stdin.as_deref().unwrap_or(""), tick);
            report.operations += 1;
        }
        if !report.with_reflogs {
            let _ = std::fs::remove_dir_all(files.join(".git/logs"));
        }
        // A files repository without HEAD is no repository: the cases delete HEAD at times.
        let head = files.join(".git/HEAD");
        if !head.exists() {
            std::fs::write(&head, "ref: refs/heads/main\n").map_err(|e| e.to_string())?;
        }
        let before = git_refs(env, &files);
        // git: a dry run (the table stays in .git/ref_migration.*), then the real one.
        let dry = dir.join("dry");
        if let Err(e) = crate::stack_files::copy_dir(&files, &dry, None) {
            // Names too long for a path (the gate's 4,000-byte refs) cannot be loose refs.
            skip(
                format!("the files repository cannot be copied: {e}"),
                &mut report,
            );
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        let o = env.git.run(
            &dry,
            &["refs", "migrate", "--ref-format=reftable", "--dry-run"],
            "",
            0,
        );
        let diverge = |class: &str, detail: String, report: &mut MigrationReport| {
            let expected = KNOWN
                .iter()
                .find(|k| {
                    k.class == class
                        && VersionRange::parse(k.versions).is_ok_and(|r| r.contains(&version))
                })
                .map(|k| k.id.to_string());
            report.divergences.push(MigrationDivergence {
                case: case.clone(),
                class: class.into(),
                detail,
                expected,
            });
        };
        // Ours, on the same files.
        let ours_dir = dir.join("ours");
        let hash = opts.hash();
        let fitted = crate::generated::executor::fit(opts, &env.profile);
        let db_opts = RefDbOptions {
            stack: StackOptions {
                write: WriteOptions {
                    block_size: fitted.block_size,
                    restart_interval: fitted.restart_interval,
                    index_objects: fitted.index_objects,
                    hash,
                    ..Default::default()
                },
                auto_compaction: false,
                fsync: false,
                ..Default::default()
            },
            ..Default::default()
        };
        let ours = (|| -> Result<Vec<u8>, String> {
            let refs = FilesRefs::read(&files.join(".git"), hash).map_err(|e| e.to_string())?;
            let mut db = RefDb::open(&ours_dir, db_opts).map_err(|e| e.to_string())?;
            db.import(&refs, &PoolObjects(&env.pool(hash).pool))
                .map_err(|e| format!("{:?}: {e}", e.kind()))?;
            only_table(&ours_dir)
        })();
        if !o.exit.success() {
            // Both refusing a record too large for the block size is agreement.
            let too_big = o.stderr.contains("entry too large");
            match &ours {
                Err(e) if too_big && e.starts_with("EntryTooBig") => report.both_refused += 1,
                _ => diverge(
                    "git refused",
                    format!(
                        "{:?}: {}; ours: {:?}",
                        o.exit,
                        o.stderr.trim(),
                        ours.as_ref().map(|_| "a table")
                    ),
                    &mut report,
                ),
            }
            continue;
        }
        let ours = match ours {
            Ok(t) => t,
            Err(e) => {
                diverge("ours refused", e, &mut report);
                continue;
            }
        };
        let tmp = o
            .stdout
            .split('\'')
            .nth(1)
            .map(|p| dry.join(p).join("reftable"))
            .filter(|p| p.exists())
            .or_else(|| {
                std::fs::read_dir(dry.join(".git"))
                    .ok()?
                    .flatten()
                    .find(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .starts_with("ref_migration.")
                    })
                    .map(|e| e.path().join("reftable"))
            });
        let Some(tmp) = tmp else {
            diverge(
                "git dry run",
                format!("no migrated stack found: {}", o.stdout.trim()),
                &mut report,
            );
            continue;
        };
        let git_table = match only_table(&tmp) {
            Ok(t) => t,
            Err(e) => {
                diverge("git dry run", e, &mut report);
                continue;
            }
        };
        report.migrations += 1;
        if let Ok((r, l)) = records(&ours) {
            report.refs += r.len() as u64;
            report.log_entries += l.len() as u64;
        }
        if git_table == ours {
            report.identical_tables += 1;
        } else {
            let (class, detail) = classify_difference(&git_table, &ours);
            diverge(&class, detail, &mut report);
        }
        // The real migration: the same table, and git reads the same refs as before.
        let real = dir.join("real");
        if let Err(e) = crate::stack_files::copy_dir(&files, &real, None) {
            skip(
                format!("the files repository cannot be copied: {e}"),
                &mut report,
            );
            continue;
        }
        let o = env
            .git
            .run(&real, &["refs", "migrate", "--ref-format=reftable"], "", 0);
        if !o.exit.success() {
            diverge(
                "git refused",
                format!("{:?}: {}", o.exit, o.stderr.trim()),
                &mut report,
            );
            continue;
        }
        match only_table(&real.join(".git/reftable")) {
            Ok(t) if t == git_table => {}
            Ok(_) => diverge("dry run and migration differ", String::new(), &mut report),
            Err(e) => diverge("git migration", e, &mut report),
        }
        let after = git_refs(env, &real);
        if after != before {
            diverge(
                "refs after migration",
                format!("before:\n{before}after:\n{after}"),
                &mut report,
            );
        }
        // And back: git's files layout from the migrated repository against ours from our
        // stack (2.46 and 2.47 write every ref loose and no reflog: another design, not
        // compared).
        if report.with_reflogs {
            let o = env.git.run(
                &real,
                &["refs", "migrate", "--ref-format=files", "--dry-run"],
                "",
                0,
            );
            let git_files = o.stdout.split('\'').nth(1).map(|p| real.join(p));
            let ours_files = dir.join("ours-files");
            let exported = RefDb::open(&ours_dir, db_opts)
                .and_then(|db| db.export_files(&ours_files, &PoolObjects(&env.pool(hash).pool)));
            match (o.exit.success(), git_files, exported) {
                (true, Some(g), Ok(())) => {
                    report.back_compared += 1;
                    match tree_difference(&g, &ours_files) {
                        None => report.back_identical += 1,
                        Some((class, detail)) => diverge(class, detail, &mut report),
                    }
                }
                (_, _, Err(e)) => diverge("files: ours refused", e.to_string(), &mut report),
                (ok, _, _) => diverge(
                    "files: git refused",
                    format!("{ok}: {} {}", o.stdout.trim(), o.stderr.trim()),
                    &mut report,
                ),
            }
        }
        if keep.is_none() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

impl MigrationReport {
    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Migration files → reftable: git {} and reftable-rs\n\n`{}`; {} cases, {} operations replayed on files repositories, {} migrations compared ({} refs, {} reflog entries; reflogs {}), {} tables byte-identical, {} refused by both (a record too large for the block size), {:.0} s.\n\n",
            self.version,
            self.git,
            self.cases,
            self.operations,
            self.migrations,
            self.refs,
            self.log_entries,
            if self.with_reflogs { "migrated" } else { "removed first: this git cannot migrate them" },
            self.identical_tables,
            self.both_refused,
            self.seconds
        );
        s.push_str(&format!(
            "Back to files (`git refs migrate --ref-format=files --dry-run` against `RefDb::export_files`): {} compared, {} identical file trees.\n\n",
            self.back_compared, self.back_identical
        ));
        let mut by: BTreeMap<(String, Option<String>), u64> = BTreeMap::new();
        for d in &self.divergences {
            *by.entry((d.class.clone(), d.expected.clone())).or_default() += 1;
        }
        s.push_str(&format!(
            "**{} unexpected divergences.**\n\n",
            self.unexpected()
        ));
        if !by.is_empty() {
            s.push_str("| difference | known git defect | cases |\n|---|---|---:|\n");
            for ((c, e), n) in &by {
                s.push_str(&format!(
                    "| {c} | {} | {n} |\n",
                    e.as_deref().unwrap_or("**none**")
                ));
            }
            s.push('\n');
        }
        for k in &self.skipped {
            s.push_str(&format!("- skipped {k}\n"));
        }
        for d in self
            .divergences
            .iter()
            .filter(|d| d.expected.is_none())
            .take(20)
        {
            s.push_str(&format!(
                "- {} {}: {}\n",
                d.case,
                d.class,
                d.detail.replace('\n', " ")
            ));
        }
        s
    }
}
