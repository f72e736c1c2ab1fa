//! `gangpack explain`: why a PodGroup (or a pod without one) is not placed.
//!
//! The explanation is computed as `plan` computes its one-line reasons: one scheduling
//! cycle runs first (higher-priority work is placed, exactly as `plan` does), then the
//! unit is explained against the state after the cycle. The last line of a `pending`
//! row in `plan` is the summary of exactly this explanation.
//!
//! # Output
//!
//! - A unit that stays pending: the verdict (`gangpack::Verdict`'s `Display`: what
//!   would get it placed, agreeing with the next cycle), then the derivation tree
//!   (`gangpack::Explanation`'s `Display`): the status (`Unschedulable (capacity other
//!   workloads hold is in the way)`, `UnschedulableAndUnresolvable`, `Undecided` or
//!   `Wait`), how many pods must be placed together
//!   and how many fit, per pod shape the nodes that can host it and the numbered facts
//!   about the rest, and the minimal blocking set; then what it would take to place it
//!   (`gangpack::WhatItTakes`'s `Display`): the least preemption of lower-priority work
//!   that would make room (flagged when its `preemptionPolicy` is `Never`), and per
//!   topology domain, closest first, how many of its pods the free capacity cannot host
//!   and how many devices they need; and, when `NoExecute` evictions are scheduled
//!   for later (tolerations that run out), the first time after which the unit would be
//!   placed: `pending evictions free room: once the NoExecute evictions due by TIME are
//!   carried out (N pods: ...), it would be placed` (`Scheduler::placeable_after_evictions`).
//!   The evictions already due are carried out first, as `plan` does.
//! - A unit the cycle places: `PodGroup ns/name: Scheduled (N pods bound)` (or
//!   `PodGroup ns/name: preempting VICTIM, ... (N pods nominated)`), then
//!   `  pod -> node: devices` per pod.
//! - A unit the scheduler refuses: `PodGroup ns/name: invalid: <errors>` or
//!   `...: failed: <error>`.
//! - A unit with nothing pending: `PodGroup ns/name: nothing pending (N pods bound)`.
//!
//! Without a name, every unit not placed by the cycle is explained, in cycle order,
//! separated by blank lines (`nothing pending` when there is none).
//!
//! Exit status 0 whatever the unit's status (the command did what it was asked); 2 for
//! a name that does not exist.

use std::fmt::Write as _;

use gangpack::{CycleReport, PlacementDecision, Scheduler, Unit, UnitResult};
use gangpack_k8s::{Kind, Snapshot, output};

use crate::input::{self, Messages, namespaced};
use crate::plan::{bound_pods, devices_cell};
use crate::render::plural;
use crate::{EXIT_OK, Failure, Input, Options};

/// Runs `gangpack explain`.
pub(crate) fn run(
    global: &Options,
    input: &Input,
    group: Option<&str>,
    pod: Option<&str>,
    messages: &mut Messages,
    kept: &mut Option<Snapshot>,
) -> Result<crate::Outcome, Failure> {
    let mut snapshot = input::snapshot(global, input, messages)?;
    let outcome = explain_on(&mut snapshot, group, pod, global.namespace.as_deref());
    *kept = Some(snapshot);
    outcome
}

