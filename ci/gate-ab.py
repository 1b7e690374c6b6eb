#!/usr/bin/env python3
"""Two builds of the gate timed on the same default run, interleaved (before, after, after,
before, ...) so that a machine's drift falls on both alike, and reported as ratios:

    python3 ci/gate-ab.py --before BIN [--before-dir DIR] --after BIN [--after-dir DIR]
        [--rounds N] [--git GIT] [--out FILE] [-- RUN-ARGS...]

Each round runs `BIN run --report-json ... RUN-ARGS` for both sides (in DIR, so an older
build reads the registry of its own checkout). Per side: wall time of the process, the
report's seconds of cases, git CPU and harness CPU per operation (children's and our own
user+system time over the run's operations); the ratio after/before is taken per round and
given as min / median / max. Then the checks' cost table of each side (medians over the
rounds): runs and milliseconds per run, for the checks both reports name and those only one
names. Markdown goes to stdout (and FILE).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(binary, cwd, git, extra, report):
    args = [binary, "run", "--report-json", report, "--no-minimize"]
    if git:
        args += ["--git", git]
    args += extra
    start = time.monotonic()
    proc = subprocess.run(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, start_new_session=True)
    wall = time.monotonic() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"gate-ab: {binary} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    with open(report) as f:
        r = json.load(f)
    ops = max(r["operations"], 1)
    g = r["gits"][0]
    return {
        "wall s": wall,
        "cases s": r["wall_seconds"],
        "operations": r["operations"],
        "unexpected": r["unexpected_divergences"],
        "git CPU ms/op": 1000 * r["child_cpu_seconds"] / ops,
        "harness CPU ms/op": 1000 * r["harness_cpu_seconds"] / ops,
        "costs": g.get("check_costs", {}),
    }


def summarize(rounds, key):
    return statistics.median(r[key] for r in rounds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--before-dir", default=".")
    ap.add_argument("--after", required=True)
    ap.add_argument("--after-dir", default=".")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--git")
    ap.add_argument("--out")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    sides = {"before": (os.path.abspath(a.before), a.before_dir),
             "after": (os.path.abspath(a.after), a.after_dir)}
    got = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.rounds):
            order = ["before", "after"] if i % 2 == 0 else ["after", "before"]
            for side in order:
                binary, cwd = sides[side]
                report = os.path.join(tmp, f"{side}-{i}.json")
                got[side].append(run_once(binary, cwd, a.git, a.extra, report))
                print(f"gate-ab: round {i + 1}/{a.rounds} {side}: "
                      f"{got[side][-1]['wall s']:.1f} s", file=sys.stderr)
    lines = [f"{a.rounds} rounds, interleaved; git: {a.git or 'git on PATH'}; "
             f"run arguments: {' '.join(a.extra) or '(defaults)'}", "",
             "| | before | after | after/before: min / median / max |",
             "| --- | --- | --- | --- |"]
    for key in ("wall s", "cases s", "git CPU ms/op", "harness CPU ms/op"):
        ratios = [y[key] / x[key] for x, y in zip(got["before"], got["after"])]
        lines.append(f"| {key} | {summarize(got['before'], key):.2f} | "
                     f"{summarize(got['after'], key):.2f} | {min(ratios):.2f} / "
                     f"{statistics.median(ratios):.2f} / {max(ratios):.2f} |")
    for key in ("operations", "unexpected"):
        lines.append(f"| {key} | {summarize(got['before'], key):.0f} | "
                     f"{summarize(got['after'], key):.0f} | |")
    lines += ["", "| check | before: runs | ms per run | s in all | after: runs | ms per run | s in all |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    names = sorted(set().union(*(r["costs"].keys() for s in got.values() for r in s)))
    for name in names:
        cells = []
        for side in ("before", "after"):
            seen = [r["costs"][name] for r in got[side] if name in r["costs"]]
            if not seen:
                cells += ["-", "-", "-"]
                continue
            runs = statistics.median(c["runs"] for c in seen)
            secs = statistics.median(c["seconds"] for c in seen)
            cells += [f"{runs:.0f}", f"{1000 * secs / max(runs, 1):.2f}", f"{secs:.2f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
