// 1,000 nodes × 8 GPUs: 25 racks of 40 H100 nodes (8,000 GPUs), about 60 % in use,
// for a feel of the engine at scale (and the page's performance measurement). Each
// rack runs one rack-local pre-training gang of 12 to 20 whole nodes, and a run of
// nodes holding a changing mix of 1-, 2- and 4-GPU serving pods until the rack's usage
// reaches about 192 of its 320 GPUs; the rest of the rack is empty. So racks differ in
// how many whole nodes they have free (10 to 14), and the partly used nodes leave
// holes of every size. The steps submit a rack-local 12 × 8 gang (it fits only in the
// racks with at least twelve whole free nodes), an 8 × 4 gang, 32 single-GPU pods, one
// cycle, then a 16 × 8 gang that no rack can hold: it stays pending with its
// explanation (at most 14 of its 16 pods fit in one rack).

import { yaml, cluster, gpuClass, priorityClass, running, gpuNames, nodeName, RACK_KEY } from './build.js';

export const RACKS = 25;
export const NODES_PER_RACK = 40;
/** GPUs in use per rack after loading: 60 % of 320. */
export const USED_PER_RACK = 192;

/** The serving pods (GPUs each) on one partly used node, cycling along the rack. */
const NODE_MIXES = [[4, 4], [4, 2], [2, 1], [4, 2, 1], [4, 1], [2, 2, 2], [1], [4, 2, 1, 1]];

/** The running objects of rack `r` (from 1). */
function rackLoad(r) {
  const out = [];
  const gangNodes = 12 + (r % 9);
  out.push(running({
    namespace: 'train', name: `pretrain-r${r}`, topologyKey: RACK_KEY, priority: 1000, priorityClassName: 'training',
    pods: Array.from({ length: gangNodes }, (_, i) => ({ node: nodeName('gpu', r, i + 1), devices: gpuNames(8) })),
  }));
  let used = gangNodes * 8;
  for (let n = gangNodes + 1, k = r; n <= NODES_PER_RACK && used < USED_PER_RACK; n++, k++) {
    let first = 0;
    NODE_MIXES[k % NODE_MIXES.length].forEach((size, j) => {
      out.push(running({
        namespace: 'serve', name: `svc-r${r}-n${n}-${j}`, gang: false, priority: 1000, priorityClassName: 'training',
        pods: [{ node: nodeName('gpu', r, n), devices: gpuNames(size, first) }],
      }));
      first += size;
      used += size;
    });
  }
  return out;
}

let text;

/** The manifests (built once: about 4 MB of YAML). */
function manifests() {
  if (!text) {
    const load = [];
    for (let r = 1; r <= RACKS; r++) load.push(rackLoad(r));
    text = yaml(
      `${RACKS} racks × ${NODES_PER_RACK} H100 nodes × 8 GPUs, about 60 % in use.`,
      gpuClass(),
      priorityClass('training', 1000),
      cluster({ racks: RACKS, nodesPerRack: NODES_PER_RACK }),
      load,
    );
  }
  return text;
}

export default {
  id: 'large',
  title: '1,000 nodes × 8 GPUs',
  summary: '25 racks of 40 H100 nodes, 8,000 GPUs, about 60 % in use by rack-local training gangs '
    + 'and a mix of small serving pods. A few gangs and pods arrive and one cycle places them; '
    + 'then a 16 × 8-GPU gang that no rack can hold waits, and its explanation says what is missing.',
  opening: '8,000 GPUs, about 60 % in use: each rack runs a rack-local training gang and small serving pods; nothing is pending yet.',
  manifests,
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: RACK_KEY,
  compare: undefined,
  steps: [
    {
      say: 'A 12 × 8-GPU training gang arrives, one rack: only racks with at least twelve whole free nodes can hold it.',
      do: {
        op: 'submit',
        unit: { kind: 'gang', namespace: 'train', name: 'llama-70b', pods: 12, gpusPerPod: 8, minCount: 12, topologyKey: RACK_KEY },
      },
    },
    {
      say: 'An 8 × 4-GPU fine-tuning gang arrives, one rack.',
      do: {
        op: 'submit',
        unit: { kind: 'gang', namespace: 'train', name: 'mixtral-ft', pods: 8, gpusPerPod: 4, minCount: 8, topologyKey: RACK_KEY },
      },
    },
    {
      say: '32 single-GPU chat pods arrive.',
      do: { op: 'submit', unit: { kind: 'pod', namespace: 'serve', name: 'chat', pods: 32, gpusPerPod: 1 } },
    },
    { say: 'One cycle places all of them.', do: { op: 'cycle' } },
    {
      say: 'A 16 × 8-GPU gang arrives, one rack.',
      do: {
        op: 'submit',
        unit: { kind: 'gang', namespace: 'train', name: 'gpt-moe', pods: 16, gpusPerPod: 8, minCount: 16, topologyKey: RACK_KEY },
      },
    },
    { say: 'No rack has sixteen whole free nodes (the emptiest have fourteen): it waits, holding nothing.', do: { op: 'cycle' } },
  ],
  focus: 'train/gpt-moe',
};
