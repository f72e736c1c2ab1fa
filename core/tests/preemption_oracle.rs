#![cfg(not(target_arch = "wasm32"))]
//! Workload-aware preemption against a brute-force oracle (issue 12): on small clusters
//! (2–6 nodes × 1–4 GPUs in 1–2 racks) running at most four lower-priority victim units
//! of mixed kinds and priorities (pods without a group, pods of `Single`-mode gangs,
//! `All`-mode gangs evicted whole; own claims, a claim the pods of a gang share, a
//! PodGroup claim), a higher-priority preemptor arrives — a pod, or a gang with or
//! without a rack constraint. The oracle evicts every subset of the victim units from a
//! copy of the scheduler (`remove_pod`), asks the gang placer whether the preemptor fits
//! then, and ranks the subsets that fit by the rules of preemption cost, with ranking
//! code of its own written from the rules (not gangpack's):
//!
//! 1. no PodDisruptionBudgets are modelled (no criterion);
//! 2. the highest victim priority, lower first;
//! 3. for a gang preemptor (workload-aware preemption), upstream's victim importance
//!    at that priority (KEP-5710 `MoreImportantVictim`: "PodGroups are considered more
//!    important than individual Pods of the same priority"): sets without an
//!    `All`-mode PodGroup among the highest-priority victims first (issue 31);
//! 4. the sum over victim pods of `priority + 2^31`, lower first;
//! 5. the number of victim pods, fewer first;
//! 6. the earliest creation time among the victim pods of the highest priority, later
//!    first;
//! 7. the number of workloads disrupted (PodGroups with a victim pod, plus victim pods
//!    without a group), fewer first;
//! 8. the sorted list of victim units (PodGroups before pods, then by name),
//!    lexicographically smaller first.
//!
//! The properties: gangpack preempts (or places the preemptor without preempting)
//! exactly when some subset lets it fit; the set it evicts lets it fit; and that set is
//! never ranked worse than the oracle's best. Then a few scenarios pin the ranking on
//! clusters with more victims than the exhaustive search takes.

mod common;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use common::rack_cluster;
use gangpack::{
    AllocationMode, ClaimSource, DeviceRequest, DisruptionMode, ExactDeviceRequest, GangOptions,
    GangOutcome, Pod, PodGroup, PodGroupResourceClaim, PodResourceClaim, PreemptionPolicy,
    ResourceClaim, Scheduler, SchedulingPolicy, Time, TopologyConstraint, Unit, UnitResult,
};
use proptest::prelude::*;

const NS: &str = "ns";
/// The preemptor's priority; victims have 0–2.
const HIGH: i32 = 3;

// ------------------------------------------------------------------------- inputs

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A pod without a group.
    Pod,
    /// A gang whose pods are preempted one by one.
    Single,
    /// A gang evicted whole.
    All,
}

/// A running workload (a victim candidate).
#[derive(Clone, Debug)]
struct Workload {
    kind: Kind,
    /// GPUs of each pod's own claim (one pod for [`Kind::Pod`]).
    pods: Vec<u32>,
    /// `minCount`, 1..=pods.
    min: u32,
    priority: i32,
    /// Each pod's creation time.
    created: Vec<i64>,
    /// A PodGroup claim of one GPU.
    group_claim: bool,
    /// A claim of one GPU every pod names.
    shared_claim: bool,
}

impl Workload {
    /// How many victim units it is at most.
    fn units(&self) -> usize {
        match self.kind {
            Kind::All => 1,
            Kind::Pod | Kind::Single => self.pods.len(),
        }
    }
}

/// The preemptor asks for more GPUs than are free once the victims run: `extra`
/// more, in all, from its `minCount` pods.
#[derive(Clone, Debug)]
struct Preemptor {
    /// A gang (else a pod without a group, which asks for all of it, up to the GPUs
    /// of the largest node).
    gang: bool,
    /// GPUs per pod of a gang (at most the largest node's); `minCount` is as many
    /// pods as the demand takes (at most 4).
    per_pod: u32,
    /// Pods beyond `minCount`.
    spare: u32,
    extra: u32,
    /// `topology: rack`.
    rack: bool,
}

