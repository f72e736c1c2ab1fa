//! [`scenario_manifests`]: a [`Scenario`] written as the Kubernetes 1.37 objects it
//! stands for (what each object looks like is documented on the function).

use std::collections::{BTreeMap, BTreeSet};

use gangpack::testing::{Namespace, Scenario};
use gangpack::{
    AllocationMode, CapacityRequestPolicy, ClaimSource, ConstraintKind, CounterSet, Device,
    DeviceAttribute, DeviceCapacity, DeviceClaimConfiguration, DeviceClass, DeviceConstraint,
    DeviceCounterConsumption, DeviceRequest, DeviceRequestKind, DeviceSelector, DeviceTaint,
    DeviceTaintRule, DeviceToleration, DisruptionMode, NodeAccess, OpaqueDeviceConfiguration, Pod,
    PodGroup, PriorityClass, Quantity, ResourceClaim, ResourceSlice, SchedulingPolicy,
    SliceNodeSelection, Taint, Time, Toleration, TopologyConstraint, Workload,
};
use serde_json::{Map, Value, json};

use super::allocation::{allocation_to_json, node_selector_to_json, toleration};
use super::plan::DELETE_PROTECTION_FINALIZER;
use super::time::time_to_rfc3339;
use crate::Snapshot;

/// The image of the one container of every written pod.
pub const PAUSE_IMAGE: &str = "registry.k8s.io/pause:3.10";

