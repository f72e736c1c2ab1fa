//! # gangpack
//!
//! The scheduling core of gangpack: Kubernetes 1.37 device taints and tolerations,
//! DRA ResourceSlices / DeviceClasses / DeviceTaintRules, and a bitset index over
//! every device that answers "which devices can this request use" in a few word-wise
//! passes. `no_std` + `alloc`, no unsafe code; builds for bare-metal targets and
//! WebAssembly.
//!
//! ## The model
//!
//! A [`Cluster`] holds [`Node`]s, [`ResourceSlice`]s (grouped into pools by driver and
//! pool name; only the newest generation of a complete, valid pool is used),
//! [`DeviceClass`]es and [`DeviceTaintRule`]s, plus the holders of allocated devices.
//! Every mutation validates first, as the API server would, and applies second, so a
//! refused mutation changes nothing. Mutations that change taints return a
//! [`TaintReport`]: the `NoExecute` evictions they start or cancel.
//!
//! ```
//! use gangpack::prelude::*;
//!
//! let mut cluster = Cluster::new();
//! cluster.add_node(Node::new("node-a").with_label("rack", "r1"))?;
//! let mut slice = ResourceSlice::node_local("node-a-gpus", "gpu.example.com", "node-a", "node-a");
//! for i in 0..4 {
//!     slice.devices.push(Device::new(format!("gpu-{i}")));
//! }
//! cluster.add_slice(slice)?;
//!
//! // The driver reports an ECC error on gpu-2.
//! let gpu2 = DeviceRef::new("gpu.example.com", "node-a", "gpu-2");
//! cluster.taint_device(&gpu2, "gpu.example.com/ecc=fatal:NoSchedule".parse()?)?;
//!
//! let all = cluster.select(&DeviceFilter::all().driver("gpu.example.com"));
//! assert_eq!(cluster.usable(&all, &[]).len(), 3);
//!
//! // A claim that tolerates the taint may still get it.
//! let tolerate = DeviceToleration {
//!     key: "gpu.example.com/ecc".into(),
//!     operator: DeviceTolerationOperator::Exists,
//!     value: String::new(),
//!     effect: None,
//!     toleration_seconds: None,
//! };
//! assert_eq!(cluster.usable(&all, &[tolerate]).len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## The scheduler
//!
//! A [`Scheduler`] owns a cluster and the workload objects (pods, PodGroups, claims,
//! PriorityClasses) and follows the live cluster: every object kind can be added,
//! changed and removed as a controller's informers report it, each change refused
//! whole or applied whole. [`Scheduler::cycle`] places the pending units (PodGroups
//! all or nothing, preempting lower-priority ones as a unit when that makes room);
//! [`Scheduler::advance`] moves the logical clock and carries out `NoExecute`
//! evictions; [`Scheduler::verdict`], [`Scheduler::explain`] and
//! [`Scheduler::what_it_takes`] say why a unit is pending and what would help. A
//! controller loop:
//!
//! ```
//! use gangpack::prelude::*;
//!
//! let mut cluster = Cluster::new();
//! cluster.put_class(DeviceClass::with_cel("gpu", "device.driver == \"gpu.example.com\""))?;
//! let mut sched = Scheduler::new(cluster, GangOptions::default());
//! sched.advance(Time(1_767_225_600)); // the clock starts at the epoch: set "now"
//!
//! // Events as the informers deliver them: a node joins with its GPUs, a pod asks
//! // for two of them.
//! sched.add_node(Node::new("node-a"))?;
//! let mut gpus = ResourceSlice::node_local("node-a-gpus", "gpu.example.com", "node-a", "node-a");
//! for i in 0..8 {
//!     gpus.devices.push(Device::new(format!("gpu-{i}")));
//! }
//! sched.add_slice(gpus)?;
//! let mut claim = ResourceClaim::new("ml", "train-gpus");
//! claim.spec.requests.push(DeviceRequest::exactly(
//!     "gpus",
//!     ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(2)),
//! ));
//! sched.add_claim(claim)?;
//! let mut pod = Pod::new("ml", "train");
//! pod.resource_claims.push(PodResourceClaim {
//!     name: "gpus".into(),
//!     source: ClaimSource::ClaimName("train-gpus".into()),
//! });
//! sched.add_pod(pod)?;
//!
//! // The loop: a cycle when the input is quiet; its report is the log line.
//! let report = sched.cycle();
//! assert_eq!(report.to_string(), "Pod ml/train: placed: ml/train -> node-a (2 devices)");
//!
//! // The node goes away: its pods are deleted with it, their claims released.
//! let gone = sched.remove_node("node-a")?;
//! assert_eq!(gone.deleted_pods, ["ml/train"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Feature flags
//!
//! - `std` (default): std-only conveniences; today it only forwards `serde?/std`. The
//!   crate is `#![no_std]` with or without it.
//! - `serde`: `Serialize` / `Deserialize` for the model types (serde without its
//!   default features).
//! - `testing`: proptest strategies in [`testing`] for clusters, claims and PodGroups,
//!   building [`testing::Scenario`]s, for property-testing a scheduler against
//!   [`validate_placement`] (needs std; pulls in `proptest`). [`testing::Scenario`]
//!   itself is always there.
//!
//! See `docs/ARCHITECTURE.md` in the repository for the layers, the index layout and
//! the data flow.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(any(feature = "std", feature = "testing", test))]
extern crate std;

