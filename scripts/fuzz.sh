#!/usr/bin/env bash
# Bounded fuzzing of every cargo-fuzz target in fuzz/ (nightly), not part of
# scripts/test.sh: `bash scripts/fuzz.sh [SECONDS] [TARGET...]`, SECONDS per target
# (default 60), every target by default. Seed corpora are built from examples/ and the
# test fixtures each run; the corpus grows in fuzz/corpus/<target>/ (ignored by git).
# A crash leaves its input in fuzz/artifacts/<target>/ and stops the script (exit 1).
# The last lines are one row per target: seconds, executions, executions per second,
# coverage (edges), corpus size.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(quantity cel manifests model_json check_decisions scheduler_ops)
fi

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# Seeds, from what the repository already holds.
seeds=fuzz/target/seeds-$$
trap 'rm -rf "$seeds"' EXIT
rm -rf "$seeds"
mkdir -p "$seeds"/{quantity,cel,manifests,model_json,check_decisions,scheduler_ops}
i=0
while IFS= read -r q; do
    printf '%s' "$q" > "$seeds/quantity/q$i"
    i=$((i + 1))
done < fuzz/seeds/quantity.txt
i=0
grep -rhoE 'expression: .*' examples cli/tests/fixtures | sed -E "s/^expression: *//; s/^['\"]//; s/['\"]\}?$//" | sort -u |
    while IFS= read -r e; do
        printf '%s' "$e" > "$seeds/cel/e$i"
        i=$((i + 1))
    done
find examples cli/tests/fixtures k8s/tests/data -name '*.yaml' -size -64k | while IFS= read -r f; do
    cp "$f" "$seeds/manifests/$(echo "$f" | tr '/' '_')"
done
cp fuzz/seeds/model.json "$seeds/model_json/"
for f in cli/tests/fixtures/check/*.decisions.yaml examples/testing/naive-decision.yaml; do
    cp "$f" "$seeds/check_decisions/$(basename "$f")"
done
# Operation sequences: fixed byte strings (any bytes decode to a cluster and operations).
cp fuzz/seeds/scheduler_ops/* "$seeds/scheduler_ops/"

summary=()
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    log="fuzz/target/$t.log"
    echo "==> fuzz $t for ${secs}s"
    (cd fuzz && cargo +nightly fuzz run "$t" "corpus/$t" "target/seeds-$$/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=16384 -print_final_stats=1) 2>&1 |
        tee "$log" | grep -E '^(#[0-9]+.*(DONE|pulse))|ERROR|panicked|Done ' || true
    if grep -qE 'ERROR: libFuzzer|panicked|deadly signal' "$log"; then
        echo "fuzz $t: a finding, input in fuzz/artifacts/$t/ (log $log)" >&2
        exit 1
    fi
    runs=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 | grep -oE '[0-9]+' | head -1)
    took=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 | grep -oE '[0-9]+' | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
    corp=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
    summary+=("$(printf '%-16s %6ss %12s runs %10s/s %8s edges %8s inputs' "$t" "$took" "$runs" \
        "$(( runs / (took > 0 ? took : 1) ))" "${cov:-?}" "${corp:-?}")")
done
echo
echo "fuzz: no findings"
printf '%s\n' "${summary[@]}"
