//! Relaxing facts on scratch copies: what undoes each fact, and the placement once a
//! set of facts is undone (the blocking-set search of `mod.rs` asks it).

use super::facts::Fact;

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::gang::options::{GangOptions, GangOutcome};
use crate::model::claim::{DeviceRequestKind, ResourceClaim, split_request_ref};
use crate::model::class::DeviceSelector;
use crate::model::workload::{Pod, PodGroup};
use crate::{
    DeviceTaint, DeviceToleration, DeviceTolerationOperator, Quantity, Taint, Toleration,
    TolerationOperator,
};

/// A change that undoes one fact on a scratch copy.
pub(super) enum Relaxation {
    Uncordon(Vec<String>),
    DropNodeSelector,
    TolerateNodeTaint(Taint),
    GrowResource(String, Vec<String>),
    DropResource(String),
    TolerateDeviceTaint(DeviceTaint),
    FreeDevices(Vec<String>),
    /// Drop these selectors from the request (`request` or `request/subrequest`).
    DropSelectors(String, Vec<String>),
    /// Drop the request's capacity demand.
    DropCapacity(String),
    /// Drop the constraints on this attribute.
    DropConstraint(String),
}

impl Fact {
    pub(super) fn relaxation(&self) -> Option<Relaxation> {
        Some(match self {
            Fact::Cordoned { nodes } => Relaxation::Uncordon(nodes.clone()),
            Fact::NodeSelector { .. } => Relaxation::DropNodeSelector,
            Fact::NodeTaint { taint, .. } => Relaxation::TolerateNodeTaint(taint.clone()),
            Fact::ResourceInUse { resource, nodes } => {
                Relaxation::GrowResource(resource.clone(), nodes.clone())
            }
            Fact::ResourceTooSmall { resource, .. } => Relaxation::DropResource(resource.clone()),
            Fact::DeviceTaint { taint, .. } => Relaxation::TolerateDeviceTaint(taint.clone()),
            Fact::DevicesInUse { nodes, .. } | Fact::CountersInUse { nodes, .. } => {
                Relaxation::FreeDevices(nodes.clone())
            }
            Fact::RequestSelector {
                request, selectors, ..
            } => Relaxation::DropSelectors(
                request.clone(),
                selectors.iter().map(|(e, _)| e.clone()).collect(),
            ),
            Fact::CapacityTooSmall { request, .. } => Relaxation::DropCapacity(request.clone()),
            Fact::Constraint { attribute, .. } => Relaxation::DropConstraint(attribute.clone()),
            _ => return None,
        })
    }
}

/// Calls `f` with the selectors and capacity demand of `claim`'s (sub)request named
/// `reference` (`request` or `request/subrequest`), if it has one.
pub(super) fn for_request(
    claim: &mut ResourceClaim,
    reference: &str,
    mut f: impl FnMut(&mut Vec<DeviceSelector>, &mut BTreeMap<String, Quantity>),
) {
    let (name, sub) = split_request_ref(reference);
    for r in claim.spec.requests.iter_mut().filter(|r| r.name == name) {
        match (&mut r.kind, sub) {
            (DeviceRequestKind::Exactly(e), None) => f(&mut e.selectors, &mut e.capacity),
            (DeviceRequestKind::FirstAvailable(subs), Some(sub)) => {
                for s in subs.iter_mut().filter(|s| s.name == sub) {
                    f(&mut s.selectors, &mut s.capacity);
                }
            }
            _ => {}
        }
    }
}

impl Cluster {
    /// Whether the gang fits once `relax` is applied to copies of the cluster and the
    /// objects.
    pub(super) fn fits_relaxed(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
        relax: &[Relaxation],
        own_claims: &BTreeSet<String>,
    ) -> bool {
        matches!(
            self.place_relaxed(group, pods, claims, options, relax, own_claims),
            Some(GangOutcome::Placed(_))
        )
    }

