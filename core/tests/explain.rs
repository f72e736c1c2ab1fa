#![cfg(not(target_arch = "wasm32"))]
//! Explanations of pending gangs: status, facts, minimal blocking set, and the text
//! rendering, compared with golden files in `tests/golden/` (regenerate with
//! `GANGPACK_BLESS=1 cargo test -p gangpack --test explain`, then review the diff).

mod common;

use common::*;
use gangpack::{
    AllocationMode, ClaimSource, Cluster, Device, DeviceAllocation, DeviceClass, DeviceRef,
    DeviceRequest, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator,
    ExactDeviceRequest, Explanation, Fact, GangOptions, GangStatus, Node, NodeAccess, NodeSelector,
    NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodGroup,
    PodGroupResourceClaim, PodResourceClaim, Quantity, Resolution, ResourceClaim, ResourcePool,
    ResourceSlice, SchedulingPolicy, SliceNodeSelection, Taint, TaintEffect, TopologyConstraint,
    validate_placement,
};
use proptest::prelude::*;

const CLASS: &str = "gpu";

/// Nodes `(name, rack, gpus)`, each with 16 cpu and 110 pods.
fn cluster(nodes: &[(&str, &str, usize)]) -> Cluster {
    rack_cluster(nodes, 16)
}

/// `n` pods `ns/w-<i>` in group `g`, each with its own claim for `gpus` GPUs and 1 cpu.
fn workers(n: usize, gpus: u32) -> (Vec<Pod>, Vec<ResourceClaim>) {
    let mut pods = Vec::new();
    let mut claims = Vec::new();
    for i in 0..n {
        let mut pod = Pod::new("ns", format!("w-{i}"));
        pod.scheduling_group = Some("g".into());
        pod.requests.insert("cpu".into(), Quantity::from_int(1));
        let mut claim = ResourceClaim::new("ns", format!("w-{i}-gpus"));
        claim.spec.requests.push(DeviceRequest::exactly(
            "gpus",
            ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(gpus)),
        ));
        pod.resource_claims.push(PodResourceClaim {
            name: "gpus".into(),
            source: ClaimSource::ClaimName(claim.name.clone()),
        });
        pods.push(pod);
        claims.push(claim);
    }
    (pods, claims)
}

fn gang(min: u32, rack: bool) -> PodGroup {
    let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: min });
    if rack {
        g.topology.push(TopologyConstraint::new("rack"));
    }
    g
}

fn explain(c: &Cluster, g: &PodGroup, pods: &[Pod], claims: &[ResourceClaim]) -> Explanation {
    let before = observe(c);
    let ex = c
        .explain_gang(Some(g), pods, claims, &GangOptions::default())
        .unwrap();
    assert_eq!(observe(c), before, "explaining changed the cluster");
    if let Some(d) = &ex.decision {
        assert!(validate_placement(c, Some(g), pods, claims, d).is_empty());
    }
    ex
}

/// Compares the rendered explanation with `tests/golden/<name>.txt`.
fn golden(name: &str, ex: &Explanation) {
    let text = format!("{ex}\nsummary: {}\n", ex.summary());
    let path = format!("{}/tests/golden/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("GANGPACK_BLESS").is_some() {
        std::fs::create_dir_all(format!("{}/tests/golden", env!("CARGO_MANIFEST_DIR"))).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run with GANGPACK_BLESS=1 to create it)"));
    assert_eq!(text, want, "golden file {path} differs");
}

fn blocking(ex: &Explanation) -> Vec<&Fact> {
    ex.blocking.iter().map(|&i| &ex.facts[i]).collect()
}

#[test]
fn a_gang_larger_than_any_rack_is_unresolvable() {
    // Two racks of 2 nodes × 8 GPUs; the gang needs 5 × 8 GPUs in one rack.
    let c = cluster(&[
        ("n1", "r1", 8),
        ("n2", "r1", 8),
        ("n3", "r2", 8),
        ("n4", "r2", 8),
    ]);
    let (pods, claims) = workers(5, 8);
    let ex = explain(&c, &gang(5, true), &pods, &claims);
    assert_eq!(ex.status, GangStatus::UnschedulableAndUnresolvable);
    assert_eq!(
        blocking(&ex),
        [&Fact::DomainTooSmall {
            key: "rack".into(),
            domain: "r1".into(),
            hosts: 2,
            needed: 5,
        }]
    );
    golden("larger_than_any_rack", &ex);
}

