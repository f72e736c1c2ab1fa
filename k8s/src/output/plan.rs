//! One scheduling cycle written back as the objects kube-scheduler would change.

use std::collections::BTreeSet;

use gangpack::{
    ClaimAllocation, ClaimSource, CycleReport, GangOutcome, PlacementDecision, Pod,
    PodResourceClaim, Preemption, Scheduler, Time, Unit, UnitResult, generated_claim_name,
    generated_group_claim_name,
};
use serde::Serialize;
use serde_json::{Value, json};

use super::allocation::allocation_to_json;
use super::evict::{self, Evictions};
use super::patch::{
    Changes, Condition, Style, array_at, condition_status, object_at, set_condition, split_key, uid,
};
use crate::{Kind, Snapshot};

/// The finalizer kube-scheduler puts on every claim it allocates.
pub const DELETE_PROTECTION_FINALIZER: &str = "resource.kubernetes.io/delete-protection";

/// What a cycle did with a unit (the core's [`UnitOutcome`](gangpack::UnitOutcome)).
pub use gangpack::UnitOutcome as Outcome;

/// One pod of a row and where it goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodPlacement {
    /// The pod, `namespace/name`.
    pub pod: String,
    /// Its node (bound, or nominated for a preemptor); `None` while pending.
    pub node: Option<String>,
}

/// One unit of a cycle, for a human table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanRow {
    /// `PodGroup` or `Pod`.
    pub kind: &'static str,
    /// The unit, `namespace/name`.
    pub name: String,
    /// What happened.
    pub outcome: Outcome,
    /// Its pods: the ones placed (or nominated), else the pending ones.
    pub pods: Vec<PodPlacement>,
    /// The devices allocated (or planned, for a preemptor), `driver/pool/device`, in
    /// allocation order.
    pub devices: Vec<String>,
    /// How many devices that is (GPUs, and CPUs, NICs, channels and any other
    /// device a claim allocates).
    pub device_count: usize,
    /// The preemption victims: `PodGroup ns/name` or `Pod ns/name`.
    pub victims: Vec<String>,
    /// The one-line reason: the explanation summary for a pending unit, the error for
    /// an invalid or failed one, the preemption message for a preemptor, empty when
    /// placed.
    pub reason: String,
}

/// The result of [`plan`]: the cycle's report, the objects it changes, and a table.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// What the core decided, unit by unit (not serialized: it carries validation
    /// errors; [`rows`](Self::rows) has the same in table form).
    #[serde(skip)]
    pub report: CycleReport,
    /// The whole changed objects, as the API would store them, in kind order
    /// ([`Kind::ALL`]), then namespace, then name. Generated ResourceClaims are new
    /// objects and always listed.
    pub changed: Vec<Value>,
    /// The objects that [`changed`](Self::changed) names by a uid gangpack derived
    /// because the input has none ([`Snapshot::derived_uid`]), `Kind ns/name`, sorted:
    /// applied to a cluster, those references do not match the real objects.
    pub derived_uids: Vec<String>,
    /// One row per unit, in the order the cycle took them (the first
    /// `report.units.len()`), then one per unit held back waiting for an object not in
    /// the input ([`Snapshot::waiting`]), pending.
    pub rows: Vec<PlanRow>,
    /// The `NoExecute` evictions carried out before the cycle, those still to come, and
    /// where the evicted units could go.
    pub evictions: Evictions,
}

/// `{"apiVersion": "v1", "kind": "List", "items": [...], "metadata": {"resourceVersion": ""}}`,
/// as `kubectl get -o json` prints several objects.
///
/// ```
/// let l = gangpack_k8s::output::list(vec![serde_json::json!({"kind": "Pod"})]);
/// assert_eq!(l["kind"], "List");
/// assert_eq!(l["items"][0]["kind"], "Pod");
/// assert_eq!(l["metadata"]["resourceVersion"], "");
/// ```
pub fn list(items: Vec<Value>) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("apiVersion".into(), Value::String("v1".into()));
    out.insert("kind".into(), Value::String("List".into()));
    out.insert("items".into(), Value::Array(items));
    out.insert("metadata".into(), json!({"resourceVersion": ""}));
    Value::Object(out)
}

