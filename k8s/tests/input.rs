//! Loading (YAML, JSON, lists, directories) and building a snapshot from realistic
//! inputs: running state, templates, PodGroups, pod requests, priorities, clock.

use std::collections::BTreeMap;

use gangpack::{ClaimSource, DeviceRef, Quantity, Time, Unit, UnitResult};
use gangpack_k8s::{BuildOptions, Kind, Owner, Snapshot, Source, load_paths, load_str};

const DATA: &str = "tests/data/cluster";

fn snapshot(text: &str) -> Snapshot {
    let loaded = load_str(text, "in.yaml").unwrap_or_else(|e| panic!("load: {e}"));
    Snapshot::build(loaded, &BuildOptions::default()).unwrap_or_else(|e| panic!("build: {e}"))
}

fn cluster_snapshot() -> Snapshot {
    let loaded = load_paths(&[DATA]).unwrap();
    Snapshot::build(loaded, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn warnings(s: &Snapshot) -> Vec<String> {
    s.warnings.iter().map(ToString::to_string).collect()
}

/// Pod → node of every pod bound in a cycle.
fn placements(s: &mut Snapshot) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (unit, result) in s.scheduler.cycle().units {
        match result {
            UnitResult::Scheduled(d) => {
                for b in d.bindings {
                    out.insert(b.pod, b.node);
                }
            }
            other => panic!("{unit} not scheduled: {other:?}"),
        }
    }
    out
}

fn node(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{rack: r1}}\nstatus:\n  allocatable: {{cpu: \"8\", memory: 64Gi, pods: \"110\"{extra}}}\n"
    )
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

#[test]
fn a_directory_is_read_recursively_in_path_order() {
    let loaded = load_paths(&[DATA]).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let kinds: Vec<(Kind, String)> = loaded
        .objects
        .iter()
        .map(|o| (o.kind, o.name.clone()))
        .collect();
    assert_eq!(kinds.len(), 2 + 4 + 4 + 4 + 2 + 4);
    // 00-namespaces.yaml first, 50-gang.yaml last.
    assert_eq!(kinds[0], (Kind::Namespace, "ml".into()));
    assert_eq!(kinds[kinds.len() - 1], (Kind::Pod, "trainer-1".into()));
    // Nodes come from a YAML `kind: List`: item numbers are 0-based.
    let n3 = loaded
        .objects
        .iter()
        .find(|o| o.name == "gpu-node-3")
        .unwrap();
    assert_eq!(
        n3.source,
        Source {
            file: format!("{DATA}/10-nodes.yaml"),
            doc: 1,
            item: Some(2),
        }
    );
    assert_eq!(
        n3.source.to_string(),
        format!("{DATA}/10-nodes.yaml doc 1 item 2")
    );
    assert_eq!(n3.namespace, None);
    // Slices come from a JSON List.
    let s = loaded
        .objects
        .iter()
        .find(|o| o.kind == Kind::ResourceSlice)
        .unwrap();
    assert_eq!(s.source.file, format!("{DATA}/30-slices.json"));
    assert_eq!(s.source.item, Some(0));
    // Multi-document YAML counts documents from 1.
    let pod = loaded
        .objects
        .iter()
        .find(|o| o.name == "trainer-1")
        .unwrap();
    assert_eq!(pod.source.to_string(), format!("{DATA}/50-gang.yaml doc 4"));
    assert_eq!(pod.namespace.as_deref(), Some("ml"));
    assert_eq!(pod.describe(), "Pod \"ml/trainer-1\"");
    // The raw document is untouched.
    assert_eq!(
        pod.raw["spec"]["containers"][0]["image"],
        "nvcr.io/nvidia/pytorch:24.05-py3"
    );
}

#[test]
fn files_and_directories_mix() {
    let loaded = load_paths(&[
        format!("{DATA}/20-classes.yaml"),
        format!("{DATA}/10-nodes.yaml"),
    ])
    .unwrap();
    let names: Vec<&str> = loaded.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gpu.nvidia.com",
            "h100.nvidia.com",
            "batch",
            "training-high",
            "gpu-node-1",
            "gpu-node-2",
            "gpu-node-3",
            "gpu-node-4"
        ]
    );
    let err = load_paths(&["tests/data/does-not-exist.yaml"]).unwrap_err();
    assert_eq!(err.len(), 1);
    assert!(
        err.to_string()
            .starts_with("cannot read tests/data/does-not-exist.yaml: "),
        "{err}"
    );
}

