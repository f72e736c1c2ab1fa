#![cfg(not(target_arch = "wasm32"))]
//! The placement validator: decisions built with the allocator validate cleanly, and
//! breaking one invariant at a time is reported as that specific violation.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{DRIVER, dref, taint};
use gangpack::{
    AllocationMode, AllocationOutcome, AllocatorOptions, ClaimAllocation, ClaimSource, Cluster,
    ConstraintKind, CounterSet, Device, DeviceAllocation, DeviceAttribute, DeviceClass,
    DeviceConstraint, DeviceCounterConsumption, DeviceRef, DeviceRequest, DeviceRequestKind,
    DeviceSelector, DeviceSubRequest, DeviceTaintEffect, DeviceToleration,
    DeviceTolerationOperator, ExactDeviceRequest, Holder, Node, NodeAccess, NodeSelector,
    NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm, PlacementDecision, Pod,
    PodBinding, PodGroup, PodGroupResourceClaim, PodResourceClaim, Quantity, ResourceClaim,
    ResourcePool, ResourceSlice, SchedulingPolicy, SliceNodeSelection, Taint, TaintEffect,
    Toleration, TolerationOperator, TopologyConstraint, Violation, validate_placement,
};

const CLASS: &str = "gpu.example.com";
const NIC: &str = "nic.example.com";

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

fn node(name: &str, rack: &str) -> Node {
    Node::new(name)
        .with_label("rack", rack)
        .with_allocatable("cpu", Quantity::from_int(8))
        .with_allocatable("pods", Quantity::from_int(110))
}

/// `n1`, `n2` in rack `r1`, `n3` in rack `r2`; each with four GPUs (`numa` 0, 0, 1, 1)
/// and 8 cpus; a class per driver.
fn cluster() -> Cluster {
    let mut c = Cluster::new();
    for (n, rack) in [("n1", "r1"), ("n2", "r1"), ("n3", "r2")] {
        c.add_node(node(n, rack)).unwrap();
        let mut s = ResourceSlice::node_local(format!("{n}-gpus"), DRIVER, n, n);
        for g in 0..4 {
            s.devices.push(
                Device::new(format!("gpu-{g}"))
                    .with_attribute("numa", DeviceAttribute::Int(g / 2))
                    .with_attribute("productName", DeviceAttribute::String("H100".into()))
                    .with_capacity("memory", q("80Gi")),
            );
        }
        c.add_slice(s).unwrap();
    }
    c.put_class(DeviceClass::with_cel(
        CLASS,
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c.put_class(DeviceClass::with_cel(
        NIC,
        format!("device.driver == \"{NIC}\""),
    ))
    .unwrap();
    c
}

fn gang(min_count: u32) -> PodGroup {
    let mut g = PodGroup::new("ns", "train", SchedulingPolicy::Gang { min_count });
    g.topology.push(TopologyConstraint::new("rack"));
    g
}

/// Worker `w<i>` of group `train`: 2 cpus and claim `w<i>-gpus`.
fn worker(i: usize) -> Pod {
    let mut p = Pod::new("ns", format!("w{i}"));
    p.scheduling_group = Some("train".into());
    p.requests.insert("cpu".into(), Quantity::from_int(2));
    p.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName(format!("w{i}-gpus")),
    });
    p
}

fn gpu_request(name: &str, count: u32) -> DeviceRequest {
    DeviceRequest::exactly(
        name,
        ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(count)),
    )
}

fn gpu_claim(name: &str, count: u32) -> ResourceClaim {
    let mut c = ResourceClaim::new("ns", name);
    c.spec.requests.push(gpu_request("gpus", count));
    c
}

fn workers(n: usize) -> (Vec<Pod>, Vec<ResourceClaim>) {
    (
        (0..n).map(worker).collect(),
        (0..n)
            .map(|i| gpu_claim(&format!("w{i}-gpus"), 2))
            .collect(),
    )
}

fn claim_key(c: &ResourceClaim) -> String {
    format!("{}/{}", c.namespace, c.name)
}

/// A valid decision built with the allocator: pods placed in `plan` order on a scratch
/// copy of the cluster, each pod's unallocated claims (and, with the first pod, the
/// group's) allocated on its node, committed and its resources reserved.
fn try_place(
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &[ResourceClaim],
    plan: &[(usize, &str)],
) -> Option<PlacementDecision> {
    let mut scratch = cluster.clone();
    let by_key: BTreeMap<String, &ResourceClaim> =
        claims.iter().map(|c| (claim_key(c), c)).collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut decision = PlacementDecision::default();
    for (step, &(i, node)) in plan.iter().enumerate() {
        let pod = &pods[i];
        let mut batch: Vec<(ResourceClaim, bool)> = Vec::new();
        if step == 0
            && let Some(g) = group
        {
            for gc in &g.resource_claims {
                if let ClaimSource::ClaimName(n) = &gc.source {
                    let k = format!("{}/{n}", g.namespace);
                    done.insert(k.clone());
                    batch.push(((*by_key[&k]).clone(), true));
                }
            }
        }
        for prc in &pod.resource_claims {
            if group.is_some_and(|g| g.group_claim_for(prc).is_some()) {
                continue;
            }
            if let ClaimSource::ClaimName(n) = &prc.source {
                let k = format!("{}/{n}", pod.namespace);
                if done.insert(k.clone()) {
                    batch.push(((*by_key[&k]).clone(), false));
                }
            }
        }
        let mut requests = pod.requests.clone();
        requests.insert("pods".into(), Quantity::from_int(1));
        let just_claims: Vec<ResourceClaim> = batch.iter().map(|(c, _)| c.clone()).collect();
        let out = scratch
            .allocate_claims(node, &just_claims, &requests, &AllocatorOptions::default())
            .unwrap();
        let AllocationOutcome::Allocated(results) = out else {
            return None;
        };
        let mut binding = PodBinding {
            pod: format!("{}/{}", pod.namespace, pod.name),
            node: node.into(),
            claims: Vec::new(),
        };
        for ((c, is_group), result) in batch.into_iter().zip(results) {
            scratch.commit_allocation(&claim_key(&c), &result).unwrap();
            let ca = ClaimAllocation {
                claim: claim_key(&c),
                result,
            };
            if is_group {
                decision.group_claims.push(ca);
            } else {
                binding.claims.push(ca);
            }
        }
        scratch
            .reserve_node_resources(node, &binding.pod, requests)
            .ok()?;
        decision.bindings.push(binding);
    }
    Some(decision)
}

fn place(
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &[ResourceClaim],
    plan: &[(usize, &str)],
) -> PlacementDecision {
    try_place(cluster, group, pods, claims, plan)
        .unwrap_or_else(|| panic!("the allocator cannot place {plan:?}"))
}

/// Commits every allocation of a decision into `cluster`.
fn commit(cluster: &mut Cluster, decision: &PlacementDecision) {
    let all = decision
        .group_claims
        .iter()
        .chain(decision.bindings.iter().flat_map(|b| &b.claims));
    for ca in all {
        cluster.commit_allocation(&ca.claim, &ca.result).unwrap();
    }
}

