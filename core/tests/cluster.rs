#![cfg(not(target_arch = "wasm32"))]
//! Scenario tests for the cluster model and its index.

mod common;

use common::*;
use gangpack::{
    Cluster, ClusterError, Device, DeviceAllocation, DeviceAttribute, DeviceCounterConsumption,
    DeviceFilter, DeviceTaintEffect, DeviceTaintRule, DeviceTaintSelector, DeviceToleration,
    DeviceTolerationOperator, NodeAccess, ObjectKind, Problem, Quantity, ResourcePool,
    ResourceSlice, SliceNodeSelection, Time,
};

fn tol_exists(key: &str, effect: Option<DeviceTaintEffect>, secs: Option<i64>) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::Exists,
        value: String::new(),
        effect,
        toleration_seconds: secs,
    }
}

fn two_nodes() -> Cluster {
    let mut c = Cluster::new();
    c.track_topology_key("rack");
    c.add_node(node("n1", "r1")).unwrap();
    c.add_node(node("n2", "r2")).unwrap();
    c.add_slice(gpus("n1", 4)).unwrap();
    c.add_slice(gpus("n2", 4)).unwrap();
    c
}

#[test]
fn counts_per_node_and_domain_follow_allocations_and_taints() {
    let mut c = two_nodes();
    let n1 = c.node_id("n1").unwrap();
    assert_eq!(c.node_counts(n1).unwrap().free_untainted, 4);
    c.allocate(&dref("n1", "gpu-0"), holder("ns/a", vec![]))
        .unwrap();
    c.taint_device(
        &dref("n1", "gpu-1"),
        taint("k", "v", DeviceTaintEffect::NoSchedule, 5),
    )
    .unwrap();
    let counts = c.node_counts(n1).unwrap();
    assert_eq!(
        (counts.devices, counts.free, counts.free_untainted),
        (4, 3, 2)
    );
    let r1 = c.domain_counts("rack", "r1").unwrap();
    assert_eq!(
        (r1.nodes, r1.devices, r1.free, r1.free_untainted),
        (1, 4, 3, 2)
    );
    // Moving n1 to rack r2 moves its counts.
    c.replace_node(node("n1", "r2")).unwrap();
    assert_eq!(c.domain_counts("rack", "r1").unwrap().devices, 0);
    let r2 = c.domain_counts("rack", "r2").unwrap();
    assert_eq!(
        (r2.nodes, r2.devices, r2.free, r2.free_untainted),
        (2, 8, 7, 6)
    );
    c.release(&dref("n1", "gpu-0"), "ns/a").unwrap();
    assert_eq!(c.node_counts(n1).unwrap().free, 4);
}

#[test]
fn incomplete_pool_is_never_used_until_all_slices_arrive() {
    let mut c = Cluster::new();
    c.add_node(node("n1", "r1")).unwrap();
    let mut a = gpus("n1", 2);
    a.name = "n1-a".into();
    a.pool = ResourcePool {
        name: "n1".into(),
        generation: 1,
        resource_slice_count: 2,
    };
    c.add_slice(a).unwrap();
    assert!(!c.pool_status(DRIVER, "n1").unwrap().is_complete());
    assert!(c.usable_devices().is_empty());
    let mut b = ResourceSlice::node_local("n1-b", DRIVER, "n1", "n1");
    b.pool = ResourcePool {
        name: "n1".into(),
        generation: 1,
        resource_slice_count: 2,
    };
    b.devices.push(Device::new("gpu-9"));
    c.add_slice(b).unwrap();
    assert!(c.pool_status(DRIVER, "n1").unwrap().is_usable());
    assert_eq!(c.usable_devices().len(), 3);
}

#[test]
fn only_the_highest_generation_counts() {
    let mut c = Cluster::new();
    c.add_slice(gpus("n1", 4)).unwrap(); // generation 0
    let mut newer = gpus("n1", 2);
    newer.name = "n1-gpus-v2".into();
    newer.pool.generation = 3;
    c.add_slice(newer).unwrap();
    let st = c.pool_status(DRIVER, "n1").unwrap();
    assert_eq!((st.generation, st.slices_present), (3, 1));
    assert_eq!(c.usable_devices().len(), 2);
    // The old generation's devices are still stored but not usable.
    assert_eq!(c.device_count(), 6);
    c.remove_slice("n1-gpus-v2").unwrap();
    assert_eq!(c.usable_devices().len(), 4);
}

