//! The decision contract: how a scheduler's decision documents change the input's
//! objects before [`check`](super::check) judges them (`docs/DECISIONS.md`).
//!
//! A decision document is one of:
//!
//! - **a patch** of the input's object of the same kind, namespace and name, read with
//!   JSON merge-patch rules (RFC 7386): the fields it has replace the input's, objects
//!   merge key by key, `null` deletes, lists are replaced whole, and the fields it
//!   lacks keep the input's. A Pod with only `metadata` and `spec.nodeName`, a
//!   ResourceClaim with only `status` (kube-scheduler's status update) are patches.
//! - **a whole object**: it has the fields the API requires of its kind (a Pod's
//!   `spec.containers`, a Node's `status.capacity` or `status.allocatable`, a
//!   PriorityClass's `value`, the `spec` of the other kinds; any Namespace), as
//!   `gangpack plan -o yaml` and `kubectl get -o yaml` write them. It replaces the
//!   input's object (an update), or is added when the input has none (a claim made
//!   from a pod's template, a DeviceTaintRule).
//! - **a `v1` Binding** (the `pods/binding` subresource, what kube-scheduler posts):
//!   the pod gets `spec.nodeName`.
//!
//! Refused, as the API server refuses them, each an error naming the decision and its
//! field (so `check` exits 2, and nothing is judged): a patch or Binding for an object
//! the input does not have (with the closest name there is); a Binding for a pod that
//! is already bound or being deleted; a changed `metadata.uid`; a change to what the
//! API keeps immutable (a Pod's spec but for `spec.nodeName`, added tolerations, removed
//! scheduling gates and the few other fields an update may set; a bound pod's node; a
//! ResourceClaim's or ResourceClaimTemplate's spec; a claim's allocation, once set,
//! other than by removing it).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::load::Loaded;
use crate::object::{Binding, InputError, InputErrors, Kind, Object, Source};

/// What [`apply_decisions`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Decision objects merged into an object of the input as patches.
    pub patched: usize,
    /// Whole decision objects that replaced an object of the input.
    pub replaced: usize,
    /// Whole decision objects that the input did not have.
    pub added: usize,
    /// Bindings applied.
    pub bound: usize,
}

type Key = (Kind, Option<String>, String);

fn key_of(o: &Object) -> Key {
    (o.kind, o.namespace.clone(), o.name.clone())
}

/// Applies decision documents over a dump (see the module docs): patches merge, whole
/// objects replace or are added, Bindings bind; a later decision for the same object
/// applies over the earlier. On error the dump is unchanged, and every refused
/// decision is reported.
pub fn apply_decisions(dump: &mut Loaded, decisions: Loaded) -> Result<Applied, InputErrors> {
    apply_decisions_over(dump, decisions, |_| Vec::new())
}

