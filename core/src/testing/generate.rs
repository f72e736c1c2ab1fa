//! Proptest strategies for scenarios (feature `testing`).
//!
//! Every strategy draws a small *blueprint* — numbers and choices, one plan per node,
//! taint rule and job — and maps it deterministically into model objects whose names
//! derive from positions (`node-3`, `job-1-worker-0`, `job-1-worker-0-gpu`). Every
//! reference is resolved when the blueprint is mapped (a rule names a node modulo the
//! node count, a pod names its own claim), so shrinking the blueprint — dropping a
//! node, a job, a taint, lowering a count — always gives a smaller *consistent*
//! scenario: no dangling reference, every object valid.
//!
//! The running part of a scenario is placed by gangpack itself: the jobs drawn as
//! running are handed, alone, to a [`Scheduler`] for one cycle, and what it bound and
//! allocated is written back (pods' `node_name`, claims' `allocation`).
//!
//! A feature switched off ([`Features`]) takes its choices out of the blueprint's
//! draws (a weighted choice loses the alternative, a probability becomes 0) and its
//! objects out of the mapping; with every feature on, the draws are exactly those of
//! the generators before there were switches, so a seed gives the same scenario as
//! it always did (the proptest regression files depend on it).

use crate::alloc_prelude::*;

use proptest::prelude::*;
use proptest::strategy::{Just, Union, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::config::ScenarioConfig;
use super::features::Features;
use super::{Job, Namespace, Scenario};
use crate::{
    AllocationMode, CapacityRequestPolicy, CapacityRequestPolicyRange, ClaimSource, ConstraintKind,
    CounterSet, Device, DeviceAttribute, DeviceCapacity, DeviceClass, DeviceConstraint,
    DeviceCounterConsumption, DeviceRequest, DeviceSelector, DeviceSubRequest, DeviceTaint,
    DeviceTaintEffect, DeviceTaintRule, DeviceTaintSelector, DeviceToleration,
    DeviceTolerationOperator, DisruptionMode, ExactDeviceRequest, GangOptions, Node, Pod, PodGroup,
    PodResourceClaim, PreemptionPolicy, PriorityClass, Quantity, ResourceClaim, ResourceSlice,
    SchedulingPolicy, Taint, TaintEffect, Time, Toleration, TolerationOperator, TopologyConstraint,
};

// ------------------------------------------------------------------- vocabulary

/// The DRA driver of every generated device.
pub const DRIVER: &str = "gpu.gangpack.dev";
/// The node label of a node's rack (the conventional Kubernetes rack label).
pub const RACK_LABEL: &str = "topology.kubernetes.io/rack";
/// The node label of a node's block (a group of racks).
pub const BLOCK_LABEL: &str = "topology.gangpack.dev/block";
/// The node label naming the GPU model of a node (`h100`, `a100`, `l40s`).
pub const MODEL_LABEL: &str = "gangpack.dev/gpu-model";
/// The namespace of every job except those with admin access.
pub const NAMESPACE: &str = "team-a";
/// The namespace of jobs with admin access (labelled
/// `resource.kubernetes.io/admin-access: "true"`).
pub const ADMIN_NAMESPACE: &str = "ops";
/// The namespace label that admits claims with admin access.
pub const ADMIN_ACCESS_LABEL: &str = "resource.kubernetes.io/admin-access";
/// The key of generated node taints.
pub const NODE_TAINT_KEY: &str = "gangpack.dev/maintenance";
/// The key of taints drivers publish on devices.
pub const DEVICE_TAINT_KEY: &str = "gpu.gangpack.dev/ecc";
/// The key of the taints DeviceTaintRules put.
pub const RULE_TAINT_KEY: &str = "gangpack.dev/drain";

/// Every GPU of the driver (whole, shareable and partitions).
pub const GPU_CLASS: &str = "gpu.gangpack.dev";
/// H100s only.
pub const H100_CLASS: &str = "h100.gangpack.dev";
/// Devices with at least 64Gi of memory.
pub const BIG_CLASS: &str = "big.gangpack.dev";
/// Whole, exclusive GPUs (`mode == "whole"`).
pub const WHOLE_CLASS: &str = "whole.gangpack.dev";
/// Shareable GPUs (`mode == "shared"`).
pub const SHARED_CLASS: &str = "shared.gangpack.dev";
/// Partitions of partitionable GPUs (`mode == "partition"`).
pub const PARTITION_CLASS: &str = "partition.gangpack.dev";

/// The classes an `ExactCount` request picks from, by the blueprint's class index.
const EXACT_CLASSES: [&str; 4] = [GPU_CLASS, WHOLE_CLASS, H100_CLASS, BIG_CLASS];

/// GPU models: attribute value, node label value, memory.
const MODELS: [(&str, &str, &str); 3] = [
    ("NVIDIA H100 80GB HBM3", "h100", "80Gi"),
    ("NVIDIA A100 80GB PCIe", "a100", "80Gi"),
    ("NVIDIA L40S", "l40s", "48Gi"),
];
const NODE_CPU: [i64; 4] = [16, 32, 64, 128];
const NODE_MEMORY: [&str; 3] = ["64Gi", "256Gi", "1Ti"];
const POD_CPU: [i64; 4] = [1, 4, 8, 16];
const POD_MEMORY: [&str; 3] = ["1Gi", "16Gi", "64Gi"];
/// PriorityClasses: name, value, preemption policy.
const PRIORITIES: [(&str, i32, PreemptionPolicy); 3] = [
    ("batch-low", 100, PreemptionPolicy::PreemptLowerPriority),
    ("batch-high", 1000, PreemptionPolicy::PreemptLowerPriority),
    ("critical", 100_000, PreemptionPolicy::Never),
];

fn qty(s: &str) -> Quantity {
    Quantity::parse(s).expect("a constant quantity")
}

fn attr(name: &str) -> String {
    format!("{DRIVER}/{name}")
}

// ------------------------------------------------------------------- blueprint

/// How a node publishes its GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GpuKind {
    /// One exclusive device per GPU.
    Whole,
    /// One shareable device per GPU (`allowMultipleAllocations`, memory capacity).
    Shared,
    /// Shared counters per GPU, and a full device and two halves consuming them.
    Partitioned,
}

