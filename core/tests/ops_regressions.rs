#![cfg(feature = "testing")]
//! Bugs the operation-sequence driver (`gangpack::testing::Driver`, the soak and the
//! `scheduler_ops` fuzz target) found, each pinned by the smallest sequence of plain
//! `Scheduler` calls that showed it, and checked with the independent audit.

use gangpack::testing::{AuditScope, ClusterShape, audit, audit_scoped};
use gangpack::{
    AllocationMode, ClaimSource, DeviceRef, DeviceRequest, ExactDeviceRequest, GangOptions, Pod,
    PodGroup, PodGroupResourceClaim, PodResourceClaim, ResourceClaim, ResourceSlice, Scheduler,
    SchedulingPolicy, UnitResult,
};

const NS: &str = "team-a";
const DRIVER: &str = "gpu.gangpack.dev";
const CLASS: &str = "gpu.gangpack.dev";

fn claim(name: &str, mode: AllocationMode) -> ResourceClaim {
    let mut c = ResourceClaim::new(NS, name);
    c.spec.requests.push(DeviceRequest::exactly(
        "gpu",
        ExactDeviceRequest::new(CLASS).with_mode(mode),
    ));
    c
}

fn pod(name: &str, priority: i32, claim: Option<&str>) -> Pod {
    let mut p = Pod::new(NS, name);
    p.priority = priority;
    if let Some(c) = claim {
        p.resource_claims.push(PodResourceClaim {
            name: "gpu".into(),
            source: ClaimSource::ClaimName(c.into()),
        });
    }
    p
}

fn sched(nodes: u16, gpus: u8) -> Scheduler {
    ClusterShape {
        nodes,
        gpus_per_node: gpus,
        nodes_per_rack: 1,
        shared_gpus: 0,
    }
    .build(GangOptions::default())
}

