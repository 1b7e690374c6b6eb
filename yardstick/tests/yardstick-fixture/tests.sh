#!/bin/sh
# The self-test's "tests": check first_index and spin. Usage: sh tests.sh PROGRAM
p=$1
test "$("$p" find 23)" = 4 &&
test "$("$p" find 4)" = 0 &&
test "$("$p" find 5)" = -1 &&
test "$("$p" spin 7)" = 7
