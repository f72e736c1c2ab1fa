// Small builders for the scenarios' clusters: each returns Kubernetes objects (plain
// JSON, in Kubernetes' own spelling, as `kubectl get -o yaml` shows them) and `yaml`
// turns any mix of objects and arrays of objects into multi-document YAML text, the
// input of `Scheduler.fromManifests`.
//
// The shapes follow the CLI demo's manifests (`gangpack demo --manifests`): a Node per
// machine, one ResourceSlice per node (one pool per node, pool name = node name), a
// running pod has `spec.nodeName` and its ResourceClaim `status.allocation` plus
// `status.reservedFor` naming the pod. Everything is deterministic (no clocks, no
// randomness), so a scenario loads the same cluster every time.
//
// Pure ES module without dependencies: runs in browsers and in Node.

/** The NVIDIA DRA driver's name (also the name of the DeviceClass of all its GPUs). */
export const DRIVER = 'gpu.nvidia.com';
/** The node label the scenarios group nodes by. */
export const RACK_KEY = 'topology.kubernetes.io/rack';
/** Creation time of the cluster objects (before every scenario's clock). */
export const CLUSTER_CREATED = '2026-11-02T09:00:00Z';
/** Default creation time of running workloads. */
export const WORKLOAD_CREATED = '2026-11-05T06:00:00Z';

export const H100 = 'NVIDIA H100 80GB HBM3';
export const A100 = 'NVIDIA A100-SXM4-80GB';

// ----------------------------------------------------------------------------- YAML

const PLAIN_KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;
// Strings written without quotes: no YAML indicator first, no blanks, no ':' last,
// nothing YAML would read as another type (numbers, booleans, null).
const PLAIN_STRING = /^[A-Za-z_/][A-Za-z0-9_./:@-]*(?<!:)$/;
const NOT_A_STRING = /^(true|false|yes|no|on|off|null|y|n|~)$/i;
// Kubernetes quantities with a unit (`80Gi`, `500m`) are strings to YAML too.
const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P)$/;

function scalar(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = String(v);
  return (PLAIN_STRING.test(s) && !NOT_A_STRING.test(s)) || QUANTITY.test(s) ? s : JSON.stringify(s);
}

function isBlock(v) {
  return v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);
}

function inline(v) {
  if (Array.isArray(v)) return '[]';
  if (v !== null && typeof v === 'object') return '{}';
  return scalar(v);
}

/** The lines of a non-empty object or array, indented by `pad` spaces. */
function lines(value, pad) {
  const sp = ' '.repeat(pad);
  const out = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (!isBlock(item)) {
        out.push(`${sp}- ${inline(item)}`);
        continue;
      }
      // The item's first line goes on the dash; the rest stays indented under it.
      const inner = lines(item, pad + 2);
      out.push(`${sp}- ${inner[0].slice(pad + 2)}`, ...inner.slice(1));
    }
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const key = PLAIN_KEY.test(k) ? k : JSON.stringify(k);
    if (!isBlock(v)) out.push(`${sp}${key}: ${inline(v)}`);
    // Lists sit at their key's indentation, as kubectl prints them.
    else out.push(`${sp}${key}:`, ...lines(v, Array.isArray(v) ? pad : pad + 2));
  }
  return out;
}

/**
 * Multi-document YAML of the objects given (objects or arrays of them, nested any
 * depth), `---` between documents. A string among them is copied verbatim (a comment).
 */
export function yaml(...parts) {
  const docs = [];
  let comment = '';
  for (const o of parts.flat(Infinity)) {
    if (typeof o === 'string') {
      comment += o.split('\n').map((l) => `# ${l}`.trimEnd()).join('\n') + '\n';
      continue;
    }
    docs.push(comment + lines(o, 0).join('\n') + '\n');
    comment = '';
  }
  return docs.join('---\n');
}

// ------------------------------------------------------------------------ the cluster

/** A node name: `gpu-r1-n1` for rack 1, node 1 (both counted from 1). */
export function nodeName(prefix, rack, n) {
  return `${prefix}-r${rack}-n${n}`;
}

/** A device id as the session names devices: `driver/pool/device`. */
export function deviceId(node, index, { driver = DRIVER, device = 'gpu' } = {}) {
  return `${driver}/${node}/${device}-${index}`;
}

