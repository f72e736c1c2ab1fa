//! Writing what happened back into the loaded objects: the documents a plan or a taint
//! changed ([`Snapshot::fold_back`]) and the pods the scheduler no longer has
//! ([`Snapshot::fold_deletions`]), so that what is written next (another plan, the
//! state as manifests) starts from them.

use std::sync::Arc;

use serde_json::Value;

use super::Snapshot;
use crate::object::Kind;

impl Snapshot {
    /// Puts changed whole documents (a [`Plan`](crate::output::Plan)'s or a
    /// [`TaintPlan`](crate::output::TaintPlan)'s `changed`) in place of the loaded
    /// objects of the same kind and name, and of the generated claims' `raw`. A
    /// document that matches neither is dropped (the writers only change what was
    /// loaded or generated).
    pub fn fold_back(&mut self, changed: Vec<Value>) {
        for doc in changed {
            let field = |p: &str| doc.pointer(p).and_then(Value::as_str).unwrap_or_default();
            let Some(kind) = Kind::from_type(field("/apiVersion"), field("/kind")) else {
                continue;
            };
            let name = field("/metadata/name").to_owned();
            let namespace = kind
                .is_namespaced()
                .then(|| match field("/metadata/namespace") {
                    "" => "default".to_owned(),
                    ns => ns.to_owned(),
                });
            if let Some(o) = self
                .objects
                .iter_mut()
                .find(|o| o.kind == kind && o.name == name && o.namespace == namespace)
            {
                o.raw = Arc::new(doc);
            } else if kind == Kind::ResourceClaim
                && let Some(g) = self.generated.iter_mut().find(|g| {
                    Some(&g.claim.namespace) == namespace.as_ref() && g.claim.name == name
                })
            {
                g.raw = doc;
            }
        }
    }

    /// Brings the objects in step with pods the scheduler no longer has (evicted when
    /// its clock moved, or removed), as the API server and the resourceclaim controller
    /// leave them: each such pod's object is dropped; a pod the scheduler holds pending
    /// whose object still names a node (a preemption victim, which the scheduler puts
    /// back in its queue, as the victim's controller would recreate it) is written
    /// pending: without `spec.nodeName`, `status.phase: Pending`, without its
    /// `PodScheduled` condition; every claim loses the `status.reservedFor` entries of
    /// pods that no longer exist or are no longer bound, and a claim the scheduler
    /// holds unallocated loses `status.allocation` and the
    /// [`DELETE_PROTECTION_FINALIZER`](crate::output::DELETE_PROTECTION_FINALIZER). Pods
    /// still held back ([`Snapshot::waiting`]) are kept. Returns the dropped pods,
    /// `namespace/name`, in input order.
    pub fn fold_deletions(&mut self) -> Vec<String> {
        let gone = |s: &Snapshot, ns: &str, name: &str| {
            s.scheduler.pod(&format!("{ns}/{name}")).is_none()
                && s.waiting(Kind::Pod, ns, name).is_none()
        };
        // Held by the scheduler, but not bound (a preemption victim queued again).
        let pending = |s: &Snapshot, ns: &str, name: &str| {
            s.scheduler
                .pod(&format!("{ns}/{name}"))
                .is_some_and(|p| p.node_name.is_none())
        };
        // Gone, or pending: a claim's reservation for it is stale.
        let unbound =
            |s: &Snapshot, ns: &str, name: &str| pending(s, ns, name) || gone(s, ns, name);
        let mut dropped = Vec::new();
        let mut kept = Vec::with_capacity(self.objects.len());
        for mut o in std::mem::take(&mut self.objects) {
            let ns = o.namespace.clone().unwrap_or_default();
            if o.kind == Kind::Pod && gone(self, &ns, &o.name) {
                dropped.push(format!("{ns}/{}", o.name));
                continue;
            }
            if o.kind == Kind::Pod
                && o.raw.pointer("/spec/nodeName").is_some()
                && pending(self, &ns, &o.name)
            {
                unbind(Arc::make_mut(&mut o.raw));
            }
            kept.push(o);
        }
        self.objects = kept;
        // Each claim is looked at in place and written only when something changes, so
        // a document shared with a copy of the snapshot is copied only then.
        for i in 0..self.objects.len() {
            let o = &self.objects[i];
            if o.kind != Kind::ResourceClaim {
                continue;
            }
            let ns = o.namespace.clone().unwrap_or_default();
            let unallocated = self
                .scheduler
                .allocation(&format!("{ns}/{}", o.name))
                .is_none();
            let stale = stale_reservations(&o.raw, |p| unbound(self, &ns, p));
            if stale.contains(&true) || (unallocated && crate::output::release_changes(&o.raw)) {
                let doc = Arc::make_mut(&mut self.objects[i].raw);
                forget_pods(doc, &stale, unallocated);
            }
        }
        for i in 0..self.generated.len() {
            let g = &self.generated[i];
            let ns = g.claim.namespace.clone();
            let unallocated = self
                .scheduler
                .allocation(&format!("{ns}/{}", g.claim.name))
                .is_none();
            let stale = stale_reservations(&g.raw, |p| unbound(self, &ns, p));
            if stale.contains(&true) || (unallocated && crate::output::release_changes(&g.raw)) {
                forget_pods(&mut self.generated[i].raw, &stale, unallocated);
            }
        }
        dropped
    }
}

/// Writes a pod object as pending: no `spec.nodeName`, `status.phase: Pending` (when
/// it had a phase), no `PodScheduled` condition.
fn unbind(doc: &mut Value) {
    if let Some(spec) = doc.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("nodeName");
    }
    let Some(status) = doc.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    if status.contains_key("phase") {
        status.insert("phase".to_owned(), Value::String("Pending".to_owned()));
    }
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        conditions.retain(|c| c.get("type").and_then(Value::as_str) != Some("PodScheduled"));
    }
}

/// For each `status.reservedFor` entry of a claim, whether it names a pod that is gone.
fn stale_reservations(doc: &Value, gone: impl Fn(&str) -> bool) -> Vec<bool> {
    doc.pointer("/status/reservedFor")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|r| {
                    r.get("resource").and_then(Value::as_str) == Some("pods")
                        && r.get("name").and_then(Value::as_str).is_some_and(&gone)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Drops the `stale` reservations of a claim and, when the scheduler holds it
/// unallocated, its allocation and delete-protection finalizer.
fn forget_pods(doc: &mut Value, stale: &[bool], unallocated: bool) {
    if let Some(list) = doc
        .pointer_mut("/status/reservedFor")
        .and_then(Value::as_array_mut)
    {
        let mut i = 0;
        list.retain(|_| {
            i += 1;
            !stale.get(i - 1).copied().unwrap_or(false)
        });
    }
    if unallocated {
        crate::output::release_claim(doc);
    }
}
