//! The output side of gangpack-k8s: allocations in upstream shape, plans (bindings,
//! claims, conditions, preemption, pending reasons) and taint blast radii, checked
//! field by field against the JSON the API server stores.

use gangpack::{
    AllocationConfigSource, AllocationMode, AllocationResult, ClaimSource, Cluster, Device,
    DeviceAllocationConfiguration, DeviceClass, DeviceRef, DeviceRequest,
    DeviceRequestAllocationResult, DeviceSubRequest, DeviceTaint, DeviceTaintEffect,
    DeviceTaintRule, DeviceTaintSelector, DeviceToleration, DeviceTolerationOperator,
    DisruptionMode, EvictionReason, ExactDeviceRequest, GangOptions, Node, NodeSelector,
    NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm, OpaqueDeviceConfiguration,
    Pod, PodGroup, PodGroupResourceClaim, PodResourceClaim, Quantity, ResourceClaim, ResourceSlice,
    Scheduler, SchedulingPolicy, Taint, TaintEffect, Time, Unit, UnitResult,
};
use gangpack_k8s::output::{
    Outcome, TaintTarget, allocation_to_json, list, plan, taint, time_to_rfc3339,
};
use gangpack_k8s::{GeneratedClaim, Kind, Object, Owner, Snapshot, Source};
use serde_json::{Value, json};

const DRIVER: &str = "gpu.example.com";
/// 2026-08-26T00:00:00Z.
const T0: i64 = 1_787_702_400;
const NOW: &str = "2026-08-26T00:00:00Z";

// ------------------------------------------------------------------------------ setup

/// A cluster with class `gpu` and nodes `(name, rack, gpus)` with node-local slices
/// (pool = node name, devices `gpu-0..`).
fn cluster(nodes: &[(&str, &str, usize)]) -> Cluster {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    for (name, rack, n) in nodes {
        c.add_node(Node::new(*name).with_label("rack", *rack))
            .unwrap();
        let mut s = ResourceSlice::node_local(format!("{name}-gpus"), DRIVER, *name, *name);
        for g in 0..*n {
            s.devices.push(Device::new(format!("gpu-{g}")));
        }
        c.add_slice(s).unwrap();
    }
    c
}

fn scheduler(nodes: &[(&str, &str, usize)]) -> Scheduler {
    let mut s = Scheduler::new(cluster(nodes), GangOptions::default());
    s.advance(Time(T0));
    s
}

fn gpu_claim(ns: &str, name: &str, gpus: u32, tolerations: Vec<DeviceToleration>) -> ResourceClaim {
    let mut request = ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(gpus));
    request.tolerations = tolerations;
    let mut claim = ResourceClaim::new(ns, name);
    claim
        .spec
        .requests
        .push(DeviceRequest::exactly("gpus", request));
    claim
}

/// Adds pod `ns/<name>` (in `group`, at `priority`, restricted to `rack`) with its own
/// claim `<name>-gpus`; returns the pod key.
#[allow(clippy::too_many_arguments)]
fn add_pod(
    s: &mut Scheduler,
    ns: &str,
    name: &str,
    group: Option<&str>,
    rack: Option<&str>,
    gpus: u32,
    priority: i32,
    tolerations: Vec<DeviceToleration>,
) -> String {
    let mut p = Pod::new(ns, name);
    p.scheduling_group = group.map(Into::into);
    p.priority = priority;
    if let Some(r) = rack {
        p.node_selector.insert("rack".into(), r.into());
    }
    let claim = gpu_claim(ns, &format!("{name}-gpus"), gpus, tolerations);
    p.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName(claim.name.clone()),
    });
    s.add_claim(claim).unwrap();
    s.add_pod(p).unwrap();
    format!("{ns}/{name}")
}

fn add_group(s: &mut Scheduler, name: &str, min_count: u32, priority: i32, mode: DisruptionMode) {
    let mut g = PodGroup::new("ns", name, SchedulingPolicy::Gang { min_count });
    g.priority = Some(priority);
    g.disruption_mode = mode;
    s.add_group(g).unwrap();
}

fn object(kind: Kind, raw: Value) -> Object {
    let name = raw["metadata"]["name"].as_str().unwrap().to_owned();
    let namespace = kind.is_namespaced().then(|| {
        raw["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_owned()
    });
    Object {
        source: Source {
            file: "cluster.yaml".into(),
            doc: 1,
            item: None,
        },
        kind,
        namespace,
        name,
        raw: std::sync::Arc::new(raw),
    }
}

/// A pod document with many fields gangpack does not own.
fn pod_doc(key: &str, group: Option<&str>, node: Option<&str>) -> Value {
    let (ns, name) = key.split_once('/').unwrap();
    let mut spec = json!({
        "containers": [{
            "name": "trainer",
            "image": "registry.example.com/train:1.2.3",
            "args": ["--epochs", "90", "--lr=0.1"],
            "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
            "resources": {"claims": [{"name": "gpus"}], "requests": {"cpu": "4", "memory": "16Gi"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]
        }],
        "volumes": [{"name": "data", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}],
        "resourceClaims": [{"name": "gpus", "resourceClaimName": format!("{name}-gpus")}],
        "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        "x-unknown-spec-field": {"nested": [1, 2.5, null, true, "ü"]}
    });
    if let Some(g) = group {
        spec["schedulingGroup"] = json!({"podGroupName": g});
    }
    if let Some(n) = node {
        spec["nodeName"] = json!(n);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": format!("uid-{name}"),
            "generation": 2,
            "resourceVersion": "12345",
            "creationTimestamp": "2026-08-25T10:00:00Z",
            "labels": {"app": "train", "job-name": name},
            "annotations": {"example.com/owner": "team-a", "kubectl.kubernetes.io/last-applied-configuration": "{\"big\": true}"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "job-uid", "controller": true}],
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
        },
        "spec": spec,
        "status": {
            "phase": "Pending",
            "qosClass": "Burstable",
            "conditions": [
                {"type": "example.com/Ready", "status": "Unknown", "lastProbeTime": null, "lastTransitionTime": "2026-08-25T10:00:00Z"}
            ]
        }
    })
}

fn claim_doc(key: &str) -> Value {
    let (ns, name) = key.split_once('/').unwrap();
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": format!("uid-{name}"),
            "labels": {"app": "train"},
            "finalizers": ["example.com/keep"]
        },
        "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 4}}]}}
    })
}

fn group_doc(name: &str, conditions: Value) -> Value {
    let mut doc = json!({
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"), "generation": 3},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
        "status": {}
    });
    doc["status"]["conditions"] = conditions;
    doc
}

fn snapshot(scheduler: Scheduler, objects: Vec<Object>) -> Snapshot {
    Snapshot {
        scheduler,
        objects,
        generated: Vec::new(),
        warnings: Vec::new(),
        skipped: Vec::new(),
        waiting: Vec::new(),
    }
}