mod alloc_prelude;

// The layers, bottom up: each may import only the layers listed before it (`validate`
// only `model`, `cel` and `cluster`), which `core/tests/layering.rs` checks. The map is
// `docs/ARCHITECTURE.md`.

// Kubernetes objects as plain data, with their validation.
mod model;
// DRA CEL selectors: front end and evaluator.
mod cel;
// The cluster state and its bitset device index.
mod cluster;
// One pod's claims on one node.
mod allocate;
// The independent judge of a placement decision.
mod validate;
// All-or-nothing gang placement, scoring, composites, explanations.
mod gang;
// The lifecycle: cycles, preemption, eviction, what-if.
mod scheduler;
// The test kit for schedulers: scenarios, and their generators (feature `testing`).
pub mod testing;

// The public API is flat: every type at the crate root, whatever its layer.

// model: Kubernetes objects and their validation.
pub use model::capacity::{CapacityRejection, consumed_amount, consumed_capacity, fits};
pub use model::claim::{
    AllocationConfigSource, AllocationMode, AllocationResult, ConstraintKind,
    DeviceAllocationConfiguration, DeviceClaimConfiguration, DeviceConstraint, DeviceRequest,
    DeviceRequestAllocationResult, DeviceRequestKind, DeviceSubRequest, ExactDeviceRequest,
    OpaqueDeviceConfiguration, RequestView, ResourceClaim, ResourceClaimSpec, share_id,
    split_request_ref, uuid_v8,
};
pub use model::class::{DeviceClass, DeviceSelector};
pub use model::decision::{ClaimAllocation, PlacementDecision, PodBinding};
pub use model::device::{
    CapacityRequestPolicy, CapacityRequestPolicyRange, Device, DeviceAttribute, DeviceCapacity,
    DeviceCounterConsumption, NodeAccess,
};
pub use model::error::{ObjectKind, ObjectRef, Problem, ValidationError};
pub use model::mix::{ShapeMix, StrandingWeights, TypicalShape};
pub use model::names;
pub use model::node::Node;
pub use model::node_selector::{
    NodeSelector, NodeSelectorOperator, NodeSelectorRequirement, NodeSelectorTerm,
};
pub use model::quantity::{Format, Quantity, QuantityError};
pub use model::semver::{MAX_VERSION_LEN, PreIdentifier, Version, VersionError};
pub use model::slice::{CounterSet, ResourcePool, ResourceSlice, SliceNodeSelection};
pub use model::taint::{DeviceTaint, DeviceTaintEffect, Taint, TaintEffect, TaintSpecError};
pub use model::taint_rule::{DeviceTaintRule, DeviceTaintSelector};
pub use model::template::{
    ResourceClaimTemplate, generated_claim_name, generated_group_claim_name,
    instantiate_group_claims, instantiate_member_claims, instantiate_pod_claims,
};
pub use model::time::Time;
pub use model::toleration::{
    DeviceToleration, DeviceTolerationOperator, EvictionVerdict, Toleration, TolerationOperator,
    count_untolerated_prefer_no_schedule, device_eviction, device_eviction_time,
    device_taint_blocks, first_blocking_device_taint, first_untolerated_taint, node_eviction,
};
pub use model::workload::{
    ClaimSource, CompositePodGroup, CompositeSchedulingPolicy, DEFAULT_SCHEDULER_NAME,
    DisruptionMode, HIGHEST_USER_DEFINABLE_PRIORITY, MAX_POD_GROUP_RESOURCE_CLAIMS,
    MAX_POD_GROUP_TEMPLATES, MAX_TOPOLOGY_CONSTRAINTS, Pod, PodGroup, PodGroupResourceClaim,
    PodGroupTemplate, PodResourceClaim, PreemptionPolicy, PriorityClass, SYSTEM_CRITICAL_PRIORITY,
    SchedulingPolicy, TopologyConstraint, Workload, WorkloadReference, check_group_members,
    check_group_members_gated, resolve_priority,
};

// cel: DRA selectors.
pub use cel::{CelError, CelErrorKind, EvalError, Selector};

