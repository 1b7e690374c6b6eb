//! What the git under test does, found by trying it once at start in a few tiny repositories
//! rather than by reading its version number: which commands and options it has, the order
//! in which it checks a transaction, and a few behaviours that changed between releases.
//!
//! The gate uses the profile to ask git only what it can answer (`--include-root-refs`,
//! `reflog list`), and the report shows it per git, so a difference between two gits'
//! results can be traced to what they do differently.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::err_class::ErrClass;
use crate::git::driver::Git;
use crate::git::messages;
use crate::git::sanitizer::{self, Sanitizer};
use crate::git::version::GitVersion;

/// Commands and options the git has.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Features {
    /// `git reflog list` (2.45).
    pub reflog_list: bool,
    /// `git for-each-ref --include-root-refs` (2.45).
    pub include_root_refs: bool,
    /// `git refs migrate` (2.46).
    pub refs_migrate: bool,
    /// `git refs migrate` takes reflogs along (2.48; 2.46 and 2.47 refuse a repository
    /// with reflogs).
    pub migrate_reflogs: bool,
    /// `git refs verify` (2.47).
    pub refs_verify: bool,
    /// `git refs list` and `git refs exists` (2.52).
    pub refs_list_exists: bool,
    /// `git refs create`, `update`, `delete` (master after 2.55).
    pub refs_writes: bool,
    /// `git update-ref --batch-updates` (2.50).
    pub batch_updates: bool,
    /// `--batch-updates` rejects an update naming a non-commit for a branch on its own and
    /// goes on (2.55; 2.50 to 2.54 check objects while reading the input and stop there).
    pub batch_rejects_objects: bool,
    /// `git reflog drop` (2.50).
    pub reflog_drop: bool,
    /// `symref-create`, `symref-update`, `symref-delete`, `symref-verify` in
    /// `update-ref --stdin` (2.46).
    pub symref_commands: bool,
    /// `reftable.blockSize`, `reftable.restartInterval`, `reftable.indexObjects` are
    /// honoured (2.46; 2.45 ignores them and writes 4096-byte blocks).
    pub reftable_config: bool,
}

/// The transaction rules git changed between versions, each probed: what our library is
/// told to follow (its options) and what the model expects.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct GitRules {
    /// `option no-deref` + `create` of a ref that is a dangling symref is refused ("dangling
    /// symref already exists", 2.52) instead of overwriting the symref.
    pub dangling_symref_protected: bool,
    /// The log-only update of `HEAD` that an update of its branch adds has its old value
    /// checked: a `symref-delete` with an old target of the branch `HEAD` points at is
    /// refused because `HEAD` resolves to something (before 2.51.1).
    pub log_only_old_checked: bool,
}

/// The probed profile of one git.
#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    /// `git version`.
    pub version: String,
    /// `git version --build-options`.
    pub build_options: String,
    /// The commit it was built from, when it says.
    pub commit: Option<String>,
    /// Commands and options.
    pub features: Features,
    /// A transaction with a wrong old value on its first update and a non-commit object for
    /// a branch on its second is refused for the object (objects are checked when an update
    /// is queued), not for the old value (checked in order, in the backend's prepare).
    pub objects_checked_when_queued: bool,
    /// A transaction whose first update has a D/F conflict and whose second expects a
    /// missing ref is refused for the old value: D/F checks run after the per-update checks.
    pub df_checks_batched: bool,
    /// Writing a tree through a symref that points at a branch is refused (the non-commit
    /// check applies to the ref that is written, not only to the name given).
    pub non_commit_through_symref_refused: bool,
    /// A `tables.list` without its final newline makes the stack unreadable.
    pub tables_list_needs_newline: bool,
    /// The transaction rules git changed between versions, as this git has them.
    pub rules: GitRules,
    /// `for-each-ref --include-root-refs` lists symbolic root refs such as a symbolic
    /// `ORIG_HEAD` (2.46 decides by name; 2.45 shows only those with a direct value).
    pub symbolic_root_refs_listed: bool,
    /// What `git reflog expire` says about a ref without a reflog.
    pub no_reflog_message: String,
    /// The sanitizers it was built with ([`crate::git::sanitizer`]).
    pub sanitizers: Vec<Sanitizer>,
    /// Probes whose outcome was not one of the expected ones (each with what git said).
    pub surprises: Vec<String>,
}

