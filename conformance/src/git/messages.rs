//! git's error messages, mapped to [`ErrClass`]es.
//!
//! Every wording git used from 2.45 to master for the refusals the gate provokes, as git's
//! own format strings (`%s` stands for any text), with the versions that print it and where
//! it comes from. A message no entry matches is *unclassified*: the gate reports it with its
//! text (so this table can be extended) and never takes it for a match.
//!
//! Entries are tried in order, so a specific wording comes before a general one that would
//! also match it.

use crate::err_class::ErrClass;

/// One wording of one refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wording {
    /// What the message means.
    pub class: ErrClass,
    /// git's format string; `%s` matches any text (possibly empty) within one line.
    pub format: &'static str,
    /// The gits that print it.
    pub versions: &'static str,
    /// Where in git's source it comes from, and the commit that introduced or changed it.
    pub origin: &'static str,
}

use ErrClass::*;

/// The table.
pub const WORDINGS: &[Wording] = &[
    // Names: checked when update-ref reads a line (`ref_transaction_update`).
    Wording {
        class: BadName,
        format: "refusing to update ref with bad name '%s'",
        versions: "*",
        origin: "refs.c ref_transaction_update",
    },
    Wording {
        class: BadName,
        format: "refusing to update pseudoref '%s'",
        versions: ">= 2.46.0",
        origin: "refs.c ref_transaction_update",
    },
    Wording {
        class: BadName,
        format: "refusing to update reflog with bad name '%s'",
        versions: ">= 2.48.0",
        origin: "refs.c ref_transaction_update_reflog",
    },
    Wording {
        class: BadName,
        format: "refusing to update reflog for pseudoref '%s'",
        versions: ">= 2.48.0",
        origin: "refs.c ref_transaction_update_reflog",
    },
    Wording {
        class: BadName,
        format: "symref-update %s: invalid ref: %s",
        versions: ">= 2.46.0",
        origin: "builtin/update-ref.c parse_cmd_symref_update (old target given as `ref <name>`)",
    },
    Wording {
        class: BadName,
        format: "Refusing to point HEAD outside of refs/",
        versions: "*",
        origin: "builtin/symbolic-ref.c cmd_symbolic_ref",
    },
    Wording {
        class: BadName,
        format: "Refusing to set '%s' to invalid ref '%s'",
        versions: "*",
        origin: "builtin/symbolic-ref.c cmd_symbolic_ref",
    },
    Wording {
        class: BadName,
        format: "invalid ref format: %s",
        versions: "*",
        origin: "builtin/update-ref.c parse_refname / symref targets",
    },
    // Duplicates: the sorted list of affected names (`ref_update_reject_duplicates`) and the
    // reftable backend's symref and HEAD splitting.
    Wording {
        class: Duplicate,
        format: "multiple updates for ref '%s' not allowed",
        versions: "*",
        origin: "refs.c ref_update_reject_duplicates",
    },
    Wording {
        class: Duplicate,
        format: "multiple updates for 'HEAD' (including one via its referent '%s') are not allowed",
        versions: "*",
        origin: "refs/reftable-backend.c prepare (HEAD split)",
    },
    Wording {
        class: Duplicate,
        format: "multiple updates for '%s' (including one via symref '%s') are not allowed",
        versions: "*",
        origin: "refs/reftable-backend.c prepare (symref split)",
    },
    // D/F conflicts: `refs_verify_refname_available` (per update up to 2.49, batched after
    // the per-update checks since 2.50).
    Wording {
        class: DfConflict,
        format: "'%s' exists; cannot create '%s'",
        versions: "*",
        origin: "refs.c refs_verify_refname(s)_available",
    },
    Wording {
        class: DfConflict,
        format: "cannot process '%s' and '%s' at the same time",
        versions: "*",
        origin: "refs.c refs_verify_refname(s)_available",
    },
    // Objects: checked in the backend's prepare up to 2.54, when an update is queued since.
    Wording {
        class: MissingObject,
        format: "trying to write ref '%s' with nonexistent object %s",
        versions: "*",
        origin: "refs/reftable-backend.c prepare; refs.c ref_transaction_update",
    },
    Wording {
        class: NonCommit,
        format: "trying to write non-commit object %s to branch '%s'",
        versions: "*",
        origin: "refs/reftable-backend.c prepare; refs.c ref_transaction_update",
    },
    // Old values.
    Wording {
        class: OldValue,
        format: "cannot lock ref '%s': unable to resolve reference '%s'",
        versions: "*",
        origin: "refs/reftable-backend.c prepare (missing ref expected to exist)",
    },
    Wording {
        class: OldValue,
        format: "cannot lock ref '%s': reference already exists",
        versions: "*",
        origin: "refs.c ref_update_check_old_target / backend old-oid check",
    },
    Wording {
        class: OldValue,
        format: "cannot lock ref '%s': reference is missing but expected %s",
        versions: "*",
        origin: "refs/reftable-backend.c prepare",
    },
    Wording {
        class: OldValue,
        format: "cannot lock ref '%s': is at %s but expected %s",
        versions: "*",
        origin: "refs/reftable-backend.c prepare; refs.c ref_update_check_old_target",
    },
    Wording {
        class: OldValue,
        format: "cannot lock ref '%s': expected symref with target '%s': but is a regular ref",
        versions: ">= 2.46.0",
        origin: "refs.c ref_update_check_old_target",
    },
    Wording {
        class: OldValue,
        format: "cannot lock ref '%s': dangling symref already exists",
        versions: ">= 2.52.0",
        origin: "refs/reftable-backend.c prepare_single_update (450fc2bace: no-deref write expecting no ref, of a dangling symref)",
    },
    Wording {
        class: OldValue,
        format: "cannot lock ref '%s': error reading reference",
        versions: "*",
        origin: "refs/reftable-backend.c prepare (no-deref symref that does not resolve)",
    },
    Wording {
        class: OldValue,
        format: "verifying symref target: '%s': is at %s but expected %s",
        versions: ">= 2.46.0",
        origin: "refs.c ref_update_check_old_target",
    },
    Wording {
        class: OldValue,
        format: "verifying symref target: '%s': reference is missing but expected %s",
        versions: ">= 2.46.0",
        origin: "refs.c ref_update_check_old_target",
    },
    // Storage and locks.
    Wording {
        class: EntryTooLarge,
        format: "reftable: transaction %s: entry too large",
        versions: "*",
        origin: "refs/reftable-backend.c prepare / transaction_finish (REFTABLE_ENTRY_TOO_BIG_ERROR: a record larger than a block)",
    },
    Wording {
        class: Lock,
        format: "reftable: transaction %s: data is locked",
        versions: "*",
        origin: "refs/reftable-backend.c prepare / finish (REFTABLE_LOCK_ERROR)",
    },
    Wording {
        class: Outdated,
        format: "unable to compact stack: data concurrently modified",
        versions: ">= 2.52.0",
        origin: "refs/reftable-backend.c reftable_be_pack_refs: REFTABLE_OUTDATED_ERROR from the stack's compaction (54d25de3ea, v2.52.0; earlier gits exit 244 silently)",
    },
    Wording {
        class: Outdated,
        format: "reftable: transaction prepare: data concurrently modified",
        versions: "< 2.47.0",
        origin: "refs/reftable-backend.c prepare_transaction_update: the stack changed before tables.list.lock was taken (2.47.0 reloads under the lock instead, 80e7342ea8 / 6241ce2170)",
    },
    Wording {
        class: Lock,
        format: "unable to compact stack: data is locked",
        versions: "*",
        origin: "refs/reftable-backend.c reftable_be_pack_refs (REFTABLE_LOCK_ERROR from the stack's compaction: a table or tables.list.lock is held)",
    },
    Wording {
        class: Lock,
        format: "cannot lock references",
        versions: "*",
        origin: "refs/reftable-backend.c prepare_transaction_update (tables.list.lock held; waits reftable.lockTimeout since 2.47)",
    },
    // Reflogs: `git reflog expire` / `git reflog delete` on a ref without one.
    Wording {
        class: NoReflog,
        format: "%s points nowhere!",
        versions: "< 2.50.0",
        origin: "builtin/reflog.c cmd_reflog_expire / reflog.c reflog_delete",
    },
    Wording {
        class: NoReflog,
        format: "not a reflog: %s",
        versions: "*",
        origin: "reflog.c reflog_delete (`git reflog delete` of a name without `@{...}`)",
    },
    Wording {
        class: NoReflog,
        format: "no reflog for '%s'",
        versions: "*",
        origin: "reflog.c reflog_delete (`git reflog delete` of a ref without a reflog)",
    },
    Wording {
        class: NoReflog,
        format: "reflog could not be found: '%s'",
        versions: ">= 2.50.0",
        origin: "builtin/reflog.c, reflog.c",
    },
    // `git branch -m/-c`: the command's own checks, then the backend's.
    Wording {
        class: NoBranch,
        format: "no branch named '%s'",
        versions: "*",
        origin: "builtin/branch.c copy_or_rename_branch",
    },
    Wording {
        class: BranchExists,
        format: "a branch named '%s' already exists",
        versions: "*",
        origin: "branch.c validate_new_branchname",
    },
    // `git refs rename`: the command's own checks before the backend's rename.
    Wording {
        class: NoBranch,
        format: "reference does not exist: '%s'",
        versions: "*",
        origin: "builtin/refs.c cmd_refs_rename",
    },
    Wording {
        class: BranchExists,
        format: "reference already exists: '%s'",
        versions: "*",
        origin: "builtin/refs.c cmd_refs_rename",
    },
    Wording {
        class: BadName,
        format: "'%s' is not a valid branch name",
        versions: "*",
        origin: "branch.c validate_branchname",
    },
    Wording {
        class: BadName,
        format: "'%s' is not a valid tag name.",
        versions: "*",
        origin: "builtin/tag.c cmd_tag",
    },
    // `git checkout --orphan` with no start point switches from `HEAD`'s commit: a `HEAD`
    // that names none (an unborn branch, a tree) has no branch to leave.
    Wording {
        class: NoBranch,
        format: "You are on a branch yet to be born",
        versions: "*",
        origin: "builtin/checkout.c switch_branches",
    },
    Wording {
        class: SymrefNotMovable,
        format: "refname %s is a symbolic ref, copying it is not supported",
        versions: "*",
        origin: "refs/reftable-backend.c write_copy_table (the same words for a rename)",
    },
    // The command's last words when the backend failed: alone (the wordings above come
    // first), they mean a failure the backend does not report, in the gate's cases a record
    // too large for the block size (the new name's reflog entries are always written).
    // (Before f57cc987a9, 2.46.0, a copy into a directory of its own name also ended with
    // these words alone: the backend skipped the old name in a copy's D/F check too, and
    // the reftable library's refusal printed nothing. That is a git defect of 2.45, an
    // expected divergence there, not a second meaning of the wording.)
    Wording {
        class: EntryTooLarge,
        format: "branch copy failed",
        versions: "*",
        origin: "builtin/branch.c copy_or_rename_branch after REFTABLE_ENTRY_TOO_BIG_ERROR from write_copy_table",
    },
    Wording {
        class: EntryTooLarge,
        format: "branch rename failed",
        versions: "*",
        origin: "builtin/branch.c copy_or_rename_branch after REFTABLE_ENTRY_TOO_BIG_ERROR from write_copy_table",
    },
];