/// The changed object of that kind and `namespace/name`.
fn changed<'a>(objects: &'a [Value], kind: &str, key: &str) -> Option<&'a Value> {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    objects.iter().find(|o| {
        o["kind"] == kind
            && o["metadata"]["name"] == name
            && o["metadata"]["namespace"].as_str().unwrap_or("") == ns
    })
}

fn condition<'a>(doc: &'a Value, kind: &str) -> &'a Value {
    doc["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} condition in {doc:#}"))
}

fn ids(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            let ns = o["metadata"]["namespace"].as_str().unwrap_or("");
            let name = o["metadata"]["name"].as_str().unwrap();
            if ns.is_empty() {
                format!("{} {name}", o["kind"].as_str().unwrap())
            } else {
                format!("{} {ns}/{name}", o["kind"].as_str().unwrap())
            }
        })
        .collect()
}

/// `doc` with the JSON pointers removed.
fn without(doc: &Value, pointers: &[&str]) -> Value {
    let mut out = doc.clone();
    for p in pointers {
        let (parent, key) = p.rsplit_once('/').unwrap();
        let parent = if parent.is_empty() {
            Some(&mut out)
        } else {
            out.pointer_mut(parent)
        };
        match parent {
            Some(Value::Object(m)) => {
                m.remove(key);
            }
            Some(Value::Array(a)) => {
                a.remove(key.parse::<usize>().unwrap());
            }
            _ => {}
        }
    }
    out
}

fn toleration(key: &str, seconds: Option<i64>) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::Exists,
        effect: Some(DeviceTaintEffect::NoExecute),
        toleration_seconds: seconds,
        ..DeviceToleration::default()
    }
}

// ------------------------------------------------------------------------------- time

#[test]
fn time_formatting() {
    let cases = [
        (0, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (T0, "2026-08-26T00:00:00Z"),
        (T0 + 3_723, "2026-08-26T01:02:03Z"),
        (1_709_210_096, "2024-02-29T12:34:56Z"),
        (951_868_799, "2000-02-29T23:59:59Z"),
        (951_868_800, "2000-03-01T00:00:00Z"),
        // 1900 and 2100 are not leap years; 1600 and 2000 are.
        (-2_203_891_200, "1900-03-01T00:00:00Z"),
        (-2_203_891_201, "1900-02-28T23:59:59Z"),
        (4_107_542_400, "2100-03-01T00:00:00Z"),
        (4_107_542_399, "2100-02-28T23:59:59Z"),
        (-11_670_998_400, "1600-02-29T00:00:00Z"),
        (1_704_067_199, "2023-12-31T23:59:59Z"),
        (1_704_067_200, "2024-01-01T00:00:00Z"),
        (253_402_300_799, "9999-12-31T23:59:59Z"),
        (-62_135_596_800, "0001-01-01T00:00:00Z"),
    ];
    for (t, want) in cases {
        assert_eq!(time_to_rfc3339(Time(t)), want, "{t}");
    }
}

// ------------------------------------------------------------------------- allocation

#[test]
fn allocation_shape_is_upstream_exactly() {
    let result = AllocationResult {
        devices: vec![
            DeviceRequestAllocationResult {
                request: "gpu/big".into(),
                driver: DRIVER.into(),
                pool: "node-a".into(),
                device: "gpu-0".into(),
                tolerations: vec![
                    toleration("gpu.example.com/xid", Some(300)),
                    DeviceToleration {
                        key: "maintenance".into(),
                        operator: DeviceTolerationOperator::Equal,
                        value: "planned".into(),
                        effect: None,
                        toleration_seconds: None,
                    },
                ],
                binding_conditions: vec!["gpu.example.com/attached".into()],
                binding_failure_conditions: vec!["gpu.example.com/attach-failed".into()],
                ..Default::default()
            },
            DeviceRequestAllocationResult {
                request: "monitor".into(),
                driver: DRIVER.into(),
                pool: "node-a".into(),
                device: "gpu-1".into(),
                admin_access: true,
                ..Default::default()
            },
            DeviceRequestAllocationResult {
                request: "slice".into(),
                driver: DRIVER.into(),
                pool: "node-a".into(),
                device: "gpu-2".into(),
                share_id: Some("6a1b3c0e-4f2d-8a11-9c3e-0123456789ab".into()),
                consumed_capacity: [
                    ("memory".to_owned(), "40Gi".parse::<Quantity>().unwrap()),
                    ("cores".to_owned(), "1000m".parse::<Quantity>().unwrap()),
                ]
                .into_iter()
                .collect(),
                ..Default::default()
            },
        ],
        config: vec![
            DeviceAllocationConfiguration {
                source: AllocationConfigSource::FromClass,
                requests: vec!["gpu/big".into()],
                opaque: OpaqueDeviceConfiguration {
                    driver: DRIVER.into(),
                    parameters: r#"{"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}"#.into(),
                },
            },
            DeviceAllocationConfiguration {
                source: AllocationConfigSource::FromClaim,
                requests: vec![],
                opaque: OpaqueDeviceConfiguration {
                    driver: DRIVER.into(),
                    parameters: r#"{"mode":"exclusive"}"#.into(),
                },
            },
        ],
        node_selector: Some(NodeSelector {
            terms: vec![NodeSelectorTerm {
                match_expressions: vec![
                    NodeSelectorRequirement::new(
                        "topology.kubernetes.io/zone",
                        NodeSelectorOperator::In,
                        ["zone-a", "zone-b"],
                    ),
                    NodeSelectorRequirement::new(
                        "example.com/broken",
                        NodeSelectorOperator::DoesNotExist,
                        [] as [&str; 0],
                    ),
                ],
                match_fields: vec![],
            }],
        }),
    };
    let got = allocation_to_json(&result, Time(T0));
    let want = json!({
        "devices": {
            "results": [
                {
                    "request": "gpu/big",
                    "driver": "gpu.example.com",
                    "pool": "node-a",
                    "device": "gpu-0",
                    "tolerations": [
                        {"key": "gpu.example.com/xid", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                        {"key": "maintenance", "operator": "Equal", "value": "planned"}
                    ],
                    "bindingConditions": ["gpu.example.com/attached"],
                    "bindingFailureConditions": ["gpu.example.com/attach-failed"]
                },
                {
                    "request": "monitor",
                    "driver": "gpu.example.com",
                    "pool": "node-a",
                    "device": "gpu-1",
                    "adminAccess": true
                },
                {
                    "request": "slice",
                    "driver": "gpu.example.com",
                    "pool": "node-a",
                    "device": "gpu-2",
                    "shareID": "6a1b3c0e-4f2d-8a11-9c3e-0123456789ab",
                    "consumedCapacity": {"cores": "1", "memory": "40Gi"}
                }
            ],
            "config": [
                {
                    "source": "FromClass",
                    "requests": ["gpu/big"],
                    "opaque": {
                        "driver": "gpu.example.com",
                        "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}
                    }
                },
                {
                    "source": "FromClaim",
                    "opaque": {"driver": "gpu.example.com", "parameters": {"mode": "exclusive"}}
                }
            ]
        },
        "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a", "zone-b"]},
            {"key": "example.com/broken", "operator": "DoesNotExist"}
        ]}]},
        "allocationTimestamp": NOW
    });
    assert_eq!(got, want);

    // The same document through k8s-openapi's 1.37 type and back: every field is one
    // the API knows, in the shape it knows (unknown fields would be dropped).
    let typed: k8s_openapi::api::resource::v1::AllocationResult =
        serde_json::from_value(got.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), got);
    let results = typed.devices.unwrap().results.unwrap();
    assert_eq!(results[0].request, "gpu/big");
    assert_eq!(results[1].admin_access, Some(true));
    assert_eq!(
        results[2].share_id.as_deref(),
        Some("6a1b3c0e-4f2d-8a11-9c3e-0123456789ab")
    );

    // An empty allocation still has `devices` (a struct upstream), nothing else optional.
    assert_eq!(
        allocation_to_json(&AllocationResult::default(), Time(0)),
        json!({"devices": {}, "allocationTimestamp": "1970-01-01T00:00:00Z"})
    );
}

