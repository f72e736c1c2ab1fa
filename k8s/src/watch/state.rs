//! The objects a watch has seen, as they are now.

use std::collections::BTreeMap;
use std::fmt;

use super::event::EventType;
use crate::load::Loaded;
use crate::object::{Kind, Object, Source};

/// What identifies an object: kind, namespace (namespaced kinds), name.
type Key = (Kind, Option<String>, String);

fn key_of(o: &Object) -> Key {
    (o.kind, o.namespace.clone(), o.name.clone())
}

#[derive(Clone, Debug)]
struct Entry {
    object: Object,
    /// It came from a starting dump and no event has been applied to it since.
    initial: bool,
}

/// What an event did to the [`Objects`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// `ADDED`: a new object.
    Added,
    /// `ADDED` of an object of the starting dump: the stream's own listing replaces it
    /// (`kubectl get --watch` lists every object first).
    Relisted,
    /// `MODIFIED`: the object replaced.
    Modified,
    /// `DELETED`: the object removed.
    Deleted,
}

/// Why an event was not applied (the objects are as they were).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejected {
    /// `ADDED` of an object a stream already added, with no `DELETED` between: the
    /// stream is inconsistent (or two streams watch the same kind); the object is kept
    /// as it was.
    AlreadyAdded {
        /// Where the object kept was last set (its `ADDED` or last `MODIFIED`).
        current: Source,
    },
    /// `MODIFIED` of an object that was never added (or was deleted): the stream
    /// missed its `ADDED`.
    NotAdded,
    /// `DELETED` of an object that is not there: nothing to delete.
    NotPresent,
    /// A `BOOKMARK` or `ERROR` event: it carries no object to apply.
    NoObject(EventType),
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejected::AlreadyAdded { current } => write!(
                f,
                "ADDED, but it is already there (from {current}) and was not DELETED: not \
                 applied, the object is kept as it was; two streams of one kind, or a stream \
                 that lost events (list again)"
            ),
            Rejected::NotAdded => f.write_str(
                "MODIFIED, but it was never added (or was deleted): not applied; the stream \
                 missed its ADDED (list again: kubectl get --watch without --watch-only \
                 lists every object first)",
            ),
            Rejected::NotPresent => {
                f.write_str("DELETED, but it was never added: nothing to delete")
            }
            Rejected::NoObject(t) => write!(f, "{t} carries no object to apply"),
        }
    }
}

/// The objects a watch follows, keyed by kind, namespace and name, each as its last
/// event left it. Events apply as a Kubernetes informer's store applies them, and
/// an event that does not fit what came before ([`Rejected`]) leaves them unchanged.
///
/// ```
/// use gangpack_k8s::watch::{Applied, EventType, Objects, Rejected};
/// use gangpack_k8s::{Kind, Object, Source};
///
/// let node = |n: &str| Object {
///     source: Source { file: "nodes.json".into(), doc: 1, item: None },
///     kind: Kind::Node,
///     namespace: None,
///     name: n.into(),
///     raw: std::sync::Arc::new(serde_json::json!({"kind": "Node"})),
/// };
/// let mut objects = Objects::default();
/// assert_eq!(objects.apply(EventType::Added, node("a")), Ok(Applied::Added));
/// assert_eq!(objects.apply(EventType::Modified, node("b")), Err(Rejected::NotAdded));
/// assert_eq!(objects.apply(EventType::Deleted, node("a")), Ok(Applied::Deleted));
/// assert!(objects.is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Objects {
    map: BTreeMap<Key, Entry>,
}

impl Objects {
    /// Adds an object of a starting dump; `Err` with the first one's source when an
    /// object of the same kind, namespace and name is there already (the dump is
    /// invalid, as [`Snapshot::build`](crate::Snapshot::build) says).
    pub fn insert_initial(&mut self, object: Object) -> Result<(), Source> {
        match self.map.entry(key_of(&object)) {
            std::collections::btree_map::Entry::Occupied(e) => Err(e.get().object.source.clone()),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(Entry {
                    object,
                    initial: true,
                });
                Ok(())
            }
        }
    }

    /// Applies an `ADDED`, `MODIFIED` or `DELETED` event of `object`; an event that does
    /// not fit what came before changes nothing ([`Rejected`]).
    pub fn apply(&mut self, kind: EventType, object: Object) -> Result<Applied, Rejected> {
        let key = key_of(&object);
        match kind {
            EventType::Added => match self.map.get_mut(&key) {
                Some(e) if e.initial => {
                    *e = Entry {
                        object,
                        initial: false,
                    };
                    Ok(Applied::Relisted)
                }
                Some(e) => Err(Rejected::AlreadyAdded {
                    current: e.object.source.clone(),
                }),
                None => {
                    self.map.insert(
                        key,
                        Entry {
                            object,
                            initial: false,
                        },
                    );
                    Ok(Applied::Added)
                }
            },
            EventType::Modified => match self.map.get_mut(&key) {
                Some(e) => {
                    *e = Entry {
                        object,
                        initial: false,
                    };
                    Ok(Applied::Modified)
                }
                None => Err(Rejected::NotAdded),
            },
            EventType::Deleted => match self.map.remove(&key) {
                Some(_) => Ok(Applied::Deleted),
                None => Err(Rejected::NotPresent),
            },
            EventType::Bookmark | EventType::Error => Err(Rejected::NoObject(kind)),
        }
    }

    /// The object of that kind and name, as it is now.
    pub fn get(&self, kind: Kind, namespace: Option<&str>, name: &str) -> Option<&Object> {
        let key = (kind, namespace.map(str::to_owned), name.to_owned());
        self.map.get(&key).map(|e| &e.object)
    }

    /// How many objects there are.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every object, by kind ([`Kind::ALL`] order), namespace, then name: the order in
    /// which `kubectl get -A` lists them, kind by kind.
    pub fn iter(&self) -> impl Iterator<Item = &Object> + '_ {
        self.map.values().map(|e| &e.object)
    }

    /// The objects as a load of them would hand them over, in [`Objects::iter`]'s order
    /// (each a shared copy: the documents are not copied), without warnings: what
    /// [`Snapshot::build`](crate::Snapshot::build) takes.
    pub fn loaded(&self) -> Loaded {
        Loaded {
            objects: self.iter().cloned().collect(),
            warnings: Vec::new(),
            bindings: Vec::new(),
            empty: Vec::new(),
        }
    }
}