impl Profile {
    /// The git's version, parsed.
    pub fn git_version(&self) -> GitVersion {
        GitVersion::parse(&self.version).unwrap_or_else(|| GitVersion::parse("0").expect("0"))
    }

    /// One line for reports.
    pub fn summary(&self) -> String {
        let f = &self.features;
        let mut on = Vec::new();
        for (b, name) in [
            (f.reflog_list, "reflog list"),
            (f.include_root_refs, "--include-root-refs"),
            (f.refs_migrate, "refs migrate"),
            (f.migrate_reflogs, "refs migrate with reflogs"),
            (f.refs_verify, "refs verify"),
            (f.refs_list_exists, "refs list/exists"),
            (f.refs_writes, "refs create/update/delete"),
            (f.batch_updates, "--batch-updates"),
            (f.batch_rejects_objects, "--batch-updates rejects objects"),
            (f.reflog_drop, "reflog drop"),
            (f.symref_commands, "symref-* commands"),
            (f.reftable_config, "reftable.* config"),
            (
                self.objects_checked_when_queued,
                "objects checked when queued",
            ),
            (self.df_checks_batched, "D/F checks batched"),
            (
                self.non_commit_through_symref_refused,
                "non-commit through symref refused",
            ),
            (
                self.tables_list_needs_newline,
                "tables.list needs its newline",
            ),
            (
                self.rules.dangling_symref_protected,
                "dangling symrefs protected",
            ),
            (
                self.rules.log_only_old_checked,
                "log-only old values checked",
            ),
            (self.symbolic_root_refs_listed, "symbolic root refs listed"),
        ] {
            if b {
                on.push(name);
            }
        }
        for s in &self.sanitizers {
            on.push(match s {
                Sanitizer::Address => "built with AddressSanitizer",
                Sanitizer::Leak => "checks leaks (LeakSanitizer)",
            });
        }
        on.join(", ")
    }
}

struct Probe<'g> {
    git: &'g Git,
    dir: tempfile::TempDir,
}

impl Probe<'_> {
    fn run(&self, repo: &Path, args: &[&str], stdin: &str) -> crate::git::driver::Output {
        self.git.run(repo, args, stdin, 0)
    }

    /// A reftable repository with `refs/heads/main` and `refs/heads/a` at a commit;
    /// returns (path, commit, tree).
    fn repo(&self, name: &str) -> Result<(std::path::PathBuf, String, String), String> {
        let repo = self.dir.path().join(name);
        let r = repo.to_str().ok_or("non-UTF-8 temp path")?;
        self.git.ok(
            self.dir.path(),
            &["init", "-q", "--ref-format=reftable", "-b", "main", r],
            "",
        )?;
        let tree = self.git.ok(&repo, &["mktree"], "")?.trim().to_string();
        let commit = self
            .git
            .ok(&repo, &["commit-tree", &tree], "probe\n")?
            .trim()
            .to_string();
        let stdin = format!("create refs/heads/main {commit}\ncreate refs/heads/a {commit}\n");
        self.git.ok(&repo, &["update-ref", "--stdin"], &stdin)?;
        Ok((repo, commit, tree))
    }

    /// The class git refuses `stdin` (an update-ref --stdin transaction) with.
    fn refusal(&self, repo: &Path, stdin: &str) -> (Option<ErrClass>, String) {
        let o = self.run(repo, &["update-ref", "--stdin"], stdin);
        if o.exit.success() {
            return (None, "accepted".into());
        }
        (messages::classify(&o.stderr), o.stderr.trim().to_string())
    }

    /// Whether `args -h`, run in `repo`, prints a usage naming `needle`.
    fn has(&self, repo: &Path, args: &[&str], needle: &str) -> bool {
        let mut a = args.to_vec();
        a.push("-h");
        let o = self.run(repo, &a, "");
        o.stdout.contains(needle) || o.stderr.contains(needle)
    }
}

