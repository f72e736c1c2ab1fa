//! Step 4 of gang placement (see `placer.rs`): the depth-first, all-or-nothing search
//! over one domain at a time. Pods of one shape take candidates in non-decreasing order,
//! each step is one allocator call for one pod on one node jointly with the gang's pods
//! already there, suffix sums of caps prune branches that can no longer reach
//! `minCount`, and every allocation recorded in the scratch cluster is undone on
//! backtrack and before the search returns.

use smallvec::SmallVec;

use crate::Quantity;
use crate::alloc_prelude::*;
use crate::allocate::{AllocationOutcome, AllocatorOptions, ClaimPart, Picked};
use crate::cluster::Cluster;
use crate::cluster::ids::NodeId;
use crate::gang::scoring::ScoringPolicy;
use crate::model::claim::AllocationResult;
use crate::model::decision::{ClaimAllocation, PlacementDecision, PodBinding};
use crate::model::error::{ObjectKind, ObjectRef};
use crate::model::node::validate_resource_list;

use super::placer::{Candidate, Gang, GangOptions, GangOutcome};

/// One claim's allocation recorded in the scratch cluster (the claim's name is in
/// the gang: [`PendingPod::own`](super::placer::PendingPod::own) or
/// [`SharedClaim::name`](super::placer::SharedClaim::name)).
struct Held {
    result: AllocationResult,
    /// The devices of `result.devices`, in order: the scratch cluster records and
    /// releases allocations by id.
    devices: SmallVec<[Picked; 8]>,
}

impl Held {
    /// The allocation of claim `name`, for the decision; the result stays behind
    /// empty.
    fn take(&mut self, name: &str) -> ClaimAllocation {
        ClaimAllocation {
            claim: name.to_owned(),
            result: core::mem::take(&mut self.result),
        }
    }
}

/// One pod bound in the scratch cluster.
struct Bound {
    /// Index into `Gang::pods`.
    pod: usize,
    node: NodeId,
    /// The binding on the same node before it (index into `Search::bound`).
    prev_on_node: Option<u32>,
    /// Its own claims' allocations, in `PendingPod::own` order.
    own: Vec<Held>,
    /// Shared claims allocated with this pod: (index into `Gang::shared`, allocation).
    shared: Vec<(usize, Held)>,
    /// Earlier bindings on the same node whose own allocations this one's joint
    /// allocation replaced: (index into `Search::bound`, their old allocations).
    displaced: Vec<Displaced>,
}

type Displaced = (usize, Vec<Held>);

/// A shape's scalar requests as one of its pods reserves them on a node, and whether
/// they pass the checks [`Cluster::reserve_node_resources`] makes. Pods are not
/// validated at intake, so requests that fail them make every bind of the shape fail.
struct Reservation {
    requests: BTreeMap<String, Quantity>,
    valid: bool,
}

impl Reservation {
    fn new(requests: BTreeMap<String, Quantity>) -> Reservation {
        let mut errs = Vec::new();
        let pod = ObjectRef::cluster(ObjectKind::Pod, "");
        validate_resource_list(&pod, "spec.resources.requests", &requests, &mut errs);
        Reservation {
            valid: errs.is_empty(),
            requests,
        }
    }
}

/// The depth-first search of step 4, over one domain at a time.
pub(super) struct Search<'c, 'g, 'a> {
    cluster: &'c mut Cluster,
    gang: &'g Gang<'a>,
    spread: bool,
    /// Per shape: the current domain's candidates.
    lists: Vec<&'g [Candidate]>,
    /// Per shape: suffix sums of the caps in `lists`.
    suffix: Vec<Vec<u64>>,
    /// Per shape `s`: Σ over shapes `t ≥ s` of min(pods, total caps).
    tail: Vec<u64>,
    /// Per shape: the index in `gang.pods` just past its pods.
    shape_end: Vec<usize>,
    /// Per shape, per candidate: pods placed there now.
    used: Vec<Vec<u32>>,
    /// Per shape: its pods' scalar requests, without and with `pods: 1` (added on
    /// nodes that advertise `pods`).
    reservations: Vec<[Reservation; 2]>,
    /// The claims of one allocator call (kept empty between calls, to reuse it).
    parts: Vec<ClaimPart<'g>>,
    /// The devices the last allocator call picked.
    picked: Vec<Picked>,
    /// For each pending pod, the index of its candidate once placed.
    node_of: Vec<Option<usize>>,
    bound: Vec<Bound>,
    /// For each shared claim, whether it is allocated now.
    shared_done: Vec<bool>,
    /// Per node id, the last binding on it (index into `bound`); the bindings
    /// before it are chained through [`Bound::prev_on_node`].
    last_on_node: Vec<Option<u32>>,
    steps: u64,
    budget: u64,
    best: usize,
    exhausted: bool,
}

