//! A taint what-if: who is evicted and when, which gangs break, and where the evicted
//! gangs could go.

use gangpack::{
    BrokenGroup, DeviceRef, DeviceTaint, DeviceTaintEffect, DeviceTaintRule, DryRunReport,
    EvictionReason, EvictionVerdict, Pod, PodEviction, Scheduler, SchedulerError, Taint, Time,
    node_eviction,
};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::patch::{Changes, Condition, Style, object_at, set_condition, split_key};
use super::plan::{Outcome, PlanRow, row, units_of, untried_row};
use super::time::time_to_rfc3339;
use crate::{Kind, Snapshot};

/// What to taint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaintTarget {
    /// A taint on one device (as its driver would publish it in the ResourceSlice).
    Device {
        /// The device.
        device: DeviceRef,
        /// The taint (`timeAdded` unset: stamped with the scheduler's clock).
        taint: DeviceTaint,
    },
    /// A taint on a node (`kubectl taint`).
    Node {
        /// The node.
        node: String,
        /// The taint.
        taint: Taint,
    },
    /// A DeviceTaintRule, added (or replacing the rule of the same name). With effect
    /// `None` nothing is evicted: the plan reports upstream's dry run instead.
    Rule(DeviceTaintRule),
}

impl TaintTarget {
    /// `device gpu.example.com/node-a/gpu-3: example.com/xid:NoExecute`,
    /// `node node-a: maintenance:NoExecute` or `DeviceTaintRule drain: maintenance:None`.
    pub fn describe(&self) -> String {
        match self {
            TaintTarget::Device { device, taint } => format!("device {device}: {taint}"),
            TaintTarget::Node { node, taint } => format!("node {node}: {taint}"),
            TaintTarget::Rule(rule) => format!("DeviceTaintRule {}: {}", rule.name, rule.taint),
        }
    }
}

/// The reason the device taint eviction controller writes on the pods it deletes.
pub const DEVICE_TAINT_REASON: &str = "DeletionByDeviceTaintManager";
/// Its message.
pub const DEVICE_TAINT_MESSAGE: &str = "Device Taint manager: deleting due to NoExecute taint";
/// The reason the node taint eviction controller writes on the pods it deletes.
pub const NODE_TAINT_REASON: &str = "DeletionByTaintManager";
/// Its message.
pub const NODE_TAINT_MESSAGE: &str = "Taint manager: deleting due to NoExecute taint";

/// One pod evicted (or, for a `None` rule, that would be).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Eviction {
    /// The pod, `namespace/name`.
    pub pod: String,
    /// When (logical time, seconds since the epoch).
    pub at: Time,
    /// When, RFC 3339.
    pub at_rfc3339: String,
    /// Why, as the core reports it.
    pub reason: EvictionReason,
    /// Why, in one line.
    pub why: String,
    /// The `DisruptionTarget` reason written on the pod: [`DEVICE_TAINT_REASON`] or
    /// [`NODE_TAINT_REASON`].
    pub condition_reason: &'static str,
}

/// Upstream's dry run of a rule with effect `None`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DryRun {
    /// The message the device taint eviction controller writes in the rule's
    /// `EvictionInProgress` condition ([`DryRunReport::message`]).
    pub message: String,
    /// The numbers, the evictions it would schedule and the PodGroups that would break.
    pub report: DryRunReport,
}

/// The blast radius of a taint ([`taint`]).
#[derive(Clone, Debug, Serialize)]
pub struct TaintPlan {
    /// What was tainted ([`TaintTarget::describe`]).
    pub target: String,
    /// The scheduler's clock when the taint was applied.
    pub now: Time,
    /// The same, RFC 3339.
    pub now_rfc3339: String,
    /// The evictions the taint starts, by time then pod. For a rule with effect
    /// `None`, the evictions it **would** start with effect `NoExecute` (nothing is
    /// evicted; [`dry_run`](Self::dry_run) is set).
    pub evictions: Vec<Eviction>,
    /// Evictions the change cancels.
    pub cancelled: Vec<Eviction>,
    /// PodGroups that fall below `minCount` or go whole (would, for `None`).
    pub broken_groups: Vec<BrokenGroup>,
    /// For a rule with effect `None`: upstream's dry run.
    pub dry_run: Option<DryRun>,
    /// Where the evicted units could go: one row per PodGroup (or pod without one)
    /// that loses pods, from a cycle run on a copy of the scheduler after the
    /// evictions, with the evicted pods pending again.
    pub replacements: Vec<PlanRow>,
    /// The whole changed objects: evicted pods with `DisruptionTarget=True` (at their
    /// eviction time), and for a rule, the DeviceTaintRule with the status its
    /// controller writes.
    pub changed: Vec<Value>,
}

