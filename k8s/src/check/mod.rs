//! Checking a cluster's state, as it is in a dump or after decisions are applied over
//! it, with the core's independent validator: the engine of `gangpack check`.
//!
//! [`check`] takes the dump's objects (and, optionally, decisions: patches and whole
//! objects over the dump's objects of the same kind, namespace and name, and
//! Bindings; see [`apply_decisions`] and `docs/DECISIONS.md`), and judges the **whole running state** they describe: every bound pod (`spec.nodeName`)
//! and every allocated claim (`status.allocation`), whoever scheduled them.
//!
//! How: the objects are built into a snapshot with every binding and allocation taken
//! out (the infrastructure, the claims, groups and pods as if nothing ran), and the
//! bindings and allocations are handed to [`gangpack::validate_placement`] as one
//! decision against that empty cluster — so double bookings, over-full shares and
//! counters, unreachable or mismatched devices and over-committed nodes are found
//! between any two of them — and each PodGroup's bound members to
//! [`gangpack::validate_gang`] (`minCount`, topology). An allocated claim that no bound
//! pod uses (its pod is not bound yet, or is terminating) still holds its devices: it
//! is recorded in the cluster first, and a second holder of one of its exclusive
//! devices is a finding.
//!
//! What holds only when a pod is placed is not held against pods that already run
//! (Kubernetes' semantics): a node's `NoSchedule` taints, its cordon and the pod's node
//! selector and required affinity (`IgnoredDuringExecution`), and a device's
//! `NoSchedule` taints. Such a finding is kept for a running pod or claim only when the
//! taint's `timeAdded` is not later than the binding (the pod's `PodScheduled`
//! condition, else its start or creation time) or the allocation
//! (`allocationTimestamp`), that is, when the taint was there when it was placed, or
//! with [`CheckOptions::admission`]. Bindings and allocations that the decisions change
//! or add are new and are held to every rule. `NoExecute` taints are held against
//! everything: a pod whose claim does not tolerate one should have been evicted.
//!
//! Besides the validator's rules ([`gangpack::Violation::rule`]), four are the
//! adapter's own, on fields the core does not model:
//!
//! | rule | finding |
//! | --- | --- |
//! | `eviction-overdue` | a running pod tolerates a `NoExecute` taint (of its node, or of a device of its claims) for less time than has passed: the eviction controllers should have evicted it by the clock (`--now`, default the latest timestamp in the input) |
//! | `taint-rule-not-tolerated` | a `device-taint-not-tolerated` finding whose taint a DeviceTaintRule puts on the device (the rule is among the objects) |
//! | `claim-not-reserved` | a bound pod uses an allocated claim whose `status.reservedFor` names neither the pod nor its PodGroup |
//! | `reserved-for-non-user` | a claim's `status.reservedFor` names a pod that does not use the claim, or (a reservation the decisions add) a pod or PodGroup the input does not have |
//! | `admin-access-not-permitted` | a claim or template asks for `adminAccess` in a Namespace without the label `resource.kubernetes.io/admin-access: "true"` |

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use gangpack::{
    ClaimAllocation, ClusterError, DeviceAllocation, DeviceRef, DeviceTaintEffect,
    PlacementDecision, Pod, PodBinding, ResourceClaim, Subject, TaintEffect, Time, Violation,
};
use serde_json::Value;

use crate::convert::de::latest_timestamp;
use crate::convert::{self};
use crate::load::Loaded;
use crate::object::{InputErrors, Kind, Object, Warning};
use crate::snapshot::{BuildOptions, Snapshot, bound_time};

mod decision;
pub use decision::{Applied, apply_decisions, apply_decisions_over, is_whole, merge_patch};

/// How to check.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// How to build the snapshot (the clock, skipping invalid objects). Its
    /// `admit_admin_access` is set by [`check`], which reports the missing label itself.
    pub build: BuildOptions,
    /// Hold running pods and claims to the rules of placement too: node `NoSchedule`
    /// taints, cordons, node selectors and affinity, device `NoSchedule` taints, as if
    /// every binding and allocation had just been made.
    pub admission: bool,
}

