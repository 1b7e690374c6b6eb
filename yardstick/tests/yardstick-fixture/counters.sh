#!/bin/sh
# The self-test's counters comparison: exit 1 when the mutant (PROGRAM) takes more steps in
# has_above than the unmutated build (BASE). Usage: sh counters.sh BASE PROGRAM
base=$("$1" steps 10) && mine=$("$2" steps 10) || exit 2
echo "steps: base $base, mutant $mine"
test "$mine" -le "$base" || exit 1
