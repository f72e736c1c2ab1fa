/** Manifest text as `kubectl get -o yaml|json` prints it, or several texts, each optionally named (the name appears in messages). */
export type Manifests = string | Array<string | InputFile>;

/** One text of manifests and the name messages give it. */
export interface InputFile {
  name: string;
  text: string;
}

/**
 * Scoring policy: how to choose among feasible nodes and racks. `BestFit` (the default)
 * packs; `Spread` spreads; `Stranding` places each pod where it strands the least
 * capacity (GPU share, CPU and memory) for the typical shapes of the workload; `FGD`
 * (Fragmentation Gradient Descent, Weng et al., USENIX ATC'23) where the expected
 * fragmentation for those shapes grows least. Stranding and FGD score against
 * `workloadMix` when given, else the shapes of the pods at hand. Case, `-` and `_` do
 * not matter (`"best-fit"`, `"fgd"`).
 */
export type Policy =
  | "BestFit"
  | "Spread"
  | "Stranding"
  | "FGD"
  | "best-fit"
  | "spread"
  | "stranding"
  | "fgd"
  | DeprecatedPolicy;

/**
 * @deprecated `FragmentationAware` now means `FGD`, the policy that replaced it (the
 * result's or session's warnings say so); write `"FGD"`.
 */
export type DeprecatedPolicy = "FragmentationAware" | "fragmentation-aware";

/**
 * One typical request shape of a workload and its relative frequency: `pods` pods (one,
 * or a gang's worth in one `topologyKey` domain), each requesting `cpu`, `memory` and
 * `count` devices of class `deviceClassName` that satisfy `selectors` and provide
 * `capacity` (which a pod consumes of a shareable device).
 */
export interface TypicalShape {
  /** Relative frequency (any positive scale: pods counted, or per mille). Default 1. */
  weight?: number;
  /** CPU each pod requests. Default 0. */
  cpu?: Quantity;
  /** Memory each pod requests. Default 0. */
  memory?: Quantity;
  /** The DeviceClass of the devices each pod requests. */
  deviceClassName: string;
  /** Devices each pod requests. Default 1. */
  count?: number;
  /** Per device, capacity name → amount requested (e.g. `{ memory: "40Gi" }` of a shared GPU). Default: a whole device. */
  capacity?: Record<string, Quantity>;
  /** CEL selectors every device must satisfy besides the class's (e.g. a GPU model). */
  selectors?: { cel: string }[];
  /** Pods that come together: 1 for a single pod (the default), a gang's size otherwise. */
  pods?: number;
  /** The node label whose domain a gang shape's pods share (only with `pods > 1`). */
  topologyKey?: string;
}

/** The typical shapes Stranding and FGD score a node against, summed in this order (1 to 1024 shapes). */
export interface ShapeMix {
  shapes: TypicalShape[];
}

/** The options every call takes (the command line's global flags). */
export interface Options {
  /** The logical clock: RFC 3339 text or seconds since the Unix epoch. Default: the latest timestamp in the input. */
  now?: string | number;
  policy?: Policy;
  /**
   * The typical shapes Stranding and FGD score against (refused with BestFit and
   * Spread). Default: the shapes of the pods in the manifests; a session follows its
   * pods' shapes as they change. Only `Scheduler.fromManifests` takes it for now: `plan`,
   * `explain`, `taint` and `runCli` refuse it (`InvalidArgument`), as they refuse
   * `Stranding`, until the command line's options carry both.
   */
  workloadMix?: ShapeMix;
  /** Skip objects that fail validation (each reported as a warning) instead of failing. */
  skipInvalid?: boolean;
  /** Unknown fields are errors, not warnings. */
  strict?: boolean;
  /** ANSI colour codes in table text. */
  color?: boolean;
  /** The demo's seed. */
  seed?: number;
  /**
   * The most steps one gang search takes (`--step-budget`; default 100000, at least 1).
   * A step is one pod tried on one node, or one device choice revisited. When it runs
   * out the unit stays pending, explained as undecided with this budget named, never
   * as "does not fit".
   */
  stepBudget?: number;
  /**
   * The most steps one claim allocation takes (`--allocator-step-budget`; default
   * 1000000, at least 1). A step is one candidate device tried; one allocation that
   * runs out leaves its unit pending and undecided, this budget named.
   */
  allocatorStepBudget?: number;
  /**
   * kube-scheduler's `PodGroupPreemptionPolicy` feature gate (`--feature-gates
   * PodGroupPreemptionPolicy=true`; default false, as in Kubernetes 1.37). Off: a
   * PodGroup's pods must share one `preemptionPolicy`, which decides whether it
   * preempts. On: the PodGroup's own `preemptionPolicy` decides and every pod must
   * match it. A group breaking the rule fails with `SchedulerError`.
   */
  podGroupPreemptionPolicy?: boolean;
}

