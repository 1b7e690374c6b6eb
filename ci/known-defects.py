#!/usr/bin/env python3
"""The known git defects table, made from the registry.

    python3 ci/known-defects.py            # write conformance/KNOWN-DEFECTS.md
    python3 ci/known-defects.py --check    # compare the committed file with what it would write

Reads `conformance/expected-divergences.json` (the registry every mode of the gate reads:
`conformance/src/defects/registry.rs`) and writes one row per entry: id, mode, the gits that
have the defect, what shows, which builds can show it, and links to the entry's case
directory, git-only reproducer and `t/` test where those files exist. The `impl` entries,
defects of other reftable implementations (`conformance impl`), get a section of their own:
id, implementation, its versions, what shows, the finding's signature and the reproducer.

Exit status: 0 written, or (with --check) the committed file is what it would write; 1 with
--check when it differs (a diff on stdout: run the command without --check and commit the
result); 2 when the registry cannot be read or is not a list of entries.
"""
import argparse
import difflib
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
REGISTRY = os.path.join(ROOT, 'conformance', 'expected-divergences.json')
OUT = os.path.join(ROOT, 'conformance', 'KNOWN-DEFECTS.md')

# The modes in the order the gate's manual presents them (registry.rs `Mode`).
MODES = ['run', 'concurrent', 'migrate', 'damaged', 'faults', 'powerloss', 'worktree']
MODE_COMMAND = {
    'run': '`conformance run`',
    'concurrent': '`conformance run --concurrent`',
    'migrate': '`conformance migrate`',
    'damaged': '`conformance damaged`',
    'faults': '`conformance faults`',
    'powerloss': '`conformance powerloss`',
    'worktree': 'no mode yet: reproducers only',
}
# Defects of other implementations (`conformance impl`), shown after git's.
IMPL = 'impl'
SUMMARY_MAX = 180


class RegistryError(Exception):
    pass


def load(path):
    try:
        with open(path, encoding='utf-8') as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        raise RegistryError(f'{path}: {e}')
    if not isinstance(entries, list):
        raise RegistryError(f'{path}: not a list of entries')
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise RegistryError(f'{path}: entry {i}: not an object')
        for key in ('id', 'mode', 'versions', 'detail_contains', 'reason'):
            if not isinstance(e.get(key), str):
                raise RegistryError(f'{path}: entry {e.get("id", i)}: no string "{key}"')
        if e['mode'] not in MODES + [IMPL]:
            raise RegistryError(f'{path}: entry {e["id"]}: unknown mode {e["mode"]!r}')
        if e['mode'] == IMPL and not isinstance(e.get('implementation'), str):
            raise RegistryError(f'{path}: entry {e["id"]}: an impl entry names no "implementation"')
    return entries


def cell(text):
    """Text fit for a Markdown table cell."""
    return ' '.join(text.split()).replace('|', '\\|')


def code(text):
    """Inline code fit for a table cell (backticks inside become quotes)."""
    raw = text.replace('\n', ' ').replace('|', '\\|').replace('`', "'")
    return '`' + raw + '`' if text else ''


def summary(reason):
    """The reason's first sentence, at most SUMMARY_MAX characters."""
    text = ' '.join(reason.split())
    m = re.search(r'(?<=[a-z0-9)\'"`])\.(\s|$)', text)
    if m:
        text = text[:m.start() + 1]
    if len(text) > SUMMARY_MAX:
        text = text[:SUMMARY_MAX].rsplit(' ', 1)[0].rstrip(',;:') + ' …'
    return cell(text)


def status(versions):
    """Open on master, or the first version without the defect."""
    m = re.search(r'<\s*([0-9][0-9.]*)', versions)
    return f'fixed in {m.group(1)}' if m else 'open on master'


def builds(e):
    san = e.get('sanitizer')
    if san == 'address':
        return 'AddressSanitizer builds only'
    if san == 'leak':
        return 'LeakSanitizer builds only'
    if san:
        return f'{san} sanitizer builds only'
    if e.get('needs_checked_frees'):
        return 'builds whose allocator checks frees (not LeakSanitizer alone)'
    return 'any build'


def link(rel, base):
    """A link to `rel` (relative to conformance/) when the file exists, else ''."""
    if not rel:
        return ''
    path = os.path.normpath(os.path.join(base, rel))
    if not os.path.exists(path):
        return ''
    shown = rel.rstrip('/')
    if os.path.isdir(path):
        shown += '/'
    name = os.path.basename(rel.rstrip('/'))
    return f'[{name}]({shown})'


def files(e, base):
    """The entry's case directory, reproducer and t/ test, as links."""
    out = []
    case = e.get('case') or ''
    if case:
        l = link(case, base)
        if l:
            out.append('case ' + l)
    rep = e.get('reproducer') or ''
    if rep:
        l = link(rep, base)
        out.append('reproducer ' + (l or code(rep) + ' (missing)'))
    up = e.get('upstream') or ''
    if up:
        l = link(up, base)
        out.append('`t/` test ' + (l or code(up) + ' (missing)'))
    if e.get('security'):
        out.append('**security**: hand over to git-security@googlegroups.com first')
    return '<br>'.join(out) if out else '—'