/// Whether `git refs migrate` moves a files repository with a reflog (a dry run).
fn migrates_reflogs(p: &Probe<'_>) -> Result<bool, String> {
    let repo = p.dir.path().join("migrate");
    let r = repo.to_str().ok_or("non-UTF-8 temp path")?;
    p.git.ok(
        p.dir.path(),
        &["init", "-q", "--ref-format=files", "-b", "main", r],
        "",
    )?;
    let tree = p.git.ok(&repo, &["mktree"], "")?.trim().to_string();
    let commit = p
        .git
        .ok(&repo, &["commit-tree", &tree], "probe\n")?
        .trim()
        .to_string();
    p.git.ok(
        &repo,
        &[
            "update-ref",
            "-m",
            "probe",
            "--create-reflog",
            "refs/heads/main",
            &commit,
        ],
        "",
    )?;
    let o = p.run(
        &repo,
        &["refs", "migrate", "--ref-format=reftable", "--dry-run"],
        "",
    );
    Ok(o.exit.success())
}

/// Probe `git`. Fails only when git cannot make the probe repositories at all.
pub fn probe(git: &Git) -> Result<Profile, String> {
    let p = Probe {
        git,
        dir: tempfile::tempdir().map_err(|e| e.to_string())?,
    };
    let mut surprises = Vec::new();
    let build_options = p
        .run(p.dir.path(), &["version", "--build-options"], "")
        .stdout;
    let commit = build_options
        .lines()
        .find_map(|l| l.strip_prefix("built from commit: "))
        .map(|s| s.trim().to_string());
    let (repo, commit_id, tree) = p.repo("order")?;
    let features = features(&p, &repo)?;
    let (objects_checked_when_queued, df_checks_batched) =
        check_order(&p, &repo, &commit_id, &tree, &mut surprises);
    let non_commit_through_symref_refused =
        non_commit_through_symref_refused(&p, &repo, &tree, &mut surprises)?;
    let no_reflog_message = no_reflog_message(&p, &repo, &mut surprises);
    let rules = GitRules {
        dangling_symref_protected: dangling_symref_protected(
            &p,
            &repo,
            &commit_id,
            &mut surprises,
        )?,
        log_only_old_checked: features.symref_commands && log_only_old_checked(&p, &mut surprises)?,
    };
    let symbolic_root_refs_listed = symbolic_root_refs_listed(&p, &repo)?;
    let tables_list_needs_newline = tables_list_needs_newline(&p)?;

    Ok(Profile {
        version: git.version().to_string(),
        build_options: build_options.trim().to_string(),
        commit,
        features,
        objects_checked_when_queued,
        df_checks_batched,
        non_commit_through_symref_refused,
        tables_list_needs_newline,
        rules,
        symbolic_root_refs_listed,
        no_reflog_message,
        sanitizers: sanitizer::detect(git),
        surprises,
    })
}

/// The commands and options git has, tried in `repo`.
fn features(p: &Probe<'_>, repo: &Path) -> Result<Features, String> {
    let symref_commands = p
        .run(
            repo,
            &["update-ref", "--stdin"],
            "option no-deref\nsymref-verify refs/heads/nope\n",
        )
        .exit
        .success();
    let features = Features {
        reflog_list: p.run(repo, &["reflog", "list"], "").exit.success(),
        include_root_refs: p
            .run(repo, &["for-each-ref", "--include-root-refs"], "")
            .exit
            .success(),
        refs_migrate: p.has(repo, &["refs", "migrate"], "git refs migrate"),
        refs_verify: p.has(repo, &["refs", "verify"], "git refs verify"),
        refs_list_exists: p.has(repo, &["refs", "exists"], "git refs exists"),
        refs_writes: p.has(repo, &["refs", "create"], "git refs create"),
        batch_updates: p.has(repo, &["update-ref"], "--batch-updates"),
        reflog_drop: p.has(repo, &["reflog", "drop"], "git reflog drop"),
        symref_commands,
        reftable_config: reftable_config(p)?,
        migrate_reflogs: false,
        batch_rejects_objects: false,
    };
    let tree = p.git.ok(repo, &["mktree"], "")?;
    Ok(Features {
        migrate_reflogs: features.refs_migrate && migrates_reflogs(p)?,
        batch_rejects_objects: features.batch_updates
            && batch_rejects_objects(p, repo, tree.trim()),
        ..features
    })
}

