//! Devices as published in a ResourceSlice (resource.k8s.io/v1 `Device`).

use crate::alloc_prelude::*;
use crate::model::error::{ObjectRef, Problem, ValidationError, check_max, check_name};
use crate::model::names;
use crate::model::semver::{MAX_VERSION_LEN, Version, VersionError};
use crate::{DeviceTaint, NodeSelector, Quantity};

/// Upstream: attributes + capacities per device.
pub const MAX_ATTRIBUTES_AND_CAPACITIES: usize = 32;
/// Upstream: attribute values per device, list items counted one by one.
pub const MAX_ATTRIBUTE_VALUES: usize = 48;
/// Upstream: length of a string or version attribute value.
pub const MAX_ATTRIBUTE_STRING_LEN: usize = 64;
/// Upstream: taints per device.
pub const MAX_DEVICE_TAINTS: usize = 16;
/// Upstream: `consumesCounters` entries per device.
pub const MAX_COUNTER_CONSUMPTIONS: usize = 2;
/// Upstream: counters per counter set and per consumption.
pub const MAX_COUNTERS: usize = 32;
/// Upstream: binding conditions (and binding failure conditions) per device.
pub const MAX_BINDING_CONDITIONS: usize = 4;
/// Upstream: `requestPolicy.validValues` entries.
pub const MAX_VALID_VALUES: usize = 10;

/// A typed device attribute (`DeviceAttribute`: exactly one value field).
///
/// The list forms are the alpha `DRAListTypeAttributes` extension; a scalar behaves
/// like a one-element list where constraints intersect values.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum DeviceAttribute {
    /// `int`.
    Int(i64),
    /// `bool`.
    Bool(bool),
    /// `string` (at most 64 bytes).
    String(String),
    /// `version`: a semantic version 2.0.0 string in minimal form (at most 64 bytes).
    Version(String),
    /// `ints` (alpha).
    Ints(Vec<i64>),
    /// `bools` (alpha).
    Bools(Vec<bool>),
    /// `strings` (alpha).
    Strings(Vec<String>),
    /// `versions` (alpha).
    Versions(Vec<String>),
}

impl DeviceAttribute {
    /// How many values the attribute holds (1 for scalars).
    pub fn value_count(&self) -> usize {
        match self {
            DeviceAttribute::Int(_)
            | DeviceAttribute::Bool(_)
            | DeviceAttribute::String(_)
            | DeviceAttribute::Version(_) => 1,
            DeviceAttribute::Ints(v) => v.len(),
            DeviceAttribute::Bools(v) => v.len(),
            DeviceAttribute::Strings(v) | DeviceAttribute::Versions(v) => v.len(),
        }
    }

    /// Whether this is one of the list forms.
    pub fn is_list(&self) -> bool {
        matches!(
            self,
            DeviceAttribute::Ints(_)
                | DeviceAttribute::Bools(_)
                | DeviceAttribute::Strings(_)
                | DeviceAttribute::Versions(_)
        )
    }

