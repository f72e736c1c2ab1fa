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
use crate::allocate::{AllocationError, ClaimPart, Picked};
use crate::cluster::Cluster;
use crate::cluster::ids::{DeviceId, NodeId};
use crate::gang::scoring::ScoringPolicy;
use crate::model::claim::AllocationResult;
use crate::model::decision::{ClaimAllocation, PlacementDecision};
use crate::model::error::{ObjectKind, ObjectRef};
use crate::model::node::validate_resource_list;

use super::intake::{Candidate, Gang};
use super::options::{GangOptions, GangOutcome, SearchStats, StepBudget};

mod bind;
mod classes;

use classes::Classes;

/// One claim's allocation recorded in the scratch cluster (the claim's name is in
/// the gang: [`PendingPod::own`](super::intake::PendingPod::own) or
/// [`SharedClaim::name`](super::intake::SharedClaim::name)).
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
        // Node ids are below `node_slots`. The cluster lends the table, all `None`,
        // and `restore` gives it back so.
        let mut last_on_node = core::mem::take(&mut cluster.node_scratch.0);
        debug_assert!(
            last_on_node.iter().all(Option::is_none),
            "a search's per-node table came back with a node's last binding"
        );
        last_on_node.resize(cluster.node_slots(), None);
        let network = cluster.has_shared_devices();
        let mut shape_start = vec![0; gang.shapes.len()];
        for (k, p) in gang.pods.iter().enumerate().rev() {
            shape_start[p.shape] = k;
        }
        let learn = !network && gang.shared.iter().all(|s| s.allocated.is_some() || !s.used);
        Search {
            cluster,
            gang,
            spread: matches!(options.policy.base(), ScoringPolicy::Spread),
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
}

/// Suffix sums of `caps`: entry `i` is the sum of `caps[i..]`.
fn suffix_sums(caps: &[u32]) -> Vec<u64> {
    let mut v = vec![0u64; caps.len() + 1];
    for i in (0..caps.len()).rev() {
        v[i] = v[i + 1] + u64::from(caps[i]);
    }
    v
}
