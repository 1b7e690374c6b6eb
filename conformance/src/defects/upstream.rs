//! What is handed to git's maintainers for a known defect: the test in git's `t/` style
//! (named by the registry entry's `upstream`), and a short message for the mailing list
//! written from the entry's reason and evidence.

use std::path::{Path, PathBuf};

use crate::defects::registry::{Expected, ExpectedSet};
use crate::git::sanitizer::Sanitizer;

/// Where a defect that is a security matter goes first (git's `SECURITY.md`), instead of
/// the public mailing list.
pub const SECURITY_LIST: &str = "git-security@googlegroups.com";

/// The files `conformance upstream ID` writes for one defect.
#[derive(Debug)]
pub struct Handover {
    /// The `t/` test, copied under its own name.
    pub test: PathBuf,
    /// The message for the mailing list.
    pub message: PathBuf,
}

/// Write the `t/` test and the message of the entry `id` into `out`.
pub fn hand_over(known: &ExpectedSet, id: &str, out: &Path) -> Result<Handover, String> {
    let e = known
        .entries()
        .find(|e| e.id == id)
        .ok_or_else(|| format!("no known git defect {id} in {}", known.path.display()))?;
    if e.upstream.is_empty() {
        return Err(format!(
            "{id} has no test in git's style yet (no \"upstream\" in its entry)"
        ));
    }
    let source = known.resolve(&e.upstream);
    let name = source
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", e.upstream))?;
    std::fs::create_dir_all(out).map_err(|err| format!("{}: {err}", out.display()))?;
    let text =
        std::fs::read_to_string(&source).map_err(|err| format!("{}: {err}", source.display()))?;
    if let Some(missing) = style_needles(e).into_iter().find(|n| !text.contains(n)) {
        return Err(format!(
            "{}: not a test in git's style for this defect (no {missing})",
            e.upstream
        ));
    }
    let test = out.join(name);
    std::fs::write(&test, text).map_err(|err| format!("{}: {err}", test.display()))?;
    let message = out.join(format!("{id}.txt"));
    std::fs::write(&message, mail(e, &name.to_string_lossy()))
        .map_err(|err| format!("{}: {err}", message.display()))?;
    Ok(Handover { test, message })
}

/// The section every mode's Markdown report ends with when it saw known git defects: for
/// each, its versions, the `t/`-style test that hands it over (or the git-only reproducer
/// while there is none) and the command that writes the test and the mailing-list message.
/// Empty when `ids` is.
pub fn maintainers_section<'a>(
    known: &ExpectedSet,
    ids: impl IntoIterator<Item = &'a str>,
) -> String {
    let ids: std::collections::BTreeSet<&str> = ids.into_iter().collect();
    if ids.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n## For git's maintainers\n\n\
         Known git defects this run saw, and how to hand each over.\n\n\
         | defect | versions | test in git's style | hand over |\n|---|---|---|---|\n",
    );
    for id in ids {
        let Some(e) = known.entries().find(|e| e.id == id) else {
            continue;
        };
        let (test, how) = if e.upstream.is_empty() {
            let repro = if e.reproducer.is_empty() {
                "none".to_string()
            } else {
                format!("none yet; git-only reproducer `{}`", e.reproducer)
            };
            (repro, "-".to_string())
        } else {
            let privately = if e.security.is_empty() {
                String::new()
            } else {
                format!(", privately to {SECURITY_LIST}")
            };
            (
                format!("`{}`", e.upstream),
                format!("`conformance upstream {id}`{privately}"),
            )
        };
        s.push_str(&format!("| `{id}` | {} | {test} | {how} |\n", e.versions));
    }
    s
}

/// How the `t/` test of `e` shows the defect, as git's own tests would: a defect every
/// build shows is a `test_expect_failure` (a known breakage until it is fixed); one only a
/// sanitizer shows is a `test_expect_success` that an ordinary build passes and git's
/// sanitizer CI job fails, as git's tests of such fixes are written.
fn how_it_shows(e: &Expected) -> &'static str {
    if let Some(s) = e.sanitizer {
        match s {
            Sanitizer::Address => {
                "An ordinary build passes it. Built with make SANITIZE=address, as git's\n\
                 sanitizer CI job is, its tests fail while the defect is there and pass\n\
                 once it is fixed."
            }
            Sanitizer::Leak => {
                "An ordinary build passes it. Built with make SANITIZE=leak, as git's\n\
                 leak-checking CI job is, its tests fail while the defect is there and\n\
                 pass once it is fixed."
            }
        }
    } else {
        "It reports \"known breakage\" on a git with the defect and \"known breakage\n\
         vanished\" once it is fixed (then test_expect_failure becomes\n\
         test_expect_success)."
    }
}