/// The order of git's checks of a transaction: (objects checked when an update is queued,
/// D/F checks batched after the per-update ones).
fn check_order(
    p: &Probe<'_>,
    repo: &Path,
    commit_id: &str,
    tree: &str,
    surprises: &mut Vec<String>,
) -> (bool, bool) {
    // Wrong old value first, then a tree for a branch.
    let (class, said) = p.refusal(
        repo,
        &format!("update refs/heads/main {commit_id} {tree}\nupdate refs/heads/b {tree}\n"),
    );
    let objects_checked_when_queued = match class {
        Some(ErrClass::NonCommit) => true,
        Some(ErrClass::OldValue) => false,
        _ => {
            surprises.push(format!("order of object and old-value checks: {said}"));
            false
        }
    };
    // A D/F conflict first, then a missing ref expected to exist.
    let (class, said) = p.refusal(
        repo,
        &format!(
            "create refs/heads/a/b {commit_id}\nupdate refs/heads/nope {commit_id} {commit_id}\n"
        ),
    );
    let df_checks_batched = match class {
        Some(ErrClass::OldValue) => true,
        Some(ErrClass::DfConflict) => false,
        _ => {
            surprises.push(format!("order of D/F and old-value checks: {said}"));
            false
        }
    };
    (objects_checked_when_queued, df_checks_batched)
}

/// Whether git refuses a tree written through a symref to a branch.
fn non_commit_through_symref_refused(
    p: &Probe<'_>,
    repo: &Path,
    tree: &str,
    surprises: &mut Vec<String>,
) -> Result<bool, String> {
    // A tree through a symref to a branch.
    p.git
        .ok(repo, &["symbolic-ref", "refs/custom/s", "refs/heads/a"], "")?;
    let (class, said) = p.refusal(repo, &format!("update refs/custom/s {tree}\n"));
    Ok(match class {
        Some(ErrClass::NonCommit) => true,
        None if said == "accepted" => false,
        _ => {
            surprises.push(format!("a tree written through a symref: {said}"));
            true
        }
    })
}

/// What `git reflog expire` says about a ref without a reflog.
fn no_reflog_message(p: &Probe<'_>, repo: &Path, surprises: &mut Vec<String>) -> String {
    let expire = p.run(
        repo,
        &["reflog", "expire", "--expire=all", "refs/heads/nope"],
        "",
    );
    let no_reflog_message = expire.stderr.trim().to_string();
    if messages::classify(&expire.stderr) != Some(ErrClass::NoReflog) {
        surprises.push(format!(
            "reflog expire of a missing reflog: exit {:?}, {no_reflog_message:?}",
            expire.exit
        ));
    }
    no_reflog_message
}

/// Whether a no-deref `create` of a dangling symref is refused.
fn dangling_symref_protected(
    p: &Probe<'_>,
    repo: &Path,
    commit_id: &str,
    surprises: &mut Vec<String>,
) -> Result<bool, String> {
    // A dangling symref, then a no-deref create of it.
    p.git.ok(
        repo,
        &["symbolic-ref", "refs/custom/dangling", "refs/heads/nope"],
        "",
    )?;
    let (class, said) = p.refusal(
        repo,
        &format!("option no-deref\ncreate refs/custom/dangling {commit_id}\n"),
    );
    Ok(match class {
        Some(ErrClass::OldValue) => true,
        None if said == "accepted" => false,
        _ => {
            surprises.push(format!("no-deref create of a dangling symref: {said}"));
            false
        }
    })
}

