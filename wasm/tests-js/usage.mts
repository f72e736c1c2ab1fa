// Type-checked by `tsc -p wasm/tests-js` (strict) in the test command: the package's
// declarations must describe every call below, and reject the marked misuses. If the
// Rust side's shapes drift from the declarations, this stops compiling.

import {
  plan, explain, taint, formatList, runCli, demoManifests, version, Scheduler,
  check, diff, capacity, gen, shrink,
  type ShrinkCandidate, type ShrinkJudge, type ShrinkOptions, type ShrinkResult, type WatchEvent,
  type CheckResult, type Finding, type FindingObject, type DiffResult, type DiffSide,
  type CapacityResult, type CapacitySpec, type GenOptions, type GenResult, type GenSize,
  type ClusterSnapshot, type CycleResult, type DeviceStateName, type EvictionReport, type Model,
  type PlanResult, type ExplainResult, type TaintResult, type CliResult, type Options,
  type GangpackError, type Problem, type KubeObject, type Node, type NodeRemoval,
  type Policy, type ShapeMix, type TypicalShape,
  type NodeTableResult, type NodeRow, type FilterStage,
} from 'gangpack';
import init, { plan as webPlan, initSync, check as webCheck } from 'gangpack/web';
import nodeInit from 'gangpack';

const manifests: string = demoManifests(0);
const options: Options = { policy: 'FGD', now: '2026-11-05T08:00:00Z', strict: true };

const r: PlanResult = plan(manifests, options);
const code: 0 | 3 = r.exitCode;
const table: string = r.table;
const first: KubeObject | undefined = r.list.items[0];
const firstName: string | undefined = first?.metadata.name;
plan([manifests, { name: 'extra.yaml', text: manifests }]);
plan(manifests);

const e1: ExplainResult = explain(manifests, 'ml-training/gpt-moe-pretrain');
explain(manifests, { pod: 'inference/chat-0' });
explain(manifests, { podGroup: 'ml-training/gpt-moe-pretrain' }, { now: 0 });
explain(manifests, null);

const t: TaintResult = taint(manifests, { device: 'gpu.nvidia.com/gpu-r1-n1/gpu-0', effect: 'NoExecute' });
taint(manifests, { node: 'gpu-r1-n1', key: 'k', value: 'v', afterPlan: true });
taint(manifests, { rule: 'apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\n' });
const yaml: string = formatList(t.list, 'yaml');

const c: CliResult = runCli({ command: 'plan', files: [{ name: 'a.yaml', text: manifests }], output: 'json' });
const exit: number = c.code;

try {
  plan('kind: [');
} catch (err) {
  const e = err as GangpackError;
  const kind: 'InvalidInput' | 'InvalidArgument' | 'NotFound' | 'AlreadyExists' | 'Conflict' | 'IoError' | 'Freed' = e.name;
  const p: Problem | undefined = e.problems[0];
  const field: string | undefined = p?.field;
  void kind; void field;
}

// The stateful scheduler: load, cycle, break a GPU, let the clock run, explain, undo.
const session = Scheduler.fromManifests(manifests, { policy: 'BestFit' });
const cycled: CycleResult = session.cycle();
const firstOutcome: 'placed' | 'preempted' | 'pending' | 'invalid' | 'failed' | undefined = cycled.units[0]?.outcome;
const before = session.fork();
const report: EvictionReport = session.taintDevice('gpu.nvidia.com/gpu-r1-n1/gpu-0', { key: 'ecc', value: 'x', effect: 'NoExecute' });
session.advance('2026-11-05T09:00:00Z');
session.advance(1_800_000_000);
const view: ClusterSnapshot = session.snapshot({ topologyKey: 'topology.kubernetes.io/zone' });
const state: DeviceStateName | undefined = view.domains[0]?.nodes[0]?.devices[0]?.state;
const why: string = session.explain({ podGroup: 'ml-training/gpt-moe-pretrain' }).text;
const helps: string[] = session.explain({ podGroup: 'ml-training/gpt-moe-pretrain' }).verdict.lines;
const nodeTable: NodeTableResult = session.nodeTable({ pod: 'inference/chat-0' });
const firstRow: NodeRow | undefined = nodeTable.rows[0];
const rejectedBy: FilterStage | null | undefined = firstRow?.filter;
const rowScore: number | null | undefined = session.nodeTable('ml-training/gpt-moe-pretrain').rows[0]?.score;
const someNode: Node | null = session.node('gpu-r1-n1');
if (someNode) session.updateNode({ ...someNode, unschedulable: true });
session.cordonNode('gpu-r1-n1', false);
const removal: NodeRemoval = session.removeNode('gpu-r1-n1');
const deleted: string[] = removal.deletedPods;
const joined: EvictionReport = session.addNode(removal.node);
session.restore(before);
const yamlOut: string = session.toManifests();
const model: Model = { nodes: [], slices: [] };
const empty = Scheduler.fromModel(model, { stepBudget: 1000, allocatorStepBudget: 10_000 });