fn tolerate(key: &str) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::Exists,
        value: String::new(),
        effect: None,
        toleration_seconds: None,
    }
}

fn gpu(node: &str, g: usize) -> DeviceRef {
    dref(node, &format!("gpu-{g}"))
}

/// Asserts `found` has exactly one violation and it matches `pattern`.
macro_rules! assert_only {
    ($found:expr, $pattern:pat $(if $guard:expr)? $(,)?) => {{
        let found = $found;
        assert!(
            found.len() == 1 && matches!(&found[0], $pattern $(if $guard)?),
            "expected only {}, got {found:#?}",
            stringify!($pattern)
        );
    }};
}

/// Asserts some violation in `found` matches `pattern`.
macro_rules! assert_has {
    ($found:expr, $pattern:pat $(if $guard:expr)? $(,)?) => {{
        let found = &$found;
        assert!(
            found.iter().any(|v| matches!(v, $pattern $(if $guard)?)),
            "expected {}, got {found:#?}",
            stringify!($pattern)
        );
    }};
}

// ---------------------------------------------------------------------------------------------
// Valid decisions
// ---------------------------------------------------------------------------------------------

#[test]
fn allocator_decisions_validate_cleanly() {
    let c = cluster();
    let g = gang(2);
    let (pods, claims) = workers(3);
    for plan in [
        vec![(0, "n1"), (1, "n2")],
        vec![(0, "n1"), (1, "n1")],
        vec![(0, "n1"), (1, "n2"), (2, "n1")],
        vec![(0, "n3"), (1, "n3")],
    ] {
        let d = place(&c, Some(&g), &pods, &claims, &plan);
        assert_eq!(
            validate_placement(&c, Some(&g), &pods, &claims, &d),
            vec![],
            "{plan:?}"
        );
    }
    // Nothing placed is valid too (the gang waits).
    let empty = PlacementDecision::default();
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &empty).is_empty());
}

#[test]
fn every_feasible_plan_validates_cleanly() {
    let c = cluster();
    let g = gang(3);
    let (pods, mut claims) = workers(3);
    // Two NUMA-aligned GPUs for w0, one for w1, three for w2.
    claims[0].spec.constraints.push(DeviceConstraint {
        requests: vec![],
        kind: ConstraintKind::MatchAttribute(format!("{DRIVER}/numa")),
    });
    exact_mut(&mut claims[1].spec.requests[0]).allocation_mode = AllocationMode::ExactCount(1);
    exact_mut(&mut claims[2].spec.requests[0]).allocation_mode = AllocationMode::ExactCount(3);
    let nodes = ["n1", "n2", "n3"];
    let mut feasible = 0;
    for a in nodes {
        for b in nodes {
            for d in nodes {
                let plan = [(0, a), (1, b), (2, d)];
                let Some(decision) = try_place(&c, Some(&g), &pods, &claims, &plan) else {
                    continue;
                };
                feasible += 1;
                let found = validate_placement(&c, Some(&g), &pods, &claims, &decision);
                let split = [a, b, d].contains(&"n3") && [a, b, d].iter().any(|n| *n != "n3");
                if split {
                    assert_only!(found, Violation::TopologySplit { .. });
                } else {
                    assert!(found.is_empty(), "{plan:?}: {found:#?}");
                }
            }
        }
    }
    // Only the plans putting w0 and w2 (5 GPUs) on one node fail.
    assert_eq!(feasible, 18);
}

#[test]
fn running_members_count_toward_min_count_and_topology() {
    let c = cluster();
    let g = gang(2);
    let (mut pods, claims) = workers(2);
    // w1 already runs on n2 with its claim allocated.
    let running = place(&c, Some(&g), &pods, &claims, &[(1, "n2")]);
    let mut c2 = c.clone();
    commit(&mut c2, &running);
    pods[1].node_name = Some("n2".into());
    let d = place(&c2, Some(&g), &pods, &claims, &[(0, "n1")]);
    assert_eq!(
        validate_placement(&c2, Some(&g), &pods, &claims, &d),
        vec![]
    );
    // Listing the running pod again on its own node changes nothing.
    let mut again = d.clone();
    again.bindings.push(PodBinding {
        pod: "ns/w1".into(),
        node: "n2".into(),
        claims: vec![],
    });
    assert_eq!(
        validate_placement(&c2, Some(&g), &pods, &claims, &again),
        vec![]
    );
    // w0 in another rack than the running w1.
    let split = place(&c2, Some(&g), &pods, &claims, &[(0, "n3")]);
    assert_eq!(
        validate_placement(&c2, Some(&g), &pods, &claims, &split),
        vec![Violation::TopologySplit {
            key: "rack".into(),
            values: vec!["r1".into(), "r2".into()],
        }]
    );
    // Moving the running pod is refused.
    let mut moved = d;
    moved.bindings.push(PodBinding {
        pod: "ns/w1".into(),
        node: "n1".into(),
        claims: vec![],
    });
    assert_has!(
        validate_placement(&c2, Some(&g), &pods, &claims, &moved),
        Violation::AlreadyBound { pod, bound_to, node }
            if pod == "ns/w1" && bound_to == "n2" && node == "n1"
    );
}

// ---------------------------------------------------------------------------------------------
// Gang and nodes
// ---------------------------------------------------------------------------------------------

#[test]
fn gang_membership_and_min_count() {
    let c = cluster();
    let g = gang(2);
    let (pods, claims) = workers(2);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n2")]);

    let mut below = d.clone();
    below.bindings.pop();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &below),
        vec![Violation::BelowMinCount {
            group: "ns/train".into(),
            bound: 1,
            min_count: 2,
        }]
    );
    // Basic scheduling has no minimum.
    let mut basic = g.clone();
    basic.policy = SchedulingPolicy::Basic;
    assert!(validate_placement(&c, Some(&basic), &pods, &claims, &below).is_empty());

    let mut twice = d.clone();
    let mut again = twice.bindings[0].clone();
    again.claims.clear();
    twice.bindings.push(again);
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &claims, &twice),
        Violation::PodBoundTwice { .. }
    );

    let mut unknown = d.clone();
    unknown.bindings[1].pod = "ns/ghost".into();
    let found = validate_placement(&c, Some(&g), &pods, &claims, &unknown);
    assert_has!(found, Violation::UnknownPod { pod } if pod == "ns/ghost");
    // w1's claim is now allocated in a binding nobody references.
    assert_has!(found, Violation::UnexpectedAllocation { claim, holder: Holder::Pod(p) }
        if claim == "ns/w1-gpus" && p == "ns/ghost");
    assert_has!(found, Violation::BelowMinCount { bound: 1, .. });

    let mut stranger = pods.clone();
    stranger[1].scheduling_group = Some("other".into());
    let found = validate_placement(&c, Some(&g), &stranger, &claims, &d);
    assert_has!(found, Violation::NotInGroup { pod, group } if pod == "ns/w1" && group == "ns/train");
    // A stranger does not count toward the gang.
    assert_has!(found, Violation::BelowMinCount { bound: 1, .. });
    assert_eq!(found.len(), 2, "{found:#?}");
}

