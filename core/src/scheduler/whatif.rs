//! What-if questions that never change the live state: "what would it take to place
//! this unit?" — the least preemption that would make room, and how many pods (of which
//! shape, needing how many devices) the free capacity lacks in the best domain.
//!
//! Other what-ifs are a clone away: a [`Scheduler`] clone shares the cluster's heavy
//! parts (slices, node objects, the interner, the attribute index) copy-on-write, so
//! "what happens if this GPU fails?" is `clone()` then
//! [`taint_device`](Scheduler::taint_device) (or [`dry_run_rule`](Scheduler::dry_run_rule)
//! without even a clone), and "would this gang fit now?" is
//! [`explain`](Scheduler::explain).

use core::fmt;

use super::equivalence::Equivalence;
use super::{PodEviction, Preemption, Scheduler, SchedulerError, Unit, UnitResult};
use crate::Time;
use crate::alloc_prelude::*;
use crate::gang::options::GangOutcome;
use crate::model::workload::PreemptionPolicy;

/// What it would take to place a pending unit now (see [`Scheduler::what_it_takes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
#[allow(clippy::struct_excessive_bools)] // independent facts a caller reads one by one
pub struct WhatItTakes {
    /// The unit asked about.
    pub unit: Unit,
    /// It fits as things are at its turn in the next cycle (after the units ahead of
    /// it): the next cycle places it, nothing else is needed.
    pub fits_now: bool,
    /// It waits for more members to exist (`minCount` not reached): no capacity helps.
    pub waiting_for_pods: bool,
    /// The least preemption of strictly lower-priority units that would make it fit
    /// at its turn (victims chosen as [`Scheduler::cycle`] chooses them: with
    /// [`may_preempt`](Self::may_preempt), exactly those the next cycle evicts for it),
    /// and the placement that would follow, if there is one. Computed whatever the
    /// unit's `preemptionPolicy`.
    pub preemption: Option<Preemption>,
    /// Its `preemptionPolicy` lets the scheduler preempt (`PreemptLowerPriority`).
    pub may_preempt: bool,
    /// Free capacity by domain (`None`: the whole cluster, without a topology
    /// constraint), the domains where the most of its pods fit by count first. Empty
    /// when it fits now or no node passes its filters at all.
    pub domains: Vec<DomainGap>,
    /// When neither preemption nor free capacity helps: the facts of the explanation's
    /// blocking set that only a change to the cluster or the workload removes (a
    /// request's selector that matches no device, a constraint no node can satisfy,
    /// devices too small, ...). Empty otherwise.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub unresolvable: Vec<crate::Fact>,
    /// Its placement ran out of a step budget before it was decided
    /// ([`GangOutcome::BudgetExhausted`]): whether it fits now is unknown, so pods that
    /// fit by count may fit together too (the explanation names the budget).
    #[cfg_attr(feature = "serde", serde(default))]
    pub undecided: bool,
}

/// How far a domain's free capacity is from hosting a unit, by count (an optimistic
/// bound: pods that fit by count may still not fit together).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DomainGap {
    /// The domain's value of the topology key; `None` without a key.
    pub domain: Option<String>,
    /// Pending pods that must be placed together.
    pub required: usize,
    /// Of those, how many the domain's free capacity can host by count.
    pub fit: usize,
    /// The pods that do not fit, by shape.
    pub missing: Vec<ShapeGap>,
}

impl DomainGap {
    /// Free devices the domain lacks: the missing pods' devices (at least).
    pub fn missing_devices(&self) -> u64 {
        self.missing
            .iter()
            .map(|m| m.pods as u64 * m.devices_per_pod)
            .sum()
    }
}

/// Pods of one shape (interchangeable pods) that do not fit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ShapeGap {
    /// The shape's first pod, `namespace/name`.
    pub example: String,
    /// How many of its pods do not fit.
    pub pods: usize,
    /// Devices each of them needs (the least its claims can take).
    pub devices_per_pod: u64,
}

impl Scheduler {
    /// What it would take to place `unit` in the next cycle, without changing
    /// anything: whether it fits as is, the least preemption that would make room
    /// (simulated on a copy of the scheduler, exactly as a cycle would preempt), and
    /// per topology domain how many of its pods the free capacity cannot host and how
    /// many devices they need.
    ///
    /// All of it is taken at the unit's turn: on a copy where the units ahead of it in
    /// the next cycle (higher priority, or earlier) have been scheduled first, as
    /// [`cycle`](Self::cycle) would. So a unit whose room those units take does not
    /// "fit now", and its preemption is the one the cycle carries out (the same as
    /// [`verdict`](Self::verdict) names). A cost: the units ahead are scheduled on the
    /// copy.
    pub fn what_it_takes(&self, unit: &Unit) -> Result<WhatItTakes, SchedulerError> {
        self.check_unit(unit)?;
        if self.pending_units().first().is_some_and(|u| u != unit)
            && self.pending_units().contains(unit)
        {
            return self.before_turn_of(unit).what_it_takes_at_turn(unit);
        }
        self.what_it_takes_at_turn(unit)
    }

