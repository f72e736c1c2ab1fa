//! An independent validator for placement decisions: given the cluster *before* a
//! decision, the gang, its pods and their claims, [`validate_placement`] re-checks every
//! invariant a placement must keep and lists what is broken.
//!
//! The validator shares no code with the allocator: it never calls
//! [`Cluster::allocate_claims`] or its helpers, and recomputes every rule from the
//! objects with plain loops (selectors are evaluated with [`Selector`], taints with the
//! public toleration matchers, and a share's consumption with
//! [`consumed_capacity`](crate::consumed_capacity), the capacity policy arithmetic). It
//! is meant for tests and fuzzing of the gang placer, and as a safety net before a
//! decision is committed.

use core::fmt;

use crate::alloc_prelude::*;
use crate::cel::Selector;
use crate::cluster::ids::DeviceId;
use crate::cluster::{Cluster, DeviceRef, DeviceView};
use crate::model::capacity::consumed_capacity;
use crate::model::claim::{
    AllocationMode, AllocationResult, ConstraintKind, DeviceRequestAllocationResult,
    DeviceRequestKind, MAX_ALLOCATION_RESULTS, RequestView, ResourceClaim, split_request_ref,
};
use crate::model::decision::{ClaimAllocation, PlacementDecision};
use crate::model::names::qualify;
use crate::model::toleration::device_taint_blocks;
use crate::model::workload::{ClaimSource, Pod, PodGroup};
use crate::{Device, DeviceAttribute, DeviceSet, DeviceTaint, Node, Quantity, Taint, TaintEffect};

// ---------------------------------------------------------------------------------------------
// Where a claim is held
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Findings
// ---------------------------------------------------------------------------------------------

/// One broken invariant of a [`PlacementDecision`]. Pods, claims and groups are named
/// `namespace/name`; a request is `request` or `request/subrequest`.
///
/// Closed: these are all the findings [`validate_placement`] reports.
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

// ---------------------------------------------------------------------------------------------
// The validator
// ---------------------------------------------------------------------------------------------

/// Checks a placement decision against the cluster as it is **before** the decision
/// (committed allocations and node reservations included) and returns every broken
/// invariant; empty means valid.
///
/// `group` is the PodGroup being placed (`None` for pods without a group), `pods` the
/// pods the placer was given (members already running included, with `node_name` set),
/// `claims` every ResourceClaim they or the group reference by name. Findings come in a
/// deterministic order: bindings, gang, node resources, topology, claims, devices,
/// sharing.
///
/// The rules:
///
/// 1. **Gang.** Every bound pod is one of `pods`, bound once, a member of `group`; a pod
///    with `node_name` set is not bound elsewhere (binding it again to its own node is
///    a no-op: no node checks, no resources charged). With a gang policy, if any pod
///    is newly bound, the members bound afterwards (running ones included) number at
///    least `minCount`.
/// 2. **Nodes.** The node exists and is schedulable; the pod's `nodeSelector` and
///    required affinity match ([`Pod::fits_node`]); every `NoSchedule` / `NoExecute`
///    taint is tolerated; per node, the requests of the pods newly bound there (plus
///    `pods: 1` each when the node advertises `pods`) fit in
///    [`Cluster::node_free_resources`] (a resource the node lacks has nothing free).
/// 3. **Topology.** For each topology key of the group, every bound pod's node has the
///    label, and the bound and running members share one value.
/// 4. **Claims.** A claim a bound pod references by `resourceClaimName` (and that is
///    not the group's, see [`PodGroup::group_claim_for`]) has exactly one allocation,
///    in the binding of a pod that references it, unless it is allocated already — in
///    the cluster, or by its `status.allocation` — (then none); the group's claims, once any pod is bound, likewise
///    in `group_claims`. Every allocation is checked against the node of every pod
///    using the claim (for a group claim, the bound members that name it): devices reachable
///    ([`Cluster::devices_reachable_from`]), `nodeSelector` matching. Its results name
///    requests of the claim (one subrequest per `firstAvailable` request, every request
///    served); `ExactCount` counts match; `All` results include every usable device the
///    node reaches that the class, the request selectors and the capacity admit (and no
///    reachable pool is incomplete); each device exists, is usable, matches the class
///    and request selectors, has no untolerated `NoSchedule` / `NoExecute` taint
///    ([`Cluster::device_taints`]), and serves the capacity requests; the result copies
///    the request's tolerations and admin access. Claims allocated in the cluster
///    already must have their devices reachable from their users' nodes.
/// 5. **Sharing.** A device without `allowMultipleAllocations` is allocated at most once
///    (not for admin access) across the decision and the cluster's holders; admin
///    results do not repeat a device within a claim. Each share of a shareable device
///    has a unique share id and lists every capacity at the amount its request policy
///    gives; committed plus new shares fit every capacity. Per pool, the shared
///    counters left ([`Cluster::counters_available`]) minus what the newly allocated
///    counter-consuming devices use (a device once, however many shares) stay
///    non-negative for **every** counter of the pool (upstream's rule).
/// 6. **Constraints.** `matchAttribute`: the devices in scope
///    ([`DeviceConstraint::applies_to`](crate::DeviceConstraint::applies_to)) have the
///    attribute and a common value (list attributes intersect); `distinctAttribute`:
///    pairwise disjoint values. Attributes are looked up by qualified name, then by the
///    bare name when the domain is the device's driver.
///
/// Not checked: claims from `resourceClaimTemplateName` (their generated names are not
/// known here; allocations in the binding of a pod, or in the group claims of a group,
/// that has template claims are accepted and checked on their own), the result's
/// `config` and binding conditions, and claims allocated in the cluster that hold no
/// device.
///
/// ```
/// use gangpack::{Cluster, Node, PlacementDecision, Pod, PodBinding, Quantity, Violation};
/// use gangpack::validate_placement;
///
/// let mut cluster = Cluster::new();
/// cluster.add_node(Node::new("n1").with_allocatable("cpu", Quantity::from_int(4)))?;
/// let mut pod = Pod::new("team-a", "worker-0");
/// pod.requests.insert("cpu".into(), Quantity::from_int(2));
///
/// let bind = |node: &str| PlacementDecision {
///     bindings: vec![PodBinding {
///         pod: "team-a/worker-0".into(),
///         node: node.into(),
///         claims: vec![],
///     }],
///     group_claims: vec![],
/// };
/// assert!(validate_placement(&cluster, None, &[pod.clone()], &[], &bind("n1")).is_empty());
///
/// let found = validate_placement(&cluster, None, &[pod], &[], &bind("n2"));
/// assert_eq!(
///     found,
///     [Violation::UnknownNode { pod: "team-a/worker-0".into(), node: "n2".into() }]
/// );
/// assert_eq!(found[0].to_string(), "pod team-a/worker-0: node n2 does not exist");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn validate_placement(
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &[ResourceClaim],
    decision: &PlacementDecision,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let pod_index: BTreeMap<String, &Pod> = pods
        .iter()
        .map(|p| (key(&p.namespace, &p.name), p))
        .collect();
    let claim_index: BTreeMap<String, &ResourceClaim> = claims
        .iter()
        .map(|c| (key(&c.namespace, &c.name), c))
        .collect();
    let bound = check_bindings(cluster, group, &pod_index, decision, &mut out);
    check_gang(group, pods, &bound, &mut out);
    check_node_resources(cluster, &bound, &mut out);
    check_topology(cluster, group, pods, &bound, &mut out);
    let env = Env::new(cluster, decision, &claim_index);
    check_claims(&env, group, &claim_index, &bound, decision, &mut out);
    out
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn is_member(pod: &Pod, group: &PodGroup) -> bool {
    pod.namespace == group.namespace && pod.scheduling_group.as_deref() == Some(&group.name)
}