impl<'c, 'g, 'a> Search<'c, 'g, 'a> {
    pub(super) fn new(cluster: &'c mut Cluster, gang: &'g Gang<'a>, options: &GangOptions) -> Self {
        let mut shape_end = vec![0; gang.shapes.len()];
        for (k, p) in gang.pods.iter().enumerate() {
            shape_end[p.shape] = k + 1;
        }
        let reservations = gang
            .shapes
            .iter()
            .map(|s| {
                let mut with_pods = s.requests.clone();
                with_pods.insert("pods".into(), Quantity::from_int(1));
                [
                    Reservation::new(s.requests.clone()),
                    Reservation::new(with_pods),
                ]
            })
            .collect();
        // Node ids are below `node_slots`.
        let last_on_node = vec![None; cluster.node_slots()];
        Search {
            cluster,
            gang,
            spread: matches!(options.policy, ScoringPolicy::Spread),
            lists: Vec::new(),
            suffix: Vec::new(),
            tail: Vec::new(),
            shape_end,
            used: Vec::new(),
            reservations,
            parts: Vec::new(),
            picked: Vec::new(),
            node_of: vec![None; gang.pods.len()],
            bound: Vec::new(),
            shared_done: gang.shared.iter().map(|s| s.allocated.is_some()).collect(),
            last_on_node,
            steps: 0,
            budget: options.step_budget,
            best: 0,
            exhausted: false,
        }
    }

    pub(super) fn run(&mut self) -> GangOutcome {
        let gang = self.gang;
        // Without a gang (no group, or the basic policy) every pod is placed on its own:
        // the unit makes progress when at least one pending pod is placed, and is
        // unschedulable when none can be.
        let nothing_placed = GangOutcome::Unschedulable {
            required: 1,
            best: 0,
        };
        if gang.order.is_empty() && gang.required == 0 {
            if gang.pods.is_empty() {
                return GangOutcome::Placed(PlacementDecision::default());
            }
            return nothing_placed;
        }
        for &d in &gang.order {
            self.set_domain(d);
            if self.place(0, 0) {
                self.place_rest();
                let decision = self.take_decision();
                if gang.required == 0 && decision.bindings.is_empty() && !gang.pods.is_empty() {
                    return nothing_placed;
                }
                return GangOutcome::Placed(decision);
            }
            if self.exhausted {
                return GangOutcome::BudgetExhausted { steps: self.steps };
            }
        }
        GangOutcome::Unschedulable {
            required: gang.required,
            // No domain searched: what counting allowed at most.
            best: if gang.order.is_empty() {
                gang.most
            } else {
                self.best
            },
        }
    }

    fn set_domain(&mut self, d: u32) {
        let gang = self.gang;
        self.lists = (0..gang.shapes.len())
            .map(|s| gang.candidates_in(s, d))
            .collect();
        self.suffix = self
            .lists
            .iter()
            .map(|l| {
                let mut v = vec![0u64; l.len() + 1];
                for i in (0..l.len()).rev() {
                    v[i] = v[i + 1] + u64::from(l[i].cap);
                }
                v
            })
            .collect();
        self.tail = vec![0; gang.shapes.len() + 1];
        for s in (0..gang.shapes.len()).rev() {
            self.tail[s] = self.tail[s + 1] + self.suffix[s][0].min(gang.shapes[s].pods as u64);
        }
        self.used = self.lists.iter().map(|l| vec![0; l.len()]).collect();
        self.node_of.iter_mut().for_each(|n| *n = None);
    }

