//! The findings of a run written out at its end: each finding's damage minimized, its
//! directory written (the damaged repository with a git-only `reproduce.sh`, and the
//! portable form the run's one `reproduce.sh` beside the findings rebuilds), the finding filed into the report.

use std::collections::BTreeMap;
use std::path::Path;

use crate::finding::dir::{fresh, write_script, REPRODUCE};
use crate::setup::env::Env;
use crate::stack_files::copy_dir;

use super::base::Base;
use super::class::{Class, Side};
use super::config::DamageConfig;
use super::damage::Edit;
use super::minimize::minimize;
use super::report::{DamageReport, Finding};
use super::sides::git_args;
use super::signature::Key;
use super::trial::Trial;

/// Minimize every finding (by key, as gathered; unless told not to) on its base, write its directory under
/// `cfg.out` (work files under `work`) and file it into `report` by side.
pub(crate) fn write_findings(
    env: &Env,
    cfg: &DamageConfig,
    bases: &[Base],
    found: BTreeMap<Key, Finding>,
    work: &Path,
    report: &mut DamageReport,
) {
    for (n, (key, mut f)) in found.into_iter().enumerate() {
        let base = &bases[f.base];
        if cfg.minimize {
            f.damage = minimize(
                env,
                cfg,
                base,
                f.damage.clone(),
                &work.join("minimize"),
                &key,
            );
        }
        let dir = cfg
            .out
            .join(format!("{}-{}-{}-{n}", f.side, f.class, f.command));
        if write_finding(env, base, &f, &dir).is_ok() {
            f.case_dir = Some(dir.display().to_string());
        }
        if f.side == Side::Git {
            report.git_findings.push(f);
        } else {
            report.ours_findings.push(f);
        }
    }
}

/// The git-only reproducer of every finding of a run, written once beside them:
/// `sh reproduce.sh FINDING-DIR [GIT]`.
const PORTABLE: &str = include_str!("reproduce.sh");

/// Write a finding's damaged repository and a git-only reproducer.
fn write_finding(env: &Env, base: &Base, f: &Finding, dir: &Path) -> Result<(), String> {
    fresh(dir).map_err(|e| e.to_string())?;
    let t = Trial::prepare(base, &f.damage, &dir.join("work"))?;
    copy_dir(&t.git_repo, &dir.join("repo"), None)?;
    copy_dir(&t.dir.join("outside"), &dir.join("outside"), None)?;
    let _ = std::fs::remove_dir_all(dir.join("work"));
    let args: Vec<String> = git_args(base, &f.command)
        .iter()
        .map(|a| crate::finding::script::sh_quote(a))
        .collect();
    let about = format!(
        "# {} {} on `{}` ({}), found by reftable-rs `conformance damaged`.\n# Damage: {}\n",
        f.side,
        f.class,
        f.command,
        f.signature,
        f.damage
            .edits
            .iter()
            .map(Edit::summary)
            .collect::<Vec<_>>()
            .join("; "),
    );
    let args = args.join(" ");
    let script = reproducer(&about, f.side, f.class, &args);
    write_script(&dir.join(REPRODUCE), &script).map_err(|e| e.to_string())?;
    // The portable form: the damaged stack, the command (`command`, shell-quoted) and the
    // object format, which the run's one `reproduce.sh` puts into a fresh repository with the
    // objects of the case's pool as alternate (`objects-<hash>` beside the findings).
    copy_dir(&dir.join("repo/.git/reftable"), &dir.join("stack"), None)?;
    let objects = dir.with_file_name(format!("objects-{}", base.hash.name()));
    if !objects.exists() {
        copy_dir(&dir.join("repo/.git/objects"), &objects, Some("info"))?;
    }
    std::fs::write(dir.join("command"), format!("{args}\n")).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("object-format"), format!("{}\n", base.hash.name()))
        .map_err(|e| e.to_string())?;
    let shared = dir.with_file_name(REPRODUCE);
    if !shared.exists() {
        std::fs::write(&shared, PORTABLE).map_err(|e| e.to_string())?;
    }
    let json = serde_json::to_string_pretty(f).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("finding.json"), json).map_err(|e| e.to_string())?;
    let _ = env;
    Ok(())
}

