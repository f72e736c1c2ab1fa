#![cfg(not(target_arch = "wasm32"))]
//! Scenario tests for gang placement (first version). Every placement is re-checked
//! with the independent validator.

mod common;

use std::collections::BTreeMap;

use common::*;
use gangpack::{
    AllocationMode, ClaimSource, Cluster, Device, DeviceClass, DeviceRequest, DeviceTaintEffect,
    ExactDeviceRequest, GangOptions, GangOutcome, NodeAccess, NodeSelector, NodeSelectorOperator,
    NodeSelectorRequirement, NodeSelectorTerm, PlacementDecision, Pod, PodGroup,
    PodGroupResourceClaim, PodResourceClaim, Quantity, ResourceClaim, ResourceSlice,
    SchedulingPolicy, SliceNodeSelection, TopologyConstraint, validate_placement,
};

const CLASS: &str = "gpu";

fn cluster(nodes: &[(&str, &str, usize)]) -> Cluster {
    rack_cluster(nodes, 32)
}

/// A pod `ns/<name>` in group `g` with its own claim `ns/<name>-gpus` for `n` GPUs.
fn pod_with_gpus(name: &str, n: u32) -> (Pod, ResourceClaim) {
    let mut pod = Pod::new("ns", name);
    pod.scheduling_group = Some("g".into());
    pod.requests.insert("cpu".into(), Quantity::from_int(1));
    let claim_name = format!("{name}-gpus");
    let mut claim = ResourceClaim::new("ns", &claim_name);
    if n > 0 {
        claim.spec.requests.push(DeviceRequest::exactly(
            "gpus",
            ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(n)),
        ));
        pod.resource_claims.push(PodResourceClaim {
            name: "gpus".into(),
            source: ClaimSource::ClaimName(claim_name),
        });
    }
    (pod, claim)
}

fn gang(min: u32) -> PodGroup {
    PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: min })
}

fn place(c: &Cluster, group: &PodGroup, pods: &[Pod], claims: &[ResourceClaim]) -> GangOutcome {
    let out = c
        .place_gang(Some(group), pods, claims, &GangOptions::default())
        .unwrap();
    if let GangOutcome::Placed(d) = &out {
        let v = validate_placement(c, Some(group), pods, claims, d);
        assert!(v.is_empty(), "invalid placement: {v:?}\n{d:?}");
    }
    out
}

fn nodes_of(d: &PlacementDecision) -> Vec<(String, String)> {
    d.bindings
        .iter()
        .map(|b| (b.pod.clone(), b.node.clone()))
        .collect()
}

fn split(v: Vec<(Pod, ResourceClaim)>) -> (Vec<Pod>, Vec<ResourceClaim>) {
    v.into_iter().unzip()
}

#[test]
fn a_gang_that_fits_only_with_backtracking() {
    // n-a has 8 GPUs, n-b has 4. The 4-GPU pod goes first; greedy puts it on n-a and
    // the 8-GPU pod then fits nowhere. Backtracking swaps them.
    let c = cluster(&[("n-a", "r1", 8), ("n-b", "r1", 4)]);
    let (pods, claims) = split(vec![
        pod_with_gpus("p0-small", 4),
        pod_with_gpus("p1-big", 8),
    ]);
    let GangOutcome::Placed(d) = place(&c, &gang(2), &pods, &claims) else {
        panic!()
    };
    let mut got = nodes_of(&d);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("ns/p0-small".to_string(), "n-b".to_string()),
            ("ns/p1-big".to_string(), "n-a".to_string())
        ]
    );
}

#[test]
fn mixed_leader_and_worker_shapes() {
    let c = cluster(&[("n1", "r1", 2), ("n2", "r1", 2)]);
    let (mut pods, mut claims) = split(
        (0..4)
            .map(|i| pod_with_gpus(&format!("worker-{i}"), 1))
            .collect(),
    );
    let (leader, leader_claim) = pod_with_gpus("leader", 0);
    pods.insert(0, leader);
    claims.push(leader_claim);
    let GangOutcome::Placed(d) = place(&c, &gang(5), &pods, &claims) else {
        panic!()
    };
    assert_eq!(d.bindings.len(), 5);
}

