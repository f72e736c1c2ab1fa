#![cfg(not(target_arch = "wasm32"))]
//! Applying placement decisions, and CompositePodGroup placement. Every composite
//! placement is re-checked child by child with the independent validator, on a cluster
//! where the earlier children's decisions are applied.

mod common;

use common::*;
use gangpack::{
    AllocationMode, ClaimSource, Cluster, ClusterError, CompositeError, CompositeOutcome,
    CompositePodGroup, CompositeSchedulingPolicy, DeviceAllocation, DeviceRequest,
    ExactDeviceRequest, GangOptions, GangOutcome, ObjectKind, PlacementDecision, Pod, PodGroup,
    PodGroupResourceClaim, PodResourceClaim, Quantity, ResourceClaim, SchedulingPolicy,
    TopologyConstraint, WorkloadReference, validate_placement,
};

const CLASS: &str = "gpu";

/// Nodes `(name, rack, gpus)`, each with 32 CPUs and room for 110 pods.
fn cluster(nodes: &[(&str, &str, usize)]) -> Cluster {
    rack_cluster(nodes, 32)
}

fn gpu_claim(name: &str, n: u32) -> ResourceClaim {
    let mut claim = ResourceClaim::new("ns", name);
    claim.spec.requests.push(DeviceRequest::exactly(
        "gpus",
        ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(n)),
    ));
    claim
}

/// Everything a composite placement reads.
#[derive(Default)]
struct World {
    pods: Vec<Pod>,
    claims: Vec<ResourceClaim>,
    groups: Vec<PodGroup>,
    composites: Vec<CompositePodGroup>,
}

impl World {
    /// A PodGroup `name` (gang of `min`, or basic with `None`) with `pods` pods
    /// `<name>-<i>`, each with its own claim for `gpus` GPUs and 1 CPU.
    fn group(&mut self, name: &str, min: Option<u32>, pods: usize, gpus: u32) -> &mut PodGroup {
        let policy = match min {
            Some(min_count) => SchedulingPolicy::Gang { min_count },
            None => SchedulingPolicy::Basic,
        };
        for i in 0..pods {
            let mut pod = Pod::new("ns", format!("{name}-{i}"));
            pod.scheduling_group = Some(name.into());
            pod.requests.insert("cpu".into(), Quantity::from_int(1));
            let claim = format!("{name}-{i}-gpus");
            pod.resource_claims.push(PodResourceClaim {
                name: "gpus".into(),
                source: ClaimSource::ClaimName(claim.clone()),
            });
            self.claims.push(gpu_claim(&claim, gpus));
            self.pods.push(pod);
        }
        self.groups.push(PodGroup::new("ns", name, policy));
        self.groups.last_mut().unwrap()
    }

    fn composite(
        &mut self,
        name: &str,
        policy: CompositeSchedulingPolicy,
        children: &[&str],
        topology: Option<&str>,
    ) -> CompositePodGroup {
        let mut c = CompositePodGroup::new("ns", name, WorkloadReference::new("w", "t"), policy);
        c.children = children.iter().map(|s| (*s).to_string()).collect();
        c.topology = topology
            .map(|key| TopologyConstraint { key: key.into() })
            .into_iter()
            .collect();
        self.composites.push(c.clone());
        c
    }

    fn group_named(&self, name: &str) -> &PodGroup {
        self.groups.iter().find(|g| g.name == name).unwrap()
    }

    fn place(
        &self,
        c: &Cluster,
        root: &CompositePodGroup,
    ) -> Result<CompositeOutcome, CompositeError> {
        let before = observe(c);
        let out = c.place_composite(
            root,
            &self.composites,
            &self.groups,
            &self.pods,
            &self.claims,
            &GangOptions::default(),
        );
        assert_eq!(
            observe(c),
            before,
            "place_composite never changes the cluster"
        );
        if let Ok(CompositeOutcome::Placed { decisions }) = &out {
            self.check(c, decisions);
        }
        out
    }

    /// Validates each child's decision on the cluster with the earlier ones applied.
    fn check(&self, c: &Cluster, decisions: &[(String, PlacementDecision)]) {
        let mut scratch = c.clone();
        for (name, d) in decisions {
            let g = self.group_named(name);
            let v = validate_placement(&scratch, Some(g), &self.pods, &self.claims, d);
            assert!(v.is_empty(), "invalid placement of {name}: {v:?}\n{d:?}");
            scratch.apply_decision(d, &self.pods).unwrap();
        }
    }
}