#[test]
fn empty_documents_and_comments_are_skipped() {
    let text = "# a comment\n---\n---\n# only a comment\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n...\n";
    let loaded = load_str(text, "x.yaml").unwrap();
    assert_eq!(loaded.objects.len(), 1);
    // Text before the first `---` is not a document when it holds only comments.
    assert_eq!(loaded.objects[0].source.to_string(), "x.yaml doc 3");
    assert!(load_str("", "empty.yaml").unwrap().objects.is_empty());
    // A byte-order mark is not part of the text.
    let bom =
        "\u{feff}{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}";
    assert_eq!(load_str(bom, "bom.json").unwrap().objects.len(), 1);
    assert!(load_str("   \n", "blank.json").unwrap().objects.is_empty());
}

#[test]
fn json_is_read_with_exact_numbers_and_may_hold_several_documents() {
    let text = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"},
      "status": {"allocatable": {"memory": 1099511627777, "cpu": 0.25, "pods": 110}}}
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}}"#;
    let loaded = load_str(text, "nodes.json").unwrap();
    assert_eq!(loaded.objects.len(), 2);
    assert_eq!(loaded.objects[1].source.to_string(), "nodes.json doc 2");
    let s = Snapshot::build(loaded, &BuildOptions::default()).unwrap();
    let a = s.scheduler.cluster().node("a").unwrap();
    assert_eq!(
        a.allocatable["memory"].as_nano(),
        1_099_511_627_777 * 1_000_000_000
    );
    assert_eq!(a.allocatable["cpu"], Quantity::from_milli(250));
    assert_eq!(a.allocatable["pods"], Quantity::from_int(110));
}

#[test]
fn typed_lists_give_their_items_a_kind() {
    // What the API (not kubectl) returns: items without apiVersion / kind.
    let text =
        "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n";
    let loaded = load_str(text, "l.yaml").unwrap();
    let names: Vec<(Kind, &str)> = loaded
        .objects
        .iter()
        .map(|o| (o.kind, o.name.as_str()))
        .collect();
    assert_eq!(names, [(Kind::Node, "a"), (Kind::Node, "b")]);
    // A `kind: List` may mix kinds.
    let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: []}}\n";
    let loaded = load_str(text, "l.yaml").unwrap();
    assert_eq!(loaded.objects[1].kind, Kind::Pod);
    assert_eq!(loaded.objects[1].namespace.as_deref(), Some("default"));
    assert_eq!(loaded.objects[1].source.to_string(), "l.yaml doc 1 item 1");
}