// Scoring policies and the workload mix Stranding and FGD score against.
const policies: Policy[] = ['BestFit', 'Spread', 'Stranding', 'FGD', 'best-fit', 'spread', 'stranding', 'fgd', 'FragmentationAware'];
const half: TypicalShape = { deviceClassName: 'gpu.nvidia.com', weight: 3, cpu: '4', memory: '16Gi', capacity: { memory: '40Gi' } };
const gang: TypicalShape = { deviceClassName: 'gpu.nvidia.com', count: 8, pods: 4, topologyKey: 'topology.kubernetes.io/rack', selectors: [{ cel: 'true' }] };
const mix: ShapeMix = { shapes: [half, gang, { deviceClassName: 'gpu.nvidia.com' }] };
const stranding = Scheduler.fromManifests(manifests, { policy: 'Stranding', workloadMix: mix });
Scheduler.fromModel(model, { policy: 'fgd', workloadMix: mix }).free();
stranding.setWorkloadMix(mix);
stranding.setWorkloadMix(null);
const tracked: ShapeMix | null = stranding.workloadMix();
const firstWeight: number | undefined = tracked?.shapes[0]?.weight;
stranding.free();
// @ts-expect-error: a shape names its DeviceClass
const classless: TypicalShape = { count: 1 };
// @ts-expect-error: a mix is an object of shapes
stranding.setWorkloadMix([half]);
// @ts-expect-error: weights are numbers
Scheduler.fromModel(model, { policy: 'Stranding', workloadMix: { shapes: [{ deviceClassName: 'g', weight: 'often' }] } });
const budgeted = session.explain('ml-training/gpt-moe-pretrain').explanation;
const budgetLimit: number | undefined = budgeted.budget?.limit;
const exhausted: 'Gang' | 'Allocator' | null = budgeted.search.exhausted;
const searchSteps: number = budgeted.search.steps;
plan(manifests, { stepBudget: 50_000, allocatorStepBudget: 500_000 });
plan(manifests, { podGroupPreemptionPolicy: true });
empty.free();
before.free();
session.free();
// @ts-expect-error: a device state is one of four names
const badState: 'broken' = state;

// check, diff, capacity and gen: the command line's results as data.
const checked: CheckResult = check(manifests);
const valid: boolean = checked.valid;
const patchedAndBound: number = checked.patched + checked.bound;
const checkCode: 0 | 4 = checked.exitCode;
const finding: Finding | undefined = checked.findings[0];
const involved: FindingObject | undefined = finding?.objects[0];
const involvedNs: string | undefined = involved?.namespace;
const counts: number[] = [checked.podsBound, checked.claimsAllocated, checked.groupsRunning, checked.devices,
  checked.devicesAllocated, checked.runningExempt, checked.replaced, checked.added, checked.decided];
