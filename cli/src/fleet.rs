//! `gangpack gen --fleet NODES`: a large, realistic GPU cluster and its workload as
//! Kubernetes 1.37 manifests, built by plain deterministic code from a SplitMix64
//! seeded with `--seed` (no proptest, no scheduler: 12,500 nodes, 100,000 GPUs, take a
//! few seconds in a release build).
//!
//! # What it writes
//!
//! The cluster is laid out in blocks of racks of nodes: [`NODES_PER_RACK`] nodes per
//! rack, [`RACKS_PER_BLOCK`] racks per block (2,560 nodes, 20,480 GPUs a block; the
//! last rack and block are partial when NODES is not a multiple). Every node (`node-00000`, ...) is an
//! 8 × H100 HGX node (208 cores, 1,872 GiB) labelled with its rack
//! ([`FLEET_RACK_LABEL`], `rack-0000`, ...) and its block ([`FLEET_BLOCK_LABEL`],
//! `block-00`, ...). Its GPUs are one ResourceSlice of the `gpu.nvidia.com` driver, one
//! pool named after the node, devices `gpu-0` … `gpu-7` with `productName`, `uuid`,
//! `index`, `numaNode` (0 for GPUs 0-3, 1 for 4-7), `nvlinkDomain`, PCIe root and an
//! 80 GiB `memory` capacity. The NVLink domain is **per node** (`node-00000-nvswitch`):
//! an HGX H100 board's NVSwitch joins its eight GPUs and nothing else (rack-scale
//! NVLink, NVL72-style, would be a per-rack value; this fleet models HGX nodes).
//!
//! - One DeviceClass `gpu.nvidia.com` (CEL on the driver, extended resource
//!   `nvidia.com/gpu`) and three PriorityClasses: `batch-low` (1,000),
//!   `training-medium` (10,000), `critical-high` (100,000).
//! - About 1 % of the GPUs tainted: in the slices, `NoSchedule` (ECC threshold),
//!   `NoExecute` (Xid 79) and `None` (thermal, informational) in turn, each with its
//!   `timeAdded`; and by DeviceTaintRules: every fourth tainted GPU by a rule that
//!   selects its driver, pool and device (`NoExecute`, `NoSchedule`, `None` in turn),
//!   plus, from 256 nodes, one rule that drains a whole node (its pool, `NoSchedule`).
//! - About 70 % of the GPUs allocated to running work, never a tainted GPU (whatever
//!   the effect): gangs (`training/train-NNNN`: a Workload, a PodGroup with
//!   `gang.minCount` = its pods and `disruptionMode: all`, pods of 8 GPUs, one per
//!   whole node) of 8 and 16 pods in one rack (topology constraint on the rack label)
//!   and of 32 and 128 pods in one block (on the block label), about 55 % of the GPUs;
//!   then single pods (`inference/infer-NNNNN`) of 1, 2 and 4 GPUs on one NUMA node,
//!   packed from a cursor that jumps now and then. With four blocks or more, the
//!   first block is kept clear of running work (a block drained for the next
//!   pre-training job), so the others carry the 70 %. Every pod is bound
//!   (`spec.nodeName`), its ResourceClaim allocated on its node (`status.allocation`
//!   with the single-node selector upstream writes) and reserved for it.
//! - Pending: one gang `training/pretrain-frontier` of min(2,048, max(2, NODES / 6))
//!   pods × 8 GPUs in one block, priority `critical-high`, and six single pods. On
//!   12,500 nodes the 2,048 pods (16,384 GPUs) fit the clear first block, less the
//!   nodes with a tainted GPU; on smaller fleets (no clear block) the gang waits for
//!   preemption or stays pending.
//!
//! The same NODES and seed give the same bytes; [`fleet_scenario`] is the scenario
//! (plain model data) and [`FleetSummary`] what `gen` prints on stderr.

use std::fmt;