/** A Kubernetes object, in Kubernetes' own spelling. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** `kind: List`, as `gangpack ... -o json` prints it. */
export interface KubeList {
  apiVersion: "v1";
  kind: "List";
  metadata: Record<string, unknown>;
  items: KubeObject[];
}

export interface PlanResult {
  /** Exactly what `gangpack plan` prints. */
  table: string;
  /** Exactly the object `gangpack plan -o json` prints. */
  list: KubeList;
  /** The command's exit status: 0 (everything placed) or 3 (something stays pending). */
  exitCode: 0 | 3;
  pending: boolean;
  warnings: string[];
}

/** A PodGroup (`namespace/name` or `name`), or one of `{ podGroup }` and `{ pod }`. */
export type UnitName = string | { podGroup: string; pod?: undefined } | { pod: string; podGroup?: undefined };

export interface ExplainResult {
  /** Exactly what `gangpack explain` prints. */
  text: string;
  warnings: string[];
}

export type TaintEffectName = "NoExecute" | "NoSchedule" | "PreferNoSchedule" | "None";

/** The taint `taint` applies: a device, a node, or a DeviceTaintRule (manifest text). */
export type TaintSpec =
  | { device: string; node?: never; rule?: never; effect?: TaintEffectName; key?: string; value?: string; afterPlan?: boolean }
  | { node: string; device?: never; rule?: never; effect?: TaintEffectName; key?: string; value?: string; afterPlan?: boolean }
  | { rule: Manifests; device?: never; node?: never; effect?: never; key?: never; value?: never; afterPlan?: boolean };

export interface TaintResult {
  /** Exactly what `gangpack taint` prints. */
  table: string;
  /** Exactly the object `gangpack taint -o json` prints. */
  list: KubeList;
  warnings: string[];
}

/**
 * One object a finding involves: `kind` is `Pod`, `PodGroup`, `Node`, `ResourceClaim`,
 * `DeviceClass`, `DeviceTaintRule`, `Device` (`name`: `driver/pool/device`) or `Pool`
 * (`driver/pool`); `namespace` only for namespaced objects.
 */
export interface FindingObject {
  kind: string;
  namespace?: string;
  name: string;
}

/** One broken rule, as `gangpack check -o json` prints it. */
export interface Finding {
  /** The stable rule name (`device-allocated-twice`, `below-min-count`, ...). */
  rule: string;
  /** What is wrong, in a sentence. */
  message: string;
  /** The objects involved, most specific first. */
  objects: FindingObject[];
}

/** `check`'s second argument (`gangpack check --decisions ... --admission`). */
export interface CheckSpec {
  /** The decisions applied over the manifests first (`docs/DECISIONS.md`): v1 Bindings, merge patches of the manifests' objects (a Pod with only `spec.nodeName`, a ResourceClaim with only `status`), or whole objects as `plan` lists them (replacing the manifests', or added). A decision naming an object the manifests lack, or changing what the API keeps immutable, throws `InvalidInput`. Texts are named `decisions` / `decisions[i]` in messages unless named. */
  decisions?: Manifests;
  /** Hold running pods and claims to the rules of placement too (`--admission`). */
  admission?: boolean;
}