    /// The type name as the API spells the field.
    pub fn type_name(&self) -> &'static str {
        match self {
            DeviceAttribute::Int(_) => "int",
            DeviceAttribute::Bool(_) => "bool",
            DeviceAttribute::String(_) => "string",
            DeviceAttribute::Version(_) => "version",
            DeviceAttribute::Ints(_) => "ints",
            DeviceAttribute::Bools(_) => "bools",
            DeviceAttribute::Strings(_) => "strings",
            DeviceAttribute::Versions(_) => "versions",
        }
    }

    fn validate(&self, obj: &ObjectRef, field: &str, errs: &mut Vec<ValidationError>) {
        let check_str = |s: &str, field: &dyn Fn() -> String, errs: &mut Vec<ValidationError>| {
            if s.len() > MAX_ATTRIBUTE_STRING_LEN {
                errs.push(ValidationError::new(
                    obj.clone(),
                    field(),
                    Problem::TooLong {
                        max: MAX_ATTRIBUTE_STRING_LEN,
                        actual: s.len(),
                    },
                ));
            }
        };
        let check_version =
            |s: &str, field: &dyn Fn() -> String, errs: &mut Vec<ValidationError>| {
                if s.len() > MAX_VERSION_LEN {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        field(),
                        Problem::TooLong {
                            max: MAX_VERSION_LEN,
                            actual: s.len(),
                        },
                    ));
                } else if let Err(error) = check_version_syntax(s) {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        field(),
                        Problem::InvalidVersion {
                            value: s.to_owned(),
                            error,
                        },
                    ));
                }
            };
        if self.is_list() && self.value_count() == 0 {
            errs.push(ValidationError::new(
                obj.clone(),
                format!("{field}.{}", self.type_name()),
                Problem::Required,
            ));
        }
        match self {
            DeviceAttribute::String(s) => check_str(s, &|| format!("{field}.string"), errs),
            DeviceAttribute::Version(s) => check_version(s, &|| format!("{field}.version"), errs),
            DeviceAttribute::Strings(v) => {
                for (i, s) in v.iter().enumerate() {
                    check_str(s, &|| format!("{field}.strings[{i}]"), errs);
                }
            }
            DeviceAttribute::Versions(v) => {
                for (i, s) in v.iter().enumerate() {
                    check_version(s, &|| format!("{field}.versions[{i}]"), errs);
                }
            }
            _ => {}
        }
    }
}

/// Checks a `version` attribute value as upstream's validation does: against the semver
/// 2.0.0 regex `(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-pre)?(\+build)?`, which puts no
/// bound on the numbers.
///
/// [`Version::parse`] refuses a `MAJOR`, `MINOR` or `PATCH` beyond `u64` (as upstream's CEL
/// semver library does when a selector reads the attribute), but the API server stores
/// such a slice, so here an overflowing number only counts as the valid number it is.
fn check_version_syntax(s: &str) -> Result<(), VersionError> {
    match Version::parse(s) {
        Err(VersionError::Overflow { .. }) => {
            // Overflow is only reported for well-formed numbers (digits, no leading
            // zero): check everything else with those numbers replaced by `0`.
            let (rest, build) = match s.split_once('+') {
                Some((rest, build)) => (rest, Some(build)),
                None => (s, None),
            };
            let (core, pre) = match rest.split_once('-') {
                Some((core, pre)) => (core, Some(pre)),
                None => (rest, None),
            };
            let mut text = core
                .splitn(3, '.')
                .map(|part| {
                    let overflows = !part.is_empty()
                        && part.bytes().all(|b| b.is_ascii_digit())
                        && !part.starts_with('0')
                        && part.parse::<u64>().is_err();
                    if overflows { "0" } else { part }
                })
                .collect::<Vec<_>>()
                .join(".");
            if let Some(pre) = pre {
                text.push('-');
                text.push_str(pre);
            }
            if let Some(build) = build {
                text.push('+');
                text.push_str(build);
            }
            Version::parse(&text).map(|_| ())
        }
        other => other.map(|_| ()),
    }
}

/// `CapacityRequestPolicyRange`: consumable amounts from `min` to `max` in `step`s.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CapacityRequestPolicyRange {
    /// Smallest amount one allocation consumes (requests below are rounded up to it).
    pub min: Quantity,
    /// Largest amount one allocation may consume.
    pub max: Option<Quantity>,
    /// Granularity: amounts are `min + n * step`.
    pub step: Option<Quantity>,
}

/// `CapacityRequestPolicy` of a consumable capacity (only on devices that allow
/// multiple allocations).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct CapacityRequestPolicy {
    /// Amount consumed when a request does not mention this capacity.
    pub default: Option<Quantity>,
    /// Allowed amounts, ascending (mutually exclusive with `valid_range`).
    pub valid_values: Vec<Quantity>,
    /// Allowed range (mutually exclusive with `valid_values`).
    pub valid_range: Option<CapacityRequestPolicyRange>,
}

/// `DeviceCapacity`: an amount and, for shareable devices, how it may be consumed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceCapacity {
    /// The total amount.
    pub value: Quantity,
    /// How it may be consumed by several allocations.
    #[cfg_attr(feature = "serde", serde(default))]
    pub request_policy: Option<CapacityRequestPolicy>,
}

