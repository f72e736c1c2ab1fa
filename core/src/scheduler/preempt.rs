//! Workload-aware preemption (KEP-5710): when a unit does not fit and its policy is
//! `PreemptLowerPriority`, which running work of lower priority to evict so that it
//! fits, at the least cost.
//!
//! # Victims
//!
//! The potential victims of a preemptor of priority `P` are the running units of
//! priority below `P` (a member of a PodGroup has its group's priority): a PodGroup with
//! `disruptionMode: All` is one victim, evicted whole; a pod of a `Single`-mode group, or
//! a pod without a group, is a victim of its own. Nothing else is ever evicted.
//!
//! # The cost of a preemption
//!
//! Sets of victims are ranked by these criteria, in this order (the first that differs
//! decides; "better" means cheaper). Criteria 2 and 3 are upstream's order of victim
//! importance (KEP-5710's `MoreImportantVictim`: priority, then "PodGroups are
//! considered more important than individual Pods of the same priority"); criteria 1
//! and 4–6 are kube-scheduler's criteria for choosing among preemption candidates
//! (`pickOneNodeForPreemption`), applied to whole victim sets across the preemptor's
//! candidate placements, not node by node; 7 and 8 are gangpack's tie-breaks. Where
//! gangpack's least-cost ranking and upstream's importance order differ, upstream's
//! wins and the ranking only breaks its ties.
//!
//! 1. **PodDisruptionBudget violations**: gangpack does not model PDBs, so every set
//!    has none and this criterion never decides.
//! 2. **The highest victim priority**: lower is better.
//! 3. **A PodGroup among the most important victims** (PodGroup preemptors only): at
//!    the highest victim priority, a set that evicts only individual pods (pods
//!    without a group and pods of `Single`-mode groups) is better than one that evicts
//!    a PodGroup whole (`disruptionMode: All`). Upstream removes every potential victim
//!    and reprieves the most important first, so an `All`-mode PodGroup is kept
//!    whenever the pods of its priority make room without it. A pod preemptor is
//!    ranked by upstream's default preemption, whose candidates are compared by the
//!    other criteria only, so this criterion never decides for it.
//! 4. **The sum of the victim pods' priorities**, each shifted by 2³¹ as upstream does
//!    (`priority + MaxInt32 + 1`, so that negative priorities still add up): lower is
//!    better. A PodGroup evicted whole counts each of its pods.
//! 5. **The number of victim pods**: fewer is better.
//! 6. **The earliest start among the highest-priority victims' pods**: later is better
//!    (the most important victims lose the least work). The model has no
//!    `status.startTime`; a pod's `metadata.creationTimestamp` stands in for it.
//! 7. **The number of workloads disrupted** (gangpack's tie-break): PodGroups of either
//!    mode with a victim pod, plus victim pods without a group. Fewer is better.
//! 8. **The victims' names** (gangpack's tie-break): the units as a sorted list
//!    (`PodGroup` before `Pod`, then by `namespace/name`), compared element by element;
//!    the smaller list is better. Two different sets always differ here, so the ranking
//!    is a total order and the choice is deterministic.
//!
//! # The search
//!
//! Victims are ordered least important first: lower priority; for a PodGroup
//! preemptor, individual pods before `All`-mode PodGroups (criterion 3); pods above
//! their group's `minCount`; more devices freed per pod (so that a few large victims come before
//! many small ones); later creation; name. Every trial placement runs the gang placer on
//! the live cluster with the victims tried released by a simulator (see [`Sim`]) and
//! undoes itself, so the search leaves the cluster as it found it. Feasibility is taken
//! to grow with the victims evicted, as the KEP's search over priorities takes it.
//! A trial is skipped when counting proves it would fail: the free usable devices
//! must cover the devices the unit's `required` smallest pending pods' own claims
//! take at least (not counted when the cluster has shareable devices).
//!
//! 1. **First candidate**: victims are removed in that order until the unit fits: the
//!    shortest such prefix, found by doubling then bisecting. If even removing every
//!    victim does not help, nothing is evicted. Otherwise the removed victims are
//!    reprieved most important first, each kept evicted only if the unit no longer fits
//!    without it (upstream's reprieve). The result's highest priority is the least any
//!    preemption needs (the KEP's search over priorities).
//! 2. **Up to [`EXACT_VICTIMS`] potential victims**: every set cheaper than the first
//!    candidate, and of its highest priority, is tried in rank order, and the first that
//!    fits wins (at most [`EXACT_SETS`] sets and [`EXACT_TRIALS`] placements): within
//!    those bounds the answer is the cheapest set that fits.
//! 3. **More victims**: unless the first candidate is as cheap as counting allows
//!    (criteria 2 to 4 against a fractional cover of the missing devices), up to
//!    [`MAX_CANDIDATES`] more candidate placements are evaluated like the first, within
//!    [`CANDIDATE_TRIALS`] placements in all: node sets (victims taken node by node,
//!    nodes cheapest to clear first), per topology domain of the unit's constraint (the
//!    [`MAX_DOMAINS`] domains that look cheapest by count: their victims, in order and
//!    node by node), and for a unit that needs one pod, single nodes (the
//!    [`MAX_NODES`] cheapest, upstream's per-node candidates). The cheapest result wins.
//!
//! The chosen victims are then evicted for real (`unbind`: their pods return to
//! pending) and the unit is placed.

use core::cmp::{Ordering, Reverse};

use super::{Preemption, Scheduler, SchedulerError, Unit, Victim};
use crate::Time;
use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::gang::options::{GangOptions, GangOutcome};
use crate::model::claim::{DeviceRequestKind, ResourceClaim};
use crate::model::workload::{ClaimSource, DisruptionMode, Pod, PodGroup};