#[derive(Clone, Debug)]
struct NodePlan {
    gpus: u8,
    model: u8,
    cpu: u8,
    memory: u8,
    kind: GpuKind,
    taint: Option<TaintEffect>,
    gpu_taint: Option<(u8, DeviceTaintEffect)>,
    cordoned: bool,
}

#[derive(Clone, Debug)]
struct RulePlan {
    node: u8,
    gpu: Option<u8>,
    effect: DeviceTaintEffect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Single,
    Basic,
    Gang,
    LeaderWorker,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Exact,
    FirstAvailable,
    All,
    Capacity,
    Admin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Constraint {
    None,
    MatchNuma,
    MatchNvlink,
    DistinctNuma,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Topology {
    None,
    Rack,
    Block,
}

/// What a claim asks for.
#[derive(Clone, Debug)]
struct ClaimPlan {
    form: Form,
    class: u8,
    selector: bool,
    constraint: Constraint,
    tolerate: bool,
}

#[derive(Clone, Debug)]
struct JobPlan {
    shape: Shape,
    pods: u8,
    gpus: u8,
    claim: ClaimPlan,
    /// minCount in quarters of the pods (1–4).
    min_quarters: u8,
    topology: Topology,
    /// 0: no PriorityClass; else `PRIORITIES[priority - 1]`.
    priority: u8,
    disrupt_all: bool,
    cpu: u8,
    memory: u8,
    running: bool,
}

#[derive(Clone, Debug)]
struct Blueprint {
    nodes: Vec<NodePlan>,
    rules: Vec<RulePlan>,
    jobs: Vec<JobPlan>,
}

fn range(lo: usize, hi: usize) -> core::ops::RangeInclusive<usize> {
    lo..=hi.max(lo)
}

fn range_u8(lo: u8, hi: u8) -> core::ops::RangeInclusive<u8> {
    lo..=hi.max(lo)
}

fn chance(p: f64) -> f64 {
    if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) }
}

/// `Some` with probability `p` (proptest's `option::weighted` wants `0 < p < 1`).
fn maybe<S: Strategy + 'static>(p: f64, s: S) -> BoxedStrategy<Option<S::Value>>
where
    S::Value: Clone,
{
    let p = chance(p);
    if p <= 0.0 {
        Just(None).boxed()
    } else if p >= 1.0 {
        s.prop_map(Some).boxed()
    } else {
        prop::option::weighted(p, s).boxed()
    }
}