use gangpack::testing::{Namespace, Scenario, SplitMix64};
use gangpack::{
    AllocationMode, AllocationResult, ClaimSource, ConstraintKind, Device, DeviceAttribute,
    DeviceClass, DeviceConstraint, DeviceRequest, DeviceRequestAllocationResult, DeviceTaint,
    DeviceTaintEffect, DeviceTaintRule, DeviceTaintSelector, DisruptionMode, ExactDeviceRequest,
    Node, NodeSelector, Pod, PodGroup, PodGroupTemplate, PodResourceClaim, PreemptionPolicy,
    PriorityClass, Quantity, ResourceClaim, ResourceSlice, SchedulingPolicy, TaintEffect, Time,
    Toleration, TolerationOperator, TopologyConstraint, Workload, WorkloadReference,
};

use crate::{EXIT_OK, Failure, Format, Outcome};

/// The size the docs suggest: 12,500 nodes, 100,000 GPUs.
pub const FLEET_NODES: u32 = 12_500;
/// The most nodes `--fleet` takes (node names have five digits).
pub const MAX_FLEET_NODES: u32 = 100_000;
/// GPUs per node.
pub const GPUS_PER_NODE: usize = 8;
/// Nodes per rack.
pub const NODES_PER_RACK: usize = 16;
/// Racks per block.
pub const RACKS_PER_BLOCK: usize = 160;
/// The rack label of every node (the one the examples and the demo use).
pub const FLEET_RACK_LABEL: &str = "topology.kubernetes.io/rack";
/// The block label of every node.
pub const FLEET_BLOCK_LABEL: &str = "topology.kubernetes.io/block";
/// The DRA driver, its DeviceClass and the claims' request name.
const DRIVER: &str = "gpu.nvidia.com";
const CLASS: &str = "gpu.nvidia.com";
const REQUEST: &str = "gpus";
const PRODUCT: &str = "NVIDIA H100 80GB HBM3";
const TRAINING: &str = "training";
const INFERENCE: &str = "inference";
/// The pending gang.
pub const PENDING_GANG: &str = "training/pretrain-frontier";
const PENDING_GANG_NAME: &str = "pretrain-frontier";
const PENDING_GANG_MAX: usize = 2_048;
/// Per mille of the GPUs: allocated in all, to gangs, tainted.
const ALLOCATED_PERMILLE: usize = 700;
const GANG_PERMILLE: usize = 550;
const TAINTED_PERMILLE: usize = 10;
/// From this many nodes on, one DeviceTaintRule drains a whole node.
const DRAIN_RULE_NODES: usize = 256;

const T_CLUSTER: &str = "2026-11-01T00:00:00Z";
const T_RUNNING: &str = "2026-11-03T00:00:00Z";
/// The latest timestamp written: the loader's clock.
const T_PENDING: &str = "2026-11-05T08:00:00Z";

/// `(name, value)` of the three PriorityClasses.
const LOW: (&str, i32) = ("batch-low", 1_000);
const MEDIUM: (&str, i32) = ("training-medium", 10_000);
const HIGH: (&str, i32) = ("critical-high", 100_000);

/// The running gangs' shapes: pods of 8 GPUs, whether one rack (else one block) holds
/// them, and how often each is drawn.
const GANG_SHAPES: [(usize, Level, usize); 4] = [
    (8, Level::Rack, 6),
    (16, Level::Rack, 3),
    (32, Level::Block, 3),
    (128, Level::Block, 1),
];
/// The running single pods' GPUs and how often each is drawn.
const SINGLE_SHAPES: [(usize, usize); 3] = [(1, 5), (2, 3), (4, 2)];
/// The pending single pods: GPUs and priority.
const PENDING_SINGLES: [(usize, (&str, i32)); 6] = [
    (1, HIGH),
    (1, LOW),
    (2, HIGH),
    (4, MEDIUM),
    (4, LOW),
    (8, HIGH),
];

/// The GPUs of a gang's pod: the whole node.
const WHOLE_NODE: [usize; GPUS_PER_NODE] = [0, 1, 2, 3, 4, 5, 6, 7];