#[test]
fn unknown_kinds_and_custom_resources_are_skipped_with_a_warning() {
    // (Other versions of the kinds gangpack reads are read: tests/versions.rs.)
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ml}\n---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n";
    let loaded = load_str(text, "w.yaml").unwrap();
    assert_eq!(loaded.objects.len(), 1);
    let w: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        w,
        [
            "w.yaml doc 1: ConfigMap \"ml/c\": skipped: ConfigMap (v1) is not a kind gangpack reads",
            "w.yaml doc 2: PodGroup \"ml/g\": skipped: PodGroup (scheduling.x-k8s.io/v1alpha1) is a custom resource, not the PodGroup of scheduling.k8s.io that gangpack reads",
        ]
    );
    // The warnings reach the snapshot.
    let s = Snapshot::build(loaded, &BuildOptions::default()).unwrap();
    assert_eq!(s.warnings.len(), 2);
    // v1alpha3 DeviceTaintRules are read.
    let text = "apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\nspec:\n  deviceSelector: {driver: gpu.nvidia.com, pool: gpu-node-1, device: gpu-0}\n  taint: {key: example.com/maintenance, effect: NoSchedule}\n";
    let loaded = load_str(text, "r.yaml").unwrap();
    let rule = gangpack_k8s::device_taint_rule(&loaded.objects[0]).unwrap();
    assert_eq!(rule.name, "r");
    assert_eq!(rule.taint.to_string(), "example.com/maintenance:NoSchedule");
    assert!(rule.selects("gpu.nvidia.com", "gpu-node-1", "gpu-0"));
    assert!(!rule.selects("gpu.nvidia.com", "gpu-node-1", "gpu-1"));
}

#[test]
fn namespaced_kinds_default_to_the_default_namespace() {
    let text = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n, namespace: ignored}\n";
    let loaded = load_str(text, "n.yaml").unwrap();
    assert_eq!(loaded.objects[0].namespace.as_deref(), Some("default"));
    assert_eq!(loaded.objects[1].namespace, None);
    let s = Snapshot::build(loaded, &BuildOptions::default()).unwrap();
    assert_eq!(s.scheduler.claims().next().unwrap().namespace, "default");
    assert!(
        s.object(Kind::ResourceClaim, Some("default"), "c")
            .is_some()
    );
}

// ---------------------------------------------------------------------------------------------
// The cluster fixture: running state and a pending gang
// ---------------------------------------------------------------------------------------------

#[test]
fn running_state_holds_its_devices_and_the_gang_schedules_around_it() {
    let mut s = cluster_snapshot();
    assert!(s.warnings.is_empty(), "{:?}", warnings(&s));
    assert!(s.skipped.is_empty());
    let c = s.scheduler.cluster();
    assert_eq!(c.nodes().count(), 4);
    assert_eq!(c.device_count(), 16);
    // The running claim holds gpu-node-1's four GPUs.
    for g in 0..4 {
        let d = DeviceRef::new("gpu.nvidia.com", "gpu-node-1", format!("gpu-{g}"));
        let holders: Vec<&str> = c
            .allocations(&d)
            .iter()
            .map(|h| h.consumer.as_str())
            .collect();
        assert_eq!(holders, ["ml/inference-0-gpus-x7k2p"], "{d}");
    }
    let free = c.free_devices().len();
    assert_eq!(free, 12);
    // The running pod is bound, with its node resources reserved.
    let b = s.scheduler.binding("ml/inference-0").unwrap();
    assert_eq!(b.node, "gpu-node-1");
    let left = c.node_free_resources("gpu-node-1").unwrap();
    assert_eq!(left["cpu"], Quantity::from_int(94 - 8));
    // It uses the claim its status names: nothing generated for it.
    let pod = s.scheduler.pod("ml/inference-0").unwrap();
    assert_eq!(
        pod.resource_claims[0].source,
        ClaimSource::ClaimName("inference-0-gpus-x7k2p".into())
    );
    assert_eq!(pod.priority, 100);
    assert!(
        s.scheduler
            .allocation("ml/inference-0-gpus-x7k2p")
            .is_some()
    );
    // The gang is the one pending unit.
    assert_eq!(
        s.scheduler.pending_units(),
        [Unit::Group("ml/trainer".into())]
    );
    // Four GPUs of one NVLink domain per worker, both in one rack: rack r1 has four
    // free GPUs left, so the gang goes to r2.
    let placed = placements(&mut s);
    assert_eq!(
        placed,
        BTreeMap::from([
            ("ml/trainer-0".into(), "gpu-node-3".into()),
            ("ml/trainer-1".into(), "gpu-node-4".into()),
        ])
    );
    assert_eq!(s.scheduler.cluster().free_devices().len(), 4);
}

