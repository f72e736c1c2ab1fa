// Scoring policies through the package (issue 34): BestFit, Spread, Stranding and FGD by
// name, a workload mix given in the options or set on a session, the errors of a bad
// one, and FragmentationAware as FGD's deprecated alias.
//   bash scripts/wasm.sh --dev && node --test wasm/tests-js/policies.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

// GANGPACK_WASM_NODE points at another build of the package's Node entry file.
const g = await import(process.env.GANGPACK_WASM_NODE
  ? pathToFileURL(process.env.GANGPACK_WASM_NODE).href
  : '../pkg/node/index.js');

const thrown = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  assert.fail('expected a throw');
};

const CLASS = 'gpu';
/** The openb trace's whole-GPU requests: single pods of 1, 2, 4 and 8 GPUs. */
const OPENB_WHOLE = {
  shapes: [[1, 981], [2, 4], [4, 4], [8, 11]].map(([count, weight]) => ({ deviceClassName: CLASS, count, weight })),
};
/** OPENB_WHOLE as the session returns it: every field, defaults filled in. */
const OPENB_WHOLE_READ = { shapes: OPENB_WHOLE.shapes.map((x) => ({ ...x, cpu: '0', memory: '0', pods: 1 })) };

// Three empty nodes: n1 with 2 GPUs, n2 with 5, n3 with 8.
const GPUS = { n1: 2, n2: 5, n3: 8 };
const cluster = () => ({
  nodes: Object.keys(GPUS).map((name) => ({ name, allocatable: { cpu: '64', memory: '512Gi', pods: '110' } })),
  classes: [{ name: CLASS }],
  slices: Object.entries(GPUS).map(([node, n]) => ({
    name: `${node}-gpus`,
    driver: 'gpu.example.com',
    pool: { name: node, generation: 1, resourceSliceCount: 1 },
    nodeSelection: { slice: { nodeName: node } },
    devices: Array.from({ length: n }, (_, i) => ({ name: `gpu-${i}` })),
  })),
  now: '2026-01-01T00:00:00Z',
});

// The same cluster as manifests, for Scheduler.fromManifests.
const MANIFESTS = [
  'apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu\nspec:\n  selectors:\n  - cel:\n      expression: device.driver == "gpu.example.com"\n',
  ...Object.entries(GPUS).flatMap(([node, n]) => [
    `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${node}\n  creationTimestamp: "2026-01-01T00:00:00Z"\nstatus:\n  allocatable:\n    cpu: "64"\n    memory: 512Gi\n    pods: "110"\n`,
    `apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: ${node}-gpus\nspec:\n  driver: gpu.example.com\n  nodeName: ${node}\n  pool:\n    name: ${node}\n    generation: 1\n    resourceSliceCount: 1\n  devices:\n${Array.from({ length: n }, (_, i) => `  - name: gpu-${i}\n`).join('')}`,
  ]),
].join('---\n');

/** Submits a pod of `gpus` GPUs (and its claim), runs one cycle, returns the pod's node or null. */
function arrive(s, name, gpus) {
  s.addClaim({
    namespace: 'default',
    name: `${name}-gpus`,
    spec: { requests: [{ name: 'gpu', exactly: { deviceClassName: CLASS, allocationMode: { ExactCount: gpus } } }] },
  });
  s.addPod({ namespace: 'default', name, requests: { cpu: '1' }, resourceClaims: [{ name: 'gpus', resourceClaimName: `${name}-gpus` }] });
  const unit = s.cycle().units.find((u) => u.name === `default/${name}`);
  return unit.outcome === 'placed' ? unit.pods[0].node : null;
}

/** A 1-GPU, a 4-GPU and a 2-GPU pod, one cycle each, then an 8-GPU pod: where each goes (null: pending). */
function story(s) {
  const nodes = [1, 4, 2, 8].map((gpus, i) => arrive(s, `p${i}-${gpus}gpu`, gpus));
  s.free();
  return nodes;
}

