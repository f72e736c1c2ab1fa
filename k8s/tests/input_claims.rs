//! Extended resources (device plugins vs DRA-backed DeviceClasses) and admin access.

use gangpack::{ClaimSource, GangOutcome, Quantity, UnitResult};
use gangpack_k8s::{BuildOptions, GeneratedClaim, Owner, Snapshot, load_str};

fn build(text: &str) -> Result<Snapshot, String> {
    let loaded = load_str(text, "in.yaml").map_err(|e| e.to_string())?;
    Snapshot::build(loaded, &BuildOptions::default()).map_err(|e| e.to_string())
}

fn snapshot(text: &str) -> Snapshot {
    build(text).unwrap_or_else(|e| panic!("{e}"))
}

fn warnings(s: &Snapshot) -> Vec<String> {
    s.warnings.iter().map(ToString::to_string).collect()
}

/// `plugin-node` advertises `nvidia.com/gpu: 8` (a device plugin); `dra-node` publishes
/// four GPUs in a ResourceSlice, offered as `example.com/gpu` by the class
/// `gpu.example.com`.
const CLUSTER: &str = r#"apiVersion: v1
kind: Node
metadata: {name: plugin-node}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata: {name: dra-node}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dra-node-gpus}
spec:
  driver: gpu.example.com
  nodeName: dra-node
  pool: {name: dra-node, generation: 0, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {numaNode: {int: 0}}}
  - {name: gpu-1, attributes: {numaNode: {int: 0}}}
  - {name: gpu-2, attributes: {numaNode: {int: 1}}}
  - {name: gpu-3, attributes: {numaNode: {int: 1}}}
"#;

fn pod(name: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml, uid: uid-{name}}}\nspec:\n{spec}"
    )
}

fn placed_on(s: &mut Snapshot) -> Vec<(String, String, usize)> {
    let report = s.scheduler.cycle();
    let mut out = Vec::new();
    for (unit, r) in report.units {
        let UnitResult::Scheduled(d) = r else {
            panic!("{unit}: {r:?}")
        };
        for b in d.bindings {
            let devices = b.claims.iter().map(|c| c.result.devices.len()).sum();
            out.push((b.pod, b.node, devices));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Extended resources
// ---------------------------------------------------------------------------------------------

#[test]
fn a_device_plugin_resource_stays_a_node_resource() {
    let text = format!(
        "{CLUSTER}{}",
        pod(
            "p",
            "  containers:\n  - name: c\n    resources:\n      limits: {nvidia.com/gpu: 2}\n"
        )
    );
    let mut s = snapshot(&text);
    assert!(s.generated.is_empty());
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
    let p = s.scheduler.pod("ml/p").unwrap();
    // Limits only: the request equals the limit.
    assert_eq!(p.requests["nvidia.com/gpu"], Quantity::from_int(2));
    assert!(p.resource_claims.is_empty());
    assert_eq!(
        placed_on(&mut s),
        [("ml/p".into(), "plugin-node".into(), 0)]
    );
    let free = s
        .scheduler
        .cluster()
        .node_free_resources("plugin-node")
        .unwrap();
    assert_eq!(free["nvidia.com/gpu"], Quantity::from_int(6));
}

#[test]
fn a_dra_backed_extended_resource_gets_a_claim_as_kubernetes_generates_it() {
    let text = format!(
        "{CLUSTER}{}",
        pod(
            "trainer",
            r#"  initContainers:
  - name: warmup
    resources:
      limits: {example.com/gpu: 1}
  containers:
  - name: main
    resources:
      requests: {cpu: "4", example.com/gpu: 2}
      limits: {example.com/gpu: 2}
  - name: side
    resources:
      limits: {example.com/gpu: 1, memory: 1Gi}
"#
        )
    );
    let mut s = snapshot(&text);
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
    assert_eq!(s.generated.len(), 1);
    let g = &s.generated[0];
    assert_eq!(
        g.owner,
        Owner::Pod {
            namespace: "ml".into(),
            name: "trainer".into()
        }
    );
    assert_eq!(g.entry, None);
    assert!(
        g.claim.name.starts_with("trainer-extended-resources-"),
        "{}",
        g.claim.name
    );
    // One request per container and resource: `container-<index among init containers
    // and containers>-request-<index of the resource among the container's sorted
    // requests>`, sorted by name.
    assert_eq!(
        g.raw,
        serde_json::json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": g.claim.name,
                "namespace": "ml",
                "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "uid-trainer",
                    "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "spec": {"devices": {"requests": [
                {"name": "container-0-request-0", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}},
                {"name": "container-1-request-1", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2}},
                {"name": "container-2-request-0", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}},
            ]}},
        })
    );
    assert_eq!(
        g.raw["metadata"]["annotations"][GeneratedClaim::EXTENDED_RESOURCE_CLAIM_ANNOTATION],
        "true"
    );
    let names: Vec<&str> = g
        .claim
        .spec
        .requests
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "container-0-request-0",
            "container-1-request-1",
            "container-2-request-0"
        ]
    );
    // The pod no longer asks its node for the resource; it names the claim.
    let p = s.scheduler.pod("ml/trainer").unwrap();
    assert!(!p.requests.contains_key("example.com/gpu"));
    assert_eq!(p.requests["cpu"], Quantity::from_int(4));
    assert_eq!(
        p.resource_claims[0].source,
        ClaimSource::ClaimName(g.claim.name.clone())
    );
    // The init container's device is counted on top (as upstream does): four in all.
    assert_eq!(
        placed_on(&mut s),
        [("ml/trainer".into(), "dra-node".into(), 4)]
    );
}