/// Runs one scheduling cycle on the snapshot's scheduler and writes the decisions back
/// into the loaded objects, as kube-scheduler (and the API server's binding subresource)
/// would write them. Every field gangpack does not own is kept as loaded.
///
/// Claims gangpack generated from templates are written as new objects, and their pod
/// or PodGroup names each in `status.resourceClaimStatuses` (`{name, resourceClaimName}`),
/// as the resourceclaim controller records them; a pod's extended-resource claim is
/// named in `status.extendedResourceClaimStatus` with its `requestMappings`. Read back,
/// they are used instead of being generated again.
///
/// **First, the evictions already due.** The input is the state at the scheduler's
/// clock (`--now`, default the latest timestamp in the input), so the cycle starts
/// from what Kubernetes' device-taint eviction controller and node taint manager would
/// have done by then: every bound pod whose eviction is due at or before the clock is
/// evicted (a claim's device with a `NoExecute` taint its allocation does not tolerate,
/// due at the taint's `timeAdded` plus the least explicit `tolerationSeconds`; a node
/// `NoExecute` taint, timed from when the pod was bound or the taint added, whichever
/// is later; every bound member of a `disruptionMode: All` PodGroup with one of them),
/// its claims are released, and the cycle runs on what that frees. The evicted pods are
/// written as the controllers and the API server leave them (see
/// [`Evictions`] and `evict::write`: `DisruptionTarget=True`, reason
/// `DeletionByDeviceTaintManager` or `DeletionByTaintManager`, and the graceful delete's
/// `deletionTimestamp`), their claims without their `reservedFor` entries (and without
/// `status.allocation` when no user is left). Evictions not yet due are listed in
/// [`Plan::evictions`] with their times and not carried out.
///
/// Per unit:
///
/// - **Placed.** Each pod gets `spec.nodeName` and `PodScheduled=True` (no reason, as
///   the binding subresource sets it). Each claim allocated gets `status.allocation`
///   ([`allocation_to_json`]), the finalizer [`DELETE_PROTECTION_FINALIZER`], and
///   `status.reservedFor` entries: `{resource: pods, name, uid}` for each newly bound
///   pod naming it, or, for a claim of the PodGroup (KEP-5729), one `{apiGroup:
///   scheduling.k8s.io, resource: podgroups, name, uid}`. Existing entries are kept.
///   The PodGroup gets `PodGroupInitiallyScheduled=True`, reason `Scheduled`, empty
///   message (kube-scheduler's `submitPodGroupAlgorithmResult`). Members left pending
///   (beyond `minCount`) get `PodScheduled=False` as below.
/// - **Preempted.** Victim pods get `DisruptionTarget=True`, reason
///   `PreemptionByScheduler`, message `<schedulerName>: preempting to accommodate a
///   higher priority pod` (`... pod group` when the preemptor is a PodGroup), as the
///   preemption executor writes before deleting them; a victim PodGroup
///   (`disruptionMode: All`) gets the same condition. The preemptor is **not bound**:
///   upstream nominates it (`status.nominatedNodeName`) and binds it in a later cycle,
///   once the victims are gone; its pods get `PodScheduled=False`, reason
///   `Unschedulable`, and its claims are not written (they are allocated at binding).
///   The message is upstream's preemption status: `preemption: found a potential
///   placement for pod on node <node>, preempting <n> victims` for a pod, `pod group
///   preemption: found a placement for podgroup, preempting <n> victims` for a group
///   (whose `PodGroupInitiallyScheduled=False`, reason `Unschedulable`, carries it
///   too). The victims' claims are released later by the resourceclaim controller and
///   are not written either. (The snapshot's scheduler has committed the placement:
///   [`Plan::report`] and the scheduler say where the preemptor goes.)
/// - **Pending.** Pending pods get `PodScheduled=False`, reason `Unschedulable`,
///   message the one-line explanation ([`gangpack::Explanation::summary`], computed
///   after the cycle), and lose `status.nominatedNodeName`; the PodGroup gets
///   `PodGroupInitiallyScheduled=False` with the same reason and message.
/// - **Invalid / Failed.** The same with reason `SchedulerError` and the error as
///   message.
///
/// Conditions carry `lastTransitionTime` from the scheduler's logical clock, replace a
/// condition of the same type (keeping its `lastTransitionTime` when the status does
/// not change) and keep the others; `observedGeneration` is `metadata.generation` when
/// the object has one. `PodGroupInitiallyScheduled=True` is terminal: it is never set
/// back to False. Objects that end up unchanged are not listed.
pub fn plan(snapshot: &mut Snapshot) -> Plan {
    let mut evictions = evict::carry_out(&mut snapshot.scheduler);
    let report = snapshot.scheduler.cycle();
    let snapshot: &Snapshot = snapshot;
    let sched = &snapshot.scheduler;
    let now = sched.now();
    let mut changes = Changes::new(snapshot);
    evict::write(&mut changes, sched, &evictions, now);
    evictions.replacements = evict::replacements(sched, &evictions);
    for g in &snapshot.generated {
        changes.add_new(
            Kind::ResourceClaim,
            &g.claim.namespace,
            &g.claim.name,
            g.raw.clone(),
        );
        record_generated_claim(&mut changes, g);
    }
    let mut rows = Vec::with_capacity(report.units.len());
    for (unit, result) in &report.units {
        let mut row = row(sched, unit, result);
        if matches!(result, UnitResult::Invalid(_) | UnitResult::Failed(_)) {
            row.reason = on_templates(snapshot, &row.reason);
        }
        match result {
            UnitResult::Scheduled(d) => write_scheduled(&mut changes, sched, unit, d, now),
            UnitResult::Preempted(p) => write_preempted(&mut changes, sched, unit, p, &row, now),
            UnitResult::Pending(_) => {
                write_failure(&mut changes, sched, unit, "Unschedulable", &row.reason, now);
            }
            UnitResult::Invalid(_) | UnitResult::Failed(_) => write_failure(
                &mut changes,
                sched,
                unit,
                "SchedulerError",
                &row.reason,
                now,
            ),
        }
        rows.push(row);
    }
    add_waiting(&mut rows, snapshot);
    let objects = changes.finish();
    Plan {
        derived_uids: super::patch::derived_uids(&objects),
        report,
        changed: objects,
        rows,
        evictions,
    }
}