/** A Node with its labels and allocatable resources. */
export function node(name, { labels = {}, cpu = '192', memory = '2048Gi' } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      creationTimestamp: CLUSTER_CREATED,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...labels },
    },
    status: { allocatable: { cpu, memory, pods: '110' } },
  };
}

/**
 * One GPU as the NVIDIA DRA driver publishes it: `gpu-<index>`, its model, index and
 * NUMA node (the first half of the GPUs on NUMA node 0), and its memory. With
 * `shareable`, the GPU accepts several claims (`allowMultipleAllocations`), each
 * consuming part of its memory (consumable capacity, in steps of `shareStep`).
 */
export function gpu(index, { model = H100, count = 8, memory = '80Gi', shareable = false, shareStep = '10Gi' } = {}) {
  const capacity = shareable
    ? { memory: { value: memory, requestPolicy: { default: memory, validRange: { min: shareStep, step: shareStep } } } }
    : { memory: { value: memory } };
  return {
    name: `gpu-${index}`,
    attributes: {
      type: { string: 'gpu' },
      productName: { string: model },
      index: { int: index },
      numaNode: { int: index < count / 2 ? 0 : 1 },
    },
    capacity,
    ...(shareable ? { allowMultipleAllocations: true } : {}),
  };
}

/**
 * A ResourceSlice of node `onNode`'s own devices: one pool per node, named after it
 * (`slices` slices in the pool). `content` is `{ devices }` or `{ sharedCounters }`.
 */
export function slice(onNode, content, { driver = DRIVER, name = `${onNode}-${driver}`, slices = 1 } = {}) {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name, creationTimestamp: CLUSTER_CREATED },
    spec: {
      driver,
      nodeName: onNode,
      pool: { name: onNode, generation: 1, resourceSliceCount: slices },
      ...content,
    },
  };
}

/**
 * `racks` × `nodesPerRack` GPU nodes named `<prefix>-r<rack>-n<node>`, labelled
 * `rackKey: rack-<rack>`, with `cpu` and `memory` allocatable, each with a
 * ResourceSlice of `gpusPerNode` GPUs of `model` with `gpuMemory` each (`shareable`:
 * see `gpu`). Returns the Nodes, then the slices.
 */
export function cluster({
  racks = 1,
  nodesPerRack = 4,
  gpusPerNode = 8,
  model = H100,
  prefix = 'gpu',
  rackKey = RACK_KEY,
  firstRack = 1,
  cpu,
  memory,
  gpuMemory,
  shareable = false,
} = {}) {
  const nodes = [];
  const slices = [];
  for (let r = firstRack; r < firstRack + racks; r++) {
    for (let n = 1; n <= nodesPerRack; n++) {
      const name = nodeName(prefix, r, n);
      nodes.push(node(name, { labels: { [rackKey]: `rack-${r}` }, cpu, memory }));
      const devices = [];
      for (let i = 0; i < gpusPerNode; i++) {
        devices.push(gpu(i, { model, count: gpusPerNode, memory: gpuMemory, shareable }));
      }
      slices.push(slice(name, { devices }));
    }
  }
  return [...nodes, ...slices];
}

/**
 * The slices of a node whose GPUs are partitionable into MIG devices (KEP-4815), as
 * the NVIDIA driver publishes them: one slice with a counter set per GPU (its eight
 * memory slices), one with the devices: per GPU the full GPU, consuming all eight,
 * and two `3g.40gb` halves consuming four each, so a half GPU blocks the full one
 * and leaves the other half available. Attributes `type` (`gpu` or `mig`),
 * `profile`, `parentIndex`. Both slices form the node's pool.
 */
export function migSlices(onNode, { gpus = 8, model = A100, driver = DRIVER } = {}) {
  const memorySlices = (from, to) => Object.fromEntries(
    Array.from({ length: to - from }, (_, i) => [`memory-slice-${from + i}`, { value: '1' }]),
  );
  const sharedCounters = [];
  const devices = [];
  for (let g = 0; g < gpus; g++) {
    const counterSet = `gpu-${g}-counter-set`;
    sharedCounters.push({ name: counterSet, counters: memorySlices(0, 8) });
    devices.push({
      name: `gpu-${g}`,
      attributes: { type: { string: 'gpu' }, productName: { string: model }, index: { int: g } },
      capacity: { memory: { value: '80Gi' } },
      consumesCounters: [{ counterSet, counters: memorySlices(0, 8) }],
    });
    for (const first of [0, 4]) {
      devices.push({
        name: `gpu-${g}-mig-3g40gb-${first}`,
        attributes: {
          type: { string: 'mig' },
          profile: { string: '3g.40gb' },
          productName: { string: model },
          parentIndex: { int: g },
        },
        capacity: { memory: { value: '40Gi' } },
        consumesCounters: [{ counterSet, counters: memorySlices(first, first + 4) }],
      });
    }
  }
  return [
    slice(onNode, { sharedCounters }, { driver, name: `${onNode}-${driver}-counters`, slices: 2 }),
    slice(onNode, { devices }, { driver, name: `${onNode}-${driver}-devices`, slices: 2 }),
  ];
}

