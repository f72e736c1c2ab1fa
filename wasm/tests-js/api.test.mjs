// The manifest functions of the WebAssembly package, through its Node entry:
// results, options, and the kinds and problems of thrown errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';

// GANGPACK_WASM_NODE points at another build of the package's Node entry file.
const g = await import(process.env.GANGPACK_WASM_NODE
  ? pathToFileURL(process.env.GANGPACK_WASM_NODE).href
  : '../pkg/node/index.js');

const demo = g.demoManifests(0);
const cargoVersion = readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8').match(/^version = "([^"]+)"/m)[1];

const NODE = `apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: { cpu: "8", memory: 32Gi, pods: "110" }
`;

function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail('expected a thrown error');
}

test('version and build', () => {
  assert.equal(g.version(), cargoVersion);
  assert.equal(g.hasManifests(), true);
});

test('plan: the table, the list and the exit code of one cycle', () => {
  const r = g.plan(demo);
  assert.equal(r.exitCode, 3);
  assert.equal(r.pending, true);
  assert.deepEqual(r.warnings, []);
  assert.match(r.table, /^PodGroup inference\/llama-405b-serve +preempted +2 +16 /m);
  assert.match(r.table, /^  PodGroup ml-training\/gpt-moe-pretrain: 0 of 4 pods fit: /m);
  assert.match(r.table, /^10 units: 8 placed, 1 preempted, 1 pending, 0 invalid, 0 failed; 8 pods bound, 2 nominated, 14 devices allocated$/m);
  assert.equal(r.list.kind, 'List');
  assert.equal(r.list.apiVersion, 'v1');
  const kinds = new Set(r.list.items.map((o) => o.kind));
  assert.deepEqual([...kinds].sort(), ['Pod', 'PodGroup', 'ResourceClaim']);
  const chat0 = r.list.items.find((o) => o.kind === 'Pod' && o.metadata.name === 'chat-0');
  assert.equal(chat0.spec.nodeName, 'gpu-r3-n5');
  // The list prints as `-o json` does: serde_json's pretty form is JSON.stringify's.
  assert.equal(g.formatList(r.list, 'json'), `${JSON.stringify(r.list, null, 2)}\n`);
  assert.match(g.formatList(r.list, 'yaml'), /^apiVersion: v1\nitems:\n/);
});

