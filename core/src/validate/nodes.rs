//! Node rules: each pod's node admits it (node selector and required affinity, taints,
//! cordon), and the scalar resources of the pods bound to one node fit what it has free.

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::model::workload::Pod;
use crate::{Node, Quantity, TaintEffect};

use super::Bound;
use super::violation::Violation;

pub(super) fn check_node_fit(pod: &Pod, pod_key: &str, node: &Node, out: &mut Vec<Violation>) {
    if node.unschedulable {
        out.push(Violation::NodeUnschedulable {
            pod: pod_key.to_owned(),
            node: node.name.clone(),
        });
    }
    if !pod.fits_node(node) {
        out.push(Violation::NodeAffinityMismatch {
            pod: pod_key.to_owned(),
            node: node.name.clone(),
        });
    }
    for t in &node.taints {
        let blocks = matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute);
        if blocks && !pod.tolerations.iter().any(|tol| tol.tolerates(t)) {
            out.push(Violation::NodeTaintNotTolerated {
                pod: pod_key.to_owned(),
                node: node.name.clone(),
                taint: t.clone(),
            });
        }
    }
}

pub(super) fn check_node_resources(
    cluster: &Cluster,
    bound: &[Bound<'_>],
    out: &mut Vec<Violation>,
) {
    let mut per_node: BTreeMap<&str, BTreeMap<&str, Quantity>> = BTreeMap::new();
    for b in bound.iter().filter(|b| b.new) {
        let Some(node) = b.node else {
            continue;
        };
        let sums = per_node.entry(&node.name).or_default();
        for (resource, q) in &b.pod.requests {
            let e = sums.entry(resource).or_insert(Quantity::ZERO);
            *e = e.saturating_add(*q);
        }
        if node.allocatable.contains_key("pods") && !b.pod.requests.contains_key("pods") {
            let e = sums.entry("pods").or_insert(Quantity::ZERO);
            *e = e.saturating_add(Quantity::from_int(1));
        }
    }
    for (node, sums) in per_node {
        let free = cluster.node_free_resources(node).unwrap_or_default();
        for (resource, requested) in sums {
            if !requested.is_positive() {
                continue;
            }
            let available = free.get(resource).copied().unwrap_or(Quantity::ZERO);
            if requested > available {
                out.push(Violation::NodeResourcesExceeded {
                    node: node.to_owned(),
                    resource: resource.to_owned(),
                    requested,
                    available,
                });
            }
        }
    }
}
