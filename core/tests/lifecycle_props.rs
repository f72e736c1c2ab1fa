#![cfg(not(target_arch = "wasm32"))]
//! The scheduling lifecycle under random operations (issue 5): on tiny clusters (2–4
//! nodes × 2–4 GPUs in 1–2 racks), random sequences of 1–12 operations — add a gang
//! (1–3 pods × 1–3 GPUs, priority 0–2, `disruptionMode` Single / All, optional rack
//! constraint, claim tolerations, optionally a claim the pods share or a PodGroup
//! claim, node tolerations), cycle, complete a bound pod, remove a group, taint /
//! untaint a GPU or a node (`NoSchedule` / `NoExecute`), advance the clock. After
//! every step:
//!
//! 1. no exclusive device has two holders; every holder is a claim whose allocation
//!    lists the device and that a bound pod uses; every allocated claim holds its
//!    devices; every bound pod's claims are allocated;
//! 2. no partial gang is created: a gang only grows to at least `minCount`, a
//!    member newly bound in a cycle leaves its gang at `minCount` or more, and bound
//!    pods only go away through completion, group removal, eviction or preemption
//!    (victims strictly lower in priority, `All` groups whole, never by a `Never`
//!    preemptor);
//! 3. with the eviction schedule up to date (it is after taint changes and
//!    `advance`; after cycles and removals once `refresh_evictions` runs, as it
//!    documents), every bound pod whose device carries a `NoExecute` taint its
//!    allocation does not tolerate forever, or whose node does, is scheduled for
//!    eviction by the deadline; every scheduled eviction is justified by such a taint
//!    (or an `All`-mode group member's); `NoSchedule` taints evict nobody; removing a
//!    taint starts or advances no eviction; taint changes report the PodGroups their
//!    evictions break; placements never take a device or node with an untolerated
//!    `NoSchedule` / `NoExecute` taint; `advance` carries out exactly the evictions
//!    due, and an `All`-mode gang goes whole;
//! 4. node resources: bound pods' cpu (and pod count) fit each node, and the cluster's
//!    reservations agree with the bound pods;
//! 5. the same sequence gives the same state;
//! 6. every placement of a cycle validates (`validate_placement`) against the state it
//!    was made against (the cycle is replayed decision by decision on a copy of the
//!    state before it, up to the first preemption), and the replay ends in the same
//!    cluster. For the cycle's first unit, which sees the state before the cycle,
//!    preemption is checked against removal oracles: it is tried whenever removing
//!    every lower-priority pod would let the unit fit, and it evicts no victim the
//!    unit could fit without.
//!
//! Two preemption bugs the property found are pinned by regression tests at the end
//! (a claim shared by the pods of a Single-mode gang; a lower-priority Single-mode
//! gang with a PodGroup claim); their triggers are part of the generated gangs.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use common::*;
use gangpack::{
    AllocationMode, BrokenGroup, ClaimSource, Cluster, CycleReport, DeviceRef, DeviceRequest,
    DeviceTaint, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator, DisruptionMode,
    EvictionReason, EvictionVerdict, ExactDeviceRequest, GangOptions, GangOutcome,
    PlacementDecision, Pod, PodEviction, PodGroup, PodGroupResourceClaim, PodResourceClaim,
    PreemptionPolicy, Quantity, ResourceClaim, Scheduler, SchedulingPolicy, Taint, TaintEffect,
    Time, Toleration, TolerationOperator, TopologyConstraint, Unit, UnitResult, device_eviction,
    device_taint_blocks, first_untolerated_taint, node_eviction, validate_placement,
};
use proptest::prelude::*;

const NS: &str = "ns";
const TAINT_KEYS: [&str; 2] = ["example.com/k0", "example.com/k1"];
const NODE_TAINT: &str = "example.com/node";
/// Allocatable pods per node (`rack_cluster`).
const PODS_PER_NODE: i64 = 110;

// ------------------------------------------------------------------------- inputs

/// The tolerations of a gang's claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tol {
    None,
    /// `k0` Exists, effect NoExecute, forever.
    NoExecuteForever,
    /// `k0` Exists, effect NoExecute, for this many seconds.
    NoExecuteFor(i64),
    /// `k0` Exists with an empty effect: tolerates both effects for allocation, but
    /// does not count for eviction (the upstream quirk).
    AnyEffect,
    /// Every key, effect NoSchedule.
    AllNoSchedule,
}

impl Tol {
    fn tolerations(self) -> Vec<DeviceToleration> {
        let tol = |key: &str, effect, seconds| DeviceToleration {
            key: key.into(),
            operator: DeviceTolerationOperator::Exists,
            value: String::new(),
            effect,
            toleration_seconds: seconds,
        };
        match self {
            Tol::None => vec![],
            Tol::NoExecuteForever => {
                vec![tol(TAINT_KEYS[0], Some(DeviceTaintEffect::NoExecute), None)]
            }
            Tol::NoExecuteFor(s) => vec![tol(
                TAINT_KEYS[0],
                Some(DeviceTaintEffect::NoExecute),
                Some(s),
            )],
            Tol::AnyEffect => vec![tol(TAINT_KEYS[0], None, None)],
            Tol::AllNoSchedule => vec![tol("", Some(DeviceTaintEffect::NoSchedule), None)],
        }
    }
}

#[derive(Clone, Debug)]
struct GangSpec {
    pods: u32,
    gpus: u32,
    min: u32,
    priority: i32,
    all: bool,
    rack: bool,
    never: bool,
    cpu: i64,
    tol: Tol,
    shared: Shared,
    node_tol: NodeTol,
}

/// The pods' toleration of the node taint [`NODE_TAINT`] with effect NoExecute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeTol {
    None,
    Forever,
    For(i64),
}

/// A claim of one GPU every member of a gang names, besides its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shared {
    No,
    /// A PodGroup-level claim (KEP-5729).
    Group,
    /// A plain claim the pods name (allocated with the first pod bound).
    Pods,
}