#[derive(Clone, Debug)]
struct Case {
    /// GPUs per node.
    nodes: Vec<usize>,
    racks: usize,
    workloads: Vec<Workload>,
    /// Once the workloads run, pods of one GPU at the preemptor's priority (so not
    /// victims) take the free GPUs but this many, when set.
    leave: Option<u32>,
    preemptor: Preemptor,
}

fn workload_strategy() -> impl Strategy<Value = Workload> {
    (
        prop_oneof![1 => Just(Kind::Pod), 2 => Just(Kind::Single), 2 => Just(Kind::All)],
        prop::collection::vec((1..=3u32, 0..=3i64), 1..=3),
        0..3u32,
        0..=2i32,
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(kind, pods, min, priority, group_claim, shared_claim)| {
            let pods = if kind == Kind::Pod {
                pods[..1].to_vec()
            } else {
                pods
            };
            let grouped = kind != Kind::Pod;
            Workload {
                kind,
                min: 1 + min % pods.len() as u32,
                created: pods.iter().map(|p| p.1).collect(),
                pods: pods.iter().map(|p| p.0).collect(),
                priority,
                group_claim: grouped && group_claim,
                shared_claim: grouped && shared_claim && pods.len() > 1,
            }
        })
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(1..=4usize, 2..=6),
        1..=2usize,
        (
            prop::collection::vec(workload_strategy(), 1..=4),
            prop::option::weighted(0.6, 0..=2u32),
        ),
        (any::<bool>(), 1..=4u32, 0..=1u32, 0..=3u32, any::<bool>()),
    )
        .prop_map(
            |(nodes, racks, (workloads, leave), (gang, per_pod, spare, extra, rack))| {
                // At most four victim units.
                let mut units = 0;
                let workloads = workloads
                    .into_iter()
                    .filter(|w| {
                        units += w.units();
                        units <= 4
                    })
                    .collect();
                Case {
                    nodes,
                    racks,
                    workloads,
                    leave,
                    preemptor: Preemptor {
                        gang,
                        per_pod,
                        spare,
                        extra,
                        rack: gang && rack,
                    },
                }
            },
        )
}

// ------------------------------------------------------------------------- building

fn gpu_claim(name: &str, count: u32) -> ResourceClaim {
    let mut claim = ResourceClaim::new(NS, name);
    claim.spec.requests.push(DeviceRequest::exactly(
        "gpus",
        ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(count)),
    ));
    claim
}

fn claim_ref(entry: &str, claim: &str) -> PodResourceClaim {
    PodResourceClaim {
        name: entry.into(),
        source: ClaimSource::ClaimName(claim.into()),
    }
}

/// A pod `name` at `priority` with its own claim of `gpus` GPUs.
fn gpu_pod(s: &mut Scheduler, name: &str, gpus: u32, priority: i32, created: i64) -> Pod {
    let mut pod = Pod::new(NS, name);
    pod.priority = priority;
    pod.preemption_policy = PreemptionPolicy::PreemptLowerPriority;
    pod.creation = Time(created);
    let claim = gpu_claim(&format!("{name}-gpus"), gpus);
    pod.resource_claims
        .push(claim_ref("gpus", &format!("{name}-gpus")));
    s.add_claim(claim).unwrap();
    pod
}