/// With at most this many potential victims every cheaper set is tried.
const EXACT_VICTIMS: usize = 10;
/// Placements the exhaustive search may try beyond the first candidate's.
const EXACT_TRIALS: usize = 32;
/// Sets the exhaustive search may examine (every set of up to 8 victims).
const EXACT_SETS: usize = 256;
/// Candidate placements evaluated beyond the first (more victims).
const MAX_CANDIDATES: usize = 8;
/// Placements those candidates may try in all.
const CANDIDATE_TRIALS: usize = 48;
/// Topology domains evaluated as candidates.
const MAX_DOMAINS: usize = 3;
/// Single nodes evaluated as candidates (a unit that needs one pod).
const MAX_NODES: usize = 4;

/// What the search knows of a potential victim besides its [`Victim`] record.
struct Facts<'a> {
    /// The earliest `creationTimestamp` of its pods (the start time's stand-in).
    start: Time,
    /// The PodGroup whose pod it is, for a pod of a `Single`-mode group (a group
    /// evicted whole and a pod without a group are their own workload).
    group: Option<&'a str>,
    /// At most this many devices are freed by evicting it: those its pods' bindings
    /// hold, and its PodGroup's claims.
    most: usize,
}

/// The cost of a set of victims (see the module docs): less is cheaper.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Cost<'a> {
    /// Criterion 2.
    highest: i32,
    /// Criterion 3: an `All`-mode PodGroup among the victims of priority `highest`
    /// (always `false` for a pod preemptor).
    group_at_highest: bool,
    /// Criterion 4.
    sum: u128,
    /// Criterion 5.
    pods: usize,
    /// Criterion 6: the earliest start among the highest-priority victims.
    start: Reverse<Time>,
    /// Criterion 7.
    workloads: usize,
    /// Criterion 8: the units, sorted.
    units: Vec<&'a Unit>,
}

/// A priority shifted to be non-negative, as upstream sums them (`p + MaxInt32 + 1`).
fn shifted(priority: i32) -> u128 {
    u128::from(priority.abs_diff(i32::MIN))
}

/// The cost of evicting `set` (indices into `victims`) for a preemptor that is a
/// PodGroup (`wap`, workload-aware preemption) or a pod.
fn cost<'a>(victims: &'a [Victim], facts: &[Facts<'_>], set: &[usize], wap: bool) -> Cost<'a> {
    let highest = set
        .iter()
        .map(|&i| victims[i].priority)
        .max()
        .unwrap_or(i32::MIN);
    let group_at_highest = wap
        && set
            .iter()
            .any(|&i| victims[i].priority == highest && matches!(victims[i].unit, Unit::Group(_)));
    let sum = set
        .iter()
        .map(|&i| shifted(victims[i].priority) * victims[i].pods.len() as u128)
        .sum();
    let pods = set.iter().map(|&i| victims[i].pods.len()).sum();
    let start = set
        .iter()
        .filter(|&&i| victims[i].priority == highest)
        .map(|&i| facts[i].start)
        .min()
        .unwrap_or(Time(i64::MAX));
    // Workloads as (is a group, key): a group and a pod may share a name.
    let mut workloads: Vec<(bool, &str)> = set
        .iter()
        .map(|&i| match (&victims[i].unit, &facts[i].group) {
            (_, Some(g)) => (true, *g),
            (Unit::Group(g), None) => (true, g.as_str()),
            (Unit::Pod(p), None) => (false, p.as_str()),
        })
        .collect();
    workloads.sort_unstable();
    workloads.dedup();
    let mut units: Vec<&Unit> = set.iter().map(|&i| &victims[i].unit).collect();
    units.sort_unstable();
    Cost {
        highest,
        group_at_highest,
        sum,
        pods,
        start: Reverse(start),
        workloads: workloads.len(),
        units,
    }
}

/// The running units a preemptor of priority `priority` may evict (see the module
/// docs), least important first (for a PodGroup preemptor, `wap`, individual pods
/// before `All`-mode PodGroups of the same priority), with what the search needs to
/// know of each.
fn potential_victims<'a>(
    s: &SimView<'a>,
    priority: i32,
    wap: bool,
) -> (Vec<Victim>, Vec<Facts<'a>>) {
    struct Entry<'a> {
        /// A pod of a group with more bound members than its `minCount`.
        above: bool,
        victim: Victim,
        facts: Facts<'a>,
    }
    let mut out: Vec<Entry<'a>> = Vec::new();
    let mut whole: BTreeMap<&str, Entry<'a>> = BTreeMap::new();
    // Members of `Single` groups that are victims: (group, bound victims, pods of
    // theirs in `out`).
    let mut elastic: BTreeMap<&str, (usize, Vec<usize>)> = BTreeMap::new();
    // Group keys are built in one buffer (no allocation per pod); the last one looked
    // up is kept with its answer: bound pods come in name order, where a gang's
    // members are usually next to each other.
    let mut buf = String::new();
    // (`buf` always holds a '/', so the empty key matches none.)
    let mut last_key = String::new();
    let mut last_found: Option<(&'a String, &'a PodGroup)> = None;
    for (k, b) in s.bound {
        let Some(pod) = s.pods.get(k) else {
            continue;
        };
        let devices = held_devices(b);
        let group = pod.scheduling_group.as_deref().and_then(|g| {
            buf.clear();
            buf.push_str(&pod.namespace);
            buf.push('/');
            buf.push_str(g);
            if buf != last_key {
                last_found = s.groups.get_key_value(buf.as_str());
                last_key.clone_from(&buf);
            }
            last_found
        });
        let Some((g, group)) = group else {
            if pod.priority < priority {
                out.push(Entry {
                    above: false,
                    victim: Victim {
                        unit: Unit::Pod(k.clone()),
                        pods: vec![k.clone()],
                        priority: pod.priority,
                        devices,
                    },
                    facts: Facts {
                        start: pod.creation,
                        group: None,
                        most: devices,
                    },
                });
            }
            continue;
        };
        let p = group.effective_priority();
        if p >= priority {
            continue;
        }
        if group.disruption_mode == DisruptionMode::All {
            let e = whole.entry(g.as_str()).or_insert_with(|| Entry {
                above: false,
                victim: Victim {
                    unit: Unit::Group(g.clone()),
                    pods: Vec::new(),
                    priority: p,
                    devices: 0,
                },
                facts: Facts {
                    start: pod.creation,
                    group: None,
                    most: group_claim_devices(s.group_claims, g),
                },
            });
            e.victim.pods.push(k.clone());
            e.victim.devices += devices;
            e.facts.most += devices;
            e.facts.start = e.facts.start.min(pod.creation);
        } else {
            let e = elastic.entry(g.as_str()).or_default();
            e.0 += 1;
            e.1.push(out.len());
            out.push(Entry {
                above: false,
                victim: Victim {
                    unit: Unit::Pod(k.clone()),
                    pods: vec![k.clone()],
                    priority: p,
                    devices,
                },
                facts: Facts {
                    start: pod.creation,
                    group: Some(g.as_str()),
                    most: devices + group_claim_devices(s.group_claims, g),
                },
            });
        }
    }
    // Pods of a group with more bound members than its minCount are its elastic
    // extras: they go first.
    for (g, (bound, at)) in elastic {
        let min = s
            .groups
            .get(g)
            .and_then(|g| g.policy.min_count())
            .unwrap_or(0) as usize;
        if bound > min {
            for i in at {
                out[i].above = true;
            }
        }
    }
    out.extend(whole.into_values());
    out.sort_by(|a, b| {
        a.victim
            .priority
            .cmp(&b.victim.priority)
            .then_with(|| {
                let group = |e: &Entry<'_>| wap && matches!(e.victim.unit, Unit::Group(_));
                group(a).cmp(&group(b))
            })
            .then_with(|| b.above.cmp(&a.above))
            .then_with(|| more_per_pod(&a.victim, &a.facts, &b.victim, &b.facts))
            .then_with(|| b.facts.start.cmp(&a.facts.start))
            .then_with(|| a.victim.unit.cmp(&b.victim.unit))
    });
    out.into_iter().map(|e| (e.victim, e.facts)).unzip()
}