fn placed(out: Result<CompositeOutcome, CompositeError>) -> Vec<(String, PlacementDecision)> {
    match out {
        Ok(CompositeOutcome::Placed { decisions }) => decisions,
        other => panic!("not placed: {other:?}"),
    }
}

fn names(decisions: &[(String, PlacementDecision)]) -> Vec<&str> {
    decisions.iter().map(|(n, _)| n.as_str()).collect()
}

/// The nodes the pods of these decisions are bound to, in order.
fn nodes(decisions: &[(String, PlacementDecision)]) -> Vec<&str> {
    decisions
        .iter()
        .flat_map(|(_, d)| d.bindings.iter().map(|b| b.node.as_str()))
        .collect()
}

fn rack_of<'c>(c: &'c Cluster, node: &str) -> &'c str {
    &c.node(node).unwrap().labels["rack"]
}

fn gang(min_group_count: u32) -> CompositeSchedulingPolicy {
    CompositeSchedulingPolicy::Gang { min_group_count }
}

// ------------------------------------------------------------------------ apply / revert

/// A gang `g` of 2 pods x 1 GPU with a PodGroup-level claim for 1 more GPU that both
/// pods name with the group's entry, placed on one 4-GPU node.
fn gang_with_group_claim() -> (Cluster, World, PlacementDecision) {
    let c = cluster(&[("n1", "r1", 4)]);
    let mut w = World::default();
    let shared = PodGroupResourceClaim {
        name: "shared".into(),
        source: ClaimSource::ClaimName("g-shared".into()),
    };
    w.group("g", Some(2), 2, 1)
        .resource_claims
        .push(shared.clone());
    for p in &mut w.pods {
        p.resource_claims.push(PodResourceClaim {
            name: shared.name.clone(),
            source: shared.source.clone(),
        });
    }
    w.claims.push(gpu_claim("g-shared", 1));
    let GangOutcome::Placed(d) = c
        .place_gang(
            Some(w.group_named("g")),
            &w.pods,
            &w.claims,
            &GangOptions::default(),
        )
        .unwrap()
    else {
        panic!("the gang fits")
    };
    assert_eq!(d.bindings.len(), 2);
    assert_eq!(d.group_claims.len(), 1);
    (c, w, d)
}

#[test]
fn apply_then_revert_restores_the_cluster() {
    let (mut c, w, d) = gang_with_group_claim();
    let before = observe(&c);
    let free_before = c.free_devices().len();
    c.apply_decision(&d, &w.pods).unwrap();
    // Three GPUs taken, two pods' CPUs and pod slots reserved.
    assert_eq!(c.free_devices().len(), free_before - 3);
    let free = c.node_free_resources("n1").unwrap();
    assert_eq!(free["cpu"], Quantity::from_int(30));
    assert_eq!(free["pods"], Quantity::from_int(108));
    assert_ne!(observe(&c), before);
    // Applying it twice is refused, and changes nothing.
    let applied = observe(&c);
    assert!(c.apply_decision(&d, &w.pods).is_err());
    assert_eq!(observe(&c), applied);
    c.revert_decision(&d, &w.pods);
    assert_eq!(observe(&c), before);
    // And again: apply / revert is repeatable.
    c.apply_decision(&d, &w.pods).unwrap();
    c.revert_decision(&d, &w.pods);
    assert_eq!(observe(&c), before);
}

