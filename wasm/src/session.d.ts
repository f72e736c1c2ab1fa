// ---------------------------------------------------------------------------
// The stateful `Scheduler` class: its inputs (gangpack's JSON model, camelCase, as the
// core's serde derives read it) and its outputs. Names shared with the functions
// (Manifests, Options, UnitName, GangpackError, ...) are declared in types.d.ts.
// ---------------------------------------------------------------------------

/** Any JSON value (opaque nested parts of the model, e.g. opaque driver config). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** A Kubernetes quantity: `"80Gi"`, `"500m"`, or a number. */
export type Quantity = string | number;
/** Logical time in the model: seconds since the Unix epoch. */
export type Seconds = number;

/** A time as the class returns it. */
export interface Clock {
  /** `2026-11-05T08:00:00Z`. */
  rfc3339: string;
  seconds: Seconds;
}

export type NodeTaintEffectName = "NoExecute" | "NoSchedule" | "PreferNoSchedule";
export type DeviceTaintEffectName = "NoExecute" | "NoSchedule" | "None";
export type PreemptionPolicyName = "PreemptLowerPriority" | "Never";

// ----------------------------------------------------------------- model: cluster

/** A node taint (`timeAdded` defaults to the clock for `NoExecute`). */
export interface Taint {
  key: string;
  value?: string;
  effect: NodeTaintEffectName;
  timeAdded?: Seconds;
}

/** A device taint (`timeAdded` defaults to the clock). */
export interface DeviceTaint {
  key: string;
  value?: string;
  effect: DeviceTaintEffectName;
  timeAdded?: Seconds;
}

export interface Node {
  name: string;
  labels?: Record<string, string>;
  /** `cpu`, `memory`, `pods`, extended resources. */
  allocatable?: Record<string, Quantity>;
  taints?: Taint[];
  unschedulable?: boolean;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt";
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

/** Where a slice's (or a device's) devices are reachable from. */
export type NodeAccess = { nodeName: string } | { nodeSelector: NodeSelector } | "allNodes";

export type DeviceAttribute =
  | { int: number }
  | { bool: boolean }
  | { string: string }
  | { version: string }
  | { ints: number[] }
  | { bools: boolean[] }
  | { strings: string[] }
  | { versions: string[] };

export interface CapacityRequestPolicy {
  default?: Quantity | null;
  validValues?: Quantity[];
  validRange?: { min: Quantity; max?: Quantity | null; step?: Quantity | null } | null;
}

export interface DeviceCapacity {
  value: Quantity;
  requestPolicy?: CapacityRequestPolicy | null;
}

export interface Device {
  name: string;
  /** Qualified attribute names (`gpu.nvidia.com/model`) → values. */
  attributes?: Record<string, DeviceAttribute>;
  capacity?: Record<string, DeviceCapacity>;
  consumesCounters?: { counterSet: string; counters: Record<string, Quantity> }[];
  taints?: DeviceTaint[];
  allowMultipleAllocations?: boolean;
  bindsToNode?: boolean;
  bindingConditions?: string[];
  bindingFailureConditions?: string[];
  nodeAccess?: NodeAccess | null;
}

export interface ResourceSlice {
  name: string;
  driver: string;
  pool: { name: string; generation: number; resourceSliceCount: number };
  /** `{ slice: { nodeName } }` for a node's own devices. */
  nodeSelection: { slice: NodeAccess } | "perDevice";
  devices?: Device[];
  sharedCounters?: { name: string; counters: Record<string, Quantity> }[];
}

export interface DeviceClass {
  name: string;
  selectors?: { cel: string }[];
  extendedResourceName?: string | null;
  config?: JsonObject[];
}

export interface DeviceTaintRule {
  name: string;
  /** Which devices (every field optional; all three unset selects every device). */
  selector?: { driver?: string | null; pool?: string | null; device?: string | null } | null;
  taint: DeviceTaint;
}

// --------------------------------------------------------------- model: workloads

export interface PriorityClass {
  name: string;
  value: number;
  globalDefault?: boolean;
  preemptionPolicy?: PreemptionPolicyName;
}

export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal" | "Lt" | "Gt";
  value?: string;
  effect?: NodeTaintEffectName;
  tolerationSeconds?: number;
}