test('plan: options change the decision and the clock', () => {
  const spread = g.plan(demo, { policy: 'Spread' });
  const best = g.plan(demo, { policy: 'best-fit' });
  assert.notEqual(spread.table, best.table);
  const asText = g.plan(demo, { now: '2026-11-05T09:00:00Z' });
  const asSeconds = g.plan(demo, { now: Date.parse('2026-11-05T09:00:00Z') / 1000 });
  assert.equal(asText.table, asSeconds.table);
  assert.deepEqual(asText.list, asSeconds.list);
  const coloured = g.plan(demo, { color: true });
  assert.match(coloured.table, /\x1b\[32mplaced\x1b\[0m/);
  assert.doesNotMatch(best.table, /\x1b\[/);
});

test('plan: several named texts; problems name file, document, object and field', () => {
  const bad = `apiVersion: v1
kind: Node
metadata:
  name: n2
status:
  allocatable: { cpu: eight }
`;
  const e = thrown(() => g.plan([{ name: 'good.yaml', text: NODE }, { name: 'bad.yaml', text: bad }]));
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'InvalidInput');
  assert.equal(e.problems.length, 1);
  const [p] = e.problems;
  assert.equal(p.file, 'bad.yaml');
  assert.equal(p.doc, 1);
  assert.equal(p.object, 'Node "n2"');
  assert.equal(p.field, 'status.allocatable["cpu"]');
  assert.equal(e.message, p.line);
  assert.ok(p.line.startsWith('bad.yaml doc 1: Node "n2": status.allocatable["cpu"]: '), p.line);
  // Unnamed texts are named by position.
  const e2 = thrown(() => g.plan([NODE, bad]));
  assert.equal(e2.problems[0].file, 'manifests[1]');
  // Skipping invalid objects is a warning instead.
  const skipped = g.plan([NODE, bad], { skipInvalid: true });
  assert.equal(skipped.warnings.length, 1);
  assert.match(skipped.warnings[0], /^skipped: manifests\[1\] doc 1: Node "n2"/);
});

test('plan: unknown fields are warnings, errors with strict', () => {
  const text = NODE.replace('metadata:', 'metadata:\n  colour: blue');
  const lenient = g.plan(text);
  assert.equal(lenient.warnings.length, 1);
  assert.match(lenient.warnings[0], /unknown field "metadata.colour"/);
  const e = thrown(() => g.plan(text, { strict: true }));
  assert.equal(e.name, 'InvalidInput');
  assert.equal(e.problems[0].object, 'Node "n1"');
  assert.equal(e.problems[0].message, 'unknown field "metadata.colour"');
});

test('plan: nothing pending is exit code 0', () => {
  const r = g.plan(NODE);
  assert.equal(r.exitCode, 0);
  assert.equal(r.pending, false);
  assert.equal(r.table, 'nothing to schedule: 0 pods bound\n');
  assert.deepEqual(r.list.items, []);
});

test('empty manifests (a kubectl get against the wrong context) are InvalidInput naming the text', () => {
  for (const fn of [() => g.plan(''), () => g.check('# only a comment\n---\n'), () => g.capacity('')]) {
    const e = thrown(fn);
    assert.equal(e.name, 'InvalidInput');
    assert.match(e.problems[0].message, /^no Kubernetes objects in \S+ \((empty|only comments and ---)\); is the kubectl context right\?$/);
  }
  const e = thrown(() => g.plan([{ name: 'nodes.yaml', text: 'apiVersion: v1\nkind: NodeList\nitems: []\n' }]));
  assert.equal(e.problems[0].message, 'no Kubernetes objects in nodes.yaml (a NodeList with no items); is the kubectl context right?');
});

test('arguments of the wrong shape are InvalidArgument naming the field', () => {
  let e = thrown(() => g.plan(demo, { policy: 'tightest' }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'options.policy');
  e = thrown(() => g.plan(demo, { now: 'yesterday' }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'options.now');
  e = thrown(() => g.plan(demo, { polcy: 'Spread' }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'options.polcy');
  e = thrown(() => g.plan(42));
  assert.equal(e.name, 'InvalidArgument');
  e = thrown(() => g.plan(undefined));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'manifests');
  e = thrown(() => g.formatList({ kind: 'List' }, 'toml'));
  assert.equal(e.name, 'InvalidArgument');
});

test('explain: one unit, a pod, every pending unit, and NotFound', () => {
  const group = g.explain(demo, 'ml-training/gpt-moe-pretrain');
  assert.match(group.text, /^PodGroup ml-training\/gpt-moe-pretrain: pending; waiting helps: /);
  assert.match(group.text, /\nPodGroup ml-training\/gpt-moe-pretrain: Unschedulable \(capacity/);
  assert.equal(g.explain(demo, { podGroup: 'ml-training/gpt-moe-pretrain' }).text, group.text);
  const all = g.explain(demo, null);
  assert.equal(all.text, group.text, 'the only pending unit is explained');
  const pod = g.explain(demo, { pod: 'inference/chat-0' });
  assert.match(pod.text, /^Pod inference\/chat-0: Scheduled/);
  let e = thrown(() => g.explain(demo, 'ml-training/nope'));
  assert.equal(e.name, 'NotFound');
  assert.equal(e.message, 'PodGroup ml-training/nope not found in the input');
  e = thrown(() => g.explain(demo, { pod: 'a/b', podGroup: 'c/d' }));
  assert.equal(e.name, 'InvalidArgument');
});

test('taint: a device, a node, a rule; the list carries the evictions', () => {
  const r = g.taint(demo, { device: 'gpu.nvidia.com/gpu-r1-n1/gpu-0', key: 'gpu.nvidia.com/ecc', value: 'uncorrectable' });
  assert.match(r.table, /^taint: device gpu.nvidia.com\/gpu-r1-n1\/gpu-0: gpu.nvidia.com\/ecc=uncorrectable:NoExecute at /);
  assert.match(r.table, /^8 pods evicted, 1 gang broken$/m);
  const evicted = r.list.items.filter((o) => o.kind === 'Pod');
  assert.equal(evicted.length, 8);
  for (const pod of evicted) {
    const c = pod.status.conditions.find((x) => x.type === 'DisruptionTarget');
    assert.equal(c.status, 'True');
    assert.equal(c.reason, 'DeletionByDeviceTaintManager');
  }
  const dry = g.taint(demo, { device: 'gpu.nvidia.com/gpu-r1-n1/gpu-0', effect: 'None' });
  assert.match(dry.table, /^0 pods evicted/m);
  const node = g.taint(demo, { node: 'gpu-r1-n1', effect: 'NoSchedule' });
  assert.match(node.table, /^no pod is evicted$/m);
  const rule = `apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: rack-1-maintenance
spec:
  deviceSelector:
    pool: gpu-r1-n2
  taint:
    key: maintenance
    effect: NoExecute
`;
  const byRule = g.taint(demo, { rule });
  assert.match(byRule.table, /^taint: DeviceTaintRule rack-1-maintenance/);
  assert.ok(byRule.list.items.some((o) => o.kind === 'DeviceTaintRule'));
  let e = thrown(() => g.taint(demo, { device: 'gpu.nvidia.com/nope/gpu-0' }));
  assert.equal(e.name, 'NotFound');
  e = thrown(() => g.taint(demo, { node: 'gpu-r1-n1', effect: 'Sometimes' }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'spec.effect');
  e = thrown(() => g.taint(demo, { node: 'a', device: 'b/c/d' }));
  assert.equal(e.name, 'InvalidArgument');
  e = thrown(() => g.taint(demo, { node: 'gpu-r1-n1', effect: 'None' }));
  assert.equal(e.name, 'InvalidInput');
  assert.match(e.message, /--effect None is for devices/);
});

test('runCli: a command line never throws for bad input', () => {
  const ok = g.runCli({ command: 'plan', files: [{ name: 'demo.yaml', text: demo }], output: 'json' });
  assert.equal(ok.code, 3);
  assert.deepEqual(JSON.parse(ok.stdout), g.plan(demo).list);
  const bad = g.runCli({ command: 'plan', files: [{ name: 'x.yaml', text: 'kind: [' }] });
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, '');
  assert.ok(bad.errors.length > 0 && bad.errors[0].startsWith('x.yaml'), bad.errors[0]);
  const missing = g.runCli({ command: 'explain', files: [{ name: 'd', text: demo }], group: 'x/y' });
  assert.equal(missing.code, 2);
  assert.deepEqual(missing.errors, ['PodGroup x/y not found in the input']);
  const demoRun = g.runCli({ command: 'demo' });
  assert.equal(demoRun.code, 0);
  assert.match(demoRun.stdout, /^gangpack demo: 4 racks x 8 nodes x 8 /);
});

test('plan: podGroupPreemptionPolicy is kube-scheduler\'s PodGroupPreemptionPolicy gate', () => {
  // Issue 31: the PodGroup says Never, its pods PreemptLowerPriority. Without the gate
  // (Kubernetes 1.37's default) the pods' policy decides and the gang preempts; with
  // it the PodGroup's decides and its pods must match it, so the group fails.
  const dir = new URL('../../cli/tests/fixtures/preemption/', import.meta.url);
  const files = ['cluster.yaml', 'group-never.yaml'].map((f) => readFileSync(new URL(f, dir), 'utf8'));
  const text = files.join('\n---\n');
  const off = g.plan(text);
  assert.equal(off.exitCode, 0);
  assert.match(off.table, /PodGroup ml\/urgent +preempted/);
  const on = g.plan(text, { podGroupPreemptionPolicy: true });
  assert.equal(on.exitCode, 3);
  assert.match(on.table, /PodGroup ml\/urgent +invalid/);
  assert.match(on.table, /must equal the preemptionPolicy of the pod's PodGroup/);
});

test('check: the state judged, decisions applied over it, warnings and errors', () => {
  const r = g.check(demo);
  assert.equal(r.valid, true);
  assert.equal(r.exitCode, 0);
  assert.deepEqual(r.findings, []);
  assert.match(r.table, /^valid: \d+ pods bound, \d+ claims allocated, \d+ PodGroups running\n$/);
  assert.equal(r.podsBound, Object.keys(r.bindings).length);
  assert.deepEqual([r.patched, r.replaced, r.added, r.bound, r.decided, r.newBindings, r.evicted], [0, 0, 0, 0, 0, [], []]);
  // The plan's own decisions pass; a pod moved onto a node without room does not.
  const planned = g.plan(demo).list;
  const ok = g.check(demo, { decisions: g.formatList(planned, 'yaml') });
  assert.equal(ok.valid, true, ok.table);
  assert.ok(ok.decided > 0 && ok.newBindings.length > 0);
  assert.match(ok.table, /; decisions: \d+ objects replaced, \d+ objects added; \d+ bindings or allocations new\n$/);
  // The same decision as Bindings: the pods it binds, by name only.
  const newlyBound = (o) => o.kind === 'Pod' && ok.newBindings.includes(`${o.metadata.namespace}/${o.metadata.name}`);
  const bindings = planned.items
    .filter(newlyBound)
    .map((p) => JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: p.metadata.name, namespace: p.metadata.namespace }, target: { name: p.spec.nodeName } }));
  const claims = planned.items.filter((o) => !newlyBound(o)).map((o) => JSON.stringify(o));
  const asBindings = g.check(demo, { decisions: [...claims, ...bindings].join('\n') });
  assert.equal(asBindings.valid, true, asBindings.table);
  assert.equal(asBindings.bound, bindings.length);
  assert.deepEqual(asBindings.bindings, ok.bindings);
  // A misspelt pod is an error naming it and the pod it probably meant, never a new pod.
  const misspelt = thrown(() => g.check(demo, { decisions: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'chat-00', namespace: 'inference' }, spec: { nodeName: 'gpu-r1-n1' } }) }));
  assert.equal(misspelt.name, 'InvalidInput');
  assert.match(misspelt.message, /Pod "inference\/chat-00": metadata\.name: the input has no such Pod \(did you mean Pod "inference\/chat-0"\?\)/);
  const pod = planned.items.find((o) => o.kind === 'Pod' && o.metadata.name === 'chat-0');
  const broken = g.check(demo, { decisions: [{ name: 'mine.json', text: JSON.stringify({ ...pod, spec: { ...pod.spec, nodeName: 'no-such-node' } }) }] });
  assert.equal(broken.valid, false);
  assert.equal(broken.exitCode, 4);
  const f = broken.findings[0];
  assert.equal(typeof f.rule, 'string');
  assert.ok(f.objects.some((o) => o.kind === 'Pod' && o.namespace === 'inference' && o.name === 'chat-0'), JSON.stringify(f));
  assert.match(broken.table, /^invalid: \d+ violations? of \d+ rules? \(/m);
  // Invalid decisions: InvalidInput naming the text, the object and the field.
  const e = thrown(() => g.check(demo, { decisions: [NODE.replace('cpu: "8"', 'cpu: eight')] }));
  assert.equal(e.name, 'InvalidInput');
  assert.equal(e.problems[0].file, 'decisions[0]');
  assert.equal(e.problems[0].object, 'Node "n1"');
  assert.match(e.problems[0].field, /^status\.allocatable/);
  assert.equal(e.message, e.problems.map((p) => p.line).join('\n'));
  assert.equal(thrown(() => g.check(demo, { decision: '' })).problems[0].field, 'spec.decision');
  assert.equal(thrown(() => g.check(demo, { admission: 'yes' })).name, 'InvalidArgument');
  assert.equal(thrown(() => g.check(demo, null, { policy: 'nope' })).problems[0].field, 'options.policy');
});

test('diff: two decisions compared, as data and as the table', () => {
  const planned = g.formatList(g.plan(demo).list, 'yaml');
  const spread = g.formatList(g.plan(demo, { policy: 'Spread' }).list, 'yaml');
  const same = g.diff(demo, { ours: planned, theirs: planned });
  assert.equal(same.same, true);
  assert.equal(same.exitCode, 0);
  assert.deepEqual([same.placedByOursOnly, same.placedByTheirsOnly, same.placedOnDifferentNodes], [[], [], []]);
  assert.equal(same.ours.podsPlaced, same.theirs.podsPlaced);
  assert.match(same.table, /the two decisions place and evict the same pods on the same nodes\n$/);
  const other = g.diff(demo, { ours: planned, theirs: [{ name: 'spread.yaml', text: spread }] });
  assert.equal(other.same, false);
  assert.ok(other.placedOnDifferentNodes.length > 0);
  const m = other.placedOnDifferentNodes[0];
  assert.deepEqual(Object.keys(m).sort(), ['ours', 'pod', 'theirs']);
  assert.notEqual(m.ours, m.theirs);
  assert.ok(other.table.includes(`Pod ${m.pod}: ${m.ours}, ${m.theirs}`));
  for (const side of [other.ours, other.theirs]) {
    assert.deepEqual(Object.keys(side).sort(), ['devicesAllocated', 'devicesUnallocated', 'evicted', 'gangsSplit', 'podsBound', 'podsPlaced', 'valid', 'violations']);
  }
  let e = thrown(() => g.diff(demo));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'spec');
  e = thrown(() => g.diff(demo, { ours: planned }));
  assert.equal(e.name, 'InvalidArgument');
  assert.match(e.message, /^spec: missing field `theirs`/);
  e = thrown(() => g.diff(demo, { ours: planned, theirs: 'kind: [' }));
  assert.equal(e.name, 'InvalidInput');
  assert.equal(e.problems[0].file, 'theirs');
});

