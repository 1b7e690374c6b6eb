#!/usr/bin/env python3
"""Keep reftable/BEHAVIOURS.md true.

    ci/behaviour-map.py --check [--tests FILE] [--api FILE] [--map FILE]
    ci/behaviour-map.py --self-test
    ci/behaviour-map.py --replay-plants [ID ...]

--check fails (exit 1), listing what is wrong, when
  - a public function of the API listing (reftable/public-api.txt) is in no row of the map;
  - a row names an item that is not in the API listing;
  - a row names a test that `cargo test -p reftable -- --list` does not list.

The test list is read from FILE (the combined stdout and stderr of
`cargo test -p reftable -- --list`, as `2>&1` writes it), or else made from the library's
test binaries of the workspace's test build (`cargo test --workspace --no-run`, which builds
nothing after `cargo test --workspace`), each run with `--list` (CARGO_TARGET_DIR and the
other cargo settings come from the environment).

Tests are named by binary: `lib::<path>` for the unit tests of src/, `<stem>::<name>` for
tests/<stem>.rs. Doc tests are not listed.

An item re-exported under several paths is one function: the API lines of a function share
its owner type (or none, for a free function), its name and its signature. A row covers the
function when it names any of its paths.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FN_LINE = re.compile(r"^(fn|trait-fn) (\S+?)(\(.*)$")
RUNNING = re.compile(r"^\s*Running (?:unittests src/lib\.rs|tests/([A-Za-z0-9_]+)\.rs) ")
TEST_LINE = re.compile(r"^(.*): test$")


def api_functions(text):
    """Group the API listing's function lines: {key: [paths]} (a key is one function)."""
    groups = {}
    for line in text.splitlines():
        m = FN_LINE.match(line.strip())
        if not m:
            continue
        _, path, sig = m.groups()
        parts = path.split("::")
        owner = parts[-2] if len(parts) > 2 and parts[-2][:1].isupper() else ""
        groups.setdefault((owner, parts[-1], sig), []).append(path)
    return groups


def shortest(paths):
    return min(paths, key=lambda p: (p.count("::"), p))


def listed_tests(text):
    """The tests of a `cargo test -- --list` output, named `<binary>::<test>`."""
    tests = set()
    binary = None
    for line in text.splitlines():
        if "Doc-tests" in line:
            binary = None
            continue
        m = RUNNING.match(line)
        if m:
            binary = m.group(1) or "lib"
            continue
        m = TEST_LINE.match(line)
        if m and binary:
            tests.add(f"{binary}::{m.group(1)}")
    return tests