/// Devices the claims of PodGroup `group` hold (admin access does not count).
fn group_claim_devices(
    group_claims: &BTreeMap<String, Vec<crate::model::decision::ClaimAllocation>>,
    group: &str,
) -> usize {
    group_claims.get(group).map_or(0, |claims| {
        claims
            .iter()
            .map(|c| c.result.devices.iter().filter(|d| !d.admin_access).count())
            .sum()
    })
}

/// `a` before `b` when it frees more devices per pod evicted.
fn more_per_pod(a: &Victim, fa: &Facts<'_>, b: &Victim, fb: &Facts<'_>) -> Ordering {
    let (ma, mb) = (fa.most as u128, fb.most as u128);
    let (pa, pb) = (a.pods.len() as u128, b.pods.len() as u128);
    (mb * pa).cmp(&(ma * pb))
}

/// Devices a bound pod's binding allocated (its own and shared claims; admin access
/// does not count).
fn held_devices(b: &crate::PodBinding) -> usize {
    b.claims
        .iter()
        .map(|c| c.result.devices.iter().filter(|d| !d.admin_access).count())
        .sum()
}

/// Usable devices not allocated exclusively.
fn free_usable(c: &Cluster) -> usize {
    c.free_devices()
        .words()
        .iter()
        .zip(c.usable_devices().words())
        .map(|(a, b)| (a & b).count_ones() as usize)
        .sum()
}

/// What placing the unit takes at least: `(devices, required)`. `required` is how many
/// of its pending pods must be placed together; `devices` is how many devices their
/// placement takes from the free set at least — the own claims (named by one pending
/// pod only, not allocated yet) of the `required` pending pods with the fewest,
/// counting requests without admin access — or 0 when the cluster has usable
/// shareable devices (whose shares leave them free).
fn needs(
    c: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &[ResourceClaim],
) -> (usize, usize) {
    let pending: Vec<&Pod> = pods.iter().filter(|p| p.node_name.is_none()).collect();
    let running = pods.len() - pending.len();
    let required = group
        .and_then(|g| g.policy.min_count())
        .map_or(1, |m| (m as usize).saturating_sub(running).max(1));
    let shareable = c
        .shareable_devices()
        .words()
        .iter()
        .zip(c.usable_devices().words())
        .any(|(a, b)| a & b != 0);
    if shareable {
        return (0, required);
    }
    // How many pending pods name each claim.
    let mut users: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for p in &pending {
        for n in claim_names(p) {
            *users.entry((p.namespace.as_str(), n)).or_default() += 1;
        }
    }
    let by_name: BTreeMap<(&str, &str), &ResourceClaim> = claims
        .iter()
        .map(|c| ((c.namespace.as_str(), c.name.as_str()), c))
        .collect();
    let devices = |c: &ResourceClaim| {
        c.spec
            .requests
            .iter()
            .map(|r| match &r.kind {
                DeviceRequestKind::Exactly(e) if e.admin_access => 0,
                DeviceRequestKind::Exactly(e) => e.allocation_mode.min_device_count(),
                DeviceRequestKind::FirstAvailable(subs) => subs
                    .iter()
                    .map(|s| s.allocation_mode.min_device_count())
                    .min()
                    .unwrap_or(0),
            })
            .fold(0u64, u64::saturating_add)
    };
    let mut per_pod: Vec<usize> = pending
        .iter()
        .map(|p| {
            claim_names(p)
                .into_iter()
                .map(|n| (p.namespace.as_str(), n))
                .filter(|k| users.get(k) == Some(&1))
                .filter_map(|k| by_name.get(&k))
                .filter(|c| c.allocation.is_none())
                .map(|c| usize::try_from(devices(c)).unwrap_or(usize::MAX))
                .fold(0usize, usize::saturating_add)
        })
        .collect();
    per_pod.sort_unstable();
    let devices = per_pod
        .iter()
        .take(required)
        .fold(0usize, |a, b| a.saturating_add(*b));
    (devices, required)
}

