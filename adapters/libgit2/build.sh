#!/usr/bin/env bash
# Builds the libgit2 adapter against a libgit2 checkout the user names.
#
#     adapters/libgit2/build.sh LIBGIT2_CHECKOUT OUT_DIR
#
# Builds libgit2 from LIBGIT2_CHECKOUT with cmake into OUT_DIR/build (a shared library, no
# network, no HTTPS/SSH; reused when already built: cmake only rebuilds what changed), then
# compiles adapter.c against it into OUT_DIR/libgit2-adapter and prints that path. Nothing
# is written into the checkout or into this project.
#
# Exit status: 0 built; 2 cannot build (no cmake or C compiler, not a libgit2 checkout, the
# build failed). Environment: CC (default cc), JOBS (default 2), LIBGIT2_COMMIT (the commit
# reported by `hello` when the checkout is not a git work tree).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

cannot() {
  echo "build.sh: cannot build: $*" >&2
  exit 2
}

[ $# -eq 2 ] || { echo "usage: $0 LIBGIT2_CHECKOUT OUT_DIR" >&2; exit 2; }
[ -d "$1" ] || cannot "no such directory: $1"
src=$(cd "$1" && pwd)
[ -f "$src/CMakeLists.txt" ] && [ -f "$src/include/git2.h" ] \
  || cannot "$src is not a libgit2 checkout (it needs CMakeLists.txt and include/git2.h)"
command -v cmake >/dev/null 2>&1 || cannot "cmake not found (apt-get install cmake)"
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || cannot "C compiler '$cc' not found (set CC)"
mkdir -p "$2"
out=$(cd "$2" && pwd)
build=$out/build

# A build directory configured for another checkout is not reused: cmake would refuse it.
if [ -f "$build/CMakeCache.txt" ]; then
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  [ "$home" = "$src" ] || cannot "$build was configured for $home; name another OUT_DIR"
else
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=ON \
    -DBUILD_TESTS=OFF -DBUILD_CLI=OFF -DBUILD_EXAMPLES=OFF -DBUILD_FUZZERS=OFF \
    -DUSE_HTTPS=OFF -DUSE_SSH=OFF -DUSE_NTLMCLIENT=OFF -DUSE_AUTH_NTLM=OFF \
    -DUSE_AUTH_NEGOTIATE=OFF -DUSE_GSSAPI=OFF -DREGEX_BACKEND=builtin >"$out/cmake.log" 2>&1 \
    || { tail -20 "$out/cmake.log" >&2; cannot "cmake could not configure $src (log: $out/cmake.log)"; }
fi
nice cmake --build "$build" -j "${JOBS:-2}" >"$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log" >&2; cannot "libgit2 did not build (log: $out/build.log)"; }
[ -e "$build/libgit2.so" ] || cannot "the build made no $build/libgit2.so"

# The commit reported by hello: the checkout's HEAD, else $LIBGIT2_COMMIT, else unknown.
# (Only a checkout that is itself a work tree's top: the fixture lies inside this project.)
commit=${LIBGIT2_COMMIT:-unknown}
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
  commit=$(git -C "$src" rev-parse HEAD)
fi
# build/include holds the headers as built (with the generated git2/experimental.h).
"$cc" -std=c99 -O2 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
  -DADAPTER_LIBGIT2_COMMIT="\"$commit\"" -I"$build/include" -I"$src/include" \
  -o "$out/libgit2-adapter" "$here/adapter.c" "$here/json.c" \
  -L"$build" -Wl,-rpath,"$build" -lgit2 \
  || cannot "adapter.c did not compile against $src"
echo "$out/libgit2-adapter"
