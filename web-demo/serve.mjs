// A small static server for the playground's output folder (web-demo/dist/), with
// what Python's http.server lacks: precompressed files. scripts/playground.sh writes
// `x.br` (brotli) and `x.gz` (gzip) next to the large files; a request whose
// Accept-Encoding allows one gets it with `Content-Encoding` (brotli first), anything
// else the file as it is. Used by `bash scripts/playground.sh` and the e2e tests.
//
//   node web-demo/serve.mjs [DIR] [PORT]     (defaults: web-demo/dist, 8765; 127.0.0.1)

import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** The encodings a request accepts (`br`, `gzip`), from its Accept-Encoding header (q=0 refuses). */
export function accepted(header) {
  const out = new Set();
  for (const part of String(header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) continue;
    if (name === 'br' || name === 'gzip' || name === '*') out.add(name);
  }
  if (out.has('*')) { out.add('br'); out.add('gzip'); }
  return out;
}

/** A request handler serving `root`, precompressed files when the client accepts them. */
export function staticHandler(root) {
  const base = resolve(root);
  return (req, res) => {
    let path;
    try {
      path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    } catch {
      res.writeHead(400).end();
      return;
    }
    let file = join(base, path);
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(404).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const headers = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' };
    const ok = accepted(req.headers['accept-encoding']);
    let body = file;
    for (const [enc, ext] of [['br', '.br'], ['gzip', '.gz']]) {
      if (ok.has(enc) && existsSync(file + ext)) {
        body = file + ext;
        headers['content-encoding'] = enc;
        break;
      }
    }
    if (existsSync(file + '.br') || existsSync(file + '.gz')) headers.vary = 'Accept-Encoding';
    const bytes = readFileSync(body);
    headers['content-length'] = String(bytes.length);
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : bytes);
  };
}

/** Serves `root` on 127.0.0.1:`port` (0: any free port); resolves to the listening server. */
export function serve(root, port = 0) {
  const server = createServer(staticHandler(root));
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done(server));
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = process.argv[2] ?? join(here, 'dist');
  const port = Number(process.argv[3] ?? process.env.PORT ?? 8765);
  const server = await serve(root, port);
  console.log(`serving ${root} on http://127.0.0.1:${server.address().port}/ (precompressed .br/.gz when accepted)`);
}
