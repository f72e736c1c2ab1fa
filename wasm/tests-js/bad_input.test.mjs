// Issue 18: bad input against a live Scheduler session, and the manifest decoder. Each
// bad input is refused with an error naming the object and the field (or the limit),
// and the session's exported state (snapshot, cells, clock, warnings, toManifests) is
// byte-identical afterwards.
//   bash scripts/wasm.sh --dev && node --test wasm/tests-js/bad_input.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';

// GANGPACK_WASM_NODE points at another build of the package's Node entry file.
const g = await import(process.env.GANGPACK_WASM_NODE
  ? pathToFileURL(process.env.GANGPACK_WASM_NODE).href
  : '../pkg/node/index.js');
const fixture = (name) => readFileSync(new URL(`../../cli/tests/bad/${name}`, import.meta.url), 'utf8');

const thrown = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  assert.fail('expected a throw');
};

/** Everything the session exports, as one string. */
const exported = (s) => JSON.stringify({
  snapshot: s.snapshot(),
  cells: s.cells(),
  now: s.now(),
  warnings: s.warnings(),
  manifests: s.toManifests(),
});

const slice = (devices, extra = {}) => ({
  name: 'big',
  driver: 'gpu.example.com',
  pool: { name: 'big', generation: 1, resourceSliceCount: 1 },
  nodeSelection: { slice: { nodeName: 'gpu-r1-n1' } },
  devices: Array.from({ length: devices }, (_, i) => ({ name: `gpu-${i}` })),
  ...extra,
});
const claim = (exactly) => ({
  namespace: 'ml',
  name: 'bad',
  spec: { requests: [{ name: 'gpus', exactly: { deviceClassName: 'gpu.nvidia.com', ...exactly } }] },
});
const pod = (extra) => ({ namespace: 'ml', name: 'bad', ...extra });
const group = (extra) => ({ namespace: 'ml', name: 'bad', schedulingPolicy: 'basic', ...extra });
const toleration = (tolerationSeconds) => ({ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds });
const SELECTOR = 'ResourceClaim "ml/bad": spec.devices.requests[0].exactly.selectors[0].cel.expression';

