//! The reports of the scheduler as text: what a controller logs after a cycle, a
//! change or a clock step. One line per event, in the words of `gangpack plan`'s
//! table and `gangpack explain`.

use core::fmt;

use super::{CycleReport, EvictionReason, EvictionReport, PodEviction, UnitResult};
use crate::gang::options::GangOutcome;

impl fmt::Display for EvictionReason {
    /// `device taint key=value:NoExecute (claim ns/c)`, `node taint on node-1`,
    /// `member of ns/group`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvictionReason::DeviceTaint { claim, taint } => {
                write!(f, "device taint {taint} (claim {claim})")
            }
            EvictionReason::NodeTaint { node } => write!(f, "node taint on {node}"),
            EvictionReason::GroupMember { group } => write!(f, "member of {group}"),
        }
    }
}

impl fmt::Display for PodEviction {
    /// `ns/pod at 2026-11-05T08:00:00Z: <reason>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}: {}",
            self.pod,
            self.at.to_rfc3339(),
            self.reason
        )
    }
}

impl fmt::Display for EvictionReport {
    /// One line per eviction started or cancelled, then per group the schedule breaks;
    /// nothing when the schedule did not change.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut line = |f: &mut fmt::Formatter<'_>, args: fmt::Arguments<'_>| {
            if !first {
                f.write_str("\n")?;
            }
            first = false;
            f.write_fmt(args)
        };
        for e in &self.started {
            line(f, format_args!("eviction started: {e}"))?;
        }
        for e in &self.cancelled {
            line(f, format_args!("eviction cancelled: {e}"))?;
        }
        // The groups the schedule breaks, when it changed (they are the state of the
        // whole schedule, listed again by every report).
        if !self.started.is_empty() || !self.cancelled.is_empty() {
            for g in &self.broken_groups {
                line(f, format_args!("broken: {g}"))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for UnitResult {
    /// One line: `placed: ns/a -> node-1, ns/b -> node-2`, `preempted ...`, `pending:
    /// 3 of 4 pods fit`, `invalid: ...`, `failed: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitResult::Scheduled(d) => write!(f, "placed: {d}"),
            UnitResult::Preempted(p) => {
                let victims: alloc::vec::Vec<alloc::string::String> = p
                    .victims
                    .iter()
                    .map(|v| alloc::format!("{}", v.unit))
                    .collect();
                write!(
                    f,
                    "preempted {} to place it: {}",
                    victims.join(", "),
                    p.decision
                )
            }
            UnitResult::Pending(outcome) => match outcome {
                GangOutcome::Unschedulable { required, best } => {
                    write!(f, "pending: {best} of {required} pods fit")
                }
                GangOutcome::WaitingForPods { present, min_count } => write!(
                    f,
                    "pending: waiting for pods ({present} exist, minCount {min_count})"
                ),
                GangOutcome::BudgetExhausted { steps } => write!(
                    f,
                    "pending: undecided (the step budget ran out after {steps} steps)"
                ),
                GangOutcome::Placed(d) => write!(f, "placed: {d}"),
            },
            UnitResult::Invalid(errs) => {
                f.write_str("invalid: ")?;
                for (i, e) in errs.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            UnitResult::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

impl fmt::Display for CycleReport {
    /// One line per unit (`PodGroup ns/g: placed: ...`), then the change to the
    /// eviction schedule; `nothing pending` for an empty cycle.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.units.is_empty() {
            f.write_str("nothing pending")?;
        }
        for (i, (unit, result)) in self.units.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{unit}: {result}")?;
        }
        let evictions = alloc::format!("{}", self.evictions);
        if !evictions.is_empty() {
            write!(f, "\n{evictions}")?;
        }
        Ok(())
    }
}
