//! `refs`, `logs`, `dump`, `stat` and path resolution on the tables git wrote
//! (fixtures/repos): the output equals git's own listings.

mod common;

use common::*;

#[test]
fn refs_equal_gits_listing() {
    for case in cases() {
        let got = ok(&["refs", s(&case.stack())]);
        assert_eq!(got, case.expected("stack.refs"), "{}: stack", case.name);
        for t in &case.tables {
            let got = ok(&["refs", s(&case.stack().join(t))]);
            assert_eq!(
                got,
                case.expected(&format!("{t}.refs")),
                "{}: {t}",
                case.name
            );
        }
    }
}

#[test]
fn logs_equal_gits_listing() {
    let mut compared = 0;
    for case in cases() {
        let got = ok(&["logs", s(&case.stack())]);
        assert_eq!(
            as_git_logs(&got),
            case.expected("stack.logs"),
            "{}: stack",
            case.name
        );
        compared += got.lines().count();
        for t in &case.tables {
            let got = ok(&["logs", s(&case.stack().join(t))]);
            assert_eq!(
                as_git_logs(&got),
                case.expected(&format!("{t}.logs")),
                "{}: {t}",
                case.name
            );
        }
    }
    assert!(compared > 1000, "only {compared} log lines compared");
}

#[test]
fn logs_of_one_ref() {
    for case in cases()
        .iter()
        .filter(|c| c.name == "default" || c.name == "tombstones")
    {
        let all = ok(&["logs", s(&case.stack())]);
        for name in ["HEAD", "refs/heads/main", "refs/heads/nope"] {
            let want: String = all
                .lines()
                .filter(|l| l.split(' ').next() == Some(name))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(
                ok(&["logs", s(&case.stack()), name]),
                want,
                "{}: {name}",
                case.name
            );
        }
    }
}

