//! The findings: [`Violation`], one closed enum of every broken invariant the validator
//! reports, with its wording, and [`Holder`], where a claim is referenced or allocated.

use core::fmt;

use crate::alloc_prelude::*;
use crate::cluster::DeviceRef;
use crate::model::claim::MAX_ALLOCATION_RESULTS;
use crate::{DeviceTaint, Quantity, Taint};

/// Where a claim is referenced or allocated: a pod's binding or the group's claims.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum Holder {
    /// A pod, `namespace/name`.
    Pod(String),
    /// The PodGroup, `namespace/name` (empty when the decision has no group).
    Group(String),
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Holder::Pod(p) => write!(f, "pod {p}"),
            Holder::Group(g) if g.is_empty() => f.write_str("the group claims (no group given)"),
            Holder::Group(g) => write!(f, "pod group {g}"),
        }
    }
}

/// One broken invariant of a [`PlacementDecision`](crate::PlacementDecision). Pods,
/// claims and groups are named `namespace/name`; a request is `request` or
/// `request/subrequest`.
///
/// Closed: these are all the findings [`validate_placement`](super::validate_placement)
/// reports.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "camelCase", rename_all_fields = "camelCase")
)]
pub enum Violation {
    // ----- gang -----
    /// A binding names a pod that is not among the pods given.
    UnknownPod {
        /// The pod named.
        pod: String,
    },
    /// The decision binds the same pod more than once (later bindings are ignored).
    PodBoundTwice {
        /// The pod.
        pod: String,
    },
    /// A bound pod is not a member of the group (`spec.schedulingGroup.podGroupName`
    /// in the group's namespace).
    NotInGroup {
        /// The pod.
        pod: String,
        /// The group.
        group: String,
    },
    /// A pod already bound (`spec.nodeName`) is bound to another node.
    AlreadyBound {
        /// The pod.
        pod: String,
        /// The node it is bound to.
        bound_to: String,
        /// The node the decision names.
        node: String,
    },
    /// A gang would run with fewer than `minCount` members: some pods are bound but,
    /// with the members already running, fewer than `min_count`.
    BelowMinCount {
        /// The group.
        group: String,
        /// Members bound after the decision (already running ones included).
        bound: usize,
        /// `minCount`.
        min_count: u32,
    },

    // ----- nodes -----
    /// The node does not exist.
    UnknownNode {
        /// The pod.
        pod: String,
        /// The node.
        node: String,
    },
    /// The node is cordoned (`spec.unschedulable`).
    NodeUnschedulable {
        /// The pod.
        pod: String,
        /// The node.
        node: String,
    },
    /// The node does not match the pod's `nodeSelector` or required node affinity.
    NodeAffinityMismatch {
        /// The pod.
        pod: String,
        /// The node.
        node: String,
    },
    /// The node has a `NoSchedule` / `NoExecute` taint the pod does not tolerate.
    NodeTaintNotTolerated {
        /// The pod.
        pod: String,
        /// The node.
        node: String,
        /// The taint.
        taint: Taint,
    },
    /// The pods bound to a node ask for more of a scalar resource than it has free.
    NodeResourcesExceeded {
        /// The node.
        node: String,
        /// The resource (`cpu`, `memory`, `pods`, ...).
        resource: String,
        /// What the decision's pods on the node ask for together.
        requested: Quantity,
        /// What the node has free before the decision.
        available: Quantity,
    },

    // ----- topology -----
    /// The group has a topology constraint and a pod's node lacks the label.
    TopologyLabelMissing {
        /// The pod.
        pod: String,
        /// The node.
        node: String,
        /// The label key.
        key: String,
    },
    /// The group's pods (already running members included) span several domains.
    TopologySplit {
        /// The label key.
        key: String,
        /// The values seen, sorted.
        values: Vec<String>,
    },

