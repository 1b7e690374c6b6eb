#!/usr/bin/env bash
# Every committed git-only reproducer (conformance/expected/<id>/reproduce.sh) run against one
# git, each checked against the contract every reproducer keeps and against the registry:
#
#   exit 1 while the defect shows, 0 when it does not, 2 when it cannot run (no git, git
#   without reftable or without a command the reproducer needs, setup failed).
#
# What the registry (conformance/expected-divergences.json) says of that git decides the exit
# wanted of each: a version range holding it, and a build that can show the defect
# (`Expected::shows_on`: an entry of a sanitizer needs a git built with it, one that needs
# checked frees a git whose allocator checks them, not LeakSanitizer's alone), wants 1; a
# range that does not hold it wants 0, or 2 when that git cannot run the reproducer (the
# reproducer says why); a sanitizer the git lacks, 0 or 2.
#
#   ci/reproducers.sh [--git GIT] [--sanitizers LIST] [--timeout SECONDS]
#
# GIT defaults to git on PATH. LIST (comma-separated: address, leak, undefined, ...) is what
# the git was built with, none by default. Each reproducer runs under `timeout`, which kills
# its whole process group (the racy reproducers' background writers with it). The racy ones
# (concurrent-*) take fewer rounds where they are expected not to show the defect.
#
# The registry's `impl` entries (defects of other implementations, `conformance impl`) have
# reproducers in the implementation's language: dulwich's (adapters/dulwich/repro/*.py) run
# with the python of the dulwich virtual environment the gate makes,
# target/impls/dulwich-1.2.21/bin/python (or $DULWICH_PYTHON), with GIT's directory first on
# PATH, wanting 1 when that dulwich's version is in the entry's range. Without that
# environment (a clean clone: `conformance impl --impl dulwich` or adapters/dulwich/setup.sh
# makes it) they are skipped, each with the reason printed.
# Exit 0 when every reproducer agrees, 1 when one does not, 2 when the check cannot run.
set -uo pipefail
cd "$(dirname "$0")/.."
git_bin=git
sanitizers=
limit=120
while [ $# -gt 0 ]; do
  case "$1" in
    --git) git_bin=$2; shift 2 ;;
    --sanitizers) sanitizers=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    *) echo "usage: ci/reproducers.sh [--git GIT] [--sanitizers LIST] [--timeout SECONDS]" >&2; exit 2 ;;
  esac
done
git_path=$(command -v "$git_bin") || { echo "no git: $git_bin" >&2; exit 2; }
version=$("$git_path" version) || { echo "cannot run $git_path" >&2; exit 2; }
command -v timeout >/dev/null || { echo "needs timeout(1)" >&2; exit 2; }
echo "$version ($git_path); sanitizers: ${sanitizers:-none}"