/// A PodGroup `name` (gang of `min`) with pods `name-<i>` of `pods[i]` GPUs each.
#[allow(clippy::too_many_arguments)]
fn add_gang(
    s: &mut Scheduler,
    name: &str,
    mode: DisruptionMode,
    pods: &[u32],
    created: &[i64],
    min: u32,
    priority: i32,
    extra: (bool, bool, bool),
) {
    let (group_claim, shared_claim, rack) = extra;
    let mut g = PodGroup::new(NS, name, SchedulingPolicy::Gang { min_count: min });
    g.priority = Some(priority);
    g.preemption_policy = Some(PreemptionPolicy::PreemptLowerPriority);
    g.disruption_mode = mode;
    g.creation = Time(created.iter().copied().min().unwrap_or(0));
    if rack {
        g.topology.push(TopologyConstraint::new("rack"));
    }
    if group_claim {
        s.add_claim(gpu_claim(&format!("{name}-group"), 1)).unwrap();
        g.resource_claims.push(PodGroupResourceClaim {
            name: "group".into(),
            source: ClaimSource::ClaimName(format!("{name}-group")),
        });
    }
    if shared_claim {
        s.add_claim(gpu_claim(&format!("{name}-shared"), 1))
            .unwrap();
    }
    s.add_group(g).unwrap();
    for (i, (&gpus, &at)) in pods.iter().zip(created).enumerate() {
        let mut pod = gpu_pod(s, &format!("{name}-{i}"), gpus, priority, at);
        pod.scheduling_group = Some(name.into());
        if group_claim {
            pod.resource_claims
                .push(claim_ref("group", &format!("{name}-group")));
        }
        if shared_claim {
            pod.resource_claims
                .push(claim_ref("shared", &format!("{name}-shared")));
        }
        s.add_pod(pod).unwrap();
    }
}

/// The case's scheduler: the workloads that fit running (the rest removed), the
/// preemptor pending. `None` when nothing runs.
fn build(case: &Case) -> Option<(Scheduler, Unit)> {
    let nodes: Vec<(String, String, usize)> = case
        .nodes
        .iter()
        .enumerate()
        .map(|(i, &g)| (format!("n{i}"), format!("r{}", i % case.racks), g))
        .collect();
    let refs: Vec<(&str, &str, usize)> = nodes
        .iter()
        .map(|(n, r, g)| (n.as_str(), r.as_str(), *g))
        .collect();
    let mut s = Scheduler::new(rack_cluster(&refs, 64), GangOptions::default());
    for (i, w) in case.workloads.iter().enumerate() {
        let name = format!("w{i}");
        match w.kind {
            Kind::Pod => {
                let pod = gpu_pod(&mut s, &name, w.pods[0], w.priority, w.created[0]);
                s.add_pod(pod).unwrap();
            }
            Kind::Single | Kind::All => {
                let mode = if w.kind == Kind::All {
                    DisruptionMode::All
                } else {
                    DisruptionMode::Single
                };
                add_gang(
                    &mut s,
                    &name,
                    mode,
                    &w.pods,
                    &w.created,
                    w.min,
                    w.priority,
                    (w.group_claim, w.shared_claim, false),
                );
            }
        }
    }
    s.cycle();
    let pending: Vec<String> = s
        .pods()
        .filter(|p| p.node_name.is_none())
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect();
    for k in pending {
        s.remove_pod(&k).unwrap();
    }
    // Nothing runs: nothing to preempt.
    s.pods().next()?;
    if let Some(leave) = case.leave {
        let free = s.cluster().free_devices().len() as u32;
        for i in 0..free.saturating_sub(leave) {
            let pod = gpu_pod(&mut s, &format!("fill-{i}"), 1, HIGH, 0);
            s.add_pod(pod).unwrap();
        }
        s.cycle();
    }
    let p = &case.preemptor;
    let demand = s.cluster().free_devices().len() as u32 + 1 + p.extra;
    let most = case.nodes.iter().copied().max().unwrap_or(1) as u32;
    let unit = if p.gang {
        let gpus = p.per_pod.min(most);
        let min = demand.div_ceil(gpus).min(4);
        let pods = vec![gpus; (min + p.spare) as usize];
        let created = vec![10; pods.len()];
        add_gang(
            &mut s,
            "high",
            DisruptionMode::All,
            &pods,
            &created,
            min,
            HIGH,
            (false, false, p.rack),
        );
        Unit::Group(format!("{NS}/high"))
    } else {
        let pod = gpu_pod(&mut s, "high", demand.min(most), HIGH, 10);
        s.add_pod(pod).unwrap();
        Unit::Pod(format!("{NS}/high"))
    };
    Some((s, unit))
}

