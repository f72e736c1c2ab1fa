//! TEMPORARY STAND-IN for the core's scenario generators (`gangpack::testing`, feature
//! `testing`), which are being written on another branch. It has the interface they
//! will have (`Size`, `ScenarioConfig` with `small()` / `medium()` / `large()`, and
//! `scenario(config) -> impl Strategy<Value = Scenario>`) so that `gangpack gen`, its
//! tests and the manifest round trip work now. When the generators land, delete this
//! file and point `super::generators` at `gangpack::testing` (see the parent module).
//!
//! What it builds, from a handful of drawn numbers: racks of nodes with a CPU and
//! memory each, 4 or 8 GPUs per node (`gpu.example.com`, one node-local slice per
//! node, class `gpu`), and workload units: gangs (a Workload, a PodGroup with a gang
//! policy and, for some, a rack topology constraint, and pods with one GPU claim
//! each) and single pods (with or without a GPU claim). Some units run already: they
//! are placed first-fit when built (pods bound, claims allocated); the rest is
//! pending.

use gangpack::testing::{Namespace, Scenario};
use gangpack::{
    AllocationMode, AllocationResult, ClaimSource, Device, DeviceAttribute, DeviceClass,
    DeviceRequest, DeviceRequestAllocationResult, ExactDeviceRequest, NodeSelector, Pod, PodGroup,
    PodGroupTemplate, PodResourceClaim, PreemptionPolicy, PriorityClass, Quantity, ResourceClaim,
    ResourceSlice, SchedulingPolicy, Time, TopologyConstraint, Workload, WorkloadReference,
};
use proptest::prelude::*;

const DRIVER: &str = "gpu.example.com";
const RACK: &str = "topology.kubernetes.io/rack";
const NAMESPACE: &str = "gen";
/// 2026-08-26T00:00:00Z: creation times count from here.
const T0: i64 = 1_787_702_400;

/// How big a scenario is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Size {
    Small,
    Medium,
    Large,
}

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScenarioConfig {
    /// Racks (inclusive range).
    racks: (u32, u32),
    /// Nodes per rack (inclusive range).
    nodes_per_rack: (u32, u32),
    /// Workload units (inclusive range).
    units: (usize, usize),
    /// Largest gang, in pods.
    max_gang_pods: u32,
    /// Generate PodGroups (gangs).
    pub(crate) gangs: bool,
    /// Generate pods without a PodGroup.
    pub(crate) single_pods: bool,
}

impl ScenarioConfig {
    pub(crate) fn small() -> ScenarioConfig {
        ScenarioConfig {
            racks: (1, 2),
            nodes_per_rack: (2, 3),
            units: (2, 5),
            max_gang_pods: 3,
            gangs: true,
            single_pods: true,
        }
    }

    pub(crate) fn medium() -> ScenarioConfig {
        ScenarioConfig {
            racks: (2, 4),
            nodes_per_rack: (4, 4),
            units: (6, 12),
            max_gang_pods: 6,
            gangs: true,
            single_pods: true,
        }
    }

    pub(crate) fn large() -> ScenarioConfig {
        ScenarioConfig {
            racks: (4, 8),
            nodes_per_rack: (8, 8),
            units: (12, 24),
            max_gang_pods: 8,
            gangs: true,
            single_pods: true,
        }
    }
}

impl From<Size> for ScenarioConfig {
    fn from(size: Size) -> ScenarioConfig {
        match size {
            Size::Small => ScenarioConfig::small(),
            Size::Medium => ScenarioConfig::medium(),
            Size::Large => ScenarioConfig::large(),
        }
    }
}

/// One workload unit as drawn.
#[derive(Clone, Debug)]
enum Unit {
    Gang {
        pods: u32,
        gpus: u32,
        rack: bool,
        high: bool,
        running: bool,
    },
    Single {
        gpus: u32,
        cpu: u32,
        running: bool,
    },
}

fn unit(config: &ScenarioConfig) -> BoxedStrategy<Unit> {
    let gang = (
        1..=config.max_gang_pods,
        prop::sample::select(vec![1u32, 2, 4, 8]),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(pods, gpus, rack, high, running)| Unit::Gang {
            pods,
            gpus,
            rack,
            high,
            running,
        });
    let single = (0u32..=4, 1u32..=8, any::<bool>())
        .prop_map(|(gpus, cpu, running)| Unit::Single { gpus, cpu, running });
    match (config.gangs, config.single_pods) {
        (true, false) => gang.boxed(),
        (false, true) => single.boxed(),
        _ => prop_oneof![gang, single].boxed(),
    }
}

