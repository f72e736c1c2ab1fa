//! Every class of input error, with its exact message, and `skip_invalid`.

use gangpack_k8s::{BuildOptions, InputErrors, Snapshot, load_str};

/// The load's or the build's errors, one per line.
fn errors(text: &str) -> String {
    errors_in(text, "cluster.yaml")
}

fn errors_in(text: &str, file: &str) -> String {
    let result = load_str(text, file)
        .and_then(|loaded| Snapshot::build(loaded, &BuildOptions::default()).map(|_| ()));
    match result {
        Ok(()) => panic!("no error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// `f(0) + f(1) + ... + f(n - 1)`.
fn lines(n: usize, f: impl Fn(usize) -> String) -> String {
    let mut out = String::new();
    for i in 0..n {
        out.push_str(&f(i));
    }
    out
}

const CLASS: &str = r#"apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.nvidia.com"}
"#;

fn slice(name: &str, devices: &str) -> String {
    format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: {name}}}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: node-7\n  pool: {{name: node-7, generation: 1, resourceSliceCount: 1}}\n  devices:\n{devices}"
    )
}

fn gpu(i: usize) -> String {
    format!(
        "  - name: gpu-{i}\n    attributes:\n      productName: {{string: NVIDIA H100 80GB HBM3}}\n      numaNode: {{int: {}}}\n    capacity:\n      memory: {{value: 80Gi}}\n",
        i / 4
    )
}

// ---------------------------------------------------------------------------------------------
// Syntax and shape
// ---------------------------------------------------------------------------------------------

#[test]
fn yaml_syntax_errors_give_line_and_column() {
    let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n labels: {}\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 1: YAML syntax error: did not find expected key at line 5 column 2, while parsing a block mapping"
    );
    // In a later document, after valid ones.
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: [b}\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 2: YAML syntax error: did not find expected ',' or ']' at line 7 column 20, while parsing a flow sequence at line 7 column 18"
    );
}

#[test]
fn json_syntax_errors_give_line_and_column() {
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"Node\",\n \"metadata\": {\"name\": }}";
    assert_eq!(
        errors_in(text, "nodes.json"),
        "nodes.json doc 1: JSON syntax error: expected value at line 2 column 23"
    );
}

#[test]
fn documents_must_be_objects_with_api_version_kind_and_name() {
    let text = "- a\n- b\n---\nkind: Pod\nmetadata: {name: p}\n---\napiVersion: v1\nmetadata: {name: p}\n---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: ml, generateName: p-}\n---\napiVersion: 1\nkind: Node\nmetadata: {name: n}\n";
    assert_eq!(
        errors(text),
        [
            "cluster.yaml doc 1: expected a Kubernetes object (a mapping with apiVersion, kind and metadata), found a list",
            "cluster.yaml doc 2: apiVersion: required value",
            "cluster.yaml doc 3: kind: required value",
            "cluster.yaml doc 4: Pod: metadata.name: required value",
            "cluster.yaml doc 5: apiVersion: must be a string, found a number",
        ]
        .join("\n")
    );
}

#[test]
fn every_load_error_of_every_file_is_reported() {
    let err: InputErrors = gangpack_k8s::load_paths(&[
        "tests/data/invalid/bad-syntax.yaml",
        "tests/data/invalid/no-names.yaml",
    ])
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        [
            "tests/data/invalid/bad-syntax.yaml doc 2: YAML syntax error: mapping values are not allowed in this context at line 9 column 12",
            "tests/data/invalid/no-names.yaml doc 1: Node: metadata.name: required value",
            "tests/data/invalid/no-names.yaml doc 2: DeviceClass: metadata.name: required value",
        ]
        .join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Field errors
// ---------------------------------------------------------------------------------------------

#[test]
fn a_bad_quantity_names_its_field() {
    let devices = format!("{}{}{}", gpu(0), gpu(1), gpu(2).replace("80Gi", "80 GiB"));
    let text = format!(
        "{CLASS}---\n{}---\n{}",
        "apiVersion: v1\nkind: Node\nmetadata: {name: node-7}\n",
        slice("node-7-gpu", &devices)
    );
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 3: ResourceSlice \"node-7-gpu\": spec.devices[2].capacity[\"memory\"].value: invalid quantity \"80 GiB\": unexpected character ' ' at byte 2"
    );
    // In a pod's container, and in a node's allocatable.
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  allocatable: {nvidia.com/gpu: eight}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n  - name: c\n    resources:\n      limits: {memory: 1.5.Gi}\n";
    assert_eq!(
        errors(text),
        [
            "cluster.yaml doc 1: Node \"n\": status.allocatable[\"nvidia.com/gpu\"]: invalid quantity \"eight\": unexpected character 'g' at byte 2",
            "cluster.yaml doc 2: Pod \"ml/p\": spec.containers[0].resources.limits[\"memory\"]: invalid quantity \"1.5.Gi\": unexpected character '.' at byte 3",
        ]
        .join("\n")
    );
}