/// One accepted binding (known pod, first binding of it).
struct Bound<'a> {
    pod: &'a Pod,
    key: &'a str,
    node_name: &'a str,
    node: Option<&'a Node>,
    /// Not a repeat of the pod's existing binding.
    new: bool,
    member: bool,
}

fn check_bindings<'a>(
    cluster: &'a Cluster,
    group: Option<&PodGroup>,
    pods: &BTreeMap<String, &'a Pod>,
    decision: &'a PlacementDecision,
    out: &mut Vec<Violation>,
) -> Vec<Bound<'a>> {
    let mut seen = BTreeSet::new();
    let mut bound = Vec::new();
    for b in &decision.bindings {
        if !seen.insert(b.pod.as_str()) {
            out.push(Violation::PodBoundTwice { pod: b.pod.clone() });
            continue;
        }
        let Some(&pod) = pods.get(&b.pod) else {
            out.push(Violation::UnknownPod { pod: b.pod.clone() });
            continue;
        };
        let member = group.is_none_or(|g| is_member(pod, g));
        if let Some(g) = group
            && !member
        {
            out.push(Violation::NotInGroup {
                pod: b.pod.clone(),
                group: key(&g.namespace, &g.name),
            });
        }
        let mut new = true;
        if let Some(at) = &pod.node_name {
            if *at == b.node {
                new = false;
            } else {
                out.push(Violation::AlreadyBound {
                    pod: b.pod.clone(),
                    bound_to: at.clone(),
                    node: b.node.clone(),
                });
            }
        }
        let node = cluster.node(&b.node);
        match node {
            None => out.push(Violation::UnknownNode {
                pod: b.pod.clone(),
                node: b.node.clone(),
            }),
            Some(n) if new => check_node_fit(pod, &b.pod, n, out),
            Some(_) => {}
        }
        bound.push(Bound {
            pod,
            key: &b.pod,
            node_name: &b.node,
            node,
            new,
            member,
        });
    }
    bound
}

fn check_node_fit(pod: &Pod, pod_key: &str, node: &Node, out: &mut Vec<Violation>) {
    if node.unschedulable {
        out.push(Violation::NodeUnschedulable {
            pod: pod_key.to_owned(),
            node: node.name.clone(),
        });
    }
    if !pod.fits_node(node) {
        out.push(Violation::NodeAffinityMismatch {
            pod: pod_key.to_owned(),
            node: node.name.clone(),
        });
    }
    for t in &node.taints {
        let blocks = matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute);
        if blocks && !pod.tolerations.iter().any(|tol| tol.tolerates(t)) {
            out.push(Violation::NodeTaintNotTolerated {
                pod: pod_key.to_owned(),
                node: node.name.clone(),
                taint: t.clone(),
            });
        }
    }
}