#[derive(Clone, Debug)]
enum Op {
    AddGang(GangSpec),
    Cycle,
    /// Completes the i-th bound pod (modulo), if any.
    Complete(usize),
    /// Removes the i-th existing group (modulo), if any.
    RemoveGroup(usize),
    /// Taints a GPU: with `held`, the i-th allocated one (modulo, if any), else the
    /// `gpu`-th of node `node` (both modulo).
    Taint {
        node: usize,
        gpu: usize,
        held: bool,
        key: usize,
        no_execute: bool,
    },
    Untaint {
        node: usize,
        gpu: usize,
        key: usize,
        /// `None`: every effect; `Some(true)`: NoExecute; `Some(false)`: NoSchedule.
        effect: Option<bool>,
    },
    Advance(i64),
    /// Taints node `node` (modulo) with [`NODE_TAINT`].
    TaintNode {
        node: usize,
        no_execute: bool,
    },
    /// Removes [`NODE_TAINT`] from node `node` (modulo).
    UntaintNode(usize),
}

#[derive(Clone, Debug)]
struct ClusterSpec {
    gpus: Vec<usize>,
    racks: usize,
    cpu: i64,
}

fn tol_strategy() -> impl Strategy<Value = Tol> {
    prop_oneof![
        4 => Just(Tol::None),
        1 => Just(Tol::NoExecuteForever),
        1 => (0..=6i64).prop_map(Tol::NoExecuteFor),
        1 => Just(Tol::AnyEffect),
        1 => Just(Tol::AllNoSchedule),
    ]
}

/// Gangs; one in three has a claim its pods share or a PodGroup claim, in either
/// disruption mode (the triggers of
/// [`preemption_evicts_for_nothing_when_a_victim_holds_a_claim_its_gang_shares`] and
/// [`preemption_misses_the_group_claims_a_single_mode_victim_frees`]).
fn gang_strategy() -> impl Strategy<Value = GangSpec> {
    (
        1..=3u32,
        1..=3u32,
        0..3u32,
        0..=2i32,
        any::<bool>(),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.15),
        0..=2i64,
        tol_strategy(),
        (
            prop_oneof![4 => Just(Shared::No), 1 => Just(Shared::Group), 1 => Just(Shared::Pods)],
            prop_oneof![3 => Just(NodeTol::None), 1 => Just(NodeTol::Forever), 1 => (0..=6i64).prop_map(NodeTol::For)],
        ),
    )
        .prop_map(
            |(pods, gpus, min, priority, all, rack, never, cpu, tol, (shared, node_tol))| GangSpec {
                pods,
                gpus,
                min: 1 + min % pods,
                priority,
                all,
                rack,
                never,
                cpu,
                tol,
                shared,
                node_tol,
            },
        )
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => gang_strategy().prop_map(Op::AddGang),
        5 => Just(Op::Cycle),
        1 => any::<usize>().prop_map(Op::Complete),
        1 => any::<usize>().prop_map(Op::RemoveGroup),
        3 => (any::<usize>(), any::<usize>(), prop::bool::weighted(0.7), 0..2usize, prop::bool::weighted(0.6))
            .prop_map(|(node, gpu, held, key, no_execute)| Op::Taint { node, gpu, held, key, no_execute }),
        1 => (any::<usize>(), any::<usize>(), 0..2usize, prop::option::of(any::<bool>()))
            .prop_map(|(node, gpu, key, effect)| Op::Untaint { node, gpu, key, effect }),
        3 => (0..=6i64).prop_map(Op::Advance),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(node, no_execute)| Op::TaintNode { node, no_execute }),
        1 => any::<usize>().prop_map(Op::UntaintNode),
    ]
}

/// 1–12 operations, mostly 6 or more (the interesting states need a few gangs, a
/// cycle, then taints or arrivals).
fn ops_strategy() -> impl Strategy<Value = Vec<Op>> {
    prop_oneof![
        1 => prop::collection::vec(op_strategy(), 1..=5),
        3 => prop::collection::vec(op_strategy(), 6..=12),
    ]
}

fn cluster_strategy() -> impl Strategy<Value = ClusterSpec> {
    (
        prop::collection::vec(2..=4usize, 2..=4),
        1..=2usize,
        2..=6i64,
    )
        .prop_map(|(gpus, racks, cpu)| ClusterSpec { gpus, racks, cpu })
}

// ------------------------------------------------------------------------- building

fn build(spec: &ClusterSpec) -> Scheduler {
    let nodes: Vec<(String, String, usize)> = spec
        .gpus
        .iter()
        .enumerate()
        .map(|(i, &g)| (format!("n{i}"), format!("r{}", i % spec.racks), g))
        .collect();
    let refs: Vec<(&str, &str, usize)> = nodes
        .iter()
        .map(|(n, r, g)| (n.as_str(), r.as_str(), *g))
        .collect();
    Scheduler::new(rack_cluster(&refs, spec.cpu), GangOptions::default())
}

fn gpu_claim(name: &str, count: u32, tol: Tol) -> ResourceClaim {
    let mut claim = ResourceClaim::new(NS, name);
    let mut req = ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(count));
    req.tolerations = tol.tolerations();
    claim
        .spec
        .requests
        .push(DeviceRequest::exactly("gpus", req));
    claim
}

