#![cfg(not(target_arch = "wasm32"))]
//! Issue 12 part 3: a claim over upstream's per-claim device limit (32,
//! `AllocationResultsMaxSize`) makes upstream's allocator fail with "claim ns/name:
//! number of requested devices N exceeds the claim limit of 32", and kube-scheduler
//! fails the pod with an error status, not Unschedulable. gangpack answers the same:
//! `GangError::Allocation(AllocationError::TooManyDevices)` from the placer, whatever
//! the nodes (for counts and `firstAvailable`) or on the node tried (allocation mode
//! `All`), and `UnitResult::Failed` for that unit in a scheduler cycle while the other
//! units are planned as usual.
//!
//! The expected messages are written out in full: they are the contract.

mod common;

use common::*;
use gangpack::{
    AllocationError, AllocationMode, ClaimSource, Cluster, DeviceRequest, DeviceSubRequest,
    ExactDeviceRequest, GangError, GangOptions, GangOutcome, ObjectKind, ObjectRef, Pod, PodGroup,
    PodResourceClaim, ResourceClaim, Scheduler, SchedulerError, SchedulingPolicy, Unit, UnitResult,
    validate_placement,
};

const NS: &str = "ns";

/// Nodes `n<i>` (rack `r0`, 64 CPUs) with the given numbers of GPUs.
fn cluster(gpus: &[usize]) -> Cluster {
    let nodes: Vec<(String, usize)> = gpus
        .iter()
        .enumerate()
        .map(|(i, &n)| (format!("n{i}"), n))
        .collect();
    let refs: Vec<(&str, &str, usize)> =
        nodes.iter().map(|(n, g)| (n.as_str(), "r0", *g)).collect();
    rack_cluster(&refs, 64)
}

fn exact(name: &str, mode: AllocationMode) -> DeviceRequest {
    DeviceRequest::exactly(name, ExactDeviceRequest::new("gpu").with_mode(mode))
}

fn count(name: &str, n: u32) -> DeviceRequest {
    exact(name, AllocationMode::ExactCount(n))
}

/// `firstAvailable` request `name` with one subrequest `s<i>` per count.
fn first_available(name: &str, counts: &[u32]) -> DeviceRequest {
    DeviceRequest::first_available(
        name,
        counts
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                DeviceSubRequest::new(format!("s{i}"), "gpu")
                    .with_mode(AllocationMode::ExactCount(n))
            })
            .collect(),
    )
}

fn claim(name: &str, requests: Vec<DeviceRequest>) -> ResourceClaim {
    let mut c = ResourceClaim::new(NS, name);
    c.spec.requests = requests;
    c
}

/// Pod `ns/<name>` of group `group` using `claims` (by their names).
fn pod(group: &str, name: &str, claims: &[&ResourceClaim]) -> Pod {
    let mut p = Pod::new(NS, name);
    p.scheduling_group = Some(group.into());
    for (i, c) in claims.iter().enumerate() {
        p.resource_claims.push(PodResourceClaim {
            name: format!("c{i}"),
            source: ClaimSource::ClaimName(c.name.clone()),
        });
    }
    p
}

fn gang(name: &str, min: u32) -> PodGroup {
    PodGroup::new(NS, name, SchedulingPolicy::Gang { min_count: min })
}

/// Places a one-pod gang `g` using `claim` on `c`.
fn place_one(c: &Cluster, claim: &ResourceClaim) -> Result<GangOutcome, GangError> {
    let pods = [pod("g", "p", &[claim])];
    c.place_gang(
        Some(&gang("g", 1)),
        &pods,
        std::slice::from_ref(claim),
        &GangOptions::default(),
    )
}

/// The error expected for claim `ns/<name>`: `needed` devices, per request.
fn too_many(name: &str, needed: usize, requests: &[(&str, usize)]) -> GangError {
    GangError::Allocation(AllocationError::TooManyDevices {
        claim: ObjectRef::namespaced(ObjectKind::ResourceClaim, NS, name),
        needed,
        requests: requests
            .iter()
            .map(|(r, n)| ((*r).to_owned(), *n))
            .collect(),
    })
}

