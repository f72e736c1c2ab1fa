//! The allocation search: depth-first, first solution wins, in upstream's order.
//!
//! Works on prepared [`Claim`]s: every (sub)request already has its candidate
//! devices — class and request selectors, node reach, pool state, taints and
//! committed allocations applied through the bitset index — in upstream's order
//! (pools by driver then name, binding-condition pools last, slices by name, devices in
//! slice order). The search itself only decides among candidates: which of them, under
//! in-flight exclusivity, shared capacity, shared counters and the claim's constraints.
//!
//! What upstream's allocator lacks and this one adds, none of which changes which
//! solution is found first:
//! - a counting pre-check: an alternative with fewer candidates than devices it needs
//!   fails at once (upstream enumerates every combination first);
//! - a combination bound: a slot is abandoned when fewer candidates remain after it
//!   than slots still to fill;
//! - symmetry breaking: after a device failed at a slot, devices this call cannot tell
//!   apart from it are skipped at that slot, because their subtrees fail the same way.
//!   Two devices are alike when they are candidates of the same alternatives of every
//!   claim of the call, with the same values of every constraint's attribute, the same
//!   counter consumption (and pool, when they consume counters) and the same state:
//!   what the call never looks at (names, UUIDs, attributes no constraint names) does
//!   not tell them apart. The classes are computed on the first failure only;
//! - counting bounds when a request starts (`hopeless`): the devices the requests left
//!   need at least (the least over each request's alternatives) must fit in the free
//!   candidates they share; for each `distinctAttribute`, the devices its scope still
//!   needs must find as many values not yet taken (a pigeonhole); for each
//!   `matchAttribute`, as many devices sharing one value (with the value chosen so far);
//! - `matchAttribute` grouping: before a constraint has a value, a device is tried
//!   only if enough candidates after it share its value to fill the alternative;
//! - a step budget that turns a pathological search into a clear outcome: every
//!   candidate tried at a slot is a step, and the search never takes more steps than
//!   the budget.

// `c`, `r`, `a`, `i` index claims, requests, alternatives and candidates throughout.
#![allow(clippy::many_single_char_names)]

use smallvec::SmallVec;

use crate::Quantity;
use crate::alloc_prelude::*;
use crate::cluster::ids::{DeviceId, PoolId};

/// One comparable attribute value (a scalar is a one-element set).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ValueKey {
    Int(i64),
    Bool(bool),
    Str(String),
    Version(String),
}

/// The values of one attribute of one device, for one constraint; `None` when the
/// device lacks the attribute.
pub(crate) type Values = Option<SmallVec<[ValueKey; 1]>>;

/// How many devices an alternative needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// Exactly this many.
    Count(u32),
    /// Every candidate (allocation mode `All`); each must be allocatable.
    All,
}

/// One candidate device of one alternative.
#[derive(Clone, Debug)]
#[allow(clippy::struct_excessive_bools)] // independent facts about one device
pub(crate) struct Candidate {
    pub(crate) device: DeviceId,
    pub(crate) pool: PoolId,
    /// Devices with equal `equiv` in the same pool are interchangeable.
    pub(crate) equiv: u32,
    pub(crate) shareable: bool,
    /// What one share consumes (shareable devices only), by capacity name.
    pub(crate) consumes: BTreeMap<String, Quantity>,
    /// Capacity left after committed shares, by capacity name (shareable only).
    pub(crate) capacity_left: BTreeMap<String, Quantity>,
    /// Shared counters the device consumes: ((set, counter), amount).
    pub(crate) counters: Vec<((String, String), Quantity)>,
    /// Whether a committed non-admin share already charged the device's counters.
    pub(crate) counters_charged: bool,
    /// Whether the device carries a `NoSchedule` / `NoExecute` taint (later requests
    /// may not tolerate it, so it is not interchangeable with untainted twins).
    pub(crate) tainted: bool,
    /// Whether committed allocations hold the device (exclusive ones are filtered out
    /// before the search except for admin access and `All`).
    pub(crate) in_use: bool,
    /// Values per constraint of the claim (index = constraint index).
    pub(crate) values: Vec<Values>,
}