/// Adds gang `name` as `spec` says.
fn add_gang(s: &mut Scheduler, name: &str, spec: &GangSpec) {
    let now = s.now();
    let mut g = PodGroup::new(
        NS,
        name,
        SchedulingPolicy::Gang {
            min_count: spec.min,
        },
    );
    g.priority = Some(spec.priority);
    g.creation = now;
    g.disruption_mode = if spec.all {
        DisruptionMode::All
    } else {
        DisruptionMode::Single
    };
    let policy = if spec.never {
        PreemptionPolicy::Never
    } else {
        PreemptionPolicy::PreemptLowerPriority
    };
    g.preemption_policy = Some(policy);
    if spec.rack {
        g.topology.push(TopologyConstraint::new("rack"));
    }
    let shared = PodResourceClaim {
        name: "shared".into(),
        source: ClaimSource::ClaimName(format!("{name}-shared")),
    };
    if spec.shared == Shared::Group {
        g.resource_claims.push(PodGroupResourceClaim {
            name: shared.name.clone(),
            source: shared.source.clone(),
        });
    }
    if spec.shared != Shared::No {
        s.add_claim(gpu_claim(&format!("{name}-shared"), 1, spec.tol))
            .unwrap();
    }
    s.add_group(g).unwrap();
    for i in 0..spec.pods {
        let pod_name = format!("{name}-{i}");
        let mut pod = Pod::new(NS, &pod_name);
        pod.scheduling_group = Some(name.into());
        pod.priority = spec.priority;
        pod.preemption_policy = policy;
        pod.creation = now;
        let seconds = match spec.node_tol {
            NodeTol::None => None,
            NodeTol::Forever => Some(None),
            NodeTol::For(s) => Some(Some(s)),
        };
        if let Some(toleration_seconds) = seconds {
            pod.tolerations.push(Toleration {
                key: NODE_TAINT.into(),
                operator: TolerationOperator::Exists,
                value: String::new(),
                effect: Some(TaintEffect::NoExecute),
                toleration_seconds,
            });
        }
        if spec.cpu > 0 {
            pod.requests
                .insert("cpu".into(), Quantity::from_int(spec.cpu));
        }
        let claim = gpu_claim(&format!("{pod_name}-gpus"), spec.gpus, spec.tol);
        pod.resource_claims.push(PodResourceClaim {
            name: "gpus".into(),
            source: ClaimSource::ClaimName(claim.name.clone()),
        });
        if spec.shared != Shared::No {
            pod.resource_claims.push(shared.clone());
        }
        s.add_claim(claim).unwrap();
        s.add_pod(pod).unwrap();
    }
}

// ------------------------------------------------------------------------- views

fn pod_key(p: &Pod) -> String {
    format!("{}/{}", p.namespace, p.name)
}

/// Bound pods → node.
fn bound_map(s: &Scheduler) -> BTreeMap<String, String> {
    s.pods()
        .filter_map(|p| p.node_name.clone().map(|n| (pod_key(p), n)))
        .collect()
}

/// The claims a pod names, `namespace/name`.
fn claims_of(p: &Pod) -> Vec<String> {
    p.resource_claims
        .iter()
        .filter_map(|c| match &c.source {
            ClaimSource::ClaimName(n) => Some(format!("{}/{n}", p.namespace)),
            ClaimSource::Template(_) => None,
        })
        .collect()
}

fn is_member(p: &Pod, group: &str) -> bool {
    group
        .split_once('/')
        .is_some_and(|(ns, g)| p.namespace == ns && p.scheduling_group.as_deref() == Some(g))
}

fn bound_members(bound: &BTreeMap<String, String>, s: &Scheduler, group: &str) -> usize {
    bound
        .keys()
        .filter(|k| s.pod(k).is_some_and(|p| is_member(p, group)))
        .count()
}

/// The devices some claim holds, sorted.
fn held_devices(s: &Scheduler) -> Vec<DeviceRef> {
    let c = s.cluster();
    let mut out = Vec::new();
    for slice in c.slices() {
        for d in &slice.devices {
            let r = DeviceRef::new(&slice.driver, &slice.pool.name, &d.name);
            if !c.allocations(&r).is_empty() {
                out.push(r);
            }
        }
    }
    out.sort();
    out
}

/// The taints of a device (slice taints; no rules here).
fn taints_of(c: &Cluster, r: &DeviceRef) -> Vec<DeviceTaint> {
    c.device_id(r)
        .map(|id| c.device_taints(id))
        .unwrap_or_default()
}

/// Every decision a cycle committed.
fn decisions(report: &CycleReport) -> impl Iterator<Item = &PlacementDecision> {
    report.units.iter().filter_map(|(_, r)| match r {
        UnitResult::Scheduled(d) => Some(d),
        UnitResult::Preempted(p) => Some(&p.decision),
        _ => None,
    })
}

// ------------------------------------------------------------------------- invariants