/// Turns every object of a scenario (plain model data, see
/// [`gangpack::testing`]) into the whole JSON document the API server would store for
/// it, in the API version [`Kind::api_version`](crate::Kind::api_version) names (the
/// one gangpack reads, and the preferred version of 1.37):
///
/// | Scenario field | Kind | apiVersion |
/// | --- | --- | --- |
/// | `namespaces` | Namespace | `v1` |
/// | `nodes` | Node | `v1` |
/// | `device_classes` | DeviceClass | `resource.k8s.io/v1` |
/// | `slices` | ResourceSlice | `resource.k8s.io/v1` |
/// | `taint_rules` | DeviceTaintRule | `resource.k8s.io/v1` |
/// | `priority_classes` | PriorityClass | `scheduling.k8s.io/v1` |
/// | `claims` | ResourceClaim | `resource.k8s.io/v1` |
/// | `workloads` | Workload | `scheduling.k8s.io/v1beta1` |
/// | `groups` | PodGroup | `scheduling.k8s.io/v1beta1` |
/// | `pods` | Pod | `v1` |
///
/// in that order, each kind in the scenario's order (what an object refers to comes
/// before it, so `kubectl apply` of the list creates namespaces before what lives in
/// them). The same scenario gives the same documents. Wrapped by
/// [`list`](crate::output::list), they load back through [`load_str`](crate::load_str) and
/// [`Snapshot::build`](crate::Snapshot::build) into the same model objects; the
/// round-trip test (`k8s/tests/manifests.rs`) checks that field by field.
///
/// # What each object looks like
///
/// Fields are written as the API server stores them after defaulting, and omitted
/// when unset or empty (Go's `omitempty`), so each document is also what a
/// client-go based scheduler decodes:
///
/// - **Namespace**: `metadata.name`, `metadata.labels`.
/// - **Node**: `metadata.labels`; `spec.taints` (`key`, `value`, `effect`,
///   `timeAdded`), `spec.unschedulable: true` for a cordoned node;
///   `status.allocatable` and `status.capacity`, both the model's allocatable (the
///   model has no separate capacity; nothing is reserved for the system).
/// - **DeviceClass**: `spec.selectors[].cel.expression`, `spec.extendedResourceName`,
///   `spec.config[].opaque` (`driver`, `parameters` as the JSON object they are).
/// - **ResourceSlice**: `spec.driver`, `spec.pool` (`name`, `generation`,
///   `resourceSliceCount`), exactly one of `spec.nodeName`, `spec.nodeSelector`,
///   `spec.allNodes: true`, `spec.perDeviceNodeSelection: true`;
///   `spec.devices[]` (`name`, `attributes` as `{int|bool|string|version|ints|bools|
///   strings|versions: ...}`, `capacity` with `value` and `requestPolicy` (`default`,
///   `validValues`, `validRange {min, max, step}`), `consumesCounters`, `taints`,
///   `allowMultipleAllocations`, `bindsToNode`, `bindingConditions`,
///   `bindingFailureConditions`, and the per-device `nodeName` / `nodeSelector` /
///   `allNodes`); `spec.sharedCounters[]` (`name`, `counters: {NAME: {value}}`).
/// - **DeviceTaintRule**: `spec.deviceSelector` (`driver`, `pool`, `device`),
///   `spec.taint`.
/// - **PriorityClass**: `value`, `globalDefault` (when true), `preemptionPolicy`.
/// - **ResourceClaim**: `spec.devices.requests[]` as `{name, exactly: {...}}` or
///   `{name, firstAvailable: [{name, ...}]}`, each with `deviceClassName`,
///   `selectors`, `allocationMode` (`ExactCount` with its `count`, or `All`),
///   `adminAccess` (exactly only), `tolerations`, `capacity.requests`;
///   `spec.devices.constraints[]` (`requests`, `matchAttribute` /
///   `distinctAttribute`) and `spec.devices.config[]`. An allocated claim also has
///   `status.allocation` ([`allocation_to_json`], stamped with the scenario's latest
///   timestamp, so it does not move the loader's clock), kube-scheduler's finalizer
///   [`DELETE_PROTECTION_FINALIZER`], and `status.reservedFor`: every bound pod
///   that names it (`{resource: pods, name, uid}`), or, when the pod uses it as a
///   claim of its PodGroup (an entry of the group with the same name and source), the
///   group (`{apiGroup: scheduling.k8s.io, resource: podgroups, name, uid}`), in pod
///   order, each once.
/// - **Workload**: `spec.podGroupTemplates[]` (`name`, `schedulingPolicy` as
///   `{basic: {}}` or `{gang: {minCount}}`, `priorityClassName`, `priority`,
///   `preemptionPolicy`, `disruptionMode: {all: {}}` (omitted for `single`, the default),
///   `schedulingConstraints.topology[].key`, `resourceClaims[]`).
/// - **PodGroup**: `metadata.uid`, `metadata.creationTimestamp`; the template's fields
///   in `spec`, plus `spec.workloadRef` and `spec.parentCompositePodGroupName`.
/// - **Pod**: `metadata.uid`, `metadata.creationTimestamp`; `spec.schedulerName`,
///   `spec.priority` and `spec.preemptionPolicy` (always: the model holds the resolved
///   values) and `spec.priorityClassName` when a PriorityClass of the scenario has
///   exactly that value and policy (the first such, else none: the priority admission
///   plugin rejects a pod whose `priority` disagrees with its class, so a class is
///   only named when it agrees); `spec.nodeName` for a bound pod; `spec.nodeSelector`,
///   `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`,
///   `spec.tolerations`, `spec.schedulingGroup.podGroupName`, `spec.resourceClaims`;
///   one container `main` (image `registry.k8s.io/pause:3.10`) whose
///   `resources.requests` are the pod's requests (and `resources.limits` the same
///   amounts for the resources Kubernetes does not overcommit, extended resources and
///   hugepages, which must have a limit), with every claim of the pod in
///   `resources.claims`; `status.phase` `Running` when bound, else `Pending`.
///
/// Uids: a Pod's and a PodGroup's `metadata.uid` is
/// [`Snapshot::derived_uid`](crate::Snapshot::derived_uid) of its kind, namespace and
/// name, and `status.reservedFor` names the same uid. An API server assigns its own
/// uids on create (and `kubectl apply` leaves status alone), so applying the same
/// documents again to a cluster that has the objects under its own uids fails the
/// uid precondition; the uids matter to tools that read the documents as they are.
///
/// Times: a zero [`Time`] (the model's "unset") writes no `creationTimestamp`.
///
/// What does not come back as written: `status.capacity` (not modelled); the pod's
/// container layout (the loader reads the effective requests, which are the one
/// container's); a pod's `priorityClassName` (the model keeps the resolved priority).
///
/// ```
/// use gangpack::testing::{Namespace, Scenario};
/// use gangpack::{Node, Pod, Quantity};
/// use gangpack_k8s::output::{list, scenario_manifests};
/// use gangpack_k8s::{BuildOptions, Snapshot, load_str};
///
/// let scenario = Scenario {
///     namespaces: vec![Namespace { name: "ml".into(), ..Default::default() }],
///     nodes: vec![Node::new("node-a").with_allocatable("cpu", Quantity::from_int(8))],
///     pods: vec![Pod::new("ml", "trainer")],
///     ..Default::default()
/// };
/// let docs = scenario_manifests(&scenario);
/// assert_eq!(docs[1]["status"]["allocatable"]["cpu"], "8");
///
/// let text = serde_json::to_string(&list(docs)).unwrap();
/// let snapshot = Snapshot::build(load_str(&text, "gen").unwrap(), &BuildOptions::default()).unwrap();
/// assert_eq!(snapshot.scheduler.cluster().node("node-a"), Some(&scenario.nodes[0]));
/// assert_eq!(snapshot.scheduler.pod("ml/trainer"), Some(&scenario.pods[0]));
/// ```
pub fn scenario_manifests(scenario: &Scenario) -> Vec<Value> {
    let now = latest_time(scenario);
    let mut out = Vec::new();
    out.extend(scenario.namespaces.iter().map(namespace));
    out.extend(scenario.nodes.iter().map(node));
    out.extend(scenario.device_classes.iter().map(device_class));
    out.extend(scenario.slices.iter().map(resource_slice));
    out.extend(scenario.taint_rules.iter().map(taint_rule));
    out.extend(scenario.priority_classes.iter().map(priority_class));
    let reserved = reservations(scenario);
    out.extend(
        scenario
            .claims
            .iter()
            .map(|c| resource_claim(c, reserved.get(&(&c.namespace, &c.name)), now)),
    );
    out.extend(scenario.workloads.iter().map(workload));
    out.extend(scenario.groups.iter().map(pod_group));
    out.extend(
        scenario
            .pods
            .iter()
            .map(|p| pod(p, &scenario.priority_classes)),
    );
    out
}