/// Asserts a one-pod gang with `claim` is placed on `c`, validly, with `devices`
/// devices in its claim's result.
fn assert_placed(c: &Cluster, claim: &ResourceClaim, devices: usize) {
    let pods = [pod("g", "p", &[claim])];
    let g = gang("g", 1);
    let claims = [claim.clone()];
    let out = c
        .place_gang(Some(&g), &pods, &claims, &GangOptions::default())
        .unwrap();
    let GangOutcome::Placed(d) = out else {
        panic!("not placed: {out:?}");
    };
    assert_eq!(validate_placement(c, Some(&g), &pods, &claims, &d), []);
    assert_eq!(d.bindings[0].claims[0].result.devices.len(), devices);
}

#[test]
fn a_claim_for_33_devices_fails_whatever_the_nodes() {
    let big = claim("big", vec![count("gpus", 33)]);
    let want = too_many("big", 33, &[("gpus", 33)]);
    // Nodes too small to host it (the count pruning used to drop them all and answer
    // "pending"), and a node big enough for the devices.
    for gpus in [&[8, 8][..], &[40]] {
        let err = place_one(&cluster(gpus), &big).unwrap_err();
        assert_eq!(err, want, "{gpus:?}");
        assert_eq!(
            err.to_string(),
            "claim ns/big: number of requested devices 33 exceeds the claim limit of 32 \
             (request gpus: 33)"
        );
    }
    // 32 is within the limit.
    assert_placed(&cluster(&[40]), &claim("big", vec![count("gpus", 32)]), 32);
}

#[test]
fn two_requests_add_up() {
    let c = cluster(&[40]);
    let err = place_one(
        &c,
        &claim("pair", vec![count("gpus", 20), count("more", 13)]),
    )
    .unwrap_err();
    assert_eq!(err, too_many("pair", 33, &[("gpus", 20), ("more", 13)]));
    assert_eq!(
        err.to_string(),
        "claim ns/pair: number of requested devices 33 exceeds the claim limit of 32 \
         (requests gpus: 20, more: 13)"
    );
    assert_placed(
        &c,
        &claim("pair", vec![count("gpus", 20), count("more", 12)]),
        32,
    );
}

#[test]
fn first_available_counts_its_least_subrequest() {
    // Every subrequest over the limit: the least of them (33) is what counts.
    let over = claim("fa", vec![first_available("gpus", &[40, 33])]);
    for gpus in [&[8][..], &[64]] {
        let err = place_one(&cluster(gpus), &over).unwrap_err();
        assert_eq!(err, too_many("fa", 33, &[("gpus", 33)]), "{gpus:?}");
        assert_eq!(
            err.to_string(),
            "claim ns/fa: number of requested devices 33 exceeds the claim limit of 32 \
             (request gpus: 33)"
        );
    }
    // One subrequest within the limit: no error, and it is what a node of 8 GPUs gets.
    let within = claim("fa", vec![first_available("gpus", &[40, 8])]);
    assert_placed(&cluster(&[8]), &within, 8);
    // With another request the least subrequest is added to it.
    let sum = claim(
        "fa",
        vec![first_available("gpus", &[40, 30]), count("more", 3)],
    );
    assert_eq!(
        place_one(&cluster(&[64]), &sum).unwrap_err(),
        too_many("fa", 33, &[("gpus", 30), ("more", 3)])
    );
}

