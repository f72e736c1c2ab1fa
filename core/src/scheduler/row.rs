//! One unit's result as every front end shows it: the row of `gangpack plan`'s table,
//! the unit of the wasm session's cycle view and of the playground. Built here once,
//! so that they cannot disagree on which pods a unit has, where they went, which
//! devices they got or why the unit is pending.

use core::fmt;

use super::{Preemption, Scheduler, Unit, UnitResult, Victim};
use crate::alloc_prelude::*;
use crate::gang::options::GangOutcome;
use crate::model::decision::{ClaimAllocation, PlacementDecision};
use crate::model::error::ValidationError;

/// What a cycle did with a unit, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum UnitOutcome {
    /// Placed: pods bound, claims allocated.
    Placed,
    /// Placed after preempting lower-priority victims (pods nominated, not bound yet).
    Preempted,
    /// Not placed; the reason says why.
    Pending,
    /// The group's members disagree (priority, scheduler, preemption policy).
    Invalid,
    /// The unit's inputs cannot be placed (a missing claim, ...).
    Failed,
}

impl UnitOutcome {
    /// `placed`, `preempted`, `pending`, `invalid` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            UnitOutcome::Placed => "placed",
            UnitOutcome::Preempted => "preempted",
            UnitOutcome::Pending => "pending",
            UnitOutcome::Invalid => "invalid",
            UnitOutcome::Failed => "failed",
        }
    }
}

impl fmt::Display for UnitOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pod of a unit and where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRow {
    /// The pod, `namespace/name`.
    pub pod: String,
    /// Its node (bound, or nominated for a preemptor); `None` while pending.
    pub node: Option<String>,
    /// The devices its own claims got, `driver/pool/device`, in allocation order.
    pub devices: Vec<String>,
}

/// One unit's result ([`Scheduler::unit_row`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitRow {
    /// The unit.
    pub unit: Unit,
    /// What happened.
    pub outcome: UnitOutcome,
    /// Its pods: the ones placed (or nominated), else the pending ones, by name.
    pub pods: Vec<PodRow>,
    /// Devices of the PodGroup's own claims (allocated for the group), in allocation
    /// order.
    pub group_devices: Vec<String>,
    /// The preemption victims.
    pub victims: Vec<Victim>,
    /// The one-line reason: the explanation's summary for a pending unit, the errors
    /// for an invalid or failed one, upstream's preemption message for a preemptor,
    /// empty when placed.
    pub reason: String,
    /// An invalid unit's errors, each naming its field.
    pub errors: Vec<ValidationError>,
}

impl UnitRow {
    /// `PodGroup` or `Pod`.
    pub fn kind(&self) -> &'static str {
        match self.unit {
            Unit::Group(_) => "PodGroup",
            Unit::Pod(_) => "Pod",
        }
    }

    /// The unit's `namespace/name`.
    pub fn name(&self) -> &str {
        match &self.unit {
            Unit::Group(n) | Unit::Pod(n) => n,
        }
    }

    /// Every device allocated (or planned, for a preemptor): the pods' in binding
    /// order, then the group's.
    pub fn devices(&self) -> impl Iterator<Item = &String> + '_ {
        self.pods
            .iter()
            .flat_map(|p| &p.devices)
            .chain(&self.group_devices)
    }
}