// ------------------------------------------------------------------------------- rows

/// The table row of a unit's result, explained against `sched` (after the cycle): the
/// core's [`UnitRow`](gangpack::UnitRow), as the table and JSON show it.
pub(crate) fn row(sched: &Scheduler, unit: &Unit, result: &UnitResult) -> PlanRow {
    let r = sched.unit_row(unit, result);
    let devices: Vec<String> = r.devices().cloned().collect();
    PlanRow {
        kind: r.kind(),
        name: r.name().to_owned(),
        outcome: r.outcome,
        pods: r
            .pods
            .into_iter()
            .map(|p| PodPlacement {
                pod: p.pod,
                node: p.node,
            })
            .collect(),
        device_count: devices.len(),
        devices,
        victims: r.victims.iter().map(|v| v.unit.to_string()).collect(),
        reason: r.reason,
    }
}

/// An error about a claim gangpack generated from a ResourceClaimTemplate, told about
/// the template, where it is in the input, and who the claim was for: the claim does
/// not exist anywhere the user could look (`ResourceClaim "ml/w-0-gpus-rnnv5":
/// spec.devices...` becomes `cluster.yaml doc 3: ResourceClaimTemplate "ml/gpus" (for
/// the claim ml/w-0-gpus-rnnv5 of Pod ml/w-0): spec.spec.devices...`).
pub fn on_templates(snapshot: &Snapshot, reason: &str) -> String {
    let mut out = reason.to_owned();
    for g in &snapshot.generated {
        let (Some(entry), ns) = (&g.entry, &g.claim.namespace) else {
            continue;
        };
        let named = format!("ResourceClaim \"{ns}/{}\"", g.claim.name);
        let Some(at) = out.find(&named) else {
            continue;
        };
        let (kind, owner) = match &g.owner {
            crate::Owner::Pod { name, .. } => (Kind::Pod, name),
            crate::Owner::PodGroup { name, .. } => (Kind::PodGroup, name),
        };
        let Some(owner_object) = snapshot.object(kind, Some(ns), owner) else {
            continue;
        };
        let template = owner_object.raw["spec"]["resourceClaims"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["name"].as_str() == Some(entry))
            .and_then(|c| c["resourceClaimTemplateName"].as_str());
        let Some(t) =
            template.and_then(|t| snapshot.object(Kind::ResourceClaimTemplate, Some(ns), t))
        else {
            continue;
        };
        let mut told = format!(
            "{}: {} (for the claim {ns}/{} of {kind} {ns}/{owner})",
            t.source,
            t.describe(),
            g.claim.name
        );
        let rest = &out[at + named.len()..];
        // The claim's fields are the template's `spec.spec...`.
        let rest = match rest.strip_prefix(": spec.") {
            Some(field) => format!(": spec.spec.{field}"),
            None => rest.to_owned(),
        };
        told.push_str(&rest);
        out = format!("{}{told}", &out[..at]);
    }
    out
}