/** A DeviceClass selecting devices with a CEL expression. */
export function deviceClass(name, cel) {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'DeviceClass',
    metadata: { name, creationTimestamp: CLUSTER_CREATED },
    spec: { selectors: [{ cel: { expression: cel } }] },
  };
}

/** The DeviceClass of every GPU of the NVIDIA driver (`gpu.nvidia.com`). */
export function gpuClass(name = DRIVER) {
  return deviceClass(name, `device.driver == "${DRIVER}"`);
}

/** A PriorityClass (`PreemptLowerPriority`). */
export function priorityClass(name, value) {
  return {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name, creationTimestamp: CLUSTER_CREATED },
    value,
    globalDefault: false,
    preemptionPolicy: 'PreemptLowerPriority',
  };
}

// ---------------------------------------------------------------------------- workloads

/** A stable UID for an object name (FNV-1a, spread over the UUID's hex digits). */
export function uid(key) {
  let hex = '';
  for (let seed = 0; hex.length < 32; seed++) {
    let h = 2166136261 ^ seed;
    for (const c of key) h = Math.imul(h ^ c.codePointAt(0), 16777619);
    hex += (h >>> 0).toString(16).padStart(8, '0');
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A PodGroup: a gang of `minCount`, all pods in one domain of `topologyKey` when
 * given, evicted whole (`disruptionMode` `all`) or pod by pod (`single`).
 */
export function podGroup({
  namespace = 'default',
  name,
  minCount,
  topologyKey,
  disruptionMode = 'all',
  priority = 0,
  priorityClassName,
  created = WORKLOAD_CREATED,
}) {
  return {
    apiVersion: 'scheduling.k8s.io/v1beta1',
    kind: 'PodGroup',
    metadata: { name, namespace, creationTimestamp: created },
    spec: {
      schedulingPolicy: { gang: { minCount } },
      ...(topologyKey ? { schedulingConstraints: { topology: [{ key: topologyKey }] } } : {}),
      disruptionMode: { [disruptionMode]: {} },
      ...(priorityClassName ? { priorityClassName } : {}),
      priority,
      preemptionPolicy: 'PreemptLowerPriority',
    },
  };
}

/**
 * A pod with one container asking for `cpu` and `memory`, its GPUs through the
 * ResourceClaim `claim` (if any), a member of PodGroup `group` (if any), bound to
 * `nodeName` (if given: it runs there).
 */
export function pod({
  namespace = 'default',
  name,
  group,
  claim,
  nodeName: boundTo,
  priority = 0,
  priorityClassName,
  cpu = '8',
  memory = '64Gi',
  tolerations,
  created = WORKLOAD_CREATED,
}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: uid(`${namespace}/${name}`), creationTimestamp: created },
    spec: {
      containers: [{
        name: 'main',
        image: 'nvcr.io/nvidia/pytorch:25.10-py3',
        resources: {
          requests: { cpu, memory },
          limits: { memory },
          ...(claim ? { claims: [{ name: 'gpus' }] } : {}),
        },
      }],
      ...(boundTo ? { nodeName: boundTo } : {}),
      ...(priorityClassName ? { priorityClassName } : {}),
      priority,
      preemptionPolicy: 'PreemptLowerPriority',
      ...(claim ? { resourceClaims: [{ name: 'gpus', resourceClaimName: claim }] } : {}),
      schedulerName: 'default-scheduler',
      ...(group ? { schedulingGroup: { podGroupName: group } } : {}),
      ...(tolerations ? { tolerations } : {}),
    },
    status: boundTo
      ? { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: created }] }
      : { phase: 'Pending' },
  };
}

