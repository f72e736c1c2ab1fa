//! Nodes: their slots (a slice may name a node before the Node object exists), node
//! taints and cordons, scalar resources reserved by pods, and the per-topology-domain
//! device counts.

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError};
use crate::{Node, Quantity, Taint, TaintEffect};

use super::bits::SparseDeviceSet;
use super::ids::{DeviceId, NodeId};
use super::index::DeviceCounts;
use super::intern::Symbol;
use super::{Cluster, ClusterError, not_found};

/// One node resource that does not fit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Shortfall {
    /// The resource name (`cpu`, `memory`, `nvidia.com/gpu`, ...).
    pub resource: String,
    /// What is asked for.
    pub requested: Quantity,
    /// What the node has free.
    pub available: Quantity,
}

/// A node slot: the node (if it exists) and its devices.
#[derive(Clone, Debug, Default)]
pub(super) struct NodeEntry {
    pub(super) name: String,
    /// A fixed hash of `name` (the seeded policies' per-node draw; see
    /// `ranking::hash_str`).
    pub(super) name_hash: u64,
    pub(super) node: Option<Arc<Node>>,
    /// The interned names of the node's `allocatable`, in its (name) order: what
    /// [`Cluster::refresh_free`] keys the free resources by, without a hash lookup per
    /// resource each time a pod reserves or releases resources there.
    allocatable: SmallVec<[Symbol; 6]>,
    pub(super) devices: SparseDeviceSet,
    /// The node-local devices in upstream's allocation order (pools by driver then
    /// name, binding-condition pools last, slices by name, devices in slice order).
    pub(crate) ordered: Vec<DeviceId>,
    /// The node advertises a `pods` allocatable. This and the two flags below are
    /// cached next to the device set, so the placer's per-node scan does not load the
    /// node object for nodes that pass them.
    pod_limit: bool,
    /// `spec.unschedulable` (cordoned).
    cordoned: bool,
    /// The node has a `NoSchedule` or `NoExecute` taint.
    hard_taints: bool,
}

/// What changes on a node as devices are allocated and pods reserve resources (kept
/// apart from [`NodeEntry`], which clones share).
#[derive(Clone, Debug, Default)]
pub(super) struct NodeState {
    pub(super) counts: DeviceCounts,
    /// Scalar resources reserved by consumers (pods), by consumer.
    reserved: BTreeMap<String, BTreeMap<String, Quantity>>,
    /// Their sum by resource name.
    requested: BTreeMap<String, Quantity>,
    /// What the node's shareable devices have left (see `rooms.rs`).
    pub(super) rooms: super::rooms::NodeRooms,
    pub(super) room_summary: Option<super::rooms::RoomSummary>,
    /// The slots in `Cluster::domain_counts` of the node's topology domains, one per
    /// tracked key its labels give a value (none while the node object is missing).
    pub(super) domains: SmallVec<[u32; 2]>,
    /// Allocatable minus requested, per allocatable resource, by interned name (see
    /// [`Cluster::node_free_by_symbol`]): the placer reads this for every node it
    /// counts. Empty while the node object is missing.
    free: SmallVec<[(Symbol, Quantity); 4]>,
}

impl Cluster {
    // ----------------------------------------------------------------- nodes

    /// Adds a node.
    pub fn add_node(&mut self, node: Node) -> Result<NodeId, ClusterError> {
        node.validate()?;
        if self.node(&node.name).is_some() {
            return Err(ClusterError::AlreadyExists(node.object_ref()));
        }
        Ok(self.put_node(node))
    }

    /// Replaces a node (labels, allocatable, taints), keeping its devices.
    pub fn replace_node(&mut self, node: Node) -> Result<NodeId, ClusterError> {
        node.validate()?;
        if self.node(&node.name).is_none() {
            return Err(ClusterError::NotFound(node.object_ref()));
        }
        Ok(self.put_node(node))
    }

