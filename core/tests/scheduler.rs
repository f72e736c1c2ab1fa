#![cfg(not(target_arch = "wasm32"))]
//! The scheduling lifecycle: cycles, all-or-nothing gangs, completion, and
//! workload-aware preemption.

mod common;

use common::*;
use gangpack::{
    ClaimSource, DisruptionMode, GangOptions, GangOutcome, Pod, PodGroup, PodResourceClaim,
    PreemptionPolicy, ResourceClaim, Scheduler, SchedulingPolicy, Unit, UnitResult,
    validate_placement,
};

/// Adds pod `ns/<pod_name>` of group `group` at `priority` with its own claim for
/// `gpus` GPUs; returns its key.
fn add_gpu_pod(s: &mut Scheduler, group: &str, pod_name: &str, gpus: u32, priority: i32) -> String {
    add_gpu_pod_with(
        s,
        group,
        pod_name,
        gpus,
        priority,
        PreemptionPolicy::PreemptLowerPriority,
    )
}

/// [`add_gpu_pod`] with the pod's `preemptionPolicy`.
fn add_gpu_pod_with(
    s: &mut Scheduler,
    group: &str,
    pod_name: &str,
    gpus: u32,
    priority: i32,
    policy: PreemptionPolicy,
) -> String {
    let (mut pod, claim) = gpu_pod(pod_name, gpus);
    pod.scheduling_group = Some(group.into());
    pod.priority = priority;
    pod.preemption_policy = policy;
    s.add_claim(claim).unwrap();
    s.add_pod(pod).unwrap();
    format!("ns/{pod_name}")
}

/// A gang `ns/<name>` of `n` pods with `gpus` GPUs each, at `priority`.
fn gang(
    s: &mut Scheduler,
    name: &str,
    n: usize,
    gpus: u32,
    priority: i32,
    mode: DisruptionMode,
) -> Vec<String> {
    let mut g = PodGroup::new(
        "ns",
        name,
        SchedulingPolicy::Gang {
            min_count: n as u32,
        },
    );
    g.priority = Some(priority);
    g.disruption_mode = mode;
    s.add_group(g).unwrap();
    (0..n)
        .map(|i| add_gpu_pod(s, name, &format!("{name}-{i}"), gpus, priority))
        .collect()
}

fn nodes(n: usize, gpus: usize) -> Vec<(String, String, usize)> {
    (0..n)
        .map(|i| (format!("n{i:03}"), format!("r{}", i / 8), gpus))
        .collect()
}

fn scheduler(n: usize, gpus: usize) -> Scheduler {
    let spec = nodes(n, gpus);
    let refs: Vec<(&str, &str, usize)> = spec
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), *c))
        .collect();
    Scheduler::new(rack_cluster(&refs, 64), GangOptions::default())
}

fn bound(s: &Scheduler, keys: &[String]) -> usize {
    keys.iter().filter(|k| s.binding(k).is_some()).count()
}

/// Every device held in the cluster belongs to a claim of a bound pod.
fn no_orphan_devices(s: &Scheduler) {
    let c = s.cluster();
    for slice in c.slices() {
        for d in &slice.devices {
            let r = gangpack::DeviceRef::new(&slice.driver, &slice.pool.name, &d.name);
            for h in c.allocations(&r) {
                let pod = h.consumer.trim_end_matches("-gpus");
                assert!(
                    s.binding(pod).is_some(),
                    "device {r} held by {} whose pod {pod} is not bound",
                    h.consumer
                );
            }
        }
    }
}

