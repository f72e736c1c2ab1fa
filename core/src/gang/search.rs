//! Step 4 of gang placement (see `placer.rs`): the depth-first, all-or-nothing search
//! over one domain at a time. Pods of one shape take candidates in non-decreasing order,
//! each step is one allocator call for one pod on one node jointly with the gang's pods
//! already there, suffix sums of caps prune branches that can no longer reach
//! `minCount`, and every allocation recorded in the scratch cluster is undone on
//! backtrack and before the search returns.
//!
//! **Revisiting choices.** A binding's device choices that other pods see — the
//! network-attached devices its claims take (devices no single node owns) and every
//! device of a shared claim it brings — are revisited when the pods after it fail. The
//! binding is tried again under an upper bound on one *class* of devices it took: one
//! device fewer than the failed choice took, enforced by holding the class's surplus
//! free devices during the allocator call. A class ([`Classes`]) holds the devices the
//! gang's requests cannot tell apart (same node or none, same reach, same answers to
//! the gang's classes and selectors, same capacities, counters and constrained
//! attributes; a tainted device is a class of its own), so a choice is tried once per
//! class, not once per device. Every allocation the bounds admit either takes at least
//! as many devices of every class as a choice tried — it leaves the other pods no more,
//! so once that choice failed it is not searched again — or fits a tighter bound; below
//! the step budget the search is therefore exact for these choices too. Shared claims
//! are allocated one by one (each alone, with the own claims of the gang's pods on the
//! node released) before the pod's own claims, so that which shared claim holds which
//! device is a choice of its own. Not revisited: picks of shareable devices and
//! admin-access picks (holding cannot keep the allocator off them). Node-local picks of
//! own claims need none of this: the pods on one node are always allocated jointly, and
//! no other node sees them. Without network-attached devices and shared claims nothing
//! here runs: the node-local search is as it was.
//!
//! **Learning.** Without network-attached devices or shared claims to allocate, what
//! a node can host depends only on the gang's pods on it. A bind the node refuses
//! (the pod's requests, or no allocation for the gang's pods there with it) lowers the
//! shape's cap on that node to the pods it holds ([`Search::lower_cap`]); the lowered
//! caps hold while the earlier shapes' pods stay put, so they are reset when the
//! shape's first pod is placed again. The count bound is checked before every
//! candidate with them: only branches that cannot reach `minCount` are cut, so the
//! first placement found is the same.
//!
//! **Budgets.** Every candidate tried and every revisit is a step of
//! [`GangOptions::step_budget`]; each allocator call runs under
//! [`GangOptions::allocator_step_budget`], and one that runs out ends the search
//! undecided ([`GangOutcome::BudgetExhausted`], with [`SearchStats::exhausted`]
//! saying which budget).
//!
//! **Errors.** An allocator call that fails with an error (invalid input it meets on a
//! node: allocation mode `All` over more than 32 devices, a selector failing on a
//! device, an incomplete pool under `All`) ends the search; [`Search::run`] returns it.

use smallvec::SmallVec;

use crate::Quantity;
use crate::alloc_prelude::*;
use crate::allocate::{AllocationError, AllocationOutcome, AllocatorOptions, ClaimPart, Picked};
use crate::cel::Selector;
use crate::cluster::ids::{DeviceId, NodeId};
use crate::cluster::{Cluster, ELIGIBLE, FREE, SHAREABLE, TAINTED};
use crate::gang::scoring::ScoringPolicy;
use crate::model::claim::AllocationResult;
use crate::model::decision::{ClaimAllocation, PlacementDecision, PodBinding};
use crate::model::error::{ObjectKind, ObjectRef};
use crate::model::node::validate_resource_list;

use super::placer::{Candidate, Gang, GangOptions, GangOutcome, SearchStats, StepBudget};

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

/// The gang's bindings on one node (indices into `Search::bound`), oldest first.
type CoLocated = SmallVec<[usize; 4]>;

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

/// A class of devices the gang cannot tell apart (index into [`Classes::nodes`]).
type Class = u32;

/// Devices per class, sorted by class: what a choice took, or upper bounds.
type Counts = SmallVec<[(Class, u32); 4]>;