    /// Removes a node. Its node-local slices stay (as in Kubernetes, where the driver
    /// or the garbage collector removes them), but no pod can reach them.
    pub fn remove_node(&mut self, name: &str) -> Result<Node, ClusterError> {
        let id = *self
            .node_by_name
            .get(name)
            .ok_or_else(|| not_found(ObjectKind::Node, name))?;
        let Some(old) = self.nodes[id.index()].node.as_deref().cloned() else {
            return Err(not_found(ObjectKind::Node, name));
        };
        self.set_node_domains(id, None);
        self.set_node_labels(id, None);
        let entry = &mut Arc::make_mut(&mut self.nodes)[id.index()];
        entry.node = None;
        entry.allocatable = SmallVec::new();
        entry.pod_limit = false;
        entry.cordoned = false;
        entry.hard_taints = false;
        self.refresh_free(id);
        Ok(old)
    }

    /// Adds a taint to a node (like `kubectl taint`); a taint with the same key and
    /// effect is replaced.
    pub fn taint_node(&mut self, name: &str, taint: Taint) -> Result<(), ClusterError> {
        let mut node = self
            .node(name)
            .cloned()
            .ok_or_else(|| not_found(ObjectKind::Node, name))?;
        node.taints
            .retain(|t| !(t.key == taint.key && t.effect == taint.effect));
        node.taints.push(taint);
        self.replace_node(node).map(|_| ())
    }

    /// Removes a node's taints with this key (and effect, if given); returns how many.
    pub fn untaint_node(
        &mut self,
        name: &str,
        key: &str,
        effect: Option<TaintEffect>,
    ) -> Result<usize, ClusterError> {
        let mut node = self
            .node(name)
            .cloned()
            .ok_or_else(|| not_found(ObjectKind::Node, name))?;
        let before = node.taints.len();
        node.taints
            .retain(|t| !(t.key == key && effect.is_none_or(|e| e == t.effect)));
        let removed = before - node.taints.len();
        self.replace_node(node)?;
        Ok(removed)
    }

