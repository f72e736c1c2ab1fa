//! Fixtures shared by the gangpack benchmarks and their tests: synthetic GPU clusters
//! of a given size, shaped like real fleets (8 GPUs per node, 16 nodes per rack, a
//! mix of products, some GPUs tainted and half of them allocated).

pub mod peer;

use gangpack::{
    Cluster, Device, DeviceAllocation, DeviceAttribute, DeviceFilter, DeviceRef, DeviceSet,
    DeviceTaint, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator, Node, Quantity,
    ResourceSlice, Time,
};

/// The DRA driver of the synthetic fleet.
pub const DRIVER: &str = "gpu.example.com";
/// GPUs per node.
pub const GPUS_PER_NODE: usize = 8;
/// Nodes per rack (the topology domain).
pub const NODES_PER_RACK: usize = 16;

/// The name of node `n`.
pub fn node_name(n: usize) -> String {
    format!("node-{n:05}")
}

/// The identity of GPU `g` on node `n`.
pub fn gpu_ref(n: usize, g: usize) -> DeviceRef {
    DeviceRef::new(DRIVER, node_name(n), format!("gpu-{g}"))
}

/// A cluster with (about) `devices` GPUs: one node-local slice per node; three nodes
/// in four are H100, the rest A100; every 97th GPU carries an ECC taint (one of three
/// values, NoSchedule or NoExecute); every other GPU is allocated.
pub fn fleet(devices: usize) -> Cluster {
    let nodes = devices.div_ceil(GPUS_PER_NODE);
    let mut c = Cluster::new();
    c.track_topology_key("topology.example.com/rack");
    let mem = Quantity::parse("80Gi").expect("valid quantity");
    for n in 0..nodes {
        let name = node_name(n);
        c.add_node(
            Node::new(&name)
                .with_label(
                    "topology.example.com/rack",
                    format!("rack-{:03}", n / NODES_PER_RACK),
                )
                .with_allocatable("cpu", Quantity::from_int(128))
                .with_allocatable("memory", Quantity::parse("2Ti").expect("valid quantity")),
        )
        .expect("valid node");
        let product = if n % 4 == 3 { "A100" } else { "H100" };
        let mut slice = ResourceSlice::node_local(format!("{name}-gpus"), DRIVER, &name, &name);
        for g in 0..GPUS_PER_NODE {
            let i = n * GPUS_PER_NODE + g;
            let mut d = Device::new(format!("gpu-{g}"))
                .with_attribute("productName", DeviceAttribute::String(product.into()))
                .with_attribute(
                    "index",
                    DeviceAttribute::Int(i64::try_from(g).expect("small")),
                )
                .with_attribute(
                    "numa",
                    DeviceAttribute::Int(i64::try_from(g / 4).expect("small")),
                )
                .with_attribute("uuid", DeviceAttribute::String(format!("GPU-{i:08x}")))
                .with_capacity("memory", mem);
            if i.is_multiple_of(97) {
                d.taints.push(DeviceTaint {
                    key: "gpu.example.com/ecc".into(),
                    value: ["corrected", "uncorrected", "fatal"][i % 3].into(),
                    effect: if i.is_multiple_of(2) {
                        DeviceTaintEffect::NoSchedule
                    } else {
                        DeviceTaintEffect::NoExecute
                    },
                    time_added: Some(Time(1_000)),
                });
            }
            slice.devices.push(d);
        }
        c.add_slice(slice).expect("valid slice");
        for g in (0..GPUS_PER_NODE).step_by(2) {
            c.allocate(
                &gpu_ref(n, g),
                DeviceAllocation::new(format!("default/claim-{n}-{g}"), Vec::new()),
            )
            .expect("free device");
        }
    }
    c
}

/// The candidate set a DeviceClass "H100" compiles to (cached by the allocator).
pub fn h100_class(c: &Cluster) -> DeviceSet {
    c.select(&DeviceFilter::all().driver(DRIVER).attribute(
        format!("{DRIVER}/productName"),
        DeviceAttribute::String("H100".into()),
    ))
}

