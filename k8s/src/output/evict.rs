//! The first step of [`plan`](super::plan): the `NoExecute` evictions already due in
//! the input, carried out as kube-controller-manager's two eviction controllers (device
//! taints, node taints) would carry them out at the scheduler's clock.

use gangpack::{BrokenGroup, Pod, Scheduler, Time};
use serde::Serialize;
use serde_json::Value;

use super::patch::{Changes, object_at, split_key};
use super::plan::{DELETE_PROTECTION_FINALIZER, PlanRow};
use super::taint::{Eviction, Tainted, describe, mark_evicted, rehome};
use super::time::time_to_rfc3339;
use crate::Kind;

/// The grace period a pod gets when `spec.terminationGracePeriodSeconds` is unset.
const DEFAULT_GRACE_SECONDS: i64 = 30;

/// What the eviction step of a plan did and what is still to come.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evictions {
    /// Pods evicted before the cycle ran, by due time then pod: their eviction was due
    /// at or before the scheduler's clock (`at` is when it fell due; it is carried out
    /// at the clock).
    pub carried_out: Vec<Eviction>,
    /// Evictions scheduled for later, by time then pod: they do not happen in this plan.
    pub upcoming: Vec<Eviction>,
    /// PodGroups the carried-out evictions take below `minCount` or whole.
    pub broken_groups: Vec<BrokenGroup>,
    /// Claims (`namespace/name`) deallocated because the evicted pods were their last
    /// users.
    pub released: Vec<String>,
    /// Where the evicted units could go if their pods were recreated: one row per
    /// PodGroup (or pod without one) that lost pods, from a cycle on a copy of the
    /// scheduler after the plan's own cycle, with the evicted pods added back pending.
    pub replacements: Vec<PlanRow>,
    /// The evicted pods as they were bound (for [`replacements`](Self::replacements)).
    #[serde(skip)]
    pub(crate) originals: Vec<Pod>,
}

impl Evictions {
    /// Whether nothing was evicted and nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.carried_out.is_empty() && self.upcoming.is_empty()
    }
}

/// Carries out every eviction due at the scheduler's clock (see [`Scheduler::advance`])
/// and lists those still to come.
pub(crate) fn carry_out(sched: &mut Scheduler) -> Evictions {
    let now = sched.now();
    let report = sched.refresh_evictions();
    let scheduled = sched.scheduled_evictions();
    // Described while the pods are still there (the rows name their taints and groups).
    let rows = describe(sched, &scheduled, &Tainted::Device);
    let allocated_before: Vec<String> = sched
        .claims()
        .map(|c| format!("{}/{}", c.namespace, c.name))
        .filter(|k| sched.allocation(k).is_some())
        .collect();
    let originals: Vec<Pod> = scheduled
        .iter()
        .filter(|e| e.at <= now)
        .filter_map(|e| sched.pod(&e.pod).cloned())
        .collect();
    let done = sched.advance(now);
    let mut out = Evictions {
        originals,
        ..Evictions::default()
    };
    for e in &done {
        if let Some(r) = rows.iter().find(|r| r.pod == e.pod) {
            out.carried_out.push(r.clone());
        } else {
            // Started by an earlier eviction of this step (rare): described afterwards.
            let late = describe(sched, std::slice::from_ref(e), &Tainted::Device);
            out.carried_out.extend(late);
        }
    }
    out.upcoming = rows
        .into_iter()
        .filter(|r| !done.iter().any(|d| d.pod == r.pod))
        .collect();
    out.broken_groups = report
        .broken_groups
        .into_iter()
        .filter(|g| g.evicted.iter().any(|p| done.iter().any(|d| &d.pod == p)))
        .map(|mut g| {
            // Only what this step evicted.
            let (gone, kept): (Vec<String>, Vec<String>) = g
                .evicted
                .drain(..)
                .partition(|p| done.iter().any(|d| &d.pod == p));
            g.evicted = gone;
            g.left.extend(kept);
            crate::natural_sort(&mut g.left);
            g
        })
        .collect();
    out.released = allocated_before
        .into_iter()
        .filter(|k| sched.allocation(k).is_none())
        .collect();
    out
}

/// Where the evicted units could go, on a copy of `sched` (after the plan's cycle).
pub(crate) fn replacements(sched: &Scheduler, evictions: &Evictions) -> Vec<PlanRow> {
    if evictions.originals.is_empty() {
        return Vec::new();
    }
    rehome(sched.clone(), &evictions.originals, &Tainted::Device)
}

