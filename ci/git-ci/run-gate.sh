#!/bin/sh
# The reftable conformance gate in git's own CI: build git, install the gate, run it on the
# fresh build's bin-wrappers/git within a time budget, and leave TAP, JUnit XML, the reports
# and every failing case's directory (rerun.sh, reproduce.sh) in one artifacts folder.
# GitHub Actions (github-actions.yml) and GitLab CI (gitlab-ci.yml) beside this script both
# call it from a checkout of git.
#
#   run-gate.sh [GIT_SRC]          GIT_SRC: git's source tree (default: the current directory)
#
# Environment (all optional):
#   GATE_MODES       gate modes to run, in order: run, migrate, concurrent, damaged
#                    (default "run migrate")
#   GATE_SECONDS     time budget of each mode, in seconds (default 300: on 2 cores about
#                    4,600 to 4,800 cases of `run`; 300 s ran 4,597 cases against 2.47.3
#                    and 4,766 against a master build tree (its bin-wrappers/git, run
#                    without the script's shell) on an idle 2-core machine, and the
#                    default 120-case run takes about 9 to 10 s by git and the hour;
#                    more cores, more cases)
#   GATE_SEED        seed (default: the CI's run number, else 1); a seed gives the same cases
#   GATE_OUT         the artifacts folder (default ./reftable-gate)
#   GATE_WORK        where reftable-rs is cloned and the gate installed, outside the
#                    artifacts (default ${XDG_CACHE_HOME:-$HOME/.cache}/reftable-gate: cacheable)
#   GIT_BUILT=1      the tree is already built: skip `make`
#   GIT_MAKE_FLAGS   extra arguments for git's `make` (e.g. DEVELOPER=1)
#   CONFORMANCE      an already built conformance binary: skip `cargo install`
#   REFTABLE_RS_SRC  a checkout of reftable-rs (default: cloned from REFTABLE_RS_REPO at
#                    REFTABLE_RS_REF into GATE_WORK/reftable-rs)
#   REFTABLE_RS_REPO, REFTABLE_RS_REF  (default the project's repository, its default branch)
#   GATE_BISECT_GOOD a revision of git that does not show what the run found (the last
#                    release, the previous nightly): the first failing case's reproduce.sh is
#                    then bisected between it and HEAD (ci/bisect-finding.sh, each step
#                    built in a scratch worktree with GIT_MAKE_FLAGS), and the commit named in
#                    bisect.txt and bisect.json beside the reports
#
# Exit status: 0 every mode clean; 1 an unexpected divergence (the TAP/JUnit say where);
# 2 the build, the install or a mode could not run.
set -u

git_src=$(cd "${1:-.}" && pwd) || exit 2
out=${GATE_OUT:-$PWD/reftable-gate}
modes=${GATE_MODES:-run migrate}
seconds=${GATE_SECONDS:-300}
seed=${GATE_SEED:-${GITHUB_RUN_NUMBER:-${CI_PIPELINE_IID:-1}}}
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
work=${GATE_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/reftable-gate}
mkdir -p "$out" "$work" && out=$(cd "$out" && pwd) && work=$(cd "$work" && pwd) || exit 2

say() { printf 'run-gate: %s\n' "$*" >&2; }

# 1. git, built as git's CI builds it.
if [ "${GIT_BUILT:-}" = 1 ]; then
  say "GIT_BUILT=1: using the build in $git_src"
else
  say "building git in $git_src"
  # shellcheck disable=SC2086 # GIT_MAKE_FLAGS is a list of make arguments
  (cd "$git_src" && make -j"$jobs" ${GIT_MAKE_FLAGS:-}) >"$out/build.log" 2>&1 || {
    tail -n 30 "$out/build.log" >&2
    say "git's build failed (log: $out/build.log)"
    exit 2
  }
fi
git="$git_src/bin-wrappers/git"
if [ ! -x "$git" ]; then
  say "$git is missing: build git first (or unset GIT_BUILT)"
  exit 2
fi
"$git" version --build-options >"$out/git-version.txt" 2>&1 || {
  say "$git does not run"
  exit 2
}

