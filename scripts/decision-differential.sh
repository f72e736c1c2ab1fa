#!/usr/bin/env bash
# Every decision unchanged: run two `gangpack` binaries over the same generated
# scenarios and compare everything they decide, byte for byte.
#
#   bash scripts/decision-differential.sh OLD NEW [SEEDS] [LARGE_SEEDS]
#
# OLD and NEW are `gangpack` binaries (say, one built before a speed change and one
# after). For seeds 0..SEEDS-1 (default 600) at sizes small and medium, and seeds
# 0..LARGE_SEEDS-1 (default 2) at size large, OLD's `gen` writes the scenario (NEW's
# must write the same bytes) and both binaries run:
#   - `plan` (the table) and `plan -o yaml` under every scoring policy;
#   - `plan` with tight search budgets (`--allocator-step-budget 4 --step-budget 50`),
#     where the step counts themselves decide;
#   - `explain` (every unit that stays pending) and `capacity`;
#   - `watch` over the scenario's watch events (`gen --events`), a cycle every 3
#     events (40 at size large): a scheduler following a changing cluster, where
#     cached state must follow.
# Exit codes and stderr are compared too. The first difference is printed with its
# command and the run stops (exit 1); at the end the number of outputs compared is
# printed. Not part of `scripts/test.sh`: a differential marathon, run around a change.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
seeds=${3:-600}
large=${4:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/gangpack-differential.XXXXXX")
trap 'rm -rf "$work"' EXIT
compared=0

# Run one command with both binaries; compare stdout, stderr and the exit code.
same() {
  local label=$1
  shift
  local rc_old=0 rc_new=0
  "$old" "$@" >"$work/old.out" 2>"$work/old.err" || rc_old=$?
  "$new" "$@" >"$work/new.out" 2>"$work/new.err" || rc_new=$?
  if [[ $rc_old != "$rc_new" ]] || ! cmp -s "$work/old.out" "$work/new.out" ||
    ! cmp -s "$work/old.err" "$work/new.err"; then
    echo "DIFFERENT: $label: gangpack $*" >&2
    echo "  exit codes: old $rc_old, new $rc_new" >&2
    diff "$work/old.out" "$work/new.out" | head -20 >&2 || true
    diff "$work/old.err" "$work/new.err" | head -10 >&2 || true
    cp "$work"/scenario.* "${TMPDIR:-/tmp}/" 2>/dev/null || true
    echo "  the scenario is kept in ${TMPDIR:-/tmp}/scenario.yaml" >&2
    exit 1
  fi
  compared=$((compared + 1))
}

one() {
  local size=$1 seed=$2
  local label="size $size seed $seed"
  "$old" gen --size "$size" --seed "$seed" >"$work/scenario.yaml"
  "$new" gen --size "$size" --seed "$seed" >"$work/scenario.new.yaml"
  cmp -s "$work/scenario.yaml" "$work/scenario.new.yaml" ||
    { echo "DIFFERENT: $label: gen writes other bytes" >&2; exit 1; }
  local f="$work/scenario.yaml"
  same "$label" plan -f "$f"
  for policy in best-fit spread stranding fgd gang-aware; do
    same "$label" plan -f "$f" -o yaml --policy "$policy"
  done
  same "$label" plan -f "$f" --allocator-step-budget 4 --step-budget 50
  same "$label" explain -f "$f"
  same "$label" capacity -f "$f"
  "$old" gen --size "$size" --seed "$seed" --events >"$work/scenario.events.json"
  # A large scenario's stream is long: a cycle every 3 events there takes a minute.
  local every=3
  [[ $size == large ]] && every=40
  same "$label" watch -f "$work/scenario.events.json" --every "$every" -o json
}

started=$SECONDS
for ((seed = 0; seed < seeds; seed++)); do
  one small "$seed"
  one medium "$seed"
  if ((seed % 100 == 99)); then
    echo "seed $((seed + 1))/$seeds: $compared outputs identical ($((SECONDS - started)) s)" >&2
  fi
done
for ((seed = 0; seed < large; seed++)); do
  one large "$seed"
done
echo "identical: $compared outputs over $((2 * seeds + large)) scenarios ($((SECONDS - started)) s)"
