//! Gang placement: all-or-nothing placement of a PodGroup's pods onto nodes and
//! devices, jointly, with count-based pruning, scoring policies and backtracking.
//!
//! [`Cluster::place_gang`] places the pending pods of one PodGroup (or standalone
//! pods) against one snapshot and returns a [`PlacementDecision`] — every binding and
//! claim allocation — or why not, without changing the cluster.
//! [`Cluster::place_gang_mut`] does the same using the cluster itself as scratch space
//! (restored before it returns), which saves the copy.
//!
//! How:
//!
//! 1. **Intake.** Pending members are grouped into *shapes* (equal requests,
//!    tolerations, node selector and affinity, claim specs and shared-claim use); each
//!    shape's claims are prepared once. A claim named by several pending pods, and every
//!    PodGroup-level claim, is *shared*: allocated once, with the first pod that uses
//!    it, and it must be usable from the node of every later pod that uses it. A group
//!    claim is the group's (reserved for the PodGroup, its allocation in
//!    `decision.group_claims`) only when a member names it with the group's entry, the
//!    same name and source (KEP-5729); a pod naming the same ResourceClaim under
//!    another entry uses it as its own, and a group claim no pending pod uses is not
//!    allocated. A group claim binds only the
//!    members that name it: when pending pods name it but none of them is placed (the
//!    gang reaches `minCount` without them), the decision leaves it unallocated, for
//!    the first of them to allocate when it is scheduled, as upstream allocates a
//!    claim with the first pod that references it (`validate_placement` accepts
//!    exactly this). A claim with
//!    `status.allocation` set is not allocated again: pods using it must run where its
//!    result's node selector admits. A claim that needs more devices than upstream's
//!    per-claim limit (32) whatever the node — counts, and for `firstAvailable` the
//!    least over its subrequests — fails the placement here with
//!    [`AllocationError::TooManyDevices`], as upstream's allocator fails the pod.
//! 2. **Counts.** Per shape and node, an upper bound on how many of its pods the node
//!    can host (`cap`): node filters (cordon, selector/affinity, node taints, `within`),
//!    free scalars divided by the pod's requests, and per device request the node's
//!    devices in `class ∧ usable ∧ free ∧ tolerated` (word-wise, from the index)
//!    divided by the count (a device the class's selectors fail on counts: the
//!    allocator aborts on it); a shareable device counts only where its room (what it
//!    has left of each capacity, `cluster/rooms.rs`) admits the request's capacity.
//!    Nodes with `cap = 0` are dropped before any search. The
//!    requests' own selectors, constraints, capacity and counters are left to the
//!    allocator, node by node as the search reaches it: counting them for every node
//!    would evaluate CEL on every device of the class on the placement path. An
//!    explanation or a what-if tightens the caps with them (`refine_caps`: one allocator
//!    call per candidate, exact when it says no).
//! 3. **Domains.** With a topology key, candidates are grouped by domain; a domain
//!    whose summed caps cannot reach `minCount` is skipped; the rest are tried in the
//!    policy's order (see [`ScoringPolicy`]), the first feasible one wins.
//! 4. **Search** (`search.rs`). Depth-first over pods in shape order: pods of one shape
//!    take nodes in non-decreasing candidate order (identical pods are never permuted), at
//!    most `cap` per node; each step allocates one pod's claims on one node with the claim
//!    allocator (all-or-nothing per pod and node), records it in the scratch cluster and
//!    undoes it on backtrack; a pod may be skipped when more pods are pending than
//!    `minCount` needs; the suffix sums of caps prune branches that cannot reach
//!    `minCount`. A pod's shared claims are allocated first, one by one, then its own
//!    claims jointly with those of the gang's pods already on the node (so a device
//!    choice made for an earlier pod there never blocks a later one). The choices other
//!    nodes see — the devices of a shared claim, and the network-attached devices own
//!    claims take — are revisited when the pods after them fail: the pod is bound again
//!    with one device fewer of a class it took (devices the gang's requests cannot tell
//!    apart form one class, so a choice is tried once per class, not per device), and a
//!    choice taking at least as much of every class as one that failed is not searched
//!    again. When no device choice is seen by other nodes (no network-attached devices,
//!    no shared claims to allocate), a node that refuses a pod — the allocator finds no
//!    allocation for the gang's pods there with it — has its cap for the pod's shape
//!    lowered to the pods it holds, until the earlier shapes' pods move (more pods on
//!    a node only need more), and the count bound is checked again before every
//!    candidate: a gang that counting admits but the nodes' constraints do not (every
//!    node one pod short of what its devices suggest) fails in steps linear in the
//!    nodes, not in the ways to spread the pods. A step budget
//!    ([`GangOptions::step_budget`]) bounds the search, and one
//!    ([`GangOptions::allocator_step_budget`]) each allocator call; running out of
//!    either is [`GangOutcome::BudgetExhausted`], never "does not fit". Below them
//!    the answer is exact (`core/tests/placer_props.rs` compares with a brute-force
//!    oracle that allocates shared claims and network-attached devices too), except for
//!    picks of shareable devices and admin-access picks, which are not revisited.
//!    A hard error of the allocator on a node (allocation mode `All` over more than 32
//!    matching devices, a selector failing on a device, an incomplete pool under `All`)
//!    ends the search: the placement fails with it, as upstream fails the pod.
//! 5. **Rest.** Pods beyond `minCount` are placed opportunistically, without
//!    backtracking.

use core::fmt;

use crate::alloc_prelude::*;
use crate::allocate::{
    AllocationError, AllocationOutcome, AllocatorOptions, ClaimPart, PreparedClaims,
    claim_limit_error,
};
use crate::cluster::bits::{DeviceSet, SparseDeviceSet};
use crate::cluster::ids::NodeId;
use crate::cluster::rooms::RoomRequest;
use crate::cluster::{Cluster, DeviceCounts};
use crate::gang::scoring::{ScoringPolicy, WorkloadMix};
use crate::model::claim::{AllocationMode, ResourceClaim, ResourceClaimSpec};
use crate::model::decision::PlacementDecision;
use crate::model::workload::{ClaimSource, Pod, PodGroup};
use crate::{DeviceRef, DeviceTaint, Quantity};

use super::filter::{Rejection, ShapeFilter};
use super::search::Search;

/// The default [`GangOptions::step_budget`].
pub const DEFAULT_STEP_BUDGET: u64 = 100_000;