fn clean(s: &Scheduler) {
    let findings = audit(s);
    assert!(
        findings.is_empty(),
        "{}",
        findings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Found by the soak (seed 6): a preemption attempt evicts candidate victims in the
/// live cluster and restores the ones it reprieves. A victim holding a device whose
/// slice its driver had withdrawn could not be restored (`commit_allocation` wants a
/// published device): debug builds panicked ("a released allocation fits again") and
/// release builds silently dropped the holder, so the claim stayed allocated with its
/// device recorded free.
#[test]
fn preemption_restores_a_victims_hold_on_a_withdrawn_device() {
    let mut s = sched(1, 0);
    let mut slice = ResourceSlice::node_local("node-0-late", DRIVER, "node-0", "node-0");
    slice.devices.push(gangpack::Device::new("gpu-3"));
    s.add_slice(slice).unwrap();
    s.add_claim(claim("low", AllocationMode::ExactCount(1)))
        .unwrap();
    let mut low = pod("low", 10, Some("low"));
    low.preemption_policy = gangpack::PreemptionPolicy::Never;
    s.add_pod(low).unwrap();
    s.cycle();
    assert!(s.binding("team-a/low").is_some());
    s.remove_slice("node-0-late").unwrap();
    s.add_claim(claim("high", AllocationMode::All)).unwrap();
    s.add_pod(pod("high", 100, Some("high"))).unwrap();
    let report = s.cycle();
    assert!(
        matches!(report.units[0].1, UnitResult::Pending(_)),
        "{:?}",
        report.units
    );
    // The victim was reprieved: still bound, its claim still holding the device.
    assert!(s.binding("team-a/low").is_some());
    let held = s
        .cluster()
        .allocations(&DeviceRef::new(DRIVER, "node-0", "gpu-3"));
    assert_eq!(
        held.iter().map(|h| h.consumer.as_str()).collect::<Vec<_>>(),
        ["team-a/low"]
    );
    clean(&s);
}

/// Found by the soak (seed 36): a member pod naming its PodGroup's ResourceClaim under
/// another entry name (`gpu` instead of the group's `shared`) had the claim allocated
/// twice — once as its own, once as the group's — so two devices were held for one
/// claim and the claim's `status.allocation` named only one of them.
///
/// Issue 31 (KEP-5729): such an entry is the pod's own use of the claim, not the
/// group's, so its one allocation is the pod's (reserved for the pod), and it is
/// released when the pod goes, while another member still runs.
#[test]
fn a_member_naming_the_group_claim_under_another_entry_name_shares_its_one_allocation() {
    let mut s = sched(2, 2);
    s.add_claim(claim("shared", AllocationMode::ExactCount(1)))
        .unwrap();
    let mut g = PodGroup::new(NS, "train", SchedulingPolicy::Gang { min_count: 1 });
    g.resource_claims.push(PodGroupResourceClaim {
        name: "shared".into(),
        source: ClaimSource::ClaimName("shared".into()),
    });
    g.priority = Some(0);
    s.add_group(g).unwrap();
    let mut p = pod("train-0", 0, Some("shared"));
    p.scheduling_group = Some("train".into());
    s.add_pod(p).unwrap();
    let mut other = pod("train-1", 0, None);
    other.scheduling_group = Some("train".into());
    s.add_pod(other).unwrap();
    let report = s.cycle();
    let UnitResult::Scheduled(d) = &report.units[0].1 else {
        panic!("{:?}", report.units);
    };
    assert!(d.group_claims.is_empty(), "not the group's: {d:?}");
    let holding: Vec<&str> = d
        .bindings
        .iter()
        .filter(|b| b.claims.iter().any(|c| c.claim == "team-a/shared"))
        .map(|b| b.pod.as_str())
        .collect();
    assert_eq!(
        holding,
        ["team-a/train-0"],
        "allocated once, by its user: {d:?}"
    );
    let holders: usize = s
        .cluster()
        .slices()
        .flat_map(|sl| {
            sl.devices
                .iter()
                .map(|dev| DeviceRef::new(&sl.driver, &sl.pool.name, &dev.name))
        })
        .map(|r| s.cluster().allocations(&r).len())
        .sum();
    assert_eq!(holders, 1);
    clean(&s);
    // Completing its only user releases the claim and its one device, though the
    // group still runs a member.
    s.remove_pod("team-a/train-0").unwrap();
    assert!(s.binding("team-a/train-1").is_some());
    assert!(s.allocation("team-a/shared").is_none());
    clean(&s);
}

/// Found by the soak (seed 2): `add_pod` took a running pod (`nodeName` set) naming a
/// claim that did not exist, was not allocated, or was allocated for another node, and
/// the scheduler then held a bound pod using devices nobody held.
#[test]
fn a_running_pod_needs_its_claims_allocated_for_its_node() {
    let mut s = sched(2, 1);
    s.add_claim(claim("idle", AllocationMode::ExactCount(1)))
        .unwrap();
    s.add_claim(claim("used", AllocationMode::ExactCount(1)))
        .unwrap();
    s.add_pod(pod("first", 0, Some("used"))).unwrap();
    s.cycle();
    let node = s.binding("team-a/first").unwrap().node.clone();
    let other = if node == "node-0" { "node-1" } else { "node-0" };
    let before = format!("{s:?}");
    let running = |claim: &str, on: &str| {
        let mut p = pod("loaded", 0, Some(claim));
        p.node_name = Some(on.into());
        p
    };
    let cases = [
        (
            running("missing", "node-0"),
            "Pod \"team-a/loaded\": spec.resourceClaims[0].resourceClaimName",
            "missing",
        ),
        (
            running("idle", "node-0"),
            "Pod \"team-a/loaded\": spec.resourceClaims[0].resourceClaimName",
            "a running pod's claim must be allocated",
        ),
        (
            running("used", other),
            "Pod \"team-a/loaded\": spec.resourceClaims[0].resourceClaimName",
            "allocated for another node",
        ),
    ];
    for (p, object_field, why) in cases {
        let e = s.add_pod(p).unwrap_err().to_string();
        assert!(e.contains(object_field) && e.contains(why), "{e}");
        assert_eq!(
            format!("{s:?}"),
            before,
            "a refused add_pod changed the state"
        );
    }
    // On the claim's node it is accepted, and shares the claim.
    s.add_pod(running("used", &node)).unwrap();
    s.refresh_evictions();
    clean(&s);
}

/// `remove_claim` (added for the soak: without it claims only accumulate): an idle
/// claim goes, an allocated one is refused with the field that holds it, unchanged.
#[test]
fn remove_claim_refuses_a_claim_in_use() {
    let mut s = sched(1, 1);
    s.add_claim(claim("used", AllocationMode::ExactCount(1)))
        .unwrap();
    s.add_claim(claim("idle", AllocationMode::ExactCount(1)))
        .unwrap();
    s.add_pod(pod("p", 0, Some("used"))).unwrap();
    s.cycle();
    let before = format!("{s:?}");
    let e = s.remove_claim("team-a/used").unwrap_err().to_string();
    assert!(
        e.contains("ResourceClaim \"team-a/used\": status.reservedFor: forbidden")
            && e.contains("status.reservedFor"),
        "{e}"
    );
    assert_eq!(format!("{s:?}"), before);
    let e = s.remove_claim("team-a/nope").unwrap_err().to_string();
    assert!(e.contains("team-a/nope"), "{e}");
    assert_eq!(s.remove_claim("team-a/idle").unwrap().name, "idle");
    s.remove_pod("team-a/p").unwrap();
    assert_eq!(s.remove_claim("team-a/used").unwrap().name, "used");
    assert_eq!(s.claims().count(), 0);
    clean(&s);
}

/// Found by the `scheduler_ops` fuzz target: a PodGroup's claim that a pod outside the
/// group also names (as its own claim) was released when the group went, while that
/// pod still ran with it: a bound pod using an unallocated claim. It stays allocated
/// for the remaining user (upstream: deallocated only once `reservedFor` is empty).
#[test]
fn a_group_claim_another_running_pod_uses_outlives_the_group() {
    let mut s = sched(2, 1);
    s.add_claim(claim("fabric", AllocationMode::ExactCount(1)))
        .unwrap();
    let mut g = PodGroup::new(NS, "train", SchedulingPolicy::Gang { min_count: 1 });
    g.priority = Some(0);
    g.resource_claims.push(PodGroupResourceClaim {
        name: "shared".into(),
        source: ClaimSource::ClaimName("fabric".into()),
    });
    s.add_group(g).unwrap();
    let mut member = pod("train-0", 0, None);
    member.scheduling_group = Some("train".into());
    member.resource_claims.push(PodResourceClaim {
        name: "shared".into(),
        source: ClaimSource::ClaimName("fabric".into()),
    });
    s.add_pod(member).unwrap();
    s.add_pod(pod("solo", 0, Some("fabric"))).unwrap();
    s.cycle();
    assert!(s.binding("team-a/train-0").is_some() && s.binding("team-a/solo").is_some());
    clean(&s);
    s.remove_group("team-a/train").unwrap();
    assert!(s.binding("team-a/solo").is_some());
    assert!(
        s.allocation("team-a/fabric").is_some(),
        "released under a running pod"
    );
    clean(&s);
    s.remove_pod("team-a/solo").unwrap();
    assert!(s.allocation("team-a/fabric").is_none());
    clean(&s);
}

/// Found by the `scheduler_ops` fuzz target with issue 33's operations: a Node's
/// allocatable `cpu` lowered under its running pods (`update_node`; the pods stay, the
/// node is over-committed), then a higher-priority pod that needs preemption there.
/// The victim search releases candidate victims' node reservations and restores the
/// ones it reprieves with `reserve_node_resources`, which refuses a reservation the
/// node cannot fit: debug builds panic ("a released reservation fits again"), release
/// builds drop the reservation, so the node counts a running pod's cpu as free.
/// Restoring must put back what was released, fit or not (as `restore_allocation`
/// does for devices, above).
#[test]
fn preemption_restores_reservations_on_an_over_committed_node() {
    let mut s = sched(1, 0);
    for name in ["low-a", "low-b"] {
        let mut p = pod(name, 0, None);
        p.requests
            .insert("cpu".into(), gangpack::Quantity::from_int(16));
        s.add_pod(p).unwrap();
    }
    s.cycle();
    assert!(s.binding("team-a/low-a").is_some() && s.binding("team-a/low-b").is_some());
    // The node shrinks under its pods: 32 cpu requested, 8 allocatable.
    let mut node = s.cluster().node("node-0").unwrap().clone();
    node.allocatable
        .insert("cpu".into(), gangpack::Quantity::from_int(8));
    s.update_node(node).unwrap();
    // Over-committed by the change, as the audit is told.
    let scope = AuditScope {
        resized_nodes: ["node-0".to_owned()].into(),
        ..AuditScope::default()
    };
    assert_eq!(audit_scoped(&s, &scope), []);
    // A pod no eviction makes room for: the victim search releases both and restores
    // both.
    let mut high = pod("high", 100, None);
    high.requests
        .insert("cpu".into(), gangpack::Quantity::from_int(64));
    s.add_pod(high).unwrap();
    let report = s.cycle();
    assert!(
        matches!(report.units[0].1, UnitResult::Pending(_)),
        "{:?}",
        report.units
    );
    assert!(s.binding("team-a/low-a").is_some() && s.binding("team-a/low-b").is_some());
    assert_eq!(
        s.cluster().node_free_resources("node-0").unwrap()["cpu"],
        gangpack::Quantity::from_int(-24)
    );
    assert_eq!(audit_scoped(&s, &scope), []);
}

/// Found by the operation driver with issue 33's operations (seeds 115 and 883 of a
/// 1,000-seed run): a pending pod names a claim that a lower-priority running pod
/// holds, and the claim could not be allocated again now — its class was changed to
/// select other devices (`put_device_class`), or its device was tainted `NoSchedule`
/// (the same without issue 33's operations). The victim search releases the victim's
/// devices but keeps treating the claim as allocated, so the preemptor fits there;
/// the real eviction (`unbind`) deallocates the claim (no user is left, as upstream's
/// resourceclaim controller does), the preemptor must allocate it again and does not
/// fit: debug builds panic ("the preemptor does not fit after its victims left"),
/// release builds evict the victim for nothing. The simulation must deallocate a
/// claim whose last user it evicts, as `unbind` does.
#[test]
fn preemption_deallocates_a_claim_its_victim_shared_with_the_preemptor() {
    for trigger in ["class", "taint"] {
        let mut s = sched(1, 1);
        s.add_claim(claim("shared", AllocationMode::ExactCount(1)))
            .unwrap();
        let mut low = pod("low", 0, Some("shared"));
        low.requests
            .insert("cpu".into(), gangpack::Quantity::from_int(40));
        s.add_pod(low).unwrap();
        s.cycle();
        assert!(s.binding("team-a/low").is_some());
        if trigger == "class" {
            s.put_device_class(gangpack::DeviceClass::with_cel(
                CLASS,
                "device.driver == \"other.example.com\"",
            ))
            .unwrap();
        } else {
            let taint = gangpack::DeviceTaint {
                key: "example.com/ecc".into(),
                value: "high".into(),
                effect: gangpack::DeviceTaintEffect::NoSchedule,
                time_added: None,
            };
            s.taint_device(&DeviceRef::new(DRIVER, "node-0", "gpu-0"), taint)
                .unwrap();
        }
        // Room for its cpu only without `low`; its claim cannot be allocated again.
        let mut high = pod("high", 100, Some("shared"));
        high.requests
            .insert("cpu".into(), gangpack::Quantity::from_int(40));
        s.add_pod(high).unwrap();
        let report = s.cycle();
        assert!(
            matches!(report.units[0].1, UnitResult::Pending(_)),
            "{trigger}: {:?}",
            report.units
        );
        assert!(
            s.binding("team-a/low").is_some(),
            "{trigger}: nothing is evicted for nothing"
        );
        clean(&s);
    }
}

/// Found while reviewing issue 33's `update_claim`: a claim another scheduler allocated
/// (no pod using it yet), then used by a pod this scheduler's cycle binds. The binding
/// did not take the claim over (only pods added bound did), so removing or preempting
/// that pod left the claim allocated with no user, its GPU held for ever. The pod the
/// cycle binds now holds it, and its last user's going releases it, as for claims the
/// placer allocated.
#[test]
fn a_claim_allocated_elsewhere_goes_with_the_pod_that_used_it() {
    for end in ["removed", "preempted"] {
        let mut s = sched(1, 1);
        let mut c = claim("pre", AllocationMode::ExactCount(1));
        s.add_claim(c.clone()).unwrap();
        let gangpack::AllocationOutcome::Allocated(mut results) = s
            .cluster()
            .allocate_claims(
                "node-0",
                std::slice::from_ref(&c),
                &std::collections::BTreeMap::default(),
                &gangpack::AllocatorOptions::default(),
            )
            .unwrap()
        else {
            panic!("the claim is allocated on node-0");
        };
        c.allocation = Some(results.remove(0));
        s.update_claim(c).unwrap();
        s.add_pod(pod("low", 0, Some("pre"))).unwrap();
        s.cycle();
        assert_eq!(s.binding("team-a/low").unwrap().node, "node-0");
        if end == "removed" {
            s.remove_pod("team-a/low").unwrap();
        } else {
            s.add_claim(claim("other", AllocationMode::ExactCount(1)))
                .unwrap();
            s.add_pod(pod("high", 100, Some("other"))).unwrap();
            let report = s.cycle();
            assert!(
                matches!(report.units[0].1, UnitResult::Preempted(_)),
                "{:?}",
                report.units
            );
        }
        assert!(
            s.allocation("team-a/pre").is_none(),
            "{end}: its last user gone, the claim is deallocated"
        );
        clean(&s);
    }
}
