#!/bin/sh
# Runs the configuration that showed the finding again (the interleaving is up to
# the scheduler; interleaving.txt has the one that was seen, serial/ replays it in
# commit order). CONFORMANCE: the conformance binary (a test-hooks build for a planted
# defect).
exec env "${CONFORMANCE:-conformance}" run --concurrent --git 'git' --seed 1 --git-writers 2 --our-writers 1 --concurrent-txns 31 --shared-refs 0 --maintenance-every 0
