#![cfg(not(target_arch = "wasm32"))]
//! Scenario tests for DRA claim allocation: each a small cluster with the exact
//! expected allocation or outcome.

mod common;

use std::collections::BTreeMap;

use common::*;
use gangpack::{
    AllocationError, AllocationMode, AllocationOutcome, AllocationResult, AllocatorOptions,
    CapacityRequestPolicy, CapacityRequestPolicyRange, Cluster, ConstraintKind, CounterSet, Device,
    DeviceAttribute, DeviceClass, DeviceConstraint, DeviceCounterConsumption, DeviceRequest,
    DeviceSelector, DeviceSubRequest, DeviceTaintEffect, DeviceToleration,
    DeviceTolerationOperator, ExactDeviceRequest, Fit, Node, NodeAccess, Quantity, ResourceClaim,
    ResourceSlice, SliceNodeSelection, Unsatisfiable,
};

const CLASS: &str = "gpu.example.com";

fn cluster_with(slices: Vec<ResourceSlice>) -> Cluster {
    let mut c = Cluster::new();
    c.add_node(
        Node::new("n1")
            .with_label("rack", "r1")
            .with_allocatable("cpu", Quantity::from_int(16))
            .with_allocatable("pods", Quantity::from_int(110)),
    )
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

fn gpu(name: &str, numa: i64, product: &str) -> Device {
    Device::new(name)
        .with_attribute("numa", DeviceAttribute::Int(numa))
        .with_attribute("productName", DeviceAttribute::String(product.into()))
        .with_capacity("memory", Quantity::parse("80Gi").unwrap())
}

fn eight_gpus() -> ResourceSlice {
    let mut s = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    for g in 0..8 {
        s.devices.push(gpu(&format!("gpu-{g}"), g / 4, "H100"));
    }
    s
}

fn exact(name: &str, count: u32) -> DeviceRequest {
    DeviceRequest::exactly(
        name,
        ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(count)),
    )
}

fn claim(name: &str, requests: Vec<DeviceRequest>) -> ResourceClaim {
    let mut c = ResourceClaim::new("ns", name);
    c.spec.requests = requests;
    c
}

/// Allocates on `n1`, checking that `fits_prepared` (results-free) agrees.
fn run(c: &Cluster, claims: &[ResourceClaim]) -> AllocationOutcome {
    let options = AllocatorOptions::default();
    let out = c
        .allocate_claims("n1", claims, &BTreeMap::new(), &options)
        .unwrap();
    let prepared = c.prepare_claims(claims).unwrap();
    let fit = c
        .fits_prepared("n1", &prepared, &BTreeMap::new(), &options)
        .unwrap();
    let want = match &out {
        AllocationOutcome::Allocated(_) => Fit::Fits,
        AllocationOutcome::Unsatisfiable(_) => Fit::DoesNotFit,
        AllocationOutcome::BudgetExhausted { steps } => Fit::Undecided { steps: *steps },
    };
    assert_eq!(fit, want, "fits_prepared disagrees with {out:?}");
    out
}

/// `request: device` per result, per claim.
fn picked(outcome: &AllocationOutcome) -> Vec<Vec<String>> {
    match outcome {
        AllocationOutcome::Allocated(results) => results
            .iter()
            .map(|r: &AllocationResult| {
                r.devices
                    .iter()
                    .map(|d| format!("{}: {}", d.request, d.device))
                    .collect()
            })
            .collect(),
        other => panic!("expected an allocation, got {other:?}"),
    }
}

fn tolerate(key: &str) -> DeviceToleration {
    DeviceToleration {
        key: key.into(),
        operator: DeviceTolerationOperator::Exists,
        value: String::new(),
        effect: None,
        toleration_seconds: None,
    }
}

#[test]
fn first_fit_in_device_order() {
    let c = cluster_with(vec![eight_gpus()]);
    let out = run(&c, &[claim("a", vec![exact("gpus", 2)])]);
    assert_eq!(picked(&out), vec![vec!["gpus: gpu-0", "gpus: gpu-1"]]);
    let AllocationOutcome::Allocated(r) = &out else {
        unreachable!()
    };
    // Node-local devices pin the allocation to the node.
    let sel = r[0].node_selector.as_ref().unwrap();
    assert_eq!(sel, &gangpack::NodeSelector::single_node("n1"));
}