/// The latest time the scenario writes (creation times, taints' `timeAdded`): the
/// allocations' timestamp, which therefore does not move the loader's clock.
fn latest_time(s: &Scenario) -> Time {
    let node_taints = s.nodes.iter().flat_map(|n| &n.taints).map(|t| t.time_added);
    let device_taints = s
        .slices
        .iter()
        .flat_map(|sl| &sl.devices)
        .flat_map(|d| &d.taints)
        .chain(s.taint_rules.iter().map(|r| &r.taint))
        .map(|t| t.time_added);
    node_taints
        .chain(device_taints)
        .flatten()
        .chain(s.pods.iter().map(|p| p.creation))
        .chain(s.groups.iter().map(|g| g.creation))
        .max()
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| string(s)).collect())
}

fn quantity(q: &Quantity) -> Value {
    Value::String(q.to_string())
}

fn quantities(m: &BTreeMap<String, Quantity>) -> Value {
    Value::Object(m.iter().map(|(k, q)| (k.clone(), quantity(q))).collect())
}

fn labels(m: &BTreeMap<String, String>) -> Value {
    Value::Object(m.iter().map(|(k, v)| (k.clone(), string(v))).collect())
}

/// `{value: Q}` per counter.
fn counters(m: &BTreeMap<String, Quantity>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, q)| (k.clone(), json!({ "value": q.to_string() })))
            .collect(),
    )
}

/// The document head: `apiVersion`, `kind`, `metadata` (`name`, `namespace`).
fn head(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("name".into(), string(name));
    if let Some(ns) = namespace {
        meta.insert("namespace".into(), string(ns));
    }
    let mut out = Map::new();
    out.insert("apiVersion".into(), string(api_version));
    out.insert("kind".into(), string(kind));
    out.insert("metadata".into(), Value::Object(meta));
    out
}

fn meta(doc: &mut Map<String, Value>) -> &mut Map<String, Value> {
    doc.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .expect("head writes metadata")
}

/// `metadata.uid` (derived) and `metadata.creationTimestamp` (unless zero).
fn identity(doc: &mut Map<String, Value>, kind: &str, ns: &str, name: &str, creation: Time) {
    let m = meta(doc);
    m.insert(
        "uid".into(),
        Value::String(Snapshot::derived_uid(kind, ns, name)),
    );
    if creation != Time::default() {
        m.insert(
            "creationTimestamp".into(),
            Value::String(time_to_rfc3339(creation)),
        );
    }
}

fn insert_nonempty(map: &mut Map<String, Value>, key: &str, value: Value) {
    let empty = match &value {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
        _ => false,
    };
    if !empty {
        map.insert(key.into(), value);
    }
}

fn opaque(o: &OpaqueDeviceConfiguration) -> Value {
    // The parameters are a JSON object's text; kept as text if they are not JSON.
    let parameters = serde_json::from_str::<Value>(&o.parameters)
        .unwrap_or_else(|_| Value::String(o.parameters.clone()));
    json!({ "driver": o.driver, "parameters": parameters })
}

fn selectors(s: &[DeviceSelector]) -> Value {
    s.iter()
        .map(|s| json!({ "cel": { "expression": s.cel } }))
        .collect()
}