// ------------------------------------------------------------------------- the oracle

/// A victim unit as the oracle sees it: `(is a pod, name)` and its pods.
type VictimUnit = ((bool, String), Vec<String>);

/// The victim units of the running pods, by the rules: an `All`-mode PodGroup with its
/// bound members, every other pod of lower priority alone.
fn victim_units(s: &Scheduler) -> Vec<VictimUnit> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut pods = Vec::new();
    for p in s
        .pods()
        .filter(|p| p.node_name.is_some() && p.priority < HIGH)
    {
        let key = format!("{}/{}", p.namespace, p.name);
        let group = p
            .scheduling_group
            .as_ref()
            .map(|g| format!("{}/{g}", p.namespace))
            .filter(|g| s.group(g).is_some());
        match group {
            Some(g) if s.group(&g).unwrap().disruption_mode == DisruptionMode::All => {
                groups.entry(g).or_default().push(key);
            }
            _ => pods.push(((true, key.clone()), vec![key])),
        }
    }
    let mut out: Vec<VictimUnit> = groups
        .into_iter()
        .map(|(g, members)| ((false, g), members))
        .collect();
    out.extend(pods);
    out
}

/// Whether the preemptor fits after `gone` is removed: the gang placer on a copy.
fn fits_without(s: &Scheduler, unit: &Unit, gone: &[&String]) -> bool {
    let mut copy = s.clone();
    for k in gone {
        copy.remove_pod(k).unwrap();
    }
    let (group, members): (Option<PodGroup>, Vec<Pod>) = match unit {
        Unit::Group(g) => (
            copy.group(g).cloned(),
            copy.pods()
                .filter(|p| p.scheduling_group.as_deref() == Some("high"))
                .cloned()
                .collect(),
        ),
        Unit::Pod(p) => (None, vec![copy.pod(p).unwrap().clone()]),
    };
    let mut names: BTreeSet<String> = BTreeSet::new();
    for p in &members {
        for c in &p.resource_claims {
            if let ClaimSource::ClaimName(n) = &c.source {
                names.insert(format!("{}/{n}", p.namespace));
            }
        }
    }
    let claims: Vec<ResourceClaim> = copy
        .claims()
        .filter(|c| names.contains(&format!("{}/{}", c.namespace, c.name)))
        .cloned()
        .collect();
    matches!(
        copy.cluster()
            .place_gang(group.as_ref(), &members, &claims, copy.options())
            .unwrap(),
        GangOutcome::Placed(_)
    )
}

/// The oracle's rank of evicting `units` (smaller is better), from the rules in the
/// module docs.
type Rank = (
    i32,
    bool,
    i128,
    usize,
    Reverse<i64>,
    usize,
    Vec<(bool, String)>,
);

fn rank(s: &Scheduler, unit: &Unit, units: &[&VictimUnit]) -> Rank {
    let pods: Vec<&Pod> = units
        .iter()
        .flat_map(|(_, pods)| pods.iter().map(|k| s.pod(k).unwrap()))
        .collect();
    let highest = pods.iter().map(|p| p.priority).max().unwrap_or(i32::MIN);
    let sum: i128 = pods
        .iter()
        .map(|p| i128::from(p.priority) + (1i128 << 31))
        .sum();
    let earliest = pods
        .iter()
        .filter(|p| p.priority == highest)
        .map(|p| p.creation.0)
        .min()
        .unwrap_or(i64::MAX);
    let workloads: BTreeSet<String> = pods
        .iter()
        .map(|p| {
            let group = p
                .scheduling_group
                .as_ref()
                .map(|g| format!("{}/{g}", p.namespace))
                .filter(|g| s.group(g).is_some());
            match group {
                Some(g) => format!("group {g}"),
                None => format!("pod {}/{}", p.namespace, p.name),
            }
        })
        .collect();
    // Rule 3: a PodGroup evicted whole (`(false, _)`) whose pods have the highest
    // priority, for a gang preemptor only.
    let group_at_highest = matches!(unit, Unit::Group(_))
        && units.iter().any(|((is_pod, _), pods)| {
            !is_pod && pods.iter().any(|k| s.pod(k).unwrap().priority == highest)
        });
    let mut names: Vec<(bool, String)> = units.iter().map(|(n, _)| n.clone()).collect();
    names.sort();
    (
        highest,
        group_at_highest,
        sum,
        pods.len(),
        Reverse(earliest),
        workloads.len(),
        names,
    )
}

