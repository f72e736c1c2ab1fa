//! Patching loaded documents: a working set of changed objects, and the condition
//! semantics of the writers gangpack stands in for.

use std::collections::BTreeMap;

use gangpack::Time;
use serde_json::{Map, Value};

use super::time::time_to_rfc3339;
use crate::{Kind, Snapshot};

/// Objects being changed, each as (original, current). Loaded lazily from the
/// snapshot; objects with no original (generated claims, rules given on the command
/// line) are new and always written.
pub(crate) struct Changes<'a> {
    snapshot: &'a Snapshot,
    /// The snapshot's objects by kind, namespace and name (the first of duplicates, as
    /// [`Snapshot::object`] finds): a dump of 100,000 GPUs has 60,000 objects, and a
    /// plan looks up every object it changes.
    index: BTreeMap<(usize, Option<&'a str>, &'a str), &'a crate::Object>,
    objects: BTreeMap<(usize, String, String), (Option<Value>, Value)>,
}

fn kind_index(kind: Kind) -> usize {
    Kind::ALL
        .iter()
        .position(|k| *k == kind)
        .expect("every kind is in Kind::ALL")
}

/// `namespace/name` → (namespace, name); a key without `/` is a cluster-scoped name.
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

impl<'a> Changes<'a> {
    pub(crate) fn new(snapshot: &'a Snapshot) -> Changes<'a> {
        let mut index = BTreeMap::new();
        for o in &snapshot.objects {
            index
                .entry((kind_index(o.kind), o.namespace.as_deref(), o.name.as_str()))
                .or_insert(o);
        }
        Changes {
            snapshot,
            index,
            objects: BTreeMap::new(),
        }
    }

    /// The loaded object of that kind and name ([`Snapshot::object`], indexed).
    fn loaded(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<&'a crate::Object> {
        self.index
            .get(&(kind_index(kind), namespace, name))
            .copied()
    }

    /// The original document of an object, if it was loaded (or generated).
    pub(crate) fn original(&self, kind: Kind, namespace: &str, name: &str) -> Option<&'a Value> {
        let ns = kind.is_namespaced().then_some(namespace);
        if let Some(o) = self.loaded(kind, ns, name) {
            return Some(&*o.raw);
        }
        if kind == Kind::ResourceClaim {
            return self
                .snapshot
                .generated
                .iter()
                .find(|g| g.claim.namespace == namespace && g.claim.name == name)
                .map(|g| &g.raw);
        }
        None
    }

    /// The working copy of an object, loaded on first use; `None` when the snapshot
    /// has no such object.
    pub(crate) fn get(&mut self, kind: Kind, namespace: &str, name: &str) -> Option<&mut Value> {
        let k = (kind_index(kind), namespace.to_owned(), name.to_owned());
        if !self.objects.contains_key(&k) {
            let ns = kind.is_namespaced().then_some(namespace);
            let entry = if let Some(o) = self.loaded(kind, ns, name) {
                (Some((*o.raw).clone()), (*o.raw).clone())
            } else {
                // Generated claims do not exist in the input: they are new objects.
                let generated = (kind == Kind::ResourceClaim)
                    .then(|| {
                        self.snapshot
                            .generated
                            .iter()
                            .find(|g| g.claim.namespace == namespace && g.claim.name == name)
                    })
                    .flatten()?;
                (None, generated.raw.clone())
            };
            self.objects.insert(k.clone(), entry);
        }
        self.objects.get_mut(&k).map(|(_, v)| v)
    }

    /// Adds an object that does not exist yet (written whatever happens to it).
    pub(crate) fn add_new(&mut self, kind: Kind, namespace: &str, name: &str, value: Value) {
        let k = (kind_index(kind), namespace.to_owned(), name.to_owned());
        self.objects.entry(k).or_insert((None, value));
    }

    /// The changed objects: kind order as in [`Kind::ALL`], then namespace, then name;
    /// objects equal to their original are left out.
    pub(crate) fn finish(self) -> Vec<Value> {
        self.objects
            .into_values()
            .filter(|(original, current)| original.as_ref() != Some(current))
            .map(|(_, current)| current)
            .collect()
    }
}

/// `obj[key]` as an object, replacing a missing or non-object value with `{}`.
pub(crate) fn object_at<'v>(obj: &'v mut Value, key: &str) -> &'v mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let map = obj.as_object_mut().expect("made an object above");
    let slot = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut().expect("made an object above")
}

/// `obj[key]` as an array, replacing a missing or non-array value with `[]`.
pub(crate) fn array_at<'v>(map: &'v mut Map<String, Value>, key: &str) -> &'v mut Vec<Value> {
    let slot = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    slot.as_array_mut().expect("made an array above")
}

/// `metadata.uid` of the object `kind namespace/name` (its document in the input), or
/// the uid gangpack derives for it when it has none ([`Snapshot::derived_uid`]).
pub(crate) fn uid(doc: Option<&Value>, kind: Kind, namespace: &str, name: &str) -> String {
    doc.and_then(|d| d.pointer("/metadata/uid"))
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .map_or_else(
            || Snapshot::derived_uid(kind.as_str(), namespace, name),
            str::to_owned,
        )
}

