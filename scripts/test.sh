#!/usr/bin/env bash
# The whole gangpack test suite, as CI runs it (.ci/run calls this script).
# It installs what it needs itself (rustup components and targets, wasm-bindgen-cli at
# the version Cargo.lock pins, Debian's chromium and chromium-driver, the npm tools in
# wasm/package-lock.json), so a fresh machine with a Rust toolchain, Node and apt can
# run it: `bash scripts/test.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

# Disk: a clean build of everything below once filled a CI disk. CI builds from scratch, so
# incremental state is pure cost, and full debug info makes up most of each test binary; line
# tables keep backtraces readable at a fraction of the size.
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
export CARGO_PROFILE_TEST_DEBUG=line-tables-only

step() { printf '\n==> %s\n' "$*"; }

step "toolchain: rustfmt, clippy, and the wasm32 / bare-metal targets"
rustup component add rustfmt clippy
rustup target add wasm32-unknown-unknown wasm32v1-none thumbv7em-none-eabihf

step "format"
cargo fmt --all --check

step "layering: the core's lower layers never use higher ones (core/tests/layering.rs)"
cargo test -q -p gangpack --test layering

step "clippy (native, every target, default and all features)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p gangpack --all-targets --all-features -- -D warnings

step "clippy (wasm32 bindings, with and without the Kubernetes adapter)"
cargo clippy --target wasm32-unknown-unknown -p gangpack-wasm --lib --tests -- -D warnings
cargo clippy --target wasm32-unknown-unknown -p gangpack-wasm --no-default-features -- -D warnings

step "no_std builds: core on bare-metal targets, with and without serde"
cargo build -p gangpack --no-default-features --target thumbv7em-none-eabihf
cargo build -p gangpack --no-default-features --features serde --target wasm32v1-none

step "browser for the wasm tests: Debian's chromium and chromium-driver"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium chromium-driver
fi

step "the WebAssembly package (scripts/wasm.sh: release build, wasm-bindgen, wasm-opt, npm package)"
bash scripts/wasm.sh

step "Go: the module's embedded wasm is this tree's (scripts/go-wasm.sh --check rebuilds it)"
go version
bash scripts/go-wasm.sh --check

step "Go: gofmt and go vet (go/ and its nested module go/upstream)"
unformatted=$(gofmt -l go)
if [ -n "$unformatted" ]; then
    printf 'gofmt: not formatted:\n%s\n' "$unformatted" >&2
    exit 1
fi
(cd go && go vet ./...)
(cd go/upstream && go vet ./...)

step "docs (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

step "built-in examples: the CLI demo (the README's first command) and the library example"
cargo run -q -p gangpack-cli -- demo >/dev/null
cargo run -q -p gangpack --example cluster >/dev/null
# The controller loop's log is what core/examples/controller.out says it is.
cargo run -q -p gangpack --features serde --example controller | diff -u core/examples/controller.out -

step "benchmarks compile"
cargo bench -p gangpack-benches --no-run

step "tests: the workspace, then the core without default features and with all"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace 2>&1 | tee -a "$log"
cargo test -p gangpack --no-default-features 2>&1 | tee -a "$log"
cargo test -p gangpack --all-features 2>&1 | tee -a "$log"

step "wasm: TypeScript declarations (tsc --strict over wasm/tests-js/usage.mts)"
wasm/node_modules/.bin/tsc -p wasm/tests-js

step "wasm: wasm-bindgen-test in Node and in headless Chromium"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    cargo test --target wasm32-unknown-unknown -p gangpack-wasm --tests 2>&1 | tee -a "$log"

step "wasm: the Node suite (API, Scheduler session, npm package, byte identity with native)"
cargo build -q -p gangpack-cli
GANGPACK_NATIVE=target/debug/gangpack node --test --test-concurrency=2 wasm/tests-js/ 2>&1 | tee -a "$log"

step "Go: the package, gangpacktest, the examples, and the Go command's bytes against native (go/)"
(cd go && GANGPACK_NATIVE="$PWD/../target/debug/gangpack" go test -count=1 ./... 2>&1) | tee -a "$log"
(cd go && go test -count=1 -race -run 'Concurrent|Trap' ./gangpack/ 2>&1) | tee -a "$log"

step "Go: Kubernetes' allocator beside gangpack: the DRA differential, and the peer bench's fixtures checked (go/upstream)"
cargo run -q -p gangpack-benches --bin peer-fixtures -- target/peer-bench/fixtures
(cd go/upstream && GANGPACK_PEER_FIXTURES="$PWD/../../target/peer-bench/fixtures" \
    go test -count=1 -v ./... 2>&1) | tee -a "$log"
(cd go/upstream && GANGPACK_PEER_FIXTURES="$PWD/../../target/peer-bench/fixtures" \
    go test -count=1 -run '^$' -bench . -benchtime 1x ./peerbench/ >/dev/null)

step "playground: its scenarios on the engine in Node (web-demo/test/)"
(cd web-demo && npm ci --no-audit --no-fund)
node --test web-demo/test/ 2>&1 | tee -a "$log"

step "playground: the static site and its end-to-end test in headless Chromium (web-demo/e2e/)"
bash scripts/playground.sh --build-only --reuse-wasm
node --test web-demo/e2e/ 2>&1 | tee -a "$log"

# One closing line over every test binary above (cargo's and node's).
awk '/^test result:/ { p += $4; f += $6 } /^# pass / { p += $3 } /^# fail / { f += $3 }
     /^ok  \t/ { gp++ } /^FAIL\t/ { gf++ }
     END { printf "\ntests: %d passed, %d failed (Rust and Node); Go packages: %d ok, %d failed\n", p, f, gp, gf }' "$log"
printf 'target/: %s\n' "$(du -sh target 2>/dev/null | cut -f1)"
