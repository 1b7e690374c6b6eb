//! One case of the migration mode, step by step: git replays it on a files repository;
//! git's dry run and our import migrate that to reftable and the tables are compared; git
//! migrates a copy for real, which must give the same table and the same refs; and,
//! where git migrates reflogs, git's migration back to files is compared with our export.
//! Each difference is filed with the known git defect of the registry it matches.

use std::path::{Path, PathBuf};

use crate::defects::registry::ExpectedSet;
use crate::finding::divergence::Finding;
use crate::git::driver::Output;
use crate::git::version::GitVersion;
use crate::migrate::compare::{
    classify_difference, dry_run_table, first_not_written, git_refs, only_table, records,
    tree_difference,
};
use crate::migrate::ours::OurStack;
use crate::migrate::replay::replay_on_files;
use crate::migrate::report::{MigrationDivergence, MigrationReport};
use crate::ops::{CaseOptions, Op};
use crate::setup::env::Env;
use crate::stack_files::StackFiles;

/// One case's repositories, and what its differences are matched against.
pub(crate) struct CaseRun<'a> {
    env: &'a Env,
    known: &'a ExpectedSet,
    version: &'a GitVersion,
    /// The case's name (`seed1-case3`).
    case: String,
    /// The directory of all its repositories.
    pub(crate) dir: PathBuf,
    /// The files repository git replays the case on.
    files: PathBuf,
}