/// One alternative of a request: the request itself, or one `firstAvailable` entry.
#[derive(Clone, Debug)]
pub(crate) struct Alternative {
    pub(crate) need: Need,
    pub(crate) admin: bool,
    pub(crate) candidates: Vec<Candidate>,
    /// Which of the claim's constraints apply to this alternative.
    pub(crate) constraints: Vec<usize>,
}

impl Alternative {
    /// A placeholder left behind when an alternative moves into the search.
    pub(crate) fn empty() -> Alternative {
        Alternative {
            need: Need::Count(0),
            admin: false,
            candidates: Vec::new(),
            constraints: Vec::new(),
        }
    }
}

/// A request: its alternatives in preference order.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) alternatives: Vec<Alternative>,
}

/// A constraint of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConstraintKind {
    /// Every device in scope shares a value (lists: a common value).
    Match,
    /// No two devices in scope share a value (set semantics).
    Distinct,
}

/// A claim to allocate.
#[derive(Clone, Debug)]
pub(crate) struct Claim {
    pub(crate) requests: Vec<Request>,
    pub(crate) constraints: Vec<ConstraintKind>,
}

/// Upstream's per-claim limit on allocated devices.
pub(crate) const MAX_DEVICES_PER_CLAIM: usize = crate::model::claim::MAX_ALLOCATION_RESULTS;

/// One chosen device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pick {
    /// Whether this pick charged the device's shared counters.
    pub(crate) charged: bool,
    pub(crate) claim: usize,
    pub(crate) request: usize,
    pub(crate) alternative: usize,
    pub(crate) candidate: usize,
    pub(crate) device: DeviceId,
}

/// How a search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SearchEnd {
    /// Every claim is allocated; picks in search order.
    Found(Vec<Pick>),
    /// No allocation exists.
    NotFound,
    /// The step budget ran out first.
    BudgetExhausted,
}

/// What `acceptable` decided about one candidate.
enum Verdict {
    Accept,
    /// Unusable now (in use, capacity, counters).
    Reject,
    /// A constraint of the claim rejects it.
    Constraint,
}

/// Where each claim's (request, alternative) decisions failed, for explanations.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stats {
    pub(crate) steps: u64,
}

struct ConstraintState {
    kind: ConstraintKind,
    /// Match: the running intersection (None = no device yet). Distinct: unused.
    common: Option<SmallVec<[ValueKey; 1]>>,
    /// Distinct: every value taken so far.
    taken: Vec<ValueKey>,
}

struct Search<'p> {
    claims: &'p [Claim],
    budget: u64,
    steps: u64,
    /// Devices allocated exclusively in this call, by any claim (few: linear scans
    /// beat a tree here).
    exclusive: SmallVec<[DeviceId; 16]>,
    /// Devices picked by each claim in this call (no device twice in one claim).
    per_claim: SmallVec<[SmallVec<[DeviceId; 8]>; 2]>,
    /// In-flight consumption of shareable devices.
    share_use: BTreeMap<DeviceId, BTreeMap<String, Quantity>>,
    /// Devices whose counters this call charged.
    charged: SmallVec<[DeviceId; 4]>,
    /// Devices picked by admin requests in this call (non-admin requests avoid them).
    admin_picked: SmallVec<[DeviceId; 4]>,
    /// In-flight counter consumption per pool.
    counter_use: BTreeMap<PoolId, BTreeMap<(String, String), Quantity>>,
    /// Counters left after committed allocations, per pool.
    counters_left: &'p BTreeMap<PoolId, BTreeMap<(String, String), Quantity>>,
    /// Constraint state per claim.
    constraints: SmallVec<[Vec<ConstraintState>; 2]>,
    picks: Vec<Pick>,
    /// Devices picked per claim.
    claim_devices: SmallVec<[usize; 4]>,
    exhausted: bool,
    /// Whether [`hopeless`](Search::hopeless) can prune anything: more than one request
    /// in the call, or constraints.
    bounded: bool,
    /// The symmetry class of every candidate (claim → request → alternative →
    /// candidate), computed on the first failure that needs it.
    classes: Option<Vec<Vec<Vec<Vec<u32>>>>>,
}

