#!/usr/bin/env python3
"""Layout figures of Rust source trees, and a check that keeps them.

    python3 ci/layout.py [--over N] [--check [--strict] [--max-function M]] DIR...

For each DIR (a crate's `src`): files per folder, the largest file and function, the
functions over N lines (default 80; test modules left out) and the import cycles between
files. A file's imports are the `crate::` and `super::` paths it names, plus, in a file that
declares modules (`mod x;`), the `x::` paths it names. Cycles are counted two ways:
`cycles` leaves out edges into a file's own ancestors (a child using its folder's `mod.rs`,
the usual Rust shape); `strict cycles` counts them too.

With --check it exits 1 when a tree has a cycle (a strict one too with --strict) or, with
--max-function, a function over M lines. Text-based: it reads imports and braces, not Rust's grammar.
"""
import argparse
import collections
import os
import re
import sys

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)')


def rs_files(root):
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith('.rs'):
                yield os.path.join(d, f)


def without_tests(lines):
    """The lines before the first `#[cfg(test)] mod`."""
    for i, line in enumerate(lines):
        if line.startswith('#[cfg(test)]') and i + 1 < len(lines) and lines[i + 1].startswith('mod '):
            return lines[:i]
    return lines


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read().split('\n')


def code_of(line):
    line = line.split('//')[0]
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return re.sub(r"'(\\.|[^'\\])'", "''", line)


def functions(path):
    """(lines, name, first line) of each function outside test modules."""
    lines = without_tests(read(path))
    out = []
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            code = code_of(lines[j])
            depth += code.count('{') - code.count('}')
            started = started or '{' in code
            if started and depth <= 0:
                out.append((j - i + 1, m.group(6), i + 1))
                break
            if not started and code.rstrip().endswith(';'):
                break
    return out


def module_of(src, path):
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ('mod', 'lib', 'main'):
        parts = parts[:-1]
    return tuple(parts)


def imports(src, path):
    mod = module_of(src, path)
    is_dir_module = os.path.basename(path) in ('mod.rs', 'lib.rs', 'main.rs')
    text = '\n'.join(code_of(l) for l in without_tests(read(path)))
    parent = mod if is_dir_module else mod[:-1]
    deps = set()
    for m in re.finditer(r'\b(crate|super)::((?:\w+::)*)(\{[^}]*\}|\w+)?', text):
        base = [] if m.group(1) == 'crate' else list(mod[:-1])
        chain = [p for p in m.group(2).split('::') if p]
        tail = m.group(3) or ''
        items = tail[1:-1].split(',') if tail.startswith('{') else [tail]
        for item in items:
            item = item.strip().split(' as ')[0]
            deps.add(tuple(base + chain + [p for p in item.split('::') if p and p != 'self']))
    if is_dir_module:
        children = re.findall(r'(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', text)
        for child in children:
            if re.search(r'(?<![\w:])' + child + r'::', text):
                deps.add(tuple(list(parent) + [child]))
    return deps


def resolve(mods, target):
    t = tuple(target)
    while t:
        if t in mods:
            return t
        t = t[:-1]
    return () if () in mods else None


def cycles(graph, nodes):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            strong(v)
    return out


def name(m):
    return '::'.join(m) or 'crate'


def report(src, limit):
    files = sorted(rs_files(src))
    if not files:
        sys.exit('%s: no .rs files' % src)
    mods = {module_of(src, f): f for f in files}
    per_dir = collections.Counter(os.path.relpath(os.path.dirname(f), src) for f in files)
    print('## %s' % src)
    print('files per folder: ' + ', '.join('%s %d' % kv for kv in sorted(per_dir.items())))
    size, biggest = max((len(read(f)), f) for f in files)
    print('largest file: %d lines, %s' % (size, os.path.relpath(biggest, src)))
    fns = sorted(((n, fn, f, at) for f in files for (n, fn, at) in functions(f)), reverse=True)
    # (a tree with no function, such as a folder of fuzz target wrappers, has no largest)
    if fns:
        n, fn, f, at = fns[0]
        print('largest function: %d lines, %s (%s:%d)' % (n, fn, os.path.relpath(f, src), at))
    long = [x for x in fns if x[0] > limit]
    print('functions over %d lines: %d' % (limit, len(long)))
    for n, fn, f, at in long:
        print('  %4d  %s  %s:%d' % (n, fn, os.path.relpath(f, src), at))
    strict, usual = collections.defaultdict(set), collections.defaultdict(set)
    for f in files:
        me = module_of(src, f)
        for d in imports(src, f):
            r = resolve(mods, d)
            if r is None or r == me:
                continue
            strict[me].add(r)
            if r != me[:len(r)]:
                usual[me].add(r)
    print('import edges: %d' % sum(len(v) for v in strict.values()))
    found = {}
    for label, graph in (('cycles', usual), ('strict cycles', strict)):
        found[label] = cycles(graph, list(mods))
        print('%s: %d' % (label, len(found[label])))
        for comp in found[label]:
            print('  ' + ' <-> '.join(name(m) for m in comp))
    return long, found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dirs', nargs='+')
    ap.add_argument('--over', type=int, default=80)
    ap.add_argument('--max-function', type=int)
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--strict', action='store_true')
    a = ap.parse_args()
    bad = []
    for d in a.dirs:
        long, found = report(d, a.over)
        too_long = [x for x in long if a.max_function is not None and x[0] > a.max_function]
        if too_long:
            bad.append('%s: %d functions over %d lines' % (d, len(too_long), a.max_function))
        key = 'strict cycles' if a.strict else 'cycles'
        if found[key]:
            bad.append('%s: %d %s' % (d, len(found[key]), key))
    if a.check and bad:
        print('layout check failed: ' + '; '.join(bad))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