/// Every subset of the victim units that lets the preemptor fit, with its rank.
fn feasible(s: &Scheduler, unit: &Unit, units: &[VictimUnit]) -> Vec<(Rank, Vec<usize>)> {
    let mut out = Vec::new();
    for mask in 0u32..(1 << units.len()) {
        let chosen: Vec<usize> = (0..units.len()).filter(|i| mask & (1 << i) != 0).collect();
        let gone: Vec<&String> = chosen.iter().flat_map(|&i| &units[i].1).collect();
        if fits_without(s, unit, &gone) {
            let set: Vec<&VictimUnit> = chosen.iter().map(|&i| &units[i]).collect();
            out.push((rank(s, unit, &set), chosen));
        }
    }
    out
}

/// What gangpack did with the preemptor, as a set of victim units (names as the
/// oracle writes them); `None` when it left it pending.
fn gangpack_choice(s: &Scheduler, unit: &Unit) -> Option<Vec<(bool, String)>> {
    let mut after = s.clone();
    let report = after.cycle();
    let (first, result) = report.units.first().expect("the preemptor is pending");
    assert_eq!(first, unit, "the preemptor goes first: {report:?}");
    match result {
        UnitResult::Scheduled(_) => Some(Vec::new()),
        UnitResult::Preempted(p) => {
            let mut set: Vec<(bool, String)> = p
                .victims
                .iter()
                .map(|v| match &v.unit {
                    Unit::Group(g) => (false, g.clone()),
                    Unit::Pod(k) => (true, k.clone()),
                })
                .collect();
            set.sort();
            Some(set)
        }
        UnitResult::Pending(_) => None,
        other => panic!("unexpected {other:?}"),
    }
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let Some((s, unit)) = build(case) else {
        return Ok(());
    };
    let units = victim_units(&s);
    let feasible = feasible(&s, &unit, &units);
    let best = feasible.iter().min_by(|a, b| a.0.cmp(&b.0));
    let chosen = gangpack_choice(&s, &unit);
    match (&chosen, best) {
        (None, None) => {}
        (None, Some((r, set))) => {
            return Err(TestCaseError::fail(format!(
                "gangpack left the preemptor pending, but evicting {:?} lets it fit (rank \
                 {r:?})",
                set.iter().map(|&i| &units[i].0).collect::<Vec<_>>()
            )));
        }
        (Some(c), None) => {
            return Err(TestCaseError::fail(format!(
                "gangpack evicted {c:?}, but no subset of the victims lets the preemptor fit"
            )));
        }
        (Some(c), Some((best_rank, best_set))) => {
            let picked: Vec<&VictimUnit> = c
                .iter()
                .map(|name| {
                    units
                        .iter()
                        .find(|(n, _)| n == name)
                        .unwrap_or_else(|| panic!("{name:?} is not a victim unit: {units:?}"))
                })
                .collect();
            let gone: Vec<&String> = picked.iter().flat_map(|(_, pods)| pods).collect();
            prop_assert!(
                fits_without(&s, &unit, &gone),
                "gangpack evicted {c:?}, which does not let the preemptor fit"
            );
            let r = rank(&s, &unit, &picked);
            prop_assert!(
                r <= *best_rank,
                "gangpack evicted {c:?} (rank {r:?}); evicting {:?} is cheaper (rank \
                 {best_rank:?})",
                best_set.iter().map(|&i| &units[i].0).collect::<Vec<_>>()
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn preemption_picks_the_cheapest_victims_that_make_room(case in case_strategy()) {
        check(&case)?;
    }
}

// ------------------------------------------------------------------------- scenarios

/// Running pods of a `Single`-mode gang `name` (`minCount` 1) at `priority`: `pods[i]`
/// GPUs on node `pods[i].1`, created at `created`.
fn running_single(
    s: &mut Scheduler,
    name: &str,
    pods: &[(u32, &str)],
    priority: i32,
    created: i64,
) {
    let mut g = PodGroup::new(NS, name, SchedulingPolicy::Gang { min_count: 1 });
    g.priority = Some(priority);
    g.disruption_mode = DisruptionMode::Single;
    s.add_group(g).unwrap();
    let placed: Vec<(Pod, &str)> = pods
        .iter()
        .enumerate()
        .map(|(i, &(gpus, node))| {
            let mut pod = gpu_pod(s, &format!("{name}-{i}"), gpus, priority, created);
            pod.scheduling_group = Some(name.into());
            (pod, node)
        })
        .collect();
    run_on(s, placed);
}

/// Adds each pod pending with a node selector for its node and runs a cycle: they
/// are then running there.
fn run_on(s: &mut Scheduler, pods: Vec<(Pod, &str)>) {
    let mut keys = Vec::new();
    for (mut pod, node) in pods {
        pod.node_selector
            .insert("kubernetes.io/hostname".into(), node.into());
        keys.push((format!("{}/{}", pod.namespace, pod.name), node));
        s.add_pod(pod).unwrap();
    }
    let r = s.cycle();
    for (key, node) in keys {
        assert!(
            s.binding(&key).is_some_and(|b| b.node == node),
            "{key} not placed on {node}: {r:?}"
        );
    }
}

/// Nodes `n<i>` (label `kubernetes.io/hostname`, rack `r0`) with `gpus[i]` GPUs of
/// class `gpu`.
fn hosts(gpus: &[usize]) -> Scheduler {
    let mut c = gangpack::Cluster::new();
    c.put_class(gangpack::DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{}\"", common::DRIVER),
    ))
    .unwrap();
    for (i, &n) in gpus.iter().enumerate() {
        let name = format!("n{i}");
        c.add_node(
            gangpack::Node::new(&name)
                .with_label("rack", "r0")
                .with_label("kubernetes.io/hostname", &name)
                .with_allocatable("cpu", gangpack::Quantity::from_int(64))
                .with_allocatable("pods", gangpack::Quantity::from_int(110)),
        )
        .unwrap();
        c.add_slice(common::gpus(&name, n)).unwrap();
    }
    Scheduler::new(c, GangOptions::default())
}

fn victims_of(r: &gangpack::CycleReport) -> Vec<String> {
    let Some((_, UnitResult::Preempted(p))) = r.units.first() else {
        panic!("expected a preemption: {r:?}");
    };
    let mut pods: Vec<String> = p.victims.iter().flat_map(|v| v.pods.clone()).collect();
    pods.sort();
    pods
}

/// Runs `whole` (an `All`-mode gang at priority 0) on n0 and n1, two pods × 8 GPUs,
/// created at `created`.
fn running_whole(s: &mut Scheduler, name: &str, nodes: &[&str], gpus: u32, created: i64) {
    let mut g = PodGroup::new(
        NS,
        name,
        SchedulingPolicy::Gang {
            min_count: nodes.len() as u32,
        },
    );
    g.priority = Some(0);
    g.disruption_mode = DisruptionMode::All;
    g.creation = Time(created);
    s.add_group(g).unwrap();
    let pods: Vec<(Pod, &str)> = nodes
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            let mut pod = gpu_pod(s, &format!("{name}-{i}"), gpus, 0, created);
            pod.scheduling_group = Some(name.into());
            (pod, node)
        })
        .collect();
    run_on(s, pods);
}

