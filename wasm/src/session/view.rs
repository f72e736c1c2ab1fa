//! What the class returns, as plain data: cycle outcomes, eviction reports and the
//! drawable state. Everything here reads the core's state and reshapes it; nothing
//! decides.
//!
//! Order is stable everywhere: domains by label value (unlabelled last), nodes, pods,
//! claims, groups and rules by name, devices by `driver/pool/device`, evictions by time
//! then pod (the core's order).

use std::collections::{BTreeMap, BTreeSet};

use gangpack::{
    BrokenGroup, ClaimSource, DeviceRef, DeviceTaintRule, DryRunReport, EvictionReason,
    EvictionReport, PodEviction, Quantity, Scheduler, SchedulingPolicy, Time, Unit, UnitResult,
    Victim,
};
use serde::Serialize;

use super::time::Clock;
use crate::js::Problem;

/// One eviction: `{ pod, at, reason }`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct EvictionView {
    pod: String,
    at: Clock,
    reason: EvictionReason,
}

impl From<&PodEviction> for EvictionView {
    fn from(e: &PodEviction) -> EvictionView {
        EvictionView {
            pod: e.pod.clone(),
            at: e.at.into(),
            reason: e.reason.clone(),
        }
    }
}

/// Evictions, by time then pod.
pub(crate) fn evictions(list: &[PodEviction]) -> Vec<EvictionView> {
    list.iter().map(EvictionView::from).collect()
}

/// How a change moved the eviction schedule.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EvictionReportView {
    started: Vec<EvictionView>,
    cancelled: Vec<EvictionView>,
    broken_groups: Vec<BrokenGroup>,
}

impl From<&EvictionReport> for EvictionReportView {
    fn from(r: &EvictionReport) -> EvictionReportView {
        EvictionReportView {
            started: evictions(&r.started),
            cancelled: evictions(&r.cancelled),
            broken_groups: r.broken_groups.clone(),
        }
    }
}

/// What removing a node did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeRemovalView {
    node: gangpack::Node,
    deleted_pods: Vec<String>,
    evictions: EvictionReportView,
}

impl From<&gangpack::NodeRemoval> for NodeRemovalView {
    fn from(r: &gangpack::NodeRemoval) -> NodeRemovalView {
        NodeRemovalView {
            node: r.node.clone(),
            deleted_pods: r.deleted_pods.clone(),
            evictions: EvictionReportView::from(&r.evictions),
        }
    }
}

/// A DeviceTaintRule's dry run, with upstream's message.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DryRunView {
    rule: String,
    published_devices: usize,
    allocated_devices: usize,
    pods: Vec<String>,
    namespaces: usize,
    evictions: Vec<EvictionView>,
    broken_groups: Vec<BrokenGroup>,
    message: String,
}

impl From<DryRunReport> for DryRunView {
    fn from(r: DryRunReport) -> DryRunView {
        DryRunView {
            message: r.message(),
            evictions: evictions(&r.evictions),
            rule: r.rule,
            published_devices: r.published_devices,
            allocated_devices: r.allocated_devices,
            pods: r.pods,
            namespaces: r.namespaces,
            broken_groups: r.broken_groups,
        }
    }
}

// --------------------------------------------------------------------------- cycles

/// The result of `cycle()`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CycleView {
    /// Evictions already due at the clock, carried out before the cycle.
    pub(crate) carried_out: Vec<EvictionView>,
    /// Each unit, in the order the cycle took them (then units held back waiting for
    /// an object not in the manifests).
    pub(crate) units: Vec<UnitView>,
    /// How the eviction schedule changed with the cycle.
    pub(crate) evictions: EvictionReportView,
    /// Pods bound by the cycle.
    pub(crate) pods_bound: usize,
    /// Whether every unit was placed (or nominated after preemption).
    pub(crate) all_placed: bool,
    /// What `gangpack plan` prints (sessions loaded from manifests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) table: Option<String>,
}