#[test]
fn topology_label_missing() {
    let mut c = cluster();
    c.add_node(
        Node::new("n4")
            .with_allocatable("cpu", Quantity::from_int(8))
            .with_allocatable("pods", Quantity::from_int(110)),
    )
    .unwrap();
    let g = gang(2);
    let pods: Vec<Pod> = (0..2)
        .map(|i| {
            let mut p = Pod::new("ns", format!("w{i}"));
            p.scheduling_group = Some("train".into());
            p
        })
        .collect();
    let d = PlacementDecision {
        bindings: vec![
            PodBinding {
                pod: "ns/w0".into(),
                node: "n1".into(),
                claims: vec![],
            },
            PodBinding {
                pod: "ns/w1".into(),
                node: "n4".into(),
                claims: vec![],
            },
        ],
        group_claims: vec![],
    };
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &[], &d),
        vec![Violation::TopologyLabelMissing {
            pod: "ns/w1".into(),
            node: "n4".into(),
            key: "rack".into(),
        }]
    );
}

#[test]
fn node_existence_schedulability_affinity_and_taints() {
    let c = cluster();
    let g = gang(2);
    let (pods, claims) = workers(2);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n2")]);

    let mut nowhere = d.clone();
    nowhere.bindings[1].node = "n9".into();
    let found = validate_placement(&c, Some(&g), &pods, &claims, &nowhere);
    assert_has!(found, Violation::UnknownNode { pod, node } if pod == "ns/w1" && node == "n9");

    let mut cordoned = c.clone();
    let mut n2 = cordoned.node("n2").unwrap().clone();
    n2.unschedulable = true;
    cordoned.replace_node(n2).unwrap();
    assert_only!(
        validate_placement(&cordoned, Some(&g), &pods, &claims, &d),
        Violation::NodeUnschedulable { pod, node } if pod == "ns/w1" && node == "n2"
    );

    let mut picky = pods.clone();
    picky[0].node_selector.insert("gpu".into(), "a100".into());
    assert_only!(
        validate_placement(&c, Some(&g), &picky, &claims, &d),
        Violation::NodeAffinityMismatch { pod, node } if pod == "ns/w0" && node == "n1"
    );
    let mut affinity = pods.clone();
    affinity[1].required_node_affinity = Some(NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement::new(
                "rack",
                NodeSelectorOperator::In,
                ["r2"],
            )],
            match_fields: vec![],
        }],
    });
    assert_only!(
        validate_placement(&c, Some(&g), &affinity, &claims, &d),
        Violation::NodeAffinityMismatch { pod, .. } if pod == "ns/w1"
    );

    let mut tainted = c.clone();
    let t = Taint::new("maintenance", "", TaintEffect::NoSchedule);
    tainted.taint_node("n1", t.clone()).unwrap();
    tainted
        .taint_node("n1", Taint::new("slow", "", TaintEffect::PreferNoSchedule))
        .unwrap();
    assert_eq!(
        validate_placement(&tainted, Some(&g), &pods, &claims, &d),
        vec![Violation::NodeTaintNotTolerated {
            pod: "ns/w0".into(),
            node: "n1".into(),
            taint: t,
        }]
    );
    let mut tolerant = pods.clone();
    tolerant[0].tolerations.push(Toleration {
        key: "maintenance".into(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: None,
        toleration_seconds: None,
    });
    assert!(validate_placement(&tainted, Some(&g), &tolerant, &claims, &d).is_empty());
}

#[test]
fn node_scalar_resources() {
    let c = cluster();
    let pod = |name: &str, cpu: i64| {
        let mut p = Pod::new("ns", name);
        p.requests.insert("cpu".into(), Quantity::from_int(cpu));
        p
    };
    let pods = vec![pod("a", 5), pod("b", 3), pod("c", 1)];
    let bind = |plan: &[(&str, &str)]| PlacementDecision {
        bindings: plan
            .iter()
            .map(|(p, n)| PodBinding {
                pod: format!("ns/{p}"),
                node: (*n).into(),
                claims: vec![],
            })
            .collect(),
        group_claims: vec![],
    };
    assert!(
        validate_placement(&c, None, &pods, &[], &bind(&[("a", "n1"), ("b", "n1")])).is_empty()
    );
    assert_eq!(
        validate_placement(
            &c,
            None,
            &pods,
            &[],
            &bind(&[("a", "n1"), ("b", "n1"), ("c", "n1")])
        ),
        vec![Violation::NodeResourcesExceeded {
            node: "n1".into(),
            resource: "cpu".into(),
            requested: Quantity::from_int(9),
            available: Quantity::from_int(8),
        }]
    );
    // Reservations already on the node count.
    let mut busy = c.clone();
    busy.reserve_node_resources(
        "n2",
        "ns/old",
        [("cpu".to_string(), Quantity::from_int(4))].into(),
    )
    .unwrap();
    assert_only!(
        validate_placement(&busy, None, &pods, &[], &bind(&[("a", "n2")])),
        Violation::NodeResourcesExceeded { node, requested, available, .. }
            if node == "n2" && *requested == Quantity::from_int(5) && *available == Quantity::from_int(4)
    );
    // One pod slot: `pods` is counted because the node advertises it.
    let mut small = c.clone();
    small
        .replace_node(node("n3", "r2").with_allocatable("pods", Quantity::from_int(1)))
        .unwrap();
    assert_only!(
        validate_placement(&small, None, &pods, &[], &bind(&[("b", "n3"), ("c", "n3")])),
        Violation::NodeResourcesExceeded { resource, .. } if resource == "pods"
    );
    // A resource the node does not have.
    let mut gpu_pod = pods.clone();
    gpu_pod[2]
        .requests
        .insert("nvidia.com/gpu".into(), Quantity::from_int(1));
    assert_only!(
        validate_placement(&c, None, &gpu_pod, &[], &bind(&[("c", "n1")])),
        Violation::NodeResourcesExceeded { resource, available, .. }
            if resource == "nvidia.com/gpu" && available.is_zero()
    );
}

// ---------------------------------------------------------------------------------------------
// Claims and devices
// ---------------------------------------------------------------------------------------------

