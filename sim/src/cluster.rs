//! The trace as gangpack objects: each node a `Node` (cpu and memory allocatable) with
//! one node-local `ResourceSlice` of its GPUs, each GPU shareable as 1000 milli-GPU
//! (consumable capacity); each task a `Pod` with a `ResourceClaim` for its GPUs.

use gangpack::{
    AllocationMode, CapacityRequestPolicy, CapacityRequestPolicyRange, Cluster, Device,
    DeviceAttribute, DeviceCapacity, DeviceClass, DeviceRequest, ExactDeviceRequest, Node, Pod,
    PodResourceClaim, Quantity, ResourceClaim, ResourceSlice,
};

use crate::trace::{NodeRow, PodRow};

/// The driver of the simulated GPUs.
pub const DRIVER: &str = "gpu.openb.sim";
/// The DeviceClass every GPU request names.
pub const CLASS: &str = "gpu";
/// The consumable capacity of each GPU: 1000 milli-GPU.
pub const MILLI: &str = "milli";
/// The device attribute holding the GPU model.
pub const MODEL: &str = "model";
/// The node label naming each node's rack: consecutive groups of [`RACK_NODES`] nodes of
/// one GPU model and count, in node-list order (the trace has no topology, so the
/// time-based replay makes one up for its rack-constrained gangs).
pub const RACK: &str = "topology.gangpack.io/rack";
/// Nodes per rack.
pub const RACK_NODES: usize = 8;
/// The namespace of the trace's pods.
pub const NAMESPACE: &str = "openb";
/// The node label naming each node (Kubernetes' well-known `kubernetes.io/hostname`).
pub const HOSTNAME: &str = "kubernetes.io/hostname";

/// The cluster of a node list: nodes with their CPU and memory, GPUs shareable by
/// milli-GPU (a request that names no share takes the whole GPU: 1000).
pub fn cluster(nodes: &[NodeRow]) -> Result<Cluster, gangpack::ClusterError> {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        CLASS,
        format!("device.driver == \"{DRIVER}\""),
    ))?;
    let whole = Quantity::from_int(1000);
    let policy = CapacityRequestPolicy {
        default: Some(whole),
        valid_values: Vec::new(),
        valid_range: Some(CapacityRequestPolicyRange {
            min: Quantity::from_int(1),
            max: Some(whole),
            step: Some(Quantity::from_int(1)),
        }),
    };
    let racks = racks(nodes);
    for (n, rack) in nodes.iter().zip(&racks) {
        c.add_node(
            Node::new(&n.name)
                .with_label(HOSTNAME, &n.name)
                .with_label(RACK, rack)
                .with_allocatable("cpu", Quantity::from_milli(milli(n.cpu_milli)))
                .with_allocatable("memory", Quantity::binary_si(mib(n.memory_mib)))
                .with_allocatable("pods", Quantity::from_int(100_000)),
        )?;
        if n.gpus == 0 {
            continue;
        }
        let mut slice =
            ResourceSlice::node_local(format!("{}-gpus", n.name), DRIVER, &n.name, &n.name);
        for g in 0..n.gpus {
            let mut d = Device::new(format!("gpu-{g}"))
                .with_attribute(MODEL, DeviceAttribute::String(n.model.clone()));
            d.capacity.insert(
                MILLI.into(),
                DeviceCapacity {
                    value: whole,
                    request_policy: Some(policy.clone()),
                },
            );
            d.allow_multiple_allocations = true;
            slice.devices.push(d);
        }
        c.add_slice(slice)?;
    }
    Ok(c)
}

/// Each node's rack (the [`RACK`] label's value).
pub fn racks(nodes: &[NodeRow]) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<(&str, u32), usize> =
        std::collections::BTreeMap::new();
    nodes
        .iter()
        .map(|n| {
            let k = seen.entry((n.model.as_str(), n.gpus)).or_insert(0);
            let rack = format!(
                "{}-{}x-r{:03}",
                if n.model.is_empty() { "cpu" } else { &n.model },
                n.gpus,
                *k / RACK_NODES
            );
            *k += 1;
            rack
        })
        .collect()
}

fn milli(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn mib(v: u64) -> i64 {
    i64::try_from(v.saturating_mul(1024 * 1024)).unwrap_or(i64::MAX)
}

/// A task as a pod (named `name`) and, when it asks for GPUs, its claim: `num_gpu`
/// whole GPUs, or one GPU's `gpu_milli` share; `gpu_spec` as a CEL selector on the
/// model.
pub fn pod(row: &PodRow, name: &str) -> (Pod, Option<ResourceClaim>) {
    (task_pod(row, name), task_claim(row, name))
}

/// The pod of [`pod`] alone: its CPU and memory requests and, when the task asks for
/// GPUs, the reference to its claim `<name>-gpu`.
pub fn task_pod(row: &PodRow, name: &str) -> Pod {
    let mut pod = Pod::new(NAMESPACE, name);
    pod.requests
        .insert("cpu".into(), Quantity::from_milli(milli(row.cpu_milli)));
    pod.requests
        .insert("memory".into(), Quantity::binary_si(mib(row.memory_mib)));
    if row.num_gpu > 0 {
        pod.resource_claims.push(PodResourceClaim {
            name: "gpu".into(),
            source: gangpack::ClaimSource::ClaimName(claim_name(name)),
        });
    }
    pod
}

/// The claim of [`pod`] alone (`None` for a CPU-only task).
pub fn task_claim(row: &PodRow, name: &str) -> Option<ResourceClaim> {
    if row.num_gpu == 0 {
        return None;
    }
    let mut request =
        ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(row.num_gpu));
    if row.gpu_milli < 1000 {
        request
            .capacity
            .insert(MILLI.into(), Quantity::from_int(i64::from(row.gpu_milli)));
    }
    if !row.gpu_spec.is_empty() {
        let models: Vec<String> = row.gpu_spec.iter().map(|m| format!("{m:?}")).collect();
        request.selectors.push(gangpack::DeviceSelector {
            cel: format!(
                "device.attributes[\"{DRIVER}\"].{MODEL} in [{}]",
                models.join(", ")
            ),
        });
    }
    let mut claim = ResourceClaim::new(NAMESPACE, claim_name(name));
    claim
        .spec
        .requests
        .push(DeviceRequest::exactly("gpu", request));
    Some(claim)
}

fn claim_name(pod: &str) -> String {
    format!("{pod}-gpu")
}

/// The scheduler's key of an object named `name` in [`NAMESPACE`] (`openb/<name>`).
pub fn key(name: &str) -> String {
    format!("{NAMESPACE}/{name}")
}

/// The placement a cycle made that binds the pod with key `pod`, if any.
pub fn placement<'r>(
    report: &'r gangpack::CycleReport,
    pod: &str,
) -> Option<&'r gangpack::PlacementDecision> {
    report.units.iter().find_map(|(_, r)| match r {
        gangpack::UnitResult::Scheduled(d) if d.bindings.iter().any(|b| b.pod == pod) => Some(d),
        _ => None,
    })
}