/// Options of one gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct GangOptions {
    /// The most steps one gang search takes before it gives up with
    /// [`GangOutcome::BudgetExhausted`]. Default [`DEFAULT_STEP_BUDGET`] (100,000).
    ///
    /// A step is one pod tried on one candidate node (one claim allocator call for its
    /// claims there, jointly with the gang's pods already on it), or one revisit of a
    /// device choice other nodes see (the same binding tried again with one device
    /// fewer of a class it took; see the module docs). Checks that answer before any
    /// search take none: pods too few for `minCount`, nodes and domains counting rules
    /// out, and the node-by-node bounds the search learns as it goes. Pods placed
    /// beyond `minCount` spend what is left, without making the outcome undecided.
    ///
    /// Running out means undecided, never "does not fit": the outcome is
    /// `BudgetExhausted`, [`Cluster::explain_gang`] names this budget and its value,
    /// and the [`Scheduler`](crate::Scheduler) keeps the unit pending (it retries next
    /// cycle). [`Cluster::place_composite`] uses this budget for its own level too
    /// (each PodGroup placement attempt is one step there; each attempt gets the whole
    /// budget for its own search). Callers set it here; the `gangpack` command line
    /// with `--step-budget N`, the WebAssembly API with `stepBudget` in its options.
    #[cfg_attr(feature = "serde", serde(default = "default_step_budget"))]
    pub step_budget: u64,
    /// The step budget of each claim allocator call the search makes
    /// ([`AllocatorOptions::step_budget`]; default
    /// [`DEFAULT_ALLOCATOR_STEP_BUDGET`](crate::DEFAULT_ALLOCATOR_STEP_BUDGET),
    /// 1,000,000). One call that runs out ends the search with
    /// [`GangOutcome::BudgetExhausted`]: whether that node fits is unknown, so the
    /// gang's outcome is too. The command line sets it with `--allocator-step-budget N`,
    /// the WebAssembly API with `allocatorStepBudget`.
    #[cfg_attr(feature = "serde", serde(default = "default_allocator_step_budget"))]
    pub allocator_step_budget: u64,
    /// How to choose among feasible nodes and domains.
    pub policy: ScoringPolicy,
    /// Place only on nodes whose label `key` has value `value`, for every `(key, value)`
    /// given, as the topology constraints of enclosing CompositePodGroups ask of their
    /// children.
    pub within: Vec<(String, String)>,
    /// The `PodGroupPreemptionPolicy` feature gate of kube-scheduler (off by default in
    /// Kubernetes 1.37). Off: a PodGroup's pods must share one `preemptionPolicy`, and
    /// theirs decides whether the group may preempt; the PodGroup's own
    /// `spec.preemptionPolicy` is not read (the API server drops it without the gate).
    /// On: the PodGroup's `preemptionPolicy` (its field, else its PriorityClass's)
    /// decides, and every pod must have the same. A group breaking the rule fails with
    /// `SchedulerError` ([`check_group_members_gated`](crate::check_group_members_gated)).
    /// The command line sets it with `--feature-gates PodGroupPreemptionPolicy=true`,
    /// the WebAssembly API with `podGroupPreemptionPolicy`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub pod_group_preemption_policy: bool,
}

#[cfg(feature = "serde")]
fn default_step_budget() -> u64 {
    DEFAULT_STEP_BUDGET
}

#[cfg(feature = "serde")]
fn default_allocator_step_budget() -> u64 {
    crate::allocate::DEFAULT_ALLOCATOR_STEP_BUDGET
}

impl Default for GangOptions {
    fn default() -> GangOptions {
        GangOptions {
            step_budget: DEFAULT_STEP_BUDGET,
            allocator_step_budget: crate::allocate::DEFAULT_ALLOCATOR_STEP_BUDGET,
            policy: ScoringPolicy::BestFit,
            within: Vec::new(),
            pod_group_preemption_policy: false,
        }
    }
}

/// A step budget of a placement ([`GangOptions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum StepBudget {
    /// [`GangOptions::step_budget`]: the gang search's steps (or a composite's
    /// placement attempts).
    Gang,
    /// [`GangOptions::allocator_step_budget`]: the steps of one claim allocator call.
    Allocator,
}

impl StepBudget {
    /// Its value in `options`.
    pub fn value(self, options: &GangOptions) -> u64 {
        match self {
            StepBudget::Gang => options.step_budget,
            StepBudget::Allocator => options.allocator_step_budget,
        }
    }

    /// Where callers set it: the Rust field, the command-line flag and the WebAssembly
    /// option, as one phrase (`GangOptions::step_budget, --step-budget, stepBudget`).
    pub fn settings(self) -> &'static str {
        match self {
            StepBudget::Gang => "GangOptions::step_budget, --step-budget, stepBudget",
            StepBudget::Allocator => {
                "GangOptions::allocator_step_budget, --allocator-step-budget, allocatorStepBudget"
            }
        }
    }
}

impl fmt::Display for StepBudget {
    /// `gang search` or `claim allocation`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StepBudget::Gang => "gang search",
            StepBudget::Allocator => "claim allocation",
        })
    }
}

/// What one placement's search did ([`Cluster::place_gang_with_stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SearchStats {
    /// Steps of the gang search ([`GangOptions::step_budget`] counts them): never more
    /// than the budget.
    pub steps: u64,
    /// Steps of every claim allocator call the search made, summed (each call stays
    /// within [`GangOptions::allocator_step_budget`]).
    pub allocator_steps: u64,
    /// The budget that ran out, when the outcome is
    /// [`GangOutcome::BudgetExhausted`].
    pub exhausted: Option<StepBudget>,
    /// The most of the required pods any attempt placed together (before a budget ran
    /// out, too).
    pub best: usize,
}

/// The outcome of a gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum GangOutcome {
    /// Where the pods go and what their claims get.
    Placed(PlacementDecision),
    /// No placement of the required pods exists. Exact below the step budget, but
    /// for picks of shareable devices and admin-access picks, which the search does not
    /// revisit (see the module docs).
    Unschedulable {
        /// Pending pods that must be placed together.
        required: usize,
        /// The most of them any attempt placed; when counting ruled out every domain
        /// before any search, the most that any domain's free capacity could hold.
        best: usize,
    },
    /// Fewer members exist (pending and running) than `minCount`: the group waits for
    /// more pods, as upstream's PreEnqueue holds it.
    WaitingForPods {
        /// Members that exist.
        present: usize,
        /// `minCount`.
        min_count: u32,
    },
    /// A step budget ran out first: undecided (a placement may exist). Which budget —
    /// [`GangOptions::step_budget`], or [`GangOptions::allocator_step_budget`] of one
    /// allocator call — is in [`SearchStats::exhausted`] and in the explanation.
    BudgetExhausted {
        /// Steps of the gang search taken (the budget, when it is the one that ran
        /// out).
        steps: u64,
    },
}

/// Invalid input for a gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GangError {
    /// A pod or the group names a claim that is not among the claims given.
    MissingClaim {
        /// The pod (`namespace/name`) or group.
        owner: String,
        /// The claim (`namespace/name`).
        claim: String,
    },
    /// A claim comes from a ResourceClaimTemplate; instantiate it first.
    TemplateClaim {
        /// The pod or group.
        owner: String,
        /// The template name.
        template: String,
    },
    /// The claims of a pod cannot be prepared (invalid claim, missing class, CEL, more
    /// devices than the per-claim limit), or the allocator failed on a node with an
    /// error (upstream fails the pod with an error status, not Unschedulable).
    Allocation(AllocationError),
}

