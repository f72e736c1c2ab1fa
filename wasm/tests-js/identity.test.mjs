// Native and WebAssembly decide alike: `node wasm/js/gangpack.mjs` and the native
// `gangpack` print byte-identical stdout and exit with the same status on every
// manifest set in examples/ and in the CLI's and the Kubernetes adapter's test
// fixtures: each file alone and each directory whole, with plan (every output
// format), explain, and taint on a node and on a device found in the set.
//
// The package's data functions are held to the native command the same way: on every
// manifest set, `check()` and `capacity()` return the table `gangpack check|capacity`
// prints, the object `-o json` prints, the exit status, the warnings, and, for input
// the command refuses, a thrown error whose message is its `error:` lines; `diff()`
// likewise on the check corpus; `gen()` the bytes of `gangpack gen` for every size and
// kind, YAML and JSON.
//
// GANGPACK_NATIVE names the native binary (default: target/debug/gangpack).

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join, relative } from 'node:path';
import { readInputs } from '../js/gangpack.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const native = process.env.GANGPACK_NATIVE ?? join(root, 'target', 'debug', 'gangpack');
const nodeCli = join(root, 'wasm', 'js', 'gangpack.mjs');

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, NO_COLOR: '1' } });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), code }));
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

const entry = join(root, 'wasm', 'pkg', 'node', 'index.js');

test('the native binary and the WebAssembly package are built', () => {
  assert.ok(existsSync(native), `${native} is missing: cargo build -p gangpack-cli`);
  assert.ok(existsSync(entry), 'run bash scripts/wasm.sh');
});

const g = await import(pathToFileURL(entry).href);

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

// ---- the data functions against the native command -----------------------------------

/** The lines the native command printed after `prefix` on stderr. */
const stderrLines = (stderr, prefix) => stderr.split('\n').filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length));

/** The paths read as the command reads them, as `{ name, text }` (names in messages alike). */
function files(paths) {
  const read = readInputs(paths);
  assert.deepEqual(read.errors, []);
  return read.files;
}

/** Calls `f`; its result, or `{ thrown }`. */
function attempt(f) {
  try {
    return f();
  } catch (e) {
    return { thrown: e };
  }
}

/**
 * One function call against the native command lines `args` (table) and `args -o json`:
 * the same exit status, table, JSON object and warnings, or, where the command
 * refuses the input, a thrown error with its `error:` lines.
 */
async function same(what, args, call, data) {
  const [table, json] = await Promise.all([run(native, args), run(native, [...args, '-o', 'json'])]);
  const r = attempt(call);
  const line = `gangpack ${args.join(' ')}`;
  if (table.code === 2 || table.code === 1) {
    assert.ok(r.thrown, `${what}: ${line} exits ${table.code}, the function returned`);
    assert.ok(r.thrown instanceof Error && r.thrown.name !== 'Error', `${what}: a gangpack error, not a trap: ${r.thrown}`);
    assert.deepEqual(r.thrown.message.split('\n'), stderrLines(table.stderr, 'error: '), `${what}: error lines of ${line}`);
    return;
  }
  assert.ok(!r.thrown, `${what}: ${line} exits ${table.code}, the function threw ${r.thrown?.message}`);
  assert.equal(r.table, table.stdout.toString(), `${what}: table of ${line}`);
  assert.deepEqual(data(r), JSON.parse(json.stdout.toString()), `${what}: data of ${line} -o json`);
  assert.deepEqual(r.warnings, stderrLines(table.stderr, 'warning: '), `${what}: warnings of ${line}`);
  if ('exitCode' in r) assert.equal(r.exitCode, table.code, `${what}: exit status of ${line}`);
  return r;
}

/** A result without the fields the function adds to the command's JSON object. */
const without = (r, ...keys) => Object.fromEntries(Object.entries(r).filter(([k]) => !keys.includes(k)));

for (const rel of sets) {
  test(`check() and capacity() equal the command on ${rel}`, async () => {
    const input = files([rel]);
    const c = await same('check', ['check', '-f', rel], () => g.check(input), (r) => r.findings);
    if (c) assert.equal(c.valid, c.findings.length === 0);
    await same('capacity', ['capacity', '-f', rel], () => g.capacity(input), (r) => without(r, 'table', 'warnings'));
  });
}