    /// The scheduler as the next cycle leaves it just before `unit`'s turn: every
    /// pending unit ahead of it scheduled (placed, preempting, or left pending).
    pub(super) fn before_turn_of(&self, unit: &Unit) -> Scheduler {
        let mut s = self.clone();
        let mut same = Equivalence::new(&s.options.policy);
        for u in self.pending_units() {
            if &u == unit {
                break;
            }
            let _ = s.schedule_unit_with(&u, &mut same);
        }
        s
    }

    /// [`what_it_takes`](Self::what_it_takes) against this state, `unit` first.
    fn what_it_takes_at_turn(&self, unit: &Unit) -> Result<WhatItTakes, SchedulerError> {
        let (group, pods, claims) = self.inputs(unit);
        let (_, policy, _) = self.unit_priority(unit);
        let mut out = WhatItTakes {
            unit: unit.clone(),
            fits_now: false,
            waiting_for_pods: false,
            preemption: None,
            may_preempt: policy == PreemptionPolicy::PreemptLowerPriority,
            domains: Vec::new(),
            unresolvable: Vec::new(),
            undecided: false,
        };
        match self
            .cluster
            .place_gang(group.as_ref(), &pods, &claims, &self.options)?
        {
            GangOutcome::Placed(_) => {
                out.fits_now = true;
                return Ok(out);
            }
            GangOutcome::WaitingForPods { .. } => {
                out.waiting_for_pods = true;
                return Ok(out);
            }
            GangOutcome::Unschedulable { .. } => {}
            GangOutcome::BudgetExhausted { .. } => out.undecided = true,
        }
        let mut gang = self
            .cluster
            .gang_counted(group.as_ref(), &pods, &claims, &self.options)?;
        // Counts that include the requests' own selectors, constraints, capacity and
        // counters (the index's counts do not).
        self.cluster.refine_caps(&mut gang);
        // The first `required` pending pods, by shape (without a gang, one pod is
        // progress).
        let required = if gang.required == 0 {
            gang.pods.len().min(1)
        } else {
            gang.required
        };
        let want = gang.wanted_by_shape(required);
        // A shape using a claim that new pods may not reserve (a device of it carries an
        // untolerated NoExecute taint) has no node at all: no capacity helps.
        let blocked = gang.shapes.iter().enumerate().any(|(s, shape)| {
            want[s] > 0 && gang.tainted.iter().any(|(c, _, _)| shape.uses.contains(c))
        });
        for d in 0..gang.domains.len() {
            if blocked {
                break;
            }
            let mut fit = 0;
            let mut missing = Vec::new();
            for (s, shape) in gang.shapes.iter().enumerate() {
                let caps = gang.caps_in(s, d as u32);
                let here = want[s].min(usize::try_from(caps).unwrap_or(usize::MAX));
                fit += here;
                if here < want[s] {
                    missing.push(ShapeGap {
                        example: format!("{}/{}", shape.rep.namespace, shape.rep.name),
                        pods: want[s] - here,
                        devices_per_pod: shape.min_devices,
                    });
                }
            }
            out.domains.push(DomainGap {
                domain: gang.key.map(|_| gang.domains[d].clone()),
                required,
                fit,
                missing,
            });
        }
        // The closest domains first; ties by fewer devices missing, then by name.
        out.domains.sort_by(|a, b| {
            b.fit
                .cmp(&a.fit)
                .then(a.missing_devices().cmp(&b.missing_devices()))
                .then_with(|| a.domain.cmp(&b.domain))
        });
        let mut copy = self.clone();
        out.preemption = copy.preempt(unit)?;
        if out.preemption.is_none() {
            // Free capacity may not be what is missing at all: the explanation says.
            let ex = self
                .cluster
                .explain_gang(group.as_ref(), &pods, &claims, &self.options)?;
            if ex.status == crate::GangStatus::UnschedulableAndUnresolvable {
                out.unresolvable = ex
                    .blocking
                    .iter()
                    .map(|&b| ex.facts[b].clone())
                    .filter(|f| f.resolution() == crate::Resolution::Unresolvable)
                    .collect();
            }
        }
        Ok(out)
    }
}

