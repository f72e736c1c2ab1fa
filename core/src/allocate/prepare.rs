//! Preparation: every (sub)request's candidates on one node, in upstream's order (pools
//! by driver then name, binding-condition pools last, slices by name, devices in slice
//! order), through the funnel — usable pool, in use, class bit, request selectors,
//! capacity, taints against the request's tolerations — counting what each stage removed,
//! so a request with too few candidates is answered before any search.

use crate::alloc_prelude::*;
use crate::cel::Selector;
use crate::cluster::ids::{DeviceId, NodeId, PoolId};
use crate::cluster::{Cluster, ELIGIBLE, FREE, SHAREABLE, TAINTED};
use crate::model::capacity::{consumed_capacity, fits};
use crate::model::claim::{
    AllocationMode, ConstraintKind, RequestView, ResourceClaim, split_request_ref,
};
use crate::{Device, DeviceAttribute, DeviceTaint, DeviceToleration, Quantity};

use super::search::{Alternative, Candidate, Claim, Need, ValueKey, Values};
use super::{AllocationError, CompiledAlternative, EvaluationFailure, Funnel};

/// A claim under preparation: per request, its alternatives; and its constraints.
pub(super) type PreparedClaim<'a> = (Vec<Vec<Prepared<'a>>>, Vec<ConstraintKind>);

/// One alternative under preparation, with its funnel counts.
pub(super) struct Prepared<'a> {
    pub(super) alternative: Alternative,
    pub(super) admin: bool,
    pub(super) compiled: &'a CompiledAlternative,
    pub(super) tolerations: &'a [DeviceToleration],
    pub(super) funnel: Funnel,
    pub(super) required: u32,
}