/// The rows of the units held back ([`Snapshot::waiting`]): a waiting PodGroup or pod
/// gets a pending row of its own, except a pod whose PodGroup the cycle took, which is
/// named in that group's reason (when the group is not placed); then one row per
/// PodGroup that pending pods name but the input lacks (its pods wait for it).
fn add_waiting(rows: &mut Vec<PlanRow>, snapshot: &Snapshot) {
    for w in &snapshot.waiting {
        match (w.kind, &w.on, &w.group) {
            // In its group's row.
            (Kind::Pod, crate::WaitingOn::Group, _) => {}
            (Kind::Pod, _, Some(g)) => {
                let group = format!("{}/{g}", w.namespace);
                if let Some(row) = rows
                    .iter_mut()
                    .find(|r| r.kind == "PodGroup" && r.name == group)
                {
                    if row.outcome != Outcome::Placed && row.outcome != Outcome::Preempted {
                        row.reason = format!("{}; {} is {}", row.reason, w.unit(), w.reason());
                    }
                    continue;
                }
                rows.push(waiting_row(snapshot, w));
            }
            _ => rows.push(waiting_row(snapshot, w)),
        }
    }
    // Pending pods naming a PodGroup that is not in the input wait for it: one row per
    // missing group.
    let sched = &snapshot.scheduler;
    let mut missing: std::collections::BTreeMap<String, Vec<String>> =
        std::collections::BTreeMap::new();
    for p in sched.pods().filter(|p| p.node_name.is_none()) {
        if let Some(g) = &p.scheduling_group {
            let group = format!("{}/{g}", p.namespace);
            if sched.group(&group).is_none() {
                missing
                    .entry(group)
                    .or_default()
                    .push(format!("{}/{}", p.namespace, p.name));
            }
        }
    }
    for (group, mut pods) in missing {
        crate::natural_sort(&mut pods);
        rows.push(PlanRow {
            kind: "PodGroup",
            reason: format!("PodGroup {group}: {}", waiting_for_group(pods.len())),
            name: group,
            outcome: Outcome::Pending,
            pods: pods
                .into_iter()
                .map(|pod| PodPlacement { pod, node: None })
                .collect(),
            devices: Vec::new(),
            device_count: 0,
            victims: Vec::new(),
        });
    }
}

/// Why `pods` pending pods naming a PodGroup that is not in the input wait:
/// `waiting for the PodGroup: it is not in the input; the scheduler holds the 2 pods
/// naming it (spec.schedulingGroup.podGroupName) until it exists`.
fn waiting_for_group(pods: usize) -> String {
    let held = if pods == 1 {
        "the pod".to_owned()
    } else {
        format!("the {pods} pods")
    };
    format!(
        "waiting for the PodGroup: it is not in the input; the scheduler holds {held} naming \
         it (spec.schedulingGroup.podGroupName) until it exists"
    )
}

fn waiting_row(snapshot: &Snapshot, w: &crate::Waiting) -> PlanRow {
    let name = format!("{}/{}", w.namespace, w.name);
    let pods = if w.kind == Kind::PodGroup {
        snapshot
            .waiting
            .iter()
            .filter(|p| {
                p.kind == Kind::Pod
                    && p.namespace == w.namespace
                    && p.group.as_deref() == Some(w.name.as_str())
            })
            .map(|p| PodPlacement {
                pod: format!("{}/{}", p.namespace, p.name),
                node: None,
            })
            .collect()
    } else {
        vec![PodPlacement {
            pod: name.clone(),
            node: None,
        }]
    };
    PlanRow {
        kind: w.kind.as_str(),
        reason: format!("{}: {}", w.unit(), w.reason()),
        name,
        outcome: Outcome::Pending,
        pods,
        devices: Vec::new(),
        device_count: 0,
        victims: Vec::new(),
    }
}

/// A pending unit that was not tried (its members are missing, say): its row.
pub(crate) fn untried_row(sched: &Scheduler, unit: &Unit) -> PlanRow {
    row(
        sched,
        unit,
        &UnitResult::Pending(GangOutcome::Unschedulable {
            required: 0,
            best: 0,
        }),
    )
}