/// `true` with probability `p`, any `p`.
fn flag(p: f64) -> BoxedStrategy<bool> {
    let p = chance(p);
    if p <= 0.0 {
        Just(false).boxed()
    } else if p >= 1.0 {
        Just(true).boxed()
    } else {
        prop::bool::weighted(p).boxed()
    }
}

/// A weighted choice among the enabled alternatives (the first when none is).
fn pick<T: Clone + core::fmt::Debug + 'static>(choices: Vec<(u32, T, bool)>) -> Union<Just<T>> {
    let first = choices[0].1.clone();
    let mut on: Vec<(u32, Just<T>)> = choices
        .into_iter()
        .filter(|c| c.2)
        .map(|(w, v, _)| (w, Just(v)))
        .collect();
    if on.is_empty() {
        on.push((1, Just(first)));
    }
    Union::new_weighted(on)
}

fn node_plan(c: &ScenarioConfig) -> impl Strategy<Value = NodePlan> + use<> {
    let f = c.features;
    let rate = chance(c.taint_rate);
    let node_rate = if f.node_taints { rate } else { 0.0 };
    let device_rate = if f.device_taints { rate } else { 0.0 };
    let kind = pick(vec![
        (4, GpuKind::Whole, true),
        (1, GpuKind::Shared, f.sharing),
        (1, GpuKind::Partitioned, f.partitioning),
    ]);
    let node_effect = pick(vec![
        (1, TaintEffect::NoSchedule, true),
        (1, TaintEffect::PreferNoSchedule, true),
        (1, TaintEffect::NoExecute, true),
    ]);
    (
        range_u8(c.gpus_per_node.0, c.gpus_per_node.1),
        0..MODELS.len() as u8,
        0..NODE_CPU.len() as u8,
        0..NODE_MEMORY.len() as u8,
        kind,
        maybe(node_rate, node_effect),
        maybe(device_rate, (any::<u8>(), device_effect())),
        flag(node_rate / 3.0),
    )
        .prop_map(
            |(gpus, model, cpu, memory, kind, taint, gpu_taint, cordoned)| NodePlan {
                gpus,
                model,
                cpu,
                memory,
                kind,
                taint,
                gpu_taint,
                cordoned,
            },
        )
}

fn device_effect() -> Union<Just<DeviceTaintEffect>> {
    pick(vec![
        (1, DeviceTaintEffect::None, true),
        (1, DeviceTaintEffect::NoSchedule, true),
        (1, DeviceTaintEffect::NoExecute, true),
    ])
}

fn rule_plan() -> impl Strategy<Value = RulePlan> {
    (any::<u8>(), maybe(0.7, any::<u8>()), device_effect())
        .prop_map(|(node, gpu, effect)| RulePlan { node, gpu, effect })
}

fn claim_plan(c: &ScenarioConfig) -> impl Strategy<Value = ClaimPlan> + use<> {
    let f = c.features;
    let form = pick(vec![
        (8, Form::Exact, true),
        (2, Form::FirstAvailable, f.first_available),
        (1, Form::All, f.allocation_mode_all),
        (2, Form::Capacity, f.sharing),
        (1, Form::Admin, f.admin_access),
    ]);
    let constraint = pick(vec![
        (4, Constraint::None, true),
        (1, Constraint::MatchNuma, f.constraints),
        (1, Constraint::MatchNvlink, f.constraints),
        (1, Constraint::DistinctNuma, f.constraints),
    ]);
    let selector = flag(if f.cel { 0.2 } else { 0.0 });
    let taints = c.taint_rate > 0.0 && (f.node_taints || f.device_taints);
    let tolerate = flag(if taints { 0.3 } else { 0.0 });
    (
        form,
        0..EXACT_CLASSES.len() as u8,
        selector,
        constraint,
        tolerate,
    )
        .prop_map(|(form, class, selector, constraint, tolerate)| ClaimPlan {
            form,
            class,
            selector,
            constraint,
            tolerate,
        })
}