#[test]
fn a_tainted_gpu_in_each_rack_blocks_a_rack_sized_gang() {
    // Each rack has 2 nodes × 4 GPUs; the gang needs all 8 GPUs of one rack, and one
    // GPU of each rack carries an ECC taint: only tolerating the taint would help.
    let mut c = cluster(&[
        ("n1", "r1", 4),
        ("n2", "r1", 4),
        ("n3", "r2", 4),
        ("n4", "r2", 4),
    ]);
    for node in ["n1", "n3"] {
        c.taint_device(
            &dref(node, "gpu-2"),
            taint(
                "gpu.example.com/ecc",
                "fatal",
                DeviceTaintEffect::NoSchedule,
                5,
            ),
        )
        .unwrap();
    }
    let (pods, claims) = workers(2, 4);
    let ex = explain(&c, &gang(2, true), &pods, &claims);
    assert_eq!(ex.status, GangStatus::UnschedulableAndUnresolvable);
    let b = blocking(&ex);
    assert_eq!(b.len(), 1);
    assert!(
        matches!(b[0], Fact::DeviceTaint { taint, devices: 2, nodes }
            if taint.key == "gpu.example.com/ecc" && nodes == &["n1", "n3"]),
        "{b:?}"
    );
    assert_eq!(b[0].resolution(), Resolution::Unresolvable);
    golden("tainted_gpu_per_rack", &ex);

    // With a toleration on the claims the same gang is placed.
    let mut tolerant = claims.clone();
    for cl in &mut tolerant {
        if let gangpack::DeviceRequestKind::Exactly(e) = &mut cl.spec.requests[0].kind {
            e.tolerations.push(DeviceToleration {
                key: "gpu.example.com/ecc".into(),
                operator: DeviceTolerationOperator::Exists,
                value: String::new(),
                effect: None,
                toleration_seconds: None,
            });
        }
    }
    let ok = explain(&c, &gang(2, true), &pods, &tolerant);
    assert_eq!(ok.status, GangStatus::Scheduled);
}

