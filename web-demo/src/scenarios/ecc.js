// ECC error mid-training. A 4 × 8-GPU training gang that must stay in one rack lands
// in rack-2, the tightest rack that fits it (rack-1 serves inference; a notebook uses
// one node of rack-2, so rack-2 has exactly four free nodes). Then the driver reports
// an uncorrectable ECC error on one GPU the gang holds and taints it NoExecute: its pod
// must go, and because the gang's disruptionMode is All, so does every other worker (a
// partial all-reduce job is useless). The workload controller recreates the pods; the
// next cycle cannot use rack-2 any more (only three clean free nodes are left there)
// and places the whole gang in rack-3, away from the broken GPU.

import { yaml, cluster, gpuClass, priorityClass, running, gpuNames, nodeName, RACK_KEY } from './build.js';

/** The GPU that fails: one of the eight the gang's worker train-1 gets on gpu-r2-n3. */
export const BROKEN_GPU = 'gpu.nvidia.com/gpu-r2-n3/gpu-5';

function manifests() {
  const n = (rack, i) => nodeName('gpu', rack, i);
  const serving = (name, node, devices) => running({
    namespace: 'inference', name, gang: false, priority: 100000, priorityClassName: 'inference-high',
    pods: [{ node, devices }],
  });
  return yaml(
    'ECC error mid-training: three racks of five H100 nodes.',
    gpuClass(),
    priorityClass('inference-high', 100000),
    cluster({ racks: 3, nodesPerRack: 5 }),
    'rack-1 serves inference: fewer than four free nodes are left there.',
    serving('chat', n(1, 1), gpuNames(8)),
    serving('embed', n(1, 2), gpuNames(4)),
    'A notebook on gpu-r2-n1: rack-2 has exactly four free nodes, rack-3 five.',
    serving('notebook', n(2, 1), gpuNames(2)),
  );
}

export default {
  id: 'ecc',
  title: 'ECC error mid-training',
  summary: 'A 4 × 8-GPU training gang runs in one rack when one of its GPUs reports an uncorrectable '
    + 'ECC error. The NoExecute device taint evicts not just the pod on that GPU but the whole gang '
    + '(disruptionMode All); the controller recreates it and the next cycle places all four workers '
    + 'together in another rack. Watch the red GPU and where the gang goes.',
  opening: 'Three racks of five H100 nodes: rack-1 serves inference (chat, embed), a notebook holds two GPUs of gpu-r2-n1; the training job has not arrived yet.',
  manifests,
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: RACK_KEY,
  compare: undefined,
  steps: [
    {
      say: 'A training job arrives: 4 workers × 8 GPUs, all in one rack, evicted together (disruptionMode All).',
      do: {
        op: 'submit',
        unit: {
          kind: 'gang', namespace: 'default', name: 'train', pods: 4, gpusPerPod: 8, minCount: 4,
          topologyKey: RACK_KEY, disruptionMode: 'all',
        },
      },
    },
    {
      say: 'Best fit puts the gang in rack-2, the tightest rack with four free nodes.',
      do: { op: 'cycle' },
    },
    {
      say: 'gpu-5 of gpu-r2-n3 (held by train-1) reports an uncorrectable ECC error: the driver taints it NoExecute. '
        + 'All four workers are due for eviction now (the badges); it happens when the clock moves.',
      do: {
        op: 'taint',
        target: { device: BROKEN_GPU },
        taint: { key: 'gpu.nvidia.com/ecc', value: 'uncorrectable', effect: 'NoExecute' },
      },
    },
    {
      say: 'The clock moves on thirty seconds and the evictions are carried out: train-1 for the taint, the other three with it (the whole gang). The controller recreates all four, pending.',
      do: { op: 'advance', seconds: 30 },
    },
    {
      say: 'The next cycle places the gang whole in rack-3: rack-2 has only three clean free nodes left.',
      do: { op: 'cycle' },
    },
  ],
  focus: 'default/train',
};
