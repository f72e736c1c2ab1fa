#!/usr/bin/env bash
# Side by side with Kubernetes' allocator (issue 36): the same workloads timed through
# k8s.io/dynamic-resource-allocation/structured v0.37.2, driven as kube-scheduler
# 1.37's DynamicResources plugin drives it (go/upstream/peerbench, `go test -bench`,
# GOMAXPROCS=2), and through gangpack (benches/benches/peer.rs, criterion), in one
# run. Prints one table (workload, upstream, gangpack, ratio) and writes it to
# target/peer-bench/results.md; the raw outputs stay beside it.
#
#   bash scripts/peer-bench.sh            # the full run: 2 rounds, each side twice
#   bash scripts/peer-bench.sh --quick    # one short round, to see that it works
#   bash scripts/peer-bench.sh --rounds 3 # more rounds (the table gives their spread)
#
# The workloads are defined once, in benches/src/peer.rs; the first step writes them
# as Kubernetes objects for the Go side (target/peer-bench/fixtures). Both sides are
# built before anything is timed, and the rounds alternate Go and Rust, so a change in
# the machine's load shows as spread in both columns rather than as a ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

quick=0
rounds=2
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; rounds=1 ;;
    --rounds)
      [ $# -ge 2 ] || { echo "peer-bench: --rounds needs a number" >&2; exit 2; }
      rounds=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "peer-bench: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$rounds" in ''|*[!0-9]*|0) echo "peer-bench: --rounds wants a positive number, got '$rounds'" >&2; exit 2 ;; esac

if [ "$quick" = 1 ]; then
  go_bench=(-benchtime 300ms -count 1)
  rust_bench=(--warm-up-time 0.5 --measurement-time 1)
else
  go_bench=(-benchtime 2s -count 3)
  rust_bench=(--warm-up-time 2 --measurement-time 5)
fi

out=$root/target/peer-bench
fixtures=$out/fixtures
mkdir -p "$out"
rm -f "$out"/go-*.txt "$out"/rust-*.txt

step() { printf '\n==> %s\n' "$*" >&2; }
load() { printf 'load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" >&2; }

step "fixtures: the workloads as Kubernetes objects ($fixtures)"
cargo run -q -p gangpack-benches --release --bin peer-fixtures -- "$fixtures"

step "build: the criterion bench and the Go test binary (nothing is timed yet)"
cargo bench -q -p gangpack-benches --bench peer --no-run
(cd go/upstream && go test -c -o /dev/null ./peerbench/)

step "check: upstream's allocator gives every workload's expected outcome (TestFixtures)"
(cd go/upstream && GANGPACK_PEER_FIXTURES=$fixtures go test -count 1 -run 'TestFixtures' ./peerbench/) >&2

for r in $(seq 1 "$rounds"); do
  step "round $r of $rounds: upstream (go test -bench, GOMAXPROCS=2 ${go_bench[*]})"
  load
  (cd go/upstream && GOMAXPROCS=2 GANGPACK_PEER_FIXTURES=$fixtures \
    go test -run '^$' -bench . "${go_bench[@]}" ./peerbench/) | tee "$out/go-$r.txt" >&2
  step "round $r of $rounds: gangpack (criterion ${rust_bench[*]})"
  load
  cargo bench -q -p gangpack-benches --bench peer -- peer/ "${rust_bench[@]}" \
    | tee "$out/rust-$r.txt" >&2
done
load

step "table"
python3 - "$out" "$rounds" "$quick" <<'EOF'
import datetime, glob, os, re, statistics, sys

out, rounds, quick = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
UNIT = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}

def go_times():
    times = {}
    pat = re.compile(r"^BenchmarkPeer/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op")
    for path in sorted(glob.glob(os.path.join(out, "go-*.txt"))):
        for line in open(path, encoding="utf-8"):
            m = pat.match(line)
            if m:
                times.setdefault(m.group(1), []).append(float(m.group(2)))
    return times

def rust_times():
    times = {}
    name = None
    for path in sorted(glob.glob(os.path.join(out, "rust-*.txt"))):
        for line in open(path, encoding="utf-8"):
            s = line.strip()
            m = re.match(r"^peer/(\S+)", s)
            if m:
                name = m.group(1)
            t = re.search(r"time:\s+\[\S+ \S+ ([\d.]+) (\S+) \S+ \S+\]", s)
            if t and name:
                times.setdefault(name, []).append(float(t.group(1)) * UNIT[t.group(2)])
                name = None
    return times