/// One unit's outcome.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnitView {
    pub(crate) kind: &'static str,
    pub(crate) name: String,
    pub(crate) outcome: &'static str,
    pub(crate) pods: Vec<PodPlacementView>,
    /// Devices of the PodGroup's own claims.
    pub(crate) group_devices: Vec<String>,
    pub(crate) victims: Vec<Victim>,
    pub(crate) reason: String,
    pub(crate) problems: Vec<Problem>,
}

/// A pod of a unit and where it goes (`node: null` while pending).
#[derive(Debug, Serialize)]
pub(crate) struct PodPlacementView {
    pod: String,
    node: Option<String>,
    devices: Vec<String>,
}

/// A unit's outcome: the core's [`UnitRow`](gangpack::UnitRow) (the same row
/// `gangpack plan` prints); `reason`, when the caller has one (the plan table's, with
/// what the manifests hold back), replaces the row's.
pub(crate) fn unit(
    sched: &Scheduler,
    unit: &Unit,
    result: &UnitResult,
    reason: Option<String>,
) -> UnitView {
    let row = sched.unit_row(unit, result);
    let problems = match result {
        UnitResult::Invalid(_) => row
            .errors
            .iter()
            .map(|e| Problem::field(e.field.clone(), e.to_string()))
            .collect(),
        UnitResult::Failed(_) => vec![Problem::message(row.reason.clone())],
        _ => Vec::new(),
    };
    UnitView {
        kind: row.kind(),
        name: row.name().to_owned(),
        outcome: row.outcome.as_str(),
        pods: row
            .pods
            .into_iter()
            .map(|p| PodPlacementView {
                pod: p.pod,
                node: p.node,
                devices: p.devices,
            })
            .collect(),
        group_devices: row.group_devices,
        victims: row.victims,
        reason: reason.unwrap_or(row.reason),
        problems,
    }
}

/// A unit held back (manifests naming an object that is not there).
#[cfg(feature = "k8s")]
pub(crate) fn waiting_unit(row: &gangpack_k8s::output::PlanRow) -> UnitView {
    UnitView {
        kind: row.kind,
        name: row.name.clone(),
        outcome: row.outcome.as_str(),
        pods: row
            .pods
            .iter()
            .map(|p| PodPlacementView {
                pod: p.pod.clone(),
                node: p.node.clone(),
                devices: Vec::new(),
            })
            .collect(),
        group_devices: Vec::new(),
        victims: Vec::new(),
        reason: row.reason.clone(),
        problems: Vec::new(),
    }
}

// ------------------------------------------------------------------------ snapshot

/// The drawable state (see `ClusterSnapshot` in `session.d.ts`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClusterView {
    now: Clock,
    topology_key: Option<String>,
    domains: Vec<DomainView>,
    other_devices: Vec<DeviceView>,
    pods: Vec<PodView>,
    groups: Vec<GroupView>,
    claims: Vec<ClaimView>,
    taint_rules: Vec<DeviceTaintRule>,
    evictions: Vec<EvictionView>,
    pub(crate) waiting: Vec<WaitingView>,
}

/// A unit held back, waiting for an object that is not in the manifests.
#[derive(Debug, Serialize)]
pub(crate) struct WaitingView {
    pub(crate) kind: &'static str,
    pub(crate) name: String,
    pub(crate) reason: String,
}

