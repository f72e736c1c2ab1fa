//! `gangpack plan`: one scheduling cycle over the input.
//!
//! # Table output (the default, `-o table`)
//!
//! Sections in this order, each followed by a blank line, each left out when it would
//! be empty:
//!
//! 0. `evictions:` the `NoExecute` evictions the plan carries out before its cycle
//!    (those already due at `--now`), one line per pod: `  evicted Pod ns/name (due
//!    TIME, REASON): WHY` (`REASON` is the `DisruptionTarget` reason written,
//!    `DeletionByDeviceTaintManager` or `DeletionByTaintManager`; `WHY` names the claim
//!    and taint, the node and taint, or the `disruptionMode: All` PodGroup the pod goes
//!    with); then `  broken PodGroup ...` per PodGroup taken below `minCount` or whole,
//!    `  released ResourceClaim ns/name` per claim deallocated, `  if recreated: UNIT
//!    would be placed: N pods on NODES` (or why not) per unit that lost pods, and
//!    `  due Pod ns/name at TIME: WHY` per eviction scheduled for later (not carried
//!    out). It comes first, and also before `nothing to schedule`.
//! 1. **Units**, one line per PodGroup or pod without a group, in the order the cycle
//!    took them (priority, then creation time, then name): `UNIT` (`PodGroup ns/name`
//!    or `Pod ns/name`), `OUTCOME` (`placed`, `preempted`, `pending`, `invalid`,
//!    `failed`), `PODS` (placed or nominated pods; pending pods when not placed),
//!    `DEVICES` (how many devices are allocated: GPUs and every other device a claim
//!    takes, CPUs, NICs, channels), `NODES` (distinct nodes, in natural order, folded
//!    and cut short past 72 characters: `node-[0-331]`, `node-[1-2,4-5,…] (200 nodes)`;
//!    see `render::node_list`).
//! 2. **Pods placed**: `POD`, `NODE`, `COUNT` (its devices), `DEVICES` (`driver/pool: device device
//!    ...`, groups separated by `; `), in the units' order, each unit's pods in natural
//!    order (`worker-2` before `worker-10`).
//! 3. `preemptions:` per preemptor a line `  UNIT evicts:`, then one line per victim,
//!    least important first: `    VICTIM (N pods, M devices, priority P)` (`VICTIM` is
//!    `PodGroup ns/name`, evicted whole, or `Pod ns/name`). The preemptor's pods are in
//!    section 2 with their nominated nodes.
//! 4. `not placed:` one line per unit not placed: the one-line reason (for a pending
//!    unit, the explanation's summary, `PodGroup ns/name: B of R pods fit: <blocking
//!    facts>`; for an invalid or failed one, the error).
//! 5. A summary line: `N units: P placed, E preempted, W pending, I invalid, F failed;
//!    B pods bound, M nominated, D devices allocated` (nominated: a preemptor's pods, which
//!    bind once their victims are gone; devices: allocated to the placed units, followed
//!    by ` (8 gpu.nvidia.com, 2 cpu.example.com)` per driver when there are several), with
//!    `; E pods evicted` appended when the eviction step evicted any.
//!
//! With nothing pending, the output is one line: `nothing to schedule: N pods bound`.
//!
//! Exit status 0 when every unit is placed or preempted (its pods nominated), 3 when
//! any is pending, invalid or failed.

use std::fmt::Write as _;

use gangpack::{PlacementDecision, Scheduler, UnitResult};
use gangpack_k8s::Snapshot;
use gangpack_k8s::output::{self, Evictions, Outcome, Plan, PlanRow};

use crate::input::{self, Messages};
use crate::render::{Cell, Paint, Style, Table, node_list, plural};
use crate::{EXIT_OK, EXIT_PENDING, Failure, Format, Input, Options};

/// Runs `gangpack plan`; the snapshot is left in `kept` rather than dropped.
pub(crate) fn run(
    global: &Options,
    input: &Input,
    format: Format,
    style: Style,
    messages: &mut Messages,
    kept: &mut Option<Snapshot>,
) -> Result<crate::Outcome, Failure> {
    let mut snapshot = input::snapshot(global, input, messages)?;
    let plan = output::plan(&mut snapshot);
    input::phase_end("plan");
    let code = exit_code(&plan.rows);
    let stdout = match format {
        Format::Table => render(&plan, &snapshot, style),
        Format::Yaml | Format::Json => {
            warn_derived_uids(&plan.derived_uids, messages);
            print_list(&output::list(plan.changed), format)?
        }
    };
    input::phase_end("write");
    *kept = Some(snapshot);
    Ok(crate::Outcome { stdout, code })
}