#[test]
fn template_claims_are_generated_as_the_resourceclaim_controller_would() {
    let s = cluster_snapshot();
    let names: Vec<&str> = s.generated.iter().map(|g| g.claim.name.as_str()).collect();
    assert_eq!(names.len(), 2);
    assert!(names[0].starts_with("trainer-0-gpus-"), "{names:?}");
    assert!(names[1].starts_with("trainer-1-gpus-"), "{names:?}");
    let g = &s.generated[0];
    assert_eq!(
        g.owner,
        Owner::Pod {
            namespace: "ml".into(),
            name: "trainer-0".into()
        }
    );
    assert_eq!(g.entry.as_deref(), Some("gpus"));
    assert_eq!(g.claim.namespace, "ml");
    assert_eq!(g.claim.spec.requests[0].name, "gpus");
    assert!(g.claim.allocation.is_none());
    let expected = serde_json::json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": g.claim.name,
            "namespace": "ml",
            "labels": {"app.kubernetes.io/part-of": "trainer"},
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpus"},
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "trainer-0",
                "uid": "5c2d7e90-0000-4000-8000-000000000020",
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": {"devices": {
            "requests": [{"name": "gpus", "exactly": {"deviceClassName": "h100.nvidia.com", "count": 4}}],
            "constraints": [{"matchAttribute": "gpu.nvidia.com/nvlinkDomain"}],
        }},
    });
    assert_eq!(g.raw, expected);
    // The pod names its generated claim.
    let pod = s.scheduler.pod("ml/trainer-0").unwrap();
    assert_eq!(
        pod.resource_claims[0].source,
        ClaimSource::ClaimName(g.claim.name.clone())
    );
    assert!(s.generated_claim("ml", &g.claim.name).is_some());
}

#[test]
fn the_same_input_gives_the_same_snapshot() {
    let run = || {
        let mut s = cluster_snapshot();
        let generated: Vec<String> = s.generated.iter().map(|g| g.raw.to_string()).collect();
        let report = format!("{:?}", s.scheduler.cycle());
        (generated, report, s.scheduler.now())
    };
    assert_eq!(run(), run());
}

#[test]
fn the_clock_is_the_latest_timestamp_unless_given() {
    let s = cluster_snapshot();
    // trainer-0's creationTimestamp, 2025-06-03T10:00:01Z.
    assert_eq!(s.scheduler.now(), Time(1_748_944_801));
    let loaded = load_paths(&[DATA]).unwrap();
    let options = BuildOptions {
        now: Some(Time(1_800_000_000)),
        ..BuildOptions::default()
    };
    let s = Snapshot::build(loaded, &options).unwrap();
    assert_eq!(s.scheduler.now(), Time(1_800_000_000));
    // Nothing dated: 0.
    let s = snapshot(&node("a", ""));
    assert_eq!(s.scheduler.now(), Time(0));
    // A taint's timeAdded counts.
    let s = snapshot(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: \"2025-01-01T00:00:00Z\"}\nspec:\n  taints:\n  - {key: k, effect: NoSchedule, timeAdded: \"2025-02-01T00:00:00Z\"}\n",
    );
    assert_eq!(s.scheduler.now(), Time(1_738_368_000));
}

// ---------------------------------------------------------------------------------------------
// PodGroups
// ---------------------------------------------------------------------------------------------

const GROUP_CLAIMS: &str = r#"
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.nvidia.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: n1, generation: 0, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric}
spec:
  driver: fabric.example.com
  allNodes: true
  pool: {name: fabric, generation: 0, resourceSliceCount: 1}
  devices: [{name: channel-0}, {name: channel-1}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fabric}
spec:
  selectors:
  - cel: {expression: device.driver == "fabric.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: fabric, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: channel
        exactly: {deviceClassName: fabric}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: job, namespace: ml, uid: g-uid}