/// One object a finding involves.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct FindingObject {
    /// `Pod`, `PodGroup`, `Node`, `ResourceClaim`, `DeviceClass`, `DeviceTaintRule`,
    /// `Device` (`driver/pool/device`) or `Pool` (`driver/pool`).
    pub kind: String,
    /// The namespace of a namespaced object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl FindingObject {
    fn of(subject: &Subject) -> FindingObject {
        let name = subject.name();
        let namespaced = matches!(
            subject,
            Subject::Pod(_) | Subject::PodGroup(_) | Subject::ResourceClaim(_)
        );
        match name.split_once('/') {
            Some((ns, n)) if namespaced => FindingObject {
                kind: subject.kind().to_owned(),
                namespace: Some(ns.to_owned()),
                name: n.to_owned(),
            },
            _ => FindingObject {
                kind: subject.kind().to_owned(),
                namespace: None,
                name,
            },
        }
    }

    fn namespaced(kind: Kind, namespace: &str, name: &str) -> FindingObject {
        FindingObject {
            kind: kind.as_str().to_owned(),
            namespace: Some(namespace.to_owned()),
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for FindingObject {
    /// `Kind ns/name` or `Kind name`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The stable rule name ([`Violation::rule`], or one of the adapter's rules in the
    /// module docs).
    pub rule: String,
    /// What is wrong, in a sentence.
    pub message: String,
    /// The objects involved, most specific first.
    pub objects: Vec<FindingObject>,
}

/// What [`check`] found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every broken rule, in a deterministic order: the validator's findings (bindings,
    /// node resources, claims, devices, sharing), then per PodGroup the gang rules,
    /// then the adapter's rules.
    pub findings: Vec<Finding>,
    /// Warnings from loading and building.
    pub warnings: Vec<Warning>,
    /// Objects skipped as invalid (with [`BuildOptions::skip_invalid`]), one line each.
    pub skipped: Vec<String>,
    /// Pods bound (after the decisions), terminating and finished ones left out.
    pub pods_bound: usize,
    /// Claims allocated (after the decisions).
    pub claims_allocated: usize,
    /// PodGroups with a bound member.
    pub groups_running: usize,
    /// Decision objects merged into an object of the dump as patches.
    pub patched: usize,
    /// Whole decision objects that replaced an object of the dump.
    pub replaced: usize,
    /// Whole decision objects that were not in the dump.
    pub added: usize,
    /// Decision Bindings.
    pub bound: usize,
    /// Bindings and allocations the decisions made or changed.
    pub decided: usize,
    /// Every bound pod (after the decisions), `namespace/name` → node.
    pub bindings: BTreeMap<String, String>,
    /// The pods the decisions bound or moved.
    pub new_bindings: BTreeSet<String>,
    /// Pods bound in the dump that the decisions evict: marked for deletion
    /// (`metadata.deletionTimestamp`), finished, or unbound.
    pub evicted: BTreeSet<String>,
    /// Devices published (usable or not).
    pub devices: usize,
    /// Distinct devices allocated (after the decisions), admin access left out.
    pub devices_allocated: usize,
    /// Findings of placement-time rules on pods and claims that already run, not
    /// counted as violations (see the module docs; [`CheckOptions::admission`] lists
    /// them).
    pub running_exempt: usize,
}

impl Report {
    /// No rule is broken.
    pub fn is_valid(&self) -> bool {
        self.findings.is_empty()
    }
}

type Key = (Kind, Option<String>, String);

fn key_of(o: &Object) -> Key {
    (o.kind, o.namespace.clone(), o.name.clone())
}

/// Checks the running state of `dump`, with `decisions` applied over it first (see the
/// module docs). Fails with every input problem, as [`Snapshot::build`] does; a broken
/// rule is a [`Finding`], never an error.
pub fn check(
    mut dump: Loaded,
    decisions: Option<Loaded>,
    options: &CheckOptions,
) -> Result<Report, InputErrors> {
    // Objects a later input defines again are replaced first, as the snapshot does
    // (with the warnings the snapshot then says once).
    let objects = std::mem::take(&mut dump.objects);
    dump.objects = crate::snapshot::later_inputs_update(objects, &mut dump.warnings);
    let before: BTreeMap<Key, Arc<Value>> = dump
        .objects
        .iter()
        .map(|o| (key_of(o), Arc::clone(&o.raw)))
        .collect();
    let mut report = Report::default();
    if let Some(d) = decisions {
        let applied =
            apply_decisions_over(&mut dump, d, |objects| generated_claims(objects, options))?;
        report.patched = applied.patched;
        report.replaced = applied.replaced;
        report.added = applied.added;
        report.bound = applied.bound;
    }
    let merged: BTreeMap<Key, Object> = dump
        .objects
        .iter()
        .map(|o| (key_of(o), o.clone()))
        .collect();

    // The clock: as the snapshot would read it from the merged objects.
    let now = options.build.now.unwrap_or_else(|| {
        Time(
            dump.objects
                .iter()
                .filter_map(|o| latest_timestamp(&o.raw))
                .max()
                .unwrap_or(0),
        )
    });
    let blank = Loaded {
        objects: dump.objects.iter().map(unbound).collect(),
        warnings: dump.warnings.clone(),
        bindings: Vec::new(),
        empty: Vec::new(),
    };
    let build = BuildOptions {
        now: Some(now),
        admit_admin_access: true,
        ..options.build.clone()
    };
    let snapshot = Snapshot::build(blank, &build)?;
    // Terminating and finished pods hold nothing here, as in every snapshot; the
    // decisions' evictions make many of them, so that is not worth a warning.
    report.warnings = snapshot
        .warnings
        .iter()
        .filter(|w| {
            !w.message.starts_with("skipped: the pod is terminating")
                && !w.message.starts_with("skipped: the pod has finished")
        })
        .cloned()
        .collect();
    report.skipped = snapshot.skipped.iter().map(ToString::to_string).collect();
    // A bound pod that names an object the input lacks is held back by the snapshot:
    // it cannot be checked, and says so.
    for w in &snapshot.waiting {
        let k = (w.kind, Some(w.namespace.clone()), w.name.clone());
        let bound = merged
            .get(&k)
            .and_then(|o| o.raw.pointer("/spec/nodeName"))
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        if w.kind == Kind::Pod && bound {
            report.warnings.push(Warning {
                source: merged.get(&k).map(|o| o.source.clone()),
                object: Some(crate::describe(w.kind, Some(&w.namespace), &w.name)),
                message: format!("not checked: the pod is bound, but {}", w.reason()),
            });
        }
    }

    let scheduler = &snapshot.scheduler;
    let mut cluster = scheduler.cluster().clone();
    let pods: Vec<Pod> = scheduler.pods().cloned().collect();
    let claims: Vec<ResourceClaim> = scheduler.claims().cloned().collect();

    // The bindings and allocations, as merged.
    let mut errors = InputErrors::default();
    let mut allocations: BTreeMap<String, (gangpack::AllocationResult, Option<Time>)> =
        BTreeMap::new();
    for c in &claims {
        let k = (
            Kind::ResourceClaim,
            Some(c.namespace.clone()),
            c.name.clone(),
        );
        let Some(obj) = merged.get(&k) else { continue };
        if obj.raw.pointer("/status/allocation").is_none() {
            continue;
        }
        let (result, _) = convert::run(obj, convert::resource_claim);
        match result {
            Ok(input) => {
                if let Some(a) = input.claim.allocation {
                    let at = timestamp(obj.raw.pointer("/status/allocation/allocationTimestamp"));
                    allocations.insert(format!("{}/{}", c.namespace, c.name), (a, at));
                }
            }
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut bound_pods: Vec<Pod> = Vec::new();
    let mut node_of: BTreeMap<String, (String, Option<Time>)> = BTreeMap::new();
    for p in &pods {
        let k = (Kind::Pod, Some(p.namespace.clone()), p.name.clone());
        let Some(obj) = merged.get(&k) else { continue };
        let Some(node) = obj.raw.pointer("/spec/nodeName").and_then(Value::as_str) else {
            continue;
        };
        if node.is_empty() {
            continue;
        }
        node_of.insert(
            format!("{}/{}", p.namespace, p.name),
            (node.to_owned(), bound_time(&obj.raw)),
        );
        let mut bound = p.clone();
        bound.node_name = Some(node.to_owned());
        bound_pods.push(bound);
    }
    report.pods_bound = bound_pods.len();
    report.claims_allocated = allocations.len();

    // What the decisions changed: new bindings and allocations.
    let changed = |kind: Kind, ns: &str, name: &str, pointer: &str| {
        let k = (kind, Some(ns.to_owned()), name.to_owned());
        let now = merged.get(&k).and_then(|o| o.raw.pointer(pointer));
        let was = before.get(&k).and_then(|raw| raw.pointer(pointer));
        now.is_some() && now != was
    };
    let new_pods: BTreeSet<String> = bound_pods
        .iter()
        .filter(|p| changed(Kind::Pod, &p.namespace, &p.name, "/spec/nodeName"))
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect();
    let new_claims: BTreeSet<String> = claims
        .iter()
        .filter(|c| {
            changed(
                Kind::ResourceClaim,
                &c.namespace,
                &c.name,
                "/status/allocation",
            )
        })
        .map(|c| format!("{}/{}", c.namespace, c.name))
        .collect();
    report.decided = new_pods.len() + new_claims.len();
    report.bindings = node_of
        .iter()
        .map(|(k, v)| (k.clone(), v.0.clone()))
        .collect();
    report.new_bindings.clone_from(&new_pods);
    report.evicted = evicted(&before, &merged);
    report.devices = cluster.device_count();
    report.devices_allocated = allocations
        .values()
        .flat_map(|(a, _)| &a.devices)
        .filter(|d| !d.admin_access)
        .map(|d| (&d.driver, &d.pool, &d.device))
        .collect::<BTreeSet<_>>()
        .len();

    // One decision: every binding, each allocated claim in the binding of its first
    // bound user; claims no bound pod uses are held in the cluster.
    let mut decision = PlacementDecision::default();
    let mut placed: BTreeSet<String> = BTreeSet::new();
    for p in &bound_pods {
        let key = format!("{}/{}", p.namespace, p.name);
        let mut binding = PodBinding {
            pod: key.clone(),
            node: node_of[&key].0.clone(),
            claims: Vec::new(),
        };
        for c in claim_names(p) {
            let ck = format!("{}/{c}", p.namespace);
            if let Some((a, _)) = allocations.get(&ck)
                && placed.insert(ck.clone())
            {
                binding.claims.push(ClaimAllocation {
                    claim: ck,
                    result: a.clone(),
                });
            }
        }
        decision.bindings.push(binding);
    }
    let mut findings: Vec<Finding> = Vec::new();
    for (ck, (a, _)) in &allocations {
        if placed.contains(ck) {
            continue;
        }
        hold(&mut cluster, ck, a, &mut findings, &mut report.warnings);
    }

    let pending: Vec<Pod> = pods
        .iter()
        .map(|p| Pod {
            node_name: None,
            ..p.clone()
        })
        .collect();
    let violations = gangpack::validate_placement(&cluster, None, &pending, &claims, &decision);
    let existing = |v: &Violation| -> bool {
        if options.admission {
            return false;
        }
        match v {
            Violation::NodeUnschedulable { pod, .. }
            | Violation::NodeAffinityMismatch { pod, .. } => !new_pods.contains(pod),
            Violation::NodeTaintNotTolerated { pod, taint, .. } => {
                taint.effect == TaintEffect::NoSchedule
                    && !new_pods.contains(pod)
                    && !before_or_at(taint.time_added, node_of.get(pod).and_then(|n| n.1))
            }
            Violation::DeviceTaintNotTolerated { claim, taint, .. } => {
                taint.effect == DeviceTaintEffect::NoSchedule
                    && !new_claims.contains(claim)
                    && !before_or_at(taint.time_added, allocations.get(claim).and_then(|a| a.1))
            }
            _ => false,
        }
    };
    for v in &violations {
        if existing(v) {
            report.running_exempt += 1;
        } else {
            findings.push(finding(&cluster, v, None));
        }
    }
    // The gang rules, per PodGroup with a bound member.
    let all_bound: Vec<Pod> = pods
        .iter()
        .map(|p| {
            let key = format!("{}/{}", p.namespace, p.name);
            Pod {
                node_name: node_of.get(&key).map(|n| n.0.clone()),
                ..p.clone()
            }
        })
        .collect();
    for g in scheduler.groups() {
        let running = all_bound.iter().any(|p| {
            p.node_name.is_some()
                && p.namespace == g.namespace
                && p.scheduling_group.as_deref() == Some(&g.name)
        });
        if !running {
            continue;
        }
        report.groups_running += 1;
        let gk = format!("{}/{}", g.namespace, g.name);
        for v in gangpack::validate_gang(&cluster, g, &all_bound) {
            findings.push(finding(&cluster, &v, Some(&gk)));
        }
    }
    overdue(
        &cluster,
        now,
        &bound_pods,
        &node_of,
        &new_pods,
        &allocations,
        &mut findings,
    );
    reservations(&merged, &bound_pods, &allocations, &mut findings);
    reserved_for_non_users(&merged, &before, &pods, &mut findings);
    admin_access(&merged, &mut findings, &mut report.warnings);
    report.findings = findings;
    Ok(report)
}

/// The claims a snapshot of `objects` makes from its pods' templates, as objects (none
/// when they do not build: their errors are reported when they are built again).
fn generated_claims(objects: &[Object], options: &CheckOptions) -> Vec<Object> {
    let blank = Loaded {
        objects: objects.iter().map(unbound).collect(),
        ..Loaded::default()
    };
    let build = BuildOptions {
        admit_admin_access: true,
        ..options.build.clone()
    };
    let Ok(snapshot) = Snapshot::build(blank, &build) else {
        return Vec::new();
    };
    snapshot
        .generated
        .iter()
        .map(|g| Object {
            source: crate::Source {
                file: "<generated>".into(),
                doc: 0,
                item: None,
            },
            kind: Kind::ResourceClaim,
            namespace: Some(g.claim.namespace.clone()),
            name: g.claim.name.clone(),
            raw: Arc::new(g.raw.clone()),
        })
        .collect()
}

/// Pods bound in the dump that the merged objects mark for deletion, finish or unbind.
fn evicted(before: &BTreeMap<Key, Arc<Value>>, merged: &BTreeMap<Key, Object>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (k, raw) in before {
        let bound = |v: &Value| {
            v.pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty())
        };
        let gone = |v: &Value| {
            v.pointer("/metadata/deletionTimestamp").is_some()
                || matches!(
                    v.pointer("/status/phase").and_then(Value::as_str),
                    Some("Succeeded" | "Failed")
                )
        };
        if k.0 != Kind::Pod || !bound(raw) || gone(raw) {
            continue;
        }
        let Some(now) = merged.get(k) else { continue };
        if gone(&now.raw) || !bound(&now.raw) {
            out.insert(format!("{}/{}", k.1.as_deref().unwrap_or_default(), k.2));
        }
    }
    out
}

/// The object without its running state: a pod without `spec.nodeName`, a claim
/// without `status.allocation` and `status.reservedFor`.
fn unbound(o: &Object) -> Object {
    let strip: &[(&str, &str)] = match o.kind {
        Kind::Pod => &[("spec", "nodeName")],
        Kind::ResourceClaim => &[("status", "allocation"), ("status", "reservedFor")],
        _ => &[],
    };
    let present = strip
        .iter()
        .any(|(a, b)| o.raw.get(a).and_then(|x| x.get(b)).is_some());
    if !present {
        return o.clone();
    }
    let mut raw = (*o.raw).clone();
    for (a, b) in strip {
        if let Some(Value::Object(m)) = raw.get_mut(a) {
            m.remove(*b);
        }
    }
    Object {
        raw: Arc::new(raw),
        ..o.clone()
    }
}

fn timestamp(v: Option<&Value>) -> Option<Time> {
    let t = v?.as_str()?.parse::<k8s_openapi::jiff::Timestamp>().ok()?;
    Some(Time(t.as_second()))
}

/// The taint was there when the pod or claim was placed: both times known and the
/// taint's not later.
fn before_or_at(taint: Option<Time>, placed: Option<Time>) -> bool {
    matches!((taint, placed), (Some(t), Some(p)) if t <= p)
}

/// Records an allocated claim that no bound pod uses as holding its devices; a second
/// holder of an exclusive device is a finding.
fn hold(
    cluster: &mut gangpack::Cluster,
    claim: &str,
    result: &gangpack::AllocationResult,
    findings: &mut Vec<Finding>,
    warnings: &mut Vec<Warning>,
) {
    for d in &result.devices {
        let device = DeviceRef::new(&d.driver, &d.pool, &d.device);
        let allocation = DeviceAllocation {
            consumer: claim.to_owned(),
            tolerations: d.tolerations.clone(),
            admin_access: d.admin_access,
            share_id: d.share_id.clone(),
            consumed_capacity: d.consumed_capacity.clone(),
        };
        match cluster.allocate(&device, allocation) {
            Err(ClusterError::DeviceInUse { holder, .. }) => {
                let v = Violation::DeviceAllocatedTwice {
                    device: device.clone(),
                    first: holder,
                    second: claim.to_owned(),
                };
                findings.push(finding(cluster, &v, None));
            }
            Err(ClusterError::DeviceNotFound(_)) => {
                let (ns, name) = claim.split_once('/').unwrap_or(("", claim));
                warnings.push(Warning {
                    source: None,
                    object: Some(crate::describe(Kind::ResourceClaim, Some(ns), name)),
                    message: format!(
                        "status.allocation: device {device} is not published (its slice is not in the input, or its pool is incomplete): it is not checked"
                    ),
                });
            }
            // Held, or a record the cluster refuses: nothing to report.
            Ok(_) | Err(_) => {}
        }
    }
}

/// A finding of the validator's, with the DeviceTaintRule behind a device taint and
/// the PodGroup of a gang rule.
fn finding(cluster: &gangpack::Cluster, v: &Violation, group: Option<&str>) -> Finding {
    let mut rule = v.rule().to_owned();
    let mut objects: Vec<FindingObject> = Vec::new();
    if let Some(g) = group {
        objects.push(FindingObject::of(&Subject::PodGroup(g.to_owned())));
    }
    for s in v.subjects() {
        let o = FindingObject::of(&s);
        if !objects.contains(&o) {
            objects.push(o);
        }
    }
    let mut message = v.to_string();
    if let Some(g) = group
        && matches!(v, Violation::TopologySplit { .. })
    {
        message = format!("pod group {g}: {message}");
    }
    if let Violation::DeviceTaintNotTolerated { device, taint, .. } = v
        && let Some(id) = cluster.device_id(device)
    {
        let from_slice = cluster
            .device(id)
            .is_some_and(|d| d.device.taints.iter().any(|t| same_taint(t, taint)));
        let rules: Vec<String> = cluster
            .taint_rules()
            .filter(|r| same_taint(&r.taint, taint) && cluster.rule_devices(r).contains(&id))
            .map(|r| r.name.clone())
            .collect();
        if !from_slice && !rules.is_empty() {
            "taint-rule-not-tolerated".clone_into(&mut rule);
            message = format!("{message} (from DeviceTaintRule {})", rules.join(", "));
        }
        for r in rules {
            objects.push(FindingObject {
                kind: "DeviceTaintRule".into(),
                namespace: None,
                name: r,
            });
        }
    }
    Finding {
        rule,
        message,
        objects,
    }
}

/// The claims a pod names by `resourceClaimName` (template claims are resolved to
/// names by the snapshot).
fn claim_names(p: &Pod) -> impl Iterator<Item = &str> {
    p.resource_claims.iter().filter_map(|c| match &c.source {
        gangpack::ClaimSource::ClaimName(n) => Some(n.as_str()),
        gangpack::ClaimSource::Template(_) => None,
    })
}

fn same_taint(a: &gangpack::DeviceTaint, b: &gangpack::DeviceTaint) -> bool {
    a.key == b.key && a.value == b.value && a.effect == b.effect
}

/// `eviction-overdue`: a running pod that tolerates a `NoExecute` taint for a while
/// (or, for a device taint, with a toleration that does not name the effect, which
/// upstream does not count against eviction) whose eviction was due by `now`: the
/// taint eviction controllers should have evicted it. Untolerated taints are the
/// validator's findings already; pods the decisions bind are timed from now.
fn overdue(
    cluster: &gangpack::Cluster,
    now: Time,
    bound: &[Pod],
    node_of: &BTreeMap<String, (String, Option<Time>)>,
    new_pods: &BTreeSet<String>,
    allocations: &BTreeMap<String, (gangpack::AllocationResult, Option<Time>)>,
    findings: &mut Vec<Finding>,
) {
    let already = |claim: &str, device: &DeviceRef| {
        findings.iter().any(|f| {
            matches!(
                f.rule.as_str(),
                "device-taint-not-tolerated" | "taint-rule-not-tolerated"
            ) && f.objects.first().is_some_and(|o| {
                o.kind == "ResourceClaim"
                    && format!("{}/{}", o.namespace.as_deref().unwrap_or_default(), o.name) == claim
            }) && f
                .objects
                .iter()
                .any(|o| o.kind == "Device" && o.name == device.to_string())
        })
    };
    let mut out = Vec::new();
    let mut seen_claims = BTreeSet::new();
    for p in bound {
        let key = format!("{}/{}", p.namespace, p.name);
        if new_pods.contains(&key) {
            continue;
        }
        let (node_name, bound_at) = &node_of[&key];
        if let Some(node) = cluster.node(node_name) {
            let verdict = gangpack::node_eviction(&node.taints, &p.tolerations);
            let added = node
                .taints
                .iter()
                .filter(|t| t.effect == TaintEffect::NoExecute)
                .filter_map(|t| t.time_added)
                .max();
            let start = match (*bound_at, added) {
                (Some(b), Some(a)) => Some(b.max(a)),
                (b, a) => b.or(a),
            };
            if let gangpack::EvictionVerdict::Evict { delay_seconds } = verdict
                && delay_seconds > 0
                && let Some(due) = start.and_then(|s| verdict.eviction_time(s))
                && due <= now
            {
                out.push(Finding {
                    rule: "eviction-overdue".into(),
                    message: format!(
                        "pod {key} tolerates node {node_name}'s NoExecute taints for {delay_seconds} s only: its eviction was due at {}",
                        gangpack::Time::to_rfc3339(due)
                    ),
                    objects: vec![
                        FindingObject::namespaced(Kind::Pod, &p.namespace, &p.name),
                        FindingObject {
                            kind: "Node".into(),
                            namespace: None,
                            name: node_name.clone(),
                        },
                    ],
                });
            }
        }
        for c in claim_names(p) {
            let ck = format!("{}/{c}", p.namespace);
            let Some((a, _)) = allocations.get(&ck) else {
                continue;
            };
            if !seen_claims.insert(ck.clone()) {
                continue;
            }
            for d in &a.devices {
                let device = DeviceRef::new(&d.driver, &d.pool, &d.device);
                let Some(id) = cluster.device_id(&device) else {
                    continue;
                };
                let taints = cluster.device_taints(id);
                let Some((due, taint)) = gangpack::device_eviction_time(&taints, &d.tolerations)
                else {
                    continue;
                };
                if due > now || already(&ck, &device) {
                    continue;
                }
                out.push(Finding {
                    rule: "eviction-overdue".into(),
                    message: format!(
                        "claim {ck} of running pod {key}: device {device} carries {}={}:NoExecute since {}, and the claim's tolerations let it stay until {} only",
                        taint.key,
                        taint.value,
                        taint.time_added.map_or_else(String::new, gangpack::Time::to_rfc3339),
                        gangpack::Time::to_rfc3339(due)
                    ),
                    objects: vec![
                        FindingObject::namespaced(Kind::Pod, &p.namespace, &p.name),
                        FindingObject::namespaced(Kind::ResourceClaim, &p.namespace, c),
                        FindingObject {
                            kind: "Device".into(),
                            namespace: None,
                            name: device.to_string(),
                        },
                    ],
                });
            }
        }
    }
    findings.extend(out);
}

/// `claim-not-reserved`: a bound pod's allocated claim whose `status.reservedFor`
/// names neither the pod nor its PodGroup (by uid when both have one, else by name).
fn reservations(
    merged: &BTreeMap<Key, Object>,
    bound: &[Pod],
    allocations: &BTreeMap<String, (gangpack::AllocationResult, Option<Time>)>,
    findings: &mut Vec<Finding>,
) {
    for p in bound {
        let pod_obj = merged.get(&(Kind::Pod, Some(p.namespace.clone()), p.name.clone()));
        let pod_uid = pod_obj.and_then(|o| o.raw.pointer("/metadata/uid")?.as_str());
        for c in claim_names(p) {
            let ck = format!("{}/{c}", p.namespace);
            if !allocations.contains_key(&ck) {
                continue;
            }
            let Some(claim) =
                merged.get(&(Kind::ResourceClaim, Some(p.namespace.clone()), c.to_owned()))
            else {
                continue;
            };
            let reserved = claim
                .raw
                .pointer("/status/reservedFor")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let names = |r: &Value, resource: &str, name: &str, uid: Option<&str>| {
                let res = r
                    .get("resource")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let n = r.get("name").and_then(Value::as_str).unwrap_or_default();
                let u = r.get("uid").and_then(Value::as_str);
                res == resource
                    && n == name
                    && match (u, uid) {
                        (Some(a), Some(b)) => a == b,
                        _ => true,
                    }
            };
            let ok = reserved.iter().any(|r| {
                names(r, "pods", &p.name, pod_uid)
                    || p.scheduling_group
                        .as_deref()
                        .is_some_and(|g| names(r, "podgroups", g, None))
            });
            if !ok {
                findings.push(Finding {
                    rule: "claim-not-reserved".into(),
                    message: format!(
                        "claim {ck} is allocated and used by bound pod {}/{}, but its status.reservedFor does not name the pod{}",
                        p.namespace,
                        p.name,
                        if p.scheduling_group.is_some() {
                            " or its PodGroup"
                        } else {
                            ""
                        }
                    ),
                    objects: vec![
                        FindingObject::namespaced(Kind::ResourceClaim, &p.namespace, c),
                        FindingObject::namespaced(Kind::Pod, &p.namespace, &p.name),
                    ],
                });
            }
        }
    }
}

/// `reserved-for-non-user`: a claim reserved for a pod that does not use it (a pod
/// among `pods`, whose claims the snapshot resolved, templates included), or, for a
/// reservation the decisions add, for a pod or PodGroup the input lacks. (A dump's
/// reservation for a pod that is gone is the resourceclaim controller's to clean up.)
fn reserved_for_non_users(
    merged: &BTreeMap<Key, Object>,
    before: &BTreeMap<Key, Arc<Value>>,
    pods: &[Pod],
    findings: &mut Vec<Finding>,
) {
    let entries = |raw: &Value| -> Vec<Value> {
        raw.pointer("/status/reservedFor")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for (k, claim) in merged.range((Kind::ResourceClaim, None, String::new())..) {
        if k.0 != Kind::ResourceClaim {
            break;
        }
        let ns = claim.namespace.clone().unwrap_or_default();
        let was = before.get(k).map(|raw| entries(raw)).unwrap_or_default();
        for r in entries(&claim.raw) {
            let resource = r
                .get("resource")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
            let new = !was.contains(&r);
            let (kind, message) = match resource {
                "pods" => {
                    let pk = (Kind::Pod, Some(ns.clone()), name.to_owned());
                    match pods.iter().find(|p| p.namespace == ns && p.name == name) {
                        Some(p) if !claim_names(p).any(|c| c == claim.name) => (
                            Kind::Pod,
                            format!(
                                "claim {ns}/{} is reserved for pod {ns}/{name}, which does not use it (its spec.resourceClaims do not name the claim)",
                                claim.name
                            ),
                        ),
                        None if new && !merged.contains_key(&pk) => (
                            Kind::Pod,
                            format!(
                                "claim {ns}/{} is reserved for pod {ns}/{name}, which is not in the input",
                                claim.name
                            ),
                        ),
                        _ => continue,
                    }
                }
                "podgroups" if new => {
                    let gk = (Kind::PodGroup, Some(ns.clone()), name.to_owned());
                    if merged.contains_key(&gk) {
                        continue;
                    }
                    (
                        Kind::PodGroup,
                        format!(
                            "claim {ns}/{} is reserved for PodGroup {ns}/{name}, which is not in the input",
                            claim.name
                        ),
                    )
                }
                _ => continue,
            };
            findings.push(Finding {
                rule: "reserved-for-non-user".into(),
                message,
                objects: vec![
                    FindingObject::namespaced(Kind::ResourceClaim, &ns, &claim.name),
                    FindingObject::namespaced(kind, &ns, name),
                ],
            });
        }
    }
}

/// `admin-access-not-permitted`: claims and templates with `adminAccess: true` in a
/// Namespace without the admin-access label (a warning when the Namespace is not in
/// the input).
fn admin_access(
    merged: &BTreeMap<Key, Object>,
    findings: &mut Vec<Finding>,
    warnings: &mut Vec<Warning>,
) {
    const LABEL: &str = Snapshot::ADMIN_ACCESS_LABEL;
    for (k, o) in merged {
        let requests = match k.0 {
            Kind::ResourceClaim => o.raw.pointer("/spec/devices/requests"),
            Kind::ResourceClaimTemplate => o.raw.pointer("/spec/spec/devices/requests"),
            _ => continue,
        };
        let Some(requests) = requests.and_then(Value::as_array) else {
            continue;
        };
        let admin = requests
            .iter()
            .any(|r| r.pointer("/exactly/adminAccess").and_then(Value::as_bool) == Some(true));
        if !admin {
            continue;
        }
        let ns = o.namespace.clone().unwrap_or_default();
        match merged.get(&(Kind::Namespace, None, ns.clone())) {
            Some(n) => {
                let labelled = n
                    .raw
                    .pointer("/metadata/labels")
                    .and_then(|l| l.get(LABEL))
                    .and_then(Value::as_str)
                    == Some("true");
                if !labelled {
                    findings.push(Finding {
                        rule: "admin-access-not-permitted".into(),
                        message: format!(
                            "{} asks for admin access to devices, but Namespace {ns} lacks the label {LABEL}: \"true\"",
                            o.describe()
                        ),
                        objects: vec![
                            FindingObject::namespaced(k.0, &ns, &o.name),
                            FindingObject {
                                kind: "Namespace".into(),
                                namespace: None,
                                name: ns.clone(),
                            },
                        ],
                    });
                }
            }
            None => warnings.push(Warning {
                source: Some(o.source.clone()),
                object: Some(o.describe()),
                message: format!(
                    "adminAccess: Namespace \"{ns}\" is not in the input, so its {LABEL} label cannot be checked"
                ),
            }),
        }
    }
}