#[test]
fn duplicate_device_names_across_slices_make_the_pool_invalid() {
    let mut c = Cluster::new();
    let mut a = gpus("n1", 2);
    a.pool.resource_slice_count = 2;
    let mut b = gpus("n1", 1);
    b.name = "n1-more".into();
    b.pool.resource_slice_count = 2;
    c.add_slice(a).unwrap();
    c.add_slice(b).unwrap();
    let st = c.pool_status(DRIVER, "n1").unwrap();
    assert!(st.is_complete());
    assert_eq!(
        st.problems,
        vec![gangpack::PoolProblem::DuplicateDevice("gpu-0".into())]
    );
    assert!(c.usable_devices().is_empty());
}

#[test]
fn counters_must_exist_in_the_pool() {
    let mut c = Cluster::new();
    let mut s = gpus("n1", 1);
    s.devices[0]
        .consumes_counters
        .push(DeviceCounterConsumption {
            counter_set: "gpu-0-counters".into(),
            counters: [("memory".to_string(), Quantity::parse("40Gi").unwrap())].into(),
        });
    c.add_slice(s).unwrap();
    assert!(matches!(
        c.pool_status(DRIVER, "n1").unwrap().problems[0],
        gangpack::PoolProblem::MissingCounterSet { .. }
    ));
    assert!(c.usable_devices().is_empty());
}

#[test]
fn rule_without_selector_selects_nothing_and_empty_selector_everything() {
    let mut c = two_nodes();
    let rule = |name: &str, selector| DeviceTaintRule {
        name: name.into(),
        selector,
        taint: taint("maint", "", DeviceTaintEffect::NoSchedule, 10),
    };
    let r = c.add_taint_rule(rule("none", None)).unwrap();
    assert_eq!(r.devices_affected, 0);
    assert!(c.tainted_devices().is_empty());
    let r = c
        .add_taint_rule(rule("all", Some(DeviceTaintSelector::default())))
        .unwrap();
    assert_eq!(r.devices_affected, 8);
    assert_eq!(c.tainted_devices().len(), 8);
    let (_, r) = c.remove_taint_rule("all").unwrap();
    assert_eq!(r.devices_affected, 8);
    assert!(c.tainted_devices().is_empty());
}

#[test]
fn rule_taints_merge_with_slice_taints_and_apply_to_new_slices() {
    let mut c = two_nodes();
    c.taint_device(
        &dref("n1", "gpu-0"),
        taint("ecc", "fatal", DeviceTaintEffect::NoSchedule, 1),
    )
    .unwrap();
    c.add_taint_rule(DeviceTaintRule {
        name: "ecc-rule".into(),
        selector: Some(DeviceTaintSelector {
            driver: Some(DRIVER.into()),
            pool: None,
            device: Some("gpu-0".into()),
        }),
        taint: taint("ecc", "fatal", DeviceTaintEffect::NoExecute, 2),
    })
    .unwrap();
    let id = c.device_id(&dref("n1", "gpu-0")).unwrap();
    let taints = c.device_taints(id);
    assert_eq!(
        taints.len(),
        2,
        "slice taint and rule taint are both kept: {taints:?}"
    );
    // A NoExecute toleration does not cover the NoSchedule taint with the same key.
    let only_noexec = vec![tol_exists("ecc", Some(DeviceTaintEffect::NoExecute), None)];
    assert!(!c.usable(c.usable_devices(), &only_noexec).contains(id));
    let both = vec![tol_exists("ecc", None, None)];
    assert!(c.usable(c.usable_devices(), &both).contains(id));
    // A slice added later is tainted by the existing rule.
    c.add_slice(gpus("n3", 1)).unwrap();
    let id3 = c.device_id(&dref("n3", "gpu-0")).unwrap();
    assert_eq!(c.device_taints(id3).len(), 1);
}

