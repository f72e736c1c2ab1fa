/** Manifest text as `kubectl get -o yaml|json` prints it, or several texts, each optionally named (the name appears in messages). */
export type Manifests = string | Array<string | InputFile>;

/** One text of manifests and the name messages give it. */
export interface InputFile {
  name: string;
  text: string;
}

/** Scoring policy: how to choose among feasible nodes and racks. */
export type Policy = "BestFit" | "Spread" | "FragmentationAware" | "best-fit" | "spread" | "fragmentation-aware";

/** The options every call takes (the command line's global flags). */
export interface Options {
  /** The logical clock: RFC 3339 text or seconds since the Unix epoch. Default: the latest timestamp in the input. */
  now?: string | number;
  policy?: Policy;
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

/** The kinds of thrown errors (`error.name`). */
export type GangpackErrorKind = "InvalidInput" | "InvalidArgument" | "NotFound" | "AlreadyExists" | "Conflict" | "IoError";

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
