//! The counted candidates of one scheduling cycle, kept between its placements.
//!
//! Counting (`counts.rs`) visits every node for every unit: on a 12,500-node fleet
//! that is most of what placing a small gang costs. Within a cycle, though, the
//! cluster changes only where the cycle places pods, and units often share a shape.
//! Without a topology key or a ranker, a shape's candidates are a function of the
//! shape and of each node's own state (its devices, scalars, labels and taints):
//! the node-by-node verdicts of [`Cluster::count_node`](crate::Cluster) read nothing
//! else but the cluster-wide sets of usable devices, which a placement changes only
//! at the devices it takes. So the memo keeps, per shape, the candidates in name
//! order, and the nodes the cycle's placements changed; a shape counted before is
//! brought up to date by counting only those nodes again.
//!
//! The scheduler says what changed ([`CountMemo::changed`]) after a placement whose
//! effects are those nodes' devices and scalars alone (node-local, exclusive devices,
//! no group claim), and ends the memo ([`CountMemo::clear`]) after anything else.
//! Debug builds count every node again beside each answer and assert it equal.

use crate::Quantity;
use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::cluster::ids::NodeId;
use crate::model::claim::ResourceClaimSpec;
use crate::model::node_selector::NodeSelector;
use crate::model::toleration::Toleration;
use crate::model::workload::Pod;

use super::intake::{Candidate, Shape};

/// Shapes a memo keeps at most (the oldest makes way): each holds up to a candidate
/// per node (24 bytes), so 9 MB at most on a 12,500-node fleet. A cycle's units come
/// in a few dozen shapes at most (the benchmarks' mix has 20).
const MEMO_SHAPES: usize = 32;

/// Counted candidates of the shapes placed in one cycle (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct CountMemo {
    entries: Vec<Entry>,
    /// Where the next entry goes once `entries` is full.
    next: usize,
    /// Nodes whose devices or scalars changed since the memo began, in order.
    changed: Vec<NodeId>,
    /// Each node id's position in the cluster's name order (built on first use).
    position: Vec<u32>,
    /// The buffer an entry's next merge writes into (its old candidates come back
    /// here): a merge per placement would otherwise allocate a candidate per node.
    spare: Vec<Candidate>,
}

/// One shape's candidates, in name order, as of `changed[..synced]`.
#[derive(Clone, Debug)]
struct Entry {
    key: Key,
    candidates: Vec<Candidate>,
    synced: usize,
}

/// What a shape's count reads of its pods and claims (owned).
#[derive(Clone, Debug)]
struct Key {
    node_selector: BTreeMap<String, String>,
    affinity: Option<NodeSelector>,
    tolerations: Vec<Toleration>,
    requests: BTreeMap<String, Quantity>,
    specs: Vec<ResourceClaimSpec>,
    within: Vec<(String, String)>,
    pods_cap: u32,
}

impl Key {
    fn new(shape: &Shape<'_>, within: &[(String, String)], pods_cap: u32) -> Key {
        let pod = shape.rep;
        Key {
            node_selector: pod.node_selector.clone(),
            affinity: pod.required_node_affinity.clone(),
            tolerations: pod.tolerations.clone(),
            requests: shape.requests.clone(),
            specs: shape.own_specs.iter().map(|s| (*s).clone()).collect(),
            within: within.to_vec(),
            pods_cap,
        }
    }

    fn matches(&self, shape: &Shape<'_>, within: &[(String, String)], pods_cap: u32) -> bool {
        let pod: &Pod = shape.rep;
        self.pods_cap == pods_cap
            && self.node_selector == pod.node_selector
            && self.affinity == pod.required_node_affinity
            && self.tolerations == pod.tolerations
            && self.requests == shape.requests
            && self.within == within
            && self.specs.len() == shape.own_specs.len()
            && self
                .specs
                .iter()
                .zip(&shape.own_specs)
                .all(|(a, b)| a == *b)
    }
}

