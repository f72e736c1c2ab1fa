// Writes `x.br` (brotli, quality 11) and `x.gz` (gzip -9) next to each text or wasm
// file of the playground's output folder that compression makes smaller, so a server
// can send them with `Content-Encoding` (web-demo/serve.mjs does; most static hosts
// do with the right setting) instead of compressing on every request — or, as
// Python's http.server, not at all. Called by scripts/playground.sh.
//
//   node web-demo/precompress.mjs DIR

import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';

const EXTENSIONS = new Set(['.wasm', '.js', '.mjs', '.css', '.html', '.json', '.svg']);
/** Below this, a compressed copy saves less than a packet. */
const MIN_BYTES = 1024;

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (EXTENSIONS.has(extname(e.name))) yield p;
  }
}

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node web-demo/precompress.mjs DIR');
  process.exit(2);
}
let raw = 0;
let br = 0;
let gz = 0;
for (const file of files(dir)) {
  if (statSync(file).size < MIN_BYTES) continue;
  const bytes = readFileSync(file);
  const b = brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      [constants.BROTLI_PARAM_MODE]: extname(file) === '.wasm' ? constants.BROTLI_MODE_GENERIC : constants.BROTLI_MODE_TEXT,
    },
  });
  const g = gzipSync(bytes, { level: 9 });
  if (b.length < bytes.length) writeFileSync(`${file}.br`, b);
  if (g.length < bytes.length) writeFileSync(`${file}.gz`, g);
  raw += bytes.length;
  br += Math.min(b.length, bytes.length);
  gz += Math.min(g.length, bytes.length);
  if (extname(file) === '.wasm') console.log(`${relative(dir, file)}: ${bytes.length} B raw, ${g.length} B gzip -9, ${b.length} B brotli 11`);
}
console.log(`precompressed: ${raw} B raw → ${gz} B gzip, ${br} B brotli`);
