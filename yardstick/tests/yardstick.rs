//! The yardsticks' self-test, with no git: `yardstick mutate-git` and `yardstick
//! coverage` (the same commands as `conformance mutate-git` and `conformance coverage`) on a small C program of our own (`tests/yardstick-fixture/`: `tally.c`, its
//! `Makefile`, and shell scripts that stand in for the gate, the user's tests and the
//! counters comparison). Its mutants land in every class; the test checks the classes of
//! known ones, that two shards merge into the unsharded run, that a stopped run resumes,
//! that a hung mutant's whole process group is killed, and the coverage of each side.
//!
//! Needs `cc` and `make` (and `gcov` for coverage): prints `SKIPPED` without them, unless
//! `REFTABLE_REQUIRE_GIT=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/yardstick-fixture");

fn have(tool: &str) -> Result<(), String> {
    match Command::new(tool).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(format!("no {tool} for the yardstick self-test")),
    }
}

/// The fixture copied to `dir/src` and built there (the "checkout built once").
fn checkout(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for e in std::fs::read_dir(FIXTURE).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, src.join(p.file_name().unwrap())).unwrap();
    }
    let st = Command::new("make").current_dir(&src).output().unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    src
}

/// `yardstick ARGS`; its stdout, asserting success.
fn yardstick(args: &[&str], piddir: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_yardstick"))
        .args(args)
        .env("TALLY_PIDDIR", piddir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "yardstick {args:?}: {err}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn mutate_args<'a>(src: &'a str, out: &'a str, shard: &'a str) -> Vec<&'a str> {
    vec![
        "mutate-git",
        "--src",
        src,
        "--out",
        out,
        "--binary",
        "tally",
        "--files",
        "tally.c",
        "--sample",
        "0",
        "--seed",
        "5",
        "--shard",
        shard,
        "--build",
        "make",
        "--gate",
        "sh gate.sh {git}",
        "--tests",
        "sh tests.sh {git}",
        "--counters-cmd",
        "sh counters.sh {base_git} {git}",
        "--timeout",
        "3",
    ]
}

/// Class of every mutant of a report, by id.
fn classes(report: &Path) -> Vec<(String, String)> {
    let r: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let mut v: Vec<(String, String)> = r["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let id = m["mutant"]["id"].as_str().unwrap().to_string();
            (id, m["class"].as_str().unwrap().to_string())
        })
        .collect();
    v.sort();
    v
}

/// The mutants (id, class) of operator edit `op` (`:cmp:<-><=`) on the fixture's line that
/// contains `snippet`.
fn matching<'a>(all: &'a [(String, String)], snippet: &str, op: &str) -> Vec<&'a (String, String)> {
    let src = std::fs::read_to_string(Path::new(FIXTURE).join("tally.c")).unwrap();
    let lines: Vec<&str> = src.lines().collect();
    all.iter()
        .filter(|(id, _)| id.contains(op))
        .filter(|(id, _)| {
            let line: usize = id.split(':').nth(1).unwrap().parse().unwrap();
            lines[line - 1].contains(snippet)
        })
        .collect()
}

#[test]
fn mutants_of_the_fixture_land_in_every_class_and_shards_merge() {
    if reftable_testkit::skip::or_skip(have("cc").and(have("make"))).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = checkout(dir.path());
    let piddir = dir.path().join("pids");
    std::fs::create_dir_all(&piddir).unwrap();
    let s = src.to_str().unwrap();
    let [whole, one, two] = ["whole", "one", "two"].map(|n| dir.path().join(n));
    // The whole run and the two shards side by side (each in a folder of its own, each
    // mutant built in its own copy): shard 1 stops after two mutants and resumes; shard 2 in
    // one go.
    std::thread::scope(|scope| {
        scope.spawn(|| yardstick(&mutate_args(s, whole.to_str().unwrap(), "1/1"), &piddir));
        scope.spawn(|| {
            let mut a = mutate_args(s, one.to_str().unwrap(), "1/2");
            a.extend(["--max-mutants", "2"]);
            let first = yardstick(&a, &piddir);
            assert!(first.contains("2 mutants run now"), "{first}");
            yardstick(&mutate_args(s, one.to_str().unwrap(), "1/2"), &piddir);
        });
        scope.spawn(|| yardstick(&mutate_args(s, two.to_str().unwrap(), "2/2"), &piddir));
    });
    let merged = dir.path().join("merged.json");
    let m = merged.to_str().unwrap();
    let (o1, o2) = (one.to_str().unwrap(), two.to_str().unwrap());
    yardstick(&["mutate-merge", o1, o2, "--report-json", m], &piddir);
    let all = classes(&whole.join("report.json"));
    assert_eq!(
        all,
        classes(&merged),
        "the merged shards differ from the whole run"
    );
    check_classes(&all);
    // One known mutant again, by its id.
    let id = matching(&all, "i < n && !found", ":logic:&&->||")[0]
        .0
        .clone();
    let again = dir.path().join("again");
    let mut a = mutate_args(s, again.to_str().unwrap(), "1/1");
    a.extend(["--only", &id]);
    yardstick(&a, &piddir);
    let expected = vec![(id.clone(), "killed-by-counters".to_string())];
    assert_eq!(classes(&again.join("report.json")), expected);
    gate_labels_score_one_gate_without_the_other(dir.path(), s, &all, &piddir);
    assert_no_survivor_processes(&piddir);
    // The unmutated source is back in the copy.
    let copy = std::fs::read(whole.join("tree/tally.c")).unwrap();
    assert_eq!(copy, std::fs::read(src.join("tally.c")).unwrap());
}

