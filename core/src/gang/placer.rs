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

use crate::cluster::Cluster;
use crate::model::claim::ResourceClaim;
use crate::model::workload::{Pod, PodGroup};

use super::count_memo::CountMemo;
use super::search::Search;

use super::options::{GangError, GangOptions, GangOutcome, SearchStats};

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
        self.place_gang_memo(group, pods, claims, options, None)
    }

    /// [`place_gang_counted`](Self::place_gang_counted) with a scheduling cycle's
    /// memo of counted candidates (see `count_memo.rs`).
    pub(crate) fn place_gang_memo(
        &mut self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
        counts: Option<&mut CountMemo>,
    ) -> Result<(GangOutcome, SearchStats), GangError> {
        let memo = self.take_rank_memo();
        let (gang, memo) = self.gang_counted_with(group, pods, claims, options, memo, counts);
        self.restore_rank_memo(memo);
        let gang = gang?;
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
}
