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
        let by_key = PodsByKey::new(pods, decision.bindings.len());
        for b in &decision.bindings {
            // The key split once, not once for every pod compared.
            let key = b.pod.split_once('/');
            let Some(pod) = by_key.first(key) else {
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

/// Finds the first of `pods` with a given `namespace/name`: by scanning when few
/// lookups or pods make that cheap, else by a sorted index built once (a gang of 64
/// bound pods scanned its pods 64 times, 4,096 pairs of string compares).
struct PodsByKey<'p> {
    pods: &'p [Pod],
    /// Positions in `pods`, by (namespace, name, position); `None` to scan.
    sorted: Option<Vec<u32>>,
}

impl<'p> PodsByKey<'p> {
    /// Scans below this many pods or lookups.
    const SCAN: usize = 8;

    fn new(pods: &'p [Pod], lookups: usize) -> PodsByKey<'p> {
        let sorted = (pods.len() > Self::SCAN && lookups > Self::SCAN)
            .then(|| u32::try_from(pods.len()).ok())
            .flatten()
            .map(|n| {
                let mut v: Vec<u32> = (0..n).collect();
                // Stable, so equal keys keep their positions' order (the first wins).
                v.sort_by(|&a, &b| {
                    let (a, b) = (&pods[a as usize], &pods[b as usize]);
                    (a.namespace.as_str(), a.name.as_str())
                        .cmp(&(b.namespace.as_str(), b.name.as_str()))
                });
                v
            });
        PodsByKey { pods, sorted }
    }

    /// The first pod `key` (`namespace/name` split at its first `/`) names.
    fn first(&self, key: Option<(&str, &str)>) -> Option<&'p Pod> {
        let Some(sorted) = &self.sorted else {
            return self.pods.iter().find(|p| is_pod(p, key));
        };
        let (ns, name) = key?;
        let at = sorted.partition_point(|&i| {
            let p = &self.pods[i as usize];
            (p.namespace.as_str(), p.name.as_str()) < (ns, name)
        });
        let pod = &self.pods[*sorted.get(at)? as usize];
        (pod.namespace == ns && pod.name == name).then_some(pod)
    }
}

#[cfg(test)]
mod tests {
    use super::{PodsByKey, is_pod};
    use crate::Quantity;
    use crate::alloc_prelude::*;
    use crate::model::workload::Pod;

    /// The index answers as the scan does, duplicates included: the first pod of a
    /// key, told apart here by its requests.
    #[test]
    fn the_index_finds_the_first_pod_of_each_key() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        for round in 0..200 {
            let pods: Vec<Pod> = (0..next(40))
                .map(|i| {
                    let mut p = Pod::new(format!("ns-{}", next(3)), format!("p-{}", next(12)));
                    p.requests
                        .insert("cpu".into(), Quantity::from_int(i64::try_from(i).unwrap()));
                    p
                })
                .collect();
            let by_key = PodsByKey::new(&pods, 20);
            assert_eq!(by_key.sorted.is_some(), pods.len() > PodsByKey::SCAN);
            for k in 0..20 {
                let key = format!("ns-{}/p-{}", next(4), next(14));
                let key = if k == 0 { "no-slash".to_owned() } else { key };
                let split = key.split_once('/');
                let want = pods.iter().find(|p| is_pod(p, split));
                let got = by_key.first(split);
                assert_eq!(
                    got.map(|p| &p.requests),
                    want.map(|p| &p.requests),
                    "round {round}: {key}"
                );
            }
        }
    }
}
