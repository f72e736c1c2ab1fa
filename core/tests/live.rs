#![cfg(not(target_arch = "wasm32"))]
//! A scheduler following a live cluster (issue 33): nodes, DeviceClasses,
//! PriorityClasses, pods, claims and PodGroups change after it was built, and what
//! Kubernetes' controllers would do follows. Every refused change leaves the state as
//! it was (compared through everything a caller can read).

mod common;

use common::*;
use gangpack::{
    DeviceClass, GangOptions, GangOutcome, Node, PodGroup, PriorityClass, Quantity, ResourceClaim,
    Scheduler, SchedulerError, SchedulingPolicy, Taint, TaintEffect, Unit, UnitResult,
};
use std::fmt::Write;

/// Everything a caller can read of a scheduler, as text.
fn observe_all(s: &Scheduler) -> String {
    let mut out = observe(s.cluster());
    for p in s.pods() {
        writeln!(
            out,
            "pod {p:?} binding {:?}",
            s.binding(&format!("{}/{}", p.namespace, p.name))
        )
        .unwrap();
    }
    for g in s.groups() {
        writeln!(out, "group {g:?}").unwrap();
    }
    for c in s.claims() {
        writeln!(out, "claim {c:?}").unwrap();
    }
    writeln!(out, "evictions {:?}", s.scheduled_evictions()).unwrap();
    writeln!(out, "pending {:?}", s.pending_units()).unwrap();
    for c in s.cluster().classes() {
        writeln!(out, "class {c:?}").unwrap();
    }
    out
}

/// Asserts `op` fails and leaves `s` as it was.
fn refused<T: std::fmt::Debug>(
    s: &mut Scheduler,
    op: impl FnOnce(&mut Scheduler) -> Result<T, SchedulerError>,
) -> SchedulerError {
    let before = observe_all(s);
    let err = op(s).expect_err("refused");
    assert_eq!(
        observe_all(s),
        before,
        "a refused change leaves the state as it was ({err})"
    );
    err
}

fn scheduler(nodes: &[(&str, &str, usize)]) -> Scheduler {
    Scheduler::new(rack_cluster(nodes, 64), GangOptions::default())
}

/// A pending pod `ns/<name>` with its own claim for `gpus` GPUs, optionally in a group.
fn gpu_pod(s: &mut Scheduler, name: &str, gpus: u32, group: Option<&str>) -> String {
    let (mut pod, claim) = common::gpu_pod(name, gpus);
    pod.scheduling_group = group.map(Into::into);
    s.add_claim(claim).unwrap();
    s.add_pod(pod).unwrap();
    format!("ns/{name}")
}

fn placed(s: &mut Scheduler, unit: &Unit) -> bool {
    let report = s.cycle();
    report
        .units
        .iter()
        .any(|(u, r)| u == unit && matches!(r, UnitResult::Scheduled(_)))
}

fn new_node(name: &str, rack: &str) -> Node {
    Node::new(name)
        .with_label("rack", rack)
        .with_allocatable("cpu", Quantity::from_int(64))
        .with_allocatable("pods", Quantity::from_int(110))
}

#[test]
fn a_node_that_joins_hosts_the_pod_waiting_for_it() {
    let mut s = scheduler(&[("n0", "r0", 4)]);
    let pod = gpu_pod(&mut s, "big", 8, None);
    assert!(!placed(&mut s, &Unit::Pod(pod.clone())));
    s.add_node(new_node("n1", "r0")).unwrap();
    s.add_slice(gpus("n1", 8)).unwrap();
    assert!(placed(&mut s, &Unit::Pod(pod.clone())));
    assert_eq!(s.binding(&pod).unwrap().node, "n1");
    // A second node of that name is refused, and nothing changes.
    refused(&mut s, |s| s.add_node(new_node("n1", "r9")));
    // So is an invalid one, naming the field.
    let err = refused(&mut s, |s| s.add_node(new_node("N_1", "r0")));
    assert!(err.to_string().contains("metadata.name"), "{err}");
}