fn check_gang(
    group: Option<&PodGroup>,
    pods: &[Pod],
    bound: &[Bound<'_>],
    out: &mut Vec<Violation>,
) {
    let Some(g) = group else {
        return;
    };
    let Some(min_count) = g.policy.min_count() else {
        return;
    };
    let mut members: BTreeSet<String> = bound
        .iter()
        .filter(|b| b.member && b.new)
        .map(|b| b.key.to_owned())
        .collect();
    if members.is_empty() {
        return;
    }
    for p in pods {
        if is_member(p, g) && p.node_name.is_some() {
            members.insert(key(&p.namespace, &p.name));
        }
    }
    if members.len() < min_count as usize {
        out.push(Violation::BelowMinCount {
            group: key(&g.namespace, &g.name),
            bound: members.len(),
            min_count,
        });
    }
}

fn check_node_resources(cluster: &Cluster, bound: &[Bound<'_>], out: &mut Vec<Violation>) {
    let mut per_node: BTreeMap<&str, BTreeMap<&str, Quantity>> = BTreeMap::new();
    for b in bound.iter().filter(|b| b.new) {
        let Some(node) = b.node else {
            continue;
        };
        let sums = per_node.entry(&node.name).or_default();
        for (resource, q) in &b.pod.requests {
            let e = sums.entry(resource).or_insert(Quantity::ZERO);
            *e = e.saturating_add(*q);
        }
        if node.allocatable.contains_key("pods") && !b.pod.requests.contains_key("pods") {
            let e = sums.entry("pods").or_insert(Quantity::ZERO);
            *e = e.saturating_add(Quantity::from_int(1));
        }
    }
    for (node, sums) in per_node {
        let free = cluster.node_free_resources(node).unwrap_or_default();
        for (resource, requested) in sums {
            if !requested.is_positive() {
                continue;
            }
            let available = free.get(resource).copied().unwrap_or(Quantity::ZERO);
            if requested > available {
                out.push(Violation::NodeResourcesExceeded {
                    node: node.to_owned(),
                    resource: resource.to_owned(),
                    requested,
                    available,
                });
            }
        }
    }
}

fn check_topology(
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    bound: &[Bound<'_>],
    out: &mut Vec<Violation>,
) {
    let Some(g) = group else {
        return;
    };
    if g.topology.is_empty() || !bound.iter().any(|b| b.member && b.new) {
        return;
    }
    // Pod → node after the decision: running members, then the decision's bindings.
    let mut placement: BTreeMap<String, (&str, bool)> = BTreeMap::new();
    for p in pods.iter().filter(|p| is_member(p, g)) {
        if let Some(n) = &p.node_name {
            placement.insert(key(&p.namespace, &p.name), (n, false));
        }
    }
    for b in bound.iter().filter(|b| b.member) {
        placement.insert(b.key.to_owned(), (b.node_name, b.new));
    }
    for tc in &g.topology {
        let mut values = BTreeSet::new();
        for (pod, &(node_name, decided)) in &placement {
            let Some(node) = cluster.node(node_name) else {
                continue;
            };
            match node.labels.get(&tc.key) {
                Some(v) => {
                    values.insert(v.clone());
                }
                None if decided => out.push(Violation::TopologyLabelMissing {
                    pod: pod.clone(),
                    node: node_name.to_owned(),
                    key: tc.key.clone(),
                }),
                None => {}
            }
        }
        if values.len() > 1 {
            out.push(Violation::TopologySplit {
                key: tc.key.clone(),
                values: values.into_iter().collect(),
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Claims
// ---------------------------------------------------------------------------------------------

/// One share in the decision: the claim and what it consumes.
type Share<'a> = (&'a str, &'a BTreeMap<String, Quantity>);

/// What the claim checks read: the cluster, each decision node's reach and the compiled
/// class selectors.
struct Env<'a> {
    cluster: &'a Cluster,
    reach: BTreeMap<&'a str, DeviceSet>,
    classes: BTreeMap<&'a str, Result<Vec<Selector>, String>>,
    /// The decision's shares per device: (claim, consumed capacity), first allocation
    /// of each claim only.
    shares: BTreeMap<DeviceRef, Vec<Share<'a>>>,
}

impl<'a> Env<'a> {
    fn new(
        cluster: &'a Cluster,
        decision: &'a PlacementDecision,
        claims: &BTreeMap<String, &'a ResourceClaim>,
    ) -> Env<'a> {
        let mut reach = BTreeMap::new();
        for b in &decision.bindings {
            if let Some(node) = cluster.node(&b.node)
                && !reach.contains_key(node.name.as_str())
                && let Some(id) = cluster.node_id(&node.name)
            {
                reach.insert(node.name.as_str(), cluster.devices_reachable_from(id));
            }
        }
        let mut classes = BTreeMap::new();
        for c in claims.values() {
            for r in &c.spec.requests {
                for alt in r.alternatives() {
                    let name = alt.device_class_name;
                    if classes.contains_key(name) {
                        continue;
                    }
                    if let Some(class) = cluster.class(name) {
                        let compiled = class
                            .selectors
                            .iter()
                            .map(|s| Selector::compile(&s.cel).map_err(|e| e.to_string()))
                            .collect::<Result<Vec<_>, _>>();
                        classes.insert(name, compiled);
                    }
                }
            }
        }
        let mut shares: BTreeMap<DeviceRef, Vec<_>> = BTreeMap::new();
        let mut seen = BTreeSet::new();
        let allocations = decision
            .group_claims
            .iter()
            .chain(decision.bindings.iter().flat_map(|b| &b.claims));
        for ca in allocations {
            if !seen.insert(ca.claim.as_str()) {
                continue;
            }
            for r in &ca.result.devices {
                if !r.admin_access && !r.consumed_capacity.is_empty() {
                    shares
                        .entry(DeviceRef::new(&r.driver, &r.pool, &r.device))
                        .or_default()
                        .push((ca.claim.as_str(), &r.consumed_capacity));
                }
            }
        }
        Env {
            cluster,
            reach,
            classes,
            shares,
        }
    }

    fn reaches(&self, node: &Node, dev: DeviceId) -> bool {
        self.reach
            .get(node.name.as_str())
            .is_some_and(|s| s.contains(dev))
    }
}

/// Who uses a referenced claim.
struct Use<'a> {
    group: bool,
    referrers: Vec<Holder>,
    nodes: Vec<&'a Node>,
}

impl<'a> Use<'a> {
    fn add_node(&mut self, node: Option<&'a Node>) {
        if let Some(n) = node
            && !self.nodes.iter().any(|x| x.name == n.name)
        {
            self.nodes.push(n);
        }
    }
}

/// One device result of an allocation that is checked, for the sharing rules.
struct Record<'a> {
    claim: &'a str,
    result: &'a DeviceRequestAllocationResult,
    device: DeviceRef,
    id: DeviceId,
    shareable: bool,
}

fn check_claims<'a>(
    env: &Env<'a>,
    group: Option<&PodGroup>,
    claims: &BTreeMap<String, &'a ResourceClaim>,
    bound: &[Bound<'a>],
    decision: &'a PlacementDecision,
    out: &mut Vec<Violation>,
) {
    let group_key = group.map_or_else(String::new, |g| key(&g.namespace, &g.name));
    let mut uses: BTreeMap<String, Use<'a>> = BTreeMap::new();
    // Sites that may hold allocations of template-generated claims.
    let mut template_sites: BTreeSet<Holder> = BTreeSet::new();
    for b in bound {
        for prc in &b.pod.resource_claims {
            if group.is_some_and(|g| g.group_claim_for(prc).is_some()) {
                continue;
            }
            match &prc.source {
                ClaimSource::ClaimName(n) => {
                    let u = uses.entry(key(&b.pod.namespace, n)).or_insert(Use {
                        group: false,
                        referrers: Vec::new(),
                        nodes: Vec::new(),
                    });
                    u.referrers.push(Holder::Pod(b.key.to_owned()));
                    u.add_node(b.node);
                }
                ClaimSource::Template(_) => {
                    template_sites.insert(Holder::Pod(b.key.to_owned()));
                }
            }
        }
    }
    if let Some(g) = group
        && !bound.is_empty()
    {
        for gc in &g.resource_claims {
            match &gc.source {
                ClaimSource::ClaimName(n) => {
                    let u = uses.entry(key(&g.namespace, n)).or_insert(Use {
                        group: true,
                        referrers: Vec::new(),
                        nodes: Vec::new(),
                    });
                    u.group = true;
                    u.referrers.push(Holder::Group(group_key.clone()));
                    // Its users: the members that name it (same name and source).
                    for b in bound {
                        let uses = b
                            .pod
                            .resource_claims
                            .iter()
                            .any(|prc| g.group_claim_for(prc) == Some(gc));
                        if uses {
                            u.add_node(b.node);
                        }
                    }
                }
                ClaimSource::Template(_) => {
                    template_sites.insert(Holder::Group(group_key.clone()));
                }
            }
        }
    }
    for (k, u) in &uses {
        if !claims.contains_key(k) {
            for r in &u.referrers {
                out.push(Violation::ClaimNotProvided {
                    referrer: r.clone(),
                    claim: k.clone(),
                });
            }
        }
    }
    let mut interest: BTreeSet<&str> = uses.keys().map(String::as_str).collect();
    let sites: Vec<(Holder, &'a ClaimAllocation)> = decision
        .group_claims
        .iter()
        .map(|ca| (Holder::Group(group_key.clone()), ca))
        .chain(decision.bindings.iter().flat_map(|b| {
            b.claims
                .iter()
                .map(move |ca| (Holder::Pod(b.pod.clone()), ca))
        }))
        .collect();
    interest.extend(sites.iter().map(|(_, ca)| ca.claim.as_str()));
    let mut held = holdings(env.cluster, &interest);
    // A claim with `status.allocation` is allocated, whether or not the cluster
    // records its devices.
    for (k, c) in claims {
        if let Some(result) = &c.allocation
            && let Some(&name) = interest.get(k.as_str())
        {
            let devices = held.entry(name).or_default();
            for d in &result.devices {
                let r = DeviceRef::new(&d.driver, &d.pool, &d.device);
                if !devices.contains(&r) {
                    devices.push(r);
                }
            }
        }
    }

    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut records: Vec<Record<'a>> = Vec::new();
    for (site, ca) in &sites {
        let n = counts.entry(ca.claim.as_str()).or_insert(0);
        *n += 1;
        if *n > 1 {
            continue;
        }
        let Some(&claim) = claims.get(&ca.claim) else {
            out.push(Violation::UnknownClaim {
                claim: ca.claim.clone(),
            });
            continue;
        };
        let nodes: Vec<&Node> = if let Some(u) = uses.get(&ca.claim) {
            let in_place = if u.group {
                matches!(site, Holder::Group(_))
            } else {
                u.referrers.contains(site)
            };
            if !in_place {
                out.push(Violation::MisplacedAllocation {
                    claim: ca.claim.clone(),
                    holder: site.clone(),
                });
            }
            u.nodes.clone()
        } else {
            if !template_sites.contains(site) {
                out.push(Violation::UnexpectedAllocation {
                    claim: ca.claim.clone(),
                    holder: site.clone(),
                });
            }
            site_nodes(bound, site)
        };
        if held.contains_key(ca.claim.as_str()) {
            out.push(Violation::AlreadyAllocated {
                claim: ca.claim.clone(),
            });
        }
        check_result(env, &ca.claim, claim, &ca.result, &nodes, &mut records, out);
    }
    for (claim, n) in &counts {
        if *n > 1 {
            out.push(Violation::DuplicateAllocation {
                claim: (*claim).to_owned(),
                count: *n,
            });
        }
    }
    for (k, u) in &uses {
        let Some(claim) = claims.get(k) else {
            continue;
        };
        if counts.contains_key(k.as_str()) {
            continue;
        }
        if let Some(devices) = held.get(k.as_str()) {
            for d in devices {
                let Some(id) = env.cluster.device_id(d) else {
                    continue;
                };
                for node in &u.nodes {
                    if !env.reaches(node, id) {
                        out.push(Violation::DeviceUnreachable {
                            claim: k.clone(),
                            device: d.clone(),
                            node: node.name.clone(),
                        });
                    }
                }
            }
        } else if !claim.spec.requests.is_empty() {
            out.push(Violation::MissingAllocation { claim: k.clone() });
        }
    }
    check_sharing(env.cluster, &records, out);
}

/// The nodes an allocation found at `site` is used from, when no reference says.
fn site_nodes<'a>(bound: &[Bound<'a>], site: &Holder) -> Vec<&'a Node> {
    match site {
        Holder::Group(_) => {
            let mut v: Vec<&Node> = Vec::new();
            for n in bound.iter().filter_map(|b| b.node) {
                if !v.iter().any(|x| x.name == n.name) {
                    v.push(n);
                }
            }
            v
        }
        Holder::Pod(p) => bound
            .iter()
            .find(|b| b.key == p)
            .and_then(|b| b.node)
            .into_iter()
            .collect(),
    }
}

/// The devices each consumer of interest holds in the cluster (any kind of holder).
fn holdings<'s>(
    cluster: &Cluster,
    interest: &BTreeSet<&'s str>,
) -> BTreeMap<&'s str, Vec<DeviceRef>> {
    let mut out: BTreeMap<&str, Vec<DeviceRef>> = BTreeMap::new();
    if interest.is_empty() {
        return out;
    }
    let mut seen = BTreeSet::new();
    for s in cluster.slices() {
        for d in &s.devices {
            let r = DeviceRef::new(&s.driver, &s.pool.name, &d.name);
            if seen.contains(&r) {
                continue;
            }
            for h in cluster.allocations(&r) {
                if let Some(&c) = interest.get(h.consumer.as_str()) {
                    let v = out.entry(c).or_default();
                    if !v.contains(&r) {
                        v.push(r.clone());
                    }
                }
            }
            seen.insert(r);
        }
    }
    out
}