/// Whether the log-only `HEAD` update checks its old value: `HEAD` -> `refs/heads/s` ->
/// `refs/heads/a`, and a `symref-delete` of `refs/heads/s` expecting its target gives `HEAD`
/// an old value of nothing, which a git that checks it refuses ("reference already exists").
fn log_only_old_checked(p: &Probe<'_>, surprises: &mut Vec<String>) -> Result<bool, String> {
    let (repo, _, _) = p.repo("log-only")?;
    p.git
        .ok(&repo, &["symbolic-ref", "refs/heads/s", "refs/heads/a"], "")?;
    p.git
        .ok(&repo, &["symbolic-ref", "HEAD", "refs/heads/s"], "")?;
    let (class, said) = p.refusal(
        &repo,
        "option no-deref\nsymref-delete refs/heads/s refs/heads/a\n",
    );
    Ok(match class {
        Some(ErrClass::OldValue) => true,
        None if said == "accepted" => false,
        _ => {
            surprises.push(format!("symref-delete of HEAD's branch: {said}"));
            false
        }
    })
}

/// Whether `for-each-ref --include-root-refs` lists a symbolic `ORIG_HEAD`.
fn symbolic_root_refs_listed(p: &Probe<'_>, repo: &Path) -> Result<bool, String> {
    p.git
        .ok(repo, &["symbolic-ref", "ORIG_HEAD", "refs/heads/main"], "")?;
    let listed = p.run(
        repo,
        &["for-each-ref", "--include-root-refs", "--format=%(refname)"],
        "",
    );
    Ok(listed.stdout.lines().any(|l| l == "ORIG_HEAD"))
}

/// Whether `update-ref --batch-updates` rejects a tree for a branch on its own and goes on.
fn batch_rejects_objects(p: &Probe<'_>, repo: &Path, tree: &str) -> bool {
    let o = p.run(
        repo,
        &["update-ref", "--stdin", "--batch-updates"],
        &format!("update refs/heads/b {tree}\n"),
    );
    o.exit.success() && o.stdout.starts_with("rejected refs/heads/b ")
}

/// Whether a `tables.list` without its final newline makes the stack unreadable.
fn tables_list_needs_newline(p: &Probe<'_>) -> Result<bool, String> {
    let (repo, _, _) = p.repo("newline")?;
    let list = repo.join(".git/reftable/tables.list");
    let text = std::fs::read_to_string(&list).map_err(|e| e.to_string())?;
    std::fs::write(&list, text.trim_end_matches('\n')).map_err(|e| e.to_string())?;
    let read = p.run(
        &repo,
        &["rev-parse", "--verify", "-q", "refs/heads/main"],
        "",
    );
    Ok(!read.exit.success())
}

/// Whether git writes tables with a configured block size.
fn reftable_config(p: &Probe<'_>) -> Result<bool, String> {
    let repo = p.dir.path().join("config");
    let r = repo.to_str().ok_or("non-UTF-8 temp path")?;
    p.git.ok(
        p.dir.path(),
        &["init", "-q", "--ref-format=reftable", r],
        "",
    )?;
    p.git
        .ok(&repo, &["config", "reftable.blockSize", "1024"], "")?;
    let tree = p.git.ok(&repo, &["mktree"], "")?.trim().to_string();
    let commit = p.git.ok(&repo, &["commit-tree", &tree], "probe\n")?;
    p.git
        .ok(&repo, &["update-ref", "refs/heads/x", commit.trim()], "")?;
    let stack = repo.join(".git/reftable");
    let list = std::fs::read_to_string(stack.join("tables.list")).map_err(|e| e.to_string())?;
    let last = list.lines().last().ok_or("empty tables.list")?;
    let bytes = std::fs::read(stack.join(last)).map_err(|e| e.to_string())?;
    let block_size = bytes
        .get(5..8)
        .map(|b| u32::from_be_bytes([0, b[0], b[1], b[2]]))
        .ok_or("short table")?;
    Ok(block_size == 1024)
}
