//! The per-node diagnosis: every node for every pod shape, the first rejection of the
//! node filter, then what others hold and what the devices lack, as facts.

use super::facts::Fact;
use super::render::{Explanation, ShapeReport};

use crate::alloc_prelude::*;
use crate::allocate::Skip;
use crate::cel::Selector;
use crate::cluster::Cluster;
use crate::cluster::bits::{DeviceSet, SparseDeviceSet};
use crate::gang::filter::{Rejection, ShapeFilter};
use crate::gang::intake::Gang;
use crate::gang::options::GangOptions;
use crate::model::claim::{
    AllocationMode, ConstraintKind, ResourceClaim, ResourceClaimSpec, split_request_ref,
};
use crate::model::node::Node;
use crate::model::workload::ClaimSource;
use crate::{DeviceRef, DeviceTaint, Quantity};

/// The facts found so far, each stated once: a fact about the same subject as one
/// found before (for another node or shape) adds its node and counts to that one.
#[derive(Default)]
pub(super) struct FactSet {
    pub(super) facts: Vec<Fact>,
    /// Per fact, the network-attached devices its count includes: they are reached
    /// from several nodes, and counted once.
    nets: Vec<Option<DeviceSet>>,
}

impl FactSet {
    /// Adds `fact` (with the network-attached devices its count includes) and notes
    /// its index in `shape_facts`.
    pub(super) fn add(&mut self, fact: Fact, net: Option<DeviceSet>, shape_facts: &mut Vec<usize>) {
        let at = if let Some(at) = self.facts.iter().position(|f| f.same_subject(&fact)) {
            // A node seen before (for another shape) is not counted twice.
            let mut new_node = false;
            if let (Some(have), Some(more)) = (self.facts[at].nodes_mut(), fact.nodes().first())
                && !have.contains(more)
            {
                have.push(more.clone());
                new_node = true;
            }
            // Of the network-attached devices, those not counted yet.
            let net_len = net.as_ref().map_or(0, DeviceSet::len);
            let mut unseen = 0;
            if let Some(net) = net {
                match &mut self.nets[at] {
                    Some(seen) => {
                        let mut fresh = net.clone();
                        fresh.difference_with(seen);
                        unseen = fresh.len();
                        seen.union_with(&net);
                    }
                    none @ None => {
                        unseen = net_len;
                        *none = Some(net);
                    }
                }
            }
            let unseen = u32::try_from(unseen).unwrap_or(u32::MAX);
            let net_len = u32::try_from(net_len).unwrap_or(u32::MAX);
            match (&mut self.facts[at], &fact) {
                (Fact::DeviceTaint { devices: a, .. }, Fact::DeviceTaint { devices: b, .. })
                | (Fact::DevicesInUse { devices: a, .. }, Fact::DevicesInUse { devices: b, .. })
                | (
                    Fact::HeldByOwnMembers { devices: a, .. },
                    Fact::HeldByOwnMembers { devices: b, .. },
                )
                | (
                    Fact::CountersInUse { devices: a, .. },
                    Fact::CountersInUse { devices: b, .. },
                ) => {
                    let local = if new_node {
                        b.saturating_sub(net_len)
                    } else {
                        0
                    };
                    *a = a.saturating_add(local).saturating_add(unseen);
                }
                // Counted per node (network-attached devices reached from several
                // nodes count on each).
                (
                    Fact::RequestSelector {
                        of_class: a,
                        selectors: sa,
                        ..
                    },
                    Fact::RequestSelector {
                        of_class: b,
                        selectors: sb,
                        ..
                    },
                ) if new_node => {
                    *a = a.saturating_add(*b);
                    for ((_, x), (_, y)) in sa.iter_mut().zip(sb) {
                        *x = x.saturating_add(*y);
                    }
                }
                (
                    Fact::CapacityTooSmall {
                        matching: a,
                        fit: x,
                        ..
                    },
                    Fact::CapacityTooSmall {
                        matching: b,
                        fit: y,
                        ..
                    },
                )
                | (
                    Fact::CountersTooFew {
                        matching: a,
                        fit: x,
                        ..
                    },
                    Fact::CountersTooFew {
                        matching: b,
                        fit: y,
                        ..
                    },
                ) if new_node => {
                    *a = a.saturating_add(*b);
                    *x = x.saturating_add(*y);
                }
                (Fact::Constraint { best: a, .. }, Fact::Constraint { best: b, .. }) => {
                    *a = (*a).max(*b);
                }
                _ => {}
            }
            at
        } else {
            self.facts.push(fact);
            self.nets.push(net);
            self.facts.len() - 1
        };
        if !shape_facts.contains(&at) {
            shape_facts.push(at);
        }
    }
}

