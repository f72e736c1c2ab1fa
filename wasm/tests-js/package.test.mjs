// The npm package as a user gets it: `npm pack` wasm/pkg, install the tarball into an
// empty project, import it (ES module and CommonJS), type-check a TypeScript file
// against its declarations through its `exports` map, and run the README's example.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'wasm', 'pkg');
const tsc = join(root, 'wasm', 'node_modules', '.bin', 'tsc');
const cargoVersion = readFileSync(join(root, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)[1];

const dir = mkdtempSync(join(tmpdir(), 'gangpack-npm-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const run = (cmd, args, cwd = dir) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** The ```js block after the marker comment in README.md. */
function readmeExample() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf('wasm/tests-js/package.test.mjs runs this example');
  assert.ok(at >= 0, 'README.md has the marked JavaScript example');
  const block = readme.slice(at).match(/```js\n([\s\S]*?)```/);
  assert.ok(block, 'a ```js block follows the marker');
  return block[1];
}

test('npm pack, install into an empty project, import, type-check, run the README example', () => {
  const packed = JSON.parse(run('npm', ['pack', pkg, '--json', '--pack-destination', dir]));
  const [{ filename, files, version, name }] = packed;
  assert.equal(name, 'gangpack');
  assert.equal(version, cargoVersion);
  const paths = files.map((f) => f.path).sort();
  for (const p of ['LICENSE', 'README.md', 'package.json', 'node/gangpack_wasm.js', 'node/gangpack_wasm.d.ts',
    'node/gangpack_wasm_bg.wasm', 'web/gangpack_wasm.js', 'web/gangpack_wasm.d.ts', 'web/gangpack_wasm_bg.wasm']) {
    assert.ok(paths.includes(p), `${p} is in the package (${paths.join(', ')})`);
  }

  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  run('npm', ['install', '--no-audit', '--no-fund', '--offline', join(dir, filename)]);
  assert.ok(existsSync(join(dir, 'node_modules', 'gangpack', 'package.json')));

  // ES module import, through the `node` condition of `exports`.
  writeFileSync(join(dir, 'esm.mjs'), "import { version, plan } from 'gangpack';\nconsole.log(version(), typeof plan);\n");
  assert.equal(run('node', ['esm.mjs']), `${cargoVersion} function\n`);
  // CommonJS require.
  writeFileSync(join(dir, 'cjs.cjs'), "const g = require('gangpack');\nconsole.log(g.plan('').table);\n");
  assert.equal(run('node', ['cjs.cjs']), 'nothing to schedule: 0 pods bound\n\n');
  // The web build is an ES module with `init`; its module file is where `exports` says.
  const web = readFileSync(join(dir, 'node_modules', 'gangpack', 'web', 'gangpack_wasm.js'), 'utf8');
  assert.match(web, /^export \{ initSync, __wbg_init as default \};?$/m);

  // TypeScript resolves the declarations through the package's `exports`.
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: 'es2022', module: 'node16', moduleResolution: 'node16',
      lib: ['es2022', 'esnext.disposable', 'dom'], types: [],
    },
    files: ['check.mts'],
  }));
  writeFileSync(join(dir, 'check.mts'), [
    "import { plan, type PlanResult } from 'gangpack';",
    "import init, { explain } from 'gangpack/web';",
    "const r: PlanResult = plan('', { policy: 'Spread' });",
    "const code: 0 | 3 = r.exitCode;",
    "// @ts-expect-error: the table is text",
    "const n: number = r.table;",
    "void [code, n, init, explain];",
    '',
  ].join('\n'));
  run(tsc, ['-p', dir]);

  // The README's example, as written.
  writeFileSync(join(dir, 'readme.mjs'), readmeExample());
  const out = run('node', ['readme.mjs']).split('\n');
  assert.equal(out[0], '10 units: 8 placed, 1 preempted, 1 pending, 0 invalid, 0 failed; 8 pods bound, 2 nominated, 14 devices allocated');
  // The verdict: what would help, agreeing with the next cycle (issue 32).
  assert.match(out[1], /^PodGroup ml-training\/gpt-moe-pretrain: pending; waiting helps: the room it needs is held by PodGroup inference\/llama-405b-serve, /);
  assert.match(out[1], /; more capacity helps: at least 32 more free devices in domain rack-1$/);
  assert.equal(out[2], '8 pods evicted');
});