#[test]
fn allocation_from_the_allocator_names_the_chosen_subrequest_and_the_node() {
    // Only 2 GPUs: the first alternative (4) fails, the second (2) is chosen.
    let mut s = scheduler(&[("n0", "r0", 2)]);
    let mut claim = ResourceClaim::new("ns", "p-gpus");
    claim.spec.requests.push(DeviceRequest::first_available(
        "gpu",
        vec![
            DeviceSubRequest::new("big", "gpu").with_mode(AllocationMode::ExactCount(4)),
            DeviceSubRequest::new("small", "gpu").with_mode(AllocationMode::ExactCount(2)),
        ],
    ));
    s.add_claim(claim).unwrap();
    let mut p = Pod::new("ns", "p");
    p.resource_claims.push(PodResourceClaim {
        name: "gpu".into(),
        source: ClaimSource::ClaimName("p-gpus".into()),
    });
    s.add_pod(p).unwrap();
    let mut snap = snapshot(
        s,
        vec![
            object(Kind::Pod, pod_doc("ns/p", None, None)),
            object(Kind::ResourceClaim, claim_doc("ns/p-gpus")),
        ],
    );
    let plan = plan(&mut snap);
    let claim = changed(&plan.changed, "ResourceClaim", "ns/p-gpus").unwrap();
    assert_eq!(
        claim["status"]["allocation"],
        json!({
            "devices": {"results": [
                {"request": "gpu/small", "driver": "gpu.example.com", "pool": "n0", "device": "gpu-0"},
                {"request": "gpu/small", "driver": "gpu.example.com", "pool": "n0", "device": "gpu-1"}
            ]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n0"]}
            ]}]},
            "allocationTimestamp": NOW
        })
    );
}

// ------------------------------------------------------------------------------- plan

/// Gang `ns/train` of 2 pods × 4 GPUs on two 4-GPU nodes, loaded as documents.
fn train_snapshot(group_conditions: Value) -> Snapshot {
    let mut s = scheduler(&[("n0", "r0", 4), ("n1", "r0", 4)]);
    add_group(&mut s, "train", 2, 0, DisruptionMode::All);
    for i in 0..2 {
        add_pod(
            &mut s,
            "ns",
            &format!("train-{i}"),
            Some("train"),
            None,
            4,
            0,
            vec![],
        );
    }
    let mut objects = vec![object(Kind::PodGroup, group_doc("train", group_conditions))];
    for i in 0..2 {
        objects.push(object(
            Kind::Pod,
            pod_doc(&format!("ns/train-{i}"), Some("train"), None),
        ));
        objects.push(object(
            Kind::ResourceClaim,
            claim_doc(&format!("ns/train-{i}-gpus")),
        ));
    }
    snapshot(s, objects)
}

#[test]
fn scheduled_gang_binds_pods_allocates_claims_and_marks_the_group() {
    let mut snap = train_snapshot(json!([]));
    let originals: Vec<Value> = snap.objects.iter().map(|o| (*o.raw).clone()).collect();
    let plan = plan(&mut snap);
    assert!(matches!(plan.report.units[0].1, UnitResult::Scheduled(_)));
    assert_eq!(
        ids(&plan.changed),
        [
            "ResourceClaim ns/train-0-gpus",
            "ResourceClaim ns/train-1-gpus",
            "PodGroup ns/train",
            "Pod ns/train-0",
            "Pod ns/train-1",
        ]
    );
    let row = &plan.rows[0];
    assert_eq!(
        (row.kind, row.name.as_str(), row.outcome),
        ("PodGroup", "ns/train", Outcome::Placed)
    );
    assert_eq!(row.device_count, 8);
    assert_eq!(row.reason, "");
    assert!(row.victims.is_empty());

    for i in 0..2 {
        let key = format!("ns/train-{i}");
        let node = snap.scheduler.binding(&key).unwrap().node.clone();
        assert_eq!(row.pods[i].pod, key);
        assert_eq!(row.pods[i].node.as_deref(), Some(node.as_str()));

        // The pod: nodeName and PodScheduled=True as the binding subresource writes it.
        let pod = changed(&plan.changed, "Pod", &key).unwrap();
        assert_eq!(pod["spec"]["nodeName"], json!(node));
        assert_eq!(
            condition(pod, "PodScheduled"),
            &json!({"type": "PodScheduled", "status": "True", "observedGeneration": 2, "lastProbeTime": null, "lastTransitionTime": NOW})
        );
        // Round trip: everything else is the loaded document, byte for byte.
        let original = originals
            .iter()
            .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == format!("train-{i}"))
            .unwrap();
        assert_eq!(
            serde_json::to_string(&without(pod, &["/spec/nodeName", "/status/conditions/1"]))
                .unwrap(),
            serde_json::to_string(original).unwrap()
        );

        // The claim: allocation, reservedFor the pod, the scheduler's finalizer.
        let claim = changed(&plan.changed, "ResourceClaim", &format!("{key}-gpus")).unwrap();
        let results: Vec<Value> = (0..4)
            .map(|g| json!({"request": "gpus", "driver": DRIVER, "pool": node, "device": format!("gpu-{g}")}))
            .collect();
        assert_eq!(
            claim["status"],
            json!({
                "allocation": {
                    "devices": {"results": results},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                    "allocationTimestamp": NOW
                },
                "reservedFor": [{"resource": "pods", "name": format!("train-{i}"), "uid": format!("uid-train-{i}")}]
            })
        );
        assert_eq!(
            claim["metadata"]["finalizers"],
            json!([
                "example.com/keep",
                "resource.kubernetes.io/delete-protection"
            ])
        );
        let original = originals
            .iter()
            .find(|o| {
                o["kind"] == "ResourceClaim" && o["metadata"]["name"] == format!("train-{i}-gpus")
            })
            .unwrap();
        assert_eq!(
            without(claim, &["/status", "/metadata/finalizers"]),
            without(original, &["/metadata/finalizers"])
        );
        // It is a resource.k8s.io/v1 ResourceClaim k8s-openapi reads back unchanged.
        let typed: k8s_openapi::api::resource::v1::ResourceClaim =
            serde_json::from_value(claim.clone()).unwrap();
        assert_eq!(&serde_json::to_value(&typed).unwrap(), claim);
    }
    let group = changed(&plan.changed, "PodGroup", "ns/train").unwrap();
    assert_eq!(
        group["status"]["conditions"],
        json!([{"type": "PodGroupInitiallyScheduled", "status": "True", "observedGeneration": 3, "reason": "Scheduled", "message": "", "lastTransitionTime": NOW}])
    );

    // kubectl's List wrapper.
    let l = list(plan.changed.clone());
    assert_eq!(l["apiVersion"], "v1");
    assert_eq!(l["kind"], "List");
    assert_eq!(l["metadata"], json!({"resourceVersion": ""}));
    assert_eq!(l["items"].as_array().unwrap().len(), 5);

    // The table serializes.
    let rows = serde_json::to_value(&plan.rows).unwrap();
    assert_eq!(rows[0]["outcome"], "placed");
    assert_eq!(rows[0]["kind"], "PodGroup");
}

