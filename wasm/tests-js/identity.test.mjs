// Native and WebAssembly decide alike: `node wasm/js/gangpack.mjs` and the native
// `gangpack` print byte-identical stdout and exit with the same status on every
// manifest set in examples/ and in the CLI's and the Kubernetes adapter's test
// fixtures: each file alone and each directory whole, with plan (every output
// format), explain, and taint on a node and on a device found in the set.
//
// GANGPACK_NATIVE names the native binary (default: target/debug/gangpack).

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { dirname, join, relative } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const native = process.env.GANGPACK_NATIVE ?? join(root, 'target', 'debug', 'gangpack');
const nodeCli = join(root, 'wasm', 'js', 'gangpack.mjs');

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, NO_COLOR: '1' } });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout: Buffer.concat(out), code }));
  });
}

const manifestFile = (name) => /\.(ya?ml|json)$/.test(name);

/** Every manifest set: each file alone, each directory whole (relative to the root). */
function manifestSets() {
  const sets = [];
  const visit = (rel) => {
    const abs = join(root, rel);
    if (statSync(abs).isDirectory()) {
      const entries = readdirSync(abs).sort();
      if (entries.some((e) => manifestFile(e) || statSync(join(abs, e)).isDirectory())) sets.push(rel);
      for (const e of entries) visit(join(rel, e));
    } else if (manifestFile(rel)) {
      sets.push(rel);
    }
  };
  for (const top of ['examples', 'cli/tests/fixtures', 'k8s/tests/data']) {
    for (const e of readdirSync(join(root, top)).sort()) visit(join(top, e));
  }
  return sets;
}

function texts(rel) {
  const abs = join(root, rel);
  if (!statSync(abs).isDirectory()) return [readFileSync(abs, 'utf8')];
  return readdirSync(abs).flatMap((e) => texts(join(rel, e)));
}

/** A node and a device named in the set (plain YAML scanning; good enough to aim a taint). */
function targets(rel) {
  let node;
  let device;
  for (const text of texts(rel)) {
    for (const doc of text.split(/^---\s*$/m)) {
      if (node === undefined && /^kind:\s*Node\s*$/m.test(doc)) {
        node = doc.match(/^metadata:\s*\n(?:\s+.*\n)*?\s+name:\s*"?([^\s"]+)"?/m)?.[1];
      }
      if (device === undefined && /^kind:\s*ResourceSlice\s*$/m.test(doc)) {
        const driver = doc.match(/^\s+driver:\s*"?([^\s"]+)"?/m)?.[1];
        const pool = doc.match(/^\s+pool:\s*\n(?:\s+.*\n)*?\s+name:\s*"?([^\s"]+)"?/m)?.[1];
        const dev = doc.match(/^\s+devices:\s*\n\s+-\s+name:\s*"?([^\s"]+)"?/m)?.[1];
        if (driver && pool && dev) device = `${driver}/${pool}/${dev}`;
      }
    }
  }
  return { node, device };
}

function commandLines(rel) {
  const f = ['-f', rel];
  const lines = [
    ['plan', ...f],
    ['plan', ...f, '-o', 'json'],
    ['plan', ...f, '-o', 'yaml'],
    ['plan', ...f, '--policy', 'spread', '--skip-invalid'],
    ['explain', ...f],
    ['check', ...f],
  ];
  const { node, device } = targets(rel);
  if (node) lines.push(['taint', ...f, '--node', node, '--after-plan']);
  if (device) {
    lines.push(['taint', ...f, '--device', device, '-o', 'json']);
    lines.push(['taint', ...f, '--device', device, '--effect', 'None']);
  }
  if (/taint-rule/.test(rel) && !statSync(join(root, rel)).isDirectory()) {
    lines.push(['taint', '-f', 'examples/cluster', '--rule', rel]);
  }
  return lines;
}

test('the native binary and the WebAssembly package are built', () => {
  assert.ok(existsSync(native), `${native} is missing: cargo build -p gangpack-cli`);
  assert.ok(existsSync(join(root, 'wasm', 'pkg', 'node', 'index.js')), 'run bash scripts/wasm.sh');
});