#[test]
fn a_wrong_type_names_its_field() {
    let devices = gpu(0).replace("int: 0", "int: zero");
    let text = format!("{CLASS}---\n{}", slice("node-7-gpu", &devices));
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 2: ResourceSlice \"node-7-gpu\": spec.devices[0].attributes[\"numaNode\"].int: invalid type: string \"zero\", expected i64"
    );
    let text = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\nspec:\n  devices:\n    requests:\n    - name: gpus\n      exactly: {deviceClassName: gpu.nvidia.com, count: eight}\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 1: ResourceClaim \"ml/c\": spec.devices.requests[0].exactly.count: invalid type: string \"eight\", expected i64"
    );
    // A capacity's value must be a quantity (a string or a number).
    let devices = gpu(0).replace("value: 80Gi", "value: [80Gi]");
    let text = format!("{CLASS}---\n{}", slice("node-7-gpu", &devices));
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 2: ResourceSlice \"node-7-gpu\": spec.devices[0].capacity[\"memory\"].value: invalid type: sequence, expected Quantity"
    );
    // A missing required field of a typed object.
    let text = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  nodeName: n\n  pool: {name: p, generation: 0, resourceSliceCount: 1}\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 1: ResourceSlice \"s\": spec.driver: required value"
    );
    // A pod's nodeSelector is a map (its keys print as keys).
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {rack: [r1]}\n  containers: [{name: c}]\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 1: Pod \"default/p\": spec.nodeSelector[\"rack\"]: invalid type: sequence, expected a string"
    );
}

#[test]
fn a_bad_cel_selector_in_a_device_class() {
    let text = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: big}\nspec:\n  selectors:\n  - cel: {expression: device.driver == \"gpu.nvidia.com\"}\n  - cel:\n      expression: device.attributes[\"gpu.nvidia.com\"].productName.reverse() == \"001H\"\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 1: DeviceClass \"big\": spec.selectors[1].cel.expression: invalid CEL expression: at 48: unsupported function \"reverse\": not in the CEL environment Kubernetes gives DRA selectors (it needs version 3 of the strings extension)"
    );
    // In a pending claim too.
    let text = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\nspec:\n  devices:\n    requests:\n    - name: gpus\n      exactly:\n        deviceClassName: gpu.nvidia.com\n        selectors:\n        - cel: {expression: device.driver ==}\n";
    let e = errors(text);
    assert!(
        e.starts_with("cluster.yaml doc 1: ResourceClaim \"ml/c\": spec.devices.requests[0].exactly.selectors[0].cel.expression: invalid CEL expression: at "),
        "{e}"
    );
}

#[test]
fn core_validation_errors_keep_their_field_paths() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: Node_1}\nspec:\n  taints:\n  - {key: gpu, effect: NoSchedule}\n  - {key: gpu, effect: NoSchedule}\n  - {key: x, effect: Sometimes}\n";
    assert_eq!(
        errors(text),
        [
            "cluster.yaml doc 1: Node \"Node_1\": spec.taints[2].effect: unsupported value \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
            "cluster.yaml doc 1: Node \"Node_1\": metadata.name: invalid value \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            "cluster.yaml doc 1: Node \"Node_1\": spec.taints[1]: duplicate value \"gpu:NoSchedule\"",
        ]
        .join("\n")
    );
    let text = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec:\n  schedulingPolicy: {basic: {}}\n  disruptionMode: {all: {}}\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 1: PodGroup \"ml/g\": spec.disruptionMode: forbidden: the disruptionMode `all` is not supported with the Basic scheduling policy"
    );
    let text = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: gpu.nvidia.com\n  pool: {name: p, generation: 0, resourceSliceCount: 1}\n  devices: [{name: a}]\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 1: ResourceSlice \"s\": spec: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` must be set, found 0"
    );
}

