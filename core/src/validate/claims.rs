//! Claim rules: every claim a bound pod or the group uses is allocated exactly once
//! (already, in a binding or in the group's claims), its allocation is usable from every
//! user's node, and each result matches its claim's requests (names, counts per
//! allocation mode, admin access, copied tolerations).
//!
//! A PodGroup claim binds only the members that name it with the group's entry (same
//! name and source, [`PodGroup::group_claim_for`]), and is the group's (allocated in
//! the group's claims) only when some member does (KEP-5729). It must be allocated when
//! a bound member names it; when only pending members that stay unbound name it, it is
//! left for the first of them to be scheduled (as upstream allocates a claim with the
//! first pod that references it) and may stay unallocated. A group claim no member
//! names is not allocated; pods that name the same ResourceClaim under another entry
//! use it as their own claim (its allocation belongs in the binding of one of them).

use crate::alloc_prelude::*;
use crate::cel::Selector;
use crate::cluster::ids::DeviceId;
use crate::cluster::{Cluster, DeviceRef, DeviceView};
use crate::model::claim::{
    AllocationMode, AllocationResult, DeviceRequestAllocationResult, DeviceRequestKind,
    MAX_ALLOCATION_RESULTS, ResourceClaim,
};
use crate::model::decision::{ClaimAllocation, PlacementDecision};
use crate::model::workload::{ClaimSource, Pod, PodGroup};
use crate::{DeviceSet, Node};

use super::devices::{Compiled, check_all, check_constraints, check_device, check_sharing};
use super::violation::{Holder, Violation};
use super::{Bound, is_member, key};

/// What the claim checks read: the cluster, each decision node's reach and the compiled
/// class selectors.
pub(super) struct Env<'a> {
    pub(super) cluster: &'a Cluster,
    pub(super) reach: BTreeMap<&'a str, DeviceSet>,
    classes: BTreeMap<&'a str, Result<Vec<Selector>, String>>,
}

impl<'a> Env<'a> {
    pub(super) fn new(
        cluster: &'a Cluster,
        decision: &'a PlacementDecision,
        claims: &BTreeMap<String, &'a ResourceClaim>,
    ) -> Env<'a> {
        let mut reach = BTreeMap::new();
        for b in &decision.bindings {
            if let Some(node) = cluster.node(&b.node)
                && !reach.contains_key(node.name.as_str())
                && let Some(id) = cluster.node_id(&node.name)
            {
                reach.insert(node.name.as_str(), cluster.devices_reachable_from(id));
            }
        }
        let mut classes = BTreeMap::new();
        for c in claims.values() {
            for r in &c.spec.requests {
                for alt in r.alternatives() {
                    let name = alt.device_class_name;
                    if classes.contains_key(name) {
                        continue;
                    }
                    if let Some(class) = cluster.class(name) {
                        let compiled = class
                            .selectors
                            .iter()
                            .map(|s| Selector::compile(&s.cel).map_err(|e| e.to_string()))
                            .collect::<Result<Vec<_>, _>>();
                        classes.insert(name, compiled);
                    }
                }
            }
        }
        Env {
            cluster,
            reach,
            classes,
        }
    }

    fn reaches(&self, node: &Node, dev: DeviceId) -> bool {
        self.reach
            .get(node.name.as_str())
            .is_some_and(|s| s.contains(dev))
    }
}

/// Who uses a referenced claim.
struct Use<'a> {
    group: bool,
    referrers: Vec<Holder>,
    nodes: Vec<&'a Node>,
    /// A bound pod names it (for a group claim: a bound member names it).
    named: bool,
    /// It must be allocated: a bound pod names it (a group claim: with the group's
    /// entry; see the module docs).
    required: bool,
}

impl<'a> Use<'a> {
    fn add_node(&mut self, node: Option<&'a Node>) {
        if let Some(n) = node
            && !self.nodes.iter().any(|x| x.name == n.name)
        {
            self.nodes.push(n);
        }
    }
}

/// One device result of an allocation that is checked, for the sharing rules.
pub(super) struct Record<'a> {
    pub(super) claim: &'a str,
    pub(super) result: &'a DeviceRequestAllocationResult,
    pub(super) device: DeviceRef,
    pub(super) id: DeviceId,
    pub(super) shareable: bool,
}

