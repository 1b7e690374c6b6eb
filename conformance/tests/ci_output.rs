//! The gate's CI outputs, read back the way CI systems read them: `conformance run --tap`
//! and `--junit` on a few cases, with one known divergence that cannot reproduce added to
//! the registry so that the run has exactly one failing test whatever the git; the TAP must
//! be a plan and numbered test lines (stdout as a whole when TAP goes there), the JUnit XML
//! well formed with the counts the TAP has. A `--seconds` run must stop by its budget.
//!
//! The checkers are here, small and strict: TAP as `prove` reads it (plan, `ok`/`not ok`,
//! `# TODO`/`# SKIP`, comments) and XML well-formedness (one root, nested tags, quoted
//! attributes, only the five named entities and character references, no control
//! characters).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// One TAP test line: passed, its number, its description, its directive (`TODO ...`).
#[derive(Debug)]
struct TapTest {
    ok: bool,
    number: usize,
    description: String,
    directive: Option<String>,
}

/// Parse a TAP document: its plan and tests; any other line is an error.
fn parse_tap(text: &str) -> Result<(usize, Vec<TapTest>), String> {
    let mut plan = None;
    let mut tests = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(n) = line.strip_prefix("1..") {
            let n = n.split(" # SKIP").next().unwrap_or(n);
            plan = Some(
                n.parse::<usize>()
                    .map_err(|e| format!("plan {line:?}: {e}"))?,
            );
            continue;
        }
        let (ok, rest) = if let Some(r) = line.strip_prefix("not ok ") {
            (false, r)
        } else if let Some(r) = line.strip_prefix("ok ") {
            (true, r)
        } else {
            return Err(format!("not a TAP line: {line:?}"));
        };
        let (num, rest) = rest
            .split_once(" - ")
            .ok_or(format!("no description: {line:?}"))?;
        let number = num.parse().map_err(|e| format!("{line:?}: {e}"))?;
        // A directive follows the first `#` that is not escaped as `\#`.
        let cut = rest
            .char_indices()
            .find(|&(i, c)| c == '#' && !rest[..i].ends_with('\\'))
            .map(|(i, _)| i);
        let (description, directive) = match cut {
            Some(i) => (&rest[..i], Some(rest[i + 1..].trim().to_string())),
            None => (rest, None),
        };
        tests.push(TapTest {
            ok,
            number,
            description: description.trim().to_string(),
            directive,
        });
    }
    let plan = plan.ok_or("no plan")?;
    for (i, t) in tests.iter().enumerate() {
        if t.number != i + 1 {
            return Err(format!("test {} numbered {}", i + 1, t.number));
        }
    }
    Ok((plan, tests))
}

/// Failing tests as `prove` counts them: `not ok` without a TODO directive.
fn tap_failures(tests: &[TapTest]) -> usize {
    tests
        .iter()
        .filter(|t| !t.ok && !t.directive.as_deref().unwrap_or("").starts_with("TODO"))
        .count()
}

/// One XML element: its name and attributes (values unescaped only as far as needed here).
type Element = (String, BTreeMap<String, String>);

/// Check that `s` is well-formed XML 1.0; its elements in document order.
fn parse_xml(s: &str) -> Result<Vec<Element>, String> {
    if let Some(c) = s
        .chars()
        .find(|&c| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(format!("control character {:?}", c));
    }
    let mut rest = s.trim_start();
    if rest.starts_with("<?xml") {
        rest = &rest[rest.find("?>").ok_or("open prolog")? + 2..];
    }
    let (mut stack, mut elements, mut roots) = (Vec::<String>::new(), Vec::new(), 0);
    while let Some(lt) = rest.find('<') {
        check_text(&rest[..lt], &stack)?;
        let gt = rest[lt..].find('>').ok_or("open tag")? + lt;
        let tag = &rest[lt + 1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if stack.pop().as_deref() != Some(name.trim()) {
                return Err(format!("</{name}> closes nothing open"));
            }
            continue;
        }
        let empty = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        if stack.is_empty() {
            roots += 1;
        }
        elements.push((name.to_string(), parse_attributes(attrs)?));
        if !empty {
            stack.push(name.to_string());
        }
    }
    check_text(rest, &stack)?;
    match (stack.is_empty(), roots) {
        (true, 1) => Ok(elements),
        (false, _) => Err(format!("unclosed {stack:?}")),
        _ => Err(format!("{roots} root elements")),
    }
}

/// Text between tags: only whitespace outside the root, and valid references inside.
fn check_text(text: &str, open: &[String]) -> Result<(), String> {
    if open.is_empty() && !text.trim().is_empty() {
        return Err(format!("text outside the root: {text:?}"));
    }
    check_references(text)
}

/// Every `&` starts one of the five named entities or a character reference.
fn check_references(text: &str) -> Result<(), String> {
    for (i, _) in text.match_indices('&') {
        let r = &text[i..];
        let end = r.find(';').ok_or(format!("bare & in {text:?}"))?;
        let name = &r[1..end];
        let named = ["amp", "lt", "gt", "quot", "apos"].contains(&name);
        let numeric = name.strip_prefix('#').is_some_and(|n| {
            n.strip_prefix('x').map_or(n.parse::<u32>().is_ok(), |h| {
                u32::from_str_radix(h, 16).is_ok()
            })
        });
        if !named && !numeric {
            return Err(format!("bad reference &{name};"));
        }
    }
    Ok(())
}