spec:
  schedulingPolicy:
    gang: {minCount: 2}
  resourceClaims:
  - name: fabric
    resourceClaimTemplateName: fabric
"#;

fn member(name: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  schedulingGroup: {{podGroupName: job}}\n  containers: [{{name: c}}]\n  resourceClaims:\n  - {{name: fabric, resourceClaimTemplateName: fabric}}\n  - {{name: gpu, resourceClaimTemplateName: one-gpu}}\n"
    )
}

#[test]
fn a_pod_group_gets_one_claim_per_template_entry_shared_by_its_members() {
    let text = format!(
        "{}{}{}{}",
        node("n1", ""),
        "---\n",
        GROUP_CLAIMS,
        member("w0") + &member("w1")
    );
    let mut s = snapshot(&text);
    let owners: Vec<(&Owner, Option<&str>)> = s
        .generated
        .iter()
        .map(|g| (&g.owner, g.entry.as_deref()))
        .collect();
    let group = Owner::PodGroup {
        namespace: "ml".into(),
        name: "job".into(),
    };
    // One fabric claim for the group, one GPU claim per pod.
    assert_eq!(owners.len(), 3);
    assert_eq!(owners[0], (&group, Some("fabric")));
    let fabric = &s.generated[0];
    assert_eq!(
        fabric.raw["metadata"]["annotations"],
        serde_json::json!({"resource.kubernetes.io/podgroup-claim-name": "fabric"})
    );
    assert_eq!(
        fabric.raw["metadata"]["ownerReferences"][0]["kind"],
        "PodGroup"
    );
    assert_eq!(
        fabric.raw["metadata"]["ownerReferences"][0]["apiVersion"],
        "scheduling.k8s.io/v1beta1"
    );
    assert_eq!(fabric.raw["metadata"]["ownerReferences"][0]["uid"], "g-uid");
    let name = fabric.claim.name.clone();
    assert!(name.starts_with("job-fabric-"), "{name}");
    for p in ["ml/w0", "ml/w1"] {
        let pod = s.scheduler.pod(p).unwrap();
        assert_eq!(
            pod.resource_claims[0].source,
            ClaimSource::ClaimName(name.clone())
        );
        assert!(
            matches!(&pod.resource_claims[1].source, ClaimSource::ClaimName(n) if n.starts_with(&format!("{}-gpu-", &p[3..])))
        );
    }
    let g = s.scheduler.group("ml/job").unwrap();
    assert_eq!(
        g.resource_claims[0].source,
        ClaimSource::ClaimName(name.clone())
    );
    let report = s.scheduler.cycle();
    let UnitResult::Scheduled(d) = &report.units[0].1 else {
        panic!("{report:?}")
    };
    assert_eq!(d.bindings.len(), 2);
    assert_eq!(d.group_claims.len(), 1);
    assert_eq!(d.group_claims[0].claim, format!("ml/{name}"));
}

#[test]
fn claims_named_by_status_are_used_instead_of_generated_ones() {
    // The group's fabric claim and w0's GPU claim exist already (allocated).
    let existing = r"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: job-fabric-abcde, namespace: ml}
spec:
  devices:
    requests:
    - name: channel
      exactly: {deviceClassName: fabric}
status:
  allocation:
    devices:
      results:
      - {request: channel, driver: fabric.example.com, pool: fabric, device: channel-0}
";
    let group_status = "status:\n  resourceClaimStatuses:\n  - {name: fabric, resourceClaimName: job-fabric-abcde}\n";
    let text = format!(
        "{}---\n{}{}{}{}{}",
        node("n1", ""),
        GROUP_CLAIMS,
        group_status,
        existing,
        member("w0"),
        member("w1"),
    );
    let mut s = snapshot(&text);
    // Only the GPU claims are generated.
    let entries: Vec<Option<&str>> = s.generated.iter().map(|g| g.entry.as_deref()).collect();
    assert_eq!(entries, [Some("gpu"), Some("gpu")]);
    for p in ["ml/w0", "ml/w1"] {
        let pod = s.scheduler.pod(p).unwrap();
        assert_eq!(
            pod.resource_claims[0].source,
            ClaimSource::ClaimName("job-fabric-abcde".into())
        );
    }
    let c = s.scheduler.cluster();
    let ch0 = DeviceRef::new("fabric.example.com", "fabric", "channel-0");
    assert_eq!(c.allocations(&ch0)[0].consumer, "ml/job-fabric-abcde");
    let report = s.scheduler.cycle();
    let UnitResult::Scheduled(d) = &report.units[0].1 else {
        panic!("{report:?}")
    };
    // The group claim is allocated already: only the GPU claims are allocated now.
    assert!(d.group_claims.is_empty());
    assert_eq!(d.bindings.len(), 2);
}

