//! The scheduling lifecycle (see [`Scheduler`], whose docs are the overview).

use alloc::sync::Arc;
use core::fmt;

mod display;
mod equivalence;
mod evict;
mod finger;
mod live;
mod preempt;
mod row;
mod table;
mod verdict;
mod whatif;

pub use evict::{BrokenGroup, DryRunReport};
pub use live::NodeRemoval;
pub use row::{PodRow, UnitOutcome, UnitRow, preemption_message};
pub use verdict::{Help, Verdict};
pub use whatif::{DomainGap, EvictionRelief, ShapeGap, WhatItTakes};

use crate::Time;
use crate::alloc_prelude::*;
use crate::cluster::{Cluster, ClusterError};
use crate::gang::count_memo::CountMemo;
use crate::gang::options::{GangError, GangOptions, GangOutcome};
use crate::gang::scoring::{MixSource, ScoringPolicy};
use crate::model::claim::{AllocationResult, ResourceClaim};
use crate::model::decision::{ClaimAllocation, PlacementDecision, PodBinding};
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError};
use crate::model::mix::{ShapeMix, TypicalShape};
use crate::model::workload::{
    ClaimSource, Pod, PodGroup, PreemptionPolicy, PriorityClass, check_group_members_gated,
};
use equivalence::{Equivalence, UnitInputs};
use finger::Finger;

/// What one unit's turn in a cycle may have changed, for the equivalence cache.
enum Aftermath {
    /// Nothing: the unit stays pending. `searched`: a preemption search ran (priorities
    /// alone did not rule it out).
    Pending { searched: bool },
    /// A placement was committed (see [`Scheduler::most_free_before`]).
    Placed { most_free: Option<u32> },
    /// Anything: a preemption.
    Other,
}

/// A unit of scheduling: a PodGroup or a pod without one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum Unit {
    /// A PodGroup, `namespace/name`.
    Group(String),
    /// A pod without a group, `namespace/name`.
    Pod(String),
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Group(g) => write!(f, "PodGroup {g}"),
            Unit::Pod(p) => write!(f, "Pod {p}"),
        }
    }
}

/// Invalid use of the scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchedulerError {
    /// An object is invalid or conflicts with the state (nothing was changed).
    Invalid(Vec<ValidationError>),
    /// The cluster refused a change (nothing was changed).
    Cluster(ClusterError),
    /// A unit's inputs cannot be placed (a missing claim, ...).
    Gang(GangError),
}

impl fmt::Display for SchedulerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedulerError::Invalid(errs) => {
                for (i, e) in errs.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            SchedulerError::Cluster(e) => write!(f, "{e}"),
            SchedulerError::Gang(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for SchedulerError {}

impl From<ClusterError> for SchedulerError {
    fn from(e: ClusterError) -> SchedulerError {
        SchedulerError::Cluster(e)
    }
}

impl From<GangError> for SchedulerError {
    fn from(e: GangError) -> SchedulerError {
        SchedulerError::Gang(e)
    }
}

/// What happened to one unit in a cycle. (Not serde: it carries [`ValidationError`]s;
/// adapters render those as messages.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitResult {
    /// Placed: the bindings and allocations committed.
    Scheduled(PlacementDecision),
    /// Placed after preempting lower-priority victims.
    Preempted(Preemption),
    /// Not placed (the placement outcome says why; [`Scheduler::explain`] says more).
    /// [`GangOutcome::BudgetExhausted`] is undecided, not "does not fit": the unit stays
    /// pending and is tried again next cycle; the explanation names the budget that ran
    /// out and where to raise it ([`GangOptions::step_budget`],
    /// [`GangOptions::allocator_step_budget`], given to [`Scheduler::new`]).
    Pending(GangOutcome),
    /// The group's members disagree on priority, scheduler or preemption policy
    /// (`PodGroupInitiallyScheduled=False`, reason `SchedulerError`).
    Invalid(Vec<ValidationError>),
    /// The unit's inputs cannot be placed (a missing claim, an invalid claim, ...);
    /// nothing of it was applied (`SchedulerError` upstream too).
    Failed(SchedulerError),
}

/// A preemption: who was evicted to make room, and where the preemptor went.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Preemption {
    /// The victims, each a whole PodGroup (`disruptionMode: All`) or one pod.
    pub victims: Vec<Victim>,
    /// The preemptor's placement (its nominated nodes, committed).
    pub decision: PlacementDecision,
}

/// One preemption victim.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Victim {
    /// The unit evicted: a PodGroup evicted whole, or a pod.
    pub unit: Unit,
    /// Its pods, `namespace/name`.
    pub pods: Vec<String>,
    /// Its priority.
    pub priority: i32,
    /// Devices it held.
    pub devices: usize,
}

/// The result of one cycle, unit by unit in the order they were taken.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CycleReport {
    /// Each unit tried and what happened.
    pub units: Vec<(Unit, UnitResult)>,
    /// How the NoExecute eviction schedule changed with the cycle: pods bound onto
    /// devices or nodes whose `NoExecute` taints they tolerate only for a while, and
    /// evictions of preempted pods that no longer apply.
    pub evictions: EvictionReport,
}

impl CycleReport {
    /// Pods bound in this cycle.
    pub fn pods_bound(&self) -> usize {
        self.units
            .iter()
            .map(|(_, r)| match r {
                UnitResult::Scheduled(d) => d.bindings.len(),
                UnitResult::Preempted(p) => p.decision.bindings.len(),
                _ => 0,
            })
            .sum()
    }
}

/// A pod scheduled for NoExecute eviction.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PodEviction {
    /// When (logical time).
    pub at: Time,
    /// The pod, `namespace/name`.
    pub pod: String,
    /// Why: the claim and taint, a node taint, or the pod's `disruptionMode: All`
    /// group losing another member.
    pub reason: EvictionReason,
}

/// Why a pod is evicted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum EvictionReason {
    /// A device of one of its claims carries a `NoExecute` taint (`DeletionByDeviceTaintManager`).
    DeviceTaint {
        /// The claim, `namespace/name`.
        claim: String,
        /// The taint, `key=value:effect`.
        taint: String,
    },
    /// Its node carries a `NoExecute` taint it does not tolerate (long enough).
    NodeTaint {
        /// The node.
        node: String,
    },
    /// A member of its `disruptionMode: All` PodGroup is evicted.
    GroupMember {
        /// The PodGroup, `namespace/name`.
        group: String,
    },
}

/// What a taint change does to running pods.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct EvictionReport {
    /// Evictions now scheduled that were not before (or at another time).
    pub started: Vec<PodEviction>,
    /// Evictions no longer scheduled.
    pub cancelled: Vec<PodEviction>,
    /// PodGroups that fall below `minCount` (or lose every pod, `disruptionMode: All`)
    /// once the scheduled evictions happen, by group.
    pub broken_groups: Vec<BrokenGroup>,
}