/// What of a binding's (or a shared claim's) allocation other pods see.
#[derive(Default)]
struct Choice {
    /// Exclusive, non-admin picks, per class.
    counts: Counts,
    /// Every pick that others see is in `counts` (none is shareable or admin access):
    /// only then is the choice compared with others.
    pure: bool,
}

/// The allocations still to try for one allocator call on one node, as upper bounds
/// per class, with the choices tried whose subtree failed.
#[derive(Default)]
struct Alternatives {
    /// Bounds to try, the next one last.
    todo: Vec<Counts>,
    /// Every bound queued so far (each is tried once).
    queued: Vec<Counts>,
    /// Pure choices whose subtree failed.
    failed: Vec<Counts>,
}

impl Alternatives {
    /// Records that `choice`, made under `bounds`, failed (a choice that took nothing
    /// revisitable leaves nothing to revisit).
    fn record(this: &mut Option<Alternatives>, bounds: &Counts, choice: Choice, dominated: bool) {
        if !choice.counts.is_empty() {
            this.get_or_insert_with(Alternatives::default)
                .fail(bounds, choice, dominated);
        }
    }

    /// Whether `choice` takes at least as many devices of every class as a choice
    /// whose subtree failed: it leaves the others less, so it fails too.
    fn dominated(&self, choice: &Choice) -> bool {
        choice.pure && self.failed.iter().any(|f| covers(&choice.counts, f))
    }

    /// `choice`, found under `bounds`, failed: queue one tighter bound per class it
    /// took (one device of that class fewer).
    fn fail(&mut self, bounds: &Counts, choice: Choice, dominated: bool) {
        for &(class, n) in choice.counts.iter().rev() {
            let mut child = bounds.clone();
            match child.binary_search_by_key(&class, |e| e.0) {
                Ok(at) => child[at].1 = child[at].1.min(n - 1),
                Err(at) => child.insert(at, (class, n - 1)),
            }
            if !self.queued.contains(&child) {
                self.queued.push(child.clone());
                self.todo.push(child);
            }
        }
        if choice.pure && !dominated {
            self.failed.push(choice.counts);
        }
    }
}

/// Whether `a` has at least `b`'s count of every class of `b` (both sorted).
fn covers(a: &Counts, b: &Counts) -> bool {
    let mut rest = a.iter();
    b.iter().all(|&(class, n)| {
        rest.by_ref()
            .find(|e| e.0 >= class)
            .is_some_and(|e| e.0 == class && e.1 >= n)
    })
}

/// What a successful bind goes on with.
#[derive(Clone, Copy)]
enum Then {
    /// Place the pods after it (`placed` pods so far, this one not counted), revisiting
    /// this bind's choices while they fail.
    Recurse(usize),
    /// Nothing: the first allocation found stays (opportunistic pods).
    Stop,
}

