#!/usr/bin/env bash
# Builds the C-ABI WebAssembly module (crate gangpack-abi, no wasm-bindgen) that the Go
# module embeds, and copies it to go/gangpack/gangpack.wasm (committed: a Go module
# cannot run cargo, so `go get` and a `replace` from a checkout work without Rust).
#
#   bash scripts/go-wasm.sh           build and copy
#   bash scripts/go-wasm.sh --check   build, and fail if the committed file differs
#
# Reproducible: the same sources and toolchain give the same bytes in any checkout
# path (paths of the checkout and of CARGO_HOME are remapped; own target directory,
# target/go-wasm). Profile `wasm` (opt-level s, LTO, one codegen unit, panic = abort).
# getrandom (under the test kit's proptest and rand, for `gen`) has no entropy source
# on wasm32-unknown-unknown without JavaScript: it is built with its "unsupported"
# backend, which fails if asked; seeded scenarios never ask.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)

check=0
for arg in "$@"; do
    case "$arg" in
        --check) check=1 ;;
        *) echo "usage: bash scripts/go-wasm.sh [--check]" >&2; exit 2 ;;
    esac
done

rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || rustup target add wasm32-unknown-unknown
cargo_home=${CARGO_HOME:-$HOME/.cargo}
cargo_home=$(cd "$cargo_home" && pwd -P)
target_dir=$root/target/go-wasm

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--cfg getrandom_backend=\"unsupported\" --remap-path-prefix=$root=/gangpack --remap-path-prefix=$cargo_home=/cargo"
# Incremental builds and debug info would tie the bytes to this machine.
export CARGO_INCREMENTAL=0 CARGO_PROFILE_WASM_DEBUG=false CARGO_PROFILE_WASM_STRIP=debuginfo

cargo build -q --locked -p gangpack-abi --target wasm32-unknown-unknown --profile wasm \
    --target-dir "$target_dir"
built=$target_dir/wasm32-unknown-unknown/wasm/gangpack_abi.wasm
dest=go/gangpack/gangpack.wasm

if [ "$check" = 1 ]; then
    if ! cmp -s "$built" "$dest"; then
        echo "error: $dest differs from a fresh build ($(sha256sum <"$built" | cut -c1-16) built," \
            "$(sha256sum <"$dest" 2>/dev/null | cut -c1-16) committed):" \
            "run bash scripts/go-wasm.sh and commit $dest" >&2
        exit 1
    fi
    echo "$dest is up to date ($(wc -c <"$dest") bytes, sha256 $(sha256sum <"$dest" | cut -c1-16))"
    exit 0
fi
mkdir -p "$(dirname "$dest")"
cp "$built" "$dest"
echo "$dest: $(wc -c <"$dest") bytes, sha256 $(sha256sum <"$dest" | cut -c1-16)"
