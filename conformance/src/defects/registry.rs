//! Known git defects, for every mode of the gate: divergences we expect from some gits,
//! each with the mode that sees it, the versions that have the defect, a signature that
//! identifies it, the evidence that git is wrong and, where there is one, a case directory
//! that reproduces it and a shell script that shows it with git alone.
//!
//! An entry is matched only against gits in its version range, and only by its own mode.
//! The signature is the entry's `detail_contains`, read per mode:
//!
//! - `run` (generated cases): a divergence of the entry's `check` whose detail contains
//!   `detail_contains` (a pattern: `*` any text, ` | ` between alternatives). The gate replays every run entry in range of the gits it runs: one
//!   that stops reproducing there fails the run (the defect was fixed, or the entry's
//!   range is wrong).
//! - `concurrent` (`check` is `concurrent`): a finding whose `class: detail` contains
//!   `detail_contains`; in a run where it matched, findings of the classes in `implies`
//!   are put down to it too.
//! - `migrate`: a difference between git's migration and ours whose class (`log update
//!   indexes`, `files: reflogs`, ...) equals `detail_contains`.
//! - `damaged`: a finding on git of a damaged stack whose `class command` (`hang
//!   for-each-ref`, `touched-outside pack-refs`) contains `detail_contains` (a pattern, as
//!   for `faults`).
//! - `faults`: an outcome of a write under an injected system-call fault whose `class phase
//!   command syscall role` (`committed-but-reported-failed after-commit update-ref write new
//!   table`) contains `detail_contains`, where `*` stands for any text
//!   (`conformance faults`); their reproducers inject the fault with strace.
//! - `powerloss`: a class of crash states under a git setting whose `class setting`
//!   (`unloadable git with fsync (reference)`) contains `detail_contains`
//!   (`conformance powerloss`, which reports git's states and never fails on them).
//! - `worktree`: a difference in a linked worktree; no mode matches these yet (the gate has
//!   no worktree cases), their reproducers show them with git alone.
//! - `impl`: a defect of another implementation (`implementation`: `dulwich`, `libgit2`),
//!   in the range of *its* versions, found by `conformance impl`: a finding whose `role
//!   check: detail` contains `detail_contains` (a pattern, as for `faults`); its reproducer
//!   is written in the implementation's language and exits 1 while the defect shows.
//!
//! The file is JSON, a list of entries; `mode` is written in every one, `check` only in
//! run and concurrent entries:
//!
//! ```json
//! [{
//!   "id": "non-commit-through-symref",
//!   "mode": "run",
//!   "versions": ">= 2.55.0.400, < 2.56.0",
//!   "check": "verdict",
//!   "detail_contains": "to branch",
//!   "reason": "why git is wrong",
//!   "evidence": "refs.c:1234 (commit abc123)",
//!   "case": "expected/non-commit-through-symref",
//!   "reproducer": "expected/non-commit-through-symref/reproduce.sh"
//! }]
//! ```
//!
//! `case` and `reproducer` are relative to the file's directory; migrate entries have
//! neither, damaged, faults and worktree entries only a reproducer.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::git::sanitizer::Sanitizer;

use crate::finding::divergence::{Check, Divergence};
use crate::git::version::{GitVersion, VersionRange};

/// The mode of the gate that sees a defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Generated cases (`conformance run`).
    Run,
    /// Concurrent writers (`conformance run --concurrent`).
    Concurrent,
    /// Migration between the files backend and reftable (`conformance migrate`).
    Migrate,
    /// Damaged stacks (`conformance damaged`).
    Damaged,
    /// System-call faults during a write (`conformance faults`).
    Faults,
    /// Power loss during or after a write (`conformance powerloss`).
    Powerloss,
    /// Linked worktrees (the library has them; until the gate runs worktree cases such
    /// entries are documentation with a git-only reproducer).
    Worktree,
    /// Another reftable implementation through its adapter (`conformance impl`): the entry
    /// names the implementation, and its `versions` are that implementation's.
    Impl,
}

