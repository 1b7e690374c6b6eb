//! The findings of a run written out at its end: each finding's damage minimized, its
//! directory written (the damaged repository with a git-only `reproduce.sh`, and the
//! portable form the run's one `reproduce.sh` beside the findings rebuilds), the finding filed into the report.

use std::collections::BTreeMap;
use std::path::Path;

use crate::finding::dir::{fresh, write_script, REPRODUCE};
use crate::setup::env::Env;
use crate::stack_files::copy_dir;

use super::base::Base;
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
        if f.side == "git" {
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
    let script = format!(
        "#!/bin/sh\n{about}# Run with GIT=/path/to/git (default: git). Exit status and signal are printed.\ncd \"$(dirname \"$0\")/repo\" || exit 2\nGIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent GIT_TEST_REFTABLE_AUTOCOMPACTION=false \"${{GIT:-git}}\" {args}\necho \"exit status $?\"\n"
    );
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