#[test]
fn devices_held_by_others_make_it_resolvable() {
    // 2 nodes × 8 GPUs, 3 GPUs of n2 allocated elsewhere; the gang needs 2 × 8.
    let mut c = cluster(&[("n1", "r1", 8), ("n2", "r1", 8)]);
    for g in 0..3 {
        c.allocate(
            &dref("n2", &format!("gpu-{g}")),
            DeviceAllocation::new("other/job", vec![]),
        )
        .unwrap();
    }
    let (pods, claims) = workers(2, 8);
    let ex = explain(&c, &gang(2, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::Unschedulable);
    assert_eq!(ex.best, 1);
    assert_eq!(
        blocking(&ex),
        [&Fact::DevicesInUse {
            devices: 3,
            nodes: vec!["n2".into()],
        }]
    );
    assert!(ex.minimal);
    golden("devices_in_use", &ex);
}

#[test]
fn the_smallest_of_several_causes_is_the_blocking_set() {
    // n1 is cordoned, n2 carries a node taint, n3's cpu is used up, n4 is free but
    // only one node is needed per pod and the gang has 2 pods: any one of the three
    // facts removed lets the gang fit; a resolvable one (cpu in use) is preferred.
    let mut c = cluster(&[
        ("n1", "r1", 8),
        ("n2", "r1", 8),
        ("n3", "r1", 8),
        ("n4", "r1", 8),
    ]);
    let mut n1 = c.node("n1").unwrap().clone();
    n1.unschedulable = true;
    c.replace_node(n1).unwrap();
    c.taint_node(
        "n2",
        Taint {
            key: "maintenance".into(),
            value: "bios".into(),
            effect: TaintEffect::NoSchedule,
            time_added: None,
        },
    )
    .unwrap();
    let mut hog = std::collections::BTreeMap::new();
    hog.insert("cpu".to_string(), Quantity::from_int(16));
    c.reserve_node_resources("n3", "other/hog", hog).unwrap();
    let (pods, claims) = workers(2, 8);
    let ex = explain(&c, &gang(2, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::Unschedulable);
    assert_eq!(
        blocking(&ex),
        [&Fact::ResourceInUse {
            resource: "cpu".into(),
            nodes: vec!["n3".into()],
        }]
    );
    assert_eq!(ex.facts.len(), 3);
    golden("several_causes", &ex);
}

#[test]
fn a_class_without_devices_is_unresolvable() {
    let mut c = cluster(&[("n1", "r1", 8)]);
    c.put_class(DeviceClass::with_cel(
        "tpu",
        "device.driver == \"tpu.example.com\"",
    ))
    .unwrap();
    let (pods, mut claims) = workers(1, 1);
    if let gangpack::DeviceRequestKind::Exactly(e) = &mut claims[0].spec.requests[0].kind {
        e.device_class_name = "tpu".into();
    }
    let ex = explain(&c, &gang(1, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::UnschedulableAndUnresolvable);
    assert!(
        ex.facts.contains(&Fact::NoDeviceOfClass {
            claim: "ns/w-0-gpus".into(),
            request: "gpus".into(),
            class: "tpu".into(),
        }),
        "{:?}",
        ex.facts
    );
    golden("class_without_devices", &ex);
}

#[test]
fn too_few_pods_wait() {
    let c = cluster(&[("n1", "r1", 8)]);
    let (pods, claims) = workers(2, 1);
    let ex = explain(&c, &gang(3, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::Wait);
    assert_eq!(
        ex.facts,
        [Fact::NotEnoughPods {
            present: 2,
            min_count: 3
        }]
    );
    golden("wait", &ex);
}

#[test]
fn a_gang_that_fits_is_scheduled() {
    let c = cluster(&[("n1", "r1", 8), ("n2", "r2", 8)]);
    let (pods, claims) = workers(2, 4);
    let ex = explain(&c, &gang(2, true), &pods, &claims);
    assert_eq!(ex.status, GangStatus::Scheduled);
    assert_eq!(ex.decision.as_ref().unwrap().bindings.len(), 2);
    assert!(ex.blocking.is_empty());
    golden("scheduled", &ex);
}

#[test]
fn nodes_too_small_for_a_pod_are_unresolvable() {
    // Pods need 8 GPUs; nodes have 4.
    let c = cluster(&[("n1", "r1", 4), ("n2", "r1", 4)]);
    let (pods, claims) = workers(1, 8);
    let ex = explain(&c, &gang(1, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::UnschedulableAndUnresolvable);
    assert_eq!(
        blocking(&ex),
        [&Fact::TooFewDevices {
            class: CLASS.into(),
            needed: 8,
            nodes: vec!["n1".into(), "n2".into()],
        }]
    );
    golden("too_few_devices", &ex);
}

#[test]
fn resources_others_use_are_facts_only_where_they_limit_the_node() {
    // Two nodes of 8 GPUs and 16 cpu; a gang of 3 pods × 8 GPUs cannot fit. Half the
    // cpu is in use on both nodes, but each node still has room for its one 8-GPU pod:
    // the cpu in use is not why, and is not reported.
    let mut c = cluster(&[("n1", "r1", 8), ("n2", "r1", 8)]);
    for n in ["n1", "n2"] {
        let mut used = std::collections::BTreeMap::new();
        used.insert("cpu".to_string(), Quantity::from_int(8));
        c.reserve_node_resources(n, "other/sidecar", used).unwrap();
    }
    let (pods, claims) = workers(3, 8);
    let ex = explain(&c, &gang(3, false), &pods, &claims);
    assert!(
        !ex.facts
            .iter()
            .any(|f| matches!(f, Fact::ResourceInUse { .. })),
        "{ex}"
    );
    // With 4-GPU pods each node could take two, and cpu used up to leave room for one
    // is what limits n1: reported there only.
    let mut hog = std::collections::BTreeMap::new();
    let free_cpu = c.node_free_resources("n1").unwrap()["cpu"];
    hog.insert(
        "cpu".to_string(),
        free_cpu.saturating_sub(Quantity::from_int(1)),
    );
    c.reserve_node_resources("n1", "other/hog", hog).unwrap();
    let (pods, claims) = workers(5, 4);
    let ex = explain(&c, &gang(5, false), &pods, &claims);
    let in_use: Vec<&Fact> = ex
        .facts
        .iter()
        .filter(|f| matches!(f, Fact::ResourceInUse { .. }))
        .collect();
    assert_eq!(
        in_use,
        [&Fact::ResourceInUse {
            resource: "cpu".into(),
            nodes: vec!["n1".into()],
        }],
        "{ex}"
    );
}

#[test]
fn too_few_nodes_even_with_every_fact_lifted_says_how_few() {
    // Two nodes whose cpu others use up entirely, and a gang of three 8-GPU pods: with
    // the cpu freed the two nodes still hold only two of the three pods.
    let mut c = cluster(&[("n1", "r1", 8), ("n2", "r1", 8)]);
    for n in ["n1", "n2"] {
        let mut used = std::collections::BTreeMap::new();
        used.insert("cpu".to_string(), Quantity::from_int(16));
        c.reserve_node_resources(n, "other/hog", used).unwrap();
    }
    let (pods, claims) = workers(3, 8);
    let ex = explain(&c, &gang(3, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::UnschedulableAndUnresolvable);
    assert_eq!(
        blocking(&ex),
        [&Fact::NotEnoughRoom {
            nodes: vec!["n1".into(), "n2".into()],
            needed: 3,
            hosts: 2,
        }],
        "{ex}"
    );
    assert!(
        ex.to_string().contains(
            "2 nodes (n1, n2) can each host a pod but together hold only 2 of the 3 pods"
        ),
        "{ex}"
    );
}

/// A claim `ns/<name>` for `count` devices of `class`.
fn claim_for(name: &str, class: &str, count: u32) -> ResourceClaim {
    let mut claim = ResourceClaim::new("ns", name);
    claim.spec.requests.push(DeviceRequest::exactly(
        "devices",
        ExactDeviceRequest::new(class).with_mode(AllocationMode::ExactCount(count)),
    ));
    claim
}

/// Makes `pod` name claim `claim` as `name`.
fn name_claim(pod: &mut Pod, name: &str, claim: &str) {
    pod.resource_claims.push(PodResourceClaim {
        name: name.into(),
        source: ClaimSource::ClaimName(claim.into()),
    });
}

/// `n` pods `ns/w-<i>` in group `g` with 1 cpu and no claims.
fn bare_workers(n: usize) -> Vec<Pod> {
    (0..n)
        .map(|i| {
            let mut pod = Pod::new("ns", format!("w-{i}"));
            pod.scheduling_group = Some("g".into());
            pod.requests.insert("cpu".into(), Quantity::from_int(1));
            pod
        })
        .collect()
}

#[test]
fn a_group_claim_for_a_gpu_in_use_is_resolvable() {
    // The only GPU is held by another workload; the PodGroup claims one GPU. When its
    // pod names the claim, freeing the GPU lets it fit. When no pod names it, the claim
    // is not allocated at all (KEP-5729: the scheduler allocates the claims pods use),
    // and the gang fits as it is.
    let mut c = cluster(&[("n1", "r1", 1)]);
    c.allocate(
        &dref("n1", "gpu-0"),
        DeviceAllocation::new("other/job", vec![]),
    )
    .unwrap();
    for named in [true, false] {
        let mut g = gang(1, false);
        g.resource_claims.push(PodGroupResourceClaim {
            name: "gpu".into(),
            source: ClaimSource::ClaimName("g-gpu".into()),
        });
        let mut pods = bare_workers(1);
        if named {
            name_claim(&mut pods[0], "gpu", "g-gpu");
        }
        let claims = vec![claim_for("g-gpu", CLASS, 1)];
        let ex = explain(&c, &g, &pods, &claims);
        if !named {
            assert_eq!(ex.status, GangStatus::Scheduled, "{ex}");
            continue;
        }
        assert_eq!(ex.status, GangStatus::Unschedulable, "named: {named}\n{ex}");
        assert_eq!(
            blocking(&ex),
            [&Fact::DevicesInUse {
                devices: 1,
                nodes: vec!["n1".into()],
            }],
            "named: {named}\n{ex}"
        );
        assert!(ex.minimal, "{ex}");
    }
}

#[test]
fn a_claim_shared_by_pods_whose_only_gpu_is_tainted_is_unresolvable() {
    // Two pods name one claim for a GPU; the cluster's only GPU carries an ECC taint
    // the claim does not tolerate: only tolerating it helps.
    let mut c = cluster(&[("n1", "r1", 1)]);
    c.taint_device(
        &dref("n1", "gpu-0"),
        taint(
            "gpu.example.com/ecc",
            "fatal",
            DeviceTaintEffect::NoSchedule,
            5,
        ),
    )
    .unwrap();
    let mut pods = bare_workers(2);
    for p in &mut pods {
        name_claim(p, "gpu", "both-gpu");
    }
    let claims = vec![claim_for("both-gpu", CLASS, 1)];
    let ex = explain(&c, &gang(2, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::UnschedulableAndUnresolvable, "{ex}");
    let b = blocking(&ex);
    assert_eq!(b.len(), 1, "{ex}");
    assert!(
        matches!(b[0], Fact::DeviceTaint { taint, devices: 1, nodes }
            if taint.key == "gpu.example.com/ecc" && nodes == &["n1"]),
        "{ex}"
    );
}

#[test]
fn cpu_and_a_gpu_others_hold_on_one_node_are_both_facts() {
    // Freeing the cpu alone, or the GPU alone, does not let the pod in: both are
    // reported, and both are the blocking set.
    let mut c = cluster(&[("n1", "r1", 1)]);
    c.allocate(
        &dref("n1", "gpu-0"),
        DeviceAllocation::new("other/job", vec![]),
    )
    .unwrap();
    let mut hog = std::collections::BTreeMap::new();
    hog.insert("cpu".to_string(), Quantity::from_int(16));
    c.reserve_node_resources("n1", "other/hog", hog).unwrap();
    let (pods, claims) = workers(1, 1);
    let ex = explain(&c, &gang(1, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::Unschedulable, "{ex}");
    let mut b = blocking(&ex);
    b.sort_by_key(ToString::to_string);
    assert_eq!(
        b,
        [
            &Fact::DevicesInUse {
                devices: 1,
                nodes: vec!["n1".into()],
            },
            &Fact::ResourceInUse {
                resource: "cpu".into(),
                nodes: vec!["n1".into()],
            },
        ],
        "{ex}"
    );
}

#[test]
fn a_network_attached_device_in_use_is_resolvable() {
    // A pod's own claim wants the one network-attached device (reachable from every
    // node), which another workload holds: freeing it lets the pod fit.
    let mut c = cluster(&[("n1", "r1", 0), ("n2", "r1", 0)]);
    c.put_class(DeviceClass::with_cel(
        "net",
        format!("device.driver == \"{NET_DRIVER}\""),
    ))
    .unwrap();
    c.add_slice(net_slice("net-all", NodeAccess::AllNodes, 1))
        .unwrap();
    c.allocate(
        &DeviceRef::new(NET_DRIVER, "net-all", "net-0"),
        DeviceAllocation::new("other/job", vec![]),
    )
    .unwrap();
    let mut pods = bare_workers(1);
    name_claim(&mut pods[0], "net", "w-0-net");
    let claims = vec![claim_for("w-0-net", "net", 1)];
    let ex = explain(&c, &gang(1, false), &pods, &claims);
    assert_eq!(ex.status, GangStatus::Unschedulable, "{ex}");
    // Both nodes reach it; it is counted once.
    assert_eq!(
        blocking(&ex),
        [&Fact::DevicesInUse {
            devices: 1,
            nodes: vec!["n1".into(), "n2".into()],
        }],
        "{ex}"
    );
    assert!(
        !ex.facts
            .iter()
            .any(|f| matches!(f, Fact::TooFewDevices { .. })),
        "{ex}"
    );
}

// A property: the explanation's status against a brute-force oracle on instances with
// claims several pods name, PodGroup claims (named by every pod) and network-attached
// devices (reachable from every node or from one rack), some held by another workload,
// some tainted, and cpu others use. The oracle knows nothing of the engine.

const NET_DRIVER: &str = "net.example.com";

/// A slice `<pool>` of `n` network devices `net-<i>` with the given reach.
fn net_slice(pool: &str, access: NodeAccess, n: usize) -> ResourceSlice {
    ResourceSlice {
        name: pool.into(),
        driver: NET_DRIVER.into(),
        pool: ResourcePool::single(pool),
        node_selection: SliceNodeSelection::Slice(access),
        devices: (0..n).map(|i| Device::new(format!("net-{i}"))).collect(),
        shared_counters: vec![],
    }
}

#[derive(Clone, Debug)]
struct NodeX {
    rack: u8,
    gpus: usize,
    /// GPUs with an untolerated `NoSchedule` taint (the first ones).
    tainted: usize,
    /// Untainted GPUs another workload holds (the next ones).
    in_use: usize,
    cpu: i64,
    /// Cpu another workload uses.
    cpu_used: i64,
}

#[derive(Clone, Debug)]
struct NetX {
    /// `None`: every node (`allNodes`); `Some(r)`: the nodes of rack `r<r>`
    /// (`nodeSelector`).
    rack: Option<u8>,
    in_use: bool,
    tainted: bool,
}

#[derive(Clone, Debug)]
struct PodX {
    gpus: u32,
    cpu: i64,
    /// Network devices its own claim asks for.
    nets: u32,
    /// Which non-group shared claims it names (bit `j`: claim `s<j>`).
    uses: u8,
}

#[derive(Clone, Debug)]
struct SharedX {
    /// One GPU, else one network device.
    gpu: bool,
    /// A PodGroup claim every pod names, else one the pods of `uses` name.
    group: bool,
}

#[derive(Clone, Debug)]
struct InstanceX {
    nodes: Vec<NodeX>,
    nets: Vec<NetX>,
    pods: Vec<PodX>,
    shared: Vec<SharedX>,
}

impl InstanceX {
    fn uses(&self, p: usize, j: usize) -> bool {
        self.shared[j].group || self.pods[p].uses & (1 << j) != 0
    }
}

fn instance_x() -> impl Strategy<Value = InstanceX> {
    let node = (
        0..2u8,
        0..=3usize,
        0..=1usize,
        0..=2usize,
        1..=3i64,
        prop::sample::select(vec![0i64, 0, 0, 1, 3]),
    )
        .prop_map(|(rack, gpus, tainted, in_use, cpu, cpu_used)| {
            let tainted = tainted.min(gpus);
            NodeX {
                rack,
                gpus,
                tainted,
                in_use: in_use.min(gpus - tainted),
                cpu,
                cpu_used: cpu_used.min(cpu),
            }
        });
    let net = (
        prop::option::of(0..2u8),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(rack, in_use, tainted)| NetX {
            rack,
            in_use,
            tainted,
        });
    let pod = (
        0..=2u32,
        0..=2i64,
        prop::sample::select(vec![0u32, 0, 1, 2]),
        0..4u8,
    )
        .prop_map(|(gpus, cpu, nets, uses)| PodX {
            gpus,
            cpu,
            nets,
            uses,
        });
    let shared =
        (any::<bool>(), prop::bool::weighted(0.4)).prop_map(|(gpu, group)| SharedX { gpu, group });
    (
        prop::collection::vec(node, 1..=3),
        prop::collection::vec(net, 0..=3),
        prop::collection::vec(pod, 1..=3),
        prop::collection::vec(shared, 0..=2),
    )
        .prop_map(|(nodes, nets, pods, shared)| {
            let mask = (1u8 << shared.len()) - 1;
            let pods = pods
                .into_iter()
                .map(|mut p| {
                    p.uses &= mask;
                    p
                })
                .collect();
            InstanceX {
                nodes,
                nets,
                pods,
                shared,
            }
        })
}

fn rack_selector(rack: u8) -> NodeSelector {
    NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement::new(
                "rack",
                NodeSelectorOperator::In,
                [format!("r{rack}")],
            )],
            match_fields: vec![],
        }],
    }
}

fn build_x(
    x: &InstanceX,
    min: usize,
    rack: bool,
) -> (Cluster, PodGroup, Vec<Pod>, Vec<ResourceClaim>) {
    let ecc = || taint("ecc", "", DeviceTaintEffect::NoSchedule, 1);
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        CLASS,
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c.put_class(DeviceClass::with_cel(
        "net",
        format!("device.driver == \"{NET_DRIVER}\""),
    ))
    .unwrap();
    for (i, n) in x.nodes.iter().enumerate() {
        let name = format!("n{i}");
        c.add_node(
            Node::new(&name)
                .with_label("rack", format!("r{}", n.rack))
                .with_allocatable("cpu", Quantity::from_int(n.cpu))
                .with_allocatable("pods", Quantity::from_int(110)),
        )
        .unwrap();
        if n.cpu_used > 0 {
            let mut used = std::collections::BTreeMap::new();
            used.insert("cpu".to_string(), Quantity::from_int(n.cpu_used));
            c.reserve_node_resources(&name, "other/hog", used).unwrap();
        }
        if n.gpus > 0 {
            let mut s = gpus(&name, n.gpus);
            for d in s.devices.iter_mut().take(n.tainted) {
                d.taints.push(ecc());
            }
            c.add_slice(s).unwrap();
            for g in n.tainted..n.tainted + n.in_use {
                c.allocate(
                    &dref(&name, &format!("gpu-{g}")),
                    DeviceAllocation::new("other/job", vec![]),
                )
                .unwrap();
            }
        }
    }
    // One slice per reach; device `net-<i>` is `x.nets[i]`.
    for reach in [None, Some(0u8), Some(1)] {
        let pool = reach.map_or_else(|| "net-all".to_owned(), |r| format!("net-r{r}"));
        let mine: Vec<usize> = (0..x.nets.len())
            .filter(|&i| x.nets[i].rack == reach)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let access = match reach {
            None => NodeAccess::AllNodes,
            Some(r) => NodeAccess::NodeSelector(rack_selector(r)),
        };
        let mut s = net_slice(&pool, access, 0);
        for &i in &mine {
            let mut d = Device::new(format!("net-{i}"));
            if x.nets[i].tainted {
                d.taints.push(ecc());
            }
            s.devices.push(d);
        }
        c.add_slice(s).unwrap();
        for &i in mine.iter().filter(|&&i| x.nets[i].in_use) {
            c.allocate(
                &DeviceRef::new(NET_DRIVER, &pool, format!("net-{i}")),
                DeviceAllocation::new("other/job", vec![]),
            )
            .unwrap();
        }
    }
    let mut g = gang(min as u32, rack);
    let mut claims = Vec::new();
    for (j, s) in x.shared.iter().enumerate() {
        let name = format!("s{j}");
        claims.push(claim_for(&name, if s.gpu { CLASS } else { "net" }, 1));
        if s.group {
            g.resource_claims.push(PodGroupResourceClaim {
                name: name.clone(),
                source: ClaimSource::ClaimName(name),
            });
        }
    }
    let mut pods = Vec::new();
    for (i, p) in x.pods.iter().enumerate() {
        let mut pod = Pod::new("ns", format!("p{i}"));
        pod.scheduling_group = Some("g".into());
        pod.requests.insert("cpu".into(), Quantity::from_int(p.cpu));
        if p.gpus > 0 {
            let name = format!("p{i}-gpus");
            claims.push(claim_for(&name, CLASS, p.gpus));
            name_claim(&mut pod, "gpus", &name);
        }
        if p.nets > 0 {
            let name = format!("p{i}-net");
            claims.push(claim_for(&name, "net", p.nets));
            name_claim(&mut pod, "net", &name);
        }
        for j in 0..x.shared.len() {
            if x.uses(i, j) {
                let name = format!("s{j}");
                name_claim(&mut pod, &name, &name);
            }
        }
        pods.push(pod);
    }
    (c, g, pods, claims)
}

/// Whether some assignment of pods to nodes (or to none) places at least `min` of them:
/// cpu (what others leave, or all with `freed`), untainted GPUs (free ones, or all with
/// `freed`), a GPU claim shared by pods
/// pins them to one node and takes one of its GPUs, and every claim for network
/// devices gets distinct untainted (free, or any with `freed`) devices reachable from
/// the node of each placed pod that uses it.
fn oracle_x(x: &InstanceX, min: usize, rack: bool, freed: bool) -> bool {
    let n = x.nodes.len();
    let total = (n + 1).pow(x.pods.len() as u32);
    (0..total).any(|mut code| {
        let at: Vec<Option<usize>> = x
            .pods
            .iter()
            .map(|_| {
                let choice = code % (n + 1);
                code /= n + 1;
                (choice < n).then_some(choice)
            })
            .collect();
        let placed: Vec<usize> = at.iter().flatten().copied().collect();
        if placed.len() < min
            || (rack
                && placed
                    .iter()
                    .any(|&a| x.nodes[a].rack != x.nodes[placed[0]].rack))
        {
            return false;
        }
        let mut gpus = vec![0usize; n];
        let mut cpu = vec![0i64; n];
        // One entry per network device needed: the nodes it must reach.
        let mut nets: Vec<Vec<usize>> = Vec::new();
        for (p, a) in x.pods.iter().zip(&at) {
            if let Some(a) = *a {
                gpus[a] += p.gpus as usize;
                cpu[a] += p.cpu;
                for _ in 0..p.nets {
                    nets.push(vec![a]);
                }
            }
        }
        for (j, s) in x.shared.iter().enumerate() {
            let users: Vec<usize> = (0..x.pods.len())
                .filter(|&p| x.uses(p, j))
                .filter_map(|p| at[p])
                .collect();
            if users.is_empty() {
                continue;
            }
            if s.gpu {
                if users.iter().any(|&u| u != users[0]) {
                    return false;
                }
                gpus[users[0]] += 1;
            } else {
                nets.push(users);
            }
        }
        let room = x.nodes.iter().enumerate().all(|(i, node)| {
            let (busy, cpu_busy) = if freed {
                (0, 0)
            } else {
                (node.in_use, node.cpu_used)
            };
            gpus[i] <= node.gpus - node.tainted - busy && cpu[i] <= node.cpu - cpu_busy
        });
        room && match_nets(x, &nets, freed, &mut vec![false; x.nets.len()])
    })
}

/// Whether each entry gets its own network device reaching all its nodes.
fn match_nets(x: &InstanceX, wants: &[Vec<usize>], freed: bool, taken: &mut [bool]) -> bool {
    let Some((users, rest)) = wants.split_first() else {
        return true;
    };
    (0..x.nets.len()).any(|d| {
        let net = &x.nets[d];
        let ok = !taken[d]
            && !net.tainted
            && (freed || !net.in_use)
            && users
                .iter()
                .all(|&u| net.rack.is_none_or(|r| x.nodes[u].rack == r));
        if !ok {
            return false;
        }
        taken[d] = true;
        let found = match_nets(x, rest, freed, taken);
        taken[d] = false;
        found
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Scheduled when a placement exists now; `Unschedulable` when one exists once the
    /// devices others hold are free; otherwise unresolvable — with shared claims,
    /// PodGroup claims and network-attached devices. A blocking set is always named,
    /// and an `Unschedulable` gang has a resolvable fact.
    #[test]
    fn explanation_status_agrees_with_the_oracle_with_shared_and_network_claims(
        x in instance_x(),
        min_seed in 0..3usize,
        rack in any::<bool>(),
    ) {
        let min = 1 + min_seed % x.pods.len();
        let (c, g, pods, claims) = build_x(&x, min, rack);
        let ex = explain(&c, &g, &pods, &claims);
        let again = c.explain_gang(Some(&g), &pods, &claims, &GangOptions::default()).unwrap();
        prop_assert_eq!(&ex, &again, "not deterministic");
        let want = if oracle_x(&x, min, rack, false) {
            GangStatus::Scheduled
        } else if oracle_x(&x, min, rack, true) {
            GangStatus::Unschedulable
        } else {
            GangStatus::UnschedulableAndUnresolvable
        };
        prop_assert_eq!(ex.status, want, "{}", ex);
        if want != GangStatus::Scheduled {
            prop_assert!(!ex.blocking.is_empty(), "no blocking set: {}", ex);
            prop_assert!(ex.blocking.iter().all(|&i| i < ex.facts.len()));
        }
        if want == GangStatus::Unschedulable {
            prop_assert!(
                ex.facts.iter().any(|f| f.resolution() == Resolution::WaitOrPreempt),
                "{}", ex
            );
        }
    }
}
