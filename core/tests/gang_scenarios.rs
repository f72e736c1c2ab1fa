#![cfg(not(target_arch = "wasm32"))]
//! Scenario tests for gang placement (`Cluster::place_gang`): backtracking over device
//! and node choices, heterogeneous gangs, PodGroup-level claims on network-attached
//! devices, topology with tainted devices, unschedulable and waiting gangs, competing
//! gangs, determinism, the scoring policies and `minCount` below the pod count.
//!
//! Every `Placed` decision a test sees is re-checked with the independent validator
//! (`validate_placement`), which must find nothing.

mod common;

use std::collections::BTreeMap;

use common::*;
use gangpack::{
    AllocationMode, AllocationResult, ClaimAllocation, ClaimSource, Cluster, ConstraintKind,
    Device, DeviceAttribute, DeviceClass, DeviceConstraint, DeviceRef, DeviceRequest,
    DeviceRequestAllocationResult, DeviceSelector, DeviceTaintEffect, DeviceToleration,
    DeviceTolerationOperator, ExactDeviceRequest, GangOptions, GangOutcome, MixSource, Node,
    NodeAccess, NodeSelector, NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm,
    PlacementDecision, Pod, PodBinding, PodGroup, PodGroupResourceClaim, PodResourceClaim,
    Quantity, ResourceClaim, ResourcePool, ResourceSlice, SchedulingPolicy, ScoringPolicy,
    ShapeMix, SliceNodeSelection, TopologyConstraint, TypicalShape, validate_placement,
};

const NS: &str = "ns";
const GPU_CLASS: &str = "gpu";
const FABRIC_DRIVER: &str = "fabric.example.com";
const FABRIC_CLASS: &str = "fabric";

// ---------------------------------------------------------------------------------
// Fixtures.
// ---------------------------------------------------------------------------------

/// An empty cluster with the `gpu` class (every device of `gpu.example.com`).
fn new_cluster() -> Cluster {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        GPU_CLASS,
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c
}

/// Adds node `name` (label `rack`, 32 CPUs, 110 pods) with `n` GPUs `gpu-0..` in a
/// node-local slice (no slice when `n == 0`).
fn add_gpu_node(c: &mut Cluster, name: &str, rack: &str, n: usize) {
    c.add_node(
        Node::new(name)
            .with_label("rack", rack)
            .with_allocatable("cpu", Quantity::from_int(32))
            .with_allocatable("pods", Quantity::from_int(110)),
    )
    .unwrap();
    if n > 0 {
        c.add_slice(gpus(name, n)).unwrap();
    }
}

/// A cluster of `(node, rack, gpus)`.
fn cluster(nodes: &[(&str, &str, usize)]) -> Cluster {
    let mut c = new_cluster();
    for (name, rack, n) in nodes {
        add_gpu_node(&mut c, name, rack, *n);
    }
    c
}

/// Marks GPUs `gpu-0 .. gpu-<n-1>` of `node` as held by a claim outside every gang.
fn take_gpus(c: &mut Cluster, node: &str, n: usize) {
    for g in 0..n {
        c.allocate(
            &dref(node, &format!("gpu-{g}")),
            holder(&format!("other/{node}-{g}"), vec![]),
        )
        .unwrap();
    }
}

/// A claim `ns/<name>` with one request `gpus` for `n` GPUs.
fn gpu_claim(name: &str, n: u32) -> ResourceClaim {
    let mut claim = ResourceClaim::new(NS, name);
    claim.spec.requests.push(DeviceRequest::exactly(
        "gpus",
        ExactDeviceRequest::new(GPU_CLASS).with_mode(AllocationMode::ExactCount(n)),
    ));
    claim
}

/// Pod `ns/<name>` in group `group`, asking for 1 CPU, with no claims.
fn pod(group: &str, name: &str) -> Pod {
    let mut p = Pod::new(NS, name);
    p.scheduling_group = Some(group.into());
    p.requests.insert("cpu".into(), Quantity::from_int(1));
    p
}

/// Pod `ns/<name>` in `group` with its own claim `ns/<name>-gpus` for `n` GPUs.
fn member(group: &str, name: &str, n: u32) -> (Pod, ResourceClaim) {
    let mut p = pod(group, name);
    let claim = gpu_claim(&format!("{name}-gpus"), n);
    p.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName(claim.name.clone()),
    });
    (p, claim)
}

/// `count` members `<prefix>0..` of `group`, `n` GPUs each.
fn members(group: &str, prefix: &str, count: usize, n: u32) -> (Vec<Pod>, Vec<ResourceClaim>) {
    (0..count)
        .map(|i| member(group, &format!("{prefix}{i}"), n))
        .unzip()
}

fn gang(name: &str, min: u32) -> PodGroup {
    PodGroup::new(NS, name, SchedulingPolicy::Gang { min_count: min })
}

fn by_rack(mut g: PodGroup) -> PodGroup {
    g.topology.push(TopologyConstraint::new("rack"));
    g
}

fn opts(policy: ScoringPolicy) -> GangOptions {
    GangOptions {
        policy,
        ..GangOptions::default()
    }
}

/// Single pods of `count` whole `gpu` devices, with these weights.
fn whole_mix(entries: &[(u32, u32)]) -> ShapeMix {
    ShapeMix {
        shapes: entries
            .iter()
            .map(|&(weight, count)| TypicalShape {
                weight,
                count,
                ..TypicalShape::new(GPU_CLASS)
            })
            .collect(),
    }
}

/// The openb trace's whole-GPU mix (see `WorkloadMix::openb`).
fn openb() -> ShapeMix {
    whole_mix(&[(981, 1), (4, 2), (4, 4), (11, 8)])
}

fn stranding(mix: ShapeMix) -> ScoringPolicy {
    ScoringPolicy::stranding().with_mix(MixSource::Given(mix))
}

fn fgd(mix: ShapeMix) -> ScoringPolicy {
    ScoringPolicy::fgd().with_mix(MixSource::Given(mix))
}

/// The four policies, Stranding and FGD with the openb whole-GPU mix.
fn policies() -> [ScoringPolicy; 4] {
    [
        ScoringPolicy::BestFit,
        ScoringPolicy::Spread,
        stranding(openb()),
        fgd(openb()),
    ]
}

/// Places and, when placed, checks the decision with the validator.
fn place_opts(
    c: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &[ResourceClaim],
    options: &GangOptions,
) -> GangOutcome {
    let out = c.place_gang(group, pods, claims, options).unwrap();
    if let GangOutcome::Placed(d) = &out {
        let v = validate_placement(c, group, pods, claims, d);
        assert!(v.is_empty(), "invalid placement: {v:?}\n{d:#?}");
    }
    out
}

fn place_with(
    c: &Cluster,
    group: &PodGroup,
    pods: &[Pod],
    claims: &[ResourceClaim],
    policy: ScoringPolicy,
) -> GangOutcome {
    place_opts(c, Some(group), pods, claims, &opts(policy))
}

fn place(c: &Cluster, group: &PodGroup, pods: &[Pod], claims: &[ResourceClaim]) -> GangOutcome {
    place_with(c, group, pods, claims, ScoringPolicy::BestFit)
}

#[track_caller]
fn placed(out: GangOutcome) -> PlacementDecision {
    match out {
        GangOutcome::Placed(d) => d,
        other => panic!("expected Placed, got {other:?}"),
    }
}

/// The node pod `ns/<name>` is bound to.
#[track_caller]
fn node_of<'d>(d: &'d PlacementDecision, name: &str) -> &'d str {
    let key = format!("{NS}/{name}");
    match d.bindings.iter().find(|b| b.pod == key) {
        Some(b) => b.node.as_str(),
        None => panic!("{key} is not bound: {d:#?}"),
    }
}

/// `pod -> node`, sorted by pod.
fn assignment(d: &PlacementDecision) -> BTreeMap<String, String> {
    d.bindings
        .iter()
        .map(|b| (b.pod.clone(), b.node.clone()))
        .collect()
}

/// How many pods each node got.
fn per_node(d: &PlacementDecision) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for b in &d.bindings {
        *out.entry(b.node.clone()).or_default() += 1;
    }
    out
}

fn counts(v: &[(&str, usize)]) -> BTreeMap<String, usize> {
    v.iter().map(|(n, k)| ((*n).to_string(), *k)).collect()
}

