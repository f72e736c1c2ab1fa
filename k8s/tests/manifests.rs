//! `output::scenario_manifests`: a scenario written as Kubernetes objects and loaded
//! back (`load_str` + `Snapshot::build`) gives the same model objects, field by field;
//! the kinds the scheduler does not keep (Namespaces, PriorityClasses, Workloads) are
//! read back through their `k8s-openapi` types.

use std::collections::BTreeMap;

use gangpack::testing::{Namespace, Scenario};
use gangpack::{
    AllocationConfigSource, AllocationMode, AllocationResult, CapacityRequestPolicy,
    CapacityRequestPolicyRange, ClaimSource, ConstraintKind, CounterSet, Device,
    DeviceAllocationConfiguration, DeviceAttribute, DeviceCapacity, DeviceClaimConfiguration,
    DeviceClass, DeviceConstraint, DeviceCounterConsumption, DeviceRequest,
    DeviceRequestAllocationResult, DeviceSelector, DeviceSubRequest, DeviceTaint,
    DeviceTaintEffect, DeviceTaintRule, DeviceTaintSelector, DeviceToleration,
    DeviceTolerationOperator, DisruptionMode, ExactDeviceRequest, NodeAccess, NodeSelector,
    NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm, OpaqueDeviceConfiguration,
    Pod, PodGroup, PodGroupResourceClaim, PodGroupTemplate, PodResourceClaim, PreemptionPolicy,
    PriorityClass, Quantity, ResourceClaim, ResourcePool, ResourceSlice, SchedulingPolicy,
    SliceNodeSelection, Taint, TaintEffect, Time, Toleration, TolerationOperator,
    TopologyConstraint, Workload, WorkloadReference,
};
use gangpack_k8s::output::{list, scenario_manifests};
use gangpack_k8s::{BuildOptions, Kind, Snapshot, load_str};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::{v1 as sched_v1, v1beta1 as sched};
use serde_json::Value;

const GPU: &str = "gpu.example.com";
const NIC: &str = "nic.example.com";
/// 2026-08-26T00:00:00Z.
const T0: i64 = 1_787_702_400;

fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("a quantity")
}

fn qs(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs.iter().map(|(k, v)| ((*k).into(), q(v))).collect()
}

fn rack(r: &str) -> NodeSelector {
    NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement::new(
                "example.com/rack",
                NodeSelectorOperator::In,
                vec![r.to_owned()],
            )],
            match_fields: Vec::new(),
        }],
    }
}

fn claim_ref(name: &str, claim: &str) -> PodResourceClaim {
    PodResourceClaim {
        name: name.into(),
        source: ClaimSource::ClaimName(claim.into()),
    }
}

// ------------------------------------------------------------------------- the scenario

fn nodes() -> Vec<gangpack::Node> {
    let mut a = gangpack::Node::new("node-a")
        .with_label("example.com/rack", "r1")
        .with_label("kubernetes.io/hostname", "node-a")
        .with_allocatable("cpu", q("32"))
        .with_allocatable("memory", q("128Gi"))
        .with_allocatable("pods", q("110"))
        .with_allocatable("example.com/fpga", q("2"))
        .with_allocatable("hugepages-2Mi", q("1Gi"))
        .with_taint(Taint::new(
            "example.com/maintenance",
            "soon",
            TaintEffect::NoSchedule,
        ))
        .with_taint(Taint::new(
            "example.com/slow",
            "",
            TaintEffect::PreferNoSchedule,
        ));
    a.taints[0].time_added = Some(Time(T0 - 600));
    let mut b = gangpack::Node::new("node-b")
        .with_label("example.com/rack", "r2")
        .with_allocatable("cpu", q("500m"))
        .with_allocatable("memory", q("1.5Gi"));
    b.unschedulable = true;
    let c = gangpack::Node::new("node-c")
        .with_label("example.com/rack", "r2")
        .with_allocatable("cpu", q("16"))
        .with_allocatable("memory", q("64Gi"));
    vec![a, b, c]
}

fn classes() -> Vec<DeviceClass> {
    let mut gpu = DeviceClass::with_cel("gpu", format!("device.driver == \"{GPU}\""));
    gpu.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].healthy".into(),
    });
    gpu.extended_resource_name = Some("example.com/gpu".into());
    gpu.config.push(OpaqueDeviceConfiguration {
        driver: GPU.into(),
        parameters: r#"{"mode":"fast","tiers":[1,2]}"#.into(),
    });
    let nic = DeviceClass {
        name: "nic".into(),
        ..DeviceClass::default()
    };
    vec![gpu, nic]
}

