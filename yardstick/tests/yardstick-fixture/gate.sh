#!/bin/sh
# The self-test's "gate": checks count_below, has_above (where it finds something) and spin.
# Usage: sh gate.sh PROGRAM
p=$1
test "$("$p" below 16)" = 3 &&
test "$("$p" below 5)" = 1 &&
test "$("$p" below 100)" = 6 &&
test "$("$p" above 10)" = 1 &&
test "$("$p" spin 5 | cat)" = 5
