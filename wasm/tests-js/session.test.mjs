// The stateful Scheduler class through the package's Node entry:
//   bash scripts/wasm.sh --dev && node --test wasm/tests-js/session.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

// GANGPACK_WASM_NODE points at another build of the package's Node entry file.
const g = await import(process.env.GANGPACK_WASM_NODE
  ? pathToFileURL(process.env.GANGPACK_WASM_NODE).href
  : '../pkg/node/index.js');

const CHAT = 'gpu.nvidia.com/gpu-r3-n5/gpu-0';
const KEY = 'example.com/xid-79';

const nodesOf = (snap) => snap.domains.flatMap((d) => d.nodes);
const deviceOf = (snap, id) => [...nodesOf(snap).flatMap((n) => n.devices), ...snap.otherDevices].find((d) => d.id === id);
const podOf = (snap, name) => snap.pods.find((p) => p.name === name);
const thrown = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  assert.fail('expected a throw');
};

test('an interactive session on the demo cluster', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  assert.deepEqual(s.warnings(), []);
  assert.equal(s.now().rfc3339, '2026-11-05T08:00:00Z');

  // Loaded: 4 racks of 8 nodes with 8 GPUs each, running pods bound.
  const loaded = s.snapshot();
  assert.equal(loaded.topologyKey, 'topology.kubernetes.io/rack');
  assert.deepEqual(loaded.domains.map((d) => d.name), ['rack-1', 'rack-2', 'rack-3', 'rack-4']);
  assert.equal(nodesOf(loaded).length, 32);
  assert.ok(nodesOf(loaded).every((n) => n.devices.length === 8));
  assert.equal(deviceOf(loaded, CHAT).state, 'free');
  assert.equal(podOf(loaded, 'inference/chat-0').status, 'pending');

  // One cycle: the same decisions and table as `gangpack plan`.
  const c = s.cycle();
  assert.equal(c.table, g.plan(g.demoManifests(0)).table);
  const chat0 = c.units.find((u) => u.name === 'inference/chat-0');
  assert.equal(chat0.kind, 'Pod');
  assert.equal(chat0.outcome, 'placed');
  assert.deepEqual(chat0.pods, [{ pod: 'inference/chat-0', node: 'gpu-r3-n5', devices: [CHAT] }]);
  const serve = c.units.find((u) => u.name === 'inference/llama-405b-serve');
  assert.equal(serve.outcome, 'preempted');
  // At equal priority a PodGroup outranks lone pods (KEP-5710): four batch pods go,
  // not the vit-sweep gang.
  assert.deepEqual(
    serve.victims.map((v) => v.unit),
    [0, 1, 2, 3].map((i) => ({ pod: `inference/embed-batch-${i}` })),
  );
  const moe = c.units.find((u) => u.name === 'ml-training/gpt-moe-pretrain');
  assert.equal(moe.outcome, 'pending');
  assert.match(moe.reason, /^PodGroup ml-training\/gpt-moe-pretrain: 0 of 4 pods fit/);
  assert.equal(c.allPlaced, false);
  assert.equal(c.podsBound, 10);

  let snap = s.snapshot();
  const dev = deviceOf(snap, CHAT);
  assert.equal(dev.state, 'allocated');
  assert.equal(dev.node, 'gpu-r3-n5');
  assert.deepEqual(dev.holders.map((h) => h.pods), [['inference/chat-0']]);
  assert.equal(podOf(snap, 'inference/chat-0').node, 'gpu-r3-n5');
  assert.equal(podOf(snap, 'inference/chat-0').status, 'bound');
  assert.equal(podOf(snap, 'inference/embed-batch-0').status, 'pending', 'a preempted pod is pending again');
  const vit = snap.groups.find((x) => x.name === 'ml-training/vit-sweep');
  assert.equal(vit.bound, 2, 'the sweep gang keeps running');

  // Break the GPU: NoExecute with a key nobody tolerates evicts its pod at once.
  const report = s.taintDevice(CHAT, { key: KEY, value: 'true', effect: 'NoExecute' });
  assert.deepEqual(report.started.map((e) => [e.pod, e.at.rfc3339]), [['inference/chat-0', '2026-11-05T08:00:00Z']]);
  assert.ok('deviceTaint' in report.started[0].reason);
  snap = s.snapshot();
  assert.deepEqual(deviceOf(snap, CHAT).taints.map((t) => [t.key, t.effect, t.timeAdded.rfc3339]), [[KEY, 'NoExecute', '2026-11-05T08:00:00Z']]);
  assert.deepEqual(deviceOf(snap, CHAT).evictions.map((e) => e.pod), ['inference/chat-0']);
  assert.equal(podOf(snap, 'inference/chat-0').eviction.at.seconds, s.now().seconds);

  // The clock moves: the eviction plays out.
  const adv = s.advance('2026-11-05T08:05:00Z');
  assert.equal(adv.now.rfc3339, '2026-11-05T08:05:00Z');
  assert.deepEqual(adv.evictions.map((e) => e.pod), ['inference/chat-0']);
  assert.equal(s.now().seconds, Date.parse('2026-11-05T08:05:00Z') / 1000);
  snap = s.snapshot();
  assert.equal(podOf(snap, 'inference/chat-0'), undefined);
  assert.equal(deviceOf(snap, CHAT).state, 'free');
  assert.deepEqual(deviceOf(snap, CHAT).holders, []);
  assert.equal(deviceOf(snap, CHAT).taints[0].key, KEY);
  // The clock never goes back.
  assert.equal(s.advance(0).now.rfc3339, '2026-11-05T08:05:00Z');

  // Why is the big gang still pending, and what would it take?
  const ex = s.explain({ podGroup: 'ml-training/gpt-moe-pretrain' });
  assert.deepEqual(ex.unit, { group: 'ml-training/gpt-moe-pretrain' });
  assert.equal(ex.explanation.group, 'ml-training/gpt-moe-pretrain');
  assert.equal(ex.explanation.required, 4);
  assert.equal(ex.explanation.status, 'Unschedulable');
  assert.match(ex.text, /gpt-moe-pretrain/);
  assert.match(ex.summary, /^PodGroup ml-training\/gpt-moe-pretrain: 0 of 4 pods fit/);
  assert.equal(ex.whatItTakes.fitsNow, false);
  assert.ok(ex.whatItTakes.text.length > 0);
  // The verdict (issue 32): what helps, first in the text, never "Scheduled".
  assert.equal(ex.verdict.pending, true);
  assert.ok(ex.verdict.helps.length > 0);
  assert.ok(ex.verdict.helps.every((h) => !('nextCycle' in h)));
  assert.equal(ex.text.split('\n')[0], ex.verdict.text);
  assert.equal(ex.verdict.lines.length, ex.verdict.helps.length);
  assert.equal(ex.verdict.text, `${ex.verdict.unit.group ? 'PodGroup' : 'Pod'} ${ex.verdict.unit.group ?? ex.verdict.unit.pod}: pending; ${ex.verdict.lines.join('; ')}`);
  assert.match(ex.verdict.text, /^PodGroup ml-training\/gpt-moe-pretrain: pending; /);
  assert.equal(s.explain('ml-training/gpt-moe-pretrain').summary, ex.summary);

  // Capacity per rack.
  const cap = s.capacityReport();
  assert.equal(cap.key, 'topology.kubernetes.io/rack');
  assert.deepEqual(cap.labels.slice(0, 4), ['1x1', '1x2', '1x4', '1x8']);
  assert.equal(cap.domains.length, 4);
  const whole = s.capacityReport({ key: null });
  assert.deepEqual([whole.key, whole.domains.length, whole.nodes], [null, 0, 32]);
  assert.equal(whole.totals[0].free, cap.domains.reduce((n, d) => n + d.shapes[0].free, 0));

  // The blast radius of a dry-run rule over rack 1's first node.
  const dry = s.dryRunRule({ name: 'drain', selector: { pool: 'gpu-r1-n1' }, taint: { key: 'maintenance', effect: 'None' } });
  assert.equal(dry.publishedDevices, 8);
  assert.ok(dry.pods.length > 0);
  assert.match(dry.message, /^8 published devices selected\./);

  // What-if and undo: fork, change, restore brings the old state back exactly.
  const before = JSON.stringify(s.snapshot());
  const saved = s.fork();
  s.taintNode('gpu-r1-n1', { key: KEY, effect: 'NoExecute' });
  s.advance('2026-11-05T09:00:00Z');
  s.cycle();
  assert.notEqual(JSON.stringify(s.snapshot()), before);
  assert.equal(JSON.stringify(saved.snapshot()), before, 'the fork did not move');
  s.restore(saved);
  assert.equal(JSON.stringify(s.snapshot()), before);
  saved.free();

  // The state as manifests: read back, it holds the cycle's bindings and not the evicted pod.
  const yaml = s.toManifests();
  assert.match(yaml, /^# gangpack Scheduler state at 2026-11-05T08:05:00Z/);
  assert.match(yaml, /# Pods deleted since loading \(evicted or removed\), not written: inference\/chat-0/);
  assert.match(yaml, new RegExp(`#   taintDevice ${CHAT} ${KEY}=true:NoExecute`));
  const replan = g.plan(yaml);
  assert.ok(replan.table.length > 0);
  const again = g.Scheduler.fromManifests(yaml).snapshot();
  assert.equal(podOf(again, 'inference/chat-1').node, 'gpu-r3-n5');
  assert.equal(podOf(again, 'inference/chat-0'), undefined);
  assert.deepEqual(deviceOf(again, CHAT).holders, [], 'the evicted pod\'s claim is released');
  assert.deepEqual(
    deviceOf(again, 'gpu.nvidia.com/gpu-r3-n5/gpu-1').holders.map((h) => h.pods),
    [['inference/chat-1']],
  );
  s.free();
});

const model = () => ({
  nodes: ['n1', 'n2'].map((name, i) => ({
    name,
    labels: { rack: `r${i + 1}` },
    allocatable: { cpu: '8', memory: '32Gi', pods: '110' },
  })),
  classes: [{ name: 'gpu' }],
  slices: ['n1', 'n2'].map((node) => ({
    name: `${node}-gpus`,
    driver: 'gpu.example.com',
    pool: { name: node, generation: 1, resourceSliceCount: 1 },
    nodeSelection: { slice: { nodeName: node } },
    devices: [{ name: 'gpu-0' }, { name: 'gpu-1' }],
  })),
  claims: ['w-0', 'w-1'].map((pod) => ({
    namespace: 'default',
    name: `${pod}-gpus`,
    spec: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu', allocationMode: { ExactCount: 2 } } }] },
  })),
  groups: [{ namespace: 'default', name: 'train', schedulingPolicy: { gang: { minCount: 2 } }, priority: 0 }],
  pods: ['w-0', 'w-1'].map((name) => ({
    namespace: 'default',
    name,
    requests: { cpu: '1' },
    resourceClaims: [{ name: 'gpus', resourceClaimName: `${name}-gpus` }],
    schedulingGroup: 'train',
  })),
  now: '2026-01-01T00:00:00Z',
});

test('fromModel: a gang of two placed whole, then a GPU broken', () => {
  const s = g.Scheduler.fromModel(model());
  assert.equal(s.now().rfc3339, '2026-01-01T00:00:00Z');
  let snap = s.snapshot();
  assert.deepEqual(snap.groups.map((x) => [x.name, x.minCount, x.status]), [['default/train', 2, 'pending']]);
  assert.equal(snap.topologyKey, null);
  assert.deepEqual(nodesOf(snap).map((n) => n.name), ['n1', 'n2']);

  const c = s.cycle();
  assert.equal(c.table, undefined);
  assert.deepEqual(c.units.map((u) => [u.kind, u.name, u.outcome]), [['PodGroup', 'default/train', 'placed']]);
  const placed = c.units[0].pods;
  assert.deepEqual(placed.map((p) => p.node).sort(), ['n1', 'n2']);
  assert.ok(placed.every((p) => p.devices.length === 2));

  snap = s.snapshot({ topologyKey: 'rack' });
  assert.deepEqual(snap.domains.map((d) => d.name), ['r1', 'r2']);
  assert.ok(nodesOf(snap).flatMap((n) => n.devices).every((d) => d.state === 'allocated'));
  assert.deepEqual(snap.groups.map((x) => x.status), ['running']);
  assert.deepEqual(snap.claims.map((x) => [x.name, x.allocated, x.podGroup]), [
    ['default/w-0-gpus', true, 'default/train'],
    ['default/w-1-gpus', true, 'default/train'],
  ]);

  // A NoExecute taint tolerated by nobody: the pod on it goes at once.
  const victim = placed.find((p) => p.node === 'n1').pod;
  const r = s.taintDevice('gpu.example.com/n1/gpu-0', { key: 'xid', effect: 'NoExecute' });
  assert.deepEqual(r.started.map((e) => e.pod), [victim]);
  assert.deepEqual(s.advance(Date.parse('2026-01-01T00:01:00Z') / 1000).evictions.map((e) => e.pod), [victim]);
  snap = s.snapshot();
  assert.deepEqual(snap.pods.map((p) => p.name), ['default/w-0', 'default/w-1'].filter((p) => p !== victim));
  assert.equal(deviceOf(snap, 'gpu.example.com/n1/gpu-0').state, 'free');
  assert.deepEqual(snap.groups.map((x) => [x.bound, x.status]), [[1, 'running']]);

  // The dry run's message is upstream's.
  const dry = s.dryRunRule({ name: 'n2', selector: { pool: 'n2' }, taint: { key: 'maintenance', effect: 'None' } });
  assert.equal(dry.publishedDevices, 2);
  assert.equal(dry.allocatedDevices, 2);

  assert.equal(thrown(() => s.toManifests()).name, 'InvalidArgument');
  s.free();
});

test('errors: kinds, field paths, and the state unchanged', () => {
  const s = g.Scheduler.fromModel(model());
  s.cycle();
  const before = JSON.stringify(s.snapshot());

  let e = thrown(() => s.taintNode('nope', { key: 'k', effect: 'NoExecute' }));
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'NotFound');
  assert.match(e.message, /nope/);
  assert.equal(thrown(() => s.untaintDevice('gpu.example.com/n1/gpu-9', 'k')).name, 'NotFound');
  assert.equal(thrown(() => s.explain({ pod: 'default/ghost' })).name, 'NotFound');
  assert.equal(thrown(() => s.removePod('default/ghost')).name, 'NotFound');

  // Decoding: the field path of what does not parse.
  e = thrown(() => s.addPod({ namespace: 'default', name: 'x', priority: 'high' }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'pod.priority');
  assert.equal(thrown(() => s.taintDevice('not-a-device', { key: 'k', effect: 'NoExecute' })).name, 'InvalidArgument');
  assert.equal(thrown(() => s.advance('yesterday')).name, 'InvalidArgument');

  // Validation: one problem per error, naming the object and the field.
  e = thrown(() => s.addPod({ namespace: 'default', name: 'Bad_Name' }));
  assert.equal(e.name, 'InvalidInput');
  assert.equal(e.problems[0].field, 'metadata.name');
  assert.match(e.problems[0].object, /^Pod "default\/Bad_Name"$/);
  assert.equal(thrown(() => s.addPod({ namespace: 'default', name: 'w-0' })).name, 'AlreadyExists');
  assert.equal(thrown(() => s.addTaintRule({ name: 'r', taint: { key: '', effect: 'NoExecute' } })).name, 'InvalidInput');

  assert.equal(thrown(() => s.addNode({ name: nodesOf(s.snapshot())[0].name })).name, 'AlreadyExists');
  assert.equal(thrown(() => s.removeNode('no-such-node')).name, 'NotFound');

  assert.equal(JSON.stringify(s.snapshot()), before, 'failed calls changed nothing');

  // The empty cluster takes nodes and devices step by step.
  const e2 = new g.Scheduler();
  e2.addNode({ name: 'a' });
  e2.putDeviceClass({ name: 'gpu' });
  e2.addSlice(model().slices[0]);
  assert.equal(thrown(() => e2.addNode({ name: 'a' })).name, 'AlreadyExists');
  const snap = e2.snapshot();
  assert.deepEqual(nodesOf(snap).map((n) => n.name), ['a']);
  assert.deepEqual(snap.otherDevices.map((d) => d.node), ['n1', 'n1'], 'devices of a node that does not exist');
  e2.free();
  s.free();
});

/** `cells()` read against a full snapshot, device by device (an independent derivation). */
function assertCellsAgree(s) {
  const snap = s.snapshot();
  const cells = s.cells();
  assert.equal(cells.now.seconds, snap.now.seconds);
  assert.equal(cells.topologyKey, snap.topologyKey);
  assert.deepEqual(cells.domains.map((d) => d.name), snap.domains.map((d) => d.name));
  const bits = { NoSchedule: 1, NoExecute: 2, None: 4 };
  const nodeBits = { NoSchedule: 1, NoExecute: 2, PreferNoSchedule: 8 };
  let shared = 0;
  snap.domains.forEach((d, i) => {
    assert.deepEqual(cells.domains[i].nodes.map((n) => n.name), d.nodes.map((n) => n.name));
    d.nodes.forEach((n, j) => {
      const cn = cells.domains[i].nodes[j];
      assert.equal(cn.unschedulable, n.unschedulable);
      assert.equal(cn.taints, n.taints.reduce((b, t) => b | nodeBits[t.effect], 0), n.name);
      assert.deepEqual(cn.cells.map((c) => c.id), n.devices.map((x) => x.id));
      n.devices.forEach((dev, k) => {
        const c = cn.cells[k];
        assert.equal(c.state, dev.state, dev.id);
        assert.equal(c.holders, dev.holders.length, dev.id);
        const h = dev.holders[0];
        assert.equal(c.owner, h ? (h.podGroup ?? h.pods[0] ?? h.claim) : null, dev.id);
        assert.equal(c.taints, dev.taints.reduce((b, t) => b | (bits[t.effect] ?? 16), 0), dev.id);
        const at = dev.evictions.map((e) => e.at.seconds);
        assert.equal(c.evictAt, at.length ? Math.min(...at) : null, dev.id);
        assert.equal(c.shares.length, dev.state === 'shared' ? dev.holders.length : 0, dev.id);
        if (dev.state === 'shared') shared += 1;
        // device(id) is the snapshot's own record of it.
        assert.deepEqual(s.device(dev.id), dev);
      });
    });
  });
  const models = new Set(nodesOf(snap).flatMap((n) => n.devices.map((x) => x.model)).filter(Boolean));
  assert.deepEqual(cells.models, [...models].sort());
  // Without devices, the rest of the snapshot is unchanged.
  const bare = s.snapshot({ devices: false });
  assert.ok(nodesOf(bare).every((n) => n.devices.length === 0));
  const strip = (x) => ({ ...x, otherDevices: [], domains: x.domains.map((d) => ({ ...d, nodes: d.nodes.map((n) => ({ ...n, devices: [] })) })) });
  assert.deepEqual(bare, strip(snap));
  return { shared };
}

test('cells() and device(id) agree with snapshot(), through taints, evictions and a cycle', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  assertCellsAgree(s);
  s.cycle();
  s.taintDevice('gpu.nvidia.com/gpu-r1-n1/gpu-0', { key: KEY, effect: 'NoExecute' });
  s.taintDevice('gpu.nvidia.com/gpu-r2-n1/gpu-0', { key: KEY, effect: 'None' });
  s.taintNode('gpu-r3-n1', { key: KEY, effect: 'NoSchedule' });
  const { shared } = assertCellsAgree(s);
  assert.equal(shared, 0);
  assert.ok(s.cells().domains.flatMap((d) => d.nodes).flatMap((n) => n.cells).some((c) => c.evictAt !== null), 'an eviction is scheduled');
  assert.equal(thrown(() => s.device('gpu.nvidia.com/nowhere/gpu-0')).name, 'NotFound');
  assert.equal(thrown(() => s.device('no-slashes')).name, 'NotFound');
  assert.equal(thrown(() => s.cells({ topologyKey: 1 })).name, 'InvalidArgument');
});