test('check() equals the command with decisions, admission and options', async () => {
  const corpus = 'cli/tests/fixtures/check';
  const cases = [
    [['examples/cluster', 'examples/gang-rack.yaml'], ['examples/testing/naive-decision.yaml'], false],
    [['examples/cluster', 'examples/running-job.yaml', 'cli/tests/fixtures/evictions/xid-rule.yaml'], null, true],
  ];
  for (const name of readdirSync(join(root, corpus)).sort()) {
    const m = name.match(/^(.*)\.decisions\.yaml$/);
    if (m) cases.push([[`${corpus}/cluster.yaml`, `${corpus}/${m[1]}.yaml`], [`${corpus}/${name}`], false]);
  }
  for (const [inputs, decisions, admission] of cases) {
    const args = ['check', ...inputs.flatMap((f) => ['-f', f])];
    if (decisions) args.push(...decisions.flatMap((d) => ['--decisions', d]));
    if (admission) args.push('--admission');
    const spec = { admission };
    if (decisions) spec.decisions = files(decisions);
    const r = await same('check', args, () => g.check(files(inputs), spec), (x) => x.findings);
    assert.ok(r, `${args.join(' ')} is checked`);
    if (decisions) assert.ok(r.decided + r.replaced + r.added > 0, `${args.join(' ')}: the decisions count`);
  }
  // The global options reach the check as they reach the command.
  const args = ['check', '-f', 'examples/cluster', '--policy', 'spread', '--now', '2026-11-05T08:00:00Z', '--skip-invalid'];
  await same('check', args, () => g.check(files(['examples/cluster']), null, { policy: 'spread', now: '2026-11-05T08:00:00Z', skipInvalid: true }), (x) => x.findings);
});

test('diff() equals the command on the check corpus', async () => {
  const corpus = 'cli/tests/fixtures/check';
  const base = [`${corpus}/cluster.yaml`, `${corpus}/topology-split.yaml`];
  const pairs = [
    [`${corpus}/topology-split.decisions.yaml`, `${corpus}/below-min-count.decisions.yaml`],
    [`${corpus}/topology-split.decisions.yaml`, `${corpus}/topology-split.decisions.yaml`],
    ['examples/testing/naive-decision.yaml', `${corpus}/device-allocated-twice.decisions.yaml`],
    ['no/such/decision.yaml', `${corpus}/topology-split.decisions.yaml`],
  ];
  for (const [ours, theirs] of pairs) {
    const args = ['diff', ...base.flatMap((f) => ['-f', f]), '--ours', ours, '--theirs', theirs];
    if (!existsSync(join(root, ours))) {
      // An unreadable file is the host's to read (exit 1): nothing reaches the module.
      assert.equal((await run(native, args)).code, 1);
      continue;
    }
    const r = await same('diff', args, () => g.diff(files(base), { ours: files([ours]), theirs: files([theirs]) }),
      (x) => without(x, 'table', 'warnings', 'same', 'exitCode'));
    assert.equal(r.same, r.table.trimEnd().endsWith('the two decisions place and evict the same pods on the same nodes'));
  }
  // Examples: the demo's dump against the naive decision, both ways.
  const cluster = ['examples/cluster', 'examples/gang-rack.yaml'];
  const args = ['diff', ...cluster.flatMap((f) => ['-f', f]), '--ours', 'examples/testing/naive-decision.yaml', '--theirs', 'examples/gang-rack.yaml'];
  await same('diff', args, () => g.diff(files(cluster), { ours: files(['examples/testing/naive-decision.yaml']), theirs: files(['examples/gang-rack.yaml']) }),
    (x) => without(x, 'table', 'warnings', 'same', 'exitCode'));
});

test('capacity() equals the command with --key, --whole and --gang-pods', async () => {
  const input = files(['examples/cluster', 'examples/gang-rack.yaml']);
  const f = ['-f', 'examples/cluster', '-f', 'examples/gang-rack.yaml'];
  const data = (r) => without(r, 'table', 'warnings');
  await same('capacity', ['capacity', ...f, '--whole'], () => g.capacity(input, { key: null }), data);
  await same('capacity', ['capacity', ...f, '--key', 'kubernetes.io/hostname'], () => g.capacity(input, { key: 'kubernetes.io/hostname' }), data);
  await same('capacity', ['capacity', ...f, '--gang-pods', '2'], () => g.capacity(input, { gangPods: 2 }), data);
  await same('capacity', ['capacity', ...f, '--gang-pods', '1', '--key', 'no/such-label'], () => g.capacity(input, { gangPods: 1, key: 'no/such-label' }), data);
  await same('capacity', ['capacity', ...f, '--gang-pods', '0'], () => g.capacity(input, { gangPods: 0 }), data);
});