def map_rows(text):
    """Rows of the map's tables: [(line number, [item paths], [test names])]."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|") or line.startswith("| ---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] == "item(s)":
            continue
        items = re.findall(r"`(reftable::[^`]+)`", cells[0])
        tests = re.findall(r"`([^`]+)`", cells[3])
        rows.append((n, items, tests))
    return rows


def check(api_text, map_text, tests_text):
    """The problems found, one line each (empty when the map is true)."""
    problems = []
    groups = api_functions(api_text)
    by_path = {p: key for key, paths in groups.items() for p in paths}
    all_paths = {m.group(1) for m in re.finditer(r"(?m)^\S+ (reftable(?:::\w+)*)", api_text)}
    tests = listed_tests(tests_text)
    rows = map_rows(map_text)
    if not tests:
        problems.append("no tests found in the test list")
    covered = set()
    for n, items, names in rows:
        if not items:
            problems.append(f"BEHAVIOURS.md:{n}: a row without items")
        if not names:
            problems.append(f"BEHAVIOURS.md:{n}: a row without a test")
        for item in items:
            if item in by_path:
                covered.add(by_path[item])
            elif item not in all_paths:
                problems.append(f"BEHAVIOURS.md:{n}: {item} is not in the API listing")
        for name in names:
            if name not in tests:
                problems.append(f"BEHAVIOURS.md:{n}: test {name} is not listed by cargo")
    for key in sorted(set(groups) - covered, key=lambda k: shortest(groups[k])):
        problems.append(f"public fn in no row: {shortest(groups[key])}")
    return problems, len(groups), len(rows)


def cargo_test_list():
    """The library's tests, listed by its test binaries as the workspace's test build made
    them (`cargo test --workspace`, whose build CI has just made: nothing is rebuilt, where
    `cargo test -p reftable` would build the crate again with other features), in the form
    `cargo test -- --list` prints."""
    build = subprocess.run(
        ["cargo", "test", "--workspace", "--locked", "--no-run", "--message-format=json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if build.returncode != 0:
        sys.exit(f"cargo test --no-run failed:\n{build.stderr[-3000:]}")
    manifest = os.path.join(ROOT, "reftable", "Cargo.toml")
    out = []
    for line in build.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if os.path.realpath(msg.get("manifest_path", "")) != os.path.realpath(manifest):
            continue
        target = msg["target"]
        if "lib" in target["kind"]:
            header = "Running unittests src/lib.rs"
        elif "test" in target["kind"]:
            header = f"Running tests/{target['name']}.rs"
        else:
            continue
        listed = subprocess.run([msg["executable"], "--list"], cwd=os.path.dirname(manifest),
                                stdout=subprocess.PIPE, text=True)
        if listed.returncode != 0:
            sys.exit(f"{msg['executable']} --list failed")
        out.append(f"     {header} ({msg['executable']})")
        out.extend(listed.stdout.splitlines())
    return "\n".join(out)


def self_test():
    """The check passes on a small true map, and fails on a removed row, a renamed test,
    a function only re-exported elsewhere, and an unknown item."""
    api = "\n".join(
        [
            "fn reftable::Stack::add(&mut Self) -> Result<()>",
            "fn reftable::stack::Stack::add(&mut Self) -> Result<()>",
            "fn reftable::refname::is_valid_refname(name: &[u8]) -> bool",
            "struct reftable::Stack",
        ]
    )
    tests = "\n".join(
        [
            "     Running unittests src/lib.rs (target/debug/deps/reftable-0)",
            "refname::tests::cases: test",
            "     Running tests/stack.rs (target/debug/deps/stack-0)",
            "add_one: test",
            "   Doc-tests reftable",
            "src/lib.rs - (line 1): test",
        ]
    )
    head = "| item(s) | behaviour | git rule | test that fails without it | checked |\n| --- | --- | --- | --- | --- |\n"
    row_add = "| `reftable::Stack::add` | adds | `reftable_stack_add` | `stack::add_one` | planted |\n"
    row_name = "| `reftable::refname::is_valid_refname` | names | `check_refname_format` | `lib::refname::tests::cases` | |\n"
    good = head + row_add + row_name
    failures = []

    def expect(label, map_text, api_text, tests_text, want_ok):
        problems, _, _ = check(api_text, map_text, tests_text)
        if (not problems) != want_ok:
            failures.append(f"{label}: {problems or 'no problem found'}")

    expect("true map", good, api, tests, True)
    expect("row removed", head + row_add, api, tests, False)
    expect("test renamed", good, api, tests.replace("add_one", "add_two"), False)
    expect("unit test renamed", good, api, tests.replace("tests::cases", "tests::x"), False)
    expect(
        "row by the other path",
        good.replace("reftable::Stack::add", "reftable::stack::Stack::add"),
        api,
        tests,
        True,
    )
    expect("unknown item", good.replace("Stack::add`", "Stack::ad`"), api, tests, False)
    expect("doc test not a test", good.replace("`stack::add_one`", "`src/lib.rs - (line 1)`"), api, tests, False)
    expect(
        "new public fn",
        good,
        api + "\nfn reftable::Stack::clean(&mut Self) -> Result<()>",
        tests,
        False,
    )
    # The real map against the real API listing: every row parsed, items known.
    with open(os.path.join(ROOT, "reftable/BEHAVIOURS.md")) as f:
        real_map = f.read()
    with open(os.path.join(ROOT, "reftable/public-api.txt")) as f:
        real_api = f.read()
    unknown = [p for p in check(real_api, real_map, "")[0] if "not in the API" in p]
    if unknown:
        failures.extend(unknown)
    if not map_rows(real_map):
        failures.append("no rows parsed from reftable/BEHAVIOURS.md")
    for f in failures:
        print(f"self-test: {f}")
    print("self-test: ok" if not failures else f"self-test: {len(failures)} failed")
    return 1 if failures else 0


PLANTS = os.path.join(ROOT, "ci", "behaviour-plants.txt")


def parse_plants(text):
    """The plants of ci/behaviour-plants.txt: (id, file, old, new, cargo args)."""
    import ast
    import io
    import tokenize
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        pid, path, edit, args = fields[0], fields[1], fields[2], fields[3]
        strings = [t.string for t in tokenize.generate_tokens(io.StringIO(edit).readline)
                   if t.type == tokenize.STRING]
        old, new = (ast.literal_eval(x) for x in strings)
        out.append((pid, path, old, new, args.split()))
    return out


def replay_plants(ids):
    """Apply each plant (all, or those in `ids`) alone, run its tests, put the file back:
    every plant must make its tests fail, as the map says."""
    with open(PLANTS) as f:
        plants = parse_plants(f.read())
    if ids:
        plants = [p for p in plants if p[0] in ids]
        if len(plants) != len(set(ids)):
            print("unknown plant ids:", sorted(set(ids) - {p[0] for p in plants}))
            return 2
    # A stop (SIGTERM, as from a CI timeout) unwinds through `finally`: the file is put back.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    escaped = []
    for pid, path, old, new, args in plants:
        full = os.path.join(ROOT, path)
        with open(full) as f:
            original = f.read()
        if original.count(old) != 1:
            print(f"{pid}: the code it breaks is not in {path} once: the plant is out of date")
            escaped.append(pid)
            continue
        try:
            with open(full, "w") as f:
                f.write(original.replace(old, new))
            run = subprocess.run(["cargo", "test", "-q", "-p", "reftable"] + args,
                                 cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            with open(full, "w") as f:
                f.write(original)
        print(f"{pid}: {'caught' if run.returncode != 0 else 'NOT caught'} ({' '.join(args)})")
        if run.returncode == 0:
            escaped.append(pid)
    print(f"plants: {len(plants) - len(escaped)} of {len(plants)} caught")
    return 1 if escaped else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--self-test", action="store_true")
    mode.add_argument("--replay-plants", nargs="*", metavar="ID",
                      help="apply each plant of ci/behaviour-plants.txt (or those named) and "
                      "run its tests: each must fail (one build per plant)")
    ap.add_argument("--tests", help="output of `cargo test -p reftable -- --list 2>&1`")
    ap.add_argument("--api", default=os.path.join(ROOT, "reftable/public-api.txt"))
    ap.add_argument("--map", default=os.path.join(ROOT, "reftable/BEHAVIOURS.md"))
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.replay_plants is not None:
        return replay_plants(args.replay_plants)
    with open(args.api) as f:
        api_text = f.read()
    with open(args.map) as f:
        map_text = f.read()
    if args.tests:
        with open(args.tests) as f:
            tests_text = f.read()
    else:
        tests_text = cargo_test_list()
    problems, n_fns, n_rows = check(api_text, map_text, tests_text)
    for p in problems:
        print(p)
    if problems:
        print(f"behaviour map: {len(problems)} problems")
        return 1
    print(f"behaviour map: {n_rows} rows cover all {n_fns} public functions; every test named exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