export interface DeviceToleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: DeviceTaintEffectName;
  tolerationSeconds?: number;
}

export type AllocationMode = { ExactCount: number } | "All";

export interface ExactDeviceRequest {
  deviceClassName: string;
  selectors?: { cel: string }[];
  allocationMode?: AllocationMode;
  adminAccess?: boolean;
  tolerations?: DeviceToleration[];
  capacity?: Record<string, Quantity>;
}

export interface DeviceSubRequest extends ExactDeviceRequest {
  name: string;
}

export type DeviceRequest =
  | { name: string; exactly: ExactDeviceRequest }
  | { name: string; firstAvailable: DeviceSubRequest[] };

export interface DeviceConstraint {
  requests?: string[];
  matchAttribute?: string;
  distinctAttribute?: string;
}

export interface DeviceRequestAllocationResult {
  request: string;
  driver: string;
  pool: string;
  device: string;
  adminAccess?: boolean;
  tolerations?: DeviceToleration[];
  shareID?: string;
  consumedCapacity?: Record<string, string>;
  bindingConditions?: string[];
  bindingFailureConditions?: string[];
}

export interface AllocationResult {
  devices: DeviceRequestAllocationResult[];
  config?: JsonObject[];
  nodeSelector?: NodeSelector | null;
}

export interface ResourceClaim {
  namespace: string;
  name: string;
  spec: { requests?: DeviceRequest[]; constraints?: DeviceConstraint[]; config?: JsonObject[] };
  /** Not supported as running state in `fromModel`: claims start pending. */
  allocation?: AllocationResult;
}

export type PodResourceClaim =
  | { name: string; resourceClaimName: string }
  | { name: string; resourceClaimTemplateName: string };

export interface Pod {
  namespace: string;
  name: string;
  priority?: number;
  preemptionPolicy?: PreemptionPolicyName;
  schedulerName?: string;
  requests?: Record<string, Quantity>;
  tolerations?: Toleration[];
  nodeSelector?: Record<string, string>;
  requiredNodeAffinity?: NodeSelector | null;
  resourceClaims?: PodResourceClaim[];
  /** The PodGroup's name (same namespace). */
  schedulingGroup?: string | null;
  /** Set: the pod runs there (it holds its node resources; no devices). */
  nodeName?: string | null;
  creation?: Seconds;
}

export interface PodGroup {
  namespace: string;
  name: string;
  workloadRef?: { workloadName: string; templateName: string } | null;
  parentCompositePodGroupName?: string | null;
  schedulingPolicy: "basic" | { gang: { minCount: number } };
  priorityClassName?: string | null;
  priority?: number | null;
  preemptionPolicy?: PreemptionPolicyName | null;
  disruptionMode?: "single" | "all";
  /** Required topology: all pods in one domain of each key. */
  topology?: { key: string }[];
  resourceClaims?: PodResourceClaim[];
  creation?: Seconds;
}

/** gangpack's own JSON model, for `Scheduler.fromModel`. Every array is optional. */
export interface Model {
  nodes?: Node[];
  slices?: ResourceSlice[];
  classes?: DeviceClass[];
  rules?: DeviceTaintRule[];
  priorityClasses?: PriorityClass[];
  claims?: ResourceClaim[];
  groups?: PodGroup[];
  pods?: Pod[];
  /** The clock (RFC 3339 or seconds); default the epoch. */
  now?: string | number;
}