#[test]
fn two_hundred_pod_jobs_on_a_hundred_nodes_do_not_deadlock() {
    // Two jobs of 100 pods × 8 GPUs on 100 nodes × 8 GPUs: pod-by-pod scheduling
    // interleaves them and each holds half the cluster; gangpack places one whole.
    let mut s = scheduler(100, 8);
    let a = gang(&mut s, "a", 100, 8, 0, DisruptionMode::Single);
    let b = gang(&mut s, "b", 100, 8, 0, DisruptionMode::Single);
    let report = s.cycle();
    assert_eq!(report.units.len(), 2);
    assert_eq!(bound(&s, &a), 100);
    assert_eq!(bound(&s, &b), 0);
    assert!(matches!(
        &report.units[1],
        (Unit::Group(g), UnitResult::Pending(GangOutcome::Unschedulable { .. })) if g == "ns/b"
    ));
    no_orphan_devices(&s);
    // Job a completes: b goes next.
    for k in &a {
        s.remove_pod(k).unwrap();
    }
    assert_eq!(s.cluster().free_devices().len(), 800);
    s.cycle();
    assert_eq!(bound(&s, &b), 100);
    no_orphan_devices(&s);
}

#[test]
fn higher_priority_first_then_creation_then_name() {
    let mut s = scheduler(2, 8);
    let low = gang(&mut s, "low", 2, 8, 1, DisruptionMode::Single);
    let high = gang(&mut s, "high", 2, 8, 10, DisruptionMode::Single);
    let report = s.cycle();
    assert_eq!(report.units[0].0, Unit::Group("ns/high".into()));
    assert_eq!(bound(&s, &high), 2);
    assert_eq!(bound(&s, &low), 0);
}

#[test]
fn preemption_evicts_one_whole_low_priority_gang() {
    // 4 nodes × 8 GPUs full of two low-priority gangs (All mode) of 2 × 8; a
    // high-priority gang of 2 × 8 arrives: one whole gang is evicted, not one pod
    // of each.
    let mut s = scheduler(4, 8);
    let l1 = gang(&mut s, "l1", 2, 8, 1, DisruptionMode::All);
    let l2 = gang(&mut s, "l2", 2, 8, 1, DisruptionMode::All);
    s.cycle();
    assert_eq!(bound(&s, &l1) + bound(&s, &l2), 4);
    let h = gang(&mut s, "h", 2, 8, 100, DisruptionMode::All);
    let report = s.cycle();
    let (_, UnitResult::Preempted(p)) = report
        .units
        .iter()
        .find(|(u, _)| *u == Unit::Group("ns/h".into()))
        .unwrap()
    else {
        panic!("{report:?}")
    };
    assert_eq!(p.victims.len(), 1, "{p:?}");
    assert!(matches!(&p.victims[0].unit, Unit::Group(_)));
    assert_eq!(p.victims[0].pods.len(), 2);
    assert_eq!(p.victims[0].devices, 16);
    assert_eq!(bound(&s, &h), 2);
    // The other low gang is untouched; the victim is pending again, holding nothing.
    let (evicted, kept) = if bound(&s, &l1) == 0 {
        (&l1, &l2)
    } else {
        (&l2, &l1)
    };
    assert_eq!(bound(&s, kept), 2);
    assert_eq!(bound(&s, evicted), 0);
    no_orphan_devices(&s);
}

#[test]
fn no_eviction_when_preemption_cannot_make_room() {
    // The preemptor needs 5 × 8 GPUs on a cluster of 4 × 8: evicting everything would
    // not help, so nothing is evicted.
    let mut s = scheduler(4, 8);
    let low = gang(&mut s, "low", 4, 8, 1, DisruptionMode::Single);
    s.cycle();
    assert_eq!(bound(&s, &low), 4);
    let mut g = PodGroup::new("ns", "big", SchedulingPolicy::Gang { min_count: 5 });
    g.priority = Some(100);
    s.add_group(g).unwrap();
    for i in 0..5 {
        add_gpu_pod(&mut s, "big", &format!("big-{i}"), 8, 100);
    }
    let report = s.cycle();
    assert!(
        report
            .units
            .iter()
            .all(|(_, r)| !matches!(r, UnitResult::Preempted(_))),
        "{report:?}"
    );
    assert_eq!(bound(&s, &low), 4);
}

