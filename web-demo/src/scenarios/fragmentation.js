// Fragmentation: best fit against Stranding on the same cluster and the same arrivals.
// Four 8-GPU nodes in two racks; rack-1 already runs small jobs, so gpu-r1-n1 has 2 free
// GPUs and gpu-r1-n2 has 5, rack-2 is empty. Then a 1-GPU, a 4-GPU and a 2-GPU pod
// arrive, one cycle each, and finally a 2 × 8-GPU gang.
//
// Best fit always takes the node with the fewest free GPUs that fits: the 1-GPU pod
// goes to gpu-r1-n1 (2 → 1 free), the 4-GPU pod to gpu-r1-n2 (5 → 1), and the 2-GPU
// pod fits in neither leftover, so it breaks open gpu-r2-n1.
//
// Stranding scores against typical request shapes, here the whole-GPU requests of the
// Alibaba trace (OPENB_WHOLE_GPU_MIX, given as the session's `workloadMix`): for each
// shape, the free GPUs of a node that copies of it cannot use (stranded), weighted by
// how common the shape is; the pod goes where that drops most. The 1-GPU pod takes
// gpu-r1-n2: 5 free GPUs strand 1 for 2-GPU pods (2 + 2 + 1), 1 for 4-GPU pods and all
// 5 for 8-GPU pods; at 4 they strand only the 4 for 8-GPU pods. On gpu-r1-n1 the pod
// would strand one GPU less for 4- and 8-GPU pods but one more for 2-GPU pods (a lone
// GPU), and on an empty node 7 GPUs for 8-GPU pods. The 4-GPU pod then fills
// gpu-r1-n2's 4-GPU hole and the 2-GPU pod fills gpu-r1-n1. The same GPUs are used,
// but only Stranding still has two whole nodes for the gang. The cluster is small on
// purpose: the two sessions are drawn side by side.

import { yaml, cluster, gpuClass, running, gpuNames, DRIVER, RACK_KEY } from './build.js';

/**
 * The whole-GPU requests of the Alibaba trace the FGD paper evaluates on (openb): single
 * pods of 1, 2, 4 and 8 GPUs, 98.1 %, 0.4 %, 0.4 % and 1.1 % of them, here on the
 * scenario's DeviceClass. What Stranding scores the nodes against.
 */
export const OPENB_WHOLE_GPU_MIX = {
  shapes: [[1, 981], [2, 4], [4, 4], [8, 11]].map(([count, weight]) => ({ deviceClassName: DRIVER, count, weight })),
};

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
  summary: 'Best fit and Stranding side by side, on the same cluster and the same arrivals: a 1-GPU, '
    + 'a 4-GPU and a 2-GPU pod, then a 2 × 8-GPU gang. Best fit fills the tightest holes and strands '
    + 'single GPUs, so the gang finds one whole node and waits; Stranding, scoring against the Alibaba '
    + 'trace\'s mix of 1-, 2-, 4- and 8-GPU requests, keeps two whole nodes free and places it.',
  opening: 'The same cluster twice, one per policy: rack-1 runs four small jobs (2 GPUs free on gpu-r1-n1, 5 on gpu-r1-n2), rack-2 is empty.',
  manifests,
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: RACK_KEY,
  compare: [
    { label: 'Best fit', policy: 'BestFit' },
    { label: 'Stranding', policy: 'Stranding', workloadMix: OPENB_WHOLE_GPU_MIX },
  ],
  steps: [
    { say: 'A 1-GPU pod arrives. Free GPUs: gpu-r1-n1 2, gpu-r1-n2 5, rack-2 8 + 8.', do: single('chat', 1) },
    {
      say: 'Best fit takes the tightest node, gpu-r1-n1 (2 → 1 free); Stranding takes gpu-r1-n2 (5 → 4): its fifth GPU was stranded for 2- and 4-GPU pods, while on gpu-r1-n1 the pod would leave a lone GPU that fits only 1-GPU pods.',
      do: { op: 'cycle' },
    },
    { say: 'A 4-GPU pod arrives.', do: single('embed', 4) },
    {
      say: 'Both put it on gpu-r1-n2: best fit leaves 1 GPU free there (and 1 on gpu-r1-n1), Stranding fills its 4-GPU hole, leaving 0 (and 2 on gpu-r1-n1).',
      do: { op: 'cycle' },
    },
    { say: 'A 2-GPU pod arrives.', do: single('tune', 2) },
    {
      say: 'Best fit has only single GPUs left in rack-1 and must break open gpu-r2-n1 (8 → 6 free); Stranding fills gpu-r1-n1 exactly (2 → 0 free).',
      do: { op: 'cycle' },
    },
    {
      say: 'A training gang arrives: 2 pods × 8 GPUs, both or neither.',
      do: { op: 'submit', unit: { kind: 'gang', namespace: 'default', name: 'train', pods: 2, gpusPerPod: 8, minCount: 2 } },
    },
    {
      say: 'Both have 16 free GPUs, in different shapes: best fit 1 + 1 + 6 + 8, one whole node, so the gang waits; Stranding 8 + 8, so it is placed.',
      do: { op: 'cycle' },
    },
  ],
  focus: 'default/train',
};