/// The scheduler state machine: the lifecycle of pods, PodGroups and claims over
/// one cluster.
///
/// The scheduling lifecycle over one cluster snapshot: a queue of pending PodGroups and
/// pods, cycles that place each whole or not at all, workload-aware preemption,
/// completion, and NoExecute eviction on a logical clock.
///
/// [`Scheduler`] owns a [`Cluster`] and the workload objects (pods, PodGroups, claims,
/// PriorityClasses). Bound pods (`spec.nodeName`) and the claims allocated for them are
/// part of its state; everything else is pending. [`Scheduler::cycle`] takes the pending
/// units — PodGroups with pending members, and pods without a group — in priority
/// order (then creation time, then name) and, for each, commits a whole placement or
/// records why not. A unit is placed in one step against one state, so a partial gang
/// never holds resources.
///
/// Time is an input ([`Scheduler::advance`]); nothing reads a system clock, so the same
/// sequence of calls gives the same state.
///
/// Layer: the top of the core. It uses the gang placer for every placement and
/// `Cluster::apply_decision` to commit; `preempt.rs` searches for victims,
/// `evict.rs` keeps the `NoExecute` eviction schedule, `whatif.rs` answers what it would
/// take.
#[derive(Clone, Debug)]
pub struct Scheduler {
    cluster: Cluster,
    pods: BTreeMap<String, Pod>,
    /// The keys of the pods without a node (`pods` whose `node_name` is `None`), so a
    /// cycle finds its pending units without visiting every bound pod.
    pending: BTreeSet<String>,
    /// How many pods have each priority, so preemption knows in O(1) whether any pod
    /// ranks below a unit.
    pod_priorities: BTreeMap<i32, usize>,
    /// How many PodGroups have each effective priority, for the same question about
    /// groups (a cycle of many pending units asks it for each unit that does not fit).
    group_priorities: BTreeMap<i32, usize>,
    /// The pods naming each PodGroup (`namespace/group` → pod keys), existing or not.
    members: BTreeMap<String, BTreeSet<String>>,
    groups: BTreeMap<String, PodGroup>,
    claims: BTreeMap<String, ResourceClaim>,
    classes: Vec<PriorityClass>,
    /// Bound pods: their node and the claims allocated with them.
    bound: BTreeMap<String, PodBinding>,
    /// Group claims allocated, per group.
    group_claims: BTreeMap<String, Vec<ClaimAllocation>>,
    /// NoExecute evictions scheduled, by pod.
    evictions: BTreeMap<String, PodEviction>,
    /// Node NoExecute eviction timer starts, by pod: when the pod was first observed on
    /// a node whose NoExecute taints it does not tolerate forever.
    node_taint_seen: BTreeMap<String, Time>,
    /// Each claim's device-taint eviction time, as of the cluster's eviction epoch.
    device_evictions: evict::DeviceEvictions,
    /// Indexes over the bound pods, so that eviction and unbinding visit only the pods
    /// concerned (see [`BoundIndex`]).
    index: BoundIndex,
    options: GangOptions,
    /// The mix a Stranding or FGD policy scores against, when the user gave one
    /// ([`Scheduler::set_workload_mix`]) or the policy names one.
    given_mix: Option<ShapeMix>,
    /// The mix the cluster tracks now (given, or last observed).
    tracked_mix: Option<ShapeMix>,
}

/// Indexes over the bound pods, kept in step with `Scheduler::bound` by
/// `index_bound` / `unindex_bound`.
#[derive(Clone, Debug, Default)]
pub(super) struct BoundIndex {
    /// Bound pods by each claim they use (`namespace/name`, as `claim_used` resolves
    /// their `spec.resourceClaims` entries when they are bound).
    pub(super) claim_users: BTreeMap<Arc<str>, BTreeSet<Arc<str>>>,
    /// The claims each bound pod was indexed under (keys shared with `claim_users`).
    pub(super) pod_claims: BTreeMap<Arc<str>, Vec<Arc<str>>>,
    /// Bound pods by node.
    node_pods: BTreeMap<String, BTreeSet<Arc<str>>>,
    /// Nodes with a `NoExecute` taint.
    no_execute_nodes: BTreeSet<String>,
}

/// The bound members of PodGroup `group` (`namespace/name`), by key.
fn bound_members<'a>(
    members: &'a BTreeMap<String, BTreeSet<String>>,
    bound: &'a BTreeMap<String, PodBinding>,
    group: &str,
) -> impl Iterator<Item = &'a String> {
    members
        .get(group)
        .into_iter()
        .flatten()
        .filter(|m| bound.contains_key(*m))
}

/// Whether the observed mix `seen` moved away from `tracked` by more than 1/64 in total
/// variation of the shapes' frequencies, or gained a shape of frequency 1/64 or more.
fn mix_moved(tracked: &ShapeMix, seen: &ShapeMix) -> bool {
    let (t, s) = (
        u128::from(tracked.weight_sum()),
        u128::from(seen.weight_sum()),
    );
    if t == 0 || s == 0 {
        return t != s;
    }
    // Σ |a/t − b/s| = Σ |a·s − b·t| / (t·s); total variation is half of it.
    let mut diff: u128 = 0;
    for x in &seen.shapes {
        let b = u128::from(x.weight) * t;
        match tracked.shapes.iter().find(|y| same_shape(x, y)) {
            Some(y) => diff += (u128::from(y.weight) * s).abs_diff(b),
            None if u128::from(x.weight) * 64 >= s => return true,
            None => diff += b,
        }
    }
    for y in &tracked.shapes {
        if !seen.shapes.iter().any(|x| same_shape(x, y)) {
            diff += u128::from(y.weight) * s;
        }
    }
    diff * 32 > t * s
}

/// Two shapes equal but for their weight.
fn same_shape(a: &TypicalShape, b: &TypicalShape) -> bool {
    a.cpu == b.cpu
        && a.memory == b.memory
        && a.count == b.count
        && a.pods == b.pods
        && a.device_class_name == b.device_class_name
        && a.capacity == b.capacity
        && a.selectors == b.selectors
        && a.topology_key == b.topology_key
}

fn key(namespace: &str, name: &str) -> String {
    let mut k = String::with_capacity(namespace.len() + 1 + name.len());
    write_key(&mut k, namespace, name);
    k
}

/// Appends `namespace/name` to `buf`. Not `format!`: its machinery cost more than the
/// copy (the cycle makes keys for every pod and claim it touches).
fn write_key(buf: &mut String, namespace: &str, name: &str) {
    buf.push_str(namespace);
    buf.push('/');
    buf.push_str(name);
}

