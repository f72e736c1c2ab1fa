#!/usr/bin/env bash
# The speed table of benches/RESULTS.md, before and after a change, in one sitting:
# the same rows timed through two builds, alternated round by round so a change in the
# machine's load shows as spread in both columns rather than as a ratio.
#
#   bash scripts/bench-sitting.sh BEFORE AFTER [ROUNDS]
#
# BEFORE and AFTER are directories, each holding one build's binaries:
#   gangpack         the release CLI     (cargo build --release -p gangpack-cli)
#   bench-gangpack   the `gangpack` bench (cargo bench -p gangpack-benches --no-run;
#   bench-scale      the `scale` bench     copies of target/release/deps/{gangpack,scale}-*)
# and a directory of dumps, DUMPS (default target/sitting), with fleet.yaml and
# fleet.json (`gangpack gen --fleet 12500 [-o json]`, written on first use by AFTER's
# binary; the JSON re-indented as kubectl writes it). Prints one line per row and
# round; the raw outputs go to DUMPS/sitting.log.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
before=$(realpath "$1")
after=$(realpath "$2")
rounds=${3:-2}
dumps=${DUMPS:-target/sitting}
mkdir -p "$dumps"
dumps=$(realpath "$dumps")
log=$dumps/sitting.log
: >"$log"

[[ -s $dumps/fleet.yaml ]] || "$after/gangpack" gen --fleet 12500 >"$dumps/fleet.yaml"
# kubectl writes JSON with 4-space indentation (Go's json.MarshalIndent), gen with 2.
[[ -s $dumps/fleet.json ]] || "$after/gangpack" gen --fleet 12500 -o json |
  python3 -c 'import json, sys; json.dump(json.load(sys.stdin), sys.stdout, indent=4); print()' \
    >"$dumps/fleet.json"

gang_rows='allocate/one_node/1_gpu$|allocate/one_node/8_gpus_match_numa$|allocate/one_node/8_of_7_rejected$|allocate/fleet_4096x8/1_gpu_fits_every_node_then_allocate$|gang/64x8_on_4096x8/anywhere$|gang/512x8_on_10000x8/anywhere$|lifecycle/cycle_1000_gangs_on_4096x8$'
scale_rows='scale/2048x8_block_gang_on_100k$|scale/preempt_2048_gpu_gang_on_full_100k$|scale/cycle_10000_units_on_100k$|scale/cycle_2000_fitting_units_on_100k$'
criterion=(--warm-up-time 1 --measurement-time 3 --noplot)

# criterion's `name  time: [low median high]` lines, as `name median unit`.
medians() {
  awk '/^[a-z]/ && !/time:/ { name = $1 }
       /time:/ { if ($1 != "time:") name = $1; gsub(/\[|\]/, "");
                 for (i = 1; i <= NF; i++) if ($i == "time:") { print name, $(i + 3), $(i + 4) } }'
}

# One whole-process run of `gangpack plan|explain` on a dump: wall, user, peak RSS.
process() {
  local side=$1 bin=$2
  shift 2
  local out
  out=$({ /usr/bin/time -f 'TIME %e %U %M' "$bin/gangpack" "$@" --timings >/dev/null; } 2>&1)
  echo "$out" >>"$log"
  echo "$out" | awk -v side="$side" -v what="$*" '/^TIME/ { printf "%-6s %-60s %6.2f s wall %6.2f s user %5.2f GiB\n", side, what, $2, $3, $4 / 1048576 }
    /^timings:/ { sub(/^timings: */, ""); printf "%-6s   %s\n", side, $0 }'
}

for ((round = 1; round <= rounds; round++)); do
  for side in before after; do
    dir=$before
    [[ $side == after ]] && dir=$after
    echo "== round $round, $side ($dir)" | tee -a "$log"
    "$dir/bench-gangpack" --bench "${criterion[@]}" "$gang_rows" 2>&1 | tee -a "$log" | medians | sed "s/^/$side /"
    "$dir/bench-scale" --bench "${criterion[@]}" "$scale_rows" 2>&1 | tee -a "$log" | medians | sed "s/^/$side /"
    process "$side" "$dir" plan -f "$dumps/fleet.yaml"
    process "$side" "$dir" plan -f "$dumps/fleet.json"
    process "$side" "$dir" explain training/pretrain-frontier -f "$dumps/fleet.yaml"
  done
done