// [what, call, error name, the first problem's line]
const CASES = [
  // A slice of 10,000 devices, wrong types, overflowing and negative numbers.
  ['10,000 devices', (s) => s.addSlice(slice(10_000)), 'InvalidInput',
    'ResourceSlice "big": spec.devices: too many: 10000, must have at most 128 items'],
  ['a string for an int', (s) => s.addSlice(slice(1, { pool: { name: 'big', generation: 'one', resourceSliceCount: 1 } })), 'InvalidArgument',
    'slice.pool.generation: invalid type: string "one", expected i64'],
  ['a map for a list', (s) => s.addSlice(slice(1, { devices: { name: 'gpu-0' } })), 'InvalidArgument',
    'slice.devices: invalid type: map, expected a sequence'],
  ['generation 2^64', (s) => s.addSlice(slice(1, { pool: { name: 'big', generation: 2 ** 64, resourceSliceCount: 1 } })), 'InvalidArgument',
    'slice.pool.generation: invalid type: floating point `1.8446744073709552e+19`, expected i64'],
  ['resourceSliceCount -1', (s) => s.addSlice(slice(1, { pool: { name: 'big', generation: 1, resourceSliceCount: -1 } })), 'InvalidInput',
    'ResourceSlice "big": spec.pool.resourceSliceCount: invalid value "-1": must be greater than zero'],
  ['count -1', (s) => s.addClaim(claim({ allocationMode: { ExactCount: -1 } })), 'InvalidArgument',
    'claim.spec.requests[0]: invalid value: integer `-1`, expected u32'],
  ['count 2^64', (s) => s.addClaim(claim({ allocationMode: { ExactCount: 2 ** 64 } })), 'InvalidArgument',
    'claim.spec.requests[0]: invalid type: floating point `1.8446744073709552e+19`, expected u32'],
  ['count "eight"', (s) => s.addClaim(claim({ allocationMode: { ExactCount: 'eight' } })), 'InvalidArgument',
    'claim.spec.requests[0]: invalid type: string "eight", expected u32'],
  ['priority 2^31', (s) => s.addPod(pod({ priority: 2 ** 31 })), 'InvalidArgument',
    'pod.priority: invalid value: integer `2147483648`, expected i32'],
  ['tolerationSeconds 1e20', (s) => s.addPod(pod({ tolerations: [toleration(1e20)] })), 'InvalidArgument',
    'pod.tolerations[0].tolerationSeconds: invalid type: floating point `1e+20`, expected i64'],
  // NaN and Infinity are not JSON: refused, never read as null ("tolerate forever").
  ['tolerationSeconds NaN', (s) => s.addPod(pod({ tolerations: [toleration(NaN)] })), 'InvalidArgument',
    'pod.tolerations[0].tolerationSeconds: not a finite number: NaN (JSON has no NaN or Infinity)'],
  ['tolerationSeconds Infinity', (s) => s.addPod(pod({ tolerations: [toleration(Infinity)] })), 'InvalidArgument',
    'pod.tolerations[0].tolerationSeconds: not a finite number: inf (JSON has no NaN or Infinity)'],
  ['minCount -3', (s) => s.addPodGroup(group({ schedulingPolicy: { gang: { minCount: -3 } } })), 'InvalidArgument',
    'group.schedulingPolicy.gang.minCount: invalid value: integer `-3`, expected u32'],
  // Unknown enum values.
  ['allocationMode', (s) => s.addClaim(claim({ allocationMode: 'Some' })), 'InvalidArgument',
    'claim.spec.requests[0]: unknown variant `Some`, expected `ExactCount` or `All`'],
  ['toleration operator', (s) => s.addPod(pod({ tolerations: [{ key: 'k', operator: 'Like' }] })), 'InvalidArgument',
    'pod.tolerations[0].operator: unknown variant `Like`, expected one of `Exists`, `Equal`, `Lt`, `Gt`'],
  ['policy', (s) => s.addPodGroup(group({ schedulingPolicy: 'strict' })), 'InvalidArgument',
    'group.schedulingPolicy: unknown variant `strict`, expected `basic` or `gang`'],
  ['disruptionMode', (s) => s.addPodGroup(group({ disruptionMode: 'some' })), 'InvalidArgument',
    'group.disruptionMode: unknown variant `some`, expected `single` or `all`'],
  ['node taint effect', (s) => s.taintNode('gpu-r1-n1', { key: 'k', effect: 'Sometimes' }), 'InvalidArgument',
    'taint.effect: unknown variant `Sometimes`, expected one of `NoSchedule`, `PreferNoSchedule`, `NoExecute`'],
  ['device taint effect', (s) => s.taintDevice('gpu.nvidia.com/gpu-r1-n1/gpu-0', { key: 'k', effect: 'Sometimes' }), 'InvalidInput',
    'ResourceSlice "gpu-r1-n1-gpu.nvidia.com": spec.devices[0].taints[0].effect: unsupported value "Sometimes": supported values: "NoExecute", "NoSchedule", "None"'],
  // CEL: nested too deeply, or too long (refused when the claim is added, as the API
  // server refuses it, not when a cycle first evaluates it).
  ['10,000 negations', (s) => s.addClaim(claim({ selectors: [{ cel: `${'!'.repeat(10_000)}true` }] })), 'InvalidInput',
    `${SELECTOR}: invalid CEL expression: at 9936: expression nested too deeply (more than 64 levels)`],
  ['5,000 parentheses', (s) => s.addClaim(claim({ selectors: [{ cel: `${'('.repeat(5_000)}true${')'.repeat(5_000)}` }] })), 'InvalidInput',
    `${SELECTOR}: invalid CEL expression: at 64: expression nested too deeply (more than 64 levels)`],
  ['a 1 MB expression', (s) => s.addClaim(claim({ selectors: [{ cel: `${'device.driver == "x" || '.repeat(50_000)}true` }] })), 'InvalidInput',
    `${SELECTOR}: too long: 1200004 bytes, may not be more than 10240 bytes`],
  ['a selector that does not parse', (s) => s.addClaim(claim({ selectors: [{ cel: 'device.driver ==' }] })), 'InvalidInput',
    `${SELECTOR}: invalid CEL expression: at 16: syntax error: found end of input, expected an expression`],
  // Duplicates, and changes the state refuses.
  ['a duplicate pod', (s) => s.addPod({ namespace: 'inference', name: 'chat-1' }), 'AlreadyExists',
    'Pod "inference/chat-1": metadata.name: duplicate value "inference/chat-1"'],
  ['a node that is there', (s) => s.addNode({ name: 'gpu-r1-n1' }), 'AlreadyExists',
    'Node "gpu-r1-n1" already exists'],
  ['removing a node that is not there', (s) => s.removeNode('gpu-r9-n9'), 'NotFound',
    'Node "gpu-r9-n9" not found'],
  ['changing a node that is not there', (s) => s.updateNode({ name: 'gpu-r9-n9' }), 'NotFound',
    'Node "gpu-r9-n9" not found'],
  ['a class whose selector does not parse', (s) => s.putDeviceClass({ name: 'gpu.nvidia.com', selectors: [{ cel: 'device.driver ==' }] }), 'InvalidInput',
    'DeviceClass "gpu.nvidia.com": spec.selectors[0].cel.expression: invalid CEL expression: at 16: syntax error: found end of input, expected an expression'],
  ['a rule with no key', (s) => s.addTaintRule({ name: 'r', taint: { key: '', effect: 'NoExecute' } }), 'InvalidInput',
    'DeviceTaintRule "r": spec.taint.key: required value'],
  ['a clock of NaN', (s) => s.advance(NaN), 'InvalidArgument',
    'now: not a finite number: NaN (JSON has no NaN or Infinity)'],
];