/// Runs the search.
pub(crate) fn search(
    claims: &[Claim],
    counters_left: &BTreeMap<PoolId, BTreeMap<(String, String), Quantity>>,
    budget: u64,
) -> (SearchEnd, Stats) {
    let mut s = Search {
        claims,
        budget,
        steps: 0,
        exclusive: SmallVec::new(),
        per_claim: smallvec::smallvec![SmallVec::new(); claims.len()],
        share_use: BTreeMap::new(),
        charged: SmallVec::new(),
        admin_picked: SmallVec::new(),
        counter_use: BTreeMap::new(),
        counters_left,
        constraints: claims
            .iter()
            .map(|c| {
                c.constraints
                    .iter()
                    .map(|&kind| ConstraintState::new(kind))
                    .collect()
            })
            .collect(),
        picks: Vec::with_capacity(claims.iter().map(min_devices).sum()),
        claim_devices: smallvec::smallvec![0; claims.len()],
        exhausted: false,
        bounded: claims.iter().map(|c| c.requests.len()).sum::<usize>() > 1
            || claims.iter().any(|c| !c.constraints.is_empty()),
        classes: None,
    };
    let found = s.claim(0);
    let stats = Stats { steps: s.steps };
    let end = if found {
        SearchEnd::Found(s.picks)
    } else if s.exhausted {
        SearchEnd::BudgetExhausted
    } else {
        SearchEnd::NotFound
    };
    (end, stats)
}

/// The least number of devices a claim needs (upstream's 32-device check uses it).
pub(crate) fn min_devices(claim: &Claim) -> usize {
    claim.requests.iter().map(min_devices_of).sum()
}

/// The least number of devices a request needs: its count, the least over its
/// alternatives, or for `All` the candidates (at least one).
pub(crate) fn min_devices_of(request: &Request) -> usize {
    request
        .alternatives
        .iter()
        .map(|a| match a.need {
            Need::Count(n) => n as usize,
            Need::All => a.candidates.len().max(1),
        })
        .min()
        .unwrap_or(0)
}