fn gpu_device(name: &str) -> Device {
    let mut d = Device::new(name)
        .with_attribute("model", DeviceAttribute::String("H100".into()))
        .with_attribute("index", DeviceAttribute::Int(0))
        .with_attribute("healthy", DeviceAttribute::Bool(true))
        .with_attribute("driverVersion", DeviceAttribute::Version("1.2.3".into()))
        .with_capacity("memory", q("80Gi"));
    d.attributes.insert(
        "example.com/links".into(),
        DeviceAttribute::Ints(vec![1, 3]),
    );
    d.attributes.insert(
        "example.com/flags".into(),
        DeviceAttribute::Bools(vec![true, false]),
    );
    d.attributes.insert(
        "example.com/peers".into(),
        DeviceAttribute::Strings(vec!["gpu-1".into()]),
    );
    d.attributes.insert(
        "example.com/firmware".into(),
        DeviceAttribute::Versions(vec!["1.0.0".into(), "2.0.0-rc.1".into()]),
    );
    d
}

fn slices() -> Vec<ResourceSlice> {
    // node-a: an exclusive GPU with a driver taint, and a shareable one.
    let mut gpu0 = gpu_device("gpu-0").with_taint(
        DeviceTaint::new("example.com/ecc", "high", DeviceTaintEffect::NoSchedule)
            .added_at(Time(T0 - 300)),
    );
    gpu0.attributes
        .insert("index".into(), DeviceAttribute::Int(0));
    let mut gpu1 = gpu_device("gpu-1");
    gpu1.attributes
        .insert("index".into(), DeviceAttribute::Int(1));
    gpu1.allow_multiple_allocations = true;
    gpu1.capacity.insert(
        "memory".into(),
        DeviceCapacity {
            value: q("80Gi"),
            request_policy: Some(CapacityRequestPolicy {
                default: Some(q("10Gi")),
                valid_values: Vec::new(),
                valid_range: Some(CapacityRequestPolicyRange {
                    min: q("10Gi"),
                    max: Some(q("80Gi")),
                    step: Some(q("10Gi")),
                }),
            }),
        },
    );
    gpu1.capacity.insert(
        "cores".into(),
        DeviceCapacity {
            value: q("4"),
            request_policy: Some(CapacityRequestPolicy {
                default: Some(q("1")),
                valid_values: vec![q("1"), q("2"), q("4")],
                valid_range: None,
            }),
        },
    );
    let mut node_a = ResourceSlice::node_local("node-a-gpu", GPU, "node-a", "node-a")
        .with_device(gpu0)
        .with_device(gpu1);
    node_a.pool.generation = 3;

    // node-c: a partitionable GPU, counters and partitions in two slices of one pool.
    let counters = ResourceSlice {
        name: "node-c-counters".into(),
        driver: GPU.into(),
        pool: ResourcePool {
            name: "node-c".into(),
            generation: 1,
            resource_slice_count: 2,
        },
        node_selection: SliceNodeSelection::Slice(NodeAccess::NodeName("node-c".into())),
        devices: Vec::new(),
        shared_counters: vec![CounterSet {
            name: "gpu-0-counters".into(),
            counters: qs(&[("memory", "80Gi"), ("sm", "8")]),
        }],
    };
    let part = |name: &str| {
        let mut d = Device::new(name)
            .with_attribute("healthy", DeviceAttribute::Bool(true))
            .with_capacity("memory", q("40Gi"));
        d.consumes_counters.push(DeviceCounterConsumption {
            counter_set: "gpu-0-counters".into(),
            counters: qs(&[("memory", "40Gi"), ("sm", "4")]),
        });
        d
    };
    let parts = ResourceSlice {
        name: "node-c-parts".into(),
        devices: vec![part("part-0"), part("part-1")],
        shared_counters: Vec::new(),
        ..counters.clone()
    };

    // Network-attached NICs: by selector, everywhere, and per device.
    let fabric = ResourceSlice {
        name: "fabric-r2".into(),
        driver: NIC.into(),
        pool: ResourcePool::single("fabric-r2"),
        node_selection: SliceNodeSelection::Slice(NodeAccess::NodeSelector(rack("r2"))),
        devices: vec![Device::new("nic-0")],
        shared_counters: Vec::new(),
    };
    let global = ResourceSlice {
        name: "global".into(),
        node_selection: SliceNodeSelection::Slice(NodeAccess::AllNodes),
        pool: ResourcePool::single("global"),
        devices: vec![Device::new("nic-0"), Device::new("nic-1")],
        ..fabric.clone()
    };
    let mut d0 = Device::new("d0");
    d0.node_access = Some(NodeAccess::NodeName("node-b".into()));
    let mut d1 = Device::new("d1");
    d1.node_access = Some(NodeAccess::AllNodes);
    d1.binds_to_node = true;
    d1.binding_conditions = vec!["example.com/attached".into()];
    d1.binding_failure_conditions = vec!["example.com/attach-failed".into()];
    let mut d2 = Device::new("d2");
    d2.node_access = Some(NodeAccess::NodeSelector(NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: Vec::new(),
            match_fields: vec![NodeSelectorRequirement::new(
                "metadata.name",
                NodeSelectorOperator::In,
                vec!["node-c".to_owned()],
            )],
        }],
    }));
    let per_device = ResourceSlice {
        name: "per-device".into(),
        node_selection: SliceNodeSelection::PerDevice,
        pool: ResourcePool::single("per-device"),
        devices: vec![d0, d1, d2],
        ..fabric.clone()
    };
    vec![node_a, counters, parts, fabric, global, per_device]
}

