#!/bin/sh
# Runs the configuration that showed the finding again (the interleaving is up to
# the scheduler; interleaving.txt has the one that was seen, serial/ replays it in
# commit order). CONFORMANCE: the conformance binary (a test-hooks build for a planted
# defect).
exec env "${CONFORMANCE:-conformance}" run --concurrent --git 'git' --seed 3 --git-writers 2 --our-writers 2 --concurrent-txns 250 --shared-refs 4 --maintenance-every 25