#[test]
fn relabelled_cordoned_and_tainted_nodes_are_followed() {
    let mut s = scheduler(&[("n0", "r0", 8), ("n1", "r1", 8)]);
    let pod = gpu_pod(&mut s, "p", 8, None);
    // Only nodes labelled `pool=ml`.
    let mut p = s.pod(&pod).unwrap().clone();
    p.node_selector.insert("pool".into(), "ml".into());
    s.update_pod(p).unwrap();
    assert!(!placed(&mut s, &Unit::Pod(pod.clone())));
    let mut n1 = s.cluster().node("n1").unwrap().clone();
    n1.labels.insert("pool".into(), "ml".into());
    s.update_node(n1).unwrap();
    // Cordoned, it still does not get it.
    s.cordon_node("n1", true).unwrap();
    assert!(!placed(&mut s, &Unit::Pod(pod.clone())));
    s.cordon_node("n1", false).unwrap();
    assert!(placed(&mut s, &Unit::Pod(pod.clone())));
    assert_eq!(s.binding(&pod).unwrap().node, "n1");
    // A NoExecute taint on its node schedules its eviction (the taint manager's job).
    let mut n1 = s.cluster().node("n1").unwrap().clone();
    n1.taints
        .push(Taint::new("maintenance", "true", TaintEffect::NoExecute));
    let report = s.update_node(n1).unwrap();
    assert_eq!(report.started.len(), 1, "{report:?}");
    assert_eq!(
        report.to_string(),
        "eviction started: ns/p at 1970-01-01T00:00:00Z: node taint on n1"
    );
    assert_eq!(s.scheduled_evictions()[0].pod, pod);
    // A node that is not there cannot be changed.
    refused(&mut s, |s| s.update_node(new_node("n9", "r0")));
    refused(&mut s, |s| s.cordon_node("n9", true));
}

#[test]
fn a_removed_node_takes_its_pods_and_frees_their_claims() {
    let mut s = scheduler(&[("n0", "r0", 8), ("n1", "r0", 8)]);
    let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: 2 });
    g.priority = Some(0);
    s.add_group(g).unwrap();
    let a = gpu_pod(&mut s, "a", 8, Some("g"));
    let b = gpu_pod(&mut s, "b", 8, Some("g"));
    assert!(placed(&mut s, &Unit::Group("ns/g".into())));
    let node = s.binding(&a).unwrap().node.clone();
    let pending = gpu_pod(&mut s, "later", 1, None);
    let removal = s.remove_node(&node).unwrap();
    assert_eq!(removal.deleted_pods, vec![a.clone()]);
    assert_eq!(removal.node.name, node);
    assert!(s.pod(&a).is_none(), "pod garbage collection deletes it");
    assert!(
        s.pod(&b).is_some() && s.binding(&b).is_some(),
        "the other member keeps running"
    );
    assert!(
        s.claims()
            .any(|c| c.name == "a-gpus" && c.allocation.is_none()),
        "its claim is deallocated: no user is left"
    );
    assert!(s.pod(&pending).is_some_and(|p| p.node_name.is_none()));
    // Nothing of the node is left to place on.
    assert!(s.cluster().node(&node).is_none());
    refused(&mut s, |s| s.remove_node(&node));
    // It may come back, empty.
    s.add_node(new_node(&node, "r0")).unwrap();
    assert!(placed(&mut s, &Unit::Pod(pending.clone())));
}

#[test]
fn device_classes_change_for_pending_claims_only() {
    let mut s = scheduler(&[("n0", "r0", 2)]);
    let first = gpu_pod(&mut s, "first", 1, None);
    assert!(placed(&mut s, &Unit::Pod(first.clone())));
    // The class now selects nothing: the running pod keeps its device, a new one waits.
    s.put_device_class(DeviceClass::with_cel(
        "gpu",
        "device.driver == \"other.example.com\"",
    ))
    .unwrap();
    assert!(
        s.claims()
            .any(|c| c.name == "first-gpus" && c.allocation.is_some())
    );
    let second = gpu_pod(&mut s, "second", 1, None);
    assert!(!placed(&mut s, &Unit::Pod(second.clone())));
    // A selector that does not compile is refused, naming it; the class stays.
    let err = refused(&mut s, |s| {
        s.put_device_class(DeviceClass::with_cel("gpu", "device.driver =="))
    });
    assert!(err.to_string().contains("spec.selectors[0]"), "{err}");
    // Removed, then back as it was: the pending pod is placed.
    s.remove_device_class("gpu").unwrap();
    assert!(!placed(&mut s, &Unit::Pod(second.clone())));
    refused(&mut s, |s| s.remove_device_class("gpu"));
    s.put_device_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    assert!(placed(&mut s, &Unit::Pod(second)));
}

