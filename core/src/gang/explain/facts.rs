//! The facts of an explanation as data: the status, what can resolve a fact, every kind
//! of fact, and their wording.

use core::fmt;

use crate::alloc_prelude::*;
use crate::{DeviceTaint, Quantity, Taint};

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
    /// may exist); [`Explanation::budget`](super::Explanation::budget) says which budget and how to raise it.
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

    pub(super) fn nodes_mut(&mut self) -> Option<&mut Vec<String>> {
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
    pub(super) fn same_subject(&self, other: &Fact) -> bool {
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
pub(super) fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The verb form agreeing with a node list.
pub(super) fn verb<'v>(nodes: &[String], one: &'v str, many: &'v str) -> &'v str {
    if nodes.len() == 1 { one } else { many }
}

/// Up to three node names, then "+N".
pub(super) struct Nodes<'a>(&'a [String]);

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
            } if *needed == 1 => write!(
                f,
                "{} {} no device of class {class}",
                Nodes(nodes),
                verb(nodes, "has", "have")
            ),
            Fact::TooFewDevices {
                class,
                needed,
                nodes,
            } => write!(
                f,
                "{} {} fewer than {needed} devices of class {class}",
                Nodes(nodes),
                verb(nodes, "has", "have")
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
