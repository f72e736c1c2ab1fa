//! What changed since the previous cycle: each change, and how it is printed.

use std::collections::{BTreeMap, BTreeSet};

use gangpack::{Scheduler, Unit};
use gangpack_k8s::check::{Finding, FindingObject};
use gangpack_k8s::output::{Outcome, Plan, PlanRow, PodPlacement};
use serde_json::{Value, json};

use crate::plan::reason_line;
use crate::render::{Paint, plural};

/// One change a cycle reports (see the module docs of `watch` for when each is
/// reported).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A unit previous cycles saw pending runs: the cluster bound its pods.
    Bound {
        /// `PodGroup ns/name` or `Pod ns/name`.
        unit: String,
        /// Its running pods and their nodes.
        pods: Vec<PodPlacement>,
        /// Where gangpack's last cycle placed (or nominated) its pods, if it did.
        planned: Option<Vec<PodPlacement>>,
    },
    /// A unit previous cycles saw pending has no pod pending or running any more.
    Gone {
        /// The unit.
        unit: String,
    },
    /// A running pod's `NoExecute` eviction is due: the eviction controllers evict it.
    Evicted {
        /// The pod, `namespace/name`.
        pod: String,
        /// When it fell due, RFC 3339.
        at: String,
        /// The `DisruptionTarget` reason they write.
        reason: String,
        /// Why, in one line.
        why: String,
    },
    /// A running pod's `NoExecute` eviction is scheduled for later.
    Due {
        /// The pod.
        pod: String,
        /// When, RFC 3339.
        at: String,
        /// Why.
        why: String,
    },
    /// The cycle places a unit.
    Placed {
        /// The unit.
        unit: String,
        /// Its pods and their nodes.
        pods: Vec<PodPlacement>,
        /// Its devices, `driver/pool/device`.
        devices: Vec<String>,
    },
    /// The cycle places a unit by preempting lower-priority work.
    Preempted {
        /// The unit.
        unit: String,
        /// Its pods and their nominated nodes.
        pods: Vec<PodPlacement>,
        /// The devices it is to get.
        devices: Vec<String>,
        /// The victims, `PodGroup ns/name` or `Pod ns/name`.
        victims: Vec<String>,
    },
    /// A unit is newly pending, or pending for another reason.
    Pending {
        /// The unit.
        unit: String,
        /// The plan's one-line reason (the explanation's summary).
        reason: String,
        /// The verdict line ([`gangpack::Verdict`]): what would get it placed.
        verdict: String,
    },
    /// The cycle refuses a unit as invalid.
    Invalid {
        /// The unit.
        unit: String,
        /// The line `plan` prints for it.
        reason: String,
    },
    /// The cycle fails a unit (a selector's runtime error).
    Failed {
        /// The unit.
        unit: String,
        /// The line `plan` prints for it.
        reason: String,
    },
    /// `--audit`: a rule the cluster's state newly breaks.
    Finding(Finding),
    /// `--audit`: a finding that no longer holds.
    Cleared(Finding),
}