#[test]
fn claim_presence_and_placement() {
    let c = cluster();
    let g = gang(2);
    let (pods, claims) = workers(2);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n2")]);

    let mut missing = d.clone();
    missing.bindings[0].claims.clear();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &missing),
        vec![Violation::MissingAllocation {
            claim: "ns/w0-gpus".into()
        }]
    );

    let mut duplicate = d.clone();
    let copy = duplicate.bindings[0].claims[0].clone();
    duplicate.bindings[0].claims.push(copy);
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &claims, &duplicate),
        Violation::DuplicateAllocation { claim, count: 2 } if claim == "ns/w0-gpus"
    );

    assert_has!(
        validate_placement(&c, Some(&g), &pods, &claims[1..], &d),
        Violation::ClaimNotProvided { referrer: Holder::Pod(p), claim }
            if p == "ns/w0" && claim == "ns/w0-gpus"
    );
    assert_has!(
        validate_placement(&c, Some(&g), &pods, &claims[1..], &d),
        Violation::UnknownClaim { claim } if claim == "ns/w0-gpus"
    );

    // w1's claim in w0's binding.
    let mut misplaced = d.clone();
    let moved = misplaced.bindings[1].claims.pop().unwrap();
    misplaced.bindings[0].claims.push(moved);
    let found = validate_placement(&c, Some(&g), &pods, &claims, &misplaced);
    assert_has!(found, Violation::MisplacedAllocation { claim, holder: Holder::Pod(p) }
        if claim == "ns/w1-gpus" && p == "ns/w0");

    // Already allocated in the cluster: no allocation expected, and none allowed.
    let mut committed = c.clone();
    commit(&mut committed, &d);
    let found = validate_placement(&committed, Some(&g), &pods, &claims, &d);
    assert_has!(found, Violation::AlreadyAllocated { claim } if claim == "ns/w0-gpus");
    let mut without = d.clone();
    for b in &mut without.bindings {
        b.claims.clear();
    }
    assert!(validate_placement(&committed, Some(&g), &pods, &claims, &without).is_empty());
    // ... but its devices must still be reachable from the pod's node.
    let mut swapped = without.clone();
    swapped.bindings[0].node = "n2".into();
    swapped.bindings[1].node = "n1".into();
    let found = validate_placement(&committed, Some(&g), &pods, &claims, &swapped);
    assert_eq!(found.len(), 4, "{found:#?}");
    assert_has!(found, Violation::DeviceUnreachable { claim, node, .. }
        if claim == "ns/w0-gpus" && node == "n2");
}

#[test]
fn device_level_mutations() {
    let c = cluster();
    let g = gang(2);
    let (pods, claims) = workers(2);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n1")]);
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &d).is_empty());
    let w0_first = d.bindings[0].claims[0].result.devices[0].clone();

    // Double-booked device.
    let mut double = d.clone();
    double.bindings[1].claims[0].result.devices[0].device = w0_first.device.clone();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &double),
        vec![Violation::DeviceAllocatedTwice {
            device: gpu("n1", 0),
            first: "ns/w0-gpus".into(),
            second: "ns/w1-gpus".into(),
        }]
    );

    // Held by a claim committed earlier.
    let mut held = c.clone();
    held.allocate(&gpu("n1", 0), DeviceAllocation::new("ns/other", vec![]))
        .unwrap();
    assert_only!(
        validate_placement(&held, Some(&g), &pods, &claims, &d),
        Violation::DeviceInUse { claim, device, holder }
            if claim == "ns/w0-gpus" && *device == gpu("n1", 0) && holder == "ns/other"
    );
    // Held for admin access only: not in use.
    let mut admin_held = c.clone();
    admin_held
        .allocate(
            &gpu("n1", 0),
            DeviceAllocation::new("ns/mon", vec![]).admin(),
        )
        .unwrap();
    assert!(validate_placement(&admin_held, Some(&g), &pods, &claims, &d).is_empty());

    // Wrong node for node-local devices.
    let mut wrong = d.clone();
    wrong.bindings[0].node = "n2".into();
    let found = validate_placement(&c, Some(&g), &pods, &claims, &wrong);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_has!(found, Violation::AllocationNotForNode { claim, node }
        if claim == "ns/w0-gpus" && node == "n2");
    assert_has!(found, Violation::DeviceUnreachable { device, node, .. }
        if *device == gpu("n1", 0) && node == "n2");

    // Wrong count.
    let mut short = d.clone();
    short.bindings[0].claims[0].result.devices.pop();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &short),
        vec![Violation::WrongDeviceCount {
            claim: "ns/w0-gpus".into(),
            request: "gpus".into(),
            expected: 2,
            actual: 1,
        }]
    );

    // Unknown device and unknown request.
    let mut ghost = d.clone();
    ghost.bindings[0].claims[0].result.devices[1].device = "gpu-9".into();
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &claims, &ghost),
        Violation::UnknownDevice { device, .. } if device.device == "gpu-9"
    );
    let mut renamed = d.clone();
    renamed.bindings[0].claims[0].result.devices[1].request = "nics".into();
    let found = validate_placement(&c, Some(&g), &pods, &claims, &renamed);
    assert_has!(found, Violation::UnknownRequest { request, .. } if request == "nics");
    assert_has!(found, Violation::WrongDeviceCount { actual: 1, .. });

    // Selector not matched (the claim asks for another product).
    let mut picky = claims.clone();
    let e = exact_mut(&mut picky[0].spec.requests[0]);
    e.selectors.push(DeviceSelector {
        cel: format!("device.attributes[\"{DRIVER}\"].productName == \"A100\""),
    });
    let found = validate_placement(&c, Some(&g), &pods, &picky, &d);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_has!(found, Violation::RequestSelectorMismatch { claim, .. } if claim == "ns/w0-gpus");

    // Class selector not matched: the class now wants another driver.
    let mut other_class = c.clone();
    other_class
        .put_class(DeviceClass::with_cel(
            CLASS,
            "device.driver == \"other.example.com\"",
        ))
        .unwrap();
    assert_has!(
        validate_placement(&other_class, Some(&g), &pods, &claims, &d),
        Violation::ClassSelectorMismatch { class, .. } if class == CLASS
    );

    // Admin flag without an admin request.
    let mut admin = d.clone();
    admin.bindings[0].claims[0].result.devices[0].admin_access = true;
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &claims, &admin),
        Violation::AdminAccessMismatch {
            requested: false,
            ..
        }
    );
}

/// The body of an `exactly` request, mutably.
fn exact_mut(r: &mut DeviceRequest) -> &mut ExactDeviceRequest {
    match &mut r.kind {
        DeviceRequestKind::Exactly(e) => e,
        DeviceRequestKind::FirstAvailable(_) => panic!("not an exactly request"),
    }
}

#[test]
fn admin_access_and_pool_state() {
    let mut c = cluster();
    c.allocate(&gpu("n1", 0), DeviceAllocation::new("ns/other", vec![]))
        .unwrap();
    let mut pod = Pod::new("ns", "monitor");
    pod.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName("watch".into()),
    });
    let pods = vec![pod];
    let mut claim = gpu_claim("watch", 2);
    exact_mut(&mut claim.spec.requests[0]).admin_access = true;
    let claims = vec![claim];
    let d = place(&c, None, &pods, &claims, &[(0, "n1")]);
    // Admin access takes the held gpu-0.
    assert_eq!(d.bindings[0].claims[0].result.devices[0].device, "gpu-0");
    assert!(validate_placement(&c, None, &pods, &claims, &d).is_empty());

    let mut repeat = d.clone();
    repeat.bindings[0].claims[0].result.devices[1].device = "gpu-0".into();
    assert_eq!(
        validate_placement(&c, None, &pods, &claims, &repeat),
        vec![Violation::DeviceAllocatedTwice {
            device: gpu("n1", 0),
            first: "ns/watch".into(),
            second: "ns/watch".into(),
        }]
    );
    let mut not_admin = d.clone();
    not_admin.bindings[0].claims[0].result.devices[0].admin_access = false;
    let found = validate_placement(&c, None, &pods, &claims, &not_admin);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_has!(
        found,
        Violation::AdminAccessMismatch {
            requested: true,
            ..
        }
    );
    assert_has!(found, Violation::DeviceInUse { holder, .. } if holder == "ns/other");

    // The pool becomes incomplete (a second slice is announced but missing).
    let mut incomplete = c.clone();
    let mut s = incomplete.slice("n1-gpus").unwrap().clone();
    s.pool.generation += 1;
    s.pool.resource_slice_count = 2;
    incomplete.replace_slice(s).unwrap();
    let found = validate_placement(&incomplete, None, &pods, &claims, &d);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found
            .iter()
            .all(|v| matches!(v, Violation::DeviceNotUsable { .. })),
        "{found:#?}"
    );
}

