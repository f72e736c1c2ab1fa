//! The example manifests (and the demo's, and the CLI tests' scenarios) spell every field as Kubernetes does: each
//! object goes through its `k8s-openapi` 1.37 type and back without losing anything
//! (the types ignore unknown fields, so a misspelt field would be dropped).

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::resource::v1::{
    DeviceClass, DeviceTaintRule, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::scheduling::v1beta1::{PodGroup, Workload};
use serde::Deserialize as _;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is in the workspace")
        .to_path_buf()
}

fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(v: &Value) -> Value {
    let typed: T = serde_json::from_value(v.clone()).expect("deserializes");
    serde_json::to_value(typed).expect("serializes")
}

/// Checks that `v` (an object, or a `kind: List` of them) survives its typed round trip.
fn check(v: &Value, where_: &str) {
    let kind = v["kind"].as_str().unwrap_or_default();
    let api = v["apiVersion"].as_str().unwrap_or_default();
    let back = match (api, kind) {
        ("v1", "List") => {
            for (i, item) in v["items"].as_array().expect("items").iter().enumerate() {
                check(item, &format!("{where_} item {i}"));
            }
            return;
        }
        ("v1", "Binding") => round_trip::<k8s_openapi::api::core::v1::Binding>(v),
        ("v1", "Namespace") => round_trip::<Namespace>(v),
        ("v1", "Node") => round_trip::<Node>(v),
        ("v1", "Pod") => round_trip::<Pod>(v),
        ("scheduling.k8s.io/v1", "PriorityClass") => round_trip::<PriorityClass>(v),
        ("scheduling.k8s.io/v1beta1", "PodGroup") => round_trip::<PodGroup>(v),
        ("scheduling.k8s.io/v1beta1", "Workload") => round_trip::<Workload>(v),
        ("resource.k8s.io/v1", "DeviceClass") => round_trip::<DeviceClass>(v),
        ("resource.k8s.io/v1", "DeviceTaintRule") => round_trip::<DeviceTaintRule>(v),
        ("resource.k8s.io/v1", "ResourceClaim") => round_trip::<ResourceClaim>(v),
        ("resource.k8s.io/v1", "ResourceClaimTemplate") => round_trip::<ResourceClaimTemplate>(v),
        ("resource.k8s.io/v1", "ResourceSlice") => round_trip::<ResourceSlice>(v),
        other => panic!("{where_}: unexpected {other:?}"),
    };
    assert_eq!(&back, v, "{where_}: {api} {kind} loses or changes fields");
}

fn check_text(text: &str, name: &str) -> usize {
    let mut n = 0;
    for (i, doc) in serde_norway::Deserializer::from_str(text).enumerate() {
        let v = Value::deserialize(doc).unwrap_or_else(|e| panic!("{name} doc {}: {e}", i + 1));
        if v.is_null() {
            continue;
        }
        check(&v, &format!("{name} doc {}", i + 1));
        n += 1;
    }
    n
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}

#[test]
fn examples_use_upstream_field_names() {
    let mut files = Vec::new();
    yaml_files(&root().join("examples"), &mut files);
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let mut docs = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        docs += check_text(&text, &f.display().to_string());
    }
    assert!(docs > 20, "{docs} documents");
}

/// The scenario manifests of the CLI tests (`cli/tests/fixtures/`) likewise.
#[test]
fn scenario_fixtures_use_upstream_field_names() {
    let mut files = Vec::new();
    yaml_files(&root().join("cli/tests/fixtures"), &mut files);
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        assert!(
            check_text(&text, &f.display().to_string()) > 0,
            "{}",
            f.display()
        );
    }
}

#[test]
fn demo_manifests_use_upstream_field_names() {
    let output = cargo_bin_cmd!("gangpack")
        .args(["demo", "--manifests"])
        .output()
        .expect("runs");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(check_text(&text, "demo") > 100);
}

#[test]
fn a_misspelt_field_is_caught() {
    let text = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n  name: g\n  \
                namespace: ml\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: 2\n  \
                schedulingConstraint:\n    topology:\n    - key: rack\n";
    let caught = std::panic::catch_unwind(|| check_text(text, "typo"));
    assert!(
        caught.is_err(),
        "schedulingConstraint (no s) must be reported"
    );
}