fn node_taint(t: &Taint) -> Value {
    taint(&t.key, &t.value, t.effect.as_str(), t.time_added)
}

fn device_taint(t: &DeviceTaint) -> Value {
    taint(&t.key, &t.value, t.effect.as_str(), t.time_added)
}

/// A node or device taint: `key`, `value` (unless empty), `effect`, `timeAdded`.
fn taint(key: &str, value: &str, effect: &str, time_added: Option<gangpack::Time>) -> Value {
    let mut out = Map::new();
    out.insert("key".into(), string(key));
    if !value.is_empty() {
        out.insert("value".into(), string(value));
    }
    out.insert("effect".into(), string(effect));
    if let Some(at) = time_added {
        out.insert("timeAdded".into(), Value::String(time_to_rfc3339(at)));
    }
    Value::Object(out)
}

fn device_tolerations(t: &[DeviceToleration]) -> Value {
    t.iter().map(toleration).collect()
}

fn pod_toleration(t: &Toleration) -> Value {
    let mut out = Map::new();
    if !t.key.is_empty() {
        out.insert("key".into(), string(&t.key));
    }
    out.insert("operator".into(), string(t.operator.as_str()));
    if !t.value.is_empty() {
        out.insert("value".into(), string(&t.value));
    }
    if let Some(e) = t.effect {
        out.insert("effect".into(), string(e.as_str()));
    }
    if let Some(s) = t.toleration_seconds {
        out.insert("tolerationSeconds".into(), Value::from(s));
    }
    Value::Object(out)
}

/// `resourceClaimName` or `resourceClaimTemplateName` next to `name`.
fn claim_entry(name: &str, source: &ClaimSource) -> Value {
    match source {
        ClaimSource::ClaimName(c) => json!({ "name": name, "resourceClaimName": c }),
        ClaimSource::Template(t) => json!({ "name": name, "resourceClaimTemplateName": t }),
    }
}

// ---------------------------------------------------------------------------------------------
// Cluster objects
// ---------------------------------------------------------------------------------------------

fn namespace(n: &Namespace) -> Value {
    let mut doc = head("v1", "Namespace", None, &n.name);
    insert_nonempty(meta(&mut doc), "labels", labels(&n.labels));
    Value::Object(doc)
}

fn node(n: &gangpack::Node) -> Value {
    let mut doc = head("v1", "Node", None, &n.name);
    insert_nonempty(meta(&mut doc), "labels", labels(&n.labels));
    let mut spec = Map::new();
    insert_nonempty(
        &mut spec,
        "taints",
        n.taints.iter().map(node_taint).collect(),
    );
    if n.unschedulable {
        spec.insert("unschedulable".into(), Value::Bool(true));
    }
    doc.insert("spec".into(), Value::Object(spec));
    let allocatable = quantities(&n.allocatable);
    doc.insert(
        "status".into(),
        json!({ "allocatable": allocatable, "capacity": allocatable }),
    );
    Value::Object(doc)
}

fn device_class(c: &DeviceClass) -> Value {
    let mut doc = head("resource.k8s.io/v1", "DeviceClass", None, &c.name);
    let mut spec = Map::new();
    insert_nonempty(&mut spec, "selectors", selectors(&c.selectors));
    if let Some(name) = &c.extended_resource_name {
        spec.insert("extendedResourceName".into(), string(name));
    }
    insert_nonempty(
        &mut spec,
        "config",
        c.config
            .iter()
            .map(|o| json!({ "opaque": opaque(o) }))
            .collect(),
    );
    doc.insert("spec".into(), Value::Object(spec));
    Value::Object(doc)
}

/// `nodeName` / `nodeSelector` / `allNodes` into `map`.
fn node_access(map: &mut Map<String, Value>, access: &NodeAccess) {
    match access {
        NodeAccess::NodeName(n) => {
            map.insert("nodeName".into(), string(n));
        }
        NodeAccess::NodeSelector(s) => {
            map.insert("nodeSelector".into(), node_selector_to_json(s));
        }
        NodeAccess::AllNodes => {
            map.insert("allNodes".into(), Value::Bool(true));
        }
    }
}