/// Applies a taint through the snapshot's scheduler (which keeps it) and reports its
/// blast radius: every pod evicted and when, why, which PodGroups break, and where
/// the evicted gangs could go.
///
/// - **Evicted pods** get `DisruptionTarget=True` with `lastTransitionTime` their
///   eviction time: reason [`DEVICE_TAINT_REASON`] / message [`DEVICE_TAINT_MESSAGE`]
///   for device taints (slice taints and rules), [`NODE_TAINT_REASON`] /
///   [`NODE_TAINT_MESSAGE`] for node taints, as the two eviction controllers write
///   before deleting. A pod that goes because its `disruptionMode: All` PodGroup loses
///   another member gets the reason of the taint that started it. The pods are then
///   deleted and their claims released by the resourceclaim controller; neither is
///   written.
/// - **A DeviceTaintRule** gets its `EvictionInProgress` condition as upstream's
///   device taint eviction controller applies it (`observedGeneration` from
///   `metadata.generation`, `lastTransitionTime` moved on any change): effect `None`:
///   `False`, reason `NoEffect`, the dry-run message; `NoExecute`: `True`, reason
///   `PodsPendingEviction`, `N pods need to be evicted in M namespaces.` (or `False`,
///   `NotStarted`, when none); other effects: `False`, `OtherEffect`, `Eviction only
///   happens for the NoExecute effect.` A rule that is not among the loaded objects is
///   written as a new object.
/// - **Where the evicted gangs could go.** On a clone of the scheduler (for a `None`
///   rule, with the rule's effect switched to `NoExecute`), the clock is advanced to the
///   last eviction (carrying out every eviction due by then), the evicted pods are added
///   back as pending copies (no `nodeName`; the claims only they held are deallocated),
///   and one cycle runs. Each evicted unit's row says where it lands (it may preempt) or
///   why it stays pending; when the new home is itself due for eviction (a claim that
///   tolerates the taint for a while may be given the tainted device again, and its
///   time is up), the row's reason says `evicted again at <time>: <why>`. The snapshot
///   itself is not advanced.
pub fn taint(snapshot: &mut Snapshot, target: TaintTarget) -> Result<TaintPlan, SchedulerError> {
    let now = snapshot.scheduler.now();
    let description = target.describe();
    let tainted = match &target {
        TaintTarget::Node { node, taint } => Tainted::Node {
            node: node.clone(),
            taint: taint.to_string(),
        },
        _ => Tainted::Device,
    };
    let sched = &mut snapshot.scheduler;
    let (report, rule) = match target {
        TaintTarget::Device { device, taint } => (sched.taint_device(&device, taint)?, None),
        TaintTarget::Node { node, taint } => (sched.taint_node(&node, taint)?, None),
        TaintTarget::Rule(rule) => {
            let name = rule.name.clone();
            let report = if sched.cluster().taint_rule(&name).is_some() {
                sched.replace_taint_rule(rule)?
            } else {
                sched.add_taint_rule(rule)?
            };
            let stored = sched
                .cluster()
                .taint_rule(&name)
                .cloned()
                .expect("the rule was just added");
            let dry = sched.dry_run_rule(&stored);
            (report, Some((stored, dry)))
        }
    };
    let snapshot: &Snapshot = snapshot;
    let sched = &snapshot.scheduler;
    let dry_run = rule
        .as_ref()
        .filter(|(r, _)| r.taint.effect == DeviceTaintEffect::None);
    let (evictions, broken_groups) = match dry_run {
        Some((_, dry)) => (dry.evictions.clone(), dry.broken_groups.clone()),
        None => (report.started.clone(), report.broken_groups.clone()),
    };

    let mut changes = Changes::new(snapshot);
    let rows = describe(sched, &evictions, &tainted);
    if dry_run.is_none() {
        for e in &rows {
            let (ns, name) = split_key(&e.pod);
            if let Some(doc) = changes.get(Kind::Pod, ns, name) {
                mark_evicted(doc, e, e.at);
            }
        }
    }
    if let Some((stored, dry)) = &rule {
        write_rule(&mut changes, stored, dry, now);
    }
    let none_rule = dry_run.map(|(r, _)| r);
    let replacements = replace_evicted(sched, &evictions, none_rule, &tainted);
    Ok(TaintPlan {
        target: description,
        now,
        now_rfc3339: time_to_rfc3339(now),
        evictions: rows,
        cancelled: describe(sched, &report.cancelled, &tainted),
        broken_groups,
        dry_run: dry_run.map(|(_, dry)| DryRun {
            message: dry.message(),
            report: dry.clone(),
        }),
        replacements,
        changed: changes.finish(),
    })
}