/// The claims a pod names by `resourceClaimName`, sorted, once each.
fn claim_names(p: &Pod) -> Vec<&str> {
    let mut names: Vec<&str> = p
        .resource_claims
        .iter()
        .filter_map(|r| match &r.source {
            ClaimSource::ClaimName(n) => Some(n.as_str()),
            ClaimSource::Template(_) => None,
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// A lower bound on criterion 4 for sets of victims of priority at most `highest`
/// that free `missing` devices by count: a fractional cover, cheapest per device first.
fn sum_bound(victims: &[Victim], facts: &[Facts<'_>], highest: i32, missing: usize) -> u128 {
    let mut items: Vec<(u128, u128)> = victims
        .iter()
        .zip(facts)
        .filter(|(v, f)| v.priority <= highest && f.most > 0)
        .map(|(v, f)| (shifted(v.priority) * v.pods.len() as u128, f.most as u128))
        .collect();
    items.sort_unstable_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)));
    let mut left = missing as u128;
    let mut bound = 0u128;
    for (c, m) in items {
        if left == 0 {
            break;
        }
        if m >= left {
            bound += c * left / m;
            left = 0;
        } else {
            bound += c;
            left -= m;
        }
    }
    bound
}

/// The eviction simulator for `victims` (see [`Sim`]). Borrows the scheduler's bound
/// pods, pods, memberships, group claims and indexes (not the cluster, which the search
/// changes); copies nothing up front.
fn simulator<'a>(s: SimView<'a>, victims: &'a [Victim]) -> Sim<'a> {
    Sim {
        s,
        victims,
        claims: BTreeMap::new(),
        groups: BTreeMap::new(),
        reserved: BTreeMap::new(),
    }
}

impl Scheduler {
    /// Workload-aware preemption for a unit that does not fit (KEP-5710): evicts the
    /// cheapest set of lower-priority victims that lets it fit, by the ranking and the
    /// search of the [module docs](self), and places the unit. Nothing is evicted when
    /// evicting every potential victim would not help. The search leaves the cluster
    /// as it found it; only then are the chosen victims evicted for real.
    pub(super) fn preempt(&mut self, unit: &Unit) -> Result<Option<Preemption>, SchedulerError> {
        let (priority, _, _) = self.unit_priority(unit);
        // A victim's priority is its group's or, outside a group, its own: with no pod and
        // no group below `priority` there is none. Checked first because the full scan
        // looks up every bound pod, and a unit that does not fit among equals (every
        // failed attempt of a replay without priorities) would pay it each time.
        debug_assert_eq!(
            self.lowest_group_priority(),
            self.groups.values().map(PodGroup::effective_priority).min(),
            "the group priority counts are out of date"
        );
        if !self.anything_ranks_below(priority) {
            return Ok(None);
        }
        // Disjoint borrows: the victims and the simulator read the bound pods while the
        // search changes the cluster in place.
        let view = SimView {
            bound: &self.bound,
            pods: &self.pods,
            members: &self.members,
            groups: &self.groups,
            group_claims: &self.group_claims,
            index: &self.index,
        };
        let wap = matches!(unit, Unit::Group(_));
        let (victims, facts) = potential_victims(&view, priority, wap);
        if victims.is_empty() {
            return Ok(None);
        }
        let (group, pods, claims) = self.inputs(unit);
        let options = self.options.clone();
        let (need, required) = needs(&self.cluster, group.as_ref(), &pods, &claims);
        let mut search = Search {
            sim: simulator(view, &victims),
            cluster: &mut self.cluster,
            group: group.as_ref(),
            pods: &pods,
            claims: &claims,
            options: &options,
            evicted: vec![false; victims.len()],
            wap,
            need,
            trials: 0,
            seen: BTreeMap::new(),
        };
        let chosen = search.choose(&victims, &facts, required);
        // Put every victim back, so the cluster is as it was and the real evictions
        // below go through `unbind`.
        search.move_to(&[]);
        drop(search);
        drop(facts);
        let Some(chosen) = chosen? else {
            return Ok(None);
        };
        // Commit: evict the chosen victims, place the preemptor.
        let mut evicted = Vec::new();
        for &i in &chosen {
            self.evict_victim(&victims[i]);
            evicted.push(victims[i].clone());
        }
        let (group, pods, claims) = self.inputs(unit);
        let GangOutcome::Placed(d) =
            self.cluster
                .place_gang_mut(group.as_ref(), &pods, &claims, &self.options)?
        else {
            // Cannot happen: the same state was tried during the search.
            debug_assert!(false, "the preemptor does not fit after its victims left");
            return Ok(None);
        };
        self.commit(group.as_ref(), &pods, &d)?;
        Ok(Some(Preemption {
            victims: evicted,
            decision: d,
        }))
    }

    /// Evicts a victim in this state (its pods become pending).
    fn evict_victim(&mut self, v: &Victim) {
        for p in &v.pods {
            self.unbind(p);
        }
        if let Unit::Group(g) = &v.unit {
            self.release_group_claims_if_idle(g);
        } else if let Some(g) = v.pods.first().and_then(|p| self.group_of(&self.pods[p])) {
            self.release_group_claims_if_idle(&g);
        }
    }
}

/// The victim search: the live cluster with some victims evicted by the simulator, and
/// the unit's placement inputs.
struct Search<'s, 'a> {
    sim: Sim<'a>,
    cluster: &'s mut Cluster,
    group: Option<&'s PodGroup>,
    pods: &'s [Pod],
    claims: &'s [ResourceClaim],
    options: &'s GangOptions,
    /// The victims evicted now (by index).
    evicted: Vec<bool>,
    /// The preemptor is a PodGroup (workload-aware preemption: criterion 3 applies).
    wap: bool,
    /// The unit cannot fit with fewer free usable devices (see [`needs`]).
    need: usize,
    /// Placements tried.
    trials: usize,
    /// Placements tried, by the victims evicted (sorted).
    seen: BTreeMap<Vec<usize>, bool>,
}

impl Search<'_, '_> {
    /// Evicts or restores victim `v` (nothing when it already is).
    fn set(&mut self, v: usize, evict: bool) {
        if self.evicted[v] != evict {
            if evict {
                self.sim.evict(v, self.cluster);
            } else {
                self.sim.restore(v, self.cluster);
            }
            self.evicted[v] = evict;
        }
    }

    /// Evicts exactly the victims of `set`.
    fn move_to(&mut self, set: &[usize]) {
        let mut want = vec![false; self.evicted.len()];
        for &v in set {
            want[v] = true;
        }
        for (v, &w) in want.iter().enumerate() {
            if !w {
                self.set(v, false);
            }
        }
        for &v in set {
            self.set(v, true);
        }
    }

    /// The victims evicted now, by index.
    fn current(&self) -> Vec<usize> {
        self.evicted
            .iter()
            .enumerate()
            .filter_map(|(v, &e)| e.then_some(v))
            .collect()
    }

    /// Whether the free usable devices could host the unit by count.
    fn enough(&self) -> bool {
        self.need == 0 || free_usable(self.cluster) >= self.need
    }

    /// Whether the unit fits with the victims evicted now (remembered per set).
    fn fits(&mut self) -> Result<bool, SchedulerError> {
        let key = self.current();
        if let Some(&fits) = self.seen.get(&key) {
            return Ok(fits);
        }
        self.trials += 1;
        // A claim whose last holder the simulation evicted is deallocated, as `unbind`
        // and `release_group_claims` would do: the unit must allocate it again.
        let released = |c: &ResourceClaim| {
            c.allocation.is_some() && self.sim.released(&super::key(&c.namespace, &c.name))
        };
        let outcome = if self.claims.iter().any(released) {
            let claims: Vec<ResourceClaim> = self
                .claims
                .iter()
                .map(|c| {
                    let mut c = c.clone();
                    if released(&c) {
                        c.allocation = None;
                    }
                    c
                })
                .collect();
            self.cluster
                .place_gang_mut(self.group, self.pods, &claims, self.options)?
        } else {
            self.cluster
                .place_gang_mut(self.group, self.pods, self.claims, self.options)?
        };
        let fits = matches!(outcome, GangOutcome::Placed(_));
        self.seen.insert(key, fits);
        Ok(fits)
    }

    /// Whether the unit fits now, unless counting says it cannot or the trial budget
    /// `limit` is spent.
    fn try_fit(&mut self, limit: usize) -> Result<bool, SchedulerError> {
        Ok(self.enough() && self.trials < limit && self.fits()?)
    }

    /// Evicts the first `k` victims of `order` and restores the rest of its first `at`.
    fn resize(&mut self, order: &[usize], at: &mut usize, k: usize) {
        while *at < k {
            self.set(order[*at], true);
            *at += 1;
        }
        while *at > k {
            *at -= 1;
            self.set(order[*at], false);
        }
    }

    /// One candidate: the victims of `order` are removed one by one until the unit
    /// fits (the shortest such prefix: doubling, then bisecting), then reprieved most
    /// important first while it still fits. Returns the victims left evicted (and
    /// leaves them evicted), or `None` when evicting all of `order` does not help or
    /// the trial budget `limit` runs out before anything fits.
    fn evaluate(
        &mut self,
        order: &[usize],
        limit: usize,
    ) -> Result<Option<Vec<usize>>, SchedulerError> {
        self.move_to(&[]);
        let n = order.len();
        if n == 0 {
            return Ok(None);
        }
        // The shortest prefix that could do by count; the one before cannot.
        let mut at = 0;
        loop {
            self.set(order[at], true);
            at += 1;
            if at == n || self.enough() {
                break;
            }
        }
        let mut lo = at - 1;
        let mut step = 1;
        let mut hi = loop {
            if !self.enough() {
                return Ok(None);
            }
            if self.trials >= limit {
                return Ok(None);
            }
            if self.fits()? {
                break at;
            }
            if at == n {
                return Ok(None);
            }
            lo = at;
            let next = (at + step).min(n);
            step *= 2;
            self.resize(order, &mut at, next);
        };
        // Bisect: prefix `lo` does not fit, prefix `hi` does.
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            self.resize(order, &mut at, mid);
            if self.trials >= limit {
                break;
            }
            if self.try_fit(limit)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        self.resize(order, &mut at, hi);
        // Reprieve, most important first (victims are indexed least important first).
        let mut removed: Vec<usize> = order[..hi].to_vec();
        removed.sort_unstable_by(|a, b| b.cmp(a));
        for v in removed {
            // Kept without a trial when the devices it would take back leave too few
            // free by count.
            if self.need > 0
                && free_usable(self.cluster).saturating_sub(self.sim.retaken(v)) < self.need
            {
                continue;
            }
            self.set(v, false);
            if !self.try_fit(limit)? {
                self.set(v, true);
            }
        }
        Ok(Some(self.current()))
    }

    /// The cheapest set of victims found (see the module docs), or `None` when evicting
    /// them all does not let the unit fit.
    fn choose(
        &mut self,
        victims: &[Victim],
        facts: &[Facts<'_>],
        required: usize,
    ) -> Result<Option<Vec<usize>>, SchedulerError> {
        let all: Vec<usize> = (0..victims.len()).collect();
        let Some(mut best) = self.evaluate(&all, usize::MAX)? else {
            return Ok(None);
        };
        let mut best_cost = cost(victims, facts, &best, self.wap);
        if victims.len() <= EXACT_VICTIMS {
            if let Some(set) = self.exhaustive(victims, facts, &best_cost)? {
                best = set;
            }
            return Ok(Some(best));
        }
        self.move_to(&[]);
        let missing = self.need.saturating_sub(free_usable(self.cluster));
        // Criterion 4 at its bound decides only when criterion 3 cannot improve.
        if !best_cost.group_at_highest
            && best_cost.sum <= sum_bound(victims, facts, best_cost.highest, missing)
        {
            return Ok(Some(best));
        }
        let limit = self.trials.saturating_add(CANDIDATE_TRIALS);
        let mut tried: Vec<Vec<usize>> = vec![all];
        for order in self.candidate_orders(victims, facts, required) {
            if tried.len() > MAX_CANDIDATES || self.trials >= limit {
                break;
            }
            if tried.contains(&order) {
                continue;
            }
            if let Some(set) = self.evaluate(&order, limit)? {
                let c = cost(victims, facts, &set, self.wap);
                if c < best_cost {
                    best = set;
                    best_cost = c;
                }
            }
            tried.push(order);
        }
        Ok(Some(best))
    }

    /// Every set of victims cheaper than `bound` and of its highest priority, in rank
    /// order: the first that fits (within [`EXACT_SETS`] sets and [`EXACT_TRIALS`]
    /// placements).
    fn exhaustive(
        &mut self,
        victims: &[Victim],
        facts: &[Facts<'_>],
        bound: &Cost<'_>,
    ) -> Result<Option<Vec<usize>>, SchedulerError> {
        let n = victims.len();
        self.move_to(&[]);
        let free_now = free_usable(self.cluster);
        let mut sets: Vec<(Cost<'_>, Vec<usize>)> = Vec::new();
        for mask in 1u32..(1 << n) {
            let set: Vec<usize> = (0..n).filter(|&v| mask & (1 << v) != 0).collect();
            let most = set
                .iter()
                .fold(free_now, |a, &v| a.saturating_add(facts[v].most));
            if most < self.need {
                continue;
            }
            let c = cost(victims, facts, &set, self.wap);
            // Without a victim of the bound's priority nothing fits: the first candidate
            // needed it.
            if c.highest == bound.highest && c < *bound {
                sets.push((c, set));
            }
        }
        sets.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let limit = self.trials.saturating_add(EXACT_TRIALS);
        for (_, set) in sets.into_iter().take(EXACT_SETS) {
            if self.trials >= limit {
                break;
            }
            self.move_to(&set);
            if self.try_fit(limit)? {
                return Ok(Some(set));
            }
        }
        Ok(None)
    }

    /// The candidate placements beyond the first, as removal orders (see the module
    /// docs), most promising first.
    fn candidate_orders(
        &self,
        victims: &[Victim],
        facts: &[Facts<'_>],
        required: usize,
    ) -> Vec<Vec<usize>> {
        let c: &Cluster = self.cluster;
        let bound = self.sim.s.bound;
        // Per victim, its devices by node.
        let on_nodes: Vec<Vec<(&str, usize)>> = victims
            .iter()
            .map(|v| {
                let mut nodes: Vec<(&str, usize)> = v
                    .pods
                    .iter()
                    .filter_map(|p| bound.get(p))
                    .map(|b| (b.node.as_str(), held_devices(b)))
                    .collect();
                nodes.sort_unstable();
                nodes.dedup_by(|a, b| {
                    let same = a.0 == b.0;
                    if same {
                        b.1 += a.1;
                    }
                    same
                });
                nodes
            })
            .collect();
        let free_on = |node: &str| {
            c.node_id(node)
                .and_then(|id| c.node_counts(id))
                .map_or(0, |n| n.free as usize)
        };
        // Victims taken node by node, the nodes cheapest to clear first: lowest highest
        // priority, then fewest victim pods per device the node would have free.
        let by_nodes = |members: &[usize]| -> Vec<(&str, Vec<usize>)> {
            let mut nodes: BTreeMap<&str, NodeVictims> = BTreeMap::new();
            for &v in members {
                for &(node, devices) in &on_nodes[v] {
                    let e = nodes.entry(node).or_insert_with(|| NodeVictims {
                        highest: i32::MIN,
                        pods: 0,
                        free: free_on(node),
                        victims: Vec::new(),
                    });
                    e.highest = e.highest.max(victims[v].priority);
                    e.pods += victims[v].pods.len();
                    e.free += devices;
                    e.victims.push(v);
                }
            }
            let mut nodes: Vec<(&str, NodeVictims)> = nodes.into_iter().collect();
            nodes.sort_by(|(na, a), (nb, b)| {
                a.highest
                    .cmp(&b.highest)
                    .then_with(|| {
                        (a.pods as u128 * b.free as u128).cmp(&(b.pods as u128 * a.free as u128))
                    })
                    .then_with(|| na.cmp(nb))
            });
            nodes.into_iter().map(|(n, e)| (n, e.victims)).collect()
        };
        let flatten = |nodes: &[(&str, Vec<usize>)]| -> Vec<usize> {
            let mut seen = vec![false; victims.len()];
            let mut order = Vec::new();
            for (_, vs) in nodes {
                for &v in vs {
                    if !seen[v] {
                        seen[v] = true;
                        order.push(v);
                    }
                }
            }
            order
        };
        let all: Vec<usize> = (0..victims.len()).collect();
        let nodes = by_nodes(&all);
        let mut orders = vec![flatten(&nodes)];
        // Topology domains of the unit's constraint, cheapest by count first.
        if let Some(key) = self.group.and_then(|g| g.topology.first()).map(|t| &t.key) {
            let domain_of = |node: &str| c.node(node).and_then(|n| n.labels.get(key));
            let mut domains: BTreeMap<&str, (usize, Vec<usize>)> = BTreeMap::new();
            for n in c.nodes() {
                if let Some(d) = n.labels.get(key) {
                    domains.entry(d.as_str()).or_default().0 += free_on(&n.name);
                }
            }
            for (v, nodes) in on_nodes.iter().enumerate() {
                let mut ds: Vec<&str> = nodes
                    .iter()
                    .filter_map(|(n, _)| domain_of(n).map(String::as_str))
                    .collect();
                ds.sort_unstable();
                ds.dedup();
                for d in ds {
                    if let Some(e) = domains.get_mut(d) {
                        e.1.push(v);
                    }
                }
            }
            let mut ranked: Vec<(Cost<'_>, Vec<usize>)> = Vec::new();
            for (d, (free, members)) in domains {
                // The shortest prefix that could do by count in the domain.
                let mut have = free;
                let mut prefix = Vec::new();
                for &v in &members {
                    if have >= self.need && !prefix.is_empty() {
                        break;
                    }
                    have += on_nodes[v]
                        .iter()
                        .filter(|(n, _)| domain_of(n).is_some_and(|x| x == d))
                        .map(|(_, k)| k)
                        .sum::<usize>();
                    prefix.push(v);
                }
                if have >= self.need && !members.is_empty() {
                    ranked.push((cost(victims, facts, &prefix, self.wap), members));
                }
            }
            ranked.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, members) in ranked.into_iter().take(MAX_DOMAINS) {
                orders.push(flatten(&by_nodes(&members)));
                orders.push(members);
            }
        }
        // A unit that needs one pod: single nodes (upstream's per-node candidates).
        if required == 1 {
            for (_, vs) in nodes.iter().take(MAX_NODES) {
                orders.push(vs.clone());
            }
        }
        orders
    }
}

/// The victims on one node, for ordering nodes by how cheap they are to clear.
struct NodeVictims {
    /// The highest priority among them.
    highest: i32,
    /// Their pods (on any node).
    pods: usize,
    /// The node's free devices once they are evicted.
    free: usize,
    /// Them, least important first.
    victims: Vec<usize>,
}

/// What the victim search and the simulator read of the scheduler.
#[derive(Clone, Copy)]
struct SimView<'a> {
    bound: &'a BTreeMap<String, crate::PodBinding>,
    pods: &'a BTreeMap<String, crate::Pod>,
    members: &'a BTreeMap<String, BTreeSet<String>>,
    groups: &'a BTreeMap<String, PodGroup>,
    group_claims: &'a BTreeMap<String, Vec<crate::model::decision::ClaimAllocation>>,
    index: &'a super::BoundIndex,
}

/// Evictions simulated on the cluster, exactly as `unbind` and
/// `release_group_claims_if_idle` would do them: a pod's node reservation goes with it;
/// a claim a binding holds goes when its last bound user goes, a PodGroup's claims when
/// its last bound member goes (and they come back with their first). Evicting and
/// restoring are inverses, so victims can be tried and reprieved in any order. Claims
/// and groups are looked up the first time a victim touches them.
struct Sim<'a> {
    s: SimView<'a>,
    victims: &'a [Victim],
    /// Claims touched: the allocation a binding holds and how many of its users are
    /// still bound in the simulation.
    claims: BTreeMap<&'a str, (&'a crate::model::decision::ClaimAllocation, usize)>,
    /// PodGroups with claims touched: how many members are still bound.
    groups: BTreeMap<String, usize>,
    /// The node reservations of the pods evicted now, restored as they were (fit or
    /// not: a node's allocatable may have shrunk under its running pods).
    reserved: BTreeMap<&'a str, BTreeMap<String, crate::Quantity>>,
}

impl<'a> Sim<'a> {
    /// The claims a bound pod holds through bindings, each with its entry in `claims`
    /// (created on first use). Claims no binding holds (a PodGroup's, or allocated
    /// outside the scheduler) are not `unbind`'s to release and are skipped.
    fn touch_claims(&mut self, pod: &str) -> Vec<&'a str> {
        let s = &self.s;
        let mut out = Vec::new();
        for c in s.index.pod_claims.get(pod).into_iter().flatten() {
            let users = s.index.claim_users.get(c);
            let c: &'a str = c;
            if !self.claims.contains_key(c) {
                let held = users
                    .into_iter()
                    .flatten()
                    .find_map(|u| s.bound.get(&**u)?.claims.iter().find(|a| a.claim == c));
                let Some(held) = held else { continue };
                let n = users.map_or(0, BTreeSet::len);
                self.claims.insert(c, (held, n));
            }
            out.push(c);
        }
        out
    }

    /// The pod's PodGroup, if it holds claims, with its entry in `groups` (created on
    /// first use).
    fn touch_group(&mut self, pod: &str) -> Option<String> {
        let p = self.s.pods.get(pod)?;
        let g = super::key(&p.namespace, p.scheduling_group.as_deref()?);
        if !self.s.group_claims.contains_key(&g) {
            return None;
        }
        if !self.groups.contains_key(&g) {
            let n = super::bound_members(self.s.members, self.s.bound, &g).count();
            self.groups.insert(g.clone(), n);
        }
        Some(g)
    }

    /// Whether a bound pod outside PodGroup `group` uses the group's claim `claim`:
    /// `release_group_claims` hands such a claim to that pod instead of releasing it,
    /// so the simulation keeps it held (conservatively, even when that pod is a victim
    /// too).
    fn kept_outside(&self, group: &str, claim: &str) -> bool {
        let s = &self.s;
        s.index
            .claim_users
            .get(claim)
            .into_iter()
            .flatten()
            .any(|u| {
                s.bound.contains_key(&**u)
                    && s.pods.get(&**u).is_none_or(|p| {
                        p.scheduling_group
                            .as_deref()
                            .is_none_or(|g| super::key(&p.namespace, g) != group)
                    })
            })
    }

    /// Whether the simulation has deallocated claim `claim` (by key): its last bound
    /// user is evicted, or it is a PodGroup's whose last bound member is, and no bound
    /// pod outside the group keeps it.
    fn released(&self, claim: &str) -> bool {
        if let Some((_, users)) = self.claims.get(claim) {
            return *users == 0;
        }
        self.groups.iter().any(|(g, &n)| {
            n == 0
                && self.s.group_claims[g].iter().any(|a| a.claim == claim)
                && !self.kept_outside(g, claim)
        })
    }

    fn evict(&mut self, v: usize, c: &mut crate::Cluster) {
        let victims = self.victims;
        for pod in &victims[v].pods {
            let Some(b) = self.s.bound.get(pod) else {
                continue;
            };
            if let Ok(r) = c.release_node_resources(&b.node, pod) {
                self.reserved.insert(pod.as_str(), r);
            }
            for claim in self.touch_claims(pod) {
                let (held, users) = self.claims.get_mut(claim).expect("touched");
                *users -= 1;
                if *users == 0 {
                    c.release_allocation(&held.claim, &held.result);
                }
            }
            if let Some(g) = self.touch_group(pod) {
                let left = self.groups.get_mut(&g).expect("touched");
                *left -= 1;
                if *left == 0 {
                    for a in &self.s.group_claims[&g] {
                        if !self.kept_outside(&g, &a.claim) {
                            c.release_allocation(&a.claim, &a.result);
                        }
                    }
                }
            }
        }
    }

    /// The devices restoring evicted victim `v` would allocate again: those of the
    /// claims and PodGroup claims its eviction released (admin access does not count).
    fn retaken(&self, v: usize) -> usize {
        let mut claims: Vec<&str> = Vec::new();
        let mut groups: Vec<&str> = Vec::new();
        for pod in &self.victims[v].pods {
            for c in self
                .s
                .index
                .pod_claims
                .get(pod.as_str())
                .into_iter()
                .flatten()
            {
                if self.claims.get(&**c).is_some_and(|(_, users)| *users == 0) {
                    claims.push(c);
                }
            }
            if let Some(p) = self.s.pods.get(pod)
                && let Some(g) = p.scheduling_group.as_deref()
            {
                let g = self
                    .groups
                    .keys()
                    .find(|k| k.split_once('/') == Some((p.namespace.as_str(), g)));
                if let Some(g) = g
                    && self.groups[g] == 0
                {
                    groups.push(g);
                }
            }
        }
        claims.sort_unstable();
        claims.dedup();
        groups.sort_unstable();
        groups.dedup();
        let devices = |a: &crate::model::decision::ClaimAllocation| {
            a.result.devices.iter().filter(|d| !d.admin_access).count()
        };
        let own: usize = claims.iter().map(|c| devices(self.claims[c].0)).sum();
        let of_groups: usize = groups
            .iter()
            .flat_map(|g| {
                self.s
                    .group_claims
                    .get(*g)
                    .into_iter()
                    .flatten()
                    .filter(|a| !self.kept_outside(g, &a.claim))
            })
            .map(devices)
            .sum();
        own + of_groups
    }

    fn restore(&mut self, v: usize, c: &mut crate::Cluster) {
        for pod in self.victims[v].pods.iter().rev() {
            let Some(b) = self.s.bound.get(pod) else {
                continue;
            };
            if let Some(g) = self.touch_group(pod) {
                if self.groups[&g] == 0 {
                    for a in self.s.group_claims[&g]
                        .iter()
                        .filter(|a| !self.kept_outside(&g, &a.claim))
                    {
                        let recorded = c.restore_allocation(&a.claim, &a.result);
                        debug_assert!(recorded.is_ok(), "a released allocation fits again");
                    }
                }
                *self.groups.get_mut(&g).expect("touched") += 1;
            }
            for claim in self.touch_claims(pod) {
                let (held, users) = self.claims.get_mut(claim).expect("touched");
                if *users == 0 {
                    let recorded = c.restore_allocation(&held.claim, &held.result);
                    debug_assert!(recorded.is_ok(), "a released allocation fits again");
                }
                *users += 1;
            }
            if let Some(requests) = self.reserved.remove(pod.as_str()) {
                let recorded = c.restore_node_reservation(&b.node, pod, requests);
                debug_assert!(recorded, "a released reservation is restored");
            }
        }
    }
}
