//! The reference adapter driven through the protocol (adapters/PROTOCOL.md) on a reftable
//! repository git made, its answers checked against what git says. Skips (with the reason
//! printed) where git cannot make a reftable repository.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "reftable-adapter-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(dir.join("home")).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// git in `dir` with a hermetic environment; `Err` with stderr when it fails.
fn git_result(scratch: &Path, dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch.join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "A U Thor")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_AUTHOR_DATE", "1700000000 +0200")
        .env("GIT_COMMITTER_NAME", "C O Mitter")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_COMMITTER_DATE", "1700000000 +0200")
        .output()
        .map_err(|e| format!("running git: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8(out.stdout).unwrap())
}

/// A git repository for one test.
struct Repo {
    scratch: Scratch,
    work: PathBuf,
}

impl Repo {
    /// `git init --ref-format=reftable`, or the reason it cannot be made.
    fn init(tag: &str) -> Result<Repo, String> {
        let scratch = Scratch::new(tag);
        let work = scratch.0.join("repo");
        git_result(
            &scratch.0,
            &scratch.0,
            &["init", "-q", "--ref-format=reftable", "-b", "main", "repo"],
        )
        .map_err(|e| format!("git cannot make a reftable repository: {}", e.trim()))?;
        Ok(Repo { scratch, work })
    }

    fn git(&self, args: &[&str]) -> String {
        git_result(&self.scratch.0, &self.work, args)
            .unwrap_or_else(|e| panic!("git {args:?}: {e}"))
    }

    fn gitdir(&self) -> String {
        self.work.join(".git").to_str().unwrap().to_string()
    }
}

/// The adapter process.
struct Adapter {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Adapter {
    fn start() -> Adapter {
        let mut child = Command::new(env!("CARGO_BIN_EXE_reftable-adapter"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Adapter {
            child,
            stdin,
            stdout,
        }
    }

    fn ask(&mut self, req: Value) -> Value {
        writeln!(self.stdin, "{req}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "adapter died on {req}"
        );
        serde_json::from_str(&line).unwrap()
    }

    /// Close stdin and expect exit status 0.
    fn finish(mut self) {
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

/// A repository with two commits, a branch, an annotated tag and a symref, with reflogs.
fn fixture(repo: &Repo) -> (String, String) {
    repo.git(&["commit", "-q", "--allow-empty", "-m", "one"]);
    let c1 = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.git(&["commit", "-q", "--allow-empty", "-m", "two"]);
    let c2 = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.git(&["update-ref", "-m", "make topic", "refs/heads/topic", &c1]);
    repo.git(&[
        "update-ref",
        "--create-reflog",
        "-m",
        "a note",
        "refs/notes/n",
        &c2,
    ]);
    repo.git(&["tag", "-a", "-m", "ann", "v1"]);
    repo.git(&[
        "symbolic-ref",
        "-m",
        "alias it",
        "refs/heads/alias",
        "refs/heads/topic",
    ]);
    (c1, c2)
}

/// git's refs as the adapter reports them: name, oid, symref, peeled.
fn git_refs(repo: &Repo) -> Vec<Value> {
    let fmt = "--format=%(refname) %(objectname) %(symref) %(*objectname)";
    let out = repo.git(&["for-each-ref", "--include-root-refs", fmt]);
    let opt = |s: &str| if s.is_empty() { Value::Null } else { json!(s) };
    out.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            json!({"name": f[0], "oid": opt(f[1]), "symref": opt(f[2]), "peeled": opt(f[3])})
        })
        .collect()
}

/// git's reflog of `name` as the adapter reports it (old ids from the next older entry's
/// new id: the fixture's reflogs are chains).
fn git_reflog(repo: &Repo, name: &str) -> Vec<Value> {
    let fmt = "--format=%H%x00%gn%x00%ge%x00%gd%x00%gs";
    let out = repo.git(&["log", "-g", "--date=raw", fmt, name, "--"]);
    let rows: Vec<Vec<String>> = out
        .lines()
        .map(|l| l.split('\0').map(str::to_string).collect())
        .collect();
    let null = "0".repeat(40);
    (0..rows.len())
        .map(|i| {
            let r = &rows[i];
            let old = rows.get(i + 1).map_or(null.clone(), |o| o[0].clone());
            // %gd with --date=raw: "name@{1700000000 +0200}".
            let date = r[3].rsplit_once("@{").unwrap().1.trim_end_matches('}');
            let (time, tz) = date.split_once(' ').unwrap();
            json!({"old": old, "new": r[0], "name": r[1], "email": r[2],
                   "time": time.parse::<u64>().unwrap(), "tz": tz.parse::<i64>().unwrap(),
                   "message": r[4]})
        })
        .collect()
}

fn open(repo: &Repo) -> Adapter {
    let mut a = Adapter::start();
    let hello = a.ask(json!({"verb": "hello", "protocol": 1, "id": 7}));
    assert_eq!(hello["answer"], "done");
    assert_eq!(hello["id"], 7);
    assert_eq!(hello["protocol"], 1);
    assert_eq!(hello["implementation"], "reftable-rs");
    for verb in ["open", "refs", "ref", "reflog", "reflogs", "transaction"] {
        assert!(
            hello["verbs"].as_array().unwrap().contains(&json!(verb)),
            "{verb}"
        );
    }
    let opened = a.ask(json!({"verb": "open", "gitdir": repo.gitdir()}));
    assert_eq!(opened, json!({"answer": "done", "hash": "sha1"}));
    a
}

const ME: &str =
    r#"{"name": "Ad A Pter", "email": "adapter@example.com", "time": 1700000500, "tz": -800}"#;

fn transaction(a: &mut Adapter, updates: Value) -> Value {
    let committer: Value = serde_json::from_str(ME).unwrap();
    a.ask(json!({"verb": "transaction", "committer": committer, "updates": updates}))
}

fn init_or_skip(tag: &str) -> Option<Repo> {
    match Repo::init(tag) {
        Ok(r) => Some(r),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

#[test]
fn reads_match_git() {
    let Some(repo) = init_or_skip("reads") else {
        return;
    };
    let (_c1, c2) = fixture(&repo);
    let mut a = open(&repo);
    let refs = a.ask(json!({"verb": "refs"}));
    assert_eq!(refs["answer"], "done");
    assert_eq!(refs["refs"], json!(git_refs(&repo)));
    let head = a.ask(json!({"verb": "ref", "name": "HEAD"}));
    assert_eq!(
        head["ref"],
        json!({"name": "HEAD", "oid": c2, "symref": "refs/heads/main", "peeled": null})
    );
    assert_eq!(
        a.ask(json!({"verb": "ref", "name": "refs/heads/nope"})),
        json!({"answer": "done", "ref": null})
    );
    let names = a.ask(json!({"verb": "reflogs"}));
    let git_names: Vec<String> = repo
        .git(&["reflog", "list"])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(names["names"], json!(git_names));
    for name in &git_names {
        let log = a.ask(json!({"verb": "reflog", "name": name}));
        assert_eq!(log["exists"], true, "{name}");
        assert_eq!(log["entries"], json!(git_reflog(&repo, name)), "{name}");
    }
    let none = a.ask(json!({"verb": "reflog", "name": "refs/tags/v1"}));
    assert_eq!(
        none,
        json!({"answer": "done", "exists": false, "entries": []})
    );
    assert_eq!(
        a.ask(json!({"verb": "frobnicate"}))["answer"],
        "unsupported"
    );
    assert_eq!(a.ask(json!({"verb": "quit"}))["answer"], "done");
    a.finish();
}

#[test]
fn transactions_match_git() {
    let Some(repo) = init_or_skip("writes") else {
        return;
    };
    let (c1, c2) = fixture(&repo);
    let mut a = open(&repo);
    // Accepted: topic fast-forwarded with its old value, a new symref, a deletion.
    let done = transaction(
        &mut a,
        json!([
            {"name": "refs/heads/topic", "new": c2, "old": c1, "message": "fast-forward"},
            {"name": "refs/heads/alias2", "new": {"symref": "refs/heads/main"}, "old": "absent", "no_deref": true},
            {"name": "refs/notes/n", "new": null, "old": c2},
        ]),
    );
    assert_eq!(done, json!({"answer": "done"}));
    assert_eq!(repo.git(&["rev-parse", "refs/heads/topic"]).trim(), c2);
    assert_eq!(
        repo.git(&["symbolic-ref", "refs/heads/alias2"]).trim(),
        "refs/heads/main"
    );
    assert!(!repo.git(&["for-each-ref"]).contains("refs/notes/n"));
    let top = &git_reflog(&repo, "refs/heads/topic")[0];
    assert_eq!(top["message"], "fast-forward");
    assert_eq!(top["name"], "Ad A Pter");
    assert_eq!(
        (top["time"].clone(), top["tz"].clone()),
        (json!(1700000500), json!(-800))
    );
    // What the adapter reads back is what git reads.
    assert_eq!(
        a.ask(json!({"verb": "refs"}))["refs"],
        json!(git_refs(&repo))
    );

    // Refused: a wrong old value; nothing written.
    let before = repo.git(&["for-each-ref", "--include-root-refs"]);
    let wrong = transaction(
        &mut a,
        json!([
            {"name": "refs/heads/new", "new": c1, "old": "absent"},
            {"name": "refs/heads/main", "new": c1, "old": c1},
        ]),
    );
    assert_eq!(wrong["answer"], "refused", "{wrong}");
    assert_eq!(wrong["reason"], "old-value");
    assert_eq!(wrong["ref"], "refs/heads/main");
    // Refused: a D/F conflict with refs/heads/main.
    let df = transaction(&mut a, json!([{"name": "refs/heads/main/sub", "new": c1}]));
    assert_eq!(df["answer"], "refused", "{df}");
    assert_eq!(df["reason"], "df-conflict");
    // git agrees: it refuses both too.
    let stdin_git = |input: &str| {
        let mut child = Command::new("git")
            .args(["update-ref", "--stdin"])
            .current_dir(&repo.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", repo.scratch.0.join("home"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait().unwrap().success()
    };
    assert!(!stdin_git(&format!(
        "create refs/heads/new {c1}\nupdate refs/heads/main {c1} {c1}\n"
    )));
    assert!(!stdin_git(&format!("create refs/heads/main/sub {c1}\n")));
    assert_eq!(repo.git(&["for-each-ref", "--include-root-refs"]), before);

    // What the adapter wrote passes git's checks.
    repo.git(&["refs", "verify"]);
    repo.git(&["fsck", "--no-progress"]);
    let verify = a.ask(json!({"verb": "verify"}));
    assert_eq!(verify, json!({"answer": "done", "problems": []}));
    a.finish();
}