/// One known divergence.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Expected {
    /// Short identifier.
    pub id: String,
    /// The mode that sees it, and so how `detail_contains` is read (see the module docs).
    pub mode: Mode,
    /// The gits that have the defect (`>= 2.50.0, < 2.55.0`; `*` for all).
    pub versions: String,
    /// The check that diverges (run and concurrent entries only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Check>,
    /// The signature that identifies it, read per mode.
    pub detail_contains: String,
    /// Why git is wrong here.
    pub reason: String,
    /// git source file and line, or the commit that introduced or fixed the defect.
    #[serde(default)]
    pub evidence: String,
    /// Case directory that reproduces it (none for migrate and damaged entries).
    #[serde(default)]
    pub case: String,
    /// A shell script that shows the defect with git alone.
    #[serde(default)]
    pub reproducer: String,
    /// A test in git's own `t/` style that reports the defect as a known breakage on a git
    /// that has it and passes on one that does not (see [`crate::defects::upstream`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub upstream: String,
    /// Concurrent-mode entries: the finding classes that follow from the defect in a run
    /// where it shows (a dropped table also makes later reads and update indexes look
    /// wrong).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implies: Vec<String>,
    /// A defect only a git built with this sanitizer shows (`address`: a write past a
    /// buffer that an ordinary build survives silently; `leak`: memory an error path does
    /// not free). It is replayed only on a git that has the sanitizer, where an ordinary
    /// build would call it fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanitizer: Option<Sanitizer>,
    /// A defect that shows only where the allocator checks what is freed (glibc's malloc
    /// aborts on a double free, AddressSanitizer reports it): under LeakSanitizer alone,
    /// whose allocator does neither, git goes on as if nothing happened, so the entry is not
    /// replayed on such a build.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_checked_frees: bool,
    /// Why the defect is a security matter (a remote client can cause it on a server: a
    /// crash, a disk filled), when it is one: it is then handed to git's security list
    /// (`SECURITY_LIST`), not to the public one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub security: String,
    /// `impl` entries: the implementation that has the defect (as its adapter names it in
    /// `hello`: `dulwich`, `libgit2`); none for git's own defects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
}

impl Expected {
    /// Whether a git built with `sanitizers` can show the defect, so that replaying it
    /// there says something: an entry of one sanitizer needs a build with it, an entry that
    /// needs checked frees a build whose allocator checks them.
    pub fn shows_on(&self, sanitizers: &[Sanitizer]) -> bool {
        let has = |s: Sanitizer| sanitizers.contains(&s);
        let frees_unchecked = has(Sanitizer::Leak) && !has(Sanitizer::Address);
        self.sanitizer.map_or(true, has) && !(self.needs_checked_frees && frees_unchecked)
    }
}

/// The loaded file.
#[derive(Clone, Debug, Default)]
pub struct ExpectedSet {
    /// Where it was read from.
    pub path: PathBuf,
    entries: Vec<(Expected, VersionRange)>,
}

/// The file the gate reads when none is named: `REFTABLE_EXPECTED_DIVERGENCES`, else
/// `conformance/expected-divergences.json` of the current directory's workspace, else the
/// one next to this crate's sources.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("REFTABLE_EXPECTED_DIVERGENCES") {
        return PathBuf::from(p);
    }
    let here = Path::new("conformance/expected-divergences.json");
    if here.is_file() {
        return here.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("expected-divergences.json")
}

/// Why `e`'s `check` does not fit its mode, if it does not: run entries name a check of
/// the generated cases, concurrent entries the concurrent check, the others none.
fn check_misfit(e: &Expected) -> Option<&'static str> {
    match (e.mode, e.check) {
        (Mode::Run, Some(c)) if c != Check::Concurrent => None,
        (Mode::Run, _) => Some("a run entry needs a check other than concurrent"),
        (Mode::Concurrent, Some(Check::Concurrent)) => None,
        (Mode::Concurrent, _) => Some("a concurrent entry needs the check concurrent"),
        (
            Mode::Migrate
            | Mode::Damaged
            | Mode::Faults
            | Mode::Powerloss
            | Mode::Worktree
            | Mode::Impl,
            None,
        ) => None,
        (
            Mode::Migrate
            | Mode::Damaged
            | Mode::Faults
            | Mode::Powerloss
            | Mode::Worktree
            | Mode::Impl,
            Some(_),
        ) => Some("only run and concurrent entries have a check"),
    }
}

