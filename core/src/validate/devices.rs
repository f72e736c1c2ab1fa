//! Device rules: each allocated device exists, is reachable from the node, is accepted
//! by its class's and request's selectors and by the capacity asked for, and is not
//! blocked by an untolerated taint; `All` requests take every matching device;
//! `matchAttribute` / `distinctAttribute` hold; and across the decision and what the
//! cluster already holds, exclusivity, shared capacity and counters are respected.

use crate::alloc_prelude::*;
use crate::cel::Selector;
use crate::cluster::ids::DeviceId;
use crate::cluster::{Cluster, DeviceRef, DeviceView};
use crate::model::capacity::consumed_capacity;
use crate::model::claim::{
    ConstraintKind, DeviceRequestAllocationResult, RequestView, ResourceClaim, split_request_ref,
};
use crate::model::names::qualify;
use crate::model::toleration::device_taint_blocks;
use crate::{Device, DeviceAttribute, Node, Quantity};

use super::claims::{Env, Record};
use super::violation::Violation;

/// Compiled selectors of one resolved (sub)request.
pub(super) struct Compiled<'v> {
    pub(super) view: RequestView<'v>,
    /// `None` when the class is missing or a selector does not compile (reported).
    pub(super) selectors: Option<(&'v [Selector], Vec<Selector>)>,
}

enum Selection {
    Match,
    ClassMismatch,
    RequestMismatch,
    Error(String),
}

/// A comparable attribute value; a scalar is a one-element set.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    Version(String),
}

/// Counter consumption by (counter set, counter).
type Counters<'a> = BTreeMap<(&'a str, &'a str), Quantity>;

/// Class selectors, then request selectors, in order, each stopping at the first
/// `false` or error (as upstream evaluates them). An error names the selector and its
/// expression: it aborts an allocation, it is not a mismatch.
fn select(class: &[Selector], request: &[Selector], driver: &str, device: &Device) -> Selection {
    for (i, s) in class.iter().enumerate() {
        match s.eval(driver, device) {
            Ok(true) => {}
            Ok(false) => return Selection::ClassMismatch,
            Err(e) => {
                return Selection::Error(format!(
                    "class selector #{i} `{}`: CEL runtime error: {e}",
                    s.source()
                ));
            }
        }
    }
    for (i, s) in request.iter().enumerate() {
        match s.eval(driver, device) {
            Ok(true) => {}
            Ok(false) => return Selection::RequestMismatch,
            Err(e) => {
                return Selection::Error(format!(
                    "selector #{i} `{}`: CEL runtime error: {e}",
                    s.source()
                ));
            }
        }
    }
    Selection::Match
}

/// The device's capacity that a request names `name` (exact, then qualified with the
/// driver's domain).
fn capacity_named<'d>(
    device: &'d Device,
    name: &str,
    driver: &str,
) -> Option<&'d crate::DeviceCapacity> {
    device.capacity.get(name).or_else(|| {
        let want = qualify(name, driver);
        device
            .capacity
            .iter()
            .find(|(k, _)| qualify(k, driver) == want)
            .map(|(_, c)| c)
    })
}

/// Whether a device is one of "all" for a request's capacity (for `All`), as upstream
/// v0.37 decides it: from the device's capacity alone, never from what shares hold —
/// for a shareable device, what the request consumes must be within the policy and
/// the capacity; otherwise every requested capacity must exist and be at least the
/// amount. (A device whose shares leave too little is still one of "all", so `All`
/// cannot be allocated while they hold it.)
fn capacity_admits(dv: &DeviceView<'_>, view: &RequestView<'_>) -> bool {
    if dv.device.allow_multiple_allocations {
        let Ok(amount) = consumed_capacity(dv.device, view.capacity, dv.driver) else {
            return false;
        };
        amount
            .iter()
            .all(|(name, q)| dv.device.capacity.get(name).is_some_and(|c| *q <= c.value))
    } else {
        view.capacity.iter().all(|(name, q)| {
            capacity_named(dv.device, name, dv.driver).is_some_and(|c| c.value >= *q)
        })
    }
}