/// One cycle, in both forms: the table, the `kind: List` of changed objects, and the
/// exit status.
pub(crate) fn both(
    global: &Options,
    input: &Input,
    style: Style,
    messages: &mut Messages,
) -> Result<(String, serde_json::Value, u8), Failure> {
    let mut snapshot = input::snapshot(global, input, messages)?;
    let plan = output::plan(&mut snapshot);
    let code = exit_code(&plan.rows);
    let table = render(&plan, &snapshot, style);
    warn_derived_uids(&plan.derived_uids, messages);
    Ok((table, output::list(plan.changed), code))
}

/// One warning naming the objects referenced by a derived uid (their input has none).
pub(crate) fn warn_derived_uids(objects: &[String], messages: &mut Messages) {
    const SHOWN: usize = 3;
    if objects.is_empty() {
        return;
    }
    let mut names = objects
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if objects.len() > SHOWN {
        let _ = write!(names, " and {} more", objects.len() - SHOWN);
    }
    let (subject, them) = if objects.len() == 1 {
        ("1 object has".to_owned(), "it")
    } else {
        (format!("{} objects have", objects.len()), "them")
    };
    messages.warning(&format!(
        "{subject} no metadata.uid in the input ({names}): the uids written for {them} in \
         reservedFor and ownerReferences are derived from kind, namespace and name (a \
         UUIDv8), not the API server's; apply the output only where the objects have those uids"
    ));
}

/// 0 when every unit is placed (or nominated after preemption), 3 otherwise.
pub(crate) fn exit_code(rows: &[PlanRow]) -> u8 {
    if rows
        .iter()
        .all(|r| matches!(r.outcome, Outcome::Placed | Outcome::Preempted))
    {
        EXIT_OK
    } else {
        EXIT_PENDING
    }
}

/// A `kind: List` as YAML or JSON (a trailing newline either way).
pub(crate) fn print_list(list: &serde_json::Value, format: Format) -> Result<String, Failure> {
    match format {
        Format::Yaml => serde_norway::to_string(list)
            .map_err(|e| Failure::Io(format!("cannot print YAML: {e}"))),
        Format::Json | Format::Table => {
            let mut s = serde_json::to_string_pretty(list)
                .map_err(|e| Failure::Io(format!("cannot print JSON: {e}")))?;
            s.push('\n');
            Ok(s)
        }
    }
}

/// The outcome's colour.
pub(crate) fn outcome_paint(o: Outcome) -> Paint {
    match o {
        Outcome::Placed => Paint::Green,
        Outcome::Preempted => Paint::Yellow,
        Outcome::Pending | Outcome::Invalid | Outcome::Failed => Paint::Red,
    }
}

