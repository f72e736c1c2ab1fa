// Half-GPU gangs, both ways a GPU is split under DRA. rack-1 has two H100 nodes whose
// GPUs are shareable (allowMultipleAllocations, consumable memory capacity): a claim
// asks for 40Gi of one GPU and several claims share it. rack-2 has two A100 nodes with
// partitionable GPUs (shared counters, KEP-4815): each GPU is offered whole or as two
// 3g.40gb MIG halves, all drawing on the GPU's eight memory slices. Two 4-pod gangs
// wait in the queue: tune wants 40Gi of a shareable GPU per pod, infer one MIG half
// per pod, each gang in one rack. One cycle packs tune onto two H100s, two pods per
// GPU (state `shared`), and infer onto the four halves of two A100s. Then a pod asking
// for two whole A100s arrives: the counters keep it off the GPUs whose halves are in
// use, so it gets gpu-2 and gpu-3.

import { yaml, cluster, deviceClass, node, migSlices, pending, DRIVER, RACK_KEY, A100 } from './build.js';

function manifests() {
  const migNode = (name) => [node(name, { labels: { [RACK_KEY]: 'rack-2' } }), migSlices(name)];
  return yaml(
    'Half-GPU gangs: shareable H100s in rack-1, MIG-partitionable A100s in rack-2.',
    'Whole GPUs (either node type).',
    deviceClass(DRIVER, `device.driver == "${DRIVER}" && device.attributes["${DRIVER}"].type == "gpu"`),
    'GPUs that accept several claims, each taking part of the memory.',
    deviceClass('shared.gpu.nvidia.com', `device.driver == "${DRIVER}" && device.allowMultipleAllocations`),
    'MIG devices (partitions of a GPU).',
    deviceClass('mig.nvidia.com', `device.driver == "${DRIVER}" && device.attributes["${DRIVER}"].type == "mig"`),
    cluster({ racks: 1, nodesPerRack: 2, shareable: true }),
    migNode('mig-r2-n1'),
    migNode('mig-r2-n2'),
    'tune: 4 pods, each 40Gi of one shareable GPU, in one rack.',
    pending({
      namespace: 'default', name: 'tune', count: 4, deviceClass: 'shared.gpu.nvidia.com',
      capacity: { memory: '40Gi' }, topologyKey: RACK_KEY,
    }),
    'infer: 4 pods, each one 3g.40gb MIG half, in one rack.',
    pending({ namespace: 'default', name: 'infer', count: 4, gpus: 1, deviceClass: 'mig.nvidia.com', topologyKey: RACK_KEY }),
  );
}

export default {
  id: 'half-gpu',
  title: 'Half-GPU gang',
  summary: 'Two gangs whose pods each take half a GPU: tune shares H100s (two 40Gi claims on one '
    + 'shareable GPU, shown as shared), infer takes MIG halves of A100s. Then a pod asking for two '
    + 'whole A100s gets GPUs whose halves are free: shared counters keep it off the split ones.',
  opening: 'Nothing runs yet: tune (4 pods × 40Gi of a shareable H100) and infer (4 pods × one MIG half of an A100) wait in the queue.',
  manifests,
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: RACK_KEY,
  compare: undefined,
  steps: [
    {
      say: 'One cycle: tune packs two pods per H100 (gpu-0 and gpu-1 of gpu-r1-n1, 40Gi + 40Gi each); infer takes the four MIG halves of gpu-0 and gpu-1 on mig-r2-n1.',
      do: { op: 'cycle' },
    },
    {
      say: 'A pod asks for two whole A100s.',
      do: { op: 'submit', unit: { kind: 'pod', namespace: 'default', name: 'eval', pods: 1, gpusPerPod: 2, model: A100 } },
    },
    {
      say: 'It gets gpu-2 and gpu-3 of mig-r2-n1: gpu-0 and gpu-1 look idle, but their memory slices are taken by the MIG halves.',
      do: { op: 'cycle' },
    },
  ],
  focus: 'default/tune',
};