    fn put_node(&mut self, node: Node) -> NodeId {
        let id = self.node_slot(&node.name);
        let labels = node.labels.clone();
        self.set_node_domains(id, Some(&labels));
        self.set_node_labels(id, Some(&labels));
        // Names are interned once, when a node first declares them.
        if node
            .allocatable
            .keys()
            .any(|k| self.strings.get(k).is_none())
        {
            let strings = Arc::make_mut(&mut self.strings);
            for k in node.allocatable.keys() {
                strings.intern(k);
            }
        }
        let allocatable = node
            .allocatable
            .keys()
            .map(|k| self.strings.get(k).expect("interned above"))
            .collect();
        let entry = &mut Arc::make_mut(&mut self.nodes)[id.index()];
        entry.allocatable = allocatable;
        entry.pod_limit = node.allocatable.contains_key("pods");
        entry.cordoned = node.unschedulable;
        entry.hard_taints = node
            .taints
            .iter()
            .any(|t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute));
        entry.node = Some(Arc::new(node));
        self.refresh_free(id);
        id
    }

    /// Recomputes a node's free scalar resources (after its allocatable or its
    /// reservations changed): the allocatable and the requested totals are both in
    /// name order, so one merged walk pairs them.
    fn refresh_free(&mut self, id: NodeId) {
        let entry = &self.nodes[id.index()];
        let Some(node) = entry.node.as_deref() else {
            self.node_state[id.index()].free = SmallVec::new();
            self.rescore(id);
            return;
        };
        debug_assert_eq!(node.allocatable.len(), entry.allocatable.len());
        let mut used = self.node_state[id.index()].requested.iter().peekable();
        let free = node
            .allocatable
            .iter()
            .zip(&entry.allocatable)
            .map(|((k, total), &sym)| {
                while used.next_if(|(r, _)| r.as_str() < k.as_str()).is_some() {}
                let taken = used
                    .next_if(|(r, _)| *r == k)
                    .map_or(Quantity::ZERO, |(_, q)| *q);
                (sym, total.saturating_sub(taken))
            })
            .collect();
        self.node_state[id.index()].free = free;
        self.rescore(id);
    }

    /// [`node_free_of`](Self::node_free_of) for a resource name as
    /// [`symbol`](Self::symbol) finds it: no map lookups (`None`, a name no node
    /// declares allocatable, has nothing free).
    pub(crate) fn node_free_by_symbol(&self, node: NodeId, resource: Option<Symbol>) -> Quantity {
        let Some(resource) = resource else {
            return Quantity::ZERO;
        };
        self.node_state
            .get(node.index())
            .and_then(|s| s.free.iter().find(|(k, _)| *k == resource))
            .map_or(Quantity::ZERO, |(_, q)| *q)
    }

    /// The node slot for a name, created on first use (slices may name a node before
    /// the Node object arrives).
    pub(super) fn node_slot(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.node_by_name.get(name) {
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        Arc::make_mut(&mut self.nodes).push(NodeEntry {
            name: name.to_owned(),
            name_hash: super::ranking::hash_str(name),
            ..NodeEntry::default()
        });
        self.node_state.push(NodeState {
            counts: DeviceCounts {
                nodes: 1,
                ..DeviceCounts::default()
            },
            ..NodeState::default()
        });
        Arc::make_mut(&mut self.node_by_name).insert(name.to_owned(), id);
        let at = self
            .node_order
            .partition_point(|o| self.nodes[o.index()].name.as_str() < name);
        Arc::make_mut(&mut self.node_order).insert(at, id);
        self.rescore(id);
        id
    }

    /// Moves a node's counts from the domains of its old labels to those of `labels`.
    fn set_node_domains(&mut self, id: NodeId, labels: Option<&BTreeMap<String, String>>) {
        let state = &mut self.node_state[id.index()];
        let counts = state.counts;
        for &slot in &state.domains {
            self.domains[slot as usize].counts.sub(counts);
        }
        let mut slots = SmallVec::new();
        if let Some(labels) = labels {
            for (key, tracked) in &mut self.topology_keys {
                if let Some(v) = labels.get(key) {
                    slots.push(tracked.join(&mut self.domains, v, counts));
                }
            }
        }
        self.node_state[id.index()].domains = slots;
    }

    /// Moves a node in the label index from its old labels to `labels` (`None`: it
    /// leaves). Labels that stay are not touched, so replacing a node (a taint, say)
    /// does not copy the index.
    fn set_node_labels(&mut self, id: NodeId, labels: Option<&BTreeMap<String, String>>) {
        let empty = BTreeMap::new();
        let new = labels.unwrap_or(&empty);
        let old = self.nodes[id.index()]
            .node
            .as_ref()
            .map_or(&empty, |n| &n.labels);
        let gone: Vec<(String, String)> = old
            .iter()
            .filter(|(k, v)| new.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let came: Vec<(&String, &String)> = new
            .iter()
            .filter(|(k, v)| old.get(*k) != Some(*v))
            .collect();
        if gone.is_empty() && came.is_empty() {
            return;
        }
        let index = Arc::make_mut(&mut self.node_labels);
        for (k, v) in gone {
            if let Some(values) = index.get_mut(&k) {
                if let Some(ids) = values.get_mut(&v) {
                    ids.remove(&id);
                    if ids.is_empty() {
                        values.remove(&v);
                    }
                }
                if values.is_empty() {
                    index.remove(&k);
                }
            }
        }
        for (k, v) in came {
            index
                .entry(k.clone())
                .or_default()
                .entry(v.clone())
                .or_default()
                .insert(id);
        }
    }

    /// The live nodes whose label `key` has the value `value` (empty when none has).
    pub(crate) fn nodes_labelled(&self, key: &str, value: &str) -> Option<&BTreeSet<NodeId>> {
        self.node_labels.get(key).and_then(|v| v.get(value))
    }

    /// The name of a node slot.
    pub(crate) fn node_name_of(&self, id: NodeId) -> &str {
        self.nodes.get(id.index()).map_or("", |e| e.name.as_str())
    }

    /// The node of this name.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.node_by_name
            .get(name)
            .and_then(|id| self.nodes[id.index()].node.as_deref())
    }

    /// The id of a node (or of a node name a slice refers to).
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_by_name.get(name).copied()
    }

    /// The node with this id.
    pub fn node_by_id(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index()).and_then(|e| e.node.as_deref())
    }

    /// Every node, by name.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        self.node_by_name
            .values()
            .filter_map(|id| self.nodes[id.index()].node.as_deref())
    }

    /// The node-local devices of a node (any state).
    pub fn node_devices(&self, node: NodeId) -> Option<&SparseDeviceSet> {
        self.nodes.get(node.index()).map(|e| &e.devices)
    }

    /// A node's node-local devices in upstream's allocation order.
    pub(crate) fn nodes_ordered(&self, node: NodeId) -> &[DeviceId] {
        self.nodes
            .get(node.index())
            .map_or(&[], |e| e.ordered.as_slice())
    }

    /// How many node names are known: at least as many as
    /// [`nodes_with_ids`](Self::nodes_with_ids) yields, and every node id is below it.
    pub(crate) fn node_slots(&self) -> usize {
        debug_assert_eq!(self.nodes.len(), self.node_by_name.len());
        self.nodes.len()
    }

    /// Live nodes as `(id, node)`, by name.
    pub(crate) fn nodes_with_ids(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.node_order
            .iter()
            .filter_map(|id| Some((*id, self.nodes[id.index()].node.as_deref()?)))
    }

    /// Node slot ids by name (live nodes and names only slices refer to).
    pub(crate) fn node_order(&self) -> &[NodeId] {
        &self.node_order
    }

    /// Whether the node advertises a `pods` allocatable (the pods it may run).
    pub(crate) fn node_has_pod_limit(&self, node: NodeId) -> bool {
        self.nodes.get(node.index()).is_some_and(|e| e.pod_limit)
    }

    /// Whether the node is cordoned, and whether it has a `NoSchedule` or `NoExecute`
    /// taint (without loading the node object).
    pub(crate) fn node_flags(&self, node: NodeId) -> (bool, bool) {
        self.nodes
            .get(node.index())
            .map_or((false, false), |e| (e.cordoned, e.hard_taints))
    }

    /// A node slot's free usable devices, of any class (from its counts; no node object
    /// or device set is loaded).
    pub(crate) fn node_free_devices(&self, node: NodeId) -> u32 {
        self.node_state
            .get(node.index())
            .map_or(0, |s| s.counts.free)
    }

    /// What is left of one allocatable resource of a node (zero if it lacks it).
    pub(crate) fn node_free_of(&self, node: NodeId, resource: &str) -> Quantity {
        self.node_free_by_symbol(node, self.strings.get(resource))
    }

    /// A node's device counts, maintained incrementally (O(1)).
    pub fn node_counts(&self, node: NodeId) -> Option<DeviceCounts> {
        self.node_state.get(node.index()).map(|e| e.counts)
    }

    // ----------------------------------------------------------------- node scalars

    /// What is left of a node's allocatable scalar resources (cpu, memory, pods,
    /// extended resources) after the reservations recorded on it.
    pub fn node_free_resources(&self, node: &str) -> Option<BTreeMap<String, Quantity>> {
        let id = self.node_id(node)?;
        let n = self.nodes[id.index()].node.as_ref()?;
        let requested = &self.node_state[id.index()].requested;
        Some(
            n.allocatable
                .iter()
                .map(|(k, v)| {
                    let used = requested.get(k).copied().unwrap_or(Quantity::ZERO);
                    (k.clone(), v.saturating_sub(used))
                })
                .collect(),
        )
    }

    /// Which of `requests` a node cannot hold now (empty when they all fit). A
    /// resource the node does not advertise has nothing free; zero requests always fit.
    pub fn node_shortfalls(
        &self,
        node: &str,
        requests: &BTreeMap<String, Quantity>,
    ) -> Vec<Shortfall> {
        self.shortfalls_on(self.node_id(node), requests)
    }

    /// [`node_shortfalls`](Self::node_shortfalls) by node id (`None`: an unknown node,
    /// which has nothing free), without building the node's free-resource map.
    pub(crate) fn shortfalls_on(
        &self,
        node: Option<NodeId>,
        requests: &BTreeMap<String, Quantity>,
    ) -> Vec<Shortfall> {
        requests
            .iter()
            .filter(|(_, q)| **q > Quantity::ZERO)
            .filter_map(|(name, q)| {
                let available = node.map_or(Quantity::ZERO, |id| self.node_free_of(id, name));
                (*q > available).then(|| Shortfall {
                    resource: name.clone(),
                    requested: *q,
                    available,
                })
            })
            .collect()
    }

    /// Reserves scalar resources on a node for `consumer` (a pod: include `pods: 1`).
    /// Refused, with nothing changed, if the node is unknown, the consumer already holds
    /// a reservation there, or any resource does not fit.
    pub fn reserve_node_resources(
        &mut self,
        node: &str,
        consumer: &str,
        requests: BTreeMap<String, Quantity>,
    ) -> Result<(), ClusterError> {
        // The consumer is a pod; its requests are `resources.requests`.
        let obj = ObjectRef::cluster(ObjectKind::Pod, consumer);
        let mut errs = Vec::new();
        if consumer.is_empty() {
            errs.push(ValidationError::new(
                obj.clone(),
                "metadata.name",
                Problem::Required,
            ));
        }
        crate::model::node::validate_resource_list(
            &obj,
            "spec.resources.requests",
            &requests,
            &mut errs,
        );
        crate::model::error::finish(errs).map_err(ClusterError::Invalid)?;
        let Some(id) = self
            .node_id(node)
            .filter(|id| self.nodes[id.index()].node.is_some())
        else {
            return Err(not_found(ObjectKind::Node, node));
        };
        self.reserve_node_resources_on(id, consumer, requests)
    }

    /// [`reserve_node_resources`](Self::reserve_node_resources) on a live node, by id,
    /// for a non-empty consumer name and requests that pass the resource-list checks
    /// (the placer checks each pod shape's once): no validation, no name lookup.
    pub(crate) fn reserve_node_resources_on(
        &mut self,
        id: NodeId,
        consumer: &str,
        requests: BTreeMap<String, Quantity>,
    ) -> Result<(), ClusterError> {
        if self.node_state[id.index()].reserved.contains_key(consumer) {
            return Err(ClusterError::AlreadyReserved {
                node: self.nodes[id.index()].name.clone(),
                consumer: consumer.to_owned(),
            });
        }
        let short = self.shortfalls_on(Some(id), &requests);
        if !short.is_empty() {
            return Err(ClusterError::Insufficient {
                node: self.nodes[id.index()].name.clone(),
                shortfalls: short,
            });
        }
        self.record_reservation_on(id, consumer, requests);
        Ok(())
    }

    /// Puts back a reservation [`release_node_resources_on`](Self::release_node_resources_on)
    /// took, whether or not it fits now: a running pod's reservation stays when its
    /// node's allocatable shrinks under it (the node is over-committed), and undoing a
    /// simulated eviction must restore exactly what was there. Returns `false`, with
    /// nothing changed, if the node is unknown or gone or the consumer already holds a
    /// reservation there.
    pub(crate) fn restore_node_reservation(
        &mut self,
        node: &str,
        consumer: &str,
        requests: BTreeMap<String, Quantity>,
    ) -> bool {
        let Some(id) = self
            .node_id(node)
            .filter(|id| self.nodes[id.index()].node.is_some())
        else {
            return false;
        };
        if self.node_state[id.index()].reserved.contains_key(consumer) {
            return false;
        }
        self.record_reservation_on(id, consumer, requests);
        true
    }

    fn record_reservation_on(
        &mut self,
        id: NodeId,
        consumer: &str,
        requests: BTreeMap<String, Quantity>,
    ) {
        let e = &mut self.node_state[id.index()];
        for (k, q) in &requests {
            // The name is copied only the first time a pod there requests it.
            if let Some(t) = e.requested.get_mut(k) {
                *t = t.saturating_add(*q);
            } else {
                e.requested
                    .insert(k.clone(), Quantity::ZERO.saturating_add(*q));
            }
        }
        e.reserved.insert(consumer.to_owned(), requests);
        self.refresh_free(id);
    }

    /// Releases a consumer's reservation on a node; returns it.
    pub fn release_node_resources(
        &mut self,
        node: &str,
        consumer: &str,
    ) -> Result<BTreeMap<String, Quantity>, ClusterError> {
        let id = self
            .node_id(node)
            .ok_or_else(|| not_found(ObjectKind::Node, node))?;
        self.release_node_resources_on(id, consumer)
            .ok_or_else(|| ClusterError::NotReserved {
                node: node.to_owned(),
                consumer: consumer.to_owned(),
            })
    }

    /// [`release_node_resources`](Self::release_node_resources) by node id; `None` when
    /// the consumer holds no reservation there.
    pub(crate) fn release_node_resources_on(
        &mut self,
        id: NodeId,
        consumer: &str,
    ) -> Option<BTreeMap<String, Quantity>> {
        let e = &mut self.node_state[id.index()];
        let requests = e.reserved.remove(consumer)?;
        for (k, q) in &requests {
            if let Some(t) = e.requested.get_mut(k) {
                *t = t.saturating_sub(*q);
                if t.is_zero() {
                    e.requested.remove(k);
                }
            }
        }
        self.refresh_free(id);
        Some(requests)
    }

    // ----------------------------------------------------------------- topology

    /// Starts maintaining per-domain counts for a node-label key (e.g. a rack label).
    pub fn track_topology_key(&mut self, key: &str) {
        if self.topology_keys.contains_key(key) {
            return;
        }
        let mut tracked = TrackedKey {
            symbol: Arc::make_mut(&mut self.strings).intern(key),
            domains: BTreeMap::new(),
        };
        for (e, state) in self.nodes.iter().zip(&mut self.node_state) {
            if let Some(v) = e.node.as_ref().and_then(|n| n.labels.get(key)) {
                state
                    .domains
                    .push(tracked.join(&mut self.domains, v, state.counts));
            }
        }
        self.topology_keys.insert(key.to_owned(), tracked);
    }

    /// Counts of one topology domain (`key` = `value`), if `key` is tracked.
    pub fn domain_counts(&self, key: &str, value: &str) -> Option<DeviceCounts> {
        self.topology_keys.get(key).map(|t| {
            t.domains
                .get(value)
                .map_or_else(DeviceCounts::default, |&s| self.domains[s as usize].counts)
        })
    }

    /// Every domain of a tracked key with its counts, by value.
    pub fn domains(&self, key: &str) -> impl Iterator<Item = (&str, DeviceCounts)> + '_ {
        self.topology_keys.get(key).into_iter().flat_map(|t| {
            t.domains
                .iter()
                .map(|(v, &s)| (v.as_str(), self.domains[s as usize].counts))
                .filter(|(_, c)| c.nodes > 0)
        })
    }

    /// The interned name of `key` when it is a tracked topology key: then
    /// [`tracked_label`](Self::tracked_label) answers for it.
    pub(crate) fn tracked_key(&self, key: &str) -> Option<Symbol> {
        self.topology_keys.get(key).map(|t| t.symbol)
    }

    /// Node `id`'s value of the tracked key `key` (see
    /// [`tracked_key`](Self::tracked_key)): its label's value, found among the
    /// node's domain slots without reading its labels. `None` without the label or
    /// the node object.
    pub(crate) fn tracked_label(&self, id: NodeId, key: Symbol) -> Option<&str> {
        self.node_state[id.index()]
            .domains
            .iter()
            .map(|&s| &self.domains[s as usize])
            .find(|d| d.key == key)
            .map(|d| d.value.as_str())
    }
}

/// A tracked topology key (see [`Cluster::track_topology_key`]).
#[derive(Clone, Debug)]
pub(super) struct TrackedKey {
    /// The key, interned.
    symbol: Symbol,
    /// Its domains: label value → slot in `Cluster::domains`.
    domains: BTreeMap<String, u32>,
}

/// One topology domain: a tracked key's value, and the counts of its nodes.
#[derive(Clone, Debug)]
pub(super) struct Domain {
    key: Symbol,
    value: String,
    pub(super) counts: DeviceCounts,
}

impl TrackedKey {
    /// Adds `counts` (a node's) to this key's domain `value`, given a slot in `all`
    /// when new; returns the slot.
    fn join(&mut self, all: &mut Vec<Domain>, value: &str, counts: DeviceCounts) -> u32 {
        let slot = if let Some(&s) = self.domains.get(value) {
            s
        } else {
            let s = u32::try_from(all.len()).expect("fewer than 2^32 domains");
            all.push(Domain {
                key: self.symbol,
                value: value.to_owned(),
                counts: DeviceCounts::default(),
            });
            self.domains.insert(value.to_owned(), s);
            s
        };
        all[slot as usize].counts.add(counts);
        slot
    }
}