/// `gpu.nvidia.com/node-a: gpu-0 gpu-1; other.example.com/pool: nic-0`, from
/// `driver/pool/device` strings (the pool may contain `/`), consecutive devices of one
/// pool grouped.
pub(crate) fn devices_cell<'a>(
    devices: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (driver, pool, device) in devices {
        let prefix = format!("{driver}/{pool}");
        match groups.last_mut() {
            Some((p, names)) if *p == prefix => names.push(device),
            _ => groups.push((prefix, vec![device])),
        }
    }
    groups
        .iter()
        .map(|(p, names)| format!("{p}: {}", names.join(" ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// ` (8 gpu.nvidia.com, 2 cpu.example.com)`: the devices per driver, most first,
/// when there is more than one driver; empty otherwise.
fn by_driver<'a>(devices: impl Iterator<Item = &'a String>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for d in devices {
        let driver = d.split('/').next().unwrap_or_default();
        match counts.iter_mut().find(|(x, _)| *x == driver) {
            Some((_, n)) => *n += 1,
            None => counts.push((driver, 1)),
        }
    }
    if counts.len() < 2 {
        return String::new();
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let parts: Vec<String> = counts.iter().map(|(d, n)| format!("{n} {d}")).collect();
    format!(" ({})", parts.join(", "))
}

/// Distinct nodes in first-seen order.
fn nodes_of(row: &PlanRow) -> Vec<&str> {
    let mut nodes: Vec<&str> = Vec::new();
    for p in &row.pods {
        if let Some(n) = p.node.as_deref()
            && !nodes.contains(&n)
        {
            nodes.push(n);
        }
    }
    nodes
}

/// The decision committed for a unit, if it was placed or nominated.
fn decision(result: &UnitResult) -> Option<&PlacementDecision> {
    match result {
        UnitResult::Scheduled(d) => Some(d),
        UnitResult::Preempted(p) => Some(&p.decision),
        _ => None,
    }
}

/// The pods-placed table of one decision: each pod's own claims' devices (a claim
/// shared by several pods is listed with the pod it was allocated with; PodGroup
/// claims with the first pod).
fn add_pod_rows(table: &mut Table, d: &PlacementDecision) {
    // In natural order of the pods' names (`worker-2` before `worker-10`); the group's
    // claims stay with the pod they were allocated with.
    let mut order: Vec<(usize, &gangpack::PodBinding)> = d.bindings.iter().enumerate().collect();
    order.sort_by(|(_, a), (_, b)| gangpack_k8s::natural_cmp(&a.pod, &b.pod));
    for (i, b) in order {
        let group = if i == 0 { &d.group_claims[..] } else { &[] };
        let results: Vec<_> = b
            .claims
            .iter()
            .chain(group)
            .flat_map(|c| &c.result.devices)
            .collect();
        let cell = devices_cell(
            results
                .iter()
                .map(|r| (r.driver.as_str(), r.pool.as_str(), r.device.as_str())),
        );
        table.row(vec![
            Cell::plain(b.pod.clone()),
            Cell::plain(b.node.clone()),
            Cell::plain(results.len().to_string()),
            Cell::plain(cell),
        ]);
    }
}

/// The victims of a preemption, one phrase each.
fn victims(result: &UnitResult) -> Vec<String> {
    let UnitResult::Preempted(p) = result else {
        return Vec::new();
    };
    p.victims
        .iter()
        .map(|v| {
            format!(
                "{} ({}, {}, priority {})",
                v.unit,
                plural(v.pods.len(), "pod", "pods"),
                plural(v.devices, "device", "devices"),
                v.priority
            )
        })
        .collect()
}

/// The rows with the core's result of each (the same units, in the same order; the
/// waiting rows after them have no result).
fn rows_with_results(plan: &Plan) -> impl Iterator<Item = (&PlanRow, &UnitResult)> {
    debug_assert!(plan.rows.len() >= plan.report.units.len());
    plan.rows
        .iter()
        .zip(plan.report.units.iter().map(|(_, r)| r))
}

/// The table form of a plan (see the module docs).
pub(crate) fn render(plan: &Plan, snapshot: &Snapshot, style: Style) -> String {
    let mut out = String::new();
    render_evictions(&mut out, &plan.evictions, style);
    if plan.rows.is_empty() {
        let bound = bound_pods(&snapshot.scheduler);
        let _ = writeln!(
            out,
            "nothing to schedule: {} bound",
            plural(bound, "pod", "pods")
        );
        return out;
    }
    let mut units = Table::new(&["UNIT", "OUTCOME", "PODS", "DEVICES", "NODES"]);
    for r in &plan.rows {
        units.row(vec![
            Cell::painted(format!("{} {}", r.kind, r.name), Paint::Cyan),
            Cell::painted(r.outcome.as_str(), outcome_paint(r.outcome)),
            Cell::plain(r.pods.len().to_string()),
            Cell::plain(r.device_count.to_string()),
            Cell::plain(node_list(&nodes_of(r))),
        ]);
    }
    units.write(&mut out, style, "");
    out.push('\n');

    let mut pods = Table::new(&["POD", "NODE", "COUNT", "DEVICES"]);
    for (_, result) in rows_with_results(plan) {
        if let Some(d) = decision(result) {
            add_pod_rows(&mut pods, d);
        }
    }
    if !pods.is_empty() {
        pods.write(&mut out, style, "");
        out.push('\n');
    }

    let preemptors: Vec<(&PlanRow, &UnitResult)> = rows_with_results(plan)
        .filter(|(r, _)| r.outcome == Outcome::Preempted)
        .collect();
    if !preemptors.is_empty() {
        let _ = writeln!(out, "{}", style.paint(Paint::Bold, "preemptions:"));
        for (r, result) in preemptors {
            let _ = writeln!(out, "  {} {} evicts:", r.kind, r.name);
            for v in victims(result) {
                let _ = writeln!(out, "    {v}");
            }
        }
        out.push('\n');
    }

    let not_placed: Vec<&PlanRow> = plan
        .rows
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Placed | Outcome::Preempted))
        .collect();
    if !not_placed.is_empty() {
        let _ = writeln!(out, "{}", style.paint(Paint::Bold, "not placed:"));
        for r in not_placed {
            let _ = writeln!(out, "  {}", reason_line(r));
        }
        out.push('\n');
    }

    let count = |o: Outcome| plan.rows.iter().filter(|r| r.outcome == o).count();
    let (mut bound, mut nominated) = (0, 0);
    for (_, result) in &plan.report.units {
        match result {
            UnitResult::Scheduled(d) => bound += d.bindings.len(),
            UnitResult::Preempted(p) => nominated += p.decision.bindings.len(),
            _ => {}
        }
    }
    let placed = plan.rows.iter().filter(|r| r.outcome == Outcome::Placed);
    let devices: usize = placed.clone().map(|r| r.device_count).sum();
    let _ = writeln!(
        out,
        "{}: {} placed, {} preempted, {} pending, {} invalid, {} failed; {} bound, {} nominated, \
         {} allocated{}",
        plural(plan.rows.len(), "unit", "units"),
        count(Outcome::Placed),
        count(Outcome::Preempted),
        count(Outcome::Pending),
        count(Outcome::Invalid),
        count(Outcome::Failed),
        plural(bound, "pod", "pods"),
        nominated,
        plural(devices, "device", "devices"),
        by_driver(placed.flat_map(|r| &r.devices)),
    );
    if !plan.evictions.carried_out.is_empty() {
        // Before the newline: the summary stays one line.
        out.pop();
        let _ = writeln!(
            out,
            "; {} evicted",
            plural(plan.evictions.carried_out.len(), "pod", "pods")
        );
    }
    out
}

/// The `evictions:` section (see the module docs), followed by a blank line; nothing
/// when no eviction was carried out or is scheduled.
fn render_evictions(out: &mut String, ev: &Evictions, style: Style) {
    if ev.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", style.paint(Paint::Bold, "evictions:"));
    for e in &ev.carried_out {
        let _ = writeln!(
            out,
            "  {} Pod {} (due {}, {}): {}",
            style.paint(Paint::Red, "evicted"),
            e.pod,
            e.at_rfc3339,
            e.condition_reason,
            e.why
        );
    }
    for g in &ev.broken_groups {
        let _ = writeln!(out, "  {} {g}", style.paint(Paint::Red, "broken"));
    }
    for r in &ev.released {
        let _ = writeln!(out, "  released ResourceClaim {r}");
    }
    for r in &ev.replacements {
        let _ = writeln!(out, "  if recreated: {}", replacement_line(r));
    }
    for e in &ev.upcoming {
        let _ = writeln!(
            out,
            "  {} Pod {} at {}: {}",
            style.paint(Paint::Yellow, "due"),
            e.pod,
            e.at_rfc3339,
            e.why
        );
    }
    out.push('\n');
}

/// `PodGroup ns/train would be placed: 4 pods on node-b node-c`, or the reason it
/// would not.
fn replacement_line(r: &PlanRow) -> String {
    match r.outcome {
        Outcome::Placed | Outcome::Preempted => {
            let verb = if r.outcome == Outcome::Placed {
                "would be placed"
            } else {
                "would preempt to be placed"
            };
            let mut line = format!(
                "{} {} {verb}: {} on {}",
                r.kind,
                r.name,
                plural(r.pods.len(), "pod", "pods"),
                node_list(&nodes_of(r))
            );
            if !r.reason.is_empty() && r.outcome == Outcome::Placed {
                let _ = write!(line, " ({})", r.reason);
            }
            line
        }
        _ => reason_line(r),
    }
}

/// The one-line reason of a unit not placed, starting with the unit (the explanation
/// summary already does; errors are prefixed).
pub(crate) fn reason_line(r: &PlanRow) -> String {
    let unit = format!("{} {}", r.kind, r.name);
    if r.reason.starts_with(&unit) {
        r.reason.clone()
    } else if r.reason.is_empty() {
        format!("{unit}: {}", r.outcome)
    } else {
        format!("{unit}: {}: {}", r.outcome, r.reason)
    }
}

/// Pods bound in the scheduler.
pub(crate) fn bound_pods(sched: &Scheduler) -> usize {
    sched.pods().filter(|p| p.node_name.is_some()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_group_by_pool() {
        let d = [
            ("gpu.nvidia.com", "node-a", "gpu-0"),
            ("gpu.nvidia.com", "node-a", "gpu-1"),
            ("nic.example.com", "fabric/a", "nic-3"),
            ("gpu.nvidia.com", "node-a", "gpu-2"),
        ];
        assert_eq!(
            devices_cell(d),
            "gpu.nvidia.com/node-a: gpu-0 gpu-1; nic.example.com/fabric/a: nic-3; \
             gpu.nvidia.com/node-a: gpu-2"
        );
        assert_eq!(devices_cell([]), "");
    }
}