impl From<Quantity> for DeviceCapacity {
    fn from(value: Quantity) -> DeviceCapacity {
        DeviceCapacity {
            value,
            request_policy: None,
        }
    }
}

/// `DeviceCounterConsumption`: counters a partition consumes from a shared counter set.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceCounterConsumption {
    /// Name of the counter set in the same pool.
    pub counter_set: String,
    /// Counter name → amount consumed.
    pub counters: BTreeMap<String, Quantity>,
}

/// Which nodes can reach a device or a slice (`nodeName` / `nodeSelector` / `allNodes`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum NodeAccess {
    /// Node-local: exactly this node.
    NodeName(String),
    /// Every node the selector matches.
    NodeSelector(NodeSelector),
    /// Every node.
    AllNodes,
}

/// One device (resource.k8s.io/v1 `Device`).
///
/// Attribute and capacity names are `QualifiedName`s; a name without a domain belongs
/// to the driver's domain (`memory` on driver `gpu.example.com` is
/// `gpu.example.com/memory`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct Device {
    /// DNS label, unique in the pool.
    pub name: String,
    /// Typed attributes.
    pub attributes: BTreeMap<String, DeviceAttribute>,
    /// Capacities.
    pub capacity: BTreeMap<String, DeviceCapacity>,
    /// Shared counters this device consumes (partitionable devices).
    pub consumes_counters: Vec<DeviceCounterConsumption>,
    /// Driver-published taints.
    pub taints: Vec<DeviceTaint>,
    /// The device can be allocated several times at once (consumable capacity).
    pub allow_multiple_allocations: bool,
    /// Allocations are pinned to the chosen node even for network-attached devices.
    pub binds_to_node: bool,
    /// Conditions that must be True before a pod using the device is bound.
    pub binding_conditions: Vec<String>,
    /// Conditions whose True value means binding failed.
    pub binding_failure_conditions: Vec<String>,
    /// Per-device node access; set exactly when the slice uses `perDeviceNodeSelection`.
    pub node_access: Option<NodeAccess>,
}

impl Device {
    /// A device with a name and nothing else.
    pub fn new(name: impl Into<String>) -> Device {
        Device {
            name: name.into(),
            ..Device::default()
        }
    }

    /// Adds an attribute (builder style).
    #[must_use]
    pub fn with_attribute(mut self, name: impl Into<String>, value: DeviceAttribute) -> Device {
        self.attributes.insert(name.into(), value);
        self
    }

    /// Adds a capacity without request policy (builder style).
    #[must_use]
    pub fn with_capacity(mut self, name: impl Into<String>, value: Quantity) -> Device {
        self.capacity.insert(name.into(), value.into());
        self
    }

    /// Adds a taint (builder style).
    #[must_use]
    pub fn with_taint(mut self, taint: DeviceTaint) -> Device {
        self.taints.push(taint);
        self
    }

    /// Whether this device forces its slice under the 64-device limit.
    pub(crate) fn needs_small_slice(&self) -> bool {
        !self.taints.is_empty()
            || !self.consumes_counters.is_empty()
            || self.attributes.values().any(DeviceAttribute::is_list)
    }

    /// Checks the device as the API server would, under field path `path()`.
    ///
    /// The field paths are formatted only when a check fails: the checks run once
    /// without them, and again with them only when they found something (a slice of
    /// 128 valid devices would otherwise format thousands of paths to throw away).
    pub(crate) fn validate(
        &self,
        obj: &ObjectRef,
        path: impl FnOnce() -> String,
        per_device_node_selection: bool,
        errs: &mut Vec<ValidationError>,
    ) {
        let mut found = Vec::new();
        self.validate_at(obj, None, per_device_node_selection, &mut found);
        if !found.is_empty() {
            self.validate_at(obj, Some(&path()), per_device_node_selection, errs);
        }
    }

