#!/bin/sh
# A git crash or hang found by reftable-rs `conformance damaged`, with git alone.
#
# Usage: sh reproduce.sh FINDING-DIR [GIT]
#
# FINDING-DIR holds the damaged stack (`stack/`, a .git/reftable directory), the command
# that broke (`command`, shell-quoted arguments of git), the object format
# (`object-format`) and `finding.json` (signature, minimized damage). The stack goes into a
# fresh repository whose alternate is `objects-<format>` beside the findings (the gate's
# object pool). Exit 1 when git is killed by a signal (or a sanitizer reports one) or runs
# past 10 s, 0 otherwise.
set -u
dir=$(cd "${1:?usage: sh reproduce.sh FINDING-DIR [GIT]}" && pwd) || exit 2
GIT=${2:-git}
format=$(cat "$dir/object-format") || exit 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C GIT_TEST_REFTABLE_AUTOCOMPACTION=false
"$GIT" version
"$GIT" init -q --ref-format=reftable --object-format="$format" -b main "$scratch/t/repo" || exit 2
rm -rf "$scratch/t/repo/.git/reftable" && cp -r "$dir/stack" "$scratch/t/repo/.git/reftable" || exit 2
echo "$dir/../objects-$format" > "$scratch/t/repo/.git/objects/info/alternates"
mkdir -p "$scratch/t/outside" && cp "$dir"/outside/* "$scratch/t/outside/" 2>/dev/null
cd "$scratch/t/repo" || exit 2
if command -v timeout >/dev/null; then t="timeout 10"; else t=; fi
eval "$t \"\$GIT\" $(cat "$dir/command")" >/dev/null 2>"$scratch/err"
status=$?
cat "$scratch/err" >&2
echo "exit status $status"
if { [ $status -gt 128 ] && [ $status -lt 193 ]; } || [ $status -eq 124 ]; then
  echo 'DEFECT: git crashed or hung'
  exit 1
fi
# A sanitizer build catches a crash itself and exits with its own code.
if grep -q "Sanitizer: SEGV\|Sanitizer:DEADLYSIGNAL" "$scratch/err"; then
  echo "DEFECT: git crashed (caught by a sanitizer, exit $status)"
  exit 1
fi
echo 'ok: git neither crashed nor hung'
