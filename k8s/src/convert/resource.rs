//! Nodes and the resource.k8s.io/v1 kinds: k8s-openapi types → the gangpack model.

use std::collections::BTreeMap;

use gangpack::{
    AllocationConfigSource, AllocationMode, AllocationResult, CapacityRequestPolicy,
    CapacityRequestPolicyRange, ConstraintKind, CounterSet, Device, DeviceAllocationConfiguration,
    DeviceAttribute, DeviceCapacity, DeviceClaimConfiguration, DeviceConstraint,
    DeviceCounterConsumption, DeviceRequest, DeviceRequestAllocationResult, DeviceSelector,
    DeviceSubRequest, DeviceTaint, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator,
    ExactDeviceRequest, NodeAccess, NodeSelector, NodeSelectorOperator, NodeSelectorRequirement,
    NodeSelectorTerm, OpaqueDeviceConfiguration, Problem, ResourceClaimSpec, ResourcePool,
    SliceNodeSelection, Taint, TaintEffect,
};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::resource::v1 as res;

use super::de::{Ctx, seconds};

/// `metadata.creationTimestamp`, or 0.
pub(crate) fn creation(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> gangpack::Time {
    meta.creation_timestamp
        .as_ref()
        .map(seconds)
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------------------------

/// A `v1` Node.
pub(crate) fn node(ctx: &mut Ctx<'_>) -> Option<gangpack::Node> {
    let n: core::Node = ctx.typed()?;
    let mut node = gangpack::Node::new(ctx.obj.name.clone());
    node.labels = n.metadata.labels.clone().unwrap_or_default();
    let status = n.status.as_ref();
    node.allocatable = ctx.quantities(
        "status.allocatable",
        status.and_then(|s| s.allocatable.as_ref()),
    );
    if let Some(spec) = &n.spec {
        node.unschedulable = spec.unschedulable.unwrap_or(false);
        for (i, t) in spec.taints.iter().flatten().enumerate() {
            let path = format!("spec.taints[{i}]");
            let effect = match t.effect.as_str() {
                "" => {
                    ctx.problem(format!("{path}.effect"), &Problem::Required);
                    continue;
                }
                e => {
                    let Some(effect) = TaintEffect::parse(e) else {
                        ctx.problem(
                            format!("{path}.effect"),
                            &Problem::NotSupported {
                                value: e.to_owned(),
                                supported: TaintEffect::SUPPORTED,
                            },
                        );
                        continue;
                    };
                    effect
                }
            };
            let mut taint = Taint::new(t.key.clone(), t.value.clone().unwrap_or_default(), effect);
            taint.time_added = t.time_added.as_ref().map(seconds);
            node.taints.push(taint);
        }
    }
    ctx.validate(node.validate());
    ctx.ok().then_some(node)
}

// ---------------------------------------------------------------------------------------------
// Node selectors
// ---------------------------------------------------------------------------------------------

const NODE_SELECTOR_OPERATORS: &[&str] = &["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"];

/// A core/v1 NodeSelector at `path`.
pub(crate) fn node_selector(ctx: &mut Ctx<'_>, path: &str, s: &core::NodeSelector) -> NodeSelector {
    let mut out = NodeSelector { terms: Vec::new() };
    for (i, t) in s.node_selector_terms.iter().enumerate() {
        let tp = format!("{path}.nodeSelectorTerms[{i}]");
        let match_expressions = requirements(
            ctx,
            &format!("{tp}.matchExpressions"),
            t.match_expressions.as_deref(),
        );
        let match_fields =
            requirements(ctx, &format!("{tp}.matchFields"), t.match_fields.as_deref());
        out.terms.push(NodeSelectorTerm {
            match_expressions,
            match_fields,
        });
    }
    out
}

fn requirements(
    ctx: &mut Ctx<'_>,
    path: &str,
    reqs: Option<&[core::NodeSelectorRequirement]>,
) -> Vec<NodeSelectorRequirement> {
    let mut out = Vec::new();
    for (j, r) in reqs.unwrap_or_default().iter().enumerate() {
        let Some(op) = NodeSelectorOperator::parse(&r.operator) else {
            ctx.problem(
                format!("{path}[{j}].operator"),
                &Problem::NotSupported {
                    value: r.operator.clone(),
                    supported: NODE_SELECTOR_OPERATORS,
                },
            );
            continue;
        };
        out.push(NodeSelectorRequirement::new(
            r.key.clone(),
            op,
            r.values.clone().unwrap_or_default(),
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// ResourceSlices
// ---------------------------------------------------------------------------------------------

const ATTRIBUTE_FIELDS: &[&str] = &[
    "bool", "bools", "int", "ints", "string", "strings", "version", "versions",
];
const SLICE_ACCESS_FIELDS: &[&str] = &[
    "nodeName",
    "nodeSelector",
    "allNodes",
    "perDeviceNodeSelection",
];
const DEVICE_ACCESS_FIELDS: &[&str] = &["nodeName", "nodeSelector", "allNodes"];

/// A `resource.k8s.io/v1` ResourceSlice.
pub(crate) fn resource_slice(ctx: &mut Ctx<'_>) -> Option<gangpack::ResourceSlice> {
    let s: res::ResourceSlice = ctx.typed()?;
    let spec = &s.spec;
    let mut set = 0;
    let mut selection = None;
    if let Some(n) = &spec.node_name {
        set += 1;
        selection = Some(SliceNodeSelection::Slice(NodeAccess::NodeName(n.clone())));
    }
    if let Some(sel) = &spec.node_selector {
        set += 1;
        let sel = node_selector(ctx, "spec.nodeSelector", sel);
        selection = Some(SliceNodeSelection::Slice(NodeAccess::NodeSelector(sel)));
    }
    if let Some(all) = spec.all_nodes {
        set += 1;
        must_be_true(ctx, "spec.allNodes", all);
        selection = Some(SliceNodeSelection::Slice(NodeAccess::AllNodes));
    }
    if let Some(per) = spec.per_device_node_selection {
        set += 1;
        must_be_true(ctx, "spec.perDeviceNodeSelection", per);
        selection = Some(SliceNodeSelection::PerDevice);
    }
    if set != 1 {
        ctx.problem(
            "spec",
            &Problem::ExactlyOneOf {
                fields: SLICE_ACCESS_FIELDS,
                set,
            },
        );
    }
    if spec.partition_type_attribute.is_some() {
        ctx.warn("spec.partitionTypeAttribute (alpha) is not modelled: ignored");
    }
    let mut devices = Vec::new();
    for (i, d) in spec.devices.iter().flatten().enumerate() {
        devices.push(device(ctx, &format!("spec.devices[{i}]"), d));
    }
    let mut shared_counters = Vec::new();
    for (i, c) in spec.shared_counters.iter().flatten().enumerate() {
        shared_counters.push(CounterSet {
            name: c.name.clone(),
            counters: counters(
                ctx,
                &format!("spec.sharedCounters[{i}].counters"),
                &c.counters,
            ),
        });
    }
    let slice = gangpack::ResourceSlice {
        name: ctx.obj.name.clone(),
        driver: spec.driver.clone(),
        pool: ResourcePool {
            name: spec.pool.name.clone(),
            generation: spec.pool.generation,
            resource_slice_count: spec.pool.resource_slice_count,
        },
        // Without one (already reported), a stand-in, so that the slice's other
        // problems are reported with it.
        node_selection: selection.unwrap_or(SliceNodeSelection::Slice(NodeAccess::AllNodes)),
        devices,
        shared_counters,
    };
    // Every problem of the slice at once: what conversion found, and what validation
    // finds in the rest (a missing driver or pool next to a missing node field). A
    // slice in which conversion found none is validated once, by the one caller,
    // `Cluster::add_slice` (in `Builder::add_slice`), which validates before anything
    // else and whose validation errors the builder reports exactly as these.
    if !ctx.ok() {
        ctx.validate(slice.validate());
    }
    ctx.ok().then_some(slice)
}

fn must_be_true(ctx: &mut Ctx<'_>, field: &str, v: bool) {
    if !v {
        ctx.problem(
            field,
            &Problem::Invalid {
                value: "false".into(),
                reason: "must be true when set",
            },
        );
    }
}

fn counters(
    ctx: &mut Ctx<'_>,
    path: &str,
    c: &BTreeMap<String, res::Counter>,
) -> BTreeMap<String, gangpack::Quantity> {
    let mut out = BTreeMap::new();
    for (name, counter) in c {
        if let Some(q) = ctx.quantity(&format!("{path}[\"{name}\"].value"), &counter.value) {
            out.insert(name.clone(), q);
        }
    }
    out
}

fn device(ctx: &mut Ctx<'_>, path: &str, d: &res::Device) -> Device {
    let mut out = Device::new(d.name.clone());
    // Field paths are spelled out only for a problem: a slice has hundreds of fields.
    for (name, a) in d.attributes.iter().flatten() {
        let field = || format!("{path}.attributes[\"{name}\"]");
        if let Some(attr) = attribute(ctx, field, a) {
            out.attributes.insert(name.clone(), attr);
        }
    }
    for (name, c) in d.capacity.iter().flatten() {
        let field = || format!("{path}.capacity[\"{name}\"]");
        let Some(value) = ctx.quantity_at(|| format!("{}.value", field()), &c.value) else {
            continue;
        };
        let request_policy = c
            .request_policy
            .as_ref()
            .map(|p| policy(ctx, &format!("{}.requestPolicy", field()), p));
        out.capacity.insert(
            name.clone(),
            DeviceCapacity {
                value,
                request_policy,
            },
        );
    }
    for (i, c) in d.consumes_counters.iter().flatten().enumerate() {
        let cp = format!("{path}.consumesCounters[{i}]");
        if c.compatibility_groups
            .as_ref()
            .is_some_and(|g| !g.is_empty())
        {
            ctx.warn(format!(
                "{cp}.compatibilityGroups (alpha) is not modelled: ignored"
            ));
        }
        out.consumes_counters.push(DeviceCounterConsumption {
            counter_set: c.counter_set.clone(),
            counters: counters(ctx, &format!("{cp}.counters"), &c.counters),
        });
    }
    for (i, t) in d.taints.iter().flatten().enumerate() {
        let taint = device_taint(t);
        warn_unknown_effect(ctx, &format!("{path}.taints[{i}]"), &taint);
        out.taints.push(taint);
    }
    out.allow_multiple_allocations = d.allow_multiple_allocations.unwrap_or(false);
    out.binds_to_node = d.binds_to_node.unwrap_or(false);
    out.binding_conditions = d.binding_conditions.clone().unwrap_or_default();
    out.binding_failure_conditions = d.binding_failure_conditions.clone().unwrap_or_default();
    let mut set = 0;
    if let Some(n) = &d.node_name {
        set += 1;
        out.node_access = Some(NodeAccess::NodeName(n.clone()));
    }
    if let Some(sel) = &d.node_selector {
        set += 1;
        let sel = node_selector(ctx, &format!("{path}.nodeSelector"), sel);
        out.node_access = Some(NodeAccess::NodeSelector(sel));
    }
    if let Some(all) = d.all_nodes {
        set += 1;
        must_be_true(ctx, &format!("{path}.allNodes"), all);
        out.node_access = Some(NodeAccess::AllNodes);
    }
    if set > 1 {
        ctx.problem(
            path,
            &Problem::ExactlyOneOf {
                fields: DEVICE_ACCESS_FIELDS,
                set,
            },
        );
    }
    if d.node_allocatable_resources
        .as_ref()
        .is_some_and(|m| !m.is_empty())
    {
        ctx.warn(format!(
            "{path}.nodeAllocatableResources (alpha) is not modelled: ignored"
        ));
    }
    out
}

fn attribute(
    ctx: &mut Ctx<'_>,
    field: impl FnOnce() -> String,
    a: &res::DeviceAttribute,
) -> Option<DeviceAttribute> {
    let mut found = Vec::new();
    if let Some(v) = a.bool {
        found.push(DeviceAttribute::Bool(v));
    }
    if let Some(v) = &a.bools {
        found.push(DeviceAttribute::Bools(v.clone()));
    }
    if let Some(v) = a.int {
        found.push(DeviceAttribute::Int(v));
    }
    if let Some(v) = &a.ints {
        found.push(DeviceAttribute::Ints(v.clone()));
    }
    if let Some(v) = &a.string {
        found.push(DeviceAttribute::String(v.clone()));
    }
    if let Some(v) = &a.strings {
        found.push(DeviceAttribute::Strings(v.clone()));
    }
    if let Some(v) = &a.version {
        found.push(DeviceAttribute::Version(v.clone()));
    }
    if let Some(v) = &a.versions {
        found.push(DeviceAttribute::Versions(v.clone()));
    }
    if found.len() == 1 {
        found.pop()
    } else {
        ctx.problem(
            field(),
            &Problem::ExactlyOneOf {
                fields: ATTRIBUTE_FIELDS,
                set: found.len(),
            },
        );
        None
    }
}

fn policy(ctx: &mut Ctx<'_>, path: &str, p: &res::CapacityRequestPolicy) -> CapacityRequestPolicy {
    let default = p
        .default
        .as_ref()
        .and_then(|q| ctx.quantity(&format!("{path}.default"), q));
    let mut valid_values = Vec::new();
    for (i, q) in p.valid_values.iter().flatten().enumerate() {
        if let Some(v) = ctx.quantity(&format!("{path}.validValues[{i}]"), q) {
            valid_values.push(v);
        }
    }
    let valid_range = p.valid_range.as_ref().and_then(|r| {
        let rp = format!("{path}.validRange");
        let min = ctx.quantity(&format!("{rp}.min"), &r.min);
        let max = r
            .max
            .as_ref()
            .map(|q| ctx.quantity(&format!("{rp}.max"), q));
        let step = r
            .step
            .as_ref()
            .map(|q| ctx.quantity(&format!("{rp}.step"), q));
        Some(CapacityRequestPolicyRange {
            min: min?,
            max: max.map_or(Some(None), |m| m.map(Some))?,
            step: step.map_or(Some(None), |s| s.map(Some))?,
        })
    });
    CapacityRequestPolicy {
        default,
        valid_values,
        valid_range,
    }
}

/// A device taint (also a DeviceTaintRule's).
pub(crate) fn device_taint(t: &res::DeviceTaint) -> DeviceTaint {
    DeviceTaint {
        key: t.key.clone(),
        value: t.value.clone().unwrap_or_default(),
        effect: DeviceTaintEffect::from(t.effect.clone()),
        time_added: t.time_added.as_ref().map(seconds),
    }
}

/// A stored taint may carry an effect a later Kubernetes added: accepted, as upstream
/// accepts it, and treated like `None`, as upstream consumers must; but not silently.
fn warn_unknown_effect(ctx: &mut Ctx<'_>, path: &str, taint: &DeviceTaint) {
    if let DeviceTaintEffect::Unknown(e) = &taint.effect
        && !e.is_empty()
    {
        ctx.warn(format!(
            "{path}.effect: unknown effect \"{e}\" treated like None (Kubernetes 1.37 knows \
             {}; effects a later version adds are treated like None)",
            DeviceTaintEffect::SUPPORTED.join(", ")
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// DeviceClasses and DeviceTaintRules
// ---------------------------------------------------------------------------------------------

/// A `resource.k8s.io/v1` DeviceClass (its selectors are compiled when it is added to the
/// cluster).
pub(crate) fn device_class(ctx: &mut Ctx<'_>) -> Option<gangpack::DeviceClass> {
    let c: res::DeviceClass = ctx.typed()?;
    let mut class = gangpack::DeviceClass {
        name: ctx.obj.name.clone(),
        ..gangpack::DeviceClass::default()
    };
    if let Some(spec) = &c.spec {
        class.selectors = selectors(ctx, "spec.selectors", spec.selectors.as_deref());
        class
            .extended_resource_name
            .clone_from(&spec.extended_resource_name);
        for (i, cfg) in spec.config.iter().flatten().enumerate() {
            let path = format!("spec.config[{i}].opaque");
            match &cfg.opaque {
                Some(o) => class.config.push(opaque(o)),
                None => ctx.problem(path, &Problem::Required),
            }
        }
    }
    ctx.validate(class.validate());
    ctx.ok().then_some(class)
}

fn selectors(
    ctx: &mut Ctx<'_>,
    path: &str,
    s: Option<&[res::DeviceSelector]>,
) -> Vec<DeviceSelector> {
    let mut out = Vec::new();
    for (i, sel) in s.unwrap_or_default().iter().enumerate() {
        match &sel.cel {
            Some(cel) => out.push(DeviceSelector {
                cel: cel.expression.clone(),
            }),
            None => ctx.problem(format!("{path}[{i}].cel"), &Problem::Required),
        }
    }
    out
}

fn opaque(o: &res::OpaqueDeviceConfiguration) -> OpaqueDeviceConfiguration {
    let parameters = if o.parameters.0.is_null() {
        String::new()
    } else {
        o.parameters.0.to_string()
    };
    OpaqueDeviceConfiguration {
        driver: o.driver.clone(),
        parameters,
    }
}

/// A `resource.k8s.io/v1` (or `v1alpha3`) DeviceTaintRule.
pub(crate) fn device_taint_rule(ctx: &mut Ctx<'_>) -> Option<gangpack::DeviceTaintRule> {
    let r: res::DeviceTaintRule = ctx.typed()?;
    let rule = gangpack::DeviceTaintRule {
        name: ctx.obj.name.clone(),
        selector: r
            .spec
            .device_selector
            .as_ref()
            .map(|s| gangpack::DeviceTaintSelector {
                driver: s.driver.clone(),
                pool: s.pool.clone(),
                device: s.device.clone(),
            }),
        taint: device_taint(&r.spec.taint),
    };
    warn_unknown_effect(ctx, "spec.taint", &rule.taint);
    ctx.validate(rule.validate());
    ctx.ok().then_some(rule)
}

// ---------------------------------------------------------------------------------------------
// Claims and templates
// ---------------------------------------------------------------------------------------------

const REQUEST_FIELDS: &[&str] = &["exactly", "firstAvailable"];
const CONSTRAINT_FIELDS: &[&str] = &["matchAttribute", "distinctAttribute"];
const ALLOCATION_MODES: &[&str] = &["All", "ExactCount"];
const CONFIG_SOURCES: &[&str] = &["FromClaim", "FromClass"];

/// A claim spec (`spec.devices` of a claim, `spec.spec.devices` of a template) at `path`.
pub(crate) fn claim_spec(
    ctx: &mut Ctx<'_>,
    path: &str,
    d: Option<&res::DeviceClaim>,
) -> ResourceClaimSpec {
    let mut spec = ResourceClaimSpec::default();
    let Some(d) = d else {
        return spec;
    };
    for (i, r) in d.requests.iter().flatten().enumerate() {
        let rp = format!("{path}.requests[{i}]");
        let kind = match (&r.exactly, &r.first_available) {
            (Some(e), None) => {
                gangpack::DeviceRequestKind::Exactly(exact(ctx, &format!("{rp}.exactly"), e))
            }
            (None, subs) => {
                // An empty or missing list is "neither set"; the core reports it.
                let mut out = Vec::new();
                for (j, s) in subs.iter().flatten().enumerate() {
                    out.push(sub_request(ctx, &format!("{rp}.firstAvailable[{j}]"), s));
                }
                gangpack::DeviceRequestKind::FirstAvailable(out)
            }
            (Some(_), Some(_)) => {
                ctx.problem(
                    rp,
                    &Problem::ExactlyOneOf {
                        fields: REQUEST_FIELDS,
                        set: 2,
                    },
                );
                continue;
            }
        };
        spec.requests.push(DeviceRequest {
            name: r.name.clone(),
            kind,
        });
    }
    for (i, c) in d.constraints.iter().flatten().enumerate() {
        let cp = format!("{path}.constraints[{i}]");
        let kind = match (&c.match_attribute, &c.distinct_attribute) {
            (Some(a), None) => ConstraintKind::MatchAttribute(a.clone()),
            (None, Some(a)) => ConstraintKind::DistinctAttribute(a.clone()),
            (a, b) => {
                ctx.problem(
                    cp,
                    &Problem::ExactlyOneOf {
                        fields: CONSTRAINT_FIELDS,
                        set: usize::from(a.is_some()) + usize::from(b.is_some()),
                    },
                );
                continue;
            }
        };
        spec.constraints.push(DeviceConstraint {
            requests: c.requests.clone().unwrap_or_default(),
            kind,
        });
    }
    for (i, c) in d.config.iter().flatten().enumerate() {
        let Some(o) = &c.opaque else {
            ctx.problem(format!("{path}.config[{i}].opaque"), &Problem::Required);
            continue;
        };
        spec.config.push(DeviceClaimConfiguration {
            requests: c.requests.clone().unwrap_or_default(),
            opaque: opaque(o),
        });
    }
    spec
}

fn exact(ctx: &mut Ctx<'_>, path: &str, e: &res::ExactDeviceRequest) -> ExactDeviceRequest {
    if e.derived_attributes.as_ref().is_some_and(|d| !d.is_empty()) {
        ctx.warn(format!(
            "{path}.derivedAttributes (alpha) is not modelled: ignored"
        ));
    }
    ExactDeviceRequest {
        device_class_name: e.device_class_name.clone(),
        selectors: selectors(ctx, &format!("{path}.selectors"), e.selectors.as_deref()),
        allocation_mode: mode(ctx, path, e.allocation_mode.as_deref(), e.count),
        admin_access: e.admin_access.unwrap_or(false),
        tolerations: tolerations(
            ctx,
            &format!("{path}.tolerations"),
            e.tolerations.as_deref(),
        ),
        capacity: ctx.quantities(
            &format!("{path}.capacity.requests"),
            e.capacity.as_ref().and_then(|c| c.requests.as_ref()),
        ),
    }
}

fn sub_request(ctx: &mut Ctx<'_>, path: &str, s: &res::DeviceSubRequest) -> DeviceSubRequest {
    if s.derived_attributes.as_ref().is_some_and(|d| !d.is_empty()) {
        ctx.warn(format!(
            "{path}.derivedAttributes (alpha) is not modelled: ignored"
        ));
    }
    DeviceSubRequest {
        name: s.name.clone(),
        device_class_name: s.device_class_name.clone(),
        selectors: selectors(ctx, &format!("{path}.selectors"), s.selectors.as_deref()),
        allocation_mode: mode(ctx, path, s.allocation_mode.as_deref(), s.count),
        tolerations: tolerations(
            ctx,
            &format!("{path}.tolerations"),
            s.tolerations.as_deref(),
        ),
        capacity: ctx.quantities(
            &format!("{path}.capacity.requests"),
            s.capacity.as_ref().and_then(|c| c.requests.as_ref()),
        ),
    }
}

fn mode(ctx: &mut Ctx<'_>, path: &str, mode: Option<&str>, count: Option<i64>) -> AllocationMode {
    match mode.unwrap_or_default() {
        "" | "ExactCount" => {
            let n = count.unwrap_or(1);
            let Ok(n32) = u32::try_from(n) else {
                ctx.problem(
                    format!("{path}.count"),
                    &Problem::Invalid {
                        value: n.to_string(),
                        reason: if n < 0 {
                            "must be greater than zero"
                        } else {
                            "must be less than or equal to 4294967295"
                        },
                    },
                );
                return AllocationMode::ExactCount(1);
            };
            AllocationMode::ExactCount(n32)
        }
        "All" => {
            if let Some(n) = count.filter(|&n| n != 0) {
                ctx.problem(
                    format!("{path}.count"),
                    &Problem::Invalid {
                        value: n.to_string(),
                        reason: "must not be specified when allocationMode is 'All'",
                    },
                );
            }
            AllocationMode::All
        }
        other => {
            ctx.problem(
                format!("{path}.allocationMode"),
                &Problem::NotSupported {
                    value: other.to_owned(),
                    supported: ALLOCATION_MODES,
                },
            );
            AllocationMode::ExactCount(1)
        }
    }
}

/// Device tolerations at `path`.
pub(crate) fn tolerations(
    ctx: &mut Ctx<'_>,
    path: &str,
    t: Option<&[res::DeviceToleration]>,
) -> Vec<DeviceToleration> {
    let mut out = Vec::new();
    for (i, t) in t.unwrap_or_default().iter().enumerate() {
        let operator = match t.operator.as_deref().unwrap_or_default() {
            "" => DeviceTolerationOperator::default(),
            op => {
                let Some(op) = DeviceTolerationOperator::parse(op) else {
                    ctx.problem(
                        format!("{path}[{i}].operator"),
                        &Problem::NotSupported {
                            value: op.to_owned(),
                            supported: DeviceTolerationOperator::SUPPORTED,
                        },
                    );
                    continue;
                };
                op
            }
        };
        out.push(DeviceToleration {
            key: t.key.clone().unwrap_or_default(),
            operator,
            value: t.value.clone().unwrap_or_default(),
            effect: t
                .effect
                .as_deref()
                .filter(|e| !e.is_empty())
                .map(DeviceTaintEffect::from),
            toleration_seconds: t.toleration_seconds,
        });
    }
    out
}

/// A claim's `status.allocation` at `path`.
pub(crate) fn allocation(
    ctx: &mut Ctx<'_>,
    path: &str,
    a: &res::AllocationResult,
) -> AllocationResult {
    let mut out = AllocationResult::default();
    if let Some(d) = &a.devices {
        for (i, r) in d.results.iter().flatten().enumerate() {
            let rp = format!("{path}.devices.results[{i}]");
            out.devices.push(DeviceRequestAllocationResult {
                request: r.request.clone(),
                driver: r.driver.clone(),
                pool: r.pool.clone(),
                device: r.device.clone(),
                admin_access: r.admin_access.unwrap_or(false),
                tolerations: tolerations(
                    ctx,
                    &format!("{rp}.tolerations"),
                    r.tolerations.as_deref(),
                ),
                binding_conditions: r.binding_conditions.clone().unwrap_or_default(),
                binding_failure_conditions: r
                    .binding_failure_conditions
                    .clone()
                    .unwrap_or_default(),
                share_id: r.share_id.clone(),
                consumed_capacity: ctx.quantities(
                    &format!("{rp}.consumedCapacity"),
                    r.consumed_capacity.as_ref(),
                ),
            });
        }
        for (i, c) in d.config.iter().flatten().enumerate() {
            let cp = format!("{path}.devices.config[{i}]");
            let source = match c.source.as_str() {
                "FromClass" => AllocationConfigSource::FromClass,
                "FromClaim" => AllocationConfigSource::FromClaim,
                other => {
                    ctx.problem(
                        format!("{cp}.source"),
                        &Problem::NotSupported {
                            value: other.to_owned(),
                            supported: CONFIG_SOURCES,
                        },
                    );
                    continue;
                }
            };
            let Some(o) = &c.opaque else {
                ctx.problem(format!("{cp}.opaque"), &Problem::Required);
                continue;
            };
            out.config.push(DeviceAllocationConfiguration {
                source,
                requests: c.requests.clone().unwrap_or_default(),
                opaque: opaque(o),
            });
        }
    }
    out.node_selector = a
        .node_selector
        .as_ref()
        .map(|s| node_selector(ctx, &format!("{path}.nodeSelector"), s));
    out
}

/// Checks every CEL selector of a claim spec at `path` (`spec.devices`) with the
/// core's compiler.
pub(crate) fn check_selectors(ctx: &mut Ctx<'_>, path: &str, spec: &ResourceClaimSpec) {
    for (i, r) in spec.requests.iter().enumerate() {
        let rp = format!("{path}.requests[{i}]");
        match &r.kind {
            gangpack::DeviceRequestKind::Exactly(e) => {
                compile(ctx, &format!("{rp}.exactly.selectors"), &e.selectors);
            }
            gangpack::DeviceRequestKind::FirstAvailable(subs) => {
                for (j, s) in subs.iter().enumerate() {
                    compile(
                        ctx,
                        &format!("{rp}.firstAvailable[{j}].selectors"),
                        &s.selectors,
                    );
                }
            }
        }
    }
}

fn compile(ctx: &mut Ctx<'_>, path: &str, selectors: &[DeviceSelector]) {
    for (i, s) in selectors.iter().enumerate() {
        // Validation has reported one over the length limit.
        if s.cel.len() > gangpack::limits::MAX_CEL_LEN {
            continue;
        }
        if let Err(e) = gangpack::Selector::compile(&s.cel) {
            ctx.problem(
                format!("{path}[{i}].cel.expression"),
                &Problem::InvalidExpression {
                    message: e.to_string(),
                },
            );
        }
    }
}
