//! The verdict on a pending unit (see [`Verdict`]).

use core::fmt;

use super::{Scheduler, SchedulerError, Unit, UnitResult, Victim, WhatItTakes, key};
use crate::alloc_prelude::*;
use crate::gang::explain::{BudgetExhaustion, Explanation, Fact, GangStatus, Resolution};

/// Most holders a [`Help::Waiting`] names in its text (the data lists them all).
const SHOWN_HOLDERS: usize = 5;

/// One thing that would get a pending unit placed (see [`Verdict`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum Help {
    /// Nothing blocks it: the next cycle places it.
    NextCycle {
        /// Pods the next cycle binds.
        pods: usize,
    },
    /// The next cycle preempts these victims (lower-priority units) and nominates it.
    Preemption {
        /// The victims, as the cycle chooses them.
        victims: Vec<Victim>,
    },
    /// Fewer members exist than `minCount`: it waits for more pods.
    MorePods {
        /// Members that exist.
        present: usize,
        /// `minCount`.
        min_count: u32,
    },
    /// Waiting helps: removing these units lets it be placed.
    Waiting {
        /// The units holding what it needs (other units' running pods on the nodes
        /// that block it), or taking it first in the next cycle.
        holders: Vec<Unit>,
        /// Whether the holders are units ahead of it in the next cycle (it fits now,
        /// but they are placed first), rather than running ones.
        ahead: bool,
        /// Its `preemptionPolicy` is `Never`, and preempting these would make room.
        never_preempts: bool,
    },
    /// More capacity helps: at least `devices` more free devices in `domain` (`None`:
    /// the whole cluster, without a topology constraint), by count.
    Capacity {
        /// The domain (the topology key's value).
        domain: Option<String>,
        /// Free devices it lacks there.
        devices: u64,
    },
    /// Only a change to the workload or to the cluster helps: these facts.
    Change {
        /// The unresolvable facts of the blocking set.
        facts: Vec<Fact>,
    },
    /// The cycle fails it: the errors (its members disagree, or an input is invalid).
    Invalid {
        /// The errors, as text.
        errors: Vec<String>,
    },
    /// Undecided: a step budget ran out before its placement was decided.
    Undecided {
        /// The budget, when known.
        budget: Option<BudgetExhaustion>,
    },
}

/// What would get a unit placed ([`Scheduler::verdict`]).
///
/// The verdict on a pending unit: what would get it placed, in one statement that
/// agrees with what the next cycle does and with [`Scheduler::what_it_takes`].
///
/// The explanation ([`Scheduler::explain`]) says why the unit does not fit *alone*,
/// against the current state. That is not always what the scheduler will do: units of
/// higher priority are taken first in the next cycle (and may take the room it fits
/// in now), and a unit that does not fit may preempt. So the verdict first runs the
/// next cycle on a copy of the scheduler (a copy is cheap: the heavy parts are shared)
/// and reads the unit's result there; only for a unit that the next cycle leaves
/// pending does it say what would help, each claim checked on a copy:
///
/// * [`Help::NextCycle`]: the next cycle places it; nothing blocks it now.
/// * [`Help::Preemption`]: the next cycle preempts these victims and nominates it (the
///   same set [`Scheduler::cycle`] evicts).
/// * [`Help::MorePods`]: fewer members exist than `minCount`.
/// * [`Help::Waiting`]: the capacity it needs is held by these units (none of which the
///   scheduler will preempt for it), or taken first by the units ahead of it in the
///   next cycle: removing them lets it be placed (checked on a copy).
/// * [`Help::Capacity`]: more free devices in a domain (by count: the fewest missing
///   devices of the closest domain, as `what_it_takes` reports).
/// * [`Help::Change`]: only a change to the workload or the cluster helps: the
///   unresolvable facts of the explanation's blocking set.
/// * [`Help::Invalid`]: the cycle fails the unit (its members disagree, or an input
///   is invalid): the error, which no capacity fixes.
/// * [`Help::Undecided`]: a step budget ran out: which, its value, how to raise it.
///
/// Several may hold at once (waiting and more capacity, say); the verdict lists exactly
/// those that hold, in that order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Verdict {
    /// The unit.
    pub unit: Unit,
    /// Whether it is pending now (some of its pods wait to be placed).
    pub pending: bool,
    /// What helps, in the order of [`Help`]'s variants; empty when nothing is pending,
    /// or when nothing found helps.
    pub helps: Vec<Help>,
}

impl Scheduler {
    /// The verdict on `unit` (see [`Verdict`]): what the next cycle does with it,
    /// and, when that leaves it pending, what would help. Changes nothing.
    pub fn verdict(&self, unit: &Unit) -> Result<Verdict, SchedulerError> {
        self.verdict_from(unit, None)
    }