/**
 * A ResourceClaim for `count` devices of `deviceClass` (or, with `capacity`, one
 * device and that much of its consumable capacity, e.g. `{ memory: '40Gi' }`).
 * Allocated when `allocation` is given: `{ node, devices: ['gpu-0', ...] }` (device
 * names in the node's pool; `consumed` for shares), reserved for pod `reservedFor`.
 */
export function claim({
  namespace = 'default',
  name,
  deviceClass: cls = DRIVER,
  count = 1,
  capacity,
  allocation,
  reservedFor,
  created = WORKLOAD_CREATED,
}) {
  const exactly = { deviceClassName: cls, allocationMode: 'ExactCount', count };
  if (capacity) exactly.capacity = { requests: capacity };
  const obj = {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name, namespace, creationTimestamp: created },
    spec: { devices: { requests: [{ name: 'gpus', exactly }] } },
  };
  if (allocation) {
    const pool = allocation.pool ?? allocation.node;
    obj.status = {
      allocation: {
        devices: {
          results: allocation.devices.map((device, i) => ({
            device,
            driver: allocation.driver ?? DRIVER,
            pool,
            request: 'gpus',
            ...(allocation.shareIDs ? { shareID: allocation.shareIDs[i] } : {}),
            ...(capacity ? { consumedCapacity: capacity } : {}),
          })),
        },
        nodeSelector: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [allocation.node] }] }],
        },
      },
      ...(reservedFor ? {
        reservedFor: [{ name: reservedFor, resource: 'pods', uid: uid(`${namespace}/${reservedFor}`) }],
      } : {}),
    };
  }
  return obj;
}

/** `gpu-0` … `gpu-(count-1)` from `first`: the device names of a pod's allocation. */
export function gpuNames(count, first = 0) {
  return Array.from({ length: count }, (_, i) => `gpu-${first + i}`);
}

/**
 * A workload that already runs: a PodGroup (unless `gang: false`) and its pods, each
 * bound with its own allocated claim. `pods` is a list of `{ node, devices }` (device
 * names in that node's pool); pod i is `<name>-<i>` with claim `<name>-<i>-gpus`.
 */
export function running({
  namespace = 'default',
  name,
  pods,
  gang = true,
  minCount = pods.length,
  topologyKey,
  disruptionMode = 'all',
  priority = 0,
  priorityClassName,
  cpu,
  memory,
  created = WORKLOAD_CREATED,
}) {
  const out = [];
  if (gang) out.push(podGroup({ namespace, name, minCount, topologyKey, disruptionMode, priority, priorityClassName, created }));
  pods.forEach((p, i) => {
    const podName = gang || pods.length > 1 ? `${name}-${i}` : name;
    const claimName = `${podName}-gpus`;
    out.push(pod({
      namespace,
      name: podName,
      group: gang ? name : undefined,
      claim: claimName,
      nodeName: p.node,
      priority,
      priorityClassName,
      cpu,
      memory,
      created,
    }));
    out.push(claim({
      namespace,
      name: claimName,
      count: p.devices.length,
      allocation: { node: p.node, devices: p.devices },
      reservedFor: podName,
      created,
    }));
  });
  return out;
}

/**
 * A workload waiting to be scheduled: a PodGroup of `count` pods (unless `gang:
 * false`), each with its own pending claim for `gpus` devices of `deviceClass`
 * (or one device and `capacity` of it).
 */
export function pending({
  namespace = 'default',
  name,
  count,
  gpus = 8,
  deviceClass: cls = DRIVER,
  capacity,
  gang = true,
  minCount = count,
  topologyKey,
  disruptionMode = 'all',
  priority = 0,
  priorityClassName,
  cpu,
  memory,
  created = WORKLOAD_CREATED,
}) {
  const out = [];
  if (gang) out.push(podGroup({ namespace, name, minCount, topologyKey, disruptionMode, priority, priorityClassName, created }));
  for (let i = 0; i < count; i++) {
    const podName = gang || count > 1 ? `${name}-${i}` : name;
    const claimName = `${podName}-gpus`;
    out.push(pod({
      namespace, name: podName, group: gang ? name : undefined, claim: claimName, priority, priorityClassName, cpu, memory, created,
    }));
    out.push(claim({ namespace, name: claimName, deviceClass: cls, count: capacity ? 1 : gpus, capacity, created }));
  }
  return out;
}