fn resource_slice(s: &ResourceSlice) -> Value {
    let mut doc = head("resource.k8s.io/v1", "ResourceSlice", None, &s.name);
    let mut spec = Map::new();
    spec.insert("driver".into(), string(&s.driver));
    spec.insert(
        "pool".into(),
        json!({
            "name": s.pool.name,
            "generation": s.pool.generation,
            "resourceSliceCount": s.pool.resource_slice_count,
        }),
    );
    match &s.node_selection {
        SliceNodeSelection::Slice(access) => node_access(&mut spec, access),
        SliceNodeSelection::PerDevice => {
            spec.insert("perDeviceNodeSelection".into(), Value::Bool(true));
        }
    }
    insert_nonempty(&mut spec, "devices", s.devices.iter().map(device).collect());
    insert_nonempty(
        &mut spec,
        "sharedCounters",
        s.shared_counters.iter().map(counter_set).collect(),
    );
    doc.insert("spec".into(), Value::Object(spec));
    Value::Object(doc)
}

fn counter_set(c: &CounterSet) -> Value {
    json!({ "name": c.name, "counters": counters(&c.counters) })
}

fn attribute(a: &DeviceAttribute) -> Value {
    match a {
        DeviceAttribute::Int(v) => json!({ "int": v }),
        DeviceAttribute::Bool(v) => json!({ "bool": v }),
        DeviceAttribute::String(v) => json!({ "string": v }),
        DeviceAttribute::Version(v) => json!({ "version": v }),
        DeviceAttribute::Ints(v) => json!({ "ints": v }),
        DeviceAttribute::Bools(v) => json!({ "bools": v }),
        DeviceAttribute::Strings(v) => json!({ "strings": v }),
        DeviceAttribute::Versions(v) => json!({ "versions": v }),
    }
}

fn capacity(c: &DeviceCapacity) -> Value {
    let mut out = Map::new();
    out.insert("value".into(), quantity(&c.value));
    if let Some(p) = &c.request_policy {
        out.insert("requestPolicy".into(), request_policy(p));
    }
    Value::Object(out)
}

fn request_policy(p: &CapacityRequestPolicy) -> Value {
    let mut out = Map::new();
    if let Some(d) = &p.default {
        out.insert("default".into(), quantity(d));
    }
    insert_nonempty(
        &mut out,
        "validValues",
        p.valid_values.iter().map(quantity).collect(),
    );
    if let Some(r) = &p.valid_range {
        let mut range = Map::new();
        range.insert("min".into(), quantity(&r.min));
        if let Some(max) = &r.max {
            range.insert("max".into(), quantity(max));
        }
        if let Some(step) = &r.step {
            range.insert("step".into(), quantity(step));
        }
        out.insert("validRange".into(), Value::Object(range));
    }
    Value::Object(out)
}

fn consumption(c: &DeviceCounterConsumption) -> Value {
    json!({ "counterSet": c.counter_set, "counters": counters(&c.counters) })
}

fn device(d: &Device) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), string(&d.name));
    insert_nonempty(
        &mut out,
        "attributes",
        Value::Object(
            d.attributes
                .iter()
                .map(|(k, a)| (k.clone(), attribute(a)))
                .collect(),
        ),
    );
    insert_nonempty(
        &mut out,
        "capacity",
        Value::Object(
            d.capacity
                .iter()
                .map(|(k, c)| (k.clone(), capacity(c)))
                .collect(),
        ),
    );
    insert_nonempty(
        &mut out,
        "consumesCounters",
        d.consumes_counters.iter().map(consumption).collect(),
    );
    insert_nonempty(
        &mut out,
        "taints",
        d.taints.iter().map(device_taint).collect(),
    );
    if d.allow_multiple_allocations {
        out.insert("allowMultipleAllocations".into(), Value::Bool(true));
    }
    if d.binds_to_node {
        out.insert("bindsToNode".into(), Value::Bool(true));
    }
    insert_nonempty(
        &mut out,
        "bindingConditions",
        strings(&d.binding_conditions),
    );
    insert_nonempty(
        &mut out,
        "bindingFailureConditions",
        strings(&d.binding_failure_conditions),
    );
    if let Some(access) = &d.node_access {
        node_access(&mut out, access);
    }
    Value::Object(out)
}

fn taint_rule(r: &DeviceTaintRule) -> Value {
    let mut doc = head("resource.k8s.io/v1", "DeviceTaintRule", None, &r.name);
    let mut spec = Map::new();
    if let Some(s) = &r.selector {
        let mut sel = Map::new();
        for (key, v) in [
            ("driver", &s.driver),
            ("pool", &s.pool),
            ("device", &s.device),
        ] {
            if let Some(v) = v {
                sel.insert(key.into(), string(v));
            }
        }
        spec.insert("deviceSelector".into(), Value::Object(sel));
    }
    spec.insert("taint".into(), device_taint(&r.taint));
    doc.insert("spec".into(), Value::Object(spec));
    Value::Object(doc)
}