# One line per reproducer: its path, the exits wanted, the registry's ids and why.
plan=$(python3 - "$version" "$sanitizers" <<'EOF'
import json, os, re, sys

def parse(v):
    parts = []
    for piece in re.split(r'[.-]', v.strip().removeprefix('git version ').strip()):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return parts + [0] * (6 - len(parts))

def in_range(v, r):
    r = r.strip()
    if r in ('', '*'):
        return True
    for bound in r.split(','):
        m = re.match(r'\s*(>=|<=|>|<|=)\s*(.*)', bound)
        op, x = m.group(1), parse(m.group(2))
        ok = {'>=': v >= x, '<=': v <= x, '>': v > x, '<': v < x, '=': v == x}[op]
        if not ok:
            return False
    return True

version = parse(sys.argv[1])
has = set(s for s in sys.argv[2].split(',') if s)
registry = 'conformance/expected-divergences.json'
entries = json.load(open(registry))
by_script = {}
for e in entries:
    rel = e.get('reproducer') or ''
    path = os.path.normpath(os.path.join('conformance', rel))
    if path.startswith('conformance/expected/'):
        by_script.setdefault(path, []).append(e)
for d in sorted(os.listdir('conformance/expected')):
    path = f'conformance/expected/{d}/reproduce.sh'
    if not os.path.exists(path):
        continue
    es = by_script.get(path, [])
    if not es:
        print(f'{path}\t0,1,2\t-\tno registry entry names it')
        continue
    ids = ','.join(e['id'] for e in es)
    inr = [e for e in es if in_range(version, e.get('versions', '*'))]
    frees_unchecked = 'leak' in has and 'address' not in has
    showable = [e for e in inr
                if (not e.get('sanitizer') or e['sanitizer'] in has)
                and not (e.get('needs_checked_frees') and frees_unchecked)]
    if showable:
        print(f'{path}\t1\t{ids}\tin range ({showable[0]["versions"]})')
    elif inr:
        need = inr[0].get('sanitizer') or 'an allocator that checks frees'
        print(f'{path}\t0,2\t{ids}\tin range, but needs {need}')
    else:
        print(f'{path}\t0,2\t{ids}\tout of range ({es[0].get("versions", "*")})')

# Other implementations' reproducers, run with their own interpreter.
import subprocess
runners = {'dulwich': os.environ.get('DULWICH_PYTHON')
           or 'target/impls/dulwich-1.2.21/bin/python'}
impl = {}
for e in entries:
    if e.get('mode') == 'impl' and e.get('reproducer'):
        path = os.path.normpath(os.path.join('conformance', e['reproducer']))
        impl.setdefault((e.get('implementation', '?'), path), []).append(e)
for (name, path), es in sorted(impl.items()):
    ids = ','.join(e['id'] for e in es)
    runner = runners.get(name)
    if runner is None:
        how = {'libgit2': 'C against a libgit2 build: adapters/libgit2/repro/run.sh BUILD ID'}
        print(f'{path}\tskip\t{ids}\t{how.get(name, "no runner for " + name)}\t-')
        continue
    if not os.access(runner, os.X_OK):
        print(f'{path}\tskip\t{ids}\tno {name} environment at {runner} '
              f'(conformance impl --impl {name} makes it)\t-')
        continue
    p = subprocess.run([runner, '-c', 'import dulwich; print(".".join(map(str, dulwich.__version__)))'],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f'{path}\tskip\t{ids}\t{runner} has no {name}\t-')
        continue
    v = parse(p.stdout)
    inr = [e for e in es if in_range(v, e.get('versions', '*'))]
    if inr:
        print(f'{path}\t1\t{ids}\t{name} {p.stdout.strip()} in range ({inr[0]["versions"]})\t{os.path.abspath(runner)}')
    else:
        print(f'{path}\t0,2\t{ids}\t{name} {p.stdout.strip()} out of range\t{os.path.abspath(runner)}')
EOF
) || { echo "cannot read the registry" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
failed=0
count=0
skipped=0
while IFS=$'\t' read -r script want ids why runner; do
  if [ "$want" = skip ]; then
    skipped=$((skipped + 1))
    printf '%-4s %-62s (%s): %s\n' skip "${script#conformance/expected/}" "$ids" "$why"
    continue
  fi
  count=$((count + 1))
  args=("$git_path")
  # Fewer rounds where the race is not expected to show anything.
  if [ "$want" != 1 ]; then
    case "$script" in
      */concurrent-compaction-drops-tables/*) args+=(50) ;;
      */concurrent-reload-segfault/* | */concurrent-reflog-expire-garbage-count/*) args+=(2) ;;
    esac
  fi
  t0=$(date +%s)
  if [ -n "${runner:-}" ] && [ "$runner" != - ]; then
    # Another implementation's reproducer: its interpreter, the chosen git first on PATH.
    out=$(cd "$work" && PATH="$(dirname "$git_path"):$PATH" PYTHONDONTWRITEBYTECODE=1 timeout -k 5 "$limit" \
      "$runner" "$OLDPWD/$script" </dev/null 2>&1)
  else
    out=$(cd "$work" && timeout -k 5 "$limit" sh "$OLDPWD/$script" "${args[@]}" </dev/null 2>&1)
  fi
  got=$?
  secs=$(($(date +%s) - t0))
  last=$(printf '%s\n' "$out" | tail -n 1 | cut -c1-160)
  case ",$want," in
    *",$got,"*) verdict=ok ;;
    *) verdict=FAIL; failed=$((failed + 1)) ;;
  esac
  [ "$got" = 124 ] && last="timed out after ${limit}s"
  printf '%-4s %-62s exit %s (want %s; %s) %3ss: %s\n' "$verdict" "${script#conformance/expected/}" \
    "$got" "$want" "$why" "$secs" "$last"
  if [ "$verdict" = FAIL ]; then
    printf '%s\n' "$out" | tail -n 15 | sed 's/^/     | /'
  fi
done <<<"$plan"
echo "$count reproducers, $failed disagreeing with the contract or the registry, $skipped skipped, $(($(date +%s) - start)) s"
[ "$failed" -eq 0 ]