test('each bad input is refused with its error and the session is unchanged', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  s.cycle();
  const before = exported(s);
  for (const [what, call, name, line] of CASES) {
    const e = thrown(() => call(s));
    assert.ok(e instanceof Error, what);
    assert.equal(e.name, name, `${what}: ${e.message}`);
    assert.equal(e.problems[0].line, line, what);
    assert.equal(e.message.split('\n')[0], line, what);
    if (name === 'InvalidInput' || (name === 'AlreadyExists' && e.problems[0].field)) {
      // Validation errors name the object and the field apart too.
      assert.equal(line, `${e.problems[0].object}: ${e.problems[0].field}: ${e.problems[0].message}`, what);
    } else if (name === 'InvalidArgument') {
      assert.ok(line.startsWith(`${e.problems[0].field}: `), what);
    }
    assert.equal(exported(s), before, `${what}: the state changed`);
  }
  // And the session still works.
  assert.ok(s.cycle().units.length >= 0);
  s.free();
});

test('dangling references are accepted as Kubernetes accepts them, and named when scheduled', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  s.addPod(pod({ name: 'needs-claim', resourceClaims: [{ name: 'g', resourceClaimName: 'nowhere' }] }));
  s.addPod(pod({ name: 'needs-template', resourceClaims: [{ name: 'g', resourceClaimTemplateName: 'nowhere' }] }));
  s.addClaim({ namespace: 'ml', name: 'classless', spec: { requests: [{ name: 'gpus', exactly: { deviceClassName: 'nowhere.example.com' } }] } });
  s.addPod(pod({ name: 'needs-class', resourceClaims: [{ name: 'g', resourceClaimName: 'classless' }] }));
  const failed = s.cycle().units
    .filter((u) => u.name.startsWith('ml/needs-'))
    .map((u) => [u.name, u.outcome, u.reason]);
  assert.deepEqual(failed, [
    ['ml/needs-claim', 'failed', 'ml/needs-claim: ResourceClaim "ml/nowhere" not found'],
    ['ml/needs-class', 'failed', 'ResourceClaim "ml/classless": spec.devices.requests[0].exactly.deviceClassName: DeviceClass "nowhere.example.com" not found'],
    ['ml/needs-template', 'failed', 'ml/needs-template: claim template "nowhere" must be instantiated before placement'],
  ]);
  s.free();
});