fn allocations(d: &PlacementDecision) -> impl Iterator<Item = &ClaimAllocation> {
    d.bindings
        .iter()
        .flat_map(|b| &b.claims)
        .chain(&d.group_claims)
}

/// The unit's pods (a group's members), bound or not, sorted.
fn unit_pods(sched: &Scheduler, unit: &Unit) -> Vec<String> {
    match unit {
        Unit::Pod(p) => vec![p.clone()],
        Unit::Group(g) => {
            let (ns, name) = split_key(g);
            let mut pods: Vec<String> = sched
                .pods()
                .filter(|p| p.namespace == ns && p.scheduling_group.as_deref() == Some(name))
                .map(|p| format!("{}/{}", p.namespace, p.name))
                .collect();
            crate::natural_sort(&mut pods);
            pods
        }
    }
}

/// The unit's pods that are not bound, sorted.
fn pending_pods(sched: &Scheduler, unit: &Unit) -> Vec<String> {
    unit_pods(sched, unit)
        .into_iter()
        .filter(|p| sched.pod(p).is_some_and(|p| p.node_name.is_none()))
        .collect()
}

/// The owner of a claim generated from a template names it in
/// `status.resourceClaimStatuses` (`{name: <entry>, resourceClaimName: <claim>}`), as
/// the resourceclaim controller records it when it creates the claim; an entry for the
/// same claim entry is replaced, others kept.
fn record_generated_claim(changes: &mut Changes<'_>, g: &crate::GeneratedClaim) {
    let Some(entry) = &g.entry else {
        // A pod's extended-resource claim: `status.extendedResourceClaimStatus`.
        if let crate::Owner::Pod { namespace, name } = &g.owner
            && let Some(doc) = changes.get(Kind::Pod, namespace, name)
        {
            super::patch::object_at(doc, "status").insert(
                "extendedResourceClaimStatus".into(),
                json!({
                    "requestMappings": g.request_mappings,
                    "resourceClaimName": g.claim.name,
                }),
            );
        }
        return;
    };
    let (kind, ns, name) = match &g.owner {
        crate::Owner::Pod { namespace, name } => (Kind::Pod, namespace, name),
        crate::Owner::PodGroup { namespace, name } => (Kind::PodGroup, namespace, name),
    };
    let Some(doc) = changes.get(kind, ns, name) else {
        return;
    };
    let status = super::patch::object_at(doc, "status");
    let list = status
        .entry("resourceClaimStatuses")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let list = list.as_array_mut().expect("an array");
    let record = json!({"name": entry, "resourceClaimName": g.claim.name});
    match list.iter_mut().find(|e| e["name"] == **entry) {
        Some(e) => *e = record,
        None => list.push(record),
    }
}

// ----------------------------------------------------------------------------- writes

fn cond<'s>(kind: &'s str, status: bool, reason: &'s str, message: &'s str) -> Condition<'s> {
    Condition {
        kind,
        status,
        reason,
        message,
    }
}

/// Sets `PodGroupInitiallyScheduled` unless it is already True (terminal upstream).
fn set_group_scheduled(
    changes: &mut Changes<'_>,
    group: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: Time,
) {
    let (ns, name) = split_key(group);
    let Some(doc) = changes.get(Kind::PodGroup, ns, name) else {
        return;
    };
    if !status && condition_status(doc, "PodGroupInitiallyScheduled") == Some("True") {
        return;
    }
    set_condition(
        doc,
        &cond("PodGroupInitiallyScheduled", status, reason, message),
        now,
        Style::Meta,
    );
}

