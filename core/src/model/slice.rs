//! ResourceSlices and resource pools (resource.k8s.io/v1).

use crate::alloc_prelude::*;
use crate::model::device::{NodeAccess, validate_access, validate_counters};
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, check_max, check_name};
use crate::model::names;
use crate::{Device, Quantity};

/// Upstream: devices per slice.
pub const MAX_DEVICES_PER_SLICE: usize = 128;
/// Upstream: devices per slice when any device has taints, consumes counters or uses
/// list-type attributes.
pub const MAX_DEVICES_PER_SLICE_SMALL: usize = 64;
/// Upstream: shared counter sets per slice.
pub const MAX_COUNTER_SETS: usize = 8;

/// `ResourcePool`: the pool a slice belongs to.
///
/// Only slices at the pool's highest `generation` count, and a pool is used only when
/// all `resource_slice_count` slices of that generation are present.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourcePool {
    /// Pool name (often the node name for node-local devices).
    pub name: String,
    /// Generation; bumped in every slice of the pool on any change.
    pub generation: i64,
    /// Number of slices in the pool at this generation.
    pub resource_slice_count: i64,
}

impl ResourcePool {
    /// A pool of one slice at generation 0.
    pub fn single(name: impl Into<String>) -> ResourcePool {
        ResourcePool {
            name: name.into(),
            generation: 0,
            resource_slice_count: 1,
        }
    }
}

/// `CounterSet`: shared counters that partitionable devices consume.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CounterSet {
    /// DNS label, unique in the pool.
    pub name: String,
    /// Counter name → available amount.
    pub counters: BTreeMap<String, Quantity>,
}

/// How a slice says which nodes reach its devices (exactly one of the four upstream
/// fields `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum SliceNodeSelection {
    /// `nodeName`, `nodeSelector` or `allNodes` for the whole slice.
    Slice(NodeAccess),
    /// `perDeviceNodeSelection: true`: each device says it.
    PerDevice,
}

/// A ResourceSlice: some or all of one pool's devices, or its shared counters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ResourceSlice {
    /// `metadata.name`.
    pub name: String,
    /// `spec.driver`.
    pub driver: String,
    /// `spec.pool`.
    pub pool: ResourcePool,
    /// Node access.
    pub node_selection: SliceNodeSelection,
    /// `spec.devices`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub devices: Vec<Device>,
    /// `spec.sharedCounters` (a slice has devices or counters, never both).
    #[cfg_attr(feature = "serde", serde(default))]
    pub shared_counters: Vec<CounterSet>,
}

impl ResourceSlice {
    /// A node-local slice that is the whole pool `pool` (generation 0, one slice).
    pub fn node_local(
        name: impl Into<String>,
        driver: impl Into<String>,
        node: impl Into<String>,
        pool: impl Into<String>,
    ) -> ResourceSlice {
        ResourceSlice {
            name: name.into(),
            driver: driver.into(),
            pool: ResourcePool::single(pool),
            node_selection: SliceNodeSelection::Slice(NodeAccess::NodeName(node.into())),
            devices: Vec::new(),
            shared_counters: Vec::new(),
        }
    }

    /// Adds a device (builder style).
    #[must_use]
    pub fn with_device(mut self, device: Device) -> ResourceSlice {
        self.devices.push(device);
        self
    }

    /// The node name for node-local slices.
    pub fn node_name(&self) -> Option<&str> {
        match &self.node_selection {
            SliceNodeSelection::Slice(NodeAccess::NodeName(n)) => Some(n),
            _ => None,
        }
    }

    /// The object reference used in errors.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::cluster(ObjectKind::ResourceSlice, self.name.clone())
    }

    /// The device limit that applies to this slice (128, or 64 with taints, counters
    /// or list attributes).
    pub fn device_limit(&self) -> usize {
        if self.devices.iter().any(Device::needs_small_slice) {
            MAX_DEVICES_PER_SLICE_SMALL
        } else {
            MAX_DEVICES_PER_SLICE
        }
    }

    /// Checks the slice as the API server would; returns every problem found.
    ///
    /// Problems that only show across slices (the same device name in two slices of
    /// one pool, a counter set that does not exist) are not errors upstream: they make
    /// the pool invalid, which [`Cluster::pool_status`](crate::Cluster::pool_status)
    /// reports.
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
        check_name(
            &obj,
            "spec.driver",
            &self.driver,
            names::validate_driver_name,
            &mut errs,
        );
        check_name(
            &obj,
            "spec.pool.name",
            &self.pool.name,
            names::validate_pool_name,
            &mut errs,
        );
        if self.pool.generation < 0 {
            errs.push(ValidationError::new(
                obj.clone(),
                "spec.pool.generation",
                Problem::Invalid {
                    value: self.pool.generation.to_string(),
                    reason: "must be greater than or equal to 0",
                },
            ));
        }
        if self.pool.resource_slice_count <= 0 {
            errs.push(ValidationError::new(
                obj.clone(),
                "spec.pool.resourceSliceCount",
                Problem::Invalid {
                    value: self.pool.resource_slice_count.to_string(),
                    reason: "must be greater than zero",
                },
            ));
        }
        if let SliceNodeSelection::Slice(access) = &self.node_selection {
            validate_access(&obj, "spec", access, &mut errs);
        }
        if !self.devices.is_empty() && !self.shared_counters.is_empty() {
            errs.push(ValidationError::new(
                obj.clone(),
                "spec",
                Problem::ExactlyOneOf {
                    fields: &["devices", "sharedCounters"],
                    set: 2,
                },
            ));
        }
        check_max(
            &obj,
            "spec.devices",
            self.devices.len(),
            self.device_limit(),
            &mut errs,
        );
        let per_device = self.node_selection == SliceNodeSelection::PerDevice;
        let mut names_seen = BTreeSet::new();
        for (i, d) in self.devices.iter().enumerate() {
            let path = || format!("spec.devices[{i}]");
            d.validate(&obj, path, per_device, &mut errs);
            if !d.name.is_empty() && !names_seen.insert(d.name.as_str()) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    format!("{}.name", path()),
                    Problem::Duplicate {
                        value: d.name.clone(),
                    },
                ));
            }
        }
        check_max(
            &obj,
            "spec.sharedCounters",
            self.shared_counters.len(),
            MAX_COUNTER_SETS,
            &mut errs,
        );
        let mut sets_seen = BTreeSet::new();
        for (i, s) in self.shared_counters.iter().enumerate() {
            let path = format!("spec.sharedCounters[{i}]");
            check_name(
                &obj,
                &format!("{path}.name"),
                &s.name,
                names::validate_dns_label,
                &mut errs,
            );
            if !sets_seen.insert(s.name.as_str()) {
                errs.push(ValidationError::new(
                    obj.clone(),
                    format!("{path}.name"),
                    Problem::Duplicate {
                        value: s.name.clone(),
                    },
                ));
            }
            validate_counters(&obj, &format!("{path}.counters"), &s.counters, &mut errs);
        }
        crate::model::error::finish(errs)
    }
}