fn priority_class(c: &PriorityClass) -> Value {
    let mut doc = head("scheduling.k8s.io/v1", "PriorityClass", None, &c.name);
    doc.insert("value".into(), Value::from(c.value));
    if c.global_default {
        doc.insert("globalDefault".into(), Value::Bool(true));
    }
    doc.insert(
        "preemptionPolicy".into(),
        string(c.preemption_policy.as_str()),
    );
    Value::Object(doc)
}

// ---------------------------------------------------------------------------------------------
// Claims
// ---------------------------------------------------------------------------------------------

/// `allocationMode` and `count` into `map`.
fn allocation_mode(map: &mut Map<String, Value>, mode: AllocationMode) {
    match mode {
        AllocationMode::ExactCount(n) => {
            map.insert("allocationMode".into(), string("ExactCount"));
            map.insert("count".into(), Value::from(n));
        }
        AllocationMode::All => {
            map.insert("allocationMode".into(), string("All"));
        }
    }
}

/// The fields an `exactly` request shares with a subrequest.
fn leaf(
    map: &mut Map<String, Value>,
    class: &str,
    sel: &[DeviceSelector],
    mode: AllocationMode,
    tolerations: &[DeviceToleration],
    capacity: &BTreeMap<String, Quantity>,
) {
    map.insert("deviceClassName".into(), string(class));
    insert_nonempty(map, "selectors", selectors(sel));
    allocation_mode(map, mode);
    insert_nonempty(map, "tolerations", device_tolerations(tolerations));
    if !capacity.is_empty() {
        map.insert(
            "capacity".into(),
            json!({ "requests": quantities(capacity) }),
        );
    }
}

fn request(r: &DeviceRequest) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), string(&r.name));
    match &r.kind {
        DeviceRequestKind::Exactly(e) => {
            let mut exactly = Map::new();
            leaf(
                &mut exactly,
                &e.device_class_name,
                &e.selectors,
                e.allocation_mode,
                &e.tolerations,
                &e.capacity,
            );
            if e.admin_access {
                exactly.insert("adminAccess".into(), Value::Bool(true));
            }
            out.insert("exactly".into(), Value::Object(exactly));
        }
        DeviceRequestKind::FirstAvailable(subs) => {
            let subs: Vec<Value> = subs
                .iter()
                .map(|s| {
                    let mut sub = Map::new();
                    sub.insert("name".into(), string(&s.name));
                    leaf(
                        &mut sub,
                        &s.device_class_name,
                        &s.selectors,
                        s.allocation_mode,
                        &s.tolerations,
                        &s.capacity,
                    );
                    Value::Object(sub)
                })
                .collect();
            out.insert("firstAvailable".into(), Value::Array(subs));
        }
    }
    Value::Object(out)
}

fn constraint(c: &DeviceConstraint) -> Value {
    let mut out = Map::new();
    insert_nonempty(&mut out, "requests", strings(&c.requests));
    match &c.kind {
        ConstraintKind::MatchAttribute(a) => out.insert("matchAttribute".into(), string(a)),
        ConstraintKind::DistinctAttribute(a) => out.insert("distinctAttribute".into(), string(a)),
    };
    Value::Object(out)
}

fn claim_config(c: &DeviceClaimConfiguration) -> Value {
    let mut out = Map::new();
    insert_nonempty(&mut out, "requests", strings(&c.requests));
    out.insert("opaque".into(), opaque(&c.opaque));
    Value::Object(out)
}