#[test]
fn a_pod_whose_pod_group_is_missing_waits_with_a_warning() {
    let text = format!(
        "{}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: w0, namespace: ml}}\nspec:\n  schedulingGroup: {{podGroupName: nowhere}}\n  containers: [{{name: c}}]\n",
        node("n1", "")
    );
    let mut s = snapshot(&text);
    assert_eq!(
        warnings(&s),
        [
            "in.yaml doc 2: Pod \"ml/w0\": spec.schedulingGroup.podGroupName: PodGroup \"nowhere\" is not in the input: the pod waits for it"
        ]
    );
    assert!(s.scheduler.pod("ml/w0").is_some());
    assert!(s.scheduler.pending_units().is_empty());
    assert!(s.scheduler.cycle().units.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Pods
// ---------------------------------------------------------------------------------------------

#[test]
fn pod_requests_are_computed_as_kube_scheduler_does() {
    let text = format!(
        "{}---\n{}",
        node("n1", ""),
        r#"apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  overhead: {cpu: 250m, memory: 120Mi}
  initContainers:
  - name: setup          # runs alone (plus the sidecar started before it? no: it is first)
    resources:
      requests: {cpu: "6"}
  - name: proxy          # a sidecar: keeps running next to the containers
    restartPolicy: Always
    resources:
      requests: {cpu: 500m, memory: 1Gi}
  - name: migrate        # runs next to the sidecar: 3 + 0.5
    resources:
      limits: {cpu: "3", memory: 8Gi}   # limits only: requests = limits
  containers:
  - name: a
    resources:
      requests: {cpu: "1", memory: 2Gi}
  - name: b
    resources:
      requests: {cpu: "2"}
      limits: {cpu: "4", memory: 4Gi}
"#
    );
    let s = snapshot(&text);
    let pod = s.scheduler.pod("ml/p").unwrap();
    // cpu: containers 1 + 2 + sidecar 0.5 = 3.5; init peak max(6, 3 + 0.5) = 6;
    // max 6, plus overhead 0.25.
    assert_eq!(pod.requests["cpu"], Quantity::from_milli(6250));
    // memory: containers 2Gi + 4Gi (limit) + sidecar 1Gi = 7Gi; init peak 8Gi + 1Gi =
    // 9Gi; plus 120Mi.
    assert_eq!(
        pod.requests["memory"],
        Quantity::parse("9Gi")
            .unwrap()
            .saturating_add(Quantity::parse("120Mi").unwrap())
    );
    assert_eq!(pod.requests.len(), 2);
}

#[test]
fn pod_scheduling_fields_are_read() {
    let text = format!(
        "{}---\n{}",
        node("n1", ""),
        r#"apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
globalDefault: true
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ml, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  priorityClassName: high
  schedulerName: default-scheduler
  nodeSelector: {rack: r1}
  tolerations:
  - {key: gpu, operator: Exists, effect: NoSchedule}
  - {key: maint, operator: Equal, value: "yes", effect: NoExecute, tolerationSeconds: 60}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: rack, operator: In, values: [r1, r2]}
  containers: [{name: c}]
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: ml}
spec:
  containers: [{name: c}]
"#
    );
    let s = snapshot(&text);
    let a = s.scheduler.pod("ml/a").unwrap();
    assert_eq!(a.priority, 1000);
    assert_eq!(
        a.preemption_policy,
        gangpack::PreemptionPolicy::PreemptLowerPriority
    );
    assert_eq!(a.creation, Time(1_735_689_600));
    assert_eq!(a.node_selector["rack"], "r1");
    assert_eq!(a.tolerations.len(), 2);
    assert_eq!(a.tolerations[1].toleration_seconds, Some(60));
    let aff = a.required_node_affinity.as_ref().unwrap();
    assert_eq!(aff.terms[0].match_expressions[0].values, ["r1", "r2"]);
    assert!(a.fits_node(s.scheduler.cluster().node("n1").unwrap()));
    // No class: the global default's value and policy.
    let b = s.scheduler.pod("ml/b").unwrap();
    assert_eq!(b.priority, 10);
    assert_eq!(b.preemption_policy, gangpack::PreemptionPolicy::Never);
}

