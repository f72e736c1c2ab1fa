// The metrics the answers panel shows (../src/panel.js `metrics`), on the real engine
// (the wasm Node build): fragmentation is measured against the largest one-pod shape a
// node can hold, so an idle cluster is 0 % fragmented and scattered free GPUs are not.
//
//   cd web-demo && node --test test/

import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as g from '../../wasm/pkg/node/index.js';
import { apply } from '../src/actions.js';
import { fragmentationAbout, metrics } from '../src/panel.js';

const doc = (...parts) => parts.join('\n---\n');
const NODE = (name) => `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${name}\nstatus:\n  allocatable:\n    cpu: "64"\n    memory: 512Gi\n    pods: "110"`;
const CLASS = 'apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu.nvidia.com\nspec:\n  selectors:\n  - cel:\n      expression: device.driver == "gpu.nvidia.com"';
const SLICE = (node, gpus) => `apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: ${node}-gpus\nspec:\n  driver: gpu.nvidia.com\n  nodeName: ${node}\n  pool:\n    name: ${node}\n    generation: 1\n    resourceSliceCount: 1\n  devices:\n${Array.from({ length: gpus }, (_, i) => `  - name: gpu-${i}`).join('\n')}`;

function measure(session) {
  return metrics(session.cells(), session.snapshot({ devices: false }), session.capacityReport());
}

test('an idle one-GPU cluster is 0 % fragmented, measured against 1-GPU pods', () => {
  const s = g.Scheduler.fromManifests([{ name: 'one.yaml', text: doc(NODE('solo'), CLASS, SLICE('solo', 1)) }], { now: '2026-11-05T08:00:00Z' });
  const m = measure(s);
  s.free();
  assert.equal(m.gpus, 1);
  assert.equal(m.fragmentationShape, 1);
  assert.equal(m.fragmentation, 0);
  assert.match(fragmentationAbout(m), /any free GPU can run a 1-GPU pod/);
});

test('on 8-GPU nodes: idle is 0 %, free GPUs scattered so that no 8-GPU pod fits are 100 %', () => {
  const s = g.Scheduler.fromManifests([{ name: 'two.yaml', text: doc(NODE('a'), NODE('b'), CLASS, SLICE('a', 8), SLICE('b', 8)) }], { now: '2026-11-05T08:00:00Z' });
  let m = measure(s);
  assert.equal(m.fragmentationShape, 8);
  assert.equal(m.fragmentation, 0, 'two whole free nodes');
  const book = new Map();
  // Two 4-GPU pods, spread one per node (Spread is not asked for: best fit would pack
  // them onto one node, so ask for 5 GPUs each, which cannot share a node).
  apply(s, { op: 'submit', unit: { kind: 'pods', name: 'p', pods: 2, gpusPerPod: 5 } }, book);
  apply(s, { op: 'cycle' }, book);
  m = measure(s);
  s.free();
  assert.equal(m.allocated, 10);
  // 3 + 3 free GPUs, none usable by an 8-GPU pod.
  assert.equal(m.fragmentation, 100);
  assert.match(fragmentationAbout(m), /an 8-GPU pod cannot use because fewer than 8 are free on their node/);
});