/// Refusals git reports by exit status alone: the reflog commands return the reftable
/// library's negative error code, which the process exits with (256 + code), and print
/// nothing (refs/reftable-backend.c `reftable_be_reflog_expire`).
pub const SILENT_EXITS: &[(i32, ErrClass, &str)] = &[
    (
        244,
        Outdated,
        "REFTABLE_OUTDATED_ERROR (-12) from pack-refs and reflog expire/delete: another writer changed the stack after it was loaded",
    ),
    (
        245,
        EntryTooLarge,
        "REFTABLE_ENTRY_TOO_BIG_ERROR (-11) from reflog expire/delete: a kept entry does not fit a block",
    ),
    (
        251,
        Lock,
        "REFTABLE_LOCK_ERROR (-5) from reflog expire/delete, and from pack-refs when tables.list.lock is held",
    ),
];

/// The class of a failed command that exited with `code` and printed `stderr`: by its
/// message, or by its exit status when it printed nothing.
pub fn classify_exit(code: i32, stderr: &str) -> Option<ErrClass> {
    if stderr.trim().is_empty() {
        return SILENT_EXITS
            .iter()
            .find(|(c, _, _)| *c == code)
            .map(|(_, class, _)| *class);
    }
    classify(stderr)
}

/// Whether `line` has the literal pieces of `format` (split at `%s`) in order, the first at
/// the start of the message (after git's `fatal: ` / `error: ` / `prepare: ` prefixes).
fn matches(format: &str, line: &str) -> bool {
    matched_literals(format, line) == Some((true, literal_len(format)))
}