/// The per-device rules for one result of a resolved request.
pub(super) fn check_device(
    cluster: &Cluster,
    claim_key: &str,
    c: &Compiled<'_>,
    r: &DeviceRequestAllocationResult,
    device: &DeviceRef,
    dv: &DeviceView<'_>,
    out: &mut Vec<Violation>,
) {
    let view = &c.view;
    let ck = || claim_key.to_owned();
    let rq = || r.request.clone();
    if let Some((class, request)) = &c.selectors {
        match select(class, request, dv.driver, dv.device) {
            Selection::Match => {}
            Selection::ClassMismatch => out.push(Violation::ClassSelectorMismatch {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                class: view.device_class_name.to_owned(),
            }),
            Selection::RequestMismatch => out.push(Violation::RequestSelectorMismatch {
                claim: ck(),
                request: rq(),
                device: device.clone(),
            }),
            Selection::Error(message) => out.push(Violation::SelectorFailed {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                message,
            }),
        }
    }
    for taint in cluster.device_taints(dv.id) {
        if device_taint_blocks(&taint, view.tolerations) {
            out.push(Violation::DeviceTaintNotTolerated {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                taint,
            });
        }
    }
    if r.tolerations.as_slice() != view.tolerations {
        out.push(Violation::TolerationsMismatch {
            claim: ck(),
            request: rq(),
            device: device.clone(),
        });
    }
    if r.admin_access != view.admin_access {
        out.push(Violation::AdminAccessMismatch {
            claim: ck(),
            request: rq(),
            device: device.clone(),
            requested: view.admin_access,
        });
    }
    let shareable = dv.device.allow_multiple_allocations;
    if shareable && !r.admin_access {
        if r.share_id.as_deref().is_none_or(str::is_empty) {
            out.push(Violation::MissingShareId {
                claim: ck(),
                device: device.clone(),
            });
        }
        match consumed_capacity(dv.device, view.capacity, dv.driver) {
            Err(rejection) => out.push(Violation::CapacityRequestNotMet {
                claim: ck(),
                request: rq(),
                device: device.clone(),
                capacity: rejection.capacity().to_owned(),
            }),
            Ok(expected) => {
                let names: BTreeSet<&String> =
                    expected.keys().chain(r.consumed_capacity.keys()).collect();
                for name in names {
                    let (e, a) = (expected.get(name), r.consumed_capacity.get(name));
                    if e != a {
                        out.push(Violation::ConsumedCapacityMismatch {
                            claim: ck(),
                            device: device.clone(),
                            capacity: name.clone(),
                            expected: e.copied(),
                            actual: a.copied(),
                        });
                    }
                }
            }
        }
    } else {
        if !shareable && (r.share_id.is_some() || !r.consumed_capacity.is_empty()) {
            out.push(Violation::UnexpectedShare {
                claim: ck(),
                device: device.clone(),
            });
        }
        for (name, q) in view.capacity {
            if capacity_named(dv.device, name, dv.driver).is_none_or(|cap| cap.value < *q) {
                out.push(Violation::CapacityRequestNotMet {
                    claim: ck(),
                    request: rq(),
                    device: device.clone(),
                    capacity: name.clone(),
                });
            }
        }
    }
}

/// `All`: for at least one node using the claim, every usable device it reaches that
/// the class, the request selectors and the capacity admit is in the results, and no
/// reachable pool is incomplete or invalid. Otherwise what is wrong on the first node
/// is reported.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_all(
    env: &Env<'_>,
    claim_key: &str,
    reference: &str,
    view: &RequestView<'_>,
    class: &[Selector],
    request: &[Selector],
    results: &[&DeviceRequestAllocationResult],
    nodes: &[&Node],
    out: &mut Vec<Violation>,
) {
    let cluster = env.cluster;
    let chosen: BTreeSet<DeviceRef> = results
        .iter()
        .map(|r| DeviceRef::new(&r.driver, &r.pool, &r.device))
        .collect();
    let mut first: Option<Vec<Violation>> = None;
    for node in nodes {
        let Some(reach) = env.reach.get(node.name.as_str()) else {
            continue;
        };
        let mut found = Vec::new();
        let mut bad_pools = BTreeSet::new();
        for id in reach.iter() {
            let Some(dv) = cluster.device(id) else {
                continue;
            };
            if !cluster
                .pool_status(dv.driver, dv.pool)
                .is_some_and(crate::PoolStatus::is_usable)
            {
                if bad_pools.insert(format!("{}/{}", dv.driver, dv.pool)) {
                    found.push(Violation::AllModeIncompletePool {
                        claim: claim_key.to_owned(),
                        request: reference.to_owned(),
                        pool: format!("{}/{}", dv.driver, dv.pool),
                    });
                }
                continue;
            }
            if !dv.usable {
                continue;
            }
            match select(class, request, dv.driver, dv.device) {
                Selection::Match => {}
                Selection::Error(message) => {
                    found.push(Violation::SelectorFailed {
                        claim: claim_key.to_owned(),
                        request: reference.to_owned(),
                        device: dv.device_ref(),
                        message,
                    });
                    continue;
                }
                Selection::ClassMismatch | Selection::RequestMismatch => continue,
            }
            if !capacity_admits(&dv, view) {
                continue;
            }
            let d = dv.device_ref();
            if !chosen.contains(&d) {
                found.push(Violation::AllModeDeviceMissing {
                    claim: claim_key.to_owned(),
                    request: reference.to_owned(),
                    device: d,
                });
            }
        }
        if found.is_empty() {
            return;
        }
        first.get_or_insert(found);
    }
    out.extend(first.unwrap_or_default());
}

