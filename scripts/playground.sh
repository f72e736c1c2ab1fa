#!/usr/bin/env bash
# The browser playground: builds the WebAssembly package (scripts/wasm.sh), puts the
# page and the package's web entry into web-demo/dist/ (a static site: host it
# anywhere), with brotli (.br) and gzip (.gz) copies of its files next to them, and
# serves it on http://127.0.0.1:8765/ with web-demo/serve.mjs (Node), which sends the
# compressed copies with Content-Encoding (Python's http.server, used when Node is
# missing, sends the 5 MB module as it is). On another host, serve the .br/.gz files
# for requests that accept them (e.g. nginx `brotli_static on; gzip_static on;`).
#
#   bash scripts/playground.sh               build and serve (Ctrl-C stops)
#   bash scripts/playground.sh --build-only  build web-demo/dist/ and exit
#   bash scripts/playground.sh --reuse-wasm  use wasm/pkg as built (scripts/test.sh)
#   PORT=9000 bash scripts/playground.sh     another port
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
reuse_wasm=0
for arg in "$@"; do
    case "$arg" in
        --build-only) build_only=1 ;;
        --reuse-wasm) reuse_wasm=1 ;;
        *) echo "usage: bash scripts/playground.sh [--build-only] [--reuse-wasm]" >&2; exit 2 ;;
    esac
done

if [ "$reuse_wasm" = 0 ] || ! [ -f wasm/pkg/web/gangpack_wasm_bg.wasm ]; then
    bash scripts/wasm.sh
fi
dist=web-demo/dist
rm -rf "$dist"
mkdir -p "$dist/pkg"
cp web-demo/index.html "$dist/"
cp -r web-demo/src "$dist/src"
# The package's web entry (index.js), the module it wraps and the one .wasm file.
cp wasm/pkg/web/index.js wasm/pkg/web/gangpack_wasm.js wasm/pkg/web/gangpack_wasm_bg.wasm "$dist/pkg/"
if command -v node >/dev/null; then
    node web-demo/precompress.mjs "$dist"
fi
echo "playground built: $dist"
if [ "$build_only" = 1 ]; then
    exit 0
fi
port=${PORT:-8765}
if command -v node >/dev/null; then
    exec node web-demo/serve.mjs "$dist" "$port"
fi
echo "serving $dist on http://127.0.0.1:$port/ (no Node: uncompressed)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$dist"