fn taint_rules() -> Vec<DeviceTaintRule> {
    vec![
        DeviceTaintRule {
            name: "drain-gpu-1".into(),
            selector: Some(DeviceTaintSelector {
                driver: Some(GPU.into()),
                pool: Some("node-a".into()),
                device: Some("gpu-1".into()),
            }),
            taint: DeviceTaint::new("example.com/drain", "", DeviceTaintEffect::NoSchedule)
                .added_at(Time(T0 - 100)),
        },
        DeviceTaintRule {
            name: "watch-nics".into(),
            selector: Some(DeviceTaintSelector {
                driver: Some(NIC.into()),
                pool: None,
                device: None,
            }),
            taint: DeviceTaint::new("example.com/watch", "yes", DeviceTaintEffect::None),
        },
    ]
}

fn priority_classes() -> Vec<PriorityClass> {
    let high = PriorityClass::new("high", 1000);
    let mut batch = PriorityClass::new("batch", 10);
    batch.preemption_policy = PreemptionPolicy::Never;
    let mut default = PriorityClass::new("standard", 0);
    default.global_default = true;
    vec![high, batch, default]
}

fn toleration(key: &str) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::Exists,
        value: String::new(),
        effect: Some(DeviceTaintEffect::NoSchedule),
        toleration_seconds: None,
    }
}

