//! Errors for invalid input: every one names the object and the field.

use core::fmt;

use crate::alloc_prelude::*;
use crate::model::names::NameError;
use crate::model::quantity::QuantityError;
use crate::model::semver::VersionError;

/// The kind of a Kubernetes object, as printed in error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ObjectKind {
    /// core/v1 `Node`.
    Node,
    /// resource.k8s.io/v1 `ResourceSlice`.
    ResourceSlice,
    /// resource.k8s.io/v1 `DeviceClass`.
    DeviceClass,
    /// resource.k8s.io/v1 `DeviceTaintRule`.
    DeviceTaintRule,
    /// resource.k8s.io/v1 `ResourceClaim`.
    ResourceClaim,
    /// resource.k8s.io/v1 `ResourceClaimTemplate`.
    ResourceClaimTemplate,
    /// core/v1 `Pod`.
    Pod,
    /// scheduling.k8s.io/v1beta1 `PodGroup`.
    PodGroup,
    /// scheduling.k8s.io/v1beta1 `Workload`.
    Workload,
    /// scheduling.k8s.io/v1alpha3 `CompositePodGroup`.
    CompositePodGroup,
    /// scheduling.k8s.io/v1 `PriorityClass`.
    PriorityClass,
}

impl ObjectKind {
    /// The kind as Kubernetes spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Node => "Node",
            ObjectKind::ResourceSlice => "ResourceSlice",
            ObjectKind::DeviceClass => "DeviceClass",
            ObjectKind::DeviceTaintRule => "DeviceTaintRule",
            ObjectKind::ResourceClaim => "ResourceClaim",
            ObjectKind::ResourceClaimTemplate => "ResourceClaimTemplate",
            ObjectKind::Pod => "Pod",
            ObjectKind::PodGroup => "PodGroup",
            ObjectKind::Workload => "Workload",
            ObjectKind::CompositePodGroup => "CompositePodGroup",
            ObjectKind::PriorityClass => "PriorityClass",
        }
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Names one object: kind, optional namespace, name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ObjectRef {
    /// The object's kind.
    pub kind: ObjectKind,
    /// The namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectRef {
    /// A cluster-scoped object.
    pub fn cluster(kind: ObjectKind, name: impl Into<String>) -> ObjectRef {
        ObjectRef {
            kind,
            namespace: None,
            name: name.into(),
        }
    }

    /// A namespaced object.
    pub fn namespaced(
        kind: ObjectKind,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> ObjectRef {
        ObjectRef {
            kind,
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} \"{}/{}\"", self.kind, ns, self.name),
            None => write!(f, "{} \"{}\"", self.kind, self.name),
        }
    }
}