/// Scenarios for `config`.
pub(crate) fn scenario(config: ScenarioConfig) -> impl Strategy<Value = Scenario> {
    let max_nodes = (config.racks.1 * config.nodes_per_rack.1) as usize;
    (
        config.racks.0..=config.racks.1,
        config.nodes_per_rack.0..=config.nodes_per_rack.1,
        prop::sample::select(vec![4u32, 8]),
        prop::collection::vec(16u32..=128, max_nodes),
        prop::collection::vec(unit(&config), config.units.0..=config.units.1),
    )
        .prop_map(|(racks, per_rack, gpus, cpus, units)| {
            build(racks, per_rack, gpus, &cpus, &units)
        })
}

/// A node as the builder tracks it.
struct Room {
    name: String,
    rack: u32,
    free_gpus: Vec<u32>,
    free_cpu: u32,
}

fn build(racks: u32, per_rack: u32, gpus: u32, cpus: &[u32], units: &[Unit]) -> Scenario {
    let mut s = Scenario {
        namespaces: vec![Namespace {
            name: NAMESPACE.into(),
            ..Namespace::default()
        }],
        device_classes: vec![DeviceClass::with_cel(
            "gpu",
            format!("device.driver == \"{DRIVER}\""),
        )],
        priority_classes: vec![PriorityClass::new("high", 1000), {
            let mut c = PriorityClass::new("standard", 0);
            c.global_default = true;
            c
        }],
        ..Scenario::default()
    };
    let mut rooms = Vec::new();
    for r in 0..racks {
        for n in 0..per_rack {
            let name = format!("node-r{r}-n{n}");
            let cpu = cpus[rooms.len()];
            s.nodes.push(
                gangpack::Node::new(&name)
                    .with_label(RACK, format!("rack-{r}"))
                    .with_label("kubernetes.io/hostname", &name)
                    .with_allocatable("cpu", Quantity::from_int(i64::from(cpu)))
                    .with_allocatable("memory", gib(4 * cpu))
                    .with_allocatable("pods", Quantity::from_int(110)),
            );
            let mut slice = ResourceSlice::node_local(format!("{name}-gpu"), DRIVER, &name, &name);
            for g in 0..gpus {
                slice.devices.push(
                    Device::new(format!("gpu-{g}"))
                        .with_attribute("model", DeviceAttribute::String("H100".into()))
                        .with_attribute("index", DeviceAttribute::Int(i64::from(g)))
                        .with_capacity("memory", gib(80)),
                );
            }
            s.slices.push(slice);
            rooms.push(Room {
                name,
                rack: r,
                free_gpus: (0..gpus).collect(),
                free_cpu: cpu,
            });
        }
    }
    for (i, u) in units.iter().enumerate() {
        let creation = Time(T0 + 60 * i64::try_from(i).unwrap_or_default());
        match *u {
            Unit::Gang {
                pods,
                gpus,
                rack,
                high,
                running,
            } => gang(
                &mut s,
                &mut rooms,
                i,
                creation,
                (pods, gpus, rack, high, running),
            ),
            Unit::Single { gpus, cpu, running } => {
                let name = format!("pod-{i}");
                let mut pod = Pod::new(NAMESPACE, &name);
                pod.requests
                    .insert("cpu".into(), Quantity::from_int(i64::from(cpu)));
                pod.requests.insert("memory".into(), gib(2 * cpu));
                pod.creation = creation;
                let place = running
                    .then(|| first_fit(&rooms, None, gpus, cpu))
                    .flatten();
                let mut claims = Vec::new();
                add_claim(&mut pod, &mut claims, gpus);
                if let Some(node) = place {
                    bind(&mut rooms[node], &mut pod, claims.last_mut(), gpus, cpu);
                }
                s.claims.extend(claims);
                s.pods.push(pod);
            }
        }
    }
    s
}

