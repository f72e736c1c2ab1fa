#![cfg(not(target_arch = "wasm32"))]
//! Explanations when a claim's own request is what blocks (issue 13, part 2): request
//! selectors, `matchAttribute` constraints, capacity requests and shared counters
//! (MIG-style partitionable devices: a full device and its two halves share one counter
//! set). Scenario tests pin the facts; a property compares the explanation's status
//! with a brute-force oracle that knows nothing of the engine, and checks that a
//! request nothing in the cluster can serve is named, never "the pods crowd each
//! other out".

mod common;

use std::collections::BTreeMap;

use common::*;
use gangpack::{
    AllocationMode, ClaimSource, Cluster, ConstraintKind, CounterSet, Device, DeviceAllocation,
    DeviceAttribute, DeviceClass, DeviceConstraint, DeviceCounterConsumption, DeviceRef,
    DeviceRequest, DeviceSelector, ExactDeviceRequest, Explanation, Fact, GangOptions, GangStatus,
    Node, Pod, PodGroup, PodResourceClaim, Quantity, ResourceClaim, ResourcePool, ResourceSlice,
    SchedulingPolicy,
};
use proptest::prelude::*;

const PART: &str = "part.example.com";
const ROOT: &str = "resource.kubernetes.io/pcieRoot";

/// One node of an instance.
#[derive(Clone, Debug)]
struct NodeX {
    /// Per GPU: model (0 = "A", 1 = "B"), PCIe root (0 or 1), 80Gi of memory (else
    /// 40Gi), held by another workload.
    gpus: Vec<(u8, u8, bool, bool)>,
    /// A partitionable device: `None`, or which of its partitions another workload
    /// holds (0: none, 1: the full device, 2: the first half).
    part: Option<u8>,
}

/// One pod's claim: a single request.
#[derive(Clone, Debug)]
struct PodX {
    /// Partitions of the partitionable device (else GPUs).
    part: bool,
    count: u32,
    /// GPUs: a selector on the model.
    model: Option<u8>,
    /// GPUs: a capacity request of 80Gi.
    big: bool,
    /// GPUs: `matchAttribute` on the PCIe root.
    same_root: bool,
}

#[derive(Clone, Debug)]
struct InstanceX {
    nodes: Vec<NodeX>,
    pods: Vec<PodX>,
}

fn instance() -> impl Strategy<Value = InstanceX> {
    let gpu = (0..2u8, 0..2u8, any::<bool>(), prop::bool::weighted(0.25));
    let node = (prop::collection::vec(gpu, 0..=3), prop::option::of(0..3u8))
        .prop_map(|(gpus, part)| NodeX { gpus, part });
    let pod = (
        prop::bool::weighted(0.3),
        1..=2u32,
        prop::option::of(0..2u8),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(part, count, model, big, same_root)| PodX {
            part,
            count,
            model,
            big,
            same_root,
        });
    (
        prop::collection::vec(node, 1..=3),
        prop::collection::vec(pod, 1..=2),
    )
        .prop_map(|(nodes, pods)| InstanceX { nodes, pods })
}

fn model_name(m: u8) -> &'static str {
    if m == 0 { "A" } else { "B" }
}

fn slices(counters: &[(&str, i64)]) -> BTreeMap<String, Quantity> {
    counters
        .iter()
        .map(|(n, q)| ((*n).to_owned(), Quantity::from_int(*q)))
        .collect()
}