#[test]
fn finished_terminating_gated_and_foreign_pods() {
    let pod = |name: &str, extra_spec: &str, extra: &str| {
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml{extra}}}\nspec:\n  containers: [{{name: c, resources: {{requests: {{cpu: \"2\"}}}}}}]\n{extra_spec}"
        )
    };
    let text = [
        node("n1", ""),
        pod("done", "status: {phase: Succeeded}\n", ""),
        pod("failed", "  nodeName: n1\nstatus: {phase: Failed}\n", ""),
        pod(
            "leaving",
            "  nodeName: n1\n",
            ", deletionTimestamp: \"2025-01-01T00:00:00Z\"",
        ),
        pod(
            "gated",
            "  schedulingGates: [{name: example.com/quota}]\n",
            "",
        ),
        pod("other", "  schedulerName: volcano\n", ""),
        pod(
            "other-bound",
            "  schedulerName: volcano\n  nodeName: n1\n",
            "",
        ),
        pod("mine", "", ""),
    ]
    .concat();
    let s = snapshot(&text);
    assert_eq!(
        warnings(&s),
        [
            "in.yaml doc 2: Pod \"ml/done\": skipped: the pod has finished (status.phase Succeeded) and holds nothing",
            "in.yaml doc 3: Pod \"ml/failed\": skipped: the pod has finished (status.phase Failed) and holds nothing",
            "in.yaml doc 4: Pod \"ml/leaving\": skipped: the pod is terminating (metadata.deletionTimestamp is set)",
            "in.yaml doc 5: Pod \"ml/gated\": skipped: spec.schedulingGates (example.com/quota) hold the pod back from scheduling",
            "in.yaml doc 6: Pod \"ml/other\": skipped: spec.schedulerName \"volcano\" is not default-scheduler; only its bound pods are read",
        ]
    );
    let pods: Vec<String> = s
        .scheduler
        .pods()
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect();
    assert_eq!(pods, ["ml/mine", "ml/other-bound"]);
    // The other scheduler's bound pod holds its cpu.
    let free = s.scheduler.cluster().node_free_resources("n1").unwrap();
    assert_eq!(free["cpu"], Quantity::from_int(6));
}

#[test]
fn an_over_committed_node_keeps_its_running_pods() {
    let text = format!(
        "{}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: big, namespace: ml}}\nspec:\n  nodeName: n1\n  containers: [{{name: c, resources: {{requests: {{cpu: \"12\"}}}}}}]\n",
        node("n1", "")
    );
    let s = snapshot(&text);
    assert_eq!(
        warnings(&s),
        [
            "in.yaml doc 2: Pod \"ml/big\": node n1 is over-committed (cpu 12 requested, 8 free): the running pod's requests are not reserved"
        ]
    );
    assert_eq!(s.scheduler.binding("ml/big").unwrap().node, "n1");
}