/// The devices (`pool/device`) allocated to pod `ns/<name>`'s own claims, sorted.
fn devices_of(d: &PlacementDecision, name: &str) -> Vec<String> {
    let key = format!("{NS}/{name}");
    let b = d.bindings.iter().find(|b| b.pod == key).unwrap();
    let mut out: Vec<String> = b
        .claims
        .iter()
        .flat_map(|c| &c.result.devices)
        .map(|r| format!("{}/{}", r.pool, r.device))
        .collect();
    out.sort();
    out
}

/// Every consumer holding any device of the cluster.
fn holders(c: &Cluster) -> Vec<String> {
    let mut out: Vec<String> = c
        .usable_devices()
        .iter()
        .flat_map(|id| {
            let r = c.device(id).unwrap().device_ref();
            c.allocations(&r)
                .iter()
                .map(|h| h.consumer.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out
}

// ---------------------------------------------------------------------------------
// 1. Backtracking.
// ---------------------------------------------------------------------------------

/// One node, 4 GPUs whose NUMA node alternates (0, 1, 0, 1). Pod `a` wants any 2 GPUs,
/// pod `b` 2 GPUs on one NUMA node. Allocating `a` greedily on its own takes gpu-0 and
/// gpu-1, one of each NUMA node, and then `b` fits nowhere; placed as a gang, `a`'s
/// device choice is revisited and both fit: `b` gets a same-NUMA pair, `a` the other.
#[test]
fn backtracking_over_device_choices_on_one_node() {
    let mut c = new_cluster();
    c.add_node(Node::new("n1").with_allocatable("cpu", Quantity::from_int(32)))
        .unwrap();
    let mut slice = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    for g in 0..4 {
        slice.devices.push(
            Device::new(format!("gpu-{g}")).with_attribute("numa", DeviceAttribute::Int(g % 2)),
        );
    }
    c.add_slice(slice).unwrap();

    let (pod_a, a_claim) = member("g", "a", 2);
    let (pod_b, mut b_claim) = member("g", "b", 2);
    b_claim.spec.constraints.push(DeviceConstraint {
        requests: vec![],
        kind: ConstraintKind::MatchAttribute(format!("{DRIVER}/numa")),
    });

    // Greedy, one pod at a time: `a` first takes one GPU of each NUMA node...
    let mut greedy = c.clone();
    let a_alone = placed(place(
        &greedy,
        &gang("g", 1),
        std::slice::from_ref(&pod_a),
        std::slice::from_ref(&a_claim),
    ));
    assert_eq!(devices_of(&a_alone, "a"), ["n1/gpu-0", "n1/gpu-1"]);
    greedy
        .apply_decision(&a_alone, std::slice::from_ref(&pod_a))
        .unwrap();
    // ... and `b` cannot get a same-NUMA pair from gpu-2 (NUMA 0) and gpu-3 (NUMA 1).
    assert!(matches!(
        place(
            &greedy,
            &gang("g", 1),
            std::slice::from_ref(&pod_b),
            std::slice::from_ref(&b_claim)
        ),
        GangOutcome::Unschedulable {
            required: 1,
            best: 0
        }
    ));

    // The gang: both placed, under every policy.
    let pods = [pod_a, pod_b];
    let claims = [a_claim, b_claim];
    for policy in policies() {
        let d = placed(place_with(&c, &gang("g", 2), &pods, &claims, policy));
        assert_eq!(node_of(&d, "a"), "n1");
        assert_eq!(node_of(&d, "b"), "n1");
        let got_b = devices_of(&d, "b");
        assert!(
            got_b == ["n1/gpu-0", "n1/gpu-2"] || got_b == ["n1/gpu-1", "n1/gpu-3"],
            "b needs a same-NUMA pair: {got_b:?}"
        );
        let mut all = devices_of(&d, "a");
        all.extend(got_b);
        all.sort();
        assert_eq!(all, ["n1/gpu-0", "n1/gpu-1", "n1/gpu-2", "n1/gpu-3"]);
    }
}

/// Gangs whose only placement puts the biggest pod on the node the policy ranks
/// second: the search must undo its first choice. Each instance is placed under every
/// policy; the test also shows that the named policy alone would place the big pod
/// on the wrong node.
#[test]
fn backtracking_over_node_choices_under_every_policy() {
    struct Instance {
        /// (node, gpus); no topology.
        nodes: &'static [(&'static str, usize)],
        /// GPUs per pod, pod `p0` first (the biggest).
        sizes: &'static [u32],
        /// The only feasible number of pods per node.
        expect: &'static [(&'static str, usize)],
        /// Where `p0` must go.
        p0_on: &'static str,
        /// A policy whose first choice for `p0` is wrong, and that choice.
        wrong: (ScoringPolicy, &'static str),
    }
    let instances = [
        // 3+2+2+2 on 5+4: the 3-GPU pod must take the 5-GPU node. BestFit ranks the
        // 4-GPU node first (least free); with p0 there, only two 2-GPU pods fit.
        Instance {
            nodes: &[("big", 5), ("small", 4)],
            sizes: &[3, 2, 2, 2],
            expect: &[("big", 2), ("small", 2)],
            p0_on: "big",
            wrong: (ScoringPolicy::BestFit, "small"),
        },
        // 4+3+3 on 6+4: the 4-GPU pod must take the 4-GPU node. Spread ranks the
        // 6-GPU node first; with p0 there, only one 3-GPU pod fits.
        Instance {
            nodes: &[("big", 6), ("small", 4)],
            sizes: &[4, 3, 3],
            expect: &[("big", 2), ("small", 1)],
            p0_on: "small",
            wrong: (ScoringPolicy::Spread, "big"),
        },
        // The first instance again under Stranding with single 4-GPU pods: 5 → 2
        // strands 2 devices where 1 was left over, 4 → 1 strands 1 where none was, so
        // the 4-GPU node looks better, the wrong one.
        Instance {
            nodes: &[("big", 5), ("small", 4)],
            sizes: &[3, 2, 2, 2],
            expect: &[("big", 2), ("small", 2)],
            p0_on: "big",
            wrong: (stranding(whole_mix(&[(1, 4)])), "small"),
        },
    ];
    for inst in instances {
        let mut c = new_cluster();
        for (n, g) in inst.nodes {
            add_gpu_node(&mut c, n, "r1", *g);
        }
        let (pods, claims): (Vec<Pod>, Vec<ResourceClaim>) = inst
            .sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| member("g", &format!("p{i}"), n))
            .unzip();
        // The policy's first choice for the big pod alone.
        let (policy, wrong) = inst.wrong;
        let alone = placed(place_with(
            &c,
            &gang("g", 1),
            &pods[..1],
            &claims[..1],
            policy.clone(),
        ));
        assert_eq!(node_of(&alone, "p0"), wrong, "{}", policy.name());
        let min = u32::try_from(pods.len()).unwrap();
        for policy in policies().into_iter().chain([policy]) {
            let d = placed(place_with(
                &c,
                &gang("g", min),
                &pods,
                &claims,
                policy.clone(),
            ));
            assert_eq!(d.bindings.len(), pods.len(), "{}", policy.name());
            assert_eq!(node_of(&d, "p0"), inst.p0_on, "{}", policy.name());
            assert_eq!(per_node(&d), counts(inst.expect), "{}", policy.name());
        }
    }
}

// ---------------------------------------------------------------------------------
// 2. Heterogeneous gangs.
// ---------------------------------------------------------------------------------