#[test]
fn priority_classes_can_go() {
    let mut s = scheduler(&[("n0", "r0", 1)]);
    s.put_priority_class(PriorityClass::new("high", 1000))
        .unwrap();
    let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: 1 });
    g.priority_class_name = Some("high".into());
    s.add_group(g).unwrap();
    assert_eq!(s.group("ns/g").unwrap().effective_priority(), 1000);
    s.remove_priority_class("high").unwrap();
    // Resolved priorities stay; a new group naming it is refused.
    assert_eq!(s.group("ns/g").unwrap().effective_priority(), 1000);
    let mut h = PodGroup::new("ns", "h", SchedulingPolicy::Gang { min_count: 1 });
    h.priority_class_name = Some("high".into());
    refused(&mut s, |s| s.add_group(h));
    refused(&mut s, |s| s.remove_priority_class("high"));
}

#[test]
fn a_pod_bound_by_another_scheduler_holds_its_node_and_claims() {
    let mut s = scheduler(&[("n0", "r0", 2)]);
    // Another scheduler allocated a claim and bound the pod.
    let theirs = gpu_pod(&mut s, "theirs", 2, None);
    let mut claim = s
        .claims()
        .find(|c| c.name == "theirs-gpus")
        .unwrap()
        .clone();
    let mut other = s.clone();
    assert!(placed(&mut other, &Unit::Pod(theirs.clone())));
    claim.allocation = other
        .claims()
        .find(|c| c.name == "theirs-gpus")
        .unwrap()
        .allocation
        .clone();
    // Binding first is refused: its claim is not allocated yet.
    let mut pod = s.pod(&theirs).unwrap().clone();
    pod.node_name = Some("n0".into());
    let err = refused(&mut s, |s| s.update_pod(pod.clone()));
    assert!(err.to_string().contains("must be allocated"), "{err}");
    s.update_claim(claim.clone()).unwrap();
    s.update_pod(pod.clone()).unwrap();
    assert_eq!(s.binding(&theirs).unwrap().node, "n0");
    assert!(s.pending_units().is_empty());
    // Its devices are held: ours waits.
    let ours = gpu_pod(&mut s, "ours", 1, None);
    assert!(!placed(&mut s, &Unit::Pod(ours.clone())));
    // nodeName is immutable once set; a bound pod's claim cannot be deallocated.
    let mut moved = pod.clone();
    moved.node_name = Some("n1".into());
    refused(&mut s, |s| s.update_pod(moved));
    let mut freed = claim.clone();
    freed.allocation = None;
    let err = refused(&mut s, |s| s.update_claim(freed.clone()));
    assert!(err.to_string().contains("status.allocation"), "{err}");
    // It succeeds (phase Succeeded): removing it frees the devices.
    s.remove_pod(&theirs).unwrap();
    assert!(placed(&mut s, &Unit::Pod(ours)));
}

#[test]
fn claims_keep_their_spec_and_their_allocation() {
    let mut s = scheduler(&[("n0", "r0", 2)]);
    gpu_pod(&mut s, "p", 1, None);
    let mut claim = s.claims().next().unwrap().clone();
    claim.spec.requests.clear();
    let err = refused(&mut s, |s| s.update_claim(claim.clone()));
    assert!(err.to_string().contains("spec"), "{err}");
    refused(&mut s, |s| {
        s.update_claim(ResourceClaim::new("ns", "nobody"))
    });
}

#[test]
fn a_smaller_min_count_lets_a_gang_start() {
    let mut s = scheduler(&[("n0", "r0", 8)]);
    let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: 3 });
    g.priority = Some(5);
    s.add_group(g.clone()).unwrap();
    for name in ["a", "b"] {
        // Admission gives members their group's priority.
        let k = gpu_pod(&mut s, name, 1, Some("g"));
        let mut p = s.pod(&k).unwrap().clone();
        p.priority = 5;
        s.update_pod(p).unwrap();
    }
    let unit = Unit::Group("ns/g".into());
    let report = s.clone().cycle();
    assert!(
        matches!(
            report.units.as_slice(),
            [(
                _,
                UnitResult::Pending(GangOutcome::WaitingForPods {
                    present: 2,
                    min_count: 3
                })
            )]
        ),
        "waits for a third pod: {:?}",
        report.units
    );
    let mut smaller = g.clone();
    smaller.policy = SchedulingPolicy::Gang { min_count: 2 };
    smaller.priority = None;
    s.update_group(smaller).unwrap();
    assert_eq!(
        s.group("ns/g").unwrap().effective_priority(),
        5,
        "its priority stays"
    );
    assert!(placed(&mut s, &unit));
    refused(&mut s, |s| {
        s.update_group(PodGroup::new("ns", "none", SchedulingPolicy::Basic))
    });
}