    /// [`verdict`](Self::verdict) reusing the [`explain`](Self::explain) and
    /// [`what_it_takes`](Self::what_it_takes) of `unit` already computed against this
    /// state (as `gangpack explain` prints all three), instead of computing them again.
    pub fn verdict_with(
        &self,
        unit: &Unit,
        explanation: &Explanation,
        what: &WhatItTakes,
    ) -> Result<Verdict, SchedulerError> {
        self.verdict_from(unit, Some((explanation, what)))
    }

    /// The verdict, with the explanation and what-it-takes given or computed when
    /// needed.
    fn verdict_from(
        &self,
        unit: &Unit,
        known: Option<(&Explanation, &WhatItTakes)>,
    ) -> Result<Verdict, SchedulerError> {
        self.check_unit(unit)?;
        let pending = self.pending_units().contains(unit);
        let mut out = Verdict {
            unit: unit.clone(),
            pending,
            helps: Vec::new(),
        };
        if !pending {
            return Ok(out);
        }
        // The next cycle, on a copy.
        let mut next = self.clone();
        let report = next.cycle();
        let at = report.units.iter().position(|(u, _)| u == unit);
        match at.map(|i| &report.units[i].1) {
            Some(UnitResult::Scheduled(d)) => {
                out.helps.push(Help::NextCycle {
                    pods: d.bindings.len(),
                });
                return Ok(out);
            }
            Some(UnitResult::Preempted(p)) => {
                out.helps.push(Help::Preemption {
                    victims: p.victims.clone(),
                });
                return Ok(out);
            }
            Some(UnitResult::Invalid(errs)) => {
                out.helps.push(Help::Invalid {
                    errors: errs.iter().map(ToString::to_string).collect(),
                });
                return Ok(out);
            }
            Some(UnitResult::Failed(e)) => {
                out.helps.push(Help::Invalid {
                    errors: vec![e.to_string()],
                });
                return Ok(out);
            }
            Some(UnitResult::Pending(_)) | None => {}
        }
        let computed;
        let ex = if let Some((ex, _)) = known {
            ex
        } else {
            computed = self.explain(unit)?;
            &computed
        };
        match ex.status {
            GangStatus::Wait => {
                if let Some(Fact::NotEnoughPods { present, min_count }) = ex.facts.first() {
                    out.helps.push(Help::MorePods {
                        present: *present,
                        min_count: *min_count,
                    });
                }
                return Ok(out);
            }
            GangStatus::Undecided => {
                out.helps.push(Help::Undecided { budget: ex.budget });
                return Ok(out);
            }
            GangStatus::Scheduled => {
                // It fits alone now, but the units before it in the next cycle take
                // the room: it waits for them.
                let ahead: Vec<Unit> = report
                    .units
                    .iter()
                    .take(at.unwrap_or(report.units.len()))
                    .filter(|(_, r)| {
                        matches!(r, UnitResult::Scheduled(_) | UnitResult::Preempted(_))
                    })
                    .map(|(u, _)| u.clone())
                    .collect();
                out.helps.push(Help::Waiting {
                    holders: ahead,
                    ahead: true,
                    never_preempts: false,
                });
                return Ok(out);
            }
            GangStatus::Unschedulable | GangStatus::UnschedulableAndUnresolvable => {}
        }
        let computed_what;
        let what = if let Some((_, what)) = known {
            what
        } else {
            computed_what = self.what_it_takes(unit)?;
            &computed_what
        };
        // Waiting: the other units running where its blocking facts are, if removing
        // them lets it fit. (What-it-takes' preemption is computed whatever the policy.)
        let holders = self.holders_blocking(unit, ex);
        if !holders.is_empty() && self.fits_without(unit, &holders)? {
            out.helps.push(Help::Waiting {
                holders,
                ahead: false,
                never_preempts: !what.may_preempt && what.preemption.is_some(),
            });
        }
        // More capacity of the kind it can use: only when nothing unresolvable blocks
        // it (more of the hardware it cannot use would not help).
        if ex.status == GangStatus::Unschedulable
            && what.unresolvable.is_empty()
            && let Some(d) = what.domains.first()
        {
            let devices = d.missing_devices();
            if devices > 0 {
                out.helps.push(Help::Capacity {
                    domain: d.domain.clone(),
                    devices,
                });
            }
        }
        if ex.status == GangStatus::UnschedulableAndUnresolvable {
            let facts: Vec<Fact> = ex
                .blocking
                .iter()
                .map(|&b| ex.facts[b].clone())
                .filter(|f| f.resolution() == Resolution::Unresolvable)
                .collect();
            if !facts.is_empty() {
                out.helps.push(Help::Change { facts });
            }
        }
        Ok(out)
    }