/// One CPU-only leader that must run on the head node (`role=head`) and four workers
/// of 4 GPUs each, `minCount` 5: the leader lands on the head node (which has no GPUs),
/// the workers fill the two 8-GPU nodes exactly.
#[test]
fn leader_and_workers_of_different_shapes() {
    let mut c = new_cluster();
    c.add_node(
        Node::new("head")
            .with_label("role", "head")
            .with_allocatable("cpu", Quantity::from_int(8))
            .with_allocatable("pods", Quantity::from_int(110)),
    )
    .unwrap();
    for n in ["gpu-a", "gpu-b"] {
        c.add_node(
            Node::new(n)
                .with_label("role", "worker")
                .with_allocatable("cpu", Quantity::from_int(32))
                .with_allocatable("pods", Quantity::from_int(110)),
        )
        .unwrap();
        c.add_slice(gpus(n, 8)).unwrap();
    }
    let mut leader = pod("g", "leader");
    leader.requests.insert("cpu".into(), Quantity::from_int(4));
    leader.node_selector.insert("role".into(), "head".into());
    let (mut pods, claims) = members("g", "worker-", 4, 4);
    pods.push(leader);

    for policy in policies() {
        let d = placed(place_with(
            &c,
            &gang("g", 5),
            &pods,
            &claims,
            policy.clone(),
        ));
        assert_eq!(d.bindings.len(), 5, "{}", policy.name());
        assert_eq!(node_of(&d, "leader"), "head");
        assert!(
            d.bindings
                .iter()
                .find(|b| b.pod == "ns/leader")
                .unwrap()
                .claims
                .is_empty()
        );
        assert_eq!(
            per_node(&d),
            counts(&[("head", 1), ("gpu-a", 2), ("gpu-b", 2)]),
            "{}",
            policy.name()
        );
        for i in 0..4 {
            let w = format!("worker-{i}");
            let node = node_of(&d, &w);
            let devs = devices_of(&d, &w);
            assert_eq!(devs.len(), 4);
            assert!(devs.iter().all(|x| x.starts_with(&format!("{node}/"))));
        }
    }

    // Without a head node the leader fits nowhere: counting alone rules the gang out
    // (nothing is searched); `best` reports what the counts allowed, the 4 workers.
    let no_head = cluster(&[("gpu-a", "r1", 8), ("gpu-b", "r1", 8)]);
    assert_eq!(
        place(&no_head, &gang("g", 5), &pods, &claims),
        GangOutcome::Unschedulable {
            required: 5,
            best: 4
        }
    );
}

// ---------------------------------------------------------------------------------
// 3. PodGroup-level claims on network-attached devices.
// ---------------------------------------------------------------------------------

/// Adds the `fabric` class and slice `fabric` (pool `fabric`) with one device
/// `switch-0`, reachable as `access` says.
fn add_fabric(c: &mut Cluster, access: NodeAccess) {
    c.put_class(DeviceClass::with_cel(
        FABRIC_CLASS,
        format!("device.driver == \"{FABRIC_DRIVER}\""),
    ))
    .unwrap();
    c.add_slice(ResourceSlice {
        name: "fabric".into(),
        driver: FABRIC_DRIVER.into(),
        pool: ResourcePool::single("fabric"),
        node_selection: SliceNodeSelection::Slice(access),
        devices: vec![Device::new("switch-0")],
        shared_counters: vec![],
    })
    .unwrap();
}

fn rack_selector(rack: &str) -> NodeSelector {
    NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement::new(
                "rack",
                NodeSelectorOperator::In,
                [rack],
            )],
            match_fields: vec![],
        }],
    }
}

/// A gang `g` of `count` pods × `n` GPUs that all use the group's claim `fabric`
/// (`ns/fabric`, one fabric device): the group lists it and every pod declares the
/// same PodResourceClaim.
fn fabric_gang(min: u32, count: usize, n: u32) -> (PodGroup, Vec<Pod>, Vec<ResourceClaim>) {
    let shared = PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("fabric".into()),
    };
    let mut g = gang("g", min);
    g.resource_claims.push(shared.clone());
    let (mut pods, mut claims) = members("g", "p", count, n);
    for p in &mut pods {
        p.resource_claims.push(PodResourceClaim {
            name: shared.name.clone(),
            source: shared.source.clone(),
        });
        assert!(
            g.group_claim_for(p.resource_claims.last().unwrap())
                .is_some()
        );
    }
    let mut fabric = ResourceClaim::new(NS, "fabric");
    fabric.spec.requests.push(DeviceRequest::exactly(
        "link",
        ExactDeviceRequest::new(FABRIC_CLASS),
    ));
    claims.push(fabric);
    (g, pods, claims)
}

/// Checks that the group claim is allocated once, in `group_claims`, to `switch-0`,
/// that no binding carries it, and that every bound pod's node reaches the device.
fn assert_group_claim_shared(c: &Cluster, d: &PlacementDecision) {
    assert_eq!(d.group_claims.len(), 1, "{d:#?}");
    let gc = &d.group_claims[0];
    assert_eq!(gc.claim, "ns/fabric");
    assert_eq!(gc.result.devices.len(), 1);
    assert_eq!(gc.result.devices[0].device, "switch-0");
    assert_eq!(gc.result.devices[0].pool, "fabric");
    for b in &d.bindings {
        assert!(
            b.claims.iter().all(|a| a.claim != "ns/fabric"),
            "{} carries the group claim",
            b.pod
        );
        assert_eq!(b.claims.len(), 1, "only the pod's own claim: {b:?}");
        let switch = c
            .device_id(&DeviceRef::new(FABRIC_DRIVER, "fabric", "switch-0"))
            .unwrap();
        let node = c.node_id(&b.node).unwrap();
        assert!(
            c.devices_reachable_from(node).contains(switch),
            "{}",
            b.node
        );
        let n = c.node(&b.node).unwrap();
        assert!(
            gc.result
                .node_selector
                .as_ref()
                .is_none_or(|sel| sel.matches(&n.name, &n.labels)),
            "{}",
            b.node
        );
    }
}

/// A fabric device every node reaches (`allNodes`), claimed once by the PodGroup and
/// used by every pod: the 4 pods spread over both racks' nodes (8 GPUs needed, 4 per
/// node), the claim is allocated once, in `group_claims`.
#[test]
fn a_group_claim_on_an_all_nodes_device_is_allocated_once() {
    let mut c = cluster(&[("n1", "r1", 4), ("n2", "r2", 4)]);
    add_fabric(&mut c, NodeAccess::AllNodes);
    let (g, pods, claims) = fabric_gang(4, 4, 2);
    for policy in policies() {
        let d = placed(place_with(&c, &g, &pods, &claims, policy.clone()));
        assert_eq!(
            per_node(&d),
            counts(&[("n1", 2), ("n2", 2)]),
            "{}",
            policy.name()
        );
        assert_group_claim_shared(&c, &d);
        assert_eq!(d.group_claims[0].result.node_selector, None);
    }
    // Committing it holds the device once, for the claim.
    let d = placed(place(&c, &g, &pods, &claims));
    c.apply_decision(&d, &pods).unwrap();
    assert_eq!(
        c.allocations(&DeviceRef::new(FABRIC_DRIVER, "fabric", "switch-0"))
            .iter()
            .map(|h| h.consumer.as_str())
            .collect::<Vec<_>>(),
        ["ns/fabric"]
    );
}

/// The fabric device reaches rack r1 only: every pod of the gang must go to r1 even
/// though no topology constraint is set and BestFit alone would prefer the tighter
/// r2 nodes.
#[test]
fn a_group_claim_reachable_from_one_rack_pins_the_gang_to_it() {
    let mut c = cluster(&[
        ("n1", "r1", 4),
        ("n2", "r1", 4),
        ("n3", "r2", 2),
        ("n4", "r2", 2),
    ]);
    add_fabric(&mut c, NodeAccess::NodeSelector(rack_selector("r1")));
    let (g, pods, claims) = fabric_gang(4, 4, 2);

    // Without the group claim, BestFit puts pods on the r2 nodes first.
    let mut plain = gang("g", 4);
    plain.resource_claims.clear();
    let plain_pods: Vec<Pod> = pods
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.resource_claims.retain(|c| c.name != "fabric");
            p
        })
        .collect();
    let d = placed(place(&c, &plain, &plain_pods, &claims[..4]));
    assert!(d.bindings.iter().any(|b| b.node == "n3" || b.node == "n4"));

    for policy in policies() {
        let d = placed(place_with(&c, &g, &pods, &claims, policy.clone()));
        assert_eq!(
            per_node(&d),
            counts(&[("n1", 2), ("n2", 2)]),
            "{}",
            policy.name()
        );
        assert_group_claim_shared(&c, &d);
        let sel = d.group_claims[0].result.node_selector.as_ref().unwrap();
        assert!(!sel.matches("n3", &c.node("n3").unwrap().labels));
    }

    // Five such pods do not fit in r1 (10 GPUs > 8): unschedulable, even though the
    // cluster has 12 GPUs.
    let (g5, pods5, claims5) = fabric_gang(5, 5, 2);
    assert!(matches!(
        place(&c, &g5, &pods5, &claims5),
        GangOutcome::Unschedulable { required: 5, .. }
    ));
}

// ---------------------------------------------------------------------------------
// 4. Topology with a tainted device.
// ---------------------------------------------------------------------------------