// Stranding with the openb mix: the 1-GPU pod takes n2 (5 -> 4, a clean 4-GPU hole,
// where n1's last GPU would fit only 1-GPU pods), the 4-GPU pod fills that hole, the
// 2-GPU pod fills n1: n3 stays whole and the 8-GPU pod finds it. Spread breaks n3 at
// once; BestFit (the tightest node) has to break it for the 2-GPU pod.
const WHOLE_KEPT = ['n2', 'n2', 'n1', 'n3'];
const SPREAD = ['n3', 'n3', 'n2', null];
const BEST_FIT = ['n1', 'n2', 'n3', null];

test('Stranding keeps a whole 8-GPU node free that Spread and BestFit break', () => {
  const run = (options) => story(g.Scheduler.fromModel(cluster(), options));
  assert.deepEqual(run({ policy: 'Spread' }), SPREAD);
  assert.deepEqual(run({ policy: 'BestFit' }), BEST_FIT);
  assert.deepEqual(run({}), BEST_FIT, 'BestFit is the default');
  assert.deepEqual(run({ policy: 'Stranding', workloadMix: OPENB_WHOLE }), WHOLE_KEPT);
  assert.deepEqual(run({ policy: 'stranding', workloadMix: OPENB_WHOLE }), WHOLE_KEPT);
  // Observed, the mix is the pods at hand: no 8-GPU pod is in view until the last
  // arrival, so nothing asks for n3 to stay whole.
  assert.deepEqual(run({ policy: 'Stranding' }), ['n1', 'n3', 'n3', null]);
  // FGD with the same mix packs like BestFit here.
  assert.deepEqual(run({ policy: 'FGD', workloadMix: OPENB_WHOLE }), BEST_FIT);
});

test('the same through Scheduler.fromManifests, though the command line has no Stranding', () => {
  const run = (options) => {
    const s = g.Scheduler.fromManifests(MANIFESTS, { now: '2026-01-01T00:00:00Z', ...options });
    assert.deepEqual(s.warnings(), []);
    return story(s);
  };
  assert.deepEqual(run({ policy: 'spread' }), SPREAD);
  assert.deepEqual(run({}), BEST_FIT);
  assert.deepEqual(run({ policy: 'Stranding', workloadMix: OPENB_WHOLE }), WHOLE_KEPT);
  assert.deepEqual(run({ policy: 'Stranding' }), ['n1', 'n3', 'n3', null]);
  assert.deepEqual(run({ policy: 'FGD', workloadMix: OPENB_WHOLE }), BEST_FIT);
  assert.deepEqual(run({ policy: 'fgd' }), story(g.Scheduler.fromModel(cluster(), { policy: 'FGD' })));
});

test('a session loaded with Stranding holds the same state as one loaded with BestFit', () => {
  // fromManifests builds Stranding sessions in two steps (see session/kube.rs); the
  // cluster, workloads, clock and warnings must come out as a BestFit load has them.
  const demo = g.demoManifests(0);
  const best = g.Scheduler.fromManifests(demo);
  const stranding = g.Scheduler.fromManifests(demo, { policy: 'Stranding', workloadMix: OPENB_WHOLE });
  assert.deepEqual(stranding.snapshot(), best.snapshot());
  assert.deepEqual(stranding.warnings(), best.warnings());
  assert.equal(stranding.toManifests(), best.toManifests());
  assert.equal(typeof stranding.cycle().table, 'string');
  best.free();
  stranding.free();
});