#[test]
fn all_mode_counts_the_matching_devices_of_the_node_tried() {
    let all = claim("every", vec![exact("all", AllocationMode::All)]);
    let c = cluster(&[40]);
    let err = place_one(&c, &all).unwrap_err();
    assert_eq!(err, too_many("every", 40, &[("all", 40)]));
    assert_eq!(
        err.to_string(),
        "claim ns/every: number of requested devices 40 exceeds the claim limit of 32 \
         (request all: 40)"
    );
    // The in-place variant answers the same and leaves the cluster as it was.
    let mut scratch = c.clone();
    let pods = [pod("g", "p", &[&all])];
    let again = scratch.place_gang_mut(
        Some(&gang("g", 1)),
        &pods,
        std::slice::from_ref(&all),
        &GangOptions::default(),
    );
    assert_eq!(again.unwrap_err(), err);
    assert_eq!(observe(&scratch), observe(&c));
    // 32 matching devices are within the limit.
    assert_placed(&cluster(&[32]), &all, 32);
    // An `All` request and a count add up: 32 matching devices and one more.
    let mixed = claim(
        "mixed",
        vec![exact("all", AllocationMode::All), count("one", 1)],
    );
    assert_eq!(
        place_one(&cluster(&[32]), &mixed).unwrap_err(),
        too_many("mixed", 33, &[("all", 32), ("one", 1)])
    );
}

/// A gang one of whose pods has a claim over the limit fails as a whole, with the
/// error, while another unit of the same cycle is placed; the explanation is the error
/// too, not a capacity shortage.
#[test]
fn the_unit_fails_alone_in_a_scheduler_cycle() {
    for over in [
        claim("big-1-gpus", vec![count("gpus", 33)]),
        claim("big-1-gpus", vec![exact("gpus", AllocationMode::All)]),
    ] {
        let all_mode = over.spec.min_device_count() == 1;
        let mut s = Scheduler::new(cluster(&[40, 8]), GangOptions::default());
        // `big` (higher priority, tried first): two pods, one of them with the claim
        // over the limit; `ok`: one pod of 8 GPUs.
        let mut big = gang("big", 2);
        big.priority = Some(10);
        s.add_group(big.clone()).unwrap();
        let fine = claim("big-0-gpus", vec![count("gpus", 8)]);
        let ok_claim = claim("ok-0-gpus", vec![count("gpus", 8)]);
        s.add_group(gang("ok", 1)).unwrap();
        for c in [&over, &fine, &ok_claim] {
            s.add_claim(c.clone()).unwrap();
        }
        let mut p0 = pod("big", "big-0", &[&fine]);
        let mut p1 = pod("big", "big-1", &[&over]);
        p0.priority = 10;
        p1.priority = 10;
        s.add_pod(p0).unwrap();
        s.add_pod(p1).unwrap();
        s.add_pod(pod("ok", "ok-0", &[&ok_claim])).unwrap();

        let want = if all_mode {
            // On the node of 40 GPUs, the one the search tries for it.
            "claim ns/big-1-gpus: number of requested devices 40 exceeds the claim limit of \
             32 (request gpus: 40)"
        } else {
            "claim ns/big-1-gpus: number of requested devices 33 exceeds the claim limit of \
             32 (request gpus: 33)"
        };
        let report = s.cycle();
        let result = |unit: &str| {
            report
                .units
                .iter()
                .find_map(|(u, r)| (*u == Unit::Group(unit.into())).then_some(r))
                .unwrap_or_else(|| panic!("{unit} not in {report:?}"))
        };
        match result("ns/big") {
            UnitResult::Failed(SchedulerError::Gang(GangError::Allocation(
                e @ AllocationError::TooManyDevices { .. },
            ))) => assert_eq!(e.to_string(), want),
            other => panic!("ns/big: {other:?}"),
        }
        assert!(s.binding("ns/big-0").is_none() && s.binding("ns/big-1").is_none());
        assert!(
            matches!(result("ns/ok"), UnitResult::Scheduled(d) if d.bindings.len() == 1),
            "{report:?}"
        );
        assert!(s.binding("ns/ok-0").is_some());

        // Explaining the unit gives the error, not "too few devices".
        let err = s.explain(&Unit::Group("ns/big".into())).unwrap_err();
        assert_eq!(err.to_string(), want);
        let pods: Vec<Pod> = ["big-0", "big-1"]
            .iter()
            .map(|n| s.pod(&format!("ns/{n}")).unwrap().clone())
            .collect();
        let err = s
            .cluster()
            .explain_gang(
                Some(&big),
                &pods,
                &[over.clone(), fine.clone()],
                &GangOptions::default(),
            )
            .unwrap_err();
        assert_eq!(err.to_string(), want);
    }
}