/// What a `t/` test of `e` must contain to be in git's style and show the defect.
fn style_needles(e: &Expected) -> [&'static str; 4] {
    let expectation = if e.sanitizer.is_some() {
        "test_expect_success"
    } else {
        "test_expect_failure"
    };
    [
        "test_description=",
        ". ./test-lib.sh",
        expectation,
        "test_done",
    ]
}

/// The mailing-list message: what goes wrong, the evidence, and how to see it; addressed
/// to git's security list, with the reason, when the defect is a security matter.
fn mail(e: &Expected, test: &str) -> String {
    let to = if e.security.is_empty() {
        String::new()
    } else {
        format!(
            "To: {SECURITY_LIST}\n\n\
             Not for the public list until git's maintainers say so: {}\n",
            e.security
        )
    };
    format!(
        "Subject: [BUG] {id}\n{to}\n\
         {reason}\n\n\
         Cause: {evidence}\n\n\
         Affected versions: {versions}.\n\n\
         To see it, copy {test} into t/ of a built git and run\n\n\
         \x20   cd t && sh ./{test} -v\n\n\
         {how} Found by reftable-rs's conformance gate.\n",
        id = e.id,
        reason = e.reason,
        evidence = e.evidence,
        versions = e.versions,
        how = how_it_shows(e),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_upstream_test_is_there_and_in_gits_style() {
        let known = ExpectedSet::load(&crate::defects::registry::default_path()).unwrap();
        let with_tests: Vec<&Expected> =
            known.entries().filter(|e| !e.upstream.is_empty()).collect();
        assert!(!with_tests.is_empty());
        for e in with_tests {
            let text = std::fs::read_to_string(known.resolve(&e.upstream)).unwrap();
            for needle in style_needles(e) {
                assert!(text.contains(needle), "{}: no {needle}", e.upstream);
            }
            if e.sanitizer.is_some() {
                assert!(
                    text.contains("SANITIZE="),
                    "{}: which sanitizer?",
                    e.upstream
                );
            }
            let out = tempfile::tempdir().unwrap();
            let h = hand_over(&known, &e.id, out.path()).unwrap();
            assert_eq!(std::fs::read_to_string(&h.test).unwrap(), text);
            let msg = std::fs::read_to_string(&h.message).unwrap();
            assert!(
                msg.starts_with(&format!("Subject: [BUG] {}\n", e.id)),
                "{msg}"
            );
            assert!(msg.contains(&e.evidence), "{msg}");
            // A security matter is addressed to git's security list, and says why; any
            // other defect to no one (the public list is the default).
            let private = format!("To: {SECURITY_LIST}\n");
            assert_eq!(msg.contains(&private), !e.security.is_empty(), "{msg}");
            assert!(msg.contains(&e.security), "{msg}");
            let section = maintainers_section(&known, [e.id.as_str()]);
            let says = section.contains(&format!("privately to {SECURITY_LIST}"));
            assert_eq!(says, !e.security.is_empty(), "{section}");
        }
        assert!(known.entries().any(|e| !e.security.is_empty()));
        let out = tempfile::tempdir().unwrap();
        assert!(hand_over(&known, "no-such-defect", out.path()).is_err());
    }

    #[test]
    fn the_maintainers_section_names_the_test_or_the_reproducer() {
        let known = ExpectedSet::load(&crate::defects::registry::default_path()).unwrap();
        assert_eq!(maintainers_section(&known, []), "");
        let with = known.entries().find(|e| !e.upstream.is_empty()).unwrap();
        let without = known
            .entries()
            .find(|e| e.upstream.is_empty() && !e.reproducer.is_empty())
            .unwrap();
        let s = maintainers_section(&known, [with.id.as_str(), without.id.as_str(), "unknown"]);
        assert!(
            s.contains(&format!("`conformance upstream {}`", with.id)),
            "{s}"
        );
        assert!(
            s.contains(&format!("git-only reproducer `{}`", without.reproducer)),
            "{s}"
        );
        assert!(!s.contains("unknown"), "{s}");
    }
}