#[test]
fn a_podgroup_claim_is_shared_by_all_pods_and_pins_them_to_its_rack() {
    let mut c = cluster(&[("n1", "r1", 2), ("n2", "r1", 2), ("n3", "r2", 4)]);
    // A fabric device reachable only from rack r2.
    let mut fabric = ResourceSlice::node_local("fabric-r2", "fabric.example.com", "x", "fabric-r2");
    fabric.node_selection = SliceNodeSelection::Slice(NodeAccess::NodeSelector(NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement::new(
                "rack",
                NodeSelectorOperator::In,
                vec!["r2".to_string()],
            )],
            match_fields: vec![],
        }],
    }));
    fabric.devices.push(Device::new("switch-0"));
    c.add_slice(fabric).unwrap();
    c.put_class(DeviceClass::with_cel(
        "fabric",
        "device.driver == \"fabric.example.com\"",
    ))
    .unwrap();
    let mut net = ResourceClaim::new("ns", "g-fabric");
    net.spec.requests.push(DeviceRequest::exactly(
        "net",
        ExactDeviceRequest::new("fabric"),
    ));
    let (mut pods, mut claims) =
        split((0..2).map(|i| pod_with_gpus(&format!("p{i}"), 1)).collect());
    claims.push(net);
    // Each pod uses the group's claim by naming it with the same name and source.
    for p in &mut pods {
        p.resource_claims.push(PodResourceClaim {
            name: "net".into(),
            source: ClaimSource::ClaimName("g-fabric".into()),
        });
    }
    let mut g = gang(2);
    g.resource_claims.push(PodGroupResourceClaim {
        name: "net".into(),
        source: ClaimSource::ClaimName("g-fabric".into()),
    });
    let GangOutcome::Placed(d) = place(&c, &g, &pods, &claims) else {
        panic!()
    };
    assert!(d.bindings.iter().all(|b| b.node == "n3"), "{d:?}");
    assert_eq!(d.group_claims.len(), 1);
    assert!(d.bindings.iter().all(|b| b.claims.len() == 1));
}

#[test]
fn running_members_in_two_racks_leave_no_domain() {
    // The rack constraint is already broken by the running members: nothing more is
    // placed, even though the pending pod fits anywhere.
    let c = cluster(&[("n1", "r1", 4), ("n2", "r2", 4)]);
    let (mut pods, claims) = split((0..3).map(|i| pod_with_gpus(&format!("p{i}"), 1)).collect());
    pods[0].node_name = Some("n1".into());
    pods[1].node_name = Some("n2".into());
    let mut g = gang(3);
    g.topology.push(TopologyConstraint { key: "rack".into() });
    assert_eq!(
        place(&c, &g, &pods, &claims),
        GangOutcome::Unschedulable {
            required: 1,
            best: 0
        }
    );
    // Without the constraint the pending pod is placed.
    g.topology.clear();
    assert!(matches!(
        place(&c, &g, &pods, &claims),
        GangOutcome::Placed(_)
    ));
}

#[test]
fn topology_by_rack_avoids_the_rack_with_a_tainted_gpu() {
    let mut c = cluster(&[
        ("n1", "r1", 2),
        ("n2", "r1", 2),
        ("n3", "r2", 2),
        ("n4", "r2", 2),
    ]);
    c.taint_device(
        &dref("n2", "gpu-1"),
        taint("ecc", "", DeviceTaintEffect::NoSchedule, 1),
    )
    .unwrap();
    let (pods, claims) = split((0..4).map(|i| pod_with_gpus(&format!("p{i}"), 1)).collect());
    let mut g = gang(4);
    g.topology.push(TopologyConstraint { key: "rack".into() });
    let GangOutcome::Placed(d) = place(&c, &g, &pods, &claims) else {
        panic!()
    };
    let nodes: Vec<String> = d.bindings.iter().map(|b| b.node.clone()).collect();
    assert_eq!(nodes, vec!["n3", "n3", "n4", "n4"]);
}

#[test]
fn a_gang_larger_than_any_domain_is_unschedulable() {
    let c = cluster(&[("n1", "r1", 4), ("n2", "r2", 4)]);
    let (pods, claims) = split((0..3).map(|i| pod_with_gpus(&format!("p{i}"), 2)).collect());
    let mut g = gang(3);
    g.topology.push(TopologyConstraint { key: "rack".into() });
    // Each rack has 4 free GPUs, the gang needs 6: the rack summaries rule both out.
    assert!(matches!(
        place(&c, &g, &pods, &claims),
        GangOutcome::Unschedulable { required: 3, .. }
    ));
    // Without the rack constraint it fits across racks.
    let GangOutcome::Placed(d) = place(&c, &gang(3), &pods, &claims) else {
        panic!()
    };
    assert_eq!(d.bindings.len(), 3);
}

/// Records a decision in the cluster (claims and node reservations).
fn commit(c: &mut Cluster, pods: &[Pod], d: &PlacementDecision) {
    for b in &d.bindings {
        for a in &b.claims {
            c.commit_allocation(&a.claim, &a.result).unwrap();
        }
        let pod = pods
            .iter()
            .find(|p| format!("{}/{}", p.namespace, p.name) == b.pod)
            .unwrap();
        let mut req = pod.requests.clone();
        req.insert("pods".into(), Quantity::from_int(1));
        c.reserve_node_resources(&b.node, &b.pod, req).unwrap();
    }
    for a in &d.group_claims {
        c.commit_allocation(&a.claim, &a.result).unwrap();
    }
}