/// [`run`] on a loaded snapshot.
fn explain_on(
    snapshot: &mut Snapshot,
    group: Option<&str>,
    pod: Option<&str>,
    namespace: Option<&str>,
) -> Result<crate::Outcome, Failure> {
    // What is printed before the unit's explanation: the pod asked about, when its
    // PodGroup is the unit explained, or why it is held back.
    let mut preface = String::new();
    let unit = match (group, pod) {
        (Some(g), _) => {
            let key = namespaced(g, namespace)?;
            let (ns, name) = key.split_once('/').unwrap_or(("", &key));
            if let Some(w) = snapshot.waiting(Kind::PodGroup, ns, name) {
                return Ok(waiting_outcome(w));
            }
            Some(Unit::Group(key))
        }
        (None, Some(p)) => {
            let key = namespaced(p, namespace)?;
            let (ns, name) = key.split_once('/').unwrap_or(("", &key));
            if let Some(w) = snapshot.waiting(Kind::Pod, ns, name) {
                let group = w.group.as_ref().map(|g| format!("{ns}/{g}"));
                match group.filter(|g| snapshot.scheduler.group(g).is_some()) {
                    // Its group is scheduled without it: explain the group too.
                    Some(g) => {
                        let _ = writeln!(preface, "{}: pending: {}", w.unit(), w.reason());
                        let _ = writeln!(preface, "Its PodGroup {g}, without it:");
                        Some(Unit::Group(g))
                    }
                    None => return Ok(waiting_outcome(w)),
                }
            } else {
                let unit = pod_unit(&snapshot.scheduler, &key)?;
                if let Unit::Group(g) = &unit {
                    let _ = writeln!(preface, "Pod {key} is a member of PodGroup {g}:");
                }
                Some(unit)
            }
        }
        (None, None) => None,
    };
    let plan = output::plan(snapshot);
    crate::input::phase_end("plan");
    // A PodGroup not in the input that pending pods name: they wait for it, and `plan`
    // lists it with a row of its own.
    if let Some(Unit::Group(g)) = &unit
        && let Some(row) = held_rows(&plan).find(|r| r.kind == "PodGroup" && r.name == *g)
    {
        preface.push_str(&held_line(row));
        return Ok(crate::Outcome {
            stdout: preface,
            code: EXIT_OK,
        });
    }
    if let Some(u) = &unit {
        check_exists(&snapshot.scheduler, u)?;
    }
    let sched = &snapshot.scheduler;
    let stdout = match unit {
        Some(u) => {
            let mut out = preface;
            out.push_str(&explain_unit(sched, &plan.report, &u));
            held_back_members(&mut out, snapshot, &u);
            out
        }
        None => explain_all(snapshot, &plan),
    };
    // An error about a generated claim is told about its template.
    let stdout = output::on_templates(snapshot, &stdout);
    crate::input::phase_end("explain");
    Ok(crate::Outcome {
        stdout,
        code: EXIT_OK,
    })
}

/// The rows `plan` adds after the cycle's: the units held back, waiting for an object
/// not in the input.
fn held_rows(plan: &output::Plan) -> impl Iterator<Item = &output::PlanRow> {
    plan.rows.iter().skip(plan.report.units.len())
}

/// `UNIT: pending: WHY` for a row of [`held_rows`].
fn held_line(r: &output::PlanRow) -> String {
    let unit = format!("{} {}", r.kind, r.name);
    let why = r
        .reason
        .strip_prefix(&format!("{unit}: "))
        .unwrap_or(&r.reason);
    format!("{unit}: pending: {why}\n")
}

/// The explanation of a unit held back: one line.
fn waiting_outcome(w: &gangpack_k8s::Waiting) -> crate::Outcome {
    crate::Outcome {
        stdout: format!("{}: pending: {}\n", w.unit(), w.reason()),
        code: EXIT_OK,
    }
}

/// A line per pod of the group held back (not counted among its pods).
fn held_back_members(out: &mut String, snapshot: &Snapshot, unit: &Unit) {
    let Unit::Group(g) = unit else {
        return;
    };
    let (ns, name) = g.split_once('/').unwrap_or(("", g));
    for w in &snapshot.waiting {
        if w.kind == Kind::Pod && w.namespace == ns && w.group.as_deref() == Some(name) {
            let _ = writeln!(out, "held back: {} is {}", w.unit(), w.reason());
        }
    }
}

/// The unit of a pod: its PodGroup when it names one.
fn pod_unit(sched: &Scheduler, key: &str) -> Result<Unit, Failure> {
    let pod = sched.pod(key).ok_or_else(|| not_found(sched, "Pod", key))?;
    Ok(match &pod.scheduling_group {
        Some(g) => Unit::Group(format!("{}/{g}", pod.namespace)),
        None => Unit::Pod(key.to_owned()),
    })
}