/// The depth-first search of step 4, over one domain at a time.
#[allow(clippy::struct_excessive_bools)] // independent facts about one search
pub(super) struct Search<'c, 'g, 'a> {
    cluster: &'c mut Cluster,
    gang: &'g Gang<'a>,
    spread: bool,
    /// The cluster has devices no single node owns: own claims' picks of them are
    /// revisited.
    network: bool,
    /// Per shape: the current domain's candidates.
    lists: Vec<&'g [Candidate]>,
    /// Per shape: the caps of `lists`, lowered where the search learned that a node
    /// takes no more of the shape's pods (see [`Search::refused`]).
    caps: Vec<Vec<u32>>,
    /// Per shape: whether `caps` was lowered since it was last reset.
    lowered: Vec<bool>,
    /// Per shape: suffix sums of `caps`.
    suffix: Vec<Vec<u64>>,
    /// Per shape `s`: Σ over shapes `t ≥ s` of min(pods, total caps), with the caps of
    /// `lists` (what is learned about a shape holds only until an earlier shape's pods
    /// move).
    tail: Vec<u64>,
    /// Per shape: the index in `gang.pods` of its first pod.
    shape_start: Vec<usize>,
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
    /// Devices held during one allocator call so that it cannot pick them (empty
    /// between calls).
    excluded: Vec<DeviceId>,
    /// The classes of devices the gang cannot tell apart, once a choice needs them.
    classes: Option<Classes>,
    /// Shared claims allocated for the pod being bound, not yet in its binding.
    staged: Vec<(usize, Held)>,
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
    /// The step budget of each allocator call.
    allocator_budget: u64,
    /// Steps of every allocator call so far.
    allocator_steps: u64,
    /// Which budget ran out, once one did.
    exhausted_by: Option<StepBudget>,
    /// Whether a node's refusal of a pod may be remembered (see [`Search::refused`]):
    /// what a node can host depends only on the gang's pods on it, because no device
    /// choice there is seen by other nodes (no network-attached devices, no shared
    /// claims to allocate).
    learn: bool,
    /// The last [`bind`](Search::bind) failed because the node refused the pod (its
    /// requests, or the allocator found no allocation for the gang's pods there with
    /// it), not because the pods after it failed.
    refused: bool,
    best: usize,
    exhausted: bool,
    /// The first hard error of the allocator (invalid input it meets on a node): it
    /// ends the search and is the placement's answer.
    error: Option<AllocationError>,
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
        let network = cluster.has_shared_devices();
        let mut shape_start = vec![0; gang.shapes.len()];
        for (k, p) in gang.pods.iter().enumerate().rev() {
            shape_start[p.shape] = k;
        }
        let learn = !network && gang.shared.iter().all(|s| s.allocated.is_some() || !s.used);
        Search {
            cluster,
            gang,
            spread: matches!(options.policy, ScoringPolicy::Spread),
            network,
            lists: Vec::new(),
            caps: Vec::new(),
            lowered: Vec::new(),
            suffix: Vec::new(),
            tail: Vec::new(),
            shape_start,
            shape_end,
            used: Vec::new(),
            reservations,
            parts: Vec::new(),
            picked: Vec::new(),
            excluded: Vec::new(),
            classes: None,
            staged: Vec::new(),
            node_of: vec![None; gang.pods.len()],
            bound: Vec::new(),
            shared_done: gang
                .shared
                .iter()
                .map(|s| s.allocated.is_some() || !s.used)
                .collect(),
            last_on_node,
            steps: 0,
            budget: options.step_budget,
            allocator_budget: options.allocator_step_budget,
            allocator_steps: 0,
            exhausted_by: None,
            learn,
            refused: false,
            best: 0,
            exhausted: false,
            error: None,
        }
    }

    /// The placement, or the first hard error the allocator met. Call
    /// [`restore`](Self::restore) afterwards either way.
    pub(super) fn run(&mut self) -> Result<GangOutcome, AllocationError> {
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
                return Ok(GangOutcome::Placed(PlacementDecision::default()));
            }
            return Ok(nothing_placed);
        }
        for &d in &gang.order {
            self.set_domain(d);
            if self.place(0, 0) {
                self.place_rest();
                if let Some(e) = self.error.take() {
                    return Err(e);
                }
                let decision = self.take_decision();
                if gang.required == 0 && decision.bindings.is_empty() && !gang.pods.is_empty() {
                    // No pod placed: undecided if a budget ran out on the way.
                    if self.exhausted_by.is_some() {
                        return Ok(GangOutcome::BudgetExhausted { steps: self.steps });
                    }
                    return Ok(nothing_placed);
                }
                // Placed: a budget that ran out only left opportunistic pods out.
                self.exhausted_by = None;
                return Ok(GangOutcome::Placed(decision));
            }
            if let Some(e) = self.error.take() {
                return Err(e);
            }
            if self.exhausted {
                return Ok(GangOutcome::BudgetExhausted { steps: self.steps });
            }
        }
        Ok(GangOutcome::Unschedulable {
            required: gang.required,
            // No domain searched: what counting allowed at most.
            best: if gang.order.is_empty() {
                gang.most
            } else {
                self.best
            },
        })
    }

    fn set_domain(&mut self, d: u32) {
        let gang = self.gang;
        self.lists = (0..gang.shapes.len())
            .map(|s| gang.candidates_in(s, d))
            .collect();
        self.caps = self
            .lists
            .iter()
            .map(|l| l.iter().map(|c| c.cap).collect())
            .collect();
        self.lowered = vec![false; gang.shapes.len()];
        self.suffix = self.caps.iter().map(|caps| suffix_sums(caps)).collect();
        self.tail = vec![0; gang.shapes.len() + 1];
        for s in (0..gang.shapes.len()).rev() {
            self.tail[s] = self.tail[s + 1] + self.suffix[s][0].min(gang.shapes[s].pods as u64);
        }
        self.used = self.lists.iter().map(|l| vec![0; l.len()]).collect();
        self.node_of.iter_mut().for_each(|n| *n = None);
    }

    /// An allocator call ran out of its step budget: the search cannot tell whether
    /// the node fits, so it stops undecided (a "does not fit" here would be a guess).
    fn allocator_exhausted(&mut self) {
        self.exhausted = true;
        self.exhausted_by.get_or_insert(StepBudget::Allocator);
    }

    /// What the search did so far.
    pub(super) fn stats(&self) -> SearchStats {
        SearchStats {
            steps: self.steps,
            allocator_steps: self.allocator_steps,
            exhausted: self.exhausted_by,
            best: self.best,
        }
    }

    /// Whether the search must stop: out of steps, or a hard error.
    fn halted(&self) -> bool {
        self.exhausted || self.error.is_some()
    }

    /// Takes one step of the budget; false (and exhausted) when none is left.
    fn tick(&mut self) -> bool {
        if self.steps >= self.budget {
            self.exhausted = true;
            self.exhausted_by.get_or_insert(StepBudget::Gang);
            return false;
        }
        self.steps += 1;
        true
    }

    /// The next bounds to revisit a failed choice under, taking a step for it; `None`
    /// when none is left (or the budget is spent).
    fn next_bounds(&mut self, alternatives: &mut Option<Alternatives>) -> Option<Counts> {
        let next = alternatives.as_mut()?.todo.pop()?;
        self.tick().then_some(next)
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
        if k == self.shape_start[s] {
            // The earlier shapes' pods have moved since anything was learned about
            // this shape.
            self.reset_caps(s);
        }
        let prev = k
            .checked_sub(1)
            .filter(|&j| self.gang.pods[j].shape == s)
            .and_then(|j| self.node_of[j]);
        let from = prev.unwrap_or(0);
        // Count bound: what this shape (from `from` on) and later shapes can still hold.
        let left = (self.shape_end[s] - k) as u64;
        if placed as u64 + self.room(s, from, from).min(left) + self.tail[s + 1] < required as u64 {
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
            // The same bound from this candidate on (in order, it only falls).
            if !rotate
                && placed as u64 + self.room(s, from, i).min(left) + self.tail[s + 1]
                    < required as u64
            {
                break;
            }
            if self.used[s][i] >= self.caps[s][i] {
                continue;
            }
            if !self.tick() {
                return false;
            }
            self.refused = false;
            if self.bind(k, i, Then::Recurse(placed)) {
                return true;
            }
            if self.halted() {
                return false;
            }
            if self.learn && self.refused {
                // The node hosts no more of this shape's pods than it has now, whatever
                // the later pods do (more pods on a node only need more).
                let now = self.used[s][i];
                self.lower_cap(s, i, now);
            }
        }
        // Skip this pod and every later pod of its shape.
        self.place(self.shape_end[s], placed)
    }

    /// What the candidates of shape `s` from `i` on can still take (`from`: where the
    /// shape's last placed pod is, the only candidate at or after `i` holding any).
    fn room(&self, s: usize, from: usize, i: usize) -> u64 {
        let here = if i == from {
            u64::from(self.used[s].get(from).copied().unwrap_or(0))
        } else {
            0
        };
        self.suffix[s][i].saturating_sub(here)
    }

    /// Lowers shape `s`'s cap on its `i`-th candidate to `cap`.
    fn lower_cap(&mut self, s: usize, i: usize, cap: u32) {
        let old = self.caps[s][i];
        if cap >= old {
            return;
        }
        self.caps[s][i] = cap;
        let fewer = u64::from(old - cap);
        for v in &mut self.suffix[s][..=i] {
            *v -= fewer;
        }
        self.lowered[s] = true;
    }

    /// Shape `s`'s caps as counted ([`Candidate::cap`]) again.
    fn reset_caps(&mut self, s: usize) {
        if !self.lowered[s] {
            return;
        }
        for (cap, c) in self.caps[s].iter_mut().zip(self.lists[s]) {
            *cap = c.cap;
        }
        self.suffix[s] = suffix_sums(&self.caps[s]);
        self.lowered[s] = false;
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
            // The counted caps: what was learned may be stale here (it holds only
            // while the earlier shapes' pods stay where they were).
            for i in 0..self.lists[s].len() {
                if self.used[s][i] >= self.lists[s][i].cap {
                    continue;
                }
                if self.steps >= self.budget {
                    self.exhausted_by.get_or_insert(StepBudget::Gang);
                    return;
                }
                self.steps += 1;
                if self.bind(k, i, Then::Stop) {
                    done = true;
                    break;
                }
                if self.error.is_some() {
                    return;
                }
            }
            failed[s] = !done;
        }
    }

    /// Binds pod `k` on its shape's `i`-th candidate: its shared claims first (each
    /// alone), then its own claims jointly with the gang's pods already on that node
    /// (their own claims are released for the whole try and allocated again with the
    /// new pod's: exact on one node, so a device choice made for an earlier pod never
    /// blocks a later one when another choice would serve both). With
    /// [`Then::Recurse`], the choices others see are revisited while the pods after it
    /// fail (module docs); true once they fit, the bindings recorded.
    fn bind(&mut self, k: usize, i: usize, then: Then) -> bool {
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
    fn plan(&self, k: usize, i: usize) -> Option<SmallVec<[usize; 2]>> {
        let gang = self.gang;
        let pending = &gang.pods[k];
        let node_id = self.lists[pending.shape][i].node;
        let node = self.cluster.node_by_id(node_id)?;
        let reservation = usize::from(node.allocatable.contains_key("pods"));
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
    fn stage(&mut self, k: usize, i: usize, bring: &[usize], co: &[usize], then: Then) -> bool {
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
    fn bind_own(&mut self, k: usize, i: usize, co: &[usize], then: Then) -> bool {
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
    fn allocate_shared(&mut self, claim_at: usize, node: NodeId, bounds: &Counts) -> Option<Held> {
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
    fn try_bind(
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
        let Some(node) = self.cluster.node_by_id(node_id) else {
            return false;
        };
        let reservation = usize::from(node.allocatable.contains_key("pods"));
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

    /// Undoes the last binding inside its [`bind`](Self::bind): its own allocations
    /// and the new ones of the pods on its node are released (those pods get their old
    /// allocations back, not recorded: `bind` records them when it is done), its shared
    /// claims go back to the staged ones, still recorded.
    fn unbind_in_place(&mut self) {
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
    fn unbind(&mut self) {
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
    fn forget(&mut self, b: &Bound) {
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

/// Suffix sums of `caps`: entry `i` is the sum of `caps[i..]`.
fn suffix_sums(caps: &[u32]) -> Vec<u64> {
    let mut v = vec![0u64; caps.len() + 1];
    for i in (0..caps.len()).rev() {
        v[i] = v[i + 1] + u64::from(caps[i]);
    }
    v
}

/// Holds, for every class bounded in `bounds`, its free devices beyond the bound, so
/// that the next allocator call cannot take them (recorded in `excluded`); undone by
/// [`end_exclusion`].
fn exclude(
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
    excluded.retain(|&d| cluster.hold(d, ""));
}

/// Ends [`exclude`].
fn end_exclusion(cluster: &mut Cluster, excluded: &mut Vec<DeviceId>) {
    for d in excluded.drain(..) {
        cluster.release_hold(d);
    }
}

/// What of `helds` others see: its exclusive non-admin picks by class (every one with
/// `local`, else only those of devices no single node owns).
fn choice<'h>(
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

/// The classes of devices the gang cannot tell apart, found as the search needs them.
/// Two devices are in one class when they belong to the same node (or both to none),
/// are reached from the same nodes, and everything a request of the gang looks at is
/// the same for both: driver, the gang's DeviceClasses and request selectors,
/// capacities, counters, the attributes its constraints compare, binding conditions.
/// Exchanging two such devices maps every allocation of the gang's claims to one just
/// as good, so a choice needs trying once per class, not per device (UUIDs and names
/// do not split classes, unless a selector reads them). Tainted devices are classes of
/// their own (requests tolerate different taints).
struct Classes {
    /// The DeviceClasses the gang's requests name.
    class_names: Vec<String>,
    /// The gang's request selectors: expression and compiled form (`None` when it
    /// does not compile).
    selectors: Vec<(String, Option<Selector>)>,
    /// Per (sub)request of the gang: its class (index into `class_names`) and its
    /// selectors in order (indices into `selectors`), to tell which selector errors an
    /// allocation would meet (class first, then the request's selectors until one is
    /// false, as upstream evaluates them).
    requests: Vec<(usize, Vec<usize>)>,
    /// The attributes the gang's constraints compare.
    attributes: Vec<String>,
    /// Class by what the gang sees of a device.
    by_profile: BTreeMap<String, Class>,
    /// Per class, its node (`None`: reached through a slice of no single node).
    nodes: Vec<Option<NodeId>>,
    /// Per class, whether a selector of the gang fails on its devices (a CEL runtime
    /// error, not a mismatch: it aborts any allocation that evaluates it).
    erring: Vec<bool>,
    /// Per class, its members, once its node (or the shared devices) is listed.
    members: Vec<Vec<DeviceId>>,
    /// Class per device, once seen.
    of: BTreeMap<DeviceId, Class>,
    /// The nodes (and `None` for the shared devices) whose devices are listed.
    listed: BTreeSet<Option<NodeId>>,
}

impl Classes {
    fn new(gang: &Gang<'_>) -> Classes {
        let mut classes = Classes {
            class_names: Vec::new(),
            selectors: Vec::new(),
            requests: Vec::new(),
            attributes: Vec::new(),
            by_profile: BTreeMap::new(),
            nodes: Vec::new(),
            erring: Vec::new(),
            members: Vec::new(),
            of: BTreeMap::new(),
            listed: BTreeSet::new(),
        };
        let specs = gang
            .shapes
            .iter()
            .flat_map(|s| s.own_specs.iter().copied())
            .chain(gang.shared.iter().filter(|s| s.used).map(|s| &s.claim.spec));
        for spec in specs {
            for r in &spec.requests {
                for view in r.alternatives() {
                    let class = if let Some(at) = classes
                        .class_names
                        .iter()
                        .position(|c| c == view.device_class_name)
                    {
                        at
                    } else {
                        classes.class_names.push(view.device_class_name.to_owned());
                        classes.class_names.len() - 1
                    };
                    let mut order = Vec::with_capacity(view.selectors.len());
                    for sel in view.selectors {
                        let known = classes.selectors.iter().position(|(e, _)| *e == sel.cel);
                        let at = if let Some(at) = known {
                            at
                        } else {
                            classes
                                .selectors
                                .push((sel.cel.clone(), Selector::compile(&sel.cel).ok()));
                            classes.selectors.len() - 1
                        };
                        order.push(at);
                    }
                    classes.requests.push((class, order));
                }
            }
            for c in &spec.constraints {
                if !classes.attributes.iter().any(|a| a == c.attribute()) {
                    classes.attributes.push(c.attribute().to_owned());
                }
            }
        }
        classes
    }

    /// The class of device `d`.
    fn class_of(&mut self, cluster: &Cluster, d: DeviceId) -> Class {
        if let Some(&c) = self.of.get(&d) {
            return c;
        }
        let (node, profile, erring) = self.profile(cluster, d);
        let c = if let Some(&c) = self.by_profile.get(&profile) {
            c
        } else {
            let c = Class::try_from(self.nodes.len()).expect("fewer than 2^32 classes");
            self.nodes.push(node);
            self.erring.push(erring);
            self.members.push(Vec::new());
            self.by_profile.insert(profile, c);
            c
        };
        self.of.insert(d, c);
        c
    }

    /// Every device of class `c`.
    fn members(&mut self, cluster: &Cluster, c: Class) -> &[DeviceId] {
        let node = self.nodes[c as usize];
        if self.listed.insert(node) {
            let devices: Vec<DeviceId> = match node {
                None => cluster.shared_devices().iter().collect(),
                Some(n) => cluster
                    .node_devices(n)
                    .map(|set| set.iter().collect())
                    .unwrap_or_default(),
            };
            for d in devices {
                let k = self.class_of(cluster, d);
                if self.nodes[k as usize] == node {
                    self.members[k as usize].push(d);
                }
            }
        }
        &self.members[c as usize]
    }

    /// Device `d`'s node, what the gang sees of it, as text, and whether one of the
    /// gang's class or request selectors fails on it.
    fn profile(&self, cluster: &Cluster, d: DeviceId) -> (Option<NodeId>, String, bool) {
        use core::fmt::Write as _;
        let slot = cluster.devices[d.index()].as_ref().expect("live device id");
        let entry = cluster.slice_entry(slot.slice);
        let slice = &entry.slice;
        let device = &slice.devices[slot.pos as usize];
        let node = slot.node();
        let mut key = String::new();
        let _ = write!(key, "{node:?}|");
        if slot.flags & (TAINTED | SHAREABLE) != 0 {
            // Never merged.
            let _ = write!(key, "device {}|", d.0);
        }
        if !device.consumes_counters.is_empty() {
            let _ = write!(key, "pool {}|", entry.pool.0);
        }
        let _ = write!(
            key,
            "{}|{:?}|{:?}|{}|{:?}|{:?}|{:?}|{:?}|",
            slice.driver,
            slice.node_selection,
            device.node_access,
            device.binds_to_node,
            device.binding_conditions,
            device.binding_failure_conditions,
            device.capacity,
            device.consumes_counters,
        );
        let start = key.len();
        for c in &self.class_names {
            let member = cluster.class_devices(c).is_some_and(|set| set.contains(d));
            let failed = cluster
                .class_cache
                .get(c)
                .is_some_and(|cache| cache.errors.contains_key(&d));
            key.push(match (member, failed) {
                (true, _) => '1',
                (false, false) => '0',
                (false, true) => 'e',
            });
        }
        key.push('|');
        for (_, s) in &self.selectors {
            // An error is its own answer, never a mismatch ('0').
            key.push(match s.as_ref().map(|s| s.eval(&slice.driver, device)) {
                Some(Ok(true)) => '1',
                Some(Ok(false)) => '0',
                _ => 'e',
            });
        }
        // The answers, ASCII: classes, '|', selectors.
        let answers = &key.as_bytes()[start..];
        let (class_answers, selector_answers) = answers.split_at(self.class_names.len());
        let selector_answers = &selector_answers[1..];
        let erring = self
            .requests
            .iter()
            .any(|(class, order)| match class_answers[*class] {
                b'e' => true,
                b'1' => {
                    order
                        .iter()
                        .map(|&s| selector_answers[s])
                        .find(|&a| a != b'1')
                        == Some(b'e')
                }
                _ => false,
            });
        key.push('|');
        for a in &self.attributes {
            let bare = a
                .split_once('/')
                .filter(|(domain, _)| *domain == slice.driver)
                .and_then(|(_, id)| device.attributes.get(id));
            let _ = write!(key, "{:?}/{:?};", device.attributes.get(a), bare);
        }
        (node, key, erring)
    }
}

/// A binding's own claims' allocations with the claims' names.
fn own_held<'s>(gang: &'s Gang<'_>, b: &'s Bound) -> impl Iterator<Item = (&'s str, &'s Held)> {
    let names = gang.pods[b.pod].own.iter().map(|(name, _)| name.as_str());
    names.zip(&b.own)
}

/// The own allocations recorded on a node when `bound` joins the bindings `co` there:
/// theirs, then its own, with the claims' names.
fn joint<'s>(
    gang: &'s Gang<'_>,
    bindings: &'s [Bound],
    co: &'s [usize],
    bound: &'s Bound,
) -> impl Iterator<Item = (&'s str, &'s Held)> {
    co.iter()
        .flat_map(move |&other| own_held(gang, &bindings[other]))
        .chain(own_held(gang, bound))
}
