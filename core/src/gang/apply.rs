//! Recording a [`PlacementDecision`] on a cluster, and undoing it.
//!
//! [`Cluster::apply_decision`] records what a decision allocates and reserves — the
//! PodGroup-level claims, then for every binding its claims and its pod's node
//! reservation — all or nothing; [`Cluster::revert_decision`] undoes a decision applied
//! before. A placer that places several groups one after another (CompositePodGroups)
//! applies each group's decision to a scratch cluster so that later groups see the
//! devices and node resources as taken.

use crate::alloc_prelude::*;
use crate::cluster::{Cluster, ClusterError, Located};
use crate::model::decision::{ClaimAllocation, PlacementDecision};
use crate::model::error::{ObjectKind, ObjectRef};
use crate::model::workload::Pod;
use crate::{Node, Quantity};

/// What a pod reserves on `node`: its `requests`, plus `pods: 1` when the node
/// advertises `pods` in its allocatable resources (as the kubelet counts pods).
pub(crate) fn pod_node_requests(pod: &Pod, node: &Node) -> BTreeMap<String, Quantity> {
    let mut requests = pod.requests.clone();
    if node.allocatable.contains_key("pods") {
        requests.insert("pods".into(), Quantity::from_int(1));
    }
    requests
}

/// One recorded step of [`Cluster::apply_decision`], for the undo on failure.
enum Step<'a> {
    Claim(&'a ClaimAllocation),
    Reserve { node: &'a str, pod: &'a str },
}

impl Cluster {
    /// Records a placement decision: the PodGroup-level claims once, then for every
    /// binding (in order) its claims' allocations and its pod's node reservation
    /// ([`reserve_node_resources`](Cluster::reserve_node_resources) with the pod's
    /// `requests`, plus `pods: 1` where the node advertises `pods`). `pods` must hold
    /// every bound pod (looked up by `namespace/name`).
    ///
    /// All or nothing: on any failure everything already recorded is undone and the
    /// cluster is left exactly as it was. Besides the errors of
    /// [`commit_allocation`](Cluster::commit_allocation) and `reserve_node_resources`,
    /// it is refused with [`ClusterError::NotFound`] when a bound pod is not in `pods`
    /// or a binding's node does not exist, and with [`ClusterError::DeviceInUse`] when a
    /// claim of the decision already holds one of the devices it is given (so that the
    /// undo, which releases a claim's shares device by device, never releases anything
    /// recorded before).
    pub fn apply_decision(
        &mut self,
        decision: &PlacementDecision,
        pods: &[Pod],
    ) -> Result<(), ClusterError> {
        // Checks that need no change first.
        let mut bound: Vec<(&Pod, &Node)> = Vec::with_capacity(decision.bindings.len());
        for b in &decision.bindings {
            // The key split once, not once for every pod compared.
            let key = b.pod.split_once('/');
            let Some(pod) = pods.iter().find(|p| is_pod(p, key)) else {
                let obj = match key {
                    Some((ns, name)) => ObjectRef::namespaced(ObjectKind::Pod, ns, name),
                    None => ObjectRef::cluster(ObjectKind::Pod, b.pod.as_str()),
                };
                return Err(ClusterError::NotFound(obj));
            };
            let Some(node) = self.node(&b.node) else {
                return Err(ClusterError::NotFound(ObjectRef::cluster(
                    ObjectKind::Node,
                    b.node.as_str(),
                )));
            };
            bound.push((pod, node));
        }
        let all_claims = decision
            .group_claims
            .iter()
            .chain(decision.bindings.iter().flat_map(|b| b.claims.iter()));
        // Every device of every claim looked up once, in that order: the check below
        // and the records use what is found.
        let located: Vec<Located> = all_claims
            .clone()
            .flat_map(|c| &c.result.devices)
            .map(|r| self.locate(&r.driver, &r.pool, &r.device))
            .collect();
        let mut rest = &located[..];
        for c in all_claims {
            let (mine, tail) = rest.split_at(c.result.devices.len());
            rest = tail;
            for (r, loc) in c.result.devices.iter().zip(mine) {
                if loc
                    .is_some_and(|(key, _)| self.holders(key).iter().any(|h| h.consumer == c.claim))
                {
                    return Err(ClusterError::DeviceInUse {
                        device: crate::DeviceRef::new(&r.driver, &r.pool, &r.device),
                        holder: c.claim.clone(),
                    });
                }
            }
        }
        let requests: Vec<BTreeMap<String, Quantity>> = bound
            .iter()
            .map(|(pod, node)| pod_node_requests(pod, node))
            .collect();
        // Record, keeping an undo log.
        let mut done: Vec<Step<'_>> = Vec::new();
        let mut result = Ok(());
        let mut rest = &located[..];
        let mut commit = |cluster: &mut Cluster, c: &ClaimAllocation| {
            let (mine, tail) = rest.split_at(c.result.devices.len());
            rest = tail;
            cluster.commit_located(&c.claim, &c.result, mine)
        };
        'record: {
            for c in &decision.group_claims {
                if let Err(e) = commit(self, c) {
                    result = Err(e);
                    break 'record;
                }
                done.push(Step::Claim(c));
            }
            for (b, req) in decision.bindings.iter().zip(requests) {
                for c in &b.claims {
                    if let Err(e) = commit(self, c) {
                        result = Err(e);
                        break 'record;
                    }
                    done.push(Step::Claim(c));
                }
                if let Err(e) = self.reserve_node_resources(&b.node, &b.pod, req) {
                    result = Err(e);
                    break 'record;
                }
                done.push(Step::Reserve {
                    node: &b.node,
                    pod: &b.pod,
                });
            }
        }
        if result.is_err() {
            for step in done.into_iter().rev() {
                match step {
                    Step::Claim(c) => self.release_allocation(&c.claim, &c.result),
                    Step::Reserve { node, pod } => {
                        let _ = self.release_node_resources(node, pod);
                    }
                }
            }
        }
        result
    }

    /// Undoes a decision recorded by [`apply_decision`](Cluster::apply_decision) with
    /// the same `pods`: releases every binding's node reservation and claims (in
    /// reverse order), then the PodGroup-level claims. What the decision does not hold
    /// (a reservation or device already released) is skipped.
    ///
    /// Reservations are found by pod key, so `pods` is only checked (in debug builds)
    /// to hold every bound pod, as `apply_decision` required.
    pub fn revert_decision(&mut self, decision: &PlacementDecision, pods: &[Pod]) {
        debug_assert!(
            decision
                .bindings
                .iter()
                .all(|b| pods.iter().any(|p| is_pod(p, b.pod.split_once('/')))),
            "revert_decision: a bound pod is not among `pods`"
        );
        for b in decision.bindings.iter().rev() {
            let _ = self.release_node_resources(&b.node, &b.pod);
            for c in b.claims.iter().rev() {
                self.release_allocation(&c.claim, &c.result);
            }
        }
        for c in decision.group_claims.iter().rev() {
            self.release_allocation(&c.claim, &c.result);
        }
    }
}

/// Whether `pod` is the pod `namespace/name`, given as `key.split_once('/')`.
fn is_pod(pod: &Pod, key: Option<(&str, &str)>) -> bool {
    key.is_some_and(|(ns, name)| pod.namespace == ns && pod.name == name)
}