#[test]
fn preemption_policy_never_is_respected() {
    let mut s = scheduler(2, 8);
    let low = gang(&mut s, "low", 2, 8, 1, DisruptionMode::All);
    s.cycle();
    let mut g = PodGroup::new("ns", "polite", SchedulingPolicy::Gang { min_count: 1 });
    g.priority = Some(100);
    g.preemption_policy = Some(PreemptionPolicy::Never);
    s.add_group(g).unwrap();
    add_gpu_pod_with(
        &mut s,
        "polite",
        "polite-0",
        8,
        100,
        PreemptionPolicy::Never,
    );
    let report = s.cycle();
    assert!(matches!(
        &report.units[0].1,
        UnitResult::Pending(GangOutcome::Unschedulable { .. })
    ));
    assert_eq!(bound(&s, &low), 2);
}

/// Issue 31: which `preemptionPolicy` decides for a PodGroup. Kubernetes 1.37's
/// scheduler with its default gates (`PodGroupPreemptionPolicy` off) takes the pods'
/// shared policy and does not read the PodGroup's; with the gate on the PodGroup's
/// decides and every pod must have it, else the group fails (`SchedulerError`).
/// `shared/spec/gang.md` 1.6.3: "Fail a group whose members disagree on
/// `schedulerName`, priority value or `preemptionPolicy`, as upstream does".
#[test]
fn the_pods_preemption_policy_decides_unless_the_pod_group_gate_is_on() {
    // `polite` says Never at the group, its pod PreemptLowerPriority (or Never).
    let run = |gate: bool, pod_policy: PreemptionPolicy| {
        let mut s = scheduler(2, 8);
        s = Scheduler::new(
            s.cluster().clone(),
            GangOptions {
                pod_group_preemption_policy: gate,
                ..GangOptions::default()
            },
        );
        let low = gang(&mut s, "low", 2, 8, 1, DisruptionMode::All);
        s.cycle();
        let mut g = PodGroup::new("ns", "polite", SchedulingPolicy::Gang { min_count: 1 });
        g.priority = Some(100);
        g.preemption_policy = Some(PreemptionPolicy::Never);
        s.add_group(g).unwrap();
        add_gpu_pod_with(&mut s, "polite", "polite-0", 8, 100, pod_policy);
        let report = s.cycle();
        (report.units[0].1.clone(), bound(&s, &low))
    };
    // Gate off: the pod's PreemptLowerPriority decides; `low` goes whole.
    let (result, low) = run(false, PreemptionPolicy::PreemptLowerPriority);
    assert!(matches!(result, UnitResult::Preempted(_)), "{result:?}");
    assert_eq!(low, 0);
    // Gate off, the pod says Never: no preemption.
    let (result, low) = run(false, PreemptionPolicy::Never);
    assert!(
        matches!(
            result,
            UnitResult::Pending(GangOutcome::Unschedulable { .. })
        ),
        "{result:?}"
    );
    assert_eq!(low, 2);
    // Gate on: the pod must have the group's Never; it does not, so the group fails.
    let (result, low) = run(true, PreemptionPolicy::PreemptLowerPriority);
    let UnitResult::Invalid(errs) = &result else {
        panic!("{result:?}");
    };
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "spec.preemptionPolicy");
    assert_eq!(low, 2);
    // Gate on, both Never: a valid group that may not preempt.
    let (result, low) = run(true, PreemptionPolicy::Never);
    assert!(
        matches!(
            result,
            UnitResult::Pending(GangOutcome::Unschedulable { .. })
        ),
        "{result:?}"
    );
    assert_eq!(low, 2);
}

#[test]
fn single_mode_victims_above_min_count_go_first() {
    // An elastic low gang: minCount 2, 4 pods running (2 extra). A high pod needing
    // one node's GPUs takes an extra pod's node, not a pod the gang needs.
    let mut s = scheduler(4, 8);
    let mut g = PodGroup::new("ns", "elastic", SchedulingPolicy::Gang { min_count: 2 });
    g.priority = Some(1);
    s.add_group(g).unwrap();
    let keys: Vec<String> = (0..4)
        .map(|i| add_gpu_pod(&mut s, "elastic", &format!("elastic-{i}"), 8, 1))
        .collect();
    s.cycle();
    assert_eq!(bound(&s, &keys), 4);
    let h = gang(&mut s, "h", 1, 8, 100, DisruptionMode::Single);
    let report = s.cycle();
    let Some((_, UnitResult::Preempted(p))) = report
        .units
        .iter()
        .find(|(u, _)| *u == Unit::Group("ns/h".into()))
    else {
        panic!("{report:?}")
    };
    assert_eq!(p.victims.len(), 1);
    assert_eq!(bound(&s, &h), 1);
    assert_eq!(bound(&s, &keys), 3);
}

