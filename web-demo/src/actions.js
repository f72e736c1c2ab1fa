// The playground's actions: every change a person makes is one plain JSON object,
// so a case is its scenario plus a list of actions (kept in the URL and replayed on
// load). `apply` carries one out on a gangpack-wasm `Scheduler` and returns what
// happened as timeline events. Nothing here decides anything: the session does.
//
// Works in the browser and in Node (the scenario tests import it).
//
// Actions:
//   { op: 'cycle' }                                         one scheduling cycle
//   { op: 'advance', seconds }                              move the clock forward
//   { op: 'taint', target, taint: { key, value, effect } }  taint a device / node / domain
//   { op: 'untaint', target, key }                          remove taints with that key
//   { op: 'rule', rule }                                    add a DeviceTaintRule
//   { op: 'unrule', name }                                  remove one
//   { op: 'submit', unit }                                  a PodGroup (gang) or single pod
//   { op: 'remove', unit: { podGroup } | { pod } }          delete a unit's pods
//   { op: 'cordon', node, cordoned }                        cordon / uncordon a node
//   { op: 'removeNode', node }                              a node leaves (its pods with it)
//   { op: 'addNode', name, like }                           a node joins: a copy of `like`
//                                                           with its GPUs, all free
//   { op: 'labelNode', node, labels }                       replace a node's labels
// A submitted unit's `gpuShare` (e.g. '40Gi') asks each GPU for that much of its
// `memory` capacity instead of the whole device: a share of a shareable GPU
// (consumable capacity).
// A target is { device: 'driver/pool/device' }, { node: name } or
// { domain: value, key: labelKey } (every node of a topology domain).

/** Defaults of a submitted unit (the form's initial values). */
export const UNIT_DEFAULTS = Object.freeze({
  kind: 'gang',
  namespace: 'default',
  name: 'my-job',
  pods: 2,
  gpusPerPod: 8,
  deviceClass: 'gpu.nvidia.com',
  model: '',
  minCount: 2,
  topologyKey: '',
  priority: 0,
  disruptionMode: 'all',
  tolerations: [],
  cpu: '8',
  memory: '64Gi',
  gpuShare: '',
});

/** The attribute the GPU model selector compares (NVIDIA's DRA driver publishes it). */
export const MODEL_ATTRIBUTE = 'productName';

/** One event for the timeline: `{ kind, text, pods? }`. */
function event(kind, text, extra = {}) {
  return { kind, text, ...extra };
}

function evictionText(e) {
  const r = e.reason;
  if (r.deviceTaint) return `evicted ${e.pod} (claim ${r.deviceTaint.claim}: device taint ${r.deviceTaint.taint})`;
  if (r.nodeTaint) return `evicted ${e.pod} (node ${r.nodeTaint.node} NoExecute taint)`;
  if (r.groupMember) return `evicted ${e.pod} (member of ${r.groupMember.group}, disruptionMode All)`;
  return `evicted ${e.pod}`;
}

function reportEvents(report) {
  const out = [];
  for (const e of report.started) {
    out.push(event('eviction-scheduled', `eviction of ${e.pod} scheduled at ${e.at.rfc3339}`, { pod: e.pod }));
  }
  for (const e of report.cancelled) out.push(event('eviction-cancelled', `eviction of ${e.pod} cancelled`, { pod: e.pod }));
  for (const b of report.brokenGroups) {
    out.push(event('gang-broken', `${b.group} loses ${b.evicted.length} pod(s)${b.whole ? ' (whole gang, disruptionMode All)' : ''}`));
  }
  return out;
}

/** The nodes of a target, for node-level taints. */
function targetNodes(session, target) {
  if (target.node) return [target.node];
  if (target.domain !== undefined) {
    const snap = session.snapshot(target.key ? { topologyKey: target.key } : undefined);
    const d = snap.domains.find((x) => x.name === target.domain);
    if (!d) throw new Error(`taint: no topology domain ${target.key ?? ''}=${target.domain}`);
    return d.nodes.map((n) => n.name);
  }
  return [];
}