impl fmt::Display for WhatItTakes {
    /// A few lines: fits now / waits for pods, else the least preemption and the
    /// closest domains (at most three).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.fits_now {
            return write!(f, "{} fits now: nothing else is needed.", self.unit);
        }
        if self.waiting_for_pods {
            return write!(
                f,
                "{} waits for more pods to exist (minCount not reached): capacity does not help.",
                self.unit
            );
        }
        write!(f, "What it would take to place {}:", self.unit)?;
        if self.undecided {
            f.write_str(
                "\n  undecided: a step budget ran out before its placement was decided (see the explanation)",
            )?;
        }
        match &self.preemption {
            Some(p) => {
                let pods: usize = p.victims.iter().map(|v| v.pods.len()).sum();
                let devices: usize = p.victims.iter().map(|v| v.devices).sum();
                write!(
                    f,
                    "\n  preempt {} unit{} of lower priority ({pods} pod{}, {devices} device{}):",
                    p.victims.len(),
                    plural(p.victims.len()),
                    plural(pods),
                    plural(devices),
                )?;
                for v in &p.victims {
                    write!(
                        f,
                        "\n    {} (priority {}, {} pod{}, {} device{})",
                        v.unit,
                        v.priority,
                        v.pods.len(),
                        plural(v.pods.len()),
                        v.devices,
                        plural(v.devices)
                    )?;
                }
                if !self.may_preempt {
                    f.write_str(
                        "\n    (its preemptionPolicy is Never: the scheduler will not do this)",
                    )?;
                }
            }
            None => f.write_str("\n  preemption: evicting lower-priority units would not help")?,
        }
        if !self.unresolvable.is_empty() {
            // Neither freeing capacity nor preempting helps: name what does.
            f.write_str("\n  capacity: more free devices would not help; first, change:")?;
            for fact in &self.unresolvable {
                write!(f, "\n    {fact}")?;
            }
            return Ok(());
        }
        if self.domains.is_empty() {
            f.write_str("\n  capacity: no node passes its filters (see the explanation)")?;
        }
        for d in self.domains.iter().take(3) {
            let name = d
                .domain
                .as_deref()
                .map_or_else(|| String::from("the cluster"), |v| format!("domain {v}"));
            if d.missing.is_empty() {
                if self.undecided {
                    write!(
                        f,
                        "\n  {name}: {} fit by count; whether together is undecided",
                        if d.required == 1 {
                            String::from("the pod fits")
                        } else {
                            format!("all {} pods", d.required)
                        }
                    )?;
                } else if d.required == 1 {
                    write!(
                        f,
                        "\n  {name}: the pod fits each count alone, but not all at once (see the explanation)"
                    )?;
                } else {
                    write!(
                        f,
                        "\n  {name}: all {} pods fit by count, but not together (see the explanation)",
                        d.required
                    )?;
                }
                continue;
            }
            write!(
                f,
                "\n  {name}: {} of {} {}; at least {} more free device{} needed:",
                d.fit,
                d.required,
                if d.required == 1 {
                    "pod fits"
                } else {
                    "pods fit"
                },
                d.missing_devices(),
                plural(d.missing_devices())
            )?;
            for m in &d.missing {
                write!(
                    f,
                    "\n    {} pod{} like {} ({} device{} each)",
                    m.pods,
                    plural(m.pods),
                    m.example,
                    m.devices_per_pod,
                    plural(m.devices_per_pod)
                )?;
            }
        }
        if self.domains.len() > 3 {
            let more = self.domains.len() - 3;
            write!(f, "\n  ... {more} more domain{}", plural(more))?;
        }
        Ok(())
    }
}

/// `s` unless `n` is 1. Generic, so that a `u64` count is compared as it is: cast to
/// `usize` it was truncated on wasm32 (4294967297 devices printed as "device").
fn plural<N: Copy + PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) { "" } else { "s" }
}

/// The scheduled `NoExecute` evictions after which a pending unit would be placed
/// ([`Scheduler::placeable_after_evictions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct EvictionRelief {
    /// When: the time of the last eviction needed.
    pub at: Time,
    /// The evictions carried out by then, by time then pod (those that free the room,
    /// and any others due by then).
    pub evictions: Vec<PodEviction>,
    /// The unit would preempt lower-priority work then, rather than fit in free room.
    pub preempts: bool,
}

/// The most distinct eviction times [`Scheduler::placeable_after_evictions`] tries.
const MAX_RELIEF_TIMES: usize = 32;

impl Scheduler {
    /// Whether the `NoExecute` evictions already scheduled (not yet due) would make
    /// room for `unit`: on a copy of the scheduler, the clock is advanced to each
    /// scheduled eviction time in turn (at most 32 of them), carrying the evictions
    /// out, and a cycle is run; the first time after which the unit is placed is
    /// returned. `None` when no scheduled eviction helps (or none is scheduled), or
    /// the unit is not pending. Nothing changes here.
    pub fn placeable_after_evictions(&self, unit: &Unit) -> Option<EvictionRelief> {
        if !self.pending_units().contains(unit) {
            return None;
        }
        let scheduled = self.scheduled_evictions();
        let now = self.now();
        let mut times: Vec<Time> = scheduled
            .iter()
            .map(|e| e.at)
            .filter(|t| *t > now)
            .collect();
        times.sort_unstable();
        times.dedup();
        for &t in times.iter().take(MAX_RELIEF_TIMES) {
            let mut what_if = self.clone();
            let evictions = what_if.advance(t);
            if evictions.is_empty() {
                continue;
            }
            let report = what_if.cycle();
            let result = report.units.iter().find(|(u, _)| u == unit).map(|(_, r)| r);
            let preempts = match result {
                Some(UnitResult::Scheduled(_)) => false,
                Some(UnitResult::Preempted(_)) => true,
                _ => continue,
            };
            return Some(EvictionRelief {
                at: t,
                evictions,
                preempts,
            });
        }
        None
    }
}