pub(super) fn check_claims<'a>(
    env: &Env<'a>,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &BTreeMap<String, &'a ResourceClaim>,
    bound: &[Bound<'a>],
    decision: &'a PlacementDecision,
    out: &mut Vec<Violation>,
) {
    let group_key = group.map_or_else(String::new, |g| key(&g.namespace, &g.name));
    let mut uses: BTreeMap<String, Use<'a>> = BTreeMap::new();
    // Sites that may hold allocations of template-generated claims.
    let mut template_sites: BTreeSet<Holder> = BTreeSet::new();
    for b in bound {
        for prc in &b.pod.resource_claims {
            if group.is_some_and(|g| g.group_claim_for(prc).is_some()) {
                continue;
            }
            match &prc.source {
                ClaimSource::ClaimName(n) => {
                    let u = uses.entry(key(&b.pod.namespace, n)).or_insert(Use {
                        group: false,
                        referrers: Vec::new(),
                        nodes: Vec::new(),
                        named: true,
                        required: true,
                    });
                    u.referrers.push(Holder::Pod(b.key.to_owned()));
                    u.add_node(b.node);
                }
                ClaimSource::Template(_) => {
                    template_sites.insert(Holder::Pod(b.key.to_owned()));
                }
            }
        }
    }
    if let Some(g) = group
        && !bound.is_empty()
    {
        for gc in &g.resource_claims {
            match &gc.source {
                ClaimSource::ClaimName(n) => {
                    let names = |p: &Pod| {
                        p.resource_claims
                            .iter()
                            .any(|prc| g.group_claim_for(prc) == Some(gc))
                    };
                    // The group's only when a member names it with the group's entry.
                    if !pods.iter().any(|p| is_member(p, g) && names(p))
                        && !bound.iter().any(|b| names(b.pod))
                    {
                        continue;
                    }
                    let u = uses.entry(key(&g.namespace, n)).or_insert(Use {
                        group: true,
                        referrers: Vec::new(),
                        nodes: Vec::new(),
                        named: false,
                        required: false,
                    });
                    u.group = true;
                    u.referrers.push(Holder::Group(group_key.clone()));
                    // Its users: the members that name it (same name and source).
                    for b in bound {
                        if names(b.pod) {
                            u.named = true;
                            u.add_node(b.node);
                        }
                    }
                    // Required when a bound member names it; otherwise it is left for
                    // the first pending member naming it to be bound.
                    u.required |= u.named;
                }
                ClaimSource::Template(_) => {
                    template_sites.insert(Holder::Group(group_key.clone()));
                }
            }
        }
    }
    for (k, u) in &uses {
        if !claims.contains_key(k) {
            for r in &u.referrers {
                out.push(Violation::ClaimNotProvided {
                    referrer: r.clone(),
                    claim: k.clone(),
                });
            }
        }
    }
    let mut interest: BTreeSet<&str> = uses.keys().map(String::as_str).collect();
    let sites: Vec<(Holder, &'a ClaimAllocation)> = decision
        .group_claims
        .iter()
        .map(|ca| (Holder::Group(group_key.clone()), ca))
        .chain(decision.bindings.iter().flat_map(|b| {
            b.claims
                .iter()
                .map(move |ca| (Holder::Pod(b.pod.clone()), ca))
        }))
        .collect();
    interest.extend(sites.iter().map(|(_, ca)| ca.claim.as_str()));
    let mut held = holdings(env.cluster, &interest);
    // A claim with `status.allocation` is allocated, whether or not the cluster
    // records its devices.
    for (k, c) in claims {
        if let Some(result) = &c.allocation
            && let Some(&name) = interest.get(k.as_str())
        {
            let devices = held.entry(name).or_default();
            for d in &result.devices {
                let r = DeviceRef::new(&d.driver, &d.pool, &d.device);
                if !devices.contains(&r) {
                    devices.push(r);
                }
            }
        }
    }

    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut records: Vec<Record<'a>> = Vec::new();
    for (site, ca) in &sites {
        let n = counts.entry(ca.claim.as_str()).or_insert(0);
        *n += 1;
        if *n > 1 {
            continue;
        }
        let Some(&claim) = claims.get(&ca.claim) else {
            out.push(Violation::UnknownClaim {
                claim: ca.claim.clone(),
            });
            continue;
        };
        let nodes: Vec<&Node> = if let Some(u) = uses.get(&ca.claim) {
            let in_place = if u.group {
                matches!(site, Holder::Group(_))
            } else {
                u.referrers.contains(site)
            };
            if !in_place {
                out.push(Violation::MisplacedAllocation {
                    claim: ca.claim.clone(),
                    holder: site.clone(),
                });
            }
            u.nodes.clone()
        } else {
            if !template_sites.contains(site) {
                out.push(Violation::UnexpectedAllocation {
                    claim: ca.claim.clone(),
                    holder: site.clone(),
                });
            }
            site_nodes(bound, site)
        };
        if held.contains_key(ca.claim.as_str()) {
            out.push(Violation::AlreadyAllocated {
                claim: ca.claim.clone(),
            });
        }
        check_result(env, &ca.claim, claim, &ca.result, &nodes, &mut records, out);
    }
    for (claim, n) in &counts {
        if *n > 1 {
            out.push(Violation::DuplicateAllocation {
                claim: (*claim).to_owned(),
                count: *n,
            });
        }
    }
    for (k, u) in &uses {
        let Some(claim) = claims.get(k) else {
            continue;
        };
        if counts.contains_key(k.as_str()) {
            continue;
        }
        // Only pods that name a claim reserve it (a group claim binds the members that
        // name it, not the others).
        if u.named
            && let Some(result) = &claim.allocation
            && let Some((device, taint)) = env.cluster.untolerated_no_execute(result)
        {
            out.push(Violation::ReservesTaintedClaim {
                claim: k.clone(),
                device,
                taint,
            });
        }
        if let Some(devices) = held.get(k.as_str()) {
            for d in devices {
                let Some(id) = env.cluster.device_id(d) else {
                    continue;
                };
                for node in &u.nodes {
                    if !env.reaches(node, id) {
                        out.push(Violation::DeviceUnreachable {
                            claim: k.clone(),
                            device: d.clone(),
                            node: node.name.clone(),
                        });
                    }
                }
            }
        } else if u.required && !claim.spec.requests.is_empty() {
            out.push(Violation::MissingAllocation { claim: k.clone() });
        }
    }
    check_sharing(env.cluster, &records, out);
}

/// The nodes an allocation found at `site` is used from, when no reference says.
fn site_nodes<'a>(bound: &[Bound<'a>], site: &Holder) -> Vec<&'a Node> {
    match site {
        Holder::Group(_) => {
            let mut v: Vec<&Node> = Vec::new();
            for n in bound.iter().filter_map(|b| b.node) {
                if !v.iter().any(|x| x.name == n.name) {
                    v.push(n);
                }
            }
            v
        }
        Holder::Pod(p) => bound
            .iter()
            .find(|b| b.key == p)
            .and_then(|b| b.node)
            .into_iter()
            .collect(),
    }
}