/// Writes what the eviction controllers and the API server store for the carried-out
/// evictions, at `now`:
///
/// - each evicted pod gets `DisruptionTarget=True` (reason `DeletionByDeviceTaintManager`
///   or `DeletionByTaintManager`, with its controller's message), then the graceful
///   delete's `metadata.deletionTimestamp` (`now` + `spec.terminationGracePeriodSeconds`,
///   default 30) and `metadata.deletionGracePeriodSeconds`;
/// - each claim loses the `status.reservedFor` entries of the evicted pods, and a claim
///   they were the last users of loses `status.allocation` and the
///   [`DELETE_PROTECTION_FINALIZER`], as the resourceclaim controller deallocates an
///   unreserved claim (a claim the cycle then allocates again is written allocated).
pub(crate) fn write(changes: &mut Changes<'_>, sched: &Scheduler, ev: &Evictions, now: Time) {
    for e in &ev.carried_out {
        let (ns, name) = split_key(&e.pod);
        let Some(doc) = changes.get(Kind::Pod, ns, name) else {
            continue;
        };
        mark_evicted(doc, e, now);
        let grace = doc
            .pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(DEFAULT_GRACE_SECONDS)
            .max(0);
        let meta = object_at(doc, "metadata");
        if !meta.contains_key("deletionTimestamp") {
            meta.insert(
                "deletionTimestamp".into(),
                Value::String(time_to_rfc3339(now.plus_seconds(grace))),
            );
            meta.insert("deletionGracePeriodSeconds".into(), Value::from(grace));
        }
    }
    let evicted: Vec<(&str, &str)> = ev.carried_out.iter().map(|e| split_key(&e.pod)).collect();
    for claim in sched.claims() {
        let key = format!("{}/{}", claim.namespace, claim.name);
        let released = ev.released.contains(&key);
        let Some(original) = changes.original(Kind::ResourceClaim, &claim.namespace, &claim.name)
        else {
            continue;
        };
        let reserved_by_evicted = original
            .pointer("/status/reservedFor")
            .and_then(Value::as_array)
            .is_some_and(|r| {
                r.iter()
                    .any(|x| is_evicted_pod(x, &claim.namespace, &evicted))
            });
        if !released && !reserved_by_evicted {
            continue;
        }
        let Some(doc) = changes.get(Kind::ResourceClaim, &claim.namespace, &claim.name) else {
            continue;
        };
        if let Some(list) = doc
            .pointer_mut("/status/reservedFor")
            .and_then(Value::as_array_mut)
        {
            list.retain(|x| !is_evicted_pod(x, &claim.namespace, &evicted));
        }
        if released {
            release_claim(doc);
        }
    }
}

/// Whether [`release_claim`] would change `doc` (so a shared document is copied only
/// when it does).
pub(crate) fn release_changes(doc: &Value) -> bool {
    let status = doc.get("status").and_then(Value::as_object);
    status.is_some_and(|s| {
        s.is_empty()
            || s.contains_key("allocation")
            || s.get("reservedFor")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
    }) || doc
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| {
            f.iter()
                .any(|x| x.as_str() == Some(DELETE_PROTECTION_FINALIZER))
        })
}

/// Removes a claim document's allocation (and an emptied `reservedFor`, an emptied
/// `status`) and the delete-protection finalizer, as the resourceclaim controller does
/// when it deallocates a claim nobody uses.
pub(crate) fn release_claim(doc: &mut Value) {
    if let Some(status) = doc.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("allocation");
        if status
            .get("reservedFor")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            status.remove("reservedFor");
        }
        if status.is_empty()
            && let Some(doc) = doc.as_object_mut()
        {
            doc.remove("status");
        }
    }
    if let Some(f) = doc
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        f.retain(|x| x.as_str() != Some(DELETE_PROTECTION_FINALIZER));
    }
}

/// Whether a `reservedFor` entry names one of the evicted pods of `namespace`.
fn is_evicted_pod(entry: &Value, namespace: &str, evicted: &[(&str, &str)]) -> bool {
    let resource = entry.get("resource").and_then(Value::as_str);
    let group = entry
        .get("apiGroup")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = entry.get("name").and_then(Value::as_str);
    resource == Some("pods")
        && group.is_empty()
        && name.is_some_and(|n| evicted.iter().any(|(ns, p)| *ns == namespace && *p == n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reserved_for_entries_of_evicted_pods() {
        let evicted = [("team", "a")];
        assert!(is_evicted_pod(
            &json!({"resource": "pods", "name": "a", "uid": "1"}),
            "team",
            &evicted
        ));
        assert!(!is_evicted_pod(
            &json!({"resource": "pods", "name": "a"}),
            "other",
            &evicted
        ));
        assert!(!is_evicted_pod(
            &json!({"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "a"}),
            "team",
            &evicted
        ));
    }
}
