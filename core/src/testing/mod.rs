//! A test kit for schedulers: [`Scenario`], a whole cluster and its workloads as plain
//! model data (always available), and, with the feature `testing`, proptest strategies
//! for realistic clusters, claims and PodGroups that build scenarios, with a readable
//! rendering for shrunk counterexamples.
//!
//! A scheduler (gangpack's or another) proves its decisions right by property: for any
//! generated scenario, each decision it makes passes [`validate_placement`] against the
//! cluster before it. The kit provides the scenarios ([`scenario`] and the finer
//! [`cluster`], [`pod_group`] and [`claim`], sized by a [`ScenarioConfig`]), the state
//! to validate against ([`Scenario::scheduler`], whose [`Scheduler::cluster`] holds the
//! running pods and allocated claims) and a [`Display`](core::fmt::Display) rendering
//! that makes a shrunk counterexample readable.
//!
//! ```
//! # #[cfg(feature = "testing")] {
//! use gangpack::testing::{ScenarioConfig, scenario};
//! use gangpack::{GangOptions, UnitResult, validate_placement};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//!
//! let mut runner = TestRunner::deterministic();
//! let s = scenario(&ScenarioConfig::small()).new_tree(&mut runner).unwrap().current();
//! let mut sched = s.scheduler(GangOptions::default()).unwrap();
//! let before = sched.clone();
//! let pods: Vec<_> = before.pods().cloned().collect();
//! let claims: Vec<_> = before.claims().cloned().collect();
//! let report = sched.cycle();
//! // The first unit of a cycle is placed against the state before the cycle.
//! if let Some((unit, UnitResult::Scheduled(d))) = report.units.first() {
//!     let group = match unit {
//!         gangpack::Unit::Group(g) => before.group(g),
//!         gangpack::Unit::Pod(_) => None,
//!     };
//!     assert!(validate_placement(before.cluster(), group, &pods, &claims, d).is_empty());
//! }
//! println!("{s}"); // nodes, devices, claims, groups and pods, one line each
//! # }
//! ```
//!
//! Layer: above every other (it builds a [`Scheduler`] from a scenario); nothing else
//! in the core depends on it. `config.rs` holds the knobs, `features.rs` the
//! feature switches ([`Features`]), `generate.rs` the strategies (all three feature
//! `testing`), `render.rs` the rendering.
//!
//! [`validate_placement`]: crate::validate_placement

#[cfg(feature = "testing")]
mod audit;
#[cfg(feature = "testing")]
mod config;
#[cfg(feature = "testing")]
mod features;
#[cfg(feature = "testing")]
mod generate;
#[cfg(feature = "testing")]
mod ops;
mod render;

#[cfg(feature = "testing")]
pub use audit::{AuditScope, Finding, audit, audit_scoped};

#[cfg(feature = "testing")]
pub use config::{ScenarioConfig, Size, UnknownSize, WorkloadKinds};
#[cfg(feature = "testing")]
pub use features::{Feature, Features, FeaturesError};
#[cfg(feature = "testing")]
pub use generate::{
    ADMIN_ACCESS_LABEL, ADMIN_NAMESPACE, BIG_CLASS, BLOCK_LABEL, DEVICE_TAINT_KEY, DRIVER,
    GPU_CLASS, H100_CLASS, MODEL_LABEL, NAMESPACE, NODE_TAINT_KEY, PARTITION_CLASS, RACK_LABEL,
    RULE_TAINT_KEY, SHARED_CLASS, WHOLE_CLASS, claim, cluster, generate, pod_group, scenario,
};
#[cfg(feature = "testing")]
pub use ops::{
    ByteSource, ClaimChange, ClaimSpec, ClassSpec, ClusterShape, Driver, Failure, GroupSpec,
    Limits, NewName, NodeChange, NodeJoin, Op, Outcome, Pick, PodChange, PodSpec, Refer, RuleSpec,
    SliceSpec, Source, SplitMix64, Stats, TaintSpec,
};

use crate::alloc_prelude::*;
use crate::{
    Cluster, DeviceClass, DeviceTaintRule, GangOptions, Node, Pod, PodGroup, PriorityClass,
    ResourceClaim, ResourceSlice, Scheduler, SchedulerError, Workload,
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

/// One unit of work as the generators draw it: a PodGroup with its pods, or a single
/// pod (`group` is `None`), and the claims the pods name.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Job {
    /// The PodGroup, if any.
    pub group: Option<PodGroup>,
    /// Its pods (members of `group`, when set).
    pub pods: Vec<Pod>,
    /// The ResourceClaims the pods name (`resourceClaimName`).
    pub claims: Vec<ResourceClaim>,
}

impl Scenario {
    /// Appends a job's group, pods and claims.
    pub fn add_job(&mut self, job: Job) {
        self.groups.extend(job.group);
        self.pods.extend(job.pods);
        self.claims.extend(job.claims);
    }

    /// The pods without a node, in order.
    pub fn pending_pods(&self) -> impl Iterator<Item = &Pod> + '_ {
        self.pods.iter().filter(|p| p.node_name.is_none())
    }

    /// The pods bound to a node, in order.
    pub fn bound_pods(&self) -> impl Iterator<Item = &Pod> + '_ {
        self.pods.iter().filter(|p| p.node_name.is_some())
    }

    /// The PodGroup `namespace/name`, if the scenario has it.
    pub fn group(&self, namespace: &str, name: &str) -> Option<&PodGroup> {
        self.groups
            .iter()
            .find(|g| g.namespace == namespace && g.name == name)
    }

    /// The claim `namespace/name`, if the scenario has it.
    pub fn claim(&self, namespace: &str, name: &str) -> Option<&ResourceClaim> {
        self.claims
            .iter()
            .find(|c| c.namespace == namespace && c.name == name)
    }

    /// A [`Scheduler`] holding the whole scenario, in the order the Kubernetes adapter
    /// assembles one: the cluster (nodes, DeviceClasses, ResourceSlices,
    /// DeviceTaintRules, the topology keys the PodGroups name, and every allocated
    /// claim's devices recorded as held by it), then PriorityClasses, claims, PodGroups,
    /// bound pods (their node resources reserved; they adopt their allocated claims) and
    /// pending pods.
    ///
    /// Its [`cluster`](Scheduler::cluster) is the state before any new decision, the
    /// one [`validate_placement`](crate::validate_placement) wants. Namespaces and
    /// Workloads are not part of a scheduler's state.
    pub fn scheduler(&self, options: GangOptions) -> Result<Scheduler, SchedulerError> {
        let mut cluster = Cluster::new();
        for n in &self.nodes {
            cluster.add_node(n.clone())?;
        }
        for c in &self.device_classes {
            cluster.put_class(c.clone())?;
        }
        for s in &self.slices {
            cluster.add_slice(s.clone())?;
        }
        for r in &self.taint_rules {
            cluster.add_taint_rule(r.clone())?;
        }
        for g in &self.groups {
            for t in &g.topology {
                cluster.track_topology_key(&t.key);
            }
        }
        for c in &self.claims {
            if let Some(result) = &c.allocation {
                cluster.commit_allocation(&format!("{}/{}", c.namespace, c.name), result)?;
            }
        }
        let mut s = Scheduler::new(cluster, options);
        for c in &self.priority_classes {
            s.put_priority_class(c.clone())?;
        }
        for c in &self.claims {
            s.add_claim(c.clone())?;
        }
        for g in &self.groups {
            s.add_group(g.clone())?;
        }
        for p in self.bound_pods().chain(self.pending_pods()) {
            s.add_pod(p.clone())?;
        }
        Ok(s)
    }
}