impl<'a> CaseRun<'a> {
    /// The case `case`, its repositories under `scratch`; differences are matched against
    /// the entries of `known` in range of `version`.
    pub(crate) fn new(
        env: &'a Env,
        known: &'a ExpectedSet,
        version: &'a GitVersion,
        case: String,
        scratch: &Path,
    ) -> CaseRun<'a> {
        let dir = scratch.join(&case);
        let files = dir.join("files");
        CaseRun {
            env,
            known,
            version,
            case,
            dir,
            files,
        }
    }

    /// Run every step on the case (`opts`, `ops`) into `report`; returns whether the case
    /// went through all of them (a step that fails or differs ends it).
    pub(crate) fn migrate(
        &self,
        opts: CaseOptions,
        ops: &[Op],
        report: &mut MigrationReport,
    ) -> Result<bool, String> {
        let with_reflogs = report.with_reflogs;
        replay_on_files(
            self.env,
            &self.files,
            &opts,
            ops,
            with_reflogs,
            &mut report.operations,
        )?;
        let before = git_refs(self.env, &self.files);
        let ours = OurStack::new(self.dir.join("ours"), opts, &self.env.profile);
        let Some(git_table) = self.to_reftable(&ours, report) else {
            return Ok(false);
        };
        let Some(real) = self.for_real(&git_table, &before, report) else {
            return Ok(false);
        };
        // Every file the migration leaves in the stack directory, not only the table.
        let (theirs, mine) = (real.join(".git/reftable"), ours.dir());
        if let Some(d) = StackFiles::difference(&StackFiles::of(mine), &StackFiles::of(&theirs)) {
            self.diverge("stack files", d, report);
        }
        // And back: git's files layout from the migrated repository against ours from our
        // stack (2.46 and 2.47 write every ref loose and no reflog: another design, not
        // compared).
        if report.with_reflogs {
            self.back_to_files(&real, &ours, report);
        }
        Ok(true)
    }

    /// File a difference of `class`, with the known git defect it matches.
    fn diverge(&self, class: &str, detail: String, report: &mut MigrationReport) {
        let expected = self
            .known
            .matching_migration(self.version, class)
            .map(|e| e.id.clone());
        report.divergences.push(MigrationDivergence {
            case: self.case.clone(),
            finding: Finding {
                class: class.into(),
                detail,
                expected,
            },
        });
    }

    /// Leave the case out, saying why.
    fn skip(&self, why: String, report: &mut MigrationReport) {
        report.skipped.push(format!("{}: {why}", self.case));
    }

    /// To reftable: git's dry run (the table stays in `.git/ref_migration.*`) on a copy of
    /// the files repository, and our import of the same files into `ours`; their tables
    /// compared. Returns git's table when both migrated.
    fn to_reftable(&self, ours: &OurStack, report: &mut MigrationReport) -> Option<Vec<u8>> {
        let dry = self.dir.join("dry");
        if let Err(e) = crate::stack_files::copy_dir(&self.files, &dry, None) {
            // Names too long for a path (the gate's 4,000-byte refs) cannot be loose refs.
            self.skip(
                format!("the files repository cannot be copied: {e}"),
                report,
            );
            let _ = std::fs::remove_dir_all(&self.dir);
            return None;
        }
        let o = self.env.git.run(
            &dry,
            &["refs", "migrate", "--ref-format=reftable", "--dry-run"],
            "",
            0,
        );
        let ours = ours.import(self.env, &self.files);
        if !o.exit.success() {
            self.refused_by_git(&o, &ours, report);
            return None;
        }
        let ours = match ours {
            Ok(t) => t,
            Err(e) => {
                self.diverge("ours refused", e, report);
                return None;
            }
        };
        let git_table = match dry_run_table(&dry, &o.stdout) {
            Ok(t) => t,
            Err(e) => {
                self.diverge("git dry run", e, report);
                return None;
            }
        };
        self.compare_tables(&git_table, &ours, report);
        Some(git_table)
    }

    /// git's dry run `o` failed; `ours` is what our import made of the same files.
    fn refused_by_git(
        &self,
        o: &Output,
        ours: &Result<Vec<u8>, String>,
        report: &mut MigrationReport,
    ) {
        // Both refusing a record too large for the block size is agreement.
        let too_big = o.stderr.contains("entry too large");
        match ours {
            Err(e) if too_big && e.starts_with("EntryTooBig") => report.both_refused += 1,
            _ => self.diverge(
                "git refused",
                format!(
                    "{:?}: {}; ours: {:?}",
                    o.exit,
                    o.stderr.trim(),
                    ours.as_ref().map(|_| "a table")
                ),
                report,
            ),
        }
    }

    /// Count a migration both made, and compare git's table with ours.
    fn compare_tables(&self, git_table: &[u8], ours: &[u8], report: &mut MigrationReport) {
        report.migrations += 1;
        if let Ok((r, l)) = records(ours) {
            report.refs += r.len() as u64;
            report.log_entries += l.len() as u64;
        }
        if git_table == ours {
            report.identical_tables += 1;
        } else {
            let (class, detail) = classify_difference(git_table, ours);
            self.diverge(&class, detail, report);
        }
    }

    /// The real migration, by git on another copy of the files repository: the same table
    /// as its dry run, and git reads the same refs as `before`. Returns the migrated
    /// repository, unless it could not be made.
    fn for_real(
        &self,
        git_table: &[u8],
        before: &str,
        report: &mut MigrationReport,
    ) -> Option<PathBuf> {
        let real = self.dir.join("real");
        if let Err(e) = crate::stack_files::copy_dir(&self.files, &real, None) {
            self.skip(
                format!("the files repository cannot be copied: {e}"),
                report,
            );
            return None;
        }
        let o = self
            .env
            .git
            .run(&real, &["refs", "migrate", "--ref-format=reftable"], "", 0);
        if !o.exit.success() {
            self.diverge(
                "git refused",
                format!("{:?}: {}", o.exit, o.stderr.trim()),
                report,
            );
            return None;
        }
        match only_table(&real.join(".git/reftable")) {
            Ok(t) if t == git_table => {}
            Ok(_) => self.diverge("dry run and migration differ", String::new(), report),
            Err(e) => self.diverge("git migration", e, report),
        }
        let after = git_refs(self.env, &real);
        if after != before {
            self.diverge(
                "refs after migration",
                format!("before:\n{before}after:\n{after}"),
                report,
            );
        }
        Some(real)
    }

    /// Back to files for real, after the dry run wrote `dry`: git removes its stack
    /// (`remove_on_disk`) and leaves in `real/.git` what the dry run showed, with the same
    /// refs.
    fn back_for_real(&self, real: &Path, dry: &Path, report: &mut MigrationReport) {
        let before = git_refs(self.env, real);
        let o = self
            .env
            .git
            .run(real, &["refs", "migrate", "--ref-format=files"], "", 0);
        let git_dir = real.join(".git");
        let problem = if !o.exit.success() {
            Some(format!("{:?}: {}", o.exit, o.stderr.trim()))
        } else if git_dir.join("reftable").exists() {
            Some("the reftable directory is still there".to_string())
        } else if let Some(path) = first_not_written(dry, &git_dir) {
            Some(format!("{path} differs from the dry run's"))
        } else if git_refs(self.env, real) != before {
            Some("the refs changed".to_string())
        } else {
            None
        };
        match problem {
            None => report.back_migrated += 1,
            Some(p) => self.diverge("files: migration", p, report),
        }
    }

    /// Back to files: git's dry run on the migrated repository `real` against our export of
    /// `ours`, file tree against file tree.
    fn back_to_files(&self, real: &Path, ours: &OurStack, report: &mut MigrationReport) {
        let o = self.env.git.run(
            real,
            &["refs", "migrate", "--ref-format=files", "--dry-run"],
            "",
            0,
        );
        let git_files = o.stdout.split('\'').nth(1).map(|p| real.join(p));
        let ours_files = self.dir.join("ours-files");
        let exported = ours.export(self.env, &ours_files);
        match (o.exit.success(), git_files, exported) {
            (true, Some(g), Ok(())) => {
                report.back_compared += 1;
                match tree_difference(&g, &ours_files) {
                    None => report.back_identical += 1,
                    Some((class, detail)) => self.diverge(class, detail, report),
                }
                self.back_for_real(real, &g, report);
            }
            (_, _, Err(e)) => self.diverge("files: ours refused", e.to_string(), report),
            (ok, _, _) => self.diverge(
                "files: git refused",
                format!("{ok}: {} {}", o.stdout.trim(), o.stderr.trim()),
                report,
            ),
        }
    }
}