impl fmt::Display for GangError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GangError::MissingClaim { owner, claim } => {
                write!(f, "{owner}: ResourceClaim \"{claim}\" not found")
            }
            GangError::TemplateClaim { owner, template } => write!(
                f,
                "{owner}: claim template \"{template}\" must be instantiated before placement"
            ),
            GangError::Allocation(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for GangError {}

impl From<AllocationError> for GangError {
    fn from(e: AllocationError) -> GangError {
        GangError::Allocation(e)
    }
}

/// A claim allocated once for several pods: a PodGroup-level claim (every member uses
/// it) or a claim several pending pods name.
pub(crate) struct SharedClaim<'a> {
    /// `namespace/name`.
    pub(crate) name: String,
    pub(crate) claim: &'a ResourceClaim,
    /// Reserved for the PodGroup (its allocation goes to `decision.group_claims`): a
    /// claim of the group's `spec.resourceClaims` that some member names with the
    /// group's entry itself, the same name and source (KEP-5729). The group's claim
    /// named only under other entry names is the pods' own use of a shared claim,
    /// reserved for those pods and released with the last of them.
    pub(crate) group: bool,
    /// Its `status.allocation`, when it is allocated already: nothing to allocate,
    /// only where it is usable matters.
    pub(crate) allocated: Option<&'a crate::model::claim::AllocationResult>,
    /// Some pending pod uses it. A claim is allocated with the first pod bound that
    /// uses it, so it stays unallocated when none of them is placed; a group claim no
    /// pending pod names is not allocated at all (upstream allocates the claims pods
    /// use, KEP-5729).
    pub(crate) used: bool,
}

/// One pending pod, ready for the search.
pub(crate) struct PendingPod<'a> {
    pub(crate) pod: &'a Pod,
    pub(crate) key: String,
    /// Its own claims (`namespace/name`, claim), in pod order.
    pub(crate) own: Vec<(String, &'a ResourceClaim)>,
    /// The non-group shared claims it names (indices into `Gang::shared`), sorted.
    pub(super) uses: Vec<usize>,
    pub(crate) shape: usize,
}

/// Pods that are interchangeable for placement.
pub(crate) struct Shape<'a> {
    /// The first pod of the shape (by name).
    pub(crate) rep: &'a Pod,
    /// Pending pods of this shape.
    pub(crate) pods: usize,
    pub(crate) own_specs: Vec<&'a ResourceClaimSpec>,
    /// The shared claims its pods use (indices into `Gang::shared`), sorted.
    pub(crate) uses: Vec<usize>,
    /// The representative's own claims, prepared.
    pub(super) prepared: PreparedClaims,
    /// The pod's scalar requests; `pods: 1` is added on nodes that advertise `pods`.
    pub(super) requests: BTreeMap<String, Quantity>,
    /// The least number of devices one pod's own claims take.
    pub(crate) min_devices: u64,
    /// Nodes that may host pods of this shape, grouped by domain, in policy order.
    pub(crate) candidates: Vec<Candidate>,
}

/// A shape's own claims (its `prepared`), as the allocator takes them.
fn own_parts(prepared: &PreparedClaims) -> Vec<ClaimPart<'_>> {
    (0..prepared.claims().len())
        .map(|index| ClaimPart {
            claim: &prepared.claims()[index],
            prepared,
            index,
        })
        .collect()
}

/// A node that may host pods of one shape.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    pub(crate) node: NodeId,
    /// At most this many pods of the shape fit on it (an upper bound).
    pub(crate) cap: u32,
    /// Free usable devices of the kinds the shape asks for (for scoring).
    pub(crate) free: u32,
    /// Index into `Gang::domains` (0 without a topology key).
    pub(crate) domain: u32,
}

/// A gang ready to be placed: intake, counts and domains.
pub(crate) struct Gang<'a> {
    pub(crate) group: Option<&'a PodGroup>,
    pub(crate) running: Vec<&'a Pod>,
    /// Pending members, by shape then name.
    pub(crate) pods: Vec<PendingPod<'a>>,
    pub(crate) shapes: Vec<Shape<'a>>,
    pub(crate) shared: Vec<SharedClaim<'a>>,
    /// The shared claims prepared, in `shared` order.
    pub(super) shared_prepared: Option<PreparedClaims>,
    /// Allocated shared claims that new pods may not reserve, because a device of
    /// theirs carries a `NoExecute` taint the allocation does not tolerate: (index into
    /// `shared`, the device, the taint). Pods using one have no candidate node.
    pub(crate) tainted: Vec<(usize, DeviceRef, DeviceTaint)>,
    /// Pending pods that must be placed together.
    pub(crate) required: usize,
    /// The topology key, if any.
    pub(crate) key: Option<&'a str>,
    /// Domain values (`[""]` without a key), in the policy's order of preference after
    /// [`Gang::order_domains`].
    pub(crate) domains: Vec<String>,
    /// Domains the search may use (indices into `domains`), best first.
    pub(crate) order: Vec<u32>,
    /// The most pending pods any domain's caps allow (capped at `required`).
    pub(crate) most: usize,
    /// Per shape, per domain: the range of `candidates` in that domain.
    ranges: Vec<Vec<(u32, u32)>>,
    /// Devices the unit itself holds: those of the allocated claims its running members
    /// name and of its allocated shared claims. Not free, but not other workloads'
    /// either: the explanation never reports them as "allocated to other claims". Filled
    /// by the explanation only (placing does not need it).
    pub(crate) own: DeviceSet,
}