test('workloadMix(): given, observed at each cycle, set and reset', () => {
  const given = g.Scheduler.fromModel(cluster(), { policy: 'Stranding', workloadMix: OPENB_WHOLE });
  assert.deepEqual(given.workloadMix(), OPENB_WHOLE_READ);
  given.free();

  const s = g.Scheduler.fromModel(cluster(), { policy: 'FGD' });
  assert.deepEqual(s.workloadMix(), { shapes: [] }, 'no pods yet: an empty observed mix');
  arrive(s, 'small', 1);
  assert.deepEqual(s.workloadMix(), {
    shapes: [{ weight: 1, cpu: '1', memory: '0', deviceClassName: CLASS, count: 1, pods: 1 }],
  });
  s.setWorkloadMix(OPENB_WHOLE);
  assert.deepEqual(s.workloadMix(), OPENB_WHOLE_READ);
  s.setWorkloadMix(null);
  assert.equal(s.workloadMix().shapes[0].weight, 1, 'back to the observed mix');
  s.free();

  const best = g.Scheduler.fromModel(cluster());
  assert.equal(best.workloadMix(), null, 'BestFit scores against no mix');
  best.setWorkloadMix(OPENB_WHOLE);
  assert.equal(best.workloadMix(), null, 'and ignores one set');
  best.free();
});

test('setWorkloadMix: a bad mix is InvalidArgument naming each field, and changes nothing', () => {
  const s = g.Scheduler.fromModel(cluster(), { policy: 'Stranding', workloadMix: OPENB_WHOLE });
  let e = thrown(() => s.setWorkloadMix({ shapes: [{ deviceClassName: CLASS, count: 0 }, { deviceClassName: '', weight: 0 }] }));
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'InvalidArgument');
  assert.deepEqual(e.problems.map((p) => [p.object, p.field]), [
    ['PodGroup "workload mix"', 'mix.shapes[0].count'],
    ['PodGroup "workload mix"', 'mix.shapes[1].weight'],
    ['PodGroup "workload mix"', 'mix.shapes[1].deviceClassName'],
  ]);
  assert.equal(e.problems[0].line, 'PodGroup "workload mix": mix.shapes[0].count: invalid value "0": must be at least 1');
  assert.equal(e.message, e.problems.map((p) => p.line).join('\n'));

  e = thrown(() => s.setWorkloadMix({ shapes: [] }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'mix.shapes');
  e = thrown(() => s.setWorkloadMix({ shapes: [{ deviceClassName: CLASS, topologyKey: 'rack' }] }));
  assert.equal(e.problems[0].field, 'mix.shapes[0].topologyKey');
  assert.match(e.problems[0].message, /more than one pod/);
  // Decoding: the path of what does not parse.
  e = thrown(() => s.setWorkloadMix({ shapes: [{ deviceClassName: CLASS, count: 'two' }] }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'mix.shapes[0].count');
  e = thrown(() => s.setWorkloadMix('openb'));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'mix');

  assert.deepEqual(s.workloadMix(), OPENB_WHOLE_READ, 'the mix is unchanged');
  s.free();
});

test('options.workloadMix: validated under its own name, refused where no policy reads it', () => {
  const bad = { shapes: [{ deviceClassName: CLASS, weight: 0 }] };
  let e = thrown(() => g.Scheduler.fromModel(cluster(), { policy: 'Stranding', workloadMix: bad }));
  assert.equal(e.name, 'InvalidArgument');
  assert.equal(e.problems[0].field, 'options.workloadMix.shapes[0].weight');
  e = thrown(() => g.Scheduler.fromManifests(MANIFESTS, { policy: 'FGD', workloadMix: bad }));
  assert.equal(e.problems[0].field, 'options.workloadMix.shapes[0].weight');

  for (const policy of [undefined, 'BestFit', 'spread']) {
    e = thrown(() => g.Scheduler.fromModel(cluster(), { policy, workloadMix: OPENB_WHOLE }));
    assert.equal(e.name, 'InvalidArgument');
    assert.equal(e.problems[0].field, 'options.workloadMix');
    assert.match(e.problems[0].message, /^(BestFit|Spread) scores against no workload mix \(only Stranding, FGD and GangAware do\)$/);
  }
});