def signature(e):
    check = e.get('check')
    sig = code(e['detail_contains'])
    return f'{code(check)}: {sig}' if check else sig


def render(entries, base):
    impl = [e for e in entries if e['mode'] == IMPL]
    entries = [e for e in entries if e['mode'] != IMPL]
    by_mode = {m: [e for e in entries if e['mode'] == m] for m in MODES}
    open_n = sum(1 for e in entries if status(e['versions']) == 'open on master')
    lines = [
        '# Known git defects',
        '',
        '<!-- Generated by `python3 ci/known-defects.py` from conformance/expected-divergences.json:',
        '     edit the registry and run it again; CI runs it with --check. -->',
        '',
        f'{len(entries)} entries in [`expected-divergences.json`](expected-divergences.json), '
        f'{open_n} of them open on git master. Each is a defect of git that a mode of the gate '
        'sees; the gate matches an entry only on gits in its range and only in its mode, and '
        'fails when a replayed entry stops reproducing. How entries are matched, replayed and '
        'added: [README.md](README.md#the-registry-of-known-git-defects).',
        '',
        'Columns: **gits**, the entry\'s version range; **status**, whether master still has it '
        '(no upper bound) or the first version without it; **signature**, the check and the '
        'text a divergence must hold to match (`*` any text, ` | ` alternatives; read per mode); '
        '**builds**, the git builds that can show it (an entry of one sanitizer is replayed '
        'only on a build with it); **files**, its minimized case, its git-only reproducer and '
        'its test in git\'s `t/` style (`conformance upstream ID`), and whether it is a security '
        'matter, to hand over privately.',
        '',
        '| mode | count |',
        '| --- | ---: |',
    ]
    for m in MODES:
        if by_mode[m]:
            lines.append(f'| {m} ({MODE_COMMAND[m]}) | {len(by_mode[m])} |')
    for m in MODES:
        if not by_mode[m]:
            continue
        lines += [
            '',
            f'## {m}',
            '',
            '| id | gits | status | what shows | signature | builds | files |',
            '| --- | --- | --- | --- | --- | --- | --- |',
        ]
        for e in by_mode[m]:
            lines.append('| ' + ' | '.join([
                code(e['id']),
                code(e['versions']),
                status(e['versions']),
                summary(e['reason']),
                signature(e),
                builds(e),
                files(e, base),
            ]) + ' |')
    if impl:
        names = sorted({e['implementation'] for e in impl})
        lines += [
            '',
            '## Other implementations (`conformance impl`)',
            '',
            f'{len(impl)} entries of the same registry (mode `impl`) are defects of other reftable '
            f'implementations ({", ".join(names)}) that `conformance impl --impl NAME` finds through '
            'their adapters (`adapters/PROTOCOL.md`). **versions** is the range of the '
            'implementation\'s own versions; **signature** is text a finding\'s `role check: '
            'detail` must contain (`*` any text, ` | ` alternatives); the **reproducer**, in the '
            'implementation\'s language, exits 1 while the defect shows (`ci/reproducers.sh` runs '
            'it where the implementation is installed).',
            '',
            '| id | implementation | versions | what shows | signature | files |',
            '| --- | --- | --- | --- | --- | --- |',
        ]
        for e in sorted(impl, key=lambda e: (e['implementation'], e['id'])):
            lines.append('| ' + ' | '.join([
                code(e['id']),
                cell(e['implementation']),
                code(e['versions']),
                summary(e['reason']),
                code(e['detail_contains']),
                files(e, base),
            ]) + ' |')
    return '\n'.join(lines) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--check', action='store_true',
                    help='exit 1 with a diff when the committed file differs')
    ap.add_argument('--registry', default=REGISTRY, help='the registry (default: %(default)s)')
    ap.add_argument('--out', default=OUT, help='the table (default: %(default)s)')
    a = ap.parse_args()
    try:
        entries = load(a.registry)
    except RegistryError as e:
        print(f'known-defects: {e}', file=sys.stderr)
        return 2
    text = render(entries, os.path.dirname(os.path.abspath(a.registry)))
    if not a.check:
        with open(a.out, 'w', encoding='utf-8') as f:
            f.write(text)
        return 0
    try:
        with open(a.out, encoding='utf-8') as f:
            have = f.read()
    except OSError:
        have = ''
    if have == text:
        return 0
    rel = os.path.relpath(a.out, ROOT)
    sys.stdout.writelines(difflib.unified_diff(
        have.splitlines(True), text.splitlines(True), f'a/{rel}', f'b/{rel} (from the registry)'))
    print(f'known-defects: {rel} differs from the registry: run python3 ci/known-defects.py',
          file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