fn job_plan(c: &ScenarioConfig) -> impl Strategy<Value = JobPlan> + use<> {
    let (k, f) = (c.kinds, c.features);
    let shape = pick(vec![
        (2, Shape::Single, k.single_pods),
        (1, Shape::Basic, k.basic_groups),
        (3, Shape::Gang, k.gangs),
        (
            2,
            Shape::LeaderWorker,
            k.leader_workers && f.composite_groups,
        ),
    ]);
    let topology = pick(vec![
        (3, Topology::None, true),
        (2, Topology::Rack, f.topology),
        (1, Topology::Block, f.topology),
    ]);
    let priorities = if f.priorities {
        PRIORITIES.len() as u8
    } else {
        0
    };
    (
        shape,
        range_u8(c.pods_per_group.0.max(1), c.pods_per_group.1),
        range_u8(c.gpus_per_pod.0, c.gpus_per_pod.1),
        claim_plan(c),
        (1u8..=4, topology, 0u8..=priorities),
        (
            flag(0.3),
            0..POD_CPU.len() as u8,
            0..POD_MEMORY.len() as u8,
            flag(c.running),
        ),
    )
        .prop_map(
            |(
                shape,
                pods,
                gpus,
                claim,
                (min_quarters, topology, priority),
                (disrupt_all, cpu, memory, running),
            )| JobPlan {
                shape,
                pods,
                gpus,
                claim,
                min_quarters,
                topology,
                priority,
                disrupt_all,
                cpu,
                memory,
                running,
            },
        )
}

fn blueprint(c: &ScenarioConfig) -> impl Strategy<Value = Blueprint> + use<> {
    let rules = if c.taint_rate > 0.0 && c.features.device_taints {
        prop::collection::vec(maybe(c.taint_rate, rule_plan()), 0..=c.max_taint_rules)
            .prop_map(|v| v.into_iter().flatten().collect())
            .boxed()
    } else {
        Just(Vec::new()).boxed()
    };
    (
        prop::collection::vec(node_plan(c), range(c.nodes.0.max(1), c.nodes.1)),
        rules,
        prop::collection::vec(job_plan(c), range(c.jobs.0, c.jobs.1)),
    )
        .prop_map(|(nodes, rules, jobs)| Blueprint { nodes, rules, jobs })
}

// ------------------------------------------------------------------- strategies

/// Whole scenarios: a cluster ([`cluster`]) and jobs ([`pod_group`]), part of them
/// already running (placed by gangpack's own scheduler, see the module docs).
///
/// Every object passes its model validation and [`Scenario::scheduler`] succeeds; a
/// shrunk scenario keeps both properties.
pub fn scenario(config: &ScenarioConfig) -> impl Strategy<Value = Scenario> + use<> {
    let c = config.clone();
    blueprint(config).prop_map(move |b| build(&c, &b))
}

/// Clusters only: namespaces, nodes in racks and blocks, DeviceClasses, ResourceSlices,
/// DeviceTaintRules and PriorityClasses; no workloads.
pub fn cluster(config: &ScenarioConfig) -> impl Strategy<Value = Scenario> + use<> {
    let c = ScenarioConfig {
        jobs: (0, 0),
        ..config.clone()
    };
    scenario(&c)
}

/// One pending job (named `job-0`): a PodGroup and its pods, or a single pod, with a
/// claim per GPU pod. Its claims use the classes every [`cluster`] defines.
pub fn pod_group(config: &ScenarioConfig) -> impl Strategy<Value = Job> + use<> {
    let c = config.clone();
    job_plan(config).prop_map(move |p| job(&c, 0, &p))
}

/// One claim (`team-a/claim-0-gpu`, or in `ops` with admin access) asking for 1 to
/// `gpus_per_pod` devices in any request form the config allows, valid against the
/// classes every [`cluster`] defines.
pub fn claim(config: &ScenarioConfig) -> impl Strategy<Value = ResourceClaim> + use<> {
    let c = config.clone();
    (
        claim_plan(config),
        range_u8(config.gpus_per_pod.0.max(1), config.gpus_per_pod.1),
    )
        .prop_map(move |(p, gpus)| {
            let ns = if p.form == Form::Admin {
                ADMIN_NAMESPACE
            } else {
                NAMESPACE
            };
            make_claim(&c, ns, "claim-0-gpu", gpus, &p)
        })
}

/// One scenario drawn from `seed`, for tools (`gangpack gen`): the same seed and
/// config always give the same scenario.
pub fn generate(config: &ScenarioConfig, seed: u64) -> Scenario {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    scenario(config)
        .new_tree(&mut runner)
        .expect("the scenario strategy never rejects")
        .current()
}

// ------------------------------------------------------------------- mapping

fn build(c: &ScenarioConfig, b: &Blueprint) -> Scenario {
    let mut s = infrastructure(c, b);
    let mut running = s.clone();
    for (j, plan) in b.jobs.iter().enumerate() {
        let job = job(c, j, plan);
        if plan.running {
            running.add_job(job.clone());
        }
        s.add_job(job);
    }
    if !running.pods.is_empty() {
        place_running(&mut s, &running);
    }
    add_workloads(&mut s);
    s
}