#[test]
fn placements_validate_against_the_state_before_them() {
    let mut s = scheduler(8, 8);
    gang(&mut s, "a", 3, 4, 0, DisruptionMode::Single);
    gang(&mut s, "b", 5, 2, 0, DisruptionMode::Single);
    let before = s.clone();
    let report = s.cycle();
    // Re-check the first unit's decision on the state it was made against.
    let (Unit::Group(g), UnitResult::Scheduled(d)) = &report.units[0] else {
        panic!("{report:?}")
    };
    let group = before.group(g).unwrap();
    let pods: Vec<Pod> = before.pods().cloned().collect();
    let claims: Vec<ResourceClaim> = before.claims().cloned().collect();
    assert_eq!(
        validate_placement(before.cluster(), Some(group), &pods, &claims, d),
        []
    );
}

#[test]
fn the_same_calls_give_the_same_state() {
    let run = || {
        let mut s = scheduler(6, 8);
        gang(&mut s, "a", 3, 8, 0, DisruptionMode::All);
        gang(&mut s, "b", 4, 4, 5, DisruptionMode::Single);
        gang(&mut s, "c", 2, 8, 9, DisruptionMode::All);
        let r1 = s.cycle();
        let r2 = s.cycle();
        (format!("{r1:?}{r2:?}"), observe(s.cluster()))
    };
    assert_eq!(run(), run());
}

#[test]
fn a_unit_with_a_missing_claim_fails_alone() {
    let mut s = scheduler(2, 8);
    let ok = gang(&mut s, "ok", 1, 8, 0, DisruptionMode::Single);
    let mut g = PodGroup::new("ns", "broken", SchedulingPolicy::Gang { min_count: 1 });
    g.priority = Some(10);
    s.add_group(g).unwrap();
    let mut pod = Pod::new("ns", "broken-0");
    pod.scheduling_group = Some("broken".into());
    pod.priority = 10;
    pod.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName("nowhere".into()),
    });
    s.add_pod(pod).unwrap();
    let report = s.cycle();
    assert!(
        matches!(&report.units[0], (Unit::Group(g), UnitResult::Failed(_)) if g == "ns/broken"),
        "{report:?}"
    );
    assert!(s.binding("ns/broken-0").is_none());
    assert_eq!(bound(&s, &ok), 1);
}

/// A pod without a PodGroup at `priority` with its own claim for `gpus` GPUs.
fn add_standalone_pod(s: &mut Scheduler, name: &str, gpus: u32, priority: i32) -> String {
    let key = add_gpu_pod(s, "unused", name, gpus, priority);
    // `add_gpu_pod` names a group; a standalone pod has none: re-add it without.
    let mut pod = s.remove_pod(&key).unwrap();
    pod.scheduling_group = None;
    s.add_pod(pod).unwrap();
    key
}