#[test]
fn at_equal_priority_single_pods_go_before_an_all_mode_group() {
    // Issue 12's case, under issue 31's rule. n0 and n1 run the two pods of `whole`
    // (All, 8 GPUs each); n2 and n3 run `a` and `b` (Single, 4 pods × 2 GPUs each).
    // All at priority 0. A 16-GPU gang of 2 × 8 fits by evicting `whole` (2 pods) or
    // all of `a` and `b` (8 pods). Upstream removes every victim and reprieves the
    // most important first: `whole`, a PodGroup, outranks the individual pods of its
    // priority (gang.md 1.4: "sort the victims from most to least important: by
    // priority, and at equal priority PodGroups before single pods"), and the gang
    // still fits without it, so the eight pods go although they are more pods.
    let mut s = hosts(&[8, 8, 8, 8]);
    running_whole(&mut s, "whole", &["n0", "n1"], 8, 0);
    running_single(&mut s, "a", &[(2, "n2"); 4], 0, 0);
    running_single(&mut s, "b", &[(2, "n3"); 4], 0, 0);
    add_gang(
        &mut s,
        "high",
        DisruptionMode::All,
        &[8, 8],
        &[10, 10],
        2,
        HIGH,
        (false, false, false),
    );
    let r = s.cycle();
    assert_eq!(
        victims_of(&r),
        [
            "ns/a-0", "ns/a-1", "ns/a-2", "ns/a-3", "ns/b-0", "ns/b-1", "ns/b-2", "ns/b-3"
        ]
    );
}