impl Cluster {
    /// Places the pending pods of `group` (or, without a group, each of `pods` on its
    /// own) against this cluster, without changing it. `claims` are the
    /// ResourceClaims the pods and the group name (by `resourceClaimName`).
    ///
    /// With a gang policy, at least `minCount` pods — counting those already running —
    /// are placed together or none is; further pending pods are placed where they still
    /// fit. With the basic policy or no group, every pod that fits is placed.
    ///
    /// This works on a copy of the cluster (cheap: the heavy parts are shared); see
    /// [`place_gang_mut`](Self::place_gang_mut) to skip the copy.
    pub fn place_gang(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<GangOutcome, GangError> {
        self.clone().place_gang_mut(group, pods, claims, options)
    }

    /// [`place_gang`](Self::place_gang), using this cluster as scratch space: every
    /// allocation tried is undone before it returns, so the cluster is left as it was
    /// (observably: device states, allocations, node reservations).
    pub fn place_gang_mut(
        &mut self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<GangOutcome, GangError> {
        self.place_gang_counted(group, pods, claims, options)
            .map(|(outcome, _)| outcome)
    }

    /// [`place_gang`](Self::place_gang), with what its search did: the steps it took
    /// of each budget, and which budget ran out when the outcome is
    /// [`GangOutcome::BudgetExhausted`].
    ///
    /// ```
    /// use gangpack::{Cluster, GangOptions, GangOutcome, Pod};
    ///
    /// let c = Cluster::new();
    /// let (outcome, stats) = c
    ///     .place_gang_with_stats(None, &[Pod::new("ns", "p")], &[], &GangOptions::default())
    ///     .unwrap();
    /// // No node at all: counting answers before any step.
    /// assert!(matches!(outcome, GangOutcome::Unschedulable { .. }));
    /// assert_eq!((stats.steps, stats.exhausted), (0, None));
    /// ```
    pub fn place_gang_with_stats(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<(GangOutcome, SearchStats), GangError> {
        self.clone()
            .place_gang_counted(group, pods, claims, options)
    }

    /// [`place_gang_with_stats`](Self::place_gang_with_stats) on this cluster as
    /// scratch space (as [`place_gang_mut`](Self::place_gang_mut)).
    pub(crate) fn place_gang_counted(
        &mut self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<(GangOutcome, SearchStats), GangError> {
        let gang = self.gang_intake(group, pods, claims, options)?;
        if let Some(waiting) = gang.waiting() {
            return Ok((waiting, SearchStats::default()));
        }
        if let Some(e) = self.first_selector_error(&gang, options) {
            return Err(GangError::Allocation(e));
        }
        let mut search = Search::new(self, &gang, options);
        let outcome = search.run();
        let stats = search.stats();
        search.restore();
        Ok((outcome?, stats))
    }

    /// Resolves, groups and counts a gang's pods (steps 1–3 of the module docs).
    pub(crate) fn gang_intake<'a>(
        &self,
        group: Option<&'a PodGroup>,
        pods: &'a [Pod],
        claims: &'a [ResourceClaim],
        options: &GangOptions,
    ) -> Result<Gang<'a>, GangError> {
        // The claims by (name, namespace), in a sorted list (cheaper than a map to
        // build and search); of claims with the same name, the last one given counts.
        let mut by_name: Vec<(&str, &str, &ResourceClaim)> = claims
            .iter()
            .map(|c| (c.name.as_str(), c.namespace.as_str(), c))
            .collect();
        by_name.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let lookup = |ns: &str, name: &str| {
            let end = by_name.partition_point(|e| (e.0, e.1) <= (name, ns));
            let (n, s, c) = *by_name.get(end.checked_sub(1)?)?;
            (n == name && s == ns).then_some(c)
        };
        let find = |owner: &str,
                    ns: &str,
                    source: &ClaimSource|
         -> Result<(String, &'a ResourceClaim), GangError> {
            match source {
                ClaimSource::ClaimName(name) => lookup(ns, name)
                    .map(|c| (qualified(ns, name), c))
                    .ok_or_else(|| GangError::MissingClaim {
                        owner: owner.to_owned(),
                        claim: qualified(ns, name),
                    }),
                ClaimSource::Template(t) => Err(GangError::TemplateClaim {
                    owner: owner.to_owned(),
                    template: t.clone(),
                }),
            }
        };
        let member = |p: &Pod| {
            group.is_none_or(|g| {
                p.namespace == g.namespace && p.scheduling_group.as_deref() == Some(g.name.as_str())
            })
        };
        let running: Vec<&Pod> = pods
            .iter()
            .filter(|p| member(p) && p.node_name.is_some())
            .collect();
        let mut shared: Vec<SharedClaim<'a>> = Vec::new();
        let group_claims = group.map_or(0, |g| g.resource_claims.len());
        if let Some(g) = group {
            let owner = format!("PodGroup {}/{}", g.namespace, g.name);
            for c in &g.resource_claims {
                let (name, claim) = find(&owner, &g.namespace, &c.source)?;
                // Whether it is reserved for the group is known once the members'
                // entries are read, below.
                shared.push(SharedClaim {
                    name,
                    claim,
                    group: false,
                    allocated: claim.allocation.as_ref(),
                    used: false,
                });
            }
        }
        // Pending members with their claims; a claim several of them name is shared.
        let mut pending: Vec<PendingPod<'a>> = Vec::new();
        for pod in pods.iter().filter(|p| member(p) && p.node_name.is_none()) {
            let key = qualified(&pod.namespace, &pod.name);
            let mut own = Vec::new();
            let mut uses = Vec::new();
            for c in &pod.resource_claims {
                // A pod uses a group claim by naming it with the same name and source.
                if let Some(gc) = group.and_then(|g| g.group_claim_for(c)) {
                    if let Some(at) =
                        group.and_then(|g| g.resource_claims.iter().position(|x| x == gc))
                    {
                        shared[at].used = true;
                        shared[at].group = true;
                        uses.push(at);
                    }
                    continue;
                }
                let (name, claim) = find(&key, &pod.namespace, &c.source)?;
                // QUIRK (KEP-5729): the group's ResourceClaim named under another entry
                // name is not the group's claim for the pod (upstream matches every
                // field): the pod reserves it for itself. It is still the same object,
                // allocated once.
                if let Some(at) = shared
                    .iter()
                    .take(group_claims)
                    .position(|s| s.name == name)
                {
                    shared[at].used = true;
                    uses.push(at);
                    continue;
                }
                if let Some(result) = &claim.allocation {
                    // Allocated already (status.allocation): shared, nothing to allocate.
                    let at = if let Some(at) = shared.iter().position(|s| s.name == name) {
                        at
                    } else {
                        shared.push(SharedClaim {
                            name,
                            claim,
                            group: false,
                            allocated: Some(result),
                            used: true,
                        });
                        shared.len() - 1
                    };
                    uses.push(at);
                    continue;
                }
                own.push((name, claim));
            }
            uses.sort_unstable();
            uses.dedup();
            pending.push(PendingPod {
                pod,
                key,
                own,
                uses,
                shape: 0,
            });
        }
        // A group claim that running members name with the group's entry is reserved
        // for the group already.
        if let Some(g) = group {
            for (at, gc) in g.resource_claims.iter().enumerate() {
                if !shared[at].group
                    && running.iter().any(|p| {
                        p.resource_claims
                            .iter()
                            .any(|c| g.group_claim_for(c) == Some(gc))
                    })
                {
                    shared[at].group = true;
                }
            }
        }
        // Which of the pods' claims (in pod, then claim order) more than one names.
        let mut names: Vec<(&str, usize)> = pending
            .iter()
            .flat_map(|p| &p.own)
            .enumerate()
            .map(|(at, (name, _))| (name.as_str(), at))
            .collect();
        names.sort_unstable();
        let mut named_again = vec![false; names.len()];
        for run in names
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|run| run.len() > 1)
        {
            for &(_, at) in run {
                named_again[at] = true;
            }
        }
        drop(names);
        let mut first = 0;
        for p in &mut pending {
            let flags = &named_again[first..first + p.own.len()];
            first += p.own.len();
            if !flags.contains(&true) {
                continue;
            }
            let mut kept = Vec::with_capacity(p.own.len());
            for ((name, claim), &again) in core::mem::take(&mut p.own).into_iter().zip(flags) {
                if again {
                    let at = if let Some(at) = shared.iter().position(|s| s.name == name) {
                        at
                    } else {
                        shared.push(SharedClaim {
                            name,
                            claim,
                            group: false,
                            allocated: None,
                            used: true,
                        });
                        shared.len() - 1
                    };
                    p.uses.push(at);
                } else {
                    kept.push((name, claim));
                }
            }
            p.uses.sort_unstable();
            p.uses.dedup();
            p.own = kept;
        }
        // Shapes, by first appearance in name order.
        pending.sort_by(|a, b| a.key.cmp(&b.key));
        let mut shapes: Vec<Shape<'a>> = Vec::new();
        for p in &mut pending {
            let same = |s: &Shape<'_>| {
                s.rep.requests == p.pod.requests
                    && s.rep.tolerations == p.pod.tolerations
                    && s.rep.node_selector == p.pod.node_selector
                    && s.rep.required_node_affinity == p.pod.required_node_affinity
                    && s.own_specs.len() == p.own.len()
                    && s.own_specs
                        .iter()
                        .zip(&p.own)
                        .all(|(a, (_, c))| **a == c.spec)
                    && s.uses == p.uses
            };
            if let Some(at) = shapes.iter().position(same) {
                // Same specs as the prepared representative: check the names only.
                for (_, c) in &p.own {
                    c.validate_metadata()
                        .map_err(AllocationError::InvalidClaim)?;
                }
                shapes[at].pods += 1;
                p.shape = at;
                continue;
            }
            let specs: Vec<&ResourceClaimSpec> = p.own.iter().map(|(_, c)| &c.spec).collect();
            let own: Vec<ResourceClaim> = p.own.iter().map(|(_, c)| (*c).clone()).collect();
            let prepared = self.prepare_claims(&own)?;
            shapes.push(Shape {
                rep: p.pod,
                pods: 1,
                min_devices: specs.iter().map(|s| s.min_device_count()).sum(),
                own_specs: specs,
                uses: p.uses.clone(),
                prepared,
                requests: p.pod.requests.clone(),
                candidates: Vec::new(),
            });
            p.shape = shapes.len() - 1;
        }
        // An allocated claim whose devices carry an untolerated NoExecute taint cannot
        // be reserved by new pods (its current users are being evicted).
        let tainted: Vec<(usize, DeviceRef, DeviceTaint)> = shared
            .iter()
            .enumerate()
            .filter(|(_, s)| s.used)
            .filter_map(|(i, s)| {
                let (device, taint) = self.untolerated_no_execute(s.allocated?)?;
                Some((i, device, taint))
            })
            .collect();
        // Shared claims are prepared here too, so input errors come before any search.
        let shared_prepared = if shared.is_empty() {
            None
        } else {
            let all: Vec<ResourceClaim> = shared
                .iter()
                .map(|s| {
                    let mut c = s.claim.clone();
                    c.allocation = None;
                    c
                })
                .collect();
            Some(self.prepare_claims(&all)?)
        };
        // Upstream's per-claim device limit, once the claims are known to be valid.
        check_claim_limits(
            shapes.iter().flat_map(|s| s.prepared.claims()).chain(
                shared
                    .iter()
                    .filter(|s| s.allocated.is_none())
                    .map(|s| s.claim),
            ),
        )?;
        // Bigger pods first (most constrained), then by first pod name.
        let mut order: Vec<usize> = (0..shapes.len()).collect();
        order.sort_by_key(|&s| core::cmp::Reverse(shapes[s].min_devices));
        let mut rank = vec![0; shapes.len()];
        for (r, &s) in order.iter().enumerate() {
            rank[s] = r;
        }
        let mut sorted: Vec<Option<Shape<'a>>> = shapes.into_iter().map(Some).collect();
        let shapes: Vec<Shape<'a>> = order
            .iter()
            .map(|&s| sorted[s].take().expect("each shape once"))
            .collect();
        for p in &mut pending {
            p.shape = rank[p.shape];
        }
        pending.sort_by(|a, b| a.shape.cmp(&b.shape).then_with(|| a.key.cmp(&b.key)));

        let gang_min = group.and_then(|g| g.policy.min_count()).map(|m| m as usize);
        let required = match gang_min {
            Some(m) => m.saturating_sub(running.len()).min(pending.len()),
            None => 0,
        };
        let key = group
            .and_then(|g| g.topology.first())
            .map(|t| t.key.as_str());
        let mut gang = Gang {
            group,
            running,
            pods: pending,
            shapes,
            shared,
            shared_prepared,
            tainted,
            required,
            key,
            domains: Vec::new(),
            order: Vec::new(),
            most: 0,
            ranges: Vec::new(),
            own: DeviceSet::new(),
        };
        self.count_candidates(&mut gang, options);
        gang.order_domains(self, &options.policy);
        Ok(gang)
    }