    // ----- claims -----
    /// A pod or the group references (by `resourceClaimName`) a claim that is not among
    /// the claims given.
    ClaimNotProvided {
        /// Who references it.
        referrer: Holder,
        /// The claim.
        claim: String,
    },
    /// An allocation names a claim that is not among the claims given.
    UnknownClaim {
        /// The claim.
        claim: String,
    },
    /// A referenced claim is neither allocated in the cluster nor in the decision.
    MissingAllocation {
        /// The claim.
        claim: String,
    },
    /// The decision allocates a claim more than once (only the first is checked).
    DuplicateAllocation {
        /// The claim.
        claim: String,
        /// How many allocations it has.
        count: usize,
    },
    /// The decision allocates a claim that is already allocated in the cluster.
    AlreadyAllocated {
        /// The claim.
        claim: String,
    },
    /// An allocation for a claim nobody in the decision references.
    UnexpectedAllocation {
        /// The claim.
        claim: String,
        /// Where it was found.
        holder: Holder,
    },
    /// An allocation in the wrong place: a group claim in a pod's binding, or a pod's
    /// claim in the group claims or in the binding of a pod that does not use it.
    MisplacedAllocation {
        /// The claim.
        claim: String,
        /// Where it was found.
        holder: Holder,
    },
    /// The allocation's `nodeSelector` does not match the node of a pod using the claim.
    AllocationNotForNode {
        /// The claim.
        claim: String,
        /// The node.
        node: String,
    },
    /// More devices than the per-claim limit (32).
    TooManyDevices {
        /// The claim.
        claim: String,
        /// The number of results.
        count: usize,
    },
    /// A result names a request that does not exist (or the bare name of a
    /// `firstAvailable` request, or `request/subrequest` of an `exactly` request).
    UnknownRequest {
        /// The claim.
        claim: String,
        /// The request reference.
        request: String,
    },
    /// A request of the claim has no result.
    RequestNotAllocated {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
    },
    /// Results use several subrequests of one `firstAvailable` request.
    ConflictingSubrequests {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The subrequests used.
        subrequests: Vec<String>,
    },
    /// An `ExactCount` (sub)request has the wrong number of results.
    WrongDeviceCount {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// `count`.
        expected: u32,
        /// Results for it.
        actual: usize,
    },
    /// An `All` (sub)request lacks a device that matches it on the node.
    AllModeDeviceMissing {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device left out.
        device: DeviceRef,
    },
    /// An `All` (sub)request on a node that reaches an incomplete or invalid pool
    /// (upstream refuses to allocate it).
    AllModeIncompletePool {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// `driver/pool`.
        pool: String,
    },
    /// A result names a device that is not published.
    UnknownDevice {
        /// The claim.
        claim: String,
        /// The device.
        device: DeviceRef,
    },
    /// The device's pool is incomplete or invalid, or the device is of an old
    /// generation.
    DeviceNotUsable {
        /// The claim.
        claim: String,
        /// The device.
        device: DeviceRef,
    },
    /// The device cannot be reached from the node of a pod using the claim.
    DeviceUnreachable {
        /// The claim.
        claim: String,
        /// The device.
        device: DeviceRef,
        /// The node.
        node: String,
    },
    /// The request's DeviceClass does not exist.
    ClassNotFound {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The class.
        class: String,
    },
    /// A class or request selector does not compile.
    SelectorInvalid {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The compiler's message.
        message: String,
    },
    /// A class or request selector failed on a device (upstream aborts the allocation).
    SelectorFailed {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device.
        device: DeviceRef,
        /// The evaluation error.
        message: String,
    },
    /// The device does not satisfy the class's selectors.
    ClassSelectorMismatch {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device.
        device: DeviceRef,
        /// The class.
        class: String,
    },
    /// The device does not satisfy the request's own selectors.
    RequestSelectorMismatch {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device.
        device: DeviceRef,
    },
    /// The device carries a `NoSchedule` / `NoExecute` taint the request does not
    /// tolerate.
    DeviceTaintNotTolerated {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device.
        device: DeviceRef,
        /// The taint.
        taint: DeviceTaint,
    },
    /// Pods of the decision use a claim that is allocated already and holds a device
    /// with a `NoExecute` taint its allocation does not tolerate: new pods may not
    /// reserve such a claim. For a PodGroup claim, only bound members that name it use
    /// it; binding other members does not.
    ReservesTaintedClaim {
        /// The claim.
        claim: String,
        /// The device.
        device: DeviceRef,
        /// The taint.
        taint: DeviceTaint,
    },
    /// The result's tolerations are not the request's.
    TolerationsMismatch {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device.
        device: DeviceRef,
    },
    /// The result's `adminAccess` differs from the request's.
    AdminAccessMismatch {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device.
        device: DeviceRef,
        /// Whether the request asks for admin access.
        requested: bool,
    },
    /// The device cannot serve the request's `capacity.requests` (a capacity is
    /// missing, too small, or outside the device's request policy).
    CapacityRequestNotMet {
        /// The claim.
        claim: String,
        /// The request.
        request: String,
        /// The device.
        device: DeviceRef,
        /// The capacity.
        capacity: String,
    },