/// Properties 1 and 4 on one state.
fn check_state(s: &Scheduler, ctx: &str) {
    let c = s.cluster();
    let bound = bound_map(s);
    // The scheduler's two views of bound pods agree.
    for p in s.pods() {
        let k = pod_key(p);
        assert_eq!(
            p.node_name.as_deref(),
            s.binding(&k).map(|b| b.node.as_str()),
            "{ctx}: pod {k}: nodeName and binding disagree"
        );
    }
    // Which claims bound pods use.
    let mut users: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for k in bound.keys() {
        for claim in claims_of(s.pod(k).unwrap()) {
            users.entry(claim).or_default().push(k.clone());
        }
    }

    // 1. Devices: one exclusive holder at most, each holder justified.
    for slice in c.slices() {
        for d in &slice.devices {
            let r = DeviceRef::new(&slice.driver, &slice.pool.name, &d.name);
            let holders = c.allocations(&r);
            let exclusive = holders.iter().filter(|h| !h.admin_access).count();
            assert!(
                exclusive <= 1,
                "{ctx}: device {r} double-booked: {holders:?}"
            );
            for h in holders {
                let alloc = s.allocation(&h.consumer).unwrap_or_else(|| {
                    panic!(
                        "{ctx}: device {r} held by {} whose claim has no allocation",
                        h.consumer
                    )
                });
                assert!(
                    alloc
                        .devices
                        .iter()
                        .any(|x| x.driver == r.driver && x.pool == r.pool && x.device == r.device),
                    "{ctx}: device {r} held by {} whose allocation does not list it: {alloc:?}",
                    h.consumer
                );
                assert!(
                    users.contains_key(&h.consumer),
                    "{ctx}: device {r} held by {} which no bound pod uses",
                    h.consumer
                );
            }
        }
    }
    // Allocated claims hold their devices; bound pods' claims are allocated.
    for claim in s.claims() {
        let k = format!("{}/{}", claim.namespace, claim.name);
        if let Some(a) = &claim.allocation {
            for x in &a.devices {
                let r = DeviceRef::new(&x.driver, &x.pool, &x.device);
                assert!(
                    c.allocations(&r).iter().any(|h| h.consumer == k),
                    "{ctx}: claim {k} allocated {r} but does not hold it"
                );
            }
        }
    }
    for (claim, pods) in &users {
        assert!(
            s.allocation(claim).is_some(),
            "{ctx}: bound pods {pods:?} use claim {claim}, which is not allocated"
        );
    }

    // 4. Node resources.
    for n in c.nodes() {
        let here: Vec<&String> = bound
            .iter()
            .filter(|(_, node)| **node == n.name)
            .map(|(k, _)| k)
            .collect();
        let cpu: i64 = here
            .iter()
            .map(|k| {
                s.pod(k)
                    .unwrap()
                    .requests
                    .get("cpu")
                    .map_or(0, |q| q.value())
            })
            .sum();
        let alloc = n.allocatable["cpu"].value();
        assert!(
            cpu <= alloc,
            "{ctx}: node {} has {cpu} cpu bound, {alloc} allocatable",
            n.name
        );
        let free = c.node_free_resources(&n.name).unwrap();
        assert_eq!(
            free["cpu"].value(),
            alloc - cpu,
            "{ctx}: node {}: cluster reservations disagree with bound pods {here:?}",
            n.name
        );
        assert_eq!(
            free["pods"].value(),
            PODS_PER_NODE - i64::try_from(here.len()).unwrap(),
            "{ctx}: node {}: pod reservations disagree with bound pods {here:?}",
            n.name
        );
    }
}

/// Property 3 on one state: every bound pod with an untolerated `NoExecute` taint on a
/// device of its claims is scheduled for eviction by the taint's deadline, and every
/// scheduled eviction is justified. `s` must have an up-to-date schedule (after a taint
/// change, an `advance`, or `refresh_evictions`: cycles and removals leave it stale
/// until then, as `refresh_evictions` documents).
fn check_evictions(s: &Scheduler, ctx: &str) {
    let cluster = s.cluster();
    let bound = bound_map(s);
    let scheduled: BTreeMap<String, PodEviction> = s
        .scheduled_evictions()
        .into_iter()
        .map(|ev| (ev.pod.clone(), ev))
        .collect();
    // Device taints: by `timeAdded` + the least NoExecute `tolerationSeconds`.
    for pod in bound.keys() {
        for claim in claims_of(s.pod(pod).unwrap()) {
            let Some(alloc) = s.allocation(&claim) else {
                continue;
            };
            for dev in &alloc.devices {
                let device = DeviceRef::new(&dev.driver, &dev.pool, &dev.device);
                for taint in taints_of(cluster, &device) {
                    let EvictionVerdict::Evict { delay_seconds } =
                        device_eviction(&taint, &dev.tolerations)
                    else {
                        continue;
                    };
                    let deadline = Time(taint.time_added.unwrap().0 + delay_seconds);
                    let ev = scheduled.get(pod).unwrap_or_else(|| {
                        panic!(
                            "{ctx}: bound pod {pod} uses {device} (claim {claim}) with untolerated \
                             taint {taint} but is not scheduled for eviction; scheduled: {:?}",
                            s.scheduled_evictions()
                        )
                    });
                    assert!(
                        ev.at <= deadline,
                        "{ctx}: pod {pod} evicted at {:?}, after the deadline {deadline:?} of \
                         {taint} on {device}",
                        ev.at
                    );
                }
            }
        }
    }
    // Node taints: the timer starts when the pod is first seen there, now at the latest.
    for (pod, node) in &bound {
        let taints = &cluster.node(node).unwrap().taints;
        let tolerations = &s.pod(pod).unwrap().tolerations;
        if let EvictionVerdict::Evict { delay_seconds } = node_eviction(taints, tolerations) {
            let ev = scheduled.get(pod).unwrap_or_else(|| {
                panic!(
                    "{ctx}: bound pod {pod} on node {node} with taints {taints:?} it does not \
                     tolerate is not scheduled for eviction"
                )
            });
            assert!(
                ev.at <= Time(s.now().0 + delay_seconds),
                "{ctx}: pod {pod} on {node} evicted at {:?}, later than now + {delay_seconds}s",
                ev.at
            );
        }
    }
    // Every scheduled eviction is justified.
    for ev in scheduled.values() {
        let Some(pod) = bound.contains_key(&ev.pod).then(|| s.pod(&ev.pod).unwrap()) else {
            panic!(
                "{ctx}: eviction scheduled for {} which is not bound: {ev:?}",
                ev.pod
            );
        };
        match &ev.reason {
            EvictionReason::DeviceTaint { claim, taint } => {
                assert!(
                    claims_of(pod).contains(claim),
                    "{ctx}: {ev:?}: the pod does not use the claim"
                );
                let justified = s.allocation(claim).is_some_and(|alloc| {
                    alloc.devices.iter().any(|dev| {
                        let device = DeviceRef::new(&dev.driver, &dev.pool, &dev.device);
                        taints_of(cluster, &device).iter().any(|found| {
                            found.to_string() == *taint
                                && found.effect == DeviceTaintEffect::NoExecute
                                && matches!(device_eviction(found, &dev.tolerations),
                                    EvictionVerdict::Evict { delay_seconds }
                                        if Time(found.time_added.unwrap().0 + delay_seconds)
                                            == ev.at)
                        })
                    })
                });
                assert!(
                    justified,
                    "{ctx}: {ev:?}: no untolerated NoExecute taint of the claim's devices gives \
                     that time"
                );
            }
            EvictionReason::GroupMember { group } => {
                assert!(is_member(pod, group), "{ctx}: {ev:?}: not a member");
                assert_eq!(
                    s.group(group).map(|g| g.disruption_mode),
                    Some(DisruptionMode::All),
                    "{ctx}: {ev:?}: group is not disruptionMode All"
                );
                let cause = scheduled.values().any(|other| {
                    other.pod != ev.pod
                        && other.at == ev.at
                        && !matches!(other.reason, EvictionReason::GroupMember { .. })
                        && s.pod(&other.pod).is_some_and(|p| is_member(p, group))
                });
                assert!(
                    cause,
                    "{ctx}: {ev:?}: no other member of {group} is evicted at that time; \
                     scheduled: {:?}",
                    s.scheduled_evictions()
                );
            }
            EvictionReason::NodeTaint { node } => {
                assert_eq!(
                    bound.get(&ev.pod),
                    Some(node),
                    "{ctx}: {ev:?}: not on that node"
                );
                let taints = &cluster.node(node).unwrap().taints;
                assert!(
                    matches!(
                        node_eviction(taints, &pod.tolerations),
                        EvictionVerdict::Evict { .. }
                    ),
                    "{ctx}: {ev:?}: the pod tolerates {taints:?}"
                );
            }
        }
    }
}