#[test]
fn conditions_replace_by_type_keep_others_and_keep_time_when_status_holds() {
    // Pending: two 4-GPU pods on one 4-GPU node.
    let mut s = scheduler(&[("n0", "r0", 4)]);
    add_group(&mut s, "train", 2, 0, DisruptionMode::All);
    for i in 0..2 {
        add_pod(
            &mut s,
            "ns",
            &format!("train-{i}"),
            Some("train"),
            None,
            4,
            0,
            vec![],
        );
    }
    let mut p0 = pod_doc("ns/train-0", Some("train"), None);
    p0["status"]["conditions"] = json!([
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "old news", "lastProbeTime": null, "lastTransitionTime": "2026-08-01T00:00:00Z"},
        {"type": "example.com/Ready", "status": "Unknown", "lastProbeTime": null, "lastTransitionTime": "2026-08-25T10:00:00Z"}
    ]);
    p0["status"]["nominatedNodeName"] = json!("n9");
    let mut p1 = pod_doc("ns/train-1", Some("train"), None);
    // Status True before (say a stale copy): the transition time moves.
    p1["status"]["conditions"] = json!([
        {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-08-01T00:00:00Z"}
    ]);
    let objects = vec![
        object(
            Kind::PodGroup,
            group_doc(
                "train",
                json!([{"type": "example.com/Other", "status": "True", "reason": "X", "message": "kept", "lastTransitionTime": "2026-01-01T00:00:00Z"}]),
            ),
        ),
        object(Kind::Pod, p0.clone()),
        object(Kind::Pod, p1),
    ];
    let mut snap = snapshot(s, objects);
    let plan = plan(&mut snap);
    assert!(matches!(plan.report.units[0].1, UnitResult::Pending(_)));
    let unit = Unit::Group("ns/train".into());
    let summary = snap.scheduler.explain(&unit).unwrap().summary();
    assert!(
        summary.starts_with("PodGroup ns/train: 1 of 2 pods fit"),
        "{summary}"
    );
    assert_eq!(plan.rows[0].outcome, Outcome::Pending);
    assert_eq!(plan.rows[0].reason, summary);
    assert_eq!(
        plan.rows[0]
            .pods
            .iter()
            .map(|p| (p.pod.as_str(), p.node.clone()))
            .collect::<Vec<_>>(),
        [("ns/train-0", None), ("ns/train-1", None)]
    );

    let pod = changed(&plan.changed, "Pod", "ns/train-0").unwrap();
    assert_eq!(
        pod["status"]["conditions"],
        json!([
            {"type": "PodScheduled", "status": "False", "observedGeneration": 2, "reason": "Unschedulable", "message": summary, "lastProbeTime": null, "lastTransitionTime": "2026-08-01T00:00:00Z"},
            {"type": "example.com/Ready", "status": "Unknown", "lastProbeTime": null, "lastTransitionTime": "2026-08-25T10:00:00Z"}
        ])
    );
    // The nomination is cleared (upstream clearNominatedNode); the rest is as loaded.
    assert!(pod["status"].get("nominatedNodeName").is_none());
    assert_eq!(
        without(pod, &["/status/conditions"]),
        without(&p0, &["/status/conditions", "/status/nominatedNodeName"])
    );
    let pod = changed(&plan.changed, "Pod", "ns/train-1").unwrap();
    assert_eq!(condition(pod, "PodScheduled")["lastTransitionTime"], NOW);
    assert_eq!(condition(pod, "PodScheduled")["status"], "False");

    let group = changed(&plan.changed, "PodGroup", "ns/train").unwrap();
    assert_eq!(
        group["status"]["conditions"],
        json!([
            {"type": "example.com/Other", "status": "True", "reason": "X", "message": "kept", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "PodGroupInitiallyScheduled", "status": "False", "observedGeneration": 3, "reason": "Unschedulable", "message": summary, "lastTransitionTime": NOW}
        ])
    );
    // No claim changes for a pending gang.
    assert!(changed(&plan.changed, "ResourceClaim", "ns/train-0-gpus").is_none());
}

#[test]
fn unchanged_objects_and_terminal_group_condition_are_not_written() {
    let mut s = scheduler(&[("n0", "r0", 4)]);
    add_group(&mut s, "train", 2, 0, DisruptionMode::All);
    for i in 0..2 {
        add_pod(
            &mut s,
            "ns",
            &format!("train-{i}"),
            Some("train"),
            None,
            4,
            0,
            vec![],
        );
    }
    let summary = s
        .explain(&Unit::Group("ns/train".into()))
        .unwrap()
        .summary();
    let mut p0 = pod_doc("ns/train-0", Some("train"), None);
    // Exactly what the plan would write already.
    p0["status"]["conditions"] = json!([
        {"type": "PodScheduled", "status": "False", "observedGeneration": 2, "reason": "Unschedulable", "message": summary, "lastProbeTime": null, "lastTransitionTime": "2026-08-01T00:00:00Z"}
    ]);
    let objects = vec![
        // Initially scheduled once: terminal, never set back to False.
        object(
            Kind::PodGroup,
            group_doc(
                "train",
                json!([{"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": "", "lastTransitionTime": "2026-08-01T00:00:00Z"}]),
            ),
        ),
        object(Kind::Pod, p0),
        object(Kind::Pod, pod_doc("ns/train-1", Some("train"), None)),
    ];
    let mut snap = snapshot(s, objects);
    let plan = plan(&mut snap);
    assert_eq!(ids(&plan.changed), ["Pod ns/train-1"]);
}