    /// Tightens the caps of `gang`'s candidates, for explanations and what-ifs (the
    /// search finds the same on its own, node by node, so placing does not pay for it):
    /// a node on which one pod of a shape cannot get its own claims' devices now has cap
    /// 0. The allocator decides, so the request's own selectors, its constraints, its
    /// capacity demand and the shared counters count, which the index's counts do not.
    /// Still an upper bound for more pods, and exact when it says no (for the pod's own
    /// claims; shared claims are left to the search).
    pub(crate) fn refine_caps(&self, gang: &mut Gang<'_>) {
        for shape in &mut gang.shapes {
            if shape.prepared.claims().is_empty() {
                continue;
            }
            let parts = own_parts(&shape.prepared);
            let mut with_pods = shape.requests.clone();
            with_pods.insert("pods".into(), Quantity::from_int(1));
            for c in &mut shape.candidates {
                if c.cap == 0 {
                    continue;
                }
                let requests = match self.node_by_id(c.node) {
                    Some(n) if n.allocatable.contains_key("pods") => &with_pods,
                    Some(_) => &shape.requests,
                    None => continue,
                };
                let outcome = self.allocate_parts_on(
                    c.node,
                    &parts,
                    requests,
                    AllocatorOptions::default(),
                    None,
                );
                if let Ok(AllocationOutcome::Unsatisfiable(_)) = outcome {
                    c.cap = 0;
                }
            }
        }
    }

    /// The CEL error upstream's filtering would hit on some candidate node, if any.
    ///
    /// kube-scheduler runs its Filter plugins on every node (every node in clusters
    /// under 100 nodes; beyond that, until it has found enough feasible ones) before it
    /// chooses, and one DRA Filter that fails with an error (a selector reading an
    /// attribute a device lacks, say) fails the pod's whole scheduling attempt. The
    /// search stops at the first node that fits, so without this sweep a node it never
    /// tries would not abort it: a pod would be placed on `gpu-a` where upstream fails on
    /// `gpu-b`. Each shape's claims are tried on each of its candidate nodes, only when
    /// an error is possible at all: a request has selectors of its own, or a class
    /// selector failed on some device. (QUIRK-adjacent: on clusters of 100 nodes or
    /// more, upstream checks a rotating subset, so it may not reach the node; gangpack
    /// checks every candidate, deterministically.)
    fn first_selector_error(
        &self,
        gang: &Gang<'_>,
        options: &GangOptions,
    ) -> Option<AllocationError> {
        let class_errors = self.class_cache.values().any(|c| !c.errors.is_empty());
        for shape in &gang.shapes {
            if shape.prepared.claims().is_empty()
                || !(class_errors || shape.prepared.has_request_selectors())
            {
                continue;
            }
            let parts = own_parts(&shape.prepared);
            for c in &shape.candidates {
                let outcome = self.allocate_parts_on(
                    c.node,
                    &parts,
                    &shape.requests,
                    AllocatorOptions {
                        step_budget: options.allocator_step_budget,
                    },
                    None,
                );
                if let Err(e @ AllocationError::Evaluation(_)) = outcome {
                    return Some(e);
                }
            }
        }
        None
    }