/// A toleration for corrected ECC errors, as a claim request would carry it.
pub fn tolerate_corrected() -> Vec<DeviceToleration> {
    vec![DeviceToleration {
        key: "gpu.example.com/ecc".into(),
        operator: DeviceTolerationOperator::Equal,
        value: "corrected".into(),
        effect: None,
        toleration_seconds: None,
    }]
}

/// The DeviceClass every allocation fixture uses: all GPUs of [`DRIVER`].
pub fn gpu_class() -> gangpack::DeviceClass {
    gangpack::DeviceClass::with_cel(DRIVER, format!("device.driver == \"{DRIVER}\""))
}

/// A cluster for allocation benchmarks: `nodes` nodes of `gpus` GPUs each, NUMA node
/// `g / numa_size`, every `taint_every`-th GPU (counted across the fleet) tainted
/// `NoSchedule` (0 = none), nothing allocated, plus [`gpu_class`].
pub fn allocation_fleet(
    nodes: usize,
    gpus: usize,
    numa_size: usize,
    taint_every: usize,
) -> Cluster {
    allocation_fleet_with_racks(nodes, gpus, numa_size, taint_every, NODES_PER_RACK)
}

/// [`allocation_fleet`] with racks of `rack_size` nodes.
pub fn allocation_fleet_with_racks(
    nodes: usize,
    gpus: usize,
    numa_size: usize,
    taint_every: usize,
    rack_size: usize,
) -> Cluster {
    let mut c = Cluster::new();
    c.put_class(gpu_class()).expect("valid class");
    let (nodes, slices) = allocation_fleet_objects(nodes, gpus, numa_size, taint_every, rack_size);
    for node in nodes {
        c.add_node(node).expect("valid node");
    }
    for slice in slices {
        c.add_slice(slice).expect("valid slice");
    }
    c
}

/// The nodes and node-local ResourceSlices of [`allocation_fleet_with_racks`] (its
/// DeviceClass is [`gpu_class`]), for building the same fleet elsewhere (the
/// [`peer`] workloads write them as Kubernetes objects).
pub fn allocation_fleet_objects(
    nodes: usize,
    gpus: usize,
    numa_size: usize,
    taint_every: usize,
    rack_size: usize,
) -> (Vec<Node>, Vec<ResourceSlice>) {
    let mut all_nodes = Vec::with_capacity(nodes);
    let mut slices = Vec::with_capacity(nodes);
    for n in 0..nodes {
        let name = node_name(n);
        all_nodes.push(Node::new(&name).with_label(
            "topology.example.com/rack",
            format!("rack-{:03}", n / rack_size),
        ));
        let mut slice = ResourceSlice::node_local(format!("{name}-gpus"), DRIVER, &name, &name);
        for g in 0..gpus {
            let i = n * gpus + g;
            let mut d = Device::new(format!("gpu-{g}"))
                .with_attribute(
                    "numa",
                    DeviceAttribute::Int(i64::try_from(g / numa_size).expect("small")),
                )
                .with_attribute("productName", DeviceAttribute::String("H100".into()));
            if taint_every > 0 && i.is_multiple_of(taint_every) {
                d.taints.push(DeviceTaint {
                    key: "gpu.example.com/ecc".into(),
                    value: "uncorrected".into(),
                    effect: DeviceTaintEffect::NoSchedule,
                    time_added: Some(Time(1_000)),
                });
            }
            slice.devices.push(d);
        }
        slices.push(slice);
    }
    (all_nodes, slices)
}

