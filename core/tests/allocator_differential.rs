#![cfg(not(target_arch = "wasm32"))]
//! Regressions found by the differential run against Kubernetes' own allocator
//! (`go/upstream`, docs/DRA-DIFFERENTIAL.md): each pins upstream v0.37's behaviour
//! where gangpack had differed.

mod common;

use std::collections::BTreeMap;

use common::*;
use gangpack::{
    AllocationError, AllocationMode, AllocationOutcome, AllocatorOptions, CapacityRequestPolicy,
    Cluster, CounterSet, Device, DeviceAllocation, DeviceAttribute, DeviceCapacity, DeviceClass,
    DeviceCounterConsumption, DeviceRequest, DeviceSelector, DeviceTaintEffect, ExactDeviceRequest,
    Node, Quantity, ResourceClaim, ResourceSlice,
};

const CLASS: &str = "gpu.example.com";

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap()
}

fn cluster_with(slices: Vec<ResourceSlice>) -> Cluster {
    let mut c = Cluster::new();
    c.add_node(Node::new("n1").with_allocatable("pods", Quantity::from_int(110)))
        .unwrap();
    c.put_class(DeviceClass::with_cel(
        CLASS,
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    for s in slices {
        c.add_slice(s).unwrap();
    }
    c
}

fn shared_gpu(name: &str, memory: &str, default: Option<&str>) -> Device {
    let mut d = Device::new(name);
    d.allow_multiple_allocations = true;
    d.capacity.insert(
        "memory".into(),
        DeviceCapacity {
            value: q(memory),
            request_policy: default.map(|v| CapacityRequestPolicy {
                default: Some(q(v)),
                valid_values: vec![],
                valid_range: None,
            }),
        },
    );
    d
}

fn share(consumer: &str, memory: &str) -> DeviceAllocation {
    let mut h = holder(consumer, vec![]);
    h.share_id = Some("00000000-0000-4000-8000-000000000001".into());
    h.consumed_capacity = [("memory".to_string(), q(memory))].into();
    h
}

fn request(name: &str, mode: AllocationMode, admin: bool) -> DeviceRequest {
    let mut e = ExactDeviceRequest::new(CLASS).with_mode(mode);
    e.admin_access = admin;
    DeviceRequest::exactly(name, e)
}

fn claim(name: &str, requests: Vec<DeviceRequest>) -> ResourceClaim {
    let mut c = ResourceClaim::new("ns", name);
    c.spec.requests = requests;
    c
}

fn run(c: &Cluster, claims: &[ResourceClaim]) -> Result<AllocationOutcome, AllocationError> {
    c.allocate_claims("n1", claims, &BTreeMap::new(), &AllocatorOptions::default())
}

fn picked(out: &AllocationOutcome) -> Vec<String> {
    let AllocationOutcome::Allocated(rs) = out else {
        panic!("expected an allocation, got {out:?}")
    };
    rs.iter()
        .flat_map(|r| {
            r.devices
                .iter()
                .map(|d| format!("{}: {}", d.request, d.device))
        })
        .collect()
}

/// Seed 224 of the differential: upstream's `All` takes every device whose capacity
/// could serve the request; one that committed shares have filled makes `All` fail
/// (it used to be left out, and `All` allocated the rest).
#[test]
fn all_fails_over_a_shared_device_that_committed_shares_filled() {
    let mut s = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    s.devices.push(shared_gpu("gpu-0", "80Gi", None));
    s.devices.push(shared_gpu("gpu-1", "80Gi", None));
    let mut c = cluster_with(vec![s]);
    let all = claim("a", vec![request("all", AllocationMode::All, false)]);
    assert_eq!(
        picked(&run(&c, std::slice::from_ref(&all)).unwrap()),
        ["all: gpu-0", "all: gpu-1"]
    );
    c.allocate(&dref("n1", "gpu-0"), share("ns/held", "80Gi"))
        .unwrap();
    let out = run(&c, &[all]).unwrap();
    assert!(
        matches!(out, AllocationOutcome::Unsatisfiable(_)),
        "{out:?}"
    );
}

/// A device too small for the request even when unused is not one of "all".
#[test]
fn all_leaves_out_a_shared_device_too_small_for_the_request() {
    let mut s = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    s.devices.push(shared_gpu("small", "40Gi", None));
    s.devices.push(shared_gpu("big", "160Gi", None));
    let c = cluster_with(vec![s]);
    let mut e = ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::All);
    e.capacity.insert("memory".into(), q("80Gi"));
    let out = run(&c, &[claim("a", vec![DeviceRequest::exactly("all", e)])]).unwrap();
    assert_eq!(picked(&out), ["all: big"]);
}

/// Seeds 352 and 440: an admin pick of a shareable device is a share like any other
/// upstream: it needs and consumes capacity and records a share id and its
/// consumption; and an admin request may take a share of a device its own claim
/// already shares.
#[test]
fn admin_shares_consume_capacity_and_record_it() {
    let mut s = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    s.devices.push(shared_gpu("gpu-0", "40Gi", Some("10Gi")));
    s.devices.push(shared_gpu("gpu-1", "40Gi", Some("10Gi")));
    let mut c = cluster_with(vec![s]);
    let both = claim(
        "a",
        vec![
            request("user", AllocationMode::ExactCount(1), false),
            request("monitor", AllocationMode::ExactCount(1), true),
        ],
    );
    let out = run(&c, std::slice::from_ref(&both)).unwrap();
    assert_eq!(picked(&out), ["user: gpu-0", "monitor: gpu-0"]);
    let AllocationOutcome::Allocated(rs) = &out else {
        unreachable!()
    };
    let admin = &rs[0].devices[1];
    assert!(admin.admin_access);
    assert_eq!(admin.consumed_capacity["memory"], q("10Gi"));
    assert!(admin.share_id.as_ref().is_some_and(|id| id.len() == 36));
    assert_ne!(admin.share_id, rs[0].devices[0].share_id);
    // Committed shares leave gpu-0 10Gi: the user's share fits, the admin share
    // needs 10Gi more and moves to gpu-1.
    c.allocate(&dref("n1", "gpu-0"), share("ns/held", "30Gi"))
        .unwrap();
    let out = run(&c, &[both]).unwrap();
    assert_eq!(picked(&out), ["user: gpu-0", "monitor: gpu-1"]);
}

fn partitioned(devices: &[(&str, &str)]) -> Vec<ResourceSlice> {
    let mut counters = ResourceSlice::node_local("n1-counters", DRIVER, "n1", "n1");
    counters.pool.resource_slice_count = 2;
    counters.shared_counters.push(CounterSet {
        name: "gpu-0".into(),
        counters: [("memory".to_string(), q("40Gi"))].into(),
    });
    let mut parts = ResourceSlice::node_local("n1-parts", DRIVER, "n1", "n1");
    parts.pool.resource_slice_count = 2;
    for (name, mem) in devices {
        let mut d = Device::new(*name);
        d.consumes_counters.push(DeviceCounterConsumption {
            counter_set: "gpu-0".into(),
            counters: [("memory".to_string(), q(mem))].into(),
        });
        parts.devices.push(d);
    }
    vec![counters, parts]
}

/// The differential's counter overdrafts: admin picks charge shared counters in the
/// call as any pick does upstream (they used to charge nothing).
#[test]
fn admin_picks_charge_shared_counters() {
    let c = cluster_with(partitioned(&[("half-a", "20Gi"), ("full", "40Gi")]));
    let admin = claim(
        "mon",
        vec![request("m", AllocationMode::ExactCount(2), true)],
    );
    let out = run(&c, &[admin]).unwrap();
    assert!(
        matches!(out, AllocationOutcome::Unsatisfiable(_)),
        "60Gi of a 40Gi set: {out:?}"
    );
}

/// QUIRK (upstream allocateDevice): an admin pick of a device a committed claim holds
/// charges its counters again, so it fails when the set has nothing left.
#[test]
fn quirk_admin_pick_of_a_held_device_charges_its_counters_twice() {
    let mut c = cluster_with(partitioned(&[("full", "40Gi")]));
    let admin = claim(
        "mon",
        vec![request("m", AllocationMode::ExactCount(1), true)],
    );
    assert_eq!(
        picked(&run(&c, std::slice::from_ref(&admin)).unwrap()),
        ["m: full"]
    );
    c.allocate(&dref("n1", "full"), holder("ns/held", vec![]))
        .unwrap();
    let out = run(&c, &[admin]).unwrap();
    assert!(
        matches!(out, AllocationOutcome::Unsatisfiable(_)),
        "{out:?}"
    );
}

/// Seed 1902: upstream gathers every device of an `All` request (evaluating its
/// selectors) before it checks taints, so a selector error on a later device is an
/// error even when an earlier device is tainted (the taint used to end the scan).
#[test]
fn all_evaluates_every_selector_even_after_a_tainted_device() {
    let mut s = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    s.devices
        .push(Device::new("gpu-0").with_attribute("x", DeviceAttribute::Int(1)));
    s.devices.push(Device::new("gpu-1"));
    let mut c = cluster_with(vec![s]);
    c.taint_device(
        &dref("n1", "gpu-0"),
        taint("ecc", "", DeviceTaintEffect::NoSchedule, 1),
    )
    .unwrap();
    let mut e = ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::All);
    e.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].x == 1".into(),
    });
    let err = run(&c, &[claim("a", vec![DeviceRequest::exactly("all", e)])]).unwrap_err();
    assert!(matches!(err, AllocationError::Evaluation(_)), "{err:?}");
}
