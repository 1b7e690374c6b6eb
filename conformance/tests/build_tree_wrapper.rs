//! A build tree's `bin-wrappers/git` is run as the binary it names, with the environment it
//! sets, and only when git then sees the environment the script would give it. The wrappers
//! here are written for the git under test (on `PATH`, or `REFTABLE_TEST_GIT`), as a build
//! tree's would be for its own binary.

use std::path::{Path, PathBuf};

use conformance::git::driver::Git;

/// A wrapper script in `dir` for the binary `program`, shaped as git's build writes them,
/// with `extra` lines before its `case`.
fn wrapper(dir: &Path, program: &Path, exec_path: &str, extra: &str) -> PathBuf {
    let d = dir.display();
    let script = format!(
        r#"#!/bin/sh

# A stand-in for a build tree's wrapper.

GIT_EXEC_PATH='{exec_path}'
if test -n "$NO_SET_GIT_TEMPLATE_DIR"
then
	unset GIT_TEMPLATE_DIR
else
	GIT_TEMPLATE_DIR='{d}/templates'
	export GIT_TEMPLATE_DIR
fi
GITPERLLIB='{d}/perl'"${{GITPERLLIB:+:$GITPERLLIB}}"
PATH='{d}/bin-wrappers:'"$PATH"
{extra}
export GIT_EXEC_PATH GITPERLLIB PATH

case "$GIT_DEBUGGER" in
'')
	exec "{}" "$@"
	;;
esac
"#,
        program.display()
    );
    let path = dir.join(format!("wrapper-{}", extra.len()));
    std::fs::write(&path, script).unwrap();
    let mut mode = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    std::fs::set_permissions(&path, mode).unwrap();
    path
}

/// What git hands a shell alias: `NAME=value` lines.
fn seen_env(git: &Git, dir: &Path) -> Vec<String> {
    let out = git.ok(dir, &["-c", "alias.show-env=!env", "show-env"], "");
    out.unwrap().lines().map(str::to_string).collect()
}

#[test]
fn a_wrapper_runs_as_its_binary_with_its_environment() {
    let Some(real) = reftable_testkit::skip::or_skip(Git::find(None)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("templates")).unwrap();
    let exec_path = real.ok(dir.path(), &["--exec-path"], "").unwrap();
    let exec_path = exec_path.trim();

    let plain = wrapper(dir.path(), real.bin(), exec_path, "");
    let git = Git::find(Some(&plain)).unwrap();
    assert_eq!(git.bin(), plain);
    assert_eq!(git.program(), real.bin(), "the wrapper is read");
    let env = seen_env(&git, dir.path());
    let d = dir.path().display();
    for line in [
        format!("GIT_EXEC_PATH={exec_path}"),
        format!("GIT_TEMPLATE_DIR={d}/templates"),
        format!("GITPERLLIB={d}/perl"),
    ] {
        assert!(env.contains(&line), "{line} not in {env:?}");
    }
    // git puts its exec path first.
    let path = format!("{d}/bin-wrappers:");
    let on_path = |l: &String| l.starts_with("PATH=") && l.contains(&path);
    assert!(env.iter().any(on_path), "{env:?}");
    let repo = dir.path().join("repo");
    let init = [
        "init",
        "-q",
        "--ref-format=reftable",
        repo.to_str().unwrap(),
    ];
    git.ok(dir.path(), &init, "").unwrap();
    assert!(repo.join(".git/reftable/tables.list").is_file());
}

#[test]
fn a_wrapper_is_run_as_is_when_it_is_not_read_or_not_equivalent() {
    let Some(real) = reftable_testkit::skip::or_skip(Git::find(None)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let exec_path = real.ok(dir.path(), &["--exec-path"], "").unwrap();
    // A line the template never had: the script runs, shell and all.
    let unread = wrapper(dir.path(), real.bin(), exec_path.trim(), "true");
    let git = Git::find(Some(&unread)).unwrap();
    assert_eq!(git.program(), unread);
    let env = seen_env(&git, dir.path());
    assert!(
        env.iter().any(|l| l.starts_with("GIT_EXEC_PATH=")),
        "{env:?}"
    );
    // Read, but it sets a variable the gate sets after it: git would see the script's
    // value through the script and the gate's when started directly.
    let autocompaction =
        "GIT_TEST_REFTABLE_AUTOCOMPACTION='true'\nexport GIT_TEST_REFTABLE_AUTOCOMPACTION";
    let differs = wrapper(dir.path(), real.bin(), exec_path.trim(), autocompaction);
    let git = Git::find(Some(&differs)).unwrap();
    assert_eq!(git.program(), differs);
    let env = seen_env(&git, dir.path());
    assert!(env.contains(&"GIT_TEST_REFTABLE_AUTOCOMPACTION=true".to_string()));
}