/// Two racks of 2 nodes × 4 GPUs; gpu-3 of n1 (rack r1) has a `NoSchedule` taint. A
/// rack-constrained gang of 4 pods × 2 GPUs needs a whole rack: only r2 fits. When
/// the claims tolerate the taint, r1 fits again, and BestFit prefers it (fewer free
/// untainted devices).
#[test]
fn a_tainted_gpu_rules_out_its_rack_unless_tolerated() {
    let mut c = cluster(&[
        ("n1", "r1", 4),
        ("n2", "r1", 4),
        ("n3", "r2", 4),
        ("n4", "r2", 4),
    ]);
    c.taint_device(
        &dref("n1", "gpu-3"),
        taint("example.com/ecc", "", DeviceTaintEffect::NoSchedule, 1),
    )
    .unwrap();
    let g = by_rack(gang("g", 4));
    let (pods, claims) = members("g", "p", 4, 2);
    for policy in policies() {
        let d = placed(place_with(&c, &g, &pods, &claims, policy.clone()));
        assert_eq!(
            per_node(&d),
            counts(&[("n3", 2), ("n4", 2)]),
            "{}",
            policy.name()
        );
    }

    // Tolerate the taint on every claim's request.
    let tolerating: Vec<ResourceClaim> = claims
        .iter()
        .map(|cl| {
            let mut cl = cl.clone();
            for r in &mut cl.spec.requests {
                if let gangpack::DeviceRequestKind::Exactly(e) = &mut r.kind {
                    e.tolerations.push(DeviceToleration {
                        key: "example.com/ecc".into(),
                        operator: DeviceTolerationOperator::Exists,
                        value: String::new(),
                        effect: Some(DeviceTaintEffect::NoSchedule),
                        toleration_seconds: None,
                    });
                }
            }
            cl
        })
        .collect();
    let d = placed(place(&c, &g, &pods, &tolerating));
    assert_eq!(per_node(&d), counts(&[("n1", 2), ("n2", 2)]));
    // The tainted device is used, with the toleration recorded in its result.
    let tainted = d
        .bindings
        .iter()
        .flat_map(|b| &b.claims)
        .flat_map(|a| &a.result.devices)
        .find(|r| r.pool == "n1" && r.device == "gpu-3")
        .expect("all of r1's GPUs are needed");
    assert_eq!(tainted.tolerations.len(), 1);
    for policy in policies() {
        let d = placed(place_with(&c, &g, &pods, &tolerating, policy.clone()));
        let racks: Vec<&str> = d
            .bindings
            .iter()
            .map(|b| c.node(&b.node).unwrap().labels["rack"].as_str())
            .collect();
        assert_eq!(racks.len(), 4);
        assert!(racks.iter().all(|r| *r == racks[0]), "{}", policy.name());
    }
}

// ---------------------------------------------------------------------------------
// 5. Larger than any domain.
// ---------------------------------------------------------------------------------

/// A rack-constrained gang that needs more GPUs than any rack has is unschedulable.
/// When the racks' counts already rule it out nothing is searched and `best` is the
/// most pods one rack's free devices could hold (2); when they do not (two shapes
/// competing for one node's devices) the search places one pod at best. Without the
/// rack constraint both gangs fit.
#[test]
fn a_gang_larger_than_any_domain_is_unschedulable() {
    let c = cluster(&[("n1", "r1", 4), ("n2", "r2", 4)]);

    // 3 × 2 GPUs, each rack hosts 2 such pods: pruned by counting.
    let (pods, claims) = members("g", "p", 3, 2);
    for policy in policies() {
        assert_eq!(
            place_with(&c, &by_rack(gang("g", 3)), &pods, &claims, policy),
            GangOutcome::Unschedulable {
                required: 3,
                best: 2
            }
        );
    }
    let d = placed(place(&c, &gang("g", 3), &pods, &claims));
    assert_eq!(d.bindings.len(), 3);

    // 4 + 2 GPUs: each rack holds either pod on its own, not both.
    let (big, big_claim) = member("g", "big", 4);
    let (small, small_claim) = member("g", "small", 2);
    let pods = [big, small];
    let claims = [big_claim, small_claim];
    for policy in policies() {
        assert_eq!(
            place_with(&c, &by_rack(gang("g", 2)), &pods, &claims, policy),
            GangOutcome::Unschedulable {
                required: 2,
                best: 1
            }
        );
    }
    let d = placed(place(&c, &gang("g", 2), &pods, &claims));
    assert_ne!(node_of(&d, "big"), node_of(&d, "small"));
}

// ---------------------------------------------------------------------------------
// 6. Two competing gangs.
// ---------------------------------------------------------------------------------

/// 4 nodes × 8 GPUs; gangs `a` and `b`, each 4 pods × 8 GPUs (the whole cluster).
/// Placed pod by pod, alternating between them (as basic groups would be), each gets
/// 2 nodes and neither can ever complete: a deadlock. Placed as gangs, `a` takes all
/// four nodes and `b` is unschedulable without holding anything.
#[test]
fn competing_gangs_do_not_deadlock() {
    let fresh = || {
        cluster(&[
            ("n1", "r1", 8),
            ("n2", "r1", 8),
            ("n3", "r1", 8),
            ("n4", "r1", 8),
        ])
    };
    let (pods_a, claims_a) = members("a", "a", 4, 8);
    let (pods_b, claims_b) = members("b", "b", 4, 8);

    // Interleaved, pod by pod.
    let mut c = fresh();
    let basic = |name: &str| PodGroup::new(NS, name, SchedulingPolicy::Basic);
    let mut running_a = pods_a.clone();
    let mut running_b = pods_b.clone();
    for i in 0..4 {
        for (group, pods, claims, running) in [
            (basic("a"), &pods_a, &claims_a, &mut running_a),
            (basic("b"), &pods_b, &claims_b, &mut running_b),
        ] {
            let one = std::slice::from_ref(&pods[i]);
            let out = place_opts(
                &c,
                Some(&group),
                one,
                std::slice::from_ref(&claims[i]),
                &GangOptions::default(),
            );
            if i < 2 {
                let d = placed(out);
                assert_eq!(d.bindings.len(), 1, "{}", pods[i].name);
                c.apply_decision(&d, one).unwrap();
                running[i].node_name = Some(d.bindings[0].node.clone());
            } else {
                // The cluster is full: basic scheduling places nothing, and says so.
                assert_eq!(
                    out,
                    GangOutcome::Unschedulable {
                        required: 1,
                        best: 0
                    }
                );
            }
        }
    }
    let bound = |v: &[Pod]| v.iter().filter(|p| p.node_name.is_some()).count();
    assert_eq!((bound(&running_a), bound(&running_b)), (2, 2));
    // Neither gang can now complete: each needs 2 more whole nodes, none is free.
    for (pods, claims, name) in [(&running_a, &claims_a, "a"), (&running_b, &claims_b, "b")] {
        assert_eq!(
            place(&c, &gang(name, 4), pods, claims),
            GangOutcome::Unschedulable {
                required: 2,
                best: 0
            }
        );
    }

    // Gang by gang.
    let mut c = fresh();
    let d = placed(place(&c, &gang("a", 4), &pods_a, &claims_a));
    assert_eq!(
        per_node(&d),
        counts(&[("n1", 1), ("n2", 1), ("n3", 1), ("n4", 1)])
    );
    c.apply_decision(&d, &pods_a).unwrap();
    let before = observe(&c);
    for policy in policies() {
        assert_eq!(
            place_with(&c, &gang("b", 4), &pods_b, &claims_b, policy),
            GangOutcome::Unschedulable {
                required: 4,
                best: 0
            }
        );
    }
    assert_eq!(
        c.place_gang_mut(
            Some(&gang("b", 4)),
            &pods_b,
            &claims_b,
            &GangOptions::default()
        )
        .unwrap(),
        GangOutcome::Unschedulable {
            required: 4,
            best: 0
        }
    );
    assert_eq!(observe(&c), before);
    // Nothing of b holds a device or a node reservation.
    let held = holders(&c);
    assert_eq!(held.len(), 32);
    assert!(held.iter().all(|h| h.starts_with("ns/a")), "{held:?}");
    for n in ["n1", "n2", "n3", "n4"] {
        let free = c.node_free_resources(n).unwrap();
        assert_eq!(free["cpu"], Quantity::from_int(31));
        assert_eq!(free["pods"], Quantity::from_int(109));
    }
}

// ---------------------------------------------------------------------------------
// 7. Determinism and `place_gang_mut`.
// ---------------------------------------------------------------------------------