/// Claim `(namespace, name)` → its `status.reservedFor` entries: for each bound pod in
/// order, each claim it names, the pod, or its PodGroup when the claim is the group's.
fn reservations(s: &Scenario) -> BTreeMap<(&str, &str), Vec<Value>> {
    let mut out: BTreeMap<(&str, &str), Vec<Value>> = BTreeMap::new();
    let mut seen: BTreeSet<(&str, &str, &str, &str)> = BTreeSet::new();
    for p in s.pods.iter().filter(|p| p.node_name.is_some()) {
        let group = p.scheduling_group.as_deref().and_then(|g| {
            s.groups
                .iter()
                .find(|x| x.namespace == p.namespace && x.name == g)
        });
        for entry in &p.resource_claims {
            let ClaimSource::ClaimName(claim) = &entry.source else {
                continue;
            };
            let of_group = group.filter(|g| {
                g.resource_claims
                    .iter()
                    .any(|c| c.name == entry.name && c.source == entry.source)
            });
            let (resource, name, consumer) = match of_group {
                Some(g) => (
                    "podgroups",
                    g.name.as_str(),
                    json!({
                        "apiGroup": "scheduling.k8s.io",
                        "resource": "podgroups",
                        "name": g.name,
                        "uid": Snapshot::derived_uid("PodGroup", &g.namespace, &g.name),
                    }),
                ),
                None => (
                    "pods",
                    p.name.as_str(),
                    json!({
                        "resource": "pods",
                        "name": p.name,
                        "uid": Snapshot::derived_uid("Pod", &p.namespace, &p.name),
                    }),
                ),
            };
            if seen.insert((p.namespace.as_str(), claim.as_str(), resource, name)) {
                out.entry((p.namespace.as_str(), claim.as_str()))
                    .or_default()
                    .push(consumer);
            }
        }
    }
    out
}

fn resource_claim(c: &ResourceClaim, reserved: Option<&Vec<Value>>, now: Time) -> Value {
    let mut doc = head(
        "resource.k8s.io/v1",
        "ResourceClaim",
        Some(&c.namespace),
        &c.name,
    );
    let mut devices = Map::new();
    insert_nonempty(
        &mut devices,
        "requests",
        c.spec.requests.iter().map(request).collect(),
    );
    insert_nonempty(
        &mut devices,
        "constraints",
        c.spec.constraints.iter().map(constraint).collect(),
    );
    insert_nonempty(
        &mut devices,
        "config",
        c.spec.config.iter().map(claim_config).collect(),
    );
    doc.insert("spec".into(), json!({ "devices": devices }));
    if let Some(allocation) = &c.allocation {
        meta(&mut doc).insert("finalizers".into(), json!([DELETE_PROTECTION_FINALIZER]));
        let mut status = Map::new();
        status.insert("allocation".into(), allocation_to_json(allocation, now));
        if let Some(r) = reserved {
            insert_nonempty(&mut status, "reservedFor", Value::Array(r.clone()));
        }
        doc.insert("status".into(), Value::Object(status));
    }
    Value::Object(doc)
}

// ---------------------------------------------------------------------------------------------
// Workloads, PodGroups, pods
// ---------------------------------------------------------------------------------------------

fn scheduling_policy(p: SchedulingPolicy) -> Value {
    match p {
        SchedulingPolicy::Basic => json!({ "basic": {} }),
        SchedulingPolicy::Gang { min_count } => json!({ "gang": { "minCount": min_count } }),
    }
}

/// The fields a PodGroup shares with its template, into `map`.
struct GroupFields<'a> {
    policy: SchedulingPolicy,
    priority_class_name: Option<&'a str>,
    priority: Option<i32>,
    preemption_policy: Option<gangpack::PreemptionPolicy>,
    disruption_mode: DisruptionMode,
    topology: &'a [TopologyConstraint],
    resource_claims: &'a [gangpack::PodGroupResourceClaim],
}

impl GroupFields<'_> {
    fn write(&self, map: &mut Map<String, Value>) {
        map.insert("schedulingPolicy".into(), scheduling_policy(self.policy));
        if let Some(c) = self.priority_class_name {
            map.insert("priorityClassName".into(), string(c));
        }
        if let Some(p) = self.priority {
            map.insert("priority".into(), Value::from(p));
        }
        if let Some(p) = self.preemption_policy {
            map.insert("preemptionPolicy".into(), string(p.as_str()));
        }
        // Unset is `single`.
        if self.disruption_mode == DisruptionMode::All {
            map.insert("disruptionMode".into(), json!({ "all": {} }));
        }
        if !self.topology.is_empty() {
            let topology: Vec<Value> = self
                .topology
                .iter()
                .map(|t| json!({ "key": t.key }))
                .collect();
            map.insert(
                "schedulingConstraints".into(),
                json!({ "topology": topology }),
            );
        }
        insert_nonempty(
            map,
            "resourceClaims",
            self.resource_claims
                .iter()
                .map(|c| claim_entry(&c.name, &c.source))
                .collect(),
        );
    }
}

