//! Typed deserialization with field paths, and the error collector every conversion
//! uses.

use std::collections::BTreeMap;
use std::fmt::{Display, Write as _};

use gangpack::{Problem, Quantity, ValidationError};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::object::{InputError, InputErrors, Kind, Object, Warning};

/// Collects the problems (and warnings) of converting one object, each located at the
/// object's source and named after it.
pub(crate) struct Ctx<'a> {
    /// The object being converted.
    pub(crate) obj: &'a Object,
    /// Problems found so far.
    pub(crate) errs: InputErrors,
    /// Warnings found so far.
    pub(crate) warnings: Vec<Warning>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(obj: &'a Object) -> Ctx<'a> {
        Ctx {
            obj,
            errs: InputErrors::default(),
            warnings: Vec::new(),
        }
    }

    /// Records a problem at `field` (a Kubernetes JSON path).
    pub(crate) fn err(&mut self, field: impl Into<String>, message: impl Display) {
        self.errs.push(input_error(self.obj, field.into(), message));
    }

    /// Records a [`Problem`] at `field`.
    pub(crate) fn problem(&mut self, field: impl Into<String>, problem: &Problem) {
        self.err(field, problem);
    }

    /// Records a warning.
    pub(crate) fn warn(&mut self, message: impl Display) {
        self.warnings.push(warning(self.obj, message));
    }

    /// Records the core's validation errors.
    pub(crate) fn validation(&mut self, errs: Vec<ValidationError>) {
        for e in errs {
            self.errs.push(validation_error(self.obj, &e));
        }
    }

    /// Runs a core `validate()`.
    pub(crate) fn validate(&mut self, result: Result<(), Vec<ValidationError>>) {
        if let Err(errs) = result {
            self.validation(errs);
        }
    }

    /// Whether no problem was recorded.
    pub(crate) fn ok(&self) -> bool {
        self.errs.is_empty()
    }

    /// Parses a quantity at `field`; records the problem and gives `None` when invalid.
    pub(crate) fn quantity(
        &mut self,
        field: &str,
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Option<Quantity> {
        self.quantity_at(|| field.to_owned(), q)
    }

    /// [`Ctx::quantity`] at a field spelled out only when the quantity is invalid.
    pub(crate) fn quantity_at(
        &mut self,
        field: impl FnOnce() -> String,
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Option<Quantity> {
        match Quantity::parse(&q.0) {
            Ok(v) => Some(v),
            Err(error) => {
                self.problem(
                    field(),
                    &Problem::InvalidQuantity {
                        value: q.0.clone(),
                        error,
                    },
                );
                None
            }
        }
    }

    /// Parses a map of quantities at `path["name"]`.
    pub(crate) fn quantities(
        &mut self,
        path: &str,
        map: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
    ) -> BTreeMap<String, Quantity> {
        let mut out = BTreeMap::new();
        for (k, q) in map.into_iter().flatten() {
            if let Some(v) = self.quantity(&format!("{path}[\"{k}\"]"), q) {
                out.insert(k.clone(), v);
            }
        }
        out
    }

    /// Deserializes the whole object into its `k8s-openapi` type.
    pub(crate) fn typed<T: DeserializeOwned>(&mut self) -> Option<T> {
        match typed(self.obj) {
            Ok(v) => Some(v),
            Err(e) => {
                self.errs.push(e);
                None
            }
        }
    }
}

/// An error located at `obj`.
pub(crate) fn input_error(obj: &Object, field: String, message: impl Display) -> InputError {
    InputError {
        source: Some(obj.source.clone()),
        object: Some(obj.describe()),
        field,
        message: message.to_string(),
    }
}

/// A warning about `obj`.
pub(crate) fn warning(obj: &Object, message: impl Display) -> Warning {
    Warning {
        source: Some(obj.source.clone()),
        object: Some(obj.describe()),
        message: message.to_string(),
    }
}

/// A core validation error, located at `obj`'s source. The object named is the one the
/// core names (which may be another one than `obj`, e.g. a generated claim).
pub(crate) fn validation_error(obj: &Object, e: &ValidationError) -> InputError {
    InputError {
        source: Some(obj.source.clone()),
        object: Some(e.object.to_string()),
        field: e.field.clone(),
        message: e.problem.to_string(),
    }
}

/// Deserializes an object into its `k8s-openapi` type; a type error names the field
/// path in Kubernetes' JSON spelling (`spec.devices[2].capacity["memory"].value`). An
/// object of another served version (built by hand rather than loaded) is converted
/// first.
pub(crate) fn typed<T: DeserializeOwned>(obj: &Object) -> Result<T, InputError> {
    let converted;
    let raw = if obj.raw.get("apiVersion").and_then(Value::as_str) == Some(obj.kind.api_version()) {
        &*obj.raw
    } else {
        let mut v = (*obj.raw).clone();
        super::versions::to_read_version(obj.kind, &mut v);
        converted = v;
        &converted
    };
    typed_value(obj.kind, raw).map_err(|(field, message)| input_error(obj, field, message))
}

/// Deserializes a document of `kind` into `T`; a type error is its field path and
/// message (`required value` for a missing required field).
///
/// The document is read directly first: tracking the path costs about as much as the
/// read itself, and only an error needs it. A document that fails is read again with
/// the path tracked (the same read, so the same first error), for its message.
pub(crate) fn typed_value<T: DeserializeOwned>(
    kind: Kind,
    raw: &Value,
) -> Result<T, (String, String)> {
    if let Ok(v) = T::deserialize(raw) {
        return Ok(v);
    }
    serde_path_to_error::deserialize::<_, T>(raw).map_err(|e| {
        let mut field = format_path(kind, e.path());
        let inner = e.inner().to_string();
        let message = match missing_field(&inner) {
            Some(name) => {
                field = join(&field, name);
                "required value".to_owned()
            }
            None => inner,
        };
        (field, message)
    })
}

/// `missing field `x`` → `x`.
fn missing_field(msg: &str) -> Option<&str> {
    msg.strip_prefix("missing field `")?.strip_suffix('`')
}

fn join(path: &str, child: &str) -> String {
    if path.is_empty() {
        child.to_owned()
    } else {
        format!("{path}.{child}")
    }
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    /// A struct field, `.name`.
    Field(String),
    /// A map key, `["key"]`.
    Key(String),
    /// A list index, `[i]`.
    Index(usize),
}

/// A path in Kubernetes' JSON spelling: struct fields joined by `.`, list indexes as
/// `[i]`, map keys as `["key"]`.
pub(crate) fn format_segments(path: &[Segment]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Segment::Field(f) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(f);
            }
            Segment::Key(k) => {
                let _ = write!(out, "[\"{k}\"]");
            }
            Segment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// A deserialization path in Kubernetes' JSON spelling: struct fields joined by `.`,
/// list indexes as `[i]`, map keys as `["key"]`.
pub(crate) fn format_path(kind: Kind, path: &serde_path_to_error::Path) -> String {
    // What each segment was: a field name, a map key, or an index.
    let mut names: Vec<Option<&str>> = Vec::new();
    let mut segments = Vec::new();
    for seg in path {
        match seg {
            serde_path_to_error::Segment::Seq { index } => {
                segments.push(Segment::Index(*index));
                names.push(None);
            }
            serde_path_to_error::Segment::Map { key } => {
                if is_map_key(kind, &names) {
                    segments.push(Segment::Key(key.clone()));
                    names.push(None);
                } else {
                    segments.push(Segment::Field(key.clone()));
                    names.push(Some(key.as_str()));
                }
            }
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    let out = format_segments(&segments);
    if out == "." { String::new() } else { out }
}

/// Whether the next key under `parents` (field names, `None` for indexes and map keys)
/// is a map key rather than a struct field: the fields of the object kinds gangpack
/// reads whose type is a map.
pub(crate) fn is_map_key(kind: Kind, parents: &[Option<&str>]) -> bool {
    let n = parents.len();
    let at = |back: usize| -> Option<Option<&str>> { n.checked_sub(back).map(|i| parents[i]) };
    let Some(Some(last)) = at(1) else {
        return false;
    };
    match last {
        "labels"
        | "annotations"
        | "attributes"
        | "counters"
        | "nodeAllocatableResources"
        | "allocatable"
        | "overhead"
        | "limits"
        | "consumedCapacity"
        | "allocatedResources" => true,
        // `resources.requests`, `capacity.requests` (not `spec.devices.requests`).
        "requests" => matches!(at(2), Some(Some("resources" | "capacity"))),
        // A device's capacity (v1beta1: in its `basic`), a node's `status.capacity` (not
        // a request's `capacity`).
        "capacity" => {
            matches!(at(2), Some(Some("status" | "basic")))
                || (matches!(at(2), Some(None)) && matches!(at(3), Some(Some("devices"))))
        }
        // A pod's `spec.nodeSelector` is a map; a slice's is a NodeSelector.
        "nodeSelector" => kind == Kind::Pod && n == 2 && at(2) == Some(Some("spec")),
        _ => false,
    }
}

/// A `metav1.Time` as seconds since the epoch.
pub(crate) fn seconds(t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time) -> gangpack::Time {
    gangpack::Time(t.0.as_second())
}

/// The latest timestamp anywhere in a document: `creationTimestamp`, `timeAdded`,
/// `allocationTimestamp`, `deletionTimestamp`, `startTime`, `lastTransitionTime`.
pub(crate) fn latest_timestamp(v: &Value) -> Option<i64> {
    const KEYS: [&str; 6] = [
        "creationTimestamp",
        "timeAdded",
        "allocationTimestamp",
        "deletionTimestamp",
        "startTime",
        "lastTransitionTime",
    ];
    let mut best: Option<i64> = None;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    if let (true, Value::String(s)) = (KEYS.contains(&k.as_str()), x)
                        && let Ok(t) = s.parse::<k8s_openapi::jiff::Timestamp>()
                    {
                        best = Some(best.map_or(t.as_second(), |b| b.max(t.as_second())));
                    }
                    if x.is_object() || x.is_array() {
                        stack.push(x);
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    best
}