/// A rack-constrained gang `g` of `smalls` pods × 2 GPUs plus pod `big` × 4 GPUs, all
/// using the group's fabric claim, with `minCount` `min`.
fn fabric_rack_gang(min: u32, smalls: usize) -> (PodGroup, Vec<Pod>, Vec<ResourceClaim>) {
    let (g, mut pods, mut claims) = fabric_gang(min, smalls, 2);
    let g = by_rack(g);
    let (mut big, big_claim) = member("g", "big", 4);
    big.resource_claims.push(pods[0].resource_claims[1].clone());
    pods.push(big);
    claims.push(big_claim);
    (g, pods, claims)
}

/// A cluster with some of everything: three racks, GPUs already taken, a tainted GPU
/// and a fabric device that only rack r1 reaches. Free GPUs: r1 8 + 6, r2 7 + 4
/// (untainted), r3 3.
fn busy_cluster() -> Cluster {
    let mut c = cluster(&[
        ("n1", "r1", 8),
        ("n2", "r1", 8),
        ("n3", "r2", 8),
        ("n4", "r2", 4),
        ("n5", "r3", 8),
    ]);
    take_gpus(&mut c, "n2", 2);
    take_gpus(&mut c, "n5", 5);
    c.taint_device(
        &dref("n3", "gpu-0"),
        taint("example.com/ecc", "", DeviceTaintEffect::NoSchedule, 1),
    )
    .unwrap();
    add_fabric(&mut c, NodeAccess::NodeSelector(rack_selector("r1")));
    c
}

/// The same input gives the same decision, on the same cluster and on a cluster
/// built the same way; `place_gang_mut` gives it too and leaves the cluster exactly
/// as it was, whether it places the gang, finds it unschedulable or runs out of
/// budget half-way (with bindings made).
#[test]
fn placement_is_deterministic_and_place_gang_mut_restores_the_cluster() {
    let c = busy_cluster();
    // 5 × 2 + 4 = 14 GPUs and the fabric: exactly rack r1. Counting per shape admits
    // r2 too (its caps reach 1 big + 5 small pods, though it has only 11 free GPUs and
    // no fabric) and BestFit tries it first (fewer free devices): the search must fail
    // there and move on to r1.
    let (g, pods, claims) = fabric_rack_gang(6, 5);
    let first = place(&c, &g, &pods, &claims);
    let d = placed(first.clone());
    assert_eq!(d.bindings.len(), 6);
    assert!(d.bindings.iter().all(|b| b.node == "n1" || b.node == "n2"));
    assert_group_claim_shared(&c, &d);
    assert_eq!(place(&c, &g, &pods, &claims), first);
    assert_eq!(place(&busy_cluster(), &g, &pods, &claims), first);
    for policy in policies() {
        let here = place_with(&c, &g, &pods, &claims, policy.clone());
        let rebuilt = place_with(&busy_cluster(), &g, &pods, &claims, policy.clone());
        assert_eq!(here, rebuilt, "{}", policy.name());
        assert!(matches!(here, GangOutcome::Placed(_)), "{}", policy.name());
    }

    let mut m = c.clone();
    let before = observe(&m);
    assert_eq!(before, observe(&c));
    let options = GangOptions::default();
    assert_eq!(
        m.place_gang_mut(Some(&g), &pods, &claims, &options)
            .unwrap(),
        first
    );
    assert_eq!(observe(&m), before);

    // Unschedulable: 7 × 2 + 4 = 18 GPUs, r1 has 14.
    let (g8, pods8, claims8) = fabric_rack_gang(8, 7);
    let out = m
        .place_gang_mut(Some(&g8), &pods8, &claims8, &options)
        .unwrap();
    assert!(
        matches!(out, GangOutcome::Unschedulable { required: 8, .. }),
        "{out:?}"
    );
    assert_eq!(out, place(&c, &g8, &pods8, &claims8));
    assert_eq!(observe(&m), before);

    // Out of budget part-way (two failed tries in r2, then bindings in r1 that must be
    // undone): every budget below the 8 steps the search needs.
    for budget in 1..=6 {
        let tight = GangOptions {
            step_budget: budget,
            ..GangOptions::default()
        };
        let out = m.place_gang_mut(Some(&g), &pods, &claims, &tight).unwrap();
        assert_eq!(out, c.place_gang(Some(&g), &pods, &claims, &tight).unwrap());
        assert_eq!(out, GangOutcome::BudgetExhausted { steps: budget });
        assert_eq!(observe(&m), before, "budget {budget}");
    }
}

// ---------------------------------------------------------------------------------
// 8. Scoring policies.
// ---------------------------------------------------------------------------------

/// Three 8-GPU nodes with 8, 4 and 2 GPUs free (the rest held by other claims). A
/// single 2-GPU pod goes to the node with 2 free under BestFit (tightest), to the one
/// with 8 free under Spread (emptiest). Under Stranding with a mix of only 2-GPU pods
/// every node keeps an even count, so no node changes the measure and the packing
/// tie-break takes the node left with fewer free devices (the 2-free node); under FGD
/// the tie goes to the first node by name, the same one; with the openb mix the
/// 2-free node also wins (it removes a 2-device remainder for the 4- and 8-GPU shapes).
#[test]
fn policies_choose_nodes_as_documented() {
    let mut c = cluster(&[("n8", "r1", 8), ("n4", "r1", 8), ("n2", "r1", 8)]);
    take_gpus(&mut c, "n4", 4);
    take_gpus(&mut c, "n2", 6);
    let (p, claim) = member("g", "p", 2);
    let pods = [p];
    let claims = [claim];
    let two = whole_mix(&[(1, 2)]);
    for (policy, node) in [
        (ScoringPolicy::BestFit, "n2"),
        (ScoringPolicy::Spread, "n8"),
        (stranding(two.clone()), "n2"),
        (fgd(two.clone()), "n2"),
        (stranding(openb()), "n2"),
        (fgd(openb()), "n2"),
    ] {
        let d = placed(place_with(
            &c,
            &gang("g", 1),
            &pods,
            &claims,
            policy.clone(),
        ));
        assert_eq!(node_of(&d, "p"), node, "{policy:?}");
        assert_eq!(devices_of(&d, "p").len(), 2);
    }

    // Where the three policies disagree: 8, 6 and 5 free, mix of single 4-GPU pods.
    // BestFit: 5 free; Spread: 8 free; Stranding: 6 → 4 lowers the 4-GPU remainder
    // from 2 to 0, while 5 → 3 and 8 → 6 raise it. FGD: 5 → 3 leaves no room for a
    // 4-GPU pod; 8 → 6 and 6 → 4 keep one, a tie the name order gives to n6.
    let mut c = cluster(&[("n8", "r1", 8), ("n6", "r1", 8), ("n5", "r1", 8)]);
    take_gpus(&mut c, "n6", 2);
    take_gpus(&mut c, "n5", 3);
    let four = whole_mix(&[(1, 4)]);
    for (policy, node) in [
        (ScoringPolicy::BestFit, "n5"),
        (ScoringPolicy::Spread, "n8"),
        (stranding(four.clone()), "n6"),
        (fgd(four), "n6"),
    ] {
        let d = placed(place_with(
            &c,
            &gang("g", 1),
            &pods,
            &claims,
            policy.clone(),
        ));
        assert_eq!(node_of(&d, "p"), node, "{policy:?}");
    }

    // A 1-GPU pod with the 2-GPU mix goes where it leaves no odd leftover: of 8, 5 and
    // 2 free, only the 5-free node; BestFit would take the 2-free one. FGD only sees
    // that 2 → 1 leaves no room for a 2-GPU pod: n5 and n8 tie, n5 first by name.
    let mut c = cluster(&[("n8", "r1", 8), ("n5", "r1", 8), ("n2", "r1", 8)]);
    take_gpus(&mut c, "n5", 3);
    take_gpus(&mut c, "n2", 6);
    let (single, single_claim) = member("g", "p", 1);
    let one_gpu_pods = [single];
    let one_gpu_claims = [single_claim];
    for (policy, node) in [
        (ScoringPolicy::BestFit, "n2"),
        (ScoringPolicy::Spread, "n8"),
        (stranding(two.clone()), "n5"),
        (fgd(two), "n5"),
    ] {
        let d = placed(place_with(
            &c,
            &gang("g", 1),
            &one_gpu_pods,
            &one_gpu_claims,
            policy.clone(),
        ));
        assert_eq!(node_of(&d, "p"), node, "{policy:?}");
    }
}