/// A device's values of a fully qualified attribute: the exact name, else the bare
/// name when the domain is the device's driver.
fn attribute_values(driver: &str, device: &Device, attribute: &str) -> Option<BTreeSet<Value>> {
    let value = device.attributes.get(attribute).or_else(|| {
        let (domain, id) = attribute.split_once('/')?;
        if domain == driver {
            device.attributes.get(id)
        } else {
            None
        }
    })?;
    Some(match value {
        DeviceAttribute::Int(i) => BTreeSet::from([Value::Int(*i)]),
        DeviceAttribute::Bool(b) => BTreeSet::from([Value::Bool(*b)]),
        DeviceAttribute::String(s) => BTreeSet::from([Value::Str(s.clone())]),
        DeviceAttribute::Version(s) => BTreeSet::from([Value::Version(s.clone())]),
        DeviceAttribute::Ints(v) => v.iter().map(|i| Value::Int(*i)).collect(),
        DeviceAttribute::Bools(v) => v.iter().map(|b| Value::Bool(*b)).collect(),
        DeviceAttribute::Strings(v) => v.iter().map(|s| Value::Str(s.clone())).collect(),
        DeviceAttribute::Versions(v) => v.iter().map(|s| Value::Version(s.clone())).collect(),
    })
}

pub(super) fn check_constraints(
    claim_key: &str,
    claim: &ResourceClaim,
    found: &[(
        &DeviceRequestAllocationResult,
        DeviceRef,
        Option<DeviceView<'_>>,
    )],
    out: &mut Vec<Violation>,
) {
    for c in &claim.spec.constraints {
        let attribute = c.attribute();
        let mut in_scope: Vec<(&DeviceRef, BTreeSet<Value>)> = Vec::new();
        for (r, device, dv) in found {
            let (request, sub) = split_request_ref(&r.request);
            let Some(dv) = dv else {
                continue;
            };
            if !c.applies_to(request, sub) {
                continue;
            }
            match attribute_values(dv.driver, dv.device, attribute) {
                Some(values) => in_scope.push((device, values)),
                None => out.push(Violation::ConstraintAttributeMissing {
                    claim: claim_key.to_owned(),
                    attribute: attribute.to_owned(),
                    device: device.clone(),
                }),
            }
        }
        match &c.kind {
            ConstraintKind::MatchAttribute(_) => {
                let mut common: Option<BTreeSet<Value>> = None;
                for (_, values) in &in_scope {
                    common = Some(match common {
                        None => values.clone(),
                        Some(c) => c.intersection(values).cloned().collect(),
                    });
                }
                if common.is_some_and(|c| c.is_empty()) {
                    out.push(Violation::MatchAttributeViolated {
                        claim: claim_key.to_owned(),
                        attribute: attribute.to_owned(),
                        devices: in_scope.iter().map(|(d, _)| (*d).clone()).collect(),
                    });
                }
            }
            ConstraintKind::DistinctAttribute(_) => {
                for (i, (a, va)) in in_scope.iter().enumerate() {
                    for (b, vb) in &in_scope[i + 1..] {
                        if !va.is_disjoint(vb) {
                            out.push(Violation::DistinctAttributeViolated {
                                claim: claim_key.to_owned(),
                                attribute: attribute.to_owned(),
                                first: (*a).clone(),
                                second: (*b).clone(),
                            });
                        }
                    }
                }
            }
        }
    }
}

