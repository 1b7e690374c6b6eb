#!/usr/bin/env python3
"""Per-file mutation testing summary from ci/mutants.sh output directories.

Reads each DIR's stage1 and stage2 `mutants.out` (outcomes.json); a DIR may also be a
`mutants.out` directory itself (an earlier run's copy). Later DIRs override earlier ones, so
an interrupted run resumed with ITERATE=1 is summarized by giving the copies of the earlier
runs' mutants.out first. A mutant counts as caught when stage 1 (library tests) or stage 2
(plus the conformance tests) caught it, missed when both missed it, unviable or timeout as
the last run that tried it says. With a full list (DIR/all-mutants.txt), only mutants of
the current code are counted. Mutants that ci/mutants-equivalent.txt
excludes are counted per file from DIR/all-mutants.txt (the full list) and listed with the
reason they cannot be caught.

Prints Markdown: one row per file, the totals, the score caught / (caught + missed), the
equivalent mutants and the missed ones (each needs a killing test or a reason).

With --current FILE (the mutant list of the tree being summarized, `cargo mutants --list`),
results of runs on earlier trees are carried over to the current one by function and
mutation (the n-th "replace < with <= in f" of a file stays the n-th), so lines that moved
do not count twice; a mutant that is gone is dropped. Give the runs on the current tree
(targeted re-runs after edits) last.

Usage: ci/mutants-summary.py [--current FILE] DIR...   (default target/mutants/all)
"""
import json
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
KIND = {
    "CaughtMutant": "caught",
    "MissedMutant": "missed",
    "Unviable": "unviable",
    "Timeout": "timeout",
}


def equivalents():
    """(pattern, reason) pairs from ci/mutants-equivalent.txt: `pattern<TAB>reason` lines."""
    out = []
    path = os.path.join(HERE, "mutants-equivalent.txt")
    if os.path.exists(path):
        for line in open(path):
            if line.strip() and not line.startswith("#"):
                pattern, reason = line.rstrip("\n").split("\t", 1)
                out.append((pattern, reason.strip()))
    return out


def outcomes(stage):
    """Mutant name -> kind for one stage directory (empty if it did not run)."""
    got = {}
    out = stage if os.path.exists(os.path.join(stage, "outcomes.json")) else os.path.join(stage, "mutants.out")
    path = os.path.join(out, "outcomes.json")
    if os.path.exists(path):
        for o in json.load(open(path))["outcomes"]:
            scenario = o.get("scenario")
            if isinstance(scenario, dict) and "Mutant" in scenario:
                kind = KIND.get(o["summary"])
                if kind:
                    got[scenario["Mutant"]["name"]] = kind
    return got


def stable_keys(names):
    """name -> (name without its line:col, how many such names came before it)."""
    seen = defaultdict(int)
    out = {}
    for n in names:
        base = re.sub(r":[0-9]+:[0-9]+:", ":", n, count=1)
        out[n] = (base, seen[base])
        seen[base] += 1
    return out


def read_list(path):
    return [l.strip() for l in open(path) if l.strip()]


def main(args):
    current = None
    if args[:1] == ["--current"]:
        current = read_list(args[1])
        args = args[2:]
    dirs = args or ["target/mutants/all"]
    by_key = {k: n for n, k in stable_keys(current).items()} if current else {}
    outcome = {}
    walls = []
    listed = set(current or [])
    for d in dirs:
        a = os.path.join(d, "all-mutants.txt")
        rename = None
        if current and os.path.exists(a):
            rename = {n: by_key.get(k) for n, k in stable_keys(read_list(a)).items()}
        elif not current and os.path.exists(a):
            listed.update(read_list(a))

        def now(m):
            return rename.get(m) if rename is not None else m

        stage1 = d if os.path.exists(os.path.join(d, "outcomes.json")) else os.path.join(d, "stage1")
        for m, kind in outcomes(stage1).items():
            if now(m):
                outcome[now(m)] = kind
        for m, kind in outcomes(os.path.join(d, "stage2")).items():
            if now(m) and kind == "caught" and outcome.get(now(m)) == "missed":
                outcome[now(m)] = "caught (gate)"
        w = os.path.join(d, "wall-time.txt")
        if os.path.exists(w):
            walls.append(open(w).read().strip())
    if listed:
        outcome = {m: k for m, k in outcome.items() if m in listed}
    eq = equivalents()
    equivalent = {}
    for m in sorted(listed):
        for pattern, reason in eq:
            if re.search(pattern, m):
                equivalent[m] = reason
                outcome.pop(m, None)
                break
    per_file = defaultdict(lambda: defaultdict(int))
    for m, kind in outcome.items():
        per_file[m.split(":", 1)[0]][kind] += 1
    for m in equivalent:
        per_file[m.split(":", 1)[0]]["equivalent"] += 1
    print("| file | caught | of which by the gate stage | missed | unviable | timeout "
          "| equivalent | score |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    total = defaultdict(int)
    for f in sorted(per_file):
        c = per_file[f]
        caught = c["caught"] + c["caught (gate)"]
        row = (("caught", caught), ("gate", c["caught (gate)"]), ("missed", c["missed"]),
               ("unviable", c["unviable"]), ("timeout", c["timeout"]),
               ("equivalent", c["equivalent"]))
        for k, v in row:
            total[k] += v
        score = 100.0 * caught / max(1, caught + c["missed"])
        print(f"| {f} | " + " | ".join(str(v) for _, v in row) + f" | {score:.1f}% |")
    score = 100.0 * total["caught"] / max(1, total["caught"] + total["missed"])
    print("| **all** | " + " | ".join(str(total[k]) for k in
          ("caught", "gate", "missed", "unviable", "timeout", "equivalent"))
          + f" | **{score:.1f}%** |")
    print()
    print("Score: caught / (caught + missed). Timeouts (a mutant that makes a loop endless) "
          "and unviable mutants (they do not build) are not in it; equivalent ones are "
          "excluded by ci/mutants-equivalent.txt.")
    for w in walls:
        print(f"- {w}")
    if listed:
        untried = len(listed) - len(outcome) - len(equivalent)
        print(f"- mutants in the current code: {len(listed)}; with a result: {len(outcome)}; "
              f"equivalent: {len(equivalent)}; without a result: {untried}")
    if equivalent:
        print()
        print("Equivalent mutants (no test can tell them from the original):")
        print()
        for m, reason in equivalent.items():
            print(f"- `{m}`: {reason}")
    missed = sorted(m for m, k in outcome.items() if k == "missed")
    if missed:
        print()
        print("Missed mutants:")
        print()
        for m in missed:
            print(f"- `{m}`")


if __name__ == "__main__":
    main(sys.argv[1:])