impl CountMemo {
    /// The candidates of `shape` (capped at `pods_cap` pods a node), in name order:
    /// the memo's, with the nodes changed since counted again by `count`; else every
    /// node counted by `count`, and kept.
    pub(crate) fn candidates(
        &mut self,
        cluster: &Cluster,
        shape: &Shape<'_>,
        within: &[(String, String)],
        pods_cap: u32,
        count: impl Fn(NodeId) -> Option<Candidate>,
    ) -> Vec<Candidate> {
        let order = cluster.node_order();
        if self.position.len() != cluster.node_slots() {
            // Nodes came or went: nothing kept holds.
            self.entries.clear();
            self.changed.clear();
            self.position = vec![u32::MAX; cluster.node_slots()];
            for (i, id) in order.iter().enumerate() {
                self.position[id.index()] = u32::try_from(i).unwrap_or(u32::MAX);
            }
        }
        let found = self
            .entries
            .iter()
            .position(|e| e.key.matches(shape, within, pods_cap));
        let Some(i) = found else {
            let candidates: Vec<Candidate> = order.iter().filter_map(|&id| count(id)).collect();
            let entry = Entry {
                key: Key::new(shape, within, pods_cap),
                candidates: candidates.clone(),
                synced: self.changed.len(),
            };
            if self.entries.len() < MEMO_SHAPES {
                self.entries.push(entry);
            } else {
                self.entries[self.next] = entry;
                self.next = (self.next + 1) % MEMO_SHAPES;
            }
            return candidates;
        };
        let entry = &mut self.entries[i];
        if self.changed.len() - entry.synced > self.position.len() / 4 {
            // More nodes to count again than a scan reads: scan.
            entry.candidates = order.iter().filter_map(|&id| count(id)).collect();
            entry.synced = self.changed.len();
        } else if entry.synced < self.changed.len() {
            let mut nodes: Vec<(u32, NodeId)> = self.changed[entry.synced..]
                .iter()
                .map(|&id| {
                    (
                        self.position.get(id.index()).copied().unwrap_or(u32::MAX),
                        id,
                    )
                })
                .collect();
            nodes.sort_unstable();
            nodes.dedup();
            merge(
                &entry.candidates,
                &nodes,
                &self.position,
                &count,
                &mut self.spare,
            );
            core::mem::swap(&mut entry.candidates, &mut self.spare);
            entry.synced = self.changed.len();
        }
        entry.candidates.clone()
    }

    /// Nodes whose devices or scalars a placement changed (and nothing else).
    pub(crate) fn changed(&mut self, nodes: impl IntoIterator<Item = NodeId>) {
        if self.entries.is_empty() {
            return;
        }
        self.changed.extend(nodes);
        // The log's prefix every entry has read goes, once it is most of the log.
        let read = self.entries.iter().map(|e| e.synced).min().unwrap_or(0);
        if read > 64 && read * 2 > self.changed.len() {
            self.changed.drain(..read);
            for e in &mut self.entries {
                e.synced -= read;
            }
        }
    }

    /// Anything may have changed: nothing kept holds.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.changed.clear();
        self.next = 0;
    }
}

/// `old` (candidates in name order) with the candidates of `nodes` (by name position,
/// sorted) counted again by `count`, written over `out`.
fn merge(
    old: &[Candidate],
    nodes: &[(u32, NodeId)],
    position: &[u32],
    count: &impl Fn(NodeId) -> Option<Candidate>,
    out: &mut Vec<Candidate>,
) {
    let at = |c: &Candidate| position.get(c.node.index()).copied().unwrap_or(u32::MAX);
    out.clear();
    out.reserve(old.len() + nodes.len());
    let mut rest = old;
    for &(pos, id) in nodes {
        // Candidates before this node's position stay; its own old one goes.
        let keep = rest.partition_point(|c| at(c) < pos);
        out.extend_from_slice(&rest[..keep]);
        rest = &rest[keep..];
        if rest.first().is_some_and(|c| c.node == id) {
            rest = &rest[1..];
        }
        out.extend(count(id));
    }
    out.extend_from_slice(rest);
}