test('nodes join, change and leave a running session (issue 33)', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  s.cycle();
  const victim = nodesOf(s.snapshot()).find((n) => n.devices.some((d) => d.state === 'allocated'));
  const onIt = s.snapshot().pods.filter((p) => p.node === victim.name).map((p) => p.name).sort();
  assert.ok(onIt.length > 0);
  // Removed: its pods are deleted with it (pod garbage collection).
  const removal = s.removeNode(victim.name);
  assert.equal(removal.node.name, victim.name);
  assert.deepEqual(removal.deletedPods, onIt);
  const after = s.snapshot();
  assert.ok(!nodesOf(after).some((n) => n.name === victim.name));
  for (const p of onIt) assert.ok(!after.pods.some((x) => x.name === p), `${p} is gone`);
  // Back, cordoned: the next cycle puts nothing there; uncordoned, it may.
  s.addNode({ ...removal.node, unschedulable: false });
  s.cordonNode(victim.name, true);
  s.cycle();
  assert.ok(!s.snapshot().pods.some((p) => p.node === victim.name), 'nothing lands on a cordoned node');
  const relabelled = { ...removal.node, labels: { ...removal.node.labels, 'example.com/pool': 'spare' } };
  s.updateNode(relabelled);
  assert.equal(s.snapshot().domains.flatMap((d) => d.nodes).find((n) => n.name === victim.name).unschedulable, false,
    'an update replaces the node: unschedulable comes from the object');
  // A NoExecute taint through updateNode schedules evictions like taintNode.
  const busy = nodesOf(s.snapshot()).find((n) => s.snapshot().pods.some((p) => p.node === n.name));
  const node = s.node(busy.name);
  assert.equal(node.name, busy.name);
  assert.equal(s.node('no-such-node'), null);
  const report = s.updateNode({ ...node, taints: [{ key: 'example.com/maintenance', value: 'now', effect: 'NoExecute' }] });
  assert.ok(report.started.length > 0, 'the pods on it are scheduled for eviction');
  s.free();
});