#[test]
fn limits_are_enforced() {
    // 129 devices in one slice (the limit is 128).
    let devices = lines(129, |i| format!("  - name: gpu-{i}\n"));
    let text = format!("{CLASS}---\n{}", slice("node-7-gpu", &devices));
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 2: ResourceSlice \"node-7-gpu\": spec.devices: too many: 129, must have at most 128 items"
    );
    // 65 devices when one has a taint (the limit is 64).
    let mut devices = lines(65, |i| format!("  - name: gpu-{i}\n"));
    devices.push_str("    taints: [{key: k, effect: NoSchedule}]\n");
    let text = format!("{CLASS}---\n{}", slice("node-7-gpu", &devices));
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 2: ResourceSlice \"node-7-gpu\": spec.devices: too many: 65, must have at most 64 items"
    );
    // 33 attributes and capacities on one device (the limit is 32).
    let attrs = lines(33, |i| format!("      a{i}: {{int: {i}}}\n"));
    let text = slice("s", &format!("  - name: gpu-0\n    attributes:\n{attrs}"));
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 1: ResourceSlice \"s\": spec.devices[0].attributes: too many: 33, must have at most 32 items"
    );
}

// ---------------------------------------------------------------------------------------------
// Cross-object errors
// ---------------------------------------------------------------------------------------------

#[test]
fn duplicates_name_both_sources() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: x}\nspec: {containers: [{name: c}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: y}\nspec: {containers: [{name: c}]}\n";
    assert_eq!(
        errors(text),
        "cluster.yaml doc 3: Node \"a\": metadata.name: duplicate object: also defined at cluster.yaml doc 1"
    );
    // Across files.
    let mut loaded = load_str(
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n",
        "a.yaml",
    )
    .unwrap();
    loaded.extend(load_str("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a, labels: {later: \"yes\"}}}\n", "b.yaml").unwrap());
    // Across inputs the later one updates the object, as `kubectl apply` would.
    let s = Snapshot::build(loaded, &BuildOptions::default()).unwrap();
    let w: Vec<String> = s.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        w,
        [
            "b.yaml doc 1 item 0: Node \"a\": replaces the one at a.yaml doc 1 (a later input updates the object, as kubectl apply does)"
        ]
    );
    assert_eq!(s.objects.len(), 1);
    assert_eq!(s.objects[0].raw["metadata"]["labels"]["later"], "yes");
}

#[test]
fn dangling_references_are_errors_but_missing_claims_are_waited_for() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers: [{name: c}]\n  resourceClaims:\n  - {name: gpus, resourceClaimName: missing}\n  - {name: more, resourceClaimTemplateName: nowhere}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: ml}\nspec:\n  nodeName: gone\n  priorityClassName: vip\n  containers: [{name: c}]\n---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec:\n  schedulingPolicy: {gang: {minCount: 1}}\n  resourceClaims:\n  - {name: fabric, resourceClaimTemplateName: fabric}\n";
    // A missing node or PriorityClass is an error; a missing claim or template is not
    // (the API server accepts the pod, which waits).
    assert_eq!(
        errors(text),
        [
            "cluster.yaml doc 3: Pod \"ml/q\": spec.priorityClassName: not found: \"vip\"",
            "cluster.yaml doc 3: Pod \"ml/q\": spec.nodeName: not found: \"gone\"",
        ]
        .join("\n")
    );
    let (head, _) = text
        .split_once("---\napiVersion: v1\nkind: Pod\nmetadata: {name: q")
        .unwrap();
    let rest = text
        .split_once("  containers: [{name: c}]\n---\napiVersion: scheduling")
        .unwrap()
        .1;
    let text = format!("{head}---\napiVersion: scheduling{rest}");
    let s = Snapshot::build(
        load_str(&text, "cluster.yaml").unwrap(),
        &BuildOptions::default(),
    )
    .unwrap();
    let waiting: Vec<(String, String)> = s.waiting.iter().map(|w| (w.unit(), w.reason())).collect();
    assert_eq!(
        waiting,
        [
            (
                "Pod ml/p".to_owned(),
                "waiting for ResourceClaim \"ml/missing\" (spec.resourceClaims[0].resourceClaimName): it is not in the input; the scheduler holds the pod until it exists".to_owned()
            ),
            (
                "PodGroup ml/g".to_owned(),
                "waiting for ResourceClaimTemplate \"ml/fabric\" (spec.resourceClaims[0].resourceClaimTemplateName): it is not in the input, so the resourceclaim controller cannot create the claim; the scheduler holds its pods until it exists".to_owned()
            ),
        ]
    );
    assert!(s.scheduler.pod("ml/p").is_none());
    assert!(s.scheduler.group("ml/g").is_none());
}

