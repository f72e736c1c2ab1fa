#!/usr/bin/env bash
# The WebAssembly build's speed next to native, measured in one run on this machine:
# two criterion benchmarks natively (`gang/64x8_on_4096x8/anywhere`,
# `lifecycle/cycle_1000_gangs_on_4096x8`), then the same scenarios in Node through the
# wasm module as the package ships it (profile `wasm`, wasm-opt -Oz) with the `bench`
# feature. Prints a table for benches/RESULTS.md. Takes about 5 minutes. For another
# trade-off: CARGO_PROFILE_WASM_OPT_LEVEL=3 WASM_OPT_FLAG=-O3 bash scripts/wasm-bench.sh
#
#   bash scripts/wasm-bench.sh [seconds per benchmark, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
target_dir=${CARGO_TARGET_DIR:-target}
out=$target_dir/wasm-bench-pkg

bash scripts/wasm.sh >/dev/null # tools (wasm-bindgen-cli, npm ci) and the package itself
cargo build -p gangpack-wasm --target wasm32-unknown-unknown --profile wasm --features bench
rm -rf "$out"
wasm-bindgen --target nodejs --out-dir "$out" "$target_dir/wasm32-unknown-unknown/wasm/gangpack_wasm.wasm"
printf '{ "type": "commonjs" }\n' >"$out/package.json"
wasm/node_modules/.bin/wasm-opt "${WASM_OPT_FLAG:--Oz}" --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$out/gangpack_wasm_bg.wasm" -o "$out/gangpack_wasm_bg.wasm"

native=$(mktemp)
trap 'rm -f "$native"' EXIT
cargo bench -p gangpack-benches --bench gangpack -- \
    --warm-up-time 2 --measurement-time "$seconds" \
    'gang/64x8_on_4096x8/anywhere$|lifecycle/cycle_1000_gangs_on_4096x8' 2>&1 | tee "$native"
wasm=$(node wasm/bench/bench.mjs "$PWD/$out/gangpack_wasm.js" "$seconds")
echo "$wasm"

# criterion prints `time:   [low median high]`; the median with its unit.
median_ms() {
    awk -v name="$1" '
        $0 ~ name { found = 1 }
        found && /time:/ {
            gsub(/\[|\]/, ""); v = $4; u = $5
            if (u == "ns") v /= 1e6; else if (u == "µs" || u == "us") v /= 1e3; else if (u == "s") v *= 1e3
            printf "%.3f", v; exit
        }' "$native"
}
printf '\n| benchmark | native (criterion median) | wasm in Node %s (median) | wasm / native |\n| --- | --- | --- | --- |\n' "$(node --version)"
for name in 'gang/64x8_on_4096x8/anywhere' 'lifecycle/cycle_1000_gangs_on_4096x8'; do
    n=$(median_ms "$name")
    w=$(echo "$wasm" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{for(const l of s.trim().split('\n')){const j=JSON.parse(l);if(j.name==='$name')console.log(j.medianMs.toFixed(3))}})")
    printf '| `%s` | %s ms | %s ms | %s |\n' "$name" "$n" "$w" "$(awk -v a="$w" -v b="$n" 'BEGIN { printf "%.2f×", a / b }')"
done
