//! The known damaged-stack defects replayed, as the run mode replays its own: each `damaged`
//! entry of the registry in range of the git whose git-only reproducer lives beside its
//! stack (`expected/<id>/reproduce.sh [GIT]`, exit 1 when the defect shows and 0 when it
//! does not) is run once; one that no longer shows fails the run, since the defect was fixed
//! or the entry's range is wrong. An entry only a sanitizer shows is replayed on a git built
//! with that sanitizer, and on no other.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::damaged::report::StaleKnown;
use crate::defects::registry::{ExpectedSet, Mode};
use crate::git::driver::{run_in_group, Exit};
use crate::setup::env::Env;

/// How long one reproducer may run (the slowest waits out a 10 s hang of git).
const TIMEOUT: Duration = Duration::from_secs(120);

/// Each replayable entry in range of `env`'s git that does not reproduce.
pub fn stale(known: &ExpectedSet, env: &Env) -> Vec<StaleKnown> {
    let v = env.profile.git_version();
    let mut out = Vec::new();
    for e in known.in_range_of(&v, Mode::Damaged) {
        if !e.shows_on(&env.profile.sanitizers) {
            continue;
        }
        let script = known.resolve(&e.reproducer);
        let beside_its_stack = script.file_name().is_some_and(|f| f == "reproduce.sh")
            && script
                .parent()
                .and_then(|d| d.file_name())
                .is_some_and(|d| *d == *e.id);
        if e.reproducer.is_empty() || !beside_its_stack {
            continue;
        }
        let stale = |line: String| StaleKnown {
            id: e.id.clone(),
            line,
        };
        let Ok(script) = script.canonicalize() else {
            out.push(stale(format!(
                "known git defect {}: no {}",
                e.id, e.reproducer
            )));
            continue;
        };
        let mut c = Command::new("sh");
        c.arg(&script)
            .arg(env.git.bin())
            .current_dir(env.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match run_in_group(&mut c, TIMEOUT) {
            Ok(Exit::Code(1)) => {}
            Ok(Exit::Code(0)) => out.push(stale(format!(
                "known git defect {} ({}) no longer reproduces on git {v} ({}): remove it from {} or narrow its versions",
                e.id,
                e.versions,
                e.reproducer,
                known.path.display()
            ))),
            Ok(other) => out.push(stale(format!("known git defect {}: {} ended {other:?}", e.id, e.reproducer))),
            Err(err) => out.push(stale(format!("known git defect {}: cannot run {}: {err}", e.id, e.reproducer))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reproducer that says "not there" is stale; one that says "there" is not; one that
    /// needs a sanitizer the git (CI's ordinary build) lacks is not asked.
    #[test]
    fn a_reproducer_that_no_longer_shows_its_defect_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let mut entries = Vec::new();
        for (id, exit, sanitizer) in [("gone", 0, ""), ("there", 1, ""), ("leaks", 0, "leak")] {
            let script = dir.path().join("expected").join(id).join("reproduce.sh");
            std::fs::create_dir_all(script.parent().unwrap()).unwrap();
            std::fs::write(
                &script,
                format!("\"$1\" version >/dev/null || exit 2\nexit {exit}\n"),
            )
            .unwrap();
            let mut e = serde_json::json!({
                "id": id, "mode": "damaged", "versions": "*",
                "detail_contains": "crash *", "reason": "test",
                "reproducer": format!("expected/{id}/reproduce.sh"),
            });
            if !sanitizer.is_empty() {
                e["sanitizer"] = sanitizer.into();
            }
            entries.push(e);
        }
        let registry = dir.path().join("registry.json");
        std::fs::write(&registry, serde_json::to_string(&entries).unwrap()).unwrap();
        let known = ExpectedSet::load(&registry).unwrap();
        let env = Env::new(crate::git::driver::Git::find(None).unwrap()).unwrap();
        let lines = stale(&known, &env);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].id, "gone");
        assert!(
            lines[0]
                .line
                .starts_with("known git defect gone (*) no longer reproduces"),
            "{lines:?}"
        );
    }
}