test('capacity: the report as data and as the table', () => {
  const r = g.capacity(demo);
  assert.equal(r.key, 'topology.kubernetes.io/rack');
  assert.deepEqual(r.labels, ['1x1', '1x2', '1x4', '1x8', '8x8@topology.kubernetes.io/rack']);
  assert.equal(r.totals.length, r.shapes.length);
  assert.ok(r.domains.length > 1);
  assert.match(r.table, /^DOMAIN +NODES +FREE +1x1 +1x2 +1x4 +1x8 +8x8@topology\.kubernetes\.io\/rack\n/);
  const whole = g.capacity(demo, { key: null, gangPods: 1 });
  assert.equal(whole.key, null);
  assert.deepEqual(whole.domains, [], 'the whole cluster: the totals alone');
  assert.deepEqual(whole.labels, ['1x1', '1x2', '1x4', '1x8']);
  assert.equal(whole.nodes, r.nodes);
  assert.match(whole.table, /^CLUSTER +NODES/);
  assert.equal(thrown(() => g.capacity(demo, { gangPods: -1 })).problems[0].field, 'spec.gangPods');
  assert.equal(thrown(() => g.capacity(demo, { topologyKey: 'x' })).problems[0].field, 'spec.topologyKey');
  assert.equal(thrown(() => g.capacity('kind: [')).name, 'InvalidInput');
});