/// What `gangpack gen --fleet` wrote, in numbers (its stderr line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FleetSummary {
    /// Nodes.
    pub nodes: usize,
    /// GPUs (8 a node).
    pub gpus: usize,
    /// GPUs with a taint (in a slice or from a DeviceTaintRule), any effect.
    pub tainted: usize,
    /// GPUs allocated to running pods' claims.
    pub allocated: usize,
    /// Running (bound) pods.
    pub running_pods: usize,
    /// Pending pods.
    pub pending_pods: usize,
}

impl fmt::Display for FleetSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let permille = self.allocated * 1000 / self.gpus.max(1);
        write!(
            f,
            "{} nodes, {} GPUs, {} tainted, {} allocated ({}.{} %), {} running pods, {} pending pods",
            self.nodes,
            self.gpus,
            self.tainted,
            self.allocated,
            permille / 10,
            permille % 10,
            self.running_pods,
            self.pending_pods
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Rack,
    Block,
}

impl Level {
    fn nodes(self) -> usize {
        match self {
            Level::Rack => NODES_PER_RACK,
            Level::Block => NODES_PER_RACK * RACKS_PER_BLOCK,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Level::Rack => FLEET_RACK_LABEL,
            Level::Block => FLEET_BLOCK_LABEL,
        }
    }
}

struct Rng(SplitMix64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        let n = n.max(1) as u64;
        (self.0.next_u64() % n) as usize
    }

    /// One of `choices` by weight.
    fn weighted<T: Copy>(&mut self, choices: &[(T, usize)]) -> T {
        let total: usize = choices.iter().map(|c| c.1).sum();
        let mut x = self.below(total);
        for &(value, weight) in choices {
            if x < weight {
                return value;
            }
            x -= weight;
        }
        choices[choices.len() - 1].0
    }

    /// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    fn gpu_uuid(&mut self) -> String {
        let (a, b) = (self.0.next_u64(), self.0.next_u64());
        format!(
            "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
}

fn time(s: &str) -> Time {
    Time::parse_rfc3339(s).expect("a constant time")
}

fn qty(s: &str) -> Quantity {
    Quantity::parse(s).expect("a constant quantity")
}

/// A count as an `i64` (counts here are far below `i64::MAX`).
fn count(n: usize) -> i64 {
    i64::try_from(n).expect("a small count")
}

fn node_name(i: usize) -> String {
    format!("node-{i:05}")
}

fn priority_class((name, value): (&str, i32)) -> PriorityClass {
    PriorityClass {
        preemption_policy: PreemptionPolicy::PreemptLowerPriority,
        ..PriorityClass::new(name, value)
    }
}

fn node(i: usize) -> Node {
    let name = node_name(i);
    let rack = i / NODES_PER_RACK;
    let block = rack / RACKS_PER_BLOCK;
    Node::new(&name)
        .with_label("kubernetes.io/hostname", &name)
        .with_label("kubernetes.io/os", "linux")
        .with_label("kubernetes.io/arch", "amd64")
        .with_label("node.kubernetes.io/instance-type", "a3-highgpu-8g")
        .with_label("topology.kubernetes.io/region", "us-central1")
        .with_label("topology.kubernetes.io/zone", "us-central1-a")
        .with_label(FLEET_RACK_LABEL, format!("rack-{rack:04}"))
        .with_label(FLEET_BLOCK_LABEL, format!("block-{block:02}"))
        .with_allocatable("cpu", Quantity::from_int(206))
        .with_allocatable("memory", qty("1850Gi"))
        .with_allocatable("ephemeral-storage", qty("5900Gi"))
        .with_allocatable("pods", Quantity::from_int(110))
}

