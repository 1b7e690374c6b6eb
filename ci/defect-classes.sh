#!/usr/bin/env bash
# How well each stage of the harness sees realistic defects: plants one defect at a time into
# a scratch copy of the workspace (never into this tree, never into what users build) and
# runs the library's tests, the complexity gate and a bounded conformance gate against each.
# Each defect stands for a class the harness once missed:
#
#   seek-decodes-more   restart search sometimes starts one restart early: same results, a few % more work
#   expiry-boundary     compaction's reflog expiry also drops entries at exactly the cutoff
#   index-equal-key     index descent skips the block whose last key equals the sought key
#   block-exact-fill    the block writer refuses a record that exactly fills the block
#   df-through-symref   a symref's referent is not checked for D/F conflicts in its transaction
#   delete-missing-old  deleting a missing ref with an expected old value is accepted
#   merged-third-copy   the merged iterator shadows one older copy of a key, not all of them
#
# Usage: ci/defect-classes.sh [--tree REV] [--cases N] [--seed S] [--only NAME] [--stages LIST]
#   --tree REV   plant into the workspace at git revision REV (default: the working tree)
#   --stages     comma-separated of lib,complexity,gate (default all)
# Prints one line per defect and stage; exit 0. Takes about 3 minutes per defect on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
TREE="" CASES=40 SEED=5 ONLY="" STAGES="lib,complexity,gate"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tree) TREE="$2"; shift 2 ;;
    --cases) CASES="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --stages) STAGES="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
SCRATCH=${DEFECT_SCRATCH:-${TMPDIR:-/tmp}/reftable-defect-classes}/${TREE:-worktree}
mkdir -p "$SCRATCH"
if [[ -n "$TREE" ]]; then
  rm -rf "$SCRATCH/src" && mkdir -p "$SCRATCH/src"
  git archive "$TREE" | tar -x -C "$SCRATCH/src"
else
  rm -rf "$SCRATCH/src" && mkdir -p "$SCRATCH/src"
  tar --exclude=./target --exclude=./fuzz/target --exclude=./.git -cf - . | tar -x -C "$SCRATCH/src"
fi
export CARGO_TARGET_DIR="$SCRATCH/target"
SRC="$SCRATCH/src"

# name|file|original|planted[|original|planted...] (literal text, each must occur exactly once)
DEFECTS=(
  'seek-decodes-more|reftable/src/codec/block.rs|info.restart(data, lo - 1)|info.restart(data, if lo % 64 == 0 { lo - 2 } else { lo - 1 })'
  'expiry-boundary|reftable/src/stack.rs|(self.time > 0 \&\& time < self.time)|(self.time > 0 \&\& time <= self.time)'
  'index-equal-key|reftable/src/table/seek.rs|root.linear_seek_from(first, key)?;|root.linear_seek_from(first, \&[key, \&b"\\0"[..]].concat())?;'
  'block-exact-fill|reftable/src/codec/block_writer.rs|if 2 + 3 * restarts + n > self.block_size.saturating_sub(next) {|if 2 + 3 * restarts + n >= self.block_size.saturating_sub(next) {'
  'df-through-symref|reftable/src/refdb/transaction.rs|        self.affect(target);\n        Ok(())|        Ok(())|            self.view.check_available(\&u.refname, \&self.affected)?;|            if u.original == u.refname { self.view.check_available(\&u.refname, \&self.affected)?; }'
  'delete-missing-old|reftable/src/refdb/transaction.rs|            if u.expects_existing() {|            if u.expects_existing() \&\& !matches!(\&u.new, Some(Val::Oid(n)) if n.is_null()) {'
  'merged-third-copy|reftable/src/merged.rs|                self.fill(shadowed.index)?;\n            }|                self.fill(shadowed.index)?;\n                break;\n            }'
)

plant() { # file, then (original planted) pairs: replace exactly one occurrence of each
  python3 - "$SRC/$1" "${@:2}" <<'EOF'
import sys
def unescape(t):
    return t.replace('\\n', '\n').replace('\\&', '&').replace('\\\\0', '\\0')
path, pairs = sys.argv[1], sys.argv[2:]
text = open(path).read()
for old, new in zip(pairs[::2], pairs[1::2]):
    old, new = unescape(old), unescape(new)
    if text.count(old) != 1:
        sys.exit(f"{path}: {text.count(old)} occurrences of {old!r}")
    text = text.replace(old, new)
open(path, 'w').write(text)
EOF
}

has() { [[ ",$STAGES," == *",$1,"* ]]; }

for d in "${DEFECTS[@]}"; do
  IFS='|' read -r -a fields <<<"$d"
  name=${fields[0]} file=${fields[1]}
  [[ -n "$ONLY" && "$ONLY" != "$name" ]] && continue
  cp "$SRC/$file" "$SCRATCH/pristine"
  plant "$file" "${fields[@]:2}"
  if has lib; then
    if (cd "$SRC" && cargo test -q -p reftable --locked >"$SCRATCH/$name.lib" 2>&1); then
      echo "$name lib: passes (missed)"
    else
      echo "$name lib: fails (caught): $(grep -m1 -E '^test .* FAILED|panicked at' "$SCRATCH/$name.lib" || true)"
    fi
  fi
  if has complexity; then
    if (cd "$SRC" && ci/complexity.sh >"$SCRATCH/$name.complexity" 2>&1); then
      echo "$name complexity: passes (missed)"
    else
      echo "$name complexity: fails (caught): $(grep -m1 -E 'at n=' "$SCRATCH/$name.complexity" || true)"
    fi
  fi
  if has gate; then
    (cd "$SRC" && cargo build -q --release --locked -p conformance) >/dev/null 2>&1
    out="$SCRATCH/$name.gate"
    rm -rf "$out.dir"
    "$CARGO_TARGET_DIR/release/conformance" run --cases "$CASES" --seed "$SEED" \
      --out "$out.dir" --no-minimize >"$out" 2>&1 || true
    echo "$name gate ($CASES cases, seed $SEED): $(grep -m1 -E 'unexpected divergence' "$out" || tail -1 "$out")"
  fi
  cp "$SCRATCH/pristine" "$SRC/$file"
done
