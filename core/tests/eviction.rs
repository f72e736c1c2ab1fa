#![cfg(not(target_arch = "wasm32"))]
//! NoExecute eviction through the scheduler (`shared/spec/dra.md` sections 2.4 to 2.6):
//! device taints and DeviceTaintRules on running gangs, `disruptionMode: All`,
//! `tolerationSeconds`, cancellation, node taints, the empty-effect toleration quirk,
//! and the dry run of a rule with effect `None` with its blast radius.

mod common;

use common::*;
use gangpack::{
    AllocationMode, BrokenGroup, ClaimSource, DeviceRef, DeviceRequest, DeviceTaintEffect,
    DeviceTaintRule, DeviceTaintSelector, DeviceToleration, DeviceTolerationOperator,
    DisruptionMode, DryRunReport, EvictionReason, ExactDeviceRequest, GangOptions, Pod,
    PodEviction, PodGroup, PodGroupResourceClaim, PodResourceClaim, ResourceClaim, Scheduler,
    SchedulingPolicy, Taint, TaintEffect, Time, Toleration, TolerationOperator,
};

const NS: &str = "ns";

fn scheduler(nodes: &[(&str, &str, usize)]) -> Scheduler {
    Scheduler::new(rack_cluster(nodes, 64), GangOptions::default())
}

/// A claim `ns/<name>` for `gpus` GPUs whose request carries `tolerations`.
fn gpu_claim(
    namespace: &str,
    name: &str,
    gpus: u32,
    tolerations: Vec<DeviceToleration>,
) -> ResourceClaim {
    let mut request = ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(gpus));
    request.tolerations = tolerations;
    let mut claim = ResourceClaim::new(namespace, name);
    claim
        .spec
        .requests
        .push(DeviceRequest::exactly("gpus", request));
    claim
}

/// A pod `<namespace>/<name>` with its own claim `<name>-gpus` (when `gpus > 0`), in
/// `group` if given, restricted to `rack` if given. Returns its key.
fn pod(
    s: &mut Scheduler,
    namespace: &str,
    name: &str,
    group: Option<&str>,
    rack: Option<&str>,
    gpus: u32,
    tolerations: Vec<DeviceToleration>,
) -> String {
    let mut p = Pod::new(namespace, name);
    p.scheduling_group = group.map(Into::into);
    if let Some(r) = rack {
        p.node_selector.insert("rack".into(), r.into());
    }
    if gpus > 0 {
        let claim = gpu_claim(namespace, &format!("{name}-gpus"), gpus, tolerations);
        p.resource_claims.push(PodResourceClaim {
            name: "gpus".into(),
            source: ClaimSource::ClaimName(claim.name.clone()),
        });
        s.add_claim(claim).unwrap();
    }
    s.add_pod(p).unwrap();
    format!("{namespace}/{name}")
}

fn group(s: &mut Scheduler, name: &str, min_count: u32, mode: DisruptionMode) {
    let mut g = PodGroup::new(NS, name, SchedulingPolicy::Gang { min_count });
    g.disruption_mode = mode;
    s.add_group(g).unwrap();
}

/// A gang `ns/<name>` of `n` pods with `gpus` GPUs each (their requests carrying
/// `tolerations`), scheduled. Returns the pod keys.
fn gang(
    s: &mut Scheduler,
    name: &str,
    n: usize,
    min_count: u32,
    gpus: u32,
    mode: DisruptionMode,
    tolerations: &[DeviceToleration],
) -> Vec<String> {
    group(s, name, min_count, mode);
    let pods = (0..n)
        .map(|i| {
            let pod_name = format!("{name}-{i}");
            pod(
                s,
                NS,
                &pod_name,
                Some(name),
                None,
                gpus,
                tolerations.to_vec(),
            )
        })
        .collect();
    s.cycle();
    pods
}

/// The devices allocated to a claim.
fn devices_of(s: &Scheduler, claim: &str) -> Vec<DeviceRef> {
    s.allocation(claim)
        .unwrap_or_else(|| panic!("{claim} is not allocated"))
        .devices
        .iter()
        .map(|r| DeviceRef::new(&r.driver, &r.pool, &r.device))
        .collect()
}

fn no_execute_toleration(key: &str, seconds: Option<i64>) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::Exists,
        effect: Some(DeviceTaintEffect::NoExecute),
        toleration_seconds: seconds,
        ..DeviceToleration::default()
    }
}

fn device_taint(claim: &str, key: &str) -> EvictionReason {
    EvictionReason::DeviceTaint {
        claim: claim.into(),
        taint: format!("{key}:NoExecute"),
    }
}

fn member(group: &str) -> EvictionReason {
    EvictionReason::GroupMember {
        group: group.into(),
    }
}

fn eviction(at: i64, pod: &str, reason: EvictionReason) -> PodEviction {
    PodEviction {
        at: Time(at),
        pod: pod.into(),
        reason,
    }
}