impl Search<'_> {
    /// Takes one step; false (and exhausted) when the budget is spent: `steps` never
    /// exceeds the budget.
    fn tick(&mut self) -> bool {
        if self.exhausted || self.steps >= self.budget {
            self.exhausted = true;
            return false;
        }
        self.steps += 1;
        true
    }

    /// Allocates claims `c..`.
    fn claim(&mut self, c: usize) -> bool {
        c == self.claims.len() || self.request(c, 0)
    }

    /// Allocates requests `r..` of claim `c`, then the later claims.
    fn request(&mut self, c: usize, r: usize) -> bool {
        let claim = &self.claims[c];
        if r == claim.requests.len() {
            return self.claim(c + 1);
        }
        if self.bounded && self.hopeless(c, r) {
            return false;
        }
        for a in 0..claim.requests[r].alternatives.len() {
            if self.exhausted {
                return false;
            }
            let alt = &claim.requests[r].alternatives[a];
            let need = match alt.need {
                Need::Count(n) => n as usize,
                Need::All => alt.candidates.len(),
            };
            // Counting pre-check (`All` needs at least one device) and the
            // 32-device ceiling.
            if alt.candidates.len() < need
                || need == 0
                || self.claim_devices[c] + need > MAX_DEVICES_PER_CLAIM
            {
                continue;
            }
            if self.slot(c, r, a, need, 0) {
                return true;
            }
        }
        false
    }

    /// Fills the remaining `left` slots of alternative `a` of request `r`, trying
    /// candidates from position `from` on (combinations, not permutations).
    fn slot(&mut self, c: usize, r: usize, a: usize, left: usize, from: usize) -> bool {
        if left == 0 {
            return self.request(c, r + 1);
        }
        let alt = &self.claims[c].requests[r].alternatives[a];
        let all = alt.need == Need::All;
        // Symmetry breaking: the candidates that failed at this slot (positions).
        let mut failed: SmallVec<[usize; 4]> = SmallVec::new();
        let mut i = from;
        while i < alt.candidates.len() {
            // Combination bound: enough candidates must remain.
            if alt.candidates.len() - i < left {
                return false;
            }
            if !self.tick() {
                return false;
            }
            let cand = &alt.candidates[i];
            // Interchangeable only when nothing but identity tells them apart: not
            // shareable (consumption differs), not committed, not tainted (tolerations
            // differ between requests), not an admin pick (admin access ignores
            // in-flight picks that later requests do not).
            let symmetric = !cand.shareable && !cand.in_use && !cand.tainted && !alt.admin;
            if symmetric && !failed.is_empty() && self.alike_failed(c, r, a, i, &failed) {
                i += 1;
                continue;
            }
            match self.acceptable(c, alt, i, left) {
                Verdict::Accept => {}
                // `All`: every candidate must be allocatable, no alternatives. A
                // constraint violated here fails the alternative; upstream aborts the
                // whole allocation with an error instead, but where it first meets
                // the violation depends on its unpruned search order, and gangpack
                // keeps outcomes independent of pruning (see docs/ARCHITECTURE.md).
                Verdict::Reject | Verdict::Constraint if all => return false,
                Verdict::Reject | Verdict::Constraint => {
                    i += 1;
                    continue;
                }
            }
            self.take(c, r, a, i);
            if self.slot(c, r, a, left - 1, i + 1) {
                return true;
            }
            self.untake(c, r, a, i);
            if self.exhausted || all {
                return false;
            }
            if symmetric {
                failed.push(i);
            }
            i += 1;
        }
        false
    }

    /// Whether candidate `i` of `alt` can be added now.
    fn acceptable(&self, c: usize, alt: &Alternative, i: usize, left: usize) -> Verdict {
        let cand = &alt.candidates[i];
        // In use (upstream 3.6 step 1). An admin request skips only devices its own
        // claim picked. Any other request skips devices picked in this call by any
        // claim — admin picks included — and committed ones (only `All` candidates
        // reach the search in that state); a shareable device is never "in use"
        // exclusively, so several requests and claims — admin requests of the same
        // claim included, as upstream — may take shares of it.
        if !cand.shareable && self.per_claim[c].contains(&cand.device) {
            return Verdict::Reject;
        }
        if !alt.admin && !cand.shareable {
            if self.exclusive.contains(&cand.device) || self.admin_picked.contains(&cand.device) {
                return Verdict::Reject;
            }
            if cand.in_use {
                return Verdict::Reject;
            }
        }
        // Shared capacity. Upstream checks and consumes it for admin shares too (only
        // committed admin shares are left out of the committed state).
        if cand.shareable {
            let used = self.share_use.get(&cand.device);
            for (name, amount) in &cand.consumes {
                let left_cap = cand
                    .capacity_left
                    .get(name)
                    .copied()
                    .unwrap_or(Quantity::ZERO);
                let in_flight = used
                    .and_then(|u| u.get(name))
                    .copied()
                    .unwrap_or(Quantity::ZERO);
                if in_flight.saturating_add(*amount) > left_cap {
                    return Verdict::Reject;
                }
            }
        }
        // Shared counters, charged once per device, by admin picks too.
        //
        // QUIRK (upstream allocator, allocateDevice): an admin pick of a device that a
        // committed claim already holds charges the device's counters a second time
        // in this call (the committed state charged them once), so admin access to a
        // held counter-consuming device can fail for lack of counters. gangpack does
        // the same.
        if !cand.counters.is_empty() && !self.charges_skipped(cand) && !self.counters_fit(cand) {
            return Verdict::Reject;
        }
        // Constraints.
        for &k in &alt.constraints {
            let st = &self.constraints[c][k];
            let Some(values) = &cand.values[k] else {
                return Verdict::Constraint;
            };
            match st.kind {
                ConstraintKind::Match => match &st.common {
                    Some(common) => {
                        if !values.iter().any(|v| common.contains(v)) {
                            return Verdict::Constraint;
                        }
                    }
                    None => {
                        // Grouping: enough later candidates must share a value.
                        if left > 1 && !enough_alike(alt, k, i, left) {
                            return Verdict::Constraint;
                        }
                    }
                },
                ConstraintKind::Distinct => {
                    if values.iter().any(|v| st.taken.contains(v)) {
                        return Verdict::Constraint;
                    }
                }
            }
        }
        Verdict::Accept
    }

    fn charges_skipped(&self, cand: &Candidate) -> bool {
        cand.shareable && (cand.counters_charged || self.charged.contains(&cand.device))
    }

    /// Upstream's rule: after adding the device, every counter of every counter set of
    /// the pool must still have `available >= consumed`.
    ///
    /// QUIRK (upstream allocator, spec 3.8): because every counter of the pool is
    /// checked, a counter that committed allocations already over-commit (a driver
    /// shrank a set) blocks every counter-consuming device of the pool, even devices
    /// that do not consume it. gangpack does the same: allocating more from an
    /// over-committed pool would only deepen the deficit.
    fn counters_fit(&self, cand: &Candidate) -> bool {
        let empty = BTreeMap::new();
        let left = self.counters_left.get(&cand.pool).unwrap_or(&empty);
        let used = self.counter_use.get(&cand.pool);
        for (key, available) in left {
            let in_flight = used
                .and_then(|u| u.get(key))
                .copied()
                .unwrap_or(Quantity::ZERO);
            let mine = cand
                .counters
                .iter()
                .filter(|(k, _)| k == key)
                .fold(Quantity::ZERO, |acc, (_, q)| acc.saturating_add(*q));
            if in_flight.saturating_add(mine) > *available {
                return false;
            }
        }
        // A consumed counter the pool lacks: the pool would have been invalid.
        cand.counters.iter().all(|(k, _)| left.contains_key(k))
    }

    fn take(&mut self, c: usize, r: usize, a: usize, i: usize) {
        let alt = &self.claims[c].requests[r].alternatives[a];
        let cand = &alt.candidates[i];
        self.per_claim[c].push(cand.device);
        if alt.admin {
            self.admin_picked.push(cand.device);
        }
        let mut charged = false;
        if cand.shareable {
            let u = self.share_use.entry(cand.device).or_default();
            for (name, q) in &cand.consumes {
                let e = u.entry(name.clone()).or_insert(Quantity::ZERO);
                *e = e.saturating_add(*q);
            }
        } else if !alt.admin {
            self.exclusive.push(cand.device);
        }
        {
            if !cand.counters.is_empty() && !self.charges_skipped(cand) {
                charged = true;
                self.charged.push(cand.device);
                let u = self.counter_use.entry(cand.pool).or_default();
                for (key, q) in &cand.counters {
                    let e = u.entry(key.clone()).or_insert(Quantity::ZERO);
                    *e = e.saturating_add(*q);
                }
            }
        }
        for &k in &alt.constraints {
            let values = cand.values[k].as_ref().expect("checked in acceptable");
            self.constraints[c][k].add(values);
        }
        self.claim_devices[c] += 1;
        self.picks.push(Pick {
            charged,
            claim: c,
            request: r,
            alternative: a,
            candidate: i,
            device: cand.device,
        });
    }

    fn untake(&mut self, c: usize, r: usize, a: usize, i: usize) {
        let alt = &self.claims[c].requests[r].alternatives[a];
        let cand = &alt.candidates[i];
        let pick = self.picks.pop().expect("a pick to undo");
        self.claim_devices[c] -= 1;
        remove_last(&mut self.per_claim[c], cand.device);
        if alt.admin {
            remove_last(&mut self.admin_picked, cand.device);
        }
        if cand.shareable {
            if let Some(u) = self.share_use.get_mut(&cand.device) {
                for (name, q) in &cand.consumes {
                    if let Some(e) = u.get_mut(name) {
                        *e = e.saturating_sub(*q);
                    }
                }
                if u.values().all(|q| q.is_zero()) {
                    self.share_use.remove(&cand.device);
                }
            }
        } else if !alt.admin {
            remove_last(&mut self.exclusive, cand.device);
        }
        if pick.charged {
            remove_last(&mut self.charged, cand.device);
            if let Some(u) = self.counter_use.get_mut(&cand.pool) {
                for (key, q) in &cand.counters {
                    if let Some(e) = u.get_mut(key) {
                        *e = e.saturating_sub(*q);
                    }
                }
            }
        }
        // Constraints: recompute from the picks still in scope (an exact restore,
        // unlike upstream's experimental list intersection, which is not restored).
        for &k in &alt.constraints {
            self.rebuild_constraint(c, k);
        }
    }

    fn rebuild_constraint(&mut self, c: usize, k: usize) {
        let claim = &self.claims[c];
        let mut st = ConstraintState::new(self.constraints[c][k].kind);
        for p in self.picks.iter().filter(|p| p.claim == c) {
            let alt = &claim.requests[p.request].alternatives[p.alternative];
            if alt.constraints.contains(&k) {
                st.add(
                    alt.candidates[p.candidate].values[k]
                        .as_ref()
                        .expect("in scope"),
                );
            }
        }
        self.constraints[c][k] = st;
    }
}