/// The test of the finding's class on git's run: a shell condition over `$status` (the exit
/// status, 124 past the timeout), `$out` and `$err` (files with its output) and `$before`
/// / `$after` (the listing outside the repository); none on our side, which git alone does
/// not show.
fn shows(side: Side, class: Class) -> Option<&'static str> {
    if side == Side::Ours {
        return None;
    }
    Some(match class {
        Class::Crash => {
            "{ [ $status -gt 128 ] && [ $status -lt 193 ]; } || grep -q 'Sanitizer: SEGV\\|Sanitizer:DEADLYSIGNAL' \"$err\""
        }
        Class::Hang => "[ $status -eq 124 ]",
        Class::SanitizerReport => "grep -q 'Sanitizer:\\|runtime error:' \"$err\"",
        Class::HiddenLoadError => "[ $status -eq 0 ] && [ -z \"$(tr -d ' \\t\\n' <\"$out\")\" ]",
        Class::PrintedWhatWeReject => {
            "[ $status -eq 0 ] && [ -n \"$(tr -d ' \\t\\n' <\"$out\")\" ]"
        }
        Class::VerifyPassesWhatWeReject => "[ $status -eq 0 ]",
        Class::TouchedOutside => "[ \"$before\" != \"$after\" ]",
        Class::Panic | Class::AnsweredWhereGitRefused | Class::WrongWhereGitRight => return None,
    })
}

/// A finding's git-only reproducer: git's command (shell words `args`) in the finding's
/// repository, under a 10 s timeout; exit 1 while git does what the finding says, 0 when it
/// does not (and always for a finding of ours), 2 when git cannot run.
fn reproducer(about: &str, side: Side, class: Class, args: &str) -> String {
    let (test, said) = match shows(side, class) {
        Some(test) => (test, format!("git {class}")),
        None => ("false", format!("ours {class}: git alone does not show it")),
    };
    format!(
        r#"#!/bin/sh
{about}# Run with GIT=/path/to/git (default: git). Exit 1 while the defect shows ({said}),
# 0 when it does not, 2 when git cannot run.
cd "$(dirname "$0")/repo" || exit 2
GIT=${{GIT:-git}}
"$GIT" version || {{ echo "cannot run $GIT"; exit 2; }}
out=$(mktemp) && err=$(mktemp) || exit 2
trap 'rm -f "$out" "$err"' EXIT
listing() {{ find ../outside -type f -exec cksum {{}} + 2>/dev/null | sort; }}
before=$(listing)
if command -v timeout >/dev/null; then t="timeout 10"; else t=; fi
GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_TEST_REFTABLE_AUTOCOMPACTION=false $t "$GIT" {args} >"$out" 2>"$err"
status=$?
after=$(listing)
cat "$out"
cat "$err" >&2
echo "exit status $status"
if {test}; then
  echo "DEFECT: {said}"
  exit 1
fi
echo "ok: not shown ({said})"
exit 0
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class's reproducer has the three exits, and git's classes a test of their own.
    #[test]
    fn a_reproducer_exits_1_0_or_2() {
        for side in Side::ALL {
            for class in Class::ALL {
                let s = reproducer("# about\n", side, class, "for-each-ref");
                for exit in ["exit 1\n", "exit 0\n", "exit 2"] {
                    assert!(s.contains(exit), "{side} {class}: no {exit}\n{s}");
                }
                let checked = shows(side, class).is_some();
                assert_eq!(checked, !s.contains("if false;"), "{side} {class}");
            }
        }
        assert!(shows(Side::Git, Class::Panic).is_none());
    }

    /// The reproducer of a hidden load error says so when git prints nothing and exits 0,
    /// and not when git prints; a crash's when git dies of a signal.
    #[test]
    fn a_reproducer_tells_the_defect_by_its_class() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("repo")).unwrap();
        let fake = dir.path().join("git");
        let run = |class: Class, fake_git: &str| {
            // Written by a short-lived process, so that no fork of another test's thread
            // holds it open for writing when it is executed (ETXTBSY).
            let _ = std::fs::remove_file(&fake);
            reftable_testkit::exec_file::write_executable(&fake, fake_git).unwrap();
            let script = dir.path().join(REPRODUCE);
            std::fs::write(&script, reproducer("", Side::Git, class, "x")).unwrap();
            let o = std::process::Command::new("sh")
                .arg(&script)
                .env("GIT", &fake)
                .output()
                .unwrap();
            o.status.code().unwrap()
        };
        assert_eq!(run(Class::HiddenLoadError, "#!/bin/sh\nexit 0\n"), 1);
        assert_eq!(run(Class::HiddenLoadError, "#!/bin/sh\necho ref\n"), 0);
        assert_eq!(
            run(
                Class::Crash,
                "#!/bin/sh\n[ \"$1\" = version ] || kill -SEGV $$\n"
            ),
            1
        );
        assert_eq!(
            run(
                Class::Crash,
                "#!/bin/sh\n[ \"$1\" = version ] || exit 128\n"
            ),
            0
        );
        assert_eq!(
            run(
                Class::Crash,
                "#!/bin/sh\n[ \"$1\" = version ] && exit 127\n"
            ),
            2
        );
    }
}
