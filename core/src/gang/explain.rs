//! Why a gang is pending: a structured explanation in the style of pubgrub's
//! derivation trees.
//!
//! [`Cluster::explain_gang`] places the gang like [`Cluster::place_gang`]; when it does
//! not fit, it diagnoses every node for every pod shape (the first filter that rejects
//! it, as kube-scheduler reports per node; but capacity others hold — scalars and
//! devices — is reported in full, since freeing only part of it may not help) against
//! every claim a pod may have to allocate there (its own and the shared claims it
//! uses; node-local and network-attached devices alike),
//! and turns the rejections into **facts**:
//! leaf statements such as "12 devices on nodes n3, n7 carry
//! `gpu.example.com/ecc=fatal:NoSchedule`, not tolerated" or "rack r2 can host 7 of the
//! 8 pods". Each fact is classed as *resolvable* (capacity held by other workloads:
//! waiting or preemption may free it) or *unresolvable* (taints, selectors, cordons,
//! hardware that is too small, topology).
//!
//! A node the index's counts admit (class bits, free, tolerated) is first tried with
//! the allocator for one pod of the shape; where even that fails, the node is diagnosed
//! like a rejected one. Per (sub)request, the census of the node (`allocate/census.rs`,
//! explanations only) follows its devices through the class, each of the request's own
//! selectors, its capacity demand and the shared counters (MIG-style partitions of one
//! device), counted on the hardware whatever others hold: the first stage that leaves
//! too few is a fact naming the request and its selector, capacity or counters, with
//! counts; the census is repeated with that stage lifted, so every stage that blocks
//! is a fact. Then taints and what others hold (devices, consumed counters) among the
//! survivors, and the claim's `matchAttribute` / `distinctAttribute` constraints over
//! them. A `firstAvailable` request none of whose subrequests can be served reports
//! each of them.
//!
//! The **minimal blocking set** is the smallest set of facts whose removal lets the gang
//! fit: every fact that can be relaxed is undone on a scratch copy (tolerate the taint,
//! free the devices in use, uncordon the nodes, ...) one subset at a time, smallest
//! subsets first, and the placement is tried again. The outcome uses the vocabulary of
//! KEP-6012 and the PodGroup scheduling cycle: [`GangStatus::Scheduled`], `Wait`
//! (fewer pods exist than `minCount`), `Unschedulable` (freeing capacity — waiting or
//! preemption — would let it fit) and `UnschedulableAndUnresolvable` (it would not fit
//! even on a cluster where nothing else runs).

use core::fmt;

use crate::alloc_prelude::*;
use crate::allocate::Skip;
use crate::cel::Selector;
use crate::cluster::Cluster;
use crate::cluster::bits::{DeviceSet, SparseDeviceSet};
use crate::gang::filter::{Rejection, ShapeFilter};
use crate::gang::placer::{Gang, GangError, GangOptions, GangOutcome, SearchStats, StepBudget};
use crate::model::claim::{
    AllocationMode, ConstraintKind, DeviceRequestKind, ResourceClaim, ResourceClaimSpec,
    split_request_ref,
};
use crate::model::class::DeviceSelector;
use crate::model::decision::PlacementDecision;
use crate::model::workload::{ClaimSource, Pod, PodGroup};
use crate::{
    DeviceRef, DeviceTaint, DeviceToleration, DeviceTolerationOperator, Quantity, Taint,
    Toleration, TolerationOperator,
};

/// The outcome of a gang's scheduling attempt (KEP-6012's feasibility states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum GangStatus {
    /// Placed: at least `minCount` pods bound together.
    Scheduled,
    /// Fewer pods exist than `minCount`: the group waits for more (not an error).
    Wait,
    /// Does not fit now, but would if capacity held by other workloads were freed
    /// (waiting for it, or preempting it).
    Unschedulable,
    /// Would not fit even if nothing else ran: taints, selectors, cordons, hardware or
    /// topology must change first.
    UnschedulableAndUnresolvable,
    /// Undecided: a step budget ran out before the placement was decided (a placement
    /// may exist); [`Explanation::budget`] says which budget and how to raise it.
    Undecided,
}

impl GangStatus {
    /// The name as Kubernetes spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            GangStatus::Scheduled => "Scheduled",
            GangStatus::Wait => "Wait",
            GangStatus::Unschedulable => "Unschedulable",
            GangStatus::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            GangStatus::Undecided => "Undecided",
        }
    }
}

impl fmt::Display for GangStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether removing a fact is within reach of the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Resolution {
    /// Capacity held by other workloads: waiting or preemption may free it.
    WaitOrPreempt,
    /// Only a change to the cluster or to the workload helps.
    Unresolvable,
}