#[test]
fn among_all_mode_groups_of_equal_priority_fewer_pods_win() {
    // The same cluster, but `a` and `b` are evicted whole too: every victim is a
    // PodGroup of priority 0, so upstream's importance order ties and gangpack's
    // least cost decides: `whole` (2 pods) rather than `a` and `b` (8 pods).
    let mut s = hosts(&[8, 8, 8, 8]);
    running_whole(&mut s, "whole", &["n0", "n1"], 8, 0);
    for (name, node) in [("a", "n2"), ("b", "n3")] {
        let mut g = PodGroup::new(NS, name, SchedulingPolicy::Gang { min_count: 4 });
        g.priority = Some(0);
        g.disruption_mode = DisruptionMode::All;
        s.add_group(g).unwrap();
        let pods: Vec<(Pod, &str)> = (0..4)
            .map(|i| {
                let mut pod = gpu_pod(&mut s, &format!("{name}-{i}"), 2, 0, 0);
                pod.scheduling_group = Some(name.into());
                (pod, node)
            })
            .collect();
        run_on(&mut s, pods);
    }
    add_gang(
        &mut s,
        "high",
        DisruptionMode::All,
        &[8, 8],
        &[10, 10],
        2,
        HIGH,
        (false, false, false),
    );
    let r = s.cycle();
    assert_eq!(victims_of(&r), ["ns/whole-0", "ns/whole-1"]);
}

/// n0 runs `group` (All, one pod × 8 GPUs, created at 5), n1 runs `solo` (a pod
/// without a group, 8 GPUs, created at 1), both at priority 0.
fn group_and_lone_pod() -> Scheduler {
    let mut s = hosts(&[8, 8]);
    running_whole(&mut s, "group", &["n0"], 8, 5);
    let solo = gpu_pod(&mut s, "solo", 8, 0, 1);
    run_on(&mut s, vec![(solo, "n1")]);
    s
}