#[test]
fn a_standalone_pod_that_fits_nowhere_is_pending_and_preempts_a_lower_one() {
    let mut s = scheduler(1, 8);
    let low = add_standalone_pod(&mut s, "low", 8, 0);
    s.cycle();
    assert!(s.binding(&low).is_some());
    // Same priority: nothing to preempt, so it stays pending (not "scheduled" with an
    // empty decision).
    let same = add_standalone_pod(&mut s, "same", 8, 0);
    let report = s.cycle();
    assert_eq!(report.units.len(), 1);
    assert_eq!(
        report.units[0],
        (
            Unit::Pod(same.clone()),
            UnitResult::Pending(GangOutcome::Unschedulable {
                required: 1,
                best: 0
            })
        )
    );
    let why = s.explain(&Unit::Pod(same.clone())).unwrap();
    assert!(why.summary().contains("0 of 1"), "{}", why.summary());
    s.remove_pod(&same).unwrap();
    // Higher priority: the lower pod is preempted, one pod for one pod.
    let high = add_standalone_pod(&mut s, "high", 8, 10);
    let report = s.cycle();
    let (_, UnitResult::Preempted(p)) = &report.units[0] else {
        panic!("expected a preemption: {report:#?}");
    };
    assert_eq!(p.victims.len(), 1);
    assert_eq!(p.victims[0].unit, Unit::Pod(low.clone()));
    assert!(s.binding(&high).is_some());
    assert!(s.binding(&low).is_none());
}

#[test]
fn what_it_takes_names_the_least_preemption_and_the_missing_devices() {
    // 4 nodes × 8 GPUs; a low-priority All gang holds 2 nodes; a 3 × 8 gang at
    // priority 10 needs one node more than is free.
    let mut s = scheduler(4, 8);
    let low = gang(&mut s, "low", 2, 8, 0, DisruptionMode::All);
    let bystander = gang(&mut s, "other", 1, 4, 0, DisruptionMode::All);
    s.cycle();
    assert_eq!(bound(&s, &low) + bound(&s, &bystander), 3);
    let high = gang(&mut s, "high", 3, 8, 10, DisruptionMode::All);
    let before = s.clone();
    let unit = Unit::Group("ns/high".into());
    let w = s.what_it_takes(&unit).unwrap();
    assert!(!w.fits_now && !w.waiting_for_pods && w.may_preempt);
    // Nothing changed.
    assert_eq!(bound(&s, &low), 2);
    assert_eq!(bound(&s, &high), 0);
    assert_eq!(s.cluster().free_devices(), before.cluster().free_devices());
    // The least preemption: the 4-GPU gang does not make room for an 8-GPU pod on its
    // own; the 2-node gang does (and is all that is evicted after the reprieve).
    let p = w.preemption.as_ref().expect("a preemption exists");
    let victims: Vec<&Unit> = p.victims.iter().map(|v| &v.unit).collect();
    assert_eq!(victims, [&Unit::Group("ns/low".into())]);
    assert_eq!(p.decision.bindings.len(), 3);
    // By count: one node is entirely free (the 4-GPU gang's node has 4 free), so 1 of
    // the 3 pods fits; 2 pods × 8 GPUs are missing.
    assert_eq!(w.domains.len(), 1);
    let d = &w.domains[0];
    assert_eq!((d.domain.as_deref(), d.required, d.fit), (None, 3, 1));
    assert_eq!(d.missing_devices(), 16);
    assert_eq!(d.missing[0].example, "ns/high-0");
    let text = w.to_string();
    assert!(
        text.contains("preempt 1 unit of lower priority (2 pods, 16 devices)"),
        "{text}"
    );
    assert!(
        text.contains("1 of 3 pods fit; at least 16 more free devices needed"),
        "{text}"
    );
    // What a cycle then does is exactly that preemption.
    let report = s.cycle();
    let (_, UnitResult::Preempted(done)) = &report.units[0] else {
        panic!("expected a preemption: {report:#?}");
    };
    assert_eq!(done, p);
}