#[test]
fn invalid_group_gets_scheduler_error() {
    let mut s = scheduler(&[("n0", "r0", 8)]);
    add_group(&mut s, "train", 2, 5, DisruptionMode::All);
    add_pod(&mut s, "ns", "train-0", Some("train"), None, 1, 5, vec![]);
    add_pod(&mut s, "ns", "train-1", Some("train"), None, 1, 7, vec![]);
    let objects = vec![
        object(Kind::PodGroup, group_doc("train", json!([]))),
        object(Kind::Pod, pod_doc("ns/train-0", Some("train"), None)),
        object(Kind::Pod, pod_doc("ns/train-1", Some("train"), None)),
    ];
    let mut snap = snapshot(s, objects);
    let plan = plan(&mut snap);
    let UnitResult::Invalid(errs) = &plan.report.units[0].1 else {
        panic!("{:?}", plan.report)
    };
    let message = errs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    assert!(!message.is_empty());
    assert_eq!(plan.rows[0].outcome, Outcome::Invalid);
    assert_eq!(plan.rows[0].reason, message);
    for key in ["ns/train-0", "ns/train-1"] {
        let pod = changed(&plan.changed, "Pod", key).unwrap();
        assert_eq!(condition(pod, "PodScheduled")["reason"], "SchedulerError");
        assert_eq!(condition(pod, "PodScheduled")["message"], json!(message));
        assert!(pod["spec"].get("nodeName").is_none());
    }
    let group = changed(&plan.changed, "PodGroup", "ns/train").unwrap();
    let c = condition(group, "PodGroupInitiallyScheduled");
    assert_eq!(
        (c["status"].as_str(), c["reason"].as_str()),
        (Some("False"), Some("SchedulerError"))
    );
    assert_eq!(c["message"], json!(message));
}