#[test]
fn device_taints_and_tolerations() {
    let c = cluster();
    let g = gang(2);
    let (pods, mut claims) = workers(2);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n2")]);
    let picked = d.bindings[0].claims[0].result.devices[0].device.clone();
    let mut tainted = c.clone();
    let ecc = taint("ecc", "fatal", DeviceTaintEffect::NoSchedule, 1);
    tainted
        .taint_device(&dref("n1", &picked), ecc.clone())
        .unwrap();
    // `None` taints never matter.
    tainted
        .taint_device(
            &dref("n1", &picked),
            taint("info", "", DeviceTaintEffect::None, 1),
        )
        .unwrap();
    assert_eq!(
        validate_placement(&tainted, Some(&g), &pods, &claims, &d),
        vec![Violation::DeviceTaintNotTolerated {
            claim: "ns/w0-gpus".into(),
            request: "gpus".into(),
            device: dref("n1", &picked),
            taint: ecc,
        }]
    );
    // The request tolerates it, but the results do not carry the toleration.
    exact_mut(&mut claims[0].spec.requests[0])
        .tolerations
        .push(tolerate("ecc"));
    let found = validate_placement(&tainted, Some(&g), &pods, &claims, &d);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found
            .iter()
            .all(|v| matches!(v, Violation::TolerationsMismatch { .. })),
        "{found:#?}"
    );
    let mut copied = d.clone();
    for r in &mut copied.bindings[0].claims[0].result.devices {
        r.tolerations = vec![tolerate("ecc")];
    }
    assert!(validate_placement(&tainted, Some(&g), &pods, &claims, &copied).is_empty());
}

#[test]
fn constraints() {
    let c = cluster();
    let g = gang(1);
    let (pods, mut claims) = workers(1);
    claims[0].spec.constraints.push(DeviceConstraint {
        requests: vec![],
        kind: ConstraintKind::MatchAttribute(format!("{DRIVER}/numa")),
    });
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1")]);
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &d).is_empty());
    let mut split = d.clone();
    split.bindings[0].claims[0].result.devices[1].device = "gpu-2".into();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &split),
        vec![Violation::MatchAttributeViolated {
            claim: "ns/w0-gpus".into(),
            attribute: format!("{DRIVER}/numa"),
            devices: vec![gpu("n1", 0), gpu("n1", 2)],
        }]
    );

    // distinctAttribute: one GPU per NUMA node.
    let mut distinct = claims.clone();
    distinct[0].spec.constraints[0].kind =
        ConstraintKind::DistinctAttribute(format!("{DRIVER}/numa"));
    let d = place(&c, Some(&g), &pods, &distinct, &[(0, "n1")]);
    assert!(validate_placement(&c, Some(&g), &pods, &distinct, &d).is_empty());
    let mut same = d.clone();
    same.bindings[0].claims[0].result.devices[1].device = "gpu-1".into();
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &distinct, &same),
        Violation::DistinctAttributeViolated { first, second, .. }
            if *first == gpu("n1", 0) && *second == gpu("n1", 1)
    );

    // An attribute nobody has.
    let mut absent = claims.clone();
    absent[0].spec.constraints[0].kind = ConstraintKind::MatchAttribute("example.com/rail".into());
    let found = validate_placement(&c, Some(&g), &pods, &absent, &d);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_has!(found, Violation::ConstraintAttributeMissing { attribute, .. }
        if attribute == "example.com/rail");
}

#[test]
fn first_available_and_all() {
    let c = cluster();
    let mut pod = Pod::new("ns", "solo");
    pod.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName("fa".into()),
    });
    pod.resource_claims.push(PodResourceClaim {
        name: "all".into(),
        source: ClaimSource::ClaimName("everything".into()),
    });
    let pods = vec![pod];
    let mut fa = ResourceClaim::new("ns", "fa");
    fa.spec.requests.push(DeviceRequest::first_available(
        "gpu",
        vec![
            DeviceSubRequest::new("big", CLASS).with_mode(AllocationMode::ExactCount(8)),
            DeviceSubRequest::new("small", CLASS).with_mode(AllocationMode::ExactCount(1)),
        ],
    ));
    // `All` of numa 1 (the first-available claim takes a numa 0 GPU).
    let mut all = ResourceClaim::new("ns", "everything");
    let mut req = ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::All);
    req.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].numa == 1".into(),
    });
    all.spec.requests.push(DeviceRequest::exactly("numa1", req));
    let claims = vec![fa, all];
    let d = place(&c, None, &pods, &claims, &[(0, "n1")]);
    assert!(validate_placement(&c, None, &pods, &claims, &d).is_empty());
    let results = &d.bindings[0].claims;
    assert_eq!(results[0].result.devices[0].request, "gpu/small");
    assert_eq!(results[1].result.devices.len(), 2);

    // Two subrequests of one request.
    let mut both = d.clone();
    let mut extra = both.bindings[0].claims[0].result.devices[0].clone();
    extra.request = "gpu/big".into();
    extra.device = "gpu-1".into();
    both.bindings[0].claims[0].result.devices.push(extra);
    let found = validate_placement(&c, None, &pods, &claims, &both);
    assert_has!(found, Violation::ConflictingSubrequests { request, subrequests, .. }
        if request == "gpu" && subrequests.len() == 2);
    assert_has!(found, Violation::WrongDeviceCount { request, expected: 8, actual: 1, .. }
        if request == "gpu/big");

    // The bare request name is not a result reference.
    let mut bare = d.clone();
    bare.bindings[0].claims[0].result.devices[0].request = "gpu".into();
    let found = validate_placement(&c, None, &pods, &claims, &bare);
    assert_has!(found, Violation::UnknownRequest { request, .. } if request == "gpu");
    assert_has!(found, Violation::RequestNotAllocated { request, .. } if request == "gpu");

    // `All` missing a device.
    let mut partial = d.clone();
    partial.bindings[0].claims[1].result.devices.pop();
    assert_only!(
        validate_placement(&c, None, &pods, &claims, &partial),
        Violation::AllModeDeviceMissing { request, device, .. }
            if request == "numa1" && *device == gpu("n1", 3)
    );
}