function describeTarget(target) {
  if (target.device) return `GPU ${target.device}`;
  if (target.node) return `node ${target.node}`;
  return `domain ${target.key ? `${target.key}=` : ''}${target.domain}`;
}

/** The model objects of a submitted unit (claims, PodGroup, pods), for `generation`. */
export function unitObjects(spec, generation = 0) {
  const u = { ...UNIT_DEFAULTS, ...spec };
  const ns = u.namespace;
  const count = Math.max(1, Number(u.pods) || 1);
  const selectors = u.model
    ? [{ cel: `device.attributes["${u.deviceClass}"].${MODEL_ATTRIBUTE} == ${JSON.stringify(u.model)}` }]
    : [];
  const deviceTolerations = u.tolerations.map((t) => clean({
    key: t.key || undefined,
    operator: t.operator || 'Equal',
    value: t.operator === 'Exists' ? undefined : t.value,
    effect: t.effect || undefined,
    tolerationSeconds: t.tolerationSeconds === '' || t.tolerationSeconds == null ? undefined : Number(t.tolerationSeconds),
  }));
  const podTolerations = deviceTolerations.filter((t) => t.effect !== 'None');
  const gang = u.kind === 'gang';
  const claims = [];
  const pods = [];
  for (let i = 0; i < count; i++) {
    const pod = gang || count > 1 ? `${u.name}-${i}` : u.name;
    const claim = `${pod}-gpus${generation ? `-g${generation}` : ''}`;
    if (Number(u.gpusPerPod) > 0) {
      claims.push({
        namespace: ns,
        name: claim,
        spec: {
          requests: [{
            name: 'gpus',
            exactly: clean({
              deviceClassName: u.deviceClass,
              allocationMode: { ExactCount: Number(u.gpusPerPod) },
              selectors: selectors.length ? selectors : undefined,
              tolerations: deviceTolerations.length ? deviceTolerations : undefined,
              capacity: u.gpuShare ? { memory: String(u.gpuShare) } : undefined,
            }),
          }],
        },
      });
    }
    pods.push(clean({
      namespace: ns,
      name: pod,
      priority: Number(u.priority) || 0,
      requests: { cpu: String(u.cpu), memory: String(u.memory) },
      tolerations: podTolerations.length ? podTolerations : undefined,
      resourceClaims: Number(u.gpusPerPod) > 0 ? [{ name: 'gpus', resourceClaimName: claim }] : undefined,
      schedulingGroup: gang ? u.name : undefined,
    }));
  }
  const group = gang
    ? clean({
      namespace: ns,
      name: u.name,
      schedulingPolicy: { gang: { minCount: Math.max(1, Number(u.minCount) || count) } },
      priority: Number(u.priority) || 0,
      disruptionMode: u.disruptionMode === 'single' ? 'single' : 'all',
      topology: u.topologyKey ? [{ key: u.topologyKey }] : undefined,
    })
    : null;
  return { group, claims, pods };
}