#[test]
fn tombstones_are_listed_on_request() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "tombstones")
        .unwrap();
    let plain = ok(&["refs", s(&case.stack())]);
    let with = ok(&["refs", "--tombstones", s(&case.stack())]);
    let deleted: Vec<&str> = with.lines().filter(|l| l.ends_with(" deleted")).collect();
    assert!(!deleted.is_empty(), "the tombstones case deletes refs");
    let live: String = with
        .lines()
        .filter(|l| !l.ends_with(" deleted"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(live, plain);
    // Names stay in order with tombstones mixed in.
    let names: Vec<&str> = with.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn json_is_one_document_with_the_same_content() {
    for case in cases() {
        let text = ok(&["refs", "--tombstones", s(&case.stack())]);
        let doc: serde_json::Value =
            serde_json::from_str(&ok(&["refs", "--json", "--tombstones", s(&case.stack())]))
                .unwrap();
        let refs = doc["refs"].as_array().unwrap();
        assert_eq!(refs.len(), text.lines().count(), "{}", case.name);
        for (r, line) in refs.iter().zip(text.lines()) {
            let name = r["name"].as_str().unwrap();
            let rebuilt = match r["type"].as_str().unwrap() {
                "oid" => format!("{name} {}", r["value"].as_str().unwrap()),
                "peeled" => format!(
                    "{name} {} {}",
                    r["value"].as_str().unwrap(),
                    r["peeled"].as_str().unwrap()
                ),
                "symref" => format!("{name} ref:{}", r["target"].as_str().unwrap()),
                "deleted" => format!("{name} deleted"),
                t => panic!("type {t}"),
            };
            assert_eq!(rebuilt, line, "{}", case.name);
            assert!(r["update_index"].as_u64().is_some());
        }
        let text = ok(&["logs", s(&case.stack())]);
        let doc: serde_json::Value =
            serde_json::from_str(&ok(&["logs", "--json", s(&case.stack())])).unwrap();
        let logs = doc["logs"].as_array().unwrap();
        assert_eq!(logs.len(), text.lines().count(), "{}", case.name);
        for (l, line) in logs.iter().zip(text.lines()) {
            let prefix = format!(
                "{} {} {} {} {} <{}> {} {} ",
                l["refname"].as_str().unwrap(),
                l["update_index"],
                l["old"].as_str().unwrap(),
                l["new"].as_str().unwrap(),
                l["name"].as_str().unwrap(),
                l["email"].as_str().unwrap(),
                l["time"],
                l["tz"].as_str().unwrap(),
            );
            assert!(line.starts_with(&prefix), "{}: {line}", case.name);
            assert!(l["message"].as_str().unwrap().ends_with('\n'));
        }
        assert_eq!(
            doc["hash"],
            if case.name.starts_with("sha256") {
                "sha256"
            } else {
                "sha1"
            }
        );
    }
}

#[test]
fn dump_and_stat_on_every_git_table() {
    let mut layouts = 0;
    for case in cases() {
        let dump = ok(&["dump", "--blocks", s(&case.stack())]);
        assert!(dump.starts_with("stack "), "{}", case.name);
        for t in &case.tables {
            assert!(dump.contains(&format!("table {t}\n")), "{}: {t}", case.name);
        }
        let stat = ok(&["stat", s(&case.stack())]);
        assert!(stat.contains("compaction would help: "), "{}", case.name);
        // t0613's block layouts: type, where the restart table starts, restart count.
        if let Ok(want) = std::fs::read_to_string(case.dir.join("expected/t0613-layout")) {
            let got: String = dump
                .lines()
                .filter_map(|l| l.strip_prefix("  block at "))
                .map(|l| {
                    let ty = l.split("type ").nth(1).unwrap().chars().next().unwrap();
                    let restarts = l.split(", ").find(|f| f.ends_with(" restarts")).unwrap();
                    let at = l.split("restart table at ").nth(1).unwrap();
                    let at = at.split(',').next().unwrap();
                    format!("{ty} {at} {}\n", restarts.split(' ').next().unwrap())
                })
                .collect();
            assert_eq!(got, want, "{}", case.name);
            layouts += 1;
        }
    }
    assert!(layouts >= 6);
    // Index levels of the multi-level case (blockSize=300, restartInterval=3).
    let case = cases()
        .into_iter()
        .find(|c| c.name == "small-blocks-r3")
        .unwrap();
    let stat = ok(&["stat", s(&case.stack())]);
    assert!(stat.contains("in 2 levels"), "{stat}");
    assert!(stat.contains("obj id length "), "{stat}");
}

#[test]
fn repository_paths_resolve_to_the_stack() {
    let case = cases().into_iter().find(|c| c.name == "default").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let gitdir = repo.join(".git");
    std::fs::create_dir_all(gitdir.join("reftable")).unwrap();
    for e in std::fs::read_dir(case.stack()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), gitdir.join("reftable").join(e.file_name())).unwrap();
    }
    std::fs::write(gitdir.join("HEAD"), "ref: refs/heads/.invalid\n").unwrap();
    std::fs::write(
        gitdir.join("config"),
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefstorage = reftable\n",
    )
    .unwrap();
    let want = case.expected("stack.refs");
    for p in [
        repo.clone(),
        gitdir.clone(),
        gitdir.join("reftable"),
        gitdir.join("reftable/tables.list"),
    ] {
        assert_eq!(ok(&["refs", s(&p)]), want, "{}", p.display());
    }
    ok(&["verify", s(&repo)]);
    // Not a repository, a missing path, a files-backend repository: usage errors (2).
    let files = tmp.path().join("files");
    std::fs::create_dir_all(files.join(".git/refs")).unwrap();
    std::fs::write(files.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for p in [tmp.path().to_path_buf(), tmp.path().join("nope"), files] {
        for cmd in ["refs", "logs", "dump", "stat", "verify"] {
            let o = reftable(&[cmd, s(&p)]);
            assert_eq!(o.status.code(), Some(2), "{cmd} {}", p.display());
            assert!(stderr(&o).starts_with("reftable: "), "{}", stderr(&o));
        }
    }
    // An empty stack (no tables.list yet): nothing listed, and nothing is created.
    let empty = tmp.path().join("empty/.git");
    std::fs::create_dir_all(empty.join("reftable")).unwrap();
    std::fs::write(
        empty.join("config"),
        "[extensions]\n\tobjectFormat = sha256\n",
    )
    .unwrap();
    assert_eq!(ok(&["refs", s(&empty)]), "");
    assert!(ok(&["dump", s(&empty)]).contains("hash sha256"));
    ok(&["verify", s(&empty)]);
    assert_eq!(
        std::fs::read_dir(empty.join("reftable")).unwrap().count(),
        0
    );
    // Usage errors exit 2.
    assert_eq!(reftable(&["refs"]).status.code(), Some(2));
    assert_eq!(reftable(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn dump_blocks_inflates_no_log_block_past_max_inflate() {
    let mut with_logs = 0;
    for case in cases() {
        let all = ok(&["dump", "--blocks", s(&case.stack())]);
        if !all.contains(" (log)") {
            continue;
        }
        with_logs += 1;
        let capped = ok(&["dump", "--blocks", "--max-inflate", "0", s(&case.stack())]);
        assert!(
            !capped.contains(" (log)"),
            "{}: a log block shown",
            case.name
        );
        assert!(capped.contains("not shown"), "{}: no note", case.name);
        // Everything before the log sections is as in the full dump.
        let first = |d: &str| d.lines().take_while(|l| !l.contains(" (log)")).count();
        assert!(first(&capped) >= first(&all).min(2), "{}", case.name);
    }
    assert!(with_logs > 0, "no fixture with log blocks");
}