const sets = manifestSets();

test('there are manifest sets to compare', () => {
  assert.ok(sets.length >= 40, `only ${sets.length} manifest sets found`);
});

// Usage and I/O paths too: a missing file (exit 1), a bad flag value (exit 2), stdin.
const extra = [
  ['plan', '-f', 'no/such/file.yaml'],
  ['plan', '-f', 'examples/gang-rack.yaml', '--now', '2026-11-05T08:00:00Z'],
  ['plan', '-f', 'examples/gang-rack.yaml,examples/running-job.yaml'],
  ['explain', '-f', 'examples/cluster', '--pod', 'default/no-such-pod'],
  ['explain', '-f', 'examples/cluster', 'no-such-group'],
  ['taint', '-f', 'examples/cluster', '--node', 'no-such-node'],
  ['taint', '-f', 'examples/cluster', '--device', 'not-a-device'],
  ['demo'],
  ['demo', '--manifests', '--seed', '7'],
  ['demo', '--policy', 'fragmentation-aware'],
  ['demo', '--policy', 'stranding'],
  ['plan', '-f', 'examples/cluster', '-f', 'examples/gang-rack.yaml', '--policy', 'gang-aware'],
  ['plan', '-f', 'examples/cluster', '-f', 'examples/claim-first-available.yaml', '--policy', 'fgd'],
  ['plan', '-f', 'examples/cluster', '--policy', 'binpack'],
  ['check', '-f', 'examples/cluster', '-f', 'examples/gang-rack.yaml', '--decisions', 'examples/testing/naive-decision.yaml'],
  ['check', '-f', 'examples/cluster', '-f', 'examples/gang-rack.yaml', '--decisions', 'examples/testing/naive-decision.yaml', '-o', 'json'],
  ['check', '-f', 'examples/cluster', '-f', 'examples/running-job.yaml', '-f', 'cli/tests/fixtures/evictions/xid-rule.yaml', '--admission'],
  ['check', '-f', 'examples/cluster', '--decisions', 'no/such/file.yaml'],
  ['diff', '-f', 'examples/cluster', '-f', 'examples/gang-rack.yaml', '--ours', 'examples/testing/naive-decision.yaml', '--theirs', 'examples/testing/naive-decision.yaml'],
  ['diff', '-f', 'examples/cluster', '-f', 'examples/gang-rack.yaml', '--ours', 'examples/testing/naive-decision.yaml'],
];

// Every case of the check corpus, with its wrong decision, and one diff against it.
const corpus = 'cli/tests/fixtures/check';
for (const name of readdirSync(join(root, corpus)).sort()) {
  const m = name.match(/^(.*)\.decisions\.yaml$/);
  if (!m) continue;
  const base = ['-f', `${corpus}/cluster.yaml`, '-f', `${corpus}/${m[1]}.yaml`];
  extra.push(['check', ...base, '--decisions', `${corpus}/${name}`, '-o', 'json']);
  if (m[1] === 'topology-split') {
    extra.push(['diff', ...base, '--ours', `${corpus}/${name}`, '--theirs', `${corpus}/below-min-count.decisions.yaml`, '-o', 'yaml']);
  }
}

for (const rel of sets) {
  test(`identical on ${relative(root, join(root, rel))}`, async () => {
    for (const args of commandLines(rel)) {
      const [a, b] = await Promise.all([run(native, args), run(process.execPath, [nodeCli, ...args])]);
      assert.equal(b.code, a.code, `exit status of gangpack ${args.join(' ')}`);
      assert.ok(a.stdout.equals(b.stdout), `stdout of gangpack ${args.join(' ')} differs:\n--- native\n${a.stdout}\n--- wasm\n${b.stdout}`);
    }
  });
}

test('identical on usage, I/O and demo command lines', async () => {
  for (const args of extra) {
    const [a, b] = await Promise.all([run(native, args), run(process.execPath, [nodeCli, ...args])]);
    assert.equal(b.code, a.code, `exit status of gangpack ${args.join(' ')}`);
    assert.ok(a.stdout.equals(b.stdout), `stdout of gangpack ${args.join(' ')} differs`);
  }
});