#[derive(Debug, Serialize)]
struct DomainView {
    name: Option<String>,
    nodes: Vec<NodeView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeView {
    name: String,
    labels: BTreeMap<String, String>,
    unschedulable: bool,
    taints: Vec<TaintView>,
    devices: Vec<DeviceView>,
    pods: Vec<String>,
    evictions: Vec<EvictionView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TaintView {
    key: String,
    value: String,
    effect: String,
    time_added: Option<Clock>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeviceView {
    id: String,
    driver: String,
    pool: String,
    device: String,
    slice: String,
    node: Option<String>,
    state: &'static str,
    /// The `productName` (or `model`) string attribute, any driver's domain.
    model: Option<String>,
    holders: Vec<HolderView>,
    capacity: BTreeMap<String, Quantity>,
    consumed_capacity: BTreeMap<String, Quantity>,
    taints: Vec<TaintView>,
    evictions: Vec<EvictionView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HolderView {
    claim: String,
    pods: Vec<String>,
    pod_group: Option<String>,
    admin_access: bool,
    consumed_capacity: BTreeMap<String, Quantity>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PodView {
    name: String,
    pod_group: Option<String>,
    node: Option<String>,
    status: &'static str,
    priority: i32,
    claims: Vec<String>,
    eviction: Option<EvictionView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct GroupView {
    name: String,
    min_count: Option<u32>,
    disruption_mode: gangpack::DisruptionMode,
    priority: i32,
    pods: Vec<String>,
    bound: usize,
    status: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ClaimView {
    name: String,
    allocated: bool,
    devices: Vec<String>,
    pods: Vec<String>,
    pod_group: Option<String>,
}

/// Who uses each claim: bound pods (the claims of their binding and the claims they
/// name) and the PodGroup whose claim it is or whose pods use it.
struct Users {
    pods: BTreeMap<String, BTreeSet<String>>,
    group: BTreeMap<String, String>,
}

fn users(sched: &Scheduler, groups: &BTreeSet<String>) -> Users {
    let mut u = Users {
        pods: BTreeMap::new(),
        group: BTreeMap::new(),
    };
    for p in sched.pods() {
        let key = format!("{}/{}", p.namespace, p.name);
        let group = p
            .scheduling_group
            .as_ref()
            .map(|g| format!("{}/{g}", p.namespace));
        let Some(b) = sched.binding(&key) else {
            continue;
        };
        let named = p.resource_claims.iter().filter_map(|c| match &c.source {
            ClaimSource::ClaimName(n) => Some(format!("{}/{n}", p.namespace)),
            ClaimSource::Template(_) => None,
        });
        for c in b.claims.iter().map(|c| c.claim.clone()).chain(named) {
            if let Some(g) = &group {
                u.group.entry(c.clone()).or_insert_with(|| g.clone());
            }
            u.pods.entry(c).or_default().insert(key.clone());
        }
    }
    for g in groups {
        let Some(group) = sched.group(g) else {
            continue;
        };
        for c in &group.resource_claims {
            if let ClaimSource::ClaimName(n) = &c.source {
                u.group
                    .insert(format!("{}/{n}", group.namespace), g.clone());
            }
        }
    }
    u
}

/// An effect in its Kubernetes spelling (`NoExecute`), as its serde form writes it.
fn taint_effect_name<T: Serialize>(effect: &T) -> String {
    serde_json::to_value(effect)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Every device once, in slice order: its reference and the core's view of it. A
/// name published by several slices (generations) is the current generation's, once.
fn each_device(
    cluster: &gangpack::Cluster,
) -> impl Iterator<Item = (DeviceRef, gangpack::DeviceView<'_>)> {
    cluster.slices().flat_map(move |slice| {
        slice.devices.iter().filter_map(move |d| {
            let r = DeviceRef::new(&slice.driver, &slice.pool.name, &d.name);
            let view = cluster.device_id(&r).and_then(|id| cluster.device(id))?;
            // The current device of that name is published by this very slice.
            (view.slice == slice.name).then_some((r, view))
        })
    })
}

/// What is left of each pool's shared counters, asked once per pool.
#[derive(Default)]
struct Counters(BTreeMap<(String, String), BTreeMap<(String, String), Quantity>>);

impl Counters {
    /// Whether a device's counter consumption exceeds what its pool has left (other
    /// partitions of the same GPU use it up).
    fn exhausted(&mut self, cluster: &gangpack::Cluster, view: &gangpack::DeviceView<'_>) -> bool {
        if view.device.consumes_counters.is_empty() {
            return false;
        }
        let left = self
            .0
            .entry((view.driver.to_owned(), view.pool.to_owned()))
            .or_insert_with(|| cluster.counters_available(view.driver, view.pool));
        view.device.consumes_counters.iter().any(|c| {
            c.counters.iter().any(|(name, amount)| {
                let have = left
                    .get(&(c.counter_set.clone(), name.clone()))
                    .copied()
                    .unwrap_or(Quantity::ZERO);
                *amount > have
            })
        })
    }
}

/// `free`, `allocated`, `shared` (a shareable device with shares), `blocked` (free,
/// but the shared counters it consumes are used up: another partition of the same
/// GPU is allocated) or `unusable`.
fn device_state(
    cluster: &gangpack::Cluster,
    counters: &mut Counters,
    view: &gangpack::DeviceView<'_>,
    held: bool,
) -> &'static str {
    if !view.usable {
        "unusable"
    } else if !view.free {
        "allocated"
    } else if held {
        "shared"
    } else if counters.exhausted(cluster, view) {
        "blocked"
    } else {
        "free"
    }
}

/// One device as `snapshot()` and `device()` describe it.
fn device_view(
    sched: &Scheduler,
    users: &Users,
    scheduled: &[PodEviction],
    counters: &mut Counters,
    r: &DeviceRef,
    view: &gangpack::DeviceView<'_>,
) -> DeviceView {
    let cluster = sched.cluster();
    let holders: Vec<HolderView> = cluster
        .allocations(r)
        .iter()
        .map(|h| HolderView {
            claim: h.consumer.clone(),
            pods: users
                .pods
                .get(&h.consumer)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default(),
            pod_group: users.group.get(&h.consumer).cloned(),
            admin_access: h.admin_access,
            consumed_capacity: h.consumed_capacity.clone(),
        })
        .collect();
    let state = device_state(cluster, counters, view, !holders.is_empty());
    let held: BTreeSet<&str> = holders.iter().map(|h| h.claim.as_str()).collect();
    let evictions = scheduled
        .iter()
        .filter(|e| {
            matches!(&e.reason, EvictionReason::DeviceTaint { claim, .. }
                if held.contains(claim.as_str()))
        })
        .map(EvictionView::from)
        .collect();
    DeviceView {
        id: r.to_string(),
        driver: view.driver.to_owned(),
        pool: view.pool.to_owned(),
        device: view.device.name.clone(),
        slice: view.slice.to_owned(),
        node: view.node.map(str::to_owned),
        state,
        model: device_model(&view.device.attributes),
        holders,
        capacity: view
            .device
            .capacity
            .iter()
            .map(|(k, c)| (k.clone(), c.value))
            .collect(),
        consumed_capacity: cluster.consumed_capacity(r).into_iter().collect(),
        taints: cluster
            .device_taints(view.id)
            .into_iter()
            .map(|t| TaintView {
                key: t.key,
                value: t.value,
                effect: taint_effect_name(&t.effect),
                time_added: t.time_added.map(Clock::from),
            })
            .collect(),
        evictions,
    }
}

/// One device (`driver/pool/device`), as `snapshot()` describes it; `None` when the
/// cluster has no such device.
pub(crate) fn device(sched: &Scheduler, groups: &BTreeSet<String>, id: &str) -> Option<DeviceView> {
    let mut parts = id.splitn(3, '/');
    let (driver, pool, name) = (parts.next()?, parts.next()?, parts.next()?);
    let r = DeviceRef::new(driver, pool, name);
    let cluster = sched.cluster();
    let view = cluster.device_id(&r).and_then(|d| cluster.device(d))?;
    let scheduled = sched.scheduled_evictions();
    let mut counters = Counters::default();
    let users = users(sched, groups);
    Some(device_view(
        sched,
        &users,
        &scheduled,
        &mut counters,
        &r,
        &view,
    ))
}

/// The state to draw. `key` groups nodes into topology domains (`None`: the first
/// PodGroup topology key, by group name; one unnamed domain without any). Without
/// `with_devices`, nodes list no devices (for callers that draw from [`cells`]).
pub(crate) fn cluster(
    sched: &Scheduler,
    groups: &BTreeSet<String>,
    key: Option<String>,
    with_devices: bool,
) -> ClusterView {
    let cluster = sched.cluster();
    let key = key.or_else(|| default_topology_key(sched, groups));
    let scheduled = sched.scheduled_evictions();
    let users = users(sched, groups);

    // Devices, by node (`None`: not local to one node).
    let mut by_node: BTreeMap<Option<String>, Vec<DeviceView>> = BTreeMap::new();
    if with_devices {
        let mut counters = Counters::default();
        for (r, view) in each_device(cluster) {
            let dv = device_view(sched, &users, &scheduled, &mut counters, &r, &view);
            by_node.entry(dv.node.clone()).or_default().push(dv);
        }
    }
    for list in by_node.values_mut() {
        list.sort_by(|a, b| a.id.cmp(&b.id));
    }

    let mut bound_on: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in sched.pods() {
        if let Some(n) = &p.node_name {
            bound_on
                .entry(n.clone())
                .or_default()
                .push(format!("{}/{}", p.namespace, p.name));
        }
    }
    let mut domains: BTreeMap<Option<String>, Vec<NodeView>> = BTreeMap::new();
    for n in cluster.nodes() {
        let domain = key.as_ref().and_then(|k| n.labels.get(k)).cloned();
        let evictions = scheduled
            .iter()
            .filter(|e| matches!(&e.reason, EvictionReason::NodeTaint { node } if *node == n.name))
            .map(EvictionView::from)
            .collect();
        domains.entry(domain).or_default().push(NodeView {
            name: n.name.clone(),
            labels: n.labels.clone(),
            unschedulable: n.unschedulable,
            taints: n
                .taints
                .iter()
                .map(|t| TaintView {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: taint_effect_name(&t.effect),
                    time_added: t.time_added.map(Clock::from),
                })
                .collect(),
            devices: by_node.remove(&Some(n.name.clone())).unwrap_or_default(),
            pods: bound_on.remove(&n.name).unwrap_or_default(),
            evictions,
        });
    }
    let domains = labelled_first(domains)
        .map(|(name, nodes)| DomainView { name, nodes })
        .collect();
    // Devices of nodes that do not exist, and network-attached devices.
    let other_devices = by_node.into_values().flatten().collect();

    let eviction_of: BTreeMap<&str, &PodEviction> =
        scheduled.iter().map(|e| (e.pod.as_str(), e)).collect();
    let pods = sched
        .pods()
        .map(|p| {
            let key = format!("{}/{}", p.namespace, p.name);
            PodView {
                pod_group: p
                    .scheduling_group
                    .as_ref()
                    .map(|g| format!("{}/{g}", p.namespace)),
                node: p.node_name.clone(),
                status: if p.node_name.is_some() {
                    "bound"
                } else {
                    "pending"
                },
                priority: p.priority,
                claims: sched
                    .binding(&key)
                    .map(|b| b.claims.iter().map(|c| c.claim.clone()).collect())
                    .unwrap_or_default(),
                eviction: eviction_of
                    .get(key.as_str())
                    .map(|e| EvictionView::from(*e)),
                name: key,
            }
        })
        .collect();

    let groups = group_views(sched, groups);
    let claims = sched
        .claims()
        .map(|c| {
            let key = format!("{}/{}", c.namespace, c.name);
            ClaimView {
                allocated: c.allocation.is_some(),
                devices: c
                    .allocation
                    .iter()
                    .flat_map(|a| &a.devices)
                    .map(|d| format!("{}/{}/{}", d.driver, d.pool, d.device))
                    .collect(),
                pods: users
                    .pods
                    .get(&key)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default(),
                pod_group: users.group.get(&key).cloned(),
                name: key,
            }
        })
        .collect();

    ClusterView {
        now: sched.now().into(),
        topology_key: key,
        domains,
        other_devices,
        pods,
        groups,
        claims,
        taint_rules: cluster.taint_rules().cloned().collect(),
        evictions: evictions(&scheduled),
        waiting: Vec::new(),
    }
}

/// Topology domains in drawing order: labelled ones by value, then the unlabelled one
/// (`None`).
fn labelled_first<T>(
    mut domains: BTreeMap<Option<String>, Vec<T>>,
) -> impl Iterator<Item = (Option<String>, Vec<T>)> {
    let unlabelled = domains.remove(&None);
    domains
        .into_iter()
        .chain(unlabelled.map(|nodes| (None, nodes)))
}

/// What `cells()` returns: the cluster as drawn, one small record per device.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CellsView {
    now: Clock,
    topology_key: Option<String>,
    domains: Vec<CellDomainView>,
    /// Devices not local to one node.
    other_cells: Vec<CellView>,
    /// The device models present (`productName` / `model`), sorted.
    models: Vec<String>,
}

#[derive(Debug, Serialize)]
struct CellDomainView {
    name: Option<String>,
    nodes: Vec<CellNodeView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CellNodeView {
    name: String,
    unschedulable: bool,
    /// Its taints' effects: 1 `NoSchedule`, 2 `NoExecute`, 8 `PreferNoSchedule`.
    taints: u8,
    cells: Vec<CellView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CellView {
    id: String,
    state: &'static str,
    /// The first holder's PodGroup, else its first pod, else its claim.
    owner: Option<String>,
    holders: usize,
    /// Its taints' effects: 1 `NoSchedule`, 2 `NoExecute`, 4 `None`, 16 unknown.
    taints: u8,
    /// The earliest scheduled eviction of a pod using it (seconds).
    evict_at: Option<i64>,
    /// A shared device: each holder's owner and the fraction of the capacity it uses.
    shares: Vec<(String, f64)>,
}

fn device_effect_bit(e: &gangpack::DeviceTaintEffect) -> u8 {
    match e {
        gangpack::DeviceTaintEffect::NoSchedule => 1,
        gangpack::DeviceTaintEffect::NoExecute => 2,
        gangpack::DeviceTaintEffect::None => 4,
        gangpack::DeviceTaintEffect::Unknown(_) => 16,
    }
}

fn node_effect_bit(e: gangpack::TaintEffect) -> u8 {
    match e {
        gangpack::TaintEffect::NoSchedule => 1,
        gangpack::TaintEffect::NoExecute => 2,
        gangpack::TaintEffect::PreferNoSchedule => 8,
    }
}

/// The share of `capacity` that `used` takes, by the first capacity with a positive
/// value (`None` without one).
fn fraction(
    capacity: &BTreeMap<String, gangpack::DeviceCapacity>,
    used: &BTreeMap<String, Quantity>,
) -> Option<f64> {
    let (name, c) = capacity.iter().find(|(_, c)| c.value.is_positive())?;
    let used = used.get(name).map_or(0, |q| q.as_nano());
    // Ratios for drawing: f64's precision is plenty.
    #[allow(clippy::cast_precision_loss)]
    Some((used as f64 / c.value.as_nano() as f64).clamp(0.0, 1.0))
}

/// The cluster as drawn (`Scheduler.cells()`): the domains and nodes of
/// [`cluster`], in the same order, each device a small record. One call costs a
/// fraction of a full snapshot, for redrawing after every change.
pub(crate) fn cells(
    sched: &Scheduler,
    groups: &BTreeSet<String>,
    key: Option<String>,
) -> CellsView {
    let cluster = sched.cluster();
    let key = key.or_else(|| default_topology_key(sched, groups));
    let scheduled = sched.scheduled_evictions();
    let users = users(sched, groups);
    let mut evict_at: BTreeMap<&str, i64> = BTreeMap::new();
    for e in &scheduled {
        if let EvictionReason::DeviceTaint { claim, .. } = &e.reason {
            let at = evict_at.entry(claim.as_str()).or_insert(e.at.0);
            *at = (*at).min(e.at.0);
        }
    }
    let owner_of = |claim: &str| -> String {
        users
            .group
            .get(claim)
            .or_else(|| users.pods.get(claim).and_then(|p| p.iter().next()))
            .cloned()
            .unwrap_or_else(|| claim.to_owned())
    };
    let mut models: BTreeSet<String> = BTreeSet::new();
    let mut by_node: BTreeMap<Option<String>, Vec<CellView>> = BTreeMap::new();
    let mut counters = Counters::default();
    for (r, view) in each_device(cluster) {
        let holders = cluster.allocations(&r);
        let state = device_state(cluster, &mut counters, &view, !holders.is_empty());
        if let Some(m) = device_model(&view.device.attributes) {
            models.insert(m);
        }
        let taints = cluster
            .device_taints(view.id)
            .iter()
            .fold(0, |bits, t| bits | device_effect_bit(&t.effect));
        let shares = if state == "shared" {
            holders
                .iter()
                .map(|h| {
                    let f = fraction(&view.device.capacity, &h.consumed_capacity);
                    #[allow(clippy::cast_precision_loss)]
                    let even = 1.0 / holders.len().max(2) as f64;
                    (
                        owner_of(&h.consumer),
                        f.filter(|f| *f > 0.0).unwrap_or(even),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        let cell = CellView {
            id: r.to_string(),
            state,
            owner: holders.first().map(|h| owner_of(&h.consumer)),
            holders: holders.len(),
            taints,
            evict_at: holders
                .iter()
                .filter_map(|h| evict_at.get(h.consumer.as_str()).copied())
                .min(),
            shares,
        };
        by_node
            .entry(view.node.map(str::to_owned))
            .or_default()
            .push(cell);
    }
    for list in by_node.values_mut() {
        list.sort_by(|a, b| a.id.cmp(&b.id));
    }
    let mut domains: BTreeMap<Option<String>, Vec<CellNodeView>> = BTreeMap::new();
    for n in cluster.nodes() {
        let domain = key.as_ref().and_then(|k| n.labels.get(k)).cloned();
        domains.entry(domain).or_default().push(CellNodeView {
            name: n.name.clone(),
            unschedulable: n.unschedulable,
            taints: n
                .taints
                .iter()
                .fold(0, |bits, t| bits | node_effect_bit(t.effect)),
            cells: by_node.remove(&Some(n.name.clone())).unwrap_or_default(),
        });
    }
    let domains = labelled_first(domains)
        .map(|(name, nodes)| CellDomainView { name, nodes })
        .collect();
    CellsView {
        now: sched.now().into(),
        topology_key: key,
        domains,
        other_cells: by_node.into_values().flatten().collect(),
        models: models.into_iter().collect(),
    }
}

fn group_views(sched: &Scheduler, groups: &BTreeSet<String>) -> Vec<GroupView> {
    let mut members: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    for p in sched.pods() {
        if let Some(g) = &p.scheduling_group {
            members
                .entry(format!("{}/{g}", p.namespace))
                .or_default()
                .push((format!("{}/{}", p.namespace, p.name), p.node_name.is_some()));
        }
    }
    let keys: BTreeSet<&String> = groups.iter().chain(members.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let g = sched.group(k)?;
            let pods = members.get(k).cloned().unwrap_or_default();
            let bound = pods.iter().filter(|(_, b)| *b).count();
            let status = if pods.is_empty() || bound == 0 {
                "pending"
            } else if bound == pods.len() {
                "running"
            } else {
                "partial"
            };
            Some(GroupView {
                name: k.clone(),
                min_count: match g.policy {
                    SchedulingPolicy::Gang { min_count } => Some(min_count),
                    SchedulingPolicy::Basic => None,
                },
                disruption_mode: g.disruption_mode,
                priority: g.effective_priority(),
                pods: pods.into_iter().map(|(p, _)| p).collect(),
                bound,
                status,
            })
        })
        .collect()
}

/// The topology key of the first PodGroup (by name) that has one.
pub(crate) fn default_topology_key(sched: &Scheduler, groups: &BTreeSet<String>) -> Option<String> {
    let mut keys: BTreeSet<String> = groups.clone();
    for p in sched.pods() {
        if let Some(g) = &p.scheduling_group {
            keys.insert(format!("{}/{g}", p.namespace));
        }
    }
    keys.iter()
        .filter_map(|k| sched.group(k))
        .find_map(|g| g.topology.first().map(|t| t.key.clone()))
}

/// `Time` as the clock object.
pub(crate) fn clock(t: Time) -> Clock {
    t.into()
}

/// A device's model, for the playground's selector and tooltips: the string
/// attribute `productName` or `model`, whatever the driver's domain prefix.
fn device_model(attributes: &BTreeMap<String, gangpack::DeviceAttribute>) -> Option<String> {
    ["productName", "model"].iter().find_map(|want| {
        attributes.iter().find_map(|(name, value)| {
            let base = name.rsplit_once('/').map_or(name.as_str(), |(_, b)| b);
            match value {
                gangpack::DeviceAttribute::String(s) if base == *want => Some(s.clone()),
                _ => None,
            }
        })
    })
}