fn claims() -> Vec<ResourceClaim> {
    // Allocated, held by the bound pod trainer-0: one GPU of node-a.
    let mut gpus = ResourceClaim::new("ml", "trainer-0-gpus");
    let mut exact = ExactDeviceRequest::new("gpu");
    exact.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].model == \"H100\"".into(),
    });
    exact.tolerations.push(toleration("example.com/ecc"));
    exact.capacity = qs(&[("memory", "40Gi")]);
    gpus.spec
        .requests
        .push(DeviceRequest::exactly("gpus", exact));
    gpus.spec.constraints.push(DeviceConstraint {
        requests: vec!["gpus".into()],
        kind: ConstraintKind::MatchAttribute("gpu.example.com/model".into()),
    });
    gpus.spec.config.push(DeviceClaimConfiguration {
        requests: vec!["gpus".into()],
        opaque: OpaqueDeviceConfiguration {
            driver: GPU.into(),
            parameters: r#"{"sharing":{"strategy":"TimeSlicing"}}"#.into(),
        },
    });
    gpus.allocation = Some(AllocationResult {
        devices: vec![DeviceRequestAllocationResult {
            request: "gpus".into(),
            driver: GPU.into(),
            pool: "node-a".into(),
            device: "gpu-0".into(),
            tolerations: vec![toleration("example.com/ecc")],
            ..Default::default()
        }],
        config: vec![
            DeviceAllocationConfiguration {
                source: AllocationConfigSource::FromClass,
                requests: Vec::new(),
                opaque: OpaqueDeviceConfiguration {
                    driver: GPU.into(),
                    parameters: r#"{"mode":"fast","tiers":[1,2]}"#.into(),
                },
            },
            DeviceAllocationConfiguration {
                source: AllocationConfigSource::FromClaim,
                requests: vec!["gpus".into()],
                opaque: OpaqueDeviceConfiguration {
                    driver: GPU.into(),
                    parameters: r#"{"sharing":{"strategy":"TimeSlicing"}}"#.into(),
                },
            },
        ],
        node_selector: Some(NodeSelector::single_node("node-a")),
    });

    // Allocated, a share of gpu-1 (consumable capacity), held by the bound pod
    // trainer-0 too.
    let mut share = ResourceClaim::new("ml", "trainer-0-share");
    let mut exact = ExactDeviceRequest::new("gpu");
    exact.capacity = qs(&[("memory", "20Gi")]);
    share
        .spec
        .requests
        .push(DeviceRequest::exactly("slice", exact));
    share.allocation = Some(AllocationResult {
        devices: vec![DeviceRequestAllocationResult {
            request: "slice".into(),
            driver: GPU.into(),
            pool: "node-a".into(),
            device: "gpu-1".into(),
            share_id: Some(gangpack::share_id(
                "ml/trainer-0-share",
                "slice",
                "gpu-1",
                0,
            )),
            consumed_capacity: qs(&[("memory", "20Gi"), ("cores", "1")]),
            ..Default::default()
        }],
        config: Vec::new(),
        node_selector: Some(NodeSelector::single_node("node-a")),
    });

    // Allocated, the PodGroup's claim (a NIC usable everywhere).
    let mut group = ResourceClaim::new("ml", "trainer-fabric");
    group.spec.requests.push(DeviceRequest::exactly(
        "nic",
        ExactDeviceRequest::new("nic"),
    ));
    group.allocation = Some(AllocationResult {
        devices: vec![DeviceRequestAllocationResult {
            request: "nic".into(),
            driver: NIC.into(),
            pool: "global".into(),
            device: "nic-0".into(),
            ..Default::default()
        }],
        ..Default::default()
    });

    // Pending: admin access to every NIC, in a namespace that admits it.
    let mut admin = ResourceClaim::new("ml", "monitor");
    let mut exact = ExactDeviceRequest::new("nic").with_mode(AllocationMode::All);
    exact.admin_access = true;
    admin
        .spec
        .requests
        .push(DeviceRequest::exactly("all-nics", exact));

    // Pending: firstAvailable with every subrequest field, and a distinct constraint.
    let mut choice = ResourceClaim::new("ml", "eval-0-choice");
    let mut big = DeviceSubRequest::new("big", "gpu").with_mode(AllocationMode::ExactCount(2));
    big.selectors.push(DeviceSelector {
        cel: "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"
            .into(),
    });
    big.tolerations.push(DeviceToleration {
        key: "example.com/drain".into(),
        operator: DeviceTolerationOperator::Equal,
        value: String::new(),
        effect: None,
        toleration_seconds: Some(30),
    });
    big.capacity = qs(&[("memory", "10Gi")]);
    let small = DeviceSubRequest::new("small", "gpu");
    choice
        .spec
        .requests
        .push(DeviceRequest::first_available("accel", vec![big, small]));
    choice.spec.requests.push(DeviceRequest::exactly(
        "nic",
        ExactDeviceRequest::new("nic"),
    ));
    choice.spec.constraints.push(DeviceConstraint {
        requests: vec!["accel/big".into()],
        kind: ConstraintKind::DistinctAttribute("gpu.example.com/index".into()),
    });
    choice.spec.config.push(DeviceClaimConfiguration {
        requests: Vec::new(),
        opaque: OpaqueDeviceConfiguration {
            driver: NIC.into(),
            parameters: r#"{"mtu":9000}"#.into(),
        },
    });
    vec![gpus, share, group, admin, choice]
}