impl Scheduler {
    /// The row of `unit`'s `result` (from a [`CycleReport`](super::CycleReport) of
    /// this scheduler), explained against the current state (after the cycle): the
    /// one source of `gangpack plan`'s table, the wasm session's cycle view and the
    /// playground's unit list.
    pub fn unit_row(&self, unit: &Unit, result: &UnitResult) -> UnitRow {
        let mut row = UnitRow {
            unit: unit.clone(),
            outcome: UnitOutcome::Pending,
            pods: Vec::new(),
            group_devices: Vec::new(),
            victims: Vec::new(),
            reason: String::new(),
            errors: Vec::new(),
        };
        match result {
            UnitResult::Scheduled(d) => {
                row.outcome = UnitOutcome::Placed;
                fill(&mut row, d);
            }
            UnitResult::Preempted(p) => {
                row.outcome = UnitOutcome::Preempted;
                fill(&mut row, &p.decision);
                row.victims.clone_from(&p.victims);
                row.reason = preemption_message(unit, p);
            }
            UnitResult::Pending(outcome) => {
                row.pods = self.pending_rows(unit);
                row.reason = self.pending_reason(unit, outcome);
            }
            UnitResult::Invalid(errs) => {
                row.outcome = UnitOutcome::Invalid;
                row.pods = self.pending_rows(unit);
                row.reason = errs
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ");
                row.errors.clone_from(errs);
            }
            UnitResult::Failed(e) => {
                row.outcome = UnitOutcome::Failed;
                row.pods = self.pending_rows(unit);
                row.reason = e.to_string();
            }
        }
        row
    }

    /// The unit's pods that are not bound, by name.
    fn pending_rows(&self, unit: &Unit) -> Vec<PodRow> {
        let pending = |pod: String| PodRow {
            pod,
            node: None,
            devices: Vec::new(),
        };
        match unit {
            Unit::Pod(p) => vec![pending(p.clone())],
            Unit::Group(g) => {
                let (ns, name) = g.split_once('/').unwrap_or(("", g));
                let mut pods: Vec<String> = self
                    .pods()
                    .filter(|p| p.node_name.is_none())
                    .filter(|p| p.namespace == ns && p.scheduling_group.as_deref() == Some(name))
                    .map(|p| format!("{}/{}", p.namespace, p.name))
                    .collect();
                pods.sort();
                pods.into_iter().map(pending).collect()
            }
        }
    }

    /// The explanation's summary, or a line from the placement outcome when the unit
    /// cannot be explained.
    fn pending_reason(&self, unit: &Unit, outcome: &GangOutcome) -> String {
        if let Ok(x) = self.explain(unit) {
            return x.summary();
        }
        match outcome {
            GangOutcome::Unschedulable { required, best } => {
                format!("{unit}: {best} of {required} pods fit")
            }
            GangOutcome::WaitingForPods { present, min_count } => {
                format!("{unit}: waiting for pods: {present} of minCount {min_count} exist")
            }
            GangOutcome::BudgetExhausted { steps } => {
                format!("{unit}: search budget exhausted after {steps} steps")
            }
            GangOutcome::Placed(_) => format!("{unit}: placed"),
        }
    }
}

fn devices_of(claims: &[ClaimAllocation]) -> Vec<String> {
    claims
        .iter()
        .flat_map(|c| &c.result.devices)
        .map(|r| format!("{}/{}/{}", r.driver, r.pool, r.device))
        .collect()
}

fn fill(row: &mut UnitRow, d: &PlacementDecision) {
    row.pods = d
        .bindings
        .iter()
        .map(|b| PodRow {
            pod: b.pod.clone(),
            node: Some(b.node.clone()),
            devices: devices_of(&b.claims),
        })
        .collect();
    row.group_devices = devices_of(&d.group_claims);
}

/// Upstream's preemption status message (kube-scheduler `DefaultPreemption` for a pod,
/// `PodGroupPreemption` for a group, as prefixed by the framework).
pub fn preemption_message(unit: &Unit, p: &Preemption) -> String {
    let victims: usize = p.victims.iter().map(|v| v.pods.len()).sum();
    match unit {
        Unit::Pod(_) => {
            let node = p.decision.bindings.first().map_or("", |b| b.node.as_str());
            format!(
                "preemption: found a potential placement for pod on node {node}, preempting {victims} victims"
            )
        }
        Unit::Group(_) => format!(
            "pod group preemption: found a placement for podgroup, preempting {victims} victims"
        ),
    }
}