impl Change {
    /// The word that starts its line: `bound`, `gone`, `evicted`, `due`, `placed`,
    /// `preempted`, `pending`, `invalid`, `failed`, `finding`, `cleared`.
    pub fn word(&self) -> &'static str {
        match self {
            Change::Bound { .. } => "bound",
            Change::Gone { .. } => "gone",
            Change::Evicted { .. } => "evicted",
            Change::Due { .. } => "due",
            Change::Placed { .. } => "placed",
            Change::Preempted { .. } => "preempted",
            Change::Pending { .. } => "pending",
            Change::Invalid { .. } => "invalid",
            Change::Failed { .. } => "failed",
            Change::Finding(_) => "finding",
            Change::Cleared(_) => "cleared",
        }
    }

    pub(crate) fn paint(&self) -> Paint {
        match self {
            Change::Bound { .. } | Change::Placed { .. } | Change::Cleared(_) => Paint::Green,
            Change::Due { .. } | Change::Preempted { .. } => Paint::Yellow,
            Change::Evicted { .. }
            | Change::Pending { .. }
            | Change::Invalid { .. }
            | Change::Failed { .. }
            | Change::Finding(_) => Paint::Red,
            Change::Gone { .. } => Paint::Plain,
        }
    }

    /// What follows the word, in one line.
    pub fn line(&self) -> String {
        match self {
            Change::Bound {
                unit,
                pods,
                planned,
            } => {
                let suffix = match planned {
                    Some(p) if as_planned(pods, p) => " (as planned)".to_owned(),
                    Some(p) => format!(" (gangpack placed it on {})", nodes(p.iter())),
                    None => String::new(),
                };
                format!("{unit}: {}{suffix}", on_nodes(pods))
            }
            Change::Gone { unit } => format!("{unit}: no pod of it is pending or running"),
            Change::Evicted {
                pod,
                at,
                reason,
                why,
            } => format!("Pod {pod} (due {at}, {reason}): {why}"),
            Change::Due { pod, at, why } => format!("Pod {pod} at {at}: {why}"),
            Change::Placed {
                unit,
                pods,
                devices,
            } => format!(
                "{unit}: {}, {}",
                on_nodes(pods),
                plural(devices.len(), "device", "devices")
            ),
            Change::Preempted {
                unit,
                pods,
                devices,
                victims,
            } => format!(
                "{unit}: {}, {}, preempting {}",
                on_nodes(pods),
                plural(devices.len(), "device", "devices"),
                victims.join(", ")
            ),
            Change::Pending { verdict, .. } => verdict.clone(),
            Change::Invalid { reason, .. } | Change::Failed { reason, .. } => reason.clone(),
            Change::Finding(f) | Change::Cleared(f) => format!("{}: {}", f.rule, f.message),
        }
    }

    /// The change as data: `{"change": WORD, ...}` with its fields (as `-o json`
    /// prints it, where the fields keep the order of [`Change::fields`]).
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.fields()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// The fields of [`Change::to_json`], `change` first, in the order `-o json`
    /// prints them.
    pub fn fields(&self) -> Vec<(&'static str, Value)> {
        let pods_json = |pods: &[PodPlacement]| -> Value {
            pods.iter()
                .map(|p| json!({"pod": p.pod, "node": p.node}))
                .collect()
        };
        let mut f: Vec<(&'static str, Value)> = vec![("change", json!(self.word()))];
        match self {
            Change::Bound {
                unit,
                pods,
                planned,
            } => {
                f.push(("unit", json!(unit)));
                f.push(("pods", pods_json(pods)));
                f.push(("planned", planned.as_deref().map_or(Value::Null, pods_json)));
                f.push((
                    "asPlanned",
                    json!(planned.as_deref().map(|p| as_planned(pods, p))),
                ));
            }
            Change::Gone { unit } => f.push(("unit", json!(unit))),
            Change::Evicted {
                pod,
                at,
                reason,
                why,
            } => {
                f.push(("pod", json!(pod)));
                f.push(("at", json!(at)));
                f.push(("reason", json!(reason)));
                f.push(("why", json!(why)));
            }
            Change::Due { pod, at, why } => {
                f.push(("pod", json!(pod)));
                f.push(("at", json!(at)));
                f.push(("why", json!(why)));
            }
            Change::Placed {
                unit,
                pods,
                devices,
            } => {
                f.push(("unit", json!(unit)));
                f.push(("pods", pods_json(pods)));
                f.push(("devices", json!(devices)));
            }
            Change::Preempted {
                unit,
                pods,
                devices,
                victims,
            } => {
                f.push(("unit", json!(unit)));
                f.push(("pods", pods_json(pods)));
                f.push(("devices", json!(devices)));
                f.push(("victims", json!(victims)));
            }
            Change::Pending {
                unit,
                reason,
                verdict,
            } => {
                f.push(("unit", json!(unit)));
                f.push(("verdict", json!(verdict)));
                f.push(("reason", json!(reason)));
            }
            Change::Invalid { unit, reason } | Change::Failed { unit, reason } => {
                f.push(("unit", json!(unit)));
                f.push(("reason", json!(reason)));
            }
            Change::Finding(x) | Change::Cleared(x) => {
                f.push(("rule", json!(x.rule)));
                f.push(("message", json!(x.message)));
                f.push((
                    "objects",
                    x.objects.iter().map(object_json).collect::<Value>(),
                ));
            }
        }
        f
    }
}