    /// The other units with pods bound on the nodes of the explanation's resolvable
    /// blocking facts (capacity held there), sorted.
    fn holders_blocking(&self, unit: &Unit, ex: &Explanation) -> Vec<Unit> {
        let nodes: BTreeSet<&str> = ex
            .blocking
            .iter()
            .map(|&b| &ex.facts[b])
            .filter(|f| {
                matches!(
                    f,
                    Fact::DevicesInUse { .. }
                        | Fact::ResourceInUse { .. }
                        | Fact::CountersInUse { .. }
                )
            })
            .flat_map(|f| f.nodes().iter().map(String::as_str))
            .collect();
        let mut out: BTreeSet<Unit> = BTreeSet::new();
        for node in nodes {
            for pod in self.index.node_pods.get(node).into_iter().flatten() {
                let Some(p) = self.pods.get(&**pod) else {
                    continue;
                };
                let holder = match self.group_of(p) {
                    Some(g) => Unit::Group(g),
                    None => Unit::Pod(key(&p.namespace, &p.name)),
                };
                if &holder != unit {
                    out.insert(holder);
                }
            }
        }
        out.into_iter().collect()
    }

    /// Whether `unit` would fit once every bound pod of `holders` is gone (on a copy).
    fn fits_without(&self, unit: &Unit, holders: &[Unit]) -> Result<bool, SchedulerError> {
        let mut copy = self.clone();
        for h in holders {
            let pods: Vec<String> = match h {
                Unit::Pod(p) => vec![p.clone()],
                Unit::Group(g) => copy.members.get(g).into_iter().flatten().cloned().collect(),
            };
            for p in pods {
                if copy.pods.get(&p).is_some_and(|p| p.node_name.is_some()) {
                    copy.remove_pod(&p)?;
                }
            }
        }
        let (group, pods, claims) = copy.inputs(unit);
        Ok(matches!(
            copy.cluster
                .place_gang(group.as_ref(), &pods, &claims, &copy.options)?,
            crate::GangOutcome::Placed(_)
        ))
    }
}

impl fmt::Display for Help {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Help::NextCycle { pods } => write!(
                f,
                "the next cycle places it ({pods} pod{})",
                if *pods == 1 { "" } else { "s" }
            ),
            Help::Preemption { victims } => {
                let names: Vec<String> = victims.iter().map(|v| v.unit.to_string()).collect();
                write!(
                    f,
                    "the next cycle preempts {} to place it",
                    names.join(", ")
                )
            }
            Help::MorePods { present, min_count } => write!(
                f,
                "waiting for more pods: {present} exist, minCount is {min_count}"
            ),
            Help::Waiting {
                holders,
                ahead,
                never_preempts,
            } => {
                let mut names: Vec<String> = holders
                    .iter()
                    .take(SHOWN_HOLDERS)
                    .map(ToString::to_string)
                    .collect();
                if holders.len() > SHOWN_HOLDERS {
                    names.push(format!("+{} more", holders.len() - SHOWN_HOLDERS));
                }
                if *ahead {
                    write!(
                        f,
                        "waiting helps: it fits now, but the next cycle places {} first",
                        names.join(", ")
                    )
                } else {
                    write!(
                        f,
                        "waiting helps: the room it needs is held by {}",
                        names.join(", ")
                    )?;
                    if *never_preempts {
                        f.write_str(" (its preemptionPolicy is Never: it will not preempt them)")?;
                    }
                    Ok(())
                }
            }
            Help::Capacity { domain, devices } => write!(
                f,
                "more capacity helps: at least {devices} more free device{} in {}",
                if *devices == 1 { "" } else { "s" },
                domain
                    .as_deref()
                    .map_or_else(|| String::from("the cluster"), |d| format!("domain {d}"))
            ),
            Help::Change { facts } => {
                let facts: Vec<String> = facts.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "the request or the cluster must change: {}",
                    facts.join("; ")
                )
            }
            Help::Invalid { errors } => write!(f, "the cycle fails it: {}", errors.join("; ")),
            Help::Undecided { budget } => match budget {
                Some(b) => write!(f, "undecided: {b}"),
                None => f.write_str("undecided: a step budget ran out"),
            },
        }
    }
}

impl fmt::Display for Verdict {
    /// One line: `PodGroup ns/x: pending; waiting helps: ...; more capacity helps: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.pending {
            return write!(f, "{}: nothing pending", self.unit);
        }
        write!(f, "{}: pending", self.unit)?;
        if self.helps.is_empty() {
            return f.write_str("; nothing found that would help");
        }
        for h in &self.helps {
            write!(f, "; {h}")?;
        }
        Ok(())
    }
}