function clean(o) {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * A workload controller for the units the page submitted (what a Job or JobSet
 * controller does upstream): pods that were evicted are created again, pending, with
 * fresh claims. `book` maps `namespace/name` of a submitted unit to `{ spec, generation }`.
 */
function recreate(session, book) {
  const out = [];
  const snap = session.snapshot();
  const present = new Set(snap.pods.map((p) => p.name));
  const groups = new Set(snap.groups.map((g) => g.name));
  for (const [key, entry] of book) {
    const { group, claims, pods } = unitObjects(entry.spec, entry.generation + 1);
    const missing = pods.filter((p) => !present.has(`${p.namespace}/${p.name}`));
    if (missing.length === 0 || entry.removed) continue;
    entry.generation += 1;
    if (group && !groups.has(key)) session.addPodGroup(group);
    for (const p of missing) {
      const claim = p.resourceClaims?.[0]?.resourceClaimName;
      const c = claims.find((x) => x.name === claim);
      if (c) session.addClaim(c);
      session.addPod(p);
    }
    out.push(event('recreated', `workload controller recreated ${missing.length} pod(s) of ${key}`));
  }
  return out;
}

/** Evictions carried out: timeline events, and the controller's recreations. */
function afterEvictions(session, book, evictions) {
  const out = evictions.map((e) => event('eviction', evictionText(e), { pod: e.pod }));
  if (evictions.length > 0) out.push(...recreate(session, book));
  return out;
}

/**
 * Carries out one action on `session`. `book` (a Map, kept by the caller across
 * actions) records the units submitted so far. Returns timeline events; throws an
 * Error (or the session's GangpackError) when the action is refused, having changed
 * nothing that the caller cannot restore from a fork.
 */
export function apply(session, action, book = new Map()) {
  switch (action.op) {
    case 'cycle': {
      // Evictions already due are carried out first (as the cycle itself would), so
      // the workload controller recreates their pods before this cycle, not after.
      const due = session.advance(session.now().seconds);
      const out = afterEvictions(session, book, due.evictions);
      const c = session.cycle();
      out.push(...afterEvictions(session, book, c.carriedOut ?? []));
      for (const u of c.units) {
        if (u.outcome === 'placed') {
          const nodes = [...new Set(u.pods.map((p) => p.node).filter(Boolean))];
          out.push(event('placed', `${u.kind} ${u.name} placed: ${u.pods.length} pod(s) on ${nodes.join(', ')}`, { unit: u.name }));
        } else if (u.outcome === 'preempted') {
          const victims = u.victims.map((v) => Object.values(v.unit)[0]).join(', ');
          out.push(event('preemption', `${u.kind} ${u.name} preempts ${victims}`, { unit: u.name, victims: u.victims }));
        } else if (u.outcome === 'pending') {
          out.push(event('pending', `${u.kind} ${u.name} pending: ${u.reason}`, { unit: u.name }));
        } else {
          out.push(event('error', `${u.kind} ${u.name} ${u.outcome}: ${u.reason}`, { unit: u.name }));
        }
      }
      out.push(...reportEvents(c.evictions));
      out.unshift(event('cycle', `cycle: ${c.podsBound} pod(s) bound, ${c.units.filter((u) => u.outcome === 'pending').length} unit(s) pending`));
      return out;
    }
    case 'advance': {
      const seconds = Number(action.seconds);
      if (!Number.isFinite(seconds) || seconds < 0) throw new Error(`advance: seconds must be a non-negative number, not ${action.seconds}`);
      const r = session.advance(session.now().seconds + seconds);
      return [event('clock', `clock advanced ${seconds} s to ${r.now.rfc3339}`), ...afterEvictions(session, book, r.evictions)];
    }
    case 'taint': {
      const { target, taint } = action;
      const out = [event('taint', `tainted ${describeTarget(target)} ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`)];
      if (target.device) {
        out.push(...reportEvents(session.taintDevice(target.device, taint)));
      } else {
        for (const n of targetNodes(session, target)) out.push(...reportEvents(session.taintNode(n, taint)));
      }
      return out;
    }
    case 'untaint': {
      const { target, key } = action;
      const out = [event('untaint', `untainted ${describeTarget(target)} ${key}`)];
      if (target.device) {
        out.push(...reportEvents(session.untaintDevice(target.device, key)));
      } else {
        for (const n of targetNodes(session, target)) out.push(...reportEvents(session.untaintNode(n, key)));
      }
      return out;
    }
    case 'rule': {
      const r = action.rule;
      return [event('rule', `DeviceTaintRule ${r.name} added (${r.taint.key}:${r.taint.effect})`), ...reportEvents(session.addTaintRule(r))];
    }
    case 'unrule':
      return [event('rule', `DeviceTaintRule ${action.name} removed`), ...reportEvents(session.removeTaintRule(action.name))];
    case 'submit': {
      const spec = { ...UNIT_DEFAULTS, ...action.unit };
      const key = `${spec.namespace}/${spec.name}`;
      if (book.has(key)) throw new Error(`submit: ${key} was submitted already; pick another name`);
      const minCount = Number(spec.minCount);
      if (spec.kind === 'gang' && Number.isFinite(minCount) && minCount > Math.max(1, Number(spec.pods) || 1)) {
        // Not clamped in silence: a PodGroup whose minCount exceeds its pods waits for
        // pods that this page never creates.
        throw new Error(`submit: PodGroup ${key}: minCount ${minCount} is more than its ${spec.pods} pod(s); `
          + 'the gang would wait for pods that never come. Lower minCount or add pods.');
      }
      const { group, claims, pods } = unitObjects(spec);
      if (group) session.addPodGroup(group);
      for (const c of claims) session.addClaim(c);
      for (const p of pods) session.addPod(p);
      book.set(key, { spec, generation: 0 });
      const what = group
        ? `PodGroup ${key}: ${pods.length} pod(s) × ${spec.gpusPerPod} GPU, minCount ${group.schedulingPolicy.gang.minCount}`
        : `${pods.length} pod(s) ${key} × ${spec.gpusPerPod} GPU`;
      return [event('submit', `submitted ${what}`, { unit: key })];
    }
    case 'remove': {
      const u = action.unit;
      const snap = session.snapshot();
      if (u.podGroup) {
        const g = snap.groups.find((x) => x.name === u.podGroup || x.name.endsWith(`/${u.podGroup}`));
        if (!g) throw new Error(`remove: no PodGroup ${u.podGroup}`);
        for (const p of g.pods) session.removePod(p);
        session.removePodGroup(g.name);
        const entry = book.get(g.name);
        if (entry) entry.removed = true;
        return [event('remove', `removed PodGroup ${g.name} and its ${g.pods.length} pod(s)`)];
      }
      session.removePod(u.pod);
      return [event('remove', `removed Pod ${u.pod}`)];
    }
    case 'cordon': {
      const cordoned = action.cordoned !== false;
      session.cordonNode(action.node, cordoned);
      return [event('node', `${cordoned ? 'cordoned' : 'uncordoned'} node ${action.node}`)];
    }
    case 'removeNode': {
      const r = session.removeNode(action.node);
      const pods = r.deletedPods.length
        ? `; its ${r.deletedPods.length} pod(s) deleted with it (pod garbage collection): ${r.deletedPods.join(', ')}`
        : '';
      return [event('node', `node ${action.node} removed${pods}`), ...reportEvents(r.evictions)];
    }
    case 'addNode': {
      const like = session.node(action.like);
      if (!like) throw new Error(`addNode: no node ${action.like} to copy`);
      const name = String(action.name ?? '').trim();
      const labels = { ...like.labels };
      if ('kubernetes.io/hostname' in labels) labels['kubernetes.io/hostname'] = name;
      // The slices first (checked before anything changes), then the node.
      const slices = session.nodeSlices(action.like).map((sl) => ({
        ...sl,
        name: sl.name.includes(action.like) ? sl.name.replace(action.like, name) : `${name}-${sl.name}`,
        pool: { ...sl.pool, name: sl.pool.name === action.like ? name : `${name}-${sl.pool.name}`, generation: 0 },
        nodeSelection: { slice: { nodeName: name } },
        devices: sl.devices.map((d) => ({ ...d, taints: [] })),
      }));
      // All or nothing: a slice refused takes the node back out.
      const before = session.fork();
      try {
        const out = [...reportEvents(session.addNode({ ...like, name, labels, taints: [], unschedulable: false }))];
        let gpus = 0;
        for (const sl of slices) {
          out.push(...reportEvents(session.addSlice(sl)));
          gpus += sl.devices.length;
        }
        return [event('node', `node ${name} joined (like ${action.like}, ${gpus} device(s))`), ...out];
      } catch (e) {
        session.restore(before);
        throw e;
      } finally {
        before.free();
      }
    }
    case 'labelNode': {
      const node = session.node(action.node);
      if (!node) throw new Error(`labelNode: no node ${action.node}`);
      const report = session.updateNode({ ...node, labels: action.labels });
      return [event('node', `node ${action.node} relabelled`), ...reportEvents(report)];
    }
    default:
      throw new Error(`unknown action ${JSON.stringify(action.op)}`);
  }
}