#[test]
fn none_and_unknown_effects_never_block() {
    let mut c = two_nodes();
    c.taint_device(
        &dref("n1", "gpu-0"),
        taint("health", "degraded", DeviceTaintEffect::None, 1),
    )
    .unwrap();
    let mut s = gpus("n3", 1);
    s.devices[0].taints.push(taint(
        "future",
        "",
        DeviceTaintEffect::Unknown("NoExecuteWithPDB".into()),
        1,
    ));
    c.add_slice(s).unwrap();
    assert!(c.tainted_devices().is_empty());
    assert_eq!(c.usable(c.usable_devices(), &[]).len(), 9);
}

#[test]
fn noexecute_taint_on_allocated_device_reports_evictions() {
    let mut c = two_nodes();
    c.allocate(&dref("n1", "gpu-0"), holder("ns/plain", vec![]))
        .unwrap();
    c.allocate(
        &dref("n1", "gpu-1"),
        holder(
            "ns/patient",
            vec![tol_exists(
                "ecc",
                Some(DeviceTaintEffect::NoExecute),
                Some(300),
            )],
        ),
    )
    .unwrap();
    c.allocate(
        &dref("n1", "gpu-2"),
        holder(
            "ns/forever",
            vec![tol_exists("ecc", Some(DeviceTaintEffect::NoExecute), None)],
        ),
    )
    .unwrap();
    // QUIRK (upstream eviction controller): an empty-effect toleration allows allocation
    // but is not consulted for eviction, so this holder is evicted at once.
    c.allocate(
        &dref("n1", "gpu-3"),
        holder("ns/empty-effect", vec![tol_exists("ecc", None, None)]),
    )
    .unwrap();
    let r = c
        .add_taint_rule(DeviceTaintRule {
            name: "n1".into(),
            selector: Some(DeviceTaintSelector {
                driver: None,
                pool: Some("n1".into()),
                device: None,
            }),
            taint: taint("ecc", "", DeviceTaintEffect::NoExecute, 1_000),
        })
        .unwrap();
    let got: Vec<(String, i64, Option<Time>)> = r
        .evictions
        .iter()
        .map(|e| (e.consumer.clone(), e.delay_seconds, e.evict_at))
        .collect();
    assert_eq!(
        got,
        vec![
            ("ns/plain".into(), 0, Some(Time(1_000))),
            ("ns/empty-effect".into(), 0, Some(Time(1_000))),
            ("ns/patient".into(), 300, Some(Time(1_300))),
        ]
    );
    assert_eq!(c.pending_evictions().len(), 3);
    let (_, r) = c.remove_taint_rule("n1").unwrap();
    assert_eq!(r.cancelled.len(), 3);
    assert!(r.evictions.is_empty());
    assert!(c.pending_evictions().is_empty());
}

#[test]
fn allocations_survive_a_republished_slice() {
    let mut c = two_nodes();
    c.allocate(&dref("n1", "gpu-2"), holder("ns/a", vec![]))
        .unwrap();
    let mut s = gpus("n1", 4);
    s.pool.generation = 1;
    s.devices[2]
        .taints
        .push(taint("ecc", "", DeviceTaintEffect::NoExecute, 7));
    let r = c.replace_slice(s).unwrap();
    assert_eq!(r.devices_affected, 1);
    assert_eq!(r.evictions.len(), 1);
    let id = c.device_id(&dref("n1", "gpu-2")).unwrap();
    assert!(!c.free_devices().contains(id));
}