impl<'p> Search<'p> {
    /// The symmetry class of candidate `i` of alternative `a` of request `r` of claim
    /// `c` (see the module docs), computing every class on the first call.
    fn class_of(&mut self, c: usize, r: usize, a: usize, i: usize) -> u32 {
        if self.classes.is_none() {
            self.classes = Some(symmetry_classes(self.claims));
        }
        self.classes.as_ref().expect("computed above")[c][r][a][i]
    }

    /// Whether candidate `i` is alike (see the module docs) to one of the candidates
    /// `failed` of the same alternative: equal content in the same pool (no class table
    /// needed), or the same class.
    fn alike_failed(&mut self, c: usize, r: usize, a: usize, i: usize, failed: &[usize]) -> bool {
        let candidates = &self.claims[c].requests[r].alternatives[a].candidates;
        let me = (candidates[i].pool, candidates[i].equiv);
        if failed
            .iter()
            .any(|&j| (candidates[j].pool, candidates[j].equiv) == me)
        {
            return true;
        }
        let mine = self.class_of(c, r, a, i);
        let classes = &self.classes.as_ref().expect("computed by class_of")[c][r][a];
        failed.iter().any(|&j| classes[j] == mine)
    }

    /// Whether candidate `d` of alternative `a` of claim `c` may still be picked, as
    /// far as picks so far and committed allocations go (the first checks of
    /// `acceptable`).
    fn open(&self, c: usize, a: &Alternative, d: &Candidate) -> bool {
        if !d.shareable && self.per_claim[c].contains(&d.device) {
            return false;
        }
        a.admin || d.shareable || (self.free(d.device) && !d.in_use)
    }