const boundTo: string | undefined = checked.bindings['inference/chat-0'];
const moved: string[] = [...checked.newBindings, ...checked.evicted];
check(manifests, { decisions: [{ name: 'decision.yaml', text: r.table }], admission: true }, { skipInvalid: true });
check(manifests, null, options);
const compared: DiffResult = diff(manifests, { ours: 'a', theirs: ['b', { name: 'c.yaml', text: 'c' }] });
const side: DiffSide = compared.ours;
const split: string[] = side.gangsSplit;
const violations: Finding[] = compared.theirs.violations;
const firstMove: { pod: string; ours: string; theirs: string } | undefined = compared.placedOnDifferentNodes[0];
const same: boolean = compared.same;
const diffCode: 0 | 4 = compared.exitCode;
const capSpec: CapacitySpec = { key: 'topology.kubernetes.io/rack', gangPods: 4 };
const cap: CapacityResult = capacity(manifests, capSpec);
capacity(manifests, { key: null });
capacity(manifests);
const capTable: string = cap.table;
const labels: string[] = cap.labels;
const fragmented: number | undefined = cap.totals[0]?.fragmentation;
const size: GenSize = 'large';
const genOptions: GenOptions = { seed: 7, size, kind: 'gangs', output: 'json' };
const generated: GenResult = gen(genOptions);
const genText: string = generated.text;
const genItems: number | undefined = generated.list?.items.length;
const aimed: GenResult = gen({ seed: 3, features: 'none,+topology,+node-taints' });
const stream: WatchEvent[] | undefined = gen({ seed: 3, events: true }).events;
const firstType: 'ADDED' | 'MODIFIED' | 'DELETED' | undefined = stream?.[0]?.type;
gen();
gen({});
const judge: ShrinkJudge = ({ text }: ShrinkCandidate) => check(text).exitCode === 4;
const shrinkOptions: ShrinkOptions = { maxRuns: 100, maxTimeMs: 5_000, keepNumbers: false, output: 'yaml' };
const shrunk: ShrinkResult = shrink(manifests, judge, shrinkOptions);
const shrunkObjects: number = shrunk.after.objects;
const whyStopped: 'maxRuns' | 'judge' | null = shrunk.stopped;
shrink(manifests, () => 'stop');
// @ts-expect-error: a judge answers true, false or "stop"
shrink(manifests, () => 'yes');
// @ts-expect-error: features are a string, as on the command line
gen({ features: ['topology'] });
// @ts-expect-error: check's second argument is { decisions, admission }
check(manifests, 'decisions.yaml');
// @ts-expect-error: diff needs both sides
diff(manifests, { ours: 'a' });
// @ts-expect-error: check's exit codes are 0 and 4
const badCheckCode: 3 = checked.exitCode;
// @ts-expect-error: capacity's key is a label or null
capacity(manifests, { key: 1 });
// @ts-expect-error: sizes are small, medium and large
gen({ size: 'huge' });
// @ts-expect-error: gen's output is yaml or json
gen({ output: 'table' });

// Freeing sessions: `using` frees at the end of the block (Symbol.dispose); free() again is a no-op.
function scoped(text: string): number {
  using s = Scheduler.fromManifests(text);
  s.free();
  return 0;
}
const disposable: Disposable = Scheduler.fromManifests(manifests);

async function browser(text: string): Promise<string> {
  await init();
  return webPlan(text).table + webCheck(text).table;
}

function worker(bytes: BufferSource): void {
  initSync({ module: bytes });
}

async function isomorphic(): Promise<void> {
  await nodeInit();
}

// @ts-expect-error: not a policy
plan(manifests, { policy: 'Tightest' });
// @ts-expect-error: options are checked field by field
plan(manifests, { polcy: 'Spread' });
// @ts-expect-error: a taint names one target
taint(manifests, { effect: 'NoExecute' });
// @ts-expect-error: a rule carries its own effect
taint(manifests, { rule: 'x', effect: 'NoExecute' });
// @ts-expect-error: exit codes of plan are 0 and 3
const wrong: 2 = r.exitCode;
// @ts-expect-error: formats are yaml and json
formatList(t.list, 'toml');
// @ts-expect-error: a feature gate is on or off
plan(manifests, { podGroupPreemptionPolicy: 'on' });
// @ts-expect-error: a step budget is a number of steps
plan(manifests, { stepBudget: 'lots' });

void [valid, checkCode, involvedNs, counts, boundTo, moved, split, violations, firstMove, same, diffCode, capTable, labels,
  fragmented, genText, genItems, badCheckCode, scoped, disposable, worker, isomorphic];
void [code, table, firstName, e1, yaml, exit, browser, version, wrong, firstOutcome, report, why, helps, deleted, joined, yamlOut, badState, budgetLimit, exhausted, searchSteps, policies, firstWeight, classless, rejectedBy, rowScore];