pub(super) fn check_sharing(cluster: &Cluster, records: &[Record<'_>], out: &mut Vec<Violation>) {
    // Exclusive devices.
    let mut exclusive: BTreeMap<&DeviceRef, &str> = BTreeMap::new();
    let mut per_claim: BTreeMap<(&str, &DeviceRef), (usize, bool)> = BTreeMap::new();
    for rec in records {
        let admin = rec.result.admin_access;
        let e = per_claim
            .entry((rec.claim, &rec.device))
            .or_insert((0, false));
        e.0 += 1;
        e.1 |= admin;
        if admin || rec.shareable {
            continue;
        }
        if let Some(first) = exclusive.get(&rec.device) {
            out.push(Violation::DeviceAllocatedTwice {
                device: rec.device.clone(),
                first: (*first).to_owned(),
                second: rec.claim.to_owned(),
            });
        } else {
            exclusive.insert(&rec.device, rec.claim);
        }
        if let Some(h) = cluster
            .allocations(&rec.device)
            .iter()
            .find(|h| !h.admin_access)
        {
            out.push(Violation::DeviceInUse {
                claim: rec.claim.to_owned(),
                device: rec.device.clone(),
                holder: h.consumer.clone(),
            });
        }
    }
    for ((claim, device), (n, admin)) in per_claim {
        if n > 1 && admin {
            out.push(Violation::DeviceAllocatedTwice {
                device: device.clone(),
                first: claim.to_owned(),
                second: claim.to_owned(),
            });
        }
    }
    // Shares: ids and capacity.
    let mut share_ids: BTreeMap<&DeviceRef, BTreeSet<&str>> = BTreeMap::new();
    let mut consumed: BTreeMap<&DeviceRef, (DeviceId, BTreeMap<&str, Quantity>)> = BTreeMap::new();
    for rec in records
        .iter()
        .filter(|r| r.shareable && !r.result.admin_access)
    {
        if let Some(id) = rec.result.share_id.as_deref().filter(|s| !s.is_empty()) {
            let ids = share_ids.entry(&rec.device).or_insert_with(|| {
                cluster
                    .allocations(&rec.device)
                    .iter()
                    .filter_map(|h| h.share_id.as_deref())
                    .collect()
            });
            if !ids.insert(id) {
                out.push(Violation::DuplicateShareId {
                    device: rec.device.clone(),
                    share_id: id.to_owned(),
                });
            }
        }
        let sums = &mut consumed
            .entry(&rec.device)
            .or_insert_with(|| (rec.id, BTreeMap::new()))
            .1;
        for (name, q) in &rec.result.consumed_capacity {
            let e = sums.entry(name.as_str()).or_insert(Quantity::ZERO);
            *e = e.saturating_add(*q);
        }
    }
    for (device, (id, sums)) in &consumed {
        let Some(dv) = cluster.device(*id) else {
            continue;
        };
        let committed = cluster.consumed_capacity(device);
        for (name, cap) in &dv.device.capacity {
            let already = committed.get(name).copied().unwrap_or(Quantity::ZERO);
            let requested = sums.get(name.as_str()).copied().unwrap_or(Quantity::ZERO);
            if already.saturating_add(requested) > cap.value {
                out.push(Violation::CapacityExceeded {
                    device: (*device).clone(),
                    capacity: name.clone(),
                    committed: already,
                    requested,
                    value: cap.value,
                });
            }
        }
    }
    // Shared counters, charged once per newly allocated device.
    let mut charged: BTreeSet<&DeviceRef> = BTreeSet::new();
    let mut per_pool: BTreeMap<(&str, &str), Counters<'_>> = BTreeMap::new();
    for rec in records.iter().filter(|r| !r.result.admin_access) {
        let Some(dv) = cluster.device(rec.id) else {
            continue;
        };
        if dv.device.consumes_counters.is_empty()
            || cluster
                .allocations(&rec.device)
                .iter()
                .any(|h| !h.admin_access)
            || !charged.insert(&rec.device)
        {
            continue;
        }
        let used = per_pool
            .entry((rec.device.driver.as_str(), rec.device.pool.as_str()))
            .or_default();
        for c in &dv.device.consumes_counters {
            for (counter, q) in &c.counters {
                let e = used
                    .entry((c.counter_set.as_str(), counter.as_str()))
                    .or_insert(Quantity::ZERO);
                *e = e.saturating_add(*q);
            }
        }
    }
    for ((driver, pool), used) in per_pool {
        let available = cluster.counters_available(driver, pool);
        let mut keys: BTreeSet<(&str, &str)> = available
            .keys()
            .map(|(s, c)| (s.as_str(), c.as_str()))
            .collect();
        keys.extend(used.keys().copied());
        for (set, counter) in keys {
            let needed = used.get(&(set, counter)).copied().unwrap_or(Quantity::ZERO);
            let left = available
                .get(&(set.to_owned(), counter.to_owned()))
                .copied()
                .unwrap_or(Quantity::ZERO);
            if needed > left {
                out.push(Violation::CountersExceeded {
                    driver: driver.to_owned(),
                    pool: pool.to_owned(),
                    counter_set: set.to_owned(),
                    counter: counter.to_owned(),
                    needed,
                    available: left,
                });
            }
        }
    }
}