/// What was tainted, as the eviction rows need it.
pub(crate) enum Tainted {
    /// A node, with the taint as text.
    Node { node: String, taint: String },
    /// A device (slice taint or rule).
    Device,
}

/// Sets `DisruptionTarget=True` on an evicted pod's document at `at`, with the reason
/// and message of the controller that evicts it.
pub(crate) fn mark_evicted(doc: &mut Value, e: &Eviction, at: Time) {
    let message = if e.condition_reason == NODE_TAINT_REASON {
        NODE_TAINT_MESSAGE
    } else {
        DEVICE_TAINT_MESSAGE
    };
    let c = Condition {
        kind: "DisruptionTarget",
        status: true,
        reason: e.condition_reason,
        message,
    };
    set_condition(doc, &c, at, Style::Pod);
}

/// The eviction rows: a one-line why and the condition reason of each.
pub(crate) fn describe(
    sched: &Scheduler,
    evictions: &[PodEviction],
    target: &Tainted,
) -> Vec<Eviction> {
    let direct = |r: &EvictionReason| match r {
        EvictionReason::NodeTaint { .. } => Some(NODE_TAINT_REASON),
        EvictionReason::DeviceTaint { .. } => Some(DEVICE_TAINT_REASON),
        EvictionReason::GroupMember { .. } => None,
    };
    let fallback = match target {
        Tainted::Node { .. } => NODE_TAINT_REASON,
        Tainted::Device => DEVICE_TAINT_REASON,
    };
    let group_of = |pod: &str| {
        let p = sched.pod(pod)?;
        Some(format!("{}/{}", p.namespace, p.scheduling_group.as_ref()?))
    };
    evictions
        .iter()
        .map(|e| {
            let condition_reason = match &e.reason {
                // A member going with its group gets the reason of a member evicted
                // directly (the earliest listed).
                EvictionReason::GroupMember { group } => evictions
                    .iter()
                    .filter(|o| group_of(&o.pod).as_ref() == Some(group))
                    .find_map(|o| direct(&o.reason))
                    .unwrap_or(fallback),
                r => direct(r).unwrap_or(fallback),
            };
            let why = match &e.reason {
                EvictionReason::DeviceTaint { claim, taint } => {
                    format!("claim {claim} holds a device tainted {taint}")
                }
                EvictionReason::NodeTaint { node } => match target {
                    Tainted::Node { node: n, taint } if n == node => {
                        format!("node {node} tainted {taint}")
                    }
                    _ => node_taint_why(sched, &e.pod, node),
                },
                EvictionReason::GroupMember { group } => {
                    format!("PodGroup {group} (disruptionMode All) loses a member")
                }
            };
            Eviction {
                pod: e.pod.clone(),
                at: e.at,
                at_rfc3339: time_to_rfc3339(e.at),
                reason: e.reason.clone(),
                why,
                condition_reason,
            }
        })
        .collect()
}