#[test]
fn exclusive_shared_and_admin_allocations() {
    let mut c = two_nodes();
    let mut s = gpus("n3", 1);
    s.devices[0].allow_multiple_allocations = true;
    c.add_slice(s).unwrap();
    c.allocate(&dref("n1", "gpu-0"), holder("ns/a", vec![]))
        .unwrap();
    assert!(matches!(
        c.allocate(&dref("n1", "gpu-0"), holder("ns/b", vec![])),
        Err(ClusterError::DeviceInUse { .. })
    ));
    // Admin access neither blocks nor is blocked.
    let admin = DeviceAllocation::new("monitoring/dcgm", vec![]).admin();
    c.allocate(&dref("n1", "gpu-0"), admin.clone()).unwrap();
    c.allocate(&dref("n1", "gpu-1"), admin).unwrap();
    let id1 = c.device_id(&dref("n1", "gpu-1")).unwrap();
    assert!(c.free_devices().contains(id1));
    // A shareable device takes several holders and stays free.
    c.allocate(&dref("n3", "gpu-0"), holder("ns/x", vec![]))
        .unwrap();
    c.allocate(&dref("n3", "gpu-0"), holder("ns/y", vec![]))
        .unwrap();
    assert!(
        c.free_devices()
            .contains(c.device_id(&dref("n3", "gpu-0")).unwrap())
    );
    assert!(matches!(
        c.release(&dref("n1", "gpu-0"), "ns/zzz"),
        Err(ClusterError::NotAllocated { .. })
    ));
    c.release(&dref("n1", "gpu-0"), "ns/a").unwrap();
    assert!(
        c.free_devices()
            .contains(c.device_id(&dref("n1", "gpu-0")).unwrap())
    );
}

#[test]
fn select_uses_qualified_attribute_names() {
    let mut c = Cluster::new();
    let mut s = gpus("n1", 3);
    s.devices[0]
        .attributes
        .insert("model".into(), DeviceAttribute::String("H100".into()));
    s.devices[1].attributes.insert(
        format!("{DRIVER}/model"),
        DeviceAttribute::String("H100".into()),
    );
    s.devices[2].attributes.insert(
        "other.example.com/model".into(),
        DeviceAttribute::String("H100".into()),
    );
    s.devices[2]
        .attributes
        .insert("ints".into(), DeviceAttribute::Ints(vec![1, 2]));
    c.add_slice(s).unwrap();
    let model = |name: &str| {
        c.select(&DeviceFilter::all().attribute(name, DeviceAttribute::String("H100".into())))
            .len()
    };
    assert_eq!(model(&format!("{DRIVER}/model")), 2);
    assert_eq!(model("other.example.com/model"), 1);
    assert_eq!(
        c.select(&DeviceFilter::all().attribute(format!("{DRIVER}/ints"), DeviceAttribute::Int(2)))
            .len(),
        1
    );
    assert_eq!(
        c.devices_with_attribute(&format!("{DRIVER}/model")).len(),
        2
    );
}

#[test]
fn shared_slices_are_not_counted_on_nodes() {
    let mut c = two_nodes();
    let mut s = ResourceSlice::node_local("fabric", "fabric.example.com", "x", "fabric");
    s.node_selection = SliceNodeSelection::Slice(NodeAccess::AllNodes);
    s.devices.push(Device::new("switch-0"));
    c.add_slice(s).unwrap();
    assert_eq!(c.shared_devices().len(), 1);
    assert_eq!(c.domain_counts("rack", "r1").unwrap().devices, 4);
}

#[test]
fn reachable_devices_follow_node_selectors() {
    use gangpack::{NodeSelector, NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm};
    let mut c = two_nodes();
    let mut s = ResourceSlice::node_local("rack-r1-fabric", "fabric.example.com", "x", "r1-fabric");
    s.node_selection = SliceNodeSelection::Slice(NodeAccess::NodeSelector(NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement::new(
                "rack",
                NodeSelectorOperator::In,
                vec!["r1".to_string()],
            )],
            match_fields: vec![],
        }],
    }));
    s.devices.push(Device::new("nvswitch-0"));
    c.add_slice(s).unwrap();
    let mut per_device = ResourceSlice::node_local("pd", "fabric.example.com", "x", "pd");
    per_device.node_selection = SliceNodeSelection::PerDevice;
    let mut d = Device::new("link-n2");
    d.node_access = Some(NodeAccess::NodeName("n2".into()));
    per_device.devices.push(d);
    let mut e = Device::new("link-all");
    e.node_access = Some(NodeAccess::AllNodes);
    per_device.devices.push(e);
    c.add_slice(per_device).unwrap();
    let names = |node: &str| -> Vec<String> {
        let id = c.node_id(node).unwrap();
        c.devices_reachable_from(id)
            .iter()
            .map(|d| c.device(d).unwrap().device_ref().to_string())
            .collect()
    };
    assert_eq!(
        names("n1"),
        vec![
            "gpu.example.com/n1/gpu-0",
            "gpu.example.com/n1/gpu-1",
            "gpu.example.com/n1/gpu-2",
            "gpu.example.com/n1/gpu-3",
            "fabric.example.com/r1-fabric/nvswitch-0",
            "fabric.example.com/pd/link-all",
        ]
    );
    let n2 = names("n2");
    assert!(
        n2.contains(&"fabric.example.com/pd/link-n2".to_string())
            && !n2.iter().any(|d| d.contains("nvswitch"))
    );
}