#[test]
fn a_claim_allocated_twice_is_an_error_and_a_missing_device_a_warning() {
    let claim = |name: &str, device: &str| {
        format!(
            "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {{deviceClassName: gpu.nvidia.com}}\nstatus:\n  allocation:\n    devices:\n      results:\n      - {{request: gpu, driver: gpu.nvidia.com, pool: node-7, device: {device}}}\n"
        )
    };
    let base = format!("{CLASS}---\n{}", slice("node-7-gpu", &gpu(0)));
    let text = format!("{base}{}{}", claim("a", "gpu-0"), claim("b", "gpu-0"));
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 4: ResourceClaim \"ml/b\": status.allocation.devices.results[0]: device gpu.nvidia.com/node-7/gpu-0 is already allocated to ml/a"
    );
    let text = format!("{base}{}", claim("a", "gpu-9"));
    let s = Snapshot::build(
        load_str(&text, "cluster.yaml").unwrap(),
        &BuildOptions::default(),
    )
    .unwrap();
    let w: Vec<String> = s.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        w,
        [
            "cluster.yaml doc 3: ResourceClaim \"ml/a\": status.allocation.devices.results[0]: device gpu.nvidia.com/node-7/gpu-9 is not published (its slice is not in the input, or its pool is incomplete): it is not marked as allocated"
        ]
    );
}

#[test]
fn all_errors_are_reported_at_once() {
    let text = format!(
        "{}---\n{}---\n{}",
        CLASS.replace("device.driver ==", "device.driver ="),
        slice("s", &gpu(0).replace("80Gi", "80 GB")),
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {taints: [{key: k}]}\n",
    );
    let e = load_str(&text, "cluster.yaml")
        .and_then(|l| Snapshot::build(l, &BuildOptions::default()).map(|_| ()))
        .unwrap_err();
    assert_eq!(e.len(), 3, "{e}");
    let objects: Vec<&str> = e
        .errors
        .iter()
        .map(|e| e.object.as_deref().unwrap())
        .collect();
    // In input order, although nodes are applied first.
    assert_eq!(
        objects,
        [
            "DeviceClass \"gpu.nvidia.com\"",
            "ResourceSlice \"s\"",
            "Node \"n\""
        ]
    );
}

#[test]
fn errors_are_capped_and_counted() {
    let text = lines(60, |i| {
        format!("---\napiVersion: v1\nkind: Node\nmetadata: {{name: N{i}}}\n")
    });
    let e = load_str(&text, "cluster.yaml")
        .and_then(|l| Snapshot::build(l, &BuildOptions::default()).map(|_| ()))
        .unwrap_err();
    assert_eq!(e.len(), 60);
    assert_eq!(e.errors.len(), InputErrors::MAX);
    assert!(e.to_string().ends_with("\n... and 10 more"));
}

// ---------------------------------------------------------------------------------------------
// skip_invalid
// ---------------------------------------------------------------------------------------------