// cluster: the state and its device index.
pub use cluster::bits::{DeviceSet, SparseDeviceSet};
pub use cluster::ids::{DeviceId, NodeId, PoolId, SliceId};
pub use cluster::{
    Cluster, ClusterError, DeviceAllocation, DeviceCounts, DeviceFilter, DeviceRef, DeviceView,
    EvictionNotice, IndexMemory, NodeLoad, NodeScore, PoolProblem, PoolStatus, ScoreKernel,
    Shortage, Shortfall, TaintReport,
};

// allocate: one pod's claims on one node.
pub use allocate::{
    AllocationError, AllocationOutcome, AllocatorOptions, DEFAULT_ALLOCATOR_STEP_BUDGET,
    EvaluationFailure, Fit, Funnel, PreparedClaims, RequestShortage, SelectorFailure,
    Unsatisfiable,
};

// validate: the independent judge of a decision.
pub use validate::{Holder, Subject, Violation, validate_gang, validate_placement};

// gang: all-or-nothing placement, scoring, composites, explanations, capacity.
pub use gang::capacity_report::{
    CapacityChange, CapacityDiff, CapacityDomain, CapacityReport, DomainCapacity, RequestShape,
    ShapeCapacity,
};
pub use gang::composite::{CompositeError, CompositeOutcome, CompositeStats};
pub use gang::explain::{
    BudgetExhaustion, Explanation, Fact, FilterStage, GangStatus, NodeRow, NodeTable, Resolution,
    ShapeReport, natural_cmp,
};
pub use gang::options::{
    DEFAULT_STEP_BUDGET, GangError, GangOptions, GangOutcome, SearchStats, StepBudget,
};
pub use gang::scoring::{
    DomainLevel, FgdParams, GangAwareParams, MixEntry, MixSource, ScoringPolicy, StrandingParams,
    WorkloadMix,
};

// scheduler: the lifecycle.
pub use scheduler::{
    BrokenGroup, CycleReport, DomainGap, DryRunReport, EvictionReason, EvictionRelief,
    EvictionReport, Help, NodeRemoval, PodEviction, PodRow, Preemption, Scheduler, SchedulerError,
    ShapeGap, Unit, UnitOutcome, UnitResult, UnitRow, Verdict, Victim, WhatItTakes,
    preemption_message,
};

/// Upstream validation limits, enforced by the model's `validate` methods.
pub mod limits {
    pub use crate::model::claim::{
        MAX_ALLOCATION_CONFIGS, MAX_ALLOCATION_RESULTS, MAX_CONFIGS, MAX_CONSTRAINTS,
        MAX_OPAQUE_PARAMETERS_LEN, MAX_REQUESTS, MAX_SUBREQUESTS, MAX_TOLERATIONS,
    };
    pub use crate::model::class::{MAX_CEL_LEN, MAX_SELECTORS};
    pub use crate::model::device::{
        MAX_ATTRIBUTE_STRING_LEN, MAX_ATTRIBUTE_VALUES, MAX_ATTRIBUTES_AND_CAPACITIES,
        MAX_BINDING_CONDITIONS, MAX_COUNTER_CONSUMPTIONS, MAX_COUNTERS, MAX_DEVICE_TAINTS,
        MAX_VALID_VALUES,
    };
    pub use crate::model::slice::{
        MAX_COUNTER_SETS, MAX_DEVICES_PER_SLICE, MAX_DEVICES_PER_SLICE_SMALL,
    };
}

/// The types most programs need, for `use gangpack::prelude::*`.
pub mod prelude {
    pub use crate::{
        AllocationMode, AllocationOutcome, AllocatorOptions, ConstraintKind, DeviceConstraint,
        DeviceRequest, ExactDeviceRequest, ResourceClaim, Unsatisfiable,
    };
    pub use crate::{
        ClaimSource, CompositePodGroup, Explanation, Fact, GangOptions, GangOutcome, GangStatus,
        PlacementDecision, Pod, PodGroup, PodResourceClaim, SchedulingPolicy, ScoringPolicy,
        TopologyConstraint, WorkloadMix, validate_placement,
    };
    pub use crate::{
        Cluster, ClusterError, Device, DeviceAllocation, DeviceAttribute, DeviceClass,
        DeviceFilter, DeviceRef, DeviceSet, DeviceTaint, DeviceTaintEffect, DeviceTaintRule,
        DeviceTaintSelector, DeviceToleration, DeviceTolerationOperator, Node, Quantity,
        ResourceSlice, Taint, TaintEffect, Time, Toleration, TolerationOperator,
    };
    pub use crate::{
        CycleReport, EvictionReport, Help, NodeRemoval, PodEviction, PriorityClass, Scheduler,
        SchedulerError, Unit, UnitResult, Verdict, WhatItTakes,
    };
}

/// Runs the README's Rust examples as doctests (its other blocks are tagged `sh`, `go`, `text`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// Runs the guide's Rust examples (`docs/GUIDE.md`) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/GUIDE.md")]
struct GuideDoctests;

/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