fn gang(
    s: &mut Scenario,
    rooms: &mut [Room],
    i: usize,
    creation: Time,
    (pods, gpus, rack, high, running): (u32, u32, bool, bool, bool),
) {
    let name = format!("gang-{i}");
    let mut template = PodGroupTemplate::new("workers", SchedulingPolicy::Gang { min_count: pods });
    let class = if high { "high" } else { "standard" };
    template.priority_class_name = Some(class.into());
    if rack {
        template.topology.push(TopologyConstraint::new(RACK));
    }
    let mut workload = Workload::new(NAMESPACE, &name);
    workload.pod_group_templates.push(template.clone());
    let mut group = PodGroup::new(NAMESPACE, &name, template.policy);
    group.workload_ref = Some(WorkloadReference::new(&name, "workers"));
    group
        .priority_class_name
        .clone_from(&template.priority_class_name);
    group.topology.clone_from(&template.topology);
    group.creation = creation;
    let cpu = 4;
    // A running gang is placed whole (one rack if constrained) or not at all.
    let placement = running
        .then(|| place_gang(rooms, pods, gpus, cpu, rack))
        .flatten();
    for p in 0..pods {
        let mut pod = Pod::new(NAMESPACE, format!("{name}-w{p}"));
        pod.priority = if high { 1000 } else { 0 };
        pod.preemption_policy = PreemptionPolicy::PreemptLowerPriority;
        pod.scheduling_group = Some(name.clone());
        pod.requests
            .insert("cpu".into(), Quantity::from_int(cpu.into()));
        pod.requests.insert("memory".into(), gib(16));
        pod.creation = creation;
        let mut claims = Vec::new();
        add_claim(&mut pod, &mut claims, gpus);
        if let Some(nodes) = &placement {
            bind(
                &mut rooms[nodes[p as usize]],
                &mut pod,
                claims.last_mut(),
                gpus,
                cpu,
            );
        }
        s.claims.extend(claims);
        s.pods.push(pod);
    }
    s.workloads.push(workload);
    s.groups.push(group);
}

fn gib(n: u32) -> Quantity {
    Quantity::parse(&format!("{n}Gi")).expect("a valid quantity")
}

/// A claim of `gpus` GPUs for the pod (none for 0).
fn add_claim(pod: &mut Pod, claims: &mut Vec<ResourceClaim>, gpus: u32) {
    if gpus == 0 {
        return;
    }
    let name = format!("{}-gpus", pod.name);
    let mut claim = ResourceClaim::new(NAMESPACE, &name);
    claim.spec.requests.push(DeviceRequest::exactly(
        "gpus",
        ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(gpus)),
    ));
    pod.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName(name),
    });
    claims.push(claim);
}

fn fits(room: &Room, gpus: u32, cpu: u32) -> bool {
    room.free_gpus.len() >= gpus as usize && room.free_cpu >= cpu
}

/// The first node with room, in `rack` if given.
fn first_fit(rooms: &[Room], rack: Option<u32>, gpus: u32, cpu: u32) -> Option<usize> {
    rooms
        .iter()
        .position(|r| rack.is_none_or(|k| r.rack == k) && fits(r, gpus, cpu))
}

/// Nodes for every pod of a gang, first fit (in one rack when constrained), or none.
fn place_gang(rooms: &[Room], pods: u32, gpus: u32, cpu: u32, rack: bool) -> Option<Vec<usize>> {
    let racks: Vec<Option<u32>> = if rack {
        let mut r: Vec<u32> = rooms.iter().map(|r| r.rack).collect();
        r.dedup();
        r.into_iter().map(Some).collect()
    } else {
        vec![None]
    };
    racks.into_iter().find_map(|k| {
        let mut left: Vec<(u32, u32)> = rooms
            .iter()
            .map(|r| (r.free_gpus.len() as u32, r.free_cpu))
            .collect();
        let mut out = Vec::new();
        for _ in 0..pods {
            let n = rooms.iter().enumerate().position(|(i, r)| {
                k.is_none_or(|k| r.rack == k) && left[i].0 >= gpus && left[i].1 >= cpu
            })?;
            left[n].0 -= gpus;
            left[n].1 -= cpu;
            out.push(n);
        }
        Some(out)
    })
}

/// Binds the pod to the node and allocates its claim there.
fn bind(room: &mut Room, pod: &mut Pod, claim: Option<&mut ResourceClaim>, gpus: u32, cpu: u32) {
    pod.node_name = Some(room.name.clone());
    room.free_cpu -= cpu;
    let Some(claim) = claim else {
        return;
    };
    let devices = room
        .free_gpus
        .drain(..gpus as usize)
        .map(|g| DeviceRequestAllocationResult {
            request: "gpus".into(),
            driver: DRIVER.into(),
            pool: room.name.clone(),
            device: format!("gpu-{g}"),
            ..DeviceRequestAllocationResult::default()
        })
        .collect();
    claim.allocation = Some(AllocationResult {
        devices,
        config: Vec::new(),
        node_selector: Some(NodeSelector::single_node(&room.name)),
    });
}