#[test]
fn a_failing_apply_leaves_the_cluster_unchanged() {
    let (mut c, w, d) = gang_with_group_claim();
    let before = observe(&c);

    // The last pod's node reservation fails after the group claim, the first pod and
    // the last pod's claim are recorded: all of them are undone.
    let mut greedy = w.pods.clone();
    let last = d.bindings.last().unwrap().pod.clone();
    let p = greedy
        .iter_mut()
        .find(|p| format!("ns/{}", p.name) == last)
        .unwrap();
    p.requests.insert("cpu".into(), Quantity::from_int(100));
    let err = c.apply_decision(&d, &greedy).unwrap_err();
    assert!(
        matches!(&err, ClusterError::Insufficient { node, .. } if node == "n1"),
        "{err:?}"
    );
    assert_eq!(observe(&c), before);

    // A device of the last pod's claim is taken meanwhile by someone else.
    let taken = &d.bindings.last().unwrap().claims[0].result.devices[0];
    let taken_ref = dref(&taken.pool, &taken.device);
    c.allocate(&taken_ref, DeviceAllocation::new("ns/other", vec![]))
        .unwrap();
    let with_other = observe(&c);
    let err = c.apply_decision(&d, &w.pods).unwrap_err();
    assert!(
        matches!(&err, ClusterError::DeviceInUse { holder, .. } if holder == "ns/other"),
        "{err:?}"
    );
    assert_eq!(observe(&c), with_other);
    c.release(&taken_ref, "ns/other").unwrap();
    assert_eq!(observe(&c), before);

    // A bound pod that is not given: an error naming the pod, nothing recorded.
    let err = c.apply_decision(&d, &w.pods[..1]).unwrap_err();
    match &err {
        ClusterError::NotFound(obj) => {
            assert_eq!(obj.kind, ObjectKind::Pod);
            assert_eq!(format!("ns/{}", obj.name), last);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(last.trim_start_matches("ns/")));
    assert_eq!(observe(&c), before);
}

// ------------------------------------------------------------------------ composites

#[test]
fn min_group_count_two_of_three_places_the_two_that_fit() {
    // 2 nodes x 4 GPUs. `a` wants 2 pods x 6 GPUs (fits nowhere); `b` and `c` want
    // 2 pods x 2 GPUs each and fit together.
    let c = cluster(&[("n1", "r1", 4), ("n2", "r1", 4)]);
    let mut w = World::default();
    w.group("a", Some(2), 2, 6);
    w.group("b", Some(2), 2, 2);
    w.group("c", Some(2), 2, 2);
    let root = w.composite("root", gang(2), &["a", "b", "c"], None);
    let d = placed(w.place(&c, &root));
    assert_eq!(names(&d), ["b", "c"]);
    assert!(d.iter().all(|(_, d)| d.bindings.len() == 2));
    // All three cannot be: nothing is placed. `a` fails first, and with it two
    // children are left for three places, so the search stops there.
    let all = w.composite("all", gang(3), &["a", "b", "c"], None);
    assert_eq!(
        w.place(&c, &all).unwrap(),
        CompositeOutcome::Unschedulable {
            required: 3,
            best: 0
        }
    );
    // With `a` last, `b` and `c` are placed before the search gives up.
    let last = w.composite("last", gang(3), &["b", "c", "a"], None);
    assert_eq!(
        w.place(&c, &last).unwrap(),
        CompositeOutcome::Unschedulable {
            required: 3,
            best: 2
        }
    );
}

#[test]
fn children_are_chosen_with_backtracking() {
    // One node with 4 GPUs. `a` (3 GPUs) fits first but then neither `b` nor `c`
    // (2 GPUs each) does; skipping `a` places `b` and `c`.
    let c = cluster(&[("n1", "r1", 4)]);
    let mut w = World::default();
    w.group("a", Some(1), 1, 3);
    w.group("b", Some(1), 1, 2);
    w.group("c", Some(1), 1, 2);
    let root = w.composite("root", gang(2), &["a", "b", "c"], None);
    let d = placed(w.place(&c, &root));
    assert_eq!(names(&d), ["b", "c"]);
    // With minGroupCount 1 the first child wins and the others are tried after it.
    let one = w.composite("one", gang(1), &["a", "b", "c"], None);
    assert_eq!(names(&placed(w.place(&c, &one))), ["a"]);
}

#[test]
fn further_children_are_placed_where_they_fit() {
    let c = cluster(&[("n1", "r1", 4), ("n2", "r1", 4)]);
    let mut w = World::default();
    for name in ["a", "b", "c"] {
        w.group(name, Some(2), 2, 1);
    }
    let root = w.composite("root", gang(1), &["a", "b", "c"], None);
    let d = placed(w.place(&c, &root));
    assert_eq!(names(&d), ["a", "b", "c"]);
}

#[test]
fn composite_topology_keeps_every_child_in_one_rack() {
    // r1 has 4 GPUs, r2 has 8. `a` and `b` want 4 GPUs each: either alone fits in r1
    // (tried first), both only fit in r2.
    let c = cluster(&[
        ("n1", "r1", 2),
        ("n2", "r1", 2),
        ("n3", "r2", 4),
        ("n4", "r2", 4),
    ]);
    let mut w = World::default();
    w.group("a", Some(2), 2, 2);
    w.group("b", Some(2), 2, 2);
    let root = w.composite("root", gang(2), &["a", "b"], Some("rack"));
    let d = placed(w.place(&c, &root));
    assert_eq!(names(&d), ["a", "b"]);
    let racks: Vec<&str> = nodes(&d).iter().map(|n| rack_of(&c, n)).collect();
    assert_eq!(racks, ["r2"; 4]);
    // Without the composite's constraint, `a` takes r1 and `b` goes to r2.
    let free = w.composite("free", gang(2), &["a", "b"], None);
    let d = placed(w.place(&c, &free));
    let racks: Vec<&str> = nodes(&d).iter().map(|n| rack_of(&c, n)).collect();
    assert!(racks.contains(&"r1") && racks.contains(&"r2"), "{racks:?}");
}

#[test]
fn running_pods_pin_the_composite_to_their_rack() {
    let c = cluster(&[("n1", "r1", 2), ("n2", "r1", 2), ("n3", "r2", 8)]);
    let mut w = World::default();
    w.group("a", Some(2), 2, 2);
    w.group("b", Some(2), 2, 2);
    // One of `a`'s pods already runs on n1 (rack r1): the subtree stays in r1, where
    // `b` no longer fits next to `a`.
    w.pods[0].node_name = Some("n1".into());
    let root = w.composite("root", gang(2), &["a", "b"], Some("rack"));
    assert!(matches!(
        w.place(&c, &root).unwrap(),
        CompositeOutcome::Unschedulable { required: 2, .. }
    ));
    // One child is enough: `a`'s pending pod joins it in r1 (n3 in r2 has room for
    // everything, but is not in the running pod's rack).
    let one = w.composite("one", gang(1), &["a", "b"], Some("rack"));
    let d = placed(w.place(&c, &one));
    assert_eq!(names(&d), ["a"]);
    assert_eq!(d[0].1.bindings.len(), 1);
    assert_eq!(rack_of(&c, &d[0].1.bindings[0].node), "r1");
}

#[test]
fn a_child_whose_pods_all_run_counts_without_placing_anything() {
    let c = cluster(&[("n1", "r1", 2)]);
    let mut w = World::default();
    w.group("done", Some(2), 2, 1);
    for p in &mut w.pods {
        p.node_name = Some("n1".into());
    }
    w.group("big", Some(1), 1, 8);
    let root = w.composite("root", gang(1), &["big", "done"], None);
    let d = placed(w.place(&c, &root));
    assert_eq!(names(&d), ["done"]);
    assert_eq!(d[0].1, PlacementDecision::default());
    // `big` fails first; then one child is left for two places: the search stops.
    let both = w.composite("both", gang(2), &["big", "done"], None);
    assert_eq!(
        w.place(&c, &both).unwrap(),
        CompositeOutcome::Unschedulable {
            required: 2,
            best: 0
        }
    );
}

#[test]
fn nested_composite_with_its_own_rack() {
    // root (gang 2): inner (gang 2, by rack: x, y) and z. x and y want 4 GPUs each:
    // either fits in r1 (tried first), together only r2 holds them; z (2 GPUs) then
    // takes r1.
    let c = cluster(&[
        ("n1", "r1", 2),
        ("n2", "r1", 2),
        ("n3", "r2", 4),
        ("n4", "r2", 4),
    ]);
    let mut w = World::default();
    w.group("x", Some(2), 2, 2);
    w.group("y", Some(2), 2, 2);
    w.group("z", Some(1), 1, 2);
    w.composite("inner", gang(2), &["x", "y"], Some("rack"));
    let root = w.composite("root", gang(2), &["inner", "z"], None);
    let d = placed(w.place(&c, &root));
    assert_eq!(names(&d), ["x", "y", "z"]);
    let inner_racks: Vec<&str> = nodes(&d[..2]).iter().map(|n| rack_of(&c, n)).collect();
    assert_eq!(inner_racks, ["r2"; 4]);
    let z_nodes = nodes(&d[2..]);
    assert_eq!(z_nodes.len(), 1);
    assert_eq!(rack_of(&c, z_nodes[0]), "r1");

    // The root's rack constraint reaches the inner composite: x, y and z in one rack
    // is too much for either rack.
    let mut w2 = World {
        composites: Vec::new(),
        ..w
    };
    w2.composite("inner", gang(2), &["x", "y"], Some("rack"));
    let racked = w2.composite("racked", gang(2), &["inner", "z"], Some("rack"));
    assert!(matches!(
        w2.place(&c, &racked).unwrap(),
        CompositeOutcome::Unschedulable {
            required: 2,
            best: 1
        }
    ));
}

#[test]
fn missing_cyclic_and_repeated_children_are_errors() {
    let c = cluster(&[("n1", "r1", 4)]);
    let mut w = World::default();
    w.group("a", Some(1), 1, 1);
    let root = w.composite("root", gang(1), &["a", "nope"], None);
    let err = w.place(&c, &root).unwrap_err();
    assert_eq!(
        err,
        CompositeError::MissingChild {
            parent: "ns/root".into(),
            child: "nope".into()
        }
    );
    assert!(err.to_string().contains("nope"));

    w.composite("p", gang(1), &["q"], None);
    w.composite("q", gang(1), &["p"], None);
    let top = w.composite("top", gang(1), &["p"], None);
    assert_eq!(
        w.place(&c, &top).unwrap_err(),
        CompositeError::Cycle {
            path: vec!["top".into(), "p".into(), "q".into(), "p".into()]
        }
    );

    w.composite("i", gang(1), &["a"], None);
    let twice = w.composite("twice", gang(1), &["a", "i"], None);
    assert_eq!(
        w.place(&c, &twice).unwrap_err(),
        CompositeError::RepeatedChild {
            parent: "ns/i".into(),
            child: "a".into()
        }
    );

    // A child's invalid input surfaces as the gang error.
    w.claims.clear();
    let bad = w.composite("bad", gang(1), &["a"], None);
    assert!(matches!(
        w.place(&c, &bad).unwrap_err(),
        CompositeError::Gang(_)
    ));
}

#[test]
fn basic_composite_places_what_fits() {
    let c = cluster(&[("n1", "r1", 4)]);
    let mut w = World::default();
    w.group("a", Some(1), 1, 3);
    w.group("b", Some(1), 1, 8);
    w.group("c", None, 2, 1);
    let root = w.composite(
        "root",
        CompositeSchedulingPolicy::Basic,
        &["a", "b", "c"],
        None,
    );
    let d = placed(w.place(&c, &root));
    // a takes 3 GPUs, b fits nowhere, c (basic) places one of its two pods.
    assert_eq!(names(&d), ["a", "c"]);
    assert_eq!(d[1].1.bindings.len(), 1);
    // Nothing fits: placed, with no decision.
    let none = w.composite("none", CompositeSchedulingPolicy::Basic, &["b"], None);
    assert_eq!(
        w.place(&c, &none).unwrap(),
        CompositeOutcome::Placed {
            decisions: Vec::new()
        }
    );
}

#[test]
fn basic_composite_with_topology_takes_the_rack_placing_most_children() {
    let c = cluster(&[("n1", "r1", 2), ("n2", "r2", 4)]);
    let mut w = World::default();
    w.group("a", Some(1), 1, 2);
    w.group("b", Some(1), 1, 2);
    let root = w.composite(
        "root",
        CompositeSchedulingPolicy::Basic,
        &["a", "b"],
        Some("rack"),
    );
    let d = placed(w.place(&c, &root));
    assert_eq!(names(&d), ["a", "b"]);
    assert_eq!(nodes(&d), ["n2", "n2"]);
}

#[test]
fn a_tiny_budget_is_reported() {
    let c = cluster(&[("n1", "r1", 4)]);
    let mut w = World::default();
    w.group("a", Some(1), 1, 3);
    w.group("b", Some(1), 1, 2);
    w.group("c", Some(1), 1, 2);
    let root = w.composite("root", gang(2), &["a", "b", "c"], None);
    let options = GangOptions {
        step_budget: 2,
        ..GangOptions::default()
    };
    assert_eq!(
        c.place_composite(
            &root,
            &w.composites,
            &w.groups,
            &w.pods,
            &w.claims,
            &options
        )
        .unwrap(),
        CompositeOutcome::BudgetExhausted { attempts: 2 }
    );
}

#[test]
fn composite_placement_is_deterministic() {
    let c = cluster(&[
        ("n1", "r1", 4),
        ("n2", "r1", 4),
        ("n3", "r2", 4),
        ("n4", "r2", 4),
    ]);
    let mut w = World::default();
    for (i, name) in ["a", "b", "c", "d"].iter().enumerate() {
        w.group(name, Some(2), 3, 1 + (i as u32 % 2));
    }
    w.composite("left", gang(1), &["a", "b"], Some("rack"));
    let root = w.composite("root", gang(2), &["left", "c", "d"], None);
    let first = w.place(&c, &root).unwrap();
    let second = w.place(&c, &root).unwrap();
    let on_clone = w.place(&c.clone(), &root).unwrap();
    assert_eq!(first, second);
    assert_eq!(first, on_clone);
    assert_eq!(names(&placed(Ok(first))), ["a", "b", "c", "d"]);
}
