//! Binding one pod of the search on one node: its shared and own claims allocated
//! jointly with the gang's pods already there, and the exact undo; the decision taken
//! from the bindings.

use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::allocate::{AllocationOutcome, AllocatorOptions, ClaimPart};
use crate::cluster::ids::{DeviceId, NodeId};
use crate::cluster::{Cluster, ELIGIBLE, FREE, SHAREABLE};
use crate::model::claim::AllocationResult;
use crate::model::decision::{ClaimAllocation, PlacementDecision, PodBinding};

use crate::gang::intake::Gang;

use super::{Alternatives, Bound, Choice, Class, Classes, CoLocated, Counts, Held, Search, Then};

impl Search<'_, '_, '_> {
    /// Binds pod `k` on its shape's `i`-th candidate: its shared claims first (each
    /// alone), then its own claims jointly with the gang's pods already on that node
    /// (their own claims are released for the whole try and allocated again with the
    /// new pod's: exact on one node, so a device choice made for an earlier pod never
    /// blocks a later one when another choice would serve both). With
    /// [`Then::Recurse`], the choices others see are revisited while the pods after it
    /// fail (module docs); true once they fit, the bindings recorded.
    pub(super) fn bind(&mut self, k: usize, i: usize, then: Then) -> bool {
        let Some(bring) = self.plan(k, i) else {
            self.refused = true;
            return false;
        };
        let node = self.lists[self.gang.pods[k].shape][i].node;
        let mut co = CoLocated::new();
        let mut at = self.last_on_node[node.index()];
        while let Some(b) = at {
            co.push(b as usize);
            at = self.bound[b as usize].prev_on_node;
        }
        co.reverse();
        for &b in &co {
            self.release_claims(b);
        }
        let done = if bring.is_empty() {
            self.bind_own(k, i, &co, then)
        } else {
            self.stage(k, i, &bring, &co, then)
        };
        if !done {
            for &b in &co {
                self.recommit_claims(b);
            }
        }
        done
    }

    /// The shared claims pod `k` brings on its shape's `i`-th candidate, or `None`
    /// when it cannot go there whatever the devices: the node is gone, refuses the
    /// pod's requests (or, when it brings shared claims, lacks the scalar resources
    /// they ask for), or is outside an allocated shared claim the pod uses.
    pub(super) fn plan(&self, k: usize, i: usize) -> Option<SmallVec<[usize; 2]>> {
        let gang = self.gang;
        let pending = &gang.pods[k];
        let node_id = self.lists[pending.shape][i].node;
        let node = self.cluster.node_by_id(node_id)?;
        let reservation = usize::from(self.cluster.node_has_pod_limit(node_id));
        if !self.reservations[pending.shape][reservation].valid {
            return None;
        }
        // Shared claims: allocated ones must be usable here; the others come along.
        let mut bring = SmallVec::new();
        for (claim_at, sc) in gang.shared.iter().enumerate() {
            let uses = pending.uses.binary_search(&claim_at).is_ok();
            if !self.shared_done[claim_at] {
                // Allocated with the first pod that uses it.
                if uses {
                    bring.push(claim_at);
                }
                continue;
            }
            if !uses {
                continue;
            }
            let usable_here = |result: &AllocationResult| {
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
                return None;
            }
        }
        // Before allocating shared claims here, the pod's scalar requests must fit (the
        // allocator checks them with its own claims, after the shared ones).
        if !bring.is_empty()
            && !self
                .cluster
                .shortfalls_on(
                    Some(node_id),
                    &self.reservations[pending.shape][reservation].requests,
                )
                .is_empty()
        {
            return None;
        }
        Some(bring)
    }

    /// Allocates the shared claims `bring` (each alone, in order, every allocation of
    /// each worth trying with [`Then::Recurse`]), then pod `k`'s own claims.
    pub(super) fn stage(
        &mut self,
        k: usize,
        i: usize,
        bring: &[usize],
        co: &[usize],
        then: Then,
    ) -> bool {
        let Some((&claim_at, later)) = bring.split_first() else {
            return self.bind_own(k, i, co, then);
        };
        let node = self.lists[self.gang.pods[k].shape][i].node;
        let mut bounds = Counts::new();
        let mut alternatives: Option<Alternatives> = None;
        loop {
            if let Some(held) = self.allocate_shared(claim_at, node, &bounds) {
                let revisit = matches!(then, Then::Recurse(_));
                let choice = if revisit {
                    choice(
                        self.cluster,
                        &mut self.classes,
                        self.gang,
                        core::iter::once(&held),
                        true,
                    )
                } else {
                    Choice::default()
                };
                let dominated = alternatives.as_ref().is_some_and(|a| a.dominated(&choice));
                self.staged.push((claim_at, held));
                if !dominated && self.stage(k, i, later, co, then) {
                    return true;
                }
                let (_, held) = self.staged.pop().expect("staged above");
                let name = &self.gang.shared[claim_at].name;
                self.cluster.release_allocation_on(name, &held.devices);
                if self.halted() || !revisit {
                    return false;
                }
                Alternatives::record(&mut alternatives, &bounds, choice, dominated);
            } else if self.halted() {
                return false;
            }
            let Some(next) = self.next_bounds(&mut alternatives) else {
                return false;
            };
            bounds = next;
        }
    }

    /// Allocates pod `k`'s own claims (with those of the gang's pods `co` on the node,
    /// released by [`bind`](Self::bind)) and records the binding, with the shared
    /// claims staged; with [`Then::Recurse`], revisits the network-attached devices
    /// taken while the pods after it fail.
    pub(super) fn bind_own(&mut self, k: usize, i: usize, co: &[usize], then: Then) -> bool {
        if !self.network {
            // Nothing to revisit: node-local picks are re-allocated jointly anyway.
            if !self.try_bind(k, i, co, &[]) {
                return false;
            }
            let Then::Recurse(placed) = then else {
                return true;
            };
            self.best = self.best.max(placed + 1);
            if self.place(k + 1, placed + 1) {
                return true;
            }
            self.unbind_in_place();
            // The node took the pod: the pods after it failed, not this binding.
            self.refused = false;
            return false;
        }
        let mut bounds = Counts::new();
        let mut alternatives: Option<Alternatives> = None;
        loop {
            if self.try_bind(k, i, co, &bounds) {
                let Then::Recurse(placed) = then else {
                    return true;
                };
                // What others see: the network-attached picks of its own claims and of
                // the claims of the gang's pods on its node, allocated again with it.
                let choice = match self.bound.last() {
                    Some(b) => {
                        let co = b.displaced.iter().flat_map(|(o, _)| &self.bound[*o].own);
                        choice(
                            self.cluster,
                            &mut self.classes,
                            self.gang,
                            b.own.iter().chain(co),
                            false,
                        )
                    }
                    None => Choice::default(),
                };
                let dominated = alternatives.as_ref().is_some_and(|a| a.dominated(&choice));
                self.best = self.best.max(placed + 1);
                if !dominated && self.place(k + 1, placed + 1) {
                    return true;
                }
                self.unbind_in_place();
                if self.halted() {
                    return false;
                }
                Alternatives::record(&mut alternatives, &bounds, choice, dominated);
            } else if self.halted() {
                return false;
            }
            let Some(next) = self.next_bounds(&mut alternatives) else {
                return false;
            };
            bounds = next;
        }
    }

    /// Allocates shared claim `claim_at` alone on `node` within `bounds` and records
    /// it in the scratch cluster.
    pub(super) fn allocate_shared(
        &mut self,
        claim_at: usize,
        node: NodeId,
        bounds: &Counts,
    ) -> Option<Held> {
        let gang = self.gang;
        let shared = &gang.shared[claim_at];
        let parts = [ClaimPart {
            claim: shared.claim,
            prepared: gang
                .shared_prepared
                .as_ref()
                .expect("shared claims are prepared"),
            index: claim_at,
        }];
        exclude(
            self.cluster,
            self.classes.as_mut(),
            &mut self.excluded,
            bounds,
        );
        let outcome = self.cluster.allocate_parts_counted(
            node,
            &parts,
            &BTreeMap::new(),
            AllocatorOptions {
                step_budget: self.allocator_budget,
            },
            Some(&mut self.picked),
            &mut self.allocator_steps,
        );
        end_exclusion(self.cluster, &mut self.excluded);
        let result = match outcome {
            Ok(AllocationOutcome::Allocated(results)) => results.into_iter().next()?,
            Ok(AllocationOutcome::Unsatisfiable(_)) => return None,
            Ok(AllocationOutcome::BudgetExhausted { .. }) => {
                self.allocator_exhausted();
                return None;
            }
            Err(e) => {
                self.error = Some(e);
                return None;
            }
        };
        let held = Held {
            result,
            devices: SmallVec::from_slice(&self.picked),
        };
        self.cluster
            .commit_allocation_on(&shared.name, &held.result, &held.devices)
            .then_some(held)
    }

    /// Allocates pod `k`'s own claims on its shape's `i`-th candidate in the scratch
    /// cluster, jointly with those of the bindings `co` there (released by the caller)
    /// and within `bounds`, and records the binding with the shared claims staged.
    pub(super) fn try_bind(
        &mut self,
        pod_at: usize,
        cand: usize,
        co: &[usize],
        bounds: &[(Class, u32)],
    ) -> bool {
        let gang = self.gang;
        let pending = &gang.pods[pod_at];
        let shape = &gang.shapes[pending.shape];
        let node_id = self.lists[pending.shape][cand].node;
        if self.cluster.node_by_id(node_id).is_none() {
            return false;
        }
        let reservation = usize::from(self.cluster.node_has_pod_limit(node_id));
        // The claims to allocate: the earlier pods', then ours.
        let mut parts = core::mem::take(&mut self.parts);
        for &bound in co {
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
        let requests = &self.reservations[pending.shape][reservation].requests;
        exclude(
            self.cluster,
            self.classes.as_mut(),
            &mut self.excluded,
            bounds,
        );
        let outcome = self.cluster.allocate_parts_counted(
            node_id,
            &parts,
            requests,
            AllocatorOptions {
                step_budget: self.allocator_budget,
            },
            Some(&mut self.picked),
            &mut self.allocator_steps,
        );
        end_exclusion(self.cluster, &mut self.excluded);
        parts.clear();
        self.parts = parts;
        let results = match outcome {
            Ok(AllocationOutcome::Allocated(results)) => results,
            Ok(AllocationOutcome::Unsatisfiable(_)) => {
                self.refused = true;
                return false;
            }
            Ok(AllocationOutcome::BudgetExhausted { .. }) => {
                self.allocator_exhausted();
                return false;
            }
            Err(e) => {
                self.error = Some(e);
                return false;
            }
        };
        // Record: earlier pods' new results (old ones kept for the undo), then ours.
        let mut bound = Bound {
            pod: pod_at,
            node: node_id,
            prev_on_node: None,
            own: Vec::with_capacity(pending.own.len()),
            shared: Vec::new(),
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
        for &other in co {
            let claims = gang.pods[self.bound[other].pod].own.len();
            if claims > 0 {
                let own = results.by_ref().take(claims).collect();
                let old = core::mem::replace(&mut self.bound[other].own, own);
                bound.displaced.push((other, old));
            }
        }
        bound.own.extend(results);
        // Commit every own allocation on this node, then reserve the pod's resources.
        let mut committed = 0;
        let mut ok = true;
        for (claim, held) in joint(gang, &self.bound, co, &bound) {
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
            for (claim, held) in joint(gang, &self.bound, co, &bound).take(committed) {
                self.cluster.release_allocation_on(claim, &held.devices);
            }
            for (other, own) in bound.displaced.drain(..) {
                self.bound[other].own = own;
            }
            return false;
        }
        bound.shared = core::mem::take(&mut self.staged);
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
    pub(super) fn release_claims(&mut self, b: usize) {
        for (claim, held) in own_held(self.gang, &self.bound[b]) {
            self.cluster.release_allocation_on(claim, &held.devices);
        }
    }

    /// Records binding `b`'s own allocations again after
    /// [`release_claims`](Self::release_claims).
    pub(super) fn recommit_claims(&mut self, b: usize) {
        for (claim, held) in own_held(self.gang, &self.bound[b]) {
            let recorded = self
                .cluster
                .commit_allocation_on(claim, &held.result, &held.devices);
            debug_assert!(recorded, "an allocation released just now fits again");
        }
    }

    /// Undoes the last binding inside its [`bind`](Self::bind): its own allocations
    /// and the new ones of the pods on its node are released (those pods get their old
    /// allocations back, not recorded: `bind` records them when it is done), its shared
    /// claims go back to the staged ones, still recorded.
    pub(super) fn unbind_in_place(&mut self) {
        let mut b = self.bound.pop().expect("a binding to undo");
        for (claim, held) in own_held(self.gang, &b) {
            self.cluster.release_allocation_on(claim, &held.devices);
        }
        for (u, _) in &b.shared {
            self.shared_done[*u] = false;
        }
        debug_assert!(self.staged.is_empty());
        self.staged = core::mem::take(&mut b.shared);
        for &(o, _) in &b.displaced {
            self.release_claims(o);
        }
        for (o, own) in b.displaced.drain(..) {
            self.bound[o].own = own;
        }
        self.forget(&b);
    }

    /// Undoes the last binding for good (and gives earlier pods on its node their old
    /// devices).
    pub(super) fn unbind(&mut self) {
        let gang = self.gang;
        let mut b = self.bound.pop().expect("a binding to undo");
        for (claim, held) in own_held(gang, &b) {
            self.cluster.release_allocation_on(claim, &held.devices);
        }
        for (u, held) in &b.shared {
            self.cluster
                .release_allocation_on(&gang.shared[*u].name, &held.devices);
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
        self.forget(&b);
    }

    /// The bookkeeping of unbinding `b`: its node's chain, its reservation, its slot.
    pub(super) fn forget(&mut self, b: &Bound) {
        self.last_on_node[b.node.index()] = b.prev_on_node;
        let p = &self.gang.pods[b.pod];
        let _ = self.cluster.release_node_resources_on(b.node, &p.key);
        if let Some(i) = self.node_of[b.pod].take() {
            self.used[p.shape][i] -= 1;
        }
    }

    /// The bindings recorded now, as a decision. Their allocation results move into
    /// it: what stays behind (the devices) is all [`restore`](Self::restore) needs.
    pub(super) fn take_decision(&mut self) -> PlacementDecision {
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
    pub(in crate::gang) fn restore(&mut self) {
        while !self.bound.is_empty() {
            self.unbind();
        }
        // Every node's chain is empty again: the table goes back for the next search.
        self.cluster.node_scratch.0 = core::mem::take(&mut self.last_on_node);
    }
}

/// Holds, for every class bounded in `bounds`, its free devices beyond the bound, so
/// that the next allocator call cannot take them (recorded in `excluded`); undone by
/// [`end_exclusion`].
pub(super) fn exclude(
    cluster: &mut Cluster,
    classes: Option<&mut Classes>,
    excluded: &mut Vec<DeviceId>,
    bounds: &[(Class, u32)],
) {
    let Some(classes) = classes else {
        return;
    };
    for &(class, bound) in bounds {
        let mut left = bound;
        for &d in classes.members(cluster, class) {
            let Some(slot) = cluster.devices[d.index()].as_ref() else {
                continue;
            };
            if slot.flags & (ELIGIBLE | FREE | SHAREABLE) != ELIGIBLE | FREE {
                continue;
            }
            if left > 0 {
                left -= 1;
            } else {
                excluded.push(d);
            }
        }
    }
    let paused = cluster.pause_scores();
    excluded.retain(|&d| cluster.hold(d, ""));
    cluster.resume_scores(paused, excluded.iter().copied());
}

/// Ends [`exclude`].
pub(super) fn end_exclusion(cluster: &mut Cluster, excluded: &mut Vec<DeviceId>) {
    let paused = cluster.pause_scores();
    for &d in excluded.iter() {
        cluster.release_hold(d);
    }
    cluster.resume_scores(paused, excluded.drain(..));
}

/// What of `helds` others see: its exclusive non-admin picks by class (every one with
/// `local`, else only those of devices no single node owns).
pub(super) fn choice<'h>(
    cluster: &Cluster,
    classes: &mut Option<Classes>,
    gang: &Gang<'_>,
    helds: impl Iterator<Item = &'h Held>,
    local: bool,
) -> Choice {
    let mut choice = Choice {
        counts: Counts::new(),
        pure: true,
    };
    for held in helds {
        for (r, p) in held.result.devices.iter().zip(&held.devices) {
            let Some(slot) = cluster.devices[p.device.index()].as_ref() else {
                continue;
            };
            if !local && slot.node().is_some() {
                continue;
            }
            if r.admin_access || slot.flags & SHAREABLE != 0 {
                choice.pure = false;
                continue;
            }
            let classes = classes.get_or_insert_with(|| Classes::new(gang));
            let class = classes.class_of(cluster, p.device);
            if classes.erring[class as usize] {
                // A selector of the gang fails on it: bounding its class would hold
                // such devices, and a held device is skipped before selectors are
                // evaluated, hiding the error upstream would meet on a free one. Not
                // revisited (as shareable picks are not).
                choice.pure = false;
                continue;
            }
            match choice.counts.binary_search_by_key(&class, |e| e.0) {
                Ok(at) => choice.counts[at].1 += 1,
                Err(at) => choice.counts.insert(at, (class, 1)),
            }
        }
    }
    choice
}

/// A binding's own claims' allocations with the claims' names.
pub(super) fn own_held<'s>(
    gang: &'s Gang<'_>,
    b: &'s Bound,
) -> impl Iterator<Item = (&'s str, &'s Held)> {
    let names = gang.pods[b.pod].own.iter().map(|(name, _)| name.as_str());
    names.zip(&b.own)
}

/// The own allocations recorded on a node when `bound` joins the bindings `co` there:
/// theirs, then its own, with the claims' names.
pub(super) fn joint<'s>(
    gang: &'s Gang<'_>,
    bindings: &'s [Bound],
    co: &'s [usize],
    bound: &'s Bound,
) -> impl Iterator<Item = (&'s str, &'s Held)> {
    co.iter()
        .flat_map(move |&other| own_held(gang, &bindings[other]))
        .chain(own_held(gang, bound))
}