/// One leaf statement of an explanation. Node lists are complete and sorted by name;
/// the text renderer shortens them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum Fact {
    /// Fewer members exist than `minCount`.
    NotEnoughPods {
        /// Members that exist (pending and running).
        present: usize,
        /// `minCount`.
        min_count: u32,
    },
    /// The nodes are cordoned (`spec.unschedulable`).
    Cordoned {
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The nodes do not match the pods' `nodeSelector` or required node affinity.
    NodeSelector {
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The nodes carry a node taint the pods do not tolerate.
    NodeTaint {
        /// `key=value:Effect`.
        taint: Taint,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// A scalar resource is too small on the nodes even when nothing else runs there.
    ResourceTooSmall {
        /// The resource (`cpu`, `memory`, ...).
        resource: String,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// A scalar resource is used up by other pods on the nodes.
    ResourceInUse {
        /// The resource.
        resource: String,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// Devices the pods could use carry a device taint their claims do not tolerate.
    DeviceTaint {
        /// The taint.
        taint: DeviceTaint,
        /// How many such devices (on the nodes below).
        devices: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// Devices the pods could use are allocated to other claims.
    DevicesInUse {
        /// How many.
        devices: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// Devices the pods could use are held by the unit itself: the claims of its running
    /// members, or its allocated shared claims. Not another workload's capacity (no
    /// preemption frees them); they free up only when those members end, so no
    /// blocking set lifts this fact.
    HeldByOwnMembers {
        /// How many.
        devices: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The nodes have fewer devices of the requested class than one pod needs.
    TooFewDevices {
        /// The class.
        class: String,
        /// Devices one pod needs for the request.
        needed: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// No device in the cluster matches a request's class.
    NoDeviceOfClass {
        /// The claim (`namespace/name`) of the first pod asking.
        claim: String,
        /// The request.
        request: String,
        /// The class.
        class: String,
    },
    /// A request's own selectors leave fewer devices of its class on the nodes than
    /// one pod needs (counted on the hardware, whatever others hold).
    RequestSelector {
        /// The claim (`namespace/name`) of the first pod asking.
        claim: String,
        /// The request, or `request/subrequest`.
        request: String,
        /// The class.
        class: String,
        /// Usable devices of the class on the nodes.
        of_class: u32,
        /// Per selector of the request, in order: its expression and how many of those
        /// devices it and the selectors before it accept.
        selectors: Vec<(String, u32)>,
        /// Devices one pod needs for the request.
        needed: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The devices a request's class and selectors accept cannot serve its capacity
    /// demand, even with nothing else allocated on them.
    CapacityTooSmall {
        /// The claim (`namespace/name`) of the first pod asking.
        claim: String,
        /// The request, or `request/subrequest`.
        request: String,
        /// The capacity it asks for, by name.
        capacity: Vec<(String, Quantity)>,
        /// Devices its class and selectors accept on the nodes.
        matching: u32,
        /// Of those, how many can serve the demand.
        fit: u32,
        /// Devices one pod needs for the request.
        needed: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The partitionable devices a request could use draw on shared counters (a
    /// pool's counter sets, as a GPU's memory slices for its MIG devices) that cannot
    /// cover as many of them as one pod needs, even with nothing allocated.
    CountersTooFew {
        /// The claim (`namespace/name`) of the first pod asking.
        claim: String,
        /// The request, or `request/subrequest`.
        request: String,
        /// Devices its class, selectors and capacity accept on the nodes.
        matching: u32,
        /// How many of them the counters admit together (at most).
        fit: u32,
        /// Devices one pod needs for the request.
        needed: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// Free devices the pods could use draw on shared counters that devices allocated
    /// to other claims consume (a partition, or the whole device, of the same counter
    /// set).
    CountersInUse {
        /// How many devices the consumed counters block.
        devices: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// A claim's `matchAttribute` / `distinctAttribute` constraint cannot hold with the
    /// devices its requests could use on the nodes, whatever others hold.
    Constraint {
        /// The claim (`namespace/name`) of the first pod asking.
        claim: String,
        /// `matchAttribute` or `distinctAttribute`.
        kind: String,
        /// The attribute.
        attribute: String,
        /// The requests it covers (empty: all of them).
        requests: Vec<String>,
        /// Devices the requests need together.
        needed: u32,
        /// `matchAttribute`: the most of their devices on a node sharing one value;
        /// `distinctAttribute`: the most distinct values on a node.
        best: u32,
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The devices are there, but no combination satisfies the claims' constraints
    /// and selectors on the nodes.
    NoCombination {
        /// The nodes.
        nodes: Vec<String>,
    },
    /// The pods use a claim that is allocated already, and a device of it carries a
    /// `NoExecute` taint its allocation does not tolerate: new pods may not reserve it
    /// (the pods using it now are being evicted).
    ClaimDeviceTainted {
        /// The claim, `namespace/name`.
        claim: String,
        /// The device, `driver/pool/device`.
        device: String,
        /// The taint.
        taint: DeviceTaint,
    },
    /// No node carries the topology key.
    TopologyKeyAbsent {
        /// The node-label key.
        key: String,
    },
    /// The nodes that can host the pods one at a time cannot hold enough of them
    /// together (the gang's own pods compete for cpu, devices, ...).
    NotEnoughRoom {
        /// The nodes that can host at least one pod.
        nodes: Vec<String>,
        /// Pods that must be placed together.
        needed: usize,
        /// The most placed together.
        hosts: usize,
    },
    /// The best topology domain cannot hold the gang.
    DomainTooSmall {
        /// The node-label key.
        key: String,
        /// The domain (label value) that can host the most pods.
        domain: String,
        /// Pods it can host at most.
        hosts: u64,
        /// Pods the gang must place together.
        needed: usize,
    },
}

impl Fact {
    /// Whether removing the fact is within the scheduler's reach.
    pub fn resolution(&self) -> Resolution {
        match self {
            Fact::ResourceInUse { .. }
            | Fact::DevicesInUse { .. }
            | Fact::HeldByOwnMembers { .. }
            | Fact::CountersInUse { .. }
            | Fact::NotEnoughPods { .. } => Resolution::WaitOrPreempt,
            _ => Resolution::Unresolvable,
        }
    }

    /// The nodes the fact is about (empty for facts about no node).
    pub fn nodes(&self) -> &[String] {
        match self {
            Fact::Cordoned { nodes }
            | Fact::NodeSelector { nodes }
            | Fact::NodeTaint { nodes, .. }
            | Fact::ResourceTooSmall { nodes, .. }
            | Fact::ResourceInUse { nodes, .. }
            | Fact::DeviceTaint { nodes, .. }
            | Fact::DevicesInUse { nodes, .. }
            | Fact::HeldByOwnMembers { nodes, .. }
            | Fact::TooFewDevices { nodes, .. }
            | Fact::RequestSelector { nodes, .. }
            | Fact::CapacityTooSmall { nodes, .. }
            | Fact::CountersTooFew { nodes, .. }
            | Fact::CountersInUse { nodes, .. }
            | Fact::Constraint { nodes, .. }
            | Fact::NotEnoughRoom { nodes, .. }
            | Fact::NoCombination { nodes } => nodes,
            _ => &[],
        }
    }

    fn nodes_mut(&mut self) -> Option<&mut Vec<String>> {
        match self {
            Fact::Cordoned { nodes }
            | Fact::NodeSelector { nodes }
            | Fact::NodeTaint { nodes, .. }
            | Fact::ResourceTooSmall { nodes, .. }
            | Fact::ResourceInUse { nodes, .. }
            | Fact::DeviceTaint { nodes, .. }
            | Fact::DevicesInUse { nodes, .. }
            | Fact::HeldByOwnMembers { nodes, .. }
            | Fact::TooFewDevices { nodes, .. }
            | Fact::RequestSelector { nodes, .. }
            | Fact::CapacityTooSmall { nodes, .. }
            | Fact::CountersTooFew { nodes, .. }
            | Fact::CountersInUse { nodes, .. }
            | Fact::Constraint { nodes, .. }
            | Fact::NotEnoughRoom { nodes, .. }
            | Fact::NoCombination { nodes } => Some(nodes),
            _ => None,
        }
    }

    /// Whether `other` states the same thing (up to nodes and counts).
    fn same_subject(&self, other: &Fact) -> bool {
        match (self, other) {
            (Fact::NodeTaint { taint: a, .. }, Fact::NodeTaint { taint: b, .. }) => {
                a.key == b.key && a.value == b.value && a.effect == b.effect
            }
            (Fact::DeviceTaint { taint: a, .. }, Fact::DeviceTaint { taint: b, .. }) => {
                a.key == b.key && a.value == b.value && a.effect == b.effect
            }
            (
                Fact::ResourceTooSmall { resource: a, .. },
                Fact::ResourceTooSmall { resource: b, .. },
            )
            | (Fact::ResourceInUse { resource: a, .. }, Fact::ResourceInUse { resource: b, .. }) => {
                a == b
            }
            (
                Fact::TooFewDevices {
                    class: a,
                    needed: x,
                    ..
                },
                Fact::TooFewDevices {
                    class: b,
                    needed: y,
                    ..
                },
            ) => a == b && x == y,
            (
                Fact::ClaimDeviceTainted { claim: a, .. },
                Fact::ClaimDeviceTainted { claim: b, .. },
            ) => a == b,
            (
                Fact::RequestSelector {
                    claim: a,
                    request: x,
                    ..
                },
                Fact::RequestSelector {
                    claim: b,
                    request: y,
                    ..
                },
            )
            | (
                Fact::CapacityTooSmall {
                    claim: a,
                    request: x,
                    ..
                },
                Fact::CapacityTooSmall {
                    claim: b,
                    request: y,
                    ..
                },
            )
            | (
                Fact::CountersTooFew {
                    claim: a,
                    request: x,
                    ..
                },
                Fact::CountersTooFew {
                    claim: b,
                    request: y,
                    ..
                },
            ) => a == b && x == y,
            (
                Fact::Constraint {
                    claim: c1,
                    attribute: a1,
                    kind: k1,
                    ..
                },
                Fact::Constraint {
                    claim: c2,
                    attribute: a2,
                    kind: k2,
                    ..
                },
            ) => c1 == c2 && a1 == a2 && k1 == k2,
            _ => core::mem::discriminant(self) == core::mem::discriminant(other),
        }
    }
}

/// The plural ending for a count.
fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The verb form agreeing with a node list.
fn verb<'v>(nodes: &[String], one: &'v str, many: &'v str) -> &'v str {
    if nodes.len() == 1 { one } else { many }
}

/// Up to three node names, then "+N".
struct Nodes<'a>(&'a [String]);

impl fmt::Display for Nodes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        write!(f, "{n} node{} (", if n == 1 { "" } else { "s" })?;
        for (i, name) in self.0.iter().take(3).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        if n > 3 {
            write!(f, ", +{}", n - 3)?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::NotEnoughPods { present, min_count } => write!(
                f,
                "only {present} pod{} exist{}, minCount is {min_count}",
                if *present == 1 { "" } else { "s" },
                if *present == 1 { "s" } else { "" }
            ),
            Fact::Cordoned { nodes } => {
                write!(f, "{} {} cordoned", Nodes(nodes), verb(nodes, "is", "are"))
            }
            Fact::NodeSelector { nodes } => write!(
                f,
                "{} {} not match the pods' node selector or affinity",
                Nodes(nodes),
                verb(nodes, "does", "do")
            ),
            Fact::NodeTaint { taint, nodes } => write!(
                f,
                "{} {} taint {taint}, not tolerated",
                Nodes(nodes),
                verb(nodes, "carries", "carry")
            ),
            Fact::ResourceTooSmall { resource, nodes } => write!(
                f,
                "{} {} less {resource} than a pod requests",
                Nodes(nodes),
                verb(nodes, "has", "have")
            ),
            Fact::ResourceInUse { resource, nodes } => {
                write!(f, "{resource} is used up by other pods on {}", Nodes(nodes))
            }
            Fact::DeviceTaint {
                taint,
                devices,
                nodes,
            } => write!(
                f,
                "{devices} device{} on {} {} {taint}, not tolerated",
                if *devices == 1 { "" } else { "s" },
                Nodes(nodes),
                if *devices == 1 { "carries" } else { "carry" }
            ),
            Fact::ClaimDeviceTainted {
                claim,
                device,
                taint,
            } => write!(
                f,
                "claim {claim} is allocated and its device {device} carries {taint}, not \
                 tolerated: new pods may not reserve it"
            ),
            Fact::DevicesInUse { devices, nodes } => write!(
                f,
                "{devices} device{} on {} {} allocated to other claims",
                if *devices == 1 { "" } else { "s" },
                Nodes(nodes),
                if *devices == 1 { "is" } else { "are" }
            ),
            Fact::HeldByOwnMembers { devices, nodes } => write!(
                f,
                "{devices} device{} on {} {} held by this unit's own running members",
                if *devices == 1 { "" } else { "s" },
                Nodes(nodes),
                if *devices == 1 { "is" } else { "are" }
            ),
            Fact::TooFewDevices {
                class,
                needed,
                nodes,
            } => write!(
                f,
                "{} {} fewer than {needed} device{} of class {class}",
                Nodes(nodes),
                verb(nodes, "has", "have"),
                if *needed == 1 { "" } else { "s" }
            ),
            Fact::NoDeviceOfClass {
                claim,
                request,
                class,
            } => write!(
                f,
                "no device matches class {class} (claim {claim}, request {request})"
            ),
            Fact::RequestSelector {
                claim,
                request,
                class,
                of_class,
                selectors,
                needed,
                nodes,
            } => {
                write!(
                    f,
                    "claim {claim}, request {request}: on {}, {of_class} device{} match{} class \
                     {class}",
                    Nodes(nodes),
                    plural(*of_class),
                    if *of_class == 1 { "es" } else { "" }
                )?;
                // Every selector that removed devices, with what is left after it.
                let mut before = *of_class;
                for (expr, n) in selectors {
                    if *n < before {
                        write!(f, ", {n} match the request's selector `{expr}`")?;
                    }
                    before = *n;
                }
                write!(f, " ({needed} needed per pod)")
            }
            Fact::CapacityTooSmall {
                claim,
                request,
                capacity,
                matching,
                fit,
                needed,
                nodes,
            } => {
                write!(f, "claim {claim}, request {request} asks for capacity ")?;
                for (i, (name, q)) in capacity.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}={q}")?;
                }
                write!(
                    f,
                    ": on {}, {fit} of the {matching} matching device{} can provide it ({needed} \
                     needed per pod)",
                    Nodes(nodes),
                    plural(*matching)
                )
            }
            Fact::CountersTooFew {
                claim,
                request,
                matching,
                fit,
                needed,
                nodes,
            } => write!(
                f,
                "claim {claim}, request {request}: on {}, the shared counters of the {matching} \
                 matching device{} admit at most {fit} together, even with nothing allocated \
                 ({needed} needed per pod)",
                Nodes(nodes),
                plural(*matching)
            ),
            Fact::CountersInUse { devices, nodes } => write!(
                f,
                "{devices} free device{} on {} draw{} on shared counters that devices \
                 allocated to other claims consume",
                plural(*devices),
                Nodes(nodes),
                if *devices == 1 { "s" } else { "" }
            ),
            Fact::Constraint {
                claim,
                kind,
                attribute,
                requests,
                needed,
                best,
                nodes,
            } => {
                write!(f, "claim {claim}: {kind} {attribute}")?;
                if !requests.is_empty() {
                    write!(f, " (requests {})", requests.join(", "))?;
                }
                if kind == "distinctAttribute" {
                    write!(
                        f,
                        ": {needed} devices need distinct values, but {} {} at most {best} \
                         value{} among the devices the requests could use",
                        Nodes(nodes),
                        verb(nodes, "has", "have"),
                        plural(*best)
                    )
                } else {
                    write!(
                        f,
                        ": {needed} devices need one common value, but at most {best} of the \
                         devices the requests could use on {} share one",
                        Nodes(nodes)
                    )
                }
            }
            Fact::NoCombination { nodes } => write!(
                f,
                "{}: no combination of devices satisfies the claims' constraints and selectors",
                Nodes(nodes)
            ),
            Fact::TopologyKeyAbsent { key } => write!(f, "no node has the label {key}"),
            Fact::NotEnoughRoom {
                nodes,
                needed,
                hosts,
            } => write!(
                f,
                "{} can each host a pod but together hold only {hosts} of the {needed} pod{}",
                Nodes(nodes),
                plural(u32::try_from(*needed).unwrap_or(u32::MAX))
            ),
            Fact::DomainTooSmall {
                key,
                domain,
                hosts,
                needed,
            } => write!(
                f,
                "the largest {key} domain, {domain}, can host {hosts} of the {needed} pods"
            ),
        }
    }
}

/// One pod shape (interchangeable pods) of the gang.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ShapeReport {
    /// Its pending pods (`namespace/name`).
    pub pods: Vec<String>,
    /// Devices one pod takes at least.
    pub devices_per_pod: u64,
    /// Nodes that may host at least one of its pods.
    pub nodes: usize,
    /// Pods of this shape those nodes could host at most (counted per node).
    pub capacity: u64,
    /// The facts about its rejected nodes (indices into [`Explanation::facts`]).
    pub facts: Vec<usize>,
}

/// Why a gang is (not) placed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Explanation {
    /// The PodGroup (`namespace/name`), or `None` for standalone pods.
    pub group: Option<String>,
    /// Without a group, the pod explained (`namespace/name`) when it is one pod.
    pub pod: Option<String>,
    /// The outcome.
    pub status: GangStatus,
    /// Pending pods that had to be placed together.
    pub required: usize,
    /// The most of them any attempt placed.
    pub best: usize,
    /// Members already running.
    pub running: usize,
    /// The placement, when scheduled.
    pub decision: Option<PlacementDecision>,
    /// The pod shapes, with their facts.
    pub shapes: Vec<ShapeReport>,
    /// Every fact found.
    pub facts: Vec<Fact>,
    /// The minimal blocking set (indices into `facts`): removing these lets the gang fit.
    pub blocking: Vec<usize>,
    /// Whether `blocking` was proven minimal (every smaller set was tried).
    pub minimal: bool,
    /// Whether the search ran out of steps: the outcome is undecided (a placement may
    /// exist), and [`budget`](Self::budget) says which budget.
    pub budget_exhausted: bool,
    /// The budget that ran out, when one did.
    pub budget: Option<BudgetExhaustion>,
    /// What the placement's search did (the relaxation trials behind the blocking set
    /// are not counted).
    pub search: SearchStats,
}

/// A step budget that ran out before a placement was decided, as an explanation
/// reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct BudgetExhaustion {
    /// Which budget.
    pub budget: StepBudget,
    /// Its value: the steps it allows (per allocator call, for
    /// [`StepBudget::Allocator`]).
    pub limit: u64,
}

impl fmt::Display for BudgetExhaustion {
    /// Which budget, its value and where to raise it, as in `the gang search's step
    /// budget (100000 steps) ran out before an answer was known: raise it to search
    /// further (GangOptions::step_budget, --step-budget, stepBudget)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, per) = match self.budget {
            StepBudget::Gang => ("the gang search's", ""),
            StepBudget::Allocator => ("a claim allocation's", " per call"),
        };
        write!(
            f,
            "{what} step budget ({} step{}{per}) ran out before an answer was known: raise it \
             to search further ({})",
            self.limit,
            if self.limit == 1 { "" } else { "s" },
            self.budget.settings()
        )
    }
}

impl Explanation {
    /// What is explained: `PodGroup ns/name`, `Pod ns/name`, or `pods`.
    fn subject(&self) -> String {
        match (&self.group, &self.pod) {
            (Some(g), _) => format!("PodGroup {g}"),
            (None, Some(p)) => format!("Pod {p}"),
            (None, None) => String::from("pods"),
        }
    }

    /// `B of R pods fit` (`B of 1 pod fits`).
    fn fit_count(&self) -> String {
        if self.required == 1 {
            format!("{} of 1 pod fits", self.best)
        } else {
            format!("{} of {} pods fit", self.best, self.required)
        }
    }

    /// The one-line summary (what `PodScheduled=False` carries as its message).
    pub fn summary(&self) -> String {
        let what = self.subject();
        match self.status {
            GangStatus::Scheduled => format!("{what}: scheduled"),
            GangStatus::Wait => match self.facts.first() {
                Some(f) => format!("{what}: waiting: {f}"),
                None => format!("{what}: waiting"),
            },
            _ if self.budget.is_some() || self.budget_exhausted => match &self.budget {
                Some(b) => format!("{what}: undecided: {b}"),
                None => format!("{what}: undecided: a step budget ran out"),
            },
            _ => {
                let mut s = format!("{what}: {}", self.fit_count());
                for (i, &b) in self.blocking.iter().enumerate() {
                    s.push_str(if i == 0 { ": " } else { "; " });
                    s.push_str(&self.facts[b].to_string());
                }
                s
            }
        }
    }
}

impl fmt::Display for Explanation {
    /// The derivation tree as text (see the module docs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.subject();
        match self.status {
            GangStatus::Scheduled => {
                let n = self.decision.as_ref().map_or(0, |d| d.bindings.len());
                let s = if n == 1 { "" } else { "s" };
                // What-if wording: explaining places nothing.
                return writeln!(f, "{what}: fits now ({n} pod{s} placed together)");
            }
            GangStatus::Wait => {
                writeln!(f, "{what}: Wait")?;
                for fact in &self.facts {
                    writeln!(f, "└─ {fact}")?;
                }
                return Ok(());
            }
            GangStatus::Undecided => {
                writeln!(f, "{what}: Undecided (a step budget ran out)")?;
            }
            GangStatus::Unschedulable => {
                writeln!(
                    f,
                    "{what}: Unschedulable (capacity other workloads hold is in the way)"
                )?;
            }
            GangStatus::UnschedulableAndUnresolvable => {
                writeln!(f, "{what}: UnschedulableAndUnresolvable")?;
            }
        }
        if self.budget_exhausted {
            writeln!(
                f,
                "├─ needs {} pending pod{} placed together ({} running); {} placed together \
                 before the budget ran out",
                self.required,
                if self.required == 1 { "" } else { "s" },
                self.running,
                self.best
            )?;
        } else {
            writeln!(
                f,
                "├─ needs {} pending pod{} placed together ({} running); at most {} fit",
                self.required,
                if self.required == 1 { "" } else { "s" },
                self.running,
                self.best
            )?;
        }
        if let Some(b) = &self.budget {
            writeln!(f, "├─ undecided: {b}; a placement may still exist")?;
        } else if self.budget_exhausted {
            writeln!(
                f,
                "├─ undecided: a step budget ran out; a placement may still exist"
            )?;
        }
        let shown: Vec<usize> = (0..self.facts.len())
            .filter(|i| !self.shapes.iter().any(|s| s.facts.contains(i)))
            .collect();
        for (si, s) in self.shapes.iter().enumerate() {
            let names = match s.pods.as_slice() {
                [one] => one.clone(),
                [first, .., last] => format!("{first} … {last}"),
                [] => String::new(),
            };
            writeln!(
                f,
                "├─ shape {}: {} pod{} ({names}), {} device{} each: {} node{} can host {}",
                si + 1,
                s.pods.len(),
                if s.pods.len() == 1 { "" } else { "s" },
                s.devices_per_pod,
                if s.devices_per_pod == 1 { "" } else { "s" },
                s.nodes,
                if s.nodes == 1 { "" } else { "s" },
                s.capacity
            )?;
            for (j, &fi) in s.facts.iter().enumerate() {
                let branch = if j + 1 == s.facts.len() {
                    "└─"
                } else {
                    "├─"
                };
                writeln!(f, "│  {branch} [{}] {}", fi + 1, self.facts[fi])?;
            }
        }
        for fi in shown {
            writeln!(f, "├─ [{}] {}", fi + 1, self.facts[fi])?;
        }
        if self.blocking.is_empty() {
            if self.budget_exhausted {
                return writeln!(f, "└─ no blocking set sought: the search is undecided");
            }
            return writeln!(f, "└─ no blocking set found");
        }
        let ids: Vec<String> = self
            .blocking
            .iter()
            .map(|b| format!("[{}]", b + 1))
            .collect();
        let resolvable = self
            .blocking
            .iter()
            .all(|&b| self.facts[b].resolution() == Resolution::WaitOrPreempt);
        writeln!(
            f,
            "└─ {} blocking set: {} ({})",
            if self.minimal { "minimal" } else { "a" },
            ids.join(" "),
            if resolvable {
                "capacity others hold"
            } else {
                "unresolvable"
            }
        )
    }
}

/// A change that undoes one fact on a scratch copy.
enum Relaxation {
    Uncordon(Vec<String>),
    DropNodeSelector,
    TolerateNodeTaint(Taint),
    GrowResource(String, Vec<String>),
    DropResource(String),
    TolerateDeviceTaint(DeviceTaint),
    FreeDevices(Vec<String>),
    /// Drop these selectors from the request (`request` or `request/subrequest`).
    DropSelectors(String, Vec<String>),
    /// Drop the request's capacity demand.
    DropCapacity(String),
    /// Drop the constraints on this attribute.
    DropConstraint(String),
}

impl Fact {
    fn relaxation(&self) -> Option<Relaxation> {
        Some(match self {
            Fact::Cordoned { nodes } => Relaxation::Uncordon(nodes.clone()),
            Fact::NodeSelector { .. } => Relaxation::DropNodeSelector,
            Fact::NodeTaint { taint, .. } => Relaxation::TolerateNodeTaint(taint.clone()),
            Fact::ResourceInUse { resource, nodes } => {
                Relaxation::GrowResource(resource.clone(), nodes.clone())
            }
            Fact::ResourceTooSmall { resource, .. } => Relaxation::DropResource(resource.clone()),
            Fact::DeviceTaint { taint, .. } => Relaxation::TolerateDeviceTaint(taint.clone()),
            Fact::DevicesInUse { nodes, .. } | Fact::CountersInUse { nodes, .. } => {
                Relaxation::FreeDevices(nodes.clone())
            }
            Fact::RequestSelector {
                request, selectors, ..
            } => Relaxation::DropSelectors(
                request.clone(),
                selectors.iter().map(|(e, _)| e.clone()).collect(),
            ),
            Fact::CapacityTooSmall { request, .. } => Relaxation::DropCapacity(request.clone()),
            Fact::Constraint { attribute, .. } => Relaxation::DropConstraint(attribute.clone()),
            _ => return None,
        })
    }
}

/// Calls `f` with the selectors and capacity demand of `claim`'s (sub)request named
/// `reference` (`request` or `request/subrequest`), if it has one.
fn for_request(
    claim: &mut ResourceClaim,
    reference: &str,
    mut f: impl FnMut(&mut Vec<DeviceSelector>, &mut BTreeMap<String, Quantity>),
) {
    let (name, sub) = split_request_ref(reference);
    for r in claim.spec.requests.iter_mut().filter(|r| r.name == name) {
        match (&mut r.kind, sub) {
            (DeviceRequestKind::Exactly(e), None) => f(&mut e.selectors, &mut e.capacity),
            (DeviceRequestKind::FirstAvailable(subs), Some(sub)) => {
                for s in subs.iter_mut().filter(|s| s.name == sub) {
                    f(&mut s.selectors, &mut s.capacity);
                }
            }
            _ => {}
        }
    }
}

/// Most subsets of facts tried for the minimal blocking set.
const MAX_TRIALS: usize = 64;

impl Cluster {
    /// Places the gang like [`place_gang`](Self::place_gang) and explains the outcome:
    /// for a gang that does not fit, the facts, the minimal blocking set and the status
    /// (see the module docs). Does not change the cluster.
    pub fn explain_gang(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<Explanation, GangError> {
        let (outcome, search) = self.place_gang_with_stats(group, pods, claims, options)?;
        let mut gang = self.gang_intake(group, pods, claims, options)?;
        let mut ex = Explanation {
            group: group.map(|g| format!("{}/{}", g.namespace, g.name)),
            pod: match pods {
                [p] if group.is_none() => Some(format!("{}/{}", p.namespace, p.name)),
                _ => None,
            },
            status: GangStatus::Unschedulable,
            required: gang.required,
            best: 0,
            running: gang.running.len(),
            decision: None,
            shapes: Vec::new(),
            facts: Vec::new(),
            blocking: Vec::new(),
            minimal: false,
            budget_exhausted: false,
            budget: None,
            search,
        };
        match outcome {
            GangOutcome::Placed(d) => {
                ex.status = GangStatus::Scheduled;
                ex.best = d.bindings.len();
                ex.decision = Some(d);
                return Ok(ex);
            }
            GangOutcome::WaitingForPods { present, min_count } => {
                ex.status = GangStatus::Wait;
                ex.facts.push(Fact::NotEnoughPods { present, min_count });
                ex.blocking.push(0);
                ex.minimal = true;
                return Ok(ex);
            }
            GangOutcome::Unschedulable { best, required } => {
                // Without a gang, `required` is the one pod that would make progress.
                ex.best = best;
                ex.required = required;
            }
            GangOutcome::BudgetExhausted { .. } => {
                ex.best = search.best;
                ex.budget_exhausted = true;
                ex.budget = search.exhausted.map(|budget| BudgetExhaustion {
                    budget,
                    limit: budget.value(options),
                });
            }
        }
        // What the unit holds itself is never "other claims", nor freed by a relaxation.
        let own_claims = own_claims(&gang, claims);
        gang.own = self.devices_of(claims, &own_claims);
        // Nodes the index's counts admit but where the allocator cannot serve one pod
        // (its own selectors, constraints, capacity, counters) are diagnosed as such.
        self.refine_caps(&mut gang);
        self.diagnose(&gang, options, &mut ex);
        if ex.budget_exhausted {
            // Undecided: the facts stand, but which of them block is not known, and
            // every relaxation trial would search again (up to the budget each).
            ex.status = GangStatus::Undecided;
            return Ok(ex);
        }
        // Which facts, removed, let the gang fit.
        let trial_options = GangOptions {
            step_budget: (options.step_budget / 4).max(1_000),
            ..options.clone()
        };
        let relaxable: Vec<usize> = (0..ex.facts.len())
            .filter(|&i| ex.facts[i].relaxation().is_some())
            .collect();
        let fits = |set: &[usize]| -> bool {
            let relax: Vec<Relaxation> = set
                .iter()
                .filter_map(|&i| ex.facts[i].relaxation())
                .collect();
            self.fits_relaxed(group, pods, claims, &trial_options, &relax, &own_claims)
        };
        let resolvable: Vec<usize> = relaxable
            .iter()
            .copied()
            .filter(|&i| ex.facts[i].resolution() == Resolution::WaitOrPreempt)
            .collect();
        ex.status = if !resolvable.is_empty() && fits(&resolvable) {
            GangStatus::Unschedulable
        } else {
            GangStatus::UnschedulableAndUnresolvable
        };
        // Smallest subsets first; at equal size, fewer unresolvable facts first.
        let mut trials = 0;
        'sizes: for size in 1..=relaxable.len().min(3) {
            let mut subsets = Vec::new();
            choose(&relaxable, size, &mut Vec::new(), &mut subsets);
            subsets.sort_by_key(|s: &Vec<usize>| {
                s.iter()
                    .filter(|&&i| ex.facts[i].resolution() == Resolution::Unresolvable)
                    .count()
            });
            for s in subsets {
                if trials == MAX_TRIALS {
                    break 'sizes;
                }
                trials += 1;
                if fits(&s) {
                    ex.blocking = s;
                    ex.minimal = true;
                    break 'sizes;
                }
            }
        }
        if ex.blocking.is_empty() {
            let hard: Vec<usize> = (0..ex.facts.len())
                .filter(|i| !relaxable.contains(i))
                .collect();
            if relaxable.len() > 3 && fits(&relaxable) {
                ex.blocking = relaxable;
            } else if hard.is_empty() {
                // Nothing rejects enough nodes on its own: the pods crowd each other out.
                let mut nodes: Vec<String> = gang
                    .shapes
                    .iter()
                    .flat_map(|s| &s.candidates)
                    .filter(|c| c.cap > 0)
                    .filter_map(|c| self.node_by_id(c.node).map(|n| n.name.clone()))
                    .collect();
                let mut hosts = ex.best;
                if nodes.is_empty() && !relaxable.is_empty() {
                    // No node hosts a pod now, and lifting every fact that stops them
                    // still leaves too few: say how few, on those nodes.
                    nodes = relaxable
                        .iter()
                        .flat_map(|&i| ex.facts[i].nodes().iter().cloned())
                        .collect();
                    let relax: Vec<Relaxation> = relaxable
                        .iter()
                        .filter_map(|&i| ex.facts[i].relaxation())
                        .collect();
                    if let Some(GangOutcome::Unschedulable { best, .. }) =
                        self.place_relaxed(group, pods, claims, &trial_options, &relax, &own_claims)
                    {
                        hosts = best;
                    }
                }
                nodes.sort();
                nodes.dedup();
                ex.facts.push(Fact::NotEnoughRoom {
                    nodes,
                    needed: ex.required,
                    hosts,
                });
                ex.blocking = vec![ex.facts.len() - 1];
                ex.minimal = true;
            } else {
                // Nothing the scheduler can relax suffices: the hard facts block.
                ex.minimal = hard.len() == 1;
                ex.blocking = hard;
            }
        }
        Ok(ex)
    }

    /// Whether the gang fits once `relax` is applied to copies of the cluster and the
    /// objects.
    fn fits_relaxed(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
        relax: &[Relaxation],
        own_claims: &BTreeSet<String>,
    ) -> bool {
        matches!(
            self.place_relaxed(group, pods, claims, options, relax, own_claims),
            Some(GangOutcome::Placed(_))
        )
    }

    /// The placement outcome once `relax` is applied to copies of the cluster and the
    /// objects (`None` if the placement fails with an error). Freeing devices never
    /// frees the unit's own (`own_claims`).
    fn place_relaxed(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
        relax: &[Relaxation],
        own_claims: &BTreeSet<String>,
    ) -> Option<GangOutcome> {
        let mut cluster = self.clone();
        let mut pods = pods.to_vec();
        let mut claims = claims.to_vec();
        let pending = |p: &Pod| p.node_name.is_none();
        for r in relax {
            match r {
                Relaxation::Uncordon(nodes) => {
                    for n in nodes {
                        if let Some(mut node) = cluster.node(n).cloned() {
                            node.unschedulable = false;
                            let _ = cluster.replace_node(node);
                        }
                    }
                }
                Relaxation::DropNodeSelector => {
                    for p in pods.iter_mut().filter(|p| pending(p)) {
                        p.node_selector.clear();
                        p.required_node_affinity = None;
                    }
                }
                Relaxation::TolerateNodeTaint(t) => {
                    for p in pods.iter_mut().filter(|p| pending(p)) {
                        p.tolerations.push(Toleration {
                            key: t.key.clone(),
                            operator: TolerationOperator::Equal,
                            value: t.value.clone(),
                            effect: Some(t.effect),
                            toleration_seconds: None,
                        });
                    }
                }
                Relaxation::GrowResource(resource, nodes) => {
                    for n in nodes {
                        let Some(mut node) = cluster.node(n).cloned() else {
                            continue;
                        };
                        let free = cluster
                            .node_free_resources(n)
                            .and_then(|f| f.get(resource).copied())
                            .unwrap_or(Quantity::ZERO);
                        if let Some(total) = node.allocatable.get_mut(resource) {
                            // As if nothing else used it.
                            let used = total.saturating_sub(free);
                            *total = total.saturating_add(used);
                        }
                        let _ = cluster.replace_node(node);
                    }
                }
                Relaxation::DropResource(resource) => {
                    for p in pods.iter_mut().filter(|p| pending(p)) {
                        p.requests.remove(resource);
                    }
                }
                Relaxation::TolerateDeviceTaint(t) => {
                    let tol = DeviceToleration {
                        key: t.key.clone(),
                        operator: DeviceTolerationOperator::Equal,
                        value: t.value.clone(),
                        effect: Some(t.effect.clone()),
                        toleration_seconds: None,
                    };
                    for c in &mut claims {
                        for r in &mut c.spec.requests {
                            match &mut r.kind {
                                DeviceRequestKind::Exactly(e) => e.tolerations.push(tol.clone()),
                                DeviceRequestKind::FirstAvailable(subs) => {
                                    for s in subs {
                                        s.tolerations.push(tol.clone());
                                    }
                                }
                            }
                        }
                    }
                }
                Relaxation::DropSelectors(request, expressions) => {
                    for c in &mut claims {
                        for_request(c, request, |sels, _| {
                            sels.retain(|s| !expressions.contains(&s.cel));
                        });
                    }
                }
                Relaxation::DropCapacity(request) => {
                    for c in &mut claims {
                        for_request(c, request, |_, capacity| capacity.clear());
                    }
                }
                Relaxation::DropConstraint(attribute) => {
                    for c in &mut claims {
                        c.spec.constraints.retain(|k| k.attribute() != attribute);
                    }
                }
                Relaxation::FreeDevices(nodes) => {
                    for n in nodes {
                        let Some(id) = cluster.node_id(n) else {
                            continue;
                        };
                        // Its own devices and the network-attached ones it reaches.
                        let devices: Vec<_> = if cluster.has_shared_devices() {
                            cluster.devices_reachable_from(id).iter().collect()
                        } else {
                            cluster
                                .node_devices(id)
                                .map(|d| d.iter().collect())
                                .unwrap_or_default()
                        };
                        for d in devices {
                            let Some(r) = cluster.device(d).map(|v| v.device_ref()) else {
                                continue;
                            };
                            let holders: Vec<String> = cluster
                                .allocations(&r)
                                .iter()
                                .map(|a| a.consumer.clone())
                                .filter(|c| !own_claims.contains(c))
                                .collect();
                            for h in holders {
                                let _ = cluster.release(&r, &h);
                            }
                        }
                    }
                }
            }
        }
        cluster.place_gang_mut(group, &pods, &claims, options).ok()
    }

    /// Fills the shapes and facts: each node's first rejection, per shape.
    fn diagnose(&self, gang: &Gang<'_>, options: &GangOptions, ex: &mut Explanation) {
        let mut facts: Vec<Fact> = Vec::new();
        // Per fact, the network-attached devices its count includes: they are reached
        // from several nodes, and counted once.
        let mut nets: Vec<Option<DeviceSet>> = Vec::new();
        let mut add = |fact: Fact, net: Option<DeviceSet>, shape_facts: &mut Vec<usize>| {
            let at = if let Some(at) = facts.iter().position(|f| f.same_subject(&fact)) {
                // A node seen before (for another shape) is not counted twice.
                let mut new_node = false;
                if let (Some(have), Some(more)) = (facts[at].nodes_mut(), fact.nodes().first())
                    && !have.contains(more)
                {
                    have.push(more.clone());
                    new_node = true;
                }
                // Of the network-attached devices, those not counted yet.
                let net_len = net.as_ref().map_or(0, DeviceSet::len);
                let mut unseen = 0;
                if let Some(net) = net {
                    match &mut nets[at] {
                        Some(seen) => {
                            let mut fresh = net.clone();
                            fresh.difference_with(seen);
                            unseen = fresh.len();
                            seen.union_with(&net);
                        }
                        none @ None => {
                            unseen = net_len;
                            *none = Some(net);
                        }
                    }
                }
                let unseen = u32::try_from(unseen).unwrap_or(u32::MAX);
                let net_len = u32::try_from(net_len).unwrap_or(u32::MAX);
                match (&mut facts[at], &fact) {
                    (
                        Fact::DeviceTaint { devices: a, .. },
                        Fact::DeviceTaint { devices: b, .. },
                    )
                    | (
                        Fact::DevicesInUse { devices: a, .. },
                        Fact::DevicesInUse { devices: b, .. },
                    )
                    | (
                        Fact::HeldByOwnMembers { devices: a, .. },
                        Fact::HeldByOwnMembers { devices: b, .. },
                    )
                    | (
                        Fact::CountersInUse { devices: a, .. },
                        Fact::CountersInUse { devices: b, .. },
                    ) => {
                        let local = if new_node {
                            b.saturating_sub(net_len)
                        } else {
                            0
                        };
                        *a = a.saturating_add(local).saturating_add(unseen);
                    }
                    // Counted per node (network-attached devices reached from several
                    // nodes count on each).
                    (
                        Fact::RequestSelector {
                            of_class: a,
                            selectors: sa,
                            ..
                        },
                        Fact::RequestSelector {
                            of_class: b,
                            selectors: sb,
                            ..
                        },
                    ) if new_node => {
                        *a = a.saturating_add(*b);
                        for ((_, x), (_, y)) in sa.iter_mut().zip(sb) {
                            *x = x.saturating_add(*y);
                        }
                    }
                    (
                        Fact::CapacityTooSmall {
                            matching: a,
                            fit: x,
                            ..
                        },
                        Fact::CapacityTooSmall {
                            matching: b,
                            fit: y,
                            ..
                        },
                    )
                    | (
                        Fact::CountersTooFew {
                            matching: a,
                            fit: x,
                            ..
                        },
                        Fact::CountersTooFew {
                            matching: b,
                            fit: y,
                            ..
                        },
                    ) if new_node => {
                        *a = a.saturating_add(*b);
                        *x = x.saturating_add(*y);
                    }
                    (Fact::Constraint { best: a, .. }, Fact::Constraint { best: b, .. }) => {
                        *a = (*a).max(*b);
                    }
                    _ => {}
                }
                at
            } else {
                facts.push(fact);
                nets.push(net);
                facts.len() - 1
            };
            if !shape_facts.contains(&at) {
                shape_facts.push(at);
            }
        };
        let key = gang.key;
        if let Some(k) = key
            && !self.nodes().any(|n| n.labels.contains_key(k))
        {
            let mut none = Vec::new();
            add(
                Fact::TopologyKeyAbsent { key: k.to_owned() },
                None,
                &mut none,
            );
        }
        for (si, shape) in gang.shapes.iter().enumerate() {
            let mut shape_facts = Vec::new();
            let tainted: Vec<Fact> = gang
                .tainted
                .iter()
                .filter(|(c, _, _)| shape.uses.contains(c))
                .map(|(c, device, taint)| Fact::ClaimDeviceTainted {
                    claim: gang.shared[*c].name.clone(),
                    device: device.to_string(),
                    taint: taint.clone(),
                })
                .collect();
            let blocked = !tainted.is_empty();
            for f in tainted {
                add(f, None, &mut shape_facts);
            }
            let filter = ShapeFilter::new(self, shape.rep, &shape.requests, &options.within, key);
            let mut counted = BTreeSet::new();
            for c in shape.candidates.iter().filter(|c| c.cap > 0) {
                counted.insert(c.node);
            }
            // Claims of the shape that name a class without devices at all.
            for (name, spec) in shape_claims(gang, si) {
                for r in &spec.requests {
                    for view in r.alternatives() {
                        let empty = self
                            .class_devices(view.device_class_name)
                            .is_none_or(crate::cluster::bits::DeviceSet::is_empty);
                        if empty {
                            add(
                                Fact::NoDeviceOfClass {
                                    claim: name.to_owned(),
                                    request: view.request.to_owned(),
                                    class: view.device_class_name.to_owned(),
                                },
                                None,
                                &mut shape_facts,
                            );
                        }
                    }
                }
            }
            for (id, node) in self.nodes_with_ids() {
                if blocked {
                    // No node helps while the claim cannot be reserved.
                    break;
                }
                if counted.contains(&id) {
                    // It can host a pod; what others hold there may still matter.
                    self.held_by_others(gang, si, id, &node.name, &mut |f, net| {
                        add(f, net, &mut shape_facts);
                    });
                    continue;
                }
                let name = node.name.clone();
                // The node filter the placer's counting asks too: the first rejection is
                // the node's fact. Nodes outside the restriction or the running members'
                // domain are not the gang's to use.
                let in_domain = |v: &str| gang.domains.iter().any(|d| d == v);
                match self.filter_node(id, node, &filter, in_domain, 1).verdict {
                    Err(Rejection::OutOfScope) => continue,
                    Err(Rejection::Cordoned) => {
                        add(Fact::Cordoned { nodes: vec![name] }, None, &mut shape_facts);
                        continue;
                    }
                    Err(Rejection::NodeSelector) => {
                        add(
                            Fact::NodeSelector { nodes: vec![name] },
                            None,
                            &mut shape_facts,
                        );
                        continue;
                    }
                    Err(Rejection::NodeTaint(t)) => {
                        add(
                            Fact::NodeTaint {
                                taint: t.clone(),
                                nodes: vec![name],
                            },
                            None,
                            &mut shape_facts,
                        );
                        continue;
                    }
                    Err(Rejection::ResourceTooSmall(resource)) => {
                        add(
                            Fact::ResourceTooSmall {
                                resource,
                                nodes: vec![name],
                            },
                            None,
                            &mut shape_facts,
                        );
                        continue;
                    }
                    // In use, or admitted by the scalars: what others hold (every
                    // resource and device) and what the devices lack, below.
                    Err(Rejection::ResourceInUse(_)) | Ok(_) => {}
                }
                let mut requests: Vec<(&str, Quantity)> = shape
                    .rep
                    .requests
                    .iter()
                    .filter(|(_, q)| q.is_positive())
                    .map(|(r, q)| (r.as_str(), *q))
                    .collect();
                if node.allocatable.contains_key("pods") {
                    requests.push(("pods", Quantity::from_int(1)));
                }
                // What others hold is reported in full, resources and devices alike:
                // freeing only part of it would not let a pod in.
                let mut held = false;
                for (r, q) in requests {
                    let free = self.node_free_of(id, r);
                    let total = node.allocatable.get(r).copied().unwrap_or(Quantity::ZERO);
                    // Too little for one pod, or for the gang's pods together (which
                    // may all want the node once its other facts are lifted).
                    if free < q || (free < total && free < self.gang_wants(gang, id, r)) {
                        add(
                            Fact::ResourceInUse {
                                resource: r.to_owned(),
                                nodes: vec![name.clone()],
                            },
                            None,
                            &mut shape_facts,
                        );
                        held = true;
                    }
                }
                let devices_why = self.diagnose_devices(gang, si, id, &name, &mut |f, net| {
                    add(f, net, &mut shape_facts);
                });
                if !devices_why && !held {
                    add(
                        Fact::NoCombination { nodes: vec![name] },
                        None,
                        &mut shape_facts,
                    );
                }
            }
            ex.shapes.push(ShapeReport {
                pods: gang
                    .pods
                    .iter()
                    .filter(|p| p.shape == si)
                    .map(|p| p.key.clone())
                    .collect(),
                devices_per_pod: shape.min_devices,
                nodes: shape.candidates.iter().filter(|c| c.cap > 0).count(),
                capacity: shape.candidates.iter().map(|c| u64::from(c.cap)).sum(),
                facts: shape_facts,
            });
        }
        // Topology: the domain that can host the most pods.
        if let Some(k) = key
            && !gang.domains.is_empty()
        {
            let mut best: Option<(u64, &str)> = None;
            for (d, value) in gang.domains.iter().enumerate() {
                let hosts: u64 = (0..gang.shapes.len())
                    .map(|s| gang.caps_in(s, d as u32).min(gang.shapes[s].pods as u64))
                    .sum();
                if best.is_none_or(|(h, _)| hosts > h) {
                    best = Some((hosts, value.as_str()));
                }
            }
            if let Some((hosts, domain)) = best
                && (hosts as usize) < gang.required
            {
                let mut none = Vec::new();
                add(
                    Fact::DomainTooSmall {
                        key: k.to_owned(),
                        domain: domain.to_owned(),
                        hosts,
                        needed: gang.required,
                    },
                    None,
                    &mut none,
                );
            }
        }
        for f in &mut facts {
            if let Some(n) = f.nodes_mut() {
                n.sort();
            }
        }
        ex.facts = facts;
    }

    /// Reports what reduces the capacity of a node that can host a pod of shape `si`:
    /// requested resources partly used by others, devices of the classes its claims
    /// (own and shared, node-local and network-attached) request allocated or carrying
    /// untolerated taints.
    fn held_by_others(
        &self,
        gang: &Gang<'_>,
        si: usize,
        id: crate::NodeId,
        name: &str,
        add: &mut dyn FnMut(Fact, Option<DeviceSet>),
    ) {
        let shape = &gang.shapes[si];
        let Some(node) = self.node_by_id(id) else {
            return;
        };
        // How many pods of the shape the node can host now (its candidate cap), and
        // whether that falls short of the shape's pods: only then can a resource others
        // use be what limits it.
        let cap = shape
            .candidates
            .iter()
            .find(|c| c.node == id)
            .map_or(0, |c| u64::from(c.cap));
        let short = cap < shape.pods as u64;
        let fit = |have: Quantity, q: Quantity| -> u64 {
            u64::try_from(have.as_nano() / q.as_nano()).unwrap_or(u64::MAX)
        };
        for (r, q) in &shape.rep.requests {
            let total = node.allocatable.get(r).copied().unwrap_or(Quantity::ZERO);
            let free = self.node_free_of(id, r);
            // Reported when what others use of it is the limit: with it free the node
            // would host more pods of the shape, and it allows no more than the cap;
            // with several shapes, which compete for the node (once other facts are
            // lifted, if not now), when it does not cover all their pods.
            let limits = if !q.is_positive() {
                false
            } else if gang.shapes.len() > 1 {
                free < self.gang_wants(gang, id, r) && free < total
            } else {
                short && fit(free, *q) <= cap && fit(total, *q) > cap
            };
            if limits {
                add(
                    Fact::ResourceInUse {
                        resource: r.clone(),
                        nodes: vec![name.to_owned()],
                    },
                    None,
                );
            }
        }
        let devices = self.reach(id);
        // The most held of one requested kind, with its network-attached part.
        let mut in_use: (u32, Option<DeviceSet>) = (0, None);
        let mut own_use: (u32, Option<DeviceSet>) = (0, None);
        let mut tainted: Vec<(DeviceTaint, u32, Option<DeviceSet>)> = Vec::new();
        for spec in shape_claims(gang, si).into_iter().map(|(_, s)| s) {
            for r in &spec.requests {
                for view in r.alternatives() {
                    if let Some(class) = self.class_devices(view.device_class_name) {
                        let mut present = class.clone();
                        present.intersect_with(self.usable_devices());
                        let mut held = present.clone();
                        held.difference_with(self.free_devices());
                        let (held, own) = split_own(held, &gang.own);
                        let n = devices.count(&held);
                        if n > in_use.0 {
                            in_use = (n, devices.net_part(&held));
                        }
                        let n = devices.count(&own);
                        if n > own_use.0 {
                            own_use = (n, devices.net_part(&own));
                        }
                        for (taint, members) in self.untolerated_taints(view.tolerations) {
                            let mut hit = present.clone();
                            hit.intersect_with(members);
                            let n = devices.count(&hit);
                            if n > 0 && !tainted.iter().any(|(t, _, _)| t == taint) {
                                tainted.push((taint.clone(), n, devices.net_part(&hit)));
                            }
                        }
                    }
                }
            }
        }
        for (taint, n, net) in tainted {
            add(
                Fact::DeviceTaint {
                    taint: DeviceTaint {
                        time_added: None,
                        ..taint
                    },
                    devices: n,
                    nodes: vec![name.to_owned()],
                },
                net,
            );
        }
        if in_use.0 > 0 {
            add(
                Fact::DevicesInUse {
                    devices: in_use.0,
                    nodes: vec![name.to_owned()],
                },
                in_use.1,
            );
        }
        if own_use.0 > 0 && short {
            add(
                Fact::HeldByOwnMembers {
                    devices: own_use.0,
                    nodes: vec![name.to_owned()],
                },
                own_use.1,
            );
        }
    }

    /// Reports why a node cannot give shape `si` its devices; false when every request
    /// has enough usable devices (then the failure is a combination problem).
    ///
    /// Per (sub)request, the census of the node (`allocate/census.rs`): the class, then
    /// each of the request's own selectors, its capacity demand and the shared counters
    /// its devices draw on, on the hardware; the first stage that leaves fewer devices
    /// than a pod needs is the fact. Past them, taints and what others hold (devices,
    /// counters) among the devices that survive; then the claim's constraints over
    /// those devices. A `firstAvailable` request none of whose subrequests can be
    /// served reports each of them.
    #[allow(clippy::too_many_lines)]
    fn diagnose_devices(
        &self,
        gang: &Gang<'_>,
        si: usize,
        id: crate::NodeId,
        name: &str,
        add: &mut dyn FnMut(Fact, Option<DeviceSet>),
    ) -> bool {
        let devices = self.reach(id);
        let mut found = false;
        let mut compiled: BTreeMap<String, Option<Selector>> = BTreeMap::new();
        for (claim, spec) in shape_claims(gang, si) {
            // Per request, per alternative: (reference, devices that may serve it, now
            // and on the hardware, and the devices needed), for the constraints.
            let mut scopes: Vec<Vec<(String, DeviceSet, DeviceSet, u32)>> = Vec::new();
            for r in &spec.requests {
                let mut whys: Vec<Vec<DeviceFact>> = Vec::new();
                let mut served = false;
                let mut alts = Vec::new();
                for view in r.alternatives() {
                    if view.admin_access {
                        served = true;
                        continue;
                    }
                    let need = match view.allocation_mode {
                        AllocationMode::ExactCount(n) => n.max(1),
                        AllocationMode::All => 1,
                    };
                    // A class without any device is one fact for the whole cluster.
                    if self
                        .class_devices(view.device_class_name)
                        .is_none_or(DeviceSet::is_empty)
                    {
                        found = true;
                        continue;
                    }
                    let mut selectors = Vec::with_capacity(view.selectors.len());
                    for sel in view.selectors {
                        let c = compiled
                            .entry(sel.cel.clone())
                            .or_insert_with(|| Selector::compile(&sel.cel).ok());
                        if let Some(c) = c {
                            selectors.push(c.clone());
                        }
                    }
                    let reference = view.reference();
                    let node = || vec![name.to_owned()];
                    let mut why: Vec<DeviceFact> = Vec::new();
                    // Each stage that leaves too few is a fact; the next census passes
                    // over it, so that what blocks once it is lifted is a fact too.
                    let mut skip = Skip::default();
                    let census = loop {
                        let Some(census) = self.census(id, &view, &selectors, skip) else {
                            break None;
                        };
                        if census.class < need {
                            why.push((
                                Fact::TooFewDevices {
                                    class: view.device_class_name.to_owned(),
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                            break None;
                        } else if census.selected() < need {
                            skip.selectors = true;
                            why.push((
                                Fact::RequestSelector {
                                    claim: claim.to_owned(),
                                    request: reference.clone(),
                                    class: view.device_class_name.to_owned(),
                                    of_class: census.class,
                                    selectors: census.selectors.clone(),
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                        } else if census.capacity < need {
                            skip.capacity = true;
                            why.push((
                                Fact::CapacityTooSmall {
                                    claim: claim.to_owned(),
                                    request: reference.clone(),
                                    capacity: view
                                        .capacity
                                        .iter()
                                        .map(|(k, q)| (k.clone(), *q))
                                        .collect(),
                                    matching: census.selected(),
                                    fit: census.capacity,
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                        } else if census.counters < need {
                            skip.counters = true;
                            why.push((
                                Fact::CountersTooFew {
                                    claim: claim.to_owned(),
                                    request: reference.clone(),
                                    matching: census.capacity,
                                    fit: census.counters,
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                        } else {
                            break Some(census);
                        }
                    };
                    if let Some(census) = &census {
                        let present = &census.fit;
                        let mut usable = present.clone();
                        self.restrict_usable(&mut usable, view.tolerations);
                        usable.difference_with(&census.held);
                        usable.difference_with(&census.counters_held);
                        let free = devices.count(&usable);
                        let ok = free.min(census.counters_now);
                        let (others, own) = split_own(census.held.clone(), &gang.own);
                        let in_use = devices.count(&others);
                        let held_net = devices.net_part(&others);
                        let own_in_use = devices.count(&own);
                        let own_net = devices.net_part(&own);
                        let counters_in_use = devices.count(&census.counters_held);
                        let counters_net = devices.net_part(&census.counters_held);
                        alts.push((reference.clone(), usable, present.clone(), need));
                        if ok >= need && why.is_empty() {
                            // Enough for this request alone, but the node's other
                            // requests may compete for them: what others hold counts.
                            served = true;
                            if in_use > 0 {
                                let f = Fact::DevicesInUse {
                                    devices: in_use,
                                    nodes: node(),
                                };
                                add(f, held_net);
                            }
                            if counters_in_use > 0 {
                                let f = Fact::CountersInUse {
                                    devices: counters_in_use,
                                    nodes: node(),
                                };
                                add(f, counters_net);
                            }
                            continue;
                        }
                        if ok < need {
                            // Too few usable now, with the stages above lifted: what
                            // taints and other claims take counts too. Tainted devices
                            // count whether or not they are in use: both facts must go
                            // for such a device to serve.
                            for (taint, members) in self.untolerated_taints(view.tolerations) {
                                let mut hit = present.clone();
                                hit.intersect_with(members);
                                let n = devices.count(&hit);
                                if n > 0 {
                                    why.push((
                                        Fact::DeviceTaint {
                                            taint: DeviceTaint {
                                                time_added: None,
                                                ..taint.clone()
                                            },
                                            devices: n,
                                            nodes: node(),
                                        },
                                        devices.net_part(&hit),
                                    ));
                                }
                            }
                            if in_use > 0 {
                                let f = Fact::DevicesInUse {
                                    devices: in_use,
                                    nodes: node(),
                                };
                                why.push((f, held_net));
                            }
                            if own_in_use > 0 {
                                let f = Fact::HeldByOwnMembers {
                                    devices: own_in_use,
                                    nodes: node(),
                                };
                                why.push((f, own_net));
                            }
                            if counters_in_use > 0 || (free >= need && census.counters_now < need) {
                                let f = Fact::CountersInUse {
                                    devices: counters_in_use.max(1),
                                    nodes: node(),
                                };
                                why.push((f, counters_net));
                            }
                        }
                    }
                    whys.push(why);
                }
                scopes.push(alts);
                if served {
                    continue;
                }
                // No alternative can serve the request: each says why.
                for why in whys {
                    found |= !why.is_empty();
                    for (f, net) in why {
                        add(f, net);
                    }
                }
            }
            found |= self.diagnose_constraints(claim, spec, &scopes, name, &gang.own, add);
        }
        found
    }

    /// Reports the constraints of claim `claim` that cannot hold on the node with the
    /// devices its requests may use (`scopes`, per request of `spec` in order: its
    /// alternatives as (reference, usable now, usable on the hardware, needed)): on the
    /// hardware, an unresolvable [`Fact::Constraint`]; only now, what others hold
    /// ([`Fact::DevicesInUse`]). Whether it reported anything.
    fn diagnose_constraints(
        &self,
        claim: &str,
        spec: &ResourceClaimSpec,
        scopes: &[Vec<(String, DeviceSet, DeviceSet, u32)>],
        name: &str,
        own: &DeviceSet,
        add: &mut dyn FnMut(Fact, Option<DeviceSet>),
    ) -> bool {
        let mut found = false;
        for c in &spec.constraints {
            let (kind, distinct) = match &c.kind {
                ConstraintKind::MatchAttribute(_) => ("matchAttribute", false),
                ConstraintKind::DistinctAttribute(_) => ("distinctAttribute", true),
            };
            // The requests it covers, each with the alternatives it covers.
            let covered = |now: bool| -> Vec<Vec<(&DeviceSet, u32)>> {
                scopes
                    .iter()
                    .map(|alts| {
                        alts.iter()
                            .filter(|(reference, ..)| {
                                let (req, sub) = split_request_ref(reference);
                                c.applies_to(req, sub)
                            })
                            .map(|(_, usable, present, need)| {
                                (if now { usable } else { present }, *need)
                            })
                            .collect::<Vec<_>>()
                    })
                    .filter(|alts| !alts.is_empty())
                    .collect()
            };
            let hardware = covered(false);
            let needed: u32 = hardware
                .iter()
                .map(|alts| alts.iter().map(|(_, n)| *n).min().unwrap_or(0))
                .sum();
            if needed == 0 {
                continue;
            }
            let (ok, best) = self.constraint_bound(c.attribute(), distinct, &hardware);
            if !ok {
                found = true;
                add(
                    Fact::Constraint {
                        claim: claim.to_owned(),
                        kind: kind.to_owned(),
                        attribute: c.attribute().to_owned(),
                        requests: c.requests.clone(),
                        needed,
                        best,
                        nodes: vec![name.to_owned()],
                    },
                    None,
                );
                continue;
            }
            let (ok_now, _) = self.constraint_bound(c.attribute(), distinct, &covered(true));
            if !ok_now {
                // Devices others hold are needed for the constraint to hold.
                let mut held = DeviceSet::new();
                for alts in &hardware {
                    for (set, _) in alts {
                        held.grow(set.universe());
                        held.union_with(set);
                    }
                }
                held.difference_with(self.free_devices());
                let (held, own) = split_own(held, own);
                let devices = u32::try_from(held.len()).unwrap_or(u32::MAX);
                if devices > 0 {
                    found = true;
                    add(
                        Fact::DevicesInUse {
                            devices,
                            nodes: vec![name.to_owned()],
                        },
                        None,
                    );
                }
                let devices = u32::try_from(own.len()).unwrap_or(u32::MAX);
                if devices > 0 {
                    found = true;
                    add(
                        Fact::HeldByOwnMembers {
                            devices,
                            nodes: vec![name.to_owned()],
                        },
                        None,
                    );
                }
            }
        }
        found
    }
}

/// The claims (`namespace/name`) the unit holds already: the allocated claims its
/// running members name, and its allocated shared claims.
fn own_claims(gang: &Gang<'_>, claims: &[ResourceClaim]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = gang
        .shared
        .iter()
        .filter(|s| s.allocated.is_some() && (s.used || s.group))
        .map(|s| s.name.clone())
        .collect();
    for p in &gang.running {
        for c in &p.resource_claims {
            if let ClaimSource::ClaimName(n) = &c.source
                && claims
                    .iter()
                    .any(|x| x.namespace == p.namespace && x.name == *n && x.allocation.is_some())
            {
                out.insert(format!("{}/{n}", p.namespace));
            }
        }
    }
    out
}

impl Cluster {
    /// The devices of the allocations of `names` among `claims`.
    fn devices_of(&self, claims: &[ResourceClaim], names: &BTreeSet<String>) -> DeviceSet {
        let mut out = DeviceSet::new();
        for c in claims {
            let Some(result) = &c.allocation else {
                continue;
            };
            if !names.contains(&format!("{}/{}", c.namespace, c.name)) {
                continue;
            }
            for d in &result.devices {
                if let Some(id) = self.device_id(&DeviceRef::new(&d.driver, &d.pool, &d.device)) {
                    out.insert(id);
                }
            }
        }
        out
    }
}

/// `held` split into what other workloads hold and what the unit itself holds
/// (`own`: its running members' and shared claims' devices).
fn split_own(mut held: DeviceSet, own: &DeviceSet) -> (DeviceSet, DeviceSet) {
    if own.is_empty() {
        return (held, DeviceSet::new());
    }
    let mut mine = held.clone();
    mine.intersect_with(own);
    held.difference_with(own);
    (held, mine)
}

/// The devices a pod on one node can reach: its node-local devices, and the
/// network-attached ones whose node selection admits the node (only looked up when the
/// cluster has any).
struct Reach<'c> {
    local: Option<&'c SparseDeviceSet>,
    /// The network-attached devices within reach.
    net: Option<DeviceSet>,
}

impl Reach<'_> {
    /// How many devices of `set` are within reach.
    fn count(&self, set: &DeviceSet) -> u32 {
        let local = self.local.map_or(0, |d| d.count_in(set));
        let net = self.net_part(set).map_or(0, |n| n.len());
        u32::try_from(local + net).unwrap_or(u32::MAX)
    }

    /// The network-attached devices of `set` within reach, if any.
    fn net_part(&self, set: &DeviceSet) -> Option<DeviceSet> {
        let mut part = self.net.as_ref()?.clone();
        part.intersect_with(set);
        (!part.is_empty()).then_some(part)
    }
}

impl Cluster {
    fn reach(&self, id: crate::NodeId) -> Reach<'_> {
        Reach {
            local: self.node_devices(id),
            net: self.has_shared_devices().then(|| {
                let mut net = self.devices_reachable_from(id);
                net.intersect_with(self.shared_devices());
                net
            }),
        }
    }
}

/// A device fact and the network-attached devices its count includes.
type DeviceFact = (Fact, Option<DeviceSet>);

/// The claims (`namespace/name`, spec) a pod of shape `si` may have to allocate on its
/// node: its own and the shared claims its pods use; claims allocated already are not.
fn shape_claims<'g>(gang: &'g Gang<'_>, si: usize) -> Vec<(&'g str, &'g ResourceClaimSpec)> {
    let mut out: Vec<(&str, &ResourceClaimSpec)> = gang
        .pods
        .iter()
        .find(|p| p.shape == si)
        .map(|p| p.own.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|(name, claim)| (name.as_str(), &claim.spec))
        .collect();
    let uses = &gang.shapes[si].uses;
    for (i, s) in gang.shared.iter().enumerate() {
        if s.allocated.is_none() && uses.contains(&i) {
            out.push((s.name.as_str(), &s.claim.spec));
        }
    }
    out
}

impl Cluster {
    /// How much of resource `r` the gang's pending pods could want on node `id`
    /// together (`pods`: one each): per shape, its pods, but no more than the node's
    /// devices could serve (ignoring what others hold).
    fn gang_wants(&self, gang: &Gang<'_>, id: crate::NodeId, r: &str) -> Quantity {
        let usable = u64::from(self.reach(id).count(self.usable_devices()));
        gang.shapes.iter().fold(Quantity::ZERO, |sum, s| {
            let each = if r == "pods" {
                Quantity::from_int(1)
            } else {
                s.rep.requests.get(r).copied().unwrap_or(Quantity::ZERO)
            };
            let mut pods = s.pods as u64;
            if let Some(fit) = usable.checked_div(s.min_devices) {
                pods = pods.min(fit);
            }
            (0..pods).fold(sum, |sum, _| sum.saturating_add(each))
        })
    }
}

/// Every `size`-subset of `items`, in lexicographic order.
fn choose(items: &[usize], size: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if current.len() == size {
        out.push(current.clone());
        return;
    }
    let start = current
        .last()
        .and_then(|l| items.iter().position(|x| x == l))
        .map_or(0, |p| p + 1);
    for i in start..items.len() {
        current.push(items[i]);
        choose(items, size, current, out);
        current.pop();
    }
}
