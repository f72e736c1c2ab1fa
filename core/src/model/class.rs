//! DeviceClasses (resource.k8s.io/v1).

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, check_max, check_name};
use crate::model::names;

/// Upstream: selectors per class, request or subrequest.
pub const MAX_SELECTORS: usize = 32;
/// Upstream: bytes in one CEL expression.
pub const MAX_CEL_LEN: usize = 10 * 1024;

/// `DeviceSelector`: today always a CEL expression over `device`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceSelector {
    /// `cel.expression`.
    pub cel: String,
}

/// A DeviceClass: selectors every device allocated through it must satisfy.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct DeviceClass {
    /// `metadata.name`.
    pub name: String,
    /// `spec.selectors` (ANDed with a request's own selectors).
    pub selectors: Vec<DeviceSelector>,
    /// `spec.extendedResourceName`: pods may ask for the class as this extended
    /// resource; unset means `deviceclass.resource.kubernetes.io/<name>`. Must be an
    /// extended resource name ([`names::validate_extended_resource_name`]).
    pub extended_resource_name: Option<String>,
    /// `spec.config`: opaque driver configuration copied into every allocation that
    /// uses the class (ignored by the allocation itself).
    pub config: Vec<crate::OpaqueDeviceConfiguration>,
}

impl DeviceClass {
    /// A class with one CEL selector.
    pub fn with_cel(name: impl Into<String>, cel: impl Into<String>) -> DeviceClass {
        DeviceClass {
            name: name.into(),
            selectors: vec![DeviceSelector { cel: cel.into() }],
            extended_resource_name: None,
            config: Vec::new(),
        }
    }

    /// The extended resource name pods use for this class.
    pub fn effective_extended_resource_name(&self) -> String {
        match &self.extended_resource_name {
            Some(n) => n.clone(),
            None => format!("deviceclass.resource.kubernetes.io/{}", self.name),
        }
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::cluster(ObjectKind::DeviceClass, self.name.clone())
    }

    /// Checks the class as the API server would (CEL is parsed when it is compiled).
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let obj = self.object_ref();
        let mut errs = Vec::new();
        check_name(
            &obj,
            "metadata.name",
            &self.name,
            names::validate_dns_subdomain,
            &mut errs,
        );
        validate_selectors(&obj, "spec.selectors", &self.selectors, &mut errs);
        if let Some(n) = &self.extended_resource_name {
            check_name(
                &obj,
                "spec.extendedResourceName",
                n,
                names::validate_extended_resource_name,
                &mut errs,
            );
        }
        crate::model::error::finish(errs)
    }
}

/// Checks a list of selectors under `path` (a class's or a request's): at most 32, each
/// with a non-empty CEL expression of at most 10 KiB. As upstream, the entries of a list
/// over its limit are not checked one by one. (Whether the expression compiles is
/// checked where it is compiled.)
pub(crate) fn validate_selectors(
    obj: &ObjectRef,
    path: &str,
    selectors: &[DeviceSelector],
    errs: &mut Vec<ValidationError>,
) {
    if selectors.len() > MAX_SELECTORS {
        check_max(obj, path, selectors.len(), MAX_SELECTORS, errs);
        return;
    }
    for (i, s) in selectors.iter().enumerate() {
        let field = format!("{path}[{i}].cel.expression");
        if s.cel.trim().is_empty() {
            errs.push(ValidationError::new(obj.clone(), field, Problem::Required));
        } else if s.cel.len() > MAX_CEL_LEN {
            errs.push(ValidationError::new(
                obj.clone(),
                field,
                Problem::TooLong {
                    max: MAX_CEL_LEN,
                    actual: s.cel.len(),
                },
            ));
        }
    }
}