/** The options of `Scheduler.fromModel`. */
export interface ModelOptions {
  /** The clock, overriding `model.now`. */
  now?: string | number;
  policy?: Policy;
  /** The typical shapes Stranding and FGD score against (refused with BestFit and Spread); default: the shapes of the session's pods, followed as they change. See `Scheduler.setWorkloadMix`. */
  workloadMix?: ShapeMix;
  /** The most steps one gang search takes (default 100000, at least 1); see `Options.stepBudget`. */
  stepBudget?: number;
  /** The most steps one claim allocation takes (default 1000000, at least 1); see `Options.allocatorStepBudget`. */
  allocatorStepBudget?: number;
  /** kube-scheduler's `PodGroupPreemptionPolicy` feature gate (default false); see `Options.podGroupPreemptionPolicy`. */
  podGroupPreemptionPolicy?: boolean;
}

// ----------------------------------------------------------------------- outputs

/** A unit of scheduling as the core names it. */
export type UnitKey = { group: string } | { pod: string };

/** Why a pod is evicted. */
export type EvictionReason =
  | { deviceTaint: { claim: string; taint: string } }
  | { nodeTaint: { node: string } }
  | { groupMember: { group: string } };

export interface EvictionInfo {
  /** `namespace/name`. */
  pod: string;
  at: Clock;
  reason: EvictionReason;
}

export interface BrokenGroup {
  group: string;
  evicted: string[];
  left: string[];
  minCount: number;
  /** `disruptionMode: All`: the group loses every pod. */
  whole: boolean;
}

/** How a change moved the `NoExecute` eviction schedule. */
export interface EvictionReport {
  started: EvictionInfo[];
  cancelled: EvictionInfo[];
  brokenGroups: BrokenGroup[];
}

/** What removing a node did (`removeNode`): the pods bound to it were deleted with it. */
export interface NodeRemoval {
  node: Node;
  /** The pods that were bound to it (`namespace/name`, sorted). */
  deletedPods: string[];
  evictions: EvictionReport;
}

/** A DeviceTaintRule's dry run: what effect `NoExecute` would do. */
export interface DryRunResult {
  rule: string;
  publishedDevices: number;
  allocatedDevices: number;
  /** Pods whose claims hold a selected device, sorted. */
  pods: string[];
  namespaces: number;
  evictions: EvictionInfo[];
  /** The blast radius. */
  brokenGroups: BrokenGroup[];
  /** Upstream's `EvictionInProgress=False` (`NoEffect`) message. */
  message: string;
}

export interface Victim {
  unit: UnitKey;
  pods: string[];
  priority: number;
  devices: number;
}

export type UnitOutcomeName = "placed" | "preempted" | "pending" | "invalid" | "failed";

export interface PodPlacement {
  pod: string;
  /** Bound (or nominated, for a preemptor); `null` while pending. */
  node: string | null;
  /** `driver/pool/device`, in allocation order. */
  devices: string[];
}

export interface UnitOutcome {
  kind: "PodGroup" | "Pod";
  /** `namespace/name`. */
  name: string;
  outcome: UnitOutcomeName;
  /** Placed or nominated pods; the pending ones otherwise. */
  pods: PodPlacement[];
  /** Devices of the PodGroup's own claims. */
  groupDevices: string[];
  victims: Victim[];
  /** Pending: the explanation's one-line summary; invalid or failed: the error; preempted (manifest sessions): upstream's preemption message; placed: empty. */
  reason: string;
  /** Invalid or failed: the problems. */
  problems: Problem[];
}

export interface CycleResult {
  /** Evictions already due at the clock, carried out before the cycle. */
  carriedOut: EvictionInfo[];
  /** In the order the cycle took them, then units held back (manifests naming objects that are missing). */
  units: UnitOutcome[];
  evictions: EvictionReport;
  podsBound: number;
  allPlaced: boolean;
  /** What `gangpack plan` prints (sessions loaded from manifests). */
  table?: string;
}

export interface AdvanceResult {
  now: Clock;
  /** The evictions carried out, by time then pod. */
  evictions: EvictionInfo[];
}

export interface PodBinding {
  pod: string;
  node: string;
  claims: { claim: string; result: AllocationResult }[];
}

export interface PlacementDecision {
  bindings: PodBinding[];
  groupClaims: { claim: string; result: AllocationResult }[];
}

