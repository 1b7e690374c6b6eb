#!/usr/bin/env bash
# Compiles and runs one reproducer against a libgit2 build.
#
#     adapters/libgit2/repro/run.sh LIBGIT2_BUILD_DIR ID
#
# LIBGIT2_BUILD_DIR: build.sh's OUT directory (holding build/) or its build/ itself (with
# libgit2.so and include/). ID: a reproducer here (ID.c; ID.sh, when there, prepares it).
# Exit status: the reproducer's (1 the defect shows, 0 it does not, 2 it cannot run); 2
# when the build is missing or the reproducer does not compile.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { echo "usage: $0 LIBGIT2_BUILD_DIR ID" >&2; exit 2; }
build=$1
[ -e "$build/libgit2.so" ] || build=$1/build
[ -e "$build/libgit2.so" ] && [ -f "$build/include/git2.h" ] \
  || { echo "run.sh: no libgit2 build in $1 (want libgit2.so and include/git2.h)" >&2; exit 2; }
src=$here/$2.c
[ -f "$src" ] || { echo "run.sh: no reproducer $src" >&2; exit 2; }
command -v git >/dev/null 2>&1 || { echo "run.sh: git not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${CC:-cc}" -std=c99 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -I"$build/include" -I"$here" \
  -o "$tmp/repro" "$src" -L"$build" -Wl,-rpath,"$build" -lgit2 \
  || { echo "run.sh: $2.c does not compile against $build" >&2; exit 2; }
cd "$tmp" && TMPDIR=$tmp ./repro