fn slice(i: usize, rng: &mut Rng, memory: Quantity) -> ResourceSlice {
    let name = node_name(i);
    let mut slice = ResourceSlice::node_local(format!("{name}-{DRIVER}"), DRIVER, &name, &name);
    for g in 0..GPUS_PER_NODE {
        let index = count(g);
        slice.devices.push(
            Device::new(format!("gpu-{g}"))
                .with_attribute("type", DeviceAttribute::String("gpu".into()))
                .with_attribute("productName", DeviceAttribute::String(PRODUCT.into()))
                .with_attribute("brand", DeviceAttribute::String("Nvidia".into()))
                .with_attribute("architecture", DeviceAttribute::String("Hopper".into()))
                .with_attribute(
                    "cudaComputeCapability",
                    DeviceAttribute::Version("9.0.0".into()),
                )
                .with_attribute(
                    "driverVersion",
                    DeviceAttribute::Version("570.133.20".into()),
                )
                .with_attribute("index", DeviceAttribute::Int(index))
                .with_attribute("uuid", DeviceAttribute::String(rng.gpu_uuid()))
                .with_attribute("numaNode", DeviceAttribute::Int(index / 4))
                .with_attribute(
                    "nvlinkDomain",
                    DeviceAttribute::String(format!("{name}-nvswitch")),
                )
                .with_attribute(
                    "resource.kubernetes.io/pcieRoot",
                    DeviceAttribute::String(format!("pci0000:{:02x}", 0x10 * (g / 2 + 1))),
                )
                .with_capacity("memory", memory),
        );
    }
    slice
}

/// The taints: each in a slice or by a rule, on GPUs drawn without repetition.
fn taint_devices(rng: &mut Rng, s: &mut Scenario, tainted: &mut [u8]) {
    let nodes = tainted.len();
    let gpus = nodes * GPUS_PER_NODE;
    let (from, to) = (time(T_CLUSTER).0 + 86_400, time(T_PENDING).0 - 3_600);
    let when =
        |rng: &mut Rng| Time(from + count(rng.below(usize::try_from(to - from).unwrap_or(1))));
    let mut wanted = (gpus * TAINTED_PERMILLE / 1000).max(4);
    if nodes >= DRAIN_RULE_NODES {
        let at = rng.below(nodes);
        tainted[at] = 0xff;
        let name = node_name(at);
        s.taint_rules.push(DeviceTaintRule {
            name: format!("drain-{name}"),
            selector: Some(DeviceTaintSelector {
                driver: Some(DRIVER.into()),
                pool: Some(name),
                device: None,
            }),
            taint: DeviceTaint::new(
                "ops.example.com/maintenance",
                "firmware-upgrade",
                DeviceTaintEffect::NoSchedule,
            )
            .added_at(when(rng)),
        });
        wanted = wanted.saturating_sub(GPUS_PER_NODE).max(4);
    }
    let mut k = 0;
    while k < wanted.min(gpus) {
        let at = rng.below(gpus);
        let (n, g) = (at / GPUS_PER_NODE, at % GPUS_PER_NODE);
        if tainted[n] & (1 << g) != 0 {
            continue;
        }
        tainted[n] |= 1 << g;
        let taint = match k % 4 {
            0 => DeviceTaint::new(
                "gpu.nvidia.com/ecc",
                "correctable-threshold",
                DeviceTaintEffect::NoSchedule,
            ),
            1 => DeviceTaint::new("gpu.nvidia.com/xid", "79", DeviceTaintEffect::NoExecute),
            2 => DeviceTaint::new(
                "gpu.nvidia.com/thermal",
                "throttled",
                DeviceTaintEffect::None,
            ),
            _ => {
                let effect = match (k / 4) % 3 {
                    0 => DeviceTaintEffect::NoExecute,
                    1 => DeviceTaintEffect::NoSchedule,
                    _ => DeviceTaintEffect::None,
                };
                let name = node_name(n);
                s.taint_rules.push(DeviceTaintRule {
                    name: format!("rma-{name}-gpu-{g}"),
                    selector: Some(DeviceTaintSelector {
                        driver: Some(DRIVER.into()),
                        pool: Some(name),
                        device: Some(format!("gpu-{g}")),
                    }),
                    taint: DeviceTaint::new("ops.example.com/rma", "pending-replacement", effect)
                        .added_at(when(rng)),
                });
                k += 1;
                continue;
            }
        };
        s.slices[n].devices[g]
            .taints
            .push(taint.added_at(when(rng)));
        k += 1;
    }
}