fn workloads() -> Vec<Workload> {
    let mut workers = PodGroupTemplate::new("workers", SchedulingPolicy::Gang { min_count: 2 });
    workers.priority_class_name = Some("high".into());
    workers.disruption_mode = DisruptionMode::All;
    workers
        .topology
        .push(TopologyConstraint::new("example.com/rack"));
    workers.resource_claims.push(PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("trainer-fabric".into()),
    });
    let mut eval = PodGroupTemplate::new("eval", SchedulingPolicy::Basic);
    eval.priority = Some(10);
    eval.preemption_policy = Some(PreemptionPolicy::Never);
    let mut w = Workload::new("ml", "trainer");
    w.pod_group_templates = vec![workers, eval];
    vec![w]
}

fn groups() -> Vec<PodGroup> {
    let mut trainer = PodGroup::new("ml", "trainer", SchedulingPolicy::Gang { min_count: 2 });
    trainer.workload_ref = Some(WorkloadReference::new("trainer", "workers"));
    // Resolved from the class at load.
    trainer.priority_class_name = Some("high".into());
    trainer.disruption_mode = DisruptionMode::All;
    trainer
        .topology
        .push(TopologyConstraint::new("example.com/rack"));
    trainer.resource_claims.push(PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("trainer-fabric".into()),
    });
    trainer.creation = Time(T0 - 3600);
    let mut eval = PodGroup::new("ml", "eval", SchedulingPolicy::Basic);
    eval.workload_ref = Some(WorkloadReference::new("trainer", "eval"));
    eval.priority = Some(10);
    eval.preemption_policy = Some(PreemptionPolicy::Never);
    vec![trainer, eval]
}

