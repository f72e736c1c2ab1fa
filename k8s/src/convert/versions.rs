//! Every API version a Kubernetes 1.37 API server serves for the kinds gangpack reads,
//! rewritten into the version gangpack converts from, as the API server converts it.
//!
//! | Kind | Read as | Also served by 1.37, converted |
//! |---|---|---|
//! | DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice | `resource.k8s.io/v1` | `v1beta2` (same shape), `v1beta1` |
//! | DeviceTaintRule | `resource.k8s.io/v1` | `v1beta2`, `v1alpha3` (same shape) |
//! | Workload, PodGroup | `scheduling.k8s.io/v1beta1` | `v1alpha3` (same shape, plus alpha-only kinds) |
//! | PriorityClass | `scheduling.k8s.io/v1` | — |
//! | Namespace, Node, Pod | `v1` | — |
//!
//! The list is the one `k8s-openapi`'s `v1_37` feature carries (generated from the 1.37
//! OpenAPI document) and kubernetes/kubernetes:pkg/registry/resource/rest/storage_resource.go
//! registers; beta and alpha versions are served once enabled with `--runtime-config`.
//!
//! `resource.k8s.io/v1beta1` differs from `v1` in three places, converted as
//! kubernetes/kubernetes:pkg/apis/resource/v1beta1/conversion.go does:
//!
//! - a request's fields for one kind of device (`deviceClassName`, `selectors`,
//!   `allocationMode`, `count`, `adminAccess`, `tolerations`, `capacity`, and
//!   `derivedAttributes`) sit on the request itself; when any is set they move into
//!   `exactly` (empty strings, a zero count and nulls count as unset, as in Go);
//! - a device's fields sit in `basic`, flattened in `v1`;
//! - a slice's `nodeName: ""` and `allNodes: false` mean unset (in `v1` both are
//!   pointers, and `allNodes: false` is invalid), so they are dropped.
//!
//! `v1beta2`, `v1alpha3` DeviceTaintRules and `scheduling.k8s.io/v1alpha3` have the
//! shape of the version read: only `apiVersion` changes.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::resource::{v1, v1alpha3, v1beta1, v1beta2};
use k8s_openapi::api::scheduling::{v1 as sched_v1, v1alpha3 as sched_a3, v1beta1 as sched_b1};

use super::de::{Segment, format_segments, is_map_key, typed_value};
use crate::object::Kind;

const RESOURCE: [&str; 3] = [
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
];
const TAINT_RULE: [&str; 3] = [
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1alpha3",
];
const SCHEDULING: [&str; 2] = ["scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"];

/// The `apiVersion`s a 1.37 API server serves for `kind`, the one gangpack converts
/// from ([`Kind::api_version`]) first.
pub(crate) fn served(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Namespace | Kind::Node | Kind::Pod => &["v1"],
        Kind::PriorityClass => &["scheduling.k8s.io/v1"],
        Kind::DeviceClass
        | Kind::ResourceSlice
        | Kind::ResourceClaimTemplate
        | Kind::ResourceClaim => &RESOURCE,
        Kind::DeviceTaintRule => &TAINT_RULE,
        Kind::Workload | Kind::PodGroup => &SCHEDULING,
    }
}

/// The API group of an `apiVersion` (`""` for the core group's `v1`).
pub(crate) fn group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Whether `group` is one of Kubernetes' own API groups (the core group, `apps`,
/// `batch`, `*.k8s.io`), rather than a custom resource's.
pub(crate) fn is_builtin_group(group: &str) -> bool {
    !group.contains('.') || group.ends_with(".k8s.io")
}

/// Rewrites a document of a served `apiVersion` into the version gangpack reads
/// ([`Kind::api_version`]).
pub(crate) fn to_read_version(kind: Kind, doc: &mut Value) {
    let Some(map) = doc.as_object_mut() else {
        return;
    };
    let from = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if from == kind.api_version() {
        return;
    }
    map.insert(
        "apiVersion".into(),
        Value::String(kind.api_version().into()),
    );
    if from != "resource.k8s.io/v1beta1" {
        return;
    }
    match kind {
        Kind::ResourceClaim => {
            if let Some(devices) = pointer_mut(doc, &["spec", "devices"]) {
                claim_devices(devices);
            }
        }
        Kind::ResourceClaimTemplate => {
            if let Some(devices) = pointer_mut(doc, &["spec", "spec", "devices"]) {
                claim_devices(devices);
            }
        }
        Kind::ResourceSlice => {
            if let Some(spec) = pointer_mut(doc, &["spec"]) {
                slice_spec(spec);
            }
        }
        _ => {}
    }
}

fn pointer_mut<'v>(v: &'v mut Value, path: &[&str]) -> Option<&'v mut Map<String, Value>> {
    let mut at = v;
    for p in path {
        at = at.as_object_mut()?.get_mut(*p)?;
    }
    at.as_object_mut()
}

/// The request fields that name one kind of device (`exactly` in `v1`).
const EXACT_FIELDS: [&str; 8] = [
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
    "derivedAttributes",
];