#[test]
fn what_it_takes_without_lower_priority_victims_or_with_never() {
    let mut s = scheduler(2, 8);
    gang(&mut s, "a", 2, 8, 5, DisruptionMode::All);
    s.cycle();
    // Equal priority: no victim.
    gang(&mut s, "b", 1, 8, 5, DisruptionMode::All);
    let w = s.what_it_takes(&Unit::Group("ns/b".into())).unwrap();
    assert!(w.preemption.is_none());
    assert!(w.to_string().contains("would not help"), "{w}");
    // Higher priority but Never (the pods' policy, which decides without the
    // PodGroupPreemptionPolicy gate): the preemption is reported, flagged as not taken.
    let mut g = PodGroup::new("ns", "c", SchedulingPolicy::Gang { min_count: 1 });
    g.priority = Some(50);
    s.add_group(g).unwrap();
    add_gpu_pod_with(&mut s, "c", "c-0", 8, 50, PreemptionPolicy::Never);
    let w = s.what_it_takes(&Unit::Group("ns/c".into())).unwrap();
    assert!(!w.may_preempt);
    assert!(w.preemption.is_some());
    assert!(w.to_string().contains("preemptionPolicy is Never"), "{w}");
    // A unit that fits now needs nothing; an unknown one is an error.
    s.remove_group("ns/a").unwrap();
    let w = s.what_it_takes(&Unit::Group("ns/b".into())).unwrap();
    assert!(w.fits_now && w.preemption.is_none() && w.domains.is_empty());
    assert!(s.what_it_takes(&Unit::Group("ns/nope".into())).is_err());
}

#[test]
fn running_pods_added_bound_release_their_claims() {
    // A scheduler started on a running cluster (as an adapter loads one): its claims
    // come with `status.allocation`, its pods with `nodeName`.
    let mut before = scheduler(2, 8);
    let run = add_standalone_pod(&mut before, "run", 8, 0);
    let members = gang(&mut before, "old", 1, 8, 0, DisruptionMode::All);
    before.cycle();
    assert_eq!(before.cluster().free_devices().len(), 0);
    let load = || {
        // Devices stay held by their claims; node reservations are made again by
        // `add_pod`.
        let mut cluster = before.cluster().clone();
        for p in before.pods() {
            cluster
                .release_node_resources(p.node_name.as_deref().unwrap(), &format!("ns/{}", p.name))
                .unwrap();
        }
        let mut s = Scheduler::new(cluster, GangOptions::default());
        let mut g = PodGroup::new("ns", "old", SchedulingPolicy::Gang { min_count: 1 });
        g.priority = Some(0);
        g.disruption_mode = DisruptionMode::All;
        s.add_group(g).unwrap();
        for c in before.claims() {
            assert!(c.allocation.is_some());
            s.add_claim(c.clone()).unwrap();
        }
        for p in before.pods() {
            assert!(p.node_name.is_some());
            s.add_pod(p.clone()).unwrap();
        }
        s
    };
    // Completing a running pod frees its devices.
    let mut s = load();
    s.remove_pod(&run).unwrap();
    assert_eq!(s.cluster().free_devices().len(), 8);
    assert!(s.allocation("ns/run-gpus").is_none());
    // A higher-priority gang preempts both running units and gets their devices.
    let mut s = load();
    let high = gang(&mut s, "high", 2, 8, 10, DisruptionMode::All);
    let report = s.cycle();
    let (_, UnitResult::Preempted(p)) = &report.units[0] else {
        panic!("expected a preemption: {report:#?}");
    };
    assert_eq!(p.victims.len(), 2);
    assert_eq!(bound(&s, &high), 2);
    assert_eq!(
        bound(&s, &members) + bound(&s, std::slice::from_ref(&run)),
        0
    );
    assert!(s.allocation(&format!("{}-gpus", members[0])).is_none());
}

/// A cycle over many pending gangs of few shapes, most of which do not fit, gives
/// what it gives when no two units are alike: the equivalence cache (an equal unit
/// that stayed pending earlier in the cycle answers for the next, until a placement
/// may have touched its candidates) changes no outcome. Each unit of the reference
/// run carries a toleration of its own for a taint no node has, which changes no
/// placement but makes every unit unlike the others. (Debug builds also recompute
/// every cached answer.)
#[test]
fn equal_pending_units_get_the_outcome_a_search_gives() {
    // Priority 5: nothing to preempt. Priority -1: every unit that does not fit
    // searches for victims.
    for base in [5, -1] {
        equal_pending_units_with(base);
    }
}