/// The tolerations admission adds to every pod.
fn default_tolerations() -> Vec<Toleration> {
    [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    .into_iter()
    .map(|key| Toleration {
        key: key.into(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: Some(TaintEffect::NoExecute),
        toleration_seconds: Some(300),
    })
    .collect()
}

/// A pod of `gpus` GPUs with its claim `<pod>-gpu`, allocated `devices` on `node`
/// when given (and the pod bound there).
fn pod_and_claim(
    namespace: &str,
    name: &str,
    gpus: usize,
    (_, priority): (&str, i32),
    creation: Time,
    bound: Option<(usize, &[usize])>,
) -> (Pod, ResourceClaim) {
    let claim_name = format!("{name}-gpu");
    let mut pod = Pod::new(namespace, name);
    pod.priority = priority;
    pod.preemption_policy = PreemptionPolicy::PreemptLowerPriority;
    pod.creation = creation;
    pod.requests
        .insert("cpu".into(), Quantity::from_int(24 * count(gpus)));
    pod.requests
        .insert("memory".into(), qty(&format!("{}Gi", 200 * gpus)));
    pod.tolerations = default_tolerations();
    pod.resource_claims.push(PodResourceClaim {
        name: "gpu".into(),
        source: ClaimSource::ClaimName(claim_name.clone()),
    });
    let mut claim = ResourceClaim::new(namespace, &claim_name);
    claim.spec.requests.push(DeviceRequest::exactly(
        REQUEST,
        ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(gpus as u32)),
    ));
    let attribute = match gpus {
        8 => Some("nvlinkDomain"),
        2..=4 => Some("numaNode"),
        _ => None,
    };
    if let Some(a) = attribute {
        claim.spec.constraints.push(DeviceConstraint {
            requests: vec![REQUEST.into()],
            kind: ConstraintKind::MatchAttribute(format!("{DRIVER}/{a}")),
        });
    }
    if let Some((node, devices)) = bound {
        let name = node_name(node);
        claim.allocation = Some(AllocationResult {
            devices: devices
                .iter()
                .map(|g| DeviceRequestAllocationResult {
                    request: REQUEST.into(),
                    driver: DRIVER.into(),
                    pool: name.clone(),
                    device: format!("gpu-{g}"),
                    ..Default::default()
                })
                .collect(),
            config: Vec::new(),
            node_selector: Some(NodeSelector::single_node(&name)),
        });
        pod.node_name = Some(name);
    }
    (pod, claim)
}

/// A gang's Workload, PodGroup, pods and claims; `nodes` bound (one pod each, all 8
/// GPUs) or `None` for pending.
fn gang(
    s: &mut Scenario,
    name: &str,
    pods: usize,
    level: Level,
    priority: (&str, i32),
    creation: Time,
    nodes: Option<&[usize]>,
) {
    let policy = SchedulingPolicy::Gang {
        min_count: pods as u32,
    };
    let mut template = PodGroupTemplate::new("workers", policy);
    template.priority_class_name = Some(priority.0.into());
    template.priority = Some(priority.1);
    template.preemption_policy = Some(PreemptionPolicy::PreemptLowerPriority);
    template.disruption_mode = DisruptionMode::All;
    template.topology = vec![TopologyConstraint::new(level.label())];
    let mut group = PodGroup::new(TRAINING, name, policy);
    group.workload_ref = Some(WorkloadReference::new(name, "workers"));
    group
        .priority_class_name
        .clone_from(&template.priority_class_name);
    group.priority = template.priority;
    group.preemption_policy = template.preemption_policy;
    group.disruption_mode = DisruptionMode::All;
    group.topology.clone_from(&template.topology);
    group.creation = creation;
    let mut workload = Workload::new(TRAINING, name);
    workload.pod_group_templates.push(template);
    s.workloads.push(workload);
    s.groups.push(group);
    for k in 0..pods {
        let bound = nodes.map(|n| (n[k], &WHOLE_NODE[..]));
        let (mut pod, claim) = pod_and_claim(
            TRAINING,
            &format!("{name}-worker-{k}"),
            GPUS_PER_NODE,
            priority,
            creation,
            bound,
        );
        pod.scheduling_group = Some(name.into());
        s.pods.push(pod);
        s.claims.push(claim);
    }
}

/// `pods` whole free nodes in one domain of `level`, from a random domain on.
fn place_gang(rng: &mut Rng, free: &[u8], pods: usize, level: Level) -> Option<Vec<usize>> {
    let size = level.nodes();
    let domains = free.len().div_ceil(size);
    let start = rng.below(domains);
    (0..domains).find_map(|k| {
        let d = (start + k) % domains;
        let whole: Vec<usize> = (d * size..((d + 1) * size).min(free.len()))
            .filter(|&i| free[i] == 0xff)
            .take(pods)
            .collect();
        (whole.len() == pods).then_some(whole)
    })
}

/// The GPUs of `mask` (free ones) a single pod of `gpus` takes: the lowest free one, or
/// the lowest free ones of one NUMA node.
fn slot(mask: u8, gpus: usize) -> Option<Vec<usize>> {
    if gpus == 1 {
        return (mask != 0).then(|| vec![mask.trailing_zeros() as usize]);
    }
    (0..2).find_map(|half| {
        let bits: Vec<usize> = (half * 4..half * 4 + 4)
            .filter(|&g| mask & (1 << g) != 0)
            .take(gpus)
            .collect();
        (bits.len() == gpus).then_some(bits)
    })
}

/// The fleet of `nodes` nodes for `seed`, and its numbers.
pub fn fleet_scenario(nodes: u32, seed: u64) -> (Scenario, FleetSummary) {
    let n = nodes.clamp(1, MAX_FLEET_NODES) as usize;
    let gpus = n * GPUS_PER_NODE;
    let mut rng = Rng(SplitMix64::new(seed));
    let namespace = |name: &str| Namespace {
        name: name.into(),
        labels: [("kubernetes.io/metadata.name".to_string(), name.to_string())].into(),
    };
    let mut s = Scenario {
        namespaces: vec![namespace(TRAINING), namespace(INFERENCE)],
        device_classes: vec![DeviceClass {
            extended_resource_name: Some("nvidia.com/gpu".into()),
            ..DeviceClass::with_cel(CLASS, format!("device.driver == \"{DRIVER}\""))
        }],
        priority_classes: [LOW, MEDIUM, HIGH].map(priority_class).into(),
        ..Scenario::default()
    };
    let memory = qty("80Gi");
    for i in 0..n {
        s.nodes.push(node(i));
        s.slices.push(slice(i, &mut rng, memory));
    }
    let mut tainted = vec![0u8; n];
    taint_devices(&mut rng, &mut s, &mut tainted);
    let tainted_gpus: usize = tainted.iter().map(|m| m.count_ones() as usize).sum();
    // Free and untainted GPUs per node, one bit each.
    let mut free: Vec<u8> = tainted.iter().map(|m| !m).collect();
    let mut allocated = 0;
    let mut unit = 0i64;
    let running = time(T_RUNNING).0;

    // The landing block: with four blocks or more, the first is kept clear of running
    // work (its GPUs are taken out of `free` while the rest fills, then put back).
    let block_nodes = Level::Block.nodes();
    let landing = if n >= 4 * block_nodes {
        0..block_nodes
    } else {
        0..0
    };
    for i in landing.clone() {
        free[i] = 0;
    }

    // Gangs, whole nodes in one rack or block, up to their share.
    let budget = gpus * GANG_PERMILLE / 1000;
    let shapes: Vec<((usize, Level), usize)> =
        GANG_SHAPES.iter().map(|&(p, l, w)| ((p, l), w)).collect();
    let mut misses = 0;
    let mut gangs = 0;
    while misses < 32 {
        let (pods, level) = rng.weighted(&shapes);
        let priority = if rng.below(10) < 3 { LOW } else { MEDIUM };
        let placed = (allocated + pods * GPUS_PER_NODE <= budget)
            .then(|| place_gang(&mut rng, &free, pods, level))
            .flatten();
        let Some(nodes) = placed else {
            misses += 1;
            continue;
        };
        misses = 0;
        for &i in &nodes {
            free[i] = 0;
        }
        allocated += pods * GPUS_PER_NODE;
        gang(
            &mut s,
            &format!("train-{gangs:04}"),
            pods,
            level,
            priority,
            Time(running + unit),
            Some(&nodes),
        );
        gangs += 1;
        unit += 1;
    }

    // Single pods, packed from a cursor that jumps now and then, up to the total.
    let target = gpus * ALLOCATED_PERMILLE / 1000;
    let mut cursor = rng.below(n);
    let mut singles = 0;
    while allocated < target {
        let want = rng.weighted(&SINGLE_SHAPES).min(target - allocated);
        let priority = match rng.below(10) {
            0..=2 => LOW,
            3..=4 => MEDIUM,
            _ => HIGH,
        };
        if rng.below(8) == 0 {
            cursor = rng.below(n);
        }
        let found = [4, 2, 1].into_iter().filter(|&g| g <= want).find_map(|g| {
            (0..n).find_map(|k| {
                let i = (cursor + k) % n;
                slot(free[i], g).map(|bits| (i, bits))
            })
        });
        let Some((i, bits)) = found else {
            break;
        };
        cursor = i;
        for &g in &bits {
            free[i] &= !(1 << g);
        }
        allocated += bits.len();
        let (pod, claim) = pod_and_claim(
            INFERENCE,
            &format!("infer-{singles:05}"),
            bits.len(),
            priority,
            Time(running + unit),
            Some((i, &bits)),
        );
        s.pods.push(pod);
        s.claims.push(claim);
        singles += 1;
        unit += 1;
    }
    let running_pods = s.pods.len();
    for i in landing {
        free[i] = !tainted[i];
    }

    // Pending: the big gang, then a few single pods.
    let pending = time(T_PENDING);
    let pods = (n / 6).clamp(2, PENDING_GANG_MAX);
    gang(
        &mut s,
        PENDING_GANG_NAME,
        pods,
        Level::Block,
        HIGH,
        pending,
        None,
    );
    for (k, &(g, priority)) in PENDING_SINGLES.iter().enumerate() {
        let (pod, claim) = pod_and_claim(
            INFERENCE,
            &format!("infer-pending-{k}"),
            g,
            priority,
            pending,
            None,
        );
        s.pods.push(pod);
        s.claims.push(claim);
    }
    let summary = FleetSummary {
        nodes: n,
        gpus,
        tainted: tainted_gpus,
        allocated,
        running_pods,
        pending_pods: s.pods.len() - running_pods,
    };
    (s, summary)
}

pub(crate) fn run(
    nodes: u32,
    seed: u64,
    format: Format,
) -> (Result<Outcome, Failure>, FleetSummary) {
    let (scenario, summary) = fleet_scenario(nodes, seed);
    let list = gangpack_k8s::output::list(gangpack_k8s::output::scenario_manifests(&scenario));
    drop(scenario);
    let format = match format {
        Format::Json => Format::Json,
        Format::Table | Format::Yaml => Format::Yaml,
    };
    let outcome = crate::plan::print_list(&list, format).map(|stdout| Outcome {
        stdout,
        code: EXIT_OK,
    });
    (outcome, summary)
}

#[cfg(test)]
mod tests {
    use super::slot;

    #[test]
    fn slots_keep_to_one_numa_node() {
        assert_eq!(slot(0xff, 4), Some(vec![0, 1, 2, 3]));
        assert_eq!(slot(0b1111_0111, 4), Some(vec![4, 5, 6, 7]));
        assert_eq!(slot(0b0001_0001, 2), None);
        assert_eq!(slot(0b0011_0001, 2), Some(vec![4, 5]));
        assert_eq!(slot(0b1000_0000, 1), Some(vec![7]));
        assert_eq!(slot(0, 1), None);
    }
}