/// Compiled selectors of one resolved (sub)request.
struct Compiled<'v> {
    view: RequestView<'v>,
    /// `None` when the class is missing or a selector does not compile (reported).
    selectors: Option<(&'v [Selector], Vec<Selector>)>,
}

enum Selection {
    Match,
    ClassMismatch,
    RequestMismatch,
    Error(String),
}

fn select(class: &[Selector], request: &[Selector], driver: &str, device: &Device) -> Selection {
    for s in class {
        match s.eval(driver, device) {
            Ok(true) => {}
            Ok(false) => return Selection::ClassMismatch,
            Err(e) => return Selection::Error(e.to_string()),
        }
    }
    for s in request {
        match s.eval(driver, device) {
            Ok(true) => {}
            Ok(false) => return Selection::RequestMismatch,
            Err(e) => return Selection::Error(e.to_string()),
        }
    }
    Selection::Match
}

/// The device's capacity that a request names `name` (exact, then qualified with the
/// driver's domain).
fn capacity_named<'d>(
    device: &'d Device,
    name: &str,
    driver: &str,
) -> Option<&'d crate::DeviceCapacity> {
    device.capacity.get(name).or_else(|| {
        let want = qualify(name, driver);
        device
            .capacity
            .iter()
            .find(|(k, _)| qualify(k, driver) == want)
            .map(|(_, c)| c)
    })
}

