//! Gang rules: all or nothing and `minCount` (counting running members), and the
//! topology constraint (every member, running or new, in one domain).

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::model::workload::{Pod, PodGroup};

use super::violation::Violation;
use super::{Bound, is_member, key};

pub(super) fn check_gang(
    group: Option<&PodGroup>,
    pods: &[Pod],
    bound: &[Bound<'_>],
    out: &mut Vec<Violation>,
) {
    let Some(g) = group else {
        return;
    };
    let Some(min_count) = g.policy.min_count() else {
        return;
    };
    let mut members: BTreeSet<String> = bound
        .iter()
        .filter(|b| b.member && b.new)
        .map(|b| b.key.to_owned())
        .collect();
    if members.is_empty() {
        return;
    }
    for p in pods {
        if is_member(p, g) && p.node_name.is_some() {
            members.insert(key(&p.namespace, &p.name));
        }
    }
    if members.len() < min_count as usize {
        out.push(Violation::BelowMinCount {
            group: key(&g.namespace, &g.name),
            bound: members.len(),
            min_count,
        });
    }
}

pub(super) fn check_topology(
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    bound: &[Bound<'_>],
    out: &mut Vec<Violation>,
) {
    let Some(g) = group else {
        return;
    };
    if g.topology.is_empty() || !bound.iter().any(|b| b.member && b.new) {
        return;
    }
    // Pod → node after the decision: running members, then the decision's bindings.
    let mut placement: BTreeMap<String, (&str, bool)> = BTreeMap::new();
    for p in pods.iter().filter(|p| is_member(p, g)) {
        if let Some(n) = &p.node_name {
            placement.insert(key(&p.namespace, &p.name), (n, false));
        }
    }
    for b in bound.iter().filter(|b| b.member) {
        placement.insert(b.key.to_owned(), (b.node_name, b.new));
    }
    for tc in &g.topology {
        let mut values = BTreeSet::new();
        for (pod, &(node_name, decided)) in &placement {
            let Some(node) = cluster.node(node_name) else {
                continue;
            };
            match node.labels.get(&tc.key) {
                Some(v) => {
                    values.insert(v.clone());
                }
                None if decided => out.push(Violation::TopologyLabelMissing {
                    pod: pod.clone(),
                    node: node_name.to_owned(),
                    key: tc.key.clone(),
                }),
                None => {}
            }
        }
        if values.len() > 1 {
            out.push(Violation::TopologySplit {
                key: tc.key.clone(),
                values: values.into_iter().collect(),
            });
        }
    }
}