    /// Whether a device is free for a non-admin, exclusive pick now.
    fn free(&self, d: DeviceId) -> bool {
        !self.exclusive.contains(&d) && !self.admin_picked.contains(&d)
    }

    /// Whether counting proves that requests `r..` of claim `c` and the later claims
    /// cannot all be allocated now (the bounds of the module docs). Never true when an
    /// allocation exists: it only prunes.
    fn hopeless(&self, c: usize, r: usize) -> bool {
        let claims: &'p [Claim] = self.claims;
        let rest = || {
            (c..claims.len()).flat_map(move |c2| {
                let from = if c2 == c { r } else { 0 };
                claims[c2].requests[from..].iter()
            })
        };
        // Exclusive picks: every request left needs devices no other pick takes. Admin
        // picks and shareable devices may be taken twice: no bound then.
        let exclusive = rest().all(|q| {
            q.alternatives
                .iter()
                .all(|a| !a.admin && a.candidates.iter().all(|d| !d.shareable))
        });
        if exclusive {
            let mut need = 0usize;
            let mut union: Vec<DeviceId> = Vec::new();
            for q in rest() {
                let fewest = q.alternatives.iter().map(least).min().unwrap_or(0);
                if fewest == 0 {
                    continue;
                }
                // Some alternative must find enough free candidates on its own.
                let enough = q.alternatives.iter().any(|a| {
                    a.need == Need::All
                        || a.candidates.iter().filter(|d| self.free(d.device)).count() >= least(a)
                });
                if !enough {
                    return true;
                }
                need += fewest;
                union.extend(
                    q.alternatives
                        .iter()
                        .flat_map(|a| &a.candidates)
                        .map(|d| d.device)
                        .filter(|&d| self.free(d)),
                );
            }
            if need > 1 {
                union.sort_unstable();
                union.dedup();
                if union.len() < need {
                    return true;
                }
            }
        }
        for (c2, claim) in claims.iter().enumerate().skip(c) {
            let from = if c2 == c { r } else { 0 };
            let requests = &claim.requests[from..];
            for (k, &kind) in claim.constraints.iter().enumerate() {
                let need: usize = requests
                    .iter()
                    .map(|q| {
                        q.alternatives
                            .iter()
                            .map(|a| {
                                if a.constraints.contains(&k) {
                                    least(a)
                                } else {
                                    0
                                }
                            })
                            .min()
                            .unwrap_or(0)
                    })
                    .sum();
                if need == 0 {
                    continue;
                }
                let state = &self.constraints[c2][k];
                // The candidates in scope still open to their alternative.
                let in_scope = requests
                    .iter()
                    .flat_map(|q| &q.alternatives)
                    .filter(|a| a.constraints.contains(&k))
                    .flat_map(|a| a.candidates.iter().filter(move |d| self.open(c2, a, d)));
                match kind {
                    ConstraintKind::Distinct => {
                        // Each device left takes at least one value no other takes.
                        let mut values: Vec<&ValueKey> = Vec::new();
                        let mut bounded = true;
                        for d in in_scope {
                            let Some(v) = &d.values[k] else {
                                continue;
                            };
                            if v.is_empty() {
                                // An empty list takes no value: no bound.
                                bounded = false;
                                break;
                            }
                            if !v.iter().any(|x| state.taken.contains(x)) {
                                values.extend(v.iter());
                            }
                        }
                        values.sort_unstable();
                        values.dedup();
                        if bounded && values.len() < need {
                            return true;
                        }
                    }
                    ConstraintKind::Match => {
                        // The devices left share one value (one of those chosen so far):
                        // that many distinct devices must carry it. A shareable device
                        // may be picked twice: no bound then.
                        let mut pairs: Vec<(&ValueKey, DeviceId)> = Vec::new();
                        let mut bounded = true;
                        for d in in_scope {
                            if d.shareable {
                                bounded = false;
                                break;
                            }
                            let Some(v) = &d.values[k] else {
                                continue;
                            };
                            for x in v {
                                if state
                                    .common
                                    .as_ref()
                                    .is_none_or(|common| common.contains(x))
                                {
                                    pairs.push((x, d.device));
                                }
                            }
                        }
                        if !bounded {
                            continue;
                        }
                        pairs.sort_unstable();
                        pairs.dedup();
                        let most = pairs
                            .chunk_by(|x, y| x.0 == y.0)
                            .map(<[_]>::len)
                            .max()
                            .unwrap_or(0);
                        if most < need {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}

/// The devices alternative `a` takes at least (`All`: 0, a bound must not count on it).
fn least(a: &Alternative) -> usize {
    match a.need {
        Need::Count(n) => n as usize,
        Need::All => 0,
    }
}

/// The symmetry classes of every candidate of `claims` (claim → request → alternative
/// → candidate): devices are in one class when the call cannot tell them apart — the
/// same alternatives hold them, with equal constraint values, capacities, counters and
/// state (see the module docs).
fn symmetry_classes(claims: &[Claim]) -> Vec<Vec<Vec<Vec<u32>>>> {
    /// What one alternative sees of a device.
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    struct Seen<'a> {
        at: (usize, usize, usize),
        /// The pool, when the device consumes counters (they are per pool).
        pool: Option<PoolId>,
        values: &'a [Values],
        counters: &'a [((String, String), Quantity)],
        consumes: &'a BTreeMap<String, Quantity>,
        capacity_left: &'a BTreeMap<String, Quantity>,
        state: (bool, bool, bool, bool),
    }
    let mut seen: BTreeMap<DeviceId, Vec<Seen<'_>>> = BTreeMap::new();
    for (c, claim) in claims.iter().enumerate() {
        for (r, q) in claim.requests.iter().enumerate() {
            for (a, alt) in q.alternatives.iter().enumerate() {
                for d in &alt.candidates {
                    seen.entry(d.device).or_default().push(Seen {
                        at: (c, r, a),
                        pool: (!d.counters.is_empty()).then_some(d.pool),
                        values: &d.values,
                        counters: &d.counters,
                        consumes: &d.consumes,
                        capacity_left: &d.capacity_left,
                        state: (d.shareable, d.in_use, d.tainted, d.counters_charged),
                    });
                }
            }
        }
    }
    let mut ids: BTreeMap<&[Seen<'_>], u32> = BTreeMap::new();
    let mut class: BTreeMap<DeviceId, u32> = BTreeMap::new();
    for (d, profile) in &seen {
        let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        class.insert(*d, *ids.entry(profile.as_slice()).or_insert(next));
    }
    claims
        .iter()
        .map(|claim| {
            claim
                .requests
                .iter()
                .map(|q| {
                    q.alternatives
                        .iter()
                        .map(|alt| alt.candidates.iter().map(|d| class[&d.device]).collect())
                        .collect()
                })
                .collect()
        })
        .collect()
}

impl ConstraintState {
    fn new(kind: ConstraintKind) -> ConstraintState {
        ConstraintState {
            kind,
            common: None,
            taken: Vec::new(),
        }
    }

    fn add(&mut self, values: &SmallVec<[ValueKey; 1]>) {
        match self.kind {
            ConstraintKind::Match => {
                self.common = Some(match self.common.take() {
                    None => values.clone(),
                    Some(common) => common.into_iter().filter(|v| values.contains(v)).collect(),
                });
            }
            ConstraintKind::Distinct => self.taken.extend(values.iter().cloned()),
        }
    }
}

/// Removes the last occurrence of `d` (picks are undone in reverse order).
fn remove_last<const N: usize>(v: &mut SmallVec<[DeviceId; N]>, d: DeviceId)
where
    [DeviceId; N]: smallvec::Array<Item = DeviceId>,
{
    if let Some(i) = v.iter().rposition(|x| *x == d) {
        v.remove(i);
    }
}

/// Whether at least `left` candidates from `i` on (candidate `i` included) share a
/// value with candidate `i` for constraint `k`.
fn enough_alike(alt: &Alternative, k: usize, i: usize, left: usize) -> bool {
    let Some(mine) = &alt.candidates[i].values[k] else {
        return false;
    };
    let alike = alt.candidates[i..]
        .iter()
        .filter(|c| {
            c.values[k]
                .as_ref()
                .is_some_and(|v| v.iter().any(|x| mine.contains(x)))
        })
        .count();
    alike >= left
}
