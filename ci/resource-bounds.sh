#!/usr/bin/env bash
# Resource-bound report: every `reftable` subcommand on each crafted input of
# perf/src/bin/crafted.rs, its exit status, wall time and peak RSS (GNU time), against the
# bounds the tool holds itself to: at most 256 MiB and 10 s on each input under 20 MB, and `verify` of a
# valid table in at most 1.5x the table's size ("under 20 MB": the bytes of the input's
# files, so the 5 GiB sparse table has no time bound). A report, not a test: times depend
# on the machine; peak RSS barely does.
#
#   ci/resource-bounds.sh [--refs N] [--out FILE] [--memory-only] [--jobs J]
# (default 2,000,000 refs; FILE: stdout). Exit status 1 when a bound is exceeded; with
# --memory-only (CI) only the memory bounds count, the times are reported. --jobs J runs J
# commands at a time (default 1): each command's peak RSS is its own, but its time is then
# taken beside another's (CI runs two, with --memory-only).
set -euo pipefail
cd "$(dirname "$0")/.."
REFS=2000000 OUT=/dev/stdout MEMORY_ONLY=0 JOBS=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --refs) REFS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --memory-only) MEMORY_ONLY=1; shift ;;
    --jobs) JOBS="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! -x /usr/bin/time ]]; then
  apt-get install -y time >/dev/null 2>&1 || { echo "resource-bounds: needs GNU time (apt-get install time)" >&2; exit 2; }
fi
# PERF_BIN_DIR=DIR runs the `reftable` and `crafted` binaries already built there and builds
# nothing (`.ci/run`: the debug build, so its times are a debug build's; the memory bounds
# hold the same).
BIN_DIR=${PERF_BIN_DIR:-}
if [[ -z "$BIN_DIR" ]]; then
  cargo build --release --locked -q -p reftable-cli -p perf --bin reftable --bin crafted
  BIN_DIR="${CARGO_TARGET_DIR:-target}"/release
fi
BIN=$BIN_DIR/reftable
DIR=target/crafted-$REFS
CASES="big-log-blocks listed-20000-times sparse-5gib repeated-16mib-blocks long-messages many-tables valid-refs"
missing=0
for c in $CASES; do [[ -d "$DIR/$c" ]] || missing=1; done
if [[ ! -e "$DIR/done" ]] || (( missing )); then
  rm -rf "$DIR"
  "$BIN_DIR"/crafted "$DIR" "$REFS"
  touch "$DIR/done"
fi
# One command on one input: its table row in $DIR/rows/N, and a file $DIR/rows/N.failed when
# it broke a bound that counts.
measure() {
  local n=$1 c=$2 cmd=$3 size rc secs kib sig mib bound limit failed=0
  local t="$DIR/rows/$n.time"
  size=$(du -sb --apparent-size "$DIR/$c" | cut -f1)
  # shellcheck disable=SC2086
  /usr/bin/time -f "%x %e %M" -o "$t" timeout 600 "$BIN" $cmd "$DIR/$c/"* >/dev/null 2>&1 || true
  read -r rc secs kib < <(tail -1 "$t")
  # GNU time reports a signal on a line of its own and exit status 0.
  if sig=$(grep -o 'terminated by signal [0-9]*' "$t"); then rc=$(( 128 + ${sig##* } )); fi
  mib=$(( kib / 1024 ))
  bound="-"
  if (( rc > 1 )); then
    # 0 and 1 (corrupt data found) are answers; anything else (a signal, an I/O error,
    # the 600 s timeout) is a failure on any input.
    bound="exit $rc: FAILED"; failed=1
  elif [[ "$c" == valid-refs && "$cmd" == verify ]]; then
    limit=$(( size * 3 / 2 / 1048576 ))
    if (( mib <= limit )); then bound="<= 1.5x size ($limit MiB): ok"; else bound="<= 1.5x size ($limit MiB): EXCEEDED"; failed=1; fi
  elif (( size < 20000000 )); then
    if (( mib > 256 )); then bound="256 MiB, 10 s: EXCEEDED (memory)"; failed=1
    elif ! awk "BEGIN{exit !($secs <= 10)}"; then
      bound="256 MiB, 10 s: EXCEEDED (time)"; (( MEMORY_ONLY )) || failed=1
    else bound="256 MiB, 10 s: ok"; fi
  fi
  echo "| $c | $size | $cmd | $rc | $secs | $mib | $bound |" >"$DIR/rows/$n"
  if (( failed )); then touch "$DIR/rows/$n.failed"; fi
}
rm -rf "$DIR/rows"
mkdir -p "$DIR/rows"
n=0 running=0
for c in $CASES; do
  for cmd in refs logs "dump" "dump --blocks" stat verify; do
    [[ "$c" == valid-refs && "$cmd" != verify && "$cmd" != refs ]] && continue
    if (( running >= JOBS )); then
      wait -n
      running=$(( running - 1 ))
    fi
    measure "$n" "$c" "$cmd" &
    running=$(( running + 1 )) n=$(( n + 1 ))
  done
done
wait
{
  echo "Binaries: \`$BIN_DIR\`."
  echo
  echo "| input | input size | command | exit | seconds | peak RSS (MiB) | bound |"
  echo "| --- | ---: | --- | ---: | ---: | ---: | --- |"
  for (( i = 0; i < n; i++ )); do cat "$DIR/rows/$i"; done
} > "$OUT"
if compgen -G "$DIR/rows/*.failed" >/dev/null; then
  exit 1
fi