fn write_scheduled(
    changes: &mut Changes<'_>,
    sched: &Scheduler,
    unit: &Unit,
    d: &PlacementDecision,
    now: Time,
) {
    for b in &d.bindings {
        let (ns, name) = split_key(&b.pod);
        if let Some(doc) = changes.get(Kind::Pod, ns, name) {
            object_at(doc, "spec").insert("nodeName".into(), Value::String(b.node.clone()));
            set_condition(doc, &cond("PodScheduled", true, "", ""), now, Style::Pod);
        }
    }
    for c in allocations(d) {
        let (ns, name) = split_key(&c.claim);
        if let Some(doc) = changes.get(Kind::ResourceClaim, ns, name) {
            object_at(doc, "status")
                .insert("allocation".into(), allocation_to_json(&c.result, now));
            add_finalizer(doc);
        }
    }
    // reservedFor: each newly bound pod on the claims it names; PodGroup claims for
    // the group.
    for b in &d.bindings {
        let Some(pod) = sched.pod(&b.pod) else {
            continue;
        };
        let pod_uid = uid(
            changes.original(Kind::Pod, &pod.namespace, &pod.name),
            Kind::Pod,
            &pod.namespace,
            &pod.name,
        );
        for entry in &pod.resource_claims {
            let (claim, group) = claim_used(sched, pod, entry);
            if sched.allocation(&claim).is_none() {
                continue;
            }
            let consumer = match &group {
                Some(g) => group_consumer(changes, &pod.namespace, g),
                None => json!({"resource": "pods", "name": pod.name, "uid": pod_uid}),
            };
            reserve(changes, &claim, consumer);
        }
    }
    if let Unit::Group(g) = unit {
        let (ns, name) = split_key(g);
        for c in &d.group_claims {
            let consumer = group_consumer(changes, ns, name);
            reserve(changes, &c.claim, consumer);
        }
        set_group_scheduled(changes, g, true, "Scheduled", "", now);
        // Members beyond minCount that did not fit stay pending.
        let left = pending_pods(sched, unit);
        if !left.is_empty() {
            let reason = sched
                .explain(unit)
                .map_or_else(|e| e.to_string(), |x| x.summary());
            for p in left {
                write_pod_failure(changes, &p, "Unschedulable", &reason, now);
            }
        }
    }
}

fn write_preempted(
    changes: &mut Changes<'_>,
    sched: &Scheduler,
    unit: &Unit,
    p: &Preemption,
    row: &PlanRow,
    now: Time,
) {
    let scheduler_name = p
        .decision
        .bindings
        .first()
        .and_then(|b| sched.pod(&b.pod))
        .map_or(
            gangpack::DEFAULT_SCHEDULER_NAME,
            Pod::effective_scheduler_name,
        );
    let what = match unit {
        Unit::Group(_) => "pod group",
        Unit::Pod(_) => "pod",
    };
    let message = format!("{scheduler_name}: preempting to accommodate a higher priority {what}");
    let disruption = cond("DisruptionTarget", true, "PreemptionByScheduler", &message);
    for v in &p.victims {
        for pod in &v.pods {
            let (ns, name) = split_key(pod);
            if let Some(doc) = changes.get(Kind::Pod, ns, name) {
                set_condition(doc, &disruption, now, Style::Pod);
            }
        }
        if let Unit::Group(g) = &v.unit {
            let (ns, name) = split_key(g);
            if let Some(doc) = changes.get(Kind::PodGroup, ns, name) {
                set_condition(doc, &disruption, now, Style::Meta);
            }
        }
    }
    for b in &p.decision.bindings {
        let (ns, name) = split_key(&b.pod);
        if let Some(doc) = changes.get(Kind::Pod, ns, name) {
            object_at(doc, "status")
                .insert("nominatedNodeName".into(), Value::String(b.node.clone()));
            set_condition(
                doc,
                &cond("PodScheduled", false, "Unschedulable", &row.reason),
                now,
                Style::Pod,
            );
        }
    }
    if let Unit::Group(g) = unit {
        set_group_scheduled(changes, g, false, "Unschedulable", &row.reason, now);
    }
}

fn write_pod_failure(changes: &mut Changes<'_>, pod: &str, reason: &str, message: &str, now: Time) {
    let (ns, name) = split_key(pod);
    if let Some(doc) = changes.get(Kind::Pod, ns, name) {
        if let Some(status) = doc.get_mut("status").and_then(Value::as_object_mut) {
            status.remove("nominatedNodeName");
        }
        set_condition(
            doc,
            &cond("PodScheduled", false, reason, message),
            now,
            Style::Pod,
        );
    }
}

fn write_failure(
    changes: &mut Changes<'_>,
    sched: &Scheduler,
    unit: &Unit,
    reason: &str,
    message: &str,
    now: Time,
) {
    for p in pending_pods(sched, unit) {
        write_pod_failure(changes, &p, reason, message, now);
    }
    if let Unit::Group(g) = unit {
        set_group_scheduled(changes, g, false, reason, message, now);
    }
}

// ----------------------------------------------------------------------------- claims