fn build(x: &InstanceX, min: u32) -> (Cluster, PodGroup, Vec<Pod>, Vec<ResourceClaim>) {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c.put_class(DeviceClass::with_cel(
        "part",
        format!("device.driver == \"{PART}\""),
    ))
    .unwrap();
    for (i, n) in x.nodes.iter().enumerate() {
        let name = format!("n{i}");
        c.add_node(
            Node::new(&name)
                .with_allocatable("cpu", Quantity::from_int(16))
                .with_allocatable("pods", Quantity::from_int(110)),
        )
        .unwrap();
        if !n.gpus.is_empty() {
            let mut s = ResourceSlice::node_local(format!("{name}-gpus"), DRIVER, &name, &name);
            for (g, &(model, root, big, _)) in n.gpus.iter().enumerate() {
                s.devices.push(
                    Device::new(format!("gpu-{g}"))
                        .with_attribute("model", DeviceAttribute::String(model_name(model).into()))
                        .with_attribute(ROOT, DeviceAttribute::String(format!("pci{root}")))
                        .with_capacity(
                            "memory",
                            Quantity::parse(if big { "80Gi" } else { "40Gi" }).unwrap(),
                        ),
                );
            }
            c.add_slice(s).unwrap();
            for (g, gpu) in n.gpus.iter().enumerate() {
                if gpu.3 {
                    c.allocate(
                        &dref(&name, &format!("gpu-{g}")),
                        DeviceAllocation::new("other/job", vec![]),
                    )
                    .unwrap();
                }
            }
        }
        if let Some(held) = n.part {
            let pool = ResourcePool {
                name: format!("{name}-part"),
                generation: 0,
                resource_slice_count: 2,
            };
            let mut counters =
                ResourceSlice::node_local(format!("{name}-part-counters"), PART, &name, "");
            counters.pool = pool.clone();
            counters.shared_counters.push(CounterSet {
                name: "set".into(),
                counters: slices(&[("slice-0", 1), ("slice-1", 1)]),
            });
            c.add_slice(counters).unwrap();
            let mut devices =
                ResourceSlice::node_local(format!("{name}-part-devices"), PART, &name, "");
            devices.pool = pool.clone();
            for (dev, uses) in [
                ("full", &[("slice-0", 1), ("slice-1", 1)][..]),
                ("half-0", &[("slice-0", 1)][..]),
                ("half-1", &[("slice-1", 1)][..]),
            ] {
                let mut d = Device::new(dev);
                d.consumes_counters.push(DeviceCounterConsumption {
                    counter_set: "set".into(),
                    counters: slices(uses),
                });
                devices.devices.push(d);
            }
            c.add_slice(devices).unwrap();
            let taken = match held {
                1 => Some("full"),
                2 => Some("half-0"),
                _ => None,
            };
            if let Some(d) = taken {
                c.allocate(
                    &DeviceRef::new(PART, &pool.name, d),
                    DeviceAllocation::new("other/job", vec![]),
                )
                .unwrap();
            }
        }
    }
    let g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: min });
    let mut pods = Vec::new();
    let mut claims = Vec::new();
    for (i, p) in x.pods.iter().enumerate() {
        let mut pod = Pod::new("ns", format!("p{i}"));
        pod.scheduling_group = Some("g".into());
        let mut e = ExactDeviceRequest::new(if p.part { "part" } else { "gpu" })
            .with_mode(AllocationMode::ExactCount(p.count));
        let mut claim = ResourceClaim::new("ns", format!("p{i}-dev"));
        if !p.part {
            if let Some(m) = p.model {
                e.selectors.push(DeviceSelector {
                    cel: format!(
                        "device.attributes[\"{DRIVER}\"].model == \"{}\"",
                        model_name(m)
                    ),
                });
            }
            if p.big {
                e.capacity
                    .insert("memory".into(), Quantity::parse("80Gi").unwrap());
            }
            if p.same_root && p.count > 1 {
                claim.spec.constraints.push(DeviceConstraint {
                    requests: vec![],
                    kind: ConstraintKind::MatchAttribute(ROOT.into()),
                });
            }
        }
        claim.spec.requests.push(DeviceRequest::exactly("dev", e));
        pod.resource_claims.push(PodResourceClaim {
            name: "dev".into(),
            source: ClaimSource::ClaimName(claim.name.clone()),
        });
        pods.push(pod);
        claims.push(claim);
    }
    (c, g, pods, claims)
}

/// One GPU of [`NodeX::gpus`].
type Gpu = (u8, u8, bool, bool);

/// Whether GPU `gpu` can serve pod `p` (class, selector, capacity), held or not.
fn serves(p: &PodX, gpu: Gpu) -> bool {
    !p.part && p.model.is_none_or(|m| m == gpu.0) && (!p.big || gpu.2)
}

/// Slices of the partitionable device's counter set each partition consumes: full
/// (both), half-0, half-1.
const USES: [u8; 3] = [0b11, 0b01, 0b10];