impl Cluster {
    /// Fills the shapes and facts: each node's first rejection, per shape.
    pub(super) fn diagnose(&self, gang: &Gang<'_>, options: &GangOptions, ex: &mut Explanation) {
        let mut set = FactSet::default();
        let mut add = |fact: Fact, net: Option<DeviceSet>, shape_facts: &mut Vec<usize>| {
            set.add(fact, net, shape_facts);
        };
        let key = gang.key;
        if let Some(k) = key
            && !self.nodes().any(|n| n.labels.contains_key(k))
        {
            let mut none = Vec::new();
            add(
                Fact::TopologyKeyAbsent { key: k.to_owned() },
                None,
                &mut none,
            );
        }
        for (si, shape) in gang.shapes.iter().enumerate() {
            let mut shape_facts = Vec::new();
            let tainted: Vec<Fact> = gang
                .tainted
                .iter()
                .filter(|(c, _, _)| shape.uses.contains(c))
                .map(|(c, device, taint)| Fact::ClaimDeviceTainted {
                    claim: gang.shared[*c].name.clone(),
                    device: device.to_string(),
                    taint: taint.clone(),
                })
                .collect();
            let blocked = !tainted.is_empty();
            for f in tainted {
                add(f, None, &mut shape_facts);
            }
            let filter = ShapeFilter::new(self, shape.rep, &shape.requests, &options.within, key);
            let mut counted = BTreeSet::new();
            for c in shape.candidates.iter().filter(|c| c.cap > 0) {
                counted.insert(c.node);
            }
            for f in self.missing_classes(gang, si) {
                add(f, None, &mut shape_facts);
            }
            for (id, node) in self.nodes_with_ids() {
                if blocked {
                    // No node helps while the claim cannot be reserved.
                    break;
                }
                if counted.contains(&id) {
                    // It can host a pod; what others hold there may still matter.
                    self.held_by_others(gang, si, id, &node.name, &mut |f, net| {
                        add(f, net, &mut shape_facts);
                    });
                    continue;
                }
                self.diagnose_node(gang, si, &filter, id, node, &mut |f, net| {
                    add(f, net, &mut shape_facts);
                });
            }
            ex.shapes.push(ShapeReport {
                pods: gang
                    .pods
                    .iter()
                    .filter(|p| p.shape == si)
                    .map(|p| p.key.clone())
                    .collect(),
                devices_per_pod: shape.min_devices,
                nodes: shape.candidates.iter().filter(|c| c.cap > 0).count(),
                capacity: shape.candidates.iter().map(|c| u64::from(c.cap)).sum(),
                facts: shape_facts,
            });
        }
        // Topology: the domain that can host the most pods.
        if let Some(k) = key
            && !gang.domains.is_empty()
        {
            let mut best: Option<(u64, &str)> = None;
            for (d, value) in gang.domains.iter().enumerate() {
                let hosts: u64 = (0..gang.shapes.len())
                    .map(|s| gang.caps_in(s, d as u32).min(gang.shapes[s].pods as u64))
                    .sum();
                if best.is_none_or(|(h, _)| hosts > h) {
                    best = Some((hosts, value.as_str()));
                }
            }
            if let Some((hosts, domain)) = best
                && (hosts as usize) < gang.required
            {
                let mut none = Vec::new();
                add(
                    Fact::DomainTooSmall {
                        key: k.to_owned(),
                        domain: domain.to_owned(),
                        hosts,
                        needed: gang.required,
                    },
                    None,
                    &mut none,
                );
            }
        }
        let mut facts = set.facts;
        for f in &mut facts {
            if let Some(n) = f.nodes_mut() {
                // Natural order, as people read names: gpu-n2 before gpu-n10.
                n.sort_by(|a, b| super::table::natural_cmp(a, b));
            }
        }
        ex.facts = facts;
    }