#[test]
fn two_competing_gangs_one_is_placed_whole_and_the_other_holds_nothing() {
    // 2 nodes x 4 GPUs; each gang wants 4 pods x 2 GPUs (all 8). Pod-by-pod placement
    // interleaving the two would leave both half-placed; gangs are placed whole.
    let mut c = cluster(&[("n1", "r1", 4), ("n2", "r1", 4)]);
    let (pods_a, claims_a) = split((0..4).map(|i| pod_with_gpus(&format!("a{i}"), 2)).collect());
    let GangOutcome::Placed(d) = place(&c, &gang(4), &pods_a, &claims_a) else {
        panic!()
    };
    commit(&mut c, &pods_a, &d);
    let (pods_b, claims_b) = split((0..4).map(|i| pod_with_gpus(&format!("b{i}"), 2)).collect());
    let before = observe(&c);
    assert_eq!(
        place(&c, &gang(4), &pods_b, &claims_b),
        GangOutcome::Unschedulable {
            required: 4,
            best: 0
        }
    );
    assert_eq!(observe(&c), before, "placement never changes the cluster");
}

#[test]
fn pods_beyond_min_count_are_placed_where_they_fit() {
    let c = cluster(&[("n1", "r1", 4)]);
    let (pods, claims) = split((0..3).map(|i| pod_with_gpus(&format!("p{i}"), 2)).collect());
    let GangOutcome::Placed(d) = place(&c, &gang(2), &pods, &claims) else {
        panic!()
    };
    assert_eq!(d.bindings.len(), 2);
    assert!(matches!(
        place(&c, &gang(3), &pods, &claims),
        GangOutcome::Unschedulable { required: 3, .. }
    ));
}

#[test]
fn placement_is_deterministic() {
    let c = cluster(&[("n1", "r1", 4), ("n2", "r2", 4), ("n3", "r2", 4)]);
    let (pods, claims) = split((0..5).map(|i| pod_with_gpus(&format!("p{i}"), 2)).collect());
    let a = place(&c, &gang(5), &pods, &claims);
    let b = place(&c, &gang(5), &pods, &claims);
    assert_eq!(a, b);
    assert!(matches!(a, GangOutcome::Placed(_)));
}

#[test]
fn node_taints_and_selectors_are_respected() {
    let mut c = cluster(&[("n1", "r1", 2), ("n2", "r1", 2)]);
    c.taint_node(
        "n1",
        gangpack::Taint {
            key: "maintenance".into(),
            value: String::new(),
            effect: gangpack::TaintEffect::NoSchedule,
            time_added: None,
        },
    )
    .unwrap();
    let (mut pods, claims) = split((0..2).map(|i| pod_with_gpus(&format!("p{i}"), 1)).collect());
    let GangOutcome::Placed(d) = place(&c, &gang(2), &pods, &claims) else {
        panic!()
    };
    assert!(d.bindings.iter().all(|b| b.node == "n2"));
    pods[0].node_selector = BTreeMap::from([("rack".to_string(), "r9".to_string())]);
    assert!(matches!(
        place(&c, &gang(2), &pods, &claims),
        GangOutcome::Unschedulable { .. }
    ));
}

/// A gang's domains come from the key it names among several tracked keys, whether
/// the keys were tracked before the nodes came or after, and after a node moves: the
/// placer reads a node's value of a tracked key from the cluster's domain slots.
#[test]
fn among_several_tracked_keys_a_gang_uses_its_own() {
    let node = |name: &str, rack: &str, zone: &str| {
        gangpack::Node::new(name)
            .with_label("rack", rack)
            .with_label("zone", zone)
            .with_allocatable("cpu", Quantity::from_int(32))
            .with_allocatable("pods", Quantity::from_int(110))
    };
    for keys_first in [false, true] {
        let mut c = rack_cluster(&[], 32);
        if keys_first {
            c.track_topology_key("zone");
            c.track_topology_key("rack");
        }
        // Four nodes of 2 GPUs, each its own rack; zone z0 = {n1, n2}, z1 = {n3, n4}.
        for (name, rack, zone) in [
            ("n1", "r1", "z0"),
            ("n2", "r2", "z0"),
            ("n3", "r3", "z1"),
            ("n4", "r4", "z1"),
        ] {
            c.add_node(node(name, rack, zone)).unwrap();
            c.add_slice(gpus(name, 2)).unwrap();
        }
        if !keys_first {
            c.track_topology_key("zone");
            c.track_topology_key("rack");
        }
        // n2 moves to z1: only z1 holds three pods of 2 GPUs.
        c.replace_node(node("n2", "r2", "z1")).unwrap();
        let (pods, claims) = split((0..3).map(|i| pod_with_gpus(&format!("p{i}"), 2)).collect());
        let mut g = gang(3);
        g.topology.push(TopologyConstraint { key: "zone".into() });
        let GangOutcome::Placed(d) = place(&c, &g, &pods, &claims) else {
            panic!("zone z1 holds the gang (keys first: {keys_first})")
        };
        let mut nodes: Vec<String> = d.bindings.iter().map(|b| b.node.clone()).collect();
        nodes.sort();
        assert_eq!(nodes, ["n2", "n3", "n4"], "keys first: {keys_first}");
        // By rack, each rack holds one pod: none holds the gang.
        g.topology[0].key = "rack".into();
        assert!(
            matches!(
                place(&c, &g, &pods, &claims),
                GangOutcome::Unschedulable { .. }
            ),
            "keys first: {keys_first}"
        );
    }
}