    // ----- exclusivity and capacity -----
    /// An exclusive device is allocated twice in the decision (or an admin result
    /// repeats a device within one claim).
    DeviceAllocatedTwice {
        /// The device.
        device: DeviceRef,
        /// The claim of the first allocation.
        first: String,
        /// The claim of the second.
        second: String,
    },
    /// An exclusive device is already allocated (not for admin access) in the cluster.
    DeviceInUse {
        /// The claim of the decision.
        claim: String,
        /// The device.
        device: DeviceRef,
        /// The claim holding it.
        holder: String,
    },
    /// A share of a device with `allowMultipleAllocations` has no share id.
    MissingShareId {
        /// The claim.
        claim: String,
        /// The device.
        device: DeviceRef,
    },
    /// Two shares of one device have the same share id.
    DuplicateShareId {
        /// The device.
        device: DeviceRef,
        /// The share id.
        share_id: String,
    },
    /// A result for an exclusive device carries a share id or consumed capacity.
    UnexpectedShare {
        /// The claim.
        claim: String,
        /// The device.
        device: DeviceRef,
    },
    /// A share's `consumedCapacity` does not list what its request consumes (every
    /// capacity of the device, at the amount its request policy gives).
    ConsumedCapacityMismatch {
        /// The claim.
        claim: String,
        /// The device.
        device: DeviceRef,
        /// The capacity.
        capacity: String,
        /// What the request consumes (`None`: the device has no such capacity).
        expected: Option<Quantity>,
        /// What the result says (`None`: not listed).
        actual: Option<Quantity>,
    },
    /// The shares of a device consume more of a capacity than it has.
    CapacityExceeded {
        /// The device.
        device: DeviceRef,
        /// The capacity.
        capacity: String,
        /// Consumed by committed shares.
        committed: Quantity,
        /// Consumed by the decision's shares.
        requested: Quantity,
        /// The capacity's value.
        value: Quantity,
    },
    /// The devices the decision newly allocates consume more of a pool's shared counter
    /// than is left (with upstream's rule that every counter of the pool must stay
    /// non-negative).
    CountersExceeded {
        /// The driver.
        driver: String,
        /// The pool.
        pool: String,
        /// The counter set.
        counter_set: String,
        /// The counter.
        counter: String,
        /// What the decision consumes.
        needed: Quantity,
        /// What is left before the decision.
        available: Quantity,
    },

    // ----- constraints -----
    /// A device in a constraint's scope lacks the attribute.
    ConstraintAttributeMissing {
        /// The claim.
        claim: String,
        /// The attribute.
        attribute: String,
        /// The device.
        device: DeviceRef,
    },
    /// The devices in a `matchAttribute` scope have no common value.
    MatchAttributeViolated {
        /// The claim.
        claim: String,
        /// The attribute.
        attribute: String,
        /// The devices in scope.
        devices: Vec<DeviceRef>,
    },
    /// Two devices in a `distinctAttribute` scope share a value.
    DistinctAttributeViolated {
        /// The claim.
        claim: String,
        /// The attribute.
        attribute: String,
        /// One device.
        first: DeviceRef,
        /// The other.
        second: DeviceRef,
    },
}

/// An object a [`Violation`] involves, for reports that list them
/// ([`Violation::subjects`]). Namespaced objects are `namespace/name`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum Subject {
    /// A pod.
    Pod(String),
    /// A PodGroup (empty when the decision has no group).
    PodGroup(String),
    /// A node.
    Node(String),
    /// A ResourceClaim.
    ResourceClaim(String),
    /// A DeviceClass.
    DeviceClass(String),
    /// A device.
    Device(DeviceRef),
    /// A pool, `driver/pool`.
    Pool(String),
}

impl Subject {
    /// The kind as a report prints it: `Pod`, `PodGroup`, `Node`, `ResourceClaim`,
    /// `DeviceClass`, `Device` or `Pool`.
    pub fn kind(&self) -> &'static str {
        match self {
            Subject::Pod(_) => "Pod",
            Subject::PodGroup(_) => "PodGroup",
            Subject::Node(_) => "Node",
            Subject::ResourceClaim(_) => "ResourceClaim",
            Subject::DeviceClass(_) => "DeviceClass",
            Subject::Device(_) => "Device",
            Subject::Pool(_) => "Pool",
        }
    }

    /// The name: `namespace/name`, a node's or class's name, `driver/pool/device` or
    /// `driver/pool`.
    pub fn name(&self) -> String {
        match self {
            Subject::Pod(n)
            | Subject::PodGroup(n)
            | Subject::Node(n)
            | Subject::ResourceClaim(n)
            | Subject::DeviceClass(n)
            | Subject::Pool(n) => n.clone(),
            Subject::Device(d) => d.to_string(),
        }
    }
}

impl fmt::Display for Subject {
    /// `Kind name`, e.g. `Pod ml/worker-0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind(), self.name())
    }
}

impl Holder {
    fn subject(&self) -> Subject {
        match self {
            Holder::Pod(p) => Subject::Pod(p.clone()),
            Holder::Group(g) => Subject::PodGroup(g.clone()),
        }
    }
}