/// Gives each pod of `keys` a toleration of unit `i`'s own (for a taint no node has):
/// no placement changes, but the unit is like no other.
fn tolerate_own_taint(s: &mut Scheduler, keys: &[String], i: usize) {
    for k in keys {
        let mut pod = s.pod(k).unwrap().clone();
        s.remove_pod(k).unwrap();
        pod.tolerations.push(gangpack::Toleration {
            key: format!("unit-{i}"),
            operator: gangpack::TolerationOperator::Exists,
            ..Default::default()
        });
        s.add_pod(pod).unwrap();
    }
}

/// One cycle's unit results, and every pod's node after it.
type CycleOutcome = (Vec<(Unit, UnitResult)>, Vec<(String, Option<String>)>);

/// One cycle's [`CycleOutcome`].
fn cycle_and_placements(s: &mut Scheduler) -> CycleOutcome {
    let report = s.cycle();
    let placements = s
        .pods()
        .map(|p| (p.name.clone(), p.node_name.clone()))
        .collect();
    (report.units, placements)
}

fn equal_pending_units_with(base: i32) {
    let run = |distinct: bool| {
        let mut s = scheduler(24, 4);
        // Some GPUs taken first, unevenly.
        for i in 0..10 {
            gang(
                &mut s,
                &format!("a-{i:02}"),
                1 + i % 3,
                1 + (i as u32 % 3),
                base,
                DisruptionMode::Single,
            );
        }
        s.cycle();
        let mut x: u64 = 7;
        for i in 0..120 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let pods = [1, 2, 4, 6][(x >> 33) as usize % 4];
            let gpus = [1, 2, 3, 4][(x >> 40) as usize % 4];
            let name = format!("u-{i:03}");
            let keys = gang(&mut s, &name, pods, gpus, 0, DisruptionMode::Single);
            if distinct {
                tolerate_own_taint(&mut s, &keys, i);
            }
        }
        cycle_and_placements(&mut s)
    };
    let (cached, placed) = run(false);
    let (reference, placed_ref) = run(true);
    let pending = cached
        .iter()
        .filter(|(_, r)| matches!(r, UnitResult::Pending(_)))
        .count();
    let scheduled = cached
        .iter()
        .filter(|(_, r)| matches!(r, UnitResult::Scheduled(_)))
        .count();
    assert!(
        pending > 40 && scheduled > 5,
        "{pending} pending, {scheduled} placed"
    );
    assert_eq!(cached, reference);
    assert_eq!(placed, placed_ref);
}

/// The cycle's memo of counted candidates (`count_memo.rs`) changes no placement over
/// a long cycle: hundreds of placements of a few shapes, one of them rare, so that
/// entries lag behind the log of changed nodes, the log is trimmed, and a lagging
/// entry scans again. The reference run gives every unit a toleration of its own (for
/// a taint no node has), so no two units share a memo entry. (Debug builds also
/// count every node beside each memo answer.)
#[test]
fn a_long_cycle_places_as_fresh_counts_do() {
    let run = |distinct: bool| {
        let mut s = scheduler(160, 4);
        let mut x: u64 = 11;
        for i in 0..420 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Every 50th unit is the rare shape (3 pods of 3 GPUs).
            let (pods, gpus) = if i % 50 == 49 {
                (3, 3)
            } else {
                (
                    [1, 2][(x >> 33) as usize % 2],
                    [1, 2][(x >> 40) as usize % 2],
                )
            };
            let name = format!("u-{i:03}");
            let keys = gang(&mut s, &name, pods, gpus, 0, DisruptionMode::Single);
            if distinct {
                tolerate_own_taint(&mut s, &keys, i);
            }
        }
        cycle_and_placements(&mut s)
    };
    let (memo, placed) = run(false);
    let (reference, placed_ref) = run(true);
    let scheduled = memo
        .iter()
        .filter(|(_, r)| matches!(r, UnitResult::Scheduled(_)))
        .count();
    let pending = memo.len() - scheduled;
    assert!(
        scheduled > 250 && pending > 20,
        "{scheduled} placed, {pending} pending"
    );
    assert_eq!(memo, reference);
    assert_eq!(placed, placed_ref);
}
