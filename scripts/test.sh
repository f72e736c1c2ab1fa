#!/usr/bin/env bash
# The whole gangpack test suite, as CI runs it (.ci/run calls this script).
# It installs what it needs itself (rustup components and targets), so a fresh
# machine with only a Rust toolchain can run it: `bash scripts/test.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

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

step "clippy (wasm32 bindings)"
cargo clippy --target wasm32-unknown-unknown -p gangpack-wasm -- -D warnings

step "no_std builds: core on bare-metal targets, with and without serde"
cargo build -p gangpack --no-default-features --target thumbv7em-none-eabihf
cargo build -p gangpack --no-default-features --features serde --target wasm32v1-none

step "wasm32 build of gangpack-wasm"
cargo build -p gangpack-wasm --target wasm32-unknown-unknown --release

step "docs (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

step "built-in examples: the CLI demo (the README's first command) and the library example"
cargo run -q -p gangpack-cli -- demo >/dev/null
cargo run -q -p gangpack --example cluster >/dev/null

step "benchmarks compile"
cargo bench -p gangpack-benches --no-run

step "tests: the workspace, then the core without default features and with all"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace 2>&1 | tee -a "$log"
cargo test -p gangpack --no-default-features 2>&1 | tee -a "$log"
cargo test -p gangpack --all-features 2>&1 | tee -a "$log"

# One closing line over every test binary above.
awk '/^test result:/ { p += $4; f += $6 } END { printf "\ntests: %d passed, %d failed\n", p, f }' "$log"