/// The claim a pod's entry uses, `namespace/name`, and the pod's PodGroup name when the
/// entry is one of the group's claims (KEP-5729) — as the core's eviction resolves it.
fn claim_used(sched: &Scheduler, pod: &Pod, entry: &PodResourceClaim) -> (String, Option<String>) {
    let group = pod
        .scheduling_group
        .as_ref()
        .and_then(|g| sched.group(&format!("{}/{g}", pod.namespace)))
        .filter(|g| g.group_claim_for(entry).is_some());
    let name = match (&entry.source, group) {
        (ClaimSource::ClaimName(n), _) => n.clone(),
        (ClaimSource::Template(_), Some(g)) => {
            generated_group_claim_name(&pod.namespace, &g.name, &entry.name)
        }
        (ClaimSource::Template(_), None) => {
            generated_claim_name(&pod.namespace, &pod.name, &entry.name)
        }
    };
    (
        format!("{}/{name}", pod.namespace),
        group.map(|g| g.name.clone()),
    )
}

fn group_consumer(changes: &Changes<'_>, namespace: &str, group: &str) -> Value {
    json!({
        "apiGroup": "scheduling.k8s.io",
        "resource": "podgroups",
        "name": group,
        "uid": uid(
            changes.original(Kind::PodGroup, namespace, group),
            Kind::PodGroup,
            namespace,
            group
        ),
    })
}

/// Adds a consumer to a claim's `status.reservedFor` unless one with the same
/// resource and name (or uid) is there.
fn reserve(changes: &mut Changes<'_>, claim: &str, consumer: Value) {
    let (ns, name) = split_key(claim);
    let Some(doc) = changes.get(Kind::ResourceClaim, ns, name) else {
        return;
    };
    let list = array_at(object_at(doc, "status"), "reservedFor");
    let same = |x: &Value| {
        let uid = consumer["uid"].as_str().unwrap_or_default();
        (x.get("resource") == consumer.get("resource") && x.get("name") == consumer.get("name"))
            || (!uid.is_empty() && x.get("uid").and_then(Value::as_str) == Some(uid))
    };
    if !list.iter().any(same) {
        list.push(consumer);
    }
}

fn add_finalizer(doc: &mut Value) {
    let list = array_at(object_at(doc, "metadata"), "finalizers");
    if !list
        .iter()
        .any(|f| f.as_str() == Some(DELETE_PROTECTION_FINALIZER))
    {
        list.push(Value::String(DELETE_PROTECTION_FINALIZER.into()));
    }
}

/// The units the given pods belong to (their PodGroup if it exists, else the pod
/// itself), in first-seen order, each once.
pub(crate) fn units_of(sched: &Scheduler, pods: &[String]) -> Vec<Unit> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for p in pods {
        let unit = sched
            .pod(p)
            .and_then(|pod| {
                let g = format!("{}/{}", pod.namespace, pod.scheduling_group.as_ref()?);
                sched.group(&g).is_some().then_some(Unit::Group(g))
            })
            .unwrap_or_else(|| Unit::Pod(p.clone()));
        if seen.insert(unit.clone()) {
            out.push(unit);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use gangpack::{PlacementDecision, PodBinding, Preemption, Unit, Victim};

    use gangpack::preemption_message;

    fn preemption(victim_pods: &[&[&str]]) -> Preemption {
        Preemption {
            victims: victim_pods
                .iter()
                .map(|pods| Victim {
                    unit: Unit::Pod(pods[0].into()),
                    pods: pods.iter().map(|p| (*p).to_owned()).collect(),
                    priority: 1,
                    devices: 4,
                })
                .collect(),
            decision: PlacementDecision {
                bindings: vec![PodBinding {
                    pod: "ns/high".into(),
                    node: "n3".into(),
                    claims: vec![],
                }],
                group_claims: vec![],
            },
        }
    }

    /// The core only preempts for gangs today; the pod form is pinned here.
    #[test]
    fn preemption_messages() {
        let p = preemption(&[&["ns/a"], &["ns/b"]]);
        assert_eq!(
            preemption_message(&Unit::Pod("ns/high".into()), &p),
            "preemption: found a potential placement for pod on node n3, preempting 2 victims"
        );
        let p = preemption(&[&["ns/a", "ns/b", "ns/c"]]);
        assert_eq!(
            preemption_message(&Unit::Group("ns/g".into()), &p),
            "pod group preemption: found a placement for podgroup, preempting 3 victims"
        );
    }
}