    /// [`validate`](Self::validate) under `path`, or with empty field paths (none
    /// formatted) when `None`.
    fn validate_at(
        &self,
        obj: &ObjectRef,
        path: Option<&str>,
        per_device_node_selection: bool,
        errs: &mut Vec<ValidationError>,
    ) {
        // The field path under `path`, formatted only when there is one.
        let at = |f: &dyn Fn(&str) -> String| path.map_or_else(String::new, f);
        check_name(
            obj,
            &at(&|path| format!("{path}.name")),
            &self.name,
            names::validate_dns_label,
            errs,
        );
        check_max(
            obj,
            &at(&|path| format!("{path}.attributes")),
            self.attributes.len() + self.capacity.len(),
            MAX_ATTRIBUTES_AND_CAPACITIES,
            errs,
        );
        let values: usize = self
            .attributes
            .values()
            .map(DeviceAttribute::value_count)
            .sum();
        check_max(
            obj,
            &at(&|path| format!("{path}.attributes")),
            values,
            MAX_ATTRIBUTE_VALUES,
            errs,
        );
        for (name, attr) in &self.attributes {
            let field = at(&|path| format!("{path}.attributes[\"{name}\"]"));
            check_name(obj, &field, name, names::validate_qualified_name, errs);
            attr.validate(obj, &field, errs);
        }
        for (name, cap) in &self.capacity {
            let field = at(&|path| format!("{path}.capacity[\"{name}\"]"));
            check_name(obj, &field, name, names::validate_qualified_name, errs);
            if let Some(policy) = &cap.request_policy {
                if self.allow_multiple_allocations {
                    validate_policy(
                        obj,
                        &format!("{field}.requestPolicy"),
                        cap.value,
                        policy,
                        errs,
                    );
                } else {
                    errs.push(ValidationError::new(
                        obj.clone(),
                        format!("{field}.requestPolicy"),
                        Problem::Forbidden {
                            reason: "requestPolicy requires allowMultipleAllocations: true",
                        },
                    ));
                }
            }
        }
        check_max(
            obj,
            &at(&|path| format!("{path}.consumesCounters")),
            self.consumes_counters.len(),
            MAX_COUNTER_CONSUMPTIONS,
            errs,
        );
        let mut sets = BTreeSet::new();
        for (i, c) in self.consumes_counters.iter().enumerate() {
            let field = at(&|path| format!("{path}.consumesCounters[{i}]"));
            let set_field = format!("{field}.counterSet");
            check_name(
                obj,
                &set_field,
                &c.counter_set,
                names::validate_dns_label,
                errs,
            );
            if !sets.insert(c.counter_set.as_str()) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    set_field,
                    Problem::Duplicate {
                        value: c.counter_set.clone(),
                    },
                ));
            }
            validate_counters(obj, &format!("{field}.counters"), &c.counters, errs);
        }
        check_max(
            obj,
            &at(&|path| format!("{path}.taints")),
            self.taints.len(),
            MAX_DEVICE_TAINTS,
            errs,
        );
        for (i, t) in self.taints.iter().enumerate() {
            t.validate_stored(obj, &at(&|path| format!("{path}.taints[{i}]")), errs);
        }
        validate_binding_conditions(obj, path.unwrap_or_default(), self, errs);
        match (&self.node_access, per_device_node_selection) {
            (None, true) => errs.push(ValidationError::new(
                obj.clone(),
                path.unwrap_or_default().to_owned(),
                Problem::ExactlyOneOf {
                    fields: &["nodeName", "nodeSelector", "allNodes"],
                    set: 0,
                },
            )),
            (Some(_), false) => errs.push(ValidationError::new(
                obj.clone(),
                at(&|path| format!("{path}.nodeName")),
                Problem::Forbidden {
                    reason: "per-device node selection requires spec.perDeviceNodeSelection: true",
                },
            )),
            (Some(access), true) => validate_access(obj, path.unwrap_or_default(), access, errs),
            (None, false) => {}
        }
    }
}

