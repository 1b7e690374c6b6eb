#!/usr/bin/env python3
"""The hot paths of git's C reftable library and ours, in turn, on one stack.

    python3 perf/c/compare.py STACK [--rounds N] [--c target/hotpaths-c]
        [--ours target/release/hotpaths] [--table FILE] [--bound target/release/decode_bound]

Each round runs the C driver, then ours (each `DIR 4`: one cold and three steady reps of
every workload, thread CPU time); the checksums of the two must agree. Per workload: the
steady ns/op of each side as min / median / max over the rounds, and ours / C per round
(min / median / max). Our `for-each-ref` (the lending pass) is compared with C's `iterate`
(the same records and checksum). With --table (the stack's one table), the decode-only bound and the
bandwidth floor of that table are run in the same rounds and shown beside them.
"""
import argparse
import statistics
import subprocess
import sys


def run(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    rows = {}
    for line in out.splitlines():
        name, first, steady, ops, checksum = line.split()
        rows[name] = (float(first), float(steady), int(ops), checksum)
    return rows


def spread(xs):
    return f"{min(xs):.1f} / {statistics.median(xs):.1f} / {max(xs):.1f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stack")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--c", default="target/hotpaths-c")
    p.add_argument("--ours", default="target/release/hotpaths")
    p.add_argument("--table")
    p.add_argument("--bound", default="target/release/decode_bound")
    a = p.parse_args()
    env = {"HOTPATHS_ONLY": "iterate,for-each-ref,lookup-existing,lookup-missing",
           "PATH": "/usr/bin:/bin"}
    c_runs, our_runs, bound_runs = [], [], []
    for _ in range(a.rounds):
        c_runs.append(run([a.c, a.stack, "4"], env))
        our_runs.append(run([a.ours, a.stack, "4"], env))
        if a.table:
            bound_runs.append(run([a.bound, a.table, "4"]))
    print("| workload | C steady ns/op (min / median / max) | ours | ours / C (min / median / max) |")
    print("|---|---:|---:|---:|")
    bad = False
    pairs = [("iterate", "iterate"), ("for-each-ref", "iterate"),
             ("lookup-existing", "lookup-existing"), ("lookup-missing", "lookup-missing")]
    for w, cw in pairs:
        if cw not in c_runs[0] or w not in our_runs[0]:
            continue
        for c, o in zip(c_runs, our_runs):
            if c[cw][2:] != o[w][2:]:
                print(f"checksums differ on {w}: C {c[cw][2:]} ours {o[w][2:]}", file=sys.stderr)
                bad = True
        cs = [r[cw][1] for r in c_runs]
        os_ = [r[w][1] for r in our_runs]
        ratios = [o / c for o, c in zip(os_, cs)]
        print(f"| {w} | {spread(cs)} | {spread(os_)} | {min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f} |")
    if bound_runs:
        for w in ["decode-bound", "bandwidth-floor"]:
            xs = [r[w][1] for r in bound_runs]
            print(f"| {w} (one table) | | {spread(xs)} | |")
        bounds = [r["decode-bound"][1] for r in bound_runs]
        for w in ["iterate", "for-each-ref"]:
            if w in our_runs[0]:
                ratios = [o[w][1] / b for o, b in zip(our_runs, bounds)]
                print(f"| {w} / decode-bound | | | {min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f} |")
        b = bound_runs[0]["decode-bound"][2:]
        it = our_runs[0]["iterate"][2:]
        if b != it:
            print(f"the decode-only bound walked {b}, the iteration {it}", file=sys.stderr)
            bad = True
    sys.exit(1 if bad else 0)


main()