#[test]
fn taint_blocks_and_toleration_allows() {
    let mut c = cluster_with(vec![eight_gpus()]);
    for g in 0..7 {
        c.taint_device(
            &dref("n1", &format!("gpu-{g}")),
            taint("ecc", "", DeviceTaintEffect::NoSchedule, 1),
        )
        .unwrap();
    }
    let out = run(&c, &[claim("a", vec![exact("gpus", 2)])]);
    let AllocationOutcome::Unsatisfiable(Unsatisfiable::NotEnoughDevices(short)) = &out else {
        panic!("{out:?}")
    };
    assert_eq!(
        (
            short.required,
            short.usable,
            short.funnel.taints,
            short.funnel.reachable
        ),
        (2, 1, 7, 8)
    );
    let mut tolerant = claim("a", vec![exact("gpus", 2)]);
    if let gangpack::DeviceRequestKind::Exactly(e) = &mut tolerant.spec.requests[0].kind {
        e.tolerations.push(tolerate("ecc"));
    }
    let out = run(&c, &[tolerant]);
    assert_eq!(picked(&out), vec![vec!["gpus: gpu-0", "gpus: gpu-1"]]);
    let AllocationOutcome::Allocated(r) = &out else {
        unreachable!()
    };
    assert_eq!(
        r[0].devices[0].tolerations,
        vec![tolerate("ecc")],
        "tolerations are copied into results"
    );
}

#[test]
fn first_available_falls_through_to_a_tolerating_subrequest() {
    let mut c = cluster_with(vec![eight_gpus()]);
    for g in 0..8 {
        c.taint_device(
            &dref("n1", &format!("gpu-{g}")),
            taint("maint", "", DeviceTaintEffect::NoExecute, 1),
        )
        .unwrap();
    }
    let mut tolerant = DeviceSubRequest::new("tolerant", CLASS);
    tolerant.tolerations.push(tolerate("maint"));
    let req = DeviceRequest::first_available(
        "gpu",
        vec![DeviceSubRequest::new("plain", CLASS), tolerant],
    );
    let out = run(&c, &[claim("a", vec![req])]);
    assert_eq!(picked(&out), vec![vec!["gpu/tolerant: gpu-0"]]);
}

#[test]
fn first_available_prefers_earlier_subrequests() {
    let mut s = eight_gpus();
    s.devices[3] = gpu("gpu-3", 0, "A100");
    let c = cluster_with(vec![s]);
    let mut h100 = DeviceSubRequest::new("h100", CLASS).with_mode(AllocationMode::ExactCount(8));
    h100.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].productName == \"H100\"".into(),
    });
    let mut two = DeviceSubRequest::new("two", CLASS).with_mode(AllocationMode::ExactCount(2));
    two.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].productName == \"H100\"".into(),
    });
    let req = DeviceRequest::first_available("gpu", vec![h100, two]);
    let out = run(&c, &[claim("a", vec![req])]);
    assert_eq!(picked(&out), vec![vec!["gpu/two: gpu-0", "gpu/two: gpu-1"]]);
}

#[test]
fn all_mode_takes_every_device_and_fails_over_a_partly_allocated_pool() {
    let mut c = cluster_with(vec![eight_gpus()]);
    let all = DeviceRequest::exactly(
        "all",
        ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::All),
    );
    let out = run(&c, &[claim("a", vec![all.clone()])]);
    assert_eq!(picked(&out)[0].len(), 8);
    c.allocate(&dref("n1", "gpu-5"), holder("ns/other", vec![]))
        .unwrap();
    let out = run(&c, &[claim("a", vec![all])]);
    assert!(
        matches!(
            out,
            AllocationOutcome::Unsatisfiable(Unsatisfiable::NotEnoughDevices(_))
        ),
        "{out:?}"
    );
}