    /// The placement outcome once `relax` is applied to copies of the cluster and the
    /// objects (`None` if the placement fails with an error). Freeing devices never
    /// frees the unit's own (`own_claims`).
    pub(super) fn place_relaxed(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
        relax: &[Relaxation],
        own_claims: &BTreeSet<String>,
    ) -> Option<GangOutcome> {
        let mut cluster = self.clone();
        let mut pods = pods.to_vec();
        let mut claims = claims.to_vec();
        let pending = |p: &Pod| p.node_name.is_none();
        for r in relax {
            match r {
                Relaxation::Uncordon(nodes) => {
                    for n in nodes {
                        if let Some(mut node) = cluster.node(n).cloned() {
                            node.unschedulable = false;
                            let _ = cluster.replace_node(node);
                        }
                    }
                }
                Relaxation::DropNodeSelector => {
                    for p in pods.iter_mut().filter(|p| pending(p)) {
                        p.node_selector.clear();
                        p.required_node_affinity = None;
                    }
                }
                Relaxation::TolerateNodeTaint(t) => {
                    for p in pods.iter_mut().filter(|p| pending(p)) {
                        p.tolerations.push(Toleration {
                            key: t.key.clone(),
                            operator: TolerationOperator::Equal,
                            value: t.value.clone(),
                            effect: Some(t.effect),
                            toleration_seconds: None,
                        });
                    }
                }
                Relaxation::GrowResource(resource, nodes) => {
                    for n in nodes {
                        let Some(mut node) = cluster.node(n).cloned() else {
                            continue;
                        };
                        let free = cluster
                            .node_free_resources(n)
                            .and_then(|f| f.get(resource).copied())
                            .unwrap_or(Quantity::ZERO);
                        if let Some(total) = node.allocatable.get_mut(resource) {
                            // As if nothing else used it.
                            let used = total.saturating_sub(free);
                            *total = total.saturating_add(used);
                        }
                        let _ = cluster.replace_node(node);
                    }
                }
                Relaxation::DropResource(resource) => {
                    for p in pods.iter_mut().filter(|p| pending(p)) {
                        p.requests.remove(resource);
                    }
                }
                Relaxation::TolerateDeviceTaint(t) => {
                    let tol = DeviceToleration {
                        key: t.key.clone(),
                        operator: DeviceTolerationOperator::Equal,
                        value: t.value.clone(),
                        effect: Some(t.effect.clone()),
                        toleration_seconds: None,
                    };
                    for c in &mut claims {
                        for r in &mut c.spec.requests {
                            match &mut r.kind {
                                DeviceRequestKind::Exactly(e) => e.tolerations.push(tol.clone()),
                                DeviceRequestKind::FirstAvailable(subs) => {
                                    for s in subs {
                                        s.tolerations.push(tol.clone());
                                    }
                                }
                            }
                        }
                    }
                }
                Relaxation::DropSelectors(request, expressions) => {
                    for c in &mut claims {
                        for_request(c, request, |sels, _| {
                            sels.retain(|s| !expressions.contains(&s.cel));
                        });
                    }
                }
                Relaxation::DropCapacity(request) => {
                    for c in &mut claims {
                        for_request(c, request, |_, capacity| capacity.clear());
                    }
                }
                Relaxation::DropConstraint(attribute) => {
                    for c in &mut claims {
                        c.spec.constraints.retain(|k| k.attribute() != attribute);
                    }
                }
                Relaxation::FreeDevices(nodes) => {
                    for n in nodes {
                        let Some(id) = cluster.node_id(n) else {
                            continue;
                        };
                        // Its own devices and the network-attached ones it reaches.
                        let devices: Vec<_> = if cluster.has_shared_devices() {
                            cluster.devices_reachable_from(id).iter().collect()
                        } else {
                            cluster
                                .node_devices(id)
                                .map(|d| d.iter().collect())
                                .unwrap_or_default()
                        };
                        for d in devices {
                            let Some(r) = cluster.device(d).map(|v| v.device_ref()) else {
                                continue;
                            };
                            let holders: Vec<String> = cluster
                                .allocations(&r)
                                .iter()
                                .map(|a| a.consumer.clone())
                                .filter(|c| !own_claims.contains(c))
                                .collect();
                            for h in holders {
                                let _ = cluster.release(&r, &h);
                            }
                        }
                    }
                }
            }
        }
        cluster.place_gang_mut(group, &pods, &claims, options).ok()
    }
}

/// Every `size`-subset of `items`, in lexicographic order.
pub(super) fn choose(
    items: &[usize],
    size: usize,
    current: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
) {
    if current.len() == size {
        out.push(current.clone());
        return;
    }
    let start = current
        .last()
        .and_then(|l| items.iter().position(|x| x == l))
        .map_or(0, |p| p + 1);
    for i in start..items.len() {
        current.push(items[i]);
        choose(items, size, current, out);
        current.pop();
    }
}
