// The CLI demo's cluster (`gangpack demo --manifests`): four racks of eight HGX H100
// nodes, busy with training gangs and inference pods, and a queue of pending work.
// One cycle shows everything the engine does at once: a high-priority inference gang
// preempts four low-priority batch pods (at equal priority a PodGroup outranks lone
// pods, so the sweep gang keeps running), inference pods land on the GPUs left free, and
// a rack-local pre-training gang stays pending with an explanation. The clock is the
// manifests' latest timestamp, as `gangpack plan` takes it.

export default {
  id: 'demo',
  title: "The CLI demo's cluster",
  summary: 'Four racks of eight H100 nodes, already busy, with a queue of gangs and pods. '
    + 'One cycle: the inference gang llama-405b-serve preempts four low-priority embed-batch pods '
    + '(lone pods go before a gang of the same priority), the chat and embed pods fill free GPUs, '
    + 'and gpt-moe-pretrain waits: select it to see why.',
  opening: 'Four racks of eight H100 nodes, already busy, and a queue of pending gangs and pods (the workloads list); nothing has been scheduled yet.',
  manifests: (api) => api.demoManifests(0),
  options: { now: '2026-11-05T08:00:00Z' },
  topologyKey: 'topology.kubernetes.io/rack',
  compare: undefined,
  steps: [
    { say: 'One scheduling cycle over the queue, highest priority first.', do: { op: 'cycle' } },
  ],
  focus: 'ml-training/gpt-moe-pretrain',
};