// ---------------------------------------------------------------- validation

fn field_of(err: ClusterError) -> Vec<String> {
    match err {
        ClusterError::Invalid(errs) => errs.iter().map(ToString::to_string).collect(),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn slice_limits_are_enforced_with_object_and_field() {
    let mut c = Cluster::new();
    let ok = gpus("n1", 128);
    c.add_slice(ok).unwrap();
    let too_many = gpus("n2", 129);
    let e = field_of(c.add_slice(too_many).unwrap_err());
    assert_eq!(
        e,
        vec!["ResourceSlice \"n2-gpus\": spec.devices: too many: 129, must have at most 128 items"]
    );
    // With a taint, the limit is 64.
    let mut tainted = gpus("n3", 65);
    tainted.devices[7]
        .taints
        .push(taint("k", "", DeviceTaintEffect::NoSchedule, 0));
    let e = field_of(c.add_slice(tainted).unwrap_err());
    assert_eq!(
        e,
        vec!["ResourceSlice \"n3-gpus\": spec.devices: too many: 65, must have at most 64 items"]
    );
}

#[test]
fn device_limits_are_enforced() {
    let mut c = Cluster::new();
    let mut s = gpus("n1", 2);
    for i in 0..33 {
        s.devices[0]
            .attributes
            .insert(format!("a{i}"), DeviceAttribute::Int(i));
    }
    for i in 0..17 {
        s.devices[1].taints.push(taint(
            &format!("k{i}"),
            "",
            DeviceTaintEffect::NoSchedule,
            0,
        ));
    }
    s.devices[1].name = "GPU_1".into();
    let e = field_of(c.add_slice(s).unwrap_err()).join("\n");
    assert!(
        e.contains("spec.devices[0].attributes: too many: 33, must have at most 32 items"),
        "{e}"
    );
    assert!(
        e.contains("spec.devices[1].taints: too many: 17, must have at most 16 items"),
        "{e}"
    );
    assert!(
        e.contains("spec.devices[1].name: invalid value \"GPU_1\""),
        "{e}"
    );
}

#[test]
fn failed_mutations_leave_the_cluster_unchanged() {
    let mut c = two_nodes();
    c.allocate(&dref("n1", "gpu-0"), holder("ns/a", vec![]))
        .unwrap();
    c.add_taint_rule(DeviceTaintRule {
        name: "r".into(),
        selector: Some(DeviceTaintSelector::default()),
        taint: taint("x", "", DeviceTaintEffect::NoSchedule, 0),
    })
    .unwrap();
    let before = observe(&c);
    // A slice that already exists.
    assert!(matches!(
        c.add_slice(gpus("n1", 2)),
        Err(ClusterError::AlreadyExists(_))
    ));
    // An invalid slice (bad driver name).
    let mut bad = gpus("n9", 2);
    bad.driver = "Not A Driver".into();
    assert!(c.add_slice(bad).is_err());
    // A replacement that changes the immutable pool name.
    let mut moved = gpus("n1", 2);
    moved.pool.name = "elsewhere".into();
    assert!(c.replace_slice(moved).is_err());
    // A taint that would push a 65-device slice over the tainted limit.
    c.add_slice(gpus("big", 65)).unwrap();
    let before_big = observe(&c);
    let e = c
        .taint_device(
            &dref("big", "gpu-3"),
            taint("k", "", DeviceTaintEffect::NoExecute, 0),
        )
        .unwrap_err();
    assert!(e.to_string().contains("at most 64"), "{e}");
    assert_eq!(observe(&c), before_big);
    c.remove_slice("big-gpus").unwrap();
    // A 17th taint on one device.
    for i in 0..16 {
        c.taint_device(
            &dref("n2", "gpu-0"),
            taint(&format!("k{i}"), "", DeviceTaintEffect::None, 0),
        )
        .unwrap();
    }
    let before_taints = observe(&c);
    assert!(
        c.taint_device(
            &dref("n2", "gpu-0"),
            taint("k16", "", DeviceTaintEffect::None, 0)
        )
        .is_err()
    );
    assert_eq!(observe(&c), before_taints);
    for i in 0..16 {
        c.untaint_device(&dref("n2", "gpu-0"), &format!("k{i}"), None)
            .unwrap();
    }
    // An invalid rule, a duplicate rule, a missing rule.
    let mut bad_rule = c.taint_rule("r").unwrap().clone();
    bad_rule.taint.key = "bad key".into();
    assert!(c.replace_taint_rule(bad_rule).is_err());
    assert!(matches!(
        c.add_taint_rule(c.taint_rule("r").unwrap().clone()),
        Err(ClusterError::AlreadyExists(_))
    ));
    assert!(c.remove_taint_rule("missing").is_err());
    // An invalid node, a double allocation, an unknown device.
    assert!(c.add_node(gangpack::Node::new("UPPER")).is_err());
    assert!(c.replace_node(node("nope", "r1")).is_err());
    assert!(
        c.allocate(&dref("n1", "gpu-0"), holder("ns/b", vec![]))
            .is_err()
    );
    assert!(matches!(
        c.allocate(&dref("n1", "gpu-99"), holder("ns/b", vec![])),
        Err(ClusterError::DeviceNotFound(_))
    ));
    assert_eq!(observe(&c), before);
}

#[test]
fn node_validation_names_fields() {
    let mut c = Cluster::new();
    let n = gangpack::Node::new("n1")
        .with_label("bad key!", "v")
        .with_allocatable("cpu", Quantity::from_int(-1));
    let e = match c.add_node(n).unwrap_err() {
        ClusterError::Invalid(errs) => errs,
        other => panic!("{other:?}"),
    };
    assert!(
        e.iter()
            .all(|e| e.object.kind == ObjectKind::Node && e.object.name == "n1")
    );
    let fields: Vec<&str> = e.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "metadata.labels[\"bad key!\"]",
            "status.allocatable[\"cpu\"]"
        ]
    );
    assert!(matches!(e[1].problem, Problem::Invalid { .. }));
}