/// What is wrong with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A required field is missing or empty.
    Required,
    /// A name does not follow its syntax (DNS label, label name, qualified name, ...).
    InvalidName {
        /// The offending value.
        value: String,
        /// Which rule it breaks.
        error: NameError,
    },
    /// A quantity could not be parsed.
    InvalidQuantity {
        /// The offending text.
        value: String,
        /// Why.
        error: QuantityError,
    },
    /// A semantic version could not be parsed.
    InvalidVersion {
        /// The offending text.
        value: String,
        /// Why.
        error: VersionError,
    },
    /// A list or map has more entries than upstream allows.
    TooMany {
        /// The upstream limit.
        max: usize,
        /// How many were given.
        actual: usize,
    },
    /// A string is longer than upstream allows.
    TooLong {
        /// The limit, in bytes.
        max: usize,
        /// The actual length.
        actual: usize,
    },
    /// The same name or key appears twice where it must be unique.
    Duplicate {
        /// The repeated value.
        value: String,
    },
    /// An enum field holds a value that is not one of the supported ones.
    NotSupported {
        /// The offending value.
        value: String,
        /// The values that are accepted.
        supported: &'static [&'static str],
    },
    /// Exactly one of several fields must be set.
    ExactlyOneOf {
        /// The alternatives.
        fields: &'static [&'static str],
        /// How many are set.
        set: usize,
    },
    /// A field is set where it is not allowed.
    Forbidden {
        /// Why it is not allowed.
        reason: &'static str,
    },
    /// A value is out of its allowed range or otherwise invalid.
    Invalid {
        /// The offending value, printed.
        value: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// A CEL expression does not compile (the message shows where and why).
    InvalidExpression {
        /// The compiler's message, with the position.
        message: String,
    },
    /// A reference points at something that does not exist.
    NotFound {
        /// The missing name.
        value: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Required => f.write_str("required value"),
            Problem::InvalidName { value, error } => {
                write!(f, "invalid value \"{value}\": {error}")
            }
            Problem::InvalidQuantity { value, error } => {
                write!(f, "invalid quantity \"{value}\": {error}")
            }
            Problem::InvalidVersion { value, error } => {
                write!(f, "invalid semantic version \"{value}\": {error}")
            }
            Problem::TooMany { max, actual } => {
                write!(f, "too many: {actual}, must have at most {max} items")
            }
            Problem::TooLong { max, actual } => {
                write!(
                    f,
                    "too long: {actual} bytes, may not be more than {max} bytes"
                )
            }
            Problem::Duplicate { value } => write!(f, "duplicate value \"{value}\""),
            Problem::NotSupported { value, supported } => {
                write!(f, "unsupported value \"{value}\": supported values: ")?;
                for (i, s) in supported.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "\"{s}\"")?;
                }
                Ok(())
            }
            Problem::ExactlyOneOf { fields, set } => {
                write!(f, "exactly one of ")?;
                for (i, s) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{s}`")?;
                }
                write!(f, " must be set, found {set}")
            }
            Problem::Forbidden { reason } => write!(f, "forbidden: {reason}"),
            Problem::Invalid { value, reason } => write!(f, "invalid value \"{value}\": {reason}"),
            Problem::NotFound { value } => write!(f, "not found: \"{value}\""),
            Problem::InvalidExpression { message } => {
                write!(f, "invalid CEL expression: {message}")
            }
        }
    }
}

/// One invalid field of one object.
///
/// Printed as `ResourceSlice "node-7-gpu": spec.devices[2].capacity["memory"]: invalid quantity "80 GiB": ...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// The object that holds the field.
    pub object: ObjectRef,
    /// The field path, in Kubernetes' JSON spelling (`spec.devices[2].name`).
    pub field: String,
    /// What is wrong.
    pub problem: Problem,
}

impl ValidationError {
    /// Builds an error.
    pub fn new(object: ObjectRef, field: impl Into<String>, problem: Problem) -> ValidationError {
        ValidationError {
            object,
            field: field.into(),
            problem,
        }
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.object, self.field, self.problem)
    }
}

impl core::error::Error for ValidationError {}

/// Runs a name validator and records a [`Problem::InvalidName`] (or [`Problem::Required`]
/// for an empty required value) under `field`.
pub(crate) fn check_name(
    obj: &ObjectRef,
    field: &str,
    value: &str,
    validate: fn(&str) -> Result<(), NameError>,
    errs: &mut Vec<ValidationError>,
) {
    if value.is_empty() {
        errs.push(ValidationError::new(obj.clone(), field, Problem::Required));
    } else if let Err(error) = validate(value) {
        errs.push(ValidationError::new(
            obj.clone(),
            field,
            Problem::InvalidName {
                value: value.to_owned(),
                error,
            },
        ));
    }
}

/// Records [`Problem::TooMany`] when `actual > max`.
pub(crate) fn check_max(
    obj: &ObjectRef,
    field: &str,
    actual: usize,
    max: usize,
    errs: &mut Vec<ValidationError>,
) {
    if actual > max {
        errs.push(ValidationError::new(
            obj.clone(),
            field,
            Problem::TooMany { max, actual },
        ));
    }
}

/// `Ok` when no problem was recorded, else every problem.
pub(crate) fn finish(errs: Vec<ValidationError>) -> Result<(), Vec<ValidationError>> {
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}