/// Two racks: r1 with 4 + 2 free GPUs, r2 with 8 + 8. A rack-constrained gang of
/// 2 pods × 2 GPUs goes to the tighter rack r1 under BestFit (filling the 2-free node
/// first), to the emptier rack r2 under Spread (one pod per node), and to r1 under
/// Stranding with the openb mix (it lowers r1's stranding and would raise r2's). FGD
/// with the openb mix also takes r1, but its score rounds both of r1's nodes to 50 (a
/// change of 0.014 and 0.03 GPUs of fragmentation, under the 0.04 of one point), so the
/// name order puts both pods on n1.
#[test]
fn policies_choose_domains_as_documented() {
    let mut c = cluster(&[
        ("n1", "r1", 4),
        ("n2", "r1", 4),
        ("n3", "r2", 8),
        ("n4", "r2", 8),
    ]);
    take_gpus(&mut c, "n2", 2);
    let g = by_rack(gang("g", 2));
    let (pods, claims) = members("g", "p", 2, 2);
    let expect = |v: &[(&str, &str)]| -> BTreeMap<String, String> {
        v.iter()
            .map(|(p, n)| (format!("{NS}/{p}"), (*n).to_string()))
            .collect()
    };
    let d = placed(place_with(&c, &g, &pods, &claims, ScoringPolicy::BestFit));
    assert_eq!(assignment(&d), expect(&[("p0", "n2"), ("p1", "n1")]));
    let d = placed(place_with(&c, &g, &pods, &claims, ScoringPolicy::Spread));
    assert_eq!(assignment(&d), expect(&[("p0", "n3"), ("p1", "n4")]));
    let d = placed(place_with(&c, &g, &pods, &claims, stranding(openb())));
    assert_eq!(assignment(&d), expect(&[("p0", "n2"), ("p1", "n1")]));
    let d = placed(place_with(&c, &g, &pods, &claims, fgd(openb())));
    assert_eq!(assignment(&d), expect(&[("p0", "n1"), ("p1", "n1")]));
}

// ---------------------------------------------------------------------------------
// 9. Waiting for pods.
// ---------------------------------------------------------------------------------

/// Fewer members exist than `minCount`: the group waits (pods of other groups do not
/// count; running members do), whatever the cluster could hold.
#[test]
fn fewer_members_than_min_count_wait_for_pods() {
    let c = cluster(&[("n1", "r1", 8)]);
    let (pods, claims) = members("g", "p", 3, 1);
    assert_eq!(
        place(&c, &gang("g", 4), &pods, &claims),
        GangOutcome::WaitingForPods {
            present: 3,
            min_count: 4
        }
    );
    // A pod of another group is not a member.
    let (other, other_claim) = member("h", "q", 1);
    let mut with_other = pods.clone();
    with_other.push(other);
    let mut claims_other = claims.clone();
    claims_other.push(other_claim);
    assert_eq!(
        place(&c, &gang("g", 4), &with_other, &claims_other),
        GangOutcome::WaitingForPods {
            present: 3,
            min_count: 4
        }
    );
    // A running member counts: 1 running + 3 pending reach 4; only the 3 pending are
    // placed, and the running one needs no resources.
    let mut running = pod("g", "r");
    running.node_name = Some("n1".into());
    let mut with_running = pods.clone();
    with_running.push(running);
    let d = placed(place(&c, &gang("g", 4), &with_running, &claims));
    assert_eq!(d.bindings.len(), 3);
    assert!(d.bindings.iter().all(|b| b.pod != "ns/r"));
    // minCount 5 with 4 members: waiting again.
    assert_eq!(
        place(&c, &gang("g", 5), &with_running, &claims),
        GangOutcome::WaitingForPods {
            present: 4,
            min_count: 5
        }
    );
}

// ---------------------------------------------------------------------------------
// 10. minCount below the number of pods.
// ---------------------------------------------------------------------------------

/// 5 pods × 2 GPUs, `minCount` 3, on one node: with 4 or 5 GPUs free nothing is
/// placed (below minCount; `best` is the 2 that fit); with 6 or 7 exactly the 3 required; with 8 or 9, 4 (one
/// opportunistic extra); with 10, all 5.
#[test]
fn pods_beyond_min_count_are_placed_opportunistically() {
    let (pods, claims) = members("g", "p", 5, 2);
    for (free, placed_pods) in [
        (4, None),
        (5, None),
        (6, Some(3)),
        (7, Some(3)),
        (8, Some(4)),
        (9, Some(4)),
        (10, Some(5)),
    ] {
        let c = cluster(&[("n1", "r1", free)]);
        let out = place(&c, &gang("g", 3), &pods, &claims);
        match placed_pods {
            None => assert_eq!(
                out,
                GangOutcome::Unschedulable {
                    required: 3,
                    best: free / 2
                },
                "{free} free"
            ),
            Some(n) => {
                let d = placed(out);
                assert_eq!(d.bindings.len(), n, "{free} free");
                assert!(d.bindings.iter().all(|b| b.node == "n1"));
                // Pods are taken in name order.
                let names: Vec<String> = (0..n).map(|i| format!("{NS}/p{i}")).collect();
                let got: Vec<String> = assignment(&d).into_keys().collect();
                assert_eq!(got, names, "{free} free");
            }
        }
    }

    // Across nodes, with one pod that fits only on its own node: 3 required pods on
    // n1 (6 GPUs), the 4th on n2 (2 GPUs).
    let c = cluster(&[("n1", "r1", 6), ("n2", "r2", 2)]);
    let d = placed(place(&c, &gang("g", 3), &pods, &claims));
    assert_eq!(per_node(&d), counts(&[("n1", 3), ("n2", 1)]));
    // With a rack constraint, the extras stay in the gang's rack: only 3 fit in r1.
    let d = placed(place(&c, &by_rack(gang("g", 3)), &pods, &claims));
    assert_eq!(per_node(&d), counts(&[("n1", 3)]));
}

// ---------------------------------------------------------------------------------
// Device choices other nodes see are revisited (issue 12 part 4; these two scenarios
// pinned the placer's known limit before it was lifted).
// ---------------------------------------------------------------------------------

/// One allocation result of claim `ns/<claim>`: `devices` (`pool/device`) of
/// `driver` for `request`, pinned to `node` when given.
fn alloc(
    claim: &str,
    request: &str,
    driver: &str,
    devices: &[&str],
    node: Option<&str>,
) -> ClaimAllocation {
    ClaimAllocation {
        claim: format!("{NS}/{claim}"),
        result: AllocationResult {
            devices: devices
                .iter()
                .map(|d| {
                    let (pool, device) = d.split_once('/').unwrap();
                    DeviceRequestAllocationResult {
                        request: request.into(),
                        driver: driver.into(),
                        pool: pool.into(),
                        device: device.into(),
                        ..DeviceRequestAllocationResult::default()
                    }
                })
                .collect(),
            config: vec![],
            node_selector: node.map(NodeSelector::single_node),
        },
    }
}

/// Two nodes × 2 GPUs and two network-attached fabric devices every node reaches:
/// `switch-0` (port `a`) and `switch-1` (port `b`).
fn two_switch_cluster() -> Cluster {
    let mut c = cluster(&[("n1", "r1", 2), ("n2", "r1", 2)]);
    c.put_class(DeviceClass::with_cel(
        FABRIC_CLASS,
        format!("device.driver == \"{FABRIC_DRIVER}\""),
    ))
    .unwrap();
    let port = |p: &str| DeviceAttribute::String(p.into());
    c.add_slice(ResourceSlice {
        name: "fabric".into(),
        driver: FABRIC_DRIVER.into(),
        pool: ResourcePool::single("fabric"),
        node_selection: SliceNodeSelection::Slice(NodeAccess::AllNodes),
        devices: vec![
            Device::new("switch-0").with_attribute("port", port("a")),
            Device::new("switch-1").with_attribute("port", port("b")),
        ],
        shared_counters: vec![],
    })
    .unwrap();
    c
}

/// Claim `ns/<name>` for one fabric device, of port `a` when `port_a`, else any.
fn port_claim(name: &str, port_a: bool) -> ResourceClaim {
    let mut req = ExactDeviceRequest::new(FABRIC_CLASS);
    if port_a {
        req.selectors.push(DeviceSelector {
            cel: format!("device.attributes[\"{FABRIC_DRIVER}\"].port == \"a\""),
        });
    }
    let mut claim = ResourceClaim::new(NS, name);
    claim
        .spec
        .requests
        .push(DeviceRequest::exactly("port", req));
    claim
}