    /// Step 2: every shape's candidate nodes with their caps; step 3's grouping.
    fn count_candidates(&self, gang: &mut Gang<'_>, options: &GangOptions) {
        let key = gang.key;
        // Domains: with running members, only theirs.
        let fixed: BTreeSet<&str> = match key {
            Some(k) => gang
                .running
                .iter()
                .filter_map(|p| self.node(p.node_name.as_deref()?)?.labels.get(k))
                .map(String::as_str)
                .collect(),
            None => BTreeSet::new(),
        };
        // Running members in several domains (or on a node without the label) already
        // break the constraint: no placement can satisfy it.
        if let Some(k) = key {
            let unlabelled = gang.running.iter().any(|p| {
                p.node_name
                    .as_deref()
                    .and_then(|n| self.node(n))
                    .is_some_and(|n| !n.labels.contains_key(k))
            });
            if fixed.len() > 1 || unlabelled {
                gang.domains = Vec::new();
                return;
            }
        }
        let mut domain_of: BTreeMap<&str, u32> = BTreeMap::new();
        // The previous node's domain: nodes next to each other by name often share one.
        let mut last: Option<(&str, u32)> = None;
        let mut domains: Vec<String> = Vec::new();
        if key.is_none() {
            domains.push(String::new());
        }
        for si in 0..gang.shapes.len() {
            let shape = &gang.shapes[si];
            if gang.tainted.iter().any(|(c, _, _)| shape.uses.contains(c)) {
                gang.shapes[si].candidates = Vec::new();
                continue;
            }
            let pod = shape.rep;
            let bounds = self.device_bounds(&shape.own_specs);
            let filter = ShapeFilter::new(self, pod, &shape.requests, &options.within, key);
            // More devices than all of the shape's pods need do not raise a cap.
            let pods_cap = u32::try_from(shape.pods).unwrap_or(u32::MAX);
            let mut out = Vec::with_capacity(self.node_slots());
            // Without a topology key, a node with fewer free devices than one of the
            // pod's requests needs at least cannot host it: its counts say so without
            // loading it or its devices.
            let least_free = if key.is_none() {
                bounds
                    .iter()
                    .map(|alts| alts.iter().map(|b| b.need).min().unwrap_or(0))
                    .max()
                    .unwrap_or(0)
            } else {
                0
            };
            // A `nodeSelector` entry few nodes match (a hostname, say) narrows the scan to
            // those nodes, taken in the same (name) order.
            let narrowed = self.nodes_selected(&pod.node_selector);
            let order: &[NodeId] = narrowed.as_deref().unwrap_or(self.node_order());
            for &id in order {
                if least_free > 0 && self.node_free_devices(id) < least_free {
                    continue;
                }
                let Some(node) = self.node_by_id(id) else {
                    continue;
                };
                // Devices first: counting them does not load the node object, so without
                // a topology key (whose domains every node adds to) a node without room
                // is skipped at once.
                let devices = self.node_devices(id);
                let mut free = 0;
                let mut device_cap = u32::MAX;
                for alts in &bounds {
                    let mut best = 0;
                    // Scoring counts the free devices of requests without shareable
                    // devices only.
                    let scored = alts.iter().all(|b| b.share.is_none());
                    for b in alts {
                        let enough = b.need.saturating_mul(pods_cap);
                        let have = self.bound_on_node(id, devices, b, enough);
                        if scored {
                            free = free.max(have);
                        }
                        best = best.max(have / b.need);
                    }
                    device_cap = device_cap.min(best);
                }
                if device_cap == 0 && key.is_none() {
                    continue;
                }
                // The node filter (scope, cordon, selector and affinity, node taints,
                // scalar resources): the same function the explanation asks.
                let most = u32::try_from(shape.pods)
                    .unwrap_or(u32::MAX)
                    .min(device_cap);
                let in_fixed = |v: &str| fixed.is_empty() || fixed.contains(v);
                let filtered = self.filter_node(id, node, &filter, in_fixed, most);
                if matches!(
                    filtered.verdict,
                    Err(Rejection::OutOfScope | Rejection::Cordoned)
                ) {
                    continue;
                }
                let domain = match filtered.domain {
                    None => 0,
                    Some(v) => match last {
                        Some((value, d)) if value == v => d,
                        _ => {
                            let d = if let Some(&d) = domain_of.get(v) {
                                d
                            } else {
                                let d = domains.len() as u32;
                                domains.push(v.to_owned());
                                domain_of.insert(v, d);
                                d
                            };
                            last = Some((v, d));
                            d
                        }
                    },
                };
                let Ok(cap) = filtered.verdict else {
                    continue;
                };
                if bounds
                    .iter()
                    .all(|alts| alts.iter().any(|b| b.share.is_some()))
                {
                    free = self.node_counts(id).map_or(0, |c| c.free_untainted);
                }
                if cap > 0 {
                    out.push(Candidate {
                        node: id,
                        cap,
                        free,
                        domain,
                    });
                }
            }
            gang.shapes[si].candidates = out;
        }
        gang.domains = domains;
    }

    /// The nodes a `nodeSelector` allows at most, by name, when one of its entries
    /// matches few nodes (under an eighth of them); `None` to scan every node. Only
    /// narrows: the scan still checks every entry and the affinity on each node.
    fn nodes_selected(&self, selector: &BTreeMap<String, String>) -> Option<Vec<NodeId>> {
        let mut fewest: Option<&BTreeSet<NodeId>> = None;
        for (k, v) in selector {
            let Some(ids) = self.nodes_labelled(k, v) else {
                return Some(Vec::new());
            };
            if fewest.is_none_or(|f| ids.len() < f.len()) {
                fewest = Some(ids);
            }
        }
        let ids = fewest?;
        if ids.len().saturating_mul(8) >= self.node_slots() {
            return None;
        }
        let mut out: Vec<NodeId> = ids.iter().copied().collect();
        out.sort_by(|a, b| self.node_name_of(*a).cmp(self.node_name_of(*b)));
        Some(out)
    }

    /// How many devices of one request alternative a node can give at most: the
    /// usable devices of `b.set` on it, a shareable one only where its room admits the
    /// request's capacity (see `cluster/rooms.rs`).
    /// Counting stops at `enough`: more do not raise the pod's cap.
    fn bound_on_node(
        &self,
        id: NodeId,
        devices: Option<&SparseDeviceSet>,
        b: &DeviceBound,
        enough: u32,
    ) -> u32 {
        let Some(share) = &b.share else {
            return devices.map_or(0, |d| d.count_in(&b.set)) as u32;
        };
        let exclusive =
            u32::try_from(devices.map_or(0, |d| d.count_in(&share.exclusive))).unwrap_or(u32::MAX);
        if exclusive >= enough {
            return exclusive;
        }
        let (rooms, summary) = self.node_rooms(id);
        if summary.is_some_and(|s| !s.may_admit(&share.capacity)) {
            return exclusive;
        }
        let mut have = exclusive;
        for r in rooms {
            if b.set.contains(r.dev) && Cluster::share_room_admits(r, &share.capacity) {
                have += 1;
                if have >= enough {
                    break;
                }
            }
        }
        have
    }