test('a freed session refuses every call with a Freed error; free() twice is harmless', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  const kept = s.fork();
  assert.equal(typeof s[Symbol.dispose], 'function');
  s.free();
  s.free();
  s[Symbol.dispose]();
  for (const call of [() => s.cycle(), () => s.snapshot(), () => s.now(), () => s.fork(), () => s.explain('a/b')]) {
    const e = thrown(call);
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'Freed');
    assert.match(e.message, /^Scheduler\.\w+: this Scheduler was freed \(by free\(\) or at the end of its `using` block\)/);
    assert.equal(e.problems[0].line, e.message);
  }
  // Passing a freed session is refused alike, before it reaches the module.
  const e = thrown(() => kept.restore(s));
  assert.equal(e.name, 'Freed');
  assert.match(e.message, /^Scheduler\.restore: argument 1, a Scheduler, was freed/);
  // The fork taken before is whole.
  assert.equal(kept.cycle().units.length, 10);
  kept[Symbol.dispose]();
  assert.equal(thrown(() => kept.cycle()).name, 'Freed');
  // The module is unharmed: new sessions work.
  const fresh = g.Scheduler.fromManifests(g.demoManifests(0));
  assert.equal(fresh.cycle().units.length, 10);
  fresh.free();
});

test('`using` frees a session at the end of its block (TypeScript, as written in the README)', async () => {
  // Node 20 has Symbol.dispose but not the `using` syntax: TypeScript compiles it, as
  // it does for a TypeScript user targeting ES2022.
  const ts = (await import('../node_modules/typescript/lib/typescript.js')).default;
  const source = `
    export function run(g: typeof import('gangpack')) {
      let escaped: InstanceType<typeof g.Scheduler>;
      {
        using session = g.Scheduler.fromManifests(g.demoManifests(0));
        escaped = session;
        session.cycle();
      }
      return escaped;
    }`;
  const js = ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
  assert.match(js, /__addDisposableResource|__disposeResources/, 'compiled to dispose calls');
  const { run } = await import(`data:text/javascript,${encodeURIComponent(js)}`);
  const escaped = run(g);
  const e = thrown(() => escaped.cycle());
  assert.equal(e.name, 'Freed');
  escaped.free();
});