#[test]
fn admin_access_ignores_allocations_but_not_taints() {
    let mut c = cluster_with(vec![eight_gpus()]);
    for g in 0..8 {
        c.allocate(
            &dref("n1", &format!("gpu-{g}")),
            holder(&format!("ns/job-{g}"), vec![]),
        )
        .unwrap();
    }
    c.taint_device(
        &dref("n1", "gpu-0"),
        taint("ecc", "", DeviceTaintEffect::NoSchedule, 1),
    )
    .unwrap();
    let mut e = ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(2));
    e.admin_access = true;
    let out = run(&c, &[claim("mon", vec![DeviceRequest::exactly("all", e)])]);
    assert_eq!(picked(&out), vec![vec!["all: gpu-1", "all: gpu-2"]]);
    let AllocationOutcome::Allocated(r) = &out else {
        unreachable!()
    };
    assert!(r[0].devices.iter().all(|d| d.admin_access));
}

#[test]
fn match_attribute_groups_by_numa() {
    let mut c = cluster_with(vec![eight_gpus()]);
    // NUMA 0 has only three free GPUs left.
    c.allocate(&dref("n1", "gpu-1"), holder("ns/x", vec![]))
        .unwrap();
    let mut a = claim("a", vec![exact("gpus", 4)]);
    a.spec.constraints.push(DeviceConstraint {
        requests: vec![],
        kind: ConstraintKind::MatchAttribute(format!("{DRIVER}/numa")),
    });
    let out = run(&c, &[a]);
    assert_eq!(
        picked(&out),
        vec![vec![
            "gpus: gpu-4",
            "gpus: gpu-5",
            "gpus: gpu-6",
            "gpus: gpu-7"
        ]]
    );
}

#[test]
fn distinct_attribute_has_set_semantics() {
    // Three requests of one device each, all distinct in "numa": only two values exist.
    let c = cluster_with(vec![eight_gpus()]);
    let mut a = claim("a", vec![exact("x", 1), exact("y", 1), exact("z", 1)]);
    a.spec.constraints.push(DeviceConstraint {
        requests: vec![],
        kind: ConstraintKind::DistinctAttribute(format!("{DRIVER}/numa")),
    });
    let out = run(&c, &[a.clone()]);
    assert!(
        matches!(
            out,
            AllocationOutcome::Unsatisfiable(Unsatisfiable::NoCombination { .. })
        ),
        "{out:?}"
    );
    // One request of three devices: upstream's request-keyed map only compares with the
    // last device; set semantics rejects it too.
    let mut b = claim("b", vec![exact("x", 3)]);
    b.spec.constraints = a.spec.constraints.clone();
    assert!(matches!(run(&c, &[b]), AllocationOutcome::Unsatisfiable(_)));
    let mut ok = claim("c", vec![exact("x", 1), exact("y", 1)]);
    ok.spec.constraints = a.spec.constraints;
    assert_eq!(picked(&run(&c, &[ok])), vec![vec!["x: gpu-0", "y: gpu-4"]]);
}

#[test]
fn eight_of_seven_is_rejected_by_counting() {
    let mut c = cluster_with(vec![eight_gpus()]);
    c.allocate(&dref("n1", "gpu-7"), holder("ns/x", vec![]))
        .unwrap();
    let out = run(&c, &[claim("a", vec![exact("gpus", 8)])]);
    let AllocationOutcome::Unsatisfiable(Unsatisfiable::NotEnoughDevices(short)) = out else {
        panic!()
    };
    assert_eq!(
        (short.required, short.usable, short.funnel.allocated),
        (8, 7, 1)
    );
}

#[test]
fn claims_of_one_pod_are_all_or_nothing() {
    let c = cluster_with(vec![eight_gpus()]);
    let out = run(
        &c,
        &[
            claim("a", vec![exact("gpus", 6)]),
            claim("b", vec![exact("gpus", 3)]),
        ],
    );
    assert!(
        matches!(
            out,
            AllocationOutcome::Unsatisfiable(Unsatisfiable::NoCombination { .. })
        ),
        "{out:?}"
    );
    let out = run(
        &c,
        &[
            claim("a", vec![exact("gpus", 5)]),
            claim("b", vec![exact("gpus", 3)]),
        ],
    );
    assert_eq!(
        picked(&out)[1],
        vec!["gpus: gpu-5", "gpus: gpu-6", "gpus: gpu-7"]
    );
}