pub(crate) fn check_exists(sched: &Scheduler, unit: &Unit) -> Result<(), Failure> {
    match unit {
        Unit::Group(g) if sched.group(g).is_none() => Err(not_found(sched, "PodGroup", g)),
        Unit::Pod(p) if sched.pod(p).is_none() => Err(not_found(sched, "Pod", p)),
        _ => Ok(()),
    }
}

/// `PodGroup default/traning not found in the input; did you mean ml/training?`: the
/// PodGroups and pods whose names are nearest the one asked for (edit distance; a bare
/// name is also compared with names in other namespaces), PodGroups as the argument
/// names them, pods as `--pod NAMESPACE/NAME`.
fn not_found(sched: &Scheduler, kind: &str, key: &str) -> Failure {
    const SHOWN: usize = 3;
    // What was typed: a bare name was read as `default/NAME`.
    let asked = key.strip_prefix("default/").unwrap_or(key);
    let groups: Vec<String> = sched
        .groups()
        .map(|g| format!("{}/{}", g.namespace, g.name))
        .collect();
    let pods: Vec<String> = sched
        .pods()
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect();
    let (same, other, flag) = if kind == "Pod" {
        (&pods, &groups, "PodGroup ")
    } else {
        (&groups, &pods, "--pod ")
    };
    let mut guesses: Vec<String> =
        gangpack_k8s::closest_names(asked, same.iter().map(String::as_str), SHOWN)
            .into_iter()
            .map(str::to_owned)
            .collect();
    if guesses.is_empty() {
        // The other kind: a pod named as a PodGroup, or the reverse.
        guesses = gangpack_k8s::closest_names(asked, other.iter().map(String::as_str), SHOWN)
            .into_iter()
            .map(|g| format!("{flag}{g}"))
            .collect();
    }
    let mut message = format!("{kind} {key} not found in the input");
    match guesses.as_slice() {
        [] => {}
        [one] => {
            let _ = write!(message, "; did you mean {one}?");
        }
        [init @ .., last] => {
            let _ = write!(message, "; did you mean {} or {last}?", init.join(", "));
        }
    }
    Failure::NotFound(message)
}

/// The explanation of one unit after the cycle.
pub(crate) fn explain_unit(sched: &Scheduler, report: &CycleReport, unit: &Unit) -> String {
    let mut out = String::new();
    match report.units.iter().find(|(u, _)| u == unit).map(|(_, r)| r) {
        Some(UnitResult::Scheduled(d)) => {
            let _ = writeln!(
                out,
                "{unit}: Scheduled ({} bound)",
                plural(d.bindings.len(), "pod", "pods")
            );
            placements(&mut out, d);
        }
        Some(UnitResult::Preempted(p)) => {
            let victims: Vec<String> = p.victims.iter().map(|v| v.unit.to_string()).collect();
            let _ = writeln!(
                out,
                "{unit}: preempting {} ({} nominated)",
                victims.join(", "),
                plural(p.decision.bindings.len(), "pod", "pods")
            );
            placements(&mut out, &p.decision);
        }
        Some(UnitResult::Invalid(errs)) => {
            let errs: Vec<String> = errs.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "{unit}: invalid: {}", errs.join("; "));
        }
        Some(UnitResult::Failed(e)) => {
            let _ = writeln!(out, "{unit}: failed: {e}");
        }
        Some(UnitResult::Pending(_)) => out.push_str(&tree(sched, unit)),
        None => {
            if sched.pending_units().contains(unit) {
                out.push_str(&tree(sched, unit));
            } else {
                let bound = unit_bound(sched, unit);
                let _ = writeln!(
                    out,
                    "{unit}: nothing pending ({} bound)",
                    plural(bound, "pod", "pods")
                );
            }
        }
    }
    out
}

