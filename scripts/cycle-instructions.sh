#!/usr/bin/env bash
# Instructions executed by one scheduling cycle, before and after a change: exact
# counts where wall time on a shared machine is not (the same binary's cycle moved
# 1.5x within one sitting). Each binary runs under valgrind's callgrind with
# collection on only inside `Scheduler::cycle`, so the fleet's setup is not counted.
#
#   bash scripts/cycle-instructions.sh BEFORE AFTER [WORKLOAD...]
#
# BEFORE and AFTER are `one-cycle` binaries (cargo build --release -p gangpack-benches
# --example one-cycle; copy target/release/examples/one-cycle). WORKLOADs are
# `fitting` and `mixed` (both by default; see benches/examples/one-cycle.rs). Each run
# takes about 2.5 minutes. Prints, per workload, both counts and their ratio; the
# callgrind profiles stay in CG_DIR (default target/cycle-instructions) for
# `callgrind_annotate --inclusive=yes`. Counts leave out what the kernel does (page
# faults of fresh allocations) and say nothing of cache misses: read them beside a
# wall-time measure, not instead of one.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
if ! command -v valgrind >/dev/null; then
  echo "cycle-instructions: valgrind is not installed (apt-get install valgrind)" >&2
  exit 2
fi
before=$(realpath "$1")
after=$(realpath "$2")
shift 2
workloads=("$@")
if [[ ${#workloads[@]} -eq 0 ]]; then
  workloads=(fitting mixed)
fi
out=${CG_DIR:-target/cycle-instructions}
mkdir -p "$out"

count() {
  local bin=$1 workload=$2 file=$3
  valgrind --tool=callgrind --callgrind-out-file="$file" --collect-atstart=no \
    '--toggle-collect=gangpack::scheduler::Scheduler::cycle' "$bin" "$workload" \
    2>&1 >/dev/null | sed -n 's/.*Collected : //p'
}

for w in "${workloads[@]}"; do
  b=$(count "$before" "$w" "$out/before-$w.out")
  a=$(count "$after" "$w" "$out/after-$w.out")
  if [[ -z $b || -z $a ]]; then
    echo "cycle-instructions: no count for $w (see $out)" >&2
    exit 1
  fi
  awk -v w="$w" -v b="$b" -v a="$a" \
    'BEGIN { printf "%-8s before %\047d  after %\047d  after/before %.3f\n", w, b, a, a / b }'
done