    /// The facts about the claims of shape `si` that name a class without any device
    /// in the cluster: about every node at once.
    pub(super) fn missing_classes(&self, gang: &Gang<'_>, si: usize) -> Vec<Fact> {
        let mut out = Vec::new();
        for (name, spec) in shape_claims(gang, si) {
            for r in &spec.requests {
                for view in r.alternatives() {
                    let empty = self
                        .class_devices(view.device_class_name)
                        .is_none_or(DeviceSet::is_empty);
                    if empty {
                        out.push(Fact::NoDeviceOfClass {
                            claim: name.to_owned(),
                            request: view.request.to_owned(),
                            class: view.device_class_name.to_owned(),
                        });
                    }
                }
            }
        }
        out
    }

    /// The facts of node `id` (`node`) for a pod of shape `si` where the counts admit
    /// none (`filter`: the shape's node filter): the filter's first rejection, else
    /// what others hold there and what its devices lack. `false` when the node is out
    /// of the gang's scope (no fact: not the gang's node at all).
    pub(super) fn diagnose_node(
        &self,
        gang: &Gang<'_>,
        si: usize,
        filter: &ShapeFilter<'_>,
        id: crate::NodeId,
        node: &Node,
        add: &mut dyn FnMut(Fact, Option<DeviceSet>),
    ) -> bool {
        let name = node.name.clone();
        // The node filter the placer's counting asks too: the first rejection is
        // the node's fact. Nodes outside the restriction or the running members'
        // domain are not the gang's to use.
        let in_domain = |v: &str| gang.domains.iter().any(|d| d == v);
        match self.filter_node(id, node, filter, in_domain, 1).verdict {
            Err(Rejection::OutOfScope) => return false,
            Err(Rejection::Cordoned) => {
                add(Fact::Cordoned { nodes: vec![name] }, None);
                return true;
            }
            Err(Rejection::NodeSelector) => {
                add(Fact::NodeSelector { nodes: vec![name] }, None);
                return true;
            }
            Err(Rejection::NodeTaint(t)) => {
                add(
                    Fact::NodeTaint {
                        taint: t.clone(),
                        nodes: vec![name],
                    },
                    None,
                );
                return true;
            }
            Err(Rejection::ResourceTooSmall(resource)) => {
                add(
                    Fact::ResourceTooSmall {
                        resource,
                        nodes: vec![name],
                    },
                    None,
                );
                return true;
            }
            // In use, or admitted by the scalars: what others hold (every
            // resource and device) and what the devices lack, below.
            Err(Rejection::ResourceInUse(_)) | Ok(_) => {}
        }
        let mut requests: Vec<(&str, Quantity)> = gang.shapes[si]
            .rep
            .requests
            .iter()
            .filter(|(_, q)| q.is_positive())
            .map(|(r, q)| (r.as_str(), *q))
            .collect();
        if node.allocatable.contains_key("pods") {
            requests.push(("pods", Quantity::from_int(1)));
        }
        // What others hold is reported in full, resources and devices alike:
        // freeing only part of it would not let a pod in.
        let mut held = false;
        for (r, q) in requests {
            let free = self.node_free_of(id, r);
            let total = node.allocatable.get(r).copied().unwrap_or(Quantity::ZERO);
            // Too little for one pod, or for the gang's pods together (which
            // may all want the node once its other facts are lifted).
            if free < q || (free < total && free < self.gang_wants(gang, id, r)) {
                add(
                    Fact::ResourceInUse {
                        resource: r.to_owned(),
                        nodes: vec![name.clone()],
                    },
                    None,
                );
                held = true;
            }
        }
        let devices_why = self.diagnose_devices(gang, si, id, &name, add);
        if !devices_why && !held {
            add(Fact::NoCombination { nodes: vec![name] }, None);
        }
        true
    }