/// `node node-a carries maintenance:NoExecute, not tolerated` (or `tolerated for 300
/// s`), from the node's `NoExecute` taints that the pod does not tolerate forever; a
/// general line when the pod or node is gone.
fn node_taint_why(sched: &Scheduler, pod: &str, node: &str) -> String {
    let (Some(p), Some(n)) = (sched.pod(pod), sched.cluster().node(node)) else {
        return format!("node {node} has a NoExecute taint it does not tolerate");
    };
    let taints: Vec<String> = n
        .taints
        .iter()
        .filter_map(
            |t| match node_eviction(std::slice::from_ref(t), &p.tolerations) {
                EvictionVerdict::Evict { delay_seconds } => {
                    let tolerated = p.tolerations.iter().any(|x| x.tolerates(t));
                    Some(if tolerated {
                        format!("{t}, tolerated for {delay_seconds} s")
                    } else {
                        format!("{t}, not tolerated")
                    })
                }
                _ => None,
            },
        )
        .collect();
    if taints.is_empty() {
        return format!("node {node} has a NoExecute taint it does not tolerate");
    }
    format!("node {node} carries {}", taints.join("; "))
}

/// Writes the rule's `EvictionInProgress` condition (see [`taint`]).
fn write_rule(changes: &mut Changes<'_>, rule: &DeviceTaintRule, dry: &DryRunReport, now: Time) {
    let (status, reason, message) = match rule.taint.effect {
        DeviceTaintEffect::None => (false, "NoEffect", dry.message()),
        DeviceTaintEffect::NoExecute if !dry.pods.is_empty() => {
            let pods = match dry.pods.len() {
                1 => "1 pod needs".to_owned(),
                n => format!("{n} pods need"),
            };
            let namespaces = match dry.namespaces {
                1 => "1 namespace".to_owned(),
                n => format!("{n} different namespaces"),
            };
            (
                true,
                "PodsPendingEviction",
                format!("{pods} to be evicted in {namespaces}."),
            )
        }
        DeviceTaintEffect::NoExecute => (false, "NotStarted", String::new()),
        _ => (
            false,
            "OtherEffect",
            "Eviction only happens for the NoExecute effect.".to_owned(),
        ),
    };
    if changes.get(Kind::DeviceTaintRule, "", &rule.name).is_none() {
        changes.add_new(Kind::DeviceTaintRule, "", &rule.name, rule_object(rule));
    }
    let doc = changes
        .get(Kind::DeviceTaintRule, "", &rule.name)
        .expect("added above");
    sync_spec(doc, rule);
    let c = Condition {
        kind: "EvictionInProgress",
        status,
        reason,
        message: &message,
    };
    set_condition(doc, &c, now, Style::Controller);
}

fn selector_json(rule: &DeviceTaintRule) -> Option<Value> {
    let s = rule.selector.as_ref()?;
    let mut out = Map::new();
    for (k, v) in [
        ("driver", &s.driver),
        ("pool", &s.pool),
        ("device", &s.device),
    ] {
        if let Some(v) = v {
            out.insert(k.into(), Value::String(v.clone()));
        }
    }
    Some(Value::Object(out))
}

fn taint_json(t: &DeviceTaint) -> Value {
    let mut out = Map::new();
    out.insert("key".into(), Value::String(t.key.clone()));
    if !t.value.is_empty() {
        out.insert("value".into(), Value::String(t.value.clone()));
    }
    out.insert("effect".into(), Value::String(t.effect.as_str().into()));
    if let Some(at) = t.time_added {
        out.insert("timeAdded".into(), Value::String(time_to_rfc3339(at)));
    }
    Value::Object(out)
}

/// A new `resource.k8s.io/v1` DeviceTaintRule object for `rule`.
fn rule_object(rule: &DeviceTaintRule) -> Value {
    let mut spec = Map::new();
    if let Some(s) = selector_json(rule) {
        spec.insert("deviceSelector".into(), s);
    }
    spec.insert("taint".into(), taint_json(&rule.taint));
    json!({
        "apiVersion": Kind::DeviceTaintRule.api_version(),
        "kind": "DeviceTaintRule",
        "metadata": {"name": rule.name},
        "spec": spec,
    })
}

