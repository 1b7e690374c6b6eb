#!/usr/bin/env python3
"""Per-file mutation testing summary from ci/mutants.sh output directories.

A mutant counts as caught when stage 1 (library tests) or stage 2 (plus the conformance
tests) caught it, missed when both missed it, and unviable or timeout as stage 1 says.
Prints Markdown: one row per file, the totals and the score caught / (caught + missed),
then the missed mutants (each needs a killing test or a line saying why it is equivalent).
"""
import os
import sys
from collections import defaultdict

KINDS = ("caught", "missed", "unviable", "timeout")


def read(d, kind):
    p = os.path.join(d, "mutants.out", f"{kind}.txt")
    if not os.path.exists(p):
        return []
    return [l.rstrip("\n") for l in open(p) if l.strip()]


def main(dirs):
    outcome = {}
    walls = []
    for d in dirs:
        for kind in KINDS:
            for m in read(os.path.join(d, "stage1"), kind):
                outcome[m] = kind
        for m in read(os.path.join(d, "stage2"), "caught"):
            if outcome.get(m) == "missed":
                outcome[m] = "caught (gate)"
        w = os.path.join(d, "wall-time.txt")
        if os.path.exists(w):
            walls.append(open(w).read().strip())
    per_file = defaultdict(lambda: defaultdict(int))
    for m, kind in outcome.items():
        per_file[m.split(":", 1)[0]][kind] += 1
    print("| file | caught | of which by the gate stage | missed | unviable | timeout | score |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    total = defaultdict(int)
    for f in sorted(per_file):
        c = per_file[f]
        caught = c["caught"] + c["caught (gate)"]
        for k, v in (("caught", caught), ("gate", c["caught (gate)"]), ("missed", c["missed"]),
                     ("unviable", c["unviable"]), ("timeout", c["timeout"])):
            total[k] += v
        score = 100.0 * caught / max(1, caught + c["missed"])
        print(f"| {f} | {caught} | {c['caught (gate)']} | {c['missed']} | {c['unviable']} | {c['timeout']} | {score:.1f}% |")
    score = 100.0 * total["caught"] / max(1, total["caught"] + total["missed"])
    print(f"| **all** | {total['caught']} | {total['gate']} | {total['missed']} | {total['unviable']} | {total['timeout']} | **{score:.1f}%** |")
    print()
    for w in walls:
        print(f"- {w}")
    missed = sorted(m for m, k in outcome.items() if k == "missed")
    if missed:
        print()
        print("Missed mutants:")
        print()
        for m in missed:
            print(f"- `{m}`")


if __name__ == "__main__":
    main(sys.argv[1:] or ["target/mutants/all"])
