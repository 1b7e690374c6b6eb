#!/usr/bin/env bash
# Build the cargo-fuzz targets in fuzz/, replay their corpora and regression files, and fuzz
# each target for a while.
#
#   ci/fuzz.sh                   every target for 60 s (stable, no sanitizer)
#   ci/fuzz.sh --smoke           what .ci/run does: build, replay, 15 s per target
#   ci/fuzz.sh --time 600 T...   the named targets for 600 s each
#   ci/fuzz.sh --asan ...        AddressSanitizer build: nightly if installed, else stable
#                                with RUSTC_BOOTSTRAP=1
#   ci/fuzz.sh --grow ...        add new inputs to fuzz/corpus/<t> (default: a scratch copy)
#   ci/fuzz.sh --build-only ...  install cargo-fuzz when missing and build, nothing more
#
# Installs cargo-fuzz when it is missing. Prints one summary line per target (execs/s,
# coverage, features, corpus) and exits non-zero on a crash, leaving the reproducer in
# fuzz/artifacts/<t>/. Runs at the lowest priority (nice 19): it shares the machine. Targets
# run one per core at a time (FUZZ_JOBS=N to change it).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

time_per_target=60
asan=0
grow=0
build_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) time_per_target=15 ;;
    --time) time_per_target="$2"; shift ;;
    --asan) asan=1 ;;
    --grow) grow=1 ;;
    --build-only) build_only=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "fuzz.sh: installing cargo-fuzz"
  nice -n 19 cargo install cargo-fuzz --locked
fi

# cargo-fuzz passes -Zsanitizer=address unless told `-s none`; -Z needs nightly or
# RUSTC_BOOTSTRAP=1. cargo caches its rustc probe in target/.rustc_info.json without keying it
# on RUSTC_BOOTSTRAP, so a probe cached by a plain stable run makes the bootstrap build fail
# with the same -Z error: remove the cache before switching.
toolchain=()
if [ "$asan" = 1 ]; then
  if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=(+nightly)
  else
    export RUSTC_BOOTSTRAP=1
  fi
  rm -f target/.rustc_info.json
  sanitizer=(-s address)
else
  sanitizer=(-s none)
fi

if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo "${toolchain[@]}" fuzz list)
fi

echo "fuzz.sh: building ${targets[*]} (${sanitizer[*]})"
nice -n 19 cargo "${toolchain[@]}" fuzz build "${sanitizer[@]}" 2>&1 | tail -n 3
if [ "$build_only" = 1 ]; then
  exit 0
fi
triple=$(rustc -vV | sed -n 's/^host: //p')
# cargo fuzz builds into CARGO_TARGET_DIR when it is set, else fuzz/target.
bin_dir="${CARGO_TARGET_DIR:-target}/$triple/release"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# One target: replay every committed input once, then fuzz it; 0 clean, 1 a failure (the
# reason printed, the reproducer left in artifacts/<t>/).
fuzz_one() {
  local t=$1 bin="$bin_dir/$1" dict=() dirs log done_line execs
  mkdir -p "corpus/$t" "regressions/$t" "artifacts/$t"
  if [ -f "fuzz_targets/$t.dict" ]; then
    dict=("-dict=fuzz_targets/$t.dict")
  fi
  # (The regression files of known, unfixed library bugs are skipped inside the fuzzing
  # build; `cargo test -p reftable-harness` reports them.)
  if ! "$bin" -runs=0 "corpus/$t" "regressions/$t" >"$scratch/$t.replay" 2>&1; then
    tail -n 30 "$scratch/$t.replay"
    echo "fuzz.sh: $t: replaying the corpus failed" >&2
    return 1
  fi
  if [ "$time_per_target" -le 0 ]; then
    echo "fuzz.sh: $t: replayed"
    return 0
  fi
  if [ "$grow" = 1 ]; then
    dirs=("corpus/$t")
  else
    dirs=("$scratch/corpus-$t" "corpus/$t")
    mkdir -p "${dirs[0]}"
  fi
  log="$scratch/$t.log"
  if ! nice -n 19 "$bin" "${dirs[@]}" "${dict[@]}" \
      -max_total_time="$time_per_target" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1; then
    grep -v '^#' "$log" | tail -n 40
    echo "fuzz.sh: $t: crashed; reproducer in fuzz/artifacts/$t/" >&2
    return 1
  fi
  if [ -n "${FUZZ_LOG_DIR:-}" ]; then
    cp "$log" "$FUZZ_LOG_DIR/$t.log"
  fi
  done_line=$(grep -aE '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz.sh: $t: ${time_per_target}s, $execs execs: ${done_line#*DONE }"
}

# Targets run side by side, one per core (FUZZ_JOBS to change it): each still gets its whole
# time on a core of its own, the run takes a fraction of the time. The first failure stops
# the targets not yet started.
lanes=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
status=0
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$lanes" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  [ "$status" = 0 ] || break
  fuzz_one "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit "$status"
