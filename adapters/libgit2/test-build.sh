#!/usr/bin/env bash
# Tests the libgit2 adapter's build step without libgit2 (CI cannot fetch it): build.sh on
# fixture/, a stand-in "libgit2 checkout" of ours, into a temporary directory; the adapter
# it builds must answer hello as protocol 1 with the verbs it declares, open a repository
# and read it (the fixture's store is empty), and exit 0 at EOF. Exit 0 passed, 1 failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v cmake >/dev/null 2>&1; then
  (apt-get install -y cmake || (apt-get update && apt-get install -y cmake)) >/dev/null 2>&1 \
    || { echo "test-build.sh: cmake is needed (apt-get install cmake)" >&2; exit 1; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

adapter=$("$here/build.sh" "$here/fixture" "$tmp/out") || { echo "test-build.sh: build.sh failed" >&2; exit 1; }
[ "$adapter" = "$tmp/out/libgit2-adapter" ] && [ -x "$adapter" ] \
  || { echo "test-build.sh: build.sh printed '$adapter', not the adapter" >&2; exit 1; }
# A second run reuses the build.
"$here/build.sh" "$here/fixture" "$tmp/out" >/dev/null || { echo "test-build.sh: rebuild failed" >&2; exit 1; }
# Not a checkout: exit 2.
status=0
"$here/build.sh" "$tmp" "$tmp/other" >/dev/null 2>&1 || status=$?
[ "$status" = 2 ] || { echo "test-build.sh: build.sh on a non-checkout exited $status, not 2" >&2; exit 1; }

mkdir -p "$tmp/repo/reftable"
printf '%s\n' '{"id":1,"verb":"hello","protocol":1}' \
  "{\"id\":2,\"verb\":\"open\",\"gitdir\":\"$tmp/repo\"}" \
  '{"id":3,"verb":"refs"}' '{"id":4,"verb":"ref","name":"HEAD"}' \
  '{"id":5,"verb":"hello","protocol":2}' >"$tmp/requests"
"$adapter" <"$tmp/requests" >"$tmp/answers" || { echo "test-build.sh: the adapter exited $?" >&2; exit 1; }
python3 - "$tmp/answers" <<'PY'
import json, sys
answers = [json.loads(line) for line in open(sys.argv[1])]
hello = answers[0]
want_verbs = {"hello", "open", "refs", "ref", "reflog", "transaction"}
checks = [
    (len(answers) == 5, f"{len(answers)} answers to 5 requests"),
    (hello.get("id") == 1 and hello.get("answer") == "done" and hello.get("protocol") == 1, f"hello: {hello}"),
    (hello.get("implementation") == "libgit2", "hello: implementation"),
    (want_verbs <= set(hello.get("verbs", [])), "hello: required verbs missing"),
    (answers[1] == {"id": 2, "hash": "sha1", "answer": "done"}, f"open: {answers[1]}"),
    (answers[2] == {"id": 3, "refs": [], "answer": "done"}, f"refs: {answers[2]}"),
    (answers[3] == {"id": 4, "ref": None, "answer": "done"}, f"ref: {answers[3]}"),
    (answers[4].get("answer") == "unsupported", f"hello 2: {answers[4]}"),
]
bad = [what for ok, what in checks if not ok]
for what in bad:
    print(f"test-build.sh: {what}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "test-build.sh: build.sh on the fixture built an adapter that speaks protocol 1"