impl Scheduler {
    /// A scheduler over `cluster` with no workloads, placing with `options` (its step
    /// budgets bound every placement, what-if and explanation it makes).
    ///
    /// Its clock is the cluster's ([`Cluster::set_clock`]), at the epoch unless set:
    /// a controller calls [`advance`](Self::advance) with the current time first, so
    /// that taints stamped `timeAdded` now and `tolerationSeconds` count from then.
    pub fn new(cluster: Cluster, options: GangOptions) -> Scheduler {
        let mut s = Scheduler {
            cluster,
            pods: BTreeMap::new(),
            pending: BTreeSet::new(),
            pod_priorities: BTreeMap::new(),
            group_priorities: BTreeMap::new(),
            members: BTreeMap::new(),
            groups: BTreeMap::new(),
            claims: BTreeMap::new(),
            classes: Vec::new(),
            bound: BTreeMap::new(),
            group_claims: BTreeMap::new(),
            evictions: BTreeMap::new(),
            node_taint_seen: BTreeMap::new(),
            device_evictions: evict::DeviceEvictions::default(),
            index: BoundIndex::default(),
            given_mix: match options.policy.mix_source() {
                Some(MixSource::Given(m)) => Some(m.clone()),
                _ => None,
            },
            tracked_mix: None,
            options,
        };
        s.track_mix();
        let tainted: Vec<String> = s.cluster.nodes().map(|n| n.name.clone()).collect();
        for n in tainted {
            s.reindex_node_taints(&n);
        }
        s
    }

    /// Records a node's `NoExecute` taints in the index (after they changed).
    fn reindex_node_taints(&mut self, node: &str) {
        let tainted = self.cluster.node(node).is_some_and(|n| {
            n.taints
                .iter()
                .any(|t| t.effect == crate::TaintEffect::NoExecute)
        });
        if tainted {
            self.index.no_execute_nodes.insert(node.to_owned());
        } else {
            self.index.no_execute_nodes.remove(node);
        }
    }

    /// Indexes a pod just bound (after it went into `bound`). True when its binding
    /// holds every claim it names: then [`adopt_allocated_claims`] has nothing to adopt
    /// for it (every claim it would look at is its own binding's).
    ///
    /// [`adopt_allocated_claims`]: Self::adopt_allocated_claims
    fn index_bound(&mut self, pod: &str) -> bool {
        let (Some(p), Some(b)) = (self.pods.get(pod), self.bound.get(pod)) else {
            return false;
        };
        let mut claims: Vec<String> = p
            .resource_claims
            .iter()
            .map(|entry| self.claim_used(p, entry))
            .collect();
        if claims.len() > 1 {
            claims.sort_unstable();
            claims.dedup();
        }
        let own_only = claims
            .iter()
            .all(|c| b.claims.iter().any(|a| a.claim == *c));
        // One allocation per key, shared by the maps.
        let pod: Arc<str> = Arc::from(pod);
        let mut keys = Vec::with_capacity(claims.len());
        for c in claims {
            if let Some(k) = self
                .index
                .claim_users
                .get_key_value(c.as_str())
                .map(|e| e.0.clone())
            {
                self.index
                    .claim_users
                    .get_mut(&k)
                    .expect("just found")
                    .insert(pod.clone());
                keys.push(k);
            } else {
                let k: Arc<str> = Arc::from(c);
                self.index
                    .claim_users
                    .insert(k.clone(), BTreeSet::from([pod.clone()]));
                keys.push(k);
            }
        }
        if let Some(pods) = self.index.node_pods.get_mut(&b.node) {
            pods.insert(pod.clone());
        } else {
            let pods = BTreeSet::from([pod.clone()]);
            self.index.node_pods.insert(b.node.clone(), pods);
        }
        self.index.pod_claims.insert(pod, keys);
        own_only
    }

    /// Removes a pod from the indexes (when it leaves `bound`).
    fn unindex_bound(&mut self, pod: &str, node: &str) {
        for c in self.index.pod_claims.remove(pod).unwrap_or_default() {
            if let Some(users) = self.index.claim_users.get_mut(&c) {
                users.remove(pod);
                if users.is_empty() {
                    self.index.claim_users.remove(&c);
                }
            }
        }
        if let Some(pods) = self.index.node_pods.get_mut(node) {
            pods.remove(pod);
            if pods.is_empty() {
                self.index.node_pods.remove(node);
            }
        }
    }

    /// The placement options the scheduler places with.
    pub fn options(&self) -> &GangOptions {
        &self.options
    }

    /// The cluster (read only: change devices and taints through the scheduler so
    /// evictions are tracked).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The logical clock.
    pub fn now(&self) -> Time {
        self.cluster.clock()
    }

    /// A pod, bound or pending.
    pub fn pod(&self, key: &str) -> Option<&Pod> {
        self.pods.get(key)
    }