/** The error of loading `text` as manifests: thrown with every problem located. */
const refused = (text) => {
  const e = thrown(() => g.Scheduler.fromManifests([{ name: 'in.yaml', text }]));
  assert.equal(e.name, 'InvalidInput', e.message);
  for (const p of e.problems) assert.equal(p.file, 'in.yaml', p.line);
  return e;
};

test('the manifest decoder refuses the corpus, the bombs and a 100 MB document, and a live session is unchanged', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  s.cycle();
  const before = exported(s);

  // The committed corpus: exactly its expected errors, each naming object and field.
  for (const name of ['wrong-types.yaml', 'overflowing-numbers.yaml', 'negative-counts.yaml', 'unknown-enums.yaml', 'duplicate-names.yaml']) {
    const text = fixture(name);
    const want = text.split('\n')
      .filter((l) => l.startsWith('# expect error: '))
      .map((l) => `in.yaml ${l.slice('# expect error: '.length)}`)
      .map((l) => l.replaceAll('cli/tests/bad/duplicate-names.yaml', 'in.yaml'));
    const e = refused(text);
    assert.deepEqual(e.problems.map((p) => p.line), want, name);
    for (const p of e.problems) {
      assert.ok(p.object && (p.field || p.message.startsWith('duplicate object')), `${name}: ${p.line}`);
    }
  }

  // Alias bombs: the reader's guard, and max-alias-expansion for a wide one.
  assert.deepEqual(refused(fixture('alias-bomb.yaml')).problems.map((p) => p.message), [
    "YAML aliases used more than 100 times per node of the document (the YAML reader's fixed limit against alias bombs)",
  ]);
  const n = 20_000;
  const wide = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: wide, namespace: ml}\ndata:\n  anchor: &a [${Array(n).fill('x').join(',')}]\n  uses: [${Array(n).fill('*a').join(',')}]\n`;
  assert.deepEqual(refused(wide).problems.map((p) => p.message), [
    'YAML aliases expand the input by more than the max-alias-expansion limit of 1000000 values (raise it with --max-alias-expansion)',
  ]);

  // Nesting: 200 levels refused; 125 read (on the module's stack).
  assert.match(refused(fixture('deep-nesting.yaml')).message, /^in\.yaml doc 1: YAML nested more than 128 levels deep at line 9 column 135/);
  const deep = g.Scheduler.fromManifests(`apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  deep: ${'['.repeat(125)}${']'.repeat(125)}\n`);
  assert.deepEqual(deep.warnings(), ['manifests doc 1: Node "n": unknown field "spec.deep"']);
  deep.free();

  // A string that is not valid UTF-16 (a lone surrogate) arrives replaced, and is a
  // bad name like any other.
  assert.equal(refused('apiVersion: v1\nkind: Node\nmetadata: {name: "gpu-\uD800"}\n').problems[0].field, 'metadata.name');

  // A 100 MB document: one annotation of 100 MB, refused as the API server refuses it.
  const big = `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-a", "annotations": {"note": "${'x'.repeat(100 << 20)}"}}}`;
  assert.deepEqual(refused(big).problems.map((p) => p.line), [
    'in.yaml doc 1: Node "gpu-a": metadata.annotations: too long: 104857604 bytes, may not be more than 262144 bytes',
  ]);

  assert.equal(exported(s), before, 'the live session changed');
  s.free();
});