/// A gang of `pods` pods in PodGroup `ns/gang`, each with its own claim for `gpus`
/// GPUs; `rack` adds a topology constraint on the rack label.
pub fn gpu_gang(
    pods: usize,
    gpus: u32,
    rack: bool,
) -> (
    gangpack::PodGroup,
    Vec<gangpack::Pod>,
    Vec<gangpack::ResourceClaim>,
) {
    let mut group = gangpack::PodGroup::new(
        "ns",
        "gang",
        gangpack::SchedulingPolicy::Gang {
            min_count: u32::try_from(pods).expect("small"),
        },
    );
    if rack {
        group.topology.push(gangpack::TopologyConstraint {
            key: "topology.example.com/rack".into(),
        });
    }
    let mut all_pods = Vec::new();
    let mut claims = Vec::new();
    for i in 0..pods {
        let name = format!("worker-{i:04}");
        let mut pod = gangpack::Pod::new("ns", &name);
        pod.scheduling_group = Some("gang".into());
        let claim = gpu_claim(&format!("{name}-gpus"), gpus, false);
        pod.resource_claims.push(gangpack::PodResourceClaim {
            name: "gpus".into(),
            source: gangpack::ClaimSource::ClaimName(claim.name.clone()),
        });
        claims.push(claim);
        all_pods.push(pod);
    }
    (group, all_pods, claims)
}

/// A claim `ns/<name>` for `count` GPUs of [`gpu_class`], optionally all on one NUMA
/// node.
pub fn gpu_claim(name: &str, count: u32, same_numa: bool) -> gangpack::ResourceClaim {
    class_claim(DRIVER, name, count, same_numa)
}

/// [`gpu_claim`] for DeviceClass `class` (its NUMA constraint, if any, on
/// `<`[`DRIVER`]`>/numa`).
pub fn class_claim(
    class: &str,
    name: &str,
    count: u32,
    same_numa: bool,
) -> gangpack::ResourceClaim {
    let mut claim = gangpack::ResourceClaim::new("ns", name);
    claim.spec.requests.push(gangpack::DeviceRequest::exactly(
        "gpus",
        gangpack::ExactDeviceRequest::new(class)
            .with_mode(gangpack::AllocationMode::ExactCount(count)),
    ));
    if same_numa {
        claim.spec.constraints.push(gangpack::DeviceConstraint {
            requests: vec![],
            kind: gangpack::ConstraintKind::MatchAttribute(format!("{DRIVER}/numa")),
        });
    }
    claim
}

/// Adds to `s` a gang PodGroup `ns/<name>` (`minCount` = `pods`) at `priority` with
/// `mode`, and its `pods` pods `ns/<name>-<i>` (same priority, the default preemption
/// policy), each with its own claim `ns/<name>-<i>-gpus` for `gpus` GPUs of
/// [`gpu_class`] (see [`gpu_claim`]). Returns the pods' keys.
pub fn add_scheduler_gang(
    s: &mut gangpack::Scheduler,
    name: &str,
    pods: usize,
    gpus: u32,
    priority: i32,
    mode: gangpack::DisruptionMode,
) -> Vec<String> {
    add_class_gang(s, DRIVER, name, (pods, gpus), priority, mode)
}

/// [`add_scheduler_gang`] with claims for DeviceClass `class`; `shape` is (pods, GPUs
/// a pod).
pub fn add_class_gang(
    s: &mut gangpack::Scheduler,
    class: &str,
    name: &str,
    (pods, gpus): (usize, u32),
    priority: i32,
    mode: gangpack::DisruptionMode,
) -> Vec<String> {
    let mut group = gangpack::PodGroup::new(
        "ns",
        name,
        gangpack::SchedulingPolicy::Gang {
            min_count: u32::try_from(pods).expect("small"),
        },
    );
    group.priority = Some(priority);
    group.disruption_mode = mode;
    s.add_group(group).expect("valid group");
    let mut keys = Vec::with_capacity(pods);
    for i in 0..pods {
        let pod_name = format!("{name}-{i}");
        let mut pod = gangpack::Pod::new("ns", &pod_name);
        pod.scheduling_group = Some(name.into());
        pod.priority = priority;
        let claim = class_claim(class, &format!("{pod_name}-gpus"), gpus, false);
        pod.resource_claims.push(gangpack::PodResourceClaim {
            name: "gpus".into(),
            source: gangpack::ClaimSource::ClaimName(claim.name.clone()),
        });
        s.add_claim(claim).expect("valid claim");
        s.add_pod(pod).expect("valid pod");
        keys.push(format!("ns/{pod_name}"));
    }
    keys
}