# 2. The gate: a given binary, or cargo install from a checkout of reftable-rs.
src=${REFTABLE_RS_SRC:-}
if [ -z "$src" ] && [ -z "${CONFORMANCE:-}" ]; then
  src="$work/reftable-rs"
  if [ ! -d "$src/.git" ]; then
    repo=${REFTABLE_RS_REPO:-https://github.com/reftable-rs/reftable-rs}
    say "cloning $repo"
    if [ -n "${REFTABLE_RS_REF:-}" ]; then
      "$git" clone -q --depth 1 --branch "$REFTABLE_RS_REF" "$repo" "$src" || exit 2
    else
      "$git" clone -q --depth 1 "$repo" "$src" || exit 2
    fi
  fi
fi
if [ -n "${CONFORMANCE:-}" ]; then
  gate=$CONFORMANCE
  say "using the gate binary $gate"
else
  say "cargo install --locked --path $src/conformance"
  cargo install --quiet --locked --path "$src/conformance" --root "$work/gate" \
    >"$out/install.log" 2>&1 || {
    tail -n 30 "$out/install.log" >&2
    say "installing the gate failed (log: $out/install.log)"
    exit 2
  }
  gate="$work/gate/bin/conformance"
fi
[ -x "$gate" ] || { say "no gate binary at $gate"; exit 2; }
# The known git defects, from the checkout when there is one (else the binary's own default).
if [ -n "$src" ] && [ -f "$src/conformance/expected-divergences.json" ]; then
  REFTABLE_EXPECTED_DIVERGENCES="$src/conformance/expected-divergences.json"
  export REFTABLE_EXPECTED_DIVERGENCES
fi

# 3. Each mode within the budget: TAP, JUnit, reports, failing cases.
status=0
for mode in $modes; do
  case $mode in
    run) set -- run --seconds "$seconds" --seed "$seed" --out "$out/run-cases" ;;
    concurrent) set -- run --concurrent --seconds "$seconds" --seed "$seed" --out "$out/concurrent-cases" ;;
    migrate) set -- migrate --seconds "$seconds" --seed "$seed" --out "$out/migrate-cases" ;;
    # damaged's --seconds bounds when trials start; the trials then running and the
    # findings' directories take some seconds more (about 10 in a 30 s run): 3/4 of it.
    damaged) set -- damaged --seconds $((seconds * 3 / 4)) --seed "$seed" --no-minimize --timeout 5 --out "$out/damaged-findings" ;;
    *) say "unknown mode $mode"; exit 2 ;;
  esac
  say "conformance $* (git $("$git" version | cut -d' ' -f3))"
  "$gate" "$@" --git "$git" --tap="$out/$mode.tap" --junit "$out/$mode.xml" \
    --report-json "$out/$mode.json" --report-md "$out/$mode.md" >"$out/$mode.log" 2>&1
  code=$?
  tail -n 3 "$out/$mode.log" | cut -c1-300 >&2
  say "$mode: exit $code"
  if [ "$code" -gt "$status" ]; then status=$code; fi
done
# 4. A finding named by its commit, when asked and when there is one to name.
if [ "$status" = 1 ] && [ -n "${GATE_BISECT_GOOD:-}" ]; then
  case_dir=$(ls -d "$out"/*-cases/*-min "$out"/*-cases/* 2>/dev/null | while read -r d; do
    [ -f "$d/reproduce.sh" ] && echo "$d" && break; done)
  if [ -z "$case_dir" ]; then
    say "GATE_BISECT_GOOD: no failing case with a reproduce.sh to bisect"
  elif [ -z "$src" ] || [ ! -x "$src/ci/bisect-finding.sh" ]; then
    say "GATE_BISECT_GOOD: bisecting needs a reftable-rs checkout (REFTABLE_RS_SRC)"
  else
    say "bisecting $case_dir between $GATE_BISECT_GOOD and HEAD"
    "$src/ci/bisect-finding.sh" --repo "$git_src" --good "$GATE_BISECT_GOOD" --bad HEAD \
      --reproducer "$case_dir/reproduce.sh" --report "$out/bisect.json" >"$out/bisect.txt" 2>&1 \
      && cat "$out/bisect.txt" >&2 || say "bisect found no commit (log: $out/bisect.txt)"
  fi
fi
say "artifacts in $out"
exit "$status"