impl Violation {
    /// The stable name of the rule broken: the variant's name in kebab case
    /// (`DeviceAllocatedTwice` is `device-allocated-twice`). Reports and tools match
    /// on it; it never changes for a variant.
    ///
    /// | rule | variant |
    /// | --- | --- |
    /// | `unknown-pod` | [`Violation::UnknownPod`] |
    /// | `pod-bound-twice` | [`Violation::PodBoundTwice`] |
    /// | `not-in-group` | [`Violation::NotInGroup`] |
    /// | `already-bound` | [`Violation::AlreadyBound`] |
    /// | `below-min-count` | [`Violation::BelowMinCount`] |
    /// | `unknown-node` | [`Violation::UnknownNode`] |
    /// | `node-unschedulable` | [`Violation::NodeUnschedulable`] |
    /// | `node-affinity-mismatch` | [`Violation::NodeAffinityMismatch`] |
    /// | `node-taint-not-tolerated` | [`Violation::NodeTaintNotTolerated`] |
    /// | `node-resources-exceeded` | [`Violation::NodeResourcesExceeded`] |
    /// | `topology-label-missing` | [`Violation::TopologyLabelMissing`] |
    /// | `topology-split` | [`Violation::TopologySplit`] |
    /// | `claim-not-provided` | [`Violation::ClaimNotProvided`] |
    /// | `unknown-claim` | [`Violation::UnknownClaim`] |
    /// | `missing-allocation` | [`Violation::MissingAllocation`] |
    /// | `duplicate-allocation` | [`Violation::DuplicateAllocation`] |
    /// | `already-allocated` | [`Violation::AlreadyAllocated`] |
    /// | `unexpected-allocation` | [`Violation::UnexpectedAllocation`] |
    /// | `misplaced-allocation` | [`Violation::MisplacedAllocation`] |
    /// | `allocation-not-for-node` | [`Violation::AllocationNotForNode`] |
    /// | `too-many-devices` | [`Violation::TooManyDevices`] |
    /// | `unknown-request` | [`Violation::UnknownRequest`] |
    /// | `request-not-allocated` | [`Violation::RequestNotAllocated`] |
    /// | `conflicting-subrequests` | [`Violation::ConflictingSubrequests`] |
    /// | `wrong-device-count` | [`Violation::WrongDeviceCount`] |
    /// | `all-mode-device-missing` | [`Violation::AllModeDeviceMissing`] |
    /// | `all-mode-incomplete-pool` | [`Violation::AllModeIncompletePool`] |
    /// | `unknown-device` | [`Violation::UnknownDevice`] |
    /// | `device-not-usable` | [`Violation::DeviceNotUsable`] |
    /// | `device-unreachable` | [`Violation::DeviceUnreachable`] |
    /// | `class-not-found` | [`Violation::ClassNotFound`] |
    /// | `selector-invalid` | [`Violation::SelectorInvalid`] |
    /// | `selector-failed` | [`Violation::SelectorFailed`] |
    /// | `class-selector-mismatch` | [`Violation::ClassSelectorMismatch`] |
    /// | `request-selector-mismatch` | [`Violation::RequestSelectorMismatch`] |
    /// | `device-taint-not-tolerated` | [`Violation::DeviceTaintNotTolerated`] |
    /// | `reserves-tainted-claim` | [`Violation::ReservesTaintedClaim`] |
    /// | `tolerations-mismatch` | [`Violation::TolerationsMismatch`] |
    /// | `admin-access-mismatch` | [`Violation::AdminAccessMismatch`] |
    /// | `capacity-request-not-met` | [`Violation::CapacityRequestNotMet`] |
    /// | `device-allocated-twice` | [`Violation::DeviceAllocatedTwice`] |
    /// | `device-in-use` | [`Violation::DeviceInUse`] |
    /// | `missing-share-id` | [`Violation::MissingShareId`] |
    /// | `duplicate-share-id` | [`Violation::DuplicateShareId`] |
    /// | `unexpected-share` | [`Violation::UnexpectedShare`] |
    /// | `consumed-capacity-mismatch` | [`Violation::ConsumedCapacityMismatch`] |
    /// | `capacity-exceeded` | [`Violation::CapacityExceeded`] |
    /// | `counters-exceeded` | [`Violation::CountersExceeded`] |
    /// | `constraint-attribute-missing` | [`Violation::ConstraintAttributeMissing`] |
    /// | `match-attribute-violated` | [`Violation::MatchAttributeViolated`] |
    /// | `distinct-attribute-violated` | [`Violation::DistinctAttributeViolated`] |
    pub fn rule(&self) -> &'static str {
        use Violation as V;
        match self {
            V::UnknownPod { .. } => "unknown-pod",
            V::PodBoundTwice { .. } => "pod-bound-twice",
            V::NotInGroup { .. } => "not-in-group",
            V::AlreadyBound { .. } => "already-bound",
            V::BelowMinCount { .. } => "below-min-count",
            V::UnknownNode { .. } => "unknown-node",
            V::NodeUnschedulable { .. } => "node-unschedulable",
            V::NodeAffinityMismatch { .. } => "node-affinity-mismatch",
            V::NodeTaintNotTolerated { .. } => "node-taint-not-tolerated",
            V::NodeResourcesExceeded { .. } => "node-resources-exceeded",
            V::TopologyLabelMissing { .. } => "topology-label-missing",
            V::TopologySplit { .. } => "topology-split",
            V::ClaimNotProvided { .. } => "claim-not-provided",
            V::UnknownClaim { .. } => "unknown-claim",
            V::MissingAllocation { .. } => "missing-allocation",
            V::DuplicateAllocation { .. } => "duplicate-allocation",
            V::AlreadyAllocated { .. } => "already-allocated",
            V::UnexpectedAllocation { .. } => "unexpected-allocation",
            V::MisplacedAllocation { .. } => "misplaced-allocation",
            V::AllocationNotForNode { .. } => "allocation-not-for-node",
            V::TooManyDevices { .. } => "too-many-devices",
            V::UnknownRequest { .. } => "unknown-request",
            V::RequestNotAllocated { .. } => "request-not-allocated",
            V::ConflictingSubrequests { .. } => "conflicting-subrequests",
            V::WrongDeviceCount { .. } => "wrong-device-count",
            V::AllModeDeviceMissing { .. } => "all-mode-device-missing",
            V::AllModeIncompletePool { .. } => "all-mode-incomplete-pool",
            V::UnknownDevice { .. } => "unknown-device",
            V::DeviceNotUsable { .. } => "device-not-usable",
            V::DeviceUnreachable { .. } => "device-unreachable",
            V::ClassNotFound { .. } => "class-not-found",
            V::SelectorInvalid { .. } => "selector-invalid",
            V::SelectorFailed { .. } => "selector-failed",
            V::ClassSelectorMismatch { .. } => "class-selector-mismatch",
            V::RequestSelectorMismatch { .. } => "request-selector-mismatch",
            V::DeviceTaintNotTolerated { .. } => "device-taint-not-tolerated",
            V::ReservesTaintedClaim { .. } => "reserves-tainted-claim",
            V::TolerationsMismatch { .. } => "tolerations-mismatch",
            V::AdminAccessMismatch { .. } => "admin-access-mismatch",
            V::CapacityRequestNotMet { .. } => "capacity-request-not-met",
            V::DeviceAllocatedTwice { .. } => "device-allocated-twice",
            V::DeviceInUse { .. } => "device-in-use",
            V::MissingShareId { .. } => "missing-share-id",
            V::DuplicateShareId { .. } => "duplicate-share-id",
            V::UnexpectedShare { .. } => "unexpected-share",
            V::ConsumedCapacityMismatch { .. } => "consumed-capacity-mismatch",
            V::CapacityExceeded { .. } => "capacity-exceeded",
            V::CountersExceeded { .. } => "counters-exceeded",
            V::ConstraintAttributeMissing { .. } => "constraint-attribute-missing",
            V::MatchAttributeViolated { .. } => "match-attribute-violated",
            V::DistinctAttributeViolated { .. } => "distinct-attribute-violated",
        }
    }

    /// Every rule name [`rule`](Self::rule) returns, in the order of the variants.
    pub const RULES: &'static [&'static str] = &[
        "unknown-pod",
        "pod-bound-twice",
        "not-in-group",
        "already-bound",
        "below-min-count",
        "unknown-node",
        "node-unschedulable",
        "node-affinity-mismatch",
        "node-taint-not-tolerated",
        "node-resources-exceeded",
        "topology-label-missing",
        "topology-split",
        "claim-not-provided",
        "unknown-claim",
        "missing-allocation",
        "duplicate-allocation",
        "already-allocated",
        "unexpected-allocation",
        "misplaced-allocation",
        "allocation-not-for-node",
        "too-many-devices",
        "unknown-request",
        "request-not-allocated",
        "conflicting-subrequests",
        "wrong-device-count",
        "all-mode-device-missing",
        "all-mode-incomplete-pool",
        "unknown-device",
        "device-not-usable",
        "device-unreachable",
        "class-not-found",
        "selector-invalid",
        "selector-failed",
        "class-selector-mismatch",
        "request-selector-mismatch",
        "device-taint-not-tolerated",
        "reserves-tainted-claim",
        "tolerations-mismatch",
        "admin-access-mismatch",
        "capacity-request-not-met",
        "device-allocated-twice",
        "device-in-use",
        "missing-share-id",
        "duplicate-share-id",
        "unexpected-share",
        "consumed-capacity-mismatch",
        "capacity-exceeded",
        "counters-exceeded",
        "constraint-attribute-missing",
        "match-attribute-violated",
        "distinct-attribute-violated",
    ];

    /// The objects the finding involves, most specific first (the pod or claim, then
    /// the node, device or pool), without repeats.
    pub fn subjects(&self) -> Vec<Subject> {
        use Subject as S;
        use Violation as V;
        let pod = |p: &String| S::Pod(p.clone());
        let node = |n: &String| S::Node(n.clone());
        let claim = |c: &String| S::ResourceClaim(c.clone());
        let dev = |d: &DeviceRef| S::Device(d.clone());
        let mut out = match self {
            V::UnknownPod { pod: p } | V::PodBoundTwice { pod: p } => vec![pod(p)],
            V::NotInGroup { pod: p, group } => vec![pod(p), S::PodGroup(group.clone())],
            V::AlreadyBound {
                pod: p,
                bound_to,
                node: n,
            } => vec![pod(p), node(bound_to), node(n)],
            V::BelowMinCount { group, .. } => vec![S::PodGroup(group.clone())],
            V::UnknownNode { pod: p, node: n }
            | V::NodeUnschedulable { pod: p, node: n }
            | V::NodeAffinityMismatch { pod: p, node: n }
            | V::NodeTaintNotTolerated {
                pod: p, node: n, ..
            }
            | V::TopologyLabelMissing {
                pod: p, node: n, ..
            } => vec![pod(p), node(n)],
            V::NodeResourcesExceeded { node: n, .. } => vec![node(n)],
            V::TopologySplit { .. } => vec![],
            V::ClaimNotProvided { referrer, claim: c } => vec![claim(c), referrer.subject()],
            V::UnexpectedAllocation { claim: c, holder }
            | V::MisplacedAllocation { claim: c, holder } => vec![claim(c), holder.subject()],
            V::UnknownClaim { claim: c }
            | V::MissingAllocation { claim: c }
            | V::DuplicateAllocation { claim: c, .. }
            | V::AlreadyAllocated { claim: c }
            | V::TooManyDevices { claim: c, .. }
            | V::UnknownRequest { claim: c, .. }
            | V::RequestNotAllocated { claim: c, .. }
            | V::ConflictingSubrequests { claim: c, .. }
            | V::WrongDeviceCount { claim: c, .. }
            | V::SelectorInvalid { claim: c, .. } => vec![claim(c)],
            V::AllocationNotForNode { claim: c, node: n } => vec![claim(c), node(n)],
            V::AllModeIncompletePool { claim: c, pool, .. } => {
                vec![claim(c), S::Pool(pool.clone())]
            }
            V::ClassNotFound {
                claim: c, class, ..
            } => {
                vec![claim(c), S::DeviceClass(class.clone())]
            }
            V::ClassSelectorMismatch {
                claim: c,
                device,
                class,
                ..
            } => vec![claim(c), dev(device), S::DeviceClass(class.clone())],
            V::DeviceUnreachable {
                claim: c,
                device,
                node: n,
            } => vec![claim(c), dev(device), node(n)],
            V::AllModeDeviceMissing {
                claim: c, device, ..
            }
            | V::UnknownDevice { claim: c, device }
            | V::DeviceNotUsable { claim: c, device }
            | V::SelectorFailed {
                claim: c, device, ..
            }
            | V::RequestSelectorMismatch {
                claim: c, device, ..
            }
            | V::DeviceTaintNotTolerated {
                claim: c, device, ..
            }
            | V::ReservesTaintedClaim {
                claim: c, device, ..
            }
            | V::TolerationsMismatch {
                claim: c, device, ..
            }
            | V::AdminAccessMismatch {
                claim: c, device, ..
            }
            | V::CapacityRequestNotMet {
                claim: c, device, ..
            }
            | V::MissingShareId { claim: c, device }
            | V::UnexpectedShare { claim: c, device }
            | V::ConsumedCapacityMismatch {
                claim: c, device, ..
            }
            | V::ConstraintAttributeMissing {
                claim: c, device, ..
            } => vec![claim(c), dev(device)],
            V::DeviceAllocatedTwice {
                device,
                first,
                second,
            } => vec![claim(first), claim(second), dev(device)],
            V::DeviceInUse {
                claim: c,
                device,
                holder,
            } => vec![claim(c), claim(holder), dev(device)],
            V::DuplicateShareId { device, .. } | V::CapacityExceeded { device, .. } => {
                vec![dev(device)]
            }
            V::CountersExceeded { driver, pool, .. } => vec![S::Pool(format!("{driver}/{pool}"))],
            V::MatchAttributeViolated {
                claim: c, devices, ..
            } => {
                let mut v = vec![claim(c)];
                v.extend(devices.iter().map(dev));
                v
            }
            V::DistinctAttributeViolated {
                claim: c,
                first,
                second,
                ..
            } => vec![claim(c), dev(first), dev(second)],
        };
        let mut seen = BTreeSet::new();
        out.retain(|s| seen.insert(s.clone()));
        out
    }
}