fn literal_len(format: &str) -> usize {
    format.split("%s").map(str::len).sum()
}

/// How far `line` follows `format`: whether every piece was found, and the bytes of the
/// pieces found (in order, stopping at the first missing one). `None` when not even the first
/// piece is there.
fn matched_literals(format: &str, line: &str) -> Option<(bool, usize)> {
    let mut pieces = format.split("%s");
    let first = pieces.next().unwrap_or("");
    let start = line.find(first)?;
    let mut rest = &line[start + first.len()..];
    let mut matched = first.len();
    let pieces: Vec<&str> = pieces.collect();
    for (i, p) in pieces.iter().enumerate() {
        if p.is_empty() {
            continue;
        }
        // The last piece must end the line (so `%s points nowhere!` matches whole names).
        let at = if i + 1 == pieces.len() {
            rest.rfind(p)
        } else {
            rest.find(p)
        };
        match at {
            Some(at) => {
                rest = &rest[at + p.len()..];
                matched += p.len();
            }
            None => return Some((false, matched)),
        }
    }
    Some((true, matched))
}

/// git formats a message in a 4,096-byte buffer (usage.c `vreportf`): a longer message (one
/// naming a 4,000-byte ref, say) is cut to 4,095 bytes, `fatal: ` included.
const GIT_REPORT_LINE: usize = 4095;