/// Whether a v1beta1 field holds a value (Go's zero values and `null` do not).
fn is_set(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        // Go's int64 `count`: 0 is unset.
        Value::Number(n) => n.as_i64() != Some(0),
        _ => true,
    }
}

/// A v1beta1 `DeviceClaim`: each request's own device fields move into `exactly`.
fn claim_devices(devices: &mut Map<String, Value>) {
    let Some(Value::Array(requests)) = devices.get_mut("requests") else {
        return;
    };
    for r in requests.iter_mut().filter_map(Value::as_object_mut) {
        let mut exactly = Map::new();
        for f in EXACT_FIELDS {
            if let Some(v) = r.remove(f)
                && is_set(&v)
            {
                exactly.insert(f.to_owned(), v);
            }
        }
        if !exactly.is_empty() {
            r.insert("exactly".into(), Value::Object(exactly));
        }
    }
}

/// A v1beta1 `ResourceSliceSpec`: `nodeName: ""` and `allNodes: false` are unset, and
/// each device's `basic` is flattened into the device.
fn slice_spec(spec: &mut Map<String, Value>) {
    if spec.get("nodeName").is_some_and(|v| !is_set(v)) {
        spec.remove("nodeName");
    }
    if matches!(spec.get("allNodes"), Some(Value::Null | Value::Bool(false))) {
        spec.remove("allNodes");
    }
    let Some(Value::Array(devices)) = spec.get_mut("devices") else {
        return;
    };
    for d in devices.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(basic) = d.remove("basic") {
            if let Value::Object(fields) = basic {
                for (k, v) in fields {
                    d.entry(k).or_insert(v);
                }
            } else if !basic.is_null() {
                // Not a mapping: kept, so that the typed read reports it.
                d.insert("basic".into(), basic);
            }
        }
    }
}

/// The fields of a document that its own `apiVersion` does not know, and the document
/// as that version knows it (read and written back: what the API server keeps of it).
pub(crate) struct Known {
    /// The unknown fields' paths (`spec.devices.requests[0].bogusField`), in document
    /// order (keys sorted).
    pub(crate) unknown: Vec<String>,
    /// The document without them.
    pub(crate) doc: Value,
}

/// What a document's own `apiVersion` schema says about it: its unknown fields and what
/// is known ([`Known`]), or the type error that stops reading it (field path, message).
pub(crate) fn unknown_fields(
    kind: Kind,
    api_version: &str,
    doc: &Value,
) -> Result<Known, (String, String)> {
    use Kind as K;
    match (kind, api_version) {
        (K::Namespace, _) => check::<core::Namespace>(kind, doc),
        (K::Node, _) => check::<core::Node>(kind, doc),
        (K::Pod, _) => check::<core::Pod>(kind, doc),
        (K::PriorityClass, _) => check::<sched_v1::PriorityClass>(kind, doc),
        (K::DeviceClass, "resource.k8s.io/v1beta1") => check::<v1beta1::DeviceClass>(kind, doc),
        (K::DeviceClass, "resource.k8s.io/v1beta2") => check::<v1beta2::DeviceClass>(kind, doc),
        (K::DeviceClass, _) => check::<v1::DeviceClass>(kind, doc),
        (K::ResourceSlice, "resource.k8s.io/v1beta1") => check::<v1beta1::ResourceSlice>(kind, doc),
        (K::ResourceSlice, "resource.k8s.io/v1beta2") => check::<v1beta2::ResourceSlice>(kind, doc),
        (K::ResourceSlice, _) => check::<v1::ResourceSlice>(kind, doc),
        (K::DeviceTaintRule, "resource.k8s.io/v1alpha3") => {
            check::<v1alpha3::DeviceTaintRule>(kind, doc)
        }
        (K::DeviceTaintRule, "resource.k8s.io/v1beta2") => {
            check::<v1beta2::DeviceTaintRule>(kind, doc)
        }
        (K::DeviceTaintRule, _) => check::<v1::DeviceTaintRule>(kind, doc),
        (K::ResourceClaimTemplate, "resource.k8s.io/v1beta1") => {
            check::<v1beta1::ResourceClaimTemplate>(kind, doc)
        }
        (K::ResourceClaimTemplate, "resource.k8s.io/v1beta2") => {
            check::<v1beta2::ResourceClaimTemplate>(kind, doc)
        }
        (K::ResourceClaimTemplate, _) => check::<v1::ResourceClaimTemplate>(kind, doc),
        (K::ResourceClaim, "resource.k8s.io/v1beta1") => check::<v1beta1::ResourceClaim>(kind, doc),
        (K::ResourceClaim, "resource.k8s.io/v1beta2") => check::<v1beta2::ResourceClaim>(kind, doc),
        (K::ResourceClaim, _) => check::<v1::ResourceClaim>(kind, doc),
        (K::Workload, "scheduling.k8s.io/v1alpha3") => check::<sched_a3::Workload>(kind, doc),
        (K::Workload, _) => check::<sched_b1::Workload>(kind, doc),
        (K::PodGroup, "scheduling.k8s.io/v1alpha3") => check::<sched_a3::PodGroup>(kind, doc),
        (K::PodGroup, _) => check::<sched_b1::PodGroup>(kind, doc),
    }
}