/// [`apply_decisions`], where a patch may also name a ResourceClaim that the input
/// lacks but that `generated` (called at most once, when one does, with the input's
/// objects) has: a claim the
/// resourceclaim controller would make from a pod's template, whose name `plan` and
/// `explain` print (and a pod's `status.resourceClaimStatuses` records). The patch
/// applies over that claim, which joins the objects.
pub fn apply_decisions_over(
    dump: &mut Loaded,
    decisions: Loaded,
    generated: impl FnOnce(&[Object]) -> Vec<Object>,
) -> Result<Applied, InputErrors> {
    let mut generated = Some(generated);
    let mut made: Vec<Object> = Vec::new();
    let mut at: BTreeMap<Key, usize> = BTreeMap::new();
    for (i, o) in dump.objects.iter().enumerate() {
        at.entry(key_of(o)).or_insert(i);
    }
    let original = dump.objects.len();
    let mut objects = dump.objects.clone();
    let mut applied = Applied::default();
    let mut errors = InputErrors::default();
    for d in decisions.objects {
        let key = key_of(&d);
        let whole = is_whole(d.kind, &d.raw);
        let mut i = at.get(&key).copied();
        if i.is_none() && whole {
            at.insert(key, objects.len());
            objects.push(d);
            applied.added += 1;
            continue;
        }
        if i.is_none() && d.kind == Kind::ResourceClaim {
            if let Some(g) = generated.take() {
                made = g(&dump.objects);
            }
            if let Some(claim) = made.iter().find(|c| key_of(c) == key) {
                i = Some(objects.len());
                at.insert(key, objects.len());
                objects.push(claim.clone());
                // A patch of a generated claim is counted as one (below).
                applied.patched += 1;
            }
        }
        let Some(i) = i else {
            let rule = format!(
                "a decision patches the input's object of the same kind, namespace and name; a whole new object has {}",
                whole_fields(d.kind)
            );
            let target = (d.kind, d.namespace.as_deref(), d.name.as_str());
            errors.push(missing(&d.source, d.describe(), target, &objects, &rule));
            continue;
        };
        let raw = if whole {
            Arc::clone(&d.raw)
        } else {
            let mut merged = (*objects[i].raw).clone();
            merge_patch(&mut merged, &d.raw);
            Arc::new(merged)
        };
        // Held against the input's object: a chain of decisions cannot walk a field
        // away from it step by step.
        let base = if i < original {
            &dump.objects[i].raw
        } else {
            &objects[i].raw
        };
        let problems = refusals(d.kind, base, &raw);
        if !problems.is_empty() {
            for (field, message) in problems {
                errors.push(error(&d.source, d.describe(), &field, message));
            }
            continue;
        }
        if i < original {
            if whole {
                applied.replaced += 1;
            } else {
                applied.patched += 1;
            }
        }
        objects[i] = Object { raw, ..d };
    }
    for b in &decisions.bindings {
        match bind(b, &at, &objects) {
            Ok((i, raw)) => {
                let o = &mut objects[i];
                o.source = b.source.clone();
                o.raw = Arc::new(raw);
                applied.bound += 1;
            }
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    dump.objects = objects;
    dump.warnings.extend(decisions.warnings);
    Ok(applied)
}

/// Whether a decision document is a whole object of its kind: it has what the API
/// requires of one (see the module docs).
pub fn is_whole(kind: Kind, raw: &Value) -> bool {
    let has = |pointer: &str| raw.pointer(pointer).is_some_and(|v| !v.is_null());
    match kind {
        Kind::Namespace => true,
        Kind::Pod => has("/spec/containers"),
        Kind::Node => has("/status/capacity") || has("/status/allocatable"),
        Kind::PriorityClass => has("/value"),
        Kind::DeviceClass
        | Kind::ResourceSlice
        | Kind::DeviceTaintRule
        | Kind::ResourceClaimTemplate
        | Kind::ResourceClaim
        | Kind::Workload
        | Kind::PodGroup => has("/spec"),
    }
}

/// What a whole object of the kind has that a patch lacks, for messages.
fn whole_fields(kind: Kind) -> &'static str {
    match kind {
        Kind::Namespace => "nothing",
        Kind::Pod => "spec.containers",
        Kind::Node => "status.capacity or status.allocatable",
        Kind::PriorityClass => "value",
        _ => "spec",
    }
}

/// RFC 7386 JSON merge patch: `patch`'s members replace `target`'s, objects merge
/// member by member, `null` removes, anything else (lists too) replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (k, v) in patch {
        if v.is_null() {
            target.remove(k);
        } else {
            merge_patch(target.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

fn error(source: &Source, object: String, field: &str, message: String) -> InputError {
    InputError {
        source: Some(source.clone()),
        object: Some(object),
        field: field.to_owned(),
        message,
    }
}

/// A decision (`object`) naming an object of `kind` the input does not have; `rule`
/// says what such a decision must name.
fn missing(
    source: &Source,
    object: String,
    (kind, namespace, name): (Kind, Option<&str>, &str),
    objects: &[Object],
    rule: &str,
) -> InputError {
    let guess = closest(kind, namespace, name, objects)
        .map(|o| format!(" (did you mean {}?)", o.describe()))
        .unwrap_or_default();
    let message = format!("the input has no such {kind}{guess}: {rule}");
    error(source, object, "metadata.name", message)
}

/// The object of the kind whose `namespace/name` is nearest to the one asked for, if
/// near enough to be a misspelling.
fn closest<'a>(
    kind: Kind,
    namespace: Option<&str>,
    name: &str,
    objects: &'a [Object],
) -> Option<&'a Object> {
    let full = |ns: Option<&str>, n: &str| match ns {
        Some(ns) => format!("{ns}/{n}"),
        None => n.to_owned(),
    };
    let wanted = full(namespace, name);
    let limit = (wanted.chars().count() / 3).max(2);
    objects
        .iter()
        .filter(|o| o.kind == kind)
        .map(|o| {
            (
                crate::edit_distance(&wanted, &full(o.namespace.as_deref(), &o.name)),
                o,
            )
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, o)| o)
}

/// A Binding applied to its pod: the pod's index and its document with `spec.nodeName`.
fn bind(
    b: &Binding,
    at: &BTreeMap<Key, usize>,
    objects: &[Object],
) -> Result<(usize, Value), InputError> {
    let key = (Kind::Pod, Some(b.namespace.clone()), b.name.clone());
    let Some(&i) = at.get(&key) else {
        let target = (Kind::Pod, Some(b.namespace.as_str()), b.name.as_str());
        let rule = "a Binding binds a pod of the input";
        return Err(missing(&b.source, b.describe(), target, objects, rule));
    };
    let pod = &objects[i].raw;
    let refuse = |field: &str, message: String| Err(error(&b.source, b.describe(), field, message));
    if let Some(node) = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return refuse(
            "metadata.name",
            format!(
                "pod {}/{} is already bound to node {node} (the API server refuses a second binding)",
                b.namespace, b.name
            ),
        );
    }
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        return refuse(
            "metadata.name",
            format!(
                "pod {}/{} is being deleted (metadata.deletionTimestamp): the API server refuses to bind it",
                b.namespace, b.name
            ),
        );
    }
    let mut raw = (**pod).clone();
    merge_patch(
        &mut raw,
        &serde_json::json!({ "spec": { "nodeName": b.node } }),
    );
    Ok((i, raw))
}