/// A command's last words after its backend failed, which name a class only when git
/// printed nothing more specific before them.
const LAST_WORDS: [&str; 2] = ["branch copy failed", "branch rename failed"];

/// The wording of git's `stderr`: the first entry matching one of its lines. A line git cut
/// at its report buffer takes the wording whose pieces it follows furthest; that comes
/// before a command's last words ("branch copy failed"), which it explains.
pub fn wording(stderr: &str) -> Option<&'static Wording> {
    let whole = |last_words: bool| {
        (WORDINGS.iter())
            .filter(|w| LAST_WORDS.contains(&w.format) == last_words)
            .find(|w| stderr.lines().any(|line| matches(w.format, line)))
    };
    whole(false)
        .or_else(|| cut_line_wording(stderr))
        .or_else(|| whole(true))
}

/// The wording a line git cut at its report buffer follows furthest.
fn cut_line_wording(stderr: &str) -> Option<&'static Wording> {
    let cut = stderr.lines().filter(|l| l.len() == GIT_REPORT_LINE);
    cut.flat_map(|line| {
        WORDINGS
            .iter()
            .filter_map(move |w| matched_literals(w.format, line).map(|(_, score)| (score, w)))
    })
    .fold(
        None,
        |best: Option<(usize, &'static Wording)>, (score, w)| match best {
            Some((b, _)) if b >= score => best,
            _ => Some((score, w)),
        },
    )
    .map(|(_, w)| w)
}