/** One fact of an explanation, as the core's serde writes it: `{ <factKind>: { ...fields } }`. */
export type Fact = { [kind: string]: JsonObject | JsonValue };

export interface Explanation {
  group: string | null;
  pod: string | null;
  status: "Scheduled" | "Wait" | "Unschedulable" | "UnschedulableAndUnresolvable" | "Undecided";
  required: number;
  best: number;
  running: number;
  decision: PlacementDecision | null;
  shapes: { pods: string[]; devicesPerPod: number; nodes: number; capacity: number; facts: number[] }[];
  facts: Fact[];
  /** Indices into `facts`. */
  blocking: number[];
  minimal: boolean;
  /** A step budget ran out: the outcome is undecided (`budget` says which). */
  budgetExhausted: boolean;
  /** The budget that ran out, and its value (steps; per call for `"Allocator"`). */
  budget: { budget: StepBudget; limit: number } | null;
  /** What the placement's search did: its steps, its allocator calls' steps, and the budget that ran out. */
  search: { steps: number; allocatorSteps: number; exhausted: StepBudget | null; best: number };
}

/** A step budget: `"Gang"` (`stepBudget`) or `"Allocator"` (`allocatorStepBudget`). */
export type StepBudget = "Gang" | "Allocator";

export interface WhatItTakes {
  unit: UnitKey;
  fitsNow: boolean;
  waitingForPods: boolean;
  preemption: { victims: Victim[]; decision: PlacementDecision } | null;
  mayPreempt: boolean;
  domains: {
    domain: string | null;
    required: number;
    fit: number;
    missing: { example: string; pods: number; devicesPerPod: number }[];
  }[];
  unresolvable?: Fact[];
  /** Its placement ran out of a step budget before it was decided: whether it fits now is unknown. */
  undecided: boolean;
  /** Its text, as `gangpack explain` words it. */
  text: string;
}

export interface SessionExplainResult {
  unit: UnitKey;
  /** The verdict's line (for a pending unit), then the explanation's text (its `Display`), as `gangpack explain` prints them. */
  text: string;
  summary: string;
  explanation: Explanation;
  whatItTakes: WhatItTakes;
  /** What would get the unit placed, agreeing with the next cycle. */
  verdict: Verdict;
}

/** The filter that rejects a node (`gangpack::FilterStage`): the kube-scheduler plugin doing the same check, or `OutOfScope` (outside the scheduler's node restriction, without the unit's topology key, or outside the domains it may use). */
export type FilterStage =
  | "OutOfScope"
  | "NodeUnschedulable"
  | "NodeAffinity"
  | "TaintToleration"
  | "NodeResourcesFit"
  | "DynamicResources";

/** One node of a node table (`gangpack::NodeRow`). */
export interface NodeRow {
  node: string;
  /** Its value of the unit's topology key (`null` without a key, or unlabelled). */
  domain: string | null;
  /** Whether a pod of the shape may go there now. */
  feasible: boolean;
  /** Feasible: pods of the shape it can take now, at most (4294967295: nothing the pod requests bounds it); 0 when rejected. */
  pods: number;
  /** Feasible: its score under the policy (see `NodeTableResult.score` and `higherIsBetter`); `null` when rejected. */
  score: number | null;
  /** Feasible: its place (from 1) in the order the placement tries nodes; `null` when rejected or never tried (a domain too small for the unit). */
  order: number | null;
  /** Pods of the shape the placement puts there now (0 for a bound pod's table). */
  planned: number;
  /** Rejected: the filter that rejects it. */
  filter: FilterStage | null;
  /** Rejected: why, in the explanation's words (its facts about this node, joined by `; `), or why it is out of scope. */
  reason: string | null;
  /** Rejected: the explanation's facts about this node (each naming it alone; empty when out of scope). */
  facts: Fact[];
}

