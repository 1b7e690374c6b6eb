//! An implementation's finding as a directory: `finding.json` (the implementation and
//! version it was seen on, the case's seed and length, the role, check, detail and the
//! minimized operations) and `rerun.sh`, which replays those operations through the role
//! against the implementation `--impl` names (another version too): `conformance impl
//! --replay DIR/finding.json` exits 1 while a finding of the same signature shows, 0 once
//! it does not.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::finding::dir::{fresh, rerun_script, write_script, RERUN};
use crate::finding::script::sh_quote;
use crate::impls::case::{run_ops, CaseRun, CaseSpec, Source};
use crate::impls::report::{signature, ImplReport};
use crate::impls::tally::ImplFinding;
use crate::setup::env::Env;

/// What `finding.json` holds.
#[derive(Debug, Serialize, Deserialize)]
pub struct FindingFile {
    /// The implementation and version it was seen on.
    pub implementation: String,
    /// Its version then.
    pub version: String,
    /// The run's seed (the case's options come from it and the case's index).
    pub seed: u64,
    /// Operations per case of the run.
    pub ops_per_case: usize,
    /// The finding, with its minimized operations.
    pub finding: ImplFinding,
}

/// Write a directory under `out` for each distinct finding of `r` that has operations to
/// replay (the concurrent round writes its own); each one's path goes into the report.
pub fn write_findings(r: &mut ImplReport, name: &str, out: &Path) -> Result<(), String> {
    let implementation = r.hello.implementation.clone();
    for (i, d) in r.findings.iter_mut().enumerate() {
        if d.first.ops.is_empty() {
            continue;
        }
        let f = &d.first;
        let dir = out.join(format!(
            "impl-{implementation}-seed{}-{i}-{}-{}",
            r.seed,
            f.role.name(),
            f.check.name()
        ));
        let file = FindingFile {
            implementation: implementation.clone(),
            version: r.hello.version.clone(),
            seed: r.seed,
            ops_per_case: r.ops,
            finding: f.clone(),
        };
        write_one(&dir, &file, name).map_err(|e| format!("{}: {e}", dir.display()))?;
        d.dir = Some(dir.display().to_string());
    }
    Ok(())
}

/// One finding's directory.
fn write_one(dir: &Path, file: &FindingFile, name: &str) -> std::io::Result<()> {
    fresh(dir)?;
    let json = serde_json::to_string_pretty(file).expect("json");
    std::fs::write(dir.join("finding.json"), json + "\n")?;
    let f = &file.finding;
    let about = format!(
        "{} {} {} {}: {}\nReplays the finding's {} operations; exit 1 while it shows, 0 once it does not.\nAnother implementation or version: sh rerun.sh --impl NAME",
        file.implementation,
        file.version,
        f.role.name(),
        f.check.name(),
        f.detail.lines().next().unwrap_or(""),
        f.ops.len()
    );
    let args = format!(
        "impl --impl {} --replay \"$here/finding.json\"",
        sh_quote(name)
    );
    write_script(&dir.join(RERUN), &rerun_script(&about, "", &args))
}

/// `conformance impl --replay FILE`: the finding's operations through its role on the
/// implementation of `argv`; 1 when a finding of the same signature shows, 0 when not.
pub fn replay(
    env: &Env,
    argv: &[String],
    timeout: Duration,
    path: &PathBuf,
) -> Result<i32, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: FindingFile =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let f = &file.finding;
    let (opts, _) = crate::cases::generate::generate(file.seed, f.index, file.ops_per_case);
    let roles = [f.role];
    let spec = CaseSpec {
        argv,
        timeout,
        roles: &roles,
        case: (file.seed, f.index, file.ops_per_case),
        damaged_trials: 20,
    };
    let want = signature(f);
    match run_ops(env, &spec, opts, Source::Given(&f.ops))? {
        CaseRun::Skipped(why) => Err(format!("the case was not run: {why}")),
        CaseRun::Ran(t) => match t.findings.iter().find(|g| signature(g) == want) {
            Some(g) => {
                println!("shows: {} {}: {}", g.role.name(), g.check.name(), g.detail);
                Ok(1)
            }
            None => {
                let other: Vec<String> = t.findings.iter().map(signature).collect();
                println!("gone: {want} (other findings: {other:?})");
                Ok(0)
            }
        },
    }
}
