//! gangpack core.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod alloc_prelude;
mod bits;
mod class;
mod cluster;
mod device;
mod error;
mod ids;
mod intern;
pub mod names;
mod node;
mod node_selector;
mod quantity;
mod semver;
mod slice;
mod taint;
mod taint_rule;
mod time;
mod toleration;

pub use bits::{DeviceSet, SparseDeviceSet};
pub use class::{DeviceClass, DeviceSelector};
pub use cluster::{
    Cluster, ClusterError, DeviceAllocation, DeviceCounts, DeviceFilter, DeviceRef, DeviceView,
    EvictionNotice, IndexMemory, PoolProblem, PoolStatus, TaintReport,
};
pub use device::{
    CapacityRequestPolicy, CapacityRequestPolicyRange, Device, DeviceAttribute, DeviceCapacity,
    DeviceCounterConsumption, NodeAccess,
};
pub use error::{ObjectKind, ObjectRef, Problem, ValidationError};
pub use ids::{DeviceId, NodeId, PoolId, SliceId};
pub use node::Node;
pub use slice::{CounterSet, ResourcePool, ResourceSlice, SliceNodeSelection};
pub use taint_rule::{DeviceTaintRule, DeviceTaintSelector};

pub use quantity::{Format, Quantity, QuantityError};
pub use semver::{MAX_VERSION_LEN, PreIdentifier, Version, VersionError};

pub use node_selector::{
    NodeSelector, NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm,
};

pub use time::Time;

pub use taint::{DeviceTaint, DeviceTaintEffect, Taint, TaintEffect, TaintSpecError};
pub use toleration::{
    DeviceToleration, DeviceTolerationOperator, EvictionVerdict, Toleration, TolerationOperator,
    count_untolerated_prefer_no_schedule, device_eviction, device_eviction_time,
    device_taint_blocks, first_blocking_device_taint, first_untolerated_taint, node_eviction,
};

/// Upstream validation limits, enforced by the model's `validate` methods.
pub mod limits {
    pub use crate::class::{MAX_CEL_LEN, MAX_SELECTORS};
    pub use crate::device::{
        MAX_ATTRIBUTE_STRING_LEN, MAX_ATTRIBUTE_VALUES, MAX_ATTRIBUTES_AND_CAPACITIES,
        MAX_BINDING_CONDITIONS, MAX_COUNTER_CONSUMPTIONS, MAX_COUNTERS, MAX_DEVICE_TAINTS,
        MAX_VALID_VALUES,
    };
    pub use crate::slice::{MAX_COUNTER_SETS, MAX_DEVICES_PER_SLICE, MAX_DEVICES_PER_SLICE_SMALL};
}

/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