#[test]
fn shares_of_a_shareable_device_respect_its_capacity() {
    let mut c = Cluster::new();
    let mut s = gpus("n1", 1);
    s.devices[0].allow_multiple_allocations = true;
    s.devices[0]
        .capacity
        .insert("memory".into(), Quantity::parse("80Gi").unwrap().into());
    c.add_slice(s).unwrap();
    let share = |consumer: &str, id: &str, mem: &str| {
        let mut a = DeviceAllocation::new(consumer, vec![]);
        a.share_id = Some(id.into());
        a.consumed_capacity
            .insert("memory".into(), Quantity::parse(mem).unwrap());
        a
    };
    let gpu = dref("n1", "gpu-0");
    c.allocate(&gpu, share("ns/a", "s1", "40Gi")).unwrap();
    c.allocate(&gpu, share("ns/a", "s2", "30Gi")).unwrap();
    let err = c.allocate(&gpu, share("ns/b", "s3", "20Gi")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "device gpu.example.com/n1/gpu-0: capacity memory: 20Gi requested, 10Gi available"
    );
    assert_eq!(
        c.consumed_capacity(&gpu)["memory"],
        Quantity::parse("70Gi").unwrap()
    );
    assert_eq!(c.release(&gpu, "ns/a").unwrap().len(), 2);
    c.allocate(&gpu, share("ns/b", "s3", "80Gi")).unwrap();
}