    /// Every pod, by key.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> + '_ {
        self.pods.values()
    }

    /// A PodGroup.
    pub fn group(&self, key: &str) -> Option<&PodGroup> {
        self.groups.get(key)
    }

    /// Every PodGroup, by key.
    pub fn groups(&self) -> impl Iterator<Item = &PodGroup> + '_ {
        self.groups.values()
    }

    /// Every ResourceClaim, by key (their `allocation` is what the scheduler recorded).
    pub fn claims(&self) -> impl Iterator<Item = &ResourceClaim> + '_ {
        self.claims.values()
    }

    /// The binding of a bound pod.
    pub fn binding(&self, pod: &str) -> Option<&PodBinding> {
        self.bound.get(pod)
    }

    /// The allocation of a claim (its `status.allocation`).
    pub fn allocation(&self, claim: &str) -> Option<&AllocationResult> {
        self.claims.get(claim)?.allocation.as_ref()
    }

    /// Records or clears a claim's `status.allocation`.
    fn set_allocation(&mut self, claim: &str, result: Option<AllocationResult>) {
        if let Some(c) = self.claims.get_mut(claim) {
            c.allocation = result;
        }
    }

    /// Scheduled NoExecute evictions, by time then pod. The schedule is kept current by
    /// every change made through the scheduler (cycles, removals, taints, rules, slices,
    /// [`advance`](Self::advance)).
    pub fn scheduled_evictions(&self) -> Vec<PodEviction> {
        let mut v: Vec<PodEviction> = self.evictions.values().cloned().collect();
        v.sort();
        v
    }

    /// Adds a PriorityClass (replacing one of the same name).
    pub fn put_priority_class(&mut self, class: PriorityClass) -> Result<(), SchedulerError> {
        class.validate().map_err(SchedulerError::Invalid)?;
        self.classes.retain(|c| c.name != class.name);
        self.classes.push(class);
        Ok(())
    }

    /// Adds a ResourceClaim (pending until a pod using it is placed).
    pub fn add_claim(&mut self, claim: ResourceClaim) -> Result<(), SchedulerError> {
        claim.validate().map_err(SchedulerError::Invalid)?;
        let k = key(&claim.namespace, &claim.name);
        if self.claims.contains_key(&k) {
            return Err(SchedulerError::Invalid(vec![ValidationError::new(
                claim.object_ref(),
                "metadata.name",
                Problem::Duplicate { value: k },
            )]));
        }
        self.claims.insert(k, claim);
        Ok(())
    }

    /// Removes a ResourceClaim (`namespace/name`) that is not allocated, and returns it.
    /// Pending pods naming it wait for it again (a cycle reports them as failed).
    ///
    /// An allocated claim is in use — reserved for a bound pod or its PodGroup — and
    /// is refused (upstream's finalizer keeps such a claim until `status.reservedFor`
    /// is empty): remove or complete its users first, which releases it.
    pub fn remove_claim(&mut self, claim: &str) -> Result<ResourceClaim, SchedulerError> {
        let Some(c) = self.claims.get(claim) else {
            return Err(SchedulerError::Cluster(ClusterError::NotFound(
                ObjectRef::cluster(ObjectKind::ResourceClaim, claim),
            )));
        };
        if c.allocation.is_some() {
            return Err(SchedulerError::Invalid(vec![ValidationError::new(
                c.object_ref(),
                "status.reservedFor",
                Problem::Forbidden {
                    reason: "the claim is allocated and in use; release its users first",
                },
            )]));
        }
        Ok(self.claims.remove(claim).expect("checked above"))
    }

    /// Adds a PodGroup. Its priority, when unset, comes from its `priorityClassName`
    /// (or the global default class), as admission sets it.
    pub fn add_group(&mut self, mut group: PodGroup) -> Result<(), SchedulerError> {
        group.validate().map_err(SchedulerError::Invalid)?;
        let k = key(&group.namespace, &group.name);
        if self.groups.contains_key(&k) {
            return Err(SchedulerError::Invalid(vec![ValidationError::new(
                group.object_ref(),
                "metadata.name",
                Problem::Duplicate { value: k },
            )]));
        }
        if group.priority.is_none() {
            let resolved =
                crate::resolve_priority(&self.classes, group.priority_class_name.as_deref());
            match resolved {
                Some((value, policy)) => {
                    group.priority = Some(value);
                    group.preemption_policy.get_or_insert(policy);
                }
                None => {
                    return Err(SchedulerError::Invalid(vec![ValidationError::new(
                        group.object_ref(),
                        "spec.priorityClassName",
                        Problem::NotFound {
                            value: group.priority_class_name.clone().unwrap_or_default(),
                        },
                    )]));
                }
            }
        }
        count_in(&mut self.group_priorities, group.effective_priority());
        self.groups.insert(k, group);
        Ok(())
    }

    /// Adds a pod. A pod with `nodeName` set is running: its requests are reserved on
    /// that node (its claims must already be allocated in the cluster, if any).
    pub fn add_pod(&mut self, pod: Pod) -> Result<(), SchedulerError> {
        pod.validate().map_err(SchedulerError::Invalid)?;
        let k = key(&pod.namespace, &pod.name);
        if self.pods.contains_key(&k) {
            return Err(SchedulerError::Invalid(vec![ValidationError::new(
                pod.object_ref(),
                "metadata.name",
                Problem::Duplicate { value: k },
            )]));
        }
        if let Some(node_name) = &pod.node_name {
            // A running pod's claims are allocated (the kubelet starts it only then):
            // one that names a missing or unallocated claim would use devices nobody holds.
            let unallocated: Vec<ValidationError> =
                pod.resource_claims
                    .iter()
                    .enumerate()
                    .filter_map(|(i, entry)| {
                        let ClaimSource::ClaimName(n) = &entry.source else {
                            return None;
                        };
                        let field = format!("spec.resourceClaims[{i}].resourceClaimName");
                        match self.claims.get(&key(&pod.namespace, n)) {
                            None => Some(ValidationError::new(
                                pod.object_ref(),
                                field,
                                Problem::NotFound { value: n.clone() },
                            )),
                            Some(c) => match &c.allocation {
                                None => Some(ValidationError::new(
                                    pod.object_ref(),
                                    field,
                                    Problem::Invalid {
                                        value: n.clone(),
                                        reason: "a running pod's claim must be allocated",
                                    },
                                )),
                                Some(a)
                                    if a.node_selector.as_ref().is_some_and(|sel| {
                                        !self.cluster.node(node_name).is_some_and(|node| {
                                            sel.matches(&node.name, &node.labels)
                                        })
                                    }) =>
                                {
                                    Some(ValidationError::new(
                                        pod.object_ref(),
                                        field,
                                        Problem::Invalid {
                                            value: n.clone(),
                                            reason: "the claim is allocated for another node \
                                                 (status.allocation.nodeSelector)",
                                        },
                                    ))
                                }
                                Some(_) => None,
                            },
                        }
                    })
                    .collect();
            if !unallocated.is_empty() {
                return Err(SchedulerError::Invalid(unallocated));
            }
            let Some(node) = self.cluster.node(node_name) else {
                return Err(SchedulerError::Cluster(ClusterError::NotFound(
                    ObjectRef::cluster(ObjectKind::Node, node_name),
                )));
            };
            let requests = crate::gang::apply::pod_node_requests(&pod, node);
            self.cluster
                .reserve_node_resources(node_name, &k, requests)?;
            self.bound.insert(
                k.clone(),
                PodBinding {
                    pod: k.clone(),
                    node: node_name.clone(),
                    claims: Vec::new(),
                },
            );
        }
        if let Some(g) = &pod.scheduling_group {
            self.members
                .entry(key(&pod.namespace, g))
                .or_default()
                .insert(k.clone());
        }
        let bound = pod.node_name.is_some();
        count_in(&mut self.pod_priorities, pod.priority);
        self.pods.insert(k.clone(), pod);
        if bound {
            self.adopt_allocated_claims(&k);
            self.index_bound(&k);
        } else {
            self.pending.insert(k);
        }
        Ok(())
    }

    /// A pod added bound takes over the allocated claims it uses, as if it had been
    /// bound here: a claim of its PodGroup goes to the group's claims, any other
    /// allocated claim to its binding unless another bound pod's binding holds it
    /// already. So completing, preempting or evicting pods that were running when the
    /// scheduler started releases their devices like those of pods it bound. Also
    /// run for pods a cycle binds, for claims allocated before that nothing holds.
    fn adopt_allocated_claims(&mut self, pod: &str) {
        let Some(p) = self.pods.get(pod) else {
            return;
        };
        let group = p
            .scheduling_group
            .as_ref()
            .map(|g| key(&p.namespace, g))
            .filter(|g| self.groups.contains_key(g));
        let mut own = Vec::new();
        let mut of_group = Vec::new();
        let binding = self.bound.get(pod);
        for entry in &p.resource_claims {
            let c = self.claim_used(p, entry);
            // Held by the pod's own binding (a claim the cycle bound it with; the pod
            // is indexed then, so the search below would find it held): known without
            // looking the claim up.
            if binding.is_some_and(|b| b.claims.iter().any(|a| a.claim == c)) {
                debug_assert!(
                    self.index
                        .claim_users
                        .get(c.as_str())
                        .is_some_and(|users| users.contains(pod)),
                    "a claim of the pod's own binding is indexed"
                );
                continue;
            }
            let Some(result) = self.claims.get(&c).and_then(|c| c.allocation.as_ref()) else {
                continue;
            };
            // Held by a binding already: another bound user's or, when the pod is
            // indexed (a pod the cycle bound), its own. Decided before the result is
            // copied.
            let held = self
                .index
                .claim_users
                .get(c.as_str())
                .into_iter()
                .flatten()
                .filter_map(|u| self.bound.get(&**u))
                .any(|b| b.claims.iter().any(|a| a.claim == c));
            if held {
                continue;
            }
            let allocation = |claim| ClaimAllocation {
                claim,
                result: result.clone(),
            };
            match &group {
                Some(g) if self.groups[g].group_claim_for(entry).is_some() => {
                    // Held once: a pod that named it under another entry (its own use,
                    // KEP-5729) keeps holding it, and hands it on to the next user.
                    of_group.push(allocation(c));
                }
                _ => {
                    // A claim the group holds (a member named it with the group's
                    // entry) stays the group's.
                    let of_a_group = || self.group_claims.values().flatten().any(|a| a.claim == c);
                    if !own.iter().any(|a: &ClaimAllocation| a.claim == c) && !of_a_group() {
                        own.push(allocation(c));
                    }
                }
            }
        }
        if let Some(g) = group {
            let held = self.group_claims.entry(g).or_default();
            for a in of_group {
                if !held.iter().any(|h| h.claim == a.claim) {
                    held.push(a);
                }
            }
        }
        if let Some(b) = self.bound.get_mut(pod) {
            b.claims.extend(own);
        }
    }

    /// The priority and preemption policy of a unit. A PodGroup's policy is its own
    /// with the `PodGroupPreemptionPolicy` gate, else its pods' (they share one; the
    /// first member's, as upstream, `PreemptLowerPriority` without members).
    fn unit_priority(&self, unit: &Unit) -> (i32, PreemptionPolicy, Time) {
        match unit {
            Unit::Group(g) => {
                let group = &self.groups[g];
                let policy = if self.options.pod_group_preemption_policy {
                    group.effective_preemption_policy()
                } else {
                    self.members
                        .get(g)
                        .and_then(|m| m.iter().find_map(|k| self.pods.get(k)))
                        .map(|p| p.preemption_policy)
                        .unwrap_or_default()
                };
                (group.effective_priority(), policy, group.creation)
            }
            Unit::Pod(p) => {
                let pod = &self.pods[p];
                (pod.priority, pod.preemption_policy, pod.creation)
            }
        }
    }

    /// The group a pod belongs to, if it exists.
    fn group_of(&self, pod: &Pod) -> Option<String> {
        let g = pod.scheduling_group.as_ref()?;
        let k = key(&pod.namespace, g);
        self.groups.contains_key(&k).then_some(k)
    }

    /// The lowest priority of any pod, pending or bound.
    pub(super) fn lowest_pod_priority(&self) -> Option<i32> {
        self.pod_priorities.keys().next().copied()
    }

    /// The lowest effective priority of any PodGroup, if there is one.
    pub(super) fn lowest_group_priority(&self) -> Option<i32> {
        self.group_priorities.keys().next().copied()
    }

    /// Whether any PodGroup or pod ranks below `priority`: without one, a unit of that
    /// priority has no victim, and [`preempt`](Self::preempt) searches for none.
    pub(super) fn anything_ranks_below(&self, priority: i32) -> bool {
        self.lowest_group_priority().is_some_and(|p| p < priority)
            || self.lowest_pod_priority().is_some_and(|p| p < priority)
    }

    /// The pending pods with their keys, in key order. Both maps are in key order, so
    /// a finger steps from one pending pod to the next where they are neighbours in the
    /// pods map (most pods pending), and searches from the root where they are not.
    fn pending_pods(&self) -> Vec<(&String, &Pod)> {
        let mut pods = Finger::new(&self.pods);
        self.pending
            .iter()
            .filter_map(|k| Some((k, pods.get(k)?.1)))
            .collect()
    }

    /// Pending units in the order a cycle takes them.
    pub fn pending_units(&self) -> Vec<Unit> {
        // Each unit with its sort key (priority, then creation), read where the unit is
        // found: the group's or the pod's own, so nothing is looked up again.
        let mut keyed: Vec<(core::cmp::Reverse<i32>, Time, Unit)> = Vec::new();
        // The last pod's namespace and group: members are named alike, so they mostly
        // come one after another, and their unit is in `keyed` already.
        let mut last: Option<(&str, &str)> = None;
        let mut buf = String::new();
        // Groups come in key order when their pods are named after them, as is usual.
        let mut groups = Finger::new(&self.groups);
        for (k, pod) in self.pending_pods() {
            debug_assert!(pod.node_name.is_none(), "{k} is pending with a node");
            let named = pod.scheduling_group.as_deref();
            if let (Some(g), Some((ns, lg))) = (named, last)
                && ns == pod.namespace
                && lg == g
            {
                continue;
            }
            last = None;
            match named {
                Some(g) => {
                    buf.clear();
                    write_key(&mut buf, &pod.namespace, g);
                    // A pod naming a missing PodGroup waits for it (upstream:
                    // unresolvable until the group appears).
                    if let Some((gk, group)) = groups.get(buf.as_str()) {
                        keyed.push((
                            core::cmp::Reverse(group.effective_priority()),
                            group.creation,
                            Unit::Group(gk.clone()),
                        ));
                        last = Some((pod.namespace.as_str(), g));
                    }
                }
                None => keyed.push((
                    core::cmp::Reverse(pod.priority),
                    pod.creation,
                    Unit::Pod(k.clone()),
                )),
            }
        }
        // By key, then unit; a group found twice has the same key both times, so its
        // copies are neighbours, and each unit is kept once.
        keyed.sort_unstable();
        keyed.dedup_by(|a, b| a.2 == b.2);
        debug_assert!(
            keyed.iter().all(|(p, c, u)| {
                let (priority, _, creation) = self.unit_priority(u);
                (p.0, *c) == (priority, creation)
            }),
            "a pending unit's sort key is its priority and creation"
        );
        keyed.into_iter().map(|(_, _, u)| u).collect()
    }

    /// The placer's inputs for a unit: the group, its members (or the pod), and the
    /// claims they name.
    fn inputs(&self, unit: &Unit) -> (Option<PodGroup>, Vec<Pod>, Vec<ResourceClaim>) {
        self.input_refs(unit).to_owned()
    }

    /// [`Scheduler::inputs`], borrowed.
    fn input_refs(&self, unit: &Unit) -> UnitInputs<'_> {
        let (group, pods): (Option<&PodGroup>, Vec<&Pod>) = match unit {
            Unit::Group(g) => {
                let group = &self.groups[g];
                // Members in key order, usually neighbours in the pods map too.
                let mut pods = Finger::new(&self.pods);
                let pods = self
                    .members
                    .get(g)
                    .into_iter()
                    .flatten()
                    .filter_map(|k| pods.get(k).map(|e| e.1))
                    .collect();
                (Some(group), pods)
            }
            Unit::Pod(p) => (None, vec![&self.pods[p]]),
        };
        // The claims named, by key: each `namespace/name` written into one buffer and
        // looked up (claims named after their pods come in key order, mostly), then
        // sorted and deduplicated (the order of the keys).
        let mut named: Vec<(&String, &ResourceClaim)> = Vec::new();
        let mut buf = String::new();
        let mut claims = Finger::new(&self.claims);
        let mut look_up = |ns: &str, name: &str| {
            buf.clear();
            write_key(&mut buf, ns, name);
            named.extend(claims.get(buf.as_str()));
        };
        for p in pods.iter().filter(|p| p.node_name.is_none()) {
            for c in &p.resource_claims {
                if let ClaimSource::ClaimName(n) = &c.source {
                    look_up(&p.namespace, n);
                }
            }
        }
        if let Some(g) = group {
            for c in &g.resource_claims {
                if let ClaimSource::ClaimName(n) = &c.source {
                    look_up(&g.namespace, n);
                }
            }
        }
        named.sort_unstable_by_key(|&(k, _)| k);
        named.dedup_by_key(|&mut (k, _)| k);
        // Allocated claims come with their `status.allocation`: the placer does not
        // allocate them again, only keeps their users where they are usable.
        let claims = named.into_iter().map(|(_, c)| c).collect();
        UnitInputs {
            is_group: matches!(unit, Unit::Group(_)),
            group,
            pods,
            claims,
        }
    }

    /// Why a pending unit is pending (see [`Cluster::explain_gang`]), against the
    /// current state. Changes nothing.
    pub fn explain(&self, unit: &Unit) -> Result<crate::Explanation, SchedulerError> {
        self.check_unit(unit)?;
        let (group, pods, claims) = self.explain_inputs(unit);
        Ok(self
            .cluster
            .explain_gang(group.as_ref(), &pods, &claims, &self.options)?)
    }

    /// The placer's inputs for explaining a unit: [`Scheduler::inputs`] with the
    /// running members' claims too (what the unit holds itself is not "other claims"
    /// in an explanation).
    fn explain_inputs(&self, unit: &Unit) -> (Option<PodGroup>, Vec<Pod>, Vec<ResourceClaim>) {
        let (group, pods, mut claims) = self.inputs(unit);
        for p in pods.iter().filter(|p| p.node_name.is_some()) {
            for c in &p.resource_claims {
                let ClaimSource::ClaimName(n) = &c.source else {
                    continue;
                };
                let k = key(&p.namespace, n);
                if let Some(claim) = self.claims.get(&k)
                    && !claims
                        .iter()
                        .any(|x| x.namespace == claim.namespace && x.name == claim.name)
                {
                    claims.push(claim.clone());
                }
            }
        }
        (group, pods, claims)
    }

    /// Fails when the unit's PodGroup or pod does not exist.
    fn check_unit(&self, unit: &Unit) -> Result<(), SchedulerError> {
        let missing = match unit {
            Unit::Group(g) => (!self.groups.contains_key(g)).then_some((ObjectKind::PodGroup, g)),
            Unit::Pod(p) => (!self.pods.contains_key(p)).then_some((ObjectKind::Pod, p)),
        };
        match missing {
            Some((kind, name)) => Err(SchedulerError::Cluster(ClusterError::NotFound(
                ObjectRef::cluster(kind, name),
            ))),
            None => Ok(()),
        }
    }

    /// Scores Stranding and FGD placements against `mix` from now on (`None`: the
    /// policy's own source again, the observed mix unless the policy names one).
    /// Refused, with nothing changed, when the mix is invalid.
    ///
    /// With [`MixSource::Observed`] the scheduler counts the shapes of the pods it
    /// holds, running and pending, at each cycle, and follows them when they have
    /// moved by more than 1/64 (total variation) since it last did: each change
    /// rescores every node, so small drifts do not.
    pub fn set_workload_mix(&mut self, mix: Option<ShapeMix>) -> Result<(), SchedulerError> {
        if let Some(m) = &mix {
            let object = ObjectRef::cluster(ObjectKind::PodGroup, "workload mix");
            m.validate_at(&object, "")
                .map_err(SchedulerError::Invalid)?;
        }
        self.given_mix = match mix {
            Some(m) => Some(m),
            None => match self.options.policy.mix_source() {
                Some(MixSource::Given(m)) => Some(m.clone()),
                _ => None,
            },
        };
        self.tracked_mix = None;
        self.track_mix();
        Ok(())
    }

    /// The mix Stranding and FGD placements score against now: given, or as last
    /// observed; `None` under the other policies.
    pub fn workload_mix(&self) -> Option<&ShapeMix> {
        self.tracked_mix.as_ref()
    }

    /// Under the gang-aware policy, adds the topology keys the pending PodGroups of
    /// `units` require to the protected keys for this cycle; returns the keys as given,
    /// to restore after it.
    fn protect_pending(&mut self, units: &[Unit]) -> Option<Vec<String>> {
        let ScoringPolicy::GangAware(_) = &self.options.policy else {
            return None;
        };
        let keys: BTreeSet<String> = units
            .iter()
            .filter_map(|u| match u {
                Unit::Group(g) => self.groups.get(g)?.topology.first().map(|t| t.key.clone()),
                Unit::Pod(_) => None,
            })
            .collect();
        let ScoringPolicy::GangAware(p) = &mut self.options.policy else {
            return None;
        };
        let given = p.protect.clone();
        for k in keys {
            if !p.protect.contains(&k) {
                p.protect.push(k);
            }
        }
        Some(given)
    }

    /// Keeps the cluster's tracked measures on the mix of the policy: the given one,
    /// else the observed one when it moved (see [`Scheduler::set_workload_mix`]).
    fn track_mix(&mut self) {
        if self.options.policy.mix_source().is_none() {
            return;
        }
        let mix = match &self.given_mix {
            Some(m) if self.tracked_mix.as_ref() == Some(m) => return,
            Some(m) => m.clone(),
            None => {
                let seen = ShapeMix::observe(self.pods.values(), self.claims.values());
                if self
                    .tracked_mix
                    .as_ref()
                    .is_some_and(|t| !mix_moved(t, &seen))
                {
                    return;
                }
                seen
            }
        };
        if self.tracked_mix.as_ref() == Some(&mix) {
            return;
        }
        self.cluster.track_scoring(&self.options.policy, &mix);
        self.tracked_mix = Some(mix);
    }

    /// Runs one scheduling cycle (see [`Scheduler`]). A unit whose inputs are
    /// invalid (a claim that does not exist, a selector that does not compile, ...) is
    /// reported as [`UnitResult::Failed`] with nothing of it applied; the other units
    /// are scheduled as usual.
    pub fn cycle(&mut self) -> CycleReport {
        self.track_mix();
        let mut report = CycleReport::default();
        let units = self.pending_units();
        let given = self.protect_pending(&units);
        let mut same = Equivalence::new(&self.options.policy);
        for unit in units {
            let result = self
                .schedule_unit_with(&unit, &mut same)
                .unwrap_or_else(UnitResult::Failed);
            report.units.push((unit, result));
        }
        if let (Some(protect), ScoringPolicy::GangAware(p)) = (given, &mut self.options.policy) {
            p.protect = protect;
        }
        report.evictions = self.refresh_evictions();
        report
    }

    /// Tries one unit: place, else preempt, else record; answered from `same` when an
    /// equivalent unit stayed pending earlier in the cycle (see `equivalence.rs`),
    /// which it keeps up to date.
    fn schedule_unit_with(
        &mut self,
        unit: &Unit,
        same: &mut Equivalence,
    ) -> Result<UnitResult, SchedulerError> {
        let inputs = self.input_refs(unit);
        if let Some(g) = inputs.group {
            let errs = check_group_members_gated(
                g,
                &inputs.pods,
                self.options.pod_group_preemption_policy,
            );
            if !errs.is_empty() {
                return Ok(UnitResult::Invalid(errs));
            }
        }
        let is_group = inputs.is_group;
        if let Some(outcome) = same.get(&inputs).cloned() {
            #[cfg(debug_assertions)]
            {
                let (group, pods, claims) = self.inputs(unit);
                let fresh = self.place_unit(unit, group.as_ref(), &pods, &claims, None);
                assert_eq!(
                    fresh.map(|(r, _)| r),
                    Ok(UnitResult::Pending(outcome.clone())),
                    "{unit}: the equivalence cache's answer differs from the search's"
                );
            }
            return Ok(UnitResult::Pending(outcome));
        }
        // Owned from the lookups above, not looked up again: the placement mutates.
        let (group, pods, claims) = inputs.to_owned();
        let placed = self.place_unit(unit, group.as_ref(), &pods, &claims, Some(&mut same.counts));
        match &placed {
            Ok((UnitResult::Pending(outcome), Aftermath::Pending { searched })) => {
                let (outcome, searched) = (outcome.clone(), *searched);
                same.insert(
                    &self.cluster,
                    is_group,
                    (group, pods, claims),
                    outcome,
                    searched,
                );
            }
            Ok((UnitResult::Scheduled(d), Aftermath::Placed { most_free })) => {
                let c = &self.cluster;
                same.placed(
                    *most_free,
                    d.bindings.iter().filter_map(|b| c.node_id(&b.node)),
                );
            }
            _ => same.clear(),
        }
        placed.map(|(r, _)| r)
    }

    /// Place, else preempt, else pending; with what it may have changed. A placement
    /// is committed here.
    fn place_unit(
        &mut self,
        unit: &Unit,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        counts: Option<&mut CountMemo>,
    ) -> Result<(UnitResult, Aftermath), SchedulerError> {
        let (outcome, _) =
            self.cluster
                .place_gang_memo(group, pods, claims, &self.options, counts)?;
        match outcome {
            GangOutcome::Placed(d) => {
                let most_free = self.most_free_before(&d);
                self.commit(group, pods, &d)?;
                Ok((UnitResult::Scheduled(d), Aftermath::Placed { most_free }))
            }
            GangOutcome::Unschedulable { .. } | GangOutcome::BudgetExhausted { .. } => {
                let (priority, policy, _) = self.unit_priority(unit);
                if policy != PreemptionPolicy::PreemptLowerPriority {
                    let searched = false;
                    return Ok((
                        UnitResult::Pending(outcome),
                        Aftermath::Pending { searched },
                    ));
                }
                // `preempt`'s own first check: whether it searches at all.
                let searched = self.anything_ranks_below(priority);
                if let Some(p) = self.preempt(unit)? {
                    return Ok((UnitResult::Preempted(p), Aftermath::Other));
                }
                Ok((
                    UnitResult::Pending(outcome),
                    Aftermath::Pending { searched },
                ))
            }
            GangOutcome::WaitingForPods { .. } => {
                let searched = false;
                Ok((
                    UnitResult::Pending(outcome),
                    Aftermath::Pending { searched },
                ))
            }
        }
    }

    /// The most free devices any node of `d`'s bindings has before `d` is committed,
    /// when committing it changes only those nodes' devices and scalars (every device
    /// is node-local and exclusive, and no group claim is allocated); else `None`.
    fn most_free_before(&self, d: &PlacementDecision) -> Option<u32> {
        let c = &self.cluster;
        if !d.group_claims.is_empty() || c.has_shared_devices() || !c.shareable_devices().is_empty()
        {
            return None;
        }
        d.bindings.iter().try_fold(0, |most, b| {
            Some(most.max(c.node_free_devices(c.node_id(&b.node)?)))
        })
    }

    /// Records a placement: allocations and reservations in the cluster, pods bound.
    fn commit(
        &mut self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        d: &PlacementDecision,
    ) -> Result<(), SchedulerError> {
        self.cluster.apply_decision(d, pods)?;
        // Per binding: whether its pod may adopt claims allocated before.
        let mut adopting = Vec::with_capacity(d.bindings.len());
        for b in &d.bindings {
            if let Some(p) = self.pods.get_mut(&b.pod) {
                p.node_name = Some(b.node.clone());
            }
            self.pending.remove(&b.pod);
            for c in &b.claims {
                self.set_allocation(&c.claim, Some(c.result.clone()));
            }
            self.bound.insert(b.pod.clone(), b.clone());
            let own_only = self.index_bound(&b.pod);
            adopting.push(!own_only);
        }
        if let Some(g) = group
            && !d.group_claims.is_empty()
        {
            for c in &d.group_claims {
                self.set_allocation(&c.claim, Some(c.result.clone()));
            }
            self.group_claims
                .entry(key(&g.namespace, &g.name))
                .or_default()
                .extend(d.group_claims.iter().cloned());
        }
        // Claims allocated before (by another scheduler, or by a pod that has gone)
        // that no binding or group holds: the pods bound now take them over, so they
        // are released when their last user goes, as those the placer allocated. A
        // pod whose binding holds every claim it names has none to take.
        for (b, adopt) in d.bindings.iter().zip(adopting) {
            debug_assert_eq!(
                self.pods.get(&b.pod).and_then(|p| self.group_of(p)),
                group.map(|g| key(&g.namespace, &g.name)),
                "{}: a bound pod is in its unit's group",
                b.pod
            );
            if adopt {
                self.adopt_allocated_claims(&b.pod);
            }
        }
        // Adopting gives a bound member's group an entry in `group_claims` (perhaps
        // empty); every binding is a member of the unit's group, so it is made once.
        if let Some(g) = group
            && !d.bindings.is_empty()
        {
            self.group_claims
                .entry(key(&g.namespace, &g.name))
                .or_default();
        }
        Ok(())
    }

    /// Removes a pod (completed or deleted). Its node reservation is released, and so
    /// is every claim no remaining bound pod uses (a PodGroup's claims when no member
    /// is bound any more).
    pub fn remove_pod(&mut self, pod: &str) -> Result<Pod, SchedulerError> {
        let removed = self.remove_pod_quietly(pod)?;
        self.refresh_evictions();
        Ok(removed)
    }

    /// [`remove_pod`](Self::remove_pod) without bringing the eviction schedule up to
    /// date: for removals in a batch, followed by one refresh.
    fn remove_pod_quietly(&mut self, pod: &str) -> Result<Pod, SchedulerError> {
        let Some(p) = self.pods.get(pod) else {
            return Err(SchedulerError::Cluster(ClusterError::NotFound(
                ObjectRef::cluster(ObjectKind::Pod, pod),
            )));
        };
        let group = self.group_of(p);
        self.unbind(pod);
        let removed = self.pods.remove(pod).expect("checked above");
        self.pending.remove(pod);
        count_out(&mut self.pod_priorities, removed.priority);
        if let Some(g) = &removed.scheduling_group {
            let gk = key(&removed.namespace, g);
            if let Some(m) = self.members.get_mut(&gk) {
                m.remove(pod);
                if m.is_empty() {
                    self.members.remove(&gk);
                }
            }
        }
        if let Some(g) = group {
            self.release_group_claims_if_idle(&g);
        }
        self.evictions.remove(pod);
        self.node_taint_seen.remove(pod);
        Ok(removed)
    }

    /// Removes a PodGroup and every member.
    pub fn remove_group(&mut self, group: &str) -> Result<PodGroup, SchedulerError> {
        if !self.groups.contains_key(group) {
            return Err(SchedulerError::Cluster(ClusterError::NotFound(
                ObjectRef::cluster(ObjectKind::PodGroup, group),
            )));
        }
        let members: Vec<String> = self
            .members
            .get(group)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        for m in members {
            self.remove_pod_quietly(&m)?;
        }
        self.release_group_claims(group);
        let removed = self.groups.remove(group).expect("checked above");
        count_out(&mut self.group_priorities, removed.effective_priority());
        self.refresh_evictions();
        Ok(removed)
    }

    /// Unbinds a bound pod: releases its node reservation and the claims allocated with
    /// it that no other bound pod uses (hands the others to a remaining user). The pod
    /// stays, pending.
    fn unbind(&mut self, pod: &str) {
        let Some(b) = self.bound.remove(pod) else {
            return;
        };
        let _ = self.cluster.release_node_resources(&b.node, pod);
        self.unindex_bound(pod, &b.node);
        for c in b.claims {
            // The first other bound user of the claim, by key.
            let heir = self
                .index
                .claim_users
                .get(c.claim.as_str())
                .and_then(|users| users.first())
                .map(|u| String::from(&**u));
            // Another bound pod naming the claim keeps it allocated.
            if let Some(x) = heir.and_then(|h| self.bound.get_mut(&h)) {
                x.claims.push(c);
            } else {
                self.cluster.release_allocation(&c.claim, &c.result);
                self.set_allocation(&c.claim, None);
            }
        }
        if let Some(p) = self.pods.get_mut(pod) {
            p.node_name = None;
            self.pending.insert(pod.to_owned());
        }
    }

    fn release_group_claims_if_idle(&mut self, group: &str) {
        if !self.groups.contains_key(group) {
            return;
        }
        if bound_members(&self.members, &self.bound, group)
            .next()
            .is_none()
        {
            self.release_group_claims(group);
        }
    }

    /// Releases a PodGroup's claims once it has no bound member. A claim that a bound
    /// pod outside the group also uses (by name, as its own claim) is still reserved
    /// for that pod: it stays allocated and goes to that pod's binding, as `unbind`
    /// hands a claim to a remaining user.
    fn release_group_claims(&mut self, group: &str) {
        for c in self.group_claims.remove(group).unwrap_or_default() {
            let heir = self
                .index
                .claim_users
                .get(c.claim.as_str())
                .into_iter()
                .flatten()
                .find(|u| self.bound.contains_key(&***u))
                .map(|u| String::from(&**u));
            if let Some(x) = heir.and_then(|h| self.bound.get_mut(&h)) {
                x.claims.push(c);
            } else {
                self.cluster.release_allocation(&c.claim, &c.result);
                self.set_allocation(&c.claim, None);
            }
        }
    }
}

/// Counts one more `priority` in a multiset of priorities.
fn count_in(counts: &mut BTreeMap<i32, usize>, priority: i32) {
    *counts.entry(priority).or_default() += 1;
}

/// Counts one `priority` fewer; a priority no longer counted leaves the multiset.
fn count_out(counts: &mut BTreeMap<i32, usize>, priority: i32) {
    if let Some(n) = counts.get_mut(&priority) {
        *n -= 1;
        if *n == 0 {
            counts.remove(&priority);
        }
    }
}