    /// Places `required - placed` more pods among pods `k..` jointly; true when
    /// enough are placed (their bindings stay recorded).
    fn place(&mut self, k: usize, placed: usize) -> bool {
        let required = self.gang.required;
        if placed == required {
            return true;
        }
        if k >= self.gang.pods.len() {
            return false;
        }
        let s = self.gang.pods[k].shape;
        let prev = k
            .checked_sub(1)
            .filter(|&j| self.gang.pods[j].shape == s)
            .and_then(|j| self.node_of[j]);
        let from = prev.unwrap_or(0);
        // Count bound: what this shape (from `from` on) and later shapes can still hold.
        let left = (self.shape_end[s] - k) as u64;
        let here = (self.suffix[s][from] - u64::from(self.used[s].get(from).copied().unwrap_or(0)))
            .min(left);
        if placed as u64 + here + self.tail[s + 1] < required as u64 {
            return false;
        }
        let len = self.lists[s].len();
        // Candidates from `from` on; with Spread, the previous pod's node comes last.
        let rotate = self.spread && prev.is_some();
        for step in from..len {
            let i = if rotate && step + 1 < len {
                step + 1
            } else if rotate {
                from
            } else {
                step
            };
            if self.used[s][i] >= self.lists[s][i].cap {
                continue;
            }
            if self.steps >= self.budget {
                self.exhausted = true;
                return false;
            }
            self.steps += 1;
            if self.try_bind(k, i) {
                self.best = self.best.max(placed + 1);
                if self.place(k + 1, placed + 1) {
                    return true;
                }
                self.unbind();
                if self.exhausted {
                    return false;
                }
            }
        }
        // Skip this pod and every later pod of its shape.
        self.place(self.shape_end[s], placed)
    }

    /// Places the pods not placed yet where they fit, without backtracking; a shape
    /// that found no node for one pod is not tried again.
    fn place_rest(&mut self) {
        let mut failed = vec![false; self.gang.shapes.len()];
        for k in 0..self.gang.pods.len() {
            let s = self.gang.pods[k].shape;
            if self.node_of[k].is_some() || failed[s] {
                continue;
            }
            let mut done = false;
            for i in 0..self.lists[s].len() {
                if self.used[s][i] >= self.lists[s][i].cap {
                    continue;
                }
                if self.steps >= self.budget {
                    return;
                }
                self.steps += 1;
                if self.try_bind(k, i) {
                    done = true;
                    break;
                }
            }
            failed[s] = !done;
        }
    }