def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"

def cell(ts):
    if not ts:
        return "—"
    med = statistics.median(ts)
    if len(ts) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(ts))}–{fmt(max(ts))})"

# (workload, what the upstream row times, upstream row, what the gangpack row times, gangpack row)
ROWS = [
    ("1 GPU on one node", "Filter (Allocate), allocator built once", "1_gpu/filter",
     "allocate_prepared, claim prepared once", "1_gpu/filter"),
    ("1 GPU on one node", "PreFilter + Filter", "1_gpu/per_pod",
     "prepare_claims + allocate_prepared", "1_gpu/per_pod"),
    ("8 GPUs, NUMA matchAttribute", "Filter", "8_gpus_match_numa/filter",
     "allocate_prepared", "8_gpus_match_numa/filter"),
    ("8 GPUs, NUMA matchAttribute", "PreFilter + Filter", "8_gpus_match_numa/per_pod",
     "prepare_claims + allocate_prepared", "8_gpus_match_numa/per_pod"),
    ("8 of 7 rejected", "Filter", "8_of_7_rejected/filter",
     "allocate_prepared", "8_of_7_rejected/filter"),
    ("8 of 7 rejected", "PreFilter + Filter", "8_of_7_rejected/per_pod",
     "prepare_claims + allocate_prepared", "8_of_7_rejected/per_pod"),
    ("1 GPU, every node of 4,096 × 8", "Filter × 4,096", "4096x8_1_gpu_every_node/filter_every_node",
     "allocate_prepared × 4,096", "4096x8_1_gpu_every_node/filter_every_node"),
    ("1 GPU, every node of 4,096 × 8", "PreFilter + Filter × 4,096", "4096x8_1_gpu_every_node/per_pod",
     "prepare_claims + allocate_prepared × 4,096", "4096x8_1_gpu_every_node/per_pod"),
    ("1 GPU, every node of 4,096 × 8", "PreFilter + Filter × 4,096", "4096x8_1_gpu_every_node/per_pod",
     "prepare_claims + fits_prepared × 4,096 + allocate_prepared on the first", "4096x8_1_gpu_every_node/per_pod_fits"),
    ("64 × 8 gang on 4,096 × 8, pod by pod", "64 × (PreFilter + Filter to the first fit + Reserve)", "4096x8_gang_64x8/pod_by_pod",
     "64 × (prepare_claims + allocate_prepared to the first fit + commit_allocation)", "4096x8_gang_64x8/pod_by_pod"),
    ("64 × 8 gang on 4,096 × 8, pod by pod", "(same)", "4096x8_gang_64x8/pod_by_pod",
     "the same with fits_prepared in the node walk", "4096x8_gang_64x8/pod_by_pod_fits"),
    ("64 × 8 gang on 4,096 × 8", "(pod by pod, as above)", "4096x8_gang_64x8/pod_by_pod",
     "place_gang_mut: the whole gang, all or nothing, BestFit (not the same work)", "4096x8_gang_64x8/gang"),
]

go, rust = go_times(), rust_times()
missing = [r[2] for r in ROWS if r[2] not in go] + [r[4] for r in ROWS if r[4] not in rust]
lines = [
    f"Side by side with Kubernetes' allocator, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
    f"{'quick' if quick else 'full'} run, {rounds} round(s): median (min–max) over "
    f"{len(next(iter(go.values()), []))} Go and {len(next(iter(rust.values()), []))} criterion figures per row.",
    "",
    "| workload | upstream times | upstream | gangpack times | gangpack | ratio |",
    "| --- | --- | ---: | --- | ---: | ---: |",
]
for workload, up_what, up, gp_what, gp in ROWS:
    u, g = go.get(up, []), rust.get(gp, [])
    ratio = f"{statistics.median(u) / statistics.median(g):,.0f}×" if u and g else "—"
    if u and g and statistics.median(u) / statistics.median(g) < 10:
        ratio = f"{statistics.median(u) / statistics.median(g):.2g}×"
    lines.append(f"| {workload} | {up_what} | {cell(u)} | {gp_what} | {cell(g)} | {ratio} |")
text = "\n".join(lines) + "\n"
with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
    f.write(text)
print(text)
if missing:
    print("peer-bench: no figure for " + ", ".join(missing), file=sys.stderr)
    sys.exit(1)
print(f"written to {os.path.join(out, 'results.md')}", file=sys.stderr)
EOF