/// Checks a `nodeName` / `nodeSelector` / `allNodes` choice under `path`.
pub(crate) fn validate_access(
    obj: &ObjectRef,
    path: &str,
    access: &NodeAccess,
    errs: &mut Vec<ValidationError>,
) {
    match access {
        NodeAccess::NodeName(n) => {
            check_name(
                obj,
                &format!("{path}.nodeName"),
                n,
                names::validate_dns_subdomain,
                errs,
            );
        }
        NodeAccess::NodeSelector(sel) => {
            let field = format!("{path}.nodeSelector");
            // Upstream: a slice or device node selector has exactly one term, which
            // keeps merging selectors into one allocation result simple.
            if sel.terms.len() != 1 {
                errs.push(ValidationError::new(
                    obj.clone(),
                    format!("{field}.nodeSelectorTerms"),
                    Problem::Invalid {
                        value: format!("{} terms", sel.terms.len()),
                        reason: "must have exactly one node selector term",
                    },
                ));
            }
            sel.validate(obj, &field, errs);
        }
        NodeAccess::AllNodes => {}
    }
}

/// Checks a counter map (not empty, names are DNS labels, at most 32 counters).
pub(crate) fn validate_counters(
    obj: &ObjectRef,
    path: &str,
    counters: &BTreeMap<String, Quantity>,
    errs: &mut Vec<ValidationError>,
) {
    // Upstream `validateCounterSet` / `validateDeviceCounterConsumption`: an empty map
    // is `Required`.
    if counters.is_empty() {
        errs.push(ValidationError::new(
            obj.clone(),
            path.to_owned(),
            Problem::Required,
        ));
    }
    check_max(obj, path, counters.len(), MAX_COUNTERS, errs);
    for name in counters.keys() {
        check_name(
            obj,
            &format!("{path}[\"{name}\"]"),
            name,
            names::validate_dns_label,
            errs,
        );
    }
}

fn validate_binding_conditions(
    obj: &ObjectRef,
    path: &str,
    d: &Device,
    errs: &mut Vec<ValidationError>,
) {
    for (field, list) in [
        ("bindingConditions", &d.binding_conditions),
        ("bindingFailureConditions", &d.binding_failure_conditions),
    ] {
        let field = format!("{path}.{field}");
        check_max(obj, &field, list.len(), MAX_BINDING_CONDITIONS, errs);
        let mut seen = BTreeSet::new();
        for (i, c) in list.iter().enumerate() {
            let item = format!("{field}[{i}]");
            check_name(obj, &item, c, names::validate_label_name, errs);
            if !seen.insert(c.as_str()) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    item,
                    Problem::Duplicate { value: c.clone() },
                ));
            }
        }
    }
    if d.binding_conditions.is_empty() != d.binding_failure_conditions.is_empty() {
        let missing = if d.binding_conditions.is_empty() {
            "bindingConditions"
        } else {
            "bindingFailureConditions"
        };
        errs.push(ValidationError::new(
            obj.clone(),
            format!("{path}.{missing}"),
            Problem::Invalid {
                value: String::new(),
                reason: "bindingConditions and bindingFailureConditions must be set together",
            },
        ));
    }
    for (i, c) in d.binding_failure_conditions.iter().enumerate() {
        if d.binding_conditions.contains(c) {
            errs.push(ValidationError::new(
                obj.clone(),
                format!("{path}.bindingFailureConditions[{i}]"),
                Problem::Invalid {
                    value: c.clone(),
                    reason: "must not also be listed in bindingConditions",
                },
            ));
        }
    }
}