#[test]
fn group_claims_are_reserved_for_the_podgroup_and_generated_claims_are_new_objects() {
    let mut s = scheduler(&[("n0", "r0", 8)]);
    let mut g = PodGroup::new("ns", "train", SchedulingPolicy::Gang { min_count: 2 });
    g.resource_claims.push(PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("train-fabric".into()),
    });
    s.add_group(g).unwrap();
    s.add_claim(gpu_claim("ns", "train-fabric", 1, vec![]))
        .unwrap();
    let generated_names: Vec<String> = (0..2)
        .map(|i| gangpack::generated_claim_name("ns", &format!("train-{i}"), "gpus"))
        .collect();
    let mut generated = Vec::new();
    for (i, claim_name) in generated_names.iter().enumerate() {
        let pod_name = format!("train-{i}");
        let claim = gpu_claim("ns", claim_name, 2, vec![]);
        s.add_claim(claim.clone()).unwrap();
        let mut p = Pod::new("ns", &pod_name);
        p.scheduling_group = Some("train".into());
        p.resource_claims.push(PodResourceClaim {
            name: "gpus".into(),
            source: ClaimSource::ClaimName(claim_name.clone()),
        });
        p.resource_claims.push(PodResourceClaim {
            name: "fabric".into(),
            source: ClaimSource::ClaimName("train-fabric".into()),
        });
        s.add_pod(p).unwrap();
        generated.push(GeneratedClaim {
            claim,
            owner: Owner::Pod {
                namespace: "ns".into(),
                name: pod_name.clone(),
            },
            entry: Some("gpus".into()),
            request_mappings: Vec::new(),
            raw: json!({
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {
                    "name": claim_name,
                    "namespace": "ns",
                    "annotations": {"resource.kubernetes.io/pod-claim-name": "gpus"},
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": format!("uid-{pod_name}"), "controller": true, "blockOwnerDeletion": true}]
                },
                "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu", "count": 2}}]}}
            }),
        });
    }
    let objects = vec![
        object(Kind::ResourceClaim, claim_doc("ns/train-fabric")),
        object(Kind::PodGroup, group_doc("train", json!([]))),
        object(Kind::Pod, pod_doc("ns/train-0", Some("train"), None)),
        object(Kind::Pod, pod_doc("ns/train-1", Some("train"), None)),
    ];
    let mut snap = snapshot(s, objects);
    snap.generated = generated;
    let plan = plan(&mut snap);
    assert!(
        matches!(plan.report.units[0].1, UnitResult::Scheduled(_)),
        "{:?}",
        plan.report
    );
    assert_eq!(plan.rows[0].device_count, 5);
    let fabric = changed(&plan.changed, "ResourceClaim", "ns/train-fabric").unwrap();
    assert_eq!(
        fabric["status"]["reservedFor"],
        json!([{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "train", "uid": "uid-train"}])
    );
    assert_eq!(
        fabric["status"]["allocation"]["devices"]["results"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    for (i, name) in generated_names.iter().enumerate() {
        let claim = changed(&plan.changed, "ResourceClaim", &format!("ns/{name}")).unwrap();
        // The whole generated object, with the status the scheduler writes.
        assert_eq!(
            claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"],
            "gpus"
        );
        assert_eq!(
            claim["metadata"]["ownerReferences"][0]["uid"],
            format!("uid-train-{i}")
        );
        assert_eq!(
            claim["status"]["reservedFor"],
            json!([{"resource": "pods", "name": format!("train-{i}"), "uid": format!("uid-train-{i}")}])
        );
        assert_eq!(
            claim["status"]["allocation"]["devices"]["results"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            claim["metadata"]["finalizers"],
            json!(["resource.kubernetes.io/delete-protection"])
        );
    }
}

#[test]
fn preemption_marks_victims_and_nominates_the_preemptor() {
    let mut s = scheduler(&[("n0", "r0", 8)]);
    add_group(&mut s, "low", 2, 1, DisruptionMode::All);
    for i in 0..2 {
        add_pod(
            &mut s,
            "ns",
            &format!("low-{i}"),
            Some("low"),
            None,
            4,
            1,
            vec![],
        );
    }
    s.cycle();
    assert!(s.binding("ns/low-0").is_some() && s.binding("ns/low-1").is_some());
    add_group(&mut s, "high", 2, 100, DisruptionMode::All);
    for i in 0..2 {
        add_pod(
            &mut s,
            "ns",
            &format!("high-{i}"),
            Some("high"),
            None,
            4,
            100,
            vec![],
        );
    }
    let mut objects = vec![
        object(
            Kind::PodGroup,
            group_doc(
                "low",
                json!([{"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": "", "lastTransitionTime": "2026-08-01T00:00:00Z"}]),
            ),
        ),
        object(Kind::PodGroup, group_doc("high", json!([]))),
    ];
    for name in ["low-0", "low-1"] {
        objects.push(object(
            Kind::Pod,
            pod_doc(&format!("ns/{name}"), Some("low"), Some("n0")),
        ));
        objects.push(object(
            Kind::ResourceClaim,
            claim_doc(&format!("ns/{name}-gpus")),
        ));
    }
    for name in ["high-0", "high-1"] {
        objects.push(object(
            Kind::Pod,
            pod_doc(&format!("ns/{name}"), Some("high"), None),
        ));
        objects.push(object(
            Kind::ResourceClaim,
            claim_doc(&format!("ns/{name}-gpus")),
        ));
    }
    let mut snap = snapshot(s, objects);
    let plan = plan(&mut snap);
    let (unit, UnitResult::Preempted(p)) = &plan.report.units[0] else {
        panic!("{:?}", plan.report)
    };
    assert_eq!(unit, &Unit::Group("ns/high".into()));
    assert_eq!(p.victims.len(), 1);
    let message = "pod group preemption: found a placement for podgroup, preempting 2 victims";
    let row = &plan.rows[0];
    assert_eq!(row.outcome, Outcome::Preempted);
    assert_eq!(row.victims, ["PodGroup ns/low"]);
    assert_eq!(row.reason, message);
    assert_eq!(row.device_count, 8);

    // Victims marked, claims untouched (released later by the claim controller); the
    // preemptor nominated, not bound, its claims not written yet.
    assert_eq!(
        ids(&plan.changed),
        [
            "PodGroup ns/high",
            "PodGroup ns/low",
            "Pod ns/high-0",
            "Pod ns/high-1",
            "Pod ns/low-0",
            "Pod ns/low-1"
        ]
    );
    let disruption = json!({
        "type": "DisruptionTarget", "status": "True", "observedGeneration": 2,
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod group",
        "lastProbeTime": null, "lastTransitionTime": NOW
    });
    for key in ["ns/low-0", "ns/low-1"] {
        let pod = changed(&plan.changed, "Pod", key).unwrap();
        assert_eq!(condition(pod, "DisruptionTarget"), &disruption);
        assert_eq!(pod["spec"]["nodeName"], "n0");
    }
    let low = changed(&plan.changed, "PodGroup", "ns/low").unwrap();
    assert_eq!(
        condition(low, "DisruptionTarget"),
        &json!({"type": "DisruptionTarget", "status": "True", "observedGeneration": 3, "reason": "PreemptionByScheduler", "message": "default-scheduler: preempting to accommodate a higher priority pod group", "lastTransitionTime": NOW})
    );
    // Terminal: still initially scheduled.
    assert_eq!(
        condition(low, "PodGroupInitiallyScheduled")["status"],
        "True"
    );
    for key in ["ns/high-0", "ns/high-1"] {
        let pod = changed(&plan.changed, "Pod", key).unwrap();
        assert_eq!(pod["status"]["nominatedNodeName"], "n0");
        assert!(pod["spec"].get("nodeName").is_none());
        assert_eq!(
            condition(pod, "PodScheduled"),
            &json!({"type": "PodScheduled", "status": "False", "observedGeneration": 2, "reason": "Unschedulable", "message": message, "lastProbeTime": null, "lastTransitionTime": NOW})
        );
    }
    let high = changed(&plan.changed, "PodGroup", "ns/high").unwrap();
    assert_eq!(
        high["status"]["conditions"],
        json!([{"type": "PodGroupInitiallyScheduled", "status": "False", "observedGeneration": 3, "reason": "Unschedulable", "message": message, "lastTransitionTime": NOW}])
    );
}

#[test]
fn a_pod_without_a_group_that_fits_nowhere_is_pending() {
    // Same priority as the pod holding the node: nothing to preempt, it stays pending
    // with the core's explanation.
    let mut s = scheduler(&[("n0", "r0", 4)]);
    add_pod(&mut s, "ns", "low", None, None, 4, 1, vec![]);
    s.cycle();
    add_pod(&mut s, "ns", "high", None, None, 4, 1, vec![]);
    let objects = vec![
        object(Kind::Pod, pod_doc("ns/low", None, Some("n0"))),
        object(Kind::Pod, pod_doc("ns/high", None, None)),
    ];
    let mut snap = snapshot(s, objects);
    let plan = plan(&mut snap);
    let summary =
        "Pod ns/high: 0 of 1 pod fits: 4 devices on 1 node (n0) are allocated to other claims";
    let row = &plan.rows[0];
    assert_eq!(
        (row.kind, row.name.as_str(), row.outcome),
        ("Pod", "ns/high", Outcome::Pending)
    );
    assert_eq!(row.reason, summary);
    assert_eq!(ids(&plan.changed), ["Pod ns/high"]);
    let high = &plan.changed[0];
    assert_eq!(
        condition(high, "PodScheduled"),
        &json!({"type": "PodScheduled", "status": "False", "observedGeneration": 2, "reason": "Unschedulable", "message": summary, "lastProbeTime": null, "lastTransitionTime": NOW})
    );
    assert!(high["spec"].get("nodeName").is_none());
}

// ------------------------------------------------------------------------------ taint

/// Gang `ns/train` (disruptionMode All) of 2 pods × 4 GPUs on `nodes`, running, whose
/// claims carry `tolerations`; loaded as documents.
fn running_gang(nodes: &[(&str, &str, usize)], tolerations: &[DeviceToleration]) -> Snapshot {
    let mut s = scheduler(nodes);
    add_group(&mut s, "train", 2, 0, DisruptionMode::All);
    for i in 0..2 {
        add_pod(
            &mut s,
            "ns",
            &format!("train-{i}"),
            Some("train"),
            None,
            4,
            0,
            tolerations.to_vec(),
        );
    }
    s.cycle();
    let mut objects = vec![object(Kind::PodGroup, group_doc("train", json!([])))];
    for i in 0..2 {
        let key = format!("ns/train-{i}");
        let node = s.binding(&key).unwrap().node.clone();
        objects.push(object(Kind::Pod, pod_doc(&key, Some("train"), Some(&node))));
    }
    snapshot(s, objects)
}

#[test]
fn device_taint_evicts_the_whole_all_gang_after_toleration_seconds_and_replaces_it() {
    let xid = toleration("gpu.example.com/xid", Some(300));
    let mut snap = running_gang(&[("n0", "r0", 4), ("n1", "r0", 4), ("n2", "r0", 4)], &[xid]);
    let node1 = snap.scheduler.binding("ns/train-1").unwrap().node.clone();
    let gpu = DeviceRef::new(DRIVER, node1.as_str(), "gpu-2");
    let plan = taint(
        &mut snap,
        TaintTarget::Device {
            device: gpu.clone(),
            taint: DeviceTaint::new("gpu.example.com/xid", "", DeviceTaintEffect::NoExecute),
        },
    )
    .unwrap();
    let at = Time(T0 + 300);
    let at_text = "2026-08-26T00:05:00Z";
    assert_eq!(
        plan.target,
        format!("device {gpu}: gpu.example.com/xid:NoExecute")
    );
    assert_eq!(plan.now, Time(T0));
    assert_eq!(plan.now_rfc3339, NOW);
    let got: Vec<(&str, Time, &str, &str)> = plan
        .evictions
        .iter()
        .map(|e| {
            (
                e.pod.as_str(),
                e.at,
                e.at_rfc3339.as_str(),
                e.condition_reason,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("ns/train-0", at, at_text, "DeletionByDeviceTaintManager"),
            ("ns/train-1", at, at_text, "DeletionByDeviceTaintManager"),
        ]
    );
    assert_eq!(
        plan.evictions[0].reason,
        EvictionReason::GroupMember {
            group: "ns/train".into()
        }
    );
    assert_eq!(
        plan.evictions[0].why,
        "PodGroup ns/train (disruptionMode All) loses a member"
    );
    assert_eq!(
        plan.evictions[1].reason,
        EvictionReason::DeviceTaint {
            claim: "ns/train-1-gpus".into(),
            taint: "gpu.example.com/xid:NoExecute".into()
        }
    );
    assert_eq!(
        plan.evictions[1].why,
        "claim ns/train-1-gpus holds a device tainted gpu.example.com/xid:NoExecute"
    );
    assert_eq!(plan.broken_groups.len(), 1);
    assert_eq!(plan.broken_groups[0].group, "ns/train");
    assert!(plan.broken_groups[0].whole);
    assert_eq!(plan.broken_groups[0].evicted, ["ns/train-0", "ns/train-1"]);
    assert!(plan.cancelled.is_empty());
    assert!(plan.dry_run.is_none());

    // The snapshot keeps the taint and the schedule, not the evictions.
    assert!(snap.scheduler.binding("ns/train-0").is_some());
    assert_eq!(snap.scheduler.scheduled_evictions().len(), 2);

    // Changed: both pods, marked as the device taint eviction controller does.
    assert_eq!(ids(&plan.changed), ["Pod ns/train-0", "Pod ns/train-1"]);
    for (i, doc) in plan.changed.iter().enumerate() {
        assert_eq!(
            condition(doc, "DisruptionTarget"),
            &json!({"type": "DisruptionTarget", "status": "True", "observedGeneration": 2, "reason": "DeletionByDeviceTaintManager", "message": "Device Taint manager: deleting due to NoExecute taint", "lastProbeTime": null, "lastTransitionTime": at_text})
        );
        let original = &snap.objects[1 + i].raw;
        assert_eq!(without(doc, &["/status/conditions/1"]), **original);
    }

    // Where the gang goes: the claims tolerate the taint (for 300 s), so the tainted
    // GPU may be allocated again, and its time is up: the row says so.
    assert_eq!(plan.replacements.len(), 1);
    let row = &plan.replacements[0];
    assert_eq!(
        (row.kind, row.name.as_str(), row.outcome),
        ("PodGroup", "ns/train", Outcome::Placed)
    );
    assert_eq!(row.device_count, 8);
    assert!(row.devices.contains(&gpu.to_string()), "{row:?}");
    assert_eq!(
        row.reason,
        "evicted again at 2026-08-26T00:05:00Z: claim ns/train-1-gpus holds a device tainted \
         gpu.example.com/xid:NoExecute"
    );
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(
        json["evictions"][1]["reason"],
        json!({"deviceTaint": {"claim": "ns/train-1-gpus", "taint": "gpu.example.com/xid:NoExecute"}})
    );
    assert_eq!(json["replacements"][0]["outcome"], "placed");
}

#[test]
fn without_tolerations_the_evicted_gang_is_placed_away_from_the_tainted_gpu() {
    let mut snap = running_gang(&[("n0", "r0", 4), ("n1", "r0", 4), ("n2", "r0", 4)], &[]);
    let node1 = snap.scheduler.binding("ns/train-1").unwrap().node.clone();
    let gpu = DeviceRef::new(DRIVER, node1.as_str(), "gpu-2");
    let plan = taint(
        &mut snap,
        TaintTarget::Device {
            device: gpu.clone(),
            taint: DeviceTaint::new("gpu.example.com/xid", "", DeviceTaintEffect::NoExecute),
        },
    )
    .unwrap();
    let got: Vec<(&str, Time)> = plan
        .evictions
        .iter()
        .map(|e| (e.pod.as_str(), e.at))
        .collect();
    assert_eq!(got, [("ns/train-0", Time(T0)), ("ns/train-1", Time(T0))]);
    let row = &plan.replacements[0];
    assert_eq!(row.outcome, Outcome::Placed);
    assert_eq!(row.reason, "");
    assert_eq!(row.pods.len(), 2);
    for p in &row.pods {
        let node = p.node.as_deref().unwrap();
        assert_ne!(node, node1, "{row:?}");
    }
    assert!(
        !row.devices
            .iter()
            .any(|d| d.starts_with(&format!("{DRIVER}/{node1}/")))
    );
}

#[test]
fn node_taint_evicts_now_and_the_gang_cannot_come_back() {
    let mut snap = running_gang(&[("n0", "r0", 4), ("n1", "r0", 4)], &[]);
    let node0 = snap.scheduler.binding("ns/train-0").unwrap().node.clone();
    let plan = taint(
        &mut snap,
        TaintTarget::Node {
            node: node0.clone(),
            taint: Taint::new("maintenance", "", TaintEffect::NoExecute),
        },
    )
    .unwrap();
    let got: Vec<(&str, Time, &str)> = plan
        .evictions
        .iter()
        .map(|e| (e.pod.as_str(), e.at, e.condition_reason))
        .collect();
    assert_eq!(
        got,
        [
            ("ns/train-0", Time(T0), "DeletionByTaintManager"),
            ("ns/train-1", Time(T0), "DeletionByTaintManager"),
        ]
    );
    assert_eq!(
        plan.evictions[0].why,
        format!("node {node0} tainted maintenance:NoExecute")
    );
    for doc in &plan.changed {
        let c = condition(doc, "DisruptionTarget");
        assert_eq!(c["reason"], "DeletionByTaintManager");
        assert_eq!(
            c["message"],
            "Taint manager: deleting due to NoExecute taint"
        );
        assert_eq!(c["lastTransitionTime"], NOW);
    }
    let row = &plan.replacements[0];
    assert_eq!(row.outcome, Outcome::Pending);
    assert!(
        row.reason.starts_with("PodGroup ns/train: 1 of 2 pods fit"),
        "{}",
        row.reason
    );
    assert!(row.reason.contains("maintenance"), "{}", row.reason);
    assert_eq!(row.pods.len(), 2);
    assert!(row.pods.iter().all(|p| p.node.is_none()));
}

/// Pool n0 (rack r0) runs ns/a-0 and other/s; n1 (rack r1) runs ns/a-1 (gang `a`,
/// disruptionMode All). Each pod 1 GPU, pinned to its rack.
fn drain_snapshot() -> Snapshot {
    let mut s = scheduler(&[("n0", "r0", 4), ("n1", "r1", 4)]);
    add_group(&mut s, "a", 2, 0, DisruptionMode::All);
    add_pod(&mut s, "ns", "a-0", Some("a"), Some("r0"), 1, 0, vec![]);
    add_pod(&mut s, "ns", "a-1", Some("a"), Some("r1"), 1, 0, vec![]);
    add_pod(&mut s, "other", "s", None, Some("r0"), 1, 0, vec![]);
    s.cycle();
    let objects = vec![
        object(
            Kind::DeviceTaintRule,
            json!({
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceTaintRule",
                "metadata": {"name": "drain-n0", "uid": "uid-rule", "generation": 2, "annotations": {"example.com/ticket": "OPS-1"}},
                "spec": {"deviceSelector": {"pool": "n0"}, "taint": {"key": "maintenance", "effect": "None", "timeAdded": "2026-08-25T00:00:00Z"}}
            }),
        ),
        object(Kind::PodGroup, group_doc("a", json!([]))),
        object(Kind::Pod, pod_doc("ns/a-0", Some("a"), Some("n0"))),
        object(Kind::Pod, pod_doc("ns/a-1", Some("a"), Some("n1"))),
        object(Kind::Pod, pod_doc("other/s", None, Some("n0"))),
    ];
    snapshot(s, objects)
}

fn drain_rule(effect: DeviceTaintEffect) -> DeviceTaintRule {
    DeviceTaintRule {
        name: "drain-n0".into(),
        selector: Some(DeviceTaintSelector {
            pool: Some("n0".into()),
            ..DeviceTaintSelector::default()
        }),
        taint: DeviceTaint::new("maintenance", "", effect),
    }
}

#[test]
fn none_rule_writes_the_dry_run_status_and_evicts_nobody() {
    let mut snap = drain_snapshot();
    let original = (*snap.objects[0].raw).clone();
    let plan = taint(
        &mut snap,
        TaintTarget::Rule(drain_rule(DeviceTaintEffect::None)),
    )
    .unwrap();
    let message = "4 published devices selected. 2 allocated devices selected. 2 pods would be \
                   evicted in 2 different namespaces if the effect was NoExecute. This information \
                   will not be updated again. Recreate the DeviceTaintRule to trigger an update.";
    let dry = plan.dry_run.as_ref().unwrap();
    assert_eq!(dry.message, message);
    assert_eq!(dry.report.pods, ["ns/a-0", "other/s"]);
    // Only the rule changes: its status as the device taint eviction controller applies it.
    assert_eq!(ids(&plan.changed), ["DeviceTaintRule drain-n0"]);
    let rule = &plan.changed[0];
    assert_eq!(
        rule["status"],
        json!({"conditions": [{"type": "EvictionInProgress", "status": "False", "observedGeneration": 2, "reason": "NoEffect", "message": message, "lastTransitionTime": NOW}]})
    );
    assert_eq!(without(rule, &["/status"]), original);
    let typed: k8s_openapi::api::resource::v1::DeviceTaintRule =
        serde_json::from_value(rule.clone()).unwrap();
    assert_eq!(&serde_json::to_value(&typed).unwrap(), rule);

    // What would be evicted, at once (no tolerations), and what would break.
    let got: Vec<(&str, Time)> = plan
        .evictions
        .iter()
        .map(|e| (e.pod.as_str(), e.at))
        .collect();
    assert_eq!(
        got,
        [
            ("ns/a-0", Time(T0)),
            ("ns/a-1", Time(T0)),
            ("other/s", Time(T0))
        ]
    );
    assert_eq!(plan.broken_groups.len(), 1);
    assert_eq!(plan.broken_groups[0].group, "ns/a");
    // Nothing is scheduled for eviction in the snapshot.
    assert!(snap.scheduler.scheduled_evictions().is_empty());
    // Were it NoExecute, neither unit would fit again (rack r0's devices are all tainted).
    let rows: Vec<(&str, Outcome)> = plan
        .replacements
        .iter()
        .map(|r| (r.name.as_str(), r.outcome))
        .collect();
    assert_eq!(
        rows,
        [("ns/a", Outcome::Pending), ("other/s", Outcome::Pending)]
    );
    for r in &plan.replacements {
        assert!(r.reason.contains("maintenance"), "{}", r.reason);
    }

    // Switching the rule to NoExecute: pods marked, the rule's status says they are
    // pending eviction, and the spec says what was applied.
    let plan = taint(
        &mut snap,
        TaintTarget::Rule(drain_rule(DeviceTaintEffect::NoExecute)),
    )
    .unwrap();
    assert!(plan.dry_run.is_none());
    assert_eq!(
        ids(&plan.changed),
        [
            "DeviceTaintRule drain-n0",
            "Pod ns/a-0",
            "Pod ns/a-1",
            "Pod other/s"
        ]
    );
    let rule = &plan.changed[0];
    assert_eq!(
        rule["status"]["conditions"],
        json!([{"type": "EvictionInProgress", "status": "True", "observedGeneration": 2, "reason": "PodsPendingEviction", "message": "2 pods need to be evicted in 2 different namespaces.", "lastTransitionTime": NOW}])
    );
    assert_eq!(
        rule["spec"]["taint"],
        json!({"key": "maintenance", "effect": "NoExecute", "timeAdded": NOW})
    );
    assert_eq!(rule["spec"]["deviceSelector"], json!({"pool": "n0"}));
    for doc in &plan.changed[1..] {
        assert_eq!(
            condition(doc, "DisruptionTarget")["reason"],
            "DeletionByDeviceTaintManager"
        );
    }
}

#[test]
fn a_new_rule_is_written_whole() {
    let mut snap = drain_snapshot();
    snap.objects.remove(0);
    let mut rule = drain_rule(DeviceTaintEffect::NoSchedule);
    rule.name = "fence-n0".into();
    let plan = taint(&mut snap, TaintTarget::Rule(rule)).unwrap();
    assert!(plan.evictions.is_empty());
    assert!(plan.replacements.is_empty());
    assert_eq!(ids(&plan.changed), ["DeviceTaintRule fence-n0"]);
    let doc = &plan.changed[0];
    assert_eq!(doc["apiVersion"], "resource.k8s.io/v1");
    assert_eq!(
        doc["spec"],
        json!({"deviceSelector": {"pool": "n0"}, "taint": {"key": "maintenance", "effect": "NoSchedule", "timeAdded": NOW}})
    );
    assert_eq!(
        doc["status"]["conditions"],
        json!([{"type": "EvictionInProgress", "status": "False", "reason": "OtherEffect", "message": "Eviction only happens for the NoExecute effect.", "lastTransitionTime": NOW}])
    );
}