/// Whether the GPU pods `on` get distinct GPUs of node `n` (not in `taken`, a bit per
/// GPU), every subset tried pod by pod.
fn gpus_fit(x: &InstanceX, n: &NodeX, on: &[usize], freed: bool, taken: u32) -> bool {
    let Some((&p, rest)) = on.split_first() else {
        return true;
    };
    let pod = &x.pods[p];
    if pod.part {
        return gpus_fit(x, n, rest, freed, taken);
    }
    let k = n.gpus.len();
    (0u32..1 << k).any(|set| {
        let chosen: Vec<Gpu> = (0..k)
            .filter(|g| set & (1 << g) != 0)
            .map(|g| n.gpus[g])
            .collect();
        set & taken == 0
            && set.count_ones() == pod.count
            && chosen.iter().all(|&g| serves(pod, g) && (freed || !g.3))
            && (!(pod.same_root && pod.count > 1) || chosen.iter().all(|g| g.1 == chosen[0].1))
            && gpus_fit(x, n, rest, freed, taken | set)
    })
}

/// Whether the partition pods `pods` get distinct partitions (not in `taken`, a bit
/// per partition, nor `held`) whose slices overlap neither each other nor `slices`.
fn parts_fit(x: &InstanceX, pods: &[usize], slices: u8, taken: u8, held: Option<usize>) -> bool {
    let Some((&p, rest)) = pods.split_first() else {
        return true;
    };
    (0u8..8).any(|set| {
        if set.count_ones() != x.pods[p].count
            || set & taken != 0
            || held.is_some_and(|h| set & (1 << h) != 0)
        {
            return false;
        }
        let mut used = slices;
        for (d, uses) in USES.iter().enumerate() {
            if set & (1 << d) != 0 {
                if used & uses != 0 {
                    return false;
                }
                used |= uses;
            }
        }
        parts_fit(x, rest, used, taken | set, held)
    })
}

/// Whether the pods `on` can all get their devices on node `n` together (devices
/// others hold usable when `freed`).
fn node_fits(x: &InstanceX, n: &NodeX, on: &[usize], freed: bool) -> bool {
    if !gpus_fit(x, n, on, freed, 0) {
        return false;
    }
    let part_pods: Vec<usize> = on.iter().copied().filter(|&p| x.pods[p].part).collect();
    if part_pods.is_empty() {
        return true;
    }
    let Some(held) = n.part else {
        return false;
    };
    // The partition another workload holds (0: full, 1: half-0), unless freed.
    let held = match (freed, held) {
        (false, 1) => Some(0),
        (false, 2) => Some(1),
        _ => None,
    };
    parts_fit(x, &part_pods, held.map_or(0, |h| USES[h]), 0, held)
}

/// Whether at least `min` pods can be placed together (each on a node or nowhere).
fn oracle(x: &InstanceX, min: usize, freed: bool) -> bool {
    let n = x.nodes.len();
    let total = (n + 1).pow(x.pods.len() as u32);
    (0..total).any(|mut code| {
        let at: Vec<Option<usize>> = x
            .pods
            .iter()
            .map(|_| {
                let c = code % (n + 1);
                code /= n + 1;
                (c < n).then_some(c)
            })
            .collect();
        if at.iter().flatten().count() < min {
            return false;
        }
        (0..n).all(|i| {
            let on: Vec<usize> = (0..x.pods.len()).filter(|&p| at[p] == Some(i)).collect();
            node_fits(x, &x.nodes[i], &on, freed)
        })
    })
}

/// Whether pod `p`'s request can be served on some node of an idle cluster on its own.
fn servable_alone(x: &InstanceX, p: usize) -> bool {
    x.nodes.iter().any(|n| node_fits(x, n, &[p], true))
}

fn explain(c: &Cluster, g: &PodGroup, pods: &[Pod], claims: &[ResourceClaim]) -> Explanation {
    let before = observe(c);
    let ex = c
        .explain_gang(Some(g), pods, claims, &GangOptions::default())
        .unwrap();
    assert_eq!(observe(c), before, "explaining changed the cluster");
    ex
}