impl ExpectedSet {
    /// Read the file at `path`.
    pub fn load(path: &Path) -> Result<ExpectedSet, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let list: Vec<Expected> =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut entries = Vec::new();
        for e in list {
            let r = VersionRange::parse(&e.versions)
                .map_err(|m| format!("{}: entry {}: {m}", path.display(), e.id))?;
            if let Some(m) = check_misfit(&e) {
                return Err(format!("{}: entry {}: {m}", path.display(), e.id));
            }
            entries.push((e, r));
        }
        Ok(ExpectedSet {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// Every entry.
    pub fn entries(&self) -> impl Iterator<Item = &Expected> {
        self.entries.iter().map(|(e, _)| e)
    }

    /// The entries whose range holds `v`, of every mode.
    pub fn in_range<'s>(&'s self, v: &'s GitVersion) -> impl Iterator<Item = &'s Expected> {
        self.entries
            .iter()
            .filter(move |(_, r)| r.contains(v))
            .map(|(e, _)| e)
    }

    /// The entries of `mode` whose range holds `v`.
    pub fn in_range_of<'s>(
        &'s self,
        v: &'s GitVersion,
        mode: Mode,
    ) -> impl Iterator<Item = &'s Expected> {
        self.in_range(v).filter(move |e| e.mode == mode)
    }

    /// The run-mode entry in range of `v` that `d` matches, if any.
    pub fn matching<'s>(&'s self, v: &'s GitVersion, d: &Divergence) -> Option<&'s Expected> {
        self.in_range_of(v, Mode::Run).find(|e| matches(e, d))
    }

    /// The concurrent-mode entry in range of `v` that a finding (`class: detail`) matches.
    pub fn matching_concurrent<'s>(
        &'s self,
        v: &'s GitVersion,
        finding: &str,
    ) -> Option<&'s Expected> {
        self.in_range_of(v, Mode::Concurrent)
            .find(|e| finding.contains(&e.detail_contains))
    }

    /// The migrate-mode entry in range of `v` for a difference of `class` between git's
    /// migration and ours.
    pub fn matching_migration<'s>(
        &'s self,
        v: &'s GitVersion,
        class: &str,
    ) -> Option<&'s Expected> {
        self.in_range_of(v, Mode::Migrate)
            .find(|e| e.detail_contains == class)
    }

    /// The damaged-mode entry in range of `v` for a finding of `class` (`hang`,
    /// `touched-outside`, ...) on git's `command` (`for-each-ref`, `pack-refs`, ...).
    pub fn matching_damaged<'s>(
        &'s self,
        v: &'s GitVersion,
        class: &str,
        command: &str,
        what: &str,
    ) -> Option<&'s Expected> {
        let signature = format!("{class} {command} {what}");
        self.in_range_of(v, Mode::Damaged)
            .find(|e| contains_pattern(&signature, &e.detail_contains))
    }

    /// The entry of `mode` in range of `v` whose `detail_contains` the `signature` contains,
    /// each `*` in it standing for any text: a faults trial's `class phase command syscall
    /// role` (`committed-but-reported-failed after-commit update-ref write new table`), a
    /// power-loss state's `class setting` (`unloadable git with fsync (reference)`).
    pub fn matching_signature<'s>(
        &'s self,
        v: &'s GitVersion,
        mode: Mode,
        signature: &str,
    ) -> Option<&'s Expected> {
        self.in_range_of(v, mode)
            .find(|e| contains_pattern(signature, &e.detail_contains))
    }

    /// The `impl` entry of `implementation` whose range holds its `version` and whose
    /// `detail_contains` a finding's `role check: detail` contains (a pattern, as for
    /// `faults`).
    pub fn matching_impl<'s>(
        &'s self,
        implementation: &str,
        version: &'s GitVersion,
        signature: &str,
    ) -> Option<&'s Expected> {
        (self.in_range_of(version, Mode::Impl))
            .filter(|e| e.implementation.as_deref() == Some(implementation))
            .find(|e| contains_pattern(signature, &e.detail_contains))
    }

    /// A path of an entry, resolved against the file's directory.
    pub fn resolve(&self, rel: &str) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(rel)
    }
}