#[test]
fn a_gang_preempts_the_lone_pod_rather_than_an_equal_priority_group() {
    // Issue 31's report: one victim is needed, and the `All`-mode group and the lone
    // pod would each free enough. By cost alone the group goes (one pod each, and it
    // started later); upstream's workload-aware preemption reprieves the PodGroup
    // first ("PodGroups are considered more important than individual Pods of the
    // same priority") and evicts the lone pod.
    let mut s = group_and_lone_pod();
    add_gang(
        &mut s,
        "high",
        DisruptionMode::All,
        &[8],
        &[10],
        1,
        HIGH,
        (false, false, false),
    );
    let r = s.cycle();
    assert_eq!(victims_of(&r), ["ns/solo"]);
}

#[test]
fn a_pod_preempts_by_cost_without_the_group_rule() {
    // The same cluster and a lone 8-GPU pod as preemptor: upstream's default (pod)
    // preemption compares per-node candidates by priority, priority sum, pod count
    // and start time, not by victim kind, so the group that started later goes.
    let mut s = group_and_lone_pod();
    let pod = gpu_pod(&mut s, "high", 8, HIGH, 10);
    s.add_pod(pod).unwrap();
    let r = s.cycle();
    assert_eq!(victims_of(&r), ["ns/group-0"]);
}

#[test]
fn with_many_victims_node_sets_are_weighed_too() {
    // More victims than the exhaustive search takes, all at priority 0. n0 runs a
    // 6-GPU pod and two 1-GPU pods; n1..n4 run four 2-GPU pods each. An 8-GPU pod fits
    // by clearing n0 (3 pods) or one of n1..n4 (4 pods). Taking the victims that free
    // the most per pod first clears n1 (the 6-GPU pod is reprieved); the node set n0
    // is cheaper.
    let mut s = hosts(&[8, 8, 8, 8, 8]);
    running_single(&mut s, "a", &[(6, "n0"), (1, "n0"), (1, "n0")], 0, 0);
    for (i, node) in ["n1", "n2", "n3", "n4"].into_iter().enumerate() {
        running_single(&mut s, &format!("b{i}"), &[(2, node); 4], 0, 0);
    }
    let pod = gpu_pod(&mut s, "high", 8, HIGH, 10);
    s.add_pod(pod).unwrap();
    let r = s.cycle();
    assert_eq!(victims_of(&r), ["ns/a-0", "ns/a-1", "ns/a-2"]);
}

#[test]
fn a_lower_priority_beats_fewer_pods() {
    // n0 runs `important` (All, priority 2, 1 pod × 8 GPUs); n1 runs `cheap` (Single,
    // priority 1, 4 pods × 2 GPUs). An 8-GPU pod goes where the victims' highest
    // priority is lowest, although that evicts four pods instead of one.
    let mut s = hosts(&[8, 8]);
    let mut g = PodGroup::new(NS, "important", SchedulingPolicy::Gang { min_count: 1 });
    g.priority = Some(2);
    g.disruption_mode = DisruptionMode::All;
    s.add_group(g).unwrap();
    let mut pod = gpu_pod(&mut s, "important-0", 8, 2, 0);
    pod.scheduling_group = Some("important".into());
    run_on(&mut s, vec![(pod, "n0")]);
    running_single(&mut s, "cheap", &[(2, "n1"); 4], 1, 0);
    let pod = gpu_pod(&mut s, "high", 8, HIGH, 10);
    s.add_pod(pod).unwrap();
    let r = s.cycle();
    assert_eq!(
        victims_of(&r),
        ["ns/cheap-0", "ns/cheap-1", "ns/cheap-2", "ns/cheap-3"]
    );
}

#[test]
fn equal_costs_evict_the_latest_started() {
    // Two single pods of 8 GPUs, same priority: the one created later goes.
    let mut s = hosts(&[8, 8]);
    let old = gpu_pod(&mut s, "old", 8, 0, 1);
    let young = gpu_pod(&mut s, "young", 8, 0, 5);
    run_on(&mut s, vec![(old, "n0"), (young, "n1")]);
    let pod = gpu_pod(&mut s, "high", 8, HIGH, 10);
    s.add_pod(pod).unwrap();
    let r = s.cycle();
    assert_eq!(victims_of(&r), ["ns/young"]);
}