/// Pods per gang in [`mixed_gang_shapes`].
pub const MIX_PODS: [usize; 5] = [1, 2, 4, 8, 16];
/// GPUs per pod in [`mixed_gang_shapes`].
pub const MIX_GPUS: [u32; 4] = [1, 2, 4, 8];

/// `count` gang shapes `(pods, GPUs per pod)`, each drawn uniformly from [`MIX_PODS`] ×
/// [`MIX_GPUS`] by a fixed 64-bit LCG (Knuth's MMIX constants, high bits) from `seed`:
/// the same list on every run and platform.
pub fn mixed_gang_shapes(count: usize, seed: u64) -> Vec<(usize, u32)> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        // The high bits of an LCG are the well-mixed ones.
        usize::try_from(x >> 33).expect("31 bits fit a usize")
    };
    (0..count)
        .map(|_| {
            (
                MIX_PODS[next() % MIX_PODS.len()],
                MIX_GPUS[next() % MIX_GPUS.len()],
            )
        })
        .collect()
}

/// The pending state of the `lifecycle/cycle_1000_gangs_on_4096x8` benchmark: 4096
/// nodes x 8 GPUs in racks of `rack` nodes, and 1,000 pending gangs of mixed shapes
/// ([`mixed_gang_shapes`] with seed 5) at priority 0, `disruptionMode: Single`. One
/// cycle over it is the benchmark (the native bench and the WebAssembly one in
/// `wasm/bench/` build it here, so they time the same work).
pub fn pending_1000_gangs(rack: usize) -> gangpack::Scheduler {
    let fleet = allocation_fleet_with_racks(4096, 8, 4, 33, rack);
    let mut pending = gangpack::Scheduler::new(fleet, gangpack::GangOptions::default());
    for (i, &(pods, gpus)) in mixed_gang_shapes(1_000, 5).iter().enumerate() {
        add_scheduler_gang(
            &mut pending,
            &format!("gang-{i:04}"),
            pods,
            gpus,
            0,
            gangpack::DisruptionMode::Single,
        );
    }
    pending
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's shape, recounted from its definition, so a change to the
    /// generator cannot silently change what the benchmarks measure.
    #[test]
    fn fleet_has_the_documented_shape() {
        let c = fleet(1_000);
        assert_eq!(c.device_count(), 1_000);
        assert_eq!(c.nodes().count(), 125);
        assert_eq!(c.domains("topology.example.com/rack").count(), 8);
        let class = h100_class(&c);
        let h100_nodes = (0..125).filter(|n| n % 4 != 3).count();
        assert_eq!(class.len(), h100_nodes * GPUS_PER_NODE);
        // Free (odd index), H100, and not carrying a blocking taint.
        let expect = |tolerate_corrected: bool| {
            (0..1_000usize)
                .filter(|i| (i / GPUS_PER_NODE) % 4 != 3 && i % 2 == 1)
                .filter(|i| i % 97 != 0 || (tolerate_corrected && i % 3 == 0))
                .count()
        };
        assert_eq!(c.usable(&class, &[]).len(), expect(false));
        assert_eq!(c.usable(&class, &tolerate_corrected()).len(), expect(true));
    }

    /// The gang mix is fixed: a change to the generator would change what the
    /// lifecycle benchmarks measure.
    #[test]
    fn mixed_gang_shapes_are_fixed() {
        let shapes = mixed_gang_shapes(1_000, 5);
        assert_eq!(shapes, mixed_gang_shapes(1_000, 5));
        for p in MIX_PODS {
            assert!(shapes.iter().any(|s| s.0 == p));
        }
        for g in MIX_GPUS {
            assert!(shapes.iter().any(|s| s.1 == g));
        }
        let pods: usize = shapes.iter().map(|s| s.0).sum();
        let gpus: usize = shapes.iter().map(|s| s.0 * s.1 as usize).sum();
        assert_eq!((pods, gpus), (6_102, 23_619), "pods, GPUs");
    }
}