/** `Scheduler.nodeTable(unit)`: every node for one pod of the unit (`gangpack::NodeTable`). */
export interface NodeTableResult {
  unit: UnitKey;
  /** The table as `gangpack explain --nodes` prints it. */
  text: string;
  /** The PodGroup (`namespace/name`), if the pod has one. */
  group: string | null;
  /** The pod whose shape the rows are for; `null` when the unit has no pending pod (then no rows). */
  pod: string | null;
  /** The node the pod is bound to: the rows are then for a pending copy of it. */
  bound: string | null;
  /** The scoring policy's name (`BestFit`, `Spread`, `Stranding`, `FGD`, `GangAware`, ...). */
  policy: string;
  /** What a row's score measures under the policy, in words. */
  score: string;
  /** Whether a higher score is preferred (Spread); otherwise a lower one is. */
  higherIsBetter: boolean;
  /** The unit's topology key, if any. */
  key: string | null;
  /** One row per node, in natural name order (`node-2` before `node-10`). */
  rows: NodeRow[];
}

/** One thing that would get a pending unit placed (`gangpack::Help`). */
export type Help =
  | { nextCycle: { pods: number } }
  | { preemption: { victims: Victim[] } }
  | { morePods: { present: number; minCount: number } }
  | { waiting: { holders: UnitKey[]; ahead: boolean; neverPreempts: boolean } }
  | { capacity: { domain: string | null; devices: number } }
  | { change: { facts: Fact[] } }
  | { invalid: { errors: string[] } }
  | { undecided: { budget: { budget: StepBudget; limit: number } | null } };

/** The verdict on a unit (`gangpack::Verdict`): `helps` lists exactly what holds, in order. */
export interface Verdict {
  unit: UnitKey;
  /** Whether some of its pods wait to be placed. */
  pending: boolean;
  helps: Help[];
  /** One line, as `gangpack explain` prints it first. */
  text: string;
  /** Each of `helps` in the words of `text` (what the playground lists under its verdict). */
  lines: string[];
}

export interface RequestShape {
  pods: number;
  devicesPerPod: number;
  class?: string | null;
  tolerations?: DeviceToleration[];
}

export interface CapacityReportOptions {
  /** Default: 1×1, 1×2, 1×4, 1×8 and `gangPods`×8. */
  shapes?: RequestShape[];
  /** A node label key; `null`: the whole cluster as one domain; left out: the first PodGroup topology key. */
  key?: string | null;
  gangPods?: number;
}

export interface ShapeCapacity {
  copies: number;
  pods: number;
  free: number;
  fragmentation: number;
}

export interface CapacityReport {
  key: string | null;
  shapes: RequestShape[];
  domains: { domain: { value: string } | "unlabelled"; nodes: number; cordoned: number; shapes: ShapeCapacity[] }[];
  nodes: number;
  cordoned: number;
  totals: ShapeCapacity[];
  /** One per shape: `1x8`, `4x8@topology.kubernetes.io/rack`, ... */
  labels: string[];
}

export interface SnapshotOptions {
  /** The node label grouping nodes into domains. Default: the first PodGroup topology key (by group name). */
  topologyKey?: string;
  /** `snapshot()` only. `false`: nodes (and `otherDevices`) list no devices — for callers that draw from `cells()`. Default `true`. */
  devices?: boolean;
}

export interface TaintInfo {
  key: string;
  value: string;
  effect: NodeTaintEffectName | DeviceTaintEffectName;
  timeAdded: Clock | null;
}

/** One claim holding a device. */
export interface DeviceHolder {
  /** The claim, `namespace/name`. */
  claim: string;
  /** Bound pods using the claim. */
  pods: string[];
  podGroup: string | null;
  adminAccess: boolean;
  /** What this share consumes (shareable devices). */
  consumedCapacity: Record<string, string>;
}

/**
 * `free`: nobody holds it; `allocated`: held exclusively; `shared`: a shareable device with shares
 * (see `consumedCapacity` against `capacity` for the fraction); `blocked`: nobody holds it, but the
 * shared counters it consumes are used up (another partition of the same GPU is allocated);
 * `unusable`: not allocatable (incomplete pool, old generation).
 */
export type DeviceStateName = "free" | "allocated" | "shared" | "blocked" | "unusable";

