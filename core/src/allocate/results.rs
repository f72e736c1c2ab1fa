//! Results: a solution the search found turned into upstream's `AllocationResult` per
//! claim — request or `request/subrequest`, driver, pool, device, admin access, copied
//! tolerations, binding conditions, share ids and consumed capacity, class then claim
//! configs, and the node selector.

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::cluster::ids::{DeviceId, NodeId};
use crate::model::claim::{
    AllocationConfigSource, AllocationResult, DeviceAllocationConfiguration,
    DeviceRequestAllocationResult, ResourceClaim, split_request_ref,
};
use crate::model::device::NodeAccess;
use crate::model::slice::SliceNodeSelection;
use crate::{NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};

use super::prepare::PreparedClaim;
use super::search::Claim;
use super::{claim_name, search};

impl Cluster {
    pub(super) fn build_results(
        &self,
        node: NodeId,
        claims: &[&ResourceClaim],
        prepared: &[PreparedClaim<'_>],
        problem: &[Claim],
        picks: &[search::Pick],
    ) -> Vec<AllocationResult> {
        let node_name = self.nodes_name(node);
        let mut out = Vec::with_capacity(claims.len());
        for (ci, claim) in claims.iter().enumerate() {
            let mut result = AllocationResult::default();
            result
                .devices
                .reserve_exact(picks.iter().filter(|p| p.claim == ci).count());
            let mut pinned = false;
            let mut terms: Vec<NodeSelectorRequirement> = Vec::new();
            let mut fields: Vec<NodeSelectorRequirement> = Vec::new();
            let mut share_ordinals: BTreeMap<(String, DeviceId), u32> = BTreeMap::new();
            let mut used_requests: Vec<(String, String)> = Vec::new(); // (reference, class)
            // Configs come from the claim or from a class the claim names.
            let configs_possible = !claim.spec.config.is_empty()
                || prepared[ci].0.iter().flatten().any(|p| {
                    self.class(&p.compiled.class)
                        .is_some_and(|c| !c.config.is_empty())
                });
            for p in picks.iter().filter(|p| p.claim == ci) {
                let prep = &prepared[ci].0[p.request][p.alternative];
                let slot = self.devices[p.device.index()]
                    .as_ref()
                    .expect("live device id");
                let entry = self.slice_entry(slot.slice);
                let device = &entry.slice.devices[slot.pos as usize];
                let cand = &problem[ci].requests[p.request].alternatives[p.alternative].candidates
                    [p.candidate];
                // Shares (consumption and an id) for every pick of a shareable device,
                // admin picks included, as upstream writes them.
                let share = cand.shareable.then(|| cand.consumes.clone());
                let reference = &prep.compiled.reference;
                let share_id = share.as_ref().map(|_| {
                    let ord = share_ordinals
                        .entry((reference.clone(), p.device))
                        .or_insert(0);
                    let id = crate::model::claim::share_id(
                        &claim_name(claim),
                        reference,
                        &self.device_ref_of(slot).to_string(),
                        *ord,
                    );
                    *ord += 1;
                    id
                });
                result.devices.push(DeviceRequestAllocationResult {
                    request: reference.clone(),
                    driver: entry.slice.driver.clone(),
                    pool: entry.slice.pool.name.clone(),
                    device: device.name.clone(),
                    admin_access: prep.admin,
                    tolerations: prep.tolerations.to_vec(),
                    binding_conditions: device.binding_conditions.clone(),
                    binding_failure_conditions: device.binding_failure_conditions.clone(),
                    share_id,
                    consumed_capacity: share.unwrap_or_default(),
                });
                if configs_possible && !used_requests.iter().any(|(r, _)| r == reference) {
                    used_requests.push((reference.clone(), prep.compiled.class.clone()));
                }
                // Node selector (upstream 3.11): node-local devices and bindsToNode
                // pin the allocation to this node; otherwise selectors are merged.
                let access = match &entry.slice.node_selection {
                    SliceNodeSelection::Slice(a) => Some(a),
                    SliceNodeSelection::PerDevice => device.node_access.as_ref(),
                };
                match access {
                    Some(NodeAccess::NodeName(_)) => pinned = true,
                    Some(NodeAccess::NodeSelector(sel)) => {
                        if let Some(term) = sel.terms.first() {
                            for r in &term.match_expressions {
                                if !terms.contains(r) {
                                    terms.push(r.clone());
                                }
                            }
                            for r in &term.match_fields {
                                if !fields.contains(r) {
                                    fields.push(r.clone());
                                }
                            }
                        }
                    }
                    Some(NodeAccess::AllNodes) | None => {}
                }
                if device.binds_to_node {
                    pinned = true;
                }
            }
            result.node_selector = if pinned {
                Some(NodeSelector::single_node(node_name))
            } else if terms.is_empty() && fields.is_empty() {
                None
            } else {
                Some(NodeSelector {
                    terms: vec![NodeSelectorTerm {
                        match_expressions: terms,
                        match_fields: fields,
                    }],
                })
            };
            if configs_possible {
                result.config = self.result_config(claim, &used_requests);
            }
            out.push(result);
        }
        out
    }

    pub(super) fn nodes_name(&self, node: NodeId) -> &str {
        self.node_by_id(node).map_or("", |n| n.name.as_str())
    }

    /// `devices.config` (upstream 3.11): class configurations first, each class once
    /// with the (sub)requests that used it, then the claim's configurations that apply
    /// to a used request; a list covering every request becomes empty ("all").
    fn result_config(
        &self,
        claim: &ResourceClaim,
        used: &[(String, String)],
    ) -> Vec<DeviceAllocationConfiguration> {
        let any_class_config = used
            .iter()
            .any(|(_, class)| self.class(class).is_some_and(|c| !c.config.is_empty()));
        if claim.spec.config.is_empty() && !any_class_config {
            return Vec::new();
        }
        let mut out: Vec<DeviceAllocationConfiguration> = Vec::new();
        let mut classes: Vec<(&str, Vec<String>)> = Vec::new();
        for (reference, class) in used {
            match classes.iter_mut().find(|(c, _)| *c == class.as_str()) {
                Some((_, refs)) => refs.push(reference.clone()),
                None => classes.push((class.as_str(), vec![reference.clone()])),
            }
        }
        for (class, refs) in classes {
            if let Some(cls) = self.class(class) {
                for opaque in &cls.config {
                    out.push(DeviceAllocationConfiguration {
                        source: AllocationConfigSource::FromClass,
                        requests: refs.clone(),
                        opaque: opaque.clone(),
                    });
                }
            }
        }
        let selected = |r: &str| {
            used.iter().any(|(u, _)| {
                u == r || split_request_ref(u).0 == r && split_request_ref(r).1.is_none()
            })
        };
        for cfg in &claim.spec.config {
            if cfg.requests.is_empty() || cfg.requests.iter().any(|r| selected(r)) {
                out.push(DeviceAllocationConfiguration {
                    source: AllocationConfigSource::FromClaim,
                    requests: cfg.requests.clone(),
                    opaque: cfg.opaque.clone(),
                });
            }
        }
        // A list naming every top-level request (directly or via its selected
        // subrequest) means "all requests": upstream writes it as an empty list.
        let top: Vec<&str> = claim
            .spec
            .requests
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        for cfg in &mut out {
            let covers_all = !cfg.requests.is_empty()
                && top.iter().all(|t| {
                    cfg.requests.iter().any(|r| {
                        r == t || (split_request_ref(r).0 == *t && used.iter().any(|(u, _)| u == r))
                    })
                });
            if covers_all {
                cfg.requests.clear();
            }
        }
        out
    }
}
