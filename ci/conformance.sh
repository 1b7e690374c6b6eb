#!/usr/bin/env bash
# The conformance gate: generated ref operation sequences on real git and on reftable-rs,
# compared after every step. Exit 0 clean, 1 unexpected divergence, 2 usage/environment error.
#
#   ci/conformance.sh [--git PATH] [--cases N] [--ops N] [--seed S] [--shard K/N] [--jobs J]
#
# The git under test comes from --git, else REFTABLE_TEST_GIT, else git on PATH; it must support
# reftable (git 2.45+). Reports go to target/conformance/report.{json,md}; divergent cases
# (minimized) to target/conformance/cases/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/conformance
cargo build --release --locked -p conformance
exec "${CARGO_TARGET_DIR:-target}"/release/conformance run \
  --report-json target/conformance/report.json \
  --report-md target/conformance/report.md \
  "$@"