fn uses(p: &mut Pod, name: &str, claim: &str) {
    p.resource_claims.push(PodResourceClaim {
        name: name.into(),
        source: ClaimSource::ClaimName(claim.into()),
    });
}

/// The device chosen for a PodGroup-level claim must be revisited like any other
/// choice. Pod `a` (2 GPUs) is placed first (bigger) and brings the group claim
/// `fabric` (any fabric device), which takes `switch-0`; pod `b` then needs `switch-0`
/// for its own port-`a` claim. A placement exists (group claim on `switch-1`, checked
/// by the validator below), so the gang must be placed.
#[test]
fn a_group_claim_device_choice_is_revisited() {
    let c = two_switch_cluster();
    let mut g = gang("g", 2);
    g.resource_claims.push(PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("fabric".into()),
    });
    let (mut pod_a, a_gpus) = member("g", "a", 2);
    let mut pod_b = pod("g", "b");
    uses(&mut pod_b, "port", "b-port");
    for p in [&mut pod_a, &mut pod_b] {
        uses(p, "fabric", "fabric");
    }
    let mut fabric = port_claim("fabric", false);
    fabric.spec.requests[0].name = "link".into();
    let pods = [pod_a, pod_b];
    let claims = [a_gpus, port_claim("b-port", true), fabric];

    // A valid placement exists.
    let witness = PlacementDecision {
        bindings: vec![
            PodBinding {
                pod: "ns/a".into(),
                node: "n1".into(),
                claims: vec![alloc(
                    "a-gpus",
                    "gpus",
                    DRIVER,
                    &["n1/gpu-0", "n1/gpu-1"],
                    Some("n1"),
                )],
            },
            PodBinding {
                pod: "ns/b".into(),
                node: "n2".into(),
                claims: vec![alloc(
                    "b-port",
                    "port",
                    FABRIC_DRIVER,
                    &["fabric/switch-0"],
                    None,
                )],
            },
        ],
        group_claims: vec![alloc(
            "fabric",
            "link",
            FABRIC_DRIVER,
            &["fabric/switch-1"],
            None,
        )],
    };
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &witness),
        []
    );

    // Before revisiting: Unschedulable { required: 2, best: 1 }.
    let d = placed(place(&c, &g, &pods, &claims));
    assert_eq!(d.group_claims[0].result.devices[0].device, "switch-1");
}

/// Devices that several nodes reach (network-attached) must be revisited across
/// nodes too, not only for pods sharing a node. Pods `a` and `b` each need 2 GPUs
/// (so they go to different nodes) and one fabric device: `a` any, `b` port `a`.
/// `a` is placed first and takes `switch-0`; `b`, on the other node, cannot get it,
/// and the search only moves `a` between nodes, where it takes `switch-0` again. With
/// the names swapped (the constrained pod first) the same gang is placed.
#[test]
fn network_attached_device_choices_are_revisited_across_nodes() {
    let c = two_switch_cluster();
    let gang_of = |constrained: &str, other: &str| {
        let (mut x, x_gpus) = member("g", other, 2);
        let (mut y, y_gpus) = member("g", constrained, 2);
        uses(&mut x, "port", &format!("{other}-port"));
        uses(&mut y, "port", &format!("{constrained}-port"));
        let claims = vec![
            x_gpus,
            y_gpus,
            port_claim(&format!("{other}-port"), false),
            port_claim(&format!("{constrained}-port"), true),
        ];
        (vec![x, y], claims)
    };
    // Constrained pod sorted first: placed.
    let (pods, claims) = gang_of("a", "b");
    let d = placed(place(&c, &gang("g", 2), &pods, &claims));
    assert_eq!(d.bindings.len(), 2);

    // Constrained pod sorted second: a valid placement exists...
    let (pods, claims) = gang_of("b", "a");
    let witness = PlacementDecision {
        bindings: vec![
            PodBinding {
                pod: "ns/a".into(),
                node: "n1".into(),
                claims: vec![
                    alloc(
                        "a-gpus",
                        "gpus",
                        DRIVER,
                        &["n1/gpu-0", "n1/gpu-1"],
                        Some("n1"),
                    ),
                    alloc("a-port", "port", FABRIC_DRIVER, &["fabric/switch-1"], None),
                ],
            },
            PodBinding {
                pod: "ns/b".into(),
                node: "n2".into(),
                claims: vec![
                    alloc(
                        "b-gpus",
                        "gpus",
                        DRIVER,
                        &["n2/gpu-0", "n2/gpu-1"],
                        Some("n2"),
                    ),
                    alloc("b-port", "port", FABRIC_DRIVER, &["fabric/switch-0"], None),
                ],
            },
        ],
        group_claims: vec![],
    };
    assert_eq!(
        validate_placement(&c, Some(&gang("g", 2)), &pods, &claims, &witness),
        []
    );
    // ... and the placer finds one (before revisiting: Unschedulable { required: 2,
    // best: 1 }): `a` gives `switch-0` up for `switch-1`.
    let d = placed(place(&c, &gang("g", 2), &pods, &claims));
    assert_eq!(d.bindings.len(), 2);
    let port_of = |claim: &str| {
        d.bindings
            .iter()
            .flat_map(|b| &b.claims)
            .find(|ca| ca.claim == format!("{NS}/{claim}"))
            .map(|ca| ca.result.devices[0].device.clone())
            .unwrap()
    };
    assert_eq!(port_of("a-port"), "switch-1");
    assert_eq!(port_of("b-port"), "switch-0");
}

/// A shared claim's node-local device choice is revisited too: pods `a` and `b` share
/// claim `one-gpu` (any GPU), so they run on one node, and `b` also needs an `x` GPU
/// of its own. The node has one `x` and one `y` GPU; the shared claim takes `x` first
/// (allocation order) and must give it up for `y`.
#[test]
fn a_shared_claims_node_local_choice_is_revisited() {
    let mut c = new_cluster();
    c.add_node(
        Node::new("n1")
            .with_label("rack", "r1")
            .with_allocatable("cpu", Quantity::from_int(32)),
    )
    .unwrap();
    let kind = |k: &str| DeviceAttribute::String(k.into());
    let mut slice = gpus("n1", 0);
    slice.devices = vec![
        Device::new("gpu-0").with_attribute("kind", kind("x")),
        Device::new("gpu-1").with_attribute("kind", kind("y")),
    ];
    c.add_slice(slice).unwrap();
    let shared = gpu_claim("one-gpu", 1);
    let mut x_only = gpu_claim("b-x", 1);
    if let gangpack::DeviceRequestKind::Exactly(e) = &mut x_only.spec.requests[0].kind {
        e.selectors.push(DeviceSelector {
            cel: format!("device.attributes[\"{DRIVER}\"].kind == \"x\""),
        });
    }
    let mut a = pod("g", "a");
    let mut b = pod("g", "b");
    uses(&mut a, "gpu", "one-gpu");
    uses(&mut b, "gpu", "one-gpu");
    uses(&mut b, "x", "b-x");
    let pods = [a, b];
    let claims = [shared, x_only];
    for policy in policies() {
        let d = placed(place_with(
            &c,
            &gang("g", 2),
            &pods,
            &claims,
            policy.clone(),
        ));
        let device_of = |claim: &str| {
            d.bindings
                .iter()
                .flat_map(|b| &b.claims)
                .find(|ca| ca.claim == format!("{NS}/{claim}"))
                .map(|ca| ca.result.devices[0].device.clone())
                .unwrap()
        };
        assert_eq!(device_of("one-gpu"), "gpu-1", "{policy:?}");
        assert_eq!(device_of("b-x"), "gpu-0", "{policy:?}");
    }
}