/// The class of git's `stderr`, `None` when no wording matches.
pub fn classify(stderr: &str) -> Option<ErrClass> {
    wording(stderr).map(|w| w.class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_cut_at_gits_report_buffer_still_match() {
        let name = format!("refs/heads/{}", "a".repeat(5000));
        let full = format!("fatal: trying to write non-commit object 4b825dc642cb6eb9a060e54bf8d69288fbee4904 to branch '{name}'");
        let cut = &full[..GIT_REPORT_LINE];
        assert_eq!(
            classify(cut),
            classify(&full),
            "{:?} / {:?}",
            wording(cut).map(|w| w.format),
            wording(&full).map(|w| w.format)
        );
        assert!(classify(cut).is_some());
        // A line of another length that lacks the end does not match.
        assert!(classify(&full[..GIT_REPORT_LINE - 1]).is_none());
    }

    /// A D/F refusal cut at git's report buffer, then `branch copy failed`: the cut line
    /// names the class, not the last words.
    #[test]
    fn a_cut_reason_comes_before_the_last_words() {
        let name = format!("refs/heads/{}", "b/".repeat(2100));
        let line = format!("error: '{name}' exists; cannot create '{name}/x'");
        let stderr = format!("{}\nfatal: branch copy failed\n", &line[..GIT_REPORT_LINE]);
        assert_eq!(classify(&stderr), Some(DfConflict));
        assert_eq!(classify("fatal: branch copy failed\n"), Some(EntryTooLarge));
    }

    /// One message of each wording, as git prints it.
    fn instance(format: &str) -> String {
        let mut n = 0;
        let mut out = String::from("fatal: ");
        for (i, piece) in format.split("%s").enumerate() {
            if i > 0 {
                n += 1;
                out.push_str(&format!("refs/heads/x{n}"));
            }
            out.push_str(piece);
        }
        out.push('\n');
        out
    }

    #[test]
    fn every_wording_maps_to_its_class() {
        for w in WORDINGS {
            let msg = instance(w.format);
            let found = wording(&msg).expect("classified");
            assert_eq!(
                found.class, w.class,
                "{msg:?} is {:?} by {:?}",
                found.class, found.format
            );
            crate::git::version::VersionRange::parse(w.versions).expect("a version range");
        }
    }

    #[test]
    fn messages_seen_from_git() {
        let cases = [
            ("error: a points nowhere!\n", NoReflog),
            ("error: reflog could not be found: 'refs/heads/topic'\n", NoReflog),
            (
                "fatal: prepare: cannot lock ref 'refs/heads/a': reference already exists\n",
                OldValue,
            ),
            (
                "fatal: prepare: 'refs/heads/b' exists; cannot create 'refs/heads/b/c/d'\n",
                DfConflict,
            ),
            (
                "fatal: trying to write non-commit object 4b825dc642cb6eb9a060e54bf8d69288fbee4904 to branch 'refs/heads/a'\n",
                NonCommit,
            ),
            (
                "fatal: prepare: cannot lock ref 'refs/heads/x': is at 1111 but expected 2222\n",
                OldValue,
            ),
        ];
        for (msg, class) in cases {
            assert_eq!(classify(msg), Some(class), "{msg}");
        }
    }

    #[test]
    fn silent_exits() {
        assert_eq!(classify_exit(245, ""), Some(EntryTooLarge));
        assert_eq!(
            classify_exit(245, "error: no reflog for 'x@{1}'\n"),
            Some(NoReflog)
        );
        assert_eq!(classify_exit(1, ""), None);
    }

    #[test]
    fn unknown_messages_are_unclassified() {
        assert_eq!(classify("fatal: the moon is made of cheese\n"), None);
        assert_eq!(classify(""), None);
        // A known prefix alone is not enough.
        assert_eq!(
            classify("fatal: cannot lock ref 'refs/heads/x': gremlins\n"),
            None
        );
    }
}