#[test]
fn group_claims_on_network_attached_devices() {
    let mut c = cluster();
    // One NIC reachable from rack r1.
    let fabric = ResourceSlice {
        name: "fabric".into(),
        driver: NIC.into(),
        pool: ResourcePool::single("fabric"),
        node_selection: SliceNodeSelection::Slice(NodeAccess::NodeSelector(NodeSelector {
            terms: vec![NodeSelectorTerm {
                match_expressions: vec![NodeSelectorRequirement::new(
                    "rack",
                    NodeSelectorOperator::In,
                    ["r1"],
                )],
                match_fields: vec![],
            }],
        })),
        devices: vec![Device::new("nic-0")],
        shared_counters: vec![],
    };
    c.add_slice(fabric).unwrap();
    let mut g = gang(2);
    g.topology.clear();
    g.resource_claims.push(PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("train-fabric".into()),
    });
    let (mut pods, mut claims) = workers(2);
    for p in &mut pods {
        p.resource_claims.push(PodResourceClaim {
            name: "fabric".into(),
            source: ClaimSource::ClaimName("train-fabric".into()),
        });
    }
    let mut nic = ResourceClaim::new("ns", "train-fabric");
    nic.spec
        .requests
        .push(DeviceRequest::exactly("nic", ExactDeviceRequest::new(NIC)));
    claims.push(nic);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n2")]);
    assert_eq!(d.group_claims.len(), 1);
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &d).is_empty());

    let mut missing = d.clone();
    missing.group_claims.clear();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &missing),
        vec![Violation::MissingAllocation {
            claim: "ns/train-fabric".into()
        }]
    );
    let mut in_pod = d.clone();
    let moved = in_pod.group_claims.pop().unwrap();
    in_pod.bindings[0].claims.push(moved);
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &claims, &in_pod),
        Violation::MisplacedAllocation { claim, holder: Holder::Pod(p) }
            if claim == "ns/train-fabric" && p == "ns/w0"
    );
    // A member in rack r2 cannot use the group's NIC.
    let far = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n3")]);
    let found = validate_placement(&c, Some(&g), &pods, &claims, &far);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_has!(found, Violation::DeviceUnreachable { claim, node, .. }
        if claim == "ns/train-fabric" && node == "n3");
    assert_has!(found, Violation::AllocationNotForNode { claim, node }
        if claim == "ns/train-fabric" && node == "n3");
    // Without the group, the pods' reference is an ordinary shared claim, which
    // belongs in the binding of one of its pods.
    assert_only!(
        validate_placement(&c, None, &pods, &claims, &d),
        Violation::MisplacedAllocation { holder: Holder::Group(g), .. } if g.is_empty()
    );
    let mut shared = d.clone();
    let moved = shared.group_claims.pop().unwrap();
    shared.bindings[1].claims.push(moved);
    assert!(validate_placement(&c, None, &pods, &claims, &shared).is_empty());
    // With the group, a group claim nobody references is not allocated (KEP-5729: the
    // scheduler allocates the claims pods use); allocating it anyway is flagged.
    let mut unreferenced = pods.clone();
    for p in &mut unreferenced {
        p.resource_claims.pop();
    }
    assert_only!(
        validate_placement(&c, Some(&g), &unreferenced, &claims, &d),
        Violation::UnexpectedAllocation { claim, holder: Holder::Group(g) }
            if claim == "ns/train-fabric" && g == "ns/train"
    );
    let mut none = d.clone();
    none.group_claims.clear();
    assert!(validate_placement(&c, Some(&g), &unreferenced, &claims, &none).is_empty());
    // Members naming the group's ResourceClaim under another entry name use it as their
    // own: its one allocation belongs in the binding of one of them, not the group's.
    let mut renamed = pods.clone();
    for p in &mut renamed {
        p.resource_claims.last_mut().unwrap().name = "nic".into();
    }
    assert_only!(
        validate_placement(&c, Some(&g), &renamed, &claims, &d),
        Violation::MisplacedAllocation { claim, holder: Holder::Group(_) }
            if claim == "ns/train-fabric"
    );
    assert!(validate_placement(&c, Some(&g), &renamed, &claims, &shared).is_empty());
}

fn shareable_cluster() -> Cluster {
    let mut c = cluster();
    let mut s = ResourceSlice::node_local("n1-vgpus", DRIVER, "n1", "n1-shared");
    let mut d = Device::new("vgpu-0").with_capacity("memory", q("80Gi"));
    d.allow_multiple_allocations = true;
    s.devices.push(d);
    c.add_slice(s).unwrap();
    c
}

#[test]
fn shared_capacity_and_share_ids() {
    let c = shareable_cluster();
    let g = gang(2);
    let (pods, mut claims) = workers(2);
    for cl in &mut claims {
        let e = exact_mut(&mut cl.spec.requests[0]);
        e.allocation_mode = AllocationMode::ExactCount(1);
        e.selectors.push(DeviceSelector {
            cel: "device.allowMultipleAllocations".into(),
        });
        e.capacity.insert("memory".into(), q("30Gi"));
    }
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n1")]);
    let vgpu = DeviceRef::new(DRIVER, "n1-shared", "vgpu-0");
    for b in &d.bindings {
        assert_eq!(b.claims[0].result.devices[0].device, "vgpu-0");
    }
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &d).is_empty());

    // A committed 30Gi share leaves room for one more, not two.
    let mut busy = c.clone();
    let mut share = DeviceAllocation::new("ns/other", vec![]);
    share.share_id = Some("11111111-2222-8333-8444-555555555555".into());
    share.consumed_capacity.insert("memory".into(), q("30Gi"));
    busy.allocate(&vgpu, share).unwrap();
    assert_eq!(
        validate_placement(&busy, Some(&g), &pods, &claims, &d),
        vec![Violation::CapacityExceeded {
            device: vgpu.clone(),
            capacity: "memory".into(),
            committed: q("30Gi"),
            requested: q("60Gi"),
            value: q("80Gi"),
        }]
    );

    let mut no_id = d.clone();
    no_id.bindings[0].claims[0].result.devices[0].share_id = None;
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &claims, &no_id),
        Violation::MissingShareId { .. }
    );
    let mut same_id = d.clone();
    let id = same_id.bindings[0].claims[0].result.devices[0]
        .share_id
        .clone();
    same_id.bindings[1].claims[0].result.devices[0].share_id = id;
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &claims, &same_id),
        Violation::DuplicateShareId { .. }
    );
    let mut greedy = d.clone();
    greedy.bindings[0].claims[0].result.devices[0]
        .consumed_capacity
        .insert("memory".into(), q("60Gi"));
    let found = validate_placement(&c, Some(&g), &pods, &claims, &greedy);
    assert_eq!(
        found,
        vec![
            Violation::ConsumedCapacityMismatch {
                claim: "ns/w0-gpus".into(),
                device: vgpu.clone(),
                capacity: "memory".into(),
                expected: Some(q("30Gi")),
                actual: Some(q("60Gi")),
            },
            Violation::CapacityExceeded {
                device: vgpu.clone(),
                capacity: "memory".into(),
                committed: Quantity::ZERO,
                requested: q("90Gi"),
                value: q("80Gi"),
            },
        ]
    );
    // An exclusive device with a share.
    let mut exclusive_share = place(&c, Some(&g), &pods, &workers(2).1, &[(0, "n1"), (1, "n1")]);
    exclusive_share.bindings[0].claims[0].result.devices[0].share_id = Some("x".into());
    assert_only!(
        validate_placement(&c, Some(&g), &pods, &workers(2).1, &exclusive_share),
        Violation::UnexpectedShare { .. }
    );
}