fn bound(s: &Scheduler, pods: &[String]) -> Vec<String> {
    pods.iter()
        .filter(|p| s.binding(p).is_some())
        .cloned()
        .collect()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn no_execute_taint_on_one_gpu_evicts_a_whole_all_mode_gang_at_time_added() {
    // Two nodes × 4 GPUs, a gang of 2 pods × 4 GPUs: one pod per node.
    let mut s = scheduler(&[("n0", "r0", 4), ("n1", "r0", 4)]);
    let pods = gang(&mut s, "train", 2, 2, 4, DisruptionMode::All, &[]);
    assert_eq!(bound(&s, &pods), pods);
    assert_eq!(s.cluster().free_devices().len(), 0);
    s.advance(Time(1000));

    // One GPU of train-1 fails; the taint is stamped with the clock.
    let gpu = devices_of(&s, "ns/train-1-gpus")[2].clone();
    let mut t = taint("gpu.example.com/xid", "", DeviceTaintEffect::NoExecute, 0);
    t.time_added = None;
    let report = s.taint_device(&gpu, t).unwrap();
    assert_eq!(
        report.started,
        vec![
            eviction(1000, "ns/train-0", member("ns/train")),
            eviction(
                1000,
                "ns/train-1",
                device_taint("ns/train-1-gpus", "gpu.example.com/xid")
            ),
        ]
    );
    assert!(report.cancelled.is_empty());
    assert_eq!(
        report.broken_groups,
        vec![BrokenGroup {
            group: "ns/train".into(),
            evicted: pods.clone(),
            left: vec![],
            min_count: 2,
            whole: true,
        }]
    );
    // Nothing happens before the clock is advanced.
    assert_eq!(s.scheduled_evictions(), report.started);
    assert_eq!(bound(&s, &pods), pods);

    // Due now: the next advance, even to the same time, carries it out.
    let done = s.advance(Time(1000));
    assert_eq!(done, report.started);
    for p in &pods {
        assert!(s.pod(p).is_none(), "{p} deleted");
    }
    assert_eq!(s.cluster().free_devices().len(), 8);
    for n in ["n0", "n1"] {
        for g in 0..4 {
            assert!(
                s.cluster()
                    .allocations(&dref(n, &format!("gpu-{g}")))
                    .is_empty()
            );
        }
    }
    assert!(s.allocation("ns/train-0-gpus").is_none());
    assert!(s.allocation("ns/train-1-gpus").is_none());
    assert!(s.scheduled_evictions().is_empty());
    assert!(s.advance(Time(5000)).is_empty());
}

#[test]
fn toleration_seconds_delay_the_whole_gang_and_the_earliest_taint_wins() {
    let mut s = scheduler(&[("n0", "r0", 4), ("n1", "r0", 4)]);
    let tolerations = [
        no_execute_toleration("gpu.example.com/xid", Some(300)),
        no_execute_toleration("gpu.example.com/thermal", Some(60)),
    ];
    let pods = gang(&mut s, "train", 2, 2, 4, DisruptionMode::All, &tolerations);
    assert_eq!(bound(&s, &pods), pods);
    s.advance(Time(1000));
    let xid = devices_of(&s, "ns/train-0-gpus")[0].clone();
    let report = s
        .taint_device(
            &xid,
            taint(
                "gpu.example.com/xid",
                "",
                DeviceTaintEffect::NoExecute,
                1000,
            ),
        )
        .unwrap();
    assert_eq!(
        report.started,
        vec![
            eviction(
                1300,
                "ns/train-0",
                device_taint("ns/train-0-gpus", "gpu.example.com/xid")
            ),
            eviction(1300, "ns/train-1", member("ns/train")),
        ]
    );
    assert!(s.advance(Time(1200)).is_empty());
    assert_eq!(bound(&s, &pods), pods);

    // A second taint on another device of the same claim, tolerated for 60 s only,
    // brings the claim (and the gang) forward: 1200 + 60 < 1300.
    let thermal = devices_of(&s, "ns/train-0-gpus")[3].clone();
    let report = s
        .taint_device(
            &thermal,
            taint(
                "gpu.example.com/thermal",
                "",
                DeviceTaintEffect::NoExecute,
                1200,
            ),
        )
        .unwrap();
    assert_eq!(
        report.started,
        vec![
            eviction(
                1260,
                "ns/train-0",
                device_taint("ns/train-0-gpus", "gpu.example.com/thermal")
            ),
            eviction(1260, "ns/train-1", member("ns/train")),
        ]
    );
    assert!(s.advance(Time(1259)).is_empty());
    let done = s.advance(Time(1260));
    assert_eq!(done, report.started);
    assert!(bound(&s, &pods).is_empty());
    assert_eq!(s.cluster().free_devices().len(), 8);
}

#[test]
fn removing_the_taint_before_the_deadline_cancels() {
    let mut s = scheduler(&[("n0", "r0", 4), ("n1", "r0", 4)]);
    let tolerations = [no_execute_toleration("gpu.example.com/xid", Some(300))];
    let pods = gang(&mut s, "train", 2, 2, 4, DisruptionMode::All, &tolerations);
    s.advance(Time(1000));
    let gpu = devices_of(&s, "ns/train-1-gpus")[1].clone();
    let started = s
        .taint_device(
            &gpu,
            taint(
                "gpu.example.com/xid",
                "",
                DeviceTaintEffect::NoExecute,
                1000,
            ),
        )
        .unwrap()
        .started;
    assert_eq!(started.len(), 2);
    assert!(s.advance(Time(1200)).is_empty());

    let report = s.untaint_device(&gpu, "gpu.example.com/xid", None).unwrap();
    assert!(report.started.is_empty());
    assert_eq!(report.cancelled, started);
    assert!(report.broken_groups.is_empty());
    assert!(s.scheduled_evictions().is_empty());
    assert!(s.advance(Time(10_000)).is_empty());
    assert_eq!(bound(&s, &pods), pods);

    // The same with a DeviceTaintRule over the pool of train-0's GPUs.
    let pool = devices_of(&s, "ns/train-0-gpus")[0].pool.clone();
    let rule = DeviceTaintRule {
        name: "drain".into(),
        selector: Some(DeviceTaintSelector {
            pool: Some(pool),
            ..DeviceTaintSelector::default()
        }),
        taint: taint(
            "gpu.example.com/xid",
            "",
            DeviceTaintEffect::NoExecute,
            10_000,
        ),
    };
    let started = s.add_taint_rule(rule).unwrap().started;
    assert_eq!(
        started.iter().map(|e| e.at).collect::<Vec<_>>(),
        [Time(10_300), Time(10_300)]
    );
    assert!(s.advance(Time(10_299)).is_empty());
    let (_, report) = s.remove_taint_rule("drain").unwrap();
    assert_eq!(report.cancelled, started);
    assert!(s.advance(Time(20_000)).is_empty());
    assert_eq!(bound(&s, &pods), pods);
}

#[test]
fn single_mode_gang_loses_only_the_pod_on_the_device_and_is_reported_broken_below_min_count() {
    // Three pods × 2 GPUs, minCount 2, on one node of 8 GPUs.
    let mut s = scheduler(&[("n0", "r0", 8)]);
    let pods = gang(&mut s, "elastic", 3, 2, 2, DisruptionMode::Single, &[]);
    assert_eq!(bound(&s, &pods), pods);
    s.advance(Time(50));

    let first = devices_of(&s, "ns/elastic-1-gpus")[0].clone();
    let report = s
        .taint_device(&first, taint("bad", "", DeviceTaintEffect::NoExecute, 50))
        .unwrap();
    assert_eq!(
        report.started,
        vec![eviction(
            50,
            "ns/elastic-1",
            device_taint("ns/elastic-1-gpus", "bad")
        )]
    );
    // Two of three left: still at minCount.
    assert!(report.broken_groups.is_empty());

    let second = devices_of(&s, "ns/elastic-2-gpus")[1].clone();
    let report = s
        .taint_device(&second, taint("bad", "", DeviceTaintEffect::NoExecute, 60))
        .unwrap();
    assert_eq!(
        report.started,
        vec![eviction(
            60,
            "ns/elastic-2",
            device_taint("ns/elastic-2-gpus", "bad")
        )]
    );
    assert_eq!(
        report.broken_groups,
        vec![BrokenGroup {
            group: "ns/elastic".into(),
            evicted: strings(&["ns/elastic-1", "ns/elastic-2"]),
            left: strings(&["ns/elastic-0"]),
            min_count: 2,
            whole: false,
        }]
    );
    let done = s.advance(Time(60));
    assert_eq!(
        done.iter().map(|e| e.pod.as_str()).collect::<Vec<_>>(),
        ["ns/elastic-1", "ns/elastic-2"]
    );
    assert_eq!(bound(&s, &pods), strings(&["ns/elastic-0"]));
    assert_eq!(s.cluster().free_devices().len(), 6);
}

#[test]
fn a_member_that_does_not_name_the_group_claim_is_not_evicted() {
    // A PodGroup claim `fabric` (1 GPU); leader names it, worker does not. Both have
    // their own GPU.
    let mut s = scheduler(&[("n0", "r0", 8)]);
    let mut g = PodGroup::new(NS, "job", SchedulingPolicy::Gang { min_count: 2 });
    g.resource_claims.push(PodGroupResourceClaim {
        name: "fabric".into(),
        source: ClaimSource::ClaimName("fabric".into()),
    });
    s.add_group(g).unwrap();
    s.add_claim(gpu_claim(NS, "fabric", 1, vec![])).unwrap();
    let worker = pod(&mut s, NS, "worker", Some("job"), None, 1, vec![]);
    s.add_claim(gpu_claim(NS, "leader-gpus", 1, vec![]))
        .unwrap();
    let mut p = Pod::new(NS, "leader");
    p.scheduling_group = Some("job".into());
    for (name, claim) in [("gpus", "leader-gpus"), ("fabric", "fabric")] {
        p.resource_claims.push(PodResourceClaim {
            name: name.into(),
            source: ClaimSource::ClaimName(claim.into()),
        });
    }
    s.add_pod(p).unwrap();
    let leader = "ns/leader".to_owned();
    s.cycle();
    assert!(s.binding(&leader).is_some() && s.binding(&worker).is_some());

    let fabric = devices_of(&s, "ns/fabric")[0].clone();
    let report = s
        .taint_device(
            &fabric,
            taint("link-down", "", DeviceTaintEffect::NoExecute, 0),
        )
        .unwrap();
    assert_eq!(
        report.started,
        vec![eviction(
            0,
            "ns/leader",
            device_taint("ns/fabric", "link-down")
        )]
    );
    assert_eq!(
        report.broken_groups,
        vec![BrokenGroup {
            group: "ns/job".into(),
            evicted: vec![leader.clone()],
            left: vec![worker.clone()],
            min_count: 2,
            whole: false,
        }]
    );
    let done = s.advance(Time(0));
    assert_eq!(done, report.started);
    assert!(s.binding(&worker).is_some());
    assert!(s.pod(&leader).is_none());
}

#[test]
fn node_no_execute_taint_evicts_pods_without_a_matching_toleration() {
    let mut s = scheduler(&[("n0", "r0", 0)]);
    let plain = pod(&mut s, NS, "plain", None, None, 0, vec![]);
    let mut tolerant = |name: &str, seconds: Option<i64>, effect: Option<TaintEffect>| {
        let mut p = Pod::new(NS, name);
        p.tolerations.push(Toleration {
            key: "node.kubernetes.io/unreachable".into(),
            operator: TolerationOperator::Exists,
            effect,
            toleration_seconds: seconds,
            ..Toleration::default()
        });
        s.add_pod(p).unwrap();
        format!("{NS}/{name}")
    };
    let short = tolerant("short", Some(60), Some(TaintEffect::NoExecute));
    let brief = tolerant("brief", Some(300), Some(TaintEffect::NoExecute));
    let forever = tolerant("forever", None, Some(TaintEffect::NoExecute));
    // A node toleration with an empty effect matches NoExecute for eviction too (unlike
    // a device toleration): tolerated forever.
    let any_effect = tolerant("any-effect", None, None);
    let all = [
        plain.clone(),
        short.clone(),
        brief.clone(),
        forever.clone(),
        any_effect.clone(),
    ];
    s.cycle();
    assert_eq!(bound(&s, &all), all);

    s.advance(Time(100));
    let unreachable = Taint::new("node.kubernetes.io/unreachable", "", TaintEffect::NoExecute);
    let report = s.taint_node("n0", unreachable.clone()).unwrap();
    let node = |n: &str| EvictionReason::NodeTaint { node: n.into() };
    assert_eq!(
        report.started,
        vec![
            eviction(100, "ns/plain", node("n0")),
            eviction(160, "ns/short", node("n0")),
            eviction(400, "ns/brief", node("n0")),
        ]
    );
    assert!(report.broken_groups.is_empty());
    assert_eq!(s.advance(Time(150)), report.started[..1]);
    // The timer counts from when the taint was first observed: the same taint put
    // again later changes nothing.
    assert_eq!(s.scheduled_evictions(), report.started[1..]);
    let again = s.taint_node("n0", unreachable).unwrap();
    assert!(again.started.is_empty() && again.cancelled.is_empty());
    assert_eq!(
        s.advance(Time(160)),
        vec![eviction(160, "ns/short", node("n0"))]
    );
    // Untainted before the deadline: cancelled.
    let report = s
        .untaint_node("n0", "node.kubernetes.io/unreachable", None)
        .unwrap();
    assert_eq!(
        report.cancelled,
        vec![eviction(400, "ns/brief", node("n0"))]
    );
    assert!(s.advance(Time(1000)).is_empty());
    assert_eq!(bound(&s, &all), [brief, forever, any_effect]);
    assert!(s.pod(&plain).is_none() && s.pod(&short).is_none());
}

#[test]
fn empty_effect_toleration_allows_allocation_but_is_evicted_at_time_added() {
    // QUIRK (upstream device-taint-eviction controller): the empty-effect toleration
    // matches NoExecute for allocation, but eviction only consults tolerations whose
    // effect is NoExecute, so the claim goes at timeAdded.
    let mut s = scheduler(&[("n0", "r0", 2)]);
    for g in 0..2 {
        s.taint_device(
            &dref("n0", &format!("gpu-{g}")),
            taint("maintenance", "", DeviceTaintEffect::NoExecute, 100),
        )
        .unwrap();
    }
    s.advance(Time(200));
    let any_effect = DeviceToleration {
        key: "maintenance".into(),
        operator: DeviceTolerationOperator::Exists,
        ..DeviceToleration::default()
    };
    let quirk = pod(&mut s, NS, "quirk", None, None, 1, vec![any_effect]);
    let safe = pod(
        &mut s,
        NS,
        "safe",
        None,
        None,
        1,
        vec![no_execute_toleration("maintenance", None)],
    );
    // The cycle that binds them schedules the quirk's eviction (the schedule is kept
    // current by every change).
    let report = s.cycle().evictions;
    assert!(s.binding(&quirk).is_some() && s.binding(&safe).is_some());
    assert_eq!(
        report.started,
        vec![eviction(
            100,
            "ns/quirk",
            device_taint("ns/quirk-gpus", "maintenance")
        )]
    );
    assert_eq!(s.advance(Time(200)), report.started);
    assert!(s.pod(&quirk).is_none());
    assert!(s.binding(&safe).is_some());
    assert_eq!(s.cluster().free_devices().len(), 1);
}

#[test]
fn advance_observes_pods_bound_since_the_last_change() {
    // No refresh after the cycle: advance brings the schedule up to date first.
    let mut s = scheduler(&[("n0", "r0", 1)]);
    s.taint_device(
        &dref("n0", "gpu-0"),
        taint("maintenance", "", DeviceTaintEffect::NoExecute, 10),
    )
    .unwrap();
    let any_effect = DeviceToleration {
        key: "maintenance".into(),
        operator: DeviceTolerationOperator::Exists,
        ..DeviceToleration::default()
    };
    let p = pod(&mut s, NS, "p", None, None, 1, vec![any_effect]);
    s.cycle();
    assert!(s.binding(&p).is_some());
    assert_eq!(
        s.advance(Time(10)),
        vec![eviction(
            10,
            "ns/p",
            device_taint("ns/p-gpus", "maintenance")
        )]
    );
}

#[test]
fn republished_slice_with_a_taint_starts_evictions() {
    let mut s = scheduler(&[("n0", "r0", 2)]);
    let p = pod(&mut s, NS, "p", None, None, 2, vec![]);
    s.cycle();
    assert!(s.binding(&p).is_some());
    let mut slice = s.cluster().slice("n0-gpus").unwrap().clone();
    slice.devices[1]
        .taints
        .push(taint("ecc", "", DeviceTaintEffect::NoExecute, 30));
    let report = s.replace_slice(slice.clone()).unwrap();
    assert_eq!(
        report.started,
        vec![eviction(30, "ns/p", device_taint("ns/p-gpus", "ecc"))]
    );
    slice.devices[1].taints.clear();
    let report = s.replace_slice(slice).unwrap();
    assert_eq!(
        report.cancelled,
        vec![eviction(30, "ns/p", device_taint("ns/p-gpus", "ecc"))]
    );
    assert!(s.advance(Time(100)).is_empty());
}

/// Pool `n0` (8 GPUs, rack r0) runs: All-mode gang `a` with a-0 there and a-1 on n1;
/// Single gang `c` (minCount 2) with c-0, c-1 there and c-2 on n1; Single gang `d`
/// (minCount 2) with d-0 there and d-1, d-2 on n1; pod `other/s`; pod `other/t` whose
/// claim tolerates `maintenance` forever. Rack r1 (n1, 8 GPUs) holds the rest.
fn drain_scenario() -> Scheduler {
    let mut s = scheduler(&[("n0", "r0", 8), ("n1", "r1", 8)]);
    let spec: [(&str, u32, DisruptionMode, &[&str]); 3] = [
        ("a", 2, DisruptionMode::All, &["r0", "r1"]),
        ("c", 2, DisruptionMode::Single, &["r0", "r0", "r1"]),
        ("d", 2, DisruptionMode::Single, &["r0", "r1", "r1"]),
    ];
    for (name, min, mode, racks) in spec {
        group(&mut s, name, min, mode);
        for (i, rack) in racks.iter().enumerate() {
            pod(
                &mut s,
                NS,
                &format!("{name}-{i}"),
                Some(name),
                Some(rack),
                1,
                vec![],
            );
        }
    }
    pod(&mut s, "other", "s", None, Some("r0"), 1, vec![]);
    pod(
        &mut s,
        "other",
        "t",
        None,
        Some("r0"),
        1,
        vec![no_execute_toleration("maintenance", None)],
    );
    s.cycle();
    assert_eq!(s.pods().filter(|p| p.node_name.is_some()).count(), 10);
    s.advance(Time(500));
    s
}

fn drain_rule(effect: DeviceTaintEffect) -> DeviceTaintRule {
    DeviceTaintRule {
        name: "drain-n0".into(),
        selector: Some(DeviceTaintSelector {
            pool: Some("n0".into()),
            ..DeviceTaintSelector::default()
        }),
        taint: gangpack::DeviceTaint::new("maintenance", "", effect),
    }
}

#[test]
fn none_rule_dry_run_reports_upstream_numbers_and_the_blast_radius() {
    let mut s = drain_scenario();
    let report = s
        .add_taint_rule(drain_rule(DeviceTaintEffect::None))
        .unwrap();
    assert!(report.started.is_empty());

    let stored = s.cluster().taint_rule("drain-n0").unwrap().clone();
    let before = format!("{:?}", s.scheduled_evictions());
    let dry = s.dry_run_rule(&stored);
    assert_eq!(dry.rule, "drain-n0");
    assert_eq!(dry.published_devices, 8);
    assert_eq!(dry.allocated_devices, 6);
    assert_eq!(
        dry.pods,
        strings(&["ns/a-0", "ns/c-0", "ns/c-1", "ns/d-0", "other/s"])
    );
    assert_eq!(dry.namespaces, 2);
    assert_eq!(
        dry.message(),
        "8 published devices selected. 6 allocated devices selected. 5 pods would be evicted \
         in 2 different namespaces if the effect was NoExecute. This information will not be \
         updated again. Recreate the DeviceTaintRule to trigger an update."
    );
    let direct = |pod: &str| {
        let (ns, name) = pod.split_once('/').unwrap();
        eviction(
            500,
            pod,
            device_taint(&format!("{ns}/{name}-gpus"), "maintenance"),
        )
    };
    assert_eq!(
        dry.evictions,
        vec![
            direct("ns/a-0"),
            eviction(500, "ns/a-1", member("ns/a")),
            direct("ns/c-0"),
            direct("ns/c-1"),
            direct("ns/d-0"),
            direct("other/s"),
        ]
    );
    assert_eq!(
        dry.broken_groups,
        vec![
            BrokenGroup {
                group: "ns/a".into(),
                evicted: strings(&["ns/a-0", "ns/a-1"]),
                left: vec![],
                min_count: 2,
                whole: true,
            },
            BrokenGroup {
                group: "ns/c".into(),
                evicted: strings(&["ns/c-0", "ns/c-1"]),
                left: strings(&["ns/c-2"]),
                min_count: 2,
                whole: false,
            },
        ]
    );
    assert_eq!(
        dry.to_string(),
        format!(
            "{}\n1 more pod would go with their disruptionMode All PodGroups.\n\
             Blast radius: 2 PodGroups would break:\n  \
             PodGroup ns/a (disruptionMode All): 2 of 2 bound pods evicted, 0 left, minCount 2\n  \
             PodGroup ns/c (disruptionMode Single): 2 of 3 bound pods evicted, 1 left, minCount 2",
            dry.message()
        )
    );
    // Nothing changed.
    assert_eq!(format!("{:?}", s.scheduled_evictions()), before);
    assert_eq!(s.cluster().taint_rule("drain-n0"), Some(&stored));

    // Switching the rule to NoExecute does what the dry run said (the effect change
    // restamps timeAdded with the clock).
    s.advance(Time(600));
    let dry = s.dry_run_rule(&stored);
    let report = s
        .replace_taint_rule(drain_rule(DeviceTaintEffect::NoExecute))
        .unwrap();
    assert_eq!(report.started, dry.evictions);
    assert_eq!(report.broken_groups, dry.broken_groups);
    let done = s.advance(Time(600));
    assert_eq!(done, dry.evictions);
    assert_eq!(
        s.pods()
            .filter(|p| p.node_name.is_some())
            .map(|p| format!("{}/{}", p.namespace, p.name))
            .collect::<Vec<_>>(),
        strings(&["ns/c-2", "ns/d-1", "ns/d-2", "other/t"])
    );
}

#[test]
fn dry_run_message_wording() {
    let mut r = DryRunReport {
        published_devices: 3,
        allocated_devices: 1,
        pods: strings(&["ns/p"]),
        namespaces: 1,
        ..DryRunReport::default()
    };
    // Upstream's documented example, word for word.
    assert_eq!(
        r.message(),
        "3 published devices selected. 1 allocated device selected. 1 pod would be evicted in \
         1 namespace if the effect was NoExecute. This information will not be updated again. \
         Recreate the DeviceTaintRule to trigger an update."
    );
    r = DryRunReport::default();
    assert_eq!(
        r.message(),
        "0 published devices selected. 0 allocated devices selected. 0 pods would be evicted in \
         0 different namespaces if the effect was NoExecute. This information will not be \
         updated again. Recreate the DeviceTaintRule to trigger an update."
    );
    // A rule without a selector selects nothing.
    let s = drain_scenario();
    let mut rule = drain_rule(DeviceTaintEffect::None);
    rule.selector = None;
    let dry = s.dry_run_rule(&rule);
    assert_eq!(dry.message(), r.message());
    assert!(dry.broken_groups.is_empty());
    assert!(
        dry.to_string()
            .ends_with("\nBlast radius: no PodGroup would break.")
    );
}

// ------------------------------------------------------------ state loaded from a dump

/// A toleration of the `drain` NoExecute taint for `seconds` (`None`: forever).
fn drain_toleration(seconds: Option<i64>) -> Toleration {
    Toleration {
        key: "drain".into(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: Some(TaintEffect::NoExecute),
        toleration_seconds: seconds,
    }
}

/// A bound pod `ns/<name>` on `node`, as a dump has it, with `tolerations`.
fn running_pod(s: &mut Scheduler, name: &str, node: &str, tolerations: &[Toleration]) -> String {
    let mut p = Pod::new(NS, name);
    p.node_name = Some(node.into());
    p.tolerations = tolerations.to_vec();
    s.add_pod(p).unwrap();
    format!("{NS}/{name}")
}

#[test]
fn node_taint_timers_of_a_dump_start_at_the_later_of_binding_and_time_added() {
    let mut s = scheduler(&[("n0", "r0", 2), ("n1", "r0", 2)]);
    s.advance(Time(5_000));
    let mut drain = Taint::new("drain", "", TaintEffect::NoExecute);
    drain.time_added = Some(Time(1_000));
    s.taint_node("n0", drain).unwrap();
    let early = running_pod(&mut s, "early", "n0", &[drain_toleration(Some(600))]);
    let late = running_pod(&mut s, "late", "n0", &[drain_toleration(Some(600))]);
    let unknown = running_pod(&mut s, "unknown", "n0", &[drain_toleration(Some(600))]);
    let forever = running_pod(&mut s, "forever", "n0", &[drain_toleration(None)]);
    let plain = running_pod(&mut s, "plain", "n0", &[]);
    let elsewhere = running_pod(&mut s, "elsewhere", "n1", &[drain_toleration(Some(600))]);
    let bound_at = |p: &Pod| match p.name.as_str() {
        "early" => Some(Time(500)),
        "late" | "elsewhere" => Some(Time(4_800)),
        "plain" => Some(Time(4_000)),
        _ => None,
    };
    let report = s.backdate_node_taint_timers(bound_at);
    let node = || EvictionReason::NodeTaint { node: "n0".into() };
    // early: bound before the taint, timed from timeAdded (1000 + 600); late: bound
    // after it, from its binding (4800 + 600); unknown: as if bound before; plain: no
    // toleration, due from its binding (and carried out at the next advance); forever
    // and the pod on the untainted node are not touched.
    let want = vec![
        eviction(1_600, &early, node()),
        eviction(1_600, &unknown, node()),
        eviction(4_000, &plain, node()),
        eviction(5_400, &late, node()),
    ];
    assert_eq!(report.started, want);
    assert_eq!(s.scheduled_evictions(), want);
    // A timer already running is kept.
    assert!(
        s.backdate_node_taint_timers(|_| Some(Time(0)))
            .started
            .is_empty()
    );
    let done = s.advance(Time(5_000));
    assert_eq!(done, want[..3]);
    assert_eq!(
        bound(&s, &[late.clone(), forever.clone(), elsewhere.clone()]).len(),
        3
    );
    assert_eq!(s.advance(Time(5_400)), want[3..]);
}

#[test]
fn without_backdating_a_loaded_pod_is_timed_from_the_first_refresh() {
    // The scheduler's own rule (it cannot know the past): the timer starts when the pod
    // is first observed, here at the clock.
    let mut s = scheduler(&[("n0", "r0", 2)]);
    s.advance(Time(5_000));
    let mut drain = Taint::new("drain", "", TaintEffect::NoExecute);
    drain.time_added = Some(Time(1_000));
    s.taint_node("n0", drain).unwrap();
    let p = running_pod(&mut s, "p", "n0", &[drain_toleration(Some(600))]);
    let report = s.refresh_evictions();
    assert_eq!(
        report.started,
        vec![eviction(
            5_600,
            &p,
            EvictionReason::NodeTaint { node: "n0".into() }
        )]
    );
}

/// A claim `ns/<name>` allocated to `devices` of n0 (with `tolerations` copied into
/// the results), used by no pod.
fn allocated_claim(
    s: &mut Scheduler,
    name: &str,
    devices: &[&str],
    tolerations: &[DeviceToleration],
) -> String {
    let mut claim = gpu_claim(
        NS,
        name,
        u32::try_from(devices.len()).unwrap(),
        tolerations.to_vec(),
    );
    let result = gangpack::AllocationResult {
        devices: devices
            .iter()
            .map(|d| gangpack::DeviceRequestAllocationResult {
                request: "gpus".into(),
                driver: DRIVER.into(),
                pool: "n0".into(),
                device: (*d).into(),
                tolerations: tolerations.to_vec(),
                ..gangpack::DeviceRequestAllocationResult::default()
            })
            .collect(),
        ..gangpack::AllocationResult::default()
    };
    claim.allocation = Some(result);
    s.add_claim(claim).unwrap();
    format!("{NS}/{name}")
}

fn pod_using(s: &mut Scheduler, name: &str, claim: &str) -> String {
    let mut p = Pod::new(NS, name);
    p.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName(claim.rsplit('/').next().unwrap().into()),
    });
    s.add_pod(p).unwrap();
    format!("{NS}/{name}")
}

