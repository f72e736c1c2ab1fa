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
    /// leave them: each such pod's object is dropped; every claim loses the
    /// `status.reservedFor` entries of pods that no longer exist, and a claim the
    /// scheduler holds unallocated loses `status.allocation` and the
    /// [`DELETE_PROTECTION_FINALIZER`](crate::output::DELETE_PROTECTION_FINALIZER). Pods still held back
    /// ([`Snapshot::waiting`]) are kept. Returns the dropped pods, `namespace/name`, in
    /// input order.
    pub fn fold_deletions(&mut self) -> Vec<String> {
        let gone = |s: &Snapshot, ns: &str, name: &str| {
            s.scheduler.pod(&format!("{ns}/{name}")).is_none()
                && s.waiting(Kind::Pod, ns, name).is_none()
        };
        let mut dropped = Vec::new();
        let mut kept = Vec::with_capacity(self.objects.len());
        for o in std::mem::take(&mut self.objects) {
            let ns = o.namespace.clone().unwrap_or_default();
            if o.kind == Kind::Pod && gone(self, &ns, &o.name) {
                dropped.push(format!("{ns}/{}", o.name));
            } else {
                kept.push(o);
            }
        }
        self.objects = kept;
        let claims: Vec<(String, String, bool)> = self
            .objects
            .iter()
            .filter(|o| o.kind == Kind::ResourceClaim)
            .map(|o| (o.namespace.clone().unwrap_or_default(), o.name.clone()))
            .chain(
                self.generated
                    .iter()
                    .map(|g| (g.claim.namespace.clone(), g.claim.name.clone())),
            )
            .map(|(ns, name)| {
                let unallocated = self.scheduler.allocation(&format!("{ns}/{name}")).is_none();
                (ns, name, unallocated)
            })
            .collect();
        for (ns, name, unallocated) in claims {
            let stale: Vec<bool> = self
                .claim_raw(&ns, &name)
                .and_then(|doc| doc.pointer("/status/reservedFor"))
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .map(|r| {
                            r.get("resource").and_then(Value::as_str) == Some("pods")
                                && r.get("name")
                                    .and_then(Value::as_str)
                                    .is_some_and(|p| gone(self, &ns, p))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let Some(doc) = self.claim_raw_mut(&ns, &name) else {
                continue;
            };
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
        dropped
    }

    fn claim_raw(&self, ns: &str, name: &str) -> Option<&Value> {
        let o = self.object(Kind::ResourceClaim, Some(ns), name);
        o.map(|o| &*o.raw)
            .or_else(|| self.generated_claim(ns, name).map(|g| &g.raw))
    }

    fn claim_raw_mut(&mut self, ns: &str, name: &str) -> Option<&mut Value> {
        if let Some(i) = self.objects.iter().position(|o| {
            o.kind == Kind::ResourceClaim && o.name == name && o.namespace.as_deref() == Some(ns)
        }) {
            return Some(Arc::make_mut(&mut self.objects[i].raw));
        }
        self.generated
            .iter_mut()
            .find(|g| g.claim.namespace == ns && g.claim.name == name)
            .map(|g| &mut g.raw)
    }
}