    /// Allocates pod `k`'s claims (and the shared claims it brings) on its shape's
    /// `i`-th candidate in the scratch cluster, and records the binding. Pods of the
    /// gang already on that node are re-allocated jointly with it (one allocator call,
    /// exact on one node), so a device choice made for an earlier pod never blocks a
    /// later one when another choice would serve both.
    fn try_bind(&mut self, pod_at: usize, cand: usize) -> bool {
        let gang = self.gang;
        let pending = &gang.pods[pod_at];
        let shape = &gang.shapes[pending.shape];
        let node_id = self.lists[pending.shape][cand].node;
        let Some(node) = self.cluster.node_by_id(node_id) else {
            return false;
        };
        let reservation = usize::from(node.allocatable.contains_key("pods"));
        if !self.reservations[pending.shape][reservation].valid {
            // The node would refuse the reservation whatever the devices.
            return false;
        }
        // Shared claims: allocated ones must be usable here; the others come along.
        let first = self.bound.is_empty();
        let mut bring = Vec::new();
        for (claim_at, sc) in gang.shared.iter().enumerate() {
            let uses = pending.uses.binary_search(&claim_at).is_ok();
            if !self.shared_done[claim_at] {
                // Allocated with the first pod that uses it (or, if no pending pod
                // does, with the first pod bound).
                if uses || (!sc.used && first) {
                    bring.push(claim_at);
                }
                continue;
            }
            if !uses {
                continue;
            }
            let usable_here = |result: &crate::model::claim::AllocationResult| {
                result
                    .node_selector
                    .as_ref()
                    .is_none_or(|sel| sel.matches(&node.name, &node.labels))
            };
            let usable = match sc.allocated {
                Some(result) => usable_here(result),
                None => self
                    .bound
                    .iter()
                    .flat_map(|bound| &bound.shared)
                    .any(|(at, held)| *at == claim_at && usable_here(&held.result)),
            };
            if !usable {
                return false;
            }
        }
        // The gang's pods already on this node give their own devices back for a
        // joint try (shared claims stay as allocated: other pods rely on them).
        let mut co: Vec<usize> = Vec::new();
        let mut at = self.last_on_node[node_id.index()];
        while let Some(b) = at {
            co.push(b as usize);
            at = self.bound[b as usize].prev_on_node;
        }
        co.reverse();
        for &bound in &co {
            self.release_claims(bound);
        }
        // The claims to allocate: the earlier pods', ours, then the shared ones.
        let mut parts = core::mem::take(&mut self.parts);
        let shared_prepared = gang.shared_prepared.as_ref();
        for &bound in &co {
            let q = &gang.pods[self.bound[bound].pod];
            let qs = &gang.shapes[q.shape];
            for (j, (_, c)) in q.own.iter().enumerate() {
                parts.push(ClaimPart {
                    claim: c,
                    prepared: &qs.prepared,
                    index: j,
                });
            }
        }
        for (j, (_, c)) in pending.own.iter().enumerate() {
            parts.push(ClaimPart {
                claim: c,
                prepared: &shape.prepared,
                index: j,
            });
        }
        for &claim_at in &bring {
            let sp = shared_prepared.expect("shared claims are prepared");
            parts.push(ClaimPart {
                claim: gang.shared[claim_at].claim,
                prepared: sp,
                index: claim_at,
            });
        }
        let requests = &self.reservations[pending.shape][reservation].requests;
        let outcome = self.cluster.allocate_parts_on(
            node_id,
            &parts,
            requests,
            AllocatorOptions::default(),
            Some(&mut self.picked),
        );
        parts.clear();
        self.parts = parts;
        let Ok(AllocationOutcome::Allocated(results)) = outcome else {
            for &bound in &co {
                self.recommit_claims(bound);
            }
            return false;
        };
        // Record: earlier pods' new results (old ones kept for the undo), then ours.
        let mut bound = Bound {
            pod: pod_at,
            node: node_id,
            prev_on_node: None,
            own: Vec::with_capacity(pending.own.len()),
            shared: Vec::with_capacity(bring.len()),
            displaced: Vec::new(),
        };
        // Results come in the order of the parts.
        let mut ids = self.picked.as_slice();
        let mut results = results.into_iter().map(|result| {
            let (these, rest) = ids.split_at(result.devices.len());
            ids = rest;
            Held {
                result,
                devices: SmallVec::from_slice(these),
            }
        });
        for &other in &co {
            let claims = gang.pods[self.bound[other].pod].own.len();
            if claims > 0 {
                let own = results.by_ref().take(claims).collect();
                let old = core::mem::replace(&mut self.bound[other].own, own);
                bound.displaced.push((other, old));
            }
        }
        bound.own.extend(results.by_ref().take(pending.own.len()));
        bound.shared.extend(bring.iter().copied().zip(results));
        // Commit every allocation on this node, then reserve the pod's resources.
        let mut committed = 0;
        let mut ok = true;
        for (claim, held) in joint(gang, &self.bound, &co, &bound) {
            if !self
                .cluster
                .commit_allocation_on(claim, &held.result, &held.devices)
            {
                ok = false;
                break;
            }
            committed += 1;
        }
        ok = ok
            && self
                .cluster
                .reserve_node_resources_on(node_id, &pending.key, requests.clone())
                .is_ok();
        if !ok {
            // Cannot happen after a successful allocation; undo and refuse.
            for (claim, held) in joint(gang, &self.bound, &co, &bound).take(committed) {
                self.cluster.release_allocation_on(claim, &held.devices);
            }
            for (other, own) in bound.displaced.drain(..) {
                self.bound[other].own = own;
            }
            for &other in &co {
                self.recommit_claims(other);
            }
            return false;
        }
        for (claim_at, _) in &bound.shared {
            self.shared_done[*claim_at] = true;
        }
        self.used[pending.shape][cand] += 1;
        self.node_of[pod_at] = Some(cand);
        bound.prev_on_node = self.last_on_node[node_id.index()];
        self.last_on_node[node_id.index()] =
            Some(u32::try_from(self.bound.len()).expect("fewer than 2^32 bindings"));
        self.bound.push(bound);
        true
    }