/// Two gate commands (the fixture's gate and one that passes everything), every command run
/// on every mutant: `mutate-merge --gate-labels` scores each gate alone.
fn gate_labels_score_one_gate_without_the_other(
    dir: &Path,
    src: &str,
    all: &[(String, String)],
    piddir: &Path,
) {
    let gate_kill = matching(all, "if (v[i] < limit)", ":cmp:<-><=")[0]
        .0
        .clone();
    let both = matching(all, "while (i < n)", ":cmp:<-><=")[0].0.clone();
    let out = dir.join("two-gates");
    let o = out.to_str().unwrap();
    let mut a = mutate_args(src, o, "1/1");
    let at = a.iter().position(|x| *x == "sh gate.sh {git}").unwrap();
    a[at] = "strict::sh gate.sh {git}";
    a.extend([
        "--gate",
        "lax::true",
        "--every-command",
        "--only",
        &gate_kill,
        "--only",
        &both,
    ]);
    yardstick(&a, piddir);
    let pick = |labels: &str| {
        let json = dir.join(format!("{labels}.json"));
        let j = json.to_str().unwrap();
        yardstick(
            &[
                "mutate-merge",
                o,
                "--gate-labels",
                labels,
                "--report-json",
                j,
            ],
            piddir,
        );
        classes(&json)
    };
    let strict = pick("strict");
    let lax = pick("lax");
    let class_of =
        |v: &[(String, String)], id: &str| v.iter().find(|(i, _)| i == id).unwrap().1.clone();
    assert_eq!(class_of(&strict, &gate_kill), "killed-by-gate");
    assert_eq!(class_of(&strict, &both), "both");
    assert_eq!(class_of(&lax, &gate_kill), "survived");
    assert_eq!(class_of(&lax, &both), "killed-by-tests");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| gate lax | 2 | 0 | 0 |"), "{md}");
    // A run that stopped at the first failing gate cannot be split.
    let whole = dir.join("whole");
    let err = Command::new(env!("CARGO_BIN_EXE_yardstick"))
        .args([
            "mutate-merge",
            whole.to_str().unwrap(),
            "--gate-labels",
            "nope",
        ])
        .output()
        .unwrap();
    assert!(!err.status.success());
}

fn check_classes(all: &[(String, String)]) {
    let got: std::collections::BTreeSet<&str> = all.iter().map(|(_, c)| c.as_str()).collect();
    for c in [
        "killed-by-gate",
        "killed-by-counters",
        "killed-by-tests",
        "both",
        "survived",
        "timeout",
        "unviable",
        "equivalent",
    ] {
        assert!(got.contains(c), "no mutant is {c}: {all:#?}");
    }
    let is = |line: &str, op: &str, class: &str| {
        let cs: Vec<&str> = matching(all, line, op)
            .iter()
            .map(|(_, c)| c.as_str())
            .collect();
        assert!(
            !cs.is_empty() && cs.iter().all(|c| *c == class),
            "{line} {op}: {cs:?}"
        );
    };
    is("i < n && !found", ":logic:&&->||", "killed-by-counters");
    is("\t\ti++;", ":incdec:++->--", "timeout");
    is("case ", ":const:", "unviable");
    is("k += 2;", ":arith:+=->-=", "equivalent");
    is("if (v[i] < limit)", ":cmp:<-><=", "killed-by-gate");
    is("if (v[i] == want)", ":cmp:==->!=", "killed-by-tests");
    is("while (i < n)", ":cmp:<-><=", "both");
    is("return x + x;", ":arith:+->-", "survived");
}

/// Every `tally` the commands started (each left its pid in `piddir`) is gone: the hung
/// ones were killed with their process group. A pid the system gave to another program
/// since (a busy machine reuses them) is not a `tally`.
fn assert_no_survivor_processes(piddir: &Path) {
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut n = 0;
    for e in std::fs::read_dir(piddir).unwrap() {
        let pid = e.unwrap().file_name().into_string().unwrap();
        n += 1;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let is_tally = stat.contains("(tally)");
        let running = is_tally
            && stat.rsplit(')').next().is_some_and(|r| {
                let r = r.trim_start();
                !r.is_empty() && !r.starts_with('Z')
            });
        assert!(!running, "tally {pid} outlived its command: {stat}");
    }
    assert!(n > 0, "the fixture recorded no process");
}

#[test]
fn coverage_of_the_fixture_tells_the_sides_apart() {
    let need = have("cc").and(have("make")).and(have("gcov"));
    if reftable_testkit::skip::or_skip(need).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = checkout(dir.path());
    let out = dir.path().join("cov");
    let args = [
        "coverage",
        "--src",
        src.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--binary",
        "tally",
        "--files",
        "tally.c",
        "--gate",
        "sh gate.sh {git}",
        "--tests",
        "unit::sh tests.sh {git}",
    ];
    let text = yardstick(&args, dir.path());
    assert!(text.contains("gate + tests: lines"), "{text}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let fns = |key: &str| -> Vec<String> {
        r[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["function"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        fns("only_tests").contains(&"first_index".to_string()),
        "{r:#}"
    );
    assert!(
        fns("only_gate").contains(&"count_below".to_string()),
        "{r:#}"
    );
    assert!(!fns("only_gate").contains(&"spin".to_string()), "{r:#}");
    let groups = r["groups"].as_array().unwrap();
    let lines = |i: usize| groups[i]["total"]["lines_hit"].as_u64().unwrap();
    assert!(lines(2) > lines(0) && lines(2) > lines(1), "{r:#}");
    // Read back, not run again.
    let mut again = args.to_vec();
    again.push("--reuse");
    yardstick(&again, dir.path());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Lines only the tests reach"), "{md}");
}