/// Property 2 (and the bound-pod bookkeeping of every operation): pods leave only
/// as `allowed_to_leave` says, and a gang only grows to `minCount` or more.
fn check_gangs(
    before: &Scheduler,
    after: &Scheduler,
    groups: &[String],
    allowed_to_leave: &BTreeSet<String>,
    ctx: &str,
) {
    let b0 = bound_map(before);
    let b1 = bound_map(after);
    for (k, node) in &b0 {
        if allowed_to_leave.contains(k) {
            continue;
        }
        assert_eq!(
            b1.get(k),
            Some(node),
            "{ctx}: pod {k} left node {node} without completion, eviction or preemption"
        );
    }
    for g in groups {
        let Some(group) = after.group(g) else {
            continue;
        };
        let min = group.policy.min_count().unwrap() as usize;
        let (n0, n1) = (bound_members(&b0, before, g), bound_members(&b1, after, g));
        assert!(
            n1 <= n0 || n1 >= min,
            "{ctx}: gang {g} grew from {n0} to {n1} bound pods, below minCount {min}"
        );
    }
}

/// Properties 2, 3 and 6 for one cycle: `before` is the state it started from.
fn check_cycle(before: &Scheduler, after: &Scheduler, report: &CycleReport, ctx: &str) {
    // 6. Replay the cycle's decisions on a copy of the state before it, each validated
    // against the state it was made against, up to the first preemption.
    let mut cluster = before.cluster().clone();
    let mut pods: Vec<Pod> = before.pods().cloned().collect();
    let mut claims: Vec<ResourceClaim> = before.claims().cloned().collect();
    let mut replayed_all = true;
    for (unit, result) in &report.units {
        match result {
            UnitResult::Scheduled(d) if replayed_all => {
                let group = match unit {
                    Unit::Group(g) => before.group(g),
                    Unit::Pod(_) => None,
                };
                let v = validate_placement(&cluster, group, &pods, &claims, d);
                assert!(v.is_empty(), "{ctx}: {unit} placed invalidly: {v:?}\n{d:?}");
                cluster.apply_decision(d, &pods).unwrap();
                for b in &d.bindings {
                    let p = pods.iter_mut().find(|p| pod_key(p) == b.pod).unwrap();
                    p.node_name = Some(b.node.clone());
                }
                for a in d
                    .bindings
                    .iter()
                    .flat_map(|b| &b.claims)
                    .chain(&d.group_claims)
                {
                    let c = claims
                        .iter_mut()
                        .find(|c| format!("{}/{}", c.namespace, c.name) == a.claim)
                        .unwrap();
                    c.allocation = Some(a.result.clone());
                }
            }
            UnitResult::Preempted(_) => replayed_all = false,
            UnitResult::Invalid(e) => panic!("{ctx}: {unit} invalid: {e:?}"),
            _ => {}
        }
    }
    if replayed_all {
        assert_eq!(
            observe(&cluster),
            observe(after.cluster()),
            "{ctx}: replaying the cycle's decisions gives another cluster"
        );
    }

    // 3. No placement takes a device with an untolerated NoSchedule / NoExecute taint
    // (taints do not change during a cycle).
    for d in decisions(report) {
        for a in d
            .bindings
            .iter()
            .flat_map(|b| &b.claims)
            .chain(&d.group_claims)
        {
            for x in &a.result.devices {
                let r = DeviceRef::new(&x.driver, &x.pool, &x.device);
                for t in taints_of(after.cluster(), &r) {
                    assert!(
                        !device_taint_blocks(&t, &x.tolerations),
                        "{ctx}: claim {} got {r} despite untolerated taint {t}",
                        a.claim
                    );
                }
            }
        }
    }

    // The cycle's first unit sees the state before it: preemption is tried when it
    // can help (if the unit stays unschedulable although it may preempt, it does not
    // fit either once every lower-priority bound pod is gone), and a preemption
    // evicts no victim it could spare (without any one of them the unit does not fit).
    if let Some((unit @ Unit::Group(g), result)) = report.units.first() {
        let group = before.group(g).unwrap();
        let lower: Vec<&Pod> = bound_map(before)
            .keys()
            .map(|k| before.pod(k).unwrap())
            .filter(|p| p.priority < group.effective_priority())
            .collect();
        // `unit`'s result in a cycle after removing `gone` from the state before.
        let without = |gone: &mut dyn Iterator<Item = String>| {
            let mut oracle = before.clone();
            for k in gone {
                oracle.remove_pod(&k).unwrap();
            }
            let mut r = oracle.cycle();
            assert_eq!(r.units.first().map(|(u, _)| u), Some(unit));
            r.units.swap_remove(0).1
        };
        match result {
            UnitResult::Pending(GangOutcome::Unschedulable { .. })
                if group.effective_preemption_policy()
                    == PreemptionPolicy::PreemptLowerPriority =>
            {
                let r = without(&mut lower.iter().map(|p| pod_key(p)));
                assert!(
                    !matches!(r, UnitResult::Scheduled(_)),
                    "{ctx}: {unit} was not placed by preemption, but fits once every \
                     lower-priority pod is gone: {r:?}"
                );
            }
            UnitResult::Preempted(p) => {
                for v in &p.victims {
                    let r = without(
                        &mut p
                            .victims
                            .iter()
                            .filter(|w| *w != v)
                            .flat_map(|w| w.pods.iter().cloned()),
                    );
                    assert!(
                        !matches!(r, UnitResult::Scheduled(_)),
                        "{ctx}: {unit} preempted {v:?} needlessly: it fits without: {r:?}"
                    );
                }
            }
            _ => {}
        }
    }

    // No placement puts a pod on a node with an untolerated NoSchedule / NoExecute taint.
    for d in decisions(report) {
        for b in &d.bindings {
            let node = after.cluster().node(&b.node).unwrap();
            let pod = after.pod(&b.pod).unwrap();
            let blocking = first_untolerated_taint(&node.taints, &pod.tolerations, |e| {
                matches!(e, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            });
            assert!(
                blocking.is_none(),
                "{ctx}: {} placed on {} despite {blocking:?}",
                b.pod,
                b.node
            );
        }
    }

    // Preemption: victims of strictly lower priority, preemptor allowed to preempt,
    // `All` groups evicted whole.
    let mut victims: BTreeSet<String> = BTreeSet::new();
    for (unit, result) in &report.units {
        let UnitResult::Preempted(p) = result else {
            continue;
        };
        let Unit::Group(g) = unit else {
            panic!("{ctx}: only groups here: {unit}")
        };
        let preemptor = before.group(g).unwrap();
        assert_eq!(
            preemptor.effective_preemption_policy(),
            PreemptionPolicy::PreemptLowerPriority,
            "{ctx}: {unit} preempted with policy Never"
        );
        for v in &p.victims {
            assert!(
                v.priority < preemptor.effective_priority(),
                "{ctx}: {unit} preempted {v:?}"
            );
            match &v.unit {
                Unit::Group(vg) => {
                    assert_eq!(
                        before.group(vg).unwrap().disruption_mode,
                        DisruptionMode::All
                    );
                    for (k, _) in bound_map(before) {
                        if is_member(before.pod(&k).unwrap(), vg) {
                            assert!(
                                v.pods.contains(&k),
                                "{ctx}: victim {vg} evicted without its member {k}"
                            );
                        }
                    }
                }
                Unit::Pod(vp) => {
                    let pod = before.pod(vp).unwrap();
                    if let Some(g) = &pod.scheduling_group {
                        assert_eq!(
                            before.group(&format!("{NS}/{g}")).unwrap().disruption_mode,
                            DisruptionMode::Single,
                            "{ctx}: pod {vp} of an All group preempted alone"
                        );
                    }
                }
            }
            victims.extend(v.pods.iter().cloned());
        }
    }
    // Only victims leave; a gang that gets a new member in this cycle ends at
    // minCount or more.
    let groups: Vec<String> = before
        .pods()
        .filter_map(|p| p.scheduling_group.as_ref().map(|g| format!("{NS}/{g}")))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    check_gangs(before, after, &groups, &victims, ctx);
    let b0 = bound_map(before);
    let b1 = bound_map(after);
    for d in decisions(report) {
        for b in &d.bindings {
            let pod = after.pod(&b.pod).unwrap();
            assert_eq!(b1.get(&b.pod), Some(&b.node), "{ctx}: {b:?} not recorded");
            assert!(!b0.contains_key(&b.pod) || victims.contains(&b.pod));
            if let Some(g) = &pod.scheduling_group {
                let g = format!("{NS}/{g}");
                let min = after.group(&g).unwrap().policy.min_count().unwrap() as usize;
                let n = bound_members(&b1, after, &g);
                assert!(
                    n >= min,
                    "{ctx}: gang {g} got member {} but has {n} bound < minCount {min}",
                    b.pod
                );
            }
        }
    }
}

// ------------------------------------------------------------------------- the run

/// Runs `ops`, checking every step when `check`; returns a fingerprint of everything
/// observable along the way.
fn run(spec: &ClusterSpec, ops: &[Op], check: bool) -> String {
    let mut s = build(spec);
    let mut groups: Vec<String> = Vec::new();
    let mut fp = String::new();
    let nodes = spec.gpus.len();
    for (step, op) in ops.iter().enumerate() {
        let ctx = format!("step {step} {op:?}");
        let before = s.clone();
        // The state before with its eviction schedule brought up to date.
        let mut fresh = before.clone();
        if check {
            fresh.refresh_evictions();
        }
        let mut leave: BTreeSet<String> = BTreeSet::new();
        match op {
            Op::AddGang(g) => {
                if groups.len() < 5 {
                    let name = format!("g{}", groups.len());
                    add_gang(&mut s, &name, g);
                    groups.push(format!("{NS}/{name}"));
                }
            }
            Op::Cycle => {
                let report = s.cycle();
                if check {
                    check_cycle(&before, &s, &report, &ctx);
                }
                writeln!(fp, "{report:?}").unwrap();
                leave.extend(bound_map(&before).into_keys());
            }
            Op::Complete(i) => {
                let bound: Vec<String> = bound_map(&s).into_keys().collect();
                if !bound.is_empty() {
                    let k = &bound[i % bound.len()];
                    s.remove_pod(k).unwrap();
                    leave.insert(k.clone());
                    writeln!(fp, "completed {k}").unwrap();
                }
            }
            Op::RemoveGroup(i) => {
                let live: Vec<&String> = groups.iter().filter(|g| s.group(g).is_some()).collect();
                if !live.is_empty() {
                    let g = live[i % live.len()].clone();
                    leave.extend(before.pods().filter(|p| is_member(p, &g)).map(pod_key));
                    s.remove_group(&g).unwrap();
                    assert!(s.pods().all(|p| !is_member(p, &g)), "{ctx}: members left");
                    writeln!(fp, "removed {g}").unwrap();
                }
            }
            Op::Taint {
                node,
                gpu,
                held,
                key,
                no_execute,
            } => {
                let n = node % nodes;
                let mut r = dref(&format!("n{n}"), &format!("gpu-{}", gpu % spec.gpus[n]));
                if *held {
                    let allocated: Vec<DeviceRef> = held_devices(&s);
                    if !allocated.is_empty() {
                        r = allocated[gpu % allocated.len()].clone();
                    }
                }
                let effect = if *no_execute {
                    DeviceTaintEffect::NoExecute
                } else {
                    DeviceTaintEffect::NoSchedule
                };
                let report = s
                    .taint_device(&r, DeviceTaint::new(TAINT_KEYS[*key], "", effect))
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                if check && !no_execute {
                    // NoSchedule evicts nobody: the schedule is what it was.
                    assert_eq!(
                        s.scheduled_evictions(),
                        fresh.scheduled_evictions(),
                        "{ctx}: a NoSchedule taint changed evictions: {report:?}"
                    );
                }
                if check {
                    check_broken_groups(&s, &groups, &report.broken_groups, &ctx);
                }
                writeln!(fp, "{report:?}").unwrap();
            }
            Op::Untaint {
                node,
                gpu,
                key,
                effect,
            } => {
                let n = node % nodes;
                let r = dref(&format!("n{n}"), &format!("gpu-{}", gpu % spec.gpus[n]));
                let effect = effect.map(|e| {
                    if e {
                        DeviceTaintEffect::NoExecute
                    } else {
                        DeviceTaintEffect::NoSchedule
                    }
                });
                let report = s
                    .untaint_device(&r, TAINT_KEYS[*key], effect.as_ref())
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                if check {
                    // Removing a taint never brings an eviction forward or starts one.
                    let old: BTreeMap<String, Time> = fresh
                        .scheduled_evictions()
                        .into_iter()
                        .map(|e| (e.pod, e.at))
                        .collect();
                    for e in &s.scheduled_evictions() {
                        assert!(
                            old.get(&e.pod).is_some_and(|&at| at <= e.at),
                            "{ctx}: untaint started {e:?}"
                        );
                    }
                }
                writeln!(fp, "{report:?}").unwrap();
            }
            Op::TaintNode { node, no_execute } => {
                let effect = if *no_execute {
                    TaintEffect::NoExecute
                } else {
                    TaintEffect::NoSchedule
                };
                let report = s
                    .taint_node(
                        &format!("n{}", node % nodes),
                        Taint::new(NODE_TAINT, "", effect),
                    )
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                if check {
                    if !no_execute {
                        assert_eq!(
                            s.scheduled_evictions(),
                            fresh.scheduled_evictions(),
                            "{ctx}: a NoSchedule taint changed evictions: {report:?}"
                        );
                    }
                    check_broken_groups(&s, &groups, &report.broken_groups, &ctx);
                }
                writeln!(fp, "{report:?}").unwrap();
            }
            Op::UntaintNode(node) => {
                let report = s
                    .untaint_node(&format!("n{}", node % nodes), NODE_TAINT, None)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                writeln!(fp, "{report:?}").unwrap();
            }
            Op::Advance(d) => {
                let now = Time(s.now().0 + d);
                let due = s.advance(now);
                if check {
                    check_advance(&fresh, &s, &due, now, &ctx);
                }
                leave.extend(due.iter().map(|e| e.pod.clone()));
                writeln!(fp, "{due:?}").unwrap();
            }
        }
        if check {
            check_gangs(&before, &s, &groups, &leave, &ctx);
            check_state(&s, &ctx);
            // The schedule is current after taint changes and `advance`; after other
            // operations, once refreshed.
            let mut now_fresh = s.clone();
            let refresh = now_fresh.refresh_evictions();
            if matches!(
                op,
                Op::Taint { .. }
                    | Op::Untaint { .. }
                    | Op::TaintNode { .. }
                    | Op::UntaintNode(_)
                    | Op::Advance(_)
            ) {
                assert_eq!(
                    (&refresh.started, &refresh.cancelled),
                    (&vec![], &vec![]),
                    "{ctx}: the schedule was not current"
                );
            }
            check_evictions(&now_fresh, &ctx);
        }
    }
    writeln!(fp, "{}", observe(s.cluster())).unwrap();
    for p in s.pods() {
        let k = pod_key(p);
        writeln!(fp, "pod {k} {:?}", s.binding(&k)).unwrap();
    }
    for c in s.claims() {
        writeln!(fp, "claim {}/{} {:?}", c.namespace, c.name, c.allocation).unwrap();
    }
    writeln!(fp, "evictions {:?}", s.scheduled_evictions()).unwrap();
    fp
}

/// A taint change reports the PodGroups its schedule breaks: those with a bound
/// member scheduled for eviction and fewer than `minCount` bound members left once
/// the scheduled evictions happen.
fn check_broken_groups(s: &Scheduler, groups: &[String], broken: &[BrokenGroup], ctx: &str) {
    let scheduled: BTreeSet<String> = s.scheduled_evictions().into_iter().map(|e| e.pod).collect();
    let bound = bound_map(s);
    let mut want = Vec::new();
    for g in groups {
        let Some(group) = s.group(g) else { continue };
        let min = group.policy.min_count().unwrap();
        let (evicted, left): (Vec<String>, Vec<String>) = bound
            .keys()
            .filter(|k| is_member(s.pod(k).unwrap(), g))
            .cloned()
            .partition(|k| scheduled.contains(k));
        if !evicted.is_empty() && left.len() < min as usize {
            want.push((g.clone(), evicted, left, min));
        }
    }
    let got: Vec<(String, Vec<String>, Vec<String>, u32)> = broken
        .iter()
        .map(|b| {
            (
                b.group.clone(),
                b.evicted.clone(),
                b.left.clone(),
                b.min_count,
            )
        })
        .collect();
    assert_eq!(got, want, "{ctx}: broken groups");
}

/// `advance` carries out exactly the evictions due (`before` has an up-to-date
/// schedule), deletes the pods, and takes `All` gangs whole.
fn check_advance(before: &Scheduler, after: &Scheduler, due: &[PodEviction], now: Time, ctx: &str) {
    assert_eq!(after.now(), now.max(before.now()), "{ctx}: clock");
    let expected: Vec<PodEviction> = before
        .scheduled_evictions()
        .into_iter()
        .filter(|e| e.at <= now)
        .collect();
    assert_eq!(due, expected, "{ctx}: evictions carried out");
    for e in due {
        assert!(
            after.pod(&e.pod).is_none(),
            "{ctx}: evicted {} still exists",
            e.pod
        );
    }
    for e in after.scheduled_evictions() {
        assert!(e.at > now, "{ctx}: {e:?} due but not carried out");
    }
    let b1 = bound_map(after);
    for e in due {
        if let Some(g) = &before.pod(&e.pod).unwrap().scheduling_group {
            let g = format!("{NS}/{g}");
            if before.group(&g).unwrap().disruption_mode == DisruptionMode::All {
                assert_eq!(
                    bound_members(&b1, after, &g),
                    0,
                    "{ctx}: All-mode gang {g} lost {} but kept other members",
                    e.pod
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn lifecycle_invariants_hold_after_every_step(
        spec in cluster_strategy(),
        ops in ops_strategy(),
    ) {
        let first = run(&spec, &ops, true);
        let second = run(&spec, &ops, false);
        prop_assert_eq!(first, second, "the same sequence gave another state");
    }
}

// ------------------------------------------------------------------------- regressions

/// A one-node cluster with `gpus` GPUs.
fn one_node(gpus: usize) -> Scheduler {
    Scheduler::new(
        rack_cluster(&[("n0", "r0", gpus)], 8),
        GangOptions::default(),
    )
}

/// A Single-mode gang of `pods` × `gpus` GPUs, minCount 1, no tolerations.
fn plain(pods: u32, gpus: u32, priority: i32, shared: Shared) -> GangSpec {
    GangSpec {
        pods,
        gpus,
        min: 1,
        priority,
        all: false,
        rack: false,
        never: false,
        cpu: 0,
        tol: Tol::None,
        shared,
        node_tol: NodeTol::None,
    }
}

/// Regression (found by the property, the oracle of "preemption is tried when it can
/// help"): the eviction simulation once held only the claims in a single-pod victim's
/// binding, while the real eviction also releases the PodGroup-level claims once the pod
/// was the group's last bound member; a preemption that would make room was not made.
#[test]
fn preemption_misses_the_group_claims_a_single_mode_victim_frees() {
    // n0 has 2 GPUs; `low` (priority 0, Single) runs one pod holding 1 GPU of its own
    // and, through the group's claim, the other.
    let mut s = one_node(2);
    add_gang(&mut s, "low", &plain(1, 1, 0, Shared::Group));
    s.cycle();
    assert_eq!(held_devices(&s).len(), 2);
    // `high` (priority 1) needs 2 GPUs: evicting low-0 frees both.
    add_gang(&mut s, "high", &plain(1, 2, 1, Shared::No));
    let mut oracle = s.clone();
    oracle.remove_pod("ns/low-0").unwrap();
    let r = oracle.cycle();
    assert!(matches!(r.units[0].1, UnitResult::Scheduled(_)), "{r:?}");
    let r = s.cycle();
    assert!(
        matches!(&r.units[0].1, UnitResult::Preempted(p) if p.victims.len() == 1 && p.victims[0].pods == ["ns/low-0"]),
        "expected low-0 preempted, got {:?}",
        r.units[0]
    );
}

/// Regression (found by the property): the eviction simulation once released every
/// claim in a victim's binding, while the real eviction hands a claim another bound pod
/// still names to that pod; `preempt` then evicted a victim for nothing.
#[test]
fn preemption_evicts_for_nothing_when_a_victim_holds_a_claim_its_gang_shares() {
    // n0 has 3 GPUs; `low` (priority 0, Single, minCount 1) runs low-0 and low-1, each
    // with 1 GPU of its own, sharing a claim of 1 GPU (allocated in low-0's binding).
    let mut s = one_node(3);
    add_gang(&mut s, "low", &plain(2, 1, 0, Shared::Pods));
    s.cycle();
    assert_eq!(held_devices(&s).len(), 3);
    // `high` (priority 1) needs 2 GPUs: only evicting both low pods makes room.
    add_gang(&mut s, "high", &plain(1, 2, 1, Shared::No));
    let r = s.cycle();
    let UnitResult::Preempted(p) = &r.units[0].1 else {
        panic!("expected a preemption: {:?}", r.units[0]);
    };
    let mut victims: Vec<&String> = p.victims.iter().flat_map(|v| &v.pods).collect();
    victims.sort();
    assert_eq!(victims, ["ns/low-0", "ns/low-1"]);
    assert!(s.binding("ns/high-0").is_some());
    assert!(s.binding("ns/low-0").is_none() && s.binding("ns/low-1").is_none());
}