#[test]
fn a_new_pod_may_not_reserve_a_claim_with_an_untolerated_no_execute_device() {
    let mut s = scheduler(&[("n0", "r0", 4)]);
    s.advance(Time(100));
    s.taint_device(
        &dref("n0", "gpu-1"),
        taint("xid", "79", DeviceTaintEffect::NoExecute, 50),
    )
    .unwrap();
    s.taint_device(
        &dref("n0", "gpu-3"),
        taint("ecc", "", DeviceTaintEffect::NoSchedule, 50),
    )
    .unwrap();
    // Untolerated NoExecute on gpu-1: refused.
    let blocked = allocated_claim(&mut s, "blocked", &["gpu-0", "gpu-1"], &[]);
    // Tolerated for a while: it may be reserved (its users go when the time is up).
    let tolerated = allocated_claim(
        &mut s,
        "tolerated",
        &["gpu-1"],
        &[no_execute_toleration("xid", Some(3_600))],
    );
    // NoSchedule does not affect an allocated claim.
    let no_schedule = allocated_claim(&mut s, "no-schedule", &["gpu-3"], &[]);
    let a = pod_using(&mut s, "a", &blocked);
    let b = pod_using(&mut s, "b", &tolerated);
    let c = pod_using(&mut s, "c", &no_schedule);
    let report = s.cycle();
    let outcome = |p: &str| {
        report
            .units
            .iter()
            .find(|(u, _)| *u == gangpack::Unit::Pod(p.into()))
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    assert!(
        matches!(outcome(&a), gangpack::UnitResult::Pending(_)),
        "{:?}",
        outcome(&a)
    );
    assert!(s.binding(&b).is_some(), "{:?}", outcome(&b));
    assert!(s.binding(&c).is_some(), "{:?}", outcome(&c));

    let ex = s.explain(&gangpack::Unit::Pod(a.clone())).unwrap();
    assert_eq!(
        ex.status,
        gangpack::GangStatus::UnschedulableAndUnresolvable
    );
    let fact = gangpack::Fact::ClaimDeviceTainted {
        claim: blocked.clone(),
        device: dref("n0", "gpu-1").to_string(),
        taint: taint("xid", "79", DeviceTaintEffect::NoExecute, 50),
    };
    assert_eq!(ex.facts, vec![fact.clone()]);
    assert_eq!(ex.blocking, vec![0]);
    assert!(
        ex.to_string().contains(
            "claim ns/blocked is allocated and its device gpu.example.com/n0/gpu-1 carries \
             xid=79:NoExecute, not tolerated: new pods may not reserve it"
        ),
        "{ex}"
    );
    // A rule's taint counts the same; removing the slice taint lifts it.
    s.untaint_device(&dref("n0", "gpu-1"), "xid", None).unwrap();
    assert!(
        s.explain(&gangpack::Unit::Pod(a.clone()))
            .unwrap()
            .facts
            .is_empty()
    );
    let rule = DeviceTaintRule {
        name: "xid".into(),
        selector: Some(DeviceTaintSelector {
            device: Some("gpu-0".into()),
            ..DeviceTaintSelector::default()
        }),
        taint: taint("xid", "79", DeviceTaintEffect::NoExecute, 90),
    };
    s.add_taint_rule(rule).unwrap();
    let ex = s.explain(&gangpack::Unit::Pod(a)).unwrap();
    assert!(
        matches!(&ex.facts[..], [gangpack::Fact::ClaimDeviceTainted { device, .. }] if device.ends_with("/gpu-0")),
        "{ex}"
    );
}

#[test]
fn placeable_after_evictions_finds_the_first_eviction_that_frees_room() {
    // One node of 4 GPUs, held by a pod whose claim tolerates a NoExecute taint for
    // 300 s; a pending 4-GPU pod fits once it is gone.
    let mut s = scheduler(&[("n0", "r0", 4)]);
    let holder = pod(
        &mut s,
        NS,
        "holder",
        None,
        None,
        4,
        vec![no_execute_toleration("xid", Some(300))],
    );
    s.cycle();
    s.advance(Time(1_000));
    s.taint_device(
        &dref("n0", "gpu-0"),
        taint("xid", "", DeviceTaintEffect::NoExecute, 1_000),
    )
    .unwrap();
    let waiting = pod(&mut s, NS, "waiting", None, None, 3, vec![]);
    let unit = gangpack::Unit::Pod(waiting.clone());
    s.cycle();
    assert!(s.binding(&waiting).is_none());
    let relief = s
        .placeable_after_evictions(&unit)
        .expect("the eviction helps");
    assert_eq!(relief.at, Time(1_300));
    assert_eq!(
        relief.evictions,
        vec![eviction(
            1_300,
            &holder,
            device_taint("ns/holder-gpus", "xid")
        )]
    );
    assert!(!relief.preempts);
    // Nothing changed here.
    assert!(s.binding(&holder).is_some());
    // A pod too big for the node is not helped.
    let big = pod(&mut s, NS, "big", None, None, 8, vec![]);
    assert_eq!(s.placeable_after_evictions(&gangpack::Unit::Pod(big)), None);
}