fn validate_policy(
    obj: &ObjectRef,
    path: &str,
    capacity: Quantity,
    p: &CapacityRequestPolicy,
    errs: &mut Vec<ValidationError>,
) {
    let invalid = |field: String, q: Quantity, reason: &'static str| {
        ValidationError::new(
            obj.clone(),
            field,
            Problem::Invalid {
                value: q.to_string(),
                reason,
            },
        )
    };
    if !p.valid_values.is_empty() && p.valid_range.is_some() {
        errs.push(ValidationError::new(
            obj.clone(),
            path.to_owned(),
            Problem::ExactlyOneOf {
                fields: &["validValues", "validRange"],
                set: 2,
            },
        ));
    }
    if !p.valid_values.is_empty() {
        let field = format!("{path}.validValues");
        check_max(obj, &field, p.valid_values.len(), MAX_VALID_VALUES, errs);
        for (i, v) in p.valid_values.iter().enumerate() {
            if *v > capacity {
                errs.push(invalid(
                    format!("{field}[{i}]"),
                    *v,
                    "must not exceed the capacity value",
                ));
            }
            if i > 0 && *v <= p.valid_values[i - 1] {
                errs.push(invalid(
                    format!("{field}[{i}]"),
                    *v,
                    "validValues must be sorted ascending without duplicates",
                ));
            }
        }
        match p.default {
            Some(d) if !p.valid_values.contains(&d) => {
                errs.push(invalid(
                    format!("{path}.default"),
                    d,
                    "default must be one of validValues",
                ));
            }
            None => errs.push(ValidationError::new(
                obj.clone(),
                format!("{path}.default"),
                Problem::Required,
            )),
            Some(_) => {}
        }
    }
    if let Some(r) = &p.valid_range {
        let field = format!("{path}.validRange");
        // Upstream `validateValidRequestValues`: "required when validRange is defined"
        // (reported once when validValues is set too).
        if p.default.is_none() && p.valid_values.is_empty() {
            errs.push(ValidationError::new(
                obj.clone(),
                format!("{path}.default"),
                Problem::Required,
            ));
        }
        // API docs of `CapacityRequestPolicyRange.min`: "Min must be greater than or
        // equal to zero". `default >= min` and `max >= min` (checked below) then keep
        // those non-negative as well; upstream states nothing else about signs.
        if r.min.is_negative() {
            errs.push(invalid(
                format!("{field}.min"),
                r.min,
                "must be greater than or equal to zero",
            ));
        }
        if r.min > capacity {
            errs.push(invalid(
                format!("{field}.min"),
                r.min,
                "must not exceed the capacity value",
            ));
        }
        if let Some(max) = r.max {
            if max > capacity {
                errs.push(invalid(
                    format!("{field}.max"),
                    max,
                    "must not exceed the capacity value",
                ));
            }
            if max < r.min {
                errs.push(invalid(
                    format!("{field}.max"),
                    max,
                    "must not be less than min",
                ));
            }
        }
        if let Some(d) = p.default {
            if d < r.min {
                errs.push(invalid(
                    format!("{path}.default"),
                    d,
                    "default must not be less than validRange.min",
                ));
            }
            if r.max.is_some_and(|m| d > m) {
                errs.push(invalid(
                    format!("{path}.default"),
                    d,
                    "default must not exceed validRange.max",
                ));
            }
        }
        if let Some(step) = r.step {
            if step.is_negative() || step.is_zero() {
                errs.push(invalid(
                    format!("{field}.step"),
                    step,
                    "must be greater than zero",
                ));
            } else {
                if r.min.checked_add(step).is_none_or(|s| s > capacity) {
                    errs.push(invalid(
                        format!("{field}.step"),
                        step,
                        "min + step must not exceed the capacity value",
                    ));
                }
                // Checked: quantities reach ±1.7e38 nano, so `q - min` can overflow
                // (only for values the checks above already refuse, but validation must
                // never panic nor wrap). An offset that does not fit is not on a step.
                let on_step = |q: Quantity| {
                    q.as_nano()
                        .checked_sub(r.min.as_nano())
                        .and_then(|off| off.checked_rem(step.as_nano()).map(|rem| (off, rem)))
                        .is_some_and(|(off, rem)| off >= 0 && rem == 0)
                };
                if let Some(d) = p.default.filter(|d| !on_step(*d)) {
                    errs.push(invalid(
                        format!("{path}.default"),
                        d,
                        "default must be min plus a multiple of step",
                    ));
                }
                if let Some(m) = r.max.filter(|m| !on_step(*m)) {
                    errs.push(invalid(
                        format!("{field}.max"),
                        m,
                        "max must be min plus a multiple of step",
                    ));
                }
            }
        }
    }
}