fn pods() -> Vec<Pod> {
    let member = |name: &str| {
        let mut p = Pod::new("ml", name);
        p.priority = 1000;
        p.scheduling_group = Some("trainer".into());
        p.resource_claims
            .push(claim_ref("fabric", "trainer-fabric"));
        p.requests = qs(&[("cpu", "4"), ("memory", "16Gi"), ("example.com/fpga", "1")]);
        p.creation = Time(T0 - 1800);
        p
    };
    let mut t0 = member("trainer-0");
    t0.node_name = Some("node-a".into());
    t0.resource_claims.push(claim_ref("gpus", "trainer-0-gpus"));
    t0.resource_claims
        .push(claim_ref("share", "trainer-0-share"));
    t0.requests.insert("hugepages-2Mi".into(), q("512Mi"));
    t0.tolerations.push(Toleration {
        key: "example.com/maintenance".into(),
        operator: TolerationOperator::Equal,
        value: "soon".into(),
        effect: Some(TaintEffect::NoSchedule),
        toleration_seconds: None,
    });
    let mut t1 = member("trainer-1");
    t1.node_selector
        .insert("example.com/rack".into(), "r1".into());
    t1.required_node_affinity = Some(NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![
                NodeSelectorRequirement::new(
                    "example.com/rack",
                    NodeSelectorOperator::NotIn,
                    vec!["r9".to_owned()],
                ),
                NodeSelectorRequirement::new(
                    "example.com/cores",
                    NodeSelectorOperator::Gt,
                    vec!["8".to_owned()],
                ),
                NodeSelectorRequirement::new(
                    "example.com/broken",
                    NodeSelectorOperator::DoesNotExist,
                    Vec::<String>::new(),
                ),
            ],
            match_fields: vec![NodeSelectorRequirement::new(
                "metadata.name",
                NodeSelectorOperator::NotIn,
                vec!["node-b".to_owned()],
            )],
        }],
    });
    t1.tolerations.push(Toleration {
        key: "example.com/slow".into(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: None,
        toleration_seconds: None,
    });
    t1.tolerations.push(Toleration {
        key: String::new(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: Some(TaintEffect::NoExecute),
        toleration_seconds: Some(300),
    });
    let mut e0 = Pod::new("ml", "eval-0");
    e0.priority = 10;
    e0.preemption_policy = PreemptionPolicy::Never;
    e0.scheduling_group = Some("eval".into());
    e0.resource_claims.push(claim_ref("accel", "eval-0-choice"));
    e0.requests = qs(&[("cpu", "250m")]);
    let mut monitor = Pod::new("ml", "monitor");
    monitor.resource_claims.push(claim_ref("nics", "monitor"));
    // No class has priority 7: spec.priority only.
    monitor.priority = 7;
    // An empty scheduler name reads as the default scheduler.
    let mut solo = Pod::new("default", "solo");
    solo.scheduler_name = String::new();
    solo.requests = qs(&[
        ("cpu", "1"),
        ("memory", "1Gi"),
        ("ephemeral-storage", "10Gi"),
    ]);
    solo.creation = Time(T0);
    vec![t0, t1, e0, monitor, solo]
}

fn scenario() -> Scenario {
    Scenario {
        namespaces: vec![
            Namespace {
                name: "ml".into(),
                labels: [("resource.kubernetes.io/admin-access".into(), "true".into())]
                    .into_iter()
                    .collect(),
            },
            Namespace {
                name: "default".into(),
                labels: BTreeMap::new(),
            },
        ],
        nodes: nodes(),
        device_classes: classes(),
        slices: slices(),
        taint_rules: taint_rules(),
        priority_classes: priority_classes(),
        claims: claims(),
        workloads: workloads(),
        groups: groups(),
        pods: pods(),
    }
}

// ------------------------------------------------------------------------- round trip

fn text(scenario: &Scenario) -> String {
    serde_norway::to_string(&list(scenario_manifests(scenario))).expect("YAML")
}

fn build(text: &str) -> Snapshot {
    let loaded = load_str(text, "gen.yaml").unwrap_or_else(|e| panic!("{e}"));
    Snapshot::build(loaded, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn sorted<T: Clone>(items: impl Iterator<Item = T>, key: impl Fn(&T) -> String) -> Vec<T> {
    let mut v: Vec<T> = items.collect();
    v.sort_by_key(|x| key(x));
    v
}

/// The group as the scheduler holds it: an unset priority resolved from the class.
fn resolved(mut g: PodGroup, classes: &[PriorityClass]) -> PodGroup {
    if g.priority.is_none() {
        let (value, policy) = gangpack::resolve_priority(classes, g.priority_class_name.as_deref())
            .expect("the class is in the scenario");
        g.priority = Some(value);
        g.preemption_policy.get_or_insert(policy);
    }
    g
}

/// Every model object the scheduler keeps, compared with the scenario's.
fn assert_round_trip(s: &Scenario, snap: &Snapshot) {
    let sched = &snap.scheduler;
    let cluster = sched.cluster();
    let by_name = |n: &str| n.to_owned();
    assert_eq!(
        sorted(cluster.nodes().cloned(), |n| by_name(&n.name)),
        sorted(s.nodes.iter().cloned(), |n| by_name(&n.name)),
        "nodes"
    );
    assert_eq!(
        sorted(cluster.classes().cloned(), |c| by_name(&c.name)),
        sorted(s.device_classes.iter().cloned(), |c| by_name(&c.name)),
        "device classes"
    );
    assert_eq!(
        sorted(cluster.slices().cloned(), |x| by_name(&x.name)),
        sorted(s.slices.iter().cloned(), |x| by_name(&x.name)),
        "slices"
    );
    // A rule's taint without timeAdded is stamped with the clock when it is added (as
    // the API server sets it on create).
    let rules = s.taint_rules.iter().cloned().map(|mut r| {
        r.taint.time_added.get_or_insert(sched.now());
        r
    });
    assert_eq!(
        sorted(cluster.taint_rules().cloned(), |r| by_name(&r.name)),
        sorted(rules, |r| by_name(&r.name)),
        "taint rules"
    );
    let ns_name = |ns: &str, n: &str| format!("{ns}/{n}");
    assert_eq!(
        sorted(sched.claims().cloned(), |c| ns_name(&c.namespace, &c.name)),
        sorted(s.claims.iter().cloned(), |c| ns_name(&c.namespace, &c.name)),
        "claims"
    );
    for g in &s.groups {
        let want = resolved(g.clone(), &s.priority_classes);
        assert_eq!(
            sched.group(&ns_name(&g.namespace, &g.name)),
            Some(&want),
            "PodGroup {}/{}",
            g.namespace,
            g.name
        );
    }
    assert_eq!(
        sorted(sched.pods().cloned(), |p| ns_name(&p.namespace, &p.name)),
        sorted(s.pods.iter().cloned(), |p| ns_name(&p.namespace, &p.name)),
        "pods"
    );
    for p in s.pods.iter().filter(|p| p.node_name.is_some()) {
        let key = ns_name(&p.namespace, &p.name);
        assert_eq!(
            sched.binding(&key).map(|b| b.node.as_str()),
            p.node_name.as_deref(),
            "{key} is bound"
        );
    }
    assert!(snap.generated.is_empty(), "nothing generated");
    assert!(snap.waiting.is_empty(), "nothing waits: {:?}", snap.waiting);
}

fn raw<'s>(snap: &'s Snapshot, kind: Kind, ns: Option<&str>, name: &str) -> &'s Value {
    &snap
        .object(kind, ns, name)
        .unwrap_or_else(|| panic!("{kind} {name} is loaded"))
        .raw
}

fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

#[test]
fn every_field_round_trips() {
    let s = scenario();
    let text = text(&s);
    let snap = build(&text);
    assert_round_trip(&s, &snap);
    assert!(snap.warnings.is_empty(), "no warnings: {:?}", snap.warnings);
}

#[test]
fn namespaces_priority_classes_and_workloads_read_back() {
    let s = scenario();
    let snap = build(&text(&s));
    for n in &s.namespaces {
        let ns: core::Namespace = typed(raw(&snap, Kind::Namespace, None, &n.name));
        assert_eq!(
            ns.metadata.labels.unwrap_or_default(),
            n.labels,
            "{}",
            n.name
        );
    }
    for c in &s.priority_classes {
        let pc: sched_v1::PriorityClass = typed(raw(&snap, Kind::PriorityClass, None, &c.name));
        assert_eq!(pc.value, Some(c.value));
        assert_eq!(pc.global_default.unwrap_or(false), c.global_default);
        assert_eq!(
            pc.preemption_policy.as_deref(),
            Some(c.preemption_policy.as_str())
        );
    }
    let w: sched::Workload = typed(raw(&snap, Kind::Workload, Some("ml"), "trainer"));
    let templates = w.spec.pod_group_templates.unwrap_or_default();
    let want = &s.workloads[0].pod_group_templates;
    assert_eq!(templates.len(), want.len());
    for (got, want) in templates.iter().zip(want) {
        assert_eq!(got.name, want.name);
        assert_eq!(
            got.scheduling_policy.gang.as_ref().map(|g| g.min_count),
            want.policy.min_count().map(|n| i32::try_from(n).unwrap())
        );
        assert_eq!(
            got.scheduling_policy.basic.is_some(),
            !want.policy.is_gang()
        );
        assert_eq!(got.priority_class_name, want.priority_class_name);
        assert_eq!(got.priority, want.priority);
        assert_eq!(
            got.preemption_policy.as_deref(),
            want.preemption_policy.map(PreemptionPolicy::as_str)
        );
        assert_eq!(
            got.disruption_mode
                .as_ref()
                .is_some_and(|m| m.all.is_some()),
            want.disruption_mode == DisruptionMode::All
        );
        let keys: Vec<String> = got
            .scheduling_constraints
            .iter()
            .flat_map(|c| c.topology.iter().flatten())
            .map(|t| t.key.clone())
            .collect();
        let want_keys: Vec<String> = want.topology.iter().map(|t| t.key.clone()).collect();
        assert_eq!(keys, want_keys);
        let claims: Vec<(String, Option<String>)> = got
            .resource_claims
            .iter()
            .flatten()
            .map(|c| (c.name.clone(), c.resource_claim_name.clone()))
            .collect();
        let want_claims: Vec<(String, Option<String>)> = want
            .resource_claims
            .iter()
            .map(|c| match &c.source {
                ClaimSource::ClaimName(n) => (c.name.clone(), Some(n.clone())),
                ClaimSource::Template(_) => (c.name.clone(), None),
            })
            .collect();
        assert_eq!(claims, want_claims);
    }
}

#[test]
fn claims_are_reserved_for_their_bound_pods_and_groups() {
    let s = scenario();
    let snap = build(&text(&s));
    let pod_uid = Snapshot::derived_uid("Pod", "ml", "trainer-0");
    let group_uid = Snapshot::derived_uid("PodGroup", "ml", "trainer");
    let reserved = |name: &str| {
        raw(&snap, Kind::ResourceClaim, Some("ml"), name)["status"]["reservedFor"].clone()
    };
    assert_eq!(
        reserved("trainer-0-gpus"),
        serde_json::json!([{"resource": "pods", "name": "trainer-0", "uid": pod_uid}])
    );
    // The group's claim is reserved for the group, once, not for its pods.
    assert_eq!(
        reserved("trainer-fabric"),
        serde_json::json!([{
            "apiGroup": "scheduling.k8s.io", "resource": "podgroups",
            "name": "trainer", "uid": group_uid
        }])
    );
    // Pending claims have no status.
    assert_eq!(
        raw(&snap, Kind::ResourceClaim, Some("ml"), "monitor").get("status"),
        None
    );
    // The uids referenced are the objects' own.
    assert_eq!(
        raw(&snap, Kind::Pod, Some("ml"), "trainer-0")["metadata"]["uid"],
        Value::String(pod_uid)
    );
    assert_eq!(
        raw(&snap, Kind::PodGroup, Some("ml"), "trainer")["metadata"]["uid"],
        Value::String(group_uid)
    );
    // Allocated claims carry kube-scheduler's finalizer; the allocation's timestamp is
    // the scenario's latest time (solo's creation), so the loader's clock is that.
    let gpus = raw(&snap, Kind::ResourceClaim, Some("ml"), "trainer-0-gpus");
    assert_eq!(
        gpus["metadata"]["finalizers"],
        serde_json::json!(["resource.kubernetes.io/delete-protection"])
    );
    assert_eq!(
        gpus["status"]["allocation"]["allocationTimestamp"],
        "2026-08-26T00:00:00Z"
    );
    assert_eq!(snap.scheduler.now(), Time(T0));
}

#[test]
fn pods_are_valid_for_the_api_server() {
    let s = scenario();
    let snap = build(&text(&s));
    let t0: core::Pod = typed(raw(&snap, Kind::Pod, Some("ml"), "trainer-0"));
    let spec = t0.spec.expect("a spec");
    // A class agrees with the pod's priority and policy: it is named.
    assert_eq!(spec.priority_class_name.as_deref(), Some("high"));
    assert_eq!(spec.priority, Some(1000));
    let c = &spec.containers[0];
    assert_eq!(c.image.as_deref(), Some(gangpack_k8s::output::PAUSE_IMAGE));
    let res = c.resources.as_ref().expect("resources");
    // Extended resources and hugepages have limits equal to their requests; cpu and
    // memory do not need one.
    let limits: Vec<&String> = res.limits.iter().flatten().map(|(k, _)| k).collect();
    assert_eq!(limits, ["example.com/fpga", "hugepages-2Mi"]);
    let claims: Vec<&str> = res
        .claims
        .iter()
        .flatten()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(claims, ["fabric", "gpus", "share"]);
    assert_eq!(t0.status.and_then(|s| s.phase).as_deref(), Some("Running"));
    // No class has priority 7: only spec.priority.
    let monitor: core::Pod = typed(raw(&snap, Kind::Pod, Some("ml"), "monitor"));
    let spec = monitor.spec.expect("a spec");
    assert_eq!(spec.priority_class_name, None);
    assert_eq!(spec.priority, Some(7));
}

#[test]
fn output_is_deterministic_and_json_reads_the_same() {
    let s = scenario();
    assert_eq!(text(&s), text(&s));
    let json = serde_json::to_string_pretty(&list(scenario_manifests(&s))).expect("JSON");
    assert_round_trip(&s, &build(&json));
}

#[test]
fn an_empty_scenario_writes_an_empty_list() {
    let s = Scenario::default();
    assert!(scenario_manifests(&s).is_empty());
    let snap = build(&text(&s));
    assert_eq!(snap.scheduler.pods().count(), 0);
}

#[test]
fn a_template_claim_entry_is_written_as_such() {
    // Scenarios carry no ResourceClaimTemplates: a pod naming one waits for it.
    let mut s = Scenario {
        namespaces: vec![Namespace {
            name: "ml".into(),
            labels: BTreeMap::new(),
        }],
        ..Scenario::default()
    };
    let mut p = Pod::new("ml", "templated");
    p.resource_claims.push(PodResourceClaim {
        name: "gpu".into(),
        source: ClaimSource::Template("gpu-template".into()),
    });
    s.pods.push(p);
    let docs = scenario_manifests(&s);
    assert_eq!(
        docs[1]["spec"]["resourceClaims"],
        serde_json::json!([{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])
    );
    let snap = build(&text(&s));
    assert_eq!(snap.waiting.len(), 1);
}