#[test]
fn a_device_class_is_also_requested_by_its_implicit_name() {
    let text = format!(
        "{CLUSTER}{}",
        pod(
            "p",
            "  containers:\n  - name: c\n    resources:\n      limits: {deviceclass.resource.kubernetes.io/gpu.example.com: 3}\n"
        )
    );
    let mut s = snapshot(&text);
    assert_eq!(s.generated.len(), 1);
    assert_eq!(
        s.generated[0].claim.spec.requests[0].name,
        "container-0-request-0"
    );
    assert_eq!(placed_on(&mut s), [("ml/p".into(), "dra-node".into(), 3)]);
}

#[test]
fn the_latest_class_wins_an_extended_resource_name() {
    let newer = "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: newer, creationTimestamp: \"2025-06-01T00:00:00Z\"}\nspec:\n  extendedResourceName: example.com/gpu\n  selectors:\n  - cel:\n      expression: device.attributes[\"gpu.example.com\"].numaNode == 1\n";
    let text = format!(
        "{CLUSTER}{newer}{}",
        pod(
            "p",
            "  containers:\n  - name: c\n    resources:\n      limits: {example.com/gpu: 1}\n"
        )
    );
    let s = snapshot(&text);
    let gangpack::DeviceRequestKind::Exactly(e) = &s.generated[0].claim.spec.requests[0].kind
    else {
        panic!()
    };
    assert_eq!(e.device_class_name, "newer");
}

#[test]
fn an_extended_resource_nobody_provides_is_kept_with_a_warning() {
    let text = format!(
        "{CLUSTER}{}",
        pod(
            "p",
            "  containers:\n  - name: c\n    resources:\n      limits: {example.com/fpga: 1}\n"
        )
    );
    let mut s = snapshot(&text);
    assert_eq!(
        warnings(&s),
        [
            "in.yaml doc 5: Pod \"ml/p\": extended resource \"example.com/fpga\": no Node advertises it in status.allocatable and no DeviceClass provides it (spec.extendedResourceName): the pod cannot be scheduled"
        ]
    );
    assert_eq!(
        s.scheduler.pod("ml/p").unwrap().requests["example.com/fpga"],
        Quantity::from_int(1)
    );
    let report = s.scheduler.cycle();
    assert!(
        matches!(
            &report.units[0].1,
            UnitResult::Pending(GangOutcome::Unschedulable { .. })
        ),
        "{report:?}"
    );
}

