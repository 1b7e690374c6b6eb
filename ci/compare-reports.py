#!/usr/bin/env python3
"""Compare two JSON reports of the gate, for a refactoring that must not change what the gate
does (same seed, same binary arguments, same git):

    python3 ci/compare-reports.py BEFORE.json AFTER.json

Left out of the comparison: timings; scratch paths; the 8 random hex digits git puts in a
table's name (and, in strace's lines, buffer addresses and temporary files' suffixes); the order of per-case records (parallel jobs finish cases in any order); and
what two runs of the same binary do not agree on either: in a concurrent
round the scheduler's share (refusals, samples, the final stack, how many attempts succeeded),
in a damaged run which trial first showed a finding (its damage, base and detail; the findings
themselves, their counts, signatures and commands are compared). Exit 0 when the reports agree,
1 with the differences listed.
"""
import json
import re
import sys

TIMING = re.compile(r'(seconds|per_second|cpu|wall|elapsed|duration|_ms$|time)', re.I)
SCHEDULER = {'refusals', 'samples', 'final_update_index', 'final_tables'}


def concurrent(x):
    x = {k: v for k, v in x.items() if k not in SCHEDULER}
    for k in ('transactions', 'maintenance'):
        if k in x:
            x[k] = [t[0] for t in x[k]]
    return x


def damaged(x):
    def findings(fs):
        return sorted([f['side'], f['class'], f['command'], f['signature'], f['count'],
                       sorted(f['commands'])] for f in fs)
    return {'trials': x['trials'], 'commands': x['commands'], 'bases': x['bases'],
            'git_outcomes': x['git_outcomes'], 'git': findings(x['git_findings']),
            'ours': findings(x['ours_findings'])}


def our_points(x):
    # Our fault worker's calls are numbered from its process's start, which the binary's own
    # start-up (its command line's defaults) moves: the points are compared without the count.
    x = dict(x)
    x['trials'] = [dict(t, point={k: v for k, v in t['point'].items() if k != 'nth'})
                   for t in x.get('trials', [])]
    return x


def norm(x, key=''):
    if isinstance(x, dict) and 'git_findings' in x and 'ours_findings' in x:
        return norm(damaged(x))
    if isinstance(x, dict) and 'txns_per_writer' in x:
        x = concurrent(x)
    if isinstance(x, dict) and x.get('side') == 'ours' and 'trials' in x:
        x = our_points(x)
    if isinstance(x, dict):
        return {k: norm(v, k) for k, v in x.items() if not TIMING.search(k)}
    if isinstance(x, list):
        items = [norm(v, key) for v in x]
        # Parallel jobs finish cases in any order: per-case records compare as a set.
        if items and all(isinstance(v, dict) and 'case' in v for v in items):
            items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return items
    if isinstance(x, str):
        x = re.sub(r'/(dev/shm|tmp)/[^ /]*reftable[^ /]*', 'SCRATCH', x)
        x = re.sub(r'\d+(\.\d+)? ?(s|ms)\b', 'T', x)
        # strace's lines: buffer addresses, mkstemp's suffixes, a table name cut short.
        x = re.sub(r', 0x[0-9a-f]+, ', ', ADDR, ', x)
        x = re.sub(r'\.temp\.[A-Za-z0-9]{6}', '.temp.XXXXXX', x)
        return re.sub(r'(0x[0-9a-f]{12}-0x[0-9a-f]{12})-[0-9a-f]{1,8}', r'\1-RANDOM', x)
    return x


def diff(a, b, path=''):
    if type(a) is not type(b):
        return ['%s: %.200s != %.200s' % (path, a, b)]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append('%s.%s: only in %s' % (path, k, 'AFTER' if k not in a else 'BEFORE'))
            else:
                out += diff(a[k], b[k], '%s.%s' % (path, k))
        return out
    if isinstance(a, list):
        out = [] if len(a) == len(b) else ['%s: %d items != %d' % (path, len(a), len(b))]
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, '%s[%d]' % (path, i))
        return out
    return [] if a == b else ['%s: %.200s != %.200s' % (path, a, b)]


def main():
    a, b = (norm(json.load(open(p))) for p in sys.argv[1:3])
    d = diff(a, b)
    print('\n'.join(d[:40]) if d else 'the reports agree')
    return 1 if d else 0


if __name__ == '__main__':
    sys.exit(main())