test('unknown policies name the five known ones', () => {
  for (const f of [
    () => g.Scheduler.fromModel(cluster(), { policy: 'binpack' }),
    () => g.Scheduler.fromManifests(MANIFESTS, { policy: 'binpack' }),
    () => g.plan(MANIFESTS, { policy: 'binpack' }),
  ]) {
    const e = thrown(f);
    assert.equal(e.name, 'InvalidArgument');
    assert.equal(e.problems[0].field, 'options.policy');
    assert.equal(e.problems[0].message, 'unknown policy "binpack" (expected BestFit, Spread, Stranding, FGD or GangAware)');
  }
});

test('plan, explain, taint and runCli take every policy and a mix', () => {
  const demo = g.demoManifests(0);
  assert.equal(typeof g.plan(demo, { policy: 'FGD' }).table, 'string');
  assert.equal(g.plan(demo, { policy: 'fgd' }).table, g.plan(demo, { policy: 'FGD' }).table);
  for (const policy of ['Stranding', 'GangAware']) {
    assert.equal(typeof g.plan(demo, { policy }).table, 'string');
    assert.equal(typeof g.plan(demo, { policy, workloadMix: OPENB_WHOLE }).table, 'string');
    assert.deepEqual(g.explain(demo, null, { policy, workloadMix: OPENB_WHOLE }).warnings, []);
    assert.deepEqual(g.taint(demo, { node: 'gpu-r1-n1' }, { policy, workloadMix: OPENB_WHOLE }).warnings, []);
  }
  // The Node command's names reach the same policies as the native command's.
  const run = (policy) => g.runCli({ command: 'plan', files: [{ name: 'demo.yaml', text: demo }], options: { policy } });
  const cli = run('stranding');
  assert.equal(cli.code, run('best-fit').code, cli.errors.join('\n'));
  assert.deepEqual(cli.errors, []);
  // A baseline is simulate's alone.
  const e = thrown(() => g.plan(demo, { policy: 'Random' }));
  assert.equal(e.problems[0].field, 'options.policy');
});

test('FragmentationAware: FGD under its old name, with a deprecation warning', () => {
  const demo = g.demoManifests(0);
  const old = g.plan(demo, { policy: 'FragmentationAware' });
  const fgd = g.plan(demo, { policy: 'FGD' });
  assert.equal(old.table, fgd.table);
  assert.deepEqual(old.list, fgd.list);
  assert.deepEqual(fgd.warnings, []);
  const warning = 'options.policy: "FragmentationAware" is deprecated; it now means FGD, the policy that replaced it';
  assert.deepEqual(old.warnings, [warning]);
  assert.deepEqual(g.explain(demo, null, { policy: 'FragmentationAware' }).warnings, [warning]);
  assert.deepEqual(g.taint(demo, { node: 'gpu-r1-n1' }, { policy: 'fragmentation-aware' }).warnings,
    ['options.policy: "fragmentation-aware" is deprecated; it now means FGD, the policy that replaced it']);

  const session = g.Scheduler.fromManifests(demo, { policy: 'FragmentationAware' });
  assert.deepEqual(session.warnings(), [warning]);
  const viaFgd = g.Scheduler.fromManifests(demo, { policy: 'FGD' });
  assert.equal(session.cycle().table, viaFgd.cycle().table);
  session.free();
  viaFgd.free();

  const model = g.Scheduler.fromModel(cluster(), { policy: 'fragmentation_aware' });
  assert.deepEqual(model.warnings(), ['options.policy: "fragmentation_aware" is deprecated; it now means FGD, the policy that replaced it']);
  assert.deepEqual(story(model), story(g.Scheduler.fromModel(cluster(), { policy: 'FGD' })));

  // The command line prints what the native command prints: no warning of its own.
  const cli = g.runCli({ command: 'plan', files: [{ name: 'demo.yaml', text: demo }], options: { policy: 'fragmentation-aware' } });
  assert.equal(cli.stdout, g.runCli({ command: 'plan', files: [{ name: 'demo.yaml', text: demo }], options: { policy: 'fgd' } }).stdout);
});
