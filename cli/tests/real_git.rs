//! Against a real git (skipped without one, fatal under `REFTABLE_REQUIRE_GIT=1`): every
//! subcommand on a repository git made agrees with git's own view of it.

mod common;

use common::*;

/// A repository of the test git, whose clock moves a minute a command.
struct Repo {
    git: reftable_testkit::git::Git,
    repo: std::path::PathBuf,
    tick: std::cell::Cell<u64>,
}

impl Repo {
    fn new(tmp: &std::path::Path) -> Option<Repo> {
        let git = reftable_testkit::git::Git::require()?;
        let repo = tmp.join("repo");
        git.ok(
            tmp,
            reftable_testkit::git::BASE_TIME,
            &[
                "init",
                "-q",
                "--ref-format=reftable",
                "-b",
                "main",
                s(&repo),
            ],
            "",
        );
        Some(Repo {
            git,
            repo,
            tick: std::cell::Cell::new(reftable_testkit::git::BASE_TIME),
        })
    }

    fn run(&self, args: &[&str]) -> String {
        self.tick.set(self.tick.get() + 60);
        self.git.ok(&self.repo, self.tick.get(), args, "")
    }
}

#[test]
fn agrees_with_real_git() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(g) = Repo::new(tmp.path()) else {
        return;
    };
    g.run(&["commit", "-q", "--allow-empty", "-m", "first"]);
    g.run(&["commit", "-q", "--allow-empty", "-m", "second\\with\ttab"]);
    g.run(&["branch", "topic"]);
    g.run(&["tag", "light"]);
    g.run(&["tag", "-a", "-m", "annotated", "v1"]);
    g.run(&[
        "symbolic-ref",
        "-m",
        "sym: point at main",
        "refs/heads/sym",
        "refs/heads/main",
    ]);
    g.run(&[
        "update-ref",
        "-m",
        "custom: create",
        "--create-reflog",
        "refs/custom/x",
        "HEAD~1",
    ]);
    g.run(&["branch", "gone"]);
    g.run(&["branch", "-D", "gone"]);
    g.run(&["commit", "-q", "--allow-empty", "-m", "third"]);
    g.run(&[
        "update-ref",
        "-m",
        "topic: move",
        "refs/heads/topic",
        "HEAD",
    ]);

    let repo = s(&g.repo);
    // refs == for-each-ref --include-root-refs (symrefs here point one level deep).
    let format = "%(refname) %(if)%(symref)%(then)ref:%(symref)%(else)%(objectname)\
                  %(if)%(*objectname)%(then) %(*objectname)%(end)%(end)";
    let git_refs = g.run(&[
        "for-each-ref",
        "--include-root-refs",
        &format!("--format={format}"),
    ]);
    let mut want: Vec<&str> = git_refs.lines().collect();
    want.sort();
    let ours = ok(&["refs", repo]);
    assert_eq!(ours.lines().collect::<Vec<_>>(), want);
    assert!(ours.contains("refs/tags/v1 ") && ours.contains("HEAD ref:refs/heads/main"));

    // logs == log -g for every ref with a reflog.
    let mut want = String::new();
    let mut names: Vec<String> = g
        .run(&["reflog", "list"])
        .lines()
        .map(String::from)
        .collect();
    names.sort();
    for name in &names {
        let out = g.run(&[
            "log",
            "-g",
            "--date=raw",
            "--format=%H%x01%gn%x01%ge%x01%gd%x01%gs",
            name,
            "--",
        ]);
        for line in out.lines() {
            let f: Vec<&str> = line.split('\x01').collect();
            // %gd with --date=raw: <ref>@{<time> <tz>}
            let when = f[3].split("@{").nth(1).unwrap().trim_end_matches('}');
            let msg = f[4].replace('\\', "\\\\").replace('\t', "\\t");
            want.push_str(&format!(
                "{name} {} {} <{}> {when} {msg}\n",
                f[0], f[1], f[2]
            ));
        }
    }
    let ours = ok(&["logs", repo]);
    assert_eq!(as_git_logs(&ours), want);
    // git turns the tab into a space; the backslash is escaped.
    assert!(ours.contains("commit: second\\\\with tab\n"), "{ours}");

    // A clean bill of health for what git wrote, and the other subcommands work.
    let o = reftable(&["verify", repo]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    ok(&["stat", repo]);
    ok(&["dump", "--blocks", repo]);
    let o = reftable(&["refs", "--tombstones", repo]);
    assert!(stdout(&o).contains("refs/heads/gone deleted") || !stdout(&o).contains("gone"));

    // After git pack-refs: one table, re-encoded byte-identically.
    g.run(&["pack-refs"]);
    let list = std::fs::read_to_string(g.repo.join(".git/reftable/tables.list")).unwrap();
    let table = g
        .repo
        .join(".git/reftable")
        .join(list.lines().next().unwrap());
    let out = tmp.path().join("re.ref");
    let said = ok(&["reencode", s(&table), "-o", s(&out)]);
    assert!(said.contains("byte-identical"), "{said}");
    ok(&["verify", repo]);
}
