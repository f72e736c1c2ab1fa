// Fragmentation: best fit against fragmentation-aware scoring on the same cluster and
// the same arrivals. Four 8-GPU nodes in two racks; rack-1 already runs small jobs, so
// gpu-r1-n1 has 2 free GPUs and gpu-r1-n2 has 5, rack-2 is empty. Then a 1-GPU, a
// 4-GPU and a 2-GPU pod arrive, one cycle each, and finally a 2 × 8-GPU gang.
//
// Best fit always takes the node with the fewest free GPUs that fits: the 1-GPU pod
// goes to gpu-r1-n1 (2 → 1 free), the 4-GPU pod to gpu-r1-n2 (5 → 1), and the 2-GPU
// pod fits in neither leftover, so it breaks open gpu-r2-n1. Fragmentation-aware
// scoring (FGD, with the Alibaba trace's request mix) takes the node whose free
// capacity stays most usable: the 1-GPU pod goes to gpu-r1-n2 (5 → 4, a clean 4-GPU
// hole; 1 GPU left alone on gpu-r1-n1 would fit only 1-GPU pods), the 4-GPU pod fills
// that hole and the 2-GPU pod fills gpu-r1-n1. The same GPUs are used, but only
// fragmentation-aware scoring still has two whole nodes for the gang. The cluster is
// small on purpose: the two sessions are drawn side by side.

import { yaml, cluster, gpuClass, running, gpuNames, RACK_KEY } from './build.js';

function manifests() {
  const small = (name, node, devices) => running({ name, gang: false, pods: [{ node, devices }] });
  return yaml(
    'Fragmentation: two racks of two H100 nodes; rack-1 runs four small jobs.',
    gpuClass(),
    cluster({ racks: 2, nodesPerRack: 2 }),
    'gpu-r1-n1: 6 GPUs in use, 2 free.',
    small('etl', 'gpu-r1-n1', gpuNames(4)),
    small('notebook', 'gpu-r1-n1', gpuNames(2, 4)),
    'gpu-r1-n2: 3 GPUs in use, 5 free.',
    small('eval', 'gpu-r1-n2', gpuNames(2)),
    small('lint', 'gpu-r1-n2', gpuNames(1, 2)),
  );
}

const single = (name, gpus) => ({ op: 'submit', unit: { kind: 'pod', namespace: 'default', name, pods: 1, gpusPerPod: gpus } });

export default {
  id: 'fragmentation',
  title: 'Fragmentation',
  summary: 'Best fit and fragmentation-aware scoring side by side, on the same cluster and the same '
    + 'arrivals: a 1-GPU, a 4-GPU and a 2-GPU pod, then a 2 × 8-GPU gang. Best fit fills the tightest '
    + 'holes and strands single GPUs, so the gang finds one whole node and waits; fragmentation-aware '
    + 'scoring keeps two whole nodes free and places it.',
  manifests,
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: RACK_KEY,
  compare: [
    { label: 'Best fit', policy: 'BestFit' },
    { label: 'Fragmentation-aware', policy: 'FragmentationAware' },
  ],
  steps: [
    { say: 'A 1-GPU pod arrives. Free GPUs: gpu-r1-n1 2, gpu-r1-n2 5, rack-2 8 + 8.', do: single('chat', 1) },
    {
      say: 'Best fit takes the tightest node, gpu-r1-n1 (2 → 1 free); fragmentation-aware takes gpu-r1-n2 (5 → 4), since a lone free GPU fits only 1-GPU pods.',
      do: { op: 'cycle' },
    },
    { say: 'A 4-GPU pod arrives.', do: single('embed', 4) },
    {
      say: 'Both put it on gpu-r1-n2: best fit leaves 1 GPU free there (and 1 on gpu-r1-n1), fragmentation-aware leaves 0 (and 2 on gpu-r1-n1).',
      do: { op: 'cycle' },
    },
    { say: 'A 2-GPU pod arrives.', do: single('tune', 2) },
    {
      say: 'Best fit has only single GPUs left in rack-1 and must break open gpu-r2-n1; fragmentation-aware fills gpu-r1-n1 exactly.',
      do: { op: 'cycle' },
    },
    {
      say: 'A training gang arrives: 2 pods × 8 GPUs, both or neither.',
      do: { op: 'submit', unit: { kind: 'gang', namespace: 'default', name: 'train', pods: 2, gpusPerPod: 8, minCount: 2 } },
    },
    {
      say: 'Both have 16 free GPUs, in different shapes: best fit 1 + 1 + 6 + 8, one whole node, so the gang waits; fragmentation-aware 8 + 8, so it is placed.',
      do: { op: 'cycle' },
    },
  ],
  focus: 'default/train',
};