#[test]
fn partitions_consume_shared_counters() {
    use gangpack::CounterSet;
    let mut c = Cluster::new();
    let mut counters = ResourceSlice::node_local("n1-counters", DRIVER, "n1", "n1");
    counters.pool.resource_slice_count = 2;
    counters.shared_counters.push(CounterSet {
        name: "gpu-0".into(),
        counters: [("memory".to_string(), Quantity::parse("80Gi").unwrap())].into(),
    });
    let mut parts = ResourceSlice::node_local("n1-parts", DRIVER, "n1", "n1");
    parts.pool.resource_slice_count = 2;
    for (name, mem) in [
        ("gpu-0-full", "80Gi"),
        ("gpu-0-mig-a", "40Gi"),
        ("gpu-0-mig-b", "40Gi"),
    ] {
        let mut d = Device::new(name);
        d.consumes_counters.push(DeviceCounterConsumption {
            counter_set: "gpu-0".into(),
            counters: [("memory".to_string(), Quantity::parse(mem).unwrap())].into(),
        });
        parts.devices.push(d);
    }
    c.add_slice(counters).unwrap();
    c.add_slice(parts).unwrap();
    assert!(c.pool_status(DRIVER, "n1").unwrap().is_usable());
    c.allocate(&dref("n1", "gpu-0-mig-a"), holder("ns/a", vec![]))
        .unwrap();
    let err = c
        .allocate(&dref("n1", "gpu-0-full"), holder("ns/b", vec![]))
        .unwrap_err();
    assert!(matches!(err, ClusterError::CountersExhausted(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "device gpu.example.com/n1/gpu-0-full: counter gpu-0/memory: 80Gi needed, 40Gi available"
    );
    c.allocate(&dref("n1", "gpu-0-mig-b"), holder("ns/b", vec![]))
        .unwrap();
    let left = c.counters_available(DRIVER, "n1");
    assert_eq!(
        left[&("gpu-0".to_string(), "memory".to_string())],
        Quantity::ZERO
    );
    // Admin access does not consume counters.
    c.allocate(&dref("n1", "gpu-0-full"), holder("mon/x", vec![]).admin())
        .unwrap();
    assert_eq!(
        c.counters_available(DRIVER, "n1")[&("gpu-0".to_string(), "memory".to_string())],
        Quantity::ZERO
    );
}

#[test]
fn node_scalar_reservations() {
    let mut c = Cluster::new();
    c.add_node(
        gangpack::Node::new("n1")
            .with_allocatable("cpu", Quantity::parse("8").unwrap())
            .with_allocatable("memory", Quantity::parse("64Gi").unwrap())
            .with_allocatable("pods", Quantity::from_int(110)),
    )
    .unwrap();
    let req = |cpu: &str, mem: &str| -> std::collections::BTreeMap<String, Quantity> {
        [
            ("cpu".to_string(), Quantity::parse(cpu).unwrap()),
            ("memory".to_string(), Quantity::parse(mem).unwrap()),
            ("pods".to_string(), Quantity::from_int(1)),
        ]
        .into()
    };
    c.reserve_node_resources("n1", "ns/p1", req("6", "16Gi"))
        .unwrap();
    let before = observe(&c);
    let err = c
        .reserve_node_resources("n1", "ns/p2", req("2500m", "60Gi"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "node n1: insufficient cpu: 2500m requested, 2 free, memory: 60Gi requested, 48Gi free"
    );
    assert_eq!(observe(&c), before);
    // A resource the node does not advertise has nothing free.
    let mut gpu = req("1", "1Gi");
    gpu.insert("nvidia.com/gpu".into(), Quantity::from_int(1));
    assert_eq!(c.node_shortfalls("n1", &gpu).len(), 1);
    assert!(matches!(
        c.reserve_node_resources("n1", "ns/p1", req("1", "1Gi")),
        Err(ClusterError::AlreadyReserved { .. })
    ));
    assert!(
        c.reserve_node_resources("nope", "ns/p9", req("1", "1Gi"))
            .is_err()
    );
    c.reserve_node_resources("n1", "ns/p2", req("2", "48Gi"))
        .unwrap();
    assert_eq!(c.node_free_resources("n1").unwrap()["cpu"], Quantity::ZERO);
    c.release_node_resources("n1", "ns/p1").unwrap();
    assert_eq!(
        c.node_free_resources("n1").unwrap()["cpu"],
        Quantity::parse("6").unwrap()
    );
    assert!(c.release_node_resources("n1", "ns/p1").is_err());
}