#[test]
fn partitions_respect_shared_counters() {
    let mut counters = ResourceSlice::node_local("n1-counters", DRIVER, "n1", "n1");
    counters.pool.resource_slice_count = 2;
    counters.shared_counters.push(CounterSet {
        name: "gpu-0".into(),
        counters: [("memory".to_string(), Quantity::parse("80Gi").unwrap())].into(),
    });
    let mut parts = ResourceSlice::node_local("n1-parts", DRIVER, "n1", "n1");
    parts.pool.resource_slice_count = 2;
    for (name, mem) in [
        ("gpu-0-full", "80Gi"),
        ("gpu-0-3g", "40Gi"),
        ("gpu-0-3g-b", "40Gi"),
        ("gpu-0-1g", "10Gi"),
    ] {
        let mut d = Device::new(name);
        d.consumes_counters.push(DeviceCounterConsumption {
            counter_set: "gpu-0".into(),
            counters: [("memory".to_string(), Quantity::parse(mem).unwrap())].into(),
        });
        parts.devices.push(d);
    }
    let mut c = cluster_with(vec![counters, parts]);
    // Two devices: the full GPU cannot pair with anything, so two 3g slices it is.
    let out = run(&c, &[claim("a", vec![exact("parts", 2)])]);
    assert_eq!(
        picked(&out),
        vec![vec!["parts: gpu-0-3g", "parts: gpu-0-3g-b"]]
    );
    c.allocate(&dref("n1", "gpu-0-1g"), holder("ns/x", vec![]))
        .unwrap();
    let out = run(&c, &[claim("a", vec![exact("parts", 1)])]);
    assert_eq!(picked(&out), vec![vec!["parts: gpu-0-3g"]]);
    let out = run(&c, &[claim("a", vec![exact("parts", 2)])]);
    assert!(
        matches!(out, AllocationOutcome::Unsatisfiable(_)),
        "{out:?}"
    );
}

#[test]
#[allow(clippy::many_single_char_names)]
fn consumable_capacity_rounds_up_and_records_shares() {
    let mut s = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    let mut d = Device::new("gpu-0");
    d.allow_multiple_allocations = true;
    d.capacity.insert(
        "memory".into(),
        gangpack::DeviceCapacity {
            value: Quantity::parse("80Gi").unwrap(),
            request_policy: Some(CapacityRequestPolicy {
                default: Some(Quantity::parse("10Gi").unwrap()),
                valid_values: vec![],
                valid_range: Some(CapacityRequestPolicyRange {
                    min: Quantity::parse("10Gi").unwrap(),
                    max: None,
                    step: Some(Quantity::parse("10Gi").unwrap()),
                }),
            }),
        },
    );
    s.devices.push(d);
    let mut c = cluster_with(vec![s]);
    let mut e = ExactDeviceRequest::new(CLASS);
    e.capacity
        .insert("memory".into(), Quantity::parse("25Gi").unwrap());
    let claim_a = claim("a", vec![DeviceRequest::exactly("slice", e.clone())]);
    let out = run(&c, &[claim_a]);
    let AllocationOutcome::Allocated(r) = &out else {
        panic!("{out:?}")
    };
    let dev = &r[0].devices[0];
    assert_eq!(
        dev.consumed_capacity["memory"],
        Quantity::parse("30Gi").unwrap(),
        "25Gi rounds up to 30Gi"
    );
    assert!(dev.share_id.as_ref().is_some_and(|id| id.len() == 36));
    c.commit_allocation("ns/a", &r[0]).unwrap();
    // 50Gi left: a second share of 30Gi fits, then only 20Gi is left.
    let out = run(
        &c,
        &[claim("b", vec![DeviceRequest::exactly("slice", e.clone())])],
    );
    let AllocationOutcome::Allocated(r) = &out else {
        panic!("{out:?}")
    };
    c.commit_allocation("ns/b", &r[0]).unwrap();
    let out = run(&c, &[claim("c", vec![DeviceRequest::exactly("slice", e)])]);
    let AllocationOutcome::Unsatisfiable(Unsatisfiable::NotEnoughDevices(short)) = out else {
        panic!()
    };
    assert_eq!(short.funnel.capacity, 1);
}

