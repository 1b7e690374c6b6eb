#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script for reftable-rs.
#
# Copy this folder to projects/reftable-rs/ of OSS-Fuzz. .clusterfuzzlite/build.sh is the
# same file for ClusterFuzzLite (.ci/run compares them): change both.
# It builds every cargo-fuzz target of fuzz/ with the sanitizer and coverage flags the
# OSS-Fuzz Rust builder sets, and installs, for each target <t>:
#   $OUT/reftable-<t>                  the fuzzer
#   $OUT/reftable-<t>.dict             its libFuzzer dictionary, if it has one
#   $OUT/reftable-<t>_seed_corpus.zip  fuzz/corpus/<t> and fuzz/regressions/<t>
#   $OUT/reftable-<t>.options          libFuzzer options (input length cap)
#
# A new crash from ClusterFuzz goes to fuzz/regressions/<t>/ (minimized, named after what
# it found); `cargo test -p reftable-harness --test fuzz_replay` then replays it on stable.

cd "$SRC/reftable-rs/fuzz"
export CARGO_BUILD_TARGET_DIR="${WORK:-$PWD/target}/reftable-fuzz-target"
cargo fuzz build -O --debug-assertions

release="$CARGO_BUILD_TARGET_DIR/x86_64-unknown-linux-gnu/release"
for src in fuzz_targets/*.rs; do
  t=$(basename "${src%.rs}")
  fuzzer="$OUT/reftable-$t"
  cp "$release/$t" "$fuzzer"
  if [ -f "fuzz_targets/$t.dict" ]; then
    cp "fuzz_targets/$t.dict" "$fuzzer.dict"
  fi
  seeds=()
  for d in "corpus/$t" "regressions/$t"; do
    if [ -d "$d" ] && [ -n "$(ls -A "$d")" ]; then
      seeds+=("$d")
    fi
  done
  if [ ${#seeds[@]} -gt 0 ]; then
    zip -q -j -r "${fuzzer}_seed_corpus.zip" "${seeds[@]}"
  fi
  printf '[libfuzzer]\nmax_len = 65536\n' > "$fuzzer.options"
done