export interface DeviceInfo {
  /** `driver/pool/device`. */
  id: string;
  driver: string;
  pool: string;
  device: string;
  slice: string;
  node: string | null;
  state: DeviceStateName;
  /** Its `productName` (or `model`) string attribute, whatever the driver's domain. */
  model: string | null;
  holders: DeviceHolder[];
  capacity: Record<string, string>;
  /** Every share's consumption, summed. */
  consumedCapacity: Record<string, string>;
  /** Slice taints, then one per selecting DeviceTaintRule. */
  taints: TaintInfo[];
  /** Scheduled evictions of pods whose claims hold it. */
  evictions: EvictionInfo[];
}

export interface NodeInfo {
  name: string;
  labels: Record<string, string>;
  unschedulable: boolean;
  taints: TaintInfo[];
  /** Its node-local devices, by id. */
  devices: DeviceInfo[];
  /** Bound pods. */
  pods: string[];
  /** Scheduled evictions for its `NoExecute` taints. */
  evictions: EvictionInfo[];
}

export interface TopologyDomain {
  /** The label value; `null` for nodes without the label (last), or every node without a key. */
  name: string | null;
  nodes: NodeInfo[];
}

export interface PodInfo {
  name: string;
  podGroup: string | null;
  node: string | null;
  status: "bound" | "pending";
  priority: number;
  /** Claims allocated with its binding. */
  claims: string[];
  eviction: EvictionInfo | null;
}

export interface GroupInfo {
  name: string;
  /** `null` for a basic (non-gang) policy. */
  minCount: number | null;
  disruptionMode: "single" | "all";
  priority: number;
  pods: string[];
  bound: number;
  /** None bound, all bound, or some. */
  status: "pending" | "running" | "partial";
}

export interface ClaimInfo {
  name: string;
  allocated: boolean;
  devices: string[];
  pods: string[];
  podGroup: string | null;
}

export interface WaitingInfo {
  kind: "Pod" | "PodGroup";
  name: string;
  reason: string;
}

/** Everything needed to draw the cluster; every list in a stable order (by name, devices by id, evictions by time then pod). */
export interface ClusterSnapshot {
  now: Clock;
  topologyKey: string | null;
  domains: TopologyDomain[];
  /** Devices not local to one node (network-attached). */
  otherDevices: DeviceInfo[];
  pods: PodInfo[];
  groups: GroupInfo[];
  claims: ClaimInfo[];
  taintRules: DeviceTaintRule[];
  /** The `NoExecute` eviction schedule. */
  evictions: EvictionInfo[];
  /** Units held back waiting for objects missing from the manifests. */
  waiting: WaitingInfo[];
}

/** One device as `cells()` reports it. */
export interface DeviceCell {
  /** `driver/pool/device`. */
  id: string;
  state: DeviceStateName;
  /** The first holder's PodGroup, else its first pod, else its claim. */
  owner: string | null;
  holders: number;
  /** Its taints' effects as bits: 1 `NoSchedule`, 2 `NoExecute`, 4 `None`, 16 an unknown effect. */
  taints: number;
  /** The earliest scheduled eviction of a pod using it, in seconds. */
  evictAt: Seconds | null;
  /** A shared device: each holder's owner and the fraction (0..1) of the capacity it uses. */
  shares: [string, number][];
}

export interface NodeCells {
  name: string;
  unschedulable: boolean;
  /** Its taints' effects as bits: 1 `NoSchedule`, 2 `NoExecute`, 8 `PreferNoSchedule`. */
  taints: number;
  /** Its devices, by id. */
  cells: DeviceCell[];
}

/** The cluster as drawn: the domains and nodes of `snapshot()` in the same order, one small record per device. */
export interface ClusterCells {
  now: Clock;
  topologyKey: string | null;
  domains: { name: string | null; nodes: NodeCells[] }[];
  /** Devices not local to one node. */
  otherCells: DeviceCell[];
  /** The device models present (`productName` or `model` attributes), sorted. */
  models: string[];
}