/// Whether a device passes a request's capacity filter (for `All`): for shares, what
/// the request consumes must fit next to the committed shares and the decision's shares
/// for other claims (an earlier pod's share may have excluded the device); otherwise
/// every requested capacity must exist and be at least the amount.
fn capacity_admits(
    env: &Env<'_>,
    claim_key: &str,
    dv: &DeviceView<'_>,
    view: &RequestView<'_>,
) -> bool {
    if dv.device.allow_multiple_allocations && !view.admin_access {
        let Ok(amount) = consumed_capacity(dv.device, view.capacity, dv.driver) else {
            return false;
        };
        let device = dv.device_ref();
        let committed = env.cluster.consumed_capacity(&device);
        let others = env.shares.get(&device);
        amount.iter().all(|(name, q)| {
            let mut used = committed.get(name).copied().unwrap_or(Quantity::ZERO);
            for (claim, consumed) in others.into_iter().flatten() {
                if *claim != claim_key {
                    used =
                        used.saturating_add(consumed.get(name).copied().unwrap_or(Quantity::ZERO));
                }
            }
            dv.device
                .capacity
                .get(name)
                .is_some_and(|c| used.saturating_add(*q) <= c.value)
        })
    } else {
        view.capacity.iter().all(|(name, q)| {
            capacity_named(dv.device, name, dv.driver).is_some_and(|c| c.value >= *q)
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn check_result<'a>(
    env: &Env<'a>,
    claim_key: &'a str,
    claim: &'a ResourceClaim,
    result: &'a AllocationResult,
    nodes: &[&'a Node],
    records: &mut Vec<Record<'a>>,
    out: &mut Vec<Violation>,
) {
    let cluster = env.cluster;
    let spec = &claim.spec;
    let ck = || claim_key.to_owned();
    if result.devices.len() > MAX_ALLOCATION_RESULTS {
        out.push(Violation::TooManyDevices {
            claim: ck(),
            count: result.devices.len(),
        });
    }
    if let Some(sel) = &result.node_selector {
        for n in nodes {
            if !sel.matches(&n.name, &n.labels) {
                out.push(Violation::AllocationNotForNode {
                    claim: ck(),
                    node: n.name.clone(),
                });
            }
        }
    }
    // Requests.
    let mut by_ref: BTreeMap<&str, Vec<&DeviceRequestAllocationResult>> = BTreeMap::new();
    for r in &result.devices {
        by_ref.entry(r.request.as_str()).or_default().push(r);
    }
    for req in &spec.requests {
        match &req.kind {
            DeviceRequestKind::Exactly(_) => {
                if !by_ref.contains_key(req.name.as_str()) {
                    out.push(Violation::RequestNotAllocated {
                        claim: ck(),
                        request: req.name.clone(),
                    });
                }
            }
            DeviceRequestKind::FirstAvailable(subs) => {
                let used: Vec<String> = subs
                    .iter()
                    .map(|s| format!("{}/{}", req.name, s.name))
                    .filter(|r| by_ref.contains_key(r.as_str()))
                    .collect();
                if used.is_empty() {
                    out.push(Violation::RequestNotAllocated {
                        claim: ck(),
                        request: req.name.clone(),
                    });
                } else if used.len() > 1 {
                    out.push(Violation::ConflictingSubrequests {
                        claim: ck(),
                        request: req.name.clone(),
                        subrequests: used,
                    });
                }
            }
        }
    }
    let mut compiled: BTreeMap<&str, Compiled<'_>> = BTreeMap::new();
    for (&reference, rs) in &by_ref {
        let Some(view) = spec.resolve(reference) else {
            out.push(Violation::UnknownRequest {
                claim: ck(),
                request: reference.to_owned(),
            });
            continue;
        };
        let class = match env.classes.get(view.device_class_name) {
            None => {
                out.push(Violation::ClassNotFound {
                    claim: ck(),
                    request: reference.to_owned(),
                    class: view.device_class_name.to_owned(),
                });
                None
            }
            Some(Err(message)) => {
                out.push(Violation::SelectorInvalid {
                    claim: ck(),
                    request: reference.to_owned(),
                    message: message.clone(),
                });
                None
            }
            Some(Ok(sels)) => Some(sels.as_slice()),
        };
        let request_sels = view
            .selectors
            .iter()
            .map(|s| Selector::compile(&s.cel))
            .collect::<Result<Vec<_>, _>>();
        let request_sels = match request_sels {
            Ok(v) => Some(v),
            Err(e) => {
                out.push(Violation::SelectorInvalid {
                    claim: ck(),
                    request: reference.to_owned(),
                    message: e.to_string(),
                });
                None
            }
        };
        let selectors = class.zip(request_sels);
        match view.allocation_mode {
            AllocationMode::ExactCount(n) => {
                if rs.len() != n as usize {
                    out.push(Violation::WrongDeviceCount {
                        claim: ck(),
                        request: reference.to_owned(),
                        expected: n,
                        actual: rs.len(),
                    });
                }
            }
            AllocationMode::All => {
                if let Some((class, request)) = &selectors {
                    check_all(
                        env, claim_key, reference, &view, class, request, rs, nodes, out,
                    );
                }
            }
        }
        compiled.insert(reference, Compiled { view, selectors });
    }
    // Devices.
    let mut found: Vec<(
        &DeviceRequestAllocationResult,
        DeviceRef,
        Option<DeviceView<'a>>,
    )> = Vec::with_capacity(result.devices.len());
    for r in &result.devices {
        let device = DeviceRef::new(&r.driver, &r.pool, &r.device);
        let Some(id) = cluster.device_id(&device) else {
            out.push(Violation::UnknownDevice {
                claim: ck(),
                device: device.clone(),
            });
            found.push((r, device, None));
            continue;
        };
        let dv = cluster
            .device(id)
            .expect("a device id from device_id is live");
        if !dv.usable {
            out.push(Violation::DeviceNotUsable {
                claim: ck(),
                device: device.clone(),
            });
        }
        for n in nodes {
            if !env.reaches(n, id) {
                out.push(Violation::DeviceUnreachable {
                    claim: ck(),
                    device: device.clone(),
                    node: n.name.clone(),
                });
            }
        }
        records.push(Record {
            claim: claim_key,
            result: r,
            device: device.clone(),
            id,
            shareable: dv.device.allow_multiple_allocations,
        });
        if let Some(c) = compiled.get(r.request.as_str()) {
            check_device(cluster, claim_key, c, r, &device, &dv, out);
        }
        found.push((r, device, Some(dv)));
    }
    check_constraints(claim_key, claim, &found, out);
}

/// The per-device rules for one result of a resolved request.
fn check_device(
    cluster: &Cluster,
    claim_key: &str,
    c: &Compiled<'_>,
    r: &DeviceRequestAllocationResult,
    device: &DeviceRef,
    dv: &DeviceView<'_>,
    out: &mut Vec<Violation>,
) {
    let view = &c.view;
    let ck = || claim_key.to_owned();
    let rq = || r.request.clone();
    if let Some((class, request)) = &c.selectors {
        match select(class, request, dv.driver, dv.device) {
            Selection::Match => {}
            Selection::ClassMismatch => out.push(Violation::ClassSelectorMismatch {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                class: view.device_class_name.to_owned(),
            }),
            Selection::RequestMismatch => out.push(Violation::RequestSelectorMismatch {
                claim: ck(),
                request: rq(),
                device: device.clone(),
            }),
            Selection::Error(message) => out.push(Violation::SelectorFailed {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                message,
            }),
        }
    }
    for taint in cluster.device_taints(dv.id) {
        if device_taint_blocks(&taint, view.tolerations) {
            out.push(Violation::DeviceTaintNotTolerated {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                taint,
            });
        }
    }
    if r.tolerations.as_slice() != view.tolerations {
        out.push(Violation::TolerationsMismatch {
            claim: ck(),
            request: rq(),
            device: device.clone(),
        });
    }
    if r.admin_access != view.admin_access {
        out.push(Violation::AdminAccessMismatch {
            claim: ck(),
            request: rq(),
            device: device.clone(),
            requested: view.admin_access,
        });
    }
    let shareable = dv.device.allow_multiple_allocations;
    if shareable && !r.admin_access {
        if r.share_id.as_deref().is_none_or(str::is_empty) {
            out.push(Violation::MissingShareId {
                claim: ck(),
                device: device.clone(),
            });
        }
        match consumed_capacity(dv.device, view.capacity, dv.driver) {
            Err(rejection) => out.push(Violation::CapacityRequestNotMet {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                capacity: rejection.capacity().to_owned(),
            }),
            Ok(expected) => {
                let names: BTreeSet<&String> =
                    expected.keys().chain(r.consumed_capacity.keys()).collect();
                for name in names {
                    let (e, a) = (expected.get(name), r.consumed_capacity.get(name));
                    if e != a {
                        out.push(Violation::ConsumedCapacityMismatch {
                            claim: ck(),
                            device: device.clone(),
                            capacity: name.clone(),
                            expected: e.copied(),
                            actual: a.copied(),
                        });
                    }
                }
            }
        }
    } else {
        if !shareable && (r.share_id.is_some() || !r.consumed_capacity.is_empty()) {
            out.push(Violation::UnexpectedShare {
                claim: ck(),
                device: device.clone(),
            });
        }
        for (name, q) in view.capacity {
            if capacity_named(dv.device, name, dv.driver).is_none_or(|cap| cap.value < *q) {
                out.push(Violation::CapacityRequestNotMet {
                    claim: ck(),
                    request: rq(),
                    device: device.clone(),
                    capacity: name.clone(),
                });
            }
        }
    }
}

/// `All`: for at least one node using the claim, every usable device it reaches that
/// the class, the request selectors and the capacity admit is in the results, and no
/// reachable pool is incomplete or invalid. Otherwise what is wrong on the first node
/// is reported.
#[allow(clippy::too_many_arguments)]
fn check_all(
    env: &Env<'_>,
    claim_key: &str,
    reference: &str,
    view: &RequestView<'_>,
    class: &[Selector],
    request: &[Selector],
    results: &[&DeviceRequestAllocationResult],
    nodes: &[&Node],
    out: &mut Vec<Violation>,
) {
    let cluster = env.cluster;
    let chosen: BTreeSet<DeviceRef> = results
        .iter()
        .map(|r| DeviceRef::new(&r.driver, &r.pool, &r.device))
        .collect();
    let mut first: Option<Vec<Violation>> = None;
    for node in nodes {
        let Some(reach) = env.reach.get(node.name.as_str()) else {
            continue;
        };
        let mut found = Vec::new();
        let mut bad_pools = BTreeSet::new();
        for id in reach.iter() {
            let Some(dv) = cluster.device(id) else {
                continue;
            };
            if !cluster
                .pool_status(dv.driver, dv.pool)
                .is_some_and(crate::PoolStatus::is_usable)
            {
                if bad_pools.insert(format!("{}/{}", dv.driver, dv.pool)) {
                    found.push(Violation::AllModeIncompletePool {
                        claim: claim_key.to_owned(),
                        request: reference.to_owned(),
                        pool: format!("{}/{}", dv.driver, dv.pool),
                    });
                }
                continue;
            }
            if !dv.usable {
                continue;
            }
            match select(class, request, dv.driver, dv.device) {
                Selection::Match => {}
                Selection::Error(message) => {
                    found.push(Violation::SelectorFailed {
                        claim: claim_key.to_owned(),
                        request: reference.to_owned(),
                        device: dv.device_ref(),
                        message,
                    });
                    continue;
                }
                Selection::ClassMismatch | Selection::RequestMismatch => continue,
            }
            if !capacity_admits(env, claim_key, &dv, view) {
                continue;
            }
            let d = dv.device_ref();
            if !chosen.contains(&d) {
                found.push(Violation::AllModeDeviceMissing {
                    claim: claim_key.to_owned(),
                    request: reference.to_owned(),
                    device: d,
                });
            }
        }
        if found.is_empty() {
            return;
        }
        first.get_or_insert(found);
    }
    out.extend(first.unwrap_or_default());
}

/// A comparable attribute value; a scalar is a one-element set.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    Version(String),
}

/// A device's values of a fully qualified attribute: the exact name, else the bare
/// name when the domain is the device's driver.
fn attribute_values(driver: &str, device: &Device, attribute: &str) -> Option<BTreeSet<Value>> {
    let value = device.attributes.get(attribute).or_else(|| {
        let (domain, id) = attribute.split_once('/')?;
        if domain == driver {
            device.attributes.get(id)
        } else {
            None
        }
    })?;
    Some(match value {
        DeviceAttribute::Int(i) => BTreeSet::from([Value::Int(*i)]),
        DeviceAttribute::Bool(b) => BTreeSet::from([Value::Bool(*b)]),
        DeviceAttribute::String(s) => BTreeSet::from([Value::Str(s.clone())]),
        DeviceAttribute::Version(s) => BTreeSet::from([Value::Version(s.clone())]),
        DeviceAttribute::Ints(v) => v.iter().map(|i| Value::Int(*i)).collect(),
        DeviceAttribute::Bools(v) => v.iter().map(|b| Value::Bool(*b)).collect(),
        DeviceAttribute::Strings(v) => v.iter().map(|s| Value::Str(s.clone())).collect(),
        DeviceAttribute::Versions(v) => v.iter().map(|s| Value::Version(s.clone())).collect(),
    })
}

fn check_constraints(
    claim_key: &str,
    claim: &ResourceClaim,
    found: &[(
        &DeviceRequestAllocationResult,
        DeviceRef,
        Option<DeviceView<'_>>,
    )],
    out: &mut Vec<Violation>,
) {
    for c in &claim.spec.constraints {
        let attribute = c.attribute();
        let mut in_scope: Vec<(&DeviceRef, BTreeSet<Value>)> = Vec::new();
        for (r, device, dv) in found {
            let (request, sub) = split_request_ref(&r.request);
            let Some(dv) = dv else {
                continue;
            };
            if !c.applies_to(request, sub) {
                continue;
            }
            match attribute_values(dv.driver, dv.device, attribute) {
                Some(values) => in_scope.push((device, values)),
                None => out.push(Violation::ConstraintAttributeMissing {
                    claim: claim_key.to_owned(),
                    attribute: attribute.to_owned(),
                    device: device.clone(),
                }),
            }
        }
        match &c.kind {
            ConstraintKind::MatchAttribute(_) => {
                let mut common: Option<BTreeSet<Value>> = None;
                for (_, values) in &in_scope {
                    common = Some(match common {
                        None => values.clone(),
                        Some(c) => c.intersection(values).cloned().collect(),
                    });
                }
                if common.is_some_and(|c| c.is_empty()) {
                    out.push(Violation::MatchAttributeViolated {
                        claim: claim_key.to_owned(),
                        attribute: attribute.to_owned(),
                        devices: in_scope.iter().map(|(d, _)| (*d).clone()).collect(),
                    });
                }
            }
            ConstraintKind::DistinctAttribute(_) => {
                for (i, (a, va)) in in_scope.iter().enumerate() {
                    for (b, vb) in &in_scope[i + 1..] {
                        if !va.is_disjoint(vb) {
                            out.push(Violation::DistinctAttributeViolated {
                                claim: claim_key.to_owned(),
                                attribute: attribute.to_owned(),
                                first: (*a).clone(),
                                second: (*b).clone(),
                            });
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sharing: exclusivity, capacity, counters
// ---------------------------------------------------------------------------------------------

/// Counter consumption by (counter set, counter).
type Counters<'a> = BTreeMap<(&'a str, &'a str), Quantity>;

fn check_sharing(cluster: &Cluster, records: &[Record<'_>], out: &mut Vec<Violation>) {
    // Exclusive devices.
    let mut exclusive: BTreeMap<&DeviceRef, &str> = BTreeMap::new();
    let mut per_claim: BTreeMap<(&str, &DeviceRef), (usize, bool)> = BTreeMap::new();
    for rec in records {
        let admin = rec.result.admin_access;
        let e = per_claim
            .entry((rec.claim, &rec.device))
            .or_insert((0, false));
        e.0 += 1;
        e.1 |= admin;
        if admin || rec.shareable {
            continue;
        }
        if let Some(first) = exclusive.get(&rec.device) {
            out.push(Violation::DeviceAllocatedTwice {
                device: rec.device.clone(),
                first: (*first).to_owned(),
                second: rec.claim.to_owned(),
            });
        } else {
            exclusive.insert(&rec.device, rec.claim);
        }
        if let Some(h) = cluster
            .allocations(&rec.device)
            .iter()
            .find(|h| !h.admin_access)
        {
            out.push(Violation::DeviceInUse {
                claim: rec.claim.to_owned(),
                device: rec.device.clone(),
                holder: h.consumer.clone(),
            });
        }
    }
    for ((claim, device), (n, admin)) in per_claim {
        if n > 1 && admin {
            out.push(Violation::DeviceAllocatedTwice {
                device: device.clone(),
                first: claim.to_owned(),
                second: claim.to_owned(),
            });
        }
    }
    // Shares: ids and capacity.
    let mut share_ids: BTreeMap<&DeviceRef, BTreeSet<&str>> = BTreeMap::new();
    let mut consumed: BTreeMap<&DeviceRef, (DeviceId, BTreeMap<&str, Quantity>)> = BTreeMap::new();
    for rec in records
        .iter()
        .filter(|r| r.shareable && !r.result.admin_access)
    {
        if let Some(id) = rec.result.share_id.as_deref().filter(|s| !s.is_empty()) {
            let ids = share_ids.entry(&rec.device).or_insert_with(|| {
                cluster
                    .allocations(&rec.device)
                    .iter()
                    .filter_map(|h| h.share_id.as_deref())
                    .collect()
            });
            if !ids.insert(id) {
                out.push(Violation::DuplicateShareId {
                    device: rec.device.clone(),
                    share_id: id.to_owned(),
                });
            }
        }
        let sums = &mut consumed
            .entry(&rec.device)
            .or_insert_with(|| (rec.id, BTreeMap::new()))
            .1;
        for (name, q) in &rec.result.consumed_capacity {
            let e = sums.entry(name.as_str()).or_insert(Quantity::ZERO);
            *e = e.saturating_add(*q);
        }
    }
    for (device, (id, sums)) in &consumed {
        let Some(dv) = cluster.device(*id) else {
            continue;
        };
        let committed = cluster.consumed_capacity(device);
        for (name, cap) in &dv.device.capacity {
            let already = committed.get(name).copied().unwrap_or(Quantity::ZERO);
            let requested = sums.get(name.as_str()).copied().unwrap_or(Quantity::ZERO);
            if already.saturating_add(requested) > cap.value {
                out.push(Violation::CapacityExceeded {
                    device: (*device).clone(),
                    capacity: name.clone(),
                    committed: already,
                    requested,
                    value: cap.value,
                });
            }
        }
    }
    // Shared counters, charged once per newly allocated device.
    let mut charged: BTreeSet<&DeviceRef> = BTreeSet::new();
    let mut per_pool: BTreeMap<(&str, &str), Counters<'_>> = BTreeMap::new();
    for rec in records.iter().filter(|r| !r.result.admin_access) {
        let Some(dv) = cluster.device(rec.id) else {
            continue;
        };
        if dv.device.consumes_counters.is_empty()
            || cluster
                .allocations(&rec.device)
                .iter()
                .any(|h| !h.admin_access)
            || !charged.insert(&rec.device)
        {
            continue;
        }
        let used = per_pool
            .entry((rec.device.driver.as_str(), rec.device.pool.as_str()))
            .or_default();
        for c in &dv.device.consumes_counters {
            for (counter, q) in &c.counters {
                let e = used
                    .entry((c.counter_set.as_str(), counter.as_str()))
                    .or_insert(Quantity::ZERO);
                *e = e.saturating_add(*q);
            }
        }
    }
    for ((driver, pool), used) in per_pool {
        let available = cluster.counters_available(driver, pool);
        let mut keys: BTreeSet<(&str, &str)> = available
            .keys()
            .map(|(s, c)| (s.as_str(), c.as_str()))
            .collect();
        keys.extend(used.keys().copied());
        for (set, counter) in keys {
            let needed = used.get(&(set, counter)).copied().unwrap_or(Quantity::ZERO);
            let left = available
                .get(&(set.to_owned(), counter.to_owned()))
                .copied()
                .unwrap_or(Quantity::ZERO);
            if needed > left {
                out.push(Violation::CountersExceeded {
                    driver: driver.to_owned(),
                    pool: pool.to_owned(),
                    counter_set: set.to_owned(),
                    counter: counter.to_owned(),
                    needed,
                    available: left,
                });
            }
        }
    }
}