impl Cluster {
    /// Devices a pod on `node` reaches, in upstream's candidate order: pools by driver
    /// then name (pools with binding conditions last), slices by name, devices in slice
    /// order. Any state.
    pub(super) fn reach_of(&self, node: NodeId) -> alloc::borrow::Cow<'_, [DeviceId]> {
        let local = self.nodes_ordered(node);
        if !self.has_shared_devices() {
            return alloc::borrow::Cow::Borrowed(local);
        }
        let reach = self.devices_reachable_from(node);
        let mut out: Vec<DeviceId> = local.to_vec();
        out.extend(self.shared_devices().iter().filter(|d| reach.contains(*d)));
        out.sort_by(|a, b| self.order_key(*a).cmp(&self.order_key(*b)));
        alloc::borrow::Cow::Owned(out)
    }

    pub(super) fn prepare_claim<'a>(
        &self,
        reach: &[DeviceId],
        claim: &'a ResourceClaim,
        compiled: &'a [Vec<CompiledAlternative>],
    ) -> Result<PreparedClaim<'a>, AllocationError> {
        let constraints: Vec<ConstraintKind> = claim
            .spec
            .constraints
            .iter()
            .map(|c| c.kind.clone())
            .collect();
        let mut requests = Vec::with_capacity(compiled.len());
        for (request, alts_compiled) in claim.spec.requests.iter().zip(compiled) {
            let mut alts = Vec::with_capacity(alts_compiled.len());
            for (view, alt) in request.alternatives().into_iter().zip(alts_compiled) {
                alts.push(self.prepare_alternative(reach, claim, &view, alt)?);
            }
            requests.push(alts);
        }
        // Which constraints apply to which alternative, and each candidate's values.
        for (k, c) in claim.spec.constraints.iter().enumerate() {
            for alts in &mut requests {
                for p in alts.iter_mut() {
                    let (req, sub) = split_request_ref(&p.compiled.reference);
                    if c.applies_to(req, sub) {
                        p.alternative.constraints.push(k);
                    }
                }
            }
        }
        for alts in &mut requests {
            for p in alts.iter_mut() {
                for cand in &mut p.alternative.candidates {
                    cand.values = claim
                        .spec
                        .constraints
                        .iter()
                        .map(|c| self.values_of(cand.device, c.attribute()))
                        .collect();
                }
            }
        }
        Ok((requests, constraints))
    }

    #[allow(clippy::too_many_lines)]
    fn prepare_alternative<'a>(
        &self,
        reach: &[DeviceId],
        claim: &ResourceClaim,
        view: &RequestView<'a>,
        compiled: &'a CompiledAlternative,
    ) -> Result<Prepared<'a>, AllocationError> {
        let reference = &compiled.reference;
        // Class selectors are evaluated once per device by the cluster's class cache.
        let Some(class) = self.class_cache.get(&compiled.class) else {
            return Err(AllocationError::ClassNotFound {
                claim: claim.object_ref(),
                field: compiled.class_path.clone(),
                class: compiled.class.clone(),
            });
        };
        let selectors = &compiled.selectors;
        let all = view.allocation_mode == AllocationMode::All;
        if all {
            // Upstream: `All` over a node with any incomplete or invalid pool is an error.
            for &dev in reach {
                let slot = self.devices[dev.index()].as_ref().expect("live device id");
                let pool = &self.pools[self.pool_of(slot).index()];
                if !pool.status.is_usable() {
                    return Err(AllocationError::IncompletePool {
                        claim: claim.object_ref(),
                        request: reference.clone(),
                        pool: format!("{}/{}", pool.status.driver, pool.status.name),
                    });
                }
            }
        }
        let mut funnel = Funnel::default();
        let mut all_blocked = false;
        let mut candidates = Vec::with_capacity(reach.len());
        for &dev in reach {
            let slot = self.devices[dev.index()].as_ref().expect("live device id");
            if slot.flags & ELIGIBLE == 0 {
                continue;
            }
            funnel.reachable += 1;
            let shareable = slot.flags & SHAREABLE != 0;
            let in_use = slot.flags & FREE == 0;
            let entry = self.slice_entry(slot.slice);
            let driver = entry.slice.driver.as_str();
            let device = &entry.slice.devices[slot.pos as usize];
            // Upstream checks "in use" before evaluating selectors, so an allocated
            // device never makes a selector error abort the call.
            let skip_in_use = in_use && !view.admin_access && !all;
            let eval = |i: usize, s: &Selector| {
                s.eval(driver, device).map_err(|error| {
                    AllocationError::Evaluation(Box::new(EvaluationFailure {
                        claim: claim.object_ref(),
                        request: reference.clone(),
                        class: None,
                        selector: i,
                        expression: s.source().to_owned(),
                        device: self.device_ref_of(slot),
                        error,
                    }))
                })
            };
            if skip_in_use {
                // Count it where the funnel would, without evaluating selectors.
                funnel.allocated += 1;
                continue;
            }
            if let Some((i, error)) = class.errors.get(&dev) {
                return Err(AllocationError::Evaluation(Box::new(EvaluationFailure {
                    claim: claim.object_ref(),
                    request: reference.clone(),
                    class: Some(compiled.class.clone()),
                    selector: *i,
                    expression: class.expression(*i).to_owned(),
                    device: self.device_ref_of(slot),
                    error: error.clone(),
                })));
            }
            if !class.matches.contains(dev) {
                funnel.class += 1;
                continue;
            }
            let mut selected = true;
            for (i, s) in selectors.iter().enumerate() {
                if !eval(i, s)? {
                    selected = false;
                    break;
                }
            }
            if !selected {
                funnel.selectors += 1;
                continue;
            }
            // Capacity: shareable devices consume it (admin shares too, as upstream);
            // others use requests as a filter.
            let mut share = None;
            let mut capacity_left = BTreeMap::new();
            if shareable {
                if let Ok(amount) = consumed_capacity(device, view.capacity, driver) {
                    if !fits(device, &BTreeMap::new(), &amount) {
                        // Too little even unused: never a candidate (for `All`, not one
                        // of "all" either).
                        funnel.capacity += 1;
                        continue;
                    }
                    let committed = self.consumed_on(slot);
                    if !fits(device, &committed, &amount) {
                        funnel.capacity += 1;
                        if all {
                            // Upstream (v0.37): `All` takes every device whose capacity
                            // could serve the request; one whose committed shares leave
                            // too little makes `All` fail, it is not left out.
                            all_blocked = true;
                        }
                        continue;
                    }
                    for (name, c) in &device.capacity {
                        let used = committed.get(name).copied().unwrap_or(Quantity::ZERO);
                        capacity_left.insert(name.clone(), c.value.saturating_sub(used));
                    }
                    share = Some(amount);
                } else {
                    funnel.capacity += 1;
                    continue;
                }
            } else if !view.capacity.is_empty() && !capacity_covers(device, view.capacity, driver) {
                funnel.capacity += 1;
                continue;
            }
            // Only a device with a blocking taint (TAINTED) can be refused.
            if slot.flags & TAINTED != 0 && !self.tolerated(dev, view.tolerations) {
                funnel.taints += 1;
                if all {
                    // `All` fails if a matching device is tainted and not tolerated.
                    // The other devices' selectors are still evaluated: upstream
                    // gathers every matching device before it checks taints, so a
                    // selector error on a later device is an error here too.
                    all_blocked = true;
                }
                continue;
            }
            let counters = device
                .consumes_counters
                .iter()
                .flat_map(|c| {
                    c.counters
                        .iter()
                        .map(move |(n, q)| ((c.counter_set.clone(), n.clone()), *q))
                })
                .collect();
            let counters_charged = shareable
                && self
                    .allocations
                    .get(&self.key_of(slot))
                    .is_some_and(|hs| hs.iter().any(|h| !h.admin_access));
            candidates.push(Candidate {
                device: dev,
                pool: self.pool_of(slot),
                equiv: slot.equiv,
                shareable,
                consumes: share.unwrap_or_default(),
                capacity_left,
                counters,
                counters_charged,
                in_use,
                tainted: slot.flags & TAINTED != 0,
                values: Vec::new(),
            });
        }
        let (need, required) = match view.allocation_mode {
            AllocationMode::ExactCount(n) => (Need::Count(n), n),
            AllocationMode::All => (Need::All, 1),
        };
        if all_blocked {
            candidates.clear();
        } else if all
            && candidates
                .iter()
                .any(|c| c.in_use && !c.shareable && !view.admin_access)
        {
            // `All` fails if any matching device is already allocated.
            funnel.allocated += candidates.len() as u32;
            candidates.clear();
        }
        Ok(Prepared {
            alternative: Alternative {
                need,
                admin: view.admin_access,
                candidates,
                constraints: Vec::new(),
            },
            admin: view.admin_access,
            compiled,
            tolerations: view.tolerations,
            funnel,
            required,
        })
    }

    /// Whether every blocking taint of a device is tolerated.
    pub(super) fn tolerated(&self, dev: DeviceId, tolerations: &[DeviceToleration]) -> bool {
        let Some(applied) = self.applied.get(&dev) else {
            return true;
        };
        applied.iter().filter_map(|t| t.group).all(|g| {
            let probe: &DeviceTaint = &self.groups[g as usize].probe;
            tolerations.iter().any(|t| t.tolerates(probe))
        })
    }

    /// A device's values of a fully qualified attribute (exact name first, then the
    /// bare name when the domain is the driver's).
    pub(super) fn values_of(&self, dev: DeviceId, attribute: &str) -> Values {
        let value = self.attribute_of(dev, attribute)?;
        Some(match value {
            DeviceAttribute::Int(i) => smallvec::smallvec![ValueKey::Int(*i)],
            DeviceAttribute::Bool(b) => smallvec::smallvec![ValueKey::Bool(*b)],
            DeviceAttribute::String(s) => smallvec::smallvec![ValueKey::Str(s.clone())],
            DeviceAttribute::Version(s) => smallvec::smallvec![ValueKey::Version(s.clone())],
            DeviceAttribute::Ints(v) => v.iter().map(|i| ValueKey::Int(*i)).collect(),
            DeviceAttribute::Bools(v) => v.iter().map(|b| ValueKey::Bool(*b)).collect(),
            DeviceAttribute::Strings(v) => v.iter().map(|s| ValueKey::Str(s.clone())).collect(),
            DeviceAttribute::Versions(v) => {
                v.iter().map(|s| ValueKey::Version(s.clone())).collect()
            }
        })
    }

    /// A device's fully qualified attribute: the exact name first, then the bare name
    /// when the domain is the driver's.
    pub(super) fn attribute_of(&self, dev: DeviceId, attribute: &str) -> Option<&DeviceAttribute> {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let entry = self.slice_entry(slot.slice);
        let device = &entry.slice.devices[slot.pos as usize];
        device.attributes.get(attribute).or_else(|| {
            let (domain, id) = attribute.split_once('/')?;
            (domain == entry.slice.driver)
                .then(|| device.attributes.get(id))
                .flatten()
        })
    }

    /// Counters left per pool for every pool a candidate consumes from.
    pub(super) fn counters_for(
        &self,
        claims: &[Claim],
    ) -> BTreeMap<PoolId, BTreeMap<(String, String), Quantity>> {
        let mut out = BTreeMap::new();
        for c in claims {
            for r in &c.requests {
                for a in &r.alternatives {
                    for cand in a.candidates.iter().filter(|c| !c.counters.is_empty()) {
                        out.entry(cand.pool)
                            .or_insert_with(|| self.counters_available_in(cand.pool));
                    }
                }
            }
        }
        out
    }
}

/// Whether a non-shareable device's capacities cover a request's capacity demands
/// (for such devices requests are only a filter).
pub(super) fn capacity_covers(
    device: &Device,
    requests: &BTreeMap<String, Quantity>,
    driver: &str,
) -> bool {
    requests.iter().all(|(name, q)| {
        crate::model::capacity::resolve_capacity(device, name, driver)
            .and_then(|key| device.capacity.get(key))
            .is_some_and(|c| c.value >= *q)
    })
}