impl fmt::Display for Violation {
    #[allow(clippy::match_same_arms)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Violation as V;
        match self {
            V::UnknownPod { pod } => write!(f, "pod {pod} is bound but was not given"),
            V::PodBoundTwice { pod } => write!(f, "pod {pod} is bound more than once"),
            V::NotInGroup { pod, group } => {
                write!(f, "pod {pod} is not a member of pod group {group}")
            }
            V::AlreadyBound {
                pod,
                bound_to,
                node,
            } => write!(
                f,
                "pod {pod} is already bound to node {bound_to} and cannot move to {node}"
            ),
            V::BelowMinCount {
                group,
                bound,
                min_count,
            } => write!(
                f,
                "pod group {group}: {bound} pods bound, fewer than minCount {min_count}"
            ),
            V::UnknownNode { pod, node } => write!(f, "pod {pod}: node {node} does not exist"),
            V::NodeUnschedulable { pod, node } => {
                write!(f, "pod {pod}: node {node} is unschedulable")
            }
            V::NodeAffinityMismatch { pod, node } => write!(
                f,
                "pod {pod}: node {node} does not match the pod's node selector or affinity"
            ),
            V::NodeTaintNotTolerated { pod, node, taint } => write!(
                f,
                "pod {pod}: node {node} has taint {}={}:{} that the pod does not tolerate",
                taint.key, taint.value, taint.effect
            ),
            V::NodeResourcesExceeded {
                node,
                resource,
                requested,
                available,
            } => write!(
                f,
                "node {node}: {resource}: {requested} requested, {available} free"
            ),
            V::TopologyLabelMissing { pod, node, key } => write!(
                f,
                "pod {pod}: node {node} has no label {key} (the group's topology key)"
            ),
            V::TopologySplit { key, values } => {
                write!(f, "the group spans several {key} domains: {}", join(values))
            }
            V::ClaimNotProvided { referrer, claim } => {
                write!(
                    f,
                    "{referrer} references claim {claim}, which was not given"
                )
            }
            V::UnknownClaim { claim } => {
                write!(f, "claim {claim} is allocated but was not given")
            }
            V::MissingAllocation { claim } => write!(f, "claim {claim} is not allocated"),
            V::DuplicateAllocation { claim, count } => {
                write!(f, "claim {claim} is allocated {count} times")
            }
            V::AlreadyAllocated { claim } => {
                write!(f, "claim {claim} is already allocated in the cluster")
            }
            V::ReservesTaintedClaim {
                claim,
                device,
                taint,
            } => write!(
                f,
                "claim {claim} is reserved for new pods, but its device {device} carries \
                 {taint}, which its allocation does not tolerate"
            ),
            V::UnexpectedAllocation { claim, holder } => write!(
                f,
                "claim {claim} is allocated in {holder}, but nothing placed references it"
            ),
            V::MisplacedAllocation { claim, holder } => {
                write!(f, "claim {claim} must not be allocated in {holder}")
            }
            V::AllocationNotForNode { claim, node } => write!(
                f,
                "claim {claim}: the allocation's node selector does not match node {node}"
            ),
            V::TooManyDevices { claim, count } => write!(
                f,
                "claim {claim}: {count} devices, more than {MAX_ALLOCATION_RESULTS}"
            ),
            V::UnknownRequest { claim, request } => {
                write!(f, "claim {claim}: no request {request}")
            }
            V::RequestNotAllocated { claim, request } => {
                write!(f, "claim {claim}: request {request} has no device")
            }
            V::ConflictingSubrequests {
                claim,
                request,
                subrequests,
            } => write!(
                f,
                "claim {claim}: request {request} uses several subrequests: {}",
                join(subrequests)
            ),
            V::WrongDeviceCount {
                claim,
                request,
                expected,
                actual,
            } => write!(
                f,
                "claim {claim}: request {request} wants {expected} devices, has {actual}"
            ),
            V::AllModeDeviceMissing {
                claim,
                request,
                device,
            } => write!(
                f,
                "claim {claim}: request {request} asks for all matching devices but lacks {device}"
            ),
            V::AllModeIncompletePool {
                claim,
                request,
                pool,
            } => write!(
                f,
                "claim {claim}: request {request} asks for all matching devices, but pool {pool} is incomplete or invalid"
            ),
            V::UnknownDevice { claim, device } => {
                write!(f, "claim {claim}: device {device} does not exist")
            }
            V::DeviceNotUsable { claim, device } => write!(
                f,
                "claim {claim}: device {device} is not usable (incomplete or invalid pool, or old generation)"
            ),
            V::DeviceUnreachable {
                claim,
                device,
                node,
            } => write!(
                f,
                "claim {claim}: device {device} cannot be reached from node {node}"
            ),
            V::ClassNotFound {
                claim,
                request,
                class,
            } => write!(
                f,
                "claim {claim}: request {request}: DeviceClass {class} does not exist"
            ),
            V::SelectorInvalid {
                claim,
                request,
                message,
            } => write!(
                f,
                "claim {claim}: request {request}: selector does not compile: {message}"
            ),
            V::SelectorFailed {
                claim,
                request,
                device,
                message,
            } => write!(
                f,
                "claim {claim}: request {request}: selector failed on device {device}: {message}"
            ),
            V::ClassSelectorMismatch {
                claim,
                request,
                device,
                class,
            } => write!(
                f,
                "claim {claim}: request {request}: device {device} does not match class {class}"
            ),
            V::RequestSelectorMismatch {
                claim,
                request,
                device,
            } => write!(
                f,
                "claim {claim}: request {request}: device {device} does not match the request's selectors"
            ),
            V::DeviceTaintNotTolerated {
                claim,
                request,
                device,
                taint,
            } => write!(
                f,
                "claim {claim}: request {request}: device {device} has taint {}={}:{} that the request does not tolerate",
                taint.key, taint.value, taint.effect
            ),
            V::TolerationsMismatch {
                claim,
                request,
                device,
            } => write!(
                f,
                "claim {claim}: request {request}: the result for device {device} does not copy the request's tolerations"
            ),
            V::AdminAccessMismatch {
                claim,
                request,
                device,
                requested,
            } => {
                if *requested {
                    write!(
                        f,
                        "claim {claim}: request {request} asks for admin access but the result for device {device} lacks it"
                    )
                } else {
                    write!(
                        f,
                        "claim {claim}: request {request} does not ask for admin access but the result for device {device} has it"
                    )
                }
            }
            V::CapacityRequestNotMet {
                claim,
                request,
                device,
                capacity,
            } => write!(
                f,
                "claim {claim}: request {request}: device {device} cannot serve capacity {capacity}"
            ),
            V::DeviceAllocatedTwice {
                device,
                first,
                second,
            } => write!(
                f,
                "device {device} is allocated to both {first} and {second}"
            ),
            V::DeviceInUse {
                claim,
                device,
                holder,
            } => write!(
                f,
                "claim {claim}: device {device} is already allocated to {holder}"
            ),
            V::MissingShareId { claim, device } => {
                write!(
                    f,
                    "claim {claim}: the share of device {device} has no share id"
                )
            }
            V::DuplicateShareId { device, share_id } => {
                write!(f, "device {device}: share id {share_id} is used twice")
            }
            V::UnexpectedShare { claim, device } => write!(
                f,
                "claim {claim}: device {device} is exclusive but the result carries a share"
            ),
            V::ConsumedCapacityMismatch {
                claim,
                device,
                capacity,
                expected,
                actual,
            } => write!(
                f,
                "claim {claim}: device {device}: consumed capacity {capacity} is {}, should be {}",
                opt(actual.as_ref()),
                opt(expected.as_ref())
            ),
            V::CapacityExceeded {
                device,
                capacity,
                committed,
                requested,
                value,
            } => write!(
                f,
                "device {device}: capacity {capacity}: {committed} committed + {requested} requested > {value}"
            ),
            V::CountersExceeded {
                driver,
                pool,
                counter_set,
                counter,
                needed,
                available,
            } => write!(
                f,
                "pool {driver}/{pool}: counter {counter_set}/{counter}: {needed} needed, {available} available"
            ),
            V::ConstraintAttributeMissing {
                claim,
                attribute,
                device,
            } => write!(
                f,
                "claim {claim}: device {device} has no attribute {attribute} (constraint)"
            ),
            V::MatchAttributeViolated {
                claim,
                attribute,
                devices,
            } => write!(
                f,
                "claim {claim}: devices {} have no common value of {attribute}",
                join(devices)
            ),
            V::DistinctAttributeViolated {
                claim,
                attribute,
                first,
                second,
            } => write!(
                f,
                "claim {claim}: devices {first} and {second} share a value of {attribute}"
            ),
        }
    }
}

fn join(items: &[impl fmt::Display]) -> String {
    let mut s = String::new();
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&x.to_string());
    }
    s
}

fn opt(q: Option<&Quantity>) -> String {
    q.map_or_else(|| "nothing".to_owned(), ToString::to_string)
}