/// A pod naming a claim allocated before (by another scheduler, for a pod that has
/// gone) beside a claim of its own: once bound it holds both, the one the cycle
/// allocated and the one it adopts, and removing it releases both. (The commit skips
/// adoption for a pod whose binding holds every claim it names; deciding that with
/// "any" instead of "every" claim leaves the old claim to nobody.)
#[test]
fn a_pod_bound_with_a_claim_of_its_own_adopts_one_allocated_before() {
    let mut s = scheduler(&[("n0", "r0", 4)]);
    let (old_pod, old_claim) = common::gpu_pod("old", 1);
    let mut other = s.clone();
    other.add_claim(old_claim.clone()).unwrap();
    other.add_pod(old_pod).unwrap();
    assert!(placed(&mut other, &Unit::Pod("ns/old".into())));
    let mut claim = old_claim;
    claim.allocation = other.allocation("ns/old-gpus").cloned();
    assert!(claim.allocation.is_some());
    s.add_claim(claim).unwrap();
    let (mut pod, own) = common::gpu_pod("p", 1);
    pod.resource_claims.push(gangpack::PodResourceClaim {
        name: "old".into(),
        source: gangpack::ClaimSource::ClaimName("old-gpus".into()),
    });
    s.add_claim(own).unwrap();
    s.add_pod(pod).unwrap();
    assert!(placed(&mut s, &Unit::Pod("ns/p".into())));
    let held: Vec<&str> = s
        .binding("ns/p")
        .unwrap()
        .claims
        .iter()
        .map(|c| c.claim.as_str())
        .collect();
    assert_eq!(held, ["ns/p-gpus", "ns/old-gpus"]);
    s.remove_pod("ns/p").unwrap();
    assert_eq!(s.allocation("ns/old-gpus"), None);
    assert_eq!(s.allocation("ns/p-gpus"), None);
    // Both GPUs are free again: a pod for all four fits.
    gpu_pod(&mut s, "all", 4, None);
    assert!(placed(&mut s, &Unit::Pod("ns/all".into())));
}

/// Pending units come once each, by priority (highest first), then creation, then
/// unit (groups before pods, by key). Members of one group that are not next to each
/// other by key (`a`, `c` around `b`) still make one unit, and a pod naming a missing
/// PodGroup waits for it. (A list kept without removing repeats names `ns/g` twice.)
#[test]
fn pending_units_come_once_each_by_priority_then_creation() {
    let mut s = scheduler(&[("n0", "r0", 1)]);
    let g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: 2 });
    s.add_group(g).unwrap();
    let mut h = PodGroup::new("ns", "h", SchedulingPolicy::Gang { min_count: 1 });
    h.priority = Some(3);
    s.add_group(h).unwrap();
    for (name, group) in [("a", Some("g")), ("b", None), ("c", Some("g"))] {
        gpu_pod(&mut s, name, 1, group);
    }
    gpu_pod(&mut s, "d", 1, Some("h"));
    gpu_pod(&mut s, "m", 1, Some("missing"));
    for (name, priority, creation) in [("z", 7, 0), ("y", 0, -5)] {
        let (mut pod, claim) = common::gpu_pod(name, 1);
        pod.priority = priority;
        pod.creation = gangpack::Time(creation);
        s.add_claim(claim).unwrap();
        s.add_pod(pod).unwrap();
    }
    assert_eq!(
        s.pending_units(),
        [
            Unit::Pod("ns/z".into()),
            Unit::Group("ns/h".into()),
            Unit::Pod("ns/y".into()),
            Unit::Group("ns/g".into()),
            Unit::Pod("ns/b".into()),
        ]
    );
}