    /// Reports what reduces the capacity of a node that can host a pod of shape `si`:
    /// requested resources partly used by others, devices of the classes its claims
    /// (own and shared, node-local and network-attached) request allocated or carrying
    /// untolerated taints.
    pub(super) fn held_by_others(
        &self,
        gang: &Gang<'_>,
        si: usize,
        id: crate::NodeId,
        name: &str,
        add: &mut dyn FnMut(Fact, Option<DeviceSet>),
    ) {
        let shape = &gang.shapes[si];
        let Some(node) = self.node_by_id(id) else {
            return;
        };
        // How many pods of the shape the node can host now (its candidate cap), and
        // whether that falls short of the shape's pods: only then can a resource others
        // use be what limits it.
        let cap = shape
            .candidates
            .iter()
            .find(|c| c.node == id)
            .map_or(0, |c| u64::from(c.cap));
        let short = cap < shape.pods as u64;
        let fit = |have: Quantity, q: Quantity| -> u64 {
            u64::try_from(have.as_nano() / q.as_nano()).unwrap_or(u64::MAX)
        };
        for (r, q) in &shape.rep.requests {
            let total = node.allocatable.get(r).copied().unwrap_or(Quantity::ZERO);
            let free = self.node_free_of(id, r);
            // Reported when what others use of it is the limit: with it free the node
            // would host more pods of the shape, and it allows no more than the cap;
            // with several shapes, which compete for the node (once other facts are
            // lifted, if not now), when it does not cover all their pods.
            let limits = if !q.is_positive() {
                false
            } else if gang.shapes.len() > 1 {
                free < self.gang_wants(gang, id, r) && free < total
            } else {
                short && fit(free, *q) <= cap && fit(total, *q) > cap
            };
            if limits {
                add(
                    Fact::ResourceInUse {
                        resource: r.clone(),
                        nodes: vec![name.to_owned()],
                    },
                    None,
                );
            }
        }
        let devices = self.reach(id);
        // The most held of one requested kind, with its network-attached part.
        let mut in_use: (u32, Option<DeviceSet>) = (0, None);
        let mut own_use: (u32, Option<DeviceSet>) = (0, None);
        let mut tainted: Vec<(DeviceTaint, u32, Option<DeviceSet>)> = Vec::new();
        for spec in shape_claims(gang, si).into_iter().map(|(_, s)| s) {
            for r in &spec.requests {
                for view in r.alternatives() {
                    if let Some(class) = self.class_devices(view.device_class_name) {
                        let mut present = class.clone();
                        present.intersect_with(self.usable_devices());
                        let mut held = present.clone();
                        held.difference_with(self.free_devices());
                        let (held, own) = split_own(held, &gang.own);
                        let n = devices.count(&held);
                        if n > in_use.0 {
                            in_use = (n, devices.net_part(&held));
                        }
                        let n = devices.count(&own);
                        if n > own_use.0 {
                            own_use = (n, devices.net_part(&own));
                        }
                        for (taint, members) in self.untolerated_taints(view.tolerations) {
                            let mut hit = present.clone();
                            hit.intersect_with(members);
                            let n = devices.count(&hit);
                            if n > 0 && !tainted.iter().any(|(t, _, _)| t == taint) {
                                tainted.push((taint.clone(), n, devices.net_part(&hit)));
                            }
                        }
                    }
                }
            }
        }
        for (taint, n, net) in tainted {
            add(
                Fact::DeviceTaint {
                    taint: DeviceTaint {
                        time_added: None,
                        ..taint
                    },
                    devices: n,
                    nodes: vec![name.to_owned()],
                },
                net,
            );
        }
        if in_use.0 > 0 {
            add(
                Fact::DevicesInUse {
                    devices: in_use.0,
                    nodes: vec![name.to_owned()],
                },
                in_use.1,
            );
        }
        if own_use.0 > 0 && short {
            add(
                Fact::HeldByOwnMembers {
                    devices: own_use.0,
                    nodes: vec![name.to_owned()],
                },
                own_use.1,
            );
        }
    }

