#!/usr/bin/env bash
# Builds gangpack's WebAssembly package into wasm/pkg/:
#   1. the wasm module (cargo profile `wasm`: opt-level s, LTO, one codegen unit);
#   2. wasm-bindgen for the `web` target, once (wasm/pkg/web/gangpack_wasm.js, an ES
#      module with `init`, and gangpack_wasm_bg.wasm: the package's only .wasm file);
#   3. wasm-opt -Oz (npm binaryen, pinned in wasm/package-lock.json) on the module;
#   4. the entries from wasm/js/: web/index.js (browsers and bundlers: the module, freed
#      sessions guarded) and node/index.js (Node: the same .wasm read from disk and
#      instantiated on import with `initSync`), with their declarations;
#   5. the npm package: package.json (`exports`, `types`), README.md, LICENSE.
# After it, `node wasm/js/gangpack.mjs plan -f examples/...` works with no other step.
#
#   bash scripts/wasm.sh            the release package
#   bash scripts/wasm.sh --dev      a debug build, no wasm-opt (fast, for iterating)
#   bash scripts/wasm.sh --sizes    the release package, then the sizes with and without
#                                   the Kubernetes adapter (raw and gzip), printed and
#                                   written to target/wasm-sizes.txt
#
# It installs what it needs: the rustup target, wasm-bindgen-cli at the version
# Cargo.lock pins, and the npm tools from wasm/package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=release
sizes=0
for arg in "$@"; do
    case "$arg" in
        --dev) mode=dev ;;
        --sizes) sizes=1 ;;
        *) echo "usage: bash scripts/wasm.sh [--dev] [--sizes]" >&2; exit 2 ;;
    esac
done

step() { printf '\n==> %s\n' "$*"; }

# --- tools -----------------------------------------------------------------------
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || rustup target add wasm32-unknown-unknown
wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $wb_version" ]; then
    step "installing wasm-bindgen-cli $wb_version (about 2 minutes; its lockfile is not used: see ../shared/TOOLCHAIN.md)"
    cargo install wasm-bindgen-cli --version "$wb_version"
fi
# npm ci once per lockfile (the stamp holds the lockfile's hash).
stamp=wasm/node_modules/.gangpack-lock-hash
lock_hash=$(sha256sum wasm/package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$lock_hash" ]; then
    step "npm ci (wasm/): binaryen, typescript"
    (cd wasm && npm ci --no-audit --no-fund)
    echo "$lock_hash" >"$stamp"
fi

profile=wasm
[ "$mode" = dev ] && profile=dev
target_dir=${CARGO_TARGET_DIR:-target}
out=wasm/pkg

# build FEATURES OUT: one module, bindgen'd for the web target, optimised, and the
# two entries around it.
build() {
    local features=$1 dest=$2
    step "cargo build -p gangpack-wasm ($profile${features:+, $features})"
    # shellcheck disable=SC2086
    cargo build -p gangpack-wasm --target wasm32-unknown-unknown --profile "$profile" $features
    local dir=$profile
    [ "$profile" = dev ] && dir=debug
    local module="$target_dir/wasm32-unknown-unknown/$dir/gangpack_wasm.wasm"
    rm -rf "$dest"
    step "wasm-bindgen --target web -> $dest/web"
    wasm-bindgen --target web --out-dir "$dest/web" "$module"
    if [ "$mode" = release ]; then
        step "wasm-opt -Oz"
        opt "$dest/web/gangpack_wasm_bg.wasm"
    fi
    mkdir -p "$dest/node"
    cp wasm/js/web.js "$dest/web/index.js"
    cp wasm/js/web.d.ts "$dest/web/index.d.ts"
    cp wasm/js/node.js "$dest/node/index.js"
    cp wasm/js/node.d.ts "$dest/node/index.d.ts"
    # ES modules, whatever package.json is above them.
    printf '{ "type": "module" }\n' | tee "$dest/web/package.json" >"$dest/node/package.json"
}

# wasm-opt -Oz in place (the features wasm-bindgen's output uses).
opt() {
    wasm/node_modules/.bin/wasm-opt -Oz --strip-debug --strip-producers \
        --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
        --enable-mutable-globals --enable-reference-types --enable-multivalue \
        "$1" -o "$1"
}

build "" "$out"

step "npm package -> $out"
version=$(awk -F'"' '/^version = "/ { print $2; exit }' Cargo.toml)
cp LICENSE "$out/LICENSE"
cp wasm/README.md "$out/README.md"
sed "s/\"version\": \"0.0.0\"/\"version\": \"$version\"/" wasm/js/package.template.json >"$out/package.json"

if [ "$sizes" = 1 ]; then
    core=$target_dir/wasm-core-pkg
    build "--no-default-features --features panic-hook" "$core"
    report=$target_dir/wasm-sizes.txt
    {
        printf '%-40s %12s %12s\n' "module (wasm-bindgen web, wasm-opt -Oz)" "raw bytes" "gzip -9"
        for m in "$out/web/gangpack_wasm_bg.wasm:with the Kubernetes adapter" "$core/web/gangpack_wasm_bg.wasm:core only (no k8s)"; do
            f=${m%%:*}
            printf '%-40s %12d %12d\n' "${m#*:}" "$(wc -c <"$f")" "$(gzip -9 -c "$f" | wc -c)"
        done
    } | tee "$report"
fi
echo "wasm package ready: $out ($(find "$out" -name '*.wasm' | wc -l) .wasm file, $(wc -c <"$out/web/gangpack_wasm_bg.wasm") bytes)"