/// Whether a fact names pod `p`'s claim as what blocks it.
fn names_claim(f: &Fact, p: usize) -> bool {
    let want = format!("ns/p{p}-dev");
    match f {
        Fact::RequestSelector { claim, .. }
        | Fact::CapacityTooSmall { claim, .. }
        | Fact::CountersTooFew { claim, .. }
        | Fact::Constraint { claim, .. } => *claim == want,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// The status agrees with the oracle (scheduled now; once what others hold is
    /// free; never), a blocking set is named, and a pod whose own request no node of an
    /// idle cluster can serve, for a reason of its own request (selector, capacity,
    /// constraint, counters — the node has devices of the class), is named by a fact
    /// about its claim instead of "the pods crowd each other out".
    #[test]
    fn request_blockers_are_named_and_the_status_agrees_with_the_oracle(
        x in instance(),
        min_seed in 0..2usize,
    ) {
        let min = 1 + min_seed % x.pods.len();
        let (c, g, pods, claims) = build(&x, min as u32);
        let ex = explain(&c, &g, &pods, &claims);
        let again = c.explain_gang(Some(&g), &pods, &claims, &GangOptions::default()).unwrap();
        prop_assert_eq!(&ex, &again, "not deterministic");
        let want = if oracle(&x, min, false) {
            GangStatus::Scheduled
        } else if oracle(&x, min, true) {
            GangStatus::Unschedulable
        } else {
            GangStatus::UnschedulableAndUnresolvable
        };
        prop_assert_eq!(ex.status, want, "{}", ex);
        if want == GangStatus::Scheduled {
            return Ok(());
        }
        prop_assert!(!ex.blocking.is_empty(), "no blocking set: {}", ex);
        for (p, pod) in x.pods.iter().enumerate() {
            // Devices of its class exist on some node in enough number, yet its own
            // request cannot be served anywhere, even alone on an idle cluster.
            let enough_of_class = x.nodes.iter().any(|n| {
                if pod.part {
                    n.part.is_some() && pod.count <= 3
                } else {
                    n.gpus.len() >= pod.count as usize
                }
            });
            if enough_of_class && !servable_alone(&x, p) && x.pods.len() == 1 {
                prop_assert!(
                    ex.facts.iter().any(|f| names_claim(f, p)),
                    "pod p{} is not named: {}", p, ex
                );
                prop_assert!(
                    !ex.facts.iter().any(|f| matches!(f, Fact::NotEnoughRoom { .. })),
                    "{}", ex
                );
            }
        }
    }
}

/// A pod whose selector matches a GPU only another workload holds, on a cluster where
/// another node has GPUs of the wrong model: resolvable, and the blocking set is the
/// devices in use, not the selector.
#[test]
fn a_selector_blocked_by_devices_in_use_is_resolvable() {
    let x = InstanceX {
        nodes: vec![
            NodeX {
                gpus: vec![(0, 0, false, false), (0, 1, false, false)],
                part: None,
            },
            NodeX {
                gpus: vec![(1, 0, false, true)],
                part: None,
            },
        ],
        pods: vec![PodX {
            part: false,
            count: 1,
            model: Some(1),
            big: false,
            same_root: false,
        }],
    };
    let (c, g, pods, claims) = build(&x, 1);
    let ex = explain(&c, &g, &pods, &claims);
    assert_eq!(ex.status, GangStatus::Unschedulable, "{ex}");
    let blocking: Vec<&Fact> = ex.blocking.iter().map(|&b| &ex.facts[b]).collect();
    assert!(
        matches!(blocking.as_slice(), [Fact::DevicesInUse { nodes, .. }] if nodes == &["n1"]),
        "{ex}"
    );
    assert!(
        ex.facts.iter().any(|f| matches!(
            f,
            Fact::RequestSelector { of_class: 2, selectors, .. } if selectors[0].1 == 0
        )),
        "{ex}"
    );
}

/// The full device held by another workload blocks both halves through the shared
/// counters: resolvable, and named.
#[test]
fn a_held_full_device_blocks_its_partitions_through_the_counters() {
    let x = InstanceX {
        nodes: vec![NodeX {
            gpus: vec![],
            part: Some(1),
        }],
        pods: vec![PodX {
            part: true,
            count: 1,
            model: None,
            big: false,
            same_root: false,
        }],
    };
    let (c, g, pods, claims) = build(&x, 1);
    let ex = explain(&c, &g, &pods, &claims);
    assert_eq!(ex.status, GangStatus::Unschedulable, "{ex}");
    let blocking: Vec<&Fact> = ex.blocking.iter().map(|&b| &ex.facts[b]).collect();
    // Freeing what others hold on the node lifts either fact.
    assert!(
        matches!(
            blocking.as_slice(),
            [Fact::CountersInUse { .. } | Fact::DevicesInUse { .. }]
        ),
        "{ex}"
    );
    assert!(
        ex.facts
            .iter()
            .any(|f| matches!(f, Fact::CountersInUse { devices: 2, .. })),
        "{ex}"
    );
}

/// Three partitions of a device whose counters admit two at most: unresolvable, named.
#[test]
fn more_partitions_than_the_counters_admit_are_unresolvable() {
    let x = InstanceX {
        nodes: vec![NodeX {
            gpus: vec![],
            part: Some(0),
        }],
        pods: vec![PodX {
            part: true,
            count: 3,
            model: None,
            big: false,
            same_root: false,
        }],
    };
    let (c, g, pods, claims) = build(&x, 1);
    let ex = explain(&c, &g, &pods, &claims);
    assert_eq!(ex.status, GangStatus::UnschedulableAndUnresolvable, "{ex}");
    assert!(
        ex.facts.iter().any(|f| matches!(
            f,
            Fact::CountersTooFew {
                matching: 3,
                fit: 2,
                needed: 3,
                ..
            }
        )),
        "{ex}"
    );
}

/// A selector that fails on a device is an error naming the claim, the request, the
/// selector's expression (and its class, for a class selector) and the device — for
/// the allocator, the placer and the explanation alike; never a mismatch.
#[test]
fn selector_errors_name_the_expression_and_are_never_mismatches() {
    use gangpack::{AllocationError, GangError};
    // A class whose selector reads `model`, which the only GPU lacks.
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        "strict",
        format!("device.attributes[\"{DRIVER}\"].model == \"A\""),
    ))
    .unwrap();
    c.put_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c.add_node(Node::new("n0").with_allocatable("pods", Quantity::from_int(110)))
        .unwrap();
    c.add_slice(gpus("n0", 1)).unwrap();
    let g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: 1 });
    for (class, selector, want) in [
        (
            "strict",
            None,
            "ResourceClaim \"ns/p0-dev\": request dev: DeviceClass strict selector #0 \
             `device.attributes[\"gpu.example.com\"].model == \"A\"` failed on device \
             gpu.example.com/n0/gpu-0: CEL runtime error: no such key: model",
        ),
        (
            "gpu",
            Some("device.attributes[\"gpu.example.com\"].memory > 1"),
            "ResourceClaim \"ns/p0-dev\": request dev: selector #0 \
             `device.attributes[\"gpu.example.com\"].memory > 1` failed on device \
             gpu.example.com/n0/gpu-0: CEL runtime error: no such key: memory",
        ),
    ] {
        let mut e = ExactDeviceRequest::new(class);
        if let Some(s) = selector {
            e.selectors.push(DeviceSelector { cel: s.into() });
        }
        let mut claim = ResourceClaim::new("ns", "p0-dev");
        claim.spec.requests.push(DeviceRequest::exactly("dev", e));
        let mut pod = Pod::new("ns", "p0");
        pod.scheduling_group = Some("g".into());
        pod.resource_claims.push(PodResourceClaim {
            name: "dev".into(),
            source: ClaimSource::ClaimName(claim.name.clone()),
        });
        let (pods, claims) = (vec![pod], vec![claim]);
        let err = c
            .place_gang(Some(&g), &pods, &claims, &GangOptions::default())
            .unwrap_err();
        let GangError::Allocation(AllocationError::Evaluation(f)) = &err else {
            panic!("not an evaluation error: {err:?}");
        };
        assert_eq!(f.class.as_deref(), (class == "strict").then_some("strict"));
        assert_eq!(f.selector, 0);
        assert_eq!(err.to_string(), want);
        let err = c
            .explain_gang(Some(&g), &pods, &claims, &GangOptions::default())
            .unwrap_err();
        assert_eq!(err.to_string(), want);
    }
}
