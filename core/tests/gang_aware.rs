//! The gang-aware policy (issue 34, item 3): whole domains of protected keys are kept
//! whole when an equally feasible placement keeps them so; a keyed gang uses a fitting
//! broken domain before a whole one; inside its domain a gang takes the fewest lower
//! domains (Kueue's BestFit); a `Scheduler` protects the keys its pending PodGroups
//! require. Each case is set against the base policy alone, which decides otherwise.
//!
//! Planted, each caught: every domain read as broken (three cases fail); the
//! tightest group that holds the rest replaced by the last group (the block case).

mod common;

use std::collections::BTreeSet;

use common::*;
use gangpack::{
    Cluster, DeviceAllocation, DomainLevel, GangAwareParams, GangOptions, GangOutcome, Node, Pod,
    PodGroup, Quantity, ResourceClaim, Scheduler, SchedulingPolicy, ScoringPolicy,
    TopologyConstraint, UnitResult,
};

fn member(group: Option<&str>, name: &str, gpus: u32) -> (Pod, ResourceClaim) {
    let (mut pod, claim) = gpu_pod(name, gpus);
    pod.scheduling_group = group.map(str::to_owned);
    (pod, claim)
}

/// `gpus` GPUs of `node` taken by another workload.
fn take(c: &mut Cluster, node: &str, gpus: usize) {
    for g in 0..gpus {
        c.allocate(
            &dref(node, &format!("gpu-{g}")),
            DeviceAllocation::new(format!("other-{node}-{g}"), Vec::new()),
        )
        .unwrap();
    }
}

fn gang_aware(base: ScoringPolicy, protect: &[&str], levels: Vec<DomainLevel>) -> ScoringPolicy {
    ScoringPolicy::GangAware(Box::new(GangAwareParams {
        base,
        protect: protect.iter().map(|k| (*k).to_owned()).collect(),
        levels,
    }))
}

fn options(policy: ScoringPolicy) -> GangOptions {
    GangOptions {
        policy,
        ..GangOptions::default()
    }
}

fn nodes_of(out: &GangOutcome) -> Vec<String> {
    match out {
        GangOutcome::Placed(d) => d.bindings.iter().map(|b| b.node.clone()).collect(),
        other => panic!("not placed: {other:?}"),
    }
}

/// Rack r1 broken (a1 has 4 GPUs taken, a2 one), r2 whole. Spread sends a 1-GPU pod to
/// the emptiest node, b1, breaking r2; gang-aware over Spread, protecting `rack`, keeps
/// r2 whole and takes a2, the emptiest node of r1.
#[test]
fn a_small_pod_keeps_a_whole_rack_whole() {
    let mut c = rack_cluster(
        &[
            ("a1", "r1", 8),
            ("a2", "r1", 8),
            ("b1", "r2", 8),
            ("b2", "r2", 8),
        ],
        64,
    );
    take(&mut c, "a1", 4);
    take(&mut c, "a2", 1);
    let (pod, claim) = member(None, "small", 1);
    let (pods, claims) = ([pod], [claim]);
    let place = |policy| {
        nodes_of(
            &c.place_gang(None, &pods, &claims, &options(policy))
                .unwrap(),
        )
    };
    assert_eq!(place(ScoringPolicy::Spread), ["b1"]);
    assert_eq!(
        place(gang_aware(ScoringPolicy::Spread, &["rack"], Vec::new())),
        ["a2"]
    );
    // Nothing protected: the base decides.
    assert_eq!(
        place(gang_aware(ScoringPolicy::Spread, &[], Vec::new())),
        ["b1"]
    );
    // Every rack broken: the base decides among them.
    let mut broken = c.clone();
    take(&mut broken, "b2", 1);
    let placed = broken
        .place_gang(
            None,
            &pods,
            &claims,
            &options(gang_aware(ScoringPolicy::Spread, &["rack"], Vec::new())),
        )
        .unwrap();
    assert_eq!(nodes_of(&placed), ["b1"]);
}

/// A rack-bound gang of two 8-GPU pods: r1 has three free nodes and one used, r2 four
/// free. Spread ranks r2 first (more free); gang-aware takes r1, which fits and is
/// already broken, and keeps r2 whole.
#[test]
fn a_keyed_gang_uses_a_fitting_broken_domain_first() {
    let mut c = rack_cluster(
        &[
            ("a1", "r1", 8),
            ("a2", "r1", 8),
            ("a3", "r1", 8),
            ("a4", "r1", 8),
            ("b1", "r2", 8),
            ("b2", "r2", 8),
            ("b3", "r2", 8),
            ("b4", "r2", 8),
        ],
        64,
    );
    take(&mut c, "a1", 8);
    let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: 2 });
    g.topology.push(TopologyConstraint::new("rack"));
    let (pods, claims): (Vec<Pod>, Vec<ResourceClaim>) = (0..2)
        .map(|i| member(Some("g"), &format!("g-{i}"), 8))
        .unzip();
    let place = |policy| {
        nodes_of(
            &c.place_gang(Some(&g), &pods, &claims, &options(policy))
                .unwrap(),
        )
    };
    let racks = |nodes: Vec<String>| -> BTreeSet<char> {
        nodes.iter().map(|n| n.chars().next().unwrap()).collect()
    };
    assert_eq!(racks(place(ScoringPolicy::Spread)), BTreeSet::from(['b']));
    assert_eq!(
        racks(place(gang_aware(ScoringPolicy::Spread, &[], Vec::new()))),
        BTreeSet::from(['a'])
    );
}