/// Reads `doc` as `T` and writes it back: what did not survive is unknown to `T`.
fn check<T: DeserializeOwned + Serialize>(
    kind: Kind,
    doc: &Value,
) -> Result<Known, (String, String)> {
    let typed: T = typed_value(kind, doc)?;
    let known = serde_json::to_value(&typed).unwrap_or(Value::Null);
    let mut unknown = Vec::new();
    diff(
        kind,
        doc,
        &known,
        &mut Vec::new(),
        &mut Vec::new(),
        &mut unknown,
    );
    Ok(Known {
        unknown,
        doc: known,
    })
}

/// Every non-null field of `input` that `known` (the typed read written back) lacks.
///
/// The path walked so far is held borrowed (`at`: each step a field name, a map key or
/// an index; `names`: the field names [`is_map_key`] asks about, `None` for the others)
/// and spelled out only for an unknown field: nothing is allocated per field visited.
fn diff<'a>(
    kind: Kind,
    input: &'a Value,
    known: &Value,
    at: &mut Vec<Step<'a>>,
    names: &mut Vec<Option<&'a str>>,
    out: &mut Vec<String>,
) {
    match (input, known) {
        (Value::Object(i), Value::Object(k)) => {
            let map_key = is_map_key(kind, names);
            for (name, v) in i {
                if v.is_null() {
                    continue;
                }
                at.push(if map_key {
                    Step::Key(name)
                } else {
                    Step::Field(name)
                });
                names.push((!map_key).then_some(name.as_str()));
                match k.get(name) {
                    Some(kv) => diff(kind, v, kv, at, names, out),
                    None => out.push(spelled(at)),
                }
                at.pop();
                names.pop();
            }
        }
        (Value::Array(i), Value::Array(k)) => {
            for (n, (v, kv)) in i.iter().zip(k).enumerate() {
                at.push(Step::Index(n));
                names.push(None);
                diff(kind, v, kv, at, names, out);
                at.pop();
                names.pop();
            }
        }
        _ => {}
    }
}

/// One step of the path [`diff`] walks: a [`Segment`] that borrows its name.
#[derive(Clone, Copy)]
enum Step<'a> {
    Field(&'a str),
    Key(&'a str),
    Index(usize),
}

/// A path of [`Step`]s in Kubernetes' JSON spelling ([`format_segments`]).
fn spelled(at: &[Step<'_>]) -> String {
    let segments: Vec<Segment> = at
        .iter()
        .map(|s| match *s {
            Step::Field(f) => Segment::Field(f.to_owned()),
            Step::Key(k) => Segment::Key(k.to_owned()),
            Step::Index(i) => Segment::Index(i),
        })
        .collect();
    format_segments(&segments)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn v1beta1_requests_move_their_device_fields_into_exactly() {
        let mut doc = json!({
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceClaim",
            "spec": {"devices": {"requests": [
                {"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2,
                 "allocationMode": "ExactCount", "adminAccess": null},
                {"name": "any", "deviceClassName": "", "count": 0,
                 "firstAvailable": [{"name": "big", "deviceClassName": "big"}]},
            ]}},
        });
        to_read_version(Kind::ResourceClaim, &mut doc);
        assert_eq!(
            doc,
            json!({
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                     "count": 2, "allocationMode": "ExactCount"}},
                    {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "big"}]},
                ]}},
            })
        );
    }

    #[test]
    fn v1beta1_slices_flatten_basic_and_drop_zero_values() {
        let mut doc = json!({
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceSlice",
            "spec": {"nodeName": "", "allNodes": false, "perDeviceNodeSelection": true,
                     "devices": [{"name": "gpu-0", "basic": {"nodeName": "a",
                                  "capacity": {"memory": {"value": "80Gi"}}}}]},
        });
        to_read_version(Kind::ResourceSlice, &mut doc);
        assert_eq!(
            doc["spec"],
            json!({"perDeviceNodeSelection": true,
                   "devices": [{"name": "gpu-0", "nodeName": "a",
                                "capacity": {"memory": {"value": "80Gi"}}}]})
        );
    }

    #[test]
    fn unknown_fields_are_named_by_path_in_the_documents_own_version() {
        let doc = json!({
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s", "labels": {"a": "b"}, "bogus": 1},
            "spec": {"driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "nodeName": "n", "nodeSelector": null,
                     "devices": [{"name": "gpu-0", "basic": {"extra": true,
                                  "attributes": {"x": {"int": 1, "flavour": "y"}}}}]},
        });
        let found = unknown_fields(Kind::ResourceSlice, "resource.k8s.io/v1beta1", &doc);
        assert_eq!(
            found.unwrap().unknown,
            [
                "metadata.bogus",
                "spec.devices[0].basic.attributes[\"x\"].flavour",
                "spec.devices[0].basic.extra",
            ]
        );
    }
}