    /// Per device request of a shape's own claims, its alternatives as bounds on what
    /// a node can give; requests that cannot be bounded by counting (admin access,
    /// allocation mode `All` over shareable devices, network-attached devices) are left
    /// out.
    fn device_bounds(&self, specs: &[&ResourceClaimSpec]) -> Vec<Vec<DeviceBound>> {
        let mut out = Vec::new();
        for spec in specs {
            'request: for r in &spec.requests {
                let mut alts = Vec::new();
                for view in r.alternatives() {
                    if view.admin_access {
                        continue 'request;
                    }
                    let need = match view.allocation_mode {
                        AllocationMode::ExactCount(n) => n.max(1),
                        AllocationMode::All => 1,
                    };
                    // Devices the class's selectors fail on count: the allocator
                    // aborts on them (a CEL runtime error is not a mismatch).
                    let Some(class) = self.class_devices_or_failing(view.device_class_name) else {
                        continue 'request;
                    };
                    let mut set = class.into_owned();
                    self.restrict_usable(&mut set, view.tolerations);
                    if intersects(&set, self.shared_devices()) {
                        continue 'request;
                    }
                    let share = if intersects(&set, self.shareable_devices()) {
                        if view.allocation_mode == AllocationMode::All {
                            continue 'request;
                        }
                        let mut exclusive = set.clone();
                        exclusive.difference_with(self.shareable_devices());
                        Some(ShareBound {
                            exclusive,
                            capacity: view
                                .capacity
                                .iter()
                                .map(|(k, q)| (self.symbol(k), *q))
                                .collect(),
                        })
                    } else {
                        None
                    };
                    alts.push(DeviceBound { set, need, share });
                }
                if !alts.is_empty() {
                    out.push(alts);
                }
            }
        }
        out
    }
}

/// One alternative of a device request, as [`Cluster::device_bounds`] counts it on a
/// node.
struct DeviceBound {
    /// The usable candidate devices.
    set: DeviceSet,
    /// Devices one pod needs.
    need: u32,
    /// When `set` holds shareable devices: how to count those.
    share: Option<ShareBound>,
}

/// The shareable part of a [`DeviceBound`].
struct ShareBound {
    /// `set` without its shareable devices (counted as free devices).
    exclusive: DeviceSet,
    /// The request's capacity requests, for the shareable devices' rooms.
    capacity: Vec<RoomRequest>,
}

/// Sorts candidates by domain, then by free devices (ascending, or descending when
/// `descending`), keeping node-name order among equals: a counting sort when the keys
/// are few (nodes hold a handful of devices), else a stable comparison sort.
fn sort_by_domain_and_free(candidates: &mut Vec<Candidate>, domains: usize, descending: bool) {
    if candidates.len() < 2 {
        return;
    }
    let max_free = u64::from(candidates.iter().map(|c| c.free).max().unwrap_or(0));
    // In u64: a domain index times the free count can pass u32::MAX, which `usize` is
    // on wasm32 (where the product overflowed and the order differed from native).
    let keys = (domains.max(1) as u64).saturating_mul(max_free + 1);
    let key = |c: &Candidate| {
        let f = if descending {
            max_free - u64::from(c.free)
        } else {
            u64::from(c.free)
        };
        u64::from(c.domain) * (max_free + 1) + f
    };
    if keys > 4 * candidates.len() as u64 + 64 {
        candidates.sort_by_key(key);
        return;
    }
    // Few keys: each fits a usize.
    let slot = |c: &Candidate| key(c) as usize;
    let keys = keys as usize;
    let mut start = vec![0usize; keys + 1];
    for c in candidates.iter() {
        start[slot(c) + 1] += 1;
    }
    for k in 0..keys {
        start[k + 1] += start[k];
    }
    let mut out = vec![candidates[0]; candidates.len()];
    for c in candidates.iter() {
        let k = slot(c);
        out[start[k]] = *c;
        start[k] += 1;
    }
    *candidates = out;
}

/// Upstream's per-claim device limit on the claims to allocate, for what does not
/// depend on the node: counts, and for `firstAvailable` the least over the subrequests
/// (allocation mode `All` counts one here; the allocator checks its matching devices
/// on each node). The first claim over the limit is the error.
#[inline(never)]
fn check_claim_limits<'c>(
    claims: impl Iterator<Item = &'c ResourceClaim>,
) -> Result<(), AllocationError> {
    for claim in claims {
        let counts = claim
            .spec
            .requests
            .iter()
            .map(|r| usize::try_from(r.min_device_count()).unwrap_or(usize::MAX));
        if let Some(e) = claim_limit_error(claim, counts) {
            return Err(e);
        }
    }
    Ok(())
}

/// `namespace/name`.
fn qualified(namespace: &str, name: &str) -> String {
    let mut s = String::with_capacity(namespace.len() + 1 + name.len());
    s.push_str(namespace);
    s.push('/');
    s.push_str(name);
    s
}

fn intersects(a: &DeviceSet, b: &DeviceSet) -> bool {
    a.words().iter().zip(b.words()).any(|(x, y)| x & y != 0)
}