    /// Releases the allocations of binding `b`'s own claims.
    fn release_claims(&mut self, b: usize) {
        for (claim, held) in own_held(self.gang, &self.bound[b]) {
            self.cluster.release_allocation_on(claim, &held.devices);
        }
    }

    /// Records binding `b`'s own allocations again after
    /// [`release_claims`](Self::release_claims).
    fn recommit_claims(&mut self, b: usize) {
        for (claim, held) in own_held(self.gang, &self.bound[b]) {
            let recorded = self
                .cluster
                .commit_allocation_on(claim, &held.result, &held.devices);
            debug_assert!(recorded, "an allocation released just now fits again");
        }
    }

    /// Undoes the last binding (and gives earlier pods on its node their old devices).
    fn unbind(&mut self) {
        let gang = self.gang;
        let mut b = self.bound.pop().expect("a binding to undo");
        for (claim, held) in joint(gang, &[], &[], &b) {
            self.cluster.release_allocation_on(claim, &held.devices);
        }
        for (u, _) in &b.shared {
            self.shared_done[*u] = false;
        }
        // Release every new allocation before recording any old one: they may overlap.
        for &(o, _) in &b.displaced {
            self.release_claims(o);
        }
        for (o, own) in b.displaced.drain(..) {
            self.bound[o].own = own;
            self.recommit_claims(o);
        }
        self.last_on_node[b.node.index()] = b.prev_on_node;
        let p = &self.gang.pods[b.pod];
        let _ = self.cluster.release_node_resources_on(b.node, &p.key);
        if let Some(i) = self.node_of[b.pod].take() {
            self.used[p.shape][i] -= 1;
        }
    }

    /// The bindings recorded now, as a decision. Their allocation results move into
    /// it: what stays behind (the devices) is all [`restore`](Self::restore) needs.
    fn take_decision(&mut self) -> PlacementDecision {
        let gang = self.gang;
        let mut d = PlacementDecision::default();
        d.bindings.reserve(self.bound.len());
        let mut group: Vec<(usize, ClaimAllocation)> = Vec::new();
        for b in &mut self.bound {
            let pending = &gang.pods[b.pod];
            let mut claims: Vec<ClaimAllocation> = b
                .own
                .iter_mut()
                .zip(&pending.own)
                .map(|(held, (name, _))| held.take(name))
                .collect();
            for (u, held) in &mut b.shared {
                let shared = &gang.shared[*u];
                if shared.group {
                    group.push((*u, held.take(&shared.name)));
                } else {
                    claims.push(held.take(&shared.name));
                }
            }
            d.bindings.push(PodBinding {
                pod: pending.key.clone(),
                node: self
                    .cluster
                    .node_by_id(b.node)
                    .map(|n| n.name.clone())
                    .unwrap_or_default(),
                claims,
            });
        }
        group.sort_by_key(|(u, _)| *u);
        d.group_claims = group.into_iter().map(|(_, c)| c).collect();
        d
    }

    /// Undoes every binding: the cluster is as it was.
    pub(super) fn restore(&mut self) {
        while !self.bound.is_empty() {
            self.unbind();
        }
    }
}

/// A binding's own claims' allocations with the claims' names.
fn own_held<'s>(gang: &'s Gang<'_>, b: &'s Bound) -> impl Iterator<Item = (&'s str, &'s Held)> {
    let names = gang.pods[b.pod].own.iter().map(|(name, _)| name.as_str());
    names.zip(&b.own)
}

/// The allocations recorded on a node when `bound` joins the bindings `co` there:
/// their own claims', then its own and shared claims', with the claims' names.
fn joint<'s>(
    gang: &'s Gang<'_>,
    bindings: &'s [Bound],
    co: &'s [usize],
    bound: &'s Bound,
) -> impl Iterator<Item = (&'s str, &'s Held)> {
    let shared = bound
        .shared
        .iter()
        .map(|(at, held)| (gang.shared[*at].name.as_str(), held));
    co.iter()
        .flat_map(move |&other| own_held(gang, &bindings[other]))
        .chain(own_held(gang, bound))
        .chain(shared)
}