/// Whether `text` contains `pattern`, each `*` of which stands for any text; ` | ` separates
/// alternatives.
pub fn contains_pattern(text: &str, pattern: &str) -> bool {
    pattern.split(" | ").any(|alternative| {
        let mut rest = text;
        for part in alternative.split('*') {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        true
    })
}

/// Whether `d` is the divergence the run-mode entry `e` describes.
pub fn matches(e: &Expected, d: &Divergence) -> bool {
    e.check == Some(d.check) && contains_pattern(&d.detail, &e.detail_contains)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pattern_matches_its_parts_in_order() {
        let sig = "crash before-commit update-ref openat table";
        assert!(contains_pattern(sig, "crash * openat table"));
        assert!(contains_pattern(sig, "before-commit update-ref"));
        assert!(!contains_pattern(sig, "openat * crash"));
        assert!(!contains_pattern(sig, "crash * write"));
        assert!(contains_pattern(sig, "hang * write | crash * openat"));
        assert!(!contains_pattern(sig, "hang * write | crash * close"));
    }

    use super::*;

    fn v(s: &str) -> GitVersion {
        GitVersion::parse(s).unwrap()
    }

    fn id(e: Option<&Expected>) -> Option<&str> {
        e.map(|e| e.id.as_str())
    }

    #[test]
    fn entries_replay_only_on_builds_that_can_show_them() {
        let known = ExpectedSet::load(&default_path()).unwrap();
        let e = |id: &str| {
            known
                .entries
                .iter()
                .map(|(e, _)| e)
                .find(|e| e.id == id)
                .unwrap()
        };
        let (plain, leak, asan) = (
            &[][..],
            &[Sanitizer::Leak][..],
            &[Sanitizer::Address, Sanitizer::Leak][..],
        );
        // glibc's malloc aborts on the double free, AddressSanitizer reports it, a
        // LeakSanitizer build lets it pass.
        let double_free = e("for-each-ref-missing-object-double-free");
        assert!(double_free.needs_checked_frees);
        assert!(double_free.shows_on(plain) && double_free.shows_on(asan));
        assert!(!double_free.shows_on(leak));
        let overflow = e("stash-store-hex-buffer-overflow");
        assert!(!overflow.shows_on(plain) && !overflow.shows_on(leak) && overflow.shows_on(asan));
        let leaks = e("damaged-log-record-decode-leaks");
        assert!(!leaks.shows_on(plain) && leaks.shows_on(leak) && leaks.shows_on(asan));
    }

    #[test]
    fn migration_entries_match_their_class_in_their_range() {
        let known = ExpectedSet::load(&default_path()).unwrap();
        let m = |ver: &str, class: &str| {
            id(known.matching_migration(&v(ver), class)).map(str::to_string)
        };
        assert_eq!(
            m("2.50.1", "log update indexes").as_deref(),
            Some("migrate-reflog-index-per-reflog")
        );
        assert_eq!(m("2.52.0", "log update indexes"), None);
        assert_eq!(
            m("2.51.0", "files: reflogs").as_deref(),
            Some("migrate-back-reflog-old-ids-and-identity")
        );
        assert_eq!(m("2.51.1", "files: reflogs"), None);
        assert_eq!(
            m("2.55.0.618", "ref values").as_deref(),
            Some("migrate-annotated-tags-unpeeled")
        );
        // The class is the whole signature, not a part of it.
        assert_eq!(m("2.55.0", "ref"), None);
        assert_eq!(m("2.55.0", "table bytes"), None);
    }

    #[test]
    fn damaged_entries_match_class_and_command() {
        let known = ExpectedSet::load(&default_path()).unwrap();
        let d = |ver: &str, class: &str, command: &str| {
            id(known.matching_damaged(&v(ver), class, command, "")).map(str::to_string)
        };
        // A sanitizer's report is told apart by the function it names.
        let leak = |command: &str, what: &str| {
            let what = format!("LeakSanitizer: detected memory leaks in {what}");
            id(known.matching_damaged(&v("2.55.0.618"), "sanitizer-report", command, &what))
                .map(str::to_string)
        };
        assert_eq!(
            leak("reflog-show", "reftable_block_init").as_deref(),
            Some("damaged-log-block-init-leaks")
        );
        assert_eq!(
            leak("pack-refs", "tree_insert").as_deref(),
            Some("damaged-compaction-leaks-obj-index")
        );
        assert_eq!(leak("reflog-show", "tree_insert"), None);
        assert_eq!(leak("pack-refs", "table_init_block"), None);
        assert_eq!(
            d("2.47.3", "hang", "for-each-ref").as_deref(),
            Some("index-entry-pointing-at-its-own-block")
        );
        assert_eq!(
            d("2.47.3", "crash", "for-each-ref").as_deref(),
            Some("damaged-table-crashes-before-hardening")
        );
        // Master past ps/reftable-hardening does not crash there.
        assert_eq!(d("2.55.0.618", "crash", "for-each-ref"), None);
        assert_eq!(
            d("2.52.0", "touched-outside", "pack-refs").as_deref(),
            Some("tables-list-names-outside-the-stack")
        );
        assert_eq!(d("2.52.0", "touched-outside", "for-each-ref"), None);
        assert_eq!(
            d("2.55.0.618", "crash", "refs-verify").as_deref(),
            Some("refs-verify-crash-on-unloadable-stack")
        );
        // Before 2.52 refs verify reads no table (its crashes there are the readers'
        // ones, fixed by the hardening).
        assert_eq!(
            d("2.51.2", "crash", "refs-verify").as_deref(),
            Some("damaged-table-crashes-before-hardening")
        );
    }

    #[test]
    fn each_mode_sees_its_own_entries_only() {
        let known = ExpectedSet::load(&default_path()).unwrap();
        let master = v("2.55.0.618");
        // A migration class or a damaged signature is no run or concurrent finding.
        assert!(known
            .matching_concurrent(&master, "hang for-each-ref")
            .is_none());
        assert!(known
            .matching_migration(&master, "touched-outside pack-refs")
            .is_none());
        let run = Divergence {
            step: 0,
            check: Check::Verdict,
            class: String::new(),
            detail: "git accepted, ours refused (NonCommit)".into(),
        };
        assert_eq!(
            id(known.matching(&master, &run)),
            Some("non-commit-through-symref")
        );
        for e in known.entries() {
            assert!(check_misfit(e).is_none(), "{}", e.id);
            if e.mode == Mode::Run || e.mode == Mode::Concurrent {
                assert!(!e.case.is_empty(), "{} has no case", e.id);
            }
            if e.mode != Mode::Migrate {
                assert!(known.resolve(&e.reproducer).is_file(), "{}", e.id);
            }
        }
    }

    #[test]
    fn an_entry_whose_check_does_not_fit_its_mode_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.json");
        let entry = |mode: &str, check: &str| {
            format!(
                r#"[{{"id": "x", "mode": "{mode}", "versions": "*", {check} "detail_contains": "d", "reason": "r"}}]"#
            )
        };
        for (mode, check, ok) in [
            ("run", r#""check": "verdict","#, true),
            ("run", "", false),
            ("run", r#""check": "concurrent","#, false),
            ("concurrent", r#""check": "concurrent","#, true),
            ("concurrent", r#""check": "verdict","#, false),
            ("migrate", "", true),
            ("damaged", r#""check": "hang","#, false),
        ] {
            std::fs::write(&path, entry(mode, check)).unwrap();
            assert_eq!(ExpectedSet::load(&path).is_ok(), ok, "{mode} {check}");
        }
    }
}
