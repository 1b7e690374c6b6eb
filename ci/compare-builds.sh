#!/usr/bin/env bash
# Two builds of the gate, same seeds, same git: every mode's JSON report compared with
# ci/compare-reports.py (timings, scratch paths and the scheduler's share left out), for a
# refactoring that must not change what the gate does.
#
#   ci/compare-builds.sh BEFORE-BINARY AFTER-BINARY [GIT] [OUT-DIR]
#
# The concurrent mode is `run --concurrent` on both (a build from before `conformance
# concurrent` existed has only that spelling). Sizes are small: about 5 minutes on 2 cores.
# Exit 0 when every mode agrees, 1 when one differs, 2 when a run could not be made. When the
# older build cannot read today's registry, point both at one it can read:
# REFTABLE_EXPECTED_DIVERGENCES=OLD-CHECKOUT/conformance/expected-divergences.json.
set -uo pipefail
before=${1:?before binary}; after=${2:?after binary}; git=${3:-git}; out=${4:-target/compare-builds}
cd "$(dirname "$0")/.."
mkdir -p "$out"
modes=(
  "run|run --cases 24 --seed 11 --no-concurrent --no-minimize --out $out/cases"
  "concurrent|run --concurrent --concurrent-txns 100 --seed 3 --no-minimize --out $out/cases"
  "migrate|migrate --cases 8 --seed 5"
  "damaged|damaged --seed 2 --bases 2 --trials 60 --seconds 300 --jobs 2 --no-minimize --no-gdb --out $out/damaged"
  "faults|faults --seed 1 --cases 1 --ops-per-case 2 --max-points 40 --no-migrations --out $out/faults"
  "powerloss|powerloss --seed 1 --cases 1 --ops-per-case 2"
)
status=0
for m in "${modes[@]}"; do
  name=${m%%|*}; args=${m#*|}
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    # Both sides write their findings to the same place, so the reports name the same paths.
    rm -rf "$out/cases" "$out/damaged" "$out/faults"
    # shellcheck disable=SC2086
    "$bin" $args --git "$git" --report-json "$out/$name-$side.json" \
      >"$out/$name-$side.log" 2>&1
    echo "$name $side: exit $?"
  done
  if [ ! -s "$out/$name-before.json" ] || [ ! -s "$out/$name-after.json" ]; then
    echo "$name: a report is missing (see $out/$name-*.log)"; status=2; continue
  fi
  if python3 ci/compare-reports.py "$out/$name-before.json" "$out/$name-after.json" \
      >"$out/$name-diff.txt"; then
    echo "$name: same report"
  else
    echo "$name: reports differ ($out/$name-diff.txt)"; [ $status -eq 0 ] && status=1
  fi
done
exit $status