/** What `check` found: the fields of `gangpack_k8s::check::Report`, and the command's output. */
export interface CheckResult {
  /** No rule is broken. */
  valid: boolean;
  /** The command's exit status: 0 (valid) or 4 (a rule is broken). */
  exitCode: 0 | 4;
  /** Exactly what `gangpack check` prints. */
  table: string;
  /** Every broken rule: exactly the list `gangpack check -o json` prints. */
  findings: Finding[];
  /** Pods bound (after the decisions); terminating and finished pods left out. */
  podsBound: number;
  /** Claims allocated (after the decisions). */
  claimsAllocated: number;
  /** PodGroups with a bound member. */
  groupsRunning: number;
  /** Devices published (usable or not). */
  devices: number;
  /** Distinct devices allocated (after the decisions), admin access left out. */
  devicesAllocated: number;
  /** Findings of placement-time rules on pods and claims already running, not counted (`admission: true` counts them). */
  runningExempt: number;
  /** Decision objects merged into an object of the manifests as patches. */
  patched: number;
  /** Whole decision objects that replaced an object of the manifests. */
  replaced: number;
  /** Decision objects that were not in the manifests. */
  added: number;
  /** Decision Bindings. */
  bound: number;
  /** Bindings and allocations the decisions made or changed. */
  decided: number;
  /** Every bound pod (after the decisions): `namespace/name` → node. */
  bindings: Record<string, string>;
  /** The pods the decisions bound or moved (`namespace/name`, sorted). */
  newBindings: string[];
  /** Pods bound in the manifests that the decisions evict (sorted). */
  evicted: string[];
  warnings: string[];
}

/** `diff`'s second argument: the two decision manifests (`--ours`, `--theirs`), named `ours` / `theirs` in messages unless named. */
export interface DiffSpec {
  ours: Manifests;
  theirs: Manifests;
}

/** One side of `diff`, as `gangpack diff -o json` prints it. */
export interface DiffSide {
  /** The validator found no broken rule. */
  valid: boolean;
  /** Pods this side's decisions bound or moved. */
  podsPlaced: number;
  podsBound: number;
  devicesAllocated: number;
  devicesUnallocated: number;
  /** PodGroups (`namespace/name`) placed below `minCount` or across topology domains. */
  gangsSplit: string[];
  /** Pods (`namespace/name`) this side evicts. */
  evicted: string[];
  /** This side's broken rules. */
  violations: Finding[];
}

/** What `diff` found: every field of the object `gangpack diff -o json` prints, and the command's output. */
export interface DiffResult {
  ours: DiffSide;
  theirs: DiffSide;
  /** Pods (`namespace/name`) placed by one side only. */
  placedByOursOnly: string[];
  placedByTheirsOnly: string[];
  /** Pods both place, on different nodes. */
  placedOnDifferentNodes: { pod: string; ours: string; theirs: string }[];
  evictedByOursOnly: string[];
  evictedByTheirsOnly: string[];
  /** The two place and evict the same pods on the same nodes (the table's last line). */
  same: boolean;
  /** The command's exit status: 0 (both valid) or 4. */
  exitCode: 0 | 4;
  /** Exactly what `gangpack diff` prints. */
  table: string;
  warnings: string[];
}

/** `capacity`'s second argument (`gangpack capacity --key ... --whole --gang-pods N`). */
export interface CapacitySpec {
  /** A node label grouping nodes into domains (`--key`); `null`: the whole cluster as one domain (`--whole`); left out: the first PodGroup topology key (by PodGroup name), else the whole cluster. */
  key?: string | null;
  /** Pods of the gang shape, each with 8 devices (`--gang-pods`, default 8); 1 leaves it out. */
  gangPods?: number;
}

/** What `capacity` found: exactly the object `gangpack capacity -o json` prints, and the table. */
export interface CapacityResult extends CapacityReport {
  /** Exactly what `gangpack capacity` prints. */
  table: string;
  warnings: string[];
}

/** `gen`'s sizes: a few nodes in one or two racks; about a dozen nodes in up to four racks; dozens of nodes in up to eight racks. Any case. */
export type GenSize = "small" | "medium" | "large";

/** `gen`'s workloads: PodGroups only, pods without a PodGroup only, or both. Any case. */
export type GenKind = "gangs" | "pods" | "mixed";

/** `gen`'s options, the command's flags (`gangpack gen --seed N --size S --kind K -o O`). */
export interface GenOptions {
  /** The seed (`--seed`, default 0): the same options give the same bytes on every machine. */
  seed?: number;
  /** Default `"small"`. */
  size?: GenSize;
  /** Default `"mixed"`. */
  kind?: GenKind;
  /** Which features the scenario may use (`--features`): `"all"` (default), `"none,+topology"`, `"all,-sharing,-partitioning"`, or a plain list of names meaning exactly those. Names: `sharing`, `partitioning`, `device-taints`, `node-taints`, `topology`, `composite-groups`, `priorities`, `cel`, `admin-access`, `first-available`, `allocation-mode-all`, `constraints`. An unknown name throws `InvalidArgument` with the closest name. */
  features?: string;
  /** The scenario as a stream of watch events (`--events`): `text` is what `gangpack gen --events` prints and `events` the same events as objects; no `list`, and no `output`. */
  events?: boolean;
  /** The format of `text` (`-o`): `"yaml"` (default) or `"json"`. */
  output?: "yaml" | "json";
}

