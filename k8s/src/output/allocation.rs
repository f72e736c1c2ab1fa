//! `resource.k8s.io/v1` `AllocationResult` in upstream JSON shape.

use gangpack::{
    AllocationConfigSource, AllocationResult, DeviceAllocationConfiguration,
    DeviceRequestAllocationResult, DeviceToleration, NodeSelector, NodeSelectorRequirement, Time,
};
use serde_json::{Map, Value, json};

use super::time::time_to_rfc3339;

/// A claim's `status.allocation` exactly as the API server stores it
/// (`resource.k8s.io/v1` `AllocationResult`), with `allocationTimestamp` set to `now`.
///
/// The core's own serde shape is not the API's (results are not nested under
/// `devices`, allocation modes are enums), so the mapping is by hand, field by field as
/// in `k8s-openapi`'s `v1_37::api::resource::v1`:
///
/// - `devices.results[]`: `request` (`request/subrequest` for `firstAvailable`),
///   `driver`, `pool`, `device`, then only when set: `adminAccess: true`,
///   `tolerations`, `bindingConditions`, `bindingFailureConditions`, `shareID`,
///   `consumedCapacity` (quantities in canonical form);
/// - `devices.config[]` (omitted when empty): `source` (`FromClass` / `FromClaim`),
///   `requests` (omitted when empty: applies to every request), `opaque: {driver,
///   parameters}` with the parameters as the JSON object they are;
/// - `devices` is always present (a Go struct value is never omitted), `results`
///   and `config` are omitted when empty, as the API server prints them;
/// - `nodeSelector` (omitted when the devices are usable everywhere);
/// - `allocationTimestamp`.
///
/// ```
/// use gangpack::{AllocationResult, DeviceRequestAllocationResult, Time};
/// use gangpack_k8s::output::allocation_to_json;
///
/// let result = AllocationResult {
///     devices: vec![DeviceRequestAllocationResult {
///         request: "gpus".into(),
///         driver: "gpu.example.com".into(),
///         pool: "node-a".into(),
///         device: "gpu-0".into(),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     allocation_to_json(&result, Time(0)),
///     serde_json::json!({
///         "devices": {"results": [
///             {"request": "gpus", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0"}
///         ]},
///         "allocationTimestamp": "1970-01-01T00:00:00Z"
///     })
/// );
/// ```
pub fn allocation_to_json(result: &AllocationResult, now: Time) -> Value {
    let mut devices = Map::new();
    if !result.devices.is_empty() {
        devices.insert(
            "results".into(),
            result.devices.iter().map(device_result).collect(),
        );
    }
    if !result.config.is_empty() {
        devices.insert("config".into(), result.config.iter().map(config).collect());
    }
    let mut out = Map::new();
    out.insert("devices".into(), Value::Object(devices));
    if let Some(selector) = &result.node_selector {
        out.insert("nodeSelector".into(), node_selector_to_json(selector));
    }
    out.insert(
        "allocationTimestamp".into(),
        Value::String(time_to_rfc3339(now)),
    );
    Value::Object(out)
}

/// A core/v1 `NodeSelector` in API shape: `{"nodeSelectorTerms": [{"matchExpressions":
/// [...], "matchFields": [...]}]}`, empty lists and `values` omitted.
///
/// ```
/// use gangpack::NodeSelector;
/// use gangpack_k8s::output::node_selector_to_json;
///
/// assert_eq!(
///     node_selector_to_json(&NodeSelector::single_node("node-a")),
///     serde_json::json!({"nodeSelectorTerms": [{"matchFields": [
///         {"key": "metadata.name", "operator": "In", "values": ["node-a"]}
///     ]}]})
/// );
/// ```
pub fn node_selector_to_json(selector: &NodeSelector) -> Value {
    let terms: Vec<Value> = selector
        .terms
        .iter()
        .map(|t| {
            let mut term = Map::new();
            if !t.match_expressions.is_empty() {
                term.insert(
                    "matchExpressions".into(),
                    t.match_expressions.iter().map(requirement).collect(),
                );
            }
            if !t.match_fields.is_empty() {
                term.insert(
                    "matchFields".into(),
                    t.match_fields.iter().map(requirement).collect(),
                );
            }
            Value::Object(term)
        })
        .collect();
    json!({ "nodeSelectorTerms": terms })
}

fn requirement(r: &NodeSelectorRequirement) -> Value {
    let mut out = Map::new();
    out.insert("key".into(), Value::String(r.key.clone()));
    out.insert("operator".into(), Value::String(r.operator.as_str().into()));
    if !r.values.is_empty() {
        out.insert("values".into(), strings(&r.values));
    }
    Value::Object(out)
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().cloned().map(Value::String).collect())
}

fn device_result(r: &DeviceRequestAllocationResult) -> Value {
    let mut out = Map::new();
    out.insert("request".into(), Value::String(r.request.clone()));
    out.insert("driver".into(), Value::String(r.driver.clone()));
    out.insert("pool".into(), Value::String(r.pool.clone()));
    out.insert("device".into(), Value::String(r.device.clone()));
    if r.admin_access {
        out.insert("adminAccess".into(), Value::Bool(true));
    }
    if !r.tolerations.is_empty() {
        out.insert(
            "tolerations".into(),
            r.tolerations.iter().map(toleration).collect(),
        );
    }
    if !r.binding_conditions.is_empty() {
        out.insert("bindingConditions".into(), strings(&r.binding_conditions));
    }
    if !r.binding_failure_conditions.is_empty() {
        out.insert(
            "bindingFailureConditions".into(),
            strings(&r.binding_failure_conditions),
        );
    }
    if let Some(id) = &r.share_id {
        out.insert("shareID".into(), Value::String(id.clone()));
    }
    if !r.consumed_capacity.is_empty() {
        let caps: Map<String, Value> = r
            .consumed_capacity
            .iter()
            .map(|(k, q)| (k.clone(), Value::String(q.to_string())))
            .collect();
        out.insert("consumedCapacity".into(), Value::Object(caps));
    }
    Value::Object(out)
}

/// A `DeviceToleration` as the API server stores it: `operator` defaulted (always
/// present), the other fields omitted when empty.
pub(crate) fn toleration(t: &DeviceToleration) -> Value {
    let mut out = Map::new();
    if !t.key.is_empty() {
        out.insert("key".into(), Value::String(t.key.clone()));
    }
    out.insert("operator".into(), Value::String(t.operator.as_str().into()));
    if !t.value.is_empty() {
        out.insert("value".into(), Value::String(t.value.clone()));
    }
    if let Some(e) = &t.effect
        && !e.as_str().is_empty()
    {
        out.insert("effect".into(), Value::String(e.as_str().into()));
    }
    if let Some(s) = t.toleration_seconds {
        out.insert("tolerationSeconds".into(), Value::from(s));
    }
    Value::Object(out)
}

fn config(c: &DeviceAllocationConfiguration) -> Value {
    let source = match c.source {
        AllocationConfigSource::FromClass => "FromClass",
        AllocationConfigSource::FromClaim => "FromClaim",
    };
    // The parameters were validated as a JSON object; keep the text if they somehow
    // are not JSON rather than lose them.
    let parameters = serde_json::from_str::<Value>(&c.opaque.parameters)
        .unwrap_or_else(|_| Value::String(c.opaque.parameters.clone()));
    let mut out = Map::new();
    out.insert("source".into(), Value::String(source.into()));
    if !c.requests.is_empty() {
        out.insert("requests".into(), strings(&c.requests));
    }
    out.insert(
        "opaque".into(),
        json!({ "driver": c.opaque.driver, "parameters": parameters }),
    );
    Value::Object(out)
}