/// The devices each consumer of interest holds in the cluster (any kind of holder).
fn holdings<'s>(
    cluster: &Cluster,
    interest: &BTreeSet<&'s str>,
) -> BTreeMap<&'s str, Vec<DeviceRef>> {
    let mut out: BTreeMap<&str, Vec<DeviceRef>> = BTreeMap::new();
    if interest.is_empty() {
        return out;
    }
    let mut seen = BTreeSet::new();
    for s in cluster.slices() {
        for d in &s.devices {
            let r = DeviceRef::new(&s.driver, &s.pool.name, &d.name);
            if seen.contains(&r) {
                continue;
            }
            for h in cluster.allocations(&r) {
                if let Some(&c) = interest.get(h.consumer.as_str()) {
                    let v = out.entry(c).or_default();
                    if !v.contains(&r) {
                        v.push(r.clone());
                    }
                }
            }
            seen.insert(r);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn check_result<'a>(
    env: &Env<'a>,
    claim_key: &'a str,
    claim: &'a ResourceClaim,
    result: &'a AllocationResult,
    nodes: &[&'a Node],
    records: &mut Vec<Record<'a>>,
    out: &mut Vec<Violation>,
) {
    let cluster = env.cluster;
    let spec = &claim.spec;
    let ck = || claim_key.to_owned();
    if result.devices.len() > MAX_ALLOCATION_RESULTS {
        out.push(Violation::TooManyDevices {
            claim: ck(),
            count: result.devices.len(),
        });
    }
    if let Some(sel) = &result.node_selector {
        for n in nodes {
            if !sel.matches(&n.name, &n.labels) {
                out.push(Violation::AllocationNotForNode {
                    claim: ck(),
                    node: n.name.clone(),
                });
            }
        }
    }
    // Requests.
    let mut by_ref: BTreeMap<&str, Vec<&DeviceRequestAllocationResult>> = BTreeMap::new();
    for r in &result.devices {
        by_ref.entry(r.request.as_str()).or_default().push(r);
    }
    for req in &spec.requests {
        match &req.kind {
            DeviceRequestKind::Exactly(_) => {
                if !by_ref.contains_key(req.name.as_str()) {
                    out.push(Violation::RequestNotAllocated {
                        claim: ck(),
                        request: req.name.clone(),
                    });
                }
            }
            DeviceRequestKind::FirstAvailable(subs) => {
                let used: Vec<String> = subs
                    .iter()
                    .map(|s| format!("{}/{}", req.name, s.name))
                    .filter(|r| by_ref.contains_key(r.as_str()))
                    .collect();
                if used.is_empty() {
                    out.push(Violation::RequestNotAllocated {
                        claim: ck(),
                        request: req.name.clone(),
                    });
                } else if used.len() > 1 {
                    out.push(Violation::ConflictingSubrequests {
                        claim: ck(),
                        request: req.name.clone(),
                        subrequests: used,
                    });
                }
            }
        }
    }
    let mut compiled: BTreeMap<&str, Compiled<'_>> = BTreeMap::new();
    for (&reference, rs) in &by_ref {
        let Some(view) = spec.resolve(reference) else {
            out.push(Violation::UnknownRequest {
                claim: ck(),
                request: reference.to_owned(),
            });
            continue;
        };
        let class = match env.classes.get(view.device_class_name) {
            None => {
                out.push(Violation::ClassNotFound {
                    claim: ck(),
                    request: reference.to_owned(),
                    class: view.device_class_name.to_owned(),
                });
                None
            }
            Some(Err(message)) => {
                out.push(Violation::SelectorInvalid {
                    claim: ck(),
                    request: reference.to_owned(),
                    message: message.clone(),
                });
                None
            }
            Some(Ok(sels)) => Some(sels.as_slice()),
        };
        let request_sels = view
            .selectors
            .iter()
            .map(|s| Selector::compile(&s.cel))
            .collect::<Result<Vec<_>, _>>();
        let request_sels = match request_sels {
            Ok(v) => Some(v),
            Err(e) => {
                out.push(Violation::SelectorInvalid {
                    claim: ck(),
                    request: reference.to_owned(),
                    message: e.to_string(),
                });
                None
            }
        };
        let selectors = class.zip(request_sels);
        match view.allocation_mode {
            AllocationMode::ExactCount(n) => {
                if rs.len() != n as usize {
                    out.push(Violation::WrongDeviceCount {
                        claim: ck(),
                        request: reference.to_owned(),
                        expected: n,
                        actual: rs.len(),
                    });
                }
            }
            AllocationMode::All => {
                if let Some((class, request)) = &selectors {
                    check_all(
                        env, claim_key, reference, &view, class, request, rs, nodes, out,
                    );
                }
            }
        }
        compiled.insert(reference, Compiled { view, selectors });
    }
    // Devices.
    let mut found: Vec<(
        &DeviceRequestAllocationResult,
        DeviceRef,
        Option<DeviceView<'a>>,
    )> = Vec::with_capacity(result.devices.len());
    for r in &result.devices {
        let device = DeviceRef::new(&r.driver, &r.pool, &r.device);
        let Some(id) = cluster.device_id(&device) else {
            out.push(Violation::UnknownDevice {
                claim: ck(),
                device: device.clone(),
            });
            found.push((r, device, None));
            continue;
        };
        let dv = cluster
            .device(id)
            .expect("a device id from device_id is live");
        if !dv.usable {
            out.push(Violation::DeviceNotUsable {
                claim: ck(),
                device: device.clone(),
            });
        }
        for n in nodes {
            if !env.reaches(n, id) {
                out.push(Violation::DeviceUnreachable {
                    claim: ck(),
                    device: device.clone(),
                    node: n.name.clone(),
                });
            }
        }
        records.push(Record {
            claim: claim_key,
            result: r,
            device: device.clone(),
            id,
            shareable: dv.device.allow_multiple_allocations,
        });
        if let Some(c) = compiled.get(r.request.as_str()) {
            check_device(cluster, claim_key, c, r, &device, &dv, out);
        }
        found.push((r, device, Some(dv)));
    }
    check_constraints(claim_key, claim, &found, out);
}