test('gen() prints the bytes of gangpack gen for every size and kind, YAML and JSON', async () => {
  const runs = [];
  for (const size of ['small', 'medium', 'large']) {
    for (const kind of ['gangs', 'pods', 'mixed']) {
      for (const [seed, output] of [[0, 'yaml'], [7, 'json']]) runs.push({ seed, size, kind, output });
    }
  }
  runs.push({ seed: 123456789, size: 'medium', kind: 'mixed', output: 'yaml' }, {});
  for (const o of runs) {
    const args = ['gen'];
    if (o.seed !== undefined) args.push('--seed', String(o.seed));
    if (o.size) args.push('--size', o.size, '--kind', o.kind, '-o', o.output);
    const n = await run(native, args);
    assert.equal(n.code, 0, args.join(' '));
    const r = g.gen(o);
    assert.ok(Buffer.from(r.text).equals(n.stdout), `gen(${JSON.stringify(o)}) differs from gangpack ${args.join(' ')}`);
    assert.deepEqual(r.list, o.output === 'json' ? JSON.parse(r.text) : g.gen({ ...o, output: 'json' }).list);
    // What gen writes, the other functions read.
    assert.equal(g.plan(r.text).list.kind, 'List');
  }
});

test('gen() with features and events prints the bytes of gangpack gen --features / --events', async () => {
  const runs = [
    { seed: 3, features: 'none,+topology' },
    { seed: 4, size: 'medium', kind: 'gangs', features: 'all,-sharing,-partitioning' },
    { seed: 5, features: 'node-taints,device-taints' },
  ];
  for (const o of runs) {
    const args = ['gen', '--seed', String(o.seed), '--features', o.features];
    if (o.size) args.push('--size', o.size, '--kind', o.kind);
    for (const events of [false, true]) {
      const n = await run(native, events ? [...args, '--events'] : args);
      assert.equal(n.code, 0, `${args.join(' ')}: ${n.stderr}`);
      const r = g.gen({ ...o, events });
      assert.ok(Buffer.from(r.text).equals(n.stdout), `gen(${JSON.stringify({ ...o, events })}) differs from gangpack ${args.join(' ')}`);
      if (events) {
        assert.equal(r.list, undefined);
        assert.ok(r.events.length > 10 && r.events[0].type === 'ADDED');
        assert.deepEqual(r.events, [...n.stdout.toString().matchAll(/^\{\n[\s\S]*?^\}\n/gm)].map((m) => JSON.parse(m[0])));
      }
    }
  }
  // A misspelt feature names the one it probably meant, as the command does.
  assert.throws(() => g.gen({ features: 'sharng' }), (e) => e.name === 'InvalidArgument' && /did you mean "sharing"/.test(e.message));
});

test('shrink() with check() as its judge makes the bytes of gangpack shrink with gangpack check', async () => {
  // eviction-overdue: the running state breaks a rule by itself; the judge is "check
  // finds a violation" (exit 4), in-process here and as a command natively.
  const files = ['cli/tests/fixtures/check/cluster.yaml', 'cli/tests/fixtures/check/eviction-overdue.yaml'];
  const merged = files.map((f) => readFileSync(join(root, f), 'utf8')).join('\n---\n');
  const dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'gangpack-shrink-'));
  const input = join(dir, 'scenario.yaml');
  (await import('node:fs')).writeFileSync(input, merged);
  const n = await run(native, ['shrink', '-f', input, '--judge', `${native} check -f {}`]);
  assert.equal(n.code, 0, n.stderr);
  let calls = 0;
  const judge = ({ text, list }) => {
    calls += 1;
    assert.equal(list.kind, 'List');
    try {
      return g.check([{ name: 'candidate.yaml', text }]).exitCode === 4;
    } catch {
      return false; // invalid input: check exits 2, which is not the input's failure
    }
  };
  const r = g.shrink([{ name: 'scenario.yaml', text: merged }], judge);
  assert.ok(Buffer.from(r.text).equals(n.stdout), `shrink() differs from gangpack shrink:\n${r.text}\n---\n${n.stdout}`);
  assert.equal(r.runs, calls);
  assert.ok(r.after.objects < r.before.objects && r.after.objects <= 5, JSON.stringify(r));
  assert.equal(r.stopped, null);
  // A judge that passes on the input, a bad answer, a throwing judge, a run budget.
  assert.throws(() => g.shrink(merged, () => false), (e) => e.name === 'InvalidArgument' && /passed on the input/.test(e.message));
  assert.throws(() => g.shrink(merged, () => 1), (e) => e.name === 'InvalidArgument' && /returned/.test(e.message));
  assert.throws(() => g.shrink(merged, () => { throw new RangeError('mine'); }), (e) => e instanceof RangeError && e.message === 'mine');
  const limited = g.shrink(merged, judge, { maxRuns: 5 });
  assert.equal(limited.runs, 5);
  assert.equal(limited.stopped, 'maxRuns');
  (await import('node:fs')).rmSync(dir, { recursive: true });
});