/// What the API server would refuse in changing `before` into `after` (both documents
/// of `kind`): `(field, message)` pairs.
fn refusals(kind: Kind, before: &Value, after: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let uid = |v: &Value| {
        v.pointer("/metadata/uid")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if let (Some(a), Some(b)) = (uid(before), uid(after))
        && a != b
    {
        out.push((
            "metadata.uid".to_owned(),
            format!(
                "is {b}, but the input's object has uid {a}: a decision changes the object it names, not another one of that name"
            ),
        ));
    }
    match kind {
        Kind::Pod => pod_refusals(before, after, &mut out),
        Kind::ResourceClaim => {
            if let Some(field) = first_difference("spec", before.get("spec"), after.get("spec")) {
                out.push((
                    field,
                    "a ResourceClaim's spec is immutable: a decision may change its status (allocation, reservedFor) and metadata only".to_owned(),
                ));
            }
            let was = before.pointer("/status/allocation");
            let now = after.pointer("/status/allocation");
            if let (Some(was), Some(now)) = (was, now)
                && let Some(field) = first_difference("status.allocation", Some(was), Some(now))
            {
                out.push((
                    field,
                    "a claim's allocation is immutable once set: the claim must be deallocated (allocation removed) before it is allocated again".to_owned(),
                ));
            }
        }
        Kind::ResourceClaimTemplate => {
            if let Some(field) = first_difference("spec", before.get("spec"), after.get("spec")) {
                out.push((
                    field,
                    "a ResourceClaimTemplate's spec is immutable".to_owned(),
                ));
            }
        }
        _ => {}
    }
    out
}

/// A pod update the API server refuses: a change of its spec other than those an
/// update may make, and a bound pod's node changed.
fn pod_refusals(before: &Value, after: &Value, out: &mut Vec<(String, String)>) {
    let node = |v: &Value| {
        v.pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
    };
    if let Some(was) = node(before)
        && node(after).as_deref() != Some(was.as_str())
    {
        let now =
            node(after).map_or_else(|| "removes it".to_owned(), |n| format!("sets it to {n}"));
        out.push((
            "spec.nodeName".to_owned(),
            format!(
                "the pod is bound to node {was} in the input, and the decision {now}: a bound pod cannot be moved or unbound (evict it with metadata.deletionTimestamp)"
            ),
        ));
    }
    let (Some(was), Some(now)) = (before.get("spec"), after.get("spec")) else {
        if before.get("spec").is_some() {
            out.push((
                "spec".to_owned(),
                "a decision may not remove a Pod's spec".to_owned(),
            ));
        }
        return;
    };
    if let Some(field) = first_difference(
        "spec",
        Some(&immutable_spec(was)),
        Some(&immutable_spec(now)),
    ) {
        out.push((
            field,
            "a Pod's spec is immutable but for spec.nodeName (the binding), added tolerations, removed scheduling gates, container images, activeDeadlineSeconds and terminationGracePeriodSeconds".to_owned(),
        ));
    }
    let tolerations = |v: &Value| v.get("tolerations").and_then(Value::as_array).cloned();
    let kept = tolerations(now).unwrap_or_default();
    if let Some(removed) = tolerations(was)
        .unwrap_or_default()
        .iter()
        .position(|t| !kept.contains(t))
    {
        out.push((
            format!("spec.tolerations[{removed}]"),
            "a pod's tolerations may be added to, not removed".to_owned(),
        ));
    }
    let gates = |v: &Value| v.get("schedulingGates").and_then(Value::as_array).cloned();
    let had = gates(was).unwrap_or_default();
    if let Some(added) = gates(now)
        .unwrap_or_default()
        .iter()
        .position(|g| !had.contains(g))
    {
        out.push((
            format!("spec.schedulingGates[{added}]"),
            "a pod's scheduling gates may be removed, not added".to_owned(),
        ));
    }
}

/// A pod's spec without what an update may change.
fn immutable_spec(spec: &Value) -> Value {
    let mut spec = spec.clone();
    if let Some(m) = spec.as_object_mut() {
        for k in [
            "nodeName",
            "tolerations",
            "schedulingGates",
            "activeDeadlineSeconds",
            "terminationGracePeriodSeconds",
            "ephemeralContainers",
        ] {
            m.remove(k);
        }
        for list in ["containers", "initContainers"] {
            if let Some(Value::Array(cs)) = m.get_mut(list) {
                for c in cs {
                    if let Some(c) = c.as_object_mut() {
                        c.remove("image");
                    }
                }
            }
        }
    }
    spec
}

/// The path of the first place where two values differ (`spec.containers[0].resources`),
/// or `None` when they are equal.
fn first_difference(path: &str, a: Option<&Value>, b: Option<&Value>) -> Option<String> {
    match (a, b) {
        (None, None) => None,
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .find_map(|k| first_difference(&format!("{path}.{k}"), x.get(k), y.get(k)))
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(&format!("{path}[{i}]"), Some(p), Some(q))),
        (a, b) => (a != b).then(|| path.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        // The RFC's own example (section 3).
        let mut target = json!({
            "title": "Goodbye!",
            "author": {"givenName": "John", "familyName": "Doe"},
            "tags": ["example", "sample"],
            "content": "This will be unchanged"
        });
        let patch = json!({
            "title": "Hello!",
            "phoneNumber": "+01-123-456-7890",
            "author": {"familyName": null},
            "tags": ["example"]
        });
        merge_patch(&mut target, &patch);
        assert_eq!(
            target,
            json!({
                "title": "Hello!",
                "author": {"givenName": "John"},
                "tags": ["example"],
                "content": "This will be unchanged",
                "phoneNumber": "+01-123-456-7890"
            })
        );
        // A non-object patch replaces; an object patch over a scalar starts afresh.
        let mut t = json!({"a": 1});
        merge_patch(&mut t, &json!(["x"]));
        assert_eq!(t, json!(["x"]));
        let mut t = json!({"a": "s"});
        merge_patch(&mut t, &json!({"a": {"b": null, "c": 1}}));
        assert_eq!(t, json!({"a": {"c": 1}}));
    }

    const INPUT: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec:\n  containers: [{name: c}]\n  resourceClaims: [{name: g, resourceClaimName: a-gpu}]\n";

    fn load(text: &str, decisions: bool) -> Result<Loaded, InputErrors> {
        let options = crate::LoadOptions {
            decisions,
            ..crate::LoadOptions::default()
        };
        crate::load_str_with(text, "t.yaml", &options)
    }

    /// A refused decision leaves the dump as it was, even after decisions that did
    /// apply; every refusal is reported. Catches: a partial apply on error.
    #[test]
    fn a_refused_decision_changes_nothing() {
        let mut dump = load(INPUT, false).unwrap();
        let before = dump.objects.clone();
        let decisions = load(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec: {nodeName: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: ml}\nspec: {nodeName: n1}\n---\napiVersion: v1\nkind: Binding\nmetadata: {name: c, namespace: ml}\ntarget: {name: n1}\n",
            true,
        )
        .unwrap();
        let errors = apply_decisions(&mut dump, decisions).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors}");
        assert_eq!(dump.objects, before);
    }

    /// A patch keeps what it lacks, a whole object replaces, a Binding binds, a new
    /// whole object is added; the counts say which.
    #[test]
    fn each_form_applies_as_documented() {
        let mut dump = load(INPUT, false).unwrap();
        let decisions = load(
            "apiVersion: v1\nkind: Binding\nmetadata: {name: a, namespace: ml}\ntarget: {name: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml, labels: {x: y}}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: a-gpu, namespace: ml}\nspec: {}\n",
            true,
        )
        .unwrap();
        assert_eq!(decisions.bindings.len(), 1);
        let applied = apply_decisions(&mut dump, decisions).unwrap();
        assert_eq!(
            applied,
            Applied {
                patched: 1,
                replaced: 0,
                added: 1,
                bound: 1
            }
        );
        let pod = &dump.objects[0].raw;
        assert_eq!(pod.pointer("/spec/nodeName"), Some(&json!("n1")));
        assert_eq!(pod.pointer("/metadata/labels/x"), Some(&json!("y")));
        assert_eq!(
            pod.pointer("/spec/resourceClaims/0/name"),
            Some(&json!("g"))
        );
        assert_eq!(dump.objects[1].name, "a-gpu");
    }

    /// Outside decisions a Binding is skipped with a warning by the snapshot, and an
    /// unknown kind is a warning; among decisions the unknown kind is an error.
    #[test]
    fn bindings_and_unknown_kinds_by_mode() {
        let text = "apiVersion: v1\nkind: Binding\nmetadata: {name: a}\ntarget: {name: n1}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
        let plain = load(text, false).unwrap();
        assert!(plain.bindings.is_empty());
        assert_eq!(plain.warnings.len(), 2, "{:?}", plain.warnings);
        assert!(
            plain.warnings[0]
                .message
                .contains("a Binding (v1) is a scheduler's decision"),
            "{:?}",
            plain.warnings
        );
        let e = load(text, true).unwrap_err().to_string();
        assert!(e.contains("ConfigMap \"x\": kind: ConfigMap (v1) is not a kind gangpack reads: a decision is a Binding"), "{e}");
        let mut with_binding = load(text.split("---").next().unwrap(), true).unwrap();
        assert_eq!(with_binding.bindings[0].describe(), "Binding \"default/a\"");
        with_binding
            .objects
            .push(load(INPUT, false).unwrap().objects.remove(0));
        let s = crate::Snapshot::build(with_binding, &crate::BuildOptions::default()).unwrap();
        assert!(
            s.warnings
                .iter()
                .any(|w| w.message.contains("a Binding is a scheduler's decision")),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn first_difference_names_the_path() {
        let a = json!({"containers": [{"name": "c", "resources": {"cpu": "1"}}]});
        let b = json!({"containers": [{"name": "c", "resources": {"cpu": "2"}}]});
        assert_eq!(
            first_difference("spec", Some(&a), Some(&b)).as_deref(),
            Some("spec.containers[0].resources.cpu")
        );
        assert_eq!(first_difference("spec", Some(&a), Some(&a)), None);
        assert_eq!(
            first_difference("spec", Some(&a), None).as_deref(),
            Some("spec")
        );
    }
}