test('gen: seeded scenarios as text and objects; options checked', () => {
  const a = g.gen({ seed: 3, size: 'medium', kind: 'gangs' });
  assert.match(a.text, /^apiVersion: v1\nitems:\n/);
  assert.equal(a.list.kind, 'List');
  assert.ok(a.list.items.some((o) => o.kind === 'PodGroup'));
  assert.deepEqual(g.gen({ seed: 3, size: 'Medium', kind: 'GANGS' }), a, 'sizes and kinds in any case');
  const json = g.gen({ seed: 3, size: 'medium', kind: 'gangs', output: 'json' });
  assert.deepEqual(JSON.parse(json.text), a.list);
  assert.equal(json.text, `${JSON.stringify(a.list, null, 2)}\n`);
  assert.notDeepEqual(g.gen({ seed: 4, size: 'medium', kind: 'gangs' }).list, a.list);
  assert.ok(!g.gen({ kind: 'pods' }).list.items.some((o) => o.kind === 'PodGroup'));
  assert.deepEqual(g.gen(), g.gen({ seed: 0, size: 'small', kind: 'mixed', output: 'yaml' }));
  // What gen writes, plan reads.
  assert.ok(g.plan(a.text).table.length > 0);
  let e = thrown(() => g.gen({ size: 'huge' }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.message, 'options.size: invalid value "huge" (expected small, medium or large)');
  e = thrown(() => g.gen({ seed: -1 }));
  assert.equal(e.problems[0].field, 'options.seed');
  e = thrown(() => g.gen({ seed: 1.5 }));
  assert.equal(e.problems[0].field, 'options.seed');
  e = thrown(() => g.gen({ output: 'table' }));
  assert.equal(e.problems[0].field, 'options.output');
  e = thrown(() => g.gen({ sede: 1 }));
  assert.equal(e.problems[0].field, 'options.sede');
  e = thrown(() => g.gen('small'));
  assert.equal(e.name, 'InvalidArgument');
});
