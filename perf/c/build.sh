#!/bin/sh
# Build the C driver (perf/c/hotpaths.c, ours) against the reftable library of a built git
# checkout: its public headers and its libgit.a (plus libgitcore.a where git builds Rust
# parts), with the checkout's own optimization (-O2, as git's Makefile compiles).
#
#   sh perf/c/build.sh GIT_CHECKOUT [OUT]        (default OUT: target/hotpaths-c)
set -eu
src=$(cd "${1:?usage: build.sh GIT_CHECKOUT [OUT]}" && pwd)
out=${2:-target/hotpaths-c}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$src/libgit.a" ] || { echo "$src/libgit.a is missing: build git first (make)" >&2; exit 2; }
[ -f "$src/reftable/reftable-stack.h" ] || { echo "$src has no reftable/reftable-stack.h" >&2; exit 2; }
grep -q "struct reftable_stack_options" "$src/reftable/reftable-stack.h" || {
  echo "this driver speaks the reftable API of git 2.55 and later (struct reftable_stack_options)" >&2
  exit 2
}
rust=
for lib in "$src/target/release/libgitcore.a" "$src/target/debug/libgitcore.a"; do
  if [ -f "$lib" ]; then rust=$lib; break; fi
done
mkdir -p "$(dirname "$out")"
${CC:-cc} -O2 -I"$src" -o "$out" "$here/hotpaths.c" "$src/libgit.a" $rust -lz -lpthread -ldl
echo "$out"