/// A block of three racks (r1: 2 nodes, r2: 4, r3: 1), every node 8 free GPUs. A gang
/// of 8-GPU pods bound to the block takes the fewest racks: 4 pods all in r2 (BestFit
/// alone fills nodes in name order: r1 first); 5 pods in r2 and r3 (the largest, then
/// the tightest that holds the rest).
#[test]
fn a_gang_in_a_block_takes_the_fewest_racks() {
    let mut c = Cluster::new();
    c.put_class(gangpack::DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    for (name, rack) in [
        ("n1", "r1"),
        ("n2", "r1"),
        ("n3", "r2"),
        ("n4", "r2"),
        ("n5", "r2"),
        ("n6", "r2"),
        ("n7", "r3"),
    ] {
        c.add_node(
            Node::new(name)
                .with_label("block", "b1")
                .with_label("rack", rack)
                .with_allocatable("cpu", Quantity::from_int(64))
                .with_allocatable("pods", Quantity::from_int(110)),
        )
        .unwrap();
        c.add_slice(gpus(name, 8)).unwrap();
    }
    let rack_of = |n: &str| match n {
        "n1" | "n2" => "r1",
        "n7" => "r3",
        _ => "r2",
    };
    for (size, want) in [(4, vec!["r2"]), (5, vec!["r2", "r3"])] {
        let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: size });
        g.topology.push(TopologyConstraint::new("block"));
        let (pods, claims): (Vec<Pod>, Vec<ResourceClaim>) = (0..size)
            .map(|i| member(Some("g"), &format!("g-{i}"), 8))
            .unzip();
        let racks = |policy| -> BTreeSet<&str> {
            nodes_of(
                &c.place_gang(Some(&g), &pods, &claims, &options(policy))
                    .unwrap(),
            )
            .iter()
            .map(|n| rack_of(n))
            .collect()
        };
        let levels = vec![DomainLevel::NodeLabel("rack".into())];
        assert_eq!(
            racks(gang_aware(ScoringPolicy::BestFit, &[], levels)),
            want.iter().copied().collect::<BTreeSet<_>>(),
            "{size} pods"
        );
        assert!(
            racks(ScoringPolicy::BestFit).contains("r1"),
            "{size} pods: BestFit alone starts in r1"
        );
    }
}

/// The Scheduler protects the keys its pending PodGroups require: a rack-bound gang of
/// three 8-GPU pods cannot fit (racks of two nodes) and waits; in the same cycle a
/// small pod under gang-aware over Spread, with no key given, keeps rack r2 whole.
/// Without the pending gang Spread's choice stands.
#[test]
fn pending_gangs_protect_their_keys() {
    let run = |with_gang: bool| -> String {
        let mut c = rack_cluster(
            &[
                ("a1", "r1", 8),
                ("a2", "r1", 8),
                ("b1", "r2", 8),
                ("b2", "r2", 8),
            ],
            64,
        );
        take(&mut c, "a1", 4);
        take(&mut c, "a2", 1);
        let mut s = Scheduler::new(
            c,
            options(gang_aware(ScoringPolicy::Spread, &[], Vec::new())),
        );
        if with_gang {
            let mut g = PodGroup::new("ns", "big", SchedulingPolicy::Gang { min_count: 3 });
            g.topology.push(TopologyConstraint::new("rack"));
            s.add_group(g).unwrap();
            for i in 0..3 {
                let (p, cl) = member(Some("big"), &format!("big-{i}"), 8);
                s.add_claim(cl).unwrap();
                s.add_pod(p).unwrap();
            }
        }
        let (p, cl) = member(None, "small", 1);
        s.add_claim(cl).unwrap();
        s.add_pod(p).unwrap();
        let report = s.cycle();
        report
            .units
            .iter()
            .find_map(|(_, r)| match r {
                UnitResult::Scheduled(d) => Some(d.bindings[0].node.clone()),
                _ => None,
            })
            .expect("the small pod is placed")
    };
    assert_eq!(run(false), "b1");
    assert_eq!(run(true), "a2");
}

#[test]
fn a_gang_aware_base_is_refused() {
    let p = gang_aware(ScoringPolicy::gang_aware(), &[""], Vec::new());
    let errs = p.validate().unwrap_err();
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        ["policy.gangAware.base", "policy.gangAware.protect[0]"]
    );
    assert_eq!(
        ScoringPolicy::parse("gang-aware"),
        Some(ScoringPolicy::gang_aware())
    );
}