#[test]
fn a_fractional_device_count_is_an_error() {
    let text = format!(
        "{CLUSTER}{}",
        pod(
            "p",
            "  containers:\n  - name: c\n    resources:\n      requests: {example.com/gpu: 500m}\n"
        )
    );
    assert_eq!(
        build(&text).err().unwrap(),
        "in.yaml doc 5: Pod \"ml/p\": spec.containers[0].resources.requests[\"example.com/gpu\"]: invalid value \"500m\": must be a whole number of devices"
    );
}

#[test]
fn a_running_pod_uses_the_extended_resource_claim_its_status_names() {
    let claim = r#"---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: p-extended-resources-9xk2q
  namespace: ml
  annotations: {resource.kubernetes.io/extended-resource-claim: "true"}
spec:
  devices:
    requests:
    - name: container-0-request-0
      exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 2}
status:
  allocation:
    devices:
      results:
      - {request: container-0-request-0, driver: gpu.example.com, pool: dra-node, device: gpu-0}
      - {request: container-0-request-0, driver: gpu.example.com, pool: dra-node, device: gpu-1}
"#;
    let spec = "  nodeName: dra-node\n  containers:\n  - name: c\n    resources:\n      limits: {example.com/gpu: 2}\nstatus:\n  phase: Running\n  extendedResourceClaimStatus:\n    resourceClaimName: p-extended-resources-9xk2q\n    requestMappings:\n    - {containerName: c, resourceName: example.com/gpu, requestName: container-0-request-0}\n";
    let text = format!("{CLUSTER}{claim}{}", pod("p", spec));
    let s = snapshot(&text);
    assert!(s.generated.is_empty());
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
    let p = s.scheduler.pod("ml/p").unwrap();
    assert!(!p.requests.contains_key("example.com/gpu"));
    assert_eq!(
        p.resource_claims[0].source,
        ClaimSource::ClaimName("p-extended-resources-9xk2q".into())
    );
    assert_eq!(s.scheduler.cluster().free_devices().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Admin access
// ---------------------------------------------------------------------------------------------

fn admin_claim(namespace: &str, allocated: bool) -> String {
    let status = if allocated {
        "status:\n  allocation:\n    devices:\n      results:\n      - {request: all, driver: gpu.example.com, pool: dra-node, device: gpu-0, adminAccess: true}\n"
    } else {
        ""
    };
    format!(
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: monitor, namespace: {namespace}}}\nspec:\n  devices:\n    requests:\n    - name: all\n      exactly: {{deviceClassName: gpu.example.com, allocationMode: All, adminAccess: true}}\n{status}"
    )
}

fn namespace(name: &str, labelled: bool) -> String {
    let labels = if labelled {
        "\n  labels: {resource.kubernetes.io/admin-access: \"true\"}"
    } else {
        "\n  labels: {team: ops}"
    };
    format!("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}{labels}\n")
}

#[test]
fn admin_access_is_admitted_in_a_labelled_namespace() {
    let text = format!(
        "{CLUSTER}{}{}",
        namespace("monitoring", true),
        admin_claim("monitoring", false)
    );
    let s = snapshot(&text);
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
    assert_eq!(s.scheduler.claims().count(), 1);
    // Allocated with admin access, a device stays free for others.
    let text = format!(
        "{CLUSTER}{}{}",
        namespace("monitoring", true),
        admin_claim("monitoring", true)
    );
    let s = snapshot(&text);
    assert_eq!(s.scheduler.cluster().free_devices().len(), 4);
}

