#![cfg(not(target_arch = "wasm32"))]
//! Explanations of pending gangs: status, facts, minimal blocking set, and the text
//! rendering, compared with golden files in `tests/golden/` (regenerate with
//! `GANGPACK_BLESS=1 cargo test -p gangpack --test explain`, then review the diff).

mod common;

use common::*;
use gangpack::{
    AllocationMode, ClaimSource, Cluster, DeviceAllocation, DeviceClass, DeviceRequest,
    DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator, ExactDeviceRequest, Explanation,
    Fact, GangOptions, GangStatus, Pod, PodGroup, PodResourceClaim, Quantity, Resolution,
    ResourceClaim, SchedulingPolicy, Taint, TaintEffect, TopologyConstraint, validate_placement,
};

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
