//! A test kit for schedulers: [`Scenario`], a whole cluster and its workloads as plain
//! model data (always available), and, with the feature `testing`, proptest strategies
//! for realistic clusters, claims and PodGroups that build scenarios, with a readable
//! rendering for shrunk counterexamples.
//!
//! Layer: above every other (it builds a [`Scheduler`](crate::Scheduler) from a
//! scenario); nothing else in the core depends on it.

use crate::alloc_prelude::*;
use crate::{
    DeviceClass, DeviceTaintRule, Node, Pod, PodGroup, PriorityClass, ResourceClaim, ResourceSlice,
    Workload,
};

/// A Namespace: its name and labels (`resource.kubernetes.io/admin-access: "true"`
/// admits claims with admin access).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Namespace {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
}

/// Every object of a generated scenario, as plain model data, in the order a
/// scheduler takes them: the infrastructure (namespaces, nodes, classes, slices, taint
/// rules, priority classes), then the workloads (claims, Workloads, PodGroups, pods).
///
/// The running state is part of the data: a claim with
/// [`allocation`](ResourceClaim::allocation) set is allocated, a pod with
/// [`node_name`](Pod::node_name) set is bound; the rest is pending.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Scenario {
    /// Namespaces (every namespace a workload uses is listed).
    pub namespaces: Vec<Namespace>,
    /// Nodes.
    pub nodes: Vec<Node>,
    /// DeviceClasses.
    pub device_classes: Vec<DeviceClass>,
    /// ResourceSlices.
    pub slices: Vec<ResourceSlice>,
    /// DeviceTaintRules.
    pub taint_rules: Vec<DeviceTaintRule>,
    /// PriorityClasses.
    pub priority_classes: Vec<PriorityClass>,
    /// ResourceClaims (allocated ones carry their allocation).
    pub claims: Vec<ResourceClaim>,
    /// Workloads (the PodGroups' `workloadRef`s).
    pub workloads: Vec<Workload>,
    /// PodGroups.
    pub groups: Vec<PodGroup>,
    /// Pods (bound ones carry `node_name`).
    pub pods: Vec<Pod>,
}
