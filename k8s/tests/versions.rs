//! Input as the API server reads it: every served API version converted into the one
//! gangpack reads, unknown fields, duplicate keys, grouped warnings (issue 13).

use gangpack_k8s::{
    BuildOptions, Kind, LoadOptions, Snapshot, Warning, group_warnings, load_str, load_str_with,
};
use serde_json::Value;

/// The raw documents of a load, in order.
fn raws(text: &str) -> Vec<Value> {
    let loaded = load_str(text, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
    // Only the warning that a default API server does not serve the version.
    assert!(
        loaded.warnings.iter().all(|w| w
            .message
            .contains("which a default Kubernetes 1.37 API server does not serve")),
        "{:?}",
        loaded.warnings
    );
    loaded
        .objects
        .into_iter()
        .map(|o| std::sync::Arc::unwrap_or_clone(o.raw))
        .collect()
}

/// The load's errors, one per line.
fn load_errors(text: &str, file: &str) -> String {
    match load_str(text, file) {
        Ok(l) => panic!("no error: {:?}", l.objects),
        Err(e) => e.to_string(),
    }
}

const CLAIM_V1: &str = "apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.intel.com
        count: 2
        selectors:
        - cel: {expression: \"device.attributes['gpu.intel.com'].family == 'Data Center GPU Max'\"}
        tolerations:
        - {key: gpu.intel.com/unhealthy, operator: Exists, effect: NoSchedule}
    - name: any
      firstAvailable:
      - {name: max, deviceClassName: gpu.intel.com}
";

const CLAIM_V1BETA1: &str = "apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.intel.com
      count: 2
      selectors:
      - cel: {expression: \"device.attributes['gpu.intel.com'].family == 'Data Center GPU Max'\"}
      tolerations:
      - {key: gpu.intel.com/unhealthy, operator: Exists, effect: NoSchedule}
    - name: any
      deviceClassName: \"\"
      firstAvailable:
      - {name: max, deviceClassName: gpu.intel.com}
";

#[test]
fn a_v1beta1_claim_reads_as_its_v1_form() {
    assert_eq!(raws(CLAIM_V1BETA1), raws(CLAIM_V1));
    let v1beta2 = CLAIM_V1.replace("resource.k8s.io/v1\n", "resource.k8s.io/v1beta2\n");
    assert_eq!(raws(&v1beta2), raws(CLAIM_V1));
}

#[test]
fn a_v1beta1_slice_reads_as_its_v1_form() {
    let v1 = "apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, generation: 3, resourceSliceCount: 1}
  perDeviceNodeSelection: true
  devices:
  - name: gpu-0
    nodeName: example-0
    attributes: {model: {string: LATEST-GPU-MODEL}}
    capacity: {memory: {value: 80Gi}}
";
    // A v1beta1 client writes the zero values of its non-pointer fields.
    let v1beta1 = "apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, generation: 3, resourceSliceCount: 1}
  nodeName: \"\"
  allNodes: false
  perDeviceNodeSelection: true
  devices:
  - name: gpu-0
    basic:
      nodeName: example-0
      attributes: {model: {string: LATEST-GPU-MODEL}}
      capacity: {memory: {value: 80Gi}}
";
    assert_eq!(raws(v1beta1), raws(v1));
}

#[test]
fn device_taint_rules_of_every_served_version_convert() {
    for v in ["v1", "v1beta2", "v1alpha3"] {
        let text = format!(
            "apiVersion: resource.k8s.io/{v}\nkind: DeviceTaintRule\nmetadata: {{name: r}}\nspec:\n  deviceSelector: {{driver: gpu.nvidia.com, pool: dgx-0, device: gpu-0}}\n  taint: {{key: nvidia.com/xid, value: \"79\", effect: NoExecute}}\n"
        );
        let loaded = load_str(&text, "r.yaml").unwrap();
        let rule = gangpack_k8s::device_taint_rule(&loaded.objects[0]).unwrap();
        assert!(rule.selects("gpu.nvidia.com", "dgx-0", "gpu-0"), "{v}");
        assert_eq!(rule.taint.to_string(), "nvidia.com/xid=79:NoExecute", "{v}");
    }
}

#[test]
fn served_versions_are_the_ones_1_37_serves() {
    assert_eq!(
        Kind::ResourceClaim.served_versions(),
        [
            "resource.k8s.io/v1",
            "resource.k8s.io/v1beta2",
            "resource.k8s.io/v1beta1"
        ]
    );
    assert_eq!(
        Kind::from_type("resource.k8s.io/v1alpha3", "DeviceTaintRule"),
        Some(Kind::DeviceTaintRule)
    );
    assert_eq!(
        Kind::from_type("resource.k8s.io/v1alpha3", "ResourceClaim"),
        None
    );
    assert_eq!(
        Kind::from_type("scheduling.k8s.io/v1alpha3", "PodGroup"),
        Some(Kind::PodGroup)
    );
    assert_eq!(
        Kind::from_type("scheduling.k8s.io/v1beta1", "PriorityClass"),
        None
    );
    for k in Kind::ALL {
        assert_eq!(k.served_versions()[0], k.api_version());
    }
}

#[test]
fn a_type_error_in_another_version_is_named_by_its_own_path() {
    let text = "apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      capacity: {memory: {value: [80Gi]}}
";
    let e = load_errors(text, "t.yaml");
    assert!(
        e.starts_with(
            "t.yaml doc 1: ResourceSlice \"s\": spec.devices[0].basic.capacity[\"memory\"].value: invalid type"
        ),
        "{e}"
    );
}

#[test]
fn unknown_fields_are_warnings_or_with_strict_errors() {
    let text = "apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selector:
  - cel: {expression: \"device.driver == 'gpu.example.com'\"}
";
    let loaded = load_str(text, "c.yaml").unwrap();
    let w: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        w,
        ["c.yaml doc 1: DeviceClass \"gpu.example.com\": unknown field \"spec.selector\""]
    );
    // Ignored: a class without selectors.
    let s = Snapshot::build(loaded, &BuildOptions::default()).unwrap();
    assert_eq!(s.warnings.len(), 1);
    let e = load_str_with(
        text,
        "c.yaml",
        &LoadOptions {
            strict: true,
            ..LoadOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "c.yaml doc 1: DeviceClass \"gpu.example.com\": unknown field \"spec.selector\""
    );
}

#[test]
fn a_kind_list_s_items_are_checked_too() {
    let text = "apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimList
items:
- metadata: {name: c, namespace: ml}
  spec:
    devices:
      requests:
      - {name: gpu, deviceClassName: gpu.example.com, counnt: 2}
";
    let loaded = load_str(text, "l.yaml").unwrap();
    let w: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        w,
        [
            "l.yaml doc 1 item 0: ResourceClaim \"ml/c\": unknown field \"spec.devices.requests[0].counnt\"",
            "l.yaml doc 1 item 0: ResourceClaim \"ml/c\": uses resource.k8s.io/v1beta1, which a \
             default Kubernetes 1.37 API server does not serve (only with \
             --runtime-config=resource.k8s.io/v1beta1=true); converted to resource.k8s.io/v1"
        ]
    );
    assert_eq!(
        loaded.objects[0].raw["spec"]["devices"]["requests"][0],
        serde_json::json!({"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}})
    );
}

#[test]
fn duplicate_keys_are_errors_in_yaml_and_json() {
    let yaml =
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  labels:\n    zone: x\n    zone: y\n";
    assert_eq!(
        load_errors(yaml, "n.yaml"),
        "n.yaml doc 1: line 7: mapping key \"zone\" already defined at line 6"
    );
    let json = "{\"apiVersion\": \"v1\",\n \"kind\": \"Node\",\n \"kind\": \"Node\",\n \"metadata\": {\"name\": \"a\"}}";
    assert_eq!(
        load_errors(json, "n.json"),
        "n.json doc 1: line 3: mapping key \"kind\" already defined"
    );
    // Equal keys in different mappings are not duplicates.
    let ok = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  labels: {name: a}\n";
    assert_eq!(raws(ok).len(), 1);
}

#[test]
fn warnings_of_one_cause_fold_into_one_line() {
    let w = |object: &str, doc: usize, message: String| Warning {
        source: Some(gangpack_k8s::Source {
            file: "s.yaml".into(),
            doc,
            item: None,
        }),
        object: Some(object.into()),
        message,
    };
    let mut list: Vec<Warning> = (0..16)
        .map(|i| {
            w(
                "ResourceSlice \"cpu-0\"",
                1,
                format!(
                    "spec.devices[{i}].nodeAllocatableResources (alpha) is not modelled: ignored"
                ),
            )
        })
        .collect();
    list.push(w(
        "Pod \"ml/p\"",
        2,
        "spec.topologySpreadConstraints is not modelled: ignored".into(),
    ));
    let lines: Vec<String> = group_warnings(&list)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "s.yaml doc 1: ResourceSlice \"cpu-0\": spec.devices[*].nodeAllocatableResources \
             (alpha) is not modelled: ignored (16 times: spec.devices[0].nodeAllocatableResources, \
             spec.devices[1].nodeAllocatableResources, spec.devices[2].nodeAllocatableResources \
             and 13 more)",
            "s.yaml doc 2: Pod \"ml/p\": spec.topologySpreadConstraints is not modelled: ignored",
        ]
    );
}