#[test]
fn all_mode_sees_the_shares_of_earlier_pods() {
    let mut c = shareable_cluster();
    let mut s = c.slice("n1-vgpus").unwrap().clone();
    let mut second = s.devices[0].clone();
    second.name = "vgpu-1".into();
    s.devices.push(second);
    c.replace_slice(s).unwrap();
    let (pods, mut claims) = workers(2);
    let shares = |e: &mut ExactDeviceRequest, amount: &str| {
        e.selectors.push(DeviceSelector {
            cel: "device.allowMultipleAllocations".into(),
        });
        e.capacity.insert("memory".into(), q(amount));
    };
    let first = exact_mut(&mut claims[0].spec.requests[0]);
    first.allocation_mode = AllocationMode::ExactCount(1);
    shares(first, "50Gi");
    let all = exact_mut(&mut claims[1].spec.requests[0]);
    all.allocation_mode = AllocationMode::All;
    shares(all, "40Gi");
    // Upstream v0.37 (the differential's seed 224): vgpu-0, where w0's share leaves
    // only 30Gi, is still one of "all" (its capacity could serve 40Gi), so w1's
    // `All` cannot be allocated after w0.
    assert!(try_place(&c, None, &pods, &claims, &[(0, "n1"), (1, "n1")]).is_none());
    // Alone, w1's `All` takes both; a decision that leaves vgpu-0 out is refused
    // even next to w0's share.
    let d = place(&c, None, &pods, &claims, &[(1, "n1")]);
    let all_devices: Vec<&str> = d.bindings[0].claims[0]
        .result
        .devices
        .iter()
        .map(|r| r.device.as_str())
        .collect();
    assert_eq!(all_devices, ["vgpu-0", "vgpu-1"]);
    let mut partial = d.clone();
    partial.bindings[0].claims[0].result.devices.remove(0);
    assert_only!(
        validate_placement(&c, None, &pods, &claims, &partial),
        Violation::AllModeDeviceMissing { device, .. } if device.device == "vgpu-0"
    );
}

#[cfg(feature = "serde")]
#[test]
fn decisions_and_violations_round_trip_through_json() {
    let c = cluster();
    let g = gang(2);
    let (pods, claims) = workers(2);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n2")]);
    let text = serde_json::to_string(&d).unwrap();
    assert!(text.contains("\"groupClaims\""), "{text}");
    let back: PlacementDecision = serde_json::from_str(&text).unwrap();
    assert_eq!(back, d);
    let v = Violation::MisplacedAllocation {
        claim: "ns/x".into(),
        holder: Holder::Pod("ns/w0".into()),
    };
    let back: Violation = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
    assert_eq!(back, v);
}

#[test]
fn shared_counters() {
    let mut c = cluster();
    let mut counters = ResourceSlice::node_local("n1-counters", DRIVER, "n1", "n1-parts");
    counters.pool.resource_slice_count = 2;
    counters.shared_counters.push(CounterSet {
        name: "gpu-0".into(),
        counters: [("memory".to_string(), q("80Gi"))].into(),
    });
    let mut parts = ResourceSlice::node_local("n1-parts", DRIVER, "n1", "n1-parts");
    parts.pool.resource_slice_count = 2;
    for (name, mem) in [("full", "80Gi"), ("half-a", "40Gi"), ("half-b", "40Gi")] {
        let mut d = Device::new(name).with_attribute("part", DeviceAttribute::Bool(true));
        d.consumes_counters.push(DeviceCounterConsumption {
            counter_set: "gpu-0".into(),
            counters: [("memory".to_string(), q(mem))].into(),
        });
        parts.devices.push(d);
    }
    c.add_slice(counters).unwrap();
    c.add_slice(parts).unwrap();
    let g = gang(2);
    let (pods, mut claims) = workers(2);
    for cl in &mut claims {
        let e = exact_mut(&mut cl.spec.requests[0]);
        e.allocation_mode = AllocationMode::ExactCount(1);
        e.selectors.push(DeviceSelector {
            cel: "has(device.attributes[\"gpu.example.com\"].part) && device.attributes[\"gpu.example.com\"].part".into(),
        });
    }
    // w0 takes the full GPU; w1 has nothing left.
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1")]);
    assert_eq!(d.bindings[0].claims[0].result.devices[0].device, "full");
    let mut g1 = g.clone();
    g1.policy = SchedulingPolicy::Gang { min_count: 1 };
    assert!(validate_placement(&c, Some(&g1), &pods, &claims, &d).is_empty());
    // Two halves fit.
    let mut halves = d.clone();
    halves.bindings[0].claims[0].result.devices[0].device = "half-a".into();
    let mut w1 = halves.bindings[0].clone();
    w1.pod = "ns/w1".into();
    w1.claims[0].claim = "ns/w1-gpus".into();
    w1.claims[0].result.devices[0].device = "half-b".into();
    halves.bindings.push(w1);
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &halves).is_empty());
    // The full GPU and a half do not.
    let mut over = halves.clone();
    over.bindings[1].claims[0].result.devices[0].device = "full".into();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &over),
        vec![Violation::CountersExceeded {
            driver: DRIVER.into(),
            pool: "n1-parts".into(),
            counter_set: "gpu-0".into(),
            counter: "memory".into(),
            needed: q("120Gi"),
            available: q("80Gi"),
        }]
    );
    // A half committed before: the other half fits, the full GPU does not.
    let mut busy = c.clone();
    busy.allocate(
        &DeviceRef::new(DRIVER, "n1-parts", "half-a"),
        DeviceAllocation::new("ns/other", vec![]),
    )
    .unwrap();
    assert_only!(
        validate_placement(&busy, Some(&g1), &pods, &claims, &d),
        Violation::CountersExceeded { needed, available, .. }
            if *needed == q("80Gi") && *available == q("40Gi")
    );
}

#[test]
fn violations_display_what_and_where() {
    let v = Violation::DeviceAllocatedTwice {
        device: gpu("n1", 0),
        first: "ns/a".into(),
        second: "ns/b".into(),
    };
    assert_eq!(
        v.to_string(),
        "device gpu.example.com/n1/gpu-0 is allocated to both ns/a and ns/b"
    );
    let v = Violation::NodeResourcesExceeded {
        node: "n1".into(),
        resource: "cpu".into(),
        requested: Quantity::from_int(9),
        available: Quantity::from_int(8),
    };
    assert_eq!(v.to_string(), "node n1: cpu: 9 requested, 8 free");
    let v = Violation::ClaimNotProvided {
        referrer: Holder::Group("ns/train".into()),
        claim: "ns/x".into(),
    };
    assert_eq!(
        v.to_string(),
        "pod group ns/train references claim ns/x, which was not given"
    );
}