/// What a workload controller (a Job controller with the 1.37 Workload API) writes for
/// each PodGroup: a Workload of the same name with one template, `workers`, from which
/// the group was copied (`spec.workloadRef`).
fn add_workloads(s: &mut Scenario) {
    for g in &mut s.groups {
        let template = crate::PodGroupTemplate {
            name: "workers".into(),
            policy: g.policy,
            priority_class_name: g.priority_class_name.clone(),
            priority: g.priority,
            preemption_policy: g.preemption_policy,
            disruption_mode: g.disruption_mode,
            topology: g.topology.clone(),
            resource_claims: g.resource_claims.clone(),
        };
        let mut w = crate::Workload::new(&g.namespace, &g.name);
        w.pod_group_templates.push(template);
        g.workload_ref = Some(crate::WorkloadReference::new(&g.name, "workers"));
        s.workloads.push(w);
    }
}

/// Places `running` (the infrastructure and the running jobs) with one cycle of
/// gangpack's scheduler and writes what it bound and allocated into `s`.
fn place_running(s: &mut Scenario, running: &Scenario) {
    let mut sched = running
        .scheduler(GangOptions::default())
        .expect("a generated scenario builds a scheduler");
    sched.cycle();
    for p in sched.pods() {
        if let Some(node) = &p.node_name
            && let Some(x) = s
                .pods
                .iter_mut()
                .find(|x| x.namespace == p.namespace && x.name == p.name)
        {
            x.node_name = Some(node.clone());
        }
    }
    for cl in sched.claims() {
        if let Some(a) = &cl.allocation
            && let Some(x) = s
                .claims
                .iter_mut()
                .find(|x| x.namespace == cl.namespace && x.name == cl.name)
        {
            x.allocation = Some(a.clone());
        }
    }
}

