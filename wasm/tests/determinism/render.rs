//! The canonical text of a scenario run on the engine: the scheduler's state and every
//! decision, step by step, in a fixed order (names sorted, nothing from a hash map).

use std::fmt::Write as _;

use gangpack::{
    AllocationResult, DeviceRef, DeviceTaint, DeviceTaintEffect, EvictionReport, GangOutcome,
    PlacementDecision, RequestShape, Scheduler, Taint, TaintEffect, Time, Unit, UnitResult,
    WorkloadMix,
};

use crate::{Step, TaintSpec};

/// What a manifest scenario's snapshot reported while loading.
pub(crate) fn snapshot_header(warnings: &[String]) -> String {
    let mut out = String::new();
    if warnings.is_empty() {
        out.push_str("no warnings\n");
    }
    for w in warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn time(t: Time) -> String {
    t.to_rfc3339()
}

/// Runs `steps` on `sched` and appends the trace to `out`.
pub(crate) fn trace(
    out: &mut String,
    name: &str,
    policy: &str,
    header: &str,
    sched: &mut Scheduler,
    steps: &[Step],
) {
    let _ = writeln!(out, "# {name} under {policy}");
    out.push_str("## input\n");
    out.push_str(header);
    if !header.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "## state at {}", time(sched.now()));
    state(out, sched, true);
    let mut cycles = 0;
    for step in steps {
        match step {
            Step::Cycle => {
                cycles += 1;
                let _ = writeln!(out, "## cycle {cycles} at {}", time(sched.now()));
                let report = sched.cycle();
                if report.units.is_empty() {
                    out.push_str("nothing to schedule\n");
                }
                for (unit, result) in &report.units {
                    unit_result(out, unit, result);
                }
                evictions(out, &report.evictions);
                state(out, sched, true);
            }
            Step::Explain => explain(out, sched),
            Step::TaintDevice(t) => {
                let spec = TaintSpec {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                };
                taint_device(out, sched, &t.device, &spec);
            }
            Step::TaintAllocated(spec) => match first_allocated(sched) {
                Some(device) => taint_device(out, sched, &device, spec),
                None => out.push_str("## taint the first allocated device: none is allocated\n"),
            },
            Step::TaintNode(t) => {
                let effect = TaintEffect::parse(&t.effect).expect("a node taint effect");
                let taint = Taint {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect,
                    time_added: Some(sched.now()),
                };
                let _ = writeln!(out, "## taint node {} {taint}", t.node);
                match sched.taint_node(&t.node, taint) {
                    Ok(r) => evictions(out, &r),
                    Err(e) => {
                        let _ = writeln!(out, "error: {e}");
                    }
                }
                state(out, sched, false);
            }
            Step::Rule(path) => {
                let _ = writeln!(out, "## DeviceTaintRule from {path}");
                let loaded =
                    gangpack_k8s::load_str(crate::file(path), path).expect("the rule file loads");
                for object in &loaded.objects {
                    let rule = gangpack_k8s::device_taint_rule(object)
                        .unwrap_or_else(|e| panic!("{path}: not a DeviceTaintRule: {e}"));
                    let _ = writeln!(out, "rule {}", rule.name);
                    match sched.add_taint_rule(rule) {
                        Ok(r) => evictions(out, &r),
                        Err(e) => {
                            let _ = writeln!(out, "error: {e}");
                        }
                    }
                }
                state(out, sched, false);
            }
            Step::Advance(seconds) => {
                let to = Time(sched.now().0 + seconds);
                let _ = writeln!(out, "## advance {seconds}s to {}", time(to));
                let done = sched.advance(to);
                if done.is_empty() {
                    out.push_str("no eviction due\n");
                }
                for e in &done {
                    let _ = writeln!(out, "evicted {e}");
                }
                state(out, sched, false);
            }
        }
    }
    out.push('\n');
}

/// The first allocated device, by driver, pool and name.
fn first_allocated(sched: &Scheduler) -> Option<String> {
    sched
        .claims()
        .filter_map(|c| c.allocation.as_ref())
        .flat_map(|a| &a.devices)
        .map(|d| (d.driver.clone(), d.pool.clone(), d.device.clone()))
        .min()
        .map(|(driver, pool, device)| format!("{driver}/{pool}/{device}"))
}

fn taint_device(out: &mut String, sched: &mut Scheduler, device: &str, spec: &TaintSpec) {
    let taint = DeviceTaint {
        key: spec.key.clone(),
        value: spec.value.clone(),
        effect: DeviceTaintEffect::parse(&spec.effect),
        time_added: Some(sched.now()),
    };
    let _ = writeln!(out, "## taint device {device} {taint}");
    let device = DeviceRef::parse(device).expect("DRIVER/POOL/DEVICE");
    match sched.taint_device(&device, taint) {
        Ok(r) => evictions(out, &r),
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
        }
    }
    state(out, sched, false);
}