#[test]
fn admin_access_needs_the_namespace_label() {
    let text = format!(
        "{CLUSTER}{}{}",
        namespace("ml", false),
        admin_claim("ml", false)
    );
    assert_eq!(
        build(&text).err().unwrap(),
        "in.yaml doc 6: ResourceClaim \"ml/monitor\": spec.devices.requests[0].exactly.adminAccess: admin access to devices requires the label resource.kubernetes.io/admin-access: \"true\" on Namespace \"ml\""
    );
    // Allocated or not.
    let text = format!(
        "{CLUSTER}{}{}",
        namespace("ml", false),
        admin_claim("ml", true)
    );
    assert!(build(&text).is_err());
    // A template too.
    let template = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: ml}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: a\n        exactly: {deviceClassName: gpu.example.com}\n      - name: b\n        exactly: {deviceClassName: gpu.example.com, adminAccess: true}\n";
    let text = format!("{CLUSTER}{}{template}", namespace("ml", false));
    assert_eq!(
        build(&text).err().unwrap(),
        "in.yaml doc 6: ResourceClaimTemplate \"ml/t\": spec.spec.devices.requests[1].exactly.adminAccess: admin access to devices requires the label resource.kubernetes.io/admin-access: \"true\" on Namespace \"ml\""
    );
}

#[test]
fn admin_access_without_the_namespace_object() {
    // Pending: refused, saying what to include.
    let text = format!("{CLUSTER}{}", admin_claim("ops", false));
    assert_eq!(
        build(&text).err().unwrap(),
        "in.yaml doc 5: ResourceClaim \"ops/monitor\": spec.devices.requests[0].exactly.adminAccess: admin access to devices requires the label resource.kubernetes.io/admin-access: \"true\" on Namespace \"ops\", which is not in the input: include the Namespace object"
    );
    // Allocated: it was admitted back then; a warning.
    let text = format!("{CLUSTER}{}", admin_claim("ops", true));
    let s = snapshot(&text);
    assert_eq!(
        warnings(&s),
        [
            "in.yaml doc 5: ResourceClaim \"ops/monitor\": spec.devices.requests[0].exactly.adminAccess: Namespace \"ops\" is not in the input, so its resource.kubernetes.io/admin-access label cannot be checked; the claim is allocated, so it was admitted"
        ]
    );
    assert_eq!(
        Snapshot::ADMIN_ACCESS_LABEL,
        "resource.kubernetes.io/admin-access"
    );
}

#[test]
fn a_planned_extended_resource_claim_is_recorded_on_the_pod_and_found_again() {
    use gangpack_k8s::output;
    let text = format!(
        "{CLUSTER}{}",
        pod(
            "trainer",
            r"  initContainers:
  - name: warmup
    resources:
      limits: {example.com/gpu: 1}
  containers:
  - name: main
    resources:
      limits: {example.com/gpu: 2}
"
        )
    );
    let mut s = snapshot(&text);
    let claim = s.generated[0].claim.name.clone();
    let plan = output::plan(&mut s);
    let pod = plan
        .changed
        .iter()
        .find(|v| v["kind"] == "Pod")
        .expect("the pod is written");
    assert_eq!(pod["spec"]["nodeName"], "dra-node");
    assert_eq!(
        pod["status"]["extendedResourceClaimStatus"],
        serde_json::json!({
            "resourceClaimName": claim,
            "requestMappings": [
                {"containerName": "warmup", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"},
                {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-1-request-0"},
            ],
        })
    );
    // Through the upstream type: the shape is the API's.
    let typed: k8s_openapi::api::core::v1::Pod = serde_json::from_value(pod.clone()).unwrap();
    let status = typed
        .status
        .unwrap()
        .extended_resource_claim_status
        .unwrap();
    assert_eq!(status.request_mappings.len(), 2);
    // Applied and read back: the pod is running with that claim; nothing is generated
    // again and the devices stay held.
    let mut docs: Vec<serde_json::Value> = s.objects.iter().map(|o| (*o.raw).clone()).collect();
    for c in &plan.changed {
        match docs
            .iter_mut()
            .find(|d| d["kind"] == c["kind"] && d["metadata"]["name"] == c["metadata"]["name"])
        {
            Some(d) => *d = c.clone(),
            None => docs.push(c.clone()),
        }
    }
    let yaml = serde_norway::to_string(&output::list(docs)).unwrap();
    let again = snapshot(&yaml);
    assert!(again.generated.is_empty(), "{:?}", again.generated);
    assert!(warnings(&again).is_empty(), "{:?}", warnings(&again));
    assert_eq!(again.scheduler.cluster().free_devices().len(), 4 - 3);
}