#[test]
fn skip_invalid_skips_invalid_objects_and_their_dependents() {
    let text = format!(
        "{}---\n{CLASS}---\n{}---\n{}---\n{}---\n{}---\n{}",
        "apiVersion: v1\nkind: Node\nmetadata: {name: node-7}\nstatus: {allocatable: {cpu: \"8\"}}\n",
        slice("node-7-gpu", &(gpu(0) + &gpu(1))),
        // An invalid claim (bad count) and the pod that uses it.
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: bad, namespace: ml}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com, count: 0}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: uses-bad, namespace: ml}\nspec:\n  containers: [{name: c}]\n  resourceClaims: [{name: gpu, resourceClaimName: bad}]\n",
        // A valid claim and its pod.
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: good, namespace: ml}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: uses-good, namespace: ml}\nspec:\n  containers: [{name: c}]\n  resourceClaims: [{name: gpu, resourceClaimName: good}]\n",
    );
    // Without skip_invalid: one error, the root cause.
    assert_eq!(
        errors(&text),
        "cluster.yaml doc 4: ResourceClaim \"ml/bad\": spec.devices.requests[0].exactly.count: invalid value \"0\": must be greater than zero"
    );
    let options = BuildOptions {
        skip_invalid: true,
        ..BuildOptions::default()
    };
    let mut s = Snapshot::build(load_str(&text, "cluster.yaml").unwrap(), &options).unwrap();
    let skipped: Vec<String> = s.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [
            "cluster.yaml doc 4: ResourceClaim \"ml/bad\": spec.devices.requests[0].exactly.count: invalid value \"0\": must be greater than zero",
            "cluster.yaml doc 5: Pod \"ml/uses-bad\": spec.resourceClaims[0].resourceClaimName: skipped: depends on ResourceClaim \"ml/bad\", which is invalid",
        ]
    );
    let pods: Vec<&str> = s.scheduler.pods().map(|p| p.name.as_str()).collect();
    assert_eq!(pods, ["uses-good"]);
    let report = s.scheduler.cycle();
    assert_eq!(report.pods_bound(), 1);
    // The snapshot keeps every loaded object.
    assert_eq!(s.objects.len(), 7);
}

#[test]
fn skip_invalid_follows_templates_and_pod_groups() {
    let text = format!(
        "{}---\n{CLASS}---\n{}---\n{}---\n{}---\n{}---\n{}",
        "apiVersion: v1\nkind: Node\nmetadata: {name: node-7}\n",
        slice("node-7-gpu", &gpu(0)),
        // An invalid template (a request name that is not a DNS label) ...
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: fabric, namespace: ml}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: Fabric\n        exactly: {deviceClassName: gpu.nvidia.com}\n",
        // ... a PodGroup whose claim comes from it ...
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: job, namespace: ml}\nspec:\n  schedulingPolicy: {gang: {minCount: 1}}\n  resourceClaims: [{name: fabric, resourceClaimTemplateName: fabric}]\n",
        // ... its member ...
        "apiVersion: v1\nkind: Pod\nmetadata: {name: w0, namespace: ml}\nspec:\n  schedulingGroup: {podGroupName: job}\n  containers: [{name: c}]\n",
        // ... and an unrelated pod.
        "apiVersion: v1\nkind: Pod\nmetadata: {name: solo, namespace: ml}\nspec:\n  containers: [{name: c}]\n",
    );
    let options = BuildOptions {
        skip_invalid: true,
        ..BuildOptions::default()
    };
    let s = Snapshot::build(load_str(&text, "cluster.yaml").unwrap(), &options).unwrap();
    let skipped: Vec<String> = s.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [
            "cluster.yaml doc 4: ResourceClaimTemplate \"ml/fabric\": spec.spec.devices.requests[0].name: invalid value \"Fabric\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            "cluster.yaml doc 5: PodGroup \"ml/job\": spec.resourceClaims[0].resourceClaimTemplateName: skipped: depends on ResourceClaimTemplate \"ml/fabric\", which is invalid",
            "cluster.yaml doc 6: Pod \"ml/w0\": spec.schedulingGroup.podGroupName: skipped: depends on PodGroup \"ml/job\", which is invalid",
        ]
    );
    let pods: Vec<&str> = s.scheduler.pods().map(|p| p.name.as_str()).collect();
    assert_eq!(pods, ["solo"]);
    assert!(s.scheduler.group("ml/job").is_none());
}