    /// Reports why a node cannot give shape `si` its devices; false when every request
    /// has enough usable devices (then the failure is a combination problem).
    ///
    /// Per (sub)request, the census of the node (`allocate/census.rs`): the class, then
    /// each of the request's own selectors, its capacity demand and the shared counters
    /// its devices draw on, on the hardware; the first stage that leaves fewer devices
    /// than a pod needs is the fact. Past them, taints and what others hold (devices,
    /// counters) among the devices that survive; then the claim's constraints over
    /// those devices. A `firstAvailable` request none of whose subrequests can be
    /// served reports each of them.
    #[allow(clippy::too_many_lines)]
    pub(super) fn diagnose_devices(
        &self,
        gang: &Gang<'_>,
        si: usize,
        id: crate::NodeId,
        name: &str,
        add: &mut dyn FnMut(Fact, Option<DeviceSet>),
    ) -> bool {
        let devices = self.reach(id);
        let mut found = false;
        let mut compiled: BTreeMap<String, Option<Selector>> = BTreeMap::new();
        for (claim, spec) in shape_claims(gang, si) {
            // Per request, per alternative: (reference, devices that may serve it, now
            // and on the hardware, and the devices needed), for the constraints.
            let mut scopes: Vec<Vec<(String, DeviceSet, DeviceSet, u32)>> = Vec::new();
            for r in &spec.requests {
                let mut whys: Vec<Vec<DeviceFact>> = Vec::new();
                let mut served = false;
                let mut alts = Vec::new();
                for view in r.alternatives() {
                    if view.admin_access {
                        served = true;
                        continue;
                    }
                    let need = match view.allocation_mode {
                        AllocationMode::ExactCount(n) => n.max(1),
                        AllocationMode::All => 1,
                    };
                    // A class without any device is one fact for the whole cluster.
                    if self
                        .class_devices(view.device_class_name)
                        .is_none_or(DeviceSet::is_empty)
                    {
                        found = true;
                        continue;
                    }
                    let mut selectors = Vec::with_capacity(view.selectors.len());
                    for sel in view.selectors {
                        let c = compiled
                            .entry(sel.cel.clone())
                            .or_insert_with(|| Selector::compile(&sel.cel).ok());
                        if let Some(c) = c {
                            selectors.push(c.clone());
                        }
                    }
                    let reference = view.reference();
                    let node = || vec![name.to_owned()];
                    let mut why: Vec<DeviceFact> = Vec::new();
                    // Each stage that leaves too few is a fact; the next census passes
                    // over it, so that what blocks once it is lifted is a fact too.
                    let mut skip = Skip::default();
                    let census = loop {
                        let Some(census) = self.census(id, &view, &selectors, skip) else {
                            break None;
                        };
                        if census.class < need {
                            why.push((
                                Fact::TooFewDevices {
                                    class: view.device_class_name.to_owned(),
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                            break None;
                        } else if census.selected() < need {
                            skip.selectors = true;
                            why.push((
                                Fact::RequestSelector {
                                    claim: claim.to_owned(),
                                    request: reference.clone(),
                                    class: view.device_class_name.to_owned(),
                                    of_class: census.class,
                                    selectors: census.selectors.clone(),
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                        } else if census.capacity < need {
                            skip.capacity = true;
                            why.push((
                                Fact::CapacityTooSmall {
                                    claim: claim.to_owned(),
                                    request: reference.clone(),
                                    capacity: view
                                        .capacity
                                        .iter()
                                        .map(|(k, q)| (k.clone(), *q))
                                        .collect(),
                                    matching: census.selected(),
                                    fit: census.capacity,
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                        } else if census.counters < need {
                            skip.counters = true;
                            why.push((
                                Fact::CountersTooFew {
                                    claim: claim.to_owned(),
                                    request: reference.clone(),
                                    matching: census.capacity,
                                    fit: census.counters,
                                    needed: need,
                                    nodes: node(),
                                },
                                None,
                            ));
                        } else {
                            break Some(census);
                        }
                    };
                    if let Some(census) = &census {
                        let present = &census.fit;
                        let mut usable = present.clone();
                        self.restrict_usable(&mut usable, view.tolerations);
                        usable.difference_with(&census.held);
                        usable.difference_with(&census.counters_held);
                        let free = devices.count(&usable);
                        let ok = free.min(census.counters_now);
                        let (others, own) = split_own(census.held.clone(), &gang.own);
                        let in_use = devices.count(&others);
                        let held_net = devices.net_part(&others);
                        let own_in_use = devices.count(&own);
                        let own_net = devices.net_part(&own);
                        let counters_in_use = devices.count(&census.counters_held);
                        let counters_net = devices.net_part(&census.counters_held);
                        alts.push((reference.clone(), usable, present.clone(), need));
                        if ok >= need && why.is_empty() {
                            // Enough for this request alone, but the node's other
                            // requests may compete for them: what others hold counts.
                            served = true;
                            if in_use > 0 {
                                let f = Fact::DevicesInUse {
                                    devices: in_use,
                                    nodes: node(),
                                };
                                add(f, held_net);
                            }
                            if counters_in_use > 0 {
                                let f = Fact::CountersInUse {
                                    devices: counters_in_use,
                                    nodes: node(),
                                };
                                add(f, counters_net);
                            }
                            continue;
                        }
                        if ok < need {
                            // Too few usable now, with the stages above lifted: what
                            // taints and other claims take counts too. Tainted devices
                            // count whether or not they are in use: both facts must go
                            // for such a device to serve.
                            for (taint, members) in self.untolerated_taints(view.tolerations) {
                                let mut hit = present.clone();
                                hit.intersect_with(members);
                                let n = devices.count(&hit);
                                if n > 0 {
                                    why.push((
                                        Fact::DeviceTaint {
                                            taint: DeviceTaint {
                                                time_added: None,
                                                ..taint.clone()
                                            },
                                            devices: n,
                                            nodes: node(),
                                        },
                                        devices.net_part(&hit),
                                    ));
                                }
                            }
                            if in_use > 0 {
                                let f = Fact::DevicesInUse {
                                    devices: in_use,
                                    nodes: node(),
                                };
                                why.push((f, held_net));
                            }
                            if own_in_use > 0 {
                                let f = Fact::HeldByOwnMembers {
                                    devices: own_in_use,
                                    nodes: node(),
                                };
                                why.push((f, own_net));
                            }
                            if counters_in_use > 0 || (free >= need && census.counters_now < need) {
                                let f = Fact::CountersInUse {
                                    devices: counters_in_use.max(1),
                                    nodes: node(),
                                };
                                why.push((f, counters_net));
                            }
                        }
                    }
                    whys.push(why);
                }
                scopes.push(alts);
                if served {
                    continue;
                }
                // No alternative can serve the request: each says why.
                for why in whys {
                    found |= !why.is_empty();
                    for (f, net) in why {
                        add(f, net);
                    }
                }
            }
            found |= self.diagnose_constraints(claim, spec, &scopes, name, &gang.own, add);
        }
        found
    }

    /// Reports the constraints of claim `claim` that cannot hold on the node with the
    /// devices its requests may use (`scopes`, per request of `spec` in order: its
    /// alternatives as (reference, usable now, usable on the hardware, needed)): on the
    /// hardware, an unresolvable [`Fact::Constraint`]; only now, what others hold
    /// ([`Fact::DevicesInUse`]). Whether it reported anything.
    pub(super) fn diagnose_constraints(
        &self,
        claim: &str,
        spec: &ResourceClaimSpec,
        scopes: &[Vec<(String, DeviceSet, DeviceSet, u32)>],
        name: &str,
        own: &DeviceSet,
        add: &mut dyn FnMut(Fact, Option<DeviceSet>),
    ) -> bool {
        let mut found = false;
        for c in &spec.constraints {
            let (kind, distinct) = match &c.kind {
                ConstraintKind::MatchAttribute(_) => ("matchAttribute", false),
                ConstraintKind::DistinctAttribute(_) => ("distinctAttribute", true),
            };
            // The requests it covers, each with the alternatives it covers.
            let covered = |now: bool| -> Vec<Vec<(&DeviceSet, u32)>> {
                scopes
                    .iter()
                    .map(|alts| {
                        alts.iter()
                            .filter(|(reference, ..)| {
                                let (req, sub) = split_request_ref(reference);
                                c.applies_to(req, sub)
                            })
                            .map(|(_, usable, present, need)| {
                                (if now { usable } else { present }, *need)
                            })
                            .collect::<Vec<_>>()
                    })
                    .filter(|alts| !alts.is_empty())
                    .collect()
            };
            let hardware = covered(false);
            let needed: u32 = hardware
                .iter()
                .map(|alts| alts.iter().map(|(_, n)| *n).min().unwrap_or(0))
                .sum();
            if needed == 0 {
                continue;
            }
            let (ok, best) = self.constraint_bound(c.attribute(), distinct, &hardware);
            if !ok {
                found = true;
                add(
                    Fact::Constraint {
                        claim: claim.to_owned(),
                        kind: kind.to_owned(),
                        attribute: c.attribute().to_owned(),
                        requests: c.requests.clone(),
                        needed,
                        best,
                        nodes: vec![name.to_owned()],
                    },
                    None,
                );
                continue;
            }
            let (ok_now, _) = self.constraint_bound(c.attribute(), distinct, &covered(true));
            if !ok_now {
                // Devices others hold are needed for the constraint to hold.
                let mut held = DeviceSet::new();
                for alts in &hardware {
                    for (set, _) in alts {
                        held.grow(set.universe());
                        held.union_with(set);
                    }
                }
                held.difference_with(self.free_devices());
                let (held, own) = split_own(held, own);
                let devices = u32::try_from(held.len()).unwrap_or(u32::MAX);
                if devices > 0 {
                    found = true;
                    add(
                        Fact::DevicesInUse {
                            devices,
                            nodes: vec![name.to_owned()],
                        },
                        None,
                    );
                }
                let devices = u32::try_from(own.len()).unwrap_or(u32::MAX);
                if devices > 0 {
                    found = true;
                    add(
                        Fact::HeldByOwnMembers {
                            devices,
                            nodes: vec![name.to_owned()],
                        },
                        None,
                    );
                }
            }
        }
        found
    }
}

/// The claims (`namespace/name`) the unit holds already: the allocated claims its
/// running members name, and its allocated shared claims.
pub(super) fn own_claims(gang: &Gang<'_>, claims: &[ResourceClaim]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = gang
        .shared
        .iter()
        .filter(|s| s.allocated.is_some() && (s.used || s.group))
        .map(|s| s.name.clone())
        .collect();
    for p in &gang.running {
        for c in &p.resource_claims {
            if let ClaimSource::ClaimName(n) = &c.source
                && claims
                    .iter()
                    .any(|x| x.namespace == p.namespace && x.name == *n && x.allocation.is_some())
            {
                out.insert(format!("{}/{n}", p.namespace));
            }
        }
    }
    out
}

impl Cluster {
    /// The devices of the allocations of `names` among `claims`.
    pub(super) fn devices_of(
        &self,
        claims: &[ResourceClaim],
        names: &BTreeSet<String>,
    ) -> DeviceSet {
        let mut out = DeviceSet::new();
        for c in claims {
            let Some(result) = &c.allocation else {
                continue;
            };
            if !names.contains(&format!("{}/{}", c.namespace, c.name)) {
                continue;
            }
            for d in &result.devices {
                if let Some(id) = self.device_id(&DeviceRef::new(&d.driver, &d.pool, &d.device)) {
                    out.insert(id);
                }
            }
        }
        out
    }
}

/// `held` split into what other workloads hold and what the unit itself holds
/// (`own`: its running members' and shared claims' devices).
pub(super) fn split_own(mut held: DeviceSet, own: &DeviceSet) -> (DeviceSet, DeviceSet) {
    if own.is_empty() {
        return (held, DeviceSet::new());
    }
    let mut mine = held.clone();
    mine.intersect_with(own);
    held.difference_with(own);
    (held, mine)
}

/// The devices a pod on one node can reach: its node-local devices, and the
/// network-attached ones whose node selection admits the node (only looked up when the
/// cluster has any).
pub(super) struct Reach<'c> {
    local: Option<&'c SparseDeviceSet>,
    /// The network-attached devices within reach.
    net: Option<DeviceSet>,
}

impl Reach<'_> {
    /// How many devices of `set` are within reach.
    pub(super) fn count(&self, set: &DeviceSet) -> u32 {
        let local = self.local.map_or(0, |d| d.count_in(set));
        let net = self.net_part(set).map_or(0, |n| n.len());
        u32::try_from(local + net).unwrap_or(u32::MAX)
    }

    /// The network-attached devices of `set` within reach, if any.
    pub(super) fn net_part(&self, set: &DeviceSet) -> Option<DeviceSet> {
        let mut part = self.net.as_ref()?.clone();
        part.intersect_with(set);
        (!part.is_empty()).then_some(part)
    }
}

impl Cluster {
    pub(super) fn reach(&self, id: crate::NodeId) -> Reach<'_> {
        Reach {
            local: self.node_devices(id),
            net: self.has_shared_devices().then(|| {
                let mut net = self.devices_reachable_from(id);
                net.intersect_with(self.shared_devices());
                net
            }),
        }
    }
}

/// A device fact and the network-attached devices its count includes.
type DeviceFact = (Fact, Option<DeviceSet>);

/// The claims (`namespace/name`, spec) a pod of shape `si` may have to allocate on its
/// node: its own and the shared claims its pods use; claims allocated already are not.
pub(super) fn shape_claims<'g>(
    gang: &'g Gang<'_>,
    si: usize,
) -> Vec<(&'g str, &'g ResourceClaimSpec)> {
    let mut out: Vec<(&str, &ResourceClaimSpec)> = gang
        .pods
        .iter()
        .find(|p| p.shape == si)
        .map(|p| p.own.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|(name, claim)| (name.as_str(), &claim.spec))
        .collect();
    let uses = &gang.shapes[si].uses;
    for (i, s) in gang.shared.iter().enumerate() {
        if s.allocated.is_none() && uses.contains(&i) {
            out.push((s.name.as_str(), &s.claim.spec));
        }
    }
    out
}

impl Cluster {
    /// How much of resource `r` the gang's pending pods could want on node `id`
    /// together (`pods`: one each): per shape, its pods, but no more than the node's
    /// devices could serve (ignoring what others hold).
    pub(super) fn gang_wants(&self, gang: &Gang<'_>, id: crate::NodeId, r: &str) -> Quantity {
        let usable = u64::from(self.reach(id).count(self.usable_devices()));
        gang.shapes.iter().fold(Quantity::ZERO, |sum, s| {
            let each = if r == "pods" {
                Quantity::from_int(1)
            } else {
                s.rep.requests.get(r).copied().unwrap_or(Quantity::ZERO)
            };
            let mut pods = s.pods as u64;
            if let Some(fit) = usable.checked_div(s.min_devices) {
                pods = pods.min(fit);
            }
            (0..pods).fold(sum, |sum, _| sum.saturating_add(each))
        })
    }
}
