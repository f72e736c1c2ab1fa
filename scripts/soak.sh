#!/usr/bin/env bash
# The release soak, not part of scripts/test.sh: `bash scripts/soak.sh [OPS] [NODES] [FLAGS...]`
# (default 1,000,000 operations on 1,000 nodes). A seeded sequence of random Scheduler
# operations (gangpack::testing::Op) with the independent audit every 10,000 operations and
# at the end; progress lines, and at 10k / 100k / 1M operations the operations done, audits
# passed, elapsed time, operations per second and current / peak RSS. Extra flags go to the
# program: --seed S, --audit-every N, --check-refusals-every K. Exit 1 at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ops="${1:-1000000}"
nodes="${2:-1000}"
shift 2 || shift $# || true
cargo build -q --release -p gangpack --features testing --example soak
target="${CARGO_TARGET_DIR:-target}"
exec "$target/release/examples/soak" "$ops" "$nodes" "$@"
