#!/usr/bin/env bash
# Resource-bound report: every `reftable` subcommand on each crafted input of
# perf/src/bin/crafted.rs, its exit status, wall time and peak RSS (GNU time), against the
# bounds the tool holds itself to: at most 256 MiB and 10 s on each input under 20 MB, and `verify` of a
# valid table in at most 1.5x the table's size ("under 20 MB": the bytes of the input's
# files, so the 5 GiB sparse table has no time bound). A report, not a test: times depend
# on the machine; peak RSS barely does.
#
#   ci/resource-bounds.sh [--refs N] [--out FILE] [--memory-only]
# (default 2,000,000 refs; FILE: stdout). Exit status 1 when a bound is exceeded; with
# --memory-only (CI) only the memory bounds count, the times are reported.
set -euo pipefail
cd "$(dirname "$0")/.."
REFS=2000000 OUT=/dev/stdout MEMORY_ONLY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --refs) REFS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --memory-only) MEMORY_ONLY=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! -x /usr/bin/time ]]; then
  apt-get install -y time >/dev/null 2>&1 || { echo "resource-bounds: needs GNU time (apt-get install time)" >&2; exit 2; }
fi
cargo build --release --locked -q -p reftable-cli -p perf --bin reftable --bin crafted
BIN="${CARGO_TARGET_DIR:-target}"/release/reftable
DIR=target/crafted-$REFS
CASES="big-log-blocks listed-20000-times sparse-5gib repeated-16mib-blocks long-messages many-tables valid-refs"
missing=0
for c in $CASES; do [[ -d "$DIR/$c" ]] || missing=1; done
if [[ ! -e "$DIR/done" ]] || (( missing )); then
  rm -rf "$DIR"
  "${CARGO_TARGET_DIR:-target}"/release/crafted "$DIR" "$REFS"
  touch "$DIR/done"
fi
fail=0
{
  echo "| input | input size | command | exit | seconds | peak RSS (MiB) | bound |"
  echo "| --- | ---: | --- | ---: | ---: | ---: | --- |"
  for c in $CASES; do
    size=$(du -sb --apparent-size "$DIR/$c" | cut -f1)
    for cmd in refs logs "dump" "dump --blocks" stat verify; do
      [[ "$c" == valid-refs && "$cmd" != verify && "$cmd" != refs ]] && continue
      # shellcheck disable=SC2086
      /usr/bin/time -f "%x %e %M" -o "$DIR/time.txt" timeout 600 "$BIN" $cmd "$DIR/$c/"* >/dev/null 2>&1 || true
      read -r rc secs kib < <(tail -1 "$DIR/time.txt")
      # GNU time reports a signal on a line of its own and exit status 0.
      if sig=$(grep -o 'terminated by signal [0-9]*' "$DIR/time.txt"); then rc=$(( 128 + ${sig##* } )); fi
      mib=$(( kib / 1024 ))
      bound="-"
      if (( rc > 1 )); then
        # 0 and 1 (corrupt data found) are answers; anything else (a signal, an I/O error,
        # the 600 s timeout) is a failure on any input.
        bound="exit $rc: FAILED"; fail=1
      elif [[ "$c" == valid-refs && "$cmd" == verify ]]; then
        limit=$(( size * 3 / 2 / 1048576 ))
        if (( mib <= limit )); then bound="<= 1.5x size ($limit MiB): ok"; else bound="<= 1.5x size ($limit MiB): EXCEEDED"; fail=1; fi
      elif (( size < 20000000 )); then
        if (( mib > 256 )); then bound="256 MiB, 10 s: EXCEEDED (memory)"; fail=1
        elif ! awk "BEGIN{exit !($secs <= 10)}"; then
          bound="256 MiB, 10 s: EXCEEDED (time)"; (( MEMORY_ONLY )) || fail=1
        else bound="256 MiB, 10 s: ok"; fi
      fi
      echo "| $c | $size | $cmd | $rc | $secs | $mib | $bound |"
    done
  done
} > "$OUT"
exit $fail
