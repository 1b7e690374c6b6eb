#!/usr/bin/env bash
# Compare two builds' `reftable verify` on the same inputs: every fixture under fixtures/
# (stacks and single tables) and the damaged inputs cli/tests/verify.rs feeds it (written by
# its ignored `write_verify_inputs`). Byte for byte: stdout, stderr and exit status.
#
#   ci/verify-identity.sh OLD_BINARY NEW_BINARY [INPUTS_DIR]
#
# INPUTS_DIR is (re)written unless it exists; exit 1 on any difference.
set -euo pipefail
old=$1 new=$2
root=$(cd "$(dirname "$0")/.." && pwd)
inputs=${3:-$(mktemp -d)/inputs}
if [ ! -d "$inputs" ]; then
    REFTABLE_VERIFY_INPUTS=$inputs cargo test -q -p reftable-cli --test verify \
        write_verify_inputs -- --ignored >/dev/null
fi
paths=()
for d in "$root"/fixtures/repos/* "$root"/fixtures/repos/*/reftable "$root"/fixtures/damaged/*/stack "$inputs"/stack-*/reftable "$inputs"/stack-12; do
    [ -d "$d" ] && paths+=("$d")
done
while IFS= read -r f; do paths+=("$f"); done < <(find "$root/fixtures" "$inputs" -name '*.ref' | sort)
diffs=0
for p in "${paths[@]}"; do
    a=$("$old" verify "$p" 2>&1; echo "exit $?")
    b=$("$new" verify "$p" 2>&1; echo "exit $?")
    if [ "$a" != "$b" ]; then
        diffs=$((diffs + 1))
        echo "DIFFERS: $p"
        diff <(echo "$a") <(echo "$b") | head -20
    fi
done
echo "verify-identity: ${#paths[@]} inputs, $diffs differing"
[ "$diffs" -eq 0 ]
