// The deadlock that isn't. Two pre-training jobs of 6 × 8 GPUs arrive together on a
// cluster of eight empty 8-GPU nodes: each fits alone, both together need twelve
// nodes. A scheduler that binds pod by pod interleaves them (kube-scheduler's queue
// takes the pods in turn), gives each job four nodes and stops: eight pods hold every
// GPU, both jobs wait for the two pods each is missing, and neither can ever start.
// gangpack places a PodGroup whole or not at all, so llama-pretrain gets six nodes and
// mixtral-pretrain holds nothing; its explanation says two of its six pods would fit.
// When llama-pretrain finishes, the next cycle starts mixtral-pretrain.

import { yaml, cluster, gpuClass, RACK_KEY } from './build.js';

function manifests() {
  return yaml(
    'The deadlock that is not: two racks of four empty H100 nodes.',
    gpuClass(),
    cluster({ racks: 2, nodesPerRack: 4 }),
  );
}

const job = (name) => ({
  op: 'submit',
  unit: { kind: 'gang', namespace: 'ml', name, pods: 6, gpusPerPod: 8, minCount: 6 },
});

export default {
  id: 'deadlock',
  title: "The deadlock that isn't",
  summary: 'Two 6 × 8-GPU jobs arrive on eight empty nodes: either fits, both do not. Pod by pod, '
    + 'each would get four nodes and both would wait forever. gangpack places one job whole; the '
    + 'other holds no GPU at all and its explanation says what it waits for. When the first '
    + 'finishes, the second starts.',
  opening: 'Two racks of four empty H100 nodes (64 GPUs); no job has arrived yet.',
  manifests,
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: RACK_KEY,
  compare: undefined,
  steps: [
    { say: 'llama-pretrain arrives: 6 pods × 8 GPUs, all or nothing.', do: job('llama-pretrain') },
    { say: 'mixtral-pretrain arrives too: another 6 × 8. Together they need 12 nodes; there are 8.', do: job('mixtral-pretrain') },
    {
      say: 'One cycle: llama-pretrain is placed whole on six nodes; mixtral-pretrain gets nothing (2 of its 6 pods would fit) instead of a useless half.',
      do: { op: 'cycle' },
    },
    { say: 'llama-pretrain finishes: its pods are deleted.', do: { op: 'remove', unit: { podGroup: 'ml/llama-pretrain' } } },
    { say: 'The next cycle places mixtral-pretrain whole.', do: { op: 'cycle' } },
  ],
  focus: 'ml/mixtral-pretrain',
};