#[test]
fn new_pods_may_not_reserve_a_claim_with_an_untolerated_no_execute_device() {
    let c = cluster();
    let g = gang(2);
    let (pods, mut claims) = workers(2);
    let d = place(&c, Some(&g), &pods, &claims, &[(0, "n1"), (1, "n2")]);
    // The claims are allocated already (status.allocation), the pods pending: the
    // decision binds them without allocating.
    let mut committed = c.clone();
    commit(&mut committed, &d);
    for (claim, b) in claims.iter_mut().zip(&d.bindings) {
        claim.allocation = Some(b.claims[0].result.clone());
    }
    let mut without = d.clone();
    for b in &mut without.bindings {
        b.claims.clear();
    }
    assert!(validate_placement(&committed, Some(&g), &pods, &claims, &without).is_empty());
    let picked = d.bindings[0].claims[0].result.devices[0].device.clone();
    let xid = taint("xid", "79", DeviceTaintEffect::NoExecute, 1);
    committed
        .taint_device(&dref("n1", &picked), xid.clone())
        .unwrap();
    let found = validate_placement(&committed, Some(&g), &pods, &claims, &without);
    assert_eq!(
        found,
        vec![Violation::ReservesTaintedClaim {
            claim: "ns/w0-gpus".into(),
            device: dref("n1", &picked),
            taint: xid,
        }]
    );
    assert!(found[0].to_string().contains("new pods"), "{}", found[0]);
    // Tolerated (for a while) in the allocation: allowed.
    let mut tolerating = claims.clone();
    for r in &mut tolerating[0].allocation.as_mut().unwrap().devices {
        r.tolerations = vec![DeviceToleration {
            toleration_seconds: Some(60),
            ..tolerate("xid")
        }];
    }
    assert!(validate_placement(&committed, Some(&g), &pods, &tolerating, &without).is_empty());
}

/// A PodGroup claim binds only the members that name it (KEP-5729). It must be
/// allocated when a bound member names it; when only members left unbound name it,
/// the first of them to be scheduled allocates it, and the decision may leave it
/// unallocated. Likewise, an
/// allocated group claim on a `NoExecute`-tainted device is reserved only by the
/// members that name it.
#[test]
fn a_group_claim_binds_only_the_members_that_name_it() {
    let mut c = cluster();
    c.add_slice(ResourceSlice {
        name: "fabric".into(),
        driver: NIC.into(),
        pool: ResourcePool::single("fabric"),
        node_selection: SliceNodeSelection::Slice(NodeAccess::AllNodes),
        devices: vec![Device::new("nic-0")],
        shared_counters: vec![],
    })
    .unwrap();
    let mut g = gang(1);
    g.resource_claims.push(PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("train-fabric".into()),
    });
    let (mut pods, mut claims) = workers(2);
    // Only w0 names the group claim.
    pods[0].resource_claims.push(PodResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("train-fabric".into()),
    });
    let mut nic = ResourceClaim::new("ns", "train-fabric");
    nic.spec
        .requests
        .push(DeviceRequest::exactly("nic", ExactDeviceRequest::new(NIC)));
    claims.push(nic);

    // w1 alone, the group claim allocated with it (eagerly) or not at all: both valid.
    let eager = place(&c, Some(&g), &pods, &claims, &[(1, "n1")]);
    assert_eq!(eager.group_claims.len(), 1);
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &eager).is_empty());
    let mut deferred = eager.clone();
    deferred.group_claims.clear();
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &deferred).is_empty());
    // w0 bound: the claim it names must be allocated.
    let mut w0 = place(&c, Some(&g), &pods, &claims, &[(0, "n1")]);
    assert!(validate_placement(&c, Some(&g), &pods, &claims, &w0).is_empty());
    w0.group_claims.clear();
    assert_eq!(
        validate_placement(&c, Some(&g), &pods, &claims, &w0),
        vec![Violation::MissingAllocation {
            claim: "ns/train-fabric".into()
        }]
    );
    // w0 running (not pending): w1, the pod bound, does not name the claim, so the
    // decision need not allocate it (upstream allocates a claim with a pod that
    // references it).
    let mut running = pods.clone();
    running[0].node_name = Some("n2".into());
    assert!(validate_placement(&c, Some(&g), &running, &claims, &deferred).is_empty());

    // Allocated already, on a NoExecute-tainted NIC.
    let mut committed = c.clone();
    commit(
        &mut committed,
        &PlacementDecision {
            bindings: vec![],
            group_claims: eager.group_claims.clone(),
        },
    );
    claims[2].allocation = Some(eager.group_claims[0].result.clone());
    let nic0 = DeviceRef::new(NIC, "fabric", "nic-0");
    let xid = taint("xid", "79", DeviceTaintEffect::NoExecute, 1);
    committed.taint_device(&nic0, xid.clone()).unwrap();
    assert!(validate_placement(&committed, Some(&g), &pods, &claims, &deferred).is_empty());
    assert_eq!(
        validate_placement(&committed, Some(&g), &pods, &claims, &w0),
        vec![Violation::ReservesTaintedClaim {
            claim: "ns/train-fabric".into(),
            device: nic0,
            taint: xid,
        }]
    );
}

/// Rule names are unique kebab-case spellings of the variants, and `rule()` agrees with
/// `RULES` on a sample of findings; `subjects()` names the objects involved.
#[test]
fn rule_names_are_stable_and_subjects_name_the_objects() {
    let rules: BTreeSet<&str> = Violation::RULES.iter().copied().collect();
    assert_eq!(rules.len(), Violation::RULES.len(), "duplicate rule names");
    for r in Violation::RULES {
        assert!(
            r.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !r.starts_with('-'),
            "{r}"
        );
    }
    let twice = Violation::DeviceAllocatedTwice {
        device: dref("n1", "gpu-0"),
        first: "ml/a".into(),
        second: "ml/b".into(),
    };
    assert_eq!(twice.rule(), "device-allocated-twice");
    assert!(Violation::RULES.contains(&twice.rule()));
    assert_eq!(
        twice.subjects(),
        [
            gangpack::Subject::ResourceClaim("ml/a".into()),
            gangpack::Subject::ResourceClaim("ml/b".into()),
            gangpack::Subject::Device(dref("n1", "gpu-0")),
        ]
    );
    let split = Violation::BelowMinCount {
        group: "ml/g".into(),
        bound: 1,
        min_count: 2,
    };
    assert_eq!(split.rule(), "below-min-count");
    assert_eq!(split.subjects()[0].to_string(), "PodGroup ml/g");
    // A repeated object is listed once.
    let moved = Violation::AlreadyBound {
        pod: "ml/p".into(),
        bound_to: "n1".into(),
        node: "n1".into(),
    };
    assert_eq!(moved.subjects().len(), 2);
}