/// Makes a loaded rule's spec say what was applied: the taint when its key, value or
/// effect differ (with the `timeAdded` the change got), the selector when it differs.
fn sync_spec(doc: &mut Value, rule: &DeviceTaintRule) {
    let want = taint_json(&rule.taint);
    let same_taint = doc.pointer("/spec/taint").is_some_and(|t| {
        ["key", "effect"].iter().all(|k| t.get(*k) == want.get(*k))
            && t.get("value").and_then(Value::as_str).unwrap_or_default() == rule.taint.value
    });
    if !same_taint {
        object_at(doc, "spec").insert("taint".into(), want);
    }
    let have = doc.pointer("/spec/deviceSelector").map(|s| {
        let mut out = Map::new();
        for k in ["driver", "pool", "device"] {
            if let Some(v) = s.get(k).filter(|v| !v.is_null()) {
                out.insert(k.into(), v.clone());
            }
        }
        Value::Object(out)
    });
    let want = selector_json(rule);
    if have != want {
        let spec = object_at(doc, "spec");
        match want {
            Some(s) => spec.insert("deviceSelector".into(), s),
            None => spec.remove("deviceSelector"),
        };
    }
}

/// Where the evicted units could go (see [`taint`]).
fn replace_evicted(
    sched: &Scheduler,
    evictions: &[PodEviction],
    none_rule: Option<&DeviceTaintRule>,
    target: &Tainted,
) -> Vec<PlanRow> {
    let Some(horizon) = evictions.iter().map(|e| e.at).max() else {
        return Vec::new();
    };
    let mut what_if = sched.clone();
    if let Some(rule) = none_rule {
        let mut r = rule.clone();
        r.taint.effect = DeviceTaintEffect::NoExecute;
        if what_if.replace_taint_rule(r).is_err() {
            return Vec::new();
        }
    }
    what_if.advance(horizon);
    let mut originals: Vec<Pod> = Vec::new();
    for e in evictions {
        if let Some(p) = sched.pod(&e.pod)
            && !originals.contains(p)
        {
            originals.push(p.clone());
        }
    }
    rehome(what_if, &originals, target)
}

/// Where evicted pods could go: `originals` (as they were bound) are added back to
/// `what_if` (whose evictions are carried out) as pending copies, unless still there,
/// and one cycle runs; one row per unit that got a pod back, with `evicted again at
/// ...` when the new home is itself due for eviction.
pub(crate) fn rehome(mut what_if: Scheduler, originals: &[Pod], target: &Tainted) -> Vec<PlanRow> {
    let mut pods: Vec<String> = Vec::new();
    for original in originals {
        let key = format!("{}/{}", original.namespace, original.name);
        if pods.contains(&key) || what_if.pod(&key).is_some() {
            continue;
        }
        let mut copy = original.clone();
        copy.node_name = None;
        if what_if.add_pod(copy).is_ok() {
            pods.push(key);
        }
    }
    let units = units_of(&what_if, &pods);
    let report = what_if.cycle();
    // A new home may be one the taint evicts from again (a claim that tolerates it for
    // a while may be allocated on the tainted device; the time is already up).
    what_if.refresh_evictions();
    let again = describe(&what_if, &what_if.scheduled_evictions(), target);
    units
        .iter()
        .map(|u| {
            let mut r = match report.units.iter().find(|(x, _)| x == u) {
                Some((_, result)) => row(&what_if, u, result),
                None => untried_row(&what_if, u),
            };
            let placed = matches!(r.outcome, Outcome::Placed | Outcome::Preempted);
            // The earliest, preferring a direct reason to a group member's.
            let evicted = again
                .iter()
                .filter(|e| r.pods.iter().any(|p| p.pod == e.pod && p.node.is_some()))
                .min_by_key(|e| (e.at, matches!(e.reason, EvictionReason::GroupMember { .. })));
            if placed && let Some(e) = evicted {
                let sep = if r.reason.is_empty() { "" } else { "; " };
                r.reason = format!(
                    "{}{sep}evicted again at {}: {}",
                    r.reason, e.at_rfc3339, e.why
                );
            }
            r
        })
        .collect()
}