fn unit_result(out: &mut String, unit: &Unit, result: &UnitResult) {
    match result {
        UnitResult::Scheduled(d) => {
            let _ = writeln!(out, "{unit}: scheduled");
            decision(out, d);
        }
        UnitResult::Preempted(p) => {
            let _ = writeln!(
                out,
                "{unit}: scheduled after preempting {}",
                p.victims.len()
            );
            for v in &p.victims {
                let _ = writeln!(
                    out,
                    "  victim {} priority {} devices {} pods {}",
                    v.unit,
                    v.priority,
                    v.devices,
                    v.pods.join(" ")
                );
            }
            decision(out, &p.decision);
        }
        UnitResult::Pending(outcome) => {
            let _ = match outcome {
                GangOutcome::Unschedulable { required, best } => {
                    writeln!(
                        out,
                        "{unit}: pending, unschedulable ({best} of {required} fit)"
                    )
                }
                GangOutcome::WaitingForPods { present, min_count } => writeln!(
                    out,
                    "{unit}: pending, waiting for pods ({present} of minCount {min_count})"
                ),
                GangOutcome::BudgetExhausted { steps } => {
                    writeln!(
                        out,
                        "{unit}: pending, step budget exhausted after {steps} steps"
                    )
                }
                GangOutcome::Placed(_) => writeln!(out, "{unit}: pending, yet placed"),
            };
        }
        UnitResult::Invalid(errors) => {
            let _ = writeln!(out, "{unit}: invalid");
            for e in errors {
                let _ = writeln!(out, "  {e}");
            }
        }
        UnitResult::Failed(e) => {
            let _ = writeln!(out, "{unit}: failed: {e}");
        }
    }
}

fn decision(out: &mut String, d: &PlacementDecision) {
    for b in &d.bindings {
        let _ = writeln!(out, "  pod {} -> {}", b.pod, b.node);
        for c in &b.claims {
            allocation(out, "    ", &c.claim, &c.result);
        }
    }
    for c in &d.group_claims {
        allocation(out, "  group ", &c.claim, &c.result);
    }
}

fn allocation(out: &mut String, indent: &str, claim: &str, result: &AllocationResult) {
    let _ = writeln!(out, "{indent}claim {claim}");
    for r in &result.devices {
        let _ = write!(
            out,
            "{indent}  {}: {}/{}/{}",
            r.request, r.driver, r.pool, r.device
        );
        if r.admin_access {
            out.push_str(" admin");
        }
        if let Some(share) = &r.share_id {
            let _ = write!(out, " share {share}");
        }
        for (k, q) in &r.consumed_capacity {
            let _ = write!(out, " {k}={q}");
        }
        out.push('\n');
    }
}

/// The core's own words for an eviction report (its `Display`), one line each.
fn evictions(out: &mut String, r: &EvictionReport) {
    let text = r.to_string();
    if !text.is_empty() {
        let _ = writeln!(out, "{text}");
    }
}

/// Every node's devices (free, free and untainted, usable) and its fragmentation score
/// for the default workload mix, the cluster's score, the scheduled evictions and (with
/// `capacity`) the capacity report: what the free devices host, by shape.
fn state(out: &mut String, sched: &Scheduler, capacity: bool) {
    let cluster = sched.cluster();
    let mix = WorkloadMix::openb();
    let mut nodes: Vec<&str> = cluster.nodes().map(|n| n.name.as_str()).collect();
    nodes.sort_unstable();
    let mut free = Vec::new();
    for name in nodes {
        let counts = cluster
            .node_id(name)
            .and_then(|id| cluster.node_counts(id))
            .unwrap_or_default();
        free.push(counts.free_untainted);
        let _ = writeln!(
            out,
            "node {name}: {} free ({} untainted) of {}, fragmentation {}",
            counts.free,
            counts.free_untainted,
            counts.devices,
            mix.node_fragmentation(counts.free_untainted),
        );
    }
    let _ = writeln!(out, "fragmentation {}", mix.fragmentation(&free));
    for e in sched.scheduled_evictions() {
        let _ = writeln!(out, "scheduled eviction: {e}");
    }
    if capacity {
        match cluster.capacity_report(&RequestShape::standard(2), None) {
            Ok(report) => {
                let _ = writeln!(out, "{report}");
            }
            Err(e) => {
                let _ = writeln!(out, "capacity report: {e:?}");
            }
        }
    }
}

/// The verdict, explanation and what-it-takes of every pending unit (the verdict line
/// first, as `explain` prints it).
fn explain(out: &mut String, sched: &Scheduler) {
    let pending = sched.pending_units();
    if pending.is_empty() {
        out.push_str("## explain: nothing pending\n");
    }
    for unit in pending {
        let _ = writeln!(out, "## explain {unit}");
        match sched.explain(&unit) {
            Ok(e) => {
                // The session's explain text: the verdict, then the explanation.
                if let Ok(v) = sched.verdict(&unit) {
                    let _ = writeln!(out, "{v}");
                }
                let _ = writeln!(out, "{e}");
                let _ = writeln!(out, "summary: {}", e.summary());
            }
            Err(e) => {
                let _ = writeln!(out, "error: {e}");
            }
        }
        match sched.what_it_takes(&unit) {
            Ok(w) => {
                let _ = writeln!(out, "{w}");
            }
            Err(e) => {
                let _ = writeln!(out, "error: {e}");
            }
        }
    }
}