/** One watch event of `gen({ events: true })`, as `kubectl get --watch --output-watch-events -o json` prints it. */
export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
}

/** A generated cluster and its workload. */
export interface GenResult {
  /** Exactly what `gangpack gen` prints for the options. */
  text: string;
  /** The same `kind: List`, as objects (not with `events`). */
  list?: KubeList;
  /** With `events: true`: the watch events of `text`, as objects. */
  events?: WatchEvent[];
}

/** A candidate scenario handed to a `shrink` judge. */
export interface ShrinkCandidate {
  /** The candidate as a `kind: List`, in the input's format (or `output`'s). */
  text: string;
  /** The same list, as objects. */
  list: KubeList;
}

/** A `shrink` judge: `true` when the candidate still fails (it is kept), `false` when it passes, `"stop"` to stop with the best so far. Synchronous; a judge that throws stops the shrink and the error is rethrown. */
export type ShrinkJudge = (candidate: ShrinkCandidate) => boolean | "stop";

/** `shrink`'s options (`gangpack shrink --max-runs --keep-numbers`, and a time bound). */
export interface ShrinkOptions {
  /** The most judge calls, the input's included (default 10,000). */
  maxRuns?: number;
  /** Stop after this many milliseconds, with the best so far. */
  maxTimeMs?: number;
  /** Leave numbers as they are (by default integers above 1 are tried as 1). */
  keepNumbers?: boolean;
  /** The format of candidates and of `text`: the first input's (default), `"yaml"` or `"json"`. */
  output?: "yaml" | "json";
}

/** Objects, list items and fields of a scenario. */
export interface ShrinkSize {
  objects: number;
  items: number;
  fields: number;
}

/** What `shrink` made of a failing scenario. */
export interface ShrinkResult {
  /** The smallest failing scenario found, as a `kind: List` text. */
  text: string;
  /** The same, as objects. */
  list: KubeList;
  /** Judge calls made (cached candidates are not judged again). */
  runs: number;
  /** Candidates answered from the cache. */
  cached: number;
  /** Rounds of the passes. */
  rounds: number;
  before: ShrinkSize;
  after: ShrinkSize;
  /** Why it stopped early, if it did: `"maxRuns"`, or `"judge"` (the judge said stop, or `maxTimeMs` passed). */
  stopped: "maxRuns" | "judge" | null;
}

/** One command line for `runCli` (arguments parsed and files read by the host). */
export interface CliRequest {
  command: "plan" | "explain" | "taint" | "demo" | "check" | "diff";
  files?: InputFile[];
  output?: "table" | "yaml" | "json";
  options?: Options;
  group?: string;
  pod?: string;
  taint?: TaintSpec;
  /** `demo --manifests`. */
  manifests?: boolean;
  /** `check --decisions`: decision objects applied over `files` first. */
  decisions?: InputFile[];
  /** `check --admission`. */
  admission?: boolean;
  /** `diff --ours` (required for `diff`). */
  ours?: InputFile[];
  /** `diff --theirs` (required for `diff`). */
  theirs?: InputFile[];
}

export interface CliResult {
  stdout: string;
  /** Lines printed after `warning: ` on stderr. */
  warnings: string[];
  /** Lines printed after `error: ` on stderr. */
  errors: string[];
  code: number;
}

/**
 * The kinds of thrown errors (`error.name`). `Freed`: a method of a `Scheduler` that
 * was freed (`free()`, or the end of its `using` block), or one passed a freed
 * `Scheduler`.
 */
export type GangpackErrorKind = "InvalidInput" | "InvalidArgument" | "NotFound" | "AlreadyExists" | "Conflict" | "IoError" | "Freed";

/** One problem of a thrown error. */
export interface Problem {
  /** The whole line, as the command line prints it. */
  line: string;
  file?: string;
  doc?: number;
  item?: number;
  /** `Kind "namespace/name"`. */
  object?: string;
  /** The field path, empty for the whole object. */
  field: string;
  message: string;
}

/** What every function throws: `name` is the kind, `problems` the structured problems. */
export interface GangpackError extends Error {
  name: GangpackErrorKind;
  problems: Problem[];
}
