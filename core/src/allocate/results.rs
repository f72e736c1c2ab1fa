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
use crate::{DeviceToleration, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Quantity};

use super::prepare::PreparedClaim;
use super::search::Claim;
use super::{claim_name, search};

/// One device of a claim's result, as [`Cluster::write_device`] writes it.
pub(super) struct ResultDevice<'a> {
    pub(super) device: DeviceId,
    /// The request, or `request/subrequest`.
    pub(super) reference: &'a str,
    /// The DeviceClass of the (sub)request.
    pub(super) class: &'a str,
    pub(super) admin: bool,
    pub(super) tolerations: &'a [DeviceToleration],
    /// What one share consumes, for a shareable device (which then gets a share id).
    pub(super) share: Option<&'a BTreeMap<String, Quantity>>,
}

/// One claim's [`AllocationResult`] while its devices are written, with what the
/// node selector and the configurations are built from at the end.
pub(super) struct ResultWriter<'c> {
    claim: &'c ResourceClaim,
    result: AllocationResult,
    pinned: bool,
    terms: Vec<NodeSelectorRequirement>,
    fields: Vec<NodeSelectorRequirement>,
    share_ordinals: BTreeMap<(String, DeviceId), u32>,
    /// (reference, class) of every (sub)request used, when configurations can apply.
    used_requests: Option<Vec<(String, String)>>,
}

impl Cluster {
    pub(super) fn build_results(
        &self,
        node: NodeId,
        claims: &[&ResourceClaim],
        prepared: &[PreparedClaim<'_>],
        problem: &[Claim],
        picks: &[search::Pick],
    ) -> Vec<AllocationResult> {
        let mut out = Vec::with_capacity(claims.len());
        for (ci, claim) in claims.iter().enumerate() {
            let classes = prepared[ci]
                .0
                .iter()
                .flatten()
                .map(|p| p.compiled.class.as_str());
            let mut w = self.result_writer(
                claim,
                classes,
                picks.iter().filter(|p| p.claim == ci).count(),
            );
            for p in picks.iter().filter(|p| p.claim == ci) {
                let prep = &prepared[ci].0[p.request][p.alternative];
                let cand = &problem[ci].requests[p.request].alternatives[p.alternative].candidates
                    [p.candidate];
                self.write_device(
                    &mut w,
                    &ResultDevice {
                        device: p.device,
                        reference: &prep.compiled.reference,
                        class: &prep.compiled.class,
                        admin: prep.admin,
                        tolerations: prep.tolerations,
                        share: cand.shareable.then_some(&cand.consumes),
                    },
                );
            }
            out.push(self.finish_result(w, node));
        }
        out
    }

    /// A writer for `claim`'s result of `devices` devices; `classes` are the classes of
    /// every alternative of its requests (configurations come from the claim or from a
    /// class it names).
    pub(super) fn result_writer<'c, 's>(
        &self,
        claim: &'c ResourceClaim,
        mut classes: impl Iterator<Item = &'s str>,
        devices: usize,
    ) -> ResultWriter<'c> {
        let configs_possible = !claim.spec.config.is_empty()
            || classes.any(|class| self.class(class).is_some_and(|c| !c.config.is_empty()));
        let mut result = AllocationResult::default();
        result.devices.reserve_exact(devices);
        ResultWriter {
            claim,
            result,
            pinned: false,
            terms: Vec::new(),
            fields: Vec::new(),
            share_ordinals: BTreeMap::new(),
            used_requests: configs_possible.then(Vec::new),
        }
    }

    /// Appends one device to the result `w` writes.
    pub(super) fn write_device(&self, w: &mut ResultWriter<'_>, d: &ResultDevice<'_>) {
        let slot = self.devices[d.device.index()]
            .as_ref()
            .expect("live device id");
        let entry = self.slice_entry(slot.slice);
        let device = &entry.slice.devices[slot.pos as usize];
        // Shares (consumption and an id) for every pick of a shareable device,
        // admin picks included, as upstream writes them.
        let share_id = d.share.map(|_| {
            let ord = w
                .share_ordinals
                .entry((d.reference.to_owned(), d.device))
                .or_insert(0);
            let id = crate::model::claim::share_id(
                &claim_name(w.claim),
                d.reference,
                &self.device_ref_of(slot).to_string(),
                *ord,
            );
            *ord += 1;
            id
        });
        w.result.devices.push(DeviceRequestAllocationResult {
            request: d.reference.to_owned(),
            driver: entry.slice.driver.clone(),
            pool: entry.slice.pool.name.clone(),
            device: device.name.clone(),
            admin_access: d.admin,
            tolerations: d.tolerations.to_vec(),
            binding_conditions: device.binding_conditions.clone(),
            binding_failure_conditions: device.binding_failure_conditions.clone(),
            share_id,
            consumed_capacity: d.share.cloned().unwrap_or_default(),
        });
        if let Some(used) = &mut w.used_requests
            && !used.iter().any(|(r, _)| r == d.reference)
        {
            used.push((d.reference.to_owned(), d.class.to_owned()));
        }
        // Node selector (upstream 3.11): node-local devices and bindsToNode
        // pin the allocation to this node; otherwise selectors are merged.
        let access = match &entry.slice.node_selection {
            SliceNodeSelection::Slice(a) => Some(a),
            SliceNodeSelection::PerDevice => device.node_access.as_ref(),
        };
        match access {
            Some(NodeAccess::NodeName(_)) => w.pinned = true,
            Some(NodeAccess::NodeSelector(sel)) => {
                if let Some(term) = sel.terms.first() {
                    for r in &term.match_expressions {
                        if !w.terms.contains(r) {
                            w.terms.push(r.clone());
                        }
                    }
                    for r in &term.match_fields {
                        if !w.fields.contains(r) {
                            w.fields.push(r.clone());
                        }
                    }
                }
            }
            Some(NodeAccess::AllNodes) | None => {}
        }
        if device.binds_to_node {
            w.pinned = true;
        }
    }

    /// The result `w` wrote, with its node selector (for `node`) and configurations.
    pub(super) fn finish_result(&self, w: ResultWriter<'_>, node: NodeId) -> AllocationResult {
        let ResultWriter {
            claim,
            mut result,
            pinned,
            terms,
            fields,
            used_requests,
            ..
        } = w;
        result.node_selector = if pinned {
            Some(NodeSelector::single_node(self.nodes_name(node)))
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
        if let Some(used) = used_requests {
            result.config = self.result_config(claim, &used);
        }
        result
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