impl Gang<'_> {
    /// `WaitingForPods` when fewer members exist than `minCount`.
    fn waiting(&self) -> Option<GangOutcome> {
        let min = self.group?.policy.min_count()?;
        let present = self.running.len() + self.pods.len();
        (present < min as usize).then_some(GangOutcome::WaitingForPods {
            present,
            min_count: min,
        })
    }

    /// Sorts each shape's candidates by domain then policy, and orders the domains
    /// that pass the count bound by the policy's domain score.
    fn order_domains(&mut self, cluster: &Cluster, policy: &ScoringPolicy) {
        let domains = self.domains.len();
        for shape in &mut self.shapes {
            let k = shape.min_devices;
            // Stable: equal keys stay in node-name order.
            match policy {
                ScoringPolicy::BestFit => {
                    sort_by_domain_and_free(&mut shape.candidates, domains, false);
                }
                ScoringPolicy::Spread => {
                    sort_by_domain_and_free(&mut shape.candidates, domains, true);
                }
                ScoringPolicy::FragmentationAware(mix) => shape.candidates.sort_by_key(|c| {
                    let take = u32::try_from(k).unwrap_or(u32::MAX);
                    (c.domain, mix.node_fragmentation_delta(c.free, take), c.free)
                }),
            }
        }
        self.ranges = self
            .shapes
            .iter()
            .map(|s| {
                let mut r = vec![(0u32, 0u32); domains];
                let mut i = 0;
                while i < s.candidates.len() {
                    let d = s.candidates[i].domain;
                    let mut j = i;
                    while j < s.candidates.len() && s.candidates[j].domain == d {
                        j += 1;
                    }
                    r[d as usize] = (i as u32, j as u32);
                    i = j;
                }
                r
            })
            .collect();
        let want = self.wanted_by_shape(self.required);
        let mut scored: Vec<(i64, u32)> = Vec::new();
        // Free devices per domain, for the policies that score by them (computed once,
        // when a domain first passes the count bound).
        let mut free: Option<Vec<i64>> = None;
        // Devices per domain, for the device bound (when it holds).
        let mut devices: Option<Vec<i64>> = None;
        let device_bound = self.device_bound_holds(cluster);
        for d in 0..domains {
            let reach: usize = (0..self.shapes.len())
                .map(|s| {
                    let caps = self.caps_in(s, d as u32);
                    self.shapes[s]
                        .pods
                        .min(usize::try_from(caps).unwrap_or(usize::MAX))
                })
                .sum();
            // The pods the domain's free devices hold at most, the smallest first: each
            // pod's own claims take devices of its node, none twice.
            let reach = if device_bound && reach >= self.required {
                let have =
                    devices.get_or_insert_with(|| self.domains_count(cluster, |c| c.free))[d];
                reach.min(self.pods_within(u64::try_from(have).unwrap_or(0)))
            } else {
                reach
            };
            self.most = self.most.max(reach.min(self.required));
            if reach < self.required {
                continue;
            }
            if domains == 1 {
                // One domain: nothing to order.
                scored.push((0, d as u32));
                continue;
            }
            let mut free_in = |d: usize| {
                free.get_or_insert_with(|| self.domains_count(cluster, |c| c.free_untainted))[d]
            };
            let score = match policy {
                ScoringPolicy::BestFit => free_in(d),
                ScoringPolicy::Spread => -free_in(d),
                ScoringPolicy::FragmentationAware(mix) => {
                    self.domain_fragmentation(mix, d as u32, &want)
                }
            };
            scored.push((score, d as u32));
        }
        // Ties: the domain value (name order).
        let names = &self.domains;
        scored.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| names[a.1 as usize].cmp(&names[b.1 as usize]))
        });
        self.order = scored.into_iter().map(|(_, d)| d).collect();
    }

    /// The candidates of shape `s` in domain `d`, in policy order.
    pub(crate) fn candidates_in(&self, s: usize, d: u32) -> &[Candidate] {
        let (a, b) = self.ranges[s].get(d as usize).copied().unwrap_or((0, 0));
        &self.shapes[s].candidates[a as usize..b as usize]
    }

    /// How many pods of shape `s` the caps of its candidates in domain `d` allow
    /// (an upper bound: the sum of the caps).
    pub(crate) fn caps_in(&self, s: usize, d: u32) -> u64 {
        self.candidates_in(s, d)
            .iter()
            .map(|c| u64::from(c.cap))
            .sum()
    }

    /// How many pods of each shape the first `required` pending pods hold.
    pub(crate) fn wanted_by_shape(&self, required: usize) -> Vec<usize> {
        let mut want = vec![0usize; self.shapes.len()];
        for p in self.pods.iter().take(required) {
            want[p.shape] += 1;
        }
        want
    }

    /// Whether every pod's own claims take devices of its node, none shared with
    /// another pod, each counted in [`DeviceCounts::free`](crate::DeviceCounts::free)
    /// there: no network-attached or shareable device exists, and no request of the
    /// pods' own claims has admin access. Then a domain whose free devices are fewer
    /// than the required pods need cannot host them.
    fn device_bound_holds(&self, cluster: &Cluster) -> bool {
        !cluster.has_shared_devices()
            && cluster.shareable_devices().is_empty()
            && self.shapes.iter().all(|s| {
                s.own_specs.iter().all(|spec| {
                    spec.requests
                        .iter()
                        .all(|r| r.alternatives().iter().all(|v| !v.admin_access))
                })
            })
    }

    /// How many pending pods `devices` devices hold at most: the pods needing the
    /// fewest devices first.
    fn pods_within(&self, devices: u64) -> usize {
        let mut shapes: Vec<(u64, usize)> = self
            .shapes
            .iter()
            .map(|s| (s.min_devices, s.pods))
            .collect();
        shapes.sort_unstable();
        let mut left = devices;
        let mut pods = 0;
        for (each, n) in shapes {
            if each == 0 {
                pods += n;
                continue;
            }
            let fit = usize::try_from(left / each).unwrap_or(usize::MAX).min(n);
            pods += fit;
            left -= each * fit as u64;
            if fit < n {
                break;
            }
        }
        pods
    }

    /// Per domain, `count` of the device counts of its candidate nodes, summed (each
    /// node once; a node is in one domain).
    fn domains_count(&self, cluster: &Cluster, count: impl Fn(&DeviceCounts) -> u32) -> Vec<i64> {
        let mut total = vec![0i64; self.domains.len()];
        // Nodes counted, one bit per node id.
        let mut seen: Vec<u64> = Vec::new();
        for shape in &self.shapes {
            for c in &shape.candidates {
                let (word, bit) = (c.node.index() / 64, 1u64 << (c.node.index() % 64));
                if word >= seen.len() {
                    seen.resize(word + 1, 0);
                }
                if seen[word] & bit == 0 {
                    seen[word] |= bit;
                    total[c.domain as usize] +=
                        i64::from(cluster.node_counts(c.node).map_or(0, |n| count(&n)));
                }
            }
        }
        total
    }

    /// How much the mix's fragmentation of domain `d` rises when `want[s]` pods of each
    /// shape are placed greedily on its candidates in policy order.
    fn domain_fragmentation(&self, mix: &WorkloadMix, d: u32, want: &[usize]) -> i64 {
        let mut free: BTreeMap<NodeId, u32> = BTreeMap::new();
        for s in 0..self.shapes.len() {
            for c in self.candidates_in(s, d) {
                free.entry(c.node).or_insert(c.free);
            }
        }
        let before: Vec<u32> = free.values().copied().collect();
        let before = mix.fragmentation(&before);
        for (s, &n) in want.iter().enumerate() {
            let k = u32::try_from(self.shapes[s].min_devices).unwrap_or(u32::MAX);
            let mut left = n;
            for c in self.candidates_in(s, d) {
                let f = free.get_mut(&c.node).expect("collected above");
                let mut placed = 0;
                while left > 0 && placed < c.cap && *f >= k {
                    *f -= k;
                    placed += 1;
                    left -= 1;
                }
            }
        }
        let after: Vec<u32> = free.values().copied().collect();
        let after = mix.fragmentation(&after);
        i64::try_from(after).unwrap_or(i64::MAX) - i64::try_from(before).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::{Candidate, sort_by_domain_and_free};
    use crate::NodeId;
    use crate::alloc_prelude::*;

    fn candidate(node: u32, domain: u32, free: u32) -> Candidate {
        Candidate {
            node: NodeId(node),
            cap: 1,
            free,
            domain,
        }
    }

    /// The sort key is a domain index times the largest free count: past `u32::MAX`
    /// here, which overflowed a 32-bit `usize` (wasm32) before the key was a `u64`.
    #[test]
    fn sort_keys_past_u32_keep_domain_then_free_order() {
        let mut c = vec![
            candidate(0, 70_000, 5),
            candidate(1, 3, 70_000),
            candidate(2, 70_000, 1),
            candidate(3, 3, 2),
        ];
        sort_by_domain_and_free(&mut c, 70_001, false);
        assert_eq!(c.iter().map(|c| c.node.0).collect::<Vec<_>>(), [3, 1, 2, 0]);
        sort_by_domain_and_free(&mut c, 70_001, true);
        assert_eq!(c.iter().map(|c| c.node.0).collect::<Vec<_>>(), [1, 3, 0, 2]);
    }
}