/// Revisiting stays cheap when the gang cannot tell devices apart: eight pods each
/// need one fabric device of any port, and seven devices with unique UUIDs exist.
/// The devices are one class for this gang (no selector reads the UUID), so each
/// choice is tried once, not once per device: the search proves the gang
/// unschedulable within a small budget. With the port in a selector they are two
/// classes, still within it.
#[test]
fn devices_the_gang_cannot_tell_apart_are_tried_once() {
    let mut c = cluster(&[("n1", "r1", 8), ("n2", "r1", 8)]);
    c.put_class(DeviceClass::with_cel(
        FABRIC_CLASS,
        format!("device.driver == \"{FABRIC_DRIVER}\""),
    ))
    .unwrap();
    c.add_slice(ResourceSlice {
        name: "fabric".into(),
        driver: FABRIC_DRIVER.into(),
        pool: ResourcePool::single("fabric"),
        node_selection: SliceNodeSelection::Slice(NodeAccess::AllNodes),
        devices: (0..7)
            .map(|i| {
                Device::new(format!("switch-{i}"))
                    .with_attribute("uuid", DeviceAttribute::String(format!("SW-{i:04}")))
                    .with_attribute(
                        "port",
                        DeviceAttribute::String(if i < 4 { "a" } else { "b" }.into()),
                    )
            })
            .collect(),
        shared_counters: vec![],
    })
    .unwrap();
    for port_a_for_some in [false, true] {
        let mut pods = Vec::new();
        let mut claims = Vec::new();
        for i in 0..8 {
            let (mut p, gpus) = member("g", &format!("p{i}"), 1);
            let port = format!("p{i}-port");
            uses(&mut p, "port", &port);
            claims.push(gpus);
            claims.push(port_claim(&port, port_a_for_some && i % 2 == 0));
            pods.push(p);
        }
        let options = GangOptions {
            step_budget: 5_000,
            ..GangOptions::default()
        };
        let out = place_opts(&c, Some(&gang("g", 8)), &pods, &claims, &options);
        assert!(
            matches!(
                out,
                GangOutcome::Unschedulable {
                    required: 8,
                    best: 7
                }
            ),
            "{port_a_for_some}: {out:?}"
        );
        // Seven of them fit.
        let d = placed(place_opts(
            &c,
            Some(&gang("g", 7)),
            &pods[..7],
            &claims[..14],
            &options,
        ));
        assert_eq!(d.bindings.len(), 7);
    }
}

/// A PodGroup-level claim already allocated in the cluster (its members running) is
/// used as it is by the pending members, as upstream uses a claim with
/// `status.allocation`. Here 2 of 4 members run with the fabric claim allocated, and
/// the 2 pending ones fit the free GPUs.
#[test]
fn pending_members_use_the_group_claim_already_allocated() {
    let mut c = cluster(&[("n1", "r1", 4), ("n2", "r1", 4)]);
    add_fabric(&mut c, NodeAccess::AllNodes);
    let (g, pods, mut claims) = fabric_gang(2, 4, 2);
    let first = placed(place(&c, &g, &pods[..2], &claims));
    assert_eq!(first.bindings.len(), 2);
    c.apply_decision(&first, &pods[..2]).unwrap();
    // As the scheduler writes it: the group claim's status.allocation.
    for gc in &first.group_claims {
        let claim = claims
            .iter_mut()
            .find(|c| format!("{NS}/{}", c.name) == gc.claim)
            .unwrap();
        claim.allocation = Some(gc.result.clone());
    }
    let mut all = pods.clone();
    for b in &first.bindings {
        let p = all
            .iter_mut()
            .find(|p| format!("{NS}/{}", p.name) == b.pod)
            .unwrap();
        p.node_name = Some(b.node.clone());
    }

    // A valid placement of the pending two: what the placer finds when the group and
    // the pods do not mention the (allocated) fabric claim.
    let mut plain = g.clone();
    plain.resource_claims.clear();
    let plain_pods: Vec<Pod> = all
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.resource_claims.retain(|c| c.name != "fabric");
            p
        })
        .collect();
    let witness = placed(place(&c, &plain, &plain_pods, &claims[..4]));
    assert_eq!(witness.bindings.len(), 2);
    assert_eq!(
        validate_placement(&c, Some(&g), &all, &claims, &witness),
        []
    );

    // minCount 3: one pending member is required.
    let mut g3 = g.clone();
    g3.policy = SchedulingPolicy::Gang { min_count: 3 };
    let d = placed(place(&c, &g3, &all, &claims));
    assert_eq!(d.bindings.len(), 2);
    assert!(d.group_claims.is_empty());
    // minCount 2 (met by the running members): the pending two are placed
    // opportunistically.
    let d = placed(place(&c, &g, &all, &claims));
    assert_eq!(d.bindings.len(), 2);
    assert!(d.group_claims.is_empty());
}

/// A PodGroup claim binds only the members that name it (KEP-5729: a pod uses a group
/// claim by naming it with the same name and source) and is allocated with the first
/// of them that is bound. Here only `p0` names the group's `fabric` claim and cannot be
/// placed (8 GPUs, no node has them); `p1` does not name it and fits, which is enough
/// for `minCount` 1. The decision binds `p1` alone and leaves the claim unallocated
/// (for `p0` to allocate when it is scheduled), and the validator accepts it.
#[test]
fn a_group_claim_only_unplaced_members_name_is_left_for_them() {
    let mut c = cluster(&[("n1", "r1", 4)]);
    add_fabric(&mut c, NodeAccess::AllNodes);
    let (mut g, mut pods, mut claims) = fabric_gang(1, 2, 2);
    g.policy = SchedulingPolicy::Gang { min_count: 1 };
    // p0 wants 8 GPUs and names the group claim; p1 does not name it.
    claims[0] = gpu_claim("p0-gpus", 8);
    pods[1].resource_claims.retain(|c| c.name != "fabric");
    for policy in policies() {
        // `place_with` validates the decision.
        let d = placed(place_with(&c, &g, &pods, &claims, policy.clone()));
        assert_eq!(assignment(&d).len(), 1, "{}: {d:#?}", policy.name());
        assert_eq!(node_of(&d, "p1"), "n1");
        assert!(d.group_claims.is_empty(), "{}: {d:#?}", policy.name());
    }
    let d = placed(place(&c, &g, &pods, &claims));
    // Committing it leaves the fabric device free.
    c.apply_decision(&d, &pods).unwrap();
    assert!(
        c.allocations(&DeviceRef::new(FABRIC_DRIVER, "fabric", "switch-0"))
            .is_empty()
    );
    // Once p0's claim fits (p1 running), p0 is placed with the group claim.
    let mut later = pods.clone();
    later[1].node_name = Some("n1".into());
    claims[0] = gpu_claim("p0-gpus", 2);
    let d2 = placed(place(&c, &g, &later, &claims));
    assert_eq!(node_of(&d2, "p0"), "n1");
    assert_eq!(d2.group_claims.len(), 1, "{d2:#?}");
    assert_eq!(d2.group_claims[0].claim, "ns/fabric");
}

/// The same rule for a group claim allocated already (`status.allocation`) on a device
/// with an untolerated `NoExecute` taint: members that name it may not reserve it
/// (they would be evicted), members that do not name it are not bound by it. `p0`
/// names it and is not placed; `p1` does not and is placed, which is valid.
#[test]
fn a_tainted_group_claim_binds_only_the_members_that_name_it() {
    let mut c = cluster(&[("n1", "r1", 4)]);
    add_fabric(&mut c, NodeAccess::AllNodes);
    let (mut g, mut pods, mut claims) = fabric_gang(1, 2, 2);
    g.policy = SchedulingPolicy::Gang { min_count: 1 };
    // Allocate the group claim with p0 first, as if it ran and finished.
    let first = placed(place(&c, &g, &pods[..1], &claims));
    assert_eq!(first.group_claims.len(), 1, "{first:#?}");
    c.apply_decision(
        &PlacementDecision {
            bindings: vec![],
            group_claims: first.group_claims.clone(),
        },
        &[],
    )
    .unwrap();
    claims[2].allocation = Some(first.group_claims[0].result.clone());
    let switch = DeviceRef::new(FABRIC_DRIVER, "fabric", "switch-0");
    c.taint_device(&switch, taint("xid", "79", DeviceTaintEffect::NoExecute, 1))
        .unwrap();
    pods[1].resource_claims.retain(|c| c.name != "fabric");
    // `place` validates the decision.
    let d = placed(place(&c, &g, &pods, &claims));
    assert_eq!(assignment(&d).len(), 1, "{d:#?}");
    assert_eq!(node_of(&d, "p1"), "n1");
    assert!(d.group_claims.is_empty());
    // p0 alone cannot reserve it.
    let mut alone = g.clone();
    alone.policy = SchedulingPolicy::Gang { min_count: 2 };
    assert!(matches!(
        place(&c, &alone, &pods, &claims),
        GangOutcome::Unschedulable { .. }
    ));
}