/// `{"k": v, ...}` on one line, the fields in the order given.
pub(crate) fn ordered(fields: &[(&str, Value)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String((*k).to_owned()).to_string());
        out.push(':');
        out.push_str(&v.to_string());
    }
    out.push('}');
    out
}

/// `{"kind", "namespace"?, "name"}`, as `gangpack check -o json` prints an object.
fn object_json(o: &FindingObject) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

/// `2 pods on n1 n2` (distinct nodes, in order).
fn on_nodes(pods: &[PodPlacement]) -> String {
    format!(
        "{} on {}",
        plural(pods.len(), "pod", "pods"),
        nodes(pods.iter())
    )
}

/// Whether every running pod runs where it was planned.
fn as_planned(running: &[PodPlacement], planned: &[PodPlacement]) -> bool {
    running
        .iter()
        .all(|p| planned.iter().any(|q| q.pod == p.pod && q.node == p.node))
}

/// The distinct nodes of some pods, in order, space-separated.
fn nodes<'a>(pods: impl Iterator<Item = &'a PodPlacement>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for p in pods {
        if let Some(n) = p.node.as_deref()
            && !seen.contains(&n)
        {
            seen.push(n);
        }
    }
    seen.join(" ")
}

/// `PodGroup ns/name` or `Pod ns/name`, the key of a unit across cycles.
fn unit_key(row: &PlanRow) -> String {
    format!("{} {}", row.kind, row.name)
}

/// What the previous cycle reported, to say what changed since.
#[derive(Clone, Debug, Default)]
pub(crate) struct View {
    /// The units the cycle took (pending in the cluster), with their row.
    rows: BTreeMap<String, PlanRow>,
    /// Where the cycle placed each unit it placed or nominated (for `bound`).
    planned: BTreeMap<String, Vec<PodPlacement>>,
    /// Pods whose eviction was due.
    evicted: BTreeSet<String>,
    /// Evictions scheduled for later: (pod, time).
    due: BTreeSet<(String, String)>,
    /// `--audit`: the findings, by (rule, message).
    findings: BTreeMap<(String, String), Finding>,
}

/// The running pods of each unit, before the cycle: `PodGroup ns/g` or `Pod ns/p` →
/// its pods with their nodes (pending ones with none).
pub(crate) fn observed(sched: &Scheduler) -> BTreeMap<String, Vec<PodPlacement>> {
    let mut out: BTreeMap<String, Vec<PodPlacement>> = BTreeMap::new();
    for p in sched.pods() {
        let key = match &p.scheduling_group {
            Some(g) => format!("PodGroup {}/{g}", p.namespace),
            None => format!("Pod {}/{}", p.namespace, p.name),
        };
        out.entry(key).or_default().push(PodPlacement {
            pod: format!("{}/{}", p.namespace, p.name),
            node: p.node_name.clone(),
        });
    }
    out
}