/// `name="value"` pairs, each value quoted, holding no `<` and valid references.
fn parse_attributes(mut s: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return Ok(out);
        }
        let (name, rest) = s.split_once("=\"").ok_or(format!("attribute {s:?}"))?;
        let end = rest.find('"').ok_or("unquoted attribute")?;
        let value = &rest[..end];
        if value.contains('<') {
            return Err(format!("< in attribute {name}"));
        }
        check_references(value)?;
        let value = value.replace("&quot;", "\"").replace("&amp;", "&");
        if out.insert(name.trim().to_string(), value).is_some() {
            return Err(format!("attribute {name} twice"));
        }
        s = &rest[end + 1..];
    }
}

/// A copy of the registry with paths made absolute, plus one run entry for every git whose
/// case shows no such divergence: it is stale, so the run fails with exactly one test.
fn registry_with_a_stale_entry(dir: &Path) -> std::path::PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(here.join("expected-divergences.json")).unwrap();
    let mut entries: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    for e in &mut entries {
        for key in ["case", "reproducer"] {
            if let Some(p) = e[key].as_str().filter(|p| !p.is_empty()) {
                e[key] = here.join(p).display().to_string().into();
            }
        }
    }
    let case = here.join("regressions/model-expire-skips-null-entries");
    entries.push(serde_json::json!({
        "id": "ci-output-test-never-reproduces",
        "mode": "run",
        "versions": ">= 2.0.0",
        "check": "bytes",
        "detail_contains": "a divergence no case shows",
        "reason": "made up by tests/ci_output.rs: stale on every git",
        "evidence": "none",
        "case": case.display().to_string(),
        "reproducer": ""
    }));
    let path = dir.join("expected.json");
    std::fs::write(&path, serde_json::to_string_pretty(&entries).unwrap()).unwrap();
    path
}

#[test]
fn tap_and_junit_say_what_the_run_found() {
    let Some(_env) = common::env() else { return };
    let dir = tempfile::tempdir().unwrap();
    let expected = registry_with_a_stale_entry(dir.path());
    let (tap, junit) = (dir.path().join("run.tap"), dir.path().join("run.xml"));
    let status = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["run", "--cases", "3", "--seed", "5", "--no-concurrent"])
        .arg("--expected")
        .arg(&expected)
        .arg(format!("--tap={}", tap.display()))
        .arg("--junit")
        .arg(&junit)
        .arg("--out")
        .arg(dir.path().join("cases"))
        .status()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "a stale known divergence fails the run"
    );
    let tap = std::fs::read_to_string(&tap).unwrap();
    let (plan, tests) = parse_tap(&tap).unwrap_or_else(|e| panic!("{e}\n{tap}"));
    assert_eq!(
        plan, 4,
        "one test for the known defects, one per case:\n{tap}"
    );
    assert_eq!(tests.len(), plan);
    assert_eq!(tap_failures(&tests), 1, "{tap}");
    assert!(!tests[0].ok && tests[0].description.contains("still reproduce"));
    assert!(tap.contains("ci-output-test-never-reproduces"), "{tap}");
    for (t, case) in tests[1..]
        .iter()
        .zip(["seed5-case0", "seed5-case1", "seed5-case2"])
    {
        assert!(t.description.ends_with(case), "{t:?}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    let elements = parse_xml(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let count = |name: &str| elements.iter().filter(|(n, _)| n == name).count();
    assert_eq!(elements[0].0, "testsuites");
    assert_eq!(elements[0].1["tests"], "4");
    assert_eq!(elements[0].1["failures"], "1");
    let known = tests.iter().filter(|t| t.directive.is_some()).count();
    assert_eq!(elements[1].0, "testsuite");
    assert_eq!(elements[1].1["skipped"], known.to_string());
    assert_eq!(count("testcase"), 4);
    assert_eq!(count("failure"), 1);
    assert_eq!(count("skipped"), known);
}

#[test]
fn tap_on_stdout_is_a_whole_tap_stream_and_the_budget_ends_the_run() {
    let Some(_env) = common::env() else { return };
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args([
            "run",
            "--seconds",
            "6",
            "--fail-fast",
            "--no-concurrent",
            "--tap",
        ])
        .arg("--out")
        .arg(dir.path().join("cases"))
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (plan, tests) = parse_tap(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    assert_eq!(plan, tests.len());
    assert_eq!(out.status.code(), Some(i32::from(tap_failures(&tests) > 0)));
    assert!(
        stdout.contains("# ") && stdout.contains("cases per git ran; the run stopped"),
        "the summary is there, as comments:\n{stdout}"
    );
    // 6 s of budget, a case still running at its end, a loaded machine: well under 20.
    assert!(secs < 20.0, "a 6 s budget took {secs:.1} s");
}

#[test]
fn the_checkers_reject_what_ci_systems_reject() {
    assert!(parse_tap("1..2\nok 1 - a\nok 3 - b\n").is_err());
    assert!(parse_tap("ok 1 - a\n").is_err());
    assert!(parse_tap("1..1\nbanner\nok 1 - a\n").is_err());
    let (_, t) = parse_tap("1..2\nnot ok 1 - a \\# b # TODO known\nok 2 - c # SKIP x\n").unwrap();
    assert_eq!(tap_failures(&t), 0);
    assert_eq!(t[0].description, "a \\# b");
    assert!(parse_xml("<a><b></a></b>").is_err());
    assert!(parse_xml("<a x=\"1 & 2\"/>").is_err());
    assert!(parse_xml("<a>\u{1b}</a>").is_err());
    assert!(parse_xml("<a/><b/>").is_err());
    assert_eq!(
        parse_xml("<?xml version=\"1.0\"?>\n<a x=\"&lt;\"><b/>t&#10;</a>\n")
            .unwrap()
            .len(),
        2
    );
}