/// The derivation tree of a pending unit (or the error explaining it hit), then what
/// it would take to place it (`Scheduler::what_it_takes`): the least preemption and
/// the capacity missing in the closest domains.
fn tree(sched: &Scheduler, unit: &Unit) -> String {
    let explanation = match sched.explain(unit) {
        Ok(x) => x,
        Err(e) => return format!("{unit}: cannot be explained: {e}\n"),
    };
    let what = sched.what_it_takes(unit);
    // The verdict first: what would get it placed, agreeing with the next cycle (from
    // the explanation and what-it-takes computed here, not again).
    let verdict = match &what {
        Ok(w) => sched.verdict_with(unit, &explanation, w),
        Err(_) => sched.verdict(unit),
    };
    let mut out = match verdict {
        Ok(v) => format!("{v}\n"),
        Err(e) => return format!("{unit}: cannot be explained: {e}\n"),
    };
    out.push_str(&explanation.to_string());
    if !out.ends_with('\n') {
        out.push('\n');
    }
    match what {
        Ok(w) if !w.fits_now => {
            let _ = writeln!(out, "{w}");
        }
        Ok(_) => {}
        Err(e) => {
            let _ = writeln!(out, "what it would take: cannot be computed: {e}");
        }
    }
    if let Some(r) = sched.placeable_after_evictions(unit) {
        let pods: Vec<&str> = r.evictions.iter().map(|e| e.pod.as_str()).collect();
        let _ = writeln!(
            out,
            "pending evictions free room: once the NoExecute evictions due by {} are carried \
             out ({}: {}), it would be placed{}",
            output::time_to_rfc3339(r.at),
            plural(pods.len(), "pod", "pods"),
            pods.join(", "),
            if r.preempts {
                " by preempting lower-priority work"
            } else {
                ""
            }
        );
    }
    out
}

fn unit_bound(sched: &Scheduler, unit: &Unit) -> usize {
    match unit {
        Unit::Pod(p) => usize::from(sched.binding(p).is_some()),
        Unit::Group(g) => {
            let (ns, name) = g.split_once('/').unwrap_or(("", g));
            sched
                .pods()
                .filter(|p| {
                    p.namespace == ns
                        && p.scheduling_group.as_deref() == Some(name)
                        && p.node_name.is_some()
                })
                .count()
        }
    }
}

/// `  pod -> node: devices` per binding.
fn placements(out: &mut String, d: &PlacementDecision) {
    for (i, b) in d.bindings.iter().enumerate() {
        let group = if i == 0 { &d.group_claims[..] } else { &[] };
        let devices = devices_cell(
            b.claims
                .iter()
                .chain(group)
                .flat_map(|c| &c.result.devices)
                .map(|r| (r.driver.as_str(), r.pool.as_str(), r.device.as_str())),
        );
        if devices.is_empty() {
            let _ = writeln!(out, "  {} -> {}", b.pod, b.node);
        } else {
            let _ = writeln!(out, "  {} -> {}: {devices}", b.pod, b.node);
        }
    }
}

/// Every unit the cycle did not place, explained, then the units held back.
fn explain_all(snapshot: &Snapshot, plan: &output::Plan) -> String {
    let sched = &snapshot.scheduler;
    let report = &plan.report;
    let mut parts: Vec<String> = Vec::new();
    for (unit, result) in &report.units {
        if !matches!(result, UnitResult::Scheduled(_) | UnitResult::Preempted(_)) {
            let mut part = explain_unit(sched, report, unit);
            held_back_members(&mut part, snapshot, unit);
            parts.push(part);
        }
    }
    // The units held back, as `plan` lists them after the cycle's.
    parts.extend(held_rows(plan).map(held_line));
    if parts.is_empty() {
        return format!(
            "nothing pending: the cycle placed every unit ({} bound)\n",
            plural(bound_pods(sched), "pod", "pods")
        );
    }
    parts.join("\n")
}