fn infrastructure(c: &ScenarioConfig, b: &Blueprint) -> Scenario {
    let features = c.features;
    let mut namespaces = vec![Namespace {
        name: NAMESPACE.into(),
        labels: BTreeMap::default(),
    }];
    if features.admin_access {
        namespaces.push(Namespace {
            name: ADMIN_NAMESPACE.into(),
            labels: [(ADMIN_ACCESS_LABEL.to_string(), "true".to_string())].into(),
        });
    }
    let priority_classes = if features.priorities {
        PRIORITIES
            .iter()
            .map(|&(name, value, policy)| PriorityClass {
                preemption_policy: policy,
                ..PriorityClass::new(name, value)
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut s = Scenario {
        namespaces,
        device_classes: classes(features),
        priority_classes,
        ..Scenario::default()
    };
    let per_rack = c.nodes_per_rack.max(1);
    let per_block = c.racks_per_block.max(1);
    for (i, plan) in b.nodes.iter().enumerate() {
        let (node, slices) = node(i, i / per_rack, i / per_rack / per_block, plan);
        s.nodes.push(node);
        s.slices.extend(slices);
    }
    for (r, plan) in b.rules.iter().enumerate() {
        let at = plan.node as usize % b.nodes.len();
        let gpus = b.nodes[at].gpus;
        let device = match plan.gpu {
            Some(g) if gpus > 0 => Some(format!("gpu-{}", g % gpus)),
            _ => None,
        };
        s.taint_rules.push(DeviceTaintRule {
            name: format!("rule-{r}"),
            selector: Some(DeviceTaintSelector {
                driver: Some(DRIVER.into()),
                pool: Some(format!("node-{at}")),
                device,
            }),
            taint: DeviceTaint::new(RULE_TAINT_KEY, "planned", plan.effect.clone())
                .added_at(Time(0)),
        });
    }
    s
}

/// The DeviceClasses: with CEL, one per [`EXACT_CLASSES`] entry and one per GPU mode
/// the features allow; without, only [`GPU_CLASS`], without a selector (it selects
/// every device, all of them the driver's).
fn classes(f: Features) -> Vec<DeviceClass> {
    if !f.cel {
        return vec![DeviceClass {
            name: GPU_CLASS.into(),
            selectors: Vec::new(),
            extended_resource_name: None,
            config: Vec::new(),
        }];
    }
    let driver = format!("device.driver == \"{DRIVER}\"");
    let mode = |m: &str| format!("{driver} && device.attributes[\"{DRIVER}\"].mode == \"{m}\"");
    let mut classes = vec![
        DeviceClass::with_cel(GPU_CLASS, driver.clone()),
        DeviceClass::with_cel(
            H100_CLASS,
            format!(
                "{driver} && device.attributes[\"{DRIVER}\"].model == \"{}\"",
                MODELS[0].0
            ),
        ),
        DeviceClass::with_cel(
            BIG_CLASS,
            format!(
                "{driver} && device.capacity[\"{DRIVER}\"].memory.compareTo(quantity(\"64Gi\")) >= 0"
            ),
        ),
        DeviceClass::with_cel(WHOLE_CLASS, mode("whole")),
    ];
    if f.sharing {
        classes.push(DeviceClass::with_cel(SHARED_CLASS, mode("shared")));
    }
    if f.partitioning {
        classes.push(DeviceClass::with_cel(PARTITION_CLASS, mode("partition")));
    }
    classes
}

fn gpu_device(
    name: String,
    node: &str,
    g: u8,
    model: usize,
    memory: Quantity,
    mode: &str,
) -> Device {
    Device::new(name)
        .with_attribute("model", DeviceAttribute::String(MODELS[model].0.into()))
        .with_attribute("mode", DeviceAttribute::String(mode.into()))
        .with_attribute("index", DeviceAttribute::Int(i64::from(g)))
        .with_attribute("numaNode", DeviceAttribute::Int(i64::from(g / 4)))
        .with_attribute(
            "nvlinkDomain",
            DeviceAttribute::String(format!("{node}-nvl")),
        )
        .with_capacity("memory", memory)
}

fn node(i: usize, rack: usize, block: usize, plan: &NodePlan) -> (Node, Vec<ResourceSlice>) {
    let name = format!("node-{i}");
    let model = plan.model as usize % MODELS.len();
    let mut node = Node::new(&name)
        .with_label("kubernetes.io/hostname", &name)
        .with_label(RACK_LABEL, format!("rack-{rack}"))
        .with_label(BLOCK_LABEL, format!("block-{block}"))
        .with_allocatable(
            "cpu",
            Quantity::from_int(NODE_CPU[plan.cpu as usize % NODE_CPU.len()]),
        )
        .with_allocatable(
            "memory",
            qty(NODE_MEMORY[plan.memory as usize % NODE_MEMORY.len()]),
        )
        .with_allocatable("pods", Quantity::from_int(110));
    if let Some(effect) = plan.taint {
        node = node.with_taint(Taint::new(NODE_TAINT_KEY, "true", effect));
    }
    node.unschedulable = plan.cordoned;
    let gpus = plan.gpus.min(8);
    if gpus == 0 {
        return (node, Vec::new());
    }
    node = node.with_label(MODEL_LABEL, MODELS[model].1);
    let memory = qty(MODELS[model].2);
    let mut devices = ResourceSlice::node_local(format!("{name}-gpus"), DRIVER, &name, &name);
    let mut slices = Vec::new();
    for g in 0..gpus {
        match plan.kind {
            GpuKind::Whole => {
                devices.devices.push(gpu_device(
                    format!("gpu-{g}"),
                    &name,
                    g,
                    model,
                    memory,
                    "whole",
                ));
            }
            GpuKind::Shared => {
                let mut d = gpu_device(format!("gpu-{g}"), &name, g, model, memory, "shared");
                d.allow_multiple_allocations = true;
                d.capacity.insert(
                    "memory".into(),
                    DeviceCapacity {
                        value: memory,
                        request_policy: Some(CapacityRequestPolicy {
                            default: Some(memory),
                            valid_values: Vec::new(),
                            valid_range: Some(CapacityRequestPolicyRange {
                                min: qty("8Gi"),
                                max: None,
                                step: Some(qty("8Gi")),
                            }),
                        }),
                    },
                );
                devices.devices.push(d);
            }
            GpuKind::Partitioned => {
                let set = format!("gpu-{g}");
                let half = Quantity::from_nano(memory.as_nano() / 2);
                let consume = |q: Quantity| DeviceCounterConsumption {
                    counter_set: set.clone(),
                    counters: [("memory".to_string(), q)].into(),
                };
                let mut full = gpu_device(set.clone(), &name, g, model, memory, "whole");
                full.consumes_counters.push(consume(memory));
                devices.devices.push(full);
                for h in 0..2 {
                    let mut d = gpu_device(
                        format!("gpu-{g}-half-{h}"),
                        &name,
                        g,
                        model,
                        half,
                        "partition",
                    );
                    d.consumes_counters.push(consume(half));
                    devices.devices.push(d);
                }
            }
        }
    }
    if let Some((t, effect)) = &plan.gpu_taint {
        let target = format!("gpu-{}", t % gpus);
        if let Some(d) = devices.devices.iter_mut().find(|d| d.name == target) {
            // Dated, as the API server dates a taint written without `timeAdded`.
            d.taints.push(
                DeviceTaint::new(DEVICE_TAINT_KEY, "uncorrectable", effect.clone())
                    .added_at(Time(0)),
            );
        }
    }
    if plan.kind == GpuKind::Partitioned {
        let mut counters =
            ResourceSlice::node_local(format!("{name}-counters"), DRIVER, &name, &name);
        counters.pool.resource_slice_count = 2;
        devices.pool.resource_slice_count = 2;
        counters.shared_counters = (0..gpus)
            .map(|g| CounterSet {
                name: format!("gpu-{g}"),
                counters: [("memory".to_string(), memory)].into(),
            })
            .collect();
        slices.push(counters);
    }
    slices.insert(0, devices);
    (node, slices)
}

/// What a tolerating claim tolerates: the device taints and the rules' taints, with
/// `NoSchedule` and `NoExecute` named. A toleration without an effect would let the
/// device be allocated but not protect it from eviction (upstream counts only
/// `NoExecute` tolerations there), so a running job holding it would be due for
/// eviction at once: not a state a cluster stays in.
fn device_tolerations() -> Vec<DeviceToleration> {
    [DEVICE_TAINT_KEY, RULE_TAINT_KEY]
        .into_iter()
        .flat_map(|key| {
            [DeviceTaintEffect::NoSchedule, DeviceTaintEffect::NoExecute].map(|effect| {
                DeviceToleration {
                    key: key.into(),
                    operator: DeviceTolerationOperator::Exists,
                    value: String::new(),
                    effect: Some(effect),
                    toleration_seconds: None,
                }
            })
        })
        .collect()
}

fn make_claim(c: &ScenarioConfig, ns: &str, name: &str, gpus: u8, p: &ClaimPlan) -> ResourceClaim {
    let features = c.features;
    let n = u32::from(gpus.max(1));
    let tolerations = if p.tolerate && features.device_taints {
        device_tolerations()
    } else {
        Vec::new()
    };
    // The NUMA node 0 selector, with CEL.
    let numa0 = features.cel.then(|| DeviceSelector {
        cel: format!("device.attributes[\"{DRIVER}\"].numaNode == 0"),
    });
    let class = if features.cel {
        EXACT_CLASSES[p.class as usize % EXACT_CLASSES.len()]
    } else {
        GPU_CLASS
    };
    let exact = |class: &str, mode: AllocationMode| ExactDeviceRequest {
        tolerations: tolerations.clone(),
        ..ExactDeviceRequest::new(class).with_mode(mode)
    };
    let mut claim = ResourceClaim::new(ns, name);
    let request = match p.form {
        Form::Exact => {
            let mut r = exact(class, AllocationMode::ExactCount(n));
            if p.selector {
                r.selectors.extend(numa0);
            }
            DeviceRequest::exactly("gpu", r)
        }
        Form::FirstAvailable => {
            let sub = |name: &str, class: &str| DeviceSubRequest {
                tolerations: tolerations.clone(),
                ..DeviceSubRequest::new(name, class).with_mode(AllocationMode::ExactCount(n))
            };
            let subs = if features.cel {
                vec![sub("h100", H100_CLASS), sub("any", class)]
            } else {
                vec![sub("any", class)]
            };
            DeviceRequest::first_available("gpu", subs)
        }
        Form::All => {
            let mut r = exact(class, AllocationMode::All);
            r.selectors.extend(numa0);
            DeviceRequest::exactly("gpu", r)
        }
        Form::Capacity => {
            let class = if features.sharing && features.cel {
                SHARED_CLASS
            } else {
                GPU_CLASS
            };
            let mut r = exact(class, AllocationMode::ExactCount(n));
            r.capacity.insert("memory".into(), qty("20Gi"));
            DeviceRequest::exactly("gpu", r)
        }
        Form::Admin => {
            let mut r = exact(GPU_CLASS, AllocationMode::ExactCount(1));
            r.admin_access = true;
            DeviceRequest::exactly("gpu", r)
        }
    };
    claim.spec.requests.push(request);
    let many = n >= 2 && matches!(p.form, Form::Exact | Form::FirstAvailable);
    let kind = match p.constraint {
        Constraint::None => None,
        Constraint::MatchNuma => Some(ConstraintKind::MatchAttribute(attr("numaNode"))),
        Constraint::MatchNvlink => Some(ConstraintKind::MatchAttribute(attr("nvlinkDomain"))),
        Constraint::DistinctNuma => Some(ConstraintKind::DistinctAttribute(attr("numaNode"))),
    };
    if let Some(kind) = kind.filter(|_| many) {
        claim.spec.constraints.push(DeviceConstraint {
            requests: Vec::new(),
            kind,
        });
    }
    claim
}

fn job(c: &ScenarioConfig, j: usize, p: &JobPlan) -> Job {
    let ns = if p.claim.form == Form::Admin {
        ADMIN_NAMESPACE
    } else {
        NAMESPACE
    };
    let base = format!("job-{j}");
    let (priority, policy, class) = match p.priority as usize {
        0 => (0, PreemptionPolicy::PreemptLowerPriority, None),
        k => {
            let (name, value, policy) = PRIORITIES[(k - 1) % PRIORITIES.len()];
            (value, policy, Some(name.to_string()))
        }
    };
    let creation = Time(i64::try_from(j).unwrap_or(i64::MAX));
    // (name, gpus) of each pod.
    let members: Vec<(String, u8)> = match p.shape {
        Shape::Single => vec![(base.clone(), p.gpus)],
        Shape::Basic | Shape::Gang => (0..p.pods)
            .map(|k| (format!("{base}-{k}"), p.gpus))
            .collect(),
        Shape::LeaderWorker => core::iter::once((format!("{base}-leader"), 0))
            .chain((0..p.pods).map(|k| (format!("{base}-worker-{k}"), p.gpus.max(1))))
            .collect(),
    };
    let group = match p.shape {
        Shape::Single => None,
        shape => {
            let count = members.len() as u32;
            let policy_of = match shape {
                Shape::Basic => SchedulingPolicy::Basic,
                Shape::LeaderWorker => SchedulingPolicy::Gang { min_count: count },
                _ => SchedulingPolicy::Gang {
                    min_count: (count * u32::from(p.min_quarters.clamp(1, 4))).div_ceil(4),
                },
            };
            let mut g = PodGroup::new(ns, &base, policy_of);
            g.priority_class_name.clone_from(&class);
            g.priority = Some(priority);
            g.preemption_policy = Some(policy);
            g.creation = creation;
            if policy_of.is_gang() {
                if p.disrupt_all {
                    g.disruption_mode = DisruptionMode::All;
                }
                let key = match p.topology {
                    Topology::None => None,
                    _ if !c.features.topology => None,
                    Topology::Rack => Some(RACK_LABEL),
                    Topology::Block => Some(BLOCK_LABEL),
                };
                if let Some(key) = key {
                    g.topology.push(TopologyConstraint::new(key));
                }
            }
            Some(g)
        }
    };
    let mut out = Job {
        group,
        pods: Vec::new(),
        claims: Vec::new(),
    };
    for (name, gpus) in members {
        let mut pod = Pod::new(ns, &name);
        pod.priority = priority;
        pod.preemption_policy = policy;
        pod.creation = creation;
        pod.requests.insert(
            "cpu".into(),
            Quantity::from_int(POD_CPU[p.cpu as usize % POD_CPU.len()]),
        );
        pod.requests.insert(
            "memory".into(),
            qty(POD_MEMORY[p.memory as usize % POD_MEMORY.len()]),
        );
        if p.claim.tolerate && c.features.node_taints {
            pod.tolerations.push(Toleration {
                key: NODE_TAINT_KEY.into(),
                operator: TolerationOperator::Exists,
                value: String::new(),
                effect: None,
                toleration_seconds: None,
            });
        }
        if out.group.is_some() {
            pod.scheduling_group = Some(base.clone());
        }
        if gpus > 0 {
            let claim_name = format!("{name}-gpu");
            pod.resource_claims.push(PodResourceClaim {
                name: "gpu".into(),
                source: ClaimSource::ClaimName(claim_name.clone()),
            });
            out.claims
                .push(make_claim(c, ns, &claim_name, gpus, &p.claim));
        }
        out.pods.push(pod);
    }
    out
}