fn workload(w: &Workload) -> Value {
    let mut doc = head(
        "scheduling.k8s.io/v1beta1",
        "Workload",
        Some(&w.namespace),
        &w.name,
    );
    let templates: Vec<Value> = w
        .pod_group_templates
        .iter()
        .map(|t| {
            let mut out = Map::new();
            out.insert("name".into(), string(&t.name));
            GroupFields {
                policy: t.policy,
                priority_class_name: t.priority_class_name.as_deref(),
                priority: t.priority,
                preemption_policy: t.preemption_policy,
                disruption_mode: t.disruption_mode,
                topology: &t.topology,
                resource_claims: &t.resource_claims,
            }
            .write(&mut out);
            Value::Object(out)
        })
        .collect();
    doc.insert("spec".into(), json!({ "podGroupTemplates": templates }));
    Value::Object(doc)
}

fn pod_group(g: &PodGroup) -> Value {
    let mut doc = head(
        "scheduling.k8s.io/v1beta1",
        "PodGroup",
        Some(&g.namespace),
        &g.name,
    );
    identity(&mut doc, "PodGroup", &g.namespace, &g.name, g.creation);
    let mut spec = Map::new();
    if let Some(r) = &g.workload_ref {
        spec.insert(
            "workloadRef".into(),
            json!({ "workloadName": r.workload_name, "templateName": r.template_name }),
        );
    }
    if let Some(p) = &g.parent {
        spec.insert("parentCompositePodGroupName".into(), string(p));
    }
    GroupFields {
        policy: g.policy,
        priority_class_name: g.priority_class_name.as_deref(),
        priority: g.priority,
        preemption_policy: g.preemption_policy,
        disruption_mode: g.disruption_mode,
        topology: &g.topology,
        resource_claims: &g.resource_claims,
    }
    .write(&mut spec);
    doc.insert("spec".into(), Value::Object(spec));
    Value::Object(doc)
}

/// Whether Kubernetes requires a limit for `resource` (it does not overcommit it):
/// extended resources (a domain other than `kubernetes.io`) and hugepages.
fn needs_limit(resource: &str) -> bool {
    let native = !resource.contains('/') || resource.contains("kubernetes.io/");
    !native || resource.starts_with("hugepages-")
}

fn pod(p: &Pod, classes: &[PriorityClass]) -> Value {
    let mut doc = head("v1", "Pod", Some(&p.namespace), &p.name);
    identity(&mut doc, "Pod", &p.namespace, &p.name, p.creation);
    let mut spec = Map::new();
    if !p.scheduler_name.is_empty() {
        spec.insert("schedulerName".into(), string(&p.scheduler_name));
    }
    if let Some(class) = classes
        .iter()
        .find(|c| c.value == p.priority && c.preemption_policy == p.preemption_policy)
    {
        spec.insert("priorityClassName".into(), string(&class.name));
    }
    spec.insert("priority".into(), Value::from(p.priority));
    spec.insert(
        "preemptionPolicy".into(),
        string(p.preemption_policy.as_str()),
    );
    if let Some(n) = &p.node_name {
        spec.insert("nodeName".into(), string(n));
    }
    insert_nonempty(&mut spec, "nodeSelector", labels(&p.node_selector));
    if let Some(sel) = &p.required_node_affinity {
        spec.insert(
            "affinity".into(),
            json!({ "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": node_selector_to_json(sel)
            }}),
        );
    }
    insert_nonempty(
        &mut spec,
        "tolerations",
        p.tolerations.iter().map(pod_toleration).collect(),
    );
    if let Some(g) = &p.scheduling_group {
        spec.insert("schedulingGroup".into(), json!({ "podGroupName": g }));
    }
    insert_nonempty(
        &mut spec,
        "resourceClaims",
        p.resource_claims
            .iter()
            .map(|c| claim_entry(&c.name, &c.source))
            .collect(),
    );
    let mut resources = Map::new();
    insert_nonempty(&mut resources, "requests", quantities(&p.requests));
    let limits: BTreeMap<String, Quantity> = p
        .requests
        .iter()
        .filter(|(k, _)| needs_limit(k))
        .map(|(k, q)| (k.clone(), *q))
        .collect();
    insert_nonempty(&mut resources, "limits", quantities(&limits));
    insert_nonempty(
        &mut resources,
        "claims",
        p.resource_claims
            .iter()
            .map(|c| json!({ "name": c.name }))
            .collect(),
    );
    spec.insert(
        "containers".into(),
        json!([{ "name": "main", "image": PAUSE_IMAGE, "resources": resources }]),
    );
    doc.insert("spec".into(), Value::Object(spec));
    let phase = if p.node_name.is_some() {
        "Running"
    } else {
        "Pending"
    };
    doc.insert("status".into(), json!({ "phase": phase }));
    Value::Object(doc)
}