#[test]
fn selector_errors_are_errors_not_mismatches() {
    let c = cluster_with(vec![eight_gpus()]);
    let mut e = ExactDeviceRequest::new(CLASS);
    e.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].productName.reverse() == \"H\"".into(),
    });
    let err = c
        .allocate_claims(
            "n1",
            &[claim("a", vec![DeviceRequest::exactly("g", e)])],
            &BTreeMap::new(),
            &AllocatorOptions::default(),
        )
        .unwrap_err();
    assert!(matches!(err, AllocationError::Selector(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("spec.devices.requests[0].exactly.selectors[0].cel.expression"),
        "{err}"
    );
    // A missing attribute is a runtime error that aborts the allocation.
    let mut e = ExactDeviceRequest::new(CLASS);
    e.selectors.push(DeviceSelector {
        cel: "device.attributes[\"gpu.example.com\"].missing == 1".into(),
    });
    let err = c
        .allocate_claims(
            "n1",
            &[claim("a", vec![DeviceRequest::exactly("g", e)])],
            &BTreeMap::new(),
            &AllocatorOptions::default(),
        )
        .unwrap_err();
    assert!(matches!(err, AllocationError::Evaluation(_)), "{err:?}");
}

#[test]
fn missing_class_and_device_limit_are_errors() {
    let c = cluster_with(vec![eight_gpus()]);
    let req = DeviceRequest::exactly("g", ExactDeviceRequest::new("no-such-class"));
    let err = c
        .allocate_claims(
            "n1",
            &[claim("a", vec![req])],
            &BTreeMap::new(),
            &AllocatorOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ResourceClaim \"ns/a\": spec.devices.requests[0].exactly.deviceClassName: DeviceClass \"no-such-class\" not found"
    );
    let err = c
        .allocate_claims(
            "n1",
            &[claim("a", vec![exact("g", 20), exact("h", 13)])],
            &BTreeMap::new(),
            &AllocatorOptions::default(),
        )
        .unwrap_err();
    assert!(
        matches!(err, AllocationError::TooManyDevices { needed: 33, .. }),
        "{err:?}"
    );
}

#[test]
fn node_resources_are_checked() {
    let c = cluster_with(vec![eight_gpus()]);
    let pod: BTreeMap<String, Quantity> = [("cpu".to_string(), Quantity::from_int(32))].into();
    let out = c
        .allocate_claims(
            "n1",
            &[claim("a", vec![exact("g", 1)])],
            &pod,
            &AllocatorOptions::default(),
        )
        .unwrap();
    assert!(
        matches!(
            out,
            AllocationOutcome::Unsatisfiable(Unsatisfiable::NodeResources { .. })
        ),
        "{out:?}"
    );
}

#[test]
fn pools_are_ordered_by_driver_then_name_and_shared_slices_leave_no_selector() {
    let mut a = ResourceSlice::node_local("z-slice", DRIVER, "n1", "pool-b");
    a.devices.push(gpu("dev-b", 0, "H100"));
    let mut b = ResourceSlice::node_local("a-slice", DRIVER, "n1", "pool-a");
    b.devices.push(gpu("dev-a", 0, "H100"));
    let c = cluster_with(vec![a, b]);
    assert_eq!(
        picked(&run(&c, &[claim("x", vec![exact("g", 1)])])),
        vec![vec!["g: dev-a"]]
    );

    let mut shared = ResourceSlice::node_local("fabric", DRIVER, "x", "fabric");
    shared.node_selection = SliceNodeSelection::Slice(NodeAccess::AllNodes);
    shared.devices.push(gpu("net-0", 0, "H100"));
    let c = cluster_with(vec![shared]);
    let AllocationOutcome::Allocated(r) = run(&c, &[claim("x", vec![exact("g", 1)])]) else {
        panic!()
    };
    assert_eq!(r[0].node_selector, None);
}

#[test]
fn commit_is_all_or_nothing() {
    let mut c = cluster_with(vec![eight_gpus()]);
    let AllocationOutcome::Allocated(r) = run(&c, &[claim("a", vec![exact("g", 3)])]) else {
        panic!()
    };
    c.allocate(&dref("n1", "gpu-2"), holder("ns/thief", vec![]))
        .unwrap();
    let before = observe(&c);
    assert!(c.commit_allocation("ns/a", &r[0]).is_err());
    assert_eq!(observe(&c), before);
}

#[test]
fn a_step_budget_turns_a_long_search_into_an_outcome() {
    let c = cluster_with(vec![eight_gpus()]);
    // x and y on different NUMA nodes, z on the NUMA node of each: no allocation, and
    // no counting bound sees it (each constraint alone has enough devices and values),
    // so only the search finds out.
    let mut a = claim("a", vec![exact("x", 1), exact("y", 1), exact("z", 1)]);
    let numa = format!("{DRIVER}/numa");
    for (requests, kind) in [
        (["x", "y"], ConstraintKind::DistinctAttribute(numa.clone())),
        (["x", "z"], ConstraintKind::MatchAttribute(numa.clone())),
        (["y", "z"], ConstraintKind::MatchAttribute(numa.clone())),
    ] {
        a.spec.constraints.push(DeviceConstraint {
            requests: requests.iter().map(|r| (*r).to_string()).collect(),
            kind,
        });
    }
    let tight = AllocatorOptions { step_budget: 5 };
    let out = c
        .allocate_claims("n1", &[a.clone()], &BTreeMap::new(), &tight)
        .unwrap();
    // Never a step beyond the budget.
    assert_eq!(out, AllocationOutcome::BudgetExhausted { steps: 5 });
    // With the default budget the same search completes (and finds nothing).
    let AllocationOutcome::Unsatisfiable(Unsatisfiable::NoCombination { steps, .. }) =
        run(&c, &[a])
    else {
        panic!("no combination expected")
    };
    assert!(steps > 5, "{steps}");
}

/// A `distinctAttribute` over three requests when the devices carry two values: the
/// pigeonhole bound answers before any search step.
#[test]
fn a_distinct_pigeonhole_is_proved_by_counting() {
    let c = cluster_with(vec![eight_gpus()]);
    let mut a = claim("a", vec![exact("x", 1), exact("y", 1), exact("z", 1)]);
    a.spec.constraints.push(DeviceConstraint {
        requests: vec![],
        kind: ConstraintKind::DistinctAttribute(format!("{DRIVER}/numa")),
    });
    let tight = AllocatorOptions { step_budget: 1 };
    let out = c
        .allocate_claims("n1", &[a], &BTreeMap::new(), &tight)
        .unwrap();
    assert_eq!(
        out,
        AllocationOutcome::Unsatisfiable(Unsatisfiable::NoCombination {
            claims: vec!["ns/a".into()],
            steps: 0
        })
    );
}

#[test]
fn class_configuration_and_claim_configuration_reach_the_result() {
    let mut c = cluster_with(vec![eight_gpus()]);
    let mut class = DeviceClass::with_cel("configured", format!("device.driver == \"{DRIVER}\""));
    class.config.push(gangpack::OpaqueDeviceConfiguration {
        driver: DRIVER.into(),
        parameters: "{\"sharing\":\"timeSlicing\"}".into(),
    });
    c.put_class(class).unwrap();
    let mut a = claim(
        "a",
        vec![
            DeviceRequest::exactly("g", ExactDeviceRequest::new("configured")),
            exact("h", 1),
        ],
    );
    a.spec.config.push(gangpack::DeviceClaimConfiguration {
        requests: vec!["g".into(), "h".into()],
        opaque: gangpack::OpaqueDeviceConfiguration {
            driver: DRIVER.into(),
            parameters: "{\"mode\":\"fast\"}".into(),
        },
    });
    let AllocationOutcome::Allocated(r) = run(&c, &[a]) else {
        panic!()
    };
    let cfg: Vec<(gangpack::AllocationConfigSource, Vec<String>)> = r[0]
        .config
        .iter()
        .map(|c| (c.source, c.requests.clone()))
        .collect();
    assert_eq!(
        cfg,
        vec![
            (
                gangpack::AllocationConfigSource::FromClass,
                vec!["g".to_string()]
            ),
            // Naming every request means "all": upstream writes an empty list.
            (gangpack::AllocationConfigSource::FromClaim, vec![]),
        ]
    );
}