/// The objects named in `changed` (in `status.reservedFor` and
/// `metadata.ownerReferences`) by a uid gangpack derived, `Kind ns/name`, sorted.
pub(crate) fn derived_uids(changed: &[Value]) -> Vec<String> {
    // Objects among `changed` whose document carries its own uid: a reference to one is
    // that uid, even when it happens to be the one gangpack would derive (as in the
    // manifests `gangpack gen` writes).
    let own: std::collections::BTreeSet<(&str, &str, &str)> = changed
        .iter()
        .filter(|d| {
            d.pointer("/metadata/uid")
                .and_then(Value::as_str)
                .is_some_and(|u| !u.is_empty())
        })
        .filter_map(|d| {
            Some((
                d.get("kind")?.as_str()?,
                d.pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                d.pointer("/metadata/name")?.as_str()?,
            ))
        })
        .collect();
    let mut out = std::collections::BTreeSet::new();
    for doc in changed {
        let ns = doc
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let refs = doc
            .pointer("/status/reservedFor")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| {
                let kind = match r.get("resource").and_then(Value::as_str) {
                    Some("pods") => "Pod",
                    Some("podgroups") => "PodGroup",
                    _ => "",
                };
                (kind, r)
            })
            .chain(
                doc.pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|r| (r.get("kind").and_then(Value::as_str).unwrap_or_default(), r)),
            );
        for (kind, r) in refs {
            let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
            let uid = r.get("uid").and_then(Value::as_str).unwrap_or_default();
            if !kind.is_empty()
                && uid == Snapshot::derived_uid(kind, ns, name)
                && !own.contains(&(kind, ns, name))
            {
                out.insert(format!("{kind} {ns}/{name}"));
            }
        }
    }
    out.into_iter().collect()
}

/// `metadata.generation` of a document, when it has one.
fn generation(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/generation").and_then(Value::as_i64)
}

/// Who writes a condition, which decides its shape and when `lastTransitionTime` moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// core/v1 `PodCondition` through `UpdatePodCondition`: `lastProbeTime: null`,
    /// `reason` / `message` omitted when empty, `observedGeneration` from
    /// `metadata.generation` (PodObservedGenerationTracking); the transition time moves
    /// only when the status changes.
    Pod,
    /// metav1 `Condition` through `meta.SetStatusCondition` (PodGroup): every field
    /// present, `observedGeneration` from `metadata.generation`; the transition time
    /// moves only when the status changes.
    Meta,
    /// metav1 `Condition` applied by the device taint eviction controller
    /// (DeviceTaintRule): the transition time moves whenever the condition differs.
    Controller,
}

/// One condition to set.
pub(crate) struct Condition<'s> {
    pub(crate) kind: &'s str,
    pub(crate) status: bool,
    pub(crate) reason: &'s str,
    pub(crate) message: &'s str,
}

/// The conditions of `obj` (`status.conditions`), created when missing.
fn conditions(obj: &mut Value) -> &mut Vec<Value> {
    array_at(object_at(obj, "status"), "conditions")
}

/// The status (`"True"` / `"False"`) of condition `kind` of `obj`, if present.
pub(crate) fn condition_status<'v>(obj: &'v Value, kind: &str) -> Option<&'v str> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))?
        .get("status")?
        .as_str()
}

/// Sets condition `c` on `obj` as `style`'s writer does at time `at`: a condition of
/// the same type is replaced (keeping its position), others are kept.
pub(crate) fn set_condition(obj: &mut Value, c: &Condition<'_>, at: Time, style: Style) {
    let generation = generation(obj);
    let status = if c.status { "True" } else { "False" };
    let mut new = Map::new();
    new.insert("type".into(), Value::String(c.kind.into()));
    new.insert("status".into(), Value::String(status.into()));
    if let Some(g) = generation {
        new.insert("observedGeneration".into(), Value::from(g));
    }
    if style == Style::Pod {
        new.insert("lastProbeTime".into(), Value::Null);
    }
    if style != Style::Pod || !c.reason.is_empty() {
        new.insert("reason".into(), Value::String(c.reason.into()));
    }
    if style != Style::Pod || !c.message.is_empty() {
        new.insert("message".into(), Value::String(c.message.into()));
    }
    let list = conditions(obj);
    let existing = list
        .iter()
        .position(|x| x.get("type").and_then(Value::as_str) == Some(c.kind));
    let now = Value::String(time_to_rfc3339(at));
    let Some(i) = existing else {
        new.insert("lastTransitionTime".into(), now);
        list.push(Value::Object(new));
        return;
    };
    let old = list[i].as_object().cloned().unwrap_or_default();
    let keep_time = match style {
        Style::Pod | Style::Meta => old.get("status").and_then(Value::as_str) == Some(status),
        Style::Controller => {
            let mut same = old.clone();
            same.remove("lastTransitionTime");
            same == new
        }
    };
    let time = match old.get("lastTransitionTime") {
        Some(t) if keep_time && !t.is_null() => t.clone(),
        _ => now,
    };
    new.insert("lastTransitionTime".into(), time);
    list[i] = Value::Object(new);
}