/// The changes between `prev` and this cycle's plan (the scheduler after it, for the
/// verdicts), and the view to compare the next cycle with. `observed` is what ran
/// before the cycle; `findings` the audit's, when asked.
pub(crate) fn diff(
    prev: &View,
    plan: &Plan,
    sched: &Scheduler,
    observed: &BTreeMap<String, Vec<PodPlacement>>,
    findings: Option<&[Finding]>,
) -> (Vec<Change>, View) {
    let mut changes = Vec::new();
    let mut next = View::default();
    let taken: BTreeSet<String> = plan.rows.iter().map(unit_key).collect();

    // Units no longer pending: bound by the cluster, or gone.
    for unit in prev.rows.keys().filter(|u| !taken.contains(*u)) {
        let running: Vec<PodPlacement> = observed
            .get(unit)
            .map(|pods| pods.iter().filter(|p| p.node.is_some()).cloned().collect())
            .unwrap_or_default();
        if running.is_empty() {
            changes.push(Change::Gone { unit: unit.clone() });
            continue;
        }
        changes.push(Change::Bound {
            unit: unit.clone(),
            pods: running,
            planned: prev.planned.get(unit).cloned(),
        });
    }
    // Evictions.
    for e in &plan.evictions.carried_out {
        if !prev.evicted.contains(&e.pod) {
            changes.push(Change::Evicted {
                pod: e.pod.clone(),
                at: e.at_rfc3339.clone(),
                reason: e.condition_reason.to_owned(),
                why: e.why.clone(),
            });
        }
        next.evicted.insert(e.pod.clone());
    }
    for e in &plan.evictions.upcoming {
        let key = (e.pod.clone(), e.at_rfc3339.clone());
        if !prev.due.contains(&key) {
            changes.push(Change::Due {
                pod: e.pod.clone(),
                at: e.at_rfc3339.clone(),
                why: e.why.clone(),
            });
        }
        next.due.insert(key);
    }

    // The units the cycle took.
    for row in &plan.rows {
        let unit = unit_key(row);
        if matches!(row.outcome, Outcome::Placed | Outcome::Preempted) {
            next.planned.insert(unit.clone(), row.pods.clone());
        }
        if prev.rows.get(&unit) != Some(row) {
            changes.push(change_of(row, &unit, sched));
        }
        next.rows.insert(unit, row.clone());
    }

    // The audit's findings.
    if let Some(findings) = findings {
        for f in findings {
            let key = (f.rule.clone(), f.message.clone());
            if !prev.findings.contains_key(&key) {
                changes.push(Change::Finding(f.clone()));
            }
            next.findings.insert(key, f.clone());
        }
        for (key, f) in &prev.findings {
            if !next.findings.contains_key(key) {
                changes.push(Change::Cleared(f.clone()));
            }
        }
    }
    (changes, next)
}

/// The change that reports a unit's row.
fn change_of(row: &PlanRow, unit: &str, sched: &Scheduler) -> Change {
    let unit = unit.to_owned();
    match row.outcome {
        Outcome::Placed => Change::Placed {
            unit,
            pods: row.pods.clone(),
            devices: row.devices.clone(),
        },
        Outcome::Preempted => Change::Preempted {
            unit,
            pods: row.pods.clone(),
            devices: row.devices.clone(),
            victims: row.victims.clone(),
        },
        Outcome::Pending => Change::Pending {
            verdict: verdict_line(row, sched),
            reason: row.reason.clone(),
            unit,
        },
        Outcome::Invalid => Change::Invalid {
            unit,
            reason: reason_line(row),
        },
        Outcome::Failed => Change::Failed {
            unit,
            reason: reason_line(row),
        },
    }
}

/// The verdict on a pending unit ([`Scheduler::verdict`], against the state after the
/// cycle, as `explain` gives it), or the plan's reason line for a unit the scheduler
/// does not hold (one waiting for a claim that is not there).
fn verdict_line(row: &PlanRow, sched: &Scheduler) -> String {
    let unit = match row.kind {
        "PodGroup" => Unit::Group(row.name.clone()),
        _ => Unit::Pod(row.name.clone()),
    };
    match sched.verdict(&unit) {
        Ok(v) => v.to_string(),
        Err(_) => reason_line(row),
    }
}
