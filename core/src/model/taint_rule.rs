//! DeviceTaintRules (resource.k8s.io/v1, stable in 1.37).

use crate::DeviceTaint;
use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, ValidationError, check_name};
use crate::model::names;

/// `DeviceTaintSelector`: which devices a rule taints. Every criterion that is set must
/// match; an empty selector (`{}`) matches **every** device in the cluster.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct DeviceTaintSelector {
    /// Only devices of this driver.
    pub driver: Option<String>,
    /// Only devices in a pool of this name (of any driver, unless `driver` is set).
    pub pool: Option<String>,
    /// Only devices of this name.
    pub device: Option<String>,
}

impl DeviceTaintSelector {
    /// Whether the selector matches a device.
    pub fn matches(&self, driver: &str, pool: &str, device: &str) -> bool {
        self.driver.as_deref().is_none_or(|d| d == driver)
            && self.pool.as_deref().is_none_or(|p| p == pool)
            && self.device.as_deref().is_none_or(|n| n == device)
    }
}

/// A DeviceTaintRule: adds one taint to every selected device, on top of the taints
/// the driver publishes in the slice.
///
/// A rule **without** a selector selects nothing (upstream documents this, and the
/// scheduler-side tracker was fixed to agree in kubernetes/kubernetes#141648); a rule
/// with an empty selector selects every device.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceTaintRule {
    /// `metadata.name`.
    pub name: String,
    /// `spec.deviceSelector`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub selector: Option<DeviceTaintSelector>,
    /// `spec.taint`.
    pub taint: DeviceTaint,
}

impl DeviceTaintRule {
    /// Whether the rule taints a device.
    pub fn selects(&self, driver: &str, pool: &str, device: &str) -> bool {
        self.selector
            .as_ref()
            .is_some_and(|s| s.matches(driver, pool, device))
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::cluster(ObjectKind::DeviceTaintRule, self.name.clone())
    }

    /// Checks the rule as the API server would.
    ///
    /// An unknown taint effect is accepted, as in a stored object: consumers treat it
    /// like `None` (upstream only rejects unknown effects when the effect changes).
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
        if let Some(s) = &self.selector {
            if let Some(d) = &s.driver {
                check_name(
                    &obj,
                    "spec.deviceSelector.driver",
                    d,
                    names::validate_driver_name,
                    &mut errs,
                );
            }
            if let Some(p) = &s.pool {
                check_name(
                    &obj,
                    "spec.deviceSelector.pool",
                    p,
                    names::validate_pool_name,
                    &mut errs,
                );
            }
            if let Some(d) = &s.device {
                check_name(
                    &obj,
                    "spec.deviceSelector.device",
                    d,
                    names::validate_dns_label,
                    &mut errs,
                );
            }
        }
        self.taint.validate_stored(&obj, "spec.taint", &mut errs);
        crate::model::error::finish(errs)
    }
}
