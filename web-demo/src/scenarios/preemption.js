// Preemption. Two racks of four H100 nodes, every GPU busy with low-priority research
// work: rack-1 runs two 2 × 8-GPU gangs (llama-ft since last night, bert-pt since
// 07:30), rack-2 two sweeps of four 4-GPU pods each. A high-priority serving gang of
// 2 × 8 GPUs that must stay in one rack arrives. It needs two whole nodes of one rack:
// one 2-pod gang of rack-1, or both sweeps (eight pods) in rack-2. The cheapest victim
// set (kube-scheduler's criteria, applied to whole gangs) has the fewest victim pods,
// and of the two 2-pod gangs the one that started last (bert-pt) loses the least
// work. bert-pt is evicted whole (its disruptionMode is All), the serving gang takes
// its two nodes, and bert-pt goes back to the queue, pending; the other gangs keep
// running.

import { yaml, cluster, gpuClass, priorityClass, running, gpuNames, nodeName, RACK_KEY } from './build.js';

function manifests() {
  const n = (rack, i) => nodeName('gpu', rack, i);
  const research = (name, created, pods, topologyKey) => running({
    namespace: 'research', name, priority: 1000, priorityClassName: 'batch-low', topologyKey, created, pods,
  });
  return yaml(
    'Preemption: two racks of four H100 nodes, every GPU in use by low-priority work.',
    gpuClass(),
    priorityClass('batch-low', 1000),
    priorityClass('serving-high', 100000),
    cluster({ racks: 2, nodesPerRack: 4 }),
    'rack-1: two rack-local 2 × 8-GPU training gangs.',
    research('llama-ft', '2026-11-04T20:00:00Z', [
      { node: n(1, 1), devices: gpuNames(8) }, { node: n(1, 2), devices: gpuNames(8) },
    ], RACK_KEY),
    research('bert-pt', '2026-11-05T07:30:00Z', [
      { node: n(1, 3), devices: gpuNames(8) }, { node: n(1, 4), devices: gpuNames(8) },
    ], RACK_KEY),
    'rack-2: two sweeps of four 4-GPU pods, half a node each.',
    research('sweep-a', '2026-11-05T07:00:00Z', [1, 2, 3, 4].map((i) => ({ node: n(2, i), devices: gpuNames(4) }))),
    research('sweep-b', '2026-11-05T07:45:00Z', [1, 2, 3, 4].map((i) => ({ node: n(2, i), devices: gpuNames(4, 4) }))),
  );
}

export default {
  id: 'preemption',
  title: 'Preemption',
  summary: 'Every GPU is busy with low-priority gangs when a high-priority serving gang arrives. '
    + 'gangpack evicts exactly one whole gang, the cheapest one (bert-pt: two pods, the youngest), '
    + 'instead of scattered pods of several gangs, and places the serving gang on its nodes. '
    + 'bert-pt waits in the queue; the other gangs keep running.',
  opening: 'Every GPU is in use by low-priority research work: two 2 × 8-GPU gangs in rack-1 (llama-ft, and bert-pt, selected), two sweeps of 4-GPU pods in rack-2.',
  manifests,
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: RACK_KEY,
  compare: undefined,
  steps: [
    {
      say: 'A high-priority serving gang arrives: 2 pods × 8 GPUs in one rack. No GPU is free.',
      do: {
        op: 'submit',
        unit: {
          kind: 'gang', namespace: 'serving', name: 'llama-serve', pods: 2, gpusPerPod: 8, minCount: 2,
          topologyKey: RACK_KEY, priority: 100000,
        },
      },
    },
    {
      say: 'It preempts bert-pt, whole: two victim pods (clearing two nodes of rack-2 would take both sweeps, eight pods), and younger than llama-ft, so the least work is lost. The serving gang takes gpu-r1-n3 and gpu-r1-n4.',
      do: { op: 'cycle' },
    },
    {
      say: 'bert-pt is pending again; nothing of lower priority is left to evict for it, so it waits.',
      do: { op: 'cycle' },
    },
  ],
  focus: 'research/bert-pt',
};
